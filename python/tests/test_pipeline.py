# The Python interface on shapes.cnp (docs/interfaces.md): config by keyword, step params by
# position and name, NumPy views without copies (the same addresses and strides as the C
# views, before and after a compaction), element types, snapshots, scalars, stats, errors.
import ctypes

import numpy as np
import pytest

import cnp


def make(shapes, **kw):
    cfg = dict(N=10, n=5, z0=1j, h0=1.5)
    cfg.update(kw)
    return shapes.setup(**cfg)


def test_views_share_memory(shapes):
    with make(shapes) as p:
        a = p.field("a")
        assert a.shape == (2, 3, 10) and a.dtype == np.float64
        raw = p.raw_field("a")
        assert a.ctypes.data == raw.data                       # no copy
        assert a.strides == tuple(raw.strides[k] for k in range(3))
        c, j, i = np.meshgrid(np.arange(2), np.arange(3), np.arange(10), indexing="ij")
        a[...] = 100.0 * c + 10.0 * j + i - 2.0
        for cc in range(2):                                    # element by element, by address
            for jj in range(3):
                for ii in range(10):
                    addr = raw.data + cc * raw.strides[0] + jj * raw.strides[1] + ii * raw.strides[2]
                    assert ctypes.c_double.from_address(addr).value == a[cc, jj, ii]
        b = p.field("b")
        assert b.shape == (4, 5) and b.dtype == np.int32
        b[...] = np.arange(20, dtype=np.int32).reshape(4, 5)
        p.field("E")[...] = 1.0
        e = p.field("e")
        assert e.dtype == np.complex128
        e[...] = np.arange(1, 11)
        with pytest.raises(cnp.CnpError) as err:
            p.snapshot("sa")
        assert err.value.status == -8 and err.value.name == "CNP_ESTATE"

        p.step(2.0, p=0.5)
        p.sync()
        live = p.extent("N")
        assert live == 7
        a2 = p.field("a")
        assert a2.shape == (2, 3, live)
        assert a2.strides[2] == 8 and a2.strides[1] >= 8 * live  # strided: the capacity's rows
        want = (100.0 * c + 10.0 * j + i - 2.0)[:, :, 3:]
        want[1, 2] = want[0, 1] * 2.0 + 0.5
        assert np.array_equal(a2, want)
        assert np.array_equal(p.field("E"), np.full(live, 2.0))
        assert np.array_equal(p.field("e"), 1j * np.arange(4, 11))
        assert p.field("keep").dtype == np.bool_
        assert np.array_equal(p.field("keep"), np.arange(live) >= 3)
        hf = p.field("hf")
        assert hf.dtype == np.float16 and np.all(hf == 1.5)
        b2 = p.field("b")
        assert np.array_equal(b2[3], b2[0] + 1)
        sa = p.snapshot("sa")
        assert sa.shape == (2, 3, live) and np.array_equal(sa, a2)
        st = p.stats()
        assert st["steps"] == 1 and st["launches"] >= 1
        sc = p.scalars
        assert sc["N"] == 10 and sc["n"] == 5 and sc["z0"] == 1j and sc["extent:N"] == live
        assert sc["s"] == 2.0 and sc["p"] == 0.5
        assert p.backend == "host"


def test_errors(shapes):
    with pytest.raises(cnp.CnpError) as err:
        make(shapes, N=0)
    assert err.value.status == -1 and err.value.name == "CNP_EINVAL" and "N" in err.value.message
    with pytest.raises(TypeError):
        make(shapes, nope=1)
    with make(shapes) as p:
        with pytest.raises(cnp.CnpError) as err:
            p.set_extent("N", 11)
        assert err.value.name == "CNP_ERANGE"
        with pytest.raises(cnp.CnpError):
            p.extent("nope")
        with pytest.raises(cnp.CnpError):
            p.field("nope")
        with pytest.raises(TypeError):
            p.step(1.0)                                        # p missing
    with pytest.raises(cnp.CnpError) as err:
        p.sync()                                               # closed
    assert err.value.name == "CNP_ESTATE"


def test_view_keeps_pipeline_alive(shapes):
    p = make(shapes)
    x = p.field("E")
    del p                                                      # the array holds the pipeline
    x[...] = 3.0
    assert x.sum() == 30.0


def test_layout_mismatch_is_refused(shapes):
    m = shapes
    good = m.Config
    try:
        m.Config = type("bad_config", (ctypes.Structure,), {"_fields_": good._fields_ + [("extra", ctypes.c_int64)]})
        with pytest.raises(cnp.CnpError) as err:
            m.check_layout()
        assert err.value.name == "CNP_EABI"
    finally:
        m.Config = good
    m.check_layout()
