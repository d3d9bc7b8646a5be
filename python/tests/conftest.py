# The tests find cnpc, the cnp headers and libcnp through CNPC, CNP_INCLUDE_DIR and
# CNP_LIB_DIR (ctest sets them to the build tree), else pkg-config cnp or cnpc on PATH;
# CNP_SOURCE_DIR is the repository (for examples/pic and tests/interfaces), CNP_PIC_DUMP the
# C driver examples/pic/pic_dump.c built (the bit-for-bit comparison).
import os
import pathlib

import pytest

import cnp

HERE = pathlib.Path(__file__).resolve().parent
SOURCE = pathlib.Path(os.environ.get("CNP_SOURCE_DIR", HERE.parent.parent))


@pytest.fixture(scope="session")
def source_dir():
    return SOURCE


@pytest.fixture(scope="session")
def shapes(tmp_path_factory):
    return cnp.compile(str(SOURCE / "tests/interfaces/shapes.cnp"), build_dir=str(tmp_path_factory.mktemp("shapes")))


@pytest.fixture(scope="session")
def pic(tmp_path_factory):
    return cnp.compile(str(SOURCE / "examples/pic/pic.cnp"), build_dir=str(tmp_path_factory.mktemp("pic")))
