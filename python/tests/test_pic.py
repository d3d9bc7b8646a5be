# examples/pic driven from Python (docs/interfaces.md): the run of examples/pic/pic_dump.c,
# bit for bit on the host backend (its dump file), and the first step against NumPy.
import math
import os
import subprocess

import numpy as np
import pytest

N, NC, STEPS = 20000, 64, 40
DT, V0, G, H = 0.01, 0.1, 0.6180339887498949, 0.7548776662466927


def frac(t):
    return t - np.trunc(t)


def initial(n):
    t = np.arange(1, n + 1, dtype=np.float64)
    u1 = frac(t * G)
    x = u1 + 0.01 * u1 * (1.0 - u1)
    v = np.empty((3, n))
    v[0] = np.where(np.arange(n) & 1, V0, -V0) + 0.01 * (frac(t * H) - 0.5)
    v[1] = 0.02 * (frac(t * G * H) - 0.5)
    v[2] = 0.02 * (frac(t * 0.5 * G) - 0.5)
    w = np.full(n, 1.0 / n)
    return x, v, w


def solve(rho):
    """The host Gauss solve of pic_demo.c, in its order (so with its rounding)."""
    total = 0.0
    for r in rho:
        total += float(r)
    mean = total / NC
    acc = emean = 0.0
    E = [0.0] * NC
    for k in range(NC):
        acc += float(rho[k]) - mean
        E[k] = -4.0 * acc
        emean += E[k] / NC
    return np.array([e - emean for e in E])


def run(pic, n, steps):
    p = pic.setup(N=n, n_cells=NC, qm=-1.0)
    x, v, w = initial(n)
    p.field("x")[...] = x
    p.field("v")[...] = v                                   # v : f64[3, N] is (3, N) here
    p.field("w")[...] = w
    E = np.zeros(NC)
    rho = None
    for _ in range(steps):
        p.field("E")[...] = E
        p.step(dt=DT)
        p.sync()
        rho = p.snapshot("out")
        E = solve(rho)
    return p, rho, E


def test_first_step_against_numpy(pic):
    p, rho, _ = run(pic, N, 1)
    x, v, w = initial(N)
    x1 = x + DT * v[0]                                      # E = 0: v unchanged
    alive = (x1 >= 0.0) & (x1 < 1.0)
    cell = (x1[alive] * NC).astype(np.int64)
    want = np.bincount(cell, weights=w[alive], minlength=NC)
    assert p.extent("N") == alive.sum()
    assert np.allclose(rho, want, rtol=1e-12, atol=1e-15)
    assert np.array_equal(np.sort(p.field("x")), np.sort(x1[alive]))
    p.close()


def test_bit_for_bit_with_the_c_driver(pic, tmp_path):
    dump = os.environ.get("CNP_PIC_DUMP")
    if not dump or not os.path.exists(dump):
        pytest.skip("CNP_PIC_DUMP (the pic_dump program) not set or not built")
    ref = tmp_path / "pic_c.bin"
    subprocess.run([dump, str(ref)], check=True, capture_output=True)
    p, rho, E = run(pic, N, STEPS)
    live = p.extent("N")
    x, v, w = p.field("x"), p.field("v"), p.field("w")
    assert v.shape == (3, live)
    got = (np.int64(live).tobytes() + x.tobytes() + v[0].tobytes() + v[1].tobytes() + v[2].tobytes()
           + w.tobytes() + rho.tobytes() + E.tobytes())
    assert got == ref.read_bytes()
    assert math.isclose(float(rho.sum()), live / N, rel_tol=1e-9)   # charge conservation
    p.close()
