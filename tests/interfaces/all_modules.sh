#!/usr/bin/env bash
# Every .cnp of the test suite and the examples through cnpc --emit=header,fortran[,cxx]: the
# Fortran module must compile under gfortran -std=f2008 -Wall -Werror, its layout check (and
# the C++ wrapper, when CXX is given) under -Wall -Wextra -Werror (docs/interfaces.md).
#   all_modules.sh CNPC SOURCE_DIR FC CC [CXX...]
set -euo pipefail
cnpc=$1; src=$2; fc=$3; cc=$4; shift 4
cxx=("$@")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0; bad=0
emit=header,fortran
[ ${#cxx[@]} -gt 0 ] && emit=$emit,cxx
for f in "$src"/tests/e2e/*.cnp "$src"/tests/interfaces/*.cnp "$src"/examples/*/*.cnp; do
  base=$(basename "$f" .cnp)
  d=$tmp/$(basename "$(dirname "$f")")_$base
  mkdir -p "$d"
  inc=()
  [ -d "$(dirname "$f")/lib" ] && inc=(-I "$(dirname "$f")/lib")
  if ! "$cnpc" --emit=$emit -w "${inc[@]}" -o "$d/$base" "$f" 2>"$d/err"; then
    continue                       # not a complete pipeline on its own (an imported file)
  fi
  n=$((n + 1))
  (cd "$d" && "$fc" -std=f2008 -Wall -Werror -fsyntax-only "${base}_cnp.f90") ||
    { echo "FAIL: $f: the Fortran module"; bad=$((bad + 1)); }
  "$cc" -std=c11 -Wall -Wextra -Werror -I "$src/include" -I "$d" -fsyntax-only "$d/${base}_cnp_layout.c" ||
    { echo "FAIL: $f: the layout check"; bad=$((bad + 1)); }
  if [ ${#cxx[@]} -gt 0 ]; then
    printf '#include "%s.hpp"\n' "$base" >"$d/use.cpp"
    for c in "${cxx[@]}"; do
      $c -std=c++17 -Wall -Wextra -Werror -I "$src/include" -I "$d" -fsyntax-only "$d/use.cpp" ||
        { echo "FAIL: $f: the C++ wrapper under $c"; bad=$((bad + 1)); }
    done
  fi
done
echo "all_modules: $n pipelines, $bad failure(s)"
[ "$n" -gt 10 ] && [ "$bad" -eq 0 ]
