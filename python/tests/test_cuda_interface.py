# __cuda_array_interface__ as cnp.cuda_array_interface builds it for a device cnp_array (no
# GPU needed: the dict is checked on made-up views), and DeviceArray around it.
import numpy as np

import cnp
from cnp._core import CnpArray


def view(dtype, shape, strides, data=0x7F0000001000, backend=1):
    a = CnpArray()
    a.data = data
    a.dtype = dtype
    a.ndim = len(shape)
    for k, (n, s) in enumerate(zip(shape, strides)):
        a.shape[k] = n
        a.strides[k] = s
    a.backend = backend
    return a


def test_contiguous():
    d = cnp.cuda_array_interface(view(6, (3, 100), (800, 8)))
    assert d["version"] == 3 and d["shape"] == (3, 100) and d["typestr"] == "<f8"
    assert d["data"] == (0x7F0000001000, False) and d["strides"] is None and d["stream"] is None


def test_strided_live_extent():
    # v : f64[3, N] with capacity 128 and 100 live rows: strides stay the capacity's
    d = cnp.cuda_array_interface(view(6, (3, 100), (1024, 8)))
    assert d["strides"] == (1024, 8)


def test_types():
    for code, ts in [(0, "|b1"), (1, "<i4"), (2, "<i8"), (3, "<u8"), (4, "<f2"), (5, "<f4"), (7, "<c8"), (8, "<c16")]:
        n = np.dtype(ts).itemsize
        assert cnp.cuda_array_interface(view(code, (5,), (n,)))["typestr"] == ts


def test_device_array():
    a = cnp.DeviceArray(view(5, (4, 8), (32, 4)), owner=None)
    assert a.shape == (4, 8) and a.dtype == np.float32
    assert a.__cuda_array_interface__["data"][0] == 0x7F0000001000
