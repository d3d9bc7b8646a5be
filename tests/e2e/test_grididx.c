/*
** test_grididx.c -- tests/e2e/grididx.cnp built with -DCNP_DEBUG_BOUNDS: a grid map's index
** used on a field over a dim is checked (in range: the values; n > N: CNP_ERANGE).
*/
#include "grididx.h"
#include "e2e.h"

int main(void)
{
  for (int over = 0; over < 2; over++) {
    grididx *p = NULL;
    char err[256];
    grididx_config cfg = GRIDIDX_CONFIG_INIT;
    cfg.n = 6;
    cfg.N = over ? 5 : 6;
    CHECK(grididx_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
    cnp_array x = grididx_field(p, "x");
    for (int64_t i = 0; i < cfg.N; i++) ((double *)x.data)[i] = (double)i;
    int st = grididx_step(p);
    if (over) {
      CHECK(st == CNP_ERANGE, "n > N gave %s", cnp_status_name((cnp_status)st));
      CHECK(strstr(grididx_error(p), "an index is out of range"), "error says why: %s", grididx_error(p));
    } else {
      CHECK(st == CNP_OK, "in range: %s", grididx_error(p));
      cnp_array a = grididx_field(p, "a");
      for (int i = 0; i < 6; i++) CHECK(((double *)a.data)[i] == 2.0 * i, "a[%d]", i);
    }
    grididx_teardown(p);
  }
  printf("grididx ok\n");
  return 0;
}
