#!/usr/bin/env bash
# run.sh CNPC CASE_DIR WORK_DIR -- golden test of one case: cnpc on CASE_DIR/input.cnp (run
# from CASE_DIR, so paths in the output are "input.cnp") must reproduce CASE_DIR/expected/*
# byte for byte. The outputs are named input.* (-o), whatever the case's pipeline is called.
# With CNP_UPDATE_GOLDEN=1 the expected files are rewritten instead
# (scripts/update-golden does that for every case).
set -euo pipefail
cnpc=$1 case=$2 work=$3
rm -rf "$work"; mkdir -p "$work"
(cd "$case" && "$cnpc" --emit=header,c,cuda,dot -o "$work/input" input.cnp)
if [ "${CNP_UPDATE_GOLDEN:-0}" = 1 ]; then
  rm -rf "$case/expected"; mkdir -p "$case/expected"
  cp "$work"/* "$case/expected/"
  echo "updated $case/expected"
  exit 0
fi
status=0
for f in "$case"/expected/*; do
  n=$(basename "$f")
  if ! diff -u "$f" "$work/$n"; then
    echo "golden mismatch: $n (CNP_UPDATE_GOLDEN=1 or scripts/update-golden to accept)" >&2
    status=1
  fi
done
for f in "$work"/*; do
  [ -e "$case/expected/$(basename "$f")" ] || { echo "unexpected output $(basename "$f")" >&2; status=1; }
done
exit $status
