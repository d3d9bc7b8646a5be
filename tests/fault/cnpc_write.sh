#!/usr/bin/env bash
# cnpc_write.sh CNPC SRCDIR WORKDIR -- cnpc never leaves a partial or missing output file:
# it writes a temporary in the output directory and renames it over the target. Into a full
# disk (simulated with RLIMIT_FSIZE) or a read-only directory it exits 1 with a message, the
# previous outputs stay byte-identical and no temporary is left behind.
set -euo pipefail
cnpc=$1 src=$2 work=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"; mkdir -p "$work/out"
cp "$src/examples/pic/pic.cnp" "$work/pic.cnp"
"$cnpc" --emit=header,c,dot --out-dir "$work/out" "$work/pic.cnp"
cp -r "$work/out" "$work/orig"
# a changed program, so every output would be rewritten
sed -i 's/^param  dt      : f64;/param  dt : f64; param dt2 : f64;/' "$work/pic.cnp"
grep -q 'param dt2' "$work/pic.cnp" || fail "test edit did not apply"

check_intact() {  # $1: what was simulated
  for f in pic.h pic.c pic.dot; do
    [ -f "$work/out/$f" ] || fail "$1: $f missing"
  done
  cmp -s "$work/out/pic.c" "$work/orig/pic.c" || fail "$1: pic.c changed"
  local left
  left=$(ls "$work/out")
  if grep -q '\.tmp\.' <<<"$left"; then fail "$1: temporary left: $left"; fi
}

# full disk: writes beyond 8 KiB fail with EFBIG (SIGXFSZ ignored, as write(2) then fails)
set +e
msg=$( (trap '' XFSZ; ulimit -f 8; exec "$cnpc" --emit=header,c,dot --out-dir "$work/out" "$work/pic.cnp") 2>&1)
rc=$?
set -e
[ "$rc" = 1 ] || fail "full disk: exit $rc, expected 1 ($msg)"
grep -q "error writing '.*pic.c': File too large" <<<"$msg" || fail "full disk: message: $msg"
check_intact "full disk"

# read-only directory (as an unprivileged user when running as root, who ignores modes).
# That user must reach cnpc, the input and the output directory, but the build tree may lie
# under a directory it cannot traverse (a clone under a mode-700 `mktemp -d`): so this part
# runs on copies in a fresh world-traversable directory under /tmp, and is skipped, with the
# reason, only when even that is out of the user's reach.
d=$work                        # where the read-only run happens: $d/out, $d/pic.cnp
run=("$cnpc")
if [ "$(id -u)" = 0 ]; then
  run=()
  if ! command -v setpriv >/dev/null; then
    echo "read-only directory: skipped (root without setpriv)"
  else
    d=$(mktemp -d /tmp/cnpc_write.XXXXXX)
    trap 'chmod -R u+w "$d" 2>/dev/null; rm -rf "$d"' EXIT
    chmod 755 "$d"
    cp "$cnpc" "$d/cnpc"; chmod 755 "$d/cnpc"
    cp "$work/pic.cnp" "$d/pic.cnp"; chmod 644 "$d/pic.cnp"
    cp -r "$work/out" "$d/out"
    nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    if "${nobody[@]}" test -x "$d/cnpc" -a -r "$d/pic.cnp"; then
      run=("${nobody[@]}" "$d/cnpc")
    else
      echo "read-only directory: skipped (user 65534 cannot reach $d)"
    fi
  fi
fi
if [ ${#run[@]} -gt 0 ]; then
  rm -rf "$work/before"; cp -r "$d/out" "$work/before"   # pic.h (small) may be new already
  chmod 555 "$d/out"
  set +e
  msg=$("${run[@]}" --emit=header,c,dot --out-dir "$d/out" "$d/pic.cnp" 2>&1)
  rc=$?
  set -e
  chmod 755 "$d/out"
  [ "$rc" = 1 ] || fail "read-only: exit $rc, expected 1 ($msg)"
  grep -q "cannot write '.*pic\.[ch]': Permission denied" <<<"$msg" || fail "read-only: message: $msg"
  for f in pic.h pic.c pic.dot; do cmp -s "$d/out/$f" "$work/before/$f" || fail "read-only: $f changed"; done
  [ "$d" = "$work" ] || { rm -rf "$work/out"; cp -r "$d/out" "$work/out"; }
  check_intact "read-only"
fi

# and with room, the new outputs replace the old ones, with the usual file mode
"$cnpc" --emit=header,c,dot --out-dir "$work/out" "$work/pic.cnp"
grep -q 'dt2' "$work/out/pic.h" || fail "rewrite after the failures"
mode=$(stat -c %a "$work/out/pic.c")
[ "$mode" = "$(printf '%o' $((0666 & ~$(umask))))" ] || fail "mode $mode"
echo "cnpc_write: full disk and read-only directory leave the old outputs intact (exit 1)"
