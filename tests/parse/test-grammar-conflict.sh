#!/bin/sh
# The build relies on lemon failing on a grammar conflict: add an ambiguous rule to a copy
# of compiler/parser.y and check that lemon exits non-zero (and accepts the real grammar).
#   usage: test-grammar-conflict.sh LEMON compiler/parser.y WORKDIR
set -u
lemon=$1 grammar=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 2
cp "$grammar" "$work/ok.y"
"$lemon" -q -d"$work" "$work/ok.y" || { echo "FAIL: lemon rejects the real grammar"; exit 1; }
cp "$grammar" "$work/bad.y"
echo 'item ::= DIM IDENT SEMI.' >> "$work/bad.y"   # same as the dim rule: reduce/reduce conflict
if "$lemon" -q -d"$work" "$work/bad.y" >"$work/log" 2>&1; then
  echo "FAIL: lemon accepted a conflicting grammar"; exit 1
fi
grep -q -i conflict "$work/log" || { echo "FAIL: no conflict reported:"; cat "$work/log"; exit 1; }
echo "ok: lemon fails on a conflict ($(grep -i -c conflict "$work/log") line(s))"
