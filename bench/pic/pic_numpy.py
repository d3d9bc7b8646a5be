#!/usr/bin/python3
"""pic_numpy.py -- the PIC step of examples/pic/pic.cnp in NumPy (the same initial state
and parameters as bench_pic.c), for the fused/unfused/NumPy comparison.

    /usr/bin/python3 bench/pic/pic_numpy.py [particles] [steps]
"""
import sys
import time

import numpy as np

NC = 1024
DT = 1e-4
QM = -1.0


def step(x, v, w, E, dt):
    c = np.clip((x * NC).astype(np.int64), 0, NC - 1)
    v[0] += dt * QM * E[c]
    x += dt * v[0]
    alive = (x >= 0.0) & (x < 1.0)
    cell = (x * NC).astype(np.int64)
    x, v, w, cell = x[alive], v[:, alive], w[alive], cell[alive]
    order = np.argsort(cell, kind="stable")
    x, v, w, cell = x[order], v[:, order], w[order], cell[order]
    rho = np.bincount(cell, weights=w, minlength=NC)
    return x, v, w, rho


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    rng = np.random.default_rng(42)
    x = rng.random(n)
    v = rng.random((3, n)) * 2.0 - 1.0
    w = np.ones(n)
    E = np.sin(0.1 * np.arange(NC))
    x, v, w, rho = step(x, v, w, E, DT)  # warm-up, not timed (as in bench_pic.c)
    t_wall, t_cpu = 0.0, 0.0
    for _ in range(steps):
        a, b = time.perf_counter(), time.process_time()
        x, v, w, rho = step(x, v, w, E, DT)
        t_wall += time.perf_counter() - a
        t_cpu += time.process_time() - b
    print("numpy            %9.2f ms/step wall  %9.2f ms/step cpu  (live at end %d, numpy %s)"
          % (1e3 * t_wall / steps, 1e3 * t_cpu / steps, x.size, np.__version__))


if __name__ == "__main__":
    main()
