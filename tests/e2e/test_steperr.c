/*
** test_steperr.c -- the text of a step error: "steperr.cnp:12: byc = segments(cell, n_cells):
** cnp_segment_plan_build: ..." -- the statement quoted without its ';' (it once read
** "...n_cells);: cnp_segment_plan_build"), then the runtime's detail. In range, the sum.
*/
#include "steperr.h"
#include "e2e.h"

int main(void)
{
  steperr *p = NULL;
  char err[256];
  steperr_config cfg = STEPERR_CONFIG_INIT;
  cfg.N = 6;
  cfg.n_cells = 3;
  CHECK(steperr_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  cnp_array cell = steperr_field(p, "cell"), w = steperr_field(p, "w");
  for (int i = 0; i < 6; i++) {
    ((int64_t *)cell.data)[i] = i % 3;
    ((double *)w.data)[i] = 1.0 + i;
  }
  CHECK(steperr_step(p) == CNP_OK, "in range: %s", steperr_error(p));
  cnp_array rho = steperr_field(p, "rho");
  for (int k = 0; k < 3; k++)
    CHECK(((double *)rho.data)[k] == (1.0 + k) + (4.0 + k), "rho[%d] = %g", k, ((double *)rho.data)[k]);
  ((int64_t *)cell.data)[4] = 3;                   /* one past the last cell */
  int st = steperr_step(p);
  CHECK(st == CNP_ERANGE, "out of range gave %s", cnp_status_name((cnp_status)st));
  const char *want = "steperr.cnp:12: byc = segments(cell, n_cells): cnp_segment_plan_build: "
                     "keys[4] = 3 >= n_segments 3";
  CHECK(strcmp(steperr_error(p), want) == 0, "error text:\n  got  '%s'\n  want '%s'", steperr_error(p), want);
  steperr_teardown(p);
  printf("steperr: the step error reads '%s'\n", want);
  return 0;
}
