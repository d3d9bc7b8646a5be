#!/usr/bin/env bash
# The Fortran, C++ and Python interfaces from a fresh install prefix (docs/interfaces.md;
# ctest install.languages): installs the build tree into a temporary prefix, then builds
# examples/fortran and examples/cxx against it with their Makefiles (cnp.mk) and as CMake
# projects (find_package(cnp), cnp_add_pipeline LANGUAGE), runs each and compares its dump
# with the C driver's byte for byte; installs python/ with pip into a venv (system site
# packages: NumPy, pytest) and runs its tests against the installed cnpc and libcnp.
#   lang.sh BUILD_DIR SOURCE_DIR [PYTHON]     (Fortran is skipped without gfortran, Python
#                                               when PYTHON is "-")
set -euo pipefail
build=$1; src=$2; py=${3:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "lang: FAIL: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$prefix" >/dev/null
[ -e "$prefix/include/cnp/cnp.hpp" ] || fail "not installed: include/cnp/cnp.hpp"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
unset CNPC CNP_INCLUDE_DIR CNP_LIB_DIR
mkdir -p "$tmp/ex"
cp -r "$src/examples/pic" "$src/examples/cxx" "$src/examples/fortran" "$tmp/ex/"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
langs=(cxx)
command -v gfortran >/dev/null && langs+=(fortran)
for l in "${langs[@]}"; do
  cd "$tmp/ex/$l"
  make -s check >"$tmp/$l.make.log" 2>&1 || { cat "$tmp/$l.make.log"; fail "$l: make check"; }
  make -s clean >/dev/null
  cmake -S . -B b "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null || fail "$l: cmake configure"
  cmake --build b >"$tmp/$l.cmake.log" 2>&1 || { cat "$tmp/$l.cmake.log"; fail "$l: cmake build"; }
  (cd b && ctest --output-on-failure >/dev/null) || fail "$l: the CMake build's comparison with the C driver"
  echo "lang: $l ok (make and CMake, identical to the C driver)"
done

# Python: pip install into a venv, then the package's tests against the installed cnp.
[ "$py" = "-" ] && exit 0
cp -r "$src/python" "$tmp/python"
"$py" -m venv --system-site-packages "$tmp/venv" || fail "python: venv"
"$tmp/venv/bin/python" -m pip install -q --no-build-isolation --no-index "$tmp/python" >"$tmp/pip.log" 2>&1 ||
  { cat "$tmp/pip.log"; fail "python: pip install"; }
mkdir -p "$tmp/pyrun" && cp -r "$tmp/python/tests" "$tmp/pyrun/tests"
cd "$tmp/pyrun"
where=$("$tmp/venv/bin/python" -c 'import cnp; print(cnp.__file__)')
case $where in "$tmp/venv/"*) ;; *) fail "python: cnp imported from $where, not the venv" ;; esac
make -s -C "$tmp/ex/cxx" pic_dump >/dev/null
CNP_SOURCE_DIR=$src CNP_PIC_DUMP=$tmp/ex/cxx/pic_dump PYTHONDONTWRITEBYTECODE=1 \
  "$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider tests >"$tmp/pytest.log" 2>&1 ||
  { cat "$tmp/pytest.log"; fail "python: pytest"; }
grep -q "skipped" "$tmp/pytest.log" && { cat "$tmp/pytest.log"; fail "python: tests skipped"; }
echo "lang: python ok (pip install, pytest: $(tail -1 "$tmp/pytest.log"))"
