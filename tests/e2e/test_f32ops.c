/*
** test_f32ops.c -- f32ops.cnp: results equal, bit for bit, the same expressions evaluated in
** float with float literals; and evaluating them in double (then rounding) gives different
** bits for some elements, so this test sees the difference.
*/
#include "f32ops.h"
#include "e2e.h"
#include <stdbool.h>
#define NN 4096
int main(void) {
  uint64_t seed = 23;
  f32ops *p; char err[256];
  f32ops_config cfg = F32OPS_CONFIG_INIT; cfg.N = NN;
  CHECK(f32ops_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  float *a = (float *)f32ops_field(p, "a").data;
  static float ra[NN];
  for (int i = 0; i < NN; i++) ra[i] = a[i] = (float)e2e_rand(&seed);
  ra[0] = a[0] = 0.1f;                       /* 0.1f * 3 >= 0.3 differs from the double compare */
  const float h = 0.37f;
  CHECK(f32ops_step(p, h) == 0, "step: %s", f32ops_error(p));
  CHECK(f32ops_sync(p) == 0, "sync");
  const float *b = (const float *)f32ops_field(p, "b").data, *c = (const float *)f32ops_field(p, "c").data;
  const float *d = (const float *)f32ops_field(p, "d").data;
  const bool *gt = (const bool *)f32ops_field(p, "gt").data;
  int differs_in_double = 0;
  for (int i = 0; i < NN; i++) {
    float x = ra[i];
    volatile float eb = x * 0.1f + 1e-3f;
    volatile float t = x / 3.0f;
    volatile float ec = t * 0.7f - h / 3.0f;
    volatile float ed = x > 0.5f ? x * 1.1f : powf(x, 2.5f) + 0.3f;
    bool egt = x * 3.0f >= 0.3f;
    CHECK(b[i] == eb, "b[%d] %.9g vs %.9g", i, b[i], eb);
    CHECK(c[i] == ec, "c[%d] %.9g vs %.9g", i, c[i], ec);
    CHECK(d[i] == ed, "d[%d] %.9g vs %.9g", i, d[i], ed);
    CHECK(gt[i] == egt, "gt[%d]", i);
    volatile float db = (float)((double)x * 0.1 + 0.001);
    if (db != eb || (x * 3.0 >= 0.3) != egt) differs_in_double++;
  }
  CHECK(differs_in_double > 0, "the double evaluation never differs: the test would not see it");
  f32ops_teardown(p);
  printf("f32ops ok (%d elements differ when evaluated in double)\n", differs_in_double);
  return 0;
}
