#!/bin/sh
# run_weak.sh [build-dir] [particles_per_rank] [planes_per_rank] [steps] -- weak scaling of
# the split-grid 2D PIC step (bench_es2d_mpi) at 1, 2 and 4 ranks: time per step and the
# efficiency t(1) / t(R), best of 3 runs each. OMP_NUM_THREADS=1 (one core per rank).
# The development machine has 2 cores shared with other jobs: the 4-rank run puts 4
# busy-polling MPICH ranks on 2 cores, so it measures oversubscription, not scaling.
B=${1:-build}
shift 2>/dev/null
exe=$B/bench/pic2d/bench_es2d_mpi
[ -x "$exe" ] || { echo "run_weak.sh: $exe missing (configure with -DCNP_BUILD_BENCH=ON)" >&2; exit 2; }
cores=$(nproc 2>/dev/null || echo ?)
echo "weak scaling of examples/pic2d/es2d_mpi.cnp (fixed particles and planes per rank), $cores cores here"
[ "$cores" != "?" ] && [ "$cores" -lt 4 ] && echo "note: $cores cores: the runs with more ranks than cores are oversubscribed (MPICH busy-polls)"
t1=
for r in 1 2 4; do
  best=
  for k in 1 2 3; do
    line=$(OMP_NUM_THREADS=1 mpiexec -n $r "$exe" "$@") || exit 1
    t=$(echo "$line" | sed 's/.*time_per_step_ms \([0-9.]*\).*/\1/')
    if [ -z "$best" ] || awk "BEGIN{exit !($t < $best)}"; then best=$t; keep=$line; fi
  done
  [ -z "$t1" ] && t1=$best
  eff=$(awk "BEGIN{printf \"%.2f\", $t1 / $best}")
  echo "$keep efficiency $eff"
done
