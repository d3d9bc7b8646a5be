/*
** test_unsigned.c -- unsigned.cnp against the same expressions in C with cnp's promotion
** (u64 wins; signed operands converted modulo 2^64).
*/
#include "unsig.h"
#include "e2e.h"
#include <stdbool.h>
#define NN 500
static uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }
static uint64_t umax(uint64_t a, uint64_t b) { return a > b ? a : b; }
int main(void) {
  uint64_t seed = 31;
  unsig *p; char err[256];
  unsig_config cfg = UNSIG_CONFIG_INIT; cfg.N = NN;
  CHECK(unsig_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  uint64_t *u = (uint64_t *)unsig_field(p, "u").data;
  int64_t *k = (int64_t *)unsig_field(p, "k").data;
  int32_t *j = (int32_t *)unsig_field(p, "j").data;
  for (int i = 0; i < NN; i++) {
    u[i] = (uint64_t)(e2e_rand(&seed) * 20);
    k[i] = (int64_t)(e2e_rand(&seed) * 40) - 20;
    j[i] = (int32_t)(e2e_rand(&seed) * 40) - 20;
  }
  u[0] = 0; k[0] = -1; j[0] = -1;
  CHECK(unsig_step(p) == 0, "step: %s", unsig_error(p));
  const uint64_t *r = (const uint64_t *)unsig_field(p, "r").data;
  const bool *lt = (const bool *)unsig_field(p, "lt").data, *eq = (const bool *)unsig_field(p, "eq").data;
  const bool *nn = (const bool *)unsig_field(p, "nn").data, *ng = (const bool *)unsig_field(p, "ng").data;
  for (int i = 0; i < NN; i++) {
    uint64_t uk = (uint64_t)k[i], uj = (uint64_t)(int64_t)j[i];
    bool elt = u[i] < uk || uj > u[i];
    uint64_t er = umin(u[i], uk) + umax(uj, u[i]) + u[i] + u[i] / (uint64_t)(k[i] > 1 ? k[i] : 1)
                + (u[i] > 5 ? u[i] : uk) + umin(u[i], 0) + umax(u[i], 0) + u[i] % 7;
    CHECK(lt[i] == elt, "lt[%d]", i);
    CHECK(eq[i] == (u[i] == uk), "eq[%d]", i);
    CHECK(nn[i] && !ng[i], "u >= 0 [%d]", i);
    CHECK(r[i] == er, "r[%d] %llu vs %llu", i, (unsigned long long)r[i], (unsigned long long)er);
  }
  unsig_teardown(p);
  printf("unsigned ok\n");
  return 0;
}
