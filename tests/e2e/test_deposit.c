/*
** test_deposit.c -- end to end: examples/deposit/deposit.cnp (three-component current
** deposit, component-major fields). The scatter-add result J and the sort + segment-sum
** result J2 must both match a hand-written deposit, and the particles must come out
** stably sorted by cell.
**
** Built a second time with the CUDA unit (E2E_CUDA_UNIT): its host fallback here, and with
** E2E_BACKEND=cuda (ctest e2e.deposit.gpu) the CUDA backend, where the step is one CUDA
** graph (two kernels, atomic scatter-adds, sort, plan build, sums).
*/
#include "deposit.h"
#include "e2e.h"
#include "e2e_backend.h"

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
  int skip = e2e_choose_backend("deposit", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = CAP;
  cfg.n_cells = NC;
  cfg.q = Q;
  CHECK(deposit_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  CHECK(deposit_backend(p) == (e2e_cuda ? CNP_BACKEND_CUDA : CNP_BACKEND_HOST), "backend");
  e2e_put(deposit_field(p, "x"), "x", x);
  e2e_put(deposit_field(p, "w"), "w", w);
  e2e_put(deposit_field(p, "v"), "v", v);          /* (3, CAP), C order like v[3][CAP] */
  {
    static double stale[3][NC];
    stale[1][3] = 99.0;                            /* stale data must be cleared by step */
    e2e_put(deposit_field(p, "J"), "J", stale);
  }

  for (int rep = 0; rep < 2; rep++) {              /* twice: the second run sees sorted input */
    int st = deposit_step(p);
    CHECK(st == CNP_OK, "step: %s (%s)", cnp_status_name((cnp_status)st), deposit_error(p));
    CHECK(deposit_sync(p) == CNP_OK, "sync: %s", deposit_error(p));
    static double J1[3][NC], J2[3][NC];
    static int64_t cs[CAP];
    cnp_array J1v = deposit_field(p, "J");
    CHECK(J1v.ndim == 2 && J1v.shape[0] == 3 && J1v.shape[1] == NC, "J shape");
    e2e_fetch(J1v, "J", J1);
    e2e_fetch(deposit_field(p, "J2"), "J2", J2);
    for (int k = 0; k < 3; k++)
      for (int c = 0; c < NC; c++) {
        double a = J1[k][c], b = J2[k][c];
        CHECK(e2e_close(a, J[k][c], 1e-10), "J[%d, %d] = %.17g, reference %.17g", k, c, a, J[k][c]);
        CHECK(e2e_close(b, J[k][c], 1e-10), "J2[%d, %d] = %.17g, reference %.17g", k, c, b, J[k][c]);
      }
    e2e_fetch(deposit_field(p, "cell"), "cell", cs);
    for (int64_t i = 1; i < CAP; i++) CHECK(cs[i - 1] <= cs[i], "sorted by cell at %lld", (long long)i);
  }
  deposit_stats s;
  deposit_stats_get(p, &s);
  if (e2e_cuda) {                                  /* the step is one CUDA graph */
    CHECK(s.launches == 1 && s.graph_replays == 2 && s.host_syncs == 0,
          "launches %llu, graph replays %llu, host syncs %llu", (unsigned long long)s.launches,
          (unsigned long long)s.graph_replays, (unsigned long long)s.host_syncs);
  } else {
    /* 2 kernels (clear J; cell + jv + scatter fused) + sort + plan build + 3 component sums */
    CHECK(s.launches == 7, "launches %llu", (unsigned long long)s.launches);
  }
  deposit_teardown(p);
  printf("deposit (%s backend): scatter-add and segment sums match the reference\n",
         e2e_cuda ? "CUDA" : "host");
  return 0;
}
