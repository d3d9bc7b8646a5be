/*
** test_names.c -- names.cnp: pipeline h (setup() has a local h), step(p, p_, S_, double_).
*/
#ifdef E2E_HEADER
#include E2E_HEADER   /* the same pipeline with cnp_add_pipeline(... NAME other) */
#else
#include "h.h"
#endif
#include "e2e.h"
int main(void) {
  h *p; char err[256];
  h_config cfg = H_CONFIG_INIT; cfg.N = 16;
  CHECK(h_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  double *x = (double *)h_field(p, "x").data;
  for (int i = 0; i < 16; i++) x[i] = i;
  CHECK(h_step(p, 2.0, 3, 0.5) == 0, "step: %s", h_error(p));
  CHECK(h_step(p, 3.0, -1, 1.0) == 0, "step: %s", h_error(p));
  x = (double *)h_field(p, "x").data;
  const int32_t *k = (const int32_t *)h_field(p, "k").data;
  for (int i = 0; i < 16; i++) {
    CHECK(x[i] == (i * 2.0 + 0.5) * 3.0 + 1.0, "x[%d] %g", i, x[i]);
    CHECK(k[i] == 2, "k[%d] %d", i, k[i]);
  }
  h_teardown(p);
  printf("names ok\n");
  return 0;
}
