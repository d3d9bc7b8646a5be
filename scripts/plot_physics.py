#!/usr/bin/python3
"""plot_physics.py -- draws what examples/pic/physics_demo wrote (docs/physics.md):

    /usr/bin/python3 scripts/plot_physics.py [DIR]        (default out/physics)

For CASE in landau, two_stream (files CASE_history.npy, CASE_rho.npy, CASE_phase_*.npy,
CASE_fit.json), writes into DIR:
    CASE_energy.png   field energy against time (log axis), the theory's slope over it,
                      the measured rate in the legend, the fit window shaded
    CASE_phase.png    phase space (x, v) as 2D histograms at the start, at saturation (Landau:
                      the end of the fit window) and at the end, with colour bars
    CASE_rho.png      the charge density rho(x, t) per step, with a colour bar
Units are the normalized ones of the simulation: time in 1/omega_p, x in v_th/omega_p
(Landau) or v0/omega_p (two-stream), v in v_th or v0, rho in e n0, energies in n0 m v^2 L units.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.colors  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

TITLES = {"landau": "Landau damping, $k\\lambda_D = 0.5$",
          "two_stream": "Cold two-stream instability, $k v_0 = \\sqrt{3/8}\\,\\omega_p$"}
VUNIT = {"landau": "$v_{th}$", "two_stream": "$v_0$"}
XUNIT = {"landau": "$\\lambda_D = v_{th}/\\omega_p$", "two_stream": "$v_0/\\omega_p$"}


def energy_plot(d, case, fit, out):
    h = np.load(os.path.join(d, case + "_history.npy"))
    t, W, K = h[:, 0], h[:, 1], h[:, 2]
    fig, ax = plt.subplots(figsize=(8, 4.8))
    ax.semilogy(t, W, lw=1.2, color="C0", label="field energy $\\sum_j E_j^2/2\\,\\Delta x$")
    t0, t1 = fit["fit_t0"], fit["fit_t1"]
    ax.axvspan(t0, t1, color="0.9", zorder=0, label="fit window")
    g, gth = fit["gamma"], fit["gamma_theory"]
    if case == "landau":
        # theory slope through the first peak of W in the fit window
        m = (t >= t0) & (t <= t1)
        k = np.argmax(W[m])
        ta, wa = t[m][k], W[m][k]
        tl = np.linspace(ta, t1, 50)
        ax.semilogy(tl, wa * np.exp(2 * gth * (tl - ta)), "k--", lw=1.5,
                    label="theory $e^{2\\gamma t}$, $\\gamma = %.4f\\,\\omega_p$" % gth)
        ax.semilogy(tl, wa * np.exp(2 * g * (tl - ta)), color="C3", lw=1, alpha=0.8,
                    label="measured $\\gamma = %.4f\\,\\omega_p$ (%.1f%% off), $\\omega = %.4f\\,\\omega_p$"
                    % (g, 100 * abs(g / gth - 1), fit["omega"]))
    else:
        m = (t >= t0) & (t <= t1)
        tm = 0.5 * (t0 + t1)
        wm = np.exp(np.interp(tm, t[m], np.log(W[m])))
        tl = np.linspace(t0 - 3, t1 + 3, 50)
        ax.semilogy(tl, wm * np.exp(2 * gth * (tl - tm)), "k--", lw=1.5,
                    label="theory $e^{2\\gamma t}$, $\\gamma_{max} = %.4f\\,\\omega_p$" % gth)
        ax.semilogy(tl, wm * np.exp(2 * g * (tl - tm)), color="C3", lw=1, alpha=0.8,
                    label="measured $\\gamma = %.4f\\,\\omega_p$ (%.1f%% off)" % (g, 100 * abs(g / gth - 1)))
        ax.axvline(fit["t_sat"], color="0.5", ls=":", label="saturation")
    ax.set_xlabel("time $t$ [$\\omega_p^{-1}$]")
    ax.set_ylabel("field energy [$n_0 m$ (%s)$^2$ %s]" % (VUNIT[case], XUNIT[case]))
    ax.set_title("%s: field energy (%d particles, %d cells, $\\omega_p\\Delta t = %g$)"
                 % (TITLES[case], fit["n_particles"], fit["n_cells"], fit["dt"]), fontsize=10)
    ax.set_xlim(t[0], t[-1])
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="lower left" if case == "landau" else "lower right")
    fig.tight_layout()
    path = os.path.join(out, case + "_energy.png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    # kinetic energy too, as a side panel is noisy; print the totals instead
    e = W + K
    print("%s: total energy drift %.2e over t = %g" % (case, np.max(np.abs(e - e[0])) / e[0], t[-1]))
    return path


def phase_plot(d, case, fit, out):
    names = [("start", "start, $t = %g$" % fit["t_start"]),
             ("sat", "%s, $t = %.1f$" % (fit["sat_label"], fit["t_sat"])),
             ("end", "end, $t = %g$" % fit["t_end"])]
    files = [os.path.join(d, "%s_phase_%s.npy" % (case, n)) for n, _ in names]
    if not all(os.path.exists(f) for f in files):
        print("%s: no phase-space snapshots (the implementation gives no particles)" % case)
        return None
    data = [np.load(f) for f in files]
    L = fit["length"]
    vmax = max(np.max(np.abs(a[:, 1])) for a in data)
    vmax = min(vmax, 6.0 if case == "landau" else 4.0)
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2), sharey=True)
    for ax, a, (_, label) in zip(axes, data, names):
        hist, xe, ve = np.histogram2d(a[:, 0], a[:, 1], bins=(48, 64) if case == "landau" else (128, 128), range=[[0, L], [-vmax, vmax]])
        f = hist.T / (hist.sum() * (xe[1] - xe[0]) * (ve[1] - ve[0]))
        if case == "landau":
            # a 1% perturbation of a Maxwellian: show delta f = f - <f>_x, which holds the physics
            df = f - f.mean(axis=1, keepdims=True)
            lim = np.max(np.abs(df))
            im = ax.imshow(df, origin="lower", aspect="auto", extent=[0, L, -vmax, vmax],
                           cmap="RdBu_r", vmin=-lim, vmax=lim, interpolation="nearest")
            ax.set_title(label, fontsize=10)
            ax.set_xlabel("position $x$ [%s]" % XUNIT[case])
            cb = fig.colorbar(im, ax=ax)
            cb.set_label("$\\delta f = f(x, v) - \\langle f \\rangle_x$ [fraction per unit $x\\,v$]",
                         fontsize=8)
            continue
        # cold beams fill few bins: a log scale shows the filaments
        norm = matplotlib.colors.LogNorm(vmin=f.max() * 1e-4, vmax=f.max()) \
            if case == "two_stream" else None
        im = ax.imshow(np.ma.masked_equal(f, 0) if norm else f, origin="lower", aspect="auto",
                       extent=[0, L, -vmax, vmax], cmap="viridis", norm=norm,
                       interpolation="nearest")
        if norm:
            ax.set_facecolor("white")  # empty bins
        ax.set_title(label, fontsize=10)
        ax.set_xlabel("position $x$ [%s]" % XUNIT[case])
        cb = fig.colorbar(im, ax=ax)
        cb.set_label("$f(x, v)$ [particle fraction per unit $x\\,v$]%s"
                     % (", log scale; white: empty" if norm else ""), fontsize=8)
    axes[0].set_ylabel("velocity $v$ [%s]" % VUNIT[case])
    fig.suptitle("%s: phase space%s" % (TITLES[case], ", deviation from the spatial mean"
                                         if case == "landau" else ""), fontsize=11)
    fig.tight_layout()
    path = os.path.join(out, case + "_phase.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def rho_plot(d, case, fit, out):
    f = os.path.join(d, case + "_rho.npy")
    if not os.path.exists(f):
        return None
    rho = np.load(f)
    h = np.load(os.path.join(d, case + "_history.npy"))
    t = h[:, 0]
    L = fit["length"]
    fig, ax = plt.subplots(figsize=(8, 4.8))
    lim = np.max(np.abs(rho))
    im = ax.imshow(rho.T, origin="lower", aspect="auto", cmap="RdBu_r", vmin=-lim, vmax=lim,
                   extent=[t[0], t[-1], 0, L])
    cb = fig.colorbar(im, ax=ax)
    cb.set_label("charge density $\\rho$ [$e\\,n_0$] (ions + electrons)")
    ax.set_xlabel("time $t$ [$\\omega_p^{-1}$]")
    ax.set_ylabel("position $x$ [%s]" % XUNIT[case])
    ax.set_title("%s: charge density history" % TITLES[case], fontsize=10)
    fig.tight_layout()
    path = os.path.join(out, case + "_rho.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "out/physics"
    done = 0
    for case in ("landau", "two_stream"):
        jf = os.path.join(d, case + "_fit.json")
        if not os.path.exists(jf):
            print("plot_physics: %s is missing (run examples/pic/physics_demo --out %s)" % (jf, d))
            continue
        with open(jf) as fh:
            fit = json.load(fh)
        for p in (energy_plot(d, case, fit, d), phase_plot(d, case, fit, d), rho_plot(d, case, fit, d)):
            if p:
                print("wrote %s" % p)
                done += 1
    return 0 if done else 1


if __name__ == "__main__":
    sys.exit(main())
