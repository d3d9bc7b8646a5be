/*
** test_rank3.c -- rank3.cnp against a plain C reference (strided views of rank-3 fields).
*/
#include "r3.h"
#include "e2e.h"
#define NN 500
#define NC 7
static double t[2][3][NN]; static int64_t cell[NN]; static int64_t n;
static double *at3(cnp_array *a, int c0, int c1, int64_t i) { return (double *)((char *)a->data + c0 * a->strides[0] + c1 * a->strides[1] + i * a->strides[2]); }
int main(void) {
  uint64_t seed = 8;
  r3 *p; char err[256];
  r3_config cfg = R3_CONFIG_INIT; cfg.N = NN; cfg.nc = NC;
  CHECK(r3_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  cnp_array ft = r3_field(p, "t");
  CHECK(ft.ndim == 3 && ft.shape[0] == 2 && ft.shape[1] == 3 && ft.shape[2] == NN, "t view");
  for (int a = 0; a < 2; a++) for (int b = 0; b < 3; b++) for (int i = 0; i < NN; i++) t[a][b][i] = *at3(&ft, a, b, i) = e2e_rand(&seed) - 0.5;
  n = NN;
  for (int s = 0; s < 2; s++) {
    CHECK(r3_step(p) == 0, "step: %s", r3_error(p));
    r3_sync(p);
    static int alive[NN];
    for (int64_t i = 0; i < n; i++) { t[1][2][i] = t[0][1][i] + (double)i; alive[i] = t[1][2][i] > 0.5; cell[i] = i % NC; }
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) if (alive[i]) { for (int a = 0; a < 2; a++) for (int b = 0; b < 3; b++) t[a][b][m] = t[a][b][i]; cell[m] = cell[i]; m++; }
    n = m;
    static double tt[2][3][NN]; static int64_t tc[NN]; int64_t q = 0;
    for (int c = 0; c < NC; c++) for (int64_t i = 0; i < n; i++) if (cell[i] == c) { for (int a = 0; a < 2; a++) for (int b = 0; b < 3; b++) tt[a][b][q] = t[a][b][i]; tc[q++] = c; }
    memcpy(t, tt, sizeof t); memcpy(cell, tc, sizeof cell);
    double out[2][3][NC] = {{{0}}};
    for (int64_t i = 0; i < n; i++) for (int a = 0; a < 2; a++) for (int b = 0; b < 3; b++) out[a][b][cell[i]] += t[a][b][i];
    ft = r3_field(p, "t");
    cnp_array fo = r3_field(p, "out"), sn;
    CHECK(r3_snapshot(p, "st", &sn) == 0, "snap");
    CHECK(ft.shape[2] == n, "live %ld vs %ld", (long)ft.shape[2], (long)n);
    for (int a = 0; a < 2; a++) for (int b = 0; b < 3; b++) {
      for (int64_t i = 0; i < n; i++) {
        CHECK(*at3(&ft, a, b, i) == t[a][b][i], "t[%d,%d,%ld]", a, b, (long)i);
        CHECK(*at3(&sn, a, b, i) == t[a][b][i], "snap t[%d,%d,%ld]", a, b, (long)i);
      }
      for (int c = 0; c < NC; c++) CHECK(e2e_close(*at3(&fo, a, b, c), out[a][b][c], 1e-12), "out[%d,%d,%d] %g vs %g", a, b, c, *at3(&fo, a, b, c), out[a][b][c]);
    }
    double *g = (double *)r3_field(p, "g").data;
    for (int j = 0; j < 5; j++) CHECK(g[3 * 5 + j] == j, "g");
  }
  r3_teardown(p);
  printf("r3 ok %ld\n", (long)n);
  return 0;
}
