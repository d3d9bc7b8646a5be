/*
** test_compact.c -- compact.cnp against a plain C reference: two compactions of f64,
** f32[3, N], u64, i32 and bool arrays, if/else with lets, scatter-adds into setup-sized fields.
*/
#include "compactor.h"
#include "e2e.h"
#include <stdbool.h>
#define NN 4000
#define KK 3
static double x[NN]; static float pv[3][NN]; static uint64_t id[NN]; static int32_t kind[NN];
static int hot[NN], keep[NN]; static int64_t hist[2 * KK + 1]; static double tot;
static int64_t n;
static int64_t compact_ref(void) {
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++) if (keep[i]) {
    x[m] = x[i]; for (int k = 0; k < 3; k++) pv[k][m] = pv[k][i]; id[m] = id[i]; kind[m] = kind[i]; hot[m] = hot[i]; m++;
  }
  return m;
}
int main(void) {
  uint64_t seed = 5;
  compactor *p; char err[256];
  compactor_config cfg = COMPACTOR_CONFIG_INIT;
  cfg.N = NN; cfg.hi = 1.6; cfg.K = KK;
  CHECK(compactor_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
#define F(name, T) ((T *)compactor_field(p, name).data)
  cnp_array fpv = compactor_field(p, "pv");
  for (int i = 0; i < NN; i++) {
    x[i] = F("x", double)[i] = e2e_rand(&seed);
    for (int k = 0; k < 3; k++) pv[k][i] = *(float *)((char *)fpv.data + k * fpv.strides[0] + i * fpv.strides[1]) = (float)e2e_rand(&seed);
    id[i] = F("id", uint64_t)[i] = (uint64_t)(e2e_rand(&seed) * 1e6);
  }
  n = NN;
  for (int s = 0; s < 4; s++) {
    double lo = 0.2 + 0.1 * s;
    CHECK(compactor_step(p, lo) == 0, "step: %s", compactor_error(p));
    CHECK(compactor_sync(p) == 0, "sync");
    for (int64_t i = 0; i < n; i++) {
      double t = x[i] * 2.0;
      if (t > 1.6) { t = t - 1.6; kind[i] = 2; } else if (t < lo) kind[i] = 0; else kind[i] = 1;
      x[i] = t;
      hot[i] = pv[0][i] > 0.5f;
      keep[i] = kind[i] != 0 && id[i] % 5 != 3;
      pv[1][i] = pv[1][i] + (float)t;
    }
    n = compact_ref();
    for (int64_t i = 0; i < n; i++) { keep[i] = !hot[i] || kind[i] == 2; id[i] = id[i] + (uint64_t)i; }
    n = compact_ref();
    for (int64_t i = 0; i < n; i++) { hist[kind[i] * KK] += 1; tot += x[i]; }
    CHECK(compactor_extent(p, "N") == n, "N %ld vs %ld", (long)compactor_extent(p, "N"), (long)n);
    fpv = compactor_field(p, "pv");
    CHECK(fpv.shape[0] == 3 && fpv.shape[1] == n, "pv view shape");
    for (int64_t i = 0; i < n; i++) {
      CHECK(F("x", double)[i] == x[i], "x[%ld]", (long)i);
      CHECK(F("id", uint64_t)[i] == id[i], "id[%ld]", (long)i);
      CHECK(F("kind", int32_t)[i] == kind[i], "kind[%ld]", (long)i);
      CHECK(F("hot", bool)[i] == (hot[i] != 0), "hot[%ld]", (long)i);
      for (int k = 0; k < 3; k++)
        CHECK(*(float *)((char *)fpv.data + k * fpv.strides[0] + i * fpv.strides[1]) == pv[k][i], "pv[%d,%ld]", k, (long)i);
    }
    for (int h = 0; h < 2 * KK + 1; h++) CHECK(F("hist", int64_t)[h] == hist[h], "hist[%d] %ld vs %ld", h, (long)F("hist", int64_t)[h], (long)hist[h]);
    CHECK(e2e_close(F("tot", double)[0], tot, 1e-12), "tot %g vs %g", F("tot", double)[0], tot);
  }
  compactor_teardown(p);
  printf("compact ok: %ld live\n", (long)n);
  return 0;
}
