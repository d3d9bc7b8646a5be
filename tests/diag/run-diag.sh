#!/bin/sh
# Runs cnpc --check on one invalid program and compares its diagnostics with the
# expectations at the end of the file:
#   # expect: LINE:COL: error: MESSAGE     -> FILE:LINE:COL: error: MESSAGE
#   #|TEXT                                 -> TEXT (source and caret lines, verbatim)
# A line '# flags: ...' adds cnpc options. cnpc must exit with status 1.
# CNP_UPDATE_DIAG=1 rewrites the expectation block at the end of the file from the actual
# output (review the diff before committing). Cases whose error is at the end of the file
# keep their expectations at the top and are edited by hand (syn_unclosed_brace.cnp).
#   usage: run-diag.sh CNPC FILE.cnp
set -u
cnpc=$1
dir=$(dirname "$2")
name=$(basename "$2")
cd "$dir" || exit 2
flags=$(sed -n 's/^# flags: //p' "$name")
# shellcheck disable=SC2086
actual=$("$cnpc" --check $flags "$name" 2>&1 >/dev/null)
rc=$?
if [ "${CNP_UPDATE_DIAG:-}" = 1 ]; then
  if head -n 1 "$name" | grep -q '^# expect: '; then echo "$name: expectations at the top, edit by hand"; exit 1; fi
  body=$(grep -v -e '^# expect: ' -e '^#|' "$name")
  {
    printf '%s\n' "$body"
    printf '%s\n' "$actual" | sed -e "s|^$name:\([0-9]*:[0-9]*: \)|# expect: \1|" -e t -e 's/^/#|/'
  } > "$name.tmp" && mv "$name.tmp" "$name"
  exit 0
fi
expected=$(sed -n -e "s|^# expect: |$name:|p" -e 's/^#|//p' "$name")
status=0
if [ "$rc" -ne 1 ]; then
  echo "$name: cnpc exited with $rc, expected 1"
  status=1
fi
if [ -z "$expected" ]; then
  echo "$name: no '# expect:' lines"
  status=1
fi
if [ "$expected" != "$actual" ]; then
  echo "$name: diagnostics differ (--- expected, +++ actual):"
  printf '%s\n' "$expected" > "/tmp/cnp-diag-exp.$$"
  printf '%s\n' "$actual" > "/tmp/cnp-diag-act.$$"
  diff -u "/tmp/cnp-diag-exp.$$" "/tmp/cnp-diag-act.$$" | tail -n +3
  rm -f "/tmp/cnp-diag-exp.$$" "/tmp/cnp-diag-act.$$"
  status=1
fi
exit $status
