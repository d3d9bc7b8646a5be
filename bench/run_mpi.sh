#!/usr/bin/env bash
# MPI staging and migration benchmark at 2 and 4 ranks (host arrays).
#   bench/run_mpi.sh [build-dir] [bench_mpi options, e.g. --particles 1000000 --steps 10]
# Builds bench_mpi in build-dir (default: build) if needed. Each rank runs single-threaded
# (OMP_NUM_THREADS=1) unless OMP_NUM_THREADS is set: several ranks with one OpenMP team each
# on the same cores oversubscribe them and the host sort slows down tenfold.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
if [ ! -x "$build/bench/bench_mpi" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCNP_BUILD_BENCH=ON >/dev/null
  cmake --build "$build" --target bench_mpi -j"$(nproc)"
fi
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
for np in 2 4; do
  mpiexec -n "$np" "$build/bench/bench_mpi" "$@"
  echo
done
