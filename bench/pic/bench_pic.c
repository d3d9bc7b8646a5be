/*
** bench_pic.c -- the PIC step of examples/pic/pic.cnp three ways on the host backend:
**   fused    the code cnpc generates (one loop for both maps, mask produced inside it);
**   unfused  the same step written by hand as one loop per statement (the `let` becomes a
**            temporary array) followed by the same libcnp calls (compact, sort, plan, sum);
**   NumPy    bench/pic/pic_numpy.py (run separately by bench/pic/run).
** Both C variants start from the same particles and must end with the same state.
**
**   bench_pic [particles] [steps]      prints ms per step (wall and CPU time)
*/
#define _POSIX_C_SOURCE 200809L
#include "pic.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NC 1024
#define DT 1e-4
#define QM (-1.0)

static double clock_s(clockid_t id)
{
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void init(int64_t n, double *x, double *v, double *w, double *E)
{
  uint64_t s = 42;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x[i] = (double)(s >> 11) * (1.0 / 9007199254740992.0);
    for (int c = 0; c < 3; c++) {
      s = s * 6364136223846793005ULL + 1442695040888963407ULL;
      v[c * n + i] = (double)(s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
    }
    w[i] = 1.0;
  }
  for (int k = 0; k < NC; k++) E[k] = sin(0.1 * k);
}

/* ---- unfused: one loop per statement, then the runtime calls -------------------------- */

typedef struct Unfused {
  int64_t cap, n;
  cnp_array x, v, w, alive, cell, E, rho, c;       /* c: the `let c` as a temporary array */
  cnp_workspace *ws;
  cnp_segment_plan *plan;
  cnp_array views[6];
} Unfused;

static cnp_array row(const cnp_array *a, int64_t comp, int64_t cap, int64_t n)
{
  cnp_array r = *a;
  size_t item = cnp_dtype_size(a->dtype);
  r.data = (char *)a->data + (size_t)(comp * cap) * item;
  r.ndim = 1;
  r.shape[0] = n;
  r.strides[0] = (int64_t)item;
  r.flags = 0;
  return r;
}

static int unfused_step(Unfused *u, double dt)
{
  const int64_t n = u->n;
  double *x = u->x.data, *v = u->v.data, *E = u->E.data;
  int64_t *cell = u->cell.data, *c = u->c.data;
  uint8_t *alive = u->alive.data;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) {
    int64_t k = (int64_t)(x[i] * (double)NC);
    c[i] = k < 0 ? 0 : k > NC - 1 ? NC - 1 : k;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) v[i] = v[i] + dt * QM * E[c[i]];
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) x[i] = x[i] + dt * v[i];
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) alive[i] = x[i] >= 0.0 && x[i] < 1.0;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) cell[i] = (int64_t)(x[i] * (double)NC);
  cnp_array mask = row(&u->alive, 0, u->cap, n);
  int nv = 0;
  u->views[nv++] = row(&u->x, 0, u->cap, n);
  for (int k = 0; k < 3; k++) u->views[nv++] = row(&u->v, k, u->cap, n);
  u->views[nv++] = row(&u->w, 0, u->cap, n);
  u->views[nv++] = row(&u->cell, 0, u->cap, n);
  int64_t live = 0;
  int st = cnp_compact_by_mask(&mask, u->views, nv, &live, u->ws, NULL);
  if (st) return st;
  u->n = live;
  cnp_array key = row(&u->cell, 0, u->cap, live);
  nv = 0;
  u->views[nv++] = row(&u->x, 0, u->cap, live);
  for (int k = 0; k < 3; k++) u->views[nv++] = row(&u->v, k, u->cap, live);
  u->views[nv++] = row(&u->w, 0, u->cap, live);
  if ((st = cnp_sort_by_key(&key, NULL, u->views, nv, 0, u->ws, NULL))) return st;
  if ((st = cnp_segment_plan_build(u->plan, &key, NULL))) return st;
  cnp_array wv = row(&u->w, 0, u->cap, live);
  return cnp_segment_plan_sum(u->plan, &wv, &u->rho, NULL);
}

static int unfused_setup(Unfused *u, int64_t cap)
{
  memset(u, 0, sizeof *u);
  u->cap = u->n = cap;
  const int64_t s1[1] = {cap}, s3[2] = {3, cap}, sc[1] = {NC};
  int st = cnp_array_alloc_on(&u->x, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, s1, CNP_ORDER_C, 0);
  st = st ? st : cnp_array_alloc_on(&u->v, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, s3, CNP_ORDER_C, 0);
  st = st ? st : cnp_array_alloc_on(&u->w, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, s1, CNP_ORDER_C, 0);
  st = st ? st : cnp_array_alloc_on(&u->alive, CNP_BACKEND_HOST, 0, CNP_BOOL, 1, s1, CNP_ORDER_C, 0);
  st = st ? st : cnp_array_alloc_on(&u->cell, CNP_BACKEND_HOST, 0, CNP_INT64, 1, s1, CNP_ORDER_C, 0);
  st = st ? st : cnp_array_alloc_on(&u->c, CNP_BACKEND_HOST, 0, CNP_INT64, 1, s1, CNP_ORDER_C, 0);
  st = st ? st : cnp_array_alloc_on(&u->E, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, sc, CNP_ORDER_C, 0);
  st = st ? st : cnp_array_alloc_on(&u->rho, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, sc, CNP_ORDER_C, 0);
  st = st ? st : cnp_workspace_create(&u->ws, CNP_BACKEND_HOST, 0, cap, 0, 16);
  st = st ? st : cnp_segment_plan_create(&u->plan, CNP_BACKEND_HOST, 0, cap, NC);
  return st;
}

static void unfused_teardown(Unfused *u)
{
  cnp_array *a[] = {&u->x, &u->v, &u->w, &u->alive, &u->cell, &u->c, &u->E, &u->rho};
  for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) cnp_array_free(a[i]);
  cnp_workspace_destroy(u->ws);
  cnp_segment_plan_destroy(u->plan);
}

int main(int argc, char **argv)
{
  int64_t n = argc > 1 ? atoll(argv[1]) : 1000000;
  int steps = argc > 2 ? atoi(argv[2]) : 10;
  double *x = malloc(sizeof(double) * (size_t)n), *v = malloc(sizeof(double) * 3 * (size_t)n);
  double *w = malloc(sizeof(double) * (size_t)n), E[NC];
  init(n, x, v, w, E);

  pic_config cfg = PIC_CONFIG_INIT;
  cfg.N = n;
  cfg.n_cells = NC;
  cfg.qm = QM;
  pic *p = NULL;
  char err[256];
  if (pic_setup(&p, &cfg, err, sizeof err) != CNP_OK) {
    fprintf(stderr, "bench_pic: %s\n", err);
    return 1;
  }
  cnp_array fx = pic_field(p, "x"), fv = pic_field(p, "v"), fw = pic_field(p, "w");
  cnp_array fE = pic_field(p, "E");
  memcpy(fx.data, x, sizeof(double) * (size_t)n);
  memcpy(fv.data, v, sizeof(double) * 3 * (size_t)n);
  memcpy(fw.data, w, sizeof(double) * (size_t)n);
  memcpy(fE.data, E, sizeof E);
  Unfused u;
  if (unfused_setup(&u, n) != CNP_OK) {
    fprintf(stderr, "bench_pic: unfused setup: %s\n", cnp_last_error());
    return 1;
  }
  memcpy(u.x.data, x, sizeof(double) * (size_t)n);
  memcpy(u.v.data, v, sizeof(double) * 3 * (size_t)n);
  memcpy(u.w.data, w, sizeof(double) * (size_t)n);
  memcpy(u.E.data, E, sizeof E);

  /* one warm-up step each (first touch of workspaces), not timed */
  if (pic_step(p, DT) != CNP_OK || unfused_step(&u, DT) != CNP_OK) {
    fprintf(stderr, "bench_pic: warm-up: %s %s\n", pic_error(p), cnp_last_error());
    return 1;
  }
  double fw_wall = 0, fw_cpu = 0, uf_wall = 0, uf_cpu = 0;
  for (int s = 0; s < steps; s++) {                /* interleaved: same machine load */
    double a = clock_s(CLOCK_MONOTONIC), b = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (pic_step(p, DT) != CNP_OK) {
      fprintf(stderr, "bench_pic: %s\n", pic_error(p));
      return 1;
    }
    fw_wall += clock_s(CLOCK_MONOTONIC) - a;
    fw_cpu += clock_s(CLOCK_PROCESS_CPUTIME_ID) - b;
    a = clock_s(CLOCK_MONOTONIC);
    b = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    if (unfused_step(&u, DT) != CNP_OK) {
      fprintf(stderr, "bench_pic: unfused: %s\n", cnp_last_error());
      return 1;
    }
    uf_wall += clock_s(CLOCK_MONOTONIC) - a;
    uf_cpu += clock_s(CLOCK_PROCESS_CPUTIME_ID) - b;
  }
  /* same physics: same live count, same charge per cell */
  int64_t live = pic_extent(p, "N");
  const double *r1 = pic_field(p, "rho").data, *r2 = u.rho.data;
  double diff = 0;
  for (int k = 0; k < NC; k++) diff = fmax(diff, fabs(r1[k] - r2[k]));
  if (live != u.n || diff > 1e-9) {
    fprintf(stderr, "bench_pic: fused and unfused disagree (live %lld vs %lld, rho diff %g)\n",
            (long long)live, (long long)u.n, diff);
    return 1;
  }
  printf("particles %lld  steps %d (+1 warm-up)  live at end %lld\n", (long long)n, steps,
         (long long)live);
  printf("fused   (cnpc)   %9.2f ms/step wall  %9.2f ms/step cpu\n", 1e3 * fw_wall / steps, 1e3 * fw_cpu / steps);
  printf("unfused (by hand)%9.2f ms/step wall  %9.2f ms/step cpu\n", 1e3 * uf_wall / steps, 1e3 * uf_cpu / steps);
  printf("speed-up fused vs unfused: %.2fx wall, %.2fx cpu\n", uf_wall / fw_wall, uf_cpu / fw_cpu);
  pic_teardown(p);
  unfused_teardown(&u);
  free(x); free(v); free(w);
  return 0;
}
