/*
** test_pic.c -- end to end: examples/pic/pic.cnp compiled by cnpc, its host unit built with
** -Wall -Wextra -Werror, run for 60 steps and compared step by step with a straightforward
** hand-written C version of the same physics (push, absorb, stable sort by cell, charge
** per cell). Also checks the snapshot, the stats, the extent API and setup errors.
**
** Built a second time with the CUDA unit (pic.cu, E2E_CUDA_UNIT): run as is, the CUDA unit's
** host fallback; with E2E_BACKEND=cuda (ctest e2e.pic.gpu), the CUDA backend, where the push
** step is one CUDA graph (compaction, sort, plan build and sum over device-held counts,
** docs/codegen.md "CUDA graphs"): the same reference, step by step.
*/
#define _POSIX_C_SOURCE 200809L   /* setenv */
#include "pic.h"
#include "e2e.h"
#include "e2e_backend.h"

#define CAP 20000
#define NC 64
#define QM (-1.0)

/* ---- the reference: plain arrays, plain loops ------------------------------------------ */

typedef struct Ref {
  int64_t n;
  double x[CAP], v[3][CAP], w[CAP];
  int64_t cell[CAP];
  double E[NC], rho[NC];
} Ref;

static void ref_step(Ref *r, double dt)
{
  static uint8_t alive[CAP];
  for (int64_t i = 0; i < r->n; i++) {
    int64_t c = (int64_t)(r->x[i] * (double)NC);
    c = c < 0 ? 0 : c > NC - 1 ? NC - 1 : c;
    r->v[0][i] = r->v[0][i] + dt * QM * r->E[c];
    r->x[i] = r->x[i] + dt * r->v[0][i];
    alive[i] = r->x[i] >= 0.0 && r->x[i] < 1.0;
    r->cell[i] = (int64_t)(r->x[i] * (double)NC);
  }
  int64_t n = 0;                                   /* stable compaction */
  for (int64_t i = 0; i < r->n; i++)
    if (alive[i]) {
      r->x[n] = r->x[i];
      for (int c = 0; c < 3; c++) r->v[c][n] = r->v[c][i];
      r->w[n] = r->w[i];
      r->cell[n] = r->cell[i];
      n++;
    }
  r->n = n;
  static int64_t start[NC + 1];                    /* stable counting sort by cell */
  static double x2[CAP], v2[3][CAP], w2[CAP];
  static int64_t c2[CAP];
  memset(start, 0, sizeof start);
  for (int64_t i = 0; i < n; i++) start[r->cell[i] + 1]++;
  for (int k = 0; k < NC; k++) start[k + 1] += start[k];
  for (int64_t i = 0; i < n; i++) {
    int64_t j = start[r->cell[i]]++;
    x2[j] = r->x[i];
    for (int c = 0; c < 3; c++) v2[c][j] = r->v[c][i];
    w2[j] = r->w[i];
    c2[j] = r->cell[i];
  }
  memcpy(r->x, x2, sizeof(double) * (size_t)n);
  for (int c = 0; c < 3; c++) memcpy(r->v[c], v2[c], sizeof(double) * (size_t)n);
  memcpy(r->w, w2, sizeof(double) * (size_t)n);
  memcpy(r->cell, c2, sizeof(int64_t) * (size_t)n);
  for (int k = 0; k < NC; k++) r->rho[k] = 0.0;    /* charge per cell, in row order */
  for (int64_t i = 0; i < n; i++) r->rho[r->cell[i]] += r->w[i];
}

/* The "field solver" both sides use between steps: E from the charge imbalance. */
static void solve_field(const double *rho, double *E)
{
  double mean = 0.0, acc = 0.0;
  for (int k = 0; k < NC; k++) mean += rho[k];
  mean /= NC;
  for (int k = 0; k < NC; k++) {
    acc += (rho[k] - mean) / (double)NC;
    E[k] = acc * 1e-3;
  }
}

/* ---- checks ------------------------------------------------------------------------------ */

static void compare(pic *p, const Ref *r, int step)
{
  static double x[CAP], v[3 * CAP], w[CAP], rho[NC];
  static int64_t cell[CAP];
  const int64_t n = r->n;
  CHECK(pic_extent(p, "N") == n, "step %d: live count %lld, reference %lld", step,
        (long long)pic_extent(p, "N"), (long long)n);
  cnp_array xv = pic_field(p, "x"), vv = pic_field(p, "v");
  CHECK(xv.shape[0] == n && vv.shape[0] == 3 && vv.shape[1] == n, "view shapes");
  e2e_fetch(xv, "x", x);
  e2e_fetch(vv, "v", v);                               /* v[c * n + i] */
  e2e_fetch(pic_field(p, "w"), "w", w);
  e2e_fetch(pic_field(p, "cell"), "cell", cell);
  e2e_fetch(pic_field(p, "rho"), "rho", rho);
  for (int64_t i = 0; i < n; i++) {
    CHECK(e2e_close(x[i], r->x[i], 1e-12), "step %d: x[%lld] %.17g vs %.17g", step,
          (long long)i, x[i], r->x[i]);
    CHECK(cell[i] == r->cell[i], "step %d: cell[%lld]", step, (long long)i);
    CHECK(w[i] == r->w[i], "step %d: w[%lld]", step, (long long)i);
    for (int c = 0; c < 3; c++)
      CHECK(e2e_close(v[c * n + i], r->v[c][i], 1e-12), "step %d: v[%d, %lld]", step, c,
            (long long)i);
  }
  for (int k = 0; k < NC; k++)
    CHECK(e2e_close(rho[k], r->rho[k], 1e-12), "step %d: rho[%d] %.17g vs %.17g", step, k,
          rho[k], r->rho[k]);
}

static void check_setup_errors(void)
{
  pic *p = NULL;
  char err[256];
  pic_config cfg = PIC_CONFIG_INIT;
  cfg.N = 0;
  cfg.n_cells = NC;
  CHECK(pic_setup(&p, &cfg, err, sizeof err) == CNP_EINVAL && p == NULL, "N = 0 accepted");
  CHECK(strstr(err, "pic.cnp:") && strstr(err, "dim N") && strstr(err, "cfg.N"), "message: %s", err);
  cfg.N = 10;
  cfg.n_cells = -3;
  CHECK(pic_setup(&p, &cfg, err, sizeof err) == CNP_EINVAL, "n_cells < 0 accepted");
  CHECK(strstr(err, "field E") && strstr(err, "n_cells"), "message: %s", err);
  cfg.n_cells = NC;
  cfg.backend = CNP_BACKEND_CUDA;
  cfg.strict = 1;
#ifdef E2E_CUDA_UNIT
  if (cnp_cuda_available(NULL)) {                  /* the CUDA unit on a GPU: strict works */
    CHECK(pic_setup(&p, &cfg, err, sizeof err) == CNP_OK, "strict CUDA: %s", err);
    CHECK(pic_backend(p) == CNP_BACKEND_CUDA, "strict CUDA backend");
    pic_teardown(p);
    p = NULL;
    cfg.backend = CNP_BACKEND_HOST;                /* the checks below on the host backend */
  } else
#endif
  {
    CHECK(pic_setup(&p, &cfg, err, sizeof err) == CNP_EUNAVAILABLE, "strict CUDA without it");
    CHECK(strstr(err, "CUDA"), "message: %s", err);
  }
  cfg.strict = 0;                                  /* non-strict: falls back to host */
  CHECK(pic_setup(&p, &cfg, err, sizeof err) == CNP_OK, "fallback: %s", err);
  CHECK(pic_backend(p) == CNP_BACKEND_HOST, "fallback backend");
  CHECK(pic_field(p, "nope").data == NULL, "unknown field");
  CHECK(pic_extent(p, "nope") == -1, "unknown dim");
  CHECK(pic_set_extent(p, "N", 11) == CNP_ERANGE, "extent over capacity");
  cnp_array snap;
  CHECK(pic_snapshot(p, "out", &snap) == CNP_ESTATE, "snapshot before any copy");
  pic_teardown(p);
  pic_teardown(NULL);
  p = NULL;
  /* no place for the handle: an error, not a pipeline set up and leaked */
  CHECK(pic_setup(NULL, &cfg, err, sizeof err) == CNP_EINVAL && strstr(err, "p is NULL"), "p NULL: %s", err);
  cfg.backend = (cnp_backend)77;
  CHECK(pic_setup(&p, &cfg, err, sizeof err) == CNP_EINVAL && p == NULL && strstr(err, "unknown backend"),
        "backend 77: %s", err);
  /* CNP_BACKEND forces the choice, and the pipeline's arrays, streams and events all follow it */
  cfg.backend = CNP_BACKEND_CUDA;
  cfg.strict = 1;
  setenv("CNP_BACKEND", "host", 1);
  CHECK(pic_setup(&p, &cfg, err, sizeof err) == CNP_OK && pic_backend(p) == CNP_BACKEND_HOST,
        "CNP_BACKEND=host: %s", err);
  CHECK(pic_step(p, 0.01) == CNP_OK, "CNP_BACKEND=host step: %s", pic_error(p));
  pic_teardown(p);
  p = NULL;
  if (!cnp_cuda_available(NULL)) {   /* forced CUDA without a device: non-strict falls back */
    setenv("CNP_BACKEND", "cuda", 1);
    cfg.backend = CNP_BACKEND_HOST;
    cfg.strict = 0;
    CHECK(pic_setup(&p, &cfg, err, sizeof err) == CNP_OK && pic_backend(p) == CNP_BACKEND_HOST,
          "CNP_BACKEND=cuda, non-strict, no device: %s", err);
    CHECK(pic_step(p, 0.01) == CNP_OK, "CNP_BACKEND=cuda step: %s", pic_error(p));
    pic_teardown(p);
    p = NULL;
    cfg.strict = 1;
    CHECK(pic_setup(&p, &cfg, err, sizeof err) == CNP_EUNAVAILABLE && p == NULL, "CNP_BACKEND=cuda strict: %s", err);
  }
  unsetenv("CNP_BACKEND");
}

int main(void)
{
  static Ref r;
  uint64_t seed = 0x9e3779b97f4a7c15ULL;
  r.n = CAP;
  for (int64_t i = 0; i < CAP; i++) {
    r.x[i] = e2e_rand(&seed);
    for (int c = 0; c < 3; c++) r.v[c][i] = 2.0 * e2e_rand(&seed) - 1.0;
    r.w[i] = 0.5 + e2e_rand(&seed);
  }
  for (int k = 0; k < NC; k++) r.E[k] = 0.0;

  check_setup_errors();

  pic *p = NULL;
  char err[256];
  pic_config cfg = PIC_CONFIG_INIT;
  int skip = e2e_choose_backend("pic", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = CAP;
  cfg.n_cells = NC;
  cfg.qm = QM;
  CHECK(pic_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  CHECK(pic_backend(p) == (e2e_cuda ? CNP_BACKEND_CUDA : CNP_BACKEND_HOST), "backend");
  CHECK(pic_extent(p, "N") == CAP, "initial extent is the capacity");
  e2e_put(pic_field(p, "x"), "x", r.x);
  e2e_put(pic_field(p, "v"), "v", r.v);            /* (3, CAP): contiguous at full extent */
  e2e_put(pic_field(p, "w"), "w", r.w);

  /* CNP_GPU_SMALL=1 (scripts/gpu-check under compute-sanitizer): fewer steps */
  const char *small = getenv("CNP_GPU_SMALL");
  const int steps = small && small[0] == '1' ? 6 : 60;
  const double dt = 0.02;
  for (int step = 0; step < steps; step++) {
    e2e_put(pic_field(p, "E"), "E", r.E);
    ref_step(&r, dt);
    int st = pic_step(p, dt);
    CHECK(st == CNP_OK, "step %d: %s (%s)", step, cnp_status_name((cnp_status)st), pic_error(p));
    CHECK(pic_sync(p) == CNP_OK, "sync");
    compare(p, &r, step);
    cnp_array snap;
    double rho[NC];
    CHECK(pic_snapshot(p, "out", &snap) == CNP_OK, "snapshot");
    CHECK(snap.backend == CNP_BACKEND_HOST, "snapshot on the host");
    e2e_fetch(pic_field(p, "rho"), "rho", rho);
    CHECK(snap.shape[0] == NC && memcmp(snap.data, rho, sizeof rho) == 0, "snapshot holds rho");
    solve_field(r.rho, r.E);
  }
  CHECK(r.n < CAP && r.n > CAP / 4, "some particles left, most stayed (%lld)", (long long)r.n);
  pic_stats s;
  pic_stats_get(p, &s);
  CHECK(s.steps == (uint64_t)steps, "steps %llu", (unsigned long long)s.steps);
  if (e2e_cuda) {
    /* the push step is one CUDA graph replay a step: one launch, no host synchronization
    ** in the step (the extent reads of compare() count outside it) */
    CHECK(s.graph_replays == (uint64_t)steps, "graph replays %llu",
          (unsigned long long)s.graph_replays);
    CHECK(s.launches == 1 && s.total_launches == (uint64_t)steps, "launches %llu",
          (unsigned long long)s.launches);
    CHECK(s.host_syncs == 0 && s.total_host_syncs >= (uint64_t)steps, "host syncs %llu (total %llu)",
          (unsigned long long)s.host_syncs, (unsigned long long)s.total_host_syncs);
  } else {
    /* kernel k0: 2 maps + compact + counting sort + the segment sum, all in one */
    CHECK(s.launches == 1 && s.total_launches == (uint64_t)steps, "launches %llu",
          (unsigned long long)s.launches);
    CHECK(s.host_syncs == 0 && s.graph_replays == 0, "host syncs on the host backend");
  }
  pic_teardown(p);
  printf("pic (%s backend): %d steps match the reference (%lld particles left)\n",
         e2e_cuda ? "CUDA" : "host", steps, (long long)r.n);
  return 0;
}
