#!/bin/sh
# run_algo.sh — build and run bench_algo (host algorithms vs memcpy and NumPy).
#   bench/run_algo.sh [BUILD_DIR] [N] [REPS]
# Waits (up to CNP_BENCH_WAIT seconds, default 600) for the 1-minute load average to drop
# below CNP_BENCH_MAXLOAD (default 1.5) so that the figures are not taken on a busy machine,
# then runs the benchmark once. The NumPy peer script is found beside the source tree
# (../shared/bench/numpy_peer.py) or through CNP_NUMPY_PEER. CNP_BENCH_ONLY and CNP_BENCH_CPU
# pass through to bench_algo (see docs/algorithms.md, "Performance").
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$here/build"}
n=${2:-10000000}
reps=${3:-5}
maxload=${CNP_BENCH_MAXLOAD:-1.5}
wait_s=${CNP_BENCH_WAIT:-600}
cmake --build "$build" --target bench_algo -j2 >/dev/null
waited=0
while :; do
  load=$(cut -d' ' -f1 /proc/loadavg)
  if awk -v l="$load" -v m="$maxload" 'BEGIN { exit !(l < m) }'; then break; fi
  if [ "$waited" -ge "$wait_s" ]; then
    echo "# load average still $load after ${waited}s; running anyway" >&2
    break
  fi
  sleep 10
  waited=$((waited + 10))
done
echo "# $(date -u '+%Y-%m-%d %H:%M UTC') load $(cut -d' ' -f1-3 /proc/loadavg) $(nproc) cores"
exec "$build/bench/bench_algo" "$n" "$reps"
