/*
** test_names.c -- names.cnp: step(p, p_, S_, double_) with params named like generated locals.
*/
#include "names.h"
#include "e2e.h"
int main(void) {
  names *p; char err[256];
  names_config cfg = NAMES_CONFIG_INIT; cfg.N = 16;
  CHECK(names_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  double *x = (double *)names_field(p, "x").data;
  for (int i = 0; i < 16; i++) x[i] = i;
  CHECK(names_step(p, 2.0, 3, 0.5) == 0, "step: %s", names_error(p));
  CHECK(names_step(p, 3.0, -1, 1.0) == 0, "step: %s", names_error(p));
  x = (double *)names_field(p, "x").data;
  const int32_t *k = (const int32_t *)names_field(p, "k").data;
  for (int i = 0; i < 16; i++) {
    CHECK(x[i] == (i * 2.0 + 0.5) * 3.0 + 1.0, "x[%d] %g", i, x[i]);
    CHECK(k[i] == 2, "k[%d] %d", i, k[i]);
  }
  names_teardown(p);
  printf("names ok\n");
  return 0;
}
