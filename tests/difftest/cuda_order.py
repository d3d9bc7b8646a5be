#!/usr/bin/python3
"""cuda_order.py CNPC -- the reference interpreter's --interpret-order=cuda against the
reduction order docs/language.md gives the CUDA backend, written here again: each row's value
from the identity, blocks of 256 rows combined in a tree (pairs at distance 128, 64, ..., 1),
then one block combines the block partials (thread t the partials t, t + 256, ... in order,
from the identity), then the same tree. A sum of 3000 f64 values of mixed magnitudes (whose
last bits depend on the order) must come out bit for bit; the host order must give the sum
of its lanes and chunks instead, and a min= and an i64 sum the same in both orders."""
import os
import random
import struct
import subprocess
import sys
import tempfile

N = 3000
B = 256
rnd = random.Random(7)
xs = [rnd.uniform(-1.0, 1.0) * 10.0 ** rnd.randint(-8, 8) for _ in range(N)]


def tree(v):
    s = B // 2
    while s > 0:
        for k in range(s):
            v[k] = v[k] + v[k + s]
        s //= 2
    return v[0]


def cuda_sum(xs):
    rows = [0.0 + x for x in xs]
    nb = (len(rows) + B - 1) // B
    acc = [0.0] * B
    for c in range(nb):
        blk = rows[c * B:(c + 1) * B]
        blk += [0.0] * (B - len(blk))
        acc[c % B] = acc[c % B] + tree(blk)
    return tree(acc)


def host_sum(xs):   # chunks of 4096 rows, row i into lane i % 8, lanes in order, chunks in order
    total = 0.0
    for c in range(0, len(xs), 4096):
        lanes = [0.0] * 8
        for i in range(c, min(c + 4096, len(xs))):
            lanes[(i - c) % 8] = lanes[(i - c) % 8] + xs[i]
        for l in range(1, 8):
            lanes[0] = lanes[0] + lanes[l]
        total = total + lanes[0]
    return total


PROG = """pipeline co;
dim N;
field x : f64[N];
field k : i64[N];
scalar s : f64;
scalar m : f64;
scalar t : i64;
stream s0;
step st0 on s0 { map i in N { s += x[i]; m min= x[i]; t += k[i]; } }
"""
ks = [rnd.randint(-10 ** 12, 10 ** 12) for _ in range(N)]
bad = 0
with tempfile.TemporaryDirectory() as d:
    p, i = os.path.join(d, "co.cnp"), os.path.join(d, "in.bin")
    with open(p, "w") as f:
        f.write(PROG)
    with open(i, "wb") as f:   # one step; dim N: capacity, live; x, k at capacity; scalars
        f.write(b"CNPDATA1" + struct.pack("<qqq", 1, N, N) + struct.pack("<%dd" % N, *xs) +
                struct.pack("<%dq" % N, *ks) + bytes(8 * 3))   # and the scalars s, m, t
    got = {}
    for order in ("host", "cuda"):
        o = os.path.join(d, order + ".bin")
        subprocess.check_call([sys.argv[1], "-w", "--interpret", i, "--interpret-out", o,
                               "--interpret-order=" + order, p])
        data = open(o, "rb").read()
        off = 8 + 8                                  # magic, N's extent
        for name, fmt in (("x", "d"), ("k", "q")):   # the fields: n, bytes, m, bounds
            n = struct.unpack_from("<q", data, off)[0]
            off += 8 + n
            m = struct.unpack_from("<q", data, off)[0]
            off += 8 + 8 * m
        vals = []
        for fmt in ("d", "d", "q"):                  # the scalars s, m, t: fields of one element
            n = struct.unpack_from("<q", data, off)[0]
            vals.append(struct.unpack_from("<" + fmt, data, off + 8)[0])
            off += 8 + n
            m = struct.unpack_from("<q", data, off)[0]
            off += 8 + 8 * m
        got[order] = vals
want = {"host": [host_sum(xs), min(xs), sum(ks)], "cuda": [cuda_sum(xs), min(xs), sum(ks)]}
for order in ("host", "cuda"):
    if got[order] != want[order]:
        print("cuda_order: --interpret-order=%s gives %r, want %r" % (order, got[order], want[order]))
        bad = 1
if want["host"][0] == want["cuda"][0]:
    print("cuda_order: the two orders give the same sum here: the test checks nothing")
    bad = 1
print("cuda_order: %s" % ("FAILED" if bad else "ok"))
sys.exit(bad)
