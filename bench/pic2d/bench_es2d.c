/*
** bench_es2d.c -- the complete 2D electrostatic PIC step (docs/physics.md, "2D"): the step
** cnpc generates from examples/pic2d/es2d.cnp against the same step written as libcnp grid
** runtime calls (examples/pic2d/ref/es2d.c), in ns per particle per step, at 1 and 2 OpenMP
** threads, with the ratio, in one run. The 2D Landau set-up (64 x 16 grid) with N particles.
**
**   bench_es2d [N] [steps]          (default 2^20 particles, 20 steps; best of 3 runs)
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cases2d.h"

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Best of 3 runs of `steps` steps after 2 warm-up steps; ns per particle per step, or -1. */
static double time_impl(const es2d_impl *impl, const es2d_params *p, int64_t steps)
{
  char err[512];
  void *st;
  es2d_params q = *p;
  q.max_steps = 2 + 3 * steps;
  if (impl->setup(&st, &q, err, sizeof err) || impl->step(st, 2, err, sizeof err)) {
    fprintf(stderr, "bench_es2d: %s: %s\n", impl->name, err);
    return -1;
  }
  double best = 1e30;
  for (int r = 0; r < 3; r++) {
    double t = now();
    if (impl->step(st, steps, err, sizeof err)) {
      fprintf(stderr, "bench_es2d: %s: %s\n", impl->name, err);
      impl->teardown(st);
      return -1;
    }
    t = now() - t;
    best = t < best ? t : best;
  }
  impl->teardown(st);
  return 1e9 * best / ((double)steps * (double)p->n_particles);
}

int main(int argc, char **argv)
{
  es2d_params p;
  int64_t steps;
  phys2d_landau_params(&p, 0, &steps);
  p.n_particles = argc > 1 ? atoll(argv[1]) : (INT64_C(1) << 20);
  steps = argc > 2 ? atoll(argv[2]) : 20;
  p.n_particles -= p.n_particles % (p.rows * p.beams);
  if (p.n_particles <= 0 || steps <= 0) {
    fprintf(stderr, "usage: bench_es2d [N >= %lld] [steps > 0]\n", (long long)(p.rows * p.beams));
    return 2;
  }
  printf("complete 2D ES-PIC step, %lld x %lld grid, %lld particles, %lld steps, best of 3\n",
         (long long)p.nx, (long long)p.ny, (long long)p.n_particles, (long long)steps);
  printf("| threads | runtime calls (es2d.c) ns/particle/step | generated (es2d.cnp) ns/particle/step | generated / runtime calls |\n");
  printf("|---|---|---|---|\n");
  const int counts[] = {1, 2};
  int failed = 0;
  for (int k = 0; k < 2; k++) {
#ifdef _OPENMP
    omp_set_num_threads(counts[k]);
#else
    if (k) break;
#endif
    double rt = time_impl(&es2d_rt_impl, &p, steps), gen = time_impl(&es2d_cnp_impl, &p, steps);
    if (rt < 0 || gen < 0) {
      failed = 1;
      continue;
    }
    printf("| %d | %.1f | %.1f | %.2f |\n", counts[k], rt, gen, gen / rt);
  }
  return failed;
}
