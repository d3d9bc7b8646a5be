#!/usr/bin/python3
"""NumPy peer of bench_grid: 2D CIC deposition (np.add.at and np.bincount) and the FFT
Poisson solve (numpy.fft.rfft2 / irfft2) on the same sizes and the same particle layout.
Prints `key value` lines (best of REPS, seconds) for bench_grid to read.
usage: grid_numpy.py NY NX NP REPS"""
import sys
import time

import numpy as np


def best(f, reps):
    t = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - t0)
    return t


def main():
    ny, nx, npart, reps = (int(a) for a in sys.argv[1:5])
    rng = np.random.default_rng(1)
    y = rng.random(npart) * ny
    x = rng.random(npart) * nx
    w = 0.5 + rng.random(npart)

    def cic_weights():
        iy = np.floor(y).astype(np.int64)
        ix = np.floor(x).astype(np.int64)
        fy = y - iy
        fx = x - ix
        iy1 = (iy + 1) % ny
        ix1 = (ix + 1) % nx
        iy %= ny
        ix %= nx
        cells = [iy * nx + ix, iy * nx + ix1, iy1 * nx + ix, iy1 * nx + ix1]
        ws = [w * (1 - fy) * (1 - fx), w * (1 - fy) * fx, w * fy * (1 - fx), w * fy * fx]
        return cells, ws

    def add_at():
        cells, ws = cic_weights()
        g = np.zeros(ny * nx)
        for c, v in zip(cells, ws):
            np.add.at(g, c, v)
        return g

    def bincount():
        cells, ws = cic_weights()
        return np.bincount(np.concatenate(cells), weights=np.concatenate(ws),
                           minlength=ny * nx)

    ky = 2 * np.pi * np.fft.fftfreq(ny, d=1.0 / ny)
    kx = 2 * np.pi * np.fft.rfftfreq(nx, d=1.0 / nx)
    k2 = ky[:, None] ** 2 + kx[None, :] ** 2
    k2[0, 0] = 1.0
    inv = 1.0 / k2
    inv[0, 0] = 0.0
    jy = np.arange(ny)[:, None]
    jx = np.arange(nx)[None, :]
    rho = np.sin(2 * np.pi * jy / ny) * np.sin(2 * np.pi * jx / nx)

    def poisson():
        return np.fft.irfft2(np.fft.rfft2(rho) * inv, s=(ny, nx))

    print("add_at", best(add_at, max(1, reps // 2)))
    print("bincount", best(bincount, reps))
    print("fft_poisson", best(poisson, reps))
    print("numpy", np.__version__)


main()
