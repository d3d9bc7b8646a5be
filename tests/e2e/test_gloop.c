/*
** test_gloop.c -- gloop.cnp against a plain C reference: K = 3 Jacobi sweeps with a swap per
** sweep (the names end swapped after each call), the largest change, f halved on the calls
** c with c % 2 == 1 (an every block: one graph per pattern on CUDA), a compaction and rows
** appended after it, and on call 5 more rows than the capacity holds: CNP_EOVERFLOW from
** step() on the host, from sync() after a CUDA graph replay (the rows that fit added either
** way, the extent clamped). Host: bit for bit. On a GPU (E2E_BACKEND=cuda, the CUDA unit):
** u, w within 1e-14 (nvcc contracts 0.5 * (l + r) + dt * f into an fma), the rest exactly;
** each of the two steps one graph launch, no host synchronization.
*/
#include <math.h>
#include <string.h>

#include "gloop.h"
#include "e2e.h"
#include "e2e_backend.h"
#define MM 1500
#define CAP 4000
#define N0 3000
#define K 3
#define CALLS 8

static double u[MM], w[MM], f[MM], gu[MM], gw[MM];
static double x[CAP], gx[CAP];
static int64_t id[CAP], gid[CAP];

int main(void) {
  uint64_t seed = 3;
  gloop *p; char err[256];
  gloop_config cfg = GLOOP_CONFIG_INIT;
  int skip = e2e_choose_backend("gloop", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = CAP; cfg.m = MM; cfg.n_sweeps = K;
  CHECK(gloop_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  for (int i = 0; i < MM; i++) { u[i] = e2e_rand(&seed); w[i] = 0.0; f[i] = e2e_rand(&seed) - 0.5; }
  for (int i = 0; i < CAP; i++) { x[i] = e2e_rand(&seed) * 0.9; id[i] = i; }
  e2e_put(gloop_field(p, "u"), "u", u);
  e2e_put(gloop_field(p, "w"), "w", w);
  e2e_put(gloop_field(p, "f"), "f", f);
  e2e_put(gloop_field(p, "x"), "x", x);
  e2e_put(gloop_field(p, "id"), "id", id);
  CHECK(gloop_set_extent(p, "N", N0) == 0, "set_extent");
  int64_t n = N0;
  int overflowed = 0;
  int64_t done = 0;   /* stats.steps: a call that fails in step() (the host's overflow) does not count */
  for (int call = 0; call < CALLS; call++) {
    const double dt = 0.05 + 0.01 * call;
    const int64_t add = call == 5 ? 5000 : 40 + 10 * call;
    const int st = gloop_step(p, dt, add);
    const int sy = gloop_sync(p);
    const int64_t done_before = done;
    if (st == CNP_OK) done++;
    /* the reference */
    for (int sw = 0; sw < K; sw++) {
      for (int i = 0; i < MM; i++) {
        double l = i > 0 ? u[i - 1] : 0.0, r = i < MM - 1 ? u[i + 1] : 0.0;
        w[i] = 0.5 * (l + r) + dt * f[i];
      }
      for (int i = 0; i < MM; i++) { double t = u[i]; u[i] = w[i]; w[i] = t; }
    }
    double res = -INFINITY;
    for (int i = 0; i < MM; i++) if (fabs(u[i] - w[i]) > res) res = fabs(u[i] - w[i]);
    if (done_before % 2 == 1)   /* every 2 offset 1, on stats.steps: the calls that completed */
      for (int i = 0; i < MM; i++) f[i] *= 0.5;
    int64_t k2 = 0;
    for (int64_t i = 0; i < n; i++) {
      x[i] += dt;
      if (x[i] < 1.0) { x[k2] = x[i]; id[k2] = id[i]; k2++; }
    }
    n = k2;
    const int64_t room = CAP - n, got = add < room ? add : room;
    for (int64_t k = 0; k < got; k++) { x[n + k] = 0.001 * (double)k; id[n + k] = (n + k) * 1000 + k; }
    n += got;
    if (got < add) {   /* host: from step(); a CUDA graph: from the next sync() */
      overflowed = 1;
      CHECK((st == CNP_EOVERFLOW && sy == CNP_OK) || (e2e_cuda && st == CNP_OK && sy == CNP_EOVERFLOW),
            "call %d: step %d, sync %d: expected CNP_EOVERFLOW from one of them", call, st, sy);
      CHECK(strstr(gloop_error(p), "append N: more rows than its capacity") != NULL, "call %d: %s", call,
            gloop_error(p));
      printf("gloop: call %d over capacity (%s): %s\n", call, st ? "step" : "sync", gloop_error(p));
    } else {
      CHECK(st == 0 && sy == 0, "call %d: step %d sync %d: %s", call, st, sy, gloop_error(p));
    }
    /* compare */
    double g;
    CHECK(gloop_scalar(p, "res", &g) == 0, "res");
    CHECK(e2e_cuda ? e2e_close(g, res, 1e-12) : g == res, "call %d: res %.17g vs %.17g", call, g, res);
    CHECK(gloop_extent(p, "N") == n, "call %d: extent %lld vs %lld", call, (long long)gloop_extent(p, "N"),
          (long long)n);
    e2e_fetch(gloop_field(p, "u"), "u", gu);
    e2e_fetch(gloop_field(p, "w"), "w", gw);
    for (int i = 0; i < MM; i++) {
      CHECK(e2e_cuda ? e2e_close(gu[i], u[i], 1e-14) : gu[i] == u[i], "call %d: u[%d] %.17g vs %.17g", call, i,
            gu[i], u[i]);
      CHECK(e2e_cuda ? e2e_close(gw[i], w[i], 1e-14) : gw[i] == w[i], "call %d: w[%d]", call, i);
      if (e2e_cuda) u[i] = gu[i], w[i] = gw[i];   /* go on from the device's values */
    }
    e2e_fetch(gloop_field(p, "x"), "x", gx);
    e2e_fetch(gloop_field(p, "id"), "id", gid);
    for (int64_t i = 0; i < n; i++) {
      CHECK(gx[i] == x[i], "call %d: x[%lld] %.17g vs %.17g", call, (long long)i, gx[i], x[i]);
      CHECK(gid[i] == id[i], "call %d: id[%lld] %lld vs %lld", call, (long long)i, (long long)gid[i],
            (long long)id[i]);
    }
    gloop_stats stt;
    gloop_stats_get(p, &stt);
    if (e2e_cuda && stt.graph_replays > 0)
      CHECK(stt.launches == 2 && stt.host_syncs == 0, "call %d: %llu launches, %llu host syncs (a graph per step)", call,
            (unsigned long long)stt.launches, (unsigned long long)stt.host_syncs);
  }
  CHECK(overflowed, "an overflow was tested");
  gloop_stats stt;
  gloop_stats_get(p, &stt);
  printf("gloop ok (%s backend): %lld rows, %llu graph launches\n", e2e_cuda ? "CUDA" : "host", (long long)n,
         (unsigned long long)stt.graph_replays);
  gloop_teardown(p);
  return 0;
}
