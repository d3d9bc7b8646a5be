/*
** deposit_demo.c -- runs the deposit pipeline once on random particles and prints the
** total current by both methods (scatter-add J, segment sums J2).
**   deposit_demo [particles] [cells]
*/
#include "deposit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
  deposit_config cfg = DEPOSIT_CONFIG_INIT;
  cfg.N = argc > 1 ? atoll(argv[1]) : 100000;
  cfg.n_cells = argc > 2 ? atoll(argv[2]) : 128;
  cfg.q = -1.0;
  deposit *p = NULL;
  char err[256];
  if (deposit_setup(&p, &cfg, err, sizeof err) != CNP_OK) {
    fprintf(stderr, "deposit_demo: %s\n", err);
    return 1;
  }
  cnp_array x = deposit_field(p, "x"), v = deposit_field(p, "v"), w = deposit_field(p, "w");
  if (x.backend != CNP_BACKEND_HOST) {
    fprintf(stderr, "deposit_demo: host backend only\n");
    return 1;
  }
  unsigned s = 1;
  for (int64_t i = 0; i < cfg.N; i++) {
    s = s * 1103515245u + 12345u;
    ((double *)x.data)[i] = (double)(s >> 8) / 16777216.0;
    ((double *)w.data)[i] = 1.0 / (double)cfg.N;
    for (int c = 0; c < 3; c++)
      ((double *)v.data)[c * cfg.N + i] = sin((double)(i * (c + 1)));
  }
  int st = deposit_step(p);
  if (st != CNP_OK || deposit_sync(p) != CNP_OK) {
    fprintf(stderr, "deposit_demo: step: %s\n", deposit_error(p));
    return 1;
  }
  cnp_array J = deposit_field(p, "J"), J2 = deposit_field(p, "J2");
  for (int c = 0; c < 3; c++) {
    double a = 0, b = 0;
    for (int64_t k = 0; k < cfg.n_cells; k++) {
      a += ((double *)J.data)[c * cfg.n_cells + k];
      b += ((double *)J2.data)[c * cfg.n_cells + k];
    }
    printf("J[%d] total: scatter-add %+.12f, segment sums %+.12f\n", c, a, b);
  }
  deposit_teardown(p);
  return 0;
}
