/*
** test_twonames.c -- pipelines a, a_h and a_k0 in one program: a's unit has internal symbols
** (the object type a_h, the kernel a_k0, their functions) named like the other pipelines'
** public API; they are static, so the three link and run side by side.
*/
#include "a.h"
#include "a_h.h"
#include "a_k0.h"
#include "e2e.h"

int main(void) {
  char err[256];
  a *pa; a_h *ph; a_k0 *pk;
  a_config ca = A_CONFIG_INIT; ca.N = 4;
  a_h_config ch = A_H_CONFIG_INIT; ch.N = 5;
  a_k0_config ck = A_K0_CONFIG_INIT; ck.N = 6;
  CHECK(a_setup(&pa, &ca, err, sizeof err) == 0, "a: %s", err);
  CHECK(a_h_setup(&ph, &ch, err, sizeof err) == 0, "a_h: %s", err);
  CHECK(a_k0_setup(&pk, &ck, err, sizeof err) == 0, "a_k0: %s", err);
  CHECK(a_step(pa, 1.0) == 0 && a_h_step(ph, 2.0) == 0 && a_k0_step(pk, 3.0) == 0, "steps");
  CHECK(a_step(pa, 1.0) == 0, "step");
  const double *xa = a_field(pa, "x").data, *xh = a_h_field(ph, "x").data, *xk = a_k0_field(pk, "x").data;
  CHECK(a_extent(pa, "N") == 4 && a_h_extent(ph, "N") == 5 && a_k0_extent(pk, "N") == 6, "extents");
  for (int i = 0; i < 4; i++) CHECK(xa[i] == 2.0, "a x[%d] %g", i, xa[i]);
  for (int i = 0; i < 5; i++) CHECK(xh[i] == 2.0, "a_h x[%d] %g", i, xh[i]);
  for (int i = 0; i < 6; i++) CHECK(xk[i] == 3.0, "a_k0 x[%d] %g", i, xk[i]);
  a_teardown(pa); a_h_teardown(ph); a_k0_teardown(pk);
  printf("twonames ok\n");
  return 0;
}
