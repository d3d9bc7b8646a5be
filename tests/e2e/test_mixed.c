/*
** test_mixed.c -- mixed.cnp (built with -Wall -Wextra -Werror) against plain C.
*/
#include "mixed.h"
#include "e2e.h"
#include <stdbool.h>
#define NN 256
int main(void) {
  uint64_t seed = 5;
  mixed *p; char err[256];
  mixed_config cfg = MIXED_CONFIG_INIT; cfg.N = NN;
  CHECK(mixed_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  int32_t *k = (int32_t *)mixed_field(p, "k").data; int64_t *q = (int64_t *)mixed_field(p, "q").data;
  uint64_t *u = (uint64_t *)mixed_field(p, "u").data; float *f = (float *)mixed_field(p, "f").data;
  double *d = (double *)mixed_field(p, "d").data;
  for (int i = 0; i < NN; i++) {
    k[i] = (int32_t)(e2e_rand(&seed) * 100) - 50; q[i] = (int64_t)(e2e_rand(&seed) * 1000);
    u[i] = (uint64_t)(e2e_rand(&seed) * 1e6); f[i] = (float)(e2e_rand(&seed) * 4 - 2); d[i] = e2e_rand(&seed) * 8 - 4;
  }
  CHECK(mixed_step(p) == 0, "step: %s", mixed_error(p));
  const bool *o1 = (const bool *)mixed_field(p, "o1").data;
  const int32_t *o2 = (const int32_t *)mixed_field(p, "o2").data;
  const double *o3 = (const double *)mixed_field(p, "o3").data, *o4 = (const double *)mixed_field(p, "o4").data;
  const float *o5 = (const float *)mixed_field(p, "o5").data;
  for (int i = 0; i < NN; i++) {
    CHECK(o1[i], "o1[%d]", i);
    CHECK(o2[i] == 2 * k[i], "o2[%d]", i);
    double e3 = sqrt((double)q[i]) + floor((double)k[i]) + fmin((double)k[i], d[i]) + fmax((double)f[i], d[i]) + exp((double)(u[i] % 3));
    CHECK(e2e_close(o3[i], e3, 1e-14), "o3[%d] %.17g vs %.17g", i, o3[i], e3);
    CHECK(o4[i] == d[i] / 2.0 + (double)f[i] * 3.0 - 1.0, "o4[%d]", i);
    volatile float e5 = f[i] / 4.0f + fminf(f[i], 0.0f) + powf(f[i], 2.0f);
    CHECK(o5[i] == e5, "o5[%d] %.9g vs %.9g", i, o5[i], e5);
  }
  mixed_teardown(p);
  printf("mixed ok\n");
  return 0;
}
