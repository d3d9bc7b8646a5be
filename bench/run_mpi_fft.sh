#!/usr/bin/env bash
# Distributed spectral Poisson solve (cnp_fft_dist_*) at 1, 2 and 4 ranks.
#   bench/run_mpi_fft.sh [build-dir] [bench_mpi_fft options, e.g. --n 512 --steps 50]
# Builds bench_mpi_fft in build-dir (default: build) if needed. Each rank runs
# single-threaded (OMP_NUM_THREADS=1) unless OMP_NUM_THREADS is set.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
if [ ! -x "$build/bench/bench_mpi_fft" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCNP_BUILD_BENCH=ON >/dev/null
  cmake --build "$build" --target bench_mpi_fft -j"$(nproc)"
fi
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
for np in 1 2 4; do
  mpiexec -n "$np" "$build/bench/bench_mpi_fft" "$@"
  echo
done
