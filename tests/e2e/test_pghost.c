/*
** test_pghost.c -- pghost.cnp (deposit and gather on grids with ghost(W) axes, one rank)
** against a plain-C reference written from the shapes' kernels of the periodic distance
** between a particle and a grid point (as test_pshape.c): the results are the periodic
** grid's, the deposits in the interior planes with every ghost plane 0 after the fold, the
** gathers reading the interior (their input's ghosts hold garbage until `halo`, which the
** program runs first). Then the sorted deposits and the gathers are checked bit-identical
** between a run with 1 and one with 2 OpenMP threads.
*/
#include "pghost.h"
#include "e2e.h"
#include "e2e_backend.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define NP 300
enum { N1 = 17, NY = 12, NX = 10, NZ3 = 5, NY3 = 6, NX3 = 7, MAXS = 1024 };   /* MAXS >= any storage */
static const double L1 = 3.0, LY = 2.0, LX = 5.0;
static const char *const shapes[3] = {"ngp", "cic", "tsc"};

static double x[NP], y[NP], z[NP], w[NP];

static double kernel(int shape, double r) {
  double a = fabs(r);
  switch (shape) {
  case 0: return a < 0.5 ? 1.0 : 0.0;
  case 1: return a < 1.0 ? 1.0 - a : 0.0;
  default: return a < 0.5 ? 0.75 - a * a : a < 1.5 ? 0.5 * (1.5 - a) * (1.5 - a) : 0.0;
  }
}

static double pdist(double u, int64_t j, int64_t n) {
  double r = u - (double)j;
  return r - (double)n * floor(r / (double)n + 0.5);
}

/* A grid: interior extents n, ghost widths g (storage n + 2g), scale, positions. */
typedef struct Grid { const char *tag; int nd; int64_t n[3], g[3]; double scale[3]; const double *pos[3]; } Grid;

static int64_t storage(const Grid *G) {
  int64_t s = 1;
  for (int a = 0; a < G->nd; a++) s *= G->n[a] + 2 * G->g[a];
  return s;
}

/* Storage index k -> interior index per axis; false for a ghost point. */
static bool interior(const Grid *G, int64_t k, int64_t j[3]) {
  bool in = true;
  for (int a = G->nd - 1; a >= 0; a--) {
    int64_t ns = G->n[a] + 2 * G->g[a];
    j[a] = k % ns - G->g[a];
    k /= ns;
    in = in && j[a] >= 0 && j[a] < G->n[a];
  }
  return in;
}

static double weight(const Grid *G, int shape, int p, const int64_t j[3]) {
  double wt = 1.0;
  for (int a = 0; a < G->nd; a++) wt *= kernel(shape, pdist(G->pos[a][p] * G->scale[a], j[a], G->n[a]));
  return wt;
}

static void put_e(pghost *p, const char *nm, const Grid *G, const double *e) {
  static double buf[2 * MAXS];
  int64_t ns = storage(G);
  for (int64_t c = 0; c < 2; c++)
    for (int64_t k = 0; k < ns; k++) {
      int64_t j[3];
      buf[c * ns + k] = interior(G, k, j) ? e[c * ns + k] : 1e30;   /* ghosts: garbage until halo */
    }
  e2e_put(pghost_field(p, nm), nm, buf);
}

static pghost *setup(const Grid *grids, double e[4][2 * MAXS]) {
  pghost *p = NULL;
  char err[256];
  pghost_config cfg = PGHOST_CONFIG_INIT;
  int skip = e2e_choose_backend("pghost", &cfg.backend, &cfg.strict);
  if (skip) exit(skip);
  cfg.N = NP;
  cfg.n1 = N1, cfg.ny = NY, cfg.nx = NX, cfg.nz3 = NZ3, cfg.ny3 = NY3, cfg.nx3 = NX3;
  cfg.L1 = L1, cfg.Ly = LY, cfg.Lx = LX;
  int rc = pghost_setup(&p, &cfg, err, sizeof err);
  if (e2e_cuda) {   /* ghost grids' particles are host-only this round */
    CHECK(rc == CNP_EUNSUPPORTED, "CUDA setup: %s (%s), expected CNP_EUNSUPPORTED", cnp_status_name((cnp_status)rc), err);
    printf("pghost (CUDA backend): setup answers CNP_EUNSUPPORTED as documented: %s\n", err);
    exit(0);
  }
  CHECK(rc == CNP_OK, "setup: %s", err);
  e2e_put(pghost_field(p, "x"), "x", x);
  e2e_put(pghost_field(p, "y"), "y", y);
  e2e_put(pghost_field(p, "z"), "z", z);
  e2e_put(pghost_field(p, "w"), "w", w);
  static const char *const en[4] = {"e1", "e2", "e3", "eb"};
  for (int d = 0; d < 4; d++) put_e(p, en[d], &grids[d], e[d]);
  int st = pghost_step(p);
  CHECK(st == CNP_OK, "step: %s (%s)", cnp_status_name((cnp_status)st), pghost_error(p));
  return p;
}

/* Checks a deposit (storage) and a gather against the reference; returns nothing. */
static void check(pghost *p, const Grid *G, int shape, const char *dep, const char *gat, const double *e) {
  static double got[MAXS], gg[2 * NP], dref[MAXS], dmag[MAXS], gref[2 * NP], gmag[2 * NP];
  int64_t ns = storage(G);
  memset(dref, 0, sizeof dref), memset(dmag, 0, sizeof dmag);
  memset(gref, 0, sizeof gref), memset(gmag, 0, sizeof gmag);
  for (int q = 0; q < NP; q++)
    for (int64_t k = 0; k < ns; k++) {
      int64_t j[3];
      if (!interior(G, k, j)) continue;
      double wt = weight(G, shape, q, j);
      dref[k] += w[q] * wt, dmag[k] += fabs(w[q] * wt);
      for (int c = 0; c < 2; c++)
        gref[c * NP + q] += wt * e[c * ns + k], gmag[c * NP + q] += fabs(wt * e[c * ns + k]);
    }
  if (dep) {
    e2e_fetch(pghost_field(p, dep), dep, got);
    for (int64_t k = 0; k < ns; k++) {
      int64_t j[3];
      if (!interior(G, k, j)) CHECK(got[k] == 0.0, "%s: ghost point %lld = %.17g, not 0", dep, (long long)k, got[k]);
      else
        CHECK(fabs(got[k] - dref[k]) <= 1e-12 * (dmag[k] > 1 ? dmag[k] : 1), "%s[%lld] = %.17g, reference %.17g",
              dep, (long long)k, got[k], dref[k]);
    }
  }
  if (gat) {
    e2e_fetch(pghost_field(p, gat), gat, gg);
    for (int k = 0; k < 2 * NP; k++)
      CHECK(fabs(gg[k] - gref[k]) <= 1e-12 * (gmag[k] > 1 ? gmag[k] : 1), "%s[%d] = %.17g, reference %.17g", gat, k,
            gg[k], gref[k]);
  }
}

static size_t fetch_deterministic(pghost *p, const Grid *grids, double *out) {
  size_t at = 0;
  char nm[16];
  for (int d = 1; d <= 3; d++)
    for (int s = 0; s < 3; s++) {
      snprintf(nm, sizeof nm, "s%d_%s", d, shapes[s]);
      e2e_fetch(pghost_field(p, nm), nm, out + at);
      at += (size_t)storage(&grids[d - 1]);
      snprintf(nm, sizeof nm, "g%d_%s", d, shapes[s]);
      e2e_fetch(pghost_field(p, nm), nm, out + at);
      at += 2 * NP;
    }
  return at;
}

int main(void)
{
  uint64_t seed = 23;
  for (int i = 0; i < NP; i++) {   /* past the box on both sides */
    x[i] = -LX + 3.0 * LX * e2e_rand(&seed);
    y[i] = -LY + 3.0 * LY * e2e_rand(&seed);
    z[i] = -NZ3 + 3.0 * NZ3 * e2e_rand(&seed);
    w[i] = 0.5 + e2e_rand(&seed);
  }
  /* G1: 1D ghost(2); G2: both axes ghost(2); G3: periodic, ghost(2), ghost(3) in cell units;
  ** B2: ghost(1), periodic (cic only) */
  const Grid grids[4] = {
      {"G1", 1, {N1}, {2}, {N1 / L1}, {x}},
      {"G2", 2, {NY, NX}, {2, 2}, {NY / LY, NX / LX}, {y, x}},
      {"G3", 3, {NZ3, NY3, NX3}, {0, 2, 3}, {1.0, 1.0, 1.0}, {z, y, x}},
      {"B2", 2, {NY, NX}, {1, 0}, {NY / LY, NX / LX}, {y, x}},
  };
  static double e[4][2 * MAXS];
  for (int d = 0; d < 4; d++) {
    CHECK(storage(&grids[d]) <= MAXS, "MAXS");
    for (int64_t k = 0; k < 2 * storage(&grids[d]); k++) e[d][k] = e2e_rand(&seed) - 0.5;
  }
#ifdef _OPENMP
  omp_set_num_threads(1);
#endif
  pghost *p = setup(grids, e);
  char dn[16], an[16], gn[16];
  for (int d = 1; d <= 3; d++)
    for (int s = 0; s < 3; s++) {
      snprintf(dn, sizeof dn, "s%d_%s", d, shapes[s]);
      snprintf(an, sizeof an, "a%d_%s", d, shapes[s]);
      snprintf(gn, sizeof gn, "g%d_%s", d, shapes[s]);
      check(p, &grids[d - 1], s, dn, gn, e[d - 1]);
      check(p, &grids[d - 1], s, an, NULL, e[d - 1]);
    }
  check(p, &grids[3], 1, "sb", "gb", e[3]);
  check(p, &grids[3], 1, "ab", NULL, e[3]);
  size_t n = 0;
  static double one[9 * (MAXS + 2 * NP)], two[9 * (MAXS + 2 * NP)];
  n = fetch_deterministic(p, grids, one);
  pghost_teardown(p);
#ifdef _OPENMP
  omp_set_num_threads(2);
#endif
  p = setup(grids, e);
  CHECK(fetch_deterministic(p, grids, two) == n, "sizes");
  CHECK(memcmp(one, two, n * sizeof one[0]) == 0, "sorted deposits / gathers differ between 1 and 2 threads");
  pghost_teardown(p);
  printf("pghost: deposit (sorted, atomic) and gather on ghost(W) axes, ngp/cic/tsc in 1D/2D/3D and ghost(1) "
         "cic, match the periodic reference, ghost planes 0 after the fold; %zu deterministic values "
         "bit-identical with 1 and 2 threads\n", n);
  return 0;
}
