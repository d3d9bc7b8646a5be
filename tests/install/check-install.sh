#!/usr/bin/env bash
# Installs the build tree into a temporary prefix, then builds and runs examples/make (plain
# Makefile + pkg-config + cnp.mk) and examples/cmake (find_package(cnp) + cnp_add_pipeline)
# against it, as a user would: without LD_LIBRARY_PATH (the programs find libcnp.so through
# their rpath), threaded (OMP_NUM_THREADS=2 must give 2 OpenMP threads, and the generated
# unit's object must call the OpenMP runtime), and carrying no MPI or UCX, also when linked
# against the static libcnp.a; then an MPI pipeline through cnp-mpi.pc and through
# cnp_add_pipeline (cnp::cnp_mpi), run on 2 ranks. It checks incremental rebuilds: nothing rebuilds when nothing changed; touching
# an imported .cnp reruns cnpc only; changing it rebuilds exactly what depends on the change.
#   check-install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1; src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fail() { echo "check-install: FAIL: $*" >&2; exit 1; }
mt() { stat -c %Y.%y "$1"; }                     # mtime, for "was it rebuilt?"

cmake --install "$build" --prefix "$prefix" >/dev/null
for f in bin/cnpc include/cnp/cnp.h lib/libcnp.a lib/libcnp.so lib/pkgconfig/cnp.pc \
         lib/cmake/cnp/cnpConfig.cmake share/cnp/cnp.mk; do
  [ -e "$prefix/$f" ] || fail "not installed: $f"
done
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
unset LD_LIBRARY_PATH                            # the programs must run without it
"$prefix/bin/cnpc" --version >/dev/null || fail "installed cnpc does not run"

# check_run ROUTE PROGRAM OBJECT: PROGRAM runs, right, on 2 OpenMP threads; OBJECT (the
# generated unit's) calls the OpenMP runtime, so its loops really are parallel.
check_run() {
  local out
  out=$(OMP_NUM_THREADS=2 "$2" 2>&1) || fail "$1: $2 failed: $out"
  grep -q ', 0 wrong' <<<"$out" || fail "$1: wrong result: $out"
  grep -q '^scale: OpenMP, 2 threads$' <<<"$out" || fail "$1: not threaded: $out"
  nm -u "$3" | grep -E ' (GOMP_|__kmpc_)' >/dev/null ||
    fail "$1: $3 (the generated unit) was compiled without OpenMP"
  echo "check-install: $1: $(tail -1 <<<"$out")"
}

# check_no_mpi ROUTE PROGRAM: a program without MPI carries none: no MPI or UCX symbol
# (defined or undefined) and no MPI/UCX library among its NEEDED entries.
check_no_mpi() {
  local syms needed
  syms=$(nm "$2" | grep -E ' (MPI_|PMPI_|MPIR_|MPIX_|ucp_|ucs_|uct_)' | head -3) || true
  [ -z "$syms" ] || fail "$1: $2 has MPI/UCX symbols: $syms"
  needed=$(readelf -d "$2" | grep NEEDED | grep -E 'mpi|ucp|ucs|uct|hwloc') || true
  [ -z "$needed" ] || fail "$1: $2 needs MPI/UCX libraries: $needed"
}

check_no_mpi libcnp.a "$prefix/lib/libcnp.a"
check_no_mpi libcnp.so "$(readlink -f "$prefix/lib/libcnp.so")"

# ---- plain Makefile ----------------------------------------------------------------------
cp -r "$src/examples/make" "$tmp/make"
cd "$tmp/make"
make -s >/dev/null || fail "make: first build"
check_run make ./app scale.o
# libcnp.so is found through the rpath cnp.pc gives (RUNPATH), in the install prefix
readelf -d app | grep -E '\((RUNPATH|RPATH)\).*'"$prefix" >/dev/null || fail "make: app has no rpath to $prefix: $(readelf -d app | grep -E 'RPATH|RUNPATH')"
so=$(ldd app | awk '$1 ~ /^libcnp\.so/ {print $3}')
[ -n "$so" ] && [ "$(readlink -f "$so")" = "$(readlink -f "$prefix/lib/$(basename "$so")")" ] ||
  fail "make: app does not load libcnp.so from $prefix/lib: $(ldd app | grep libcnp)"
# (make -q cannot judge this: the outputs of the empty-recipe rule are older than the
# stamp by design, since cnpc leaves unchanged files alone. Mtimes tell what really ran.)
files="scale.c scale.h scale.o main.o app scale.cnp.stamp"
declare -A before
sleep 1.1
for f in $files; do before[$f]=$(mt $f); done
make -s >/dev/null
for f in $files; do
  [ "$(mt $f)" = "${before[$f]}" ] || fail "make: $f rebuilt although nothing changed"
done
touch lib/common.cnp
make -s >/dev/null
[ "$(mt scale.cnp.stamp)" != "${before[scale.cnp.stamp]}" ] || fail "make: touching an import did not rerun cnpc"
for f in scale.c scale.h scale.o main.o app; do
  [ "$(mt $f)" = "${before[$f]}" ] || fail "make: $f rebuilt although its content did not change"
done
for f in $files; do before[$f]=$(mt $f); done
make -s >/dev/null
for f in $files; do
  [ "$(mt $f)" = "${before[$f]}" ] || fail "make: $f rebuilt by a second make after the import was touched"
done
sleep 1.1
for f in scale.c scale.h scale.o main.o app; do before[$f]=$(mt $f); done
cp scale.h "$tmp/scale.h.old"
echo "field y : f64[N];" >>lib/common.cnp       # a real change: one more field
make -s >/dev/null
[ "$(mt scale.c)" != "${before[scale.c]}" ] || fail "make: scale.c not regenerated after the import changed"
[ "$(mt scale.o)" != "${before[scale.o]}" ] || fail "make: scale.o not rebuilt"
[ "$(mt app)" != "${before[app]}" ] || fail "make: app not relinked"
if cmp -s scale.h "$tmp/scale.h.old"; then
  [ "$(mt main.o)" = "${before[main.o]}" ] || fail "make: main.o rebuilt although scale.h did not change"
else
  [ "$(mt main.o)" != "${before[main.o]}" ] || fail "make: main.o not rebuilt after scale.h changed"
fi
check_run make ./app scale.o >/dev/null
check_no_mpi make ./app
# the same objects against the static libcnp.a: still no MPI (libcnp has none; MPI is in
# libcnp_mpi), and the program runs
# What a static libcnp needs (Libs.private: CUDA, FFTW, -lm ...), without -lcnp itself (that
# would take libcnp.so) or the rpath.
static_libs=$(pkg-config --static --libs cnp | tr ' ' '\n' | grep -v -e '^-lcnp$' -e rpath | tr '\n' ' ')
${CC:-cc} -o app_static main.o scale.o "$prefix/lib/libcnp.a" $(pkg-config --variable=openmp cnp) \
  $static_libs || fail "make: static link against libcnp.a"
check_no_mpi "make (static libcnp.a)" ./app_static
readelf -d app_static | grep NEEDED | grep libcnp >/dev/null && fail "make: app_static needs libcnp.so"
check_run "make (static libcnp.a)" ./app_static scale.o
echo "check-install: make example ok"

# ---- CMake package -----------------------------------------------------------------------
cp -r "$src/examples/cmake" "$tmp/cmake"
cd "$tmp/cmake"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S . -B b "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null || fail "cmake: configure"
cmake --build b >/dev/null || fail "cmake: build"
genobj=$(find b -name 'scale.c.o' | head -1)
check_run cmake ./b/app "$genobj"
g=b/cnp_scale
sleep 1.1
declare -A cb
objs=$(find b -name '*.o' | sort)
for f in $g/scale.c $g/scale.h b/app $objs; do cb[$f]=$(mt $f); done
cmake --build b >/dev/null
for f in $g/scale.c b/app $objs; do
  [ "$(mt $f)" = "${cb[$f]}" ] || fail "cmake: $f rebuilt although nothing changed"
done
echo "field y : f64[N];" >>lib/common.cnp
cmake --build b >/dev/null || fail "cmake: rebuild"
[ "$(mt $g/scale.c)" != "${cb[$g/scale.c]}" ] || fail "cmake: scale.c not regenerated after the import changed"
[ "$(mt b/app)" != "${cb[b/app]}" ] || fail "cmake: app not relinked"
check_run cmake ./b/app "$genobj" >/dev/null
check_no_mpi cmake ./b/app                       # cnp::cnp is the static libcnp.a
echo "check-install: cmake example ok"

# ---- MPI pipelines: cnp-mpi.pc and cnp::cnp_mpi -------------------------------------------
if ! grep -q 'CNP_HAVE_MPI=1' "$prefix/lib/pkgconfig/cnp-mpi.pc" || ! command -v mpiexec >/dev/null; then
  echo "check-install: MPI routes skipped (cnp built without MPI, or no mpiexec)"
  exit 0
fi
# check_mpi_run ROUTE PROGRAM: 2 ranks, each reports; the program links libcnp_mpi and MPI.
check_mpi_run() {
  local out
  out=$(OMP_NUM_THREADS=1 mpiexec -n 2 "$2" 1000 5 2>&1) || fail "$1: mpiexec -n 2 $2 failed: $out"
  grep -q '^rank 0: ' <<<"$out" && grep -q '^rank 1: ' <<<"$out" || fail "$1: $2 output: $out"
  nm "$2" | grep ' MPI_Init' >/dev/null || fail "$1: $2 has no MPI"
  echo "check-install: $1: MPI pipeline ran on 2 ranks"
}
mkdir "$tmp/mpimake"
cp "$src/examples/mpi/halo.cnp" "$src/examples/mpi/halo_demo.c" "$tmp/mpimake/"
cd "$tmp/mpimake"
cat >Makefile <<'MK'
include $(shell pkg-config --variable=prefix cnp)/share/cnp/cnp.mk
CFLAGS = -O2 -std=c11 -Wall -Wextra -Werror $(CNP_CFLAGS) $(CNP_MPI_CFLAGS)
halo: halo_demo.o halo.o ; $(CC) -o $@ $^ $(CNP_MPI_LIBS)
halo_demo.o: halo.h
MK
make -s >/dev/null || fail "make (MPI): build"
readelf -d halo | grep NEEDED | grep libcnp_mpi >/dev/null || fail "make (MPI): halo does not link libcnp_mpi"
check_mpi_run "make (MPI)" ./halo

mkdir "$tmp/mpicmake"
cp "$src/examples/mpi/halo.cnp" "$src/examples/mpi/halo_demo.c" "$tmp/mpicmake/"
cd "$tmp/mpicmake"
cat >CMakeLists.txt <<'CM'
cmake_minimum_required(VERSION 3.20)
project(halo_app C)
find_package(cnp REQUIRED)
find_package(MPI REQUIRED COMPONENTS C)
add_executable(halo halo_demo.c)
cnp_add_pipeline(halo halo.cnp)          # uses MPI: links cnp::cnp_mpi by itself
target_compile_options(halo PRIVATE -Wall -Wextra -Werror)
target_link_libraries(halo PRIVATE MPI::MPI_C)
CM
cmake -S . -B b "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null || fail "cmake (MPI): configure"
cmake --build b >/dev/null || fail "cmake (MPI): build"
check_mpi_run "cmake (MPI)" ./b/halo
nm ./b/halo | grep ' T cnp_comm_create' >/dev/null || fail "cmake (MPI): halo lacks libcnp_mpi"
echo "check-install: MPI routes ok"
