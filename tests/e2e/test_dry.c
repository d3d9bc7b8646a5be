/*
** test_dry.c -- dry.cnp (the fast path's dry first pass: conditional writes, a component
** read before it is written, f32, an i32 key, a written field outside the compaction)
** against a plain C version of the same steps, bit for bit: the live rows compacted and
** stably sorted by key, the per-key sums of q in sorted order, and the fields the
** compaction does not move (live, age) holding the maps' results at the old rows.
*/
#include "dry.h"
#include "e2e.h"

#define CAP 6000
#define NC 32
#define STEPS 6

static double x[CAP], q[CAP], s[NC];
static float u[2][CAP];
static uint8_t live[CAP];
static int64_t age[CAP];
static int32_t k[CAP];

/* One step of dry.cnp on the reference arrays; returns the new live count. */
static int64_t ref_step(int64_t n, double dt)
{
  static double tx[CAP], tq[CAP];
  static float tu[2][CAP];
  static int32_t tk[CAP];
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++) {
    if (x[i] > 0.5) u[1][i] = u[1][i] * 0.5f;
    x[i] = x[i] + dt * (double)u[1][i];
    live[i] = 1;
    if (x[i] >= 1.0 || x[i] < 0.0) live[i] = 0;
    age[i] = (int64_t)(x[i] * 1e2);
    k[i] = (int32_t)(x[i] * (double)NC);
  }
  for (int c = 0; c < NC; c++)          /* stable: compaction, then a stable sort by key */
    for (int64_t i = 0; i < n; i++)
      if (live[i] && k[i] == c) {
        tx[m] = x[i], tu[0][m] = u[0][i], tu[1][m] = u[1][i], tq[m] = q[i], tk[m] = k[i];
        m++;
      }
  memcpy(x, tx, sizeof(double) * (size_t)m);
  memcpy(u[0], tu[0], sizeof(float) * (size_t)m);
  memcpy(u[1], tu[1], sizeof(float) * (size_t)m);
  memcpy(q, tq, sizeof(double) * (size_t)m);
  memcpy(k, tk, sizeof(int32_t) * (size_t)m);
  for (int c = 0; c < NC; c++) {
    double acc = 0;
    for (int64_t i = 0; i < m; i++)
      if (k[i] == c) acc += q[i];
    s[c] = acc;
  }
  return m;
}

int main(void)
{
  dry *p = NULL;
  char err[256];
  dry_config cfg = DRY_CONFIG_INIT;
  cfg.N = CAP;
  cfg.n_cells = NC;
  CHECK(dry_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  uint64_t seed = 11;
  for (int64_t i = 0; i < CAP; i++) {
    x[i] = e2e_rand(&seed);
    u[0][i] = (float)(2.0 * e2e_rand(&seed) - 1.0);
    u[1][i] = (float)(2.0 * e2e_rand(&seed) - 1.0);
    q[i] = (double)i + 0.25;
  }
  cnp_array X = dry_field(p, "x"), U = dry_field(p, "u"), Q = dry_field(p, "q");
  memcpy(X.data, x, sizeof x);
  memcpy(Q.data, q, sizeof q);
  for (int c = 0; c < 2; c++) memcpy((char *)U.data + c * U.strides[0], u[c], sizeof u[c]);
  int64_t n = CAP;
  for (int st = 0; st < STEPS; st++) {
    double dt = 0.03 + 0.01 * st;
    int64_t n_old = n;
    n = ref_step(n, dt);
    CHECK(dry_step(p, dt) == CNP_OK, "step %d: %s", st, dry_error(p));
    CHECK(dry_extent(p, "N") == n, "step %d: live %lld vs %lld", st,
          (long long)dry_extent(p, "N"), (long long)n);
    X = dry_field(p, "x"), U = dry_field(p, "u"), Q = dry_field(p, "q");
    cnp_array K = dry_field(p, "k"), L = dry_field(p, "live"), A = dry_field(p, "age");
    cnp_array S = dry_field(p, "s");
    for (int64_t i = 0; i < n; i++) {
      CHECK(((double *)X.data)[i] == x[i], "step %d: x[%lld]", st, (long long)i);
      CHECK(((double *)Q.data)[i] == q[i], "step %d: q[%lld]", st, (long long)i);
      CHECK(((int32_t *)K.data)[i] == k[i], "step %d: k[%lld]", st, (long long)i);
      for (int c = 0; c < 2; c++)
        CHECK(((float *)((char *)U.data + c * U.strides[0]))[i] == u[c][i], "step %d: u[%d, %lld]",
              st, c, (long long)i);
    }
    for (int64_t i = 0; i < n_old; i++) {   /* not compacted: the maps' results, old rows */
      CHECK(((uint8_t *)L.data)[i] == live[i], "step %d: live[%lld]", st, (long long)i);
      CHECK(((int64_t *)A.data)[i] == age[i], "step %d: age[%lld]", st, (long long)i);
    }
    for (int c = 0; c < NC; c++)
      CHECK(((double *)S.data)[c] == s[c], "step %d: s[%d] %g vs %g", st, c, ((double *)S.data)[c], s[c]);
  }
  CHECK(n < CAP && n > CAP / 4, "some rows left, some stayed: %lld", (long long)n);
  dry_stats stats;
  dry_stats_get(p, &stats);
  CHECK(stats.launches == 1, "fast path: 1 kernel (the sum inside), got %llu", (unsigned long long)stats.launches);
  dry_teardown(p);
  printf("dry: dry first pass matches the reference over %d steps (%lld rows left)\n", STEPS,
         (long long)n);
  return 0;
}
