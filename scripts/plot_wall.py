#!/usr/bin/python3
"""plot_wall.py -- draws what examples/pic/pic_demo (the absorbing-wall example, wall.cnp)
wrote:

    /usr/bin/python3 scripts/plot_wall.py [DIR]        (default out)

From DIR/wall_density.npy (steps, cells) and DIR/wall_phase.npy (live particles, 2: x, v_x)
writes DIR/density.png (charge per cell over time, in units of the initial mean, with a
colour bar) and DIR/phase.png (phase space of the live particles at the end, a 2D histogram
with a logarithmic colour bar). Units: x in box lengths, t in steps of dt, v in box lengths
per unit time.
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.colors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "out"
    rho = np.load(os.path.join(d, "wall_density.npy"))
    xv = np.load(os.path.join(d, "wall_phase.npy"))
    steps, cells = rho.shape
    fig, ax = plt.subplots(figsize=(7, 4.5))
    im = ax.imshow(rho, origin="lower", aspect="auto", cmap="viridis", extent=(0, 1, 0, steps),
                   interpolation="nearest")
    fig.colorbar(im, ax=ax, label="charge per cell / initial mean")
    ax.set_xlabel("x (box lengths)")
    ax.set_ylabel("step")
    ax.set_title("Absorbing walls: charge density over time (%d cells)" % cells)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "density.png"), dpi=80)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if len(xv):
        h = ax.hist2d(xv[:, 0], xv[:, 1], bins=(256, 128), cmap="magma", cmin=1,
                      norm=matplotlib.colors.LogNorm())
        fig.colorbar(h[3], ax=ax, label="particles per bin")
    ax.set_xlim(0, 1)
    ax.set_xlabel("x (box lengths)")
    ax.set_ylabel("$v_x$ (box lengths per unit time)")
    ax.set_title("Phase space at the end (%d live particles)" % len(xv))
    fig.tight_layout()
    fig.savefig(os.path.join(d, "phase.png"), dpi=80)
    plt.close(fig)
    print("wrote %s and %s" % (os.path.join(d, "density.png"), os.path.join(d, "phase.png")))


if __name__ == "__main__":
    main()
