"""bench/rng/rng_numpy.py N REPS -- NumPy's Generator.random (PCG64) filling a preallocated
f64 and f32 array of N values (out=, no allocation): ns per draw, best of REPS after one
warm-up, in the format of bench_rng."""
import sys
import time

import numpy as np

n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
rng = np.random.Generator(np.random.PCG64(12345))
for dtype, label in ((np.float64, "numpy f64"), (np.float32, "numpy f32")):
    out = np.empty(n, dtype=dtype)
    best = 1e30
    for r in range(reps + 1):
        t0 = time.perf_counter()
        rng.random(out=out, dtype=dtype)
        t = time.perf_counter() - t0
        if r > 0:
            best = min(best, t)
    print(f"{label} {1e9 * best / n:.3f} ns/draw")
