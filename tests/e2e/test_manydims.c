/*
** test_manydims.c -- manydims.cnp: 34 dims of capacities 1..34, one map each; three steps.
*/
#include "e2e.h"
#include "manydims.h"

int main(void) {
  manydims *p; char err[256];
  manydims_config cfg = MANYDIMS_CONFIG_INIT;
  int64_t *caps[34] = {&cfg.d0, &cfg.d1, &cfg.d2, &cfg.d3, &cfg.d4, &cfg.d5, &cfg.d6, &cfg.d7, &cfg.d8, &cfg.d9, &cfg.d10, &cfg.d11, &cfg.d12, &cfg.d13, &cfg.d14, &cfg.d15, &cfg.d16, &cfg.d17, &cfg.d18, &cfg.d19, &cfg.d20, &cfg.d21, &cfg.d22, &cfg.d23, &cfg.d24, &cfg.d25, &cfg.d26, &cfg.d27, &cfg.d28, &cfg.d29, &cfg.d30, &cfg.d31, &cfg.d32, &cfg.d33};
  for (int k = 0; k < 34; k++) *caps[k] = k + 1;
  CHECK(manydims_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  for (int s = 0; s < 3; s++) CHECK(manydims_step(p) == 0, "step: %s", manydims_error(p));
  for (int k = 0; k < 34; k++) {
    char name[8];
    snprintf(name, sizeof name, "x%d", k);
    cnp_array v = manydims_field(p, name);
    CHECK(v.data && v.shape[0] == k + 1, "%s extent", name);
    for (int i = 0; i <= k; i++) CHECK(((double *)v.data)[i] == 3.0 * k, "%s[%d]", name, i);
  }
  manydims_teardown(p);
  printf("manydims ok\n");
  return 0;
}
