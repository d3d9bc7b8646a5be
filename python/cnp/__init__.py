"""cnp for Python: compile a .cnp pipeline with cnpc into a shared library and drive it.

    import cnp
    pic = cnp.compile("pic.cnp")                    # cnpc, cc -shared, ctypes
    with pic.setup(N=20000, n_cells=64, qm=-1.0) as p:
        x = p.field("x")                            # NumPy view of the field, no copy (host)
        p.step(dt=0.01)
        p.sync()
        rho = p.snapshot("out")
        print(p.extent("N"), p.stats())

Failures raise cnp.CnpError (status, name, message). On the CUDA backend, fields come back as
cnp.DeviceArray objects with __cuda_array_interface__ (CuPy, PyTorch, Numba take them
without a copy). docs/interfaces.md (Python) has the details.
"""

from ._core import (
    CnpError,
    DeviceArray,
    Module,
    Pipeline,
    compile,
    cuda_array_interface,
    load,
    numpy_view,
    status_name,
)

__all__ = [
    "CnpError",
    "DeviceArray",
    "Module",
    "Pipeline",
    "compile",
    "cuda_array_interface",
    "load",
    "numpy_view",
    "status_name",
]
__version__ = "0.1.0"
