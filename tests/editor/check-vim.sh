#!/usr/bin/env bash
# Loads the Vim syntax file on a .cnp file in batch mode and checks that it set the syntax and
# highlights a keyword, a type, a comment and a number as intended. Exit 77 (skip) without vim.
set -euo pipefail
root=$1; file=$2
command -v vim >/dev/null || { echo "SKIP: vim not installed"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
CNP_OUT=$out vim -Nu NONE -i NONE -es \
  --cmd "set rtp^=$root/docs/editors/vim" \
  -c 'filetype on' -c 'syntax on' -c "edit $file" \
  -c "source $root/tests/editor/probe.vim" -c 'qa!' </dev/null || true
mapfile -t got <"$out"
want=(cnp cnp cnpDecl cnpType cnpComment cnpNumber)
for i in 0 1 2 3 4 5; do
  if [ "${got[$i]:-}" != "${want[$i]}" ]; then
    echo "vim syntax check: item $i: expected '${want[$i]}', got '${got[$i]:-<none>}'"; exit 1
  fi
done
echo "vim syntax: ok (${got[*]})"
