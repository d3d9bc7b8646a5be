/*
** bench_stencil.c -- the 2D 5-point Jacobi sweep of jacobi.cnp (a grid map, generated host
** loops) in GB/s, against the machine's memcpy bandwidth measured in the same run.
** Traffic counted: one read of u and one write of v per point (16 bytes for f64), as memcpy
** counts one read and one write per byte copied. The first sweep is checked against a plain C
** loop on a few rows. memcpy runs on the sweep's threads (each copies its share), the best of 8.
** usage: bench_stencil [NY NX SWEEPS]   (default 4096 4096 20)
*/
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "jac.h"

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
  int64_t ny = argc > 1 ? atoll(argv[1]) : 4096, nx = argc > 2 ? atoll(argv[2]) : 4096;
  int sweeps = argc > 3 ? atoi(argv[3]) : 20;
  size_t bytes = (size_t)(ny * nx) * sizeof(double);
  /* memcpy: the best of 8 copies of one field's size, on as many threads as the sweep */
  char *a = malloc(bytes), *b = malloc(bytes);
  double *u0 = malloc(bytes);
  if (!a || !b || !u0) return 1;
  memset(a, 1, bytes);
  memset(b, 2, bytes);
  double best_cp = 1e30;
  for (int r = 0; r < 8; r++) {   /* every thread copies its contiguous share, as the sweep */
    double t0 = now();
#pragma omp parallel
    {
      size_t t = 0, nt = 1;
#ifdef _OPENMP
      t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
#endif
      size_t lo = bytes / nt * t, hi = t + 1 == nt ? bytes : bytes / nt * (t + 1);
      memcpy(b + lo, a + lo, hi - lo);
    }
    double t = now() - t0;
    if (t < best_cp) best_cp = t;
  }
  double cp_gbs = 2.0 * (double)bytes / best_cp * 1e-9;
  free(a);
  free(b);

  jac *p;
  char err[256];
  jac_config cfg = JAC_CONFIG_INIT;
  cfg.ny = ny, cfg.nx = nx;
  if (jac_setup(&p, &cfg, err, sizeof err) != 0) {
    fprintf(stderr, "bench_stencil: setup: %s\n", err);
    return 1;
  }
  double *u = (double *)jac_field(p, "u").data;
  for (int64_t k = 0; k < ny * nx; k++) u0[k] = u[k] = (double)((k * 2654435761u) % 1000) * 1e-3;
  if (jac_step(p) != 0) return 1;   /* sweep 1 (also the warm-up); u now holds its result */
  jac_sync(p);
  u = (double *)jac_field(p, "u").data;
  int64_t rows[] = {0, 1, ny / 2, ny - 1};
  double maxerr = 0.0;
  for (int r = 0; r < 4; r++) {
    int64_t j = rows[r], jm = (j + ny - 1) % ny, jp = (j + 1) % ny;
    for (int64_t i = 0; i < nx; i++) {
      int64_t im = (i + nx - 1) % nx, ip = (i + 1) % nx;
      double ref = 0.25 * (u0[jm * nx + i] + u0[jp * nx + i] + u0[j * nx + im] + u0[j * nx + ip]);
      double e = fabs(u[j * nx + i] - ref);
      if (e > maxerr) maxerr = e;
    }
  }
  double best = 1e30, total = 0.0;
  for (int r = 0; r < sweeps; r++) {
    double t0 = now();
    if (jac_step(p) != 0) return 1;
    jac_sync(p);
    double t = now() - t0;
    total += t;
    if (t < best) best = t;
  }
  double gbs = 16.0 * (double)(ny * nx) / best * 1e-9, mean = 16.0 * (double)(ny * nx) / (total / sweeps) * 1e-9;
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  printf("stencil 5-point Jacobi f64 %lld x %lld, %d threads: best %.2f ms/sweep, %.2f GB/s (mean %.2f GB/s); "
         "memcpy %.2f GB/s; ratio %.0f %% of memcpy; check max |err| %.1e\n",
         (long long)ny, (long long)nx, threads, best * 1e3, gbs, mean, cp_gbs, 100.0 * gbs / cp_gbs, maxerr);
  jac_teardown(p);
  free(u0);
  return maxerr < 1e-15 ? 0 : 1;
}
