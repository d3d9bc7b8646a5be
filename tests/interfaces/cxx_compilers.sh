#!/usr/bin/env bash
# The C++17 wrapper under each C++ compiler given (ctest interfaces.cxx.compilers): builds
# test_shapes.cpp and examples/cxx/pic_cxx.cpp with -Wall -Wextra -Werror, runs them, and
# compares pic_cxx's dump with the C driver's (PIC_DUMP, the pic_dump program). With NVCC
# (not "-"), a .cu that includes the wrapper and passes a cnp::view to a kernel compiles
# under nvcc -Werror all-warnings (docs/interfaces.md).
#   cxx_compilers.sh CNPC SOURCE_DIR LIBCNP_DIR CC PIC_DUMP NVCC CXX...
set -euo pipefail
cnpc=$1; src=$2; libdir=$3; cc=$4; pic_dump=$5; nvcc=$6; shift 6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$cnpc" --emit=header,c,cxx "$src/tests/interfaces/shapes.cnp"
"$cnpc" --emit=header,c,cxx "$src/examples/pic/pic.cnp"
inc=(-I "$src/include" -I .)
libs=(-L "$libdir" -lcnp -fopenmp -lm -Wl,-rpath,"$libdir")
# A sanitized libcnp (CNP_SANITIZE build) needs its runtime in the programs too:
# CNP_TEST_SANITIZE holds the -fsanitize flags then (and only the build's own C++ compiler
# is given, since gcc's and clang's sanitizer runtimes do not mix).
san=(${CNP_TEST_SANITIZE:-})
"$cc" -std=c11 -O2 -fopenmp "${san[@]}" "${inc[@]}" -c shapes.c pic.c
"$pic_dump" pic_c.bin >/dev/null
for cxx in "$@"; do
  "$cxx" -std=c++17 -O2 -Wall -Wextra -Werror "${san[@]}" "${inc[@]}" "$src/tests/interfaces/test_shapes.cpp" shapes.o \
    -o test_shapes "${libs[@]}"
  ./test_shapes >/dev/null || { echo "FAIL: test_shapes built with $cxx"; exit 1; }
  "$cxx" -std=c++17 -O2 -Wall -Wextra -Werror "${san[@]}" "${inc[@]}" "$src/examples/cxx/pic_cxx.cpp" pic.o -o pic_cxx "${libs[@]}"
  ./pic_cxx pic_cxx.bin >/dev/null
  cmp pic_c.bin pic_cxx.bin || { echo "FAIL: pic_cxx built with $cxx differs from the C driver"; exit 1; }
  echo "cxx_compilers: $cxx ok"
done
if [ "$nvcc" != "-" ]; then
  cat >k.cu <<'CU'
#include "pic.hpp"
#include "shapes.hpp"
__global__ void scale(cnp::view<double, 2> v, double a) {
  std::int64_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < v.extent(1)) v(0, i) *= a;
}
__global__ void touch(cnp::view<double, 3> a) {
  if (threadIdx.x == 0 && a.size() > 0) a(1, 2, 0) = a.slice(0).slice(1)[0];
}
void launch(pic_cnp::pipeline &p, shapes_cnp::pipeline &q) {
  scale<<<1, 32>>>(p.field_v(), 2.0);
  touch<<<1, 1>>>(q.field_a());
}
CU
  "$nvcc" -std=c++17 -Werror all-warnings -Xcompiler=-Wall,-Wextra,-Werror "${inc[@]}" -c k.cu -o k.o
  echo "cxx_compilers: nvcc ok"
fi
