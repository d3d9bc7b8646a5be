#!/bin/sh
# require_policy.sh BINARY [ARGS...] — checks the brief's GPU test policy on one GPU test:
# run plainly, it passes or skips; under CNP_REQUIRE_CUDA=1 a skip becomes a failure, and a
# pass stays a pass. A skip is exit 77 (tests/cuda, tests/e2e) or, for a Criterion
# executable, a run that tested nothing ("Tested: 0 |").
unset CNP_REQUIRE_CUDA
out=$("$@" 2>&1)
plain=$?
skipped=0
if [ "$plain" -eq 77 ]; then
  skipped=1
elif [ "$plain" -ne 0 ]; then
  printf '%s\n' "$out"
  echo "require_policy: $1 failed without CNP_REQUIRE_CUDA (exit $plain)" >&2
  exit 1
elif printf '%s\n' "$out" | grep -q 'Tested: 0 |'; then
  skipped=1
fi
out=$(CNP_REQUIRE_CUDA=1 "$@" 2>&1)
req=$?
if [ "$skipped" -eq 1 ]; then
  if [ "$req" -eq 0 ] || [ "$req" -eq 77 ]; then
    printf '%s\n' "$out"
    echo "require_policy: $1 skipped without a device and exited $req under" \
         "CNP_REQUIRE_CUDA=1 (it must fail)" >&2
    exit 1
  fi
  echo "require_policy: $1 skips without a device and fails (exit $req) under CNP_REQUIRE_CUDA=1"
else
  if [ "$req" -ne 0 ]; then
    printf '%s\n' "$out"
    echo "require_policy: $1 passed plainly but exited $req under CNP_REQUIRE_CUDA=1" >&2
    exit 1
  fi
  echo "require_policy: $1 ran on a device and passes under CNP_REQUIRE_CUDA=1 too"
fi
