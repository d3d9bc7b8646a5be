#!/usr/bin/python3
"""philox_kat.py CNPC -- the reference interpreter's draws against Philox4x32-10's known
answer (Random123, kat_vectors): counter (0, 0, 0, 0) and key (0, 0) give the words
6627e8d5 e169c58d bc57ac4c 9b00dbd8, so at row 0 of the first step a program's first draw
(draw 0) uniform(0) is (0xe169c58d6627e8d5 >> 11) * 2^-53, uniform_f32(0) is
(0x6627e8d5 >> 8) * 2^-24."""
import os
import struct
import subprocess
import sys
import tempfile

CASES = [("f64", "uniform(0)", "<d", (0xe169c58d6627e8d5 >> 11) * 2.0 ** -53),
         ("f32", "uniform_f32(0)", "<f", (0x6627e8d5 >> 8) * 2.0 ** -24)]
bad = 0
with tempfile.TemporaryDirectory() as d:
    for t, call, fmt, want in CASES:
        p, i, o = (os.path.join(d, n) for n in ("kat.cnp", "in.bin", "out.bin"))
        with open(p, "w") as f:
            f.write("pipeline kat;\ndim N;\nfield x : %s[N];\nstream s0;\n"
                    "step st0 on s0 { map i in N { x[i] = %s; } }\n" % (t, call))
        size = struct.calcsize(fmt)
        with open(i, "wb") as f:   # one step; dim N: capacity 1, live 1; x: one element
            f.write(b"CNPDATA1" + struct.pack("<qqq", 1, 1, 1) + bytes(size))
        subprocess.check_call([sys.argv[1], "-w", "--interpret", i, "--interpret-out", o, p])
        with open(o, "rb") as f:
            got = struct.unpack_from(fmt, f.read(), 8 + 8 + 8)[0]   # magic, extent, n
        if got != want:
            print("philox_kat: %s = %r, want %r" % (call, got, want))
            bad = 1
print("philox_kat: %s" % ("FAILED" if bad else "ok"))
sys.exit(bad)
