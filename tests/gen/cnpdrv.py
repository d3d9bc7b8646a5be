#!/usr/bin/python3
"""cnpdrv.py -- the generic side of the differential tests (docs/robustness.md): from a
program's `cnpc --dump-ast`, the input data file (seeded), the C driver that runs the
generated host unit on it, and the comparison of two output files.

    cnpdrv.py data    --ast A.txt --seed N --steps K -o IN.bin
    cnpdrv.py driver  --ast A.txt -o driver.c
    cnpdrv.py compare --ast A.txt REF.bin OUT.bin       (exit 1 and a report on a mismatch)

File formats: compiler/interp.c (the reference interpreter reads IN.bin and writes REF.bin;
the driver reads IN.bin and writes OUT.bin in the same layout).
"""
import argparse
import math
import random
import re
import struct
import sys

SIZE = {"bool": 1, "i32": 4, "i64": 8, "u64": 8, "f16": 2, "f32": 4, "f64": 8, "c64": 8, "c128": 16}
CTYPE = {"bool": "uint8_t", "i32": "int32_t", "i64": "int64_t", "u64": "uint64_t", "f16": "float",
         "f32": "float", "f64": "double", "c64": "cnp_complex64", "c128": "cnp_complex128"}


# ---------------------------------------------------------------------- the AST dump
def parse_sexpr(s):
    toks = re.findall(r"\(|\)|[^\s()]+", s)
    pos = 0

    def rec():
        nonlocal pos
        t = toks[pos]
        pos += 1
        if t == "(":
            op = toks[pos]
            pos += 1
            args = []
            while toks[pos] != ")":
                args.append(rec())
            pos += 1
            return [op] + args
        return t
    return rec()


def split_top(s):
    """Split 'a, (b c), d' at top-level commas."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


# The declaration lines of --dump-ast (unindented), each a pattern and the dict of a match;
# the first pattern that matches a line wins, other lines are skipped.
DECL_LINES = [
    (r"pipeline (\w+)$", lambda m: {"kind": "pipeline", "name": m.group(1)}),
    (r"param (\w+) : (\w+)( setup)?$",
     lambda m: {"kind": "param", "name": m.group(1), "t": m.group(2), "setup": bool(m.group(3))}),
    (r"const (\w+) : (\w+) = (.*)$",
     lambda m: {"kind": "const", "name": m.group(1), "t": m.group(2), "v": m.group(3)}),
    (r"dim (\w+)$", lambda m: {"kind": "dim", "name": m.group(1)}),
    (r"field (\w+) : (\w+)\[(.*)\]$",
     lambda m: {"kind": "field", "name": m.group(1), "t": m.group(2),
                "shape": [parse_sexpr(x) for x in split_top(m.group(3))]}),
    (r"scalar (\w+) : (\w+)$",
     lambda m: {"kind": "field", "name": m.group(1), "t": m.group(2), "shape": ["1"], "scalar": True}),
    (r"history (\w+) = (\w+)\[(.*)\]$",
     lambda m: {"kind": "field", "name": m.group(1), "of_scalar": m.group(2),
                "shape": [parse_sexpr(m.group(3))], "history": True}),
    (r"grid (\w+) = rfft\((\w+)(, measure)?\)$",
     lambda m: {"kind": "grid", "name": m.group(1), "rfft": m.group(2)}),
    (r"grid (\w+) = \[(.*?)\]( boundary\((.*?\)?)\))?( length\(.*\))?$",
     lambda m: {"kind": "grid", "name": m.group(1), "ext": [parse_sexpr(x) for x in split_top(m.group(2))],
                "bound": split_top(m.group(4)) if m.group(4) else []}),
    (r"snapshot (\w+) = host_staging\((\w+), slots = (\d+)\)$",
     lambda m: {"kind": "snapshot", "name": m.group(1), "of": m.group(2)}),
]


def parse_ast(text):
    """The declarations: scalars and histories are fields (a scalar of shape [1], a history of
    shape [K] and its scalar's dtype), as in the data and output files."""
    decls = []
    for line in text.splitlines():
        if line.startswith(" "):
            continue
        for pat, make in DECL_LINES:
            m = re.match(pat, line)
            if m:
                decls.append(make(m))
                break
    grids = {d["name"]: d for d in decls if d["kind"] == "grid"}
    for d in grids.values():            # a spectral grid: G's axes, the last n / 2 + 1
        if "rfft" in d:
            g = grids[d["rfft"]]
            d["ext"] = g["ext"][:-1] + [["+", ["/", g["ext"][-1], "2"], "1"]]
            d["bound"] = []
    for d in decls:                     # a grid field: its storage shape (ghost planes included)
        if d["kind"] == "field" and d["shape"] and isinstance(d["shape"][-1], str) and d["shape"][-1] in grids:
            g = grids[d["shape"][-1]]
            b = g["bound"] or ["periodic"]
            b = b * len(g["ext"]) if len(b) == 1 else b
            ext = []
            for e, w in zip(g["ext"], b):
                m = re.match(r"ghost\((\d+)\)$", w.strip())
                ext.append(["+", e, str(2 * int(m.group(1)))] if m else e)
            d["shape"] = d["shape"][:-1] + ext
    for d in decls:
        if d.get("history"):
            d["t"] = [x for x in decls if x.get("name") == d["of_scalar"]][0]["t"]
    decls[0]["appends"] = bool(re.search(r"^ +append ", text, re.M))
    return decls


def eval_ext(e, env):
    if isinstance(e, list):
        op = e[0].split(":")[0]
        a = [eval_ext(x, env) for x in e[1:]]
        if op == "+":
            return a[0] + a[1]
        if op == "-" and len(a) == 2:
            return a[0] - a[1]
        if op == "-":
            return -a[0]
        if op == "*":
            return a[0] * a[1]
        if op == "/":
            return a[0] // a[1]
        if op == "cast":
            return a[0]
        raise ValueError("extent operator %s" % op)
    if re.match(r"-?\d+$", e):
        return int(e)
    return env[e]


# ---------------------------------------------------------------------- the data file
def f16_bits(x):
    return struct.unpack("<H", struct.pack("<e", x))[0] if not math.isnan(x) else 0x7e00


def value_bytes(t, r, edge):
    """One element of dtype t: mostly ordinary values, sometimes edge values."""
    if t == "bool":
        return bytes([1 if r.random() < 0.85 else 0])
    if t in ("i32", "i64"):
        bits = 32 if t == "i32" else 64
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        if r.random() < edge:
            v = r.choice([0, -1, 1, lo, hi, lo + 1, 2, -2])
        else:
            v = r.randint(-40, 40)
        return struct.pack("<i" if bits == 32 else "<q", v)
    if t == "u64":
        if r.random() < edge:
            v = r.choice([0, 1, (1 << 64) - 1, 1 << 63, (1 << 63) - 1, (1 << 32)])
        else:
            v = r.randint(0, 80)
        return struct.pack("<Q", v)
    if t in ("f16", "f32", "f64", "c64", "c128"):
        def one():
            if r.random() < edge:
                return r.choice([0.0, -0.0, float("nan"), float("inf"), -float("inf"), 1e-40, -1e300, 65504.0,
                                 6e-8, 1.0, -1.0, 0.5])
            return round(r.uniform(-10, 10), r.choice([0, 1, 3, 8]))
        if t == "f16":
            x = one()
            try:
                return struct.pack("<H", f16_bits(x))
            except (OverflowError, struct.error):
                return struct.pack("<H", 0x7c00 if x > 0 else 0xfc00)
        if t == "f32":
            x = one()
            try:
                return struct.pack("<f", x)
            except OverflowError:
                return struct.pack("<f", math.copysign(math.inf, x))
        if t == "f64":
            return struct.pack("<d", one())
        fmt = "<ff" if t == "c64" else "<dd"
        a, b = one(), one()
        try:
            return struct.pack(fmt, a, b)
        except OverflowError:
            return struct.pack(fmt, math.copysign(math.inf, a), math.copysign(math.inf, b))
    raise ValueError(t)


def slot(t, r, edge):
    b = value_bytes(t, r, edge)
    return b + bytes(16 - len(b))


def make_data(decls, seed, steps, size=2, big=False):
    """The data file: setup params, dims (capacity, live extent), fields, step params. With
    big, every dim's capacity is 4097 to 9096 (several chunks of 4096 rows, sub-blocks of
    512, scans' chunks of 1024); otherwise small. The same stream of draws either way up to
    the first dim, so a seed's small data never changes."""
    r = random.Random(seed * 7919 + 17)
    edge = r.choice([0.0, 0.05, 0.2])
    env = {}
    out = [b"CNPDATA1", struct.pack("<q", steps)]
    for d in decls:
        if d["kind"] == "const" and re.match(r"-?\d+$", d["v"]):
            env[d["name"]] = int(d["v"])
        elif d["kind"] == "param" and d["setup"]:
            if d["t"] in ("i32", "i64"):
                v = r.randint(1, 12)
                env[d["name"]] = v
                out.append(struct.pack("<i" if d["t"] == "i32" else "<q", v) + bytes(16 - SIZE[d["t"]]))
            else:
                out.append(slot(d["t"], r, edge))
        elif d["kind"] == "dim":
            cap = r.randint(1, 12 * size + 8)
            if big:
                cap = 4097 + (cap * 613 + seed) % 5000
            live = cap if r.random() < (0.2 if decls[0].get("appends") else 0.7) else r.randint(0, cap)
            env[d["name"]] = cap
            out.append(struct.pack("<qq", cap, live))
        elif d["kind"] == "field":
            n = 1
            for e in d["shape"]:
                n *= eval_ext(e, env)
            out.append(b"".join(value_bytes(d["t"], r, edge) for _ in range(n)))
    step_params = [d for d in decls if d["kind"] == "param" and not d["setup"]]
    for _ in range(steps):
        for d in step_params:
            out.append(slot(d["t"], r, edge))
    return b"".join(out)


# ---------------------------------------------------------------------- the driver
def make_driver(decls):
    """The driver: a first pass reads setup params and dims (fields skipped by their sizes,
    known from the extents), then setup, then the fields, the steps and the dump."""
    name = [d for d in decls if d["kind"] == "pipeline"][0]["name"]
    up = name.upper()
    L = []
    w = L.append
    w("/* Generated by tests/gen/cnpdrv.py: runs pipeline %s on a data file (compiler/interp.c). */" % name)
    w("#include \"%s.h\"" % name)
    w("#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>")
    w("static void rd(FILE *f, void *p, size_t n) {\n  if (fread(p, 1, n, f) != n) { fprintf(stderr, \"short data file\\n\"); exit(2); }\n}")
    w("__attribute__((unused)) static float h2f(uint16_t h) {   /* binary16 bits -> float, exact */")
    w("  int e = (h >> 10) & 31, m = h & 1023; float v;")
    w("  if (e == 31) { uint32_t b = 0x7f800000u | ((uint32_t)m << 13); memcpy(&v, &b, 4); }")
    w("  else if (e == 0) v = (float)m * 0x1p-24f;")
    w("  else { uint32_t b = ((uint32_t)(e - 15 + 127) << 23) | ((uint32_t)m << 13); memcpy(&v, &b, 4); }")
    w("  return (h & 0x8000) ? -v : v;\n}")
    w("__attribute__((unused)) static void put(cnp_array v, FILE *in) {\n  cnp_array h; size_t nb = cnp_array_nbytes(&v); void *buf = malloc(nb ? nb : 1);")
    w("  rd(in, buf, nb);")
    w("  if (cnp_array_wrap(&h, buf, CNP_BACKEND_HOST, 0, v.dtype, v.ndim, v.shape, NULL) || (nb && cnp_array_copy(&v, &h, NULL))) {\n    fprintf(stderr, \"put: %s\\n\", cnp_last_error()); exit(5);\n  }\n  free(buf);\n}")
    w("__attribute__((unused)) static void dump(FILE *o, cnp_array v, int tol) {\n  cnp_array h; int64_t nb = (int64_t)cnp_array_nbytes(&v), m = 0;")
    w("  void *buf = malloc(nb ? (size_t)nb : 1);")
    w("  if (cnp_array_wrap(&h, buf, CNP_BACKEND_HOST, 0, v.dtype, v.ndim, v.shape, NULL) || (nb && cnp_array_copy(&h, &v, NULL))) {\n    fprintf(stderr, \"dump: %s\\n\", cnp_last_error()); exit(5);\n  }")
    w("  fwrite(&nb, 8, 1, o); fwrite(buf, 1, (size_t)nb, o); if (tol) fwrite(&m, 8, 1, o); free(buf);\n}")
    w("int main(int argc, char **argv) {")
    w("  if (argc != 3) { fprintf(stderr, \"usage: %s IN OUT\\n\", argv[0]); return 2; }")
    w("  FILE *in = fopen(argv[1], \"rb\");\n  if (!in) return 2;")
    w("  char magic[8]; int64_t K; unsigned char slot[16];")
    w("  rd(in, magic, 8); rd(in, &K, 8);")
    w("  %s_config cfg = %s_CONFIG_INIT;" % (name, up))
    dims = [d for d in decls if d["kind"] == "dim"]
    for d in dims:
        w("  int64_t live_%s = 0;" % d["name"])
    w("  (void)slot;")
    # pass 1: setup params and dims, fields skipped by size
    w("  long start = ftell(in);")
    w("  int64_t nb;")
    w("  (void)nb;")
    for d in decls:
        k = d["kind"]
        if k == "param" and d["setup"]:
            if d["t"] == "f16":
                w("  { uint16_t h; rd(in, slot, 16); memcpy(&h, slot, 2); cfg.%s = h2f(h); }" % d["name"])
            else:
                w("  rd(in, slot, 16); memcpy(&cfg.%s, slot, sizeof cfg.%s);" % (d["name"], d["name"]))
        elif k == "dim":
            w("  rd(in, &cfg.%s, 8); rd(in, &live_%s, 8);" % (d["name"], d["name"]))
        elif k == "field":
            w("  fseek(in, (long)FIELD_BYTES_%s, SEEK_CUR);" % d["name"])
    w("  %s *p; char err[512];" % name)
    w("  if (%s_setup(&p, &cfg, err, sizeof err) != 0) { fprintf(stderr, \"setup: %%s\\n\", err); return 3; }" % name)
    w("  fseek(in, start, SEEK_SET);")
    for d in decls:
        k = d["kind"]
        if k == "param" and d["setup"]:
            w("  rd(in, slot, 16);")
        elif k == "dim":
            w("  rd(in, slot, 16);")
        elif k == "field" and d.get("history"):       # its ring is not an input: skipped
            w("  fseek(in, (long)FIELD_BYTES_%s, SEEK_CUR);" % d["name"])
        elif k == "field":
            w("  put(%s_field(p, \"%s\"), in);" % (name, d["name"]))
    for d in dims:
        w("  if (%s_set_extent(p, \"%s\", live_%s) != 0) { fprintf(stderr, \"set_extent %s\\n\"); return 5; }" % (name, d["name"], d["name"], d["name"]))
    sp = [d for d in decls if d["kind"] == "param" and not d["setup"]]
    w("  int64_t failed_step = -1, status = 0;")
    w("  for (int64_t k = 0; k < K; k++) {")
    for d in sp:
        w("    %s a_%s;" % (CTYPE[d["t"]], d["name"]))
        if d["t"] == "f16":
            w("    { uint16_t h; rd(in, slot, 16); memcpy(&h, slot, 2); a_%s = h2f(h); }" % d["name"])
        else:
            w("    rd(in, slot, 16); memcpy(&a_%s, slot, sizeof a_%s);" % (d["name"], d["name"]))
    w("    int rc = %s_step(p%s);" % (name, "".join(", a_%s" % d["name"] for d in sp)))
    w("    if (rc != 0) { failed_step = k; status = rc; break; }   /* compared with the interpreter's */")
    w("  }")
    w("  if (%s_sync(p) != 0 && !status) return 4;" % name)
    w("  fclose(in);")
    w("  FILE *o = fopen(argv[2], \"wb\");\n  if (!o) return 2;")
    w("  fwrite(\"CNPOUT1\", 1, 8, o);")
    for d in decls:
        k = d["kind"]
        if k == "dim":
            w("  { int64_t e = %s_extent(p, \"%s\"); fwrite(&e, 8, 1, o); }" % (name, d["name"]))
        elif k == "field" and d.get("scalar"):         # through the generated NAME_scalar()
            w("  { %s v; int64_t nb = (int64_t)sizeof v, m = 0;" % CTYPE[d["t"]])
            w("    if (%s_scalar(p, \"%s\", &v) != 0) { fprintf(stderr, \"scalar %s\\n\"); return 5; }" % (name, d["name"], d["name"]))
            w("    fwrite(&nb, 8, 1, o); fwrite(&v, sizeof v, 1, o); fwrite(&m, 8, 1, o); }")
        elif k == "field" and d.get("history"):        # NAME_history(): the latest, oldest first
            w("  { cnp_array h = %s_field(p, \"%s\"); int64_t K = h.shape[0], m = 0;" % (name, d["name"]))
            w("    %s *buf = malloc((size_t)K * sizeof *buf + 1);" % CTYPE[d["t"]])
            w("    int64_t got = %s_history(p, \"%s\", buf, K);" % (name, d["name"]))
            w("    if (got < 0) { fprintf(stderr, \"history %s\\n\"); return 5; }" % d["name"])
            w("    int64_t nb = got * (int64_t)sizeof *buf;")
            w("    fwrite(&nb, 8, 1, o); fwrite(buf, sizeof *buf, (size_t)got, o); fwrite(&m, 8, 1, o); free(buf); }")
        elif k == "field":
            w("  dump(o, %s_field(p, \"%s\"), 1);" % (name, d["name"]))
        elif k == "snapshot":
            w("  { cnp_array hv; if (%s_snapshot(p, \"%s\", &hv) != 0) { int64_t n = -1; fwrite(&n, 8, 1, o); }" % (name, d["name"]))
            w("    else dump(o, hv, 0); }")
    w("  fwrite(&failed_step, 8, 1, o); fwrite(&status, 8, 1, o);   /* a failed step() and its status */")
    w("  %s_teardown(p);" % name)
    w("  return fclose(o) == 0 ? 0 : 2;\n}")
    return L


def driver_text(decls, env_sizes):
    lines = make_driver(decls)
    text = "\n".join(lines) + "\n"
    for d in decls:
        if d["kind"] == "field":
            text = text.replace("FIELD_BYTES_%s," % d["name"], "%d," % env_sizes[d["name"]])
    return text


# ---------------------------------------------------------------------- comparison
def read_out(path, decls):
    with open(path, "rb") as f:
        b = f.read()
    if b[:8] != b"CNPOUT1\0":
        raise ValueError("%s: not an output file" % path)
    pos = 8
    res = {}

    def q():
        nonlocal pos
        v = struct.unpack_from("<q", b, pos)[0]
        pos += 8
        return v
    for d in decls:
        if d["kind"] == "dim":
            res[d["name"]] = ("dim", q())
        elif d["kind"] == "field":
            n = q()
            data = b[pos:pos + n]
            pos += n
            m = q()
            tol = struct.unpack_from("<%dd" % m, b, pos) if m else None
            pos += 8 * m
            res[d["name"]] = ("field", data, tol)
        elif d["kind"] == "snapshot":
            n = q()
            data = b[pos:pos + n] if n > 0 else None
            pos += max(n, 0)
            res[d["name"]] = ("snapshot", n, data)
    res[" status"] = struct.unpack_from("<qq", b, pos)
    return res


def elems(t, data):
    if t == "bool":
        return [("b", x) for x in data]
    fmt = {"i32": "i", "i64": "q", "u64": "Q", "f16": "e", "f32": "f", "f64": "d", "c64": "ff", "c128": "dd"}[t]
    bits = {"f16": "H", "f32": "I", "f64": "Q", "c64": "II", "c128": "QQ"}.get(t)
    sz = SIZE[t]
    out = []
    for k in range(len(data) // sz):
        chunk = data[k * sz:(k + 1) * sz]
        v = struct.unpack("<" + fmt, chunk)
        out.append((v, struct.unpack("<" + bits, chunk) if bits else v))
    return out


def same(t, a, b, tol):
    """Element equality: bit-identical (any NaN equals any NaN), or within tol where given
    (tol > 0: an inexact element, compared by value, so -0 equals +0: the interpreter states
    at least the least subnormal for an order-open one, found/fft_negzero)."""
    va, ba = a
    vb, bb = b
    if tol is not None and tol == math.inf:
        return True   # the interpreter cannot bound it (an inexact value through a comparison...)
    if t == "bool" or t in ("i32", "i64", "u64"):
        return va == vb
    for x, y, bx, by in zip(va, vb, ba, bb):
        if math.isnan(x) and math.isnan(y):
            continue
        if tol is not None and tol > 0:
            if x == y or (not math.isnan(x) and not math.isnan(y) and abs(x - y) <= tol):
                continue
            return False
        if bx != by:
            return False
    return True


# Element comparisons made by compare(), by kind: "exact" (bit for bit), "bounded" (within
# the interpreter's finite bound), "unbounded" (its bound is infinite: not compared).
COMPARED = {"exact": 0, "bounded": 0, "unbounded": 0}


def count_compared(tol, n):
    if not tol:
        COMPARED["exact"] += n
        return
    for x in tol[:n]:
        COMPARED["unbounded" if x == math.inf else "bounded" if x else "exact"] += 1


def compare(decls, ref_path, out_path, limit=6):
    ref, out = read_out(ref_path, decls), read_out(out_path, decls)
    bad = []
    if ref[" status"] != out[" status"]:
        bad.append("step() failed at call %d with status %d, expected call %d, status %d" % (
            out[" status"] + ref[" status"]))
    for d in decls:
        n = d["name"] if "name" in d else None
        if d["kind"] == "dim" and ref[n] != out[n]:
            bad.append("dim %s: extent %d, expected %d" % (n, out[n][1], ref[n][1]))
        elif d["kind"] == "field":
            _, rd_, tol = ref[n]
            _, od, _ = out[n]
            if len(rd_) != len(od):
                bad.append("field %s: %d bytes, expected %d" % (n, len(od), len(rd_)))
                continue
            er, eo = elems(d["t"], rd_), elems(d["t"], od)
            count_compared(tol, len(er))
            wrong = [k for k in range(len(er)) if not same(d["t"], er[k], eo[k], tol[k] if tol else None)]
            if wrong:
                k = wrong[0]
                bad.append("field %s (%s): %d of %d elements differ; first [%d]: %r, expected %r%s" % (
                    n, d["t"], len(wrong), len(er), k, eo[k][0], er[k][0],
                    " (tolerance %g)" % tol[k] if tol and tol[k] else ""))
        elif d["kind"] == "snapshot":
            if ref[n][1] != out[n][1]:
                bad.append("snapshot %s: %d bytes, expected %d" % (n, out[n][1], ref[n][1]))
            elif ref[n][2] is not None:
                f = [x for x in decls if x.get("name") == d["of"]][0]
                er, eo = elems(f["t"], ref[n][2]), elems(f["t"], out[n][2])
                if any(not same(f["t"], er[k], eo[k], None) for k in range(len(er))):
                    bad.append("snapshot %s differs" % n)
        if len(bad) >= limit:
            break
    return bad


def field_sizes(decls, data_path):
    """Bytes of every field at capacity, from the data file's setup values."""
    with open(data_path, "rb") as f:
        b = f.read()
    pos = 16
    env, sizes = {}, {}
    for d in decls:
        if d["kind"] == "const" and re.match(r"-?\d+$", d["v"]):
            env[d["name"]] = int(d["v"])
        elif d["kind"] == "param" and d["setup"]:
            if d["t"] in ("i32", "i64"):
                env[d["name"]] = struct.unpack_from("<i" if d["t"] == "i32" else "<q", b, pos)[0]
            pos += 16
        elif d["kind"] == "dim":
            env[d["name"]] = struct.unpack_from("<q", b, pos)[0]
            pos += 16
        elif d["kind"] == "field":
            n = SIZE[d["t"]]
            for e in d["shape"]:
                n *= eval_ext(e, env)
            sizes[d["name"]] = n
            pos += n
    return sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("data")
    a.add_argument("--ast", required=True)
    a.add_argument("--seed", type=int, required=True)
    a.add_argument("--steps", type=int, default=3)
    a.add_argument("--size", type=int, default=2)
    a.add_argument("-o", required=True)
    a = sub.add_parser("driver")
    a.add_argument("--ast", required=True)
    a.add_argument("--data", required=True, help="the data file (field sizes)")
    a.add_argument("-o", required=True)
    a = sub.add_parser("compare")
    a.add_argument("--ast", required=True)
    a.add_argument("ref")
    a.add_argument("out")
    args = ap.parse_args()
    decls = parse_ast(open(args.ast).read())
    if args.cmd == "data":
        with open(args.o, "wb") as f:
            f.write(make_data(decls, args.seed, args.steps, args.size))
    elif args.cmd == "driver":
        with open(args.o, "w") as f:
            f.write(driver_text(decls, field_sizes(decls, args.data)))
    else:
        bad = compare(decls, args.ref, args.out)
        for x in bad:
            print(x)
        sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
