/*
** test_mesh.c -- mesh.cnp (pipeline mesh2d) against a plain C version of the same step,
** five steps with changing dt and q; every field checked through mesh2d_field.
*/
#include "e2e.h"
#include "mesh2d.h"

enum { NP = 301, NX = 7, NY = 5, NC = NX * NY };
static double rx[NP], ry[NP], rE[2][NC], rrho[NC];
static float rux[NP], ruy[NP];
static int64_t rcell[NP];
static int32_t rkk[NP], ricnt[NC];
static uint64_t rtag[NP], rucnt[NC];

static int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static void *fld(mesh2d *p, const char *name) {
  cnp_array a = mesh2d_field(p, name);
  CHECK(a.data != NULL, "field %s", name);
  return a.data;
}

int main(void) {
  mesh2d *p; char err[256];
  mesh2d_config cfg = MESH2D_CONFIG_INIT; cfg.N = NP; cfg.nx = NX; cfg.ny = NY;
  CHECK(mesh2d_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  cnp_array Ea = mesh2d_field(p, "E");
  CHECK(Ea.ndim == 2 && Ea.shape[0] == 2 && Ea.shape[1] == NC, "E shape");
  uint64_t seed = 11;
  double *x = fld(p, "x"), *y = fld(p, "y");
  float *ux = fld(p, "ux"), *uy = fld(p, "uy");
  int32_t *kk = fld(p, "kk");
  for (int i = 0; i < NP; i++) {
    rx[i] = x[i] = e2e_rand(&seed) * 1.2 - 0.1;    /* some outside [0, 1): clamped cells */
    ry[i] = y[i] = e2e_rand(&seed);
    rux[i] = ux[i] = (float)(e2e_rand(&seed) - 0.5) * 0.4f;
    ruy[i] = uy[i] = (float)(e2e_rand(&seed) - 0.5) * 0.4f;
    rkk[i] = kk[i] = i % 3;
  }
  for (int k = 0; k < 2; k++)
    for (int c = 0; c < NC; c++) rE[k][c] = *e2e_at(Ea.data, Ea.strides, k, c) = e2e_rand(&seed) - 0.5;
  for (int s = 0; s < 5; s++) {
    const float dt = 0.05f * (float)(s + 1);
    const double q = 0.25 * (s % 2 ? -1 : 1);
    CHECK(mesh2d_step(p, dt, q) == 0, "step %d: %s", s, mesh2d_error(p));
    for (int i = 0; i < NP; i++) {
      int64_t ix = clampi((int64_t)floor(rx[i] * NX), 0, NX - 1);
      int64_t iy = clampi((int64_t)floor(ry[i] * NY), 0, NY - 1);
      int64_t c = iy * NX + ix;
      rcell[i] = c;
      rux[i] = rux[i] + dt * (float)rE[0][c];
      ruy[i] = ruy[i] + dt * (float)rE[1][c];
      rx[i] = fmod(rx[i] + (double)rux[i] + 1.0, 1.0);
      ry[i] = fmod(ry[i] + (double)ruy[i] + 1.0, 1.0);
      ricnt[c] += 1;
      rucnt[c] += (uint64_t)(int64_t)rkk[i] * 3u;
      rrho[c] += q * 0.5;
      double speed = sqrt((double)(rux[i] * rux[i] + ruy[i] * ruy[i]));
      rkk[i] = speed > 0.3 ? 2 : speed > 0.1 ? 1 : 0;
      rtag[i] = (rkk[i] == 2 ? (uint64_t)c * 1000u : (uint64_t)c) + (uint64_t)(int64_t)rkk[i];
    }
    CHECK(mesh2d_sync(p) == 0, "sync");
    x = fld(p, "x"); y = fld(p, "y"); ux = fld(p, "ux"); uy = fld(p, "uy"); kk = fld(p, "kk");
    const int64_t *cell = fld(p, "cell");
    const uint64_t *tag = fld(p, "tag"), *ucnt = fld(p, "ucnt");
    const int32_t *icnt = fld(p, "icnt");
    const double *rho = fld(p, "rho");
    for (int i = 0; i < NP; i++) {
      CHECK(cell[i] == rcell[i], "step %d cell[%d] %lld vs %lld", s, i, (long long)cell[i], (long long)rcell[i]);
      CHECK(ux[i] == rux[i] && uy[i] == ruy[i], "step %d u[%d] %.9g %.9g vs %.9g %.9g", s, i, ux[i], uy[i], rux[i], ruy[i]);
      CHECK(x[i] == rx[i] && y[i] == ry[i], "step %d pos[%d]", s, i);
      CHECK(kk[i] == rkk[i] && tag[i] == rtag[i], "step %d kk/tag[%d] %d %llu vs %d %llu", s, i, kk[i],
            (unsigned long long)tag[i], rkk[i], (unsigned long long)rtag[i]);
    }
    for (int c = 0; c < NC; c++) {
      CHECK(icnt[c] == ricnt[c] && ucnt[c] == rucnt[c], "step %d counts[%d] %d %llu vs %d %llu", s, c,
            icnt[c], (unsigned long long)ucnt[c], ricnt[c], (unsigned long long)rucnt[c]);
      CHECK(rho[c] == rrho[c], "step %d rho[%d] %g vs %g", s, c, rho[c], rrho[c]);
    }
  }
  int64_t total = 0;
  for (int c = 0; c < NC; c++) total += ricnt[c];
  CHECK(total == 5 * NP, "every particle counted once per step");
  mesh2d_teardown(p);
  printf("mesh ok\n");
  return 0;
}
