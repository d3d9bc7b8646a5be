/*
** test_pshape.c -- pshape.cnp (deposit and gather, every shape, 1D/2D/3D, sorted and atomic)
** against a plain-C reference written from the shapes' definitions as kernels of the periodic
** distance r between a particle (in cell units) and a grid point: NGP 1 for |r| < 1/2; CIC
** 1 - |r| for |r| < 1; TSC 3/4 - r^2 for |r| < 1/2, (3/2 - |r|)^2 / 2 for |r| < 3/2; products
** over the axes. The reference visits every grid point for every particle (no index
** arithmetic shared with the runtime). Then the deterministic outputs (sorted deposits,
** gathers) are checked bit-identical between a run with 1 and one with 2 OpenMP threads,
** each from its own setup. Built with the host unit (e2e.pshape) and, with CUDA, the CUDA
** unit (e2e.pshape.cuda_unit_on_host, and e2e.pshape.gpu on a GPU: there the reference holds
** to the same tolerance; the thread check is the host's).
*/
#include "pshape.h"
#include "e2e.h"
#include "e2e_backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define NP 300
enum { N1 = 17, NY = 12, NX = 10, NZ3 = 5, NY3 = 6, NX3 = 7, MAXP = 512 };   /* MAXP >= any grid's points */
static const double L1 = 3.0, LY = 2.0, LX = 5.0;
static const char *const shapes[3] = {"ngp", "cic", "tsc"};

static double x[NP], y[NP], z[NP], w[NP];
static double e[3][2 * MAXP];   /* e1, e2, e3: 2 components each */

static double kernel(int shape, double r) {
  double a = fabs(r);
  switch (shape) {
  case 0: return a < 0.5 ? 1.0 : 0.0;
  case 1: return a < 1.0 ? 1.0 - a : 0.0;
  default: return a < 0.5 ? 0.75 - a * a : a < 1.5 ? 0.5 * (1.5 - a) * (1.5 - a) : 0.0;
  }
}

/* Periodic distance from u to grid point j on an axis of n points, in [-n/2, n/2). */
static double pdist(double u, int64_t j, int64_t n) {
  double r = u - (double)j;
  return r - (double)n * floor(r / (double)n + 0.5);
}

typedef struct Grid { int nd; int64_t n[3]; double scale[3]; const double *pos[3]; } Grid;

static int64_t points(const Grid *g) { return g->n[0] * (g->nd > 1 ? g->n[1] : 1) * (g->nd > 2 ? g->n[2] : 1); }

/* The weight of particle p at grid point k (C order over the grid's axes). */
static double weight(const Grid *g, int shape, int p, int64_t k) {
  double wt = 1.0;
  for (int a = g->nd - 1; a >= 0; a--) {
    int64_t j = k % g->n[a];
    k /= g->n[a];
    wt *= kernel(shape, pdist(g->pos[a][p] * g->scale[a], j, g->n[a]));
  }
  return wt;
}

static void check_grid(const char *what, const double *got, const double *ref, const double *mag, int64_t n) {
  for (int64_t k = 0; k < n; k++)
    CHECK(fabs(got[k] - ref[k]) <= 1e-12 * (mag[k] > 1.0 ? mag[k] : 1.0), "%s[%lld] = %.17g, reference %.17g",
          what, (long long)k, got[k], ref[k]);
}

static pshape *setup(void) {
  pshape *p = NULL;
  char err[256];
  pshape_config cfg = PSHAPE_CONFIG_INIT;
  int skip = e2e_choose_backend("pshape", &cfg.backend, &cfg.strict);
  if (skip) exit(skip);
  cfg.N = NP;
  cfg.n1 = N1, cfg.ny = NY, cfg.nx = NX, cfg.nz3 = NZ3, cfg.ny3 = NY3, cfg.nx3 = NX3;
  cfg.L1 = L1, cfg.Ly = LY, cfg.Lx = LX;
  CHECK(pshape_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  e2e_put(pshape_field(p, "x"), "x", x);
  e2e_put(pshape_field(p, "y"), "y", y);
  e2e_put(pshape_field(p, "z"), "z", z);
  e2e_put(pshape_field(p, "w"), "w", w);
  for (int d = 1; d <= 3; d++) {
    char nm[8];
    snprintf(nm, sizeof nm, "e%d", d);
    e2e_put(pshape_field(p, nm), nm, e[d - 1]);
  }
  int st = pshape_step(p);
  CHECK(st == CNP_OK, "step: %s (%s)", cnp_status_name((cnp_status)st), pshape_error(p));
  CHECK(pshape_sync(p) == CNP_OK, "sync");
  return p;
}

/* The deterministic outputs of one run: every sorted deposit and gather, concatenated. */
static size_t fetch_deterministic(pshape *p, const Grid *grids, double *out) {
  size_t at = 0;
  char nm[16];
  for (int d = 1; d <= 3; d++)
    for (int s = 0; s < 3; s++) {
      snprintf(nm, sizeof nm, "s%d_%s", d, shapes[s]);
      e2e_fetch(pshape_field(p, nm), nm, out + at);
      at += (size_t)points(&grids[d - 1]);
      snprintf(nm, sizeof nm, "g%d_%s", d, shapes[s]);
      e2e_fetch(pshape_field(p, nm), nm, out + at);
      at += 2 * NP;
    }
  return at;
}

int main(void)
{
  uint64_t seed = 19;
  for (int i = 0; i < NP; i++) {   /* past the box on both sides: the shapes wrap */
    x[i] = -LX + 3.0 * LX * e2e_rand(&seed);
    y[i] = -LY + 3.0 * LY * e2e_rand(&seed);
    z[i] = -NZ3 + 3.0 * NZ3 * e2e_rand(&seed);
    w[i] = 0.5 + e2e_rand(&seed);
  }
  for (int d = 0; d < 3; d++)
    for (size_t k = 0; k < sizeof e[d] / sizeof e[d][0]; k++) e[d][k] = e2e_rand(&seed) - 0.5;
  /* 1D: x / L1 * n1; 2D: (y, x) scaled; 3D: (z, y, x) in cell units (no lengths declared) */
  const Grid grids[3] = {
      {1, {N1}, {N1 / L1}, {x}},
      {2, {NY, NX}, {NY / LY, NX / LX}, {y, x}},
      {3, {NZ3, NY3, NX3}, {1.0, 1.0, 1.0}, {z, y, x}},
  };
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  pshape *p = setup();
  static double got[MAXP], ref[2 * NP], mag[2 * NP], gref[2 * NP], gmag[2 * NP];
  char nm[16];
  for (int d = 1; d <= 3; d++) {
    const Grid *g = &grids[d - 1];
    int64_t np = points(g);
    for (int s = 0; s < 3; s++) {
      static double dref[MAXP], dmag[MAXP];
      memset(dref, 0, sizeof dref);
      memset(dmag, 0, sizeof dmag);
      memset(gref, 0, sizeof gref);
      memset(gmag, 0, sizeof gmag);
      for (int q = 0; q < NP; q++)
        for (int64_t k = 0; k < np; k++) {
          double wt = weight(g, s, q, k);
          dref[k] += w[q] * wt;
          dmag[k] += fabs(w[q] * wt);
          for (int c = 0; c < 2; c++) {
            gref[c * NP + q] += wt * e[d - 1][c * np + k];
            gmag[c * NP + q] += fabs(wt * e[d - 1][c * np + k]);
          }
        }
      double total = 0, wsum = 0;
      for (int64_t k = 0; k < np; k++) total += dref[k];
      for (int q = 0; q < NP; q++) wsum += w[q];
      CHECK(fabs(total - wsum) <= 1e-10 * wsum, "%dD %s reference: total %.17g, weights %.17g", d, shapes[s],
            total, wsum);
      for (int atomic = 0; atomic < 2; atomic++) {
        snprintf(nm, sizeof nm, "%c%d_%s", atomic ? 'a' : 's', d, shapes[s]);
        e2e_fetch(pshape_field(p, nm), nm, got);
        check_grid(nm, got, dref, dmag, np);
      }
      snprintf(nm, sizeof nm, "g%d_%s", d, shapes[s]);
      e2e_fetch(pshape_field(p, nm), nm, ref);
      memcpy(mag, gmag, sizeof mag);
      check_grid(nm, ref, gref, mag, 2 * NP);
    }
  }
  {   /* deposit 1 at (y, x) -> u2 with cic: the unit weights */
    static double dref[NY * NX];
    memset(dref, 0, sizeof dref);
    for (int q = 0; q < NP; q++)
      for (int64_t k = 0; k < NY * NX; k++) dref[k] += weight(&grids[1], 1, q, k);
    e2e_fetch(pshape_field(p, "u2"), "u2", got);
    for (int64_t k = 0; k < NY * NX; k++)
      CHECK(fabs(got[k] - dref[k]) <= 1e-12 * (dref[k] > 1 ? dref[k] : 1), "u2[%lld] = %.17g, reference %.17g",
            (long long)k, got[k], dref[k]);
  }
  pshape_stats stats;
  pshape_stats_get(p, &stats);
  /* 9 sorted + 9 atomic deposits, 9 gathers of 2 components, 1 unit-weight deposit */
  if (!e2e_cuda)
    CHECK(stats.launches == 9 + 9 + 18 + 1 && stats.host_syncs == 0, "launches %llu, host syncs %llu",
          (unsigned long long)stats.launches, (unsigned long long)stats.host_syncs);
  else CHECK(stats.host_syncs == 0, "host syncs %llu", (unsigned long long)stats.host_syncs);

  /* Sorted deposits and gathers: bit-identical with 1 and 2 threads (host backend). */
  size_t n = 0;
  static double one[9 * (MAXP + 2 * NP)], two[9 * (MAXP + 2 * NP)];
  n = fetch_deterministic(p, grids, one);
  pshape_teardown(p);
#ifdef _OPENMP
  omp_set_num_threads(2);
#endif
  p = setup();
  CHECK(fetch_deterministic(p, grids, two) == n, "sizes");
  if (!e2e_cuda) CHECK(memcmp(one, two, n * sizeof one[0]) == 0, "sorted deposits / gathers differ between 1 and 2 threads");
  pshape_teardown(p);
  printf("pshape (%s backend): deposit (sorted, atomic) and gather, ngp/cic/tsc in 1D/2D/3D match the "
         "reference; %zu deterministic values bit-identical with 1 and 2 threads\n",
         e2e_cuda ? "CUDA" : "host", n);
  return 0;
}
