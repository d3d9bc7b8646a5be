#!/usr/bin/python3
"""es1d_numpy.py -- the complete 1D electrostatic PIC step of examples/pic/ref/es1d.h in NumPy,
vectorized the way a good NumPy user would: np.bincount for the CIC deposit, np.cumsum for
Gauss's law, fancy indexing for the gather. bench_es1d runs it on the same initial state.

    /usr/bin/python3 bench/pic/es1d_numpy.py STATE.npy STEPS L N_CELLS DT

STATE.npy: (2, N) float64, x^0 and v^{-1/2} (as es1d_setup leaves them). Prints one line:
    numpy ms/step BEST mean MEAN cpu CPU W_last FIELD_ENERGY K_last KINETIC_ENERGY (numpy VERSION)
BEST: the fastest step's wall time (the statistic bench_es1d keeps for the compiled steps);
MEAN: the mean wall time per step; CPU: the mean process CPU time per step.
"""
import sys
import time

import numpy as np


def step(x, v, L, nc, dt):
    idx, dx, n = nc / L, L / nc, x.size
    u = x * idx
    j = u.astype(np.int64)
    np.minimum(j, nc - 1, out=j)
    f = u - j
    # CIC deposit onto nodes j and j+1 (node nc is node 0 again)
    cnt = np.bincount(j, weights=1.0 - f, minlength=nc + 1)
    cnt += np.bincount(j + 1, weights=f, minlength=nc + 1)
    cnt[0] += cnt[nc]
    rho = 1.0 - (nc / n) * cnt[:nc]
    # Gauss's law: E at the half nodes by a prefix sum, mean removed, averaged onto the nodes
    Eh = dx * np.cumsum(rho)
    Eh -= Eh.mean()
    E = 0.5 * (np.roll(Eh, 1) + Eh)
    W = 0.5 * dx * np.dot(E, E)
    Ee = np.append(E, E[0])
    # gather (the same weights), leapfrog push, move, wrap
    e = Ee[j] + f * (Ee[j + 1] - Ee[j])
    vn = v - dt * e
    K = 0.25 * (L / n) * (np.dot(v, v) + np.dot(vn, vn))
    x += dt * vn
    np.mod(x, L, out=x)
    return x, vn, W, K


def main():
    state, steps = sys.argv[1], int(sys.argv[2])
    L, nc, dt = float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
    s = np.load(state)
    x, v = s[0].copy(), s[1].copy()
    del s
    x, v, W, K = step(x, v, L, nc, dt)  # warm-up, not timed (as in bench_es1d.c)
    wall = cpu = 0.0
    best = float("inf")
    for _ in range(steps):
        a, b = time.perf_counter(), time.process_time()
        x, v, W, K = step(x, v, L, nc, dt)
        d = time.perf_counter() - a
        wall += d
        best = min(best, d)
        cpu += time.process_time() - b
    print("numpy ms/step %.6f mean %.6f cpu %.6f W_last %.17g K_last %.17g (numpy %s)"
          % (1e3 * best, 1e3 * wall / steps, 1e3 * cpu / steps, W, K, np.__version__))


if __name__ == "__main__":
    main()
