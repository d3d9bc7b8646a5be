/*
** test_zero.c -- zero.cnp against a plain C reference: `zero(acc, c);` clears the fields each
** step before the maps add into them, so every step gives the same result whatever the fields
** held before (and the garbage written into them here between steps). Built with the host
** unit (e2e.zero), and with the CUDA unit (E2E_CUDA_UNIT): its host fallback here, and with
** E2E_BACKEND=cuda (e2e.zero.gpu) on a GPU, where the step is one CUDA graph.
*/
#include "zero.h"
#include "e2e.h"
#include "e2e_backend.h"

#define ROWS 1000

int main(void)
{
  static double x[ROWS], acc[ROWS], junk[ROWS];
  static int32_t c[3 * ROWS], cjunk[3 * ROWS];
  uint64_t seed = 5;
  for (int64_t i = 0; i < ROWS; i++) {
    x[i] = e2e_rand(&seed);
    junk[i] = 1e300 * e2e_rand(&seed);
  }
  for (int64_t i = 0; i < 3 * ROWS; i++) cjunk[i] = (int32_t)(i * 7 + 3);
  zero *p = NULL;
  char err[256];
  zero_config cfg = ZERO_CONFIG_INIT;
  int skip = e2e_choose_backend("zero", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = ROWS;
  CHECK(zero_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  e2e_put(zero_field(p, "x"), "x", x);
  for (int step = 0; step < 3; step++) {
    double w = 0.5 + step;
    e2e_put(zero_field(p, "acc"), "acc", junk);       /* whatever they held: zero clears it */
    e2e_put(zero_field(p, "c"), "c", cjunk);
    int st = zero_step(p, w);
    CHECK(st == CNP_OK, "step %d: %s (%s)", step, cnp_status_name((cnp_status)st), zero_error(p));
    CHECK(zero_sync(p) == CNP_OK, "sync");
    e2e_fetch(zero_field(p, "acc"), "acc", acc);
    e2e_fetch(zero_field(p, "c"), "c", c);
    for (int64_t i = 0; i < ROWS; i++) {
      CHECK(acc[i] == w * x[i], "step %d: acc[%lld] = %.17g, reference %.17g", step, (long long)i,
            acc[i], w * x[i]);
      CHECK(c[i] == 1 && c[ROWS + i] == 0 && c[2 * ROWS + i] == (int32_t)i,
            "step %d: c[:, %lld] = (%d, %d, %d), reference (1, 0, %lld)", step, (long long)i, c[i],
            c[ROWS + i], c[2 * ROWS + i], (long long)i);
    }
  }
  zero_stats s;
  zero_stats_get(p, &s);
  CHECK(s.steps == 3, "steps %llu", (unsigned long long)s.steps);
  if (e2e_cuda)
    CHECK(s.graph_replays == 3 && s.host_syncs == 0, "graph replays %llu, host syncs %llu",
          (unsigned long long)s.graph_replays, (unsigned long long)s.host_syncs);
  else
    CHECK(s.launches == 3, "launches %llu: two memsets and the kernel", (unsigned long long)s.launches);
  zero_teardown(p);
  printf("zero (%s backend): the zeroed fields match the reference\n", e2e_cuda ? "CUDA" : "host");
  return 0;
}
