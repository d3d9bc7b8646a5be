"""The implementation of the cnp package (see __init__.py and docs/interfaces.md).

compile() runs cnpc --emit=header,c,manifest,fortran on the .cnp file (the manifest NAME.json
describes the config, params, dims, fields and snapshots; the Fortran emitter's
NAME_cnp_layout.c reports the C layout of NAME_config), then cc -shared -fPIC links the host
unit and the layout check with libcnp into libNAME.so, which load() opens with ctypes. The
ctypes mirror of NAME_config is built from the manifest and checked against
NAME_cnp_layout() before the first setup.
"""

import ctypes
import json
import os
import shlex
import shutil
import subprocess
import tempfile

import numpy as np

# cnp_status values (cnp/cnp.h); the names come from the library (cnp_status_name).
CNP_OK = 0
CNP_EINVAL = -1
CNP_EDEVICE = -5
CNP_EABI = -20

BACKENDS = {"host": 0, "cuda": 1}
BACKEND_NAMES = {0: "host", 1: "cuda"}

# cnp_dtype -> NumPy dtype (bool fields are bytes 0/1, f16 is IEEE binary16 as np.float16).
DTYPES = {
    0: np.dtype(np.bool_),
    1: np.dtype(np.int32),
    2: np.dtype(np.int64),
    3: np.dtype(np.uint64),
    4: np.dtype(np.float16),
    5: np.dtype(np.float32),
    6: np.dtype(np.float64),
    7: np.dtype(np.complex64),
    8: np.dtype(np.complex128),
}


class CnpArray(ctypes.Structure):
    """cnp_array (cnp/cnp.h): a view, shape and strides (bytes) in C order."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int),
        ("ndim", ctypes.c_int),
        ("shape", ctypes.c_int64 * 4),
        ("strides", ctypes.c_int64 * 4),
        ("backend", ctypes.c_int),
        ("device", ctypes.c_int),
        ("flags", ctypes.c_uint32),
        ("alloc_id", ctypes.c_uint64),
    ]


class Stats(ctypes.Structure):
    """NAME_stats: counters of the last step and totals since setup."""

    _fields_ = [
        ("steps", ctypes.c_uint64),
        ("launches", ctypes.c_uint64),
        ("host_syncs", ctypes.c_uint64),
        ("graph_replays", ctypes.c_uint64),
        ("total_launches", ctypes.c_uint64),
        ("total_host_syncs", ctypes.c_uint64),
    ]


class Complex64(ctypes.Structure):
    _fields_ = [("re", ctypes.c_float), ("im", ctypes.c_float)]


class Complex128(ctypes.Structure):
    _fields_ = [("re", ctypes.c_double), ("im", ctypes.c_double)]


# .cnp types of params -> ctypes types of the C API (f16 params are floats in the API).
API_TYPES = {
    "bool": ctypes.c_uint8,
    "i32": ctypes.c_int32,
    "i64": ctypes.c_int64,
    "u64": ctypes.c_uint64,
    "f16": ctypes.c_float,
    "f32": ctypes.c_float,
    "f64": ctypes.c_double,
    "c64": Complex64,
    "c128": Complex128,
}


class CnpError(RuntimeError):
    """A failed cnp call: status (int, a CNP_E* code), name ("CNP_EINVAL"), message."""

    def __init__(self, status, message, name=None):
        self.status = int(status)
        self.name = name or "CNP_%d" % self.status
        self.message = message
        super().__init__("%s: %s" % (self.name, message) if message else self.name)


_status_names = {}


def status_name(status):
    """The name of a status code ("CNP_ERANGE"), once a pipeline library is loaded."""
    return _status_names.get(int(status), "CNP_%d" % int(status))


def cuda_array_interface(arr, readonly=False):
    """The __cuda_array_interface__ (version 3) dict of a device cnp_array: shape, typestr,
    data (address, readonly), strides in bytes (None when C-contiguous) and stream None (call
    Pipeline.sync() first: the pipeline's streams are then idle)."""
    dt = DTYPES[arr.dtype]
    ndim = arr.ndim
    shape = tuple(int(arr.shape[k]) for k in range(ndim))
    strides = tuple(int(arr.strides[k]) for k in range(ndim))
    contiguous = []
    s = dt.itemsize
    for k in reversed(range(ndim)):
        contiguous.insert(0, s)
        s *= shape[k]
    return {
        "shape": shape,
        "typestr": dt.str,
        "descr": [("", dt.str)],
        "data": (int(arr.data or 0), bool(readonly)),
        "strides": None if list(strides) == contiguous else strides,
        "stream": None,
        "version": 3,
    }


class DeviceArray:
    """A field of a pipeline on the CUDA backend: no host access, but
    __cuda_array_interface__, so cupy.asarray(a) or torch.as_tensor(a, device="cuda")
    use the device memory without a copy. Valid until the next step."""

    def __init__(self, arr, owner):
        self._arr = arr
        self._owner = owner           # keeps the pipeline (and its memory) alive
        self.__cuda_array_interface__ = cuda_array_interface(arr)
        self.shape = self.__cuda_array_interface__["shape"]
        self.dtype = DTYPES[arr.dtype]

    def __repr__(self):
        return "DeviceArray(shape=%r, dtype=%s)" % (self.shape, self.dtype)


class _Holder:
    """Carries __array_interface__ for np.asarray and keeps the owner alive (the base)."""

    def __init__(self, iface, owner):
        self.__array_interface__ = iface
        self._owner = owner


def numpy_view(arr, owner=None, readonly=False):
    """A NumPy array on the memory of a host cnp_array (no copy): shape and strides as the
    view's, so a component-major v : f64[3, N] is an array of shape (3, N), v[c, i]."""
    if not arr.data:
        raise CnpError(CNP_EINVAL, "no such array (null view)", "CNP_EINVAL")
    if arr.backend != 0:
        raise CnpError(CNP_EDEVICE, "the array is on the CUDA backend (use DeviceArray)", "CNP_EDEVICE")
    dt = DTYPES[arr.dtype]
    ndim = arr.ndim
    iface = {
        "shape": tuple(int(arr.shape[k]) for k in range(ndim)),
        "strides": tuple(int(arr.strides[k]) for k in range(ndim)),
        "typestr": dt.str,
        "data": (int(arr.data), bool(readonly)),
        "version": 3,
    }
    return np.asarray(_Holder(iface, owner))


def _tool_paths(cnpc=None, include_dir=None, lib_dir=None):
    """cnpc, the include and the library directories: the arguments, else CNPC,
    CNP_INCLUDE_DIR and CNP_LIB_DIR, else pkg-config cnp, else the prefix of the cnpc on PATH."""
    cnpc = cnpc or os.environ.get("CNPC")
    include_dir = include_dir or os.environ.get("CNP_INCLUDE_DIR")
    lib_dir = lib_dir or os.environ.get("CNP_LIB_DIR")

    def pkg(var):
        try:
            out = subprocess.run(["pkg-config", "--variable=" + var, "cnp"], capture_output=True, text=True)
        except OSError:
            return None
        return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else None

    cnpc = cnpc or pkg("cnpc") or shutil.which("cnpc")
    if not cnpc:
        raise CnpError(CNP_EINVAL, "cnpc not found: pass cnpc=, set CNPC, or install cnp (pkg-config cnp)",
                       "CNP_EINVAL")
    prefix = os.path.dirname(os.path.dirname(os.path.abspath(cnpc)))
    include_dir = include_dir or pkg("includedir") or os.path.join(prefix, "include")
    lib_dir = lib_dir or pkg("libdir") or os.path.join(prefix, "lib")
    return cnpc, include_dir, lib_dir


def _run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise CnpError(CNP_EINVAL, "%s failed:\n%s%s" % (" ".join(shlex.quote(c) for c in cmd), r.stdout,
                                                         r.stderr), "CNP_EINVAL")


def compile(path, build_dir=None, cnpc=None, include_dir=None, lib_dir=None, cc=None, cflags=None,
            cnpc_flags=()):
    """Compile the .cnp file `path` into a shared library and load it (a Module).

    build_dir: where cnpc's outputs and libNAME.so go (default: a new temporary directory).
    cc, cflags: the C compiler (default $CC or cc) and its flags (default -O2 -fopenmp).
    cnpc_flags: extra cnpc options (-I DIR for imports, ...)."""
    cnpc, include_dir, lib_dir = _tool_paths(cnpc, include_dir, lib_dir)
    build_dir = build_dir or tempfile.mkdtemp(prefix="cnp-")
    os.makedirs(build_dir, exist_ok=True)
    stem = os.path.splitext(os.path.basename(path))[0]
    base = os.path.join(build_dir, stem)
    _run([cnpc, "--emit=header,c,manifest,fortran", "-o", base] + list(cnpc_flags) + [path])
    cc = cc or os.environ.get("CC") or "cc"
    flags = shlex.split(cflags) if isinstance(cflags, str) else list(cflags or ["-O2", "-fopenmp"])
    so = os.path.join(build_dir, "lib%s.so" % stem)
    _run([cc, "-shared", "-fPIC", "-std=c11"] + flags + ["-I", include_dir, "-I", build_dir, base + ".c",
                                                        base + "_cnp_layout.c", "-o", so, "-L", lib_dir,
                                                        "-lcnp", "-Wl,-rpath," + lib_dir, "-lm"])
    return load(so, base + ".json")


def load(library, manifest):
    """Load a pipeline library built from cnpc's outputs (NAME.c + NAME_cnp_layout.c) with
    the manifest NAME.json that describes it."""
    with open(manifest) as f:
        return Module(ctypes.CDLL(os.path.abspath(library)), json.load(f))


class Module:
    """A loaded pipeline library: setup(**config) creates Pipelines."""

    def __init__(self, lib, manifest):
        self.lib = lib
        self.manifest = manifest
        self.name = name = manifest["pipeline"]
        decls = manifest["declarations"]
        self.decls = {d["name"]: d for d in decls if d.get("name")}
        self.dims = [d["name"] for d in decls if d["kind"] == "dim"]
        self.fields = {d["name"]: d for d in decls if d["kind"] == "field"}
        self.scalars = [n for n, d in self.fields.items() if d.get("scalar")]      # `scalar S : T;`
        self.histories = [n for n, d in self.fields.items() if d.get("history_of")]  # `history H = S[K];`
        self.snapshots = {d["name"]: d for d in decls if d["kind"] == "snapshot"}
        self.setup_params = {d["name"]: d for d in decls if d["kind"] == "param" and d["setup"]}
        self.step_params = [self.decls[n] for n in manifest["api"]["step_params"]]
        n_streams = sum(1 for d in decls if d["kind"] == "stream")
        cfg_fields = [("backend", ctypes.c_int), ("strict", ctypes.c_int), ("mpi_fcomm", ctypes.c_int),
                      ("cuda_streams", ctypes.c_void_p * (n_streams + 1))]
        self.config_keys = []
        for d in decls:
            if d["kind"] == "dim":
                cfg_fields.append((d["name"], ctypes.c_int64))
            elif d["kind"] == "param" and d["setup"]:
                cfg_fields.append((d["name"], API_TYPES[d["type"]]))
            elif d["kind"] == "mirror":
                cfg_fields.append((d["name"] + "_host", ctypes.c_void_p))
            else:
                continue
            self.config_keys.append(cfg_fields[-1][0])
        self.Config = type(name + "_config", (ctypes.Structure,), {"_fields_": cfg_fields})

        def fn(sym, restype, *argtypes):
            f = getattr(lib, name + "_" + sym)
            f.restype = restype
            f.argtypes = list(argtypes)
            return f

        vp, cp = ctypes.c_void_p, ctypes.c_char_p
        self._setup = fn("setup", ctypes.c_int, ctypes.POINTER(vp), ctypes.POINTER(self.Config), cp, ctypes.c_size_t)
        self._step = fn("step", ctypes.c_int, vp, *[API_TYPES[d["type"]] for d in self.step_params])
        self._sync = fn("sync", ctypes.c_int, vp)
        self._field = fn("field", CnpArray, vp, cp)
        self._extent = fn("extent", ctypes.c_int64, vp, cp)
        self._set_extent = fn("set_extent", ctypes.c_int, vp, cp, ctypes.c_int64)
        self._snapshot = fn("snapshot", ctypes.c_int, vp, cp, ctypes.POINTER(CnpArray))
        self._stats = fn("stats_get", None, vp, ctypes.POINTER(Stats))
        self._error = fn("error", cp, vp)
        self._backend = fn("backend", ctypes.c_int, vp)
        self._teardown = fn("teardown", None, vp)
        self._layout = fn("cnp_layout", ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t,
                          ctypes.POINTER(ctypes.c_size_t))
        lib.cnp_array_wrap.restype = ctypes.c_int
        lib.cnp_array_wrap.argtypes = [ctypes.POINTER(CnpArray), vp, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                       ctypes.c_int, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int64)]
        lib.cnp_array_copy.restype = ctypes.c_int
        lib.cnp_array_copy.argtypes = [ctypes.POINTER(CnpArray), ctypes.POINTER(CnpArray), vp]
        lib.cnp_status_name.restype = cp
        lib.cnp_status_name.argtypes = [ctypes.c_int]
        lib.cnp_last_error.restype = cp
        lib.cnp_last_error.argtypes = []
        for st in range(0, -64, -1):
            s = lib.cnp_status_name(st).decode()
            if s.startswith("CNP_") and s not in _status_names.values():
                _status_names[st] = s
        self.check_layout()

    def status_name(self, st):
        return self.lib.cnp_status_name(int(st)).decode()

    def check_layout(self):
        """Compare the ctypes NAME_config, NAME_stats and cnp_array with the C compiler's
        (NAME_cnp_layout): CnpError(CNP_EABI) on a difference."""
        names = [f[0] for f in self.Config._fields_]
        off = (ctypes.c_size_t * len(names))()
        sizes = (ctypes.c_size_t * 2)()
        size = self._layout(off, len(names), sizes)
        problems = []
        if size != ctypes.sizeof(self.Config):
            problems.append("%s_config has %d bytes in C, %d in Python" % (self.name, size, ctypes.sizeof(self.Config)))
        for k, n in enumerate(names):
            if off[k] != getattr(self.Config, n).offset:
                problems.append("%s at byte %d in C, %d in Python" % (n, off[k], getattr(self.Config, n).offset))
        if sizes[0] != ctypes.sizeof(Stats) or sizes[1] != ctypes.sizeof(CnpArray):
            problems.append("%s_stats or cnp_array differ in size" % self.name)
        if problems:
            raise CnpError(CNP_EABI, "%s: the library and its manifest do not match (%s): regenerate both"
                           % (self.name, "; ".join(problems)), "CNP_EABI")

    def setup(self, backend="host", strict=False, **config):
        """Create a pipeline: config holds the dims (capacities) and setup params by name,
        and NAME_host for a mirror (a NumPy array, kept alive by the pipeline)."""
        return Pipeline(self, backend=backend, strict=strict, **config)


class Pipeline:
    """One pipeline (its C handle). Use as a context manager, or call close()."""

    def __init__(self, module, backend="host", strict=False, **config):
        self.module = m = module
        self._h = ctypes.c_void_p()
        cfg = m.Config()
        cfg.backend = BACKENDS[backend] if isinstance(backend, str) else int(backend)
        cfg.strict = int(bool(strict))
        self._keep = []
        for k, v in config.items():
            if k not in m.config_keys:
                raise TypeError("%s.setup: unknown config %r (dims and setup params: %s)"
                                % (m.name, k, ", ".join(m.config_keys)))
            t = dict(m.Config._fields_)[k]
            if t in (Complex64, Complex128):
                v = complex(v)
                v = t(v.real, v.imag)
            elif t is ctypes.c_void_p and isinstance(v, np.ndarray):
                self._keep.append(v)
                v = v.ctypes.data
            setattr(cfg, k, v)
        self.config = {k: getattr(cfg, k) for k in m.config_keys}
        err = ctypes.create_string_buffer(1024)
        st = m._setup(ctypes.byref(self._h), ctypes.byref(cfg), err, len(err))
        if st != CNP_OK:
            self._h = ctypes.c_void_p()
            raise CnpError(st, err.value.decode(errors="replace"), m.status_name(st))
        self._last_step = {}

    # -- lifetime
    def close(self):
        """NAME_teardown (arrays handed out before must not be used after it)."""
        if self._h:
            self.module._teardown(self._h)
            self._h = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _handle(self):
        if not self._h:
            raise CnpError(-8, "%s: the pipeline was closed" % self.module.name, "CNP_ESTATE")
        return self._h

    def _check(self, st, what):
        if st != CNP_OK:
            msg = (self.module._error(self._h) or b"").decode(errors="replace")
            if not msg:
                msg = "%s: %s" % (what, (self.module.lib.cnp_last_error() or b"").decode(errors="replace"))
            raise CnpError(st, msg, self.module.status_name(st))

    # -- the C API
    def step(self, *args, **kwargs):
        """NAME_step with the per-step params, by position or by name."""
        m = self.module
        names = [d["name"] for d in m.step_params]
        if len(args) > len(names):
            raise TypeError("%s.step takes %d params (%s)" % (m.name, len(names), ", ".join(names)))
        vals = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names or k in vals:
                raise TypeError("%s.step: unexpected or repeated param %r" % (m.name, k))
            vals[k] = v
        missing = [n for n in names if n not in vals]
        if missing:
            raise TypeError("%s.step: missing params %s" % (m.name, ", ".join(missing)))
        cargs = []
        for d in m.step_params:
            t = API_TYPES[d["type"]]
            v = vals[d["name"]]
            if t in (Complex64, Complex128):
                v = complex(v)
                v = t(v.real, v.imag)
            cargs.append(v)
        self._check(m._step(self._handle(), *cargs), m.name + "_step")
        self._last_step = vals

    def sync(self):
        self._check(self.module._sync(self._handle()), self.module.name + "_sync")

    @property
    def backend(self):
        """The backend in use: "host" or "cuda"."""
        return BACKEND_NAMES.get(self.module._backend(self._handle()), "?")

    def stats(self):
        """NAME_stats as a dict."""
        s = Stats()
        self.module._stats(self._handle(), ctypes.byref(s))
        return {f[0]: int(getattr(s, f[0])) for f in Stats._fields_}

    def error(self):
        """Where the last failing step failed ("" if none)."""
        return (self.module._error(self._handle()) or b"").decode(errors="replace")

    def extent(self, dim):
        n = self.module._extent(self._handle(), dim.encode())
        if n < 0:
            raise CnpError(CNP_EINVAL, "%s: no dim %r" % (self.module.name, dim), "CNP_EINVAL")
        return int(n)

    def set_extent(self, dim, n):
        self._check(self.module._set_extent(self._handle(), dim.encode(), int(n)), self.module.name + "_set_extent")

    @property
    def scalars(self):
        """The pipeline's scalars: the setup params and dim capacities it was set up with,
        the dims' current (live) extents as "extent:N", and the last step's params."""
        out = dict(self.config)
        for k, v in out.items():
            if isinstance(v, (Complex64, Complex128)):
                out[k] = complex(v.re, v.im)
        for d in self.module.dims:
            out["extent:" + d] = self.extent(d)
        out.update(self._last_step)
        return out

    def raw_field(self, name):
        """The C view (cnp_array) of a field."""
        a = self.module._field(self._handle(), name.encode())
        if not a.data:
            raise CnpError(CNP_EINVAL, "%s: no field %r" % (self.module.name, name), "CNP_EINVAL")
        return a

    def field(self, name):
        """A field as a NumPy array on its memory (host backend; no copy; live extent, C
        order as in the .cnp program: v : f64[3, N] has shape (3, N)), or a DeviceArray on
        the CUDA backend. Valid until the next step (take it again after each step)."""
        a = self.raw_field(name)
        if a.backend != 0:
            return DeviceArray(a, self)
        return numpy_view(a, self)

    def snapshot(self, name):
        """The latest host copy of a snapshot (waits for it) as a NumPy array, no copy."""
        a = CnpArray()
        self._check(self.module._snapshot(self._handle(), name.encode(), ctypes.byref(a)),
                    self.module.name + "_snapshot")
        return numpy_view(a, self)

    # -- scalars and histories (the header's static inline NAME_scalar / NAME_history)
    def _host_copy(self, a, what):
        """A NumPy copy of the 1-D cnp_array a (host or device), through cnp_array_copy."""
        n = int(a.shape[0])
        out = np.empty(n, dtype=DTYPES[a.dtype])
        h = CnpArray()
        shape = ctypes.c_int64(n)
        lib = self.module.lib
        st = lib.cnp_array_wrap(ctypes.byref(h), out.ctypes.data, 0, 0, a.dtype, 1, ctypes.byref(shape), None)
        if st == CNP_OK:
            st = lib.cnp_array_copy(ctypes.byref(h), ctypes.byref(a), None)
        if st != CNP_OK:
            raise CnpError(st, "%s: copying %s to the host" % (self.module.name, what), self.module.status_name(st))
        return out

    def _view1(self, name, what):
        a = self.module._field(self._handle(), name.encode())
        if not a.data or a.ndim != 1:
            raise CnpError(CNP_EINVAL, "%s: no %s %r" % (self.module.name, what, name), "CNP_EINVAL")
        return a

    def scalar(self, name):
        """The value of `scalar name` (NAME_scalar): a NumPy scalar of its dtype, copied (host
        or CUDA backend). Call sync() first. CnpError(CNP_EINVAL) if name is not a scalar."""
        if name not in self.module.scalars:   # a field of one element is not a scalar
            raise CnpError(CNP_EINVAL, "%s: %r is not a scalar" % (self.module.name, name), "CNP_EINVAL")
        a = self._view1(name, "scalar")
        return self._host_copy(a, "scalar " + name)[0]

    def history(self, name, n=None):
        """The values `record name` kept (NAME_history): a new 1-D NumPy array of the latest
        min(n, recorded, K) values, oldest first (the history is a ring of K entries: older
        ones are overwritten). Call sync() first. CnpError(CNP_EINVAL) if name is not a
        history."""
        if name not in self.module.histories:
            raise CnpError(CNP_EINVAL, "%s: %r is not a history" % (self.module.name, name), "CNP_EINVAL")
        h = self._view1(name, "history")
        c = self.module._field(self._handle(), (name + ".count").encode())
        if not c.data:
            raise CnpError(CNP_EINVAL, "%s: %r is not a history" % (self.module.name, name), "CNP_EINVAL")
        count = int(self._host_copy(c, "history " + name + " count")[0])
        ring = self._host_copy(h, "history " + name)
        k = ring.size
        got = min(count, k) if n is None else min(count, k, max(int(n), 0))
        if got == 0:
            return ring[:0].copy()
        first = (count - got) % k
        return np.concatenate([ring[first:first + got], ring[:max(0, got - (k - first))]])
