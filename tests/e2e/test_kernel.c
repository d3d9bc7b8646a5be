/*
** test_kernel.c -- kernel.cnp on the host backend: the generated maps around the
** hand-written kernel's host fallback give y = 2 * ((x + 1) * factor + 0.5).
*/
#include "kcall.h"
#include "e2e.h"

int main(void)
{
  kcall *p = NULL;
  char err[256];
  kcall_config cfg = KCALL_CONFIG_INIT;
  cfg.N = 100;
  CHECK(kcall_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  double *x = kcall_field(p, "x").data;
  for (int i = 0; i < 100; i++) x[i] = i;
  CHECK(kcall_set_extent(p, "N", 60) == CNP_OK, "extent");
  CHECK(kcall_step(p, 3.0) == CNP_OK, "step: %s", kcall_error(p));
  const double *y = kcall_field(p, "y").data;
  for (int i = 0; i < 60; i++)
    CHECK(y[i] == 2.0 * ((i + 1.0) * 3.0 + 0.5), "y[%d] = %g", i, y[i]);
  x = kcall_field(p, "x").data;
  CHECK(x[60] == 60.0, "rows past the live extent untouched");
  kcall_stats s;
  kcall_stats_get(p, &s);
  CHECK(s.launches == 3, "2 kernels + 1 call: %llu", (unsigned long long)s.launches);
  kcall_teardown(p);
  printf("kernel: hand-written kernel's host fallback runs between generated maps\n");
  return 0;
}
