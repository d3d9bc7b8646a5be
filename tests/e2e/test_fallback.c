/*
** test_fallback.c -- fallback.cnp on data the fast path handles (keys in [0, n_cells)) and
** on data it must hand to the runtime (a live negative key): both give a stable sort of
** the live rows and per-segment sums that drop negative keys.
*/
#include "fallback.h"
#include "e2e.h"

#define CAP 1000
#define NC 16

static void run(fallback *p, int with_negative)
{
  static double x[CAP], w[CAP], ref[NC];
  uint64_t seed = 7 + (uint64_t)with_negative;
  int64_t n = 0;
  memset(ref, 0, sizeof ref);
  CHECK(fallback_set_extent(p, "N", CAP) == CNP_OK, "extent");
  for (int64_t i = 0; i < CAP; i++) {
    x[i] = e2e_rand(&seed) * NC;
    if (i % 7 == 0) x[i] = -10.0;                  /* dead */
    if (with_negative && i % 11 == 0) x[i] = -0.5; /* live, key -1 */
    w[i] = (double)i;
    if (x[i] > -5.0) {
      n++;
      if (x[i] >= 0) ref[(int)floor(x[i])] += w[i];
    }
  }
  memcpy(fallback_field(p, "x").data, x, sizeof x);
  memcpy(fallback_field(p, "w").data, w, sizeof w);
  int st = fallback_step(p);
  CHECK(st == CNP_OK, "step: %s", fallback_error(p));
  CHECK(fallback_extent(p, "N") == n, "live %lld vs %lld", (long long)fallback_extent(p, "N"), (long long)n);
  cnp_array K = fallback_field(p, "key"), W = fallback_field(p, "w"), S = fallback_field(p, "s");
  const int64_t *k = K.data;
  const double *ws = W.data, *s = S.data;
  for (int64_t i = 1; i < n; i++) {
    CHECK(k[i - 1] <= k[i], "sorted at %lld", (long long)i);
    if (k[i - 1] == k[i]) CHECK(ws[i - 1] < ws[i], "stable at %lld", (long long)i);
  }
  CHECK(!with_negative || k[0] == -1, "negative keys first");
  for (int c = 0; c < NC; c++) CHECK(s[c] == ref[c], "sum %d: %g vs %g", c, s[c], ref[c]);
}

int main(void)
{
  fallback *p = NULL;
  char err[256];
  fallback_config cfg = FALLBACK_CONFIG_INIT;
  cfg.N = CAP;
  cfg.n_cells = NC;
  CHECK(fallback_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  run(p, 0);
  fallback_stats s;
  fallback_stats_get(p, &s);
  CHECK(s.launches == 1, "fast path: 1 kernel (the sum inside), got %llu", (unsigned long long)s.launches);
  run(p, 1);
  fallback_stats_get(p, &s);
  CHECK(s.launches == 5, "fallback: kernel, compact, sort, build, sum, got %llu",
        (unsigned long long)s.launches);
  run(p, 0);
  fallback_teardown(p);
  printf("fallback: fast path and runtime fallback agree\n");
  return 0;
}
