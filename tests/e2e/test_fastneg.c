/*
** test_fastneg.c -- fastneg.cnp against a plain C reference over four steps.
*/
#include "fp2.h"
#include "e2e.h"
#define NN 3000
#define NC 8
static double x[NN]; static float v[2][NN]; static int32_t cell[NN]; static int64_t n;
int main(void) {
  uint64_t seed = 77;
  fp2 *p; char err[256];
  fp2_config cfg = FP2_CONFIG_INIT; cfg.N = NN; cfg.nc = NC;
  CHECK(fp2_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
#define F(name, T) ((T *)fp2_field(p, name).data)
  cnp_array fv = fp2_field(p, "v");
  for (int i = 0; i < NN; i++) {
    x[i] = F("x", double)[i] = e2e_rand(&seed) * 1.6 - 0.3;   /* some cells negative, some >= nc */
    for (int k = 0; k < 2; k++) v[k][i] = *(float *)((char *)fv.data + k * fv.strides[0] + i * fv.strides[1]) = (float)e2e_rand(&seed);
  }
  n = NN;
  for (int s = 0; s < 4; s++) {
    double shift = s == 2 ? 0.0 : 0.05;
    CHECK(fp2_step(p, shift) == 0, "step: %s", fp2_error(p));
    fp2_sync(p);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
      double xi = x[i] + shift;
      if (xi < 1.0) { x[m] = xi; v[0][m] = v[0][i]; v[1][m] = v[1][i]; cell[m] = (int32_t)floor(xi * NC); m++; }
    }
    n = m;
    static double tx[NN]; static float tv[2][NN]; static int32_t tc[NN]; int64_t at = 0;
    int32_t lo = cell[0], hi = cell[0];
    for (int64_t i = 0; i < n; i++) { if (cell[i] < lo) lo = cell[i]; if (cell[i] > hi) hi = cell[i]; }
    for (int32_t c = lo; c <= hi; c++) for (int64_t i = 0; i < n; i++) if (cell[i] == c) { tx[at] = x[i]; tv[0][at] = v[0][i]; tv[1][at] = v[1][i]; tc[at] = c; at++; }
    memcpy(x, tx, sizeof x); memcpy(v, tv, sizeof v); memcpy(cell, tc, sizeof cell);
    float rho[2][NC] = {{0}};
    for (int64_t i = 0; i < n; i++) if (cell[i] >= 0 && cell[i] < NC) { rho[0][cell[i]] += v[0][i]; rho[1][cell[i]] += v[1][i]; }
    CHECK(fp2_extent(p, "N") == n, "N %ld vs %ld", (long)fp2_extent(p, "N"), (long)n);
    fv = fp2_field(p, "v");
    for (int64_t i = 0; i < n; i++) {
      CHECK(F("x", double)[i] == x[i], "step %d x[%ld] %g vs %g", s, (long)i, F("x", double)[i], x[i]);
      CHECK(F("cell", int32_t)[i] == cell[i], "cell[%ld]", (long)i);
      for (int k = 0; k < 2; k++) CHECK(*(float *)((char *)fv.data + k * fv.strides[0] + i * fv.strides[1]) == v[k][i], "v");
    }
    cnp_array fr = fp2_field(p, "rho");
    for (int c = 0; c < NC; c++) for (int k = 0; k < 2; k++)
      CHECK(e2e_close(*(float *)((char *)fr.data + k * fr.strides[0] + c * fr.strides[1]), rho[k][c], 1e-4), "rho[%d,%d] %g vs %g", k, c, *(float *)((char *)fr.data + k * fr.strides[0] + c * fr.strides[1]), rho[k][c]);
  }
  fp2_teardown(p);
  printf("fp2 ok %ld\n", (long)n);
  return 0;
}
