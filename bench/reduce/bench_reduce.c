/*
** bench_reduce.c -- reductions and scans of the language (gen_red.c) over N = 10^7 f64 rows on
** the host backend, each against memcpy of the same bytes (the machine's bandwidth, measured
** in the same run), and a map with a sum and a max fused into its loop against the map alone.
** Best of REPS rounds, the five measurements interleaved in each. Prints the ratios (targets: reduction and scan within 1.3x of
** memcpy, the fused reduction under 10% over the map).   usage: bench_reduce [N] [REPS]
*/
#include "rmap.h"
#include "rmapred.h"
#include "rscan.h"
#include "rsum.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* best of the rounds; the five measurements interleave in each round (a loaded machine
** slows them alike) */
#define TIME(var, stmt)                                                                     \
  do {                                                                                      \
    double t0_ = now();                                                                     \
    stmt;                                                                                   \
    double t1_ = now() - t0_;                                                               \
    if (t1_ < var) var = t1_;                                                               \
  } while (0)

#define SETUP(pl, PL, n)                                                                    \
  pl *pl##_p;                                                                               \
  {                                                                                         \
    pl##_config c = PL##_CONFIG_INIT;                                                       \
    char err[256];                                                                          \
    c.N = (n);                                                                              \
    if (pl##_setup(&pl##_p, &c, err, sizeof err) != 0) {                                    \
      fprintf(stderr, "%s\n", err);                                                         \
      return 1;                                                                             \
    }                                                                                       \
    double *x = (double *)pl##_field(pl##_p, "x").data;                                     \
    for (int64_t i = 0; i < (n); i++) x[i] = (double)(i % 1000) * 1e-3 - 0.4;               \
  }

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 10000000;
  int reps = argc > 2 ? atoi(argv[2]) : 20;
  size_t bytes = (size_t)n * sizeof(double);
  double *a = malloc(bytes), *b = malloc(bytes);
  if (!a || !b) return 1;
  for (int64_t i = 0; i < n; i++) a[i] = (double)i, b[i] = 0.0;
  SETUP(rsum, RSUM, n)
  SETUP(rscan, RSCAN, n)
  SETUP(rmap, RMAP, n)
  SETUP(rmapred, RMAPRED, n)
  double t_cpy = 1e30, t_sum = 1e30, t_scan = 1e30, t_map = 1e30, t_mapred = 1e30;
  for (int r = 0; r < reps; r++) {
    TIME(t_cpy, memcpy(b, a, bytes); __asm__ volatile("" ::"r"(b) : "memory"));
    TIME(t_sum, rsum_step(rsum_p); rsum_sync(rsum_p));
    TIME(t_scan, rscan_step(rscan_p); rscan_sync(rscan_p));
    TIME(t_map, rmap_step(rmap_p, 1.5); rmap_sync(rmap_p));
    TIME(t_mapred, rmapred_step(rmapred_p, 1.5); rmapred_sync(rmapred_p));
  }
  double s = 0;
  rsum_scalar(rsum_p, "s", &s);
  printf("bench_reduce: N = %lld f64 rows (%.0f MB), best of %d (sum %.6g)\n", (long long)n,
         (double)bytes / 1e6, reps, s);
  printf("  memcpy of the bytes        %8.3f ms  (%.1f GB/s copied)\n", t_cpy * 1e3, (double)bytes / t_cpy / 1e9);
  printf("  sum   s += x[i]            %8.3f ms  ratio to memcpy %.2f (target <= 1.3)\n", t_sum * 1e3, t_sum / t_cpy);
  printf("  scan inclusive x -> y      %8.3f ms  ratio to memcpy %.2f (target <= 1.3)\n", t_scan * 1e3, t_scan / t_cpy);
  printf("  map y = a x + 1            %8.3f ms\n", t_map * 1e3);
  printf("  map + fused sum and max    %8.3f ms  overhead %+.1f%% (target < 10%%)\n", t_mapred * 1e3,
         (t_mapred / t_map - 1) * 100);
  rsum_teardown(rsum_p);
  rscan_teardown(rscan_p);
  rmap_teardown(rmap_p);
  rmapred_teardown(rmapred_p);
  free(a);
  free(b);
  return 0;
}
