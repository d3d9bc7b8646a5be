/*
** test_deposit.c -- end to end: examples/deposit/deposit.cnp (three-component current
** deposit, component-major fields). The scatter-add result J and the sort + segment-sum
** result J2 must both match a hand-written deposit, and the particles must come out
** stably sorted by cell.
*/
#include "deposit.h"
#include "e2e.h"

#define CAP 5000
#define NC 37
#define Q 0.5

int main(void)
{
  static double x[CAP], v[3][CAP], w[CAP], J[3][NC];
  static int64_t cell[CAP];
  uint64_t seed = 12345;
  for (int64_t i = 0; i < CAP; i++) {
    x[i] = 1.2 * e2e_rand(&seed) - 0.1;            /* some outside [0, 1): clamped cells */
    for (int c = 0; c < 3; c++) v[c][i] = 2.0 * e2e_rand(&seed) - 1.0;
    w[i] = e2e_rand(&seed);
  }
  for (int64_t i = 0; i < CAP; i++) {              /* reference deposit */
    int64_t c = (int64_t)(x[i] * (double)NC);
    cell[i] = c < 0 ? 0 : c > NC - 1 ? NC - 1 : c;
    for (int k = 0; k < 3; k++) J[k][cell[i]] += Q * w[i] * v[k][i];
  }

  deposit *p = NULL;
  char err[256];
  deposit_config cfg = DEPOSIT_CONFIG_INIT;
  cfg.N = CAP;
  cfg.n_cells = NC;
  cfg.q = Q;
  CHECK(deposit_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  cnp_array X = deposit_field(p, "x"), V = deposit_field(p, "v"), W = deposit_field(p, "w");
  memcpy(X.data, x, sizeof x);
  memcpy(W.data, w, sizeof w);
  for (int64_t i = 0; i < CAP; i++)
    for (int c = 0; c < 3; c++) *e2e_at(V.data, V.strides, c, i) = v[c][i];
  cnp_array Jf = deposit_field(p, "J");
  *e2e_at(Jf.data, Jf.strides, 1, 3) = 99.0;       /* stale data must be cleared by step */

  for (int rep = 0; rep < 2; rep++) {              /* twice: the second run sees sorted input */
    int st = deposit_step(p);
    CHECK(st == CNP_OK, "step: %s (%s)", cnp_status_name((cnp_status)st), deposit_error(p));
    deposit_sync(p);
    cnp_array J1 = deposit_field(p, "J"), J2 = deposit_field(p, "J2");
    CHECK(J1.ndim == 2 && J1.shape[0] == 3 && J1.shape[1] == NC, "J shape");
    for (int k = 0; k < 3; k++)
      for (int c = 0; c < NC; c++) {
        double a = *e2e_at(J1.data, J1.strides, k, c), b = *e2e_at(J2.data, J2.strides, k, c);
        CHECK(e2e_close(a, J[k][c], 1e-10), "J[%d, %d] = %.17g, reference %.17g", k, c, a, J[k][c]);
        CHECK(e2e_close(b, J[k][c], 1e-10), "J2[%d, %d] = %.17g, reference %.17g", k, c, b, J[k][c]);
      }
    cnp_array C = deposit_field(p, "cell");
    const int64_t *cs = (const int64_t *)C.data;
    for (int64_t i = 1; i < CAP; i++) CHECK(cs[i - 1] <= cs[i], "sorted by cell at %lld", (long long)i);
  }
  deposit_stats s;
  deposit_stats_get(p, &s);
  /* 2 kernels (clear J; cell + jv + scatter fused) + sort + plan build + 3 component sums */
  CHECK(s.launches == 7, "launches %llu", (unsigned long long)s.launches);
  deposit_teardown(p);
  printf("deposit: scatter-add and segment sums match the reference\n");
  return 0;
}
