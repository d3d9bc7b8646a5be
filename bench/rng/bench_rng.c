/*
** bench_rng.c -- the generated code's uniform draws in a map: rng64.cnp (uniform(seed) into
** an f64 field) and rng32.cnp (uniform_f32(seed) into an f32 field), N rows per step. Prints
** ns per draw for each, the best of REPS timed steps after one warm-up step (first touch).
** bench/rng/run compares them with NumPy's Generator.random (PCG64) side by side.
**   usage: bench_rng N REPS
*/
#define _POSIX_C_SOURCE 200809L
#include "rng32.h"
#include "rng64.h"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define BENCH(NAME, CFG, LABEL)                                                        \
  do {                                                                                 \
    NAME *p;                                                                           \
    char err[256];                                                                     \
    NAME##_config cfg = CFG;                                                           \
    cfg.N = n;                                                                         \
    cfg.seed = 12345;                                                                  \
    if (NAME##_setup(&p, &cfg, err, sizeof err) != 0) {                                \
      fprintf(stderr, "setup: %s\n", err);                                             \
      return 1;                                                                        \
    }                                                                                  \
    double best = 1e30;                                                                \
    for (int r = 0; r <= reps; r++) {                                                  \
      double t0 = now();                                                               \
      if (NAME##_step(p) != 0 || NAME##_sync(p) != 0) {                                \
        fprintf(stderr, "step: %s\n", NAME##_error(p));                                \
        return 1;                                                                      \
      }                                                                                \
      double t = now() - t0;                                                           \
      if (r > 0 && t < best) best = t;                                                 \
    }                                                                                  \
    printf("%s %.3f ns/draw\n", LABEL, 1e9 * best / (double)n);                        \
    NAME##_teardown(p);                                                                \
  } while (0)

#ifndef BENCH_CC
#define BENCH_CC "cnpc"
#endif
int main(int argc, char **argv)
{
  int64_t n = argc > 1 ? atoll(argv[1]) : 10000000;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  BENCH(rng64, RNG64_CONFIG_INIT, BENCH_CC " f64");
  BENCH(rng32, RNG32_CONFIG_INIT, BENCH_CC " f32");
  return 0;
}
