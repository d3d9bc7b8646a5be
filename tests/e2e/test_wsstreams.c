/*
** test_wsstreams.c -- wsstreams.cnp against a plain C reference: two streams, each step a
** compaction and a stable sort, sharing the pipeline's workspace. Built with the host unit
** (e2e.wsstreams), and with the CUDA unit (E2E_CUDA_UNIT): its host fallback here, and with
** E2E_BACKEND=cuda (e2e.wsstreams.gpu) on a GPU, where each step is a CUDA graph and the two
** would corrupt each other's scratch if they ran at once.
*/
#include "wsstreams.h"
#include "e2e.h"
#include "e2e_backend.h"

#define CAP 200000

typedef struct Side {
  int64_t n;
  double v[CAP];
  int64_t k[CAP];
} Side;

/* keep v >= lo (stable), key = f(v), stable counting sort by key (keys in [0, 1000]) */
static void ref_step(Side *s, double lo, int flip)
{
  static double v2[CAP];
  static int64_t k2[CAP], start[1002];
  int64_t n = 0;
  for (int64_t i = 0; i < s->n; i++)
    if (s->v[i] >= lo) {
      s->v[n] = s->v[i];
      s->k[n] = flip ? (int64_t)((1.0 - s->v[i]) * 1000.0) : (int64_t)(s->v[i] * 1000.0);
      n++;
    }
  s->n = n;
  memset(start, 0, sizeof start);
  for (int64_t i = 0; i < n; i++) start[s->k[i] + 1]++;
  for (int k = 0; k < 1001; k++) start[k + 1] += start[k];
  for (int64_t i = 0; i < n; i++) {
    int64_t j = start[s->k[i]]++;
    v2[j] = s->v[i];
    k2[j] = s->k[i];
  }
  memcpy(s->v, v2, sizeof(double) * (size_t)n);
  memcpy(s->k, k2, sizeof(int64_t) * (size_t)n);
}

static void compare(wsstreams *p, const char *dim, const char *vf, const char *kf,
                    const Side *s, int step)
{
  static double v[CAP];
  static int64_t k[CAP];
  CHECK(wsstreams_extent(p, dim) == s->n, "step %d: extent of %s %lld, reference %lld", step,
        dim, (long long)wsstreams_extent(p, dim), (long long)s->n);
  e2e_fetch(wsstreams_field(p, vf), vf, v);
  e2e_fetch(wsstreams_field(p, kf), kf, k);
  for (int64_t i = 0; i < s->n; i++) {
    CHECK(v[i] == s->v[i], "step %d: %s[%lld] = %.17g, reference %.17g", step, vf,
          (long long)i, v[i], s->v[i]);
    CHECK(k[i] == s->k[i], "step %d: %s[%lld] = %lld, reference %lld", step, kf, (long long)i,
          (long long)k[i], (long long)s->k[i]);
  }
}

int main(void)
{
  static Side A, B;
  uint64_t seed = 77;
  const char *small = getenv("CNP_GPU_SMALL");     /* compute-sanitizer runs: 1/10 */
  const int64_t n0 = small && small[0] == '1' ? CAP / 10 : CAP;
  A.n = B.n = n0;
  for (int64_t i = 0; i < n0; i++) {
    A.v[i] = e2e_rand(&seed);
    B.v[i] = e2e_rand(&seed);
  }
  wsstreams *p = NULL;
  char err[256];
  wsstreams_config cfg = WSSTREAMS_CONFIG_INIT;
  int skip = e2e_choose_backend("wsstreams", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = n0;
  cfg.M = n0;
  CHECK(wsstreams_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  CHECK(wsstreams_backend(p) == (e2e_cuda ? CNP_BACKEND_CUDA : CNP_BACKEND_HOST), "backend");
  e2e_put(wsstreams_field(p, "a"), "a", A.v);
  e2e_put(wsstreams_field(p, "b"), "b", B.v);
  for (int step = 0; step < 5; step++) {
    double lo = 0.05 * (step + 1);
    ref_step(&A, lo, 0);
    ref_step(&B, lo, 1);
    int st = wsstreams_step(p, lo);
    CHECK(st == CNP_OK, "step %d: %s (%s)", step, cnp_status_name((cnp_status)st),
          wsstreams_error(p));
    CHECK(wsstreams_sync(p) == CNP_OK, "sync");
    compare(p, "N", "a", "ka", &A, step);
    compare(p, "M", "b", "kb", &B, step);
  }
  wsstreams_stats s;
  wsstreams_stats_get(p, &s);
  CHECK(s.steps == 5, "steps %llu", (unsigned long long)s.steps);
  if (e2e_cuda)
    CHECK(s.graph_replays == 10 && s.host_syncs == 0, "graph replays %llu, host syncs %llu",
          (unsigned long long)s.graph_replays, (unsigned long long)s.host_syncs);
  wsstreams_teardown(p);
  printf("wsstreams (%s backend): two streams sharing the workspace match the reference "
         "(%lld and %lld rows left)\n", e2e_cuda ? "CUDA" : "host", (long long)A.n,
         (long long)B.n);
  return 0;
}
