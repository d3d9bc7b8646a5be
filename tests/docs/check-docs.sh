#!/bin/sh
# Extracts every fenced ```cnp block of a Markdown file and runs `cnpc --check` on each
# (imports resolve through -I tests/docs). Fails if any block fails or none is found.
#   usage: check-docs.sh CNPC DOC.md WORKDIR
set -u
cnpc=$1 doc=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" || exit 2
awk -v dir="$work" '
  /^```cnp[ \t]*$/ { n++; f = sprintf("%s/example%02d.cnp", dir, n); inb = 1; next }
  /^```/           { inb = 0; next }
  inb              { print > f }
' "$doc"
count=0 fail=0
for f in "$work"/example*.cnp; do
  [ -e "$f" ] || break
  count=$((count + 1))
  if ! "$cnpc" --check -I "$here" "$f"; then
    echo "FAIL: $f (block $count of $doc)"
    fail=$((fail + 1))
  fi
done
echo "$doc: $count examples, $fail failed"
[ "$count" -gt 0 ] && [ "$fail" -eq 0 ]
