/*
** bench_grid.c — particle deposition and the FFT Poisson solve of cnp/grid.h, in one run:
**   memcpy bandwidth (the machine's reference),
**   2D CIC deposition, particles per second: cnp_deposit SORTED and ATOMIC, the generated
**   `.cnp` step `deposit w at (y, x) -> rho with cic [atomic];` (depo_sorted.cnp,
**   depo_atomic.cnp: setup outside the timing), a hand-written serial C loop, NumPy np.add.at and np.bincount (grid_numpy.py, run from here);
**   the FFT Poisson solve (forward, k-space map, inverse): the runtime's calls (cnp FFT,
**   FFTW), the generated pipeline of poisson_gen.cnp (fft, a map with wave(), ifft with its
**   1/N pass), numpy.fft.
** usage: bench_grid [NY NX NPART REPS]   (default 512 512 4000000 5)
** Ratios are printed against the hand-written loop and against NumPy.
*/
#define _POSIX_C_SOURCE 200809L
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cnp/cnp.h"
#include "pgen.h"
#ifdef CNP_GRID_GENERATED
#include "depo_atomic.h"
#include "depo_sorted.h"
#endif

static const double PI_ = 3.14159265358979323846;

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define CHECK(call)                                                                      \
  do {                                                                                   \
    cnp_status st_ = (call);                                                             \
    if (st_ != CNP_OK) {                                                                 \
      fprintf(stderr, "bench_grid: %s: %s\n", #call, cnp_last_error());                  \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

static uint64_t rs = 1;
static double urand(void)
{
  uint64_t z = (rs += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

#ifdef CNP_GRID_GENERATED
/* The generated step `deposit w at (y, x) -> rho with cic [atomic];` (depo_*.cnp): best of
** reps of step + sync, its result compared with the hand loop's. */
#define GEN_DEPOSIT(NAME, CFG_INIT)                                                            \
  static double gen_##NAME(int64_t ny, int64_t nx, int64_t np, const double *y,                 \
                           const double *x, const double *w, const double *ref, int reps) {     \
    NAME *p;                                                                                    \
    char err[256];                                                                              \
    NAME##_config cfg = CFG_INIT;                                                               \
    cfg.ny = ny, cfg.nx = nx, cfg.N = np;                                                       \
    if (NAME##_setup(&p, &cfg, err, sizeof err) != CNP_OK) {                                    \
      fprintf(stderr, "bench_grid: %s\n", err);                                                 \
      exit(1);                                                                                  \
    }                                                                                           \
    memcpy(NAME##_field(p, "y").data, y, (size_t)np * sizeof *y);                               \
    memcpy(NAME##_field(p, "x").data, x, (size_t)np * sizeof *x);                               \
    memcpy(NAME##_field(p, "w").data, w, (size_t)np * sizeof *w);                               \
    double t = 1e30;                                                                            \
    for (int r = 0; r < reps; r++) {                                                            \
      double t0 = now();                                                                        \
      if (NAME##_step(p) != CNP_OK || NAME##_sync(p) != CNP_OK) {                               \
        fprintf(stderr, "bench_grid: %s\n", NAME##_error(p));                                   \
        exit(1);                                                                                \
      }                                                                                         \
      t = fmin(t, now() - t0);                                                                  \
    }                                                                                           \
    const double *g = NAME##_field(p, "rho").data;                                              \
    double e = 0;                                                                               \
    for (int64_t c = 0; c < ny * nx; c++) e = fmax(e, fabs(g[c] - ref[c]));                     \
    if (e > 1e-9) printf("# warning: %s differs from the hand loop by %.3g\n", #NAME, e);       \
    NAME##_teardown(p);                                                                         \
    return t;                                                                                   \
  }
GEN_DEPOSIT(depo_sorted, DEPO_SORTED_CONFIG_INIT)
GEN_DEPOSIT(depo_atomic, DEPO_ATOMIC_CONFIG_INIT)
#endif

/* The loop a user writes by hand: serial CIC scatter, periodic. */
static void hand_cic(const double *y, const double *x, const double *w, int64_t n, int64_t ny,
                     int64_t nx, double *g)
{
  memset(g, 0, (size_t)(ny * nx) * sizeof *g);
  for (int64_t i = 0; i < n; i++) {
    double fy = floor(y[i]), fx = floor(x[i]);
    int64_t iy = (int64_t)fy, ix = (int64_t)fx;
    double dy = y[i] - fy, dx = x[i] - fx;
    iy %= ny; if (iy < 0) iy += ny;
    ix %= nx; if (ix < 0) ix += nx;
    int64_t iy1 = iy + 1 == ny ? 0 : iy + 1, ix1 = ix + 1 == nx ? 0 : ix + 1;
    g[iy * nx + ix] += w[i] * (1 - dy) * (1 - dx);
    g[iy * nx + ix1] += w[i] * (1 - dy) * dx;
    g[iy1 * nx + ix] += w[i] * dy * (1 - dx);
    g[iy1 * nx + ix1] += w[i] * dy * dx;
  }
}

int main(int argc, char **argv)
{
  int64_t ny = argc > 1 ? atoll(argv[1]) : 512, nx = argc > 2 ? atoll(argv[2]) : 512;
  int64_t np = argc > 3 ? atoll(argv[3]) : 4000000;
  int reps = argc > 4 ? atoi(argv[4]) : 5;
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  printf("# bench_grid: grid %lld x %lld, %lld particles, best of %d, %d OpenMP threads\n",
         (long long)ny, (long long)nx, (long long)np, reps, threads);

  /* memcpy bandwidth over the particle arrays' size (3 * 8 * np bytes) */
  size_t mb = (size_t)np * 24;
  char *m0 = malloc(mb), *m1 = malloc(mb);
  memset(m0, 1, mb);
  memset(m1, 2, mb);
  double tm = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    memcpy(m1, m0, mb);
    tm = fmin(tm, now() - t0);
  }
  double bw = 2.0 * (double)mb / tm / 1e9;
  printf("memcpy               %10.2f GB/s (read + write)\n", bw);
  free(m0);
  free(m1);

  int64_t dims[2] = {ny, nx};
  cnp_array y, x, w, g;
  CHECK(cnp_array_alloc_on(&y, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &np, CNP_ORDER_C, 0));
  CHECK(cnp_array_alloc_on(&x, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &np, CNP_ORDER_C, 0));
  CHECK(cnp_array_alloc_on(&w, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &np, CNP_ORDER_C, 0));
  CHECK(cnp_array_alloc_on(&g, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, dims, CNP_ORDER_C, 0));
  double *yv = y.data, *xv = x.data, *wv = w.data;
  for (int64_t i = 0; i < np; i++) {
    yv[i] = urand() * (double)ny;
    xv[i] = urand() * (double)nx;
    wv[i] = 0.5 + urand();
  }
  double *ref = malloc((size_t)(ny * nx) * sizeof *ref);
  double th = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    hand_cic(yv, xv, wv, np, ny, nx, ref);
    th = fmin(th, now() - t0);
  }
  cnp_pgrid *pg;
  CHECK(cnp_pgrid_create(&pg, CNP_BACKEND_HOST, 0, 2, dims, CNP_SHAPE_CIC, CNP_FLOAT64, np, NULL));
  cnp_array pos[2] = {y, x};
  double tmode[2];
  for (int mode = 0; mode < 2; mode++) {
    tmode[mode] = 1e30;
    for (int r = 0; r < reps; r++) {
      double t0 = now();
      CHECK(cnp_deposit(pg, pos, &w, &g, (cnp_deposit_mode)mode, NULL));
      tmode[mode] = fmin(tmode[mode], now() - t0);
    }
    double err = 0;
    for (int64_t c = 0; c < ny * nx; c++) err = fmax(err, fabs(((double *)g.data)[c] - ref[c]));
    if (err > 1e-9) printf("# warning: mode %d differs from the hand loop by %.3g\n", mode, err);
  }
  cnp_pgrid_destroy(pg);
  double tgen[2] = {NAN, NAN};   /* the generated .cnp deposit, sorted and atomic */
#ifdef CNP_GRID_GENERATED
  tgen[0] = gen_depo_sorted(ny, nx, np, yv, xv, wv, ref, reps);
  tgen[1] = gen_depo_atomic(ny, nx, np, yv, xv, wv, ref, reps);
#endif

  /* FFT Poisson: forward, k-space map (multiply by the precomputed 1/(N k^2)), inverse */
  cnp_fft_plan *fft;
  double tp0 = now();
  CHECK(cnp_fft_plan_create(&fft, CNP_BACKEND_HOST, 0, 2, dims, 0, CNP_FLOAT64,
                            CNP_FFT_MEASURE | CNP_FFT_DESTROY_INPUT));
  double tplan = now() - tp0;
  int64_t cd[2] = {ny, nx / 2 + 1};
  cnp_array hat, phi, ky, kx;
  CHECK(cnp_array_alloc_on(&hat, CNP_BACKEND_HOST, 0, CNP_COMPLEX128, 2, cd, CNP_ORDER_C, 0));
  CHECK(cnp_array_alloc_on(&phi, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, dims, CNP_ORDER_C, 0));
  CHECK(cnp_array_alloc_on(&ky, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &cd[0], CNP_ORDER_C, 0));
  CHECK(cnp_array_alloc_on(&kx, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &cd[1], CNP_ORDER_C, 0));
  CHECK(cnp_fft_wavenumbers(fft, 0, (double)ny, &ky, NULL));
  CHECK(cnp_fft_wavenumbers(fft, 1, (double)nx, &kx, NULL));
  double *inv = malloc((size_t)(cd[0] * cd[1]) * sizeof *inv), norm = cnp_fft_norm(fft);
  for (int64_t i = 0; i < cd[0]; i++)
    for (int64_t j = 0; j < cd[1]; j++) {
      double k2 = ((double *)ky.data)[i] * ((double *)ky.data)[i] +
                  ((double *)kx.data)[j] * ((double *)kx.data)[j];
      inv[i * cd[1] + j] = k2 == 0 ? 0 : norm / k2;
    }
  double *gv = g.data;
  for (int64_t i = 0; i < ny; i++)
    for (int64_t j = 0; j < nx; j++)
      gv[i * nx + j] = sin(2 * PI_ * (double)i / (double)ny) * sin(2 * PI_ * (double)j / (double)nx);
  double tf = 1e30;
  for (int r = 0; r < reps; r++) {
    double t0 = now();
    CHECK(cnp_fft_forward(fft, &g, &hat, NULL));
    double complex *h = hat.data;
    int64_t nc = cd[0] * cd[1];
#pragma omp parallel for schedule(static)
    for (int64_t q = 0; q < nc; q++) h[q] *= inv[q];
    CHECK(cnp_fft_inverse(fft, &hat, &phi, NULL));
    tf = fmin(tf, now() - t0);
  }
  double kk = pow(2 * PI_ / (double)ny, 2) + pow(2 * PI_ / (double)nx, 2), perr = 0;
  for (int64_t c = 0; c < ny * nx; c++)
    perr = fmax(perr, fabs(((double *)phi.data)[c] - gv[c] / kk));
  cnp_fft_plan_destroy(fft);

  /* the same solve generated from poisson_gen.cnp */
  double tg = NAN, gerr = NAN, tgplan = NAN;
  {
    pgen *pg2;
    char err[256];
    pgen_config cfg = PGEN_CONFIG_INIT;
    cfg.ny = ny;
    cfg.nx = nx;
    double t0 = now();
    if (pgen_setup(&pg2, &cfg, err, sizeof err) != 0) {
      printf("# generated solve: setup: %s\n", err);
    } else {
      tgplan = now() - t0;
      memcpy(pgen_field(pg2, "rho").data, gv, (size_t)(ny * nx) * sizeof *gv);
      tg = 1e30;
      for (int r = 0; r < reps; r++) {
        t0 = now();
        CHECK(pgen_step(pg2));
        CHECK(pgen_sync(pg2));
        tg = fmin(tg, now() - t0);
      }
      const double *ph = pgen_field(pg2, "phi").data;
      gerr = 0;
      for (int64_t c = 0; c < ny * nx; c++) gerr = fmax(gerr, fabs(ph[c] - gv[c] / kk));
      pgen_teardown(pg2);
    }
  }

  /* NumPy peer */
  double t_addat = NAN, t_bin = NAN, t_npfft = NAN;
  char numpy_ver[64] = "?";
  const char *peer = getenv("CNP_GRID_NUMPY");
  if (!peer) peer = CNP_GRID_NUMPY_PEER;
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %lld %lld %lld %d", peer, (long long)ny,
           (long long)nx, (long long)np, reps);
  FILE *f = popen(cmd, "r");
  if (f) {
    char key[64], val[64];
    while (fscanf(f, "%63s %63s", key, val) == 2) {
      if (!strcmp(key, "add_at")) t_addat = atof(val);
      else if (!strcmp(key, "bincount")) t_bin = atof(val);
      else if (!strcmp(key, "fft_poisson")) t_npfft = atof(val);
      else if (!strcmp(key, "numpy")) snprintf(numpy_ver, sizeof numpy_ver, "%s", val);
    }
    pclose(f);
  }

  double mp = (double)np / 1e6;
  printf("%-20s %10s %12s %10s %10s %10s\n", "2D CIC deposition", "ms", "Mpart/s", "vs hand",
         "vs add.at", "vs bincnt");
  const char *names[7] = {"cnp SORTED", "cnp ATOMIC", ".cnp deposit", ".cnp deposit atomic",
                          "hand-written C", "numpy add.at", "numpy bincount"};
  double ts[7] = {tmode[0], tmode[1], tgen[0], tgen[1], th, t_addat, t_bin};
  for (int k = 0; k < 7; k++) {
    const char *nm = names[k];
    printf("%-20s %10.2f %12.2f %10.2f %10.2f %10.2f\n", nm, ts[k] * 1e3, mp / ts[k], th / ts[k],
           t_addat / ts[k], t_bin / ts[k]);
  }
  printf("%-20s %10s %10s (plan with FFTW_MEASURE: %.1f ms; max error vs analytic %.2g)\n",
         "FFT Poisson solve", "ms", "vs numpy", tplan * 1e3, perr);
  printf("%-20s %10s %10s %10s\n", "", "", "", "vs runtime");
  printf("%-20s %10.3f %10.2f %10.2f\n", "cnp (FFTW)", tf * 1e3, t_npfft / tf, 1.0);
  printf("%-20s %10.3f %10.2f %10.2f   (generated; setup %.1f ms; max error %.2g)\n", "cnp .cnp solve",
         tg * 1e3, t_npfft / tg, tf / tg, tgplan * 1e3, gerr);
  printf("%-20s %10.3f %10.2f %10.2f\n", "numpy.fft", t_npfft * 1e3, 1.0, tf / t_npfft);
  printf("# deposition bytes per particle read: 24 (y, x, w); at memcpy speed %.1f Mpart/s\n",
         bw * 1e9 / 2 / 24 / 1e6);
  printf("# numpy %s\n", numpy_ver);
  free(ref);
  free(inv);
  cnp_array_free(&y); cnp_array_free(&x); cnp_array_free(&w); cnp_array_free(&g);
  cnp_array_free(&hat); cnp_array_free(&phi); cnp_array_free(&ky); cnp_array_free(&kx);
  return 0;
}
