#!/usr/bin/env bash
# golden.sh CNPC SOURCE_DIR WORK_DIR -- the interfaces cnpc writes for shapes.cnp (the Fortran
# module, its layout check, the C++ wrapper) byte for byte against tests/interfaces/golden/
# (ctest interfaces.golden). CNP_UPDATE_GOLDEN=1 rewrites them (scripts/update-golden does).
set -euo pipefail
cnpc=$1; src=$2; work=$3
dir=$src/tests/interfaces
rm -rf "$work"; mkdir -p "$work"
(cd "$dir" && "$cnpc" --emit=fortran,cxx -o "$work/shapes" shapes.cnp)
if [ "${CNP_UPDATE_GOLDEN:-0}" = 1 ]; then
  rm -rf "$dir/golden"; mkdir -p "$dir/golden"
  cp "$work"/* "$dir/golden/"
  echo "updated $dir/golden"
  exit 0
fi
status=0
for f in "$work"/*; do
  n=$(basename "$f")
  diff -u "$dir/golden/$n" "$f" || { echo "golden mismatch: $n (CNP_UPDATE_GOLDEN=1 to accept)" >&2; status=1; }
done
exit $status
