#!/usr/bin/python3
"""plot_pic2d.py -- draws what examples/pic2d/pic2d_demo wrote (docs/physics.md, "2D"):

    /usr/bin/python3 scripts/plot_pic2d.py [DIR]        (default out/pic2d)

Reads DIR/history.npy, rho.npy, phi.npy, pic2d_fit.json and writes into DIR:
    pic2d_fields.png   the potential phi and the electron density n_e = 1 - rho on the grid at
                       the snapshot times (one row per time), axes in lambda_D, colour bars
    pic2d_energy.png   the field energy and the field energy of the perturbed mode against
                       time (log axis), the theory's slope e^{2 gamma t}, the measured rate and
                       frequency in the legend, the fit window shaded
Units are the simulation's: time in 1/omega_p, lengths in lambda_D = v_th/omega_p, density in
n0, phi in e n0 lambda_D^2 / eps0, energies in n0 m v_th^2 lambda_D^2 (per unit length across).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def fields_plot(d, fit, out):
    nx, ny, lx, ly = fit["nx"], fit["ny"], fit["lx"], fit["ly"]
    times = fit["snap_t"]
    rho = np.load(os.path.join(d, "rho.npy")).reshape(len(times), ny, nx)
    phi = np.load(os.path.join(d, "phi.npy")).reshape(len(times), ny, nx)
    wide = lx >= ly
    ext = [0, lx, 0, ly]
    fig, axes = plt.subplots(len(times), 2, figsize=(12, 1.0 + 2.2 * len(times)) if wide
                             else (7, 1.0 + 4.2 * len(times)), squeeze=False)
    for k, t in enumerate(times):
        for c, (name, data, cmap, label) in enumerate((
                ("potential $\\phi$", phi[k], "RdBu_r", "$\\phi$  [$e n_0 \\lambda_D^2/\\epsilon_0$]"),
                ("electron density $n_e = 1 - \\rho$", 1.0 - rho[k], "viridis", "$n_e$  [$n_0$]"))):
            ax = axes[k][c]
            if c == 0:
                m = np.abs(data).max() or 1.0
                im = ax.imshow(data, origin="lower", extent=ext, cmap=cmap, vmin=-m, vmax=m,
                               interpolation="nearest", aspect="equal")
            else:
                im = ax.imshow(data, origin="lower", extent=ext, cmap=cmap,
                               interpolation="nearest", aspect="equal")
            cb = fig.colorbar(im, ax=ax, fraction=0.046 if wide else 0.08, pad=0.02)
            cb.set_label(label)
            ax.set_title("%s at $t = %.1f\\,\\omega_p^{-1}$" % (name, t))
            ax.set_xlabel("$x$  [$\\lambda_D$]")
            ax.set_ylabel("$y$  [$\\lambda_D$]")
    fig.suptitle("2D Landau damping, $k\\lambda_D = 0.5$ along %s: %d x %d grid, %d particles (%s)"
                 % ("x" if fit["axis"] == 0 else "y", nx, ny, fit["n_particles"], fit["impl"]))
    fig.tight_layout()
    path = os.path.join(out, "pic2d_fields.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("wrote", path)


def energy_plot(d, fit, out):
    h = np.load(os.path.join(d, "history.npy"))
    t, W, Wk = h[:, 0], h[:, 1], h[:, 2]
    fig, ax = plt.subplots(figsize=(8, 4.8))
    ax.semilogy(t, W, lw=1.0, color="0.55",
                label="field energy $\\sum (E_x^2 + E_y^2)/2\\,\\Delta A$")
    ax.semilogy(t, Wk, lw=1.4, color="C0", label="field energy of the mode $k = 0.5$ (fitted)")
    t0, t1 = fit["fit_t0"], fit["fit_t1"]
    ax.axvspan(t0, t1, color="0.92", zorder=0, label="fit window")
    g, gth, w = fit["gamma"], fit["gamma_theory"], fit["omega"]
    # the theory slope through the first peak of the mode energy in the fit window
    peaks = [i for i in range(1, len(t) - 1)
             if t0 <= t[i] <= t1 and Wk[i - 1] < Wk[i] >= Wk[i + 1]]
    i = peaks[0] if peaks else int(np.argmax(Wk))
    ta, wa = t[i], Wk[i]
    tl = np.linspace(ta, t[-1], 50)
    ax.semilogy(tl, wa * np.exp(2 * gth * (tl - ta)), "k--", lw=1.5,
                label="theory $e^{2\\gamma t}$, $\\gamma = %.4f\\,\\omega_p$" % gth)
    ax.semilogy(tl, wa * np.exp(2 * g * (tl - ta)), color="C3", lw=1, alpha=0.8,
                label="measured $\\gamma = %.4f\\,\\omega_p$ (%.1f%% off), $\\omega = %.4f\\,\\omega_p$ "
                "(theory %.4f)" % (g, 100 * abs(g / gth - 1), w, fit["omega_theory"]))
    ax.set_xlabel("$t$  [$\\omega_p^{-1}$]")
    ax.set_ylabel("energy  [$n_0 m v_{th}^2 \\lambda_D^2$]")
    ax.set_title("2D Landau damping, $k\\lambda_D = 0.5$: field energy")
    ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    path = os.path.join(out, "pic2d_energy.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("wrote", path)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "out/pic2d"
    with open(os.path.join(d, "pic2d_fit.json")) as f:
        fit = json.load(f)
    fields_plot(d, fit, d)
    energy_plot(d, fit, d)


if __name__ == "__main__":
    main()
