#!/bin/sh
# Command-line behaviour of cnpc: exit codes (0 ok, 1 input errors, 2 usage), --help,
# --version, color only on request, deterministic --dump-ast from another directory.
#   usage: test-cli.sh CNPC DIR-WITH-PARSE-CASES
set -u
cnpc=$1 dir=$2
fails=0
check() {  # check NAME EXPECTED-RC ACTUAL-RC
  if [ "$2" != "$3" ]; then echo "FAIL: $1: exit $3, expected $2"; fails=$((fails + 1)); else echo "ok: $1"; fi
}
has() {    # has NAME TEXT PATTERN
  if printf '%s' "$2" | grep -q -- "$3"; then echo "ok: $1"; else echo "FAIL: $1: no '$3' in: $2"; fails=$((fails + 1)); fi
}
tmp=${TMPDIR:-/tmp}/cnp-cli.$$
mkdir -p "$tmp" && trap 'rm -rf "$tmp"' EXIT

out=$("$cnpc" --help); check help 0 $?; has help-text "$out" "usage: cnpc"
out=$("$cnpc" --version); check version 0 $?; has version-text "$out" "cnpc [0-9]"
"$cnpc" 2>/dev/null; check no-input 2 $?
"$cnpc" --bogus "$dir/pic.cnp" 2>/dev/null; check unknown-option 2 $?
"$cnpc" --emit=header,bogus "$dir/pic.cnp" 2>/dev/null; check bad-emit 2 $?
mkdir -p "$tmp/man"
printf 'pipeline m;\nparam dt : f64;\ndim N;\nfield x : f64[3, N];\nstream s;\nstep on s { map i in N { x[0, i] = x[0, i] * dt; } }\n' > "$tmp/m.cnp"
"$cnpc" --emit=manifest --out-dir "$tmp/man" "$tmp/m.cnp"; check manifest 0 $?
if python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["pipeline"] == "m" and m["api"]["step_params"] == ["dt"]; f = [d for d in m["declarations"] if d["kind"] == "field"][0]; assert f["shape"] == [3, "N"] and f["line"] == 4' "$tmp/man/m.json" 2>/dev/null; then
  echo "ok: manifest is JSON"; else echo "FAIL: manifest is not valid JSON"; fails=$((fails + 1)); fi
"$cnpc" --color=sometimes "$dir/pic.cnp" 2>/dev/null; check bad-color 2 $?
"$cnpc" -o 2>/dev/null; check missing-argument 2 $?
"$cnpc" a.cnp b.cnp 2>/dev/null; check two-inputs 2 $?
err=$("$cnpc" --check "$tmp/none.cnp" 2>&1); check missing-file 1 $?; has missing-file-text "$err" "cannot read"
"$cnpc" --check "$dir/pic.cnp"; check check-valid 0 $?
"$cnpc" --check --emit=header,c,cuda,dot --no-line --explain-fusion -MD -MF "$tmp/d" -MT t -MP -Werror -I "$dir/inc" --out-dir "$tmp" -o x "$dir/pic.cnp"
check all-options 0 $?
printf 'pipeline p;\nstream s;\nstep on q { }\n' > "$tmp/bad.cnp"
err=$("$cnpc" --check "$tmp/bad.cnp" 2>&1); check invalid 1 $?
case "$err" in *"$(printf '\033')"*) echo "FAIL: color by default"; fails=$((fails + 1));; *) echo "ok: plain by default";; esac
err=$("$cnpc" --check --color=always "$tmp/bad.cnp" 2>&1); check color 1 $?
case "$err" in *"$(printf '\033')["*) echo "ok: --color=always";; *) echo "FAIL: no color with --color=always"; fails=$((fails + 1));; esac
err=$("$cnpc" --check --color=auto "$tmp/bad.cnp" 2>&1)
case "$err" in *"$(printf '\033')"*) echo "FAIL: color=auto on a pipe"; fails=$((fails + 1));; *) echo "ok: --color=auto on a pipe";; esac
# warning flags: the unused-event warning, on by default, off with -w / -Wno-unused-event
printf 'pipeline p;\ndim N;\nfield x : f64[N];\nstream s;\nevent e;\nstep on s { record e; }\n' > "$tmp/warn.cnp"
err=$("$cnpc" --check "$tmp/warn.cnp" 2>&1); check warning 0 $?; has warning-text "$err" "warning: event 'e' is recorded but nothing waits for it \[-Wunused-event\]"
err=$("$cnpc" --check -w "$tmp/warn.cnp" 2>&1); check w-flag 0 $?; [ -z "$err" ] && echo "ok: -w silent" || { echo "FAIL: -w printed: $err"; fails=$((fails + 1)); }
err=$("$cnpc" --check -Wno-unused-event "$tmp/warn.cnp" 2>&1); check wno 0 $?; [ -z "$err" ] && echo "ok: -Wno-unused-event silent" || { echo "FAIL: -Wno-unused-event printed: $err"; fails=$((fails + 1)); }
"$cnpc" --check -Werror "$tmp/warn.cnp" 2>/dev/null; check werror 1 $?
"$cnpc" --check -Werror -Wno-error=unused-event "$tmp/warn.cnp" 2>/dev/null; check wno-error-named 0 $?
"$cnpc" --check -Werror -Wno-error "$tmp/warn.cnp" 2>/dev/null; check wno-error 0 $?
"$cnpc" --check -Werror=unused-event "$tmp/warn.cnp" 2>/dev/null; check werror-named 1 $?
"$cnpc" --check -Wno-such-warning "$tmp/warn.cnp" 2>/dev/null; check unknown-warning 2 $?
# determinism: the same dump from another working directory
a=$(cd "$dir" && "$cnpc" --dump-ast imports.cnp)
cp -r "$dir/imports.cnp" "$dir/inc" "$tmp/"
b=$(cd "$tmp" && "$cnpc" --dump-ast imports.cnp)
if [ "$a" = "$b" ]; then echo "ok: deterministic"; else echo "FAIL: dump differs by directory"; fails=$((fails + 1)); fi
# -I search path for imports
mkdir -p "$tmp/lib" && printf 'dim N;\n' > "$tmp/lib/only.cnp"
printf 'pipeline p;\nimport "only.cnp";\nfield x : f64[N];\n' > "$tmp/main.cnp"
"$cnpc" --check "$tmp/main.cnp" 2>/dev/null; check import-without-I 1 $?
"$cnpc" --check -I "$tmp/lib" "$tmp/main.cnp"; check import-with-I 0 $?
"$cnpc" --check -I"$tmp/lib" "$tmp/main.cnp"; check import-with-I-joined 0 $?
echo "$fails failures"
[ $fails -eq 0 ]
