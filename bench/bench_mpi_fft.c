/*
** bench_mpi_fft.c — a distributed spectral Poisson solve (cnp_fft_dist_forward, a local
** k-space loop, cnp_fft_dist_inverse) on an N x N float64 grid, next to the serial solve of
** the whole grid with libcnp's cnp_fft (rank 0 alone) measured in the same run.
**
**   mpiexec -n P build/bench/bench_mpi_fft [--n N] [--steps S] [--measure 0|1]
**   bench/run_mpi_fft.sh [build-dir] [options]        (P = 1, 2, 4)
**
** Host arrays, FFTW_ESTIMATE plans unless --measure 1. A solve's time is the slowest rank's;
** reported: the best and the mean of S solves after one warm-up, the forward and inverse
** parts of the best, a plain MPI_Alltoallv of the same bytes as one transpose, the serial
** solve, and the parallel efficiency serial / (P * distributed).
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "cnp/cnp.h"
#include "cnp/mpi_comm.h"

static int rank, size;
#define CNP_PI 3.14159265358979323846

static void die(const char *what, cnp_status st)
{
  fprintf(stderr, "rank %d: %s: %s (%s)\n", rank, what, cnp_status_name(st), cnp_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CHECK(call)                                                                  \
  do {                                                                               \
    cnp_status st_ = (call);                                                         \
    if (st_ != CNP_OK) die(#call, st_);                                              \
  } while (0)

static double slowest(double t)
{
  double m = 0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

/* phi_hat = rho_hat * norm / |k|^2 over a (n0, m) block with wave numbers kx (n0), ky (m). */
static void kspace(double *h, const double *kx, const double *ky, int64_t n0, int64_t m,
                   double norm)
{
  for (int64_t i = 0; i < n0; i++)
    for (int64_t j = 0; j < m; j++) {
      double k2 = kx[i] * kx[i] + ky[j] * ky[j], f = k2 > 0 ? norm / k2 : 0.0;
      h[2 * (i * m + j)] *= f;
      h[2 * (i * m + j) + 1] *= f;
    }
}

static double source(int64_t i, int64_t j, int64_t n)
{
  double x = 2 * CNP_PI * (double)i / (double)n, y = 2 * CNP_PI * (double)j / (double)n;
  return 5.0 * sin(x) * sin(2 * y);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int64_t n = 512;
  int steps = 50, measure = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--n")) n = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--steps")) steps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--measure")) measure = atoi(argv[i + 1]);
  }
  CHECK(cnp_backend_select(CNP_BACKEND_HOST, 1));
  cnp_comm *comm;
  CHECK(cnp_comm_create_mpi(&comm, MPI_COMM_WORLD));
  int64_t dims[2] = {n, n};
  unsigned flags = measure ? CNP_FFT_MEASURE : 0;
  cnp_fft_dist_plan *p;
  CHECK(cnp_fft_dist_plan_create(&p, comm, 2, dims, CNP_FLOAT64, flags));
  cnp_fft_dist_layout L;
  CHECK(cnp_fft_dist_local(p, &L));
  cnp_array rho, phi, hat, kx, ky;
  CHECK(cnp_array_alloc_on(&rho, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, L.real_shape,
                           CNP_ORDER_C, 0));
  CHECK(cnp_array_alloc_on(&phi, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, L.real_shape,
                           CNP_ORDER_C, 0));
  CHECK(cnp_array_alloc_on(&hat, CNP_BACKEND_HOST, 0, CNP_COMPLEX128, 2, L.complex_shape,
                           CNP_ORDER_C, 0));
  CHECK(cnp_array_alloc_on(&kx, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &L.complex_shape[0],
                           CNP_ORDER_C, 0));
  CHECK(cnp_array_alloc_on(&ky, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &L.complex_shape[1],
                           CNP_ORDER_C, 0));
  CHECK(cnp_fft_dist_wavenumbers(p, 0, 2 * CNP_PI, &kx));
  CHECK(cnp_fft_dist_wavenumbers(p, 1, 2 * CNP_PI, &ky));
  for (int64_t i = 0; i < L.real_shape[0]; i++)
    for (int64_t j = 0; j < n; j++)
      ((double *)rho.data)[i * n + j] = source(L.real_offset + i, j, n);
  double norm = cnp_fft_dist_norm(p);

  double best = 1e30, sum = 0, best_f = 0, best_i = 0;
  for (int s = 0; s <= steps; s++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    CHECK(cnp_fft_dist_forward(p, &rho, &hat, NULL));
    double t1 = MPI_Wtime();
    kspace(hat.data, kx.data, ky.data, L.complex_shape[0], L.complex_shape[1], norm);
    double t2 = MPI_Wtime();
    CHECK(cnp_fft_dist_inverse(p, &hat, &phi, NULL));
    double t3 = MPI_Wtime();
    double tot = slowest(t3 - t0), tf = slowest(t1 - t0), ti = slowest(t3 - t2);
    if (s == 0) continue;                             /* warm-up */
    sum += tot;
    if (tot < best) best = tot, best_f = tf, best_i = ti;
  }
  /* accuracy against the analytic solution phi = sin(x) sin(2y) */
  double err = 0;
  for (int64_t i = 0; i < L.real_shape[0]; i++)
    for (int64_t j = 0; j < n; j++)
      err = fmax(err, fabs(((double *)phi.data)[i * n + j] - source(L.real_offset + i, j, n) / 5.0));
  err = slowest(err);

  /* a plain MPI_Alltoallv of one transpose's bytes (what the forward sends) */
  int *sc = calloc((size_t)size * 4, sizeof(int));
  int *sd = sc + size, *rc = sc + 2 * size, *rd = sc + 3 * size;
  int64_t so = 0, ro = 0;
  for (int q = 0; q < size; q++) {
    int64_t qoff, qn0, qmoff, qm;
    CHECK(cnp_slab_range(n, size, q, &qoff, &qn0));
    CHECK(cnp_slab_range(n / 2 + 1, size, q, &qmoff, &qm));
    sc[q] = (int)(2 * L.real_shape[0] * qm);
    rc[q] = (int)(2 * qn0 * L.complex_shape[1]);
    sd[q] = (int)so;
    rd[q] = (int)ro;
    so += sc[q];
    ro += rc[q];
  }
  double *sb = calloc((size_t)so + 1, sizeof(double)), *rb = calloc((size_t)ro + 1, sizeof(double));
  double a2a = 1e30;
  for (int s = 0; s < 20; s++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Alltoallv(sb, sc, sd, MPI_DOUBLE, rb, rc, rd, MPI_DOUBLE, MPI_COMM_WORLD);
    double t = slowest(MPI_Wtime() - t0);
    if (t < a2a) a2a = t;
  }

  /* the serial solve of the whole grid on rank 0 (the others wait) */
  double serial = 1e30;
  if (rank == 0) {
    cnp_fft_plan *sp;
    CHECK(cnp_fft_plan_create(&sp, CNP_BACKEND_HOST, 0, 2, dims, 0, CNP_FLOAT64, flags));
    int64_t cs[2] = {n, n / 2 + 1};
    cnp_array grho, gphi, ghat, gkx, gky;
    CHECK(cnp_array_alloc_on(&grho, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, dims, CNP_ORDER_C, 0));
    CHECK(cnp_array_alloc_on(&gphi, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, dims, CNP_ORDER_C, 0));
    CHECK(cnp_array_alloc_on(&ghat, CNP_BACKEND_HOST, 0, CNP_COMPLEX128, 2, cs, CNP_ORDER_C, 0));
    CHECK(cnp_array_alloc_on(&gkx, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &cs[0], CNP_ORDER_C, 0));
    CHECK(cnp_array_alloc_on(&gky, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &cs[1], CNP_ORDER_C, 0));
    CHECK(cnp_fft_wavenumbers(sp, 0, 2 * CNP_PI, &gkx, NULL));
    CHECK(cnp_fft_wavenumbers(sp, 1, 2 * CNP_PI, &gky, NULL));
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) ((double *)grho.data)[i * n + j] = source(i, j, n);
    for (int s = 0; s <= steps; s++) {
      double t0 = MPI_Wtime();
      CHECK(cnp_fft_forward(sp, &grho, &ghat, NULL));
      kspace(ghat.data, gkx.data, gky.data, n, n / 2 + 1, cnp_fft_norm(sp));
      CHECK(cnp_fft_inverse(sp, &ghat, &gphi, NULL));
      double t = MPI_Wtime() - t0;
      if (s > 0 && t < serial) serial = t;
    }
    cnp_array_free(&grho);
    cnp_array_free(&gphi);
    cnp_array_free(&ghat);
    cnp_array_free(&gkx);
    cnp_array_free(&gky);
    CHECK(cnp_fft_plan_destroy(sp));
    printf("distributed Poisson %lldx%lld float64, %d rank%s, %d solves (%s)\n",
           (long long)n, (long long)n, size, size > 1 ? "s" : "", steps,
           measure ? "FFTW_MEASURE" : "FFTW_ESTIMATE");
    printf("  solve   best %8.3f ms   mean %8.3f ms   (forward %.3f ms, inverse %.3f ms)\n",
           best * 1e3, sum / steps * 1e3, best_f * 1e3, best_i * 1e3);
    printf("  plain MPI_Alltoallv of one transpose: %.3f ms\n", a2a * 1e3);
    printf("  serial cnp_fft solve (rank 0 alone): %.3f ms\n", serial * 1e3);
    printf("  speedup %.2f   efficiency %.0f %%   max error vs analytic %.2e\n",
           serial / best, 100.0 * serial / (size * best), err);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  free(sc);
  free(sb);
  free(rb);
  cnp_array_free(&rho);
  cnp_array_free(&phi);
  cnp_array_free(&hat);
  cnp_array_free(&kx);
  cnp_array_free(&ky);
  CHECK(cnp_fft_dist_plan_destroy(p));
  CHECK(cnp_comm_destroy(comm));
  MPI_Finalize();
  return 0;
}
