/*
** test_pshape32.c -- pshape32.cnp (f32 deposit and gather) against a double-precision C
** reference of the shapes as kernels of the periodic distance (as test_pshape.c): within
** f32 rounding of the sums.
*/
#include "pshape32.h"
#include "e2e.h"
#include "e2e_backend.h"

#include <math.h>
#include <string.h>

#define NP 500
enum { NY = 9, NX = 14 };
static const double LY = 1.5, LX = 4.0;

static double kernel(int tsc, double r) {
  double a = fabs(r);
  if (!tsc) return a < 1.0 ? 1.0 - a : 0.0;
  return a < 0.5 ? 0.75 - a * a : a < 1.5 ? 0.5 * (1.5 - a) * (1.5 - a) : 0.0;
}

static double pdist(double u, int64_t j, int64_t n) {
  double r = u - (double)j;
  return r - (double)n * floor(r / (double)n + 0.5);
}

int main(void)
{
  static float y[NP], x[NP], w[NP], e[2 * NY * NX], rho[NY * NX], rho_a[NY * NX], ep[2 * NP];
  uint64_t seed = 32;
  for (int i = 0; i < NP; i++) {
    y[i] = (float)(-LY + 3.0 * LY * e2e_rand(&seed));
    x[i] = (float)(-LX + 3.0 * LX * e2e_rand(&seed));
    w[i] = (float)(0.5 + e2e_rand(&seed));
  }
  for (int k = 0; k < 2 * NY * NX; k++) e[k] = (float)(e2e_rand(&seed) - 0.5);
  pshape32 *p = NULL;
  char err[256];
  pshape32_config cfg = PSHAPE32_CONFIG_INIT;
  int skip = e2e_choose_backend("pshape32", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = NP, cfg.ny = NY, cfg.nx = NX, cfg.Ly = LY, cfg.Lx = LX;
  CHECK(pshape32_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  e2e_put(pshape32_field(p, "y"), "y", y);
  e2e_put(pshape32_field(p, "x"), "x", x);
  e2e_put(pshape32_field(p, "w"), "w", w);
  e2e_put(pshape32_field(p, "e"), "e", e);
  int st = pshape32_step(p);
  CHECK(st == CNP_OK, "step: %s (%s)", cnp_status_name((cnp_status)st), pshape32_error(p));
  CHECK(pshape32_sync(p) == CNP_OK, "sync");
  e2e_fetch(pshape32_field(p, "rho"), "rho", rho);
  e2e_fetch(pshape32_field(p, "rho_a"), "rho_a", rho_a);
  e2e_fetch(pshape32_field(p, "ep"), "ep", ep);
  static double dref[NY * NX], gref[2 * NP];
  for (int q = 0; q < NP; q++) {
    double uy = (double)y[q] * NY / LY, ux = (double)x[q] * NX / LX;
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++) {
        dref[j * NX + i] += (double)w[q] * kernel(0, pdist(uy, j, NY)) * kernel(0, pdist(ux, i, NX));
        double wt = kernel(1, pdist(uy, j, NY)) * kernel(1, pdist(ux, i, NX));
        for (int c = 0; c < 2; c++) gref[c * NP + q] += wt * (double)e[c * NY * NX + j * NX + i];
      }
  }
  for (int k = 0; k < NY * NX; k++) {
    CHECK(fabs(rho[k] - dref[k]) <= 1e-5 * (dref[k] > 1 ? dref[k] : 1), "rho[%d] = %.9g, reference %.9g", k,
          (double)rho[k], dref[k]);
    CHECK(fabs(rho_a[k] - dref[k]) <= 1e-5 * (dref[k] > 1 ? dref[k] : 1), "rho_a[%d] = %.9g, reference %.9g", k,
          (double)rho_a[k], dref[k]);
  }
  for (int k = 0; k < 2 * NP; k++)
    CHECK(fabs(ep[k] - gref[k]) <= 1e-6, "ep[%d] = %.9g, reference %.9g", k, (double)ep[k], gref[k]);
  pshape32_teardown(p);
  printf("pshape32 (%s backend): f32 deposit (sorted, atomic) and gather match the reference\n",
         e2e_cuda ? "CUDA" : "host");
  return 0;
}
