/*
** test_manyreds.c -- manyreds.cnp: 70 scalars reduced in one map, 70 fields scatter-added
** in one map, 33 swaps, three steps. Integer-valued data, so every sum is exact in any order:
** s_k = (k + 1) * sum x, d_k[j] = sum over the rows i with c[i] = j of (x[i] + k), and after
** three steps a_k = 3 (k + 1) (b_k = a_k + k + 1, then the swap). With the CUDA unit
** (E2E_CUDA_UNIT) its host fallback, and on a GPU (E2E_BACKEND=cuda) the graphs, which keep
** the 66 swapped fields' buffers per graph state.
*/
#include "manyreds.h"
#include "e2e.h"
#include "e2e_backend.h"
#define NN 5000
#define NR 70
#define NS 33
#define CELLS 8

static double x[NN], a[NN], d[CELLS];
static int64_t c[NN];

int main(void) {
  manyreds *p; char err[256], name[16];
  manyreds_config cfg = MANYREDS_CONFIG_INIT;
  int skip = e2e_choose_backend("manyreds", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = NN;
  CHECK(manyreds_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  double sx = 0;
  for (int i = 0; i < NN; i++) {
    x[i] = (double)(i % 7);
    c[i] = (i * 5) % CELLS;
    sx += x[i];
  }
  e2e_put(manyreds_field(p, "x"), "x", x);
  e2e_put(manyreds_field(p, "c"), "c", c);
  for (int k = 0; k < NS; k++) {
    snprintf(name, sizeof name, "a%d", k);
    e2e_put(manyreds_field(p, name), name, a);   /* zeros */
  }
  CHECK(manyreds_set_extent(p, "N", NN) == 0, "extent: %s", manyreds_error(p));
  for (int s = 0; s < 3; s++) CHECK(manyreds_step(p) == 0, "step %d: %s", s, manyreds_error(p));
  CHECK(manyreds_sync(p) == 0, "sync: %s", manyreds_error(p));
  for (int k = 0; k < NR; k++) {
    double v = -1;
    snprintf(name, sizeof name, "s%d", k);
    CHECK(manyreds_scalar(p, name, &v) == 0, "scalar %s", name);
    CHECK(v == (k + 1) * sx, "%s = %.17g, want %.17g", name, v, (k + 1) * sx);
    snprintf(name, sizeof name, "d%d", k);
    e2e_get_into(manyreds_field(p, name), name, d);
    for (int j = 0; j < CELLS; j++) {
      double want = 0;
      for (int i = 0; i < NN; i++)
        if (c[i] == j) want += x[i] + k;
      CHECK(d[j] == want, "%s[%d] = %.17g, want %.17g", name, j, d[j], want);
    }
  }
  for (int k = 0; k < NS; k++) {
    snprintf(name, sizeof name, "a%d", k);
    e2e_get_into(manyreds_field(p, name), name, a);
    for (int i = 0; i < NN; i++) CHECK(a[i] == 3.0 * (k + 1), "%s[%d] = %g, want %g", name, i, a[i], 3.0 * (k + 1));
  }
  manyreds_teardown(p);
  printf("manyreds ok: %d scalars, %d scatter-added fields, %d swaps\n", NR, NR, NS);
  return 0;
}
