/*
** test_cadence.c -- cadence.cnp against a plain C reference: `step ... every 3 offset 1` and
** `every 2` run only on their calls, and the block `every 4 offset 2` (stats.launches per call
** says which ran), `repeat` runs
** its block n_sweeps times with the `swap` ping-pong (an odd count: the names end swapped), a
** reduction and a history inside the cadenced step.
*/
#include "cadence.h"
#include "e2e.h"
#define MM 1000
#define SWEEPS 3
#define CALLS 10

int main(void) {
  cadence *p; char err[256];
  cadence_config cfg = CADENCE_CONFIG_INIT;
  cfg.n_sweeps = SWEEPS; cfg.m = MM;
  CHECK(cadence_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  static double u[MM], w[MM], f[MM], res_h[CALLS];
  static int64_t c[MM];
  uint64_t seed = 5;
  for (int i = 0; i < MM; i++) {
    ((double *)cadence_field(p, "u").data)[i] = u[i] = e2e_rand(&seed);
    ((double *)cadence_field(p, "f").data)[i] = f[i] = e2e_rand(&seed) * 0.1;
  }
  int n_res = 0;
  for (int call = 0; call < CALLS; call++) {
    CHECK(cadence_step(p) == 0, "step: %s", cadence_error(p));
    CHECK(cadence_sync(p) == 0, "sync");
    uint64_t launches = 1;
    for (int i = 0; i < MM; i++) c[i] += 1;
    if (call % 4 == 2) {   /* the block: every 4 offset 2 */
      for (int i = 0; i < MM; i++) c[i] += 10;
      launches += 1;
    }
    if (call % 3 == 1) {
      for (int k = 0; k < SWEEPS; k++) {
        for (int i = 0; i < MM; i++)
          w[i] = 0.5 * ((i > 0 ? u[i - 1] : 0.0) + (i < MM - 1 ? u[i + 1] : 0.0) + f[i]);
        for (int i = 0; i < MM; i++) { double t = u[i]; u[i] = w[i]; w[i] = t; }
      }
      double r = -INFINITY;
      for (int i = 0; i < MM; i++) { double d = fabs(u[i] - w[i]); r = d > r ? d : r; }
      res_h[n_res++] = r;
      double g;
      CHECK(cadence_scalar(p, "res", &g) == 0 && g == r, "call %d: res %.17g vs %.17g", call, g, r);
      launches += SWEEPS + 2;   /* the sweeps, the reducing map, the record */
    }
    if (call % 2 == 0) {
      for (int i = 0; i < MM; i++) f[i] *= 0.5;
      launches += 1;
    }
    cadence_stats st;
    cadence_stats_get(p, &st);
    CHECK(st.launches == launches, "call %d: %llu launches, expected %llu", call,
          (unsigned long long)st.launches, (unsigned long long)launches);
    for (int i = 0; i < MM; i++) {
      CHECK(((int64_t *)cadence_field(p, "c").data)[i] == c[i], "call %d: c[%d]", call, i);
      CHECK(((double *)cadence_field(p, "u").data)[i] == u[i], "call %d: u[%d]", call, i);
      CHECK(((double *)cadence_field(p, "w").data)[i] == w[i], "call %d: w[%d]", call, i);
      CHECK(((double *)cadence_field(p, "f").data)[i] == f[i], "call %d: f[%d]", call, i);
    }
  }
  double h[CALLS];
  CHECK(cadence_history(p, "hres", h, CALLS) == n_res, "history: %d values", n_res);
  for (int j = 0; j < n_res; j++) CHECK(h[j] == res_h[j], "history[%d]", j);
  printf("cadence ok: relax ran %d of %d calls\n", n_res, CALLS);
  cadence_teardown(p);
  return 0;
}
