#!/bin/sh
# Runs `cnpc --dump-ast` on a valid program and compares stdout with FILE.ast; cnpc must
# exit 0 and print no diagnostics. CNP_UPDATE_GOLDEN=1 rewrites FILE.ast.
#   usage: run-parse.sh CNPC FILE.cnp
set -u
cnpc=$1
cd "$(dirname "$2")" || exit 2
name=$(basename "$2" .cnp)
out=$("$cnpc" --dump-ast "$name.cnp" 2>"/tmp/cnp-parse-err.$$")
rc=$?
err=$(cat "/tmp/cnp-parse-err.$$"); rm -f "/tmp/cnp-parse-err.$$"
if [ "${CNP_UPDATE_GOLDEN:-}" = 1 ] && [ $rc -eq 0 ]; then
  printf '%s\n' "$out" > "$name.ast"
  exit 0
fi
status=0
[ $rc -eq 0 ] || { echo "$name.cnp: cnpc exited with $rc"; status=1; }
[ -z "$err" ] || { echo "$name.cnp: unexpected diagnostics:"; echo "$err"; status=1; }
if [ "$(cat "$name.ast")" != "$out" ]; then
  echo "$name.cnp: --dump-ast differs from $name.ast:"
  printf '%s\n' "$out" | diff -u "$name.ast" - | tail -n +3
  status=1
fi
exit $status
