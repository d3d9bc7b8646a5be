/*
** es1d_rt.c -- the complete step of examples/pic/es1d.cnp written as separate libcnp runtime
** calls (the benchmark's "runtime calls" variant, es1d_rt_impl): what a programmer using the
** runtime without cnpc would write. Element-wise work is plain OpenMP loops; the sort by node,
** the segment sums of the deposit, the Gauss-law scan and the reductions are one runtime call
** each (cnp_sort_by_key, cnp_segment_plan_build/_sum, cnp_scan, cnp_reduce), on the host
** backend. The arithmetic of every particle is es1d.cnp's (docs/physics.md, "The generated
** step"); the deposit goes through the sort and segment sums (es1d.cnp's earlier form, before
** its scatter-adds were privatized), so every history is deterministic for any thread count.
*/
#include "es1d_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnp/cnp.h"

typedef struct rt_state {
  es1d_params p;
  int64_t n, nc, steps, hist;
  double L, dx, idx, dt, wq, m;
  double *x, *v, *w0, *w1, *kp;  /* N each: position, velocity, CIC weights, m(vo^2+vn^2)/4 */
  int64_t *node;                 /* N */
  double *r0, *r1, *rho, *rdx, *Eh, *E, *e2, *one; /* n_cells each (one: 1 value) */
  double *t, *fe, *ke, *q, *rhoh;
  cnp_array ax, av, aw0, aw1, akp, anode, ar0, ar1, ardx, aEh, ae2, aone;
  cnp_workspace *ws;
  cnp_segment_plan *plan;
} rt_state;

static int say(char *err, size_t errlen, const char *what, cnp_status st)
{
  if (err && errlen)
    snprintf(err, errlen, "es1d (runtime calls): %s: %s (%s)", what, cnp_status_name(st),
             cnp_last_error());
  return -1;
}

static void rt_teardown(void *state)
{
  rt_state *s = state;
  if (!s) return;
  cnp_segment_plan_destroy(s->plan);
  cnp_workspace_destroy(s->ws);
  free(s->x); free(s->v); free(s->w0); free(s->w1); free(s->kp); free(s->node);
  free(s->r0); free(s->r1); free(s->rho); free(s->rdx); free(s->Eh); free(s->E); free(s->e2);
  free(s->one); free(s->t); free(s->fe); free(s->ke); free(s->q); free(s->rhoh);
  free(s);
}

static cnp_status wrap(cnp_array *a, void *data, cnp_dtype t, int64_t n)
{
  return cnp_array_wrap(a, data, CNP_BACKEND_HOST, 0, t, 1, &n, NULL);
}

/* The node left of x and the weights of its CIC deposit: es1d.cnp's expressions. */
static inline void weights(const rt_state *s, int64_t i)
{
  double u = s->x[i] * ((double)s->nc / s->L);
  int64_t j = (int64_t)u < s->nc - 1 ? (int64_t)u : s->nc - 1;
  double f = u - (double)j;
  s->node[i] = j;
  s->w0[i] = 1.0 - f;
  s->w1[i] = f;
}

/* Sort by node, sum the weights per node: rw for the next solve. */
static cnp_status deposit(rt_state *s)
{
  cnp_array vals[4] = {s->ax, s->av, s->aw0, s->aw1};
  cnp_status st = cnp_sort_by_key(&s->anode, NULL, vals, 4, s->nc, s->ws, NULL);
  if (st == CNP_OK) st = cnp_segment_plan_build(s->plan, &s->anode, NULL);
  if (st == CNP_OK) st = cnp_segment_plan_sum(s->plan, &s->aw0, &s->ar0, NULL);
  if (st == CNP_OK) st = cnp_segment_plan_sum(s->plan, &s->aw1, &s->ar1, NULL);
  return st;
}

static int rt_setup(void **state, const es1d_params *p, char *err, size_t errlen)
{
  *state = NULL;
  if (es1d_check_params(p, err, errlen)) return -1;
  rt_state *s = calloc(1, sizeof *s);
  if (!s) return say(err, errlen, "setup", CNP_ENOMEM);
  s->p = *p;
  s->n = p->n_particles;
  s->nc = p->n_cells;
  s->hist = p->max_steps > 0 ? p->max_steps : 1;
  s->L = p->length;
  s->dt = p->dt;
  s->wq = -(double)s->nc / (double)s->n;
  s->m = s->L / (double)s->n;
  size_t n = (size_t)s->n, nc = (size_t)s->nc, h = (size_t)s->hist;
  s->x = malloc(sizeof(double) * n); s->v = malloc(sizeof(double) * n);
  s->w0 = malloc(sizeof(double) * n); s->w1 = malloc(sizeof(double) * n);
  s->kp = malloc(sizeof(double) * n); s->node = malloc(sizeof(int64_t) * n);
  s->r0 = malloc(sizeof(double) * nc); s->r1 = malloc(sizeof(double) * nc);
  s->rho = malloc(sizeof(double) * nc); s->rdx = malloc(sizeof(double) * nc);
  s->Eh = malloc(sizeof(double) * nc); s->E = malloc(sizeof(double) * nc);
  s->e2 = malloc(sizeof(double) * nc); s->one = malloc(sizeof(double));
  s->t = malloc(sizeof(double) * h); s->fe = malloc(sizeof(double) * h);
  s->ke = malloc(sizeof(double) * h); s->q = malloc(sizeof(double) * h);
  s->rhoh = p->record_rho ? malloc(sizeof(double) * h * nc) : NULL;
  if (!s->x || !s->v || !s->w0 || !s->w1 || !s->kp || !s->node || !s->r0 || !s->r1 || !s->rho ||
      !s->rdx || !s->Eh || !s->E || !s->e2 || !s->one || !s->t || !s->fe || !s->ke || !s->q ||
      (p->record_rho && !s->rhoh)) {
    rt_teardown(s);
    return say(err, errlen, "setup", CNP_ENOMEM);
  }
  cnp_status st = CNP_OK;
  if (st == CNP_OK) st = wrap(&s->ax, s->x, CNP_FLOAT64, s->n);
  if (st == CNP_OK) st = wrap(&s->av, s->v, CNP_FLOAT64, s->n);
  if (st == CNP_OK) st = wrap(&s->aw0, s->w0, CNP_FLOAT64, s->n);
  if (st == CNP_OK) st = wrap(&s->aw1, s->w1, CNP_FLOAT64, s->n);
  if (st == CNP_OK) st = wrap(&s->akp, s->kp, CNP_FLOAT64, s->n);
  if (st == CNP_OK) st = wrap(&s->anode, s->node, CNP_INT64, s->n);
  if (st == CNP_OK) st = wrap(&s->ar0, s->r0, CNP_FLOAT64, s->nc);
  if (st == CNP_OK) st = wrap(&s->ar1, s->r1, CNP_FLOAT64, s->nc);
  if (st == CNP_OK) st = wrap(&s->ardx, s->rdx, CNP_FLOAT64, s->nc);
  if (st == CNP_OK) st = wrap(&s->aEh, s->Eh, CNP_FLOAT64, s->nc);
  if (st == CNP_OK) st = wrap(&s->ae2, s->e2, CNP_FLOAT64, s->nc);
  if (st == CNP_OK) st = wrap(&s->aone, s->one, CNP_FLOAT64, 1);
  if (st == CNP_OK) st = cnp_workspace_create(&s->ws, CNP_BACKEND_HOST, 0, s->n, s->nc, 8);
  if (st == CNP_OK) st = cnp_segment_plan_create(&s->plan, CNP_BACKEND_HOST, 0, s->n, s->nc);
  if (st != CNP_OK) {
    rt_teardown(s);
    return say(err, errlen, "setup", st);
  }
  es1d_load(p, s->x, s->v);
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < s->n; i++) weights(s, i);
  if ((st = deposit(s)) != CNP_OK) {
    rt_teardown(s);
    return say(err, errlen, "the deposit of x^0", st);
  }
  *state = s;
  return 0;
}

static int rt_one(rt_state *s, char *err, size_t errlen)
{
  const int64_t nc = s->nc, n = s->steps;
  const double dxc = s->L / (double)nc, L = s->L, dt = s->dt;
  const int first = n == 0;
  double charge = 0.0, mean, fe, ke;
  cnp_status st;
  for (int64_t c = 0; c < nc; c++) {   /* rho over the ion background */
    s->rho[c] = 1.0 + s->wq * (s->r0[c] + s->r1[(c + nc - 1) % nc]);
    s->rdx[c] = s->rho[c] * dxc;
  }
  if ((st = cnp_reduce(&s->ardx, CNP_REDUCE_SUM, &s->aone, NULL, s->ws, NULL))) return say(err, errlen, "charge", st);
  charge = s->one[0];
  if ((st = cnp_scan(&s->ardx, &s->aEh, CNP_SCAN_INCLUSIVE, NULL, s->ws, NULL))) return say(err, errlen, "scan", st);
  if ((st = cnp_reduce(&s->aEh, CNP_REDUCE_SUM, &s->aone, NULL, s->ws, NULL))) return say(err, errlen, "mean", st);
  mean = s->one[0] / (double)nc;
  for (int64_t c = 0; c < nc; c++) {
    s->E[c] = 0.5 * (s->Eh[(c + nc - 1) % nc] + s->Eh[c]) - mean;
    s->e2[c] = 0.5 * dxc * (s->E[c] * s->E[c]);
  }
  if ((st = cnp_reduce(&s->ae2, CNP_REDUCE_SUM, &s->aone, NULL, s->ws, NULL))) return say(err, errlen, "field energy", st);
  fe = s->one[0];
  const double *E = s->E;
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < s->n; i++) {   /* gather, push, move, wrap, the next deposit's weights */
    double u = s->x[i] * ((double)nc / L);
    int64_t j = (int64_t)u < nc - 1 ? (int64_t)u : nc - 1;
    double f = u - (double)j;
    int64_t j1 = j + 1 == nc ? 0 : j + 1;
    double e = E[j] + f * (E[j1] - E[j]);
    double vo = first ? s->v[i] + 0.5 * dt * e : s->v[i];
    double vn = vo - dt * e;
    s->kp[i] = 0.25 * s->m * (vo * vo + vn * vn);
    double xa = s->x[i] + dt * vn;
    if (xa < 0.0 || xa >= L) {
      xa = xa - L * floor(xa / L);
      xa = xa >= L ? 0.0 : xa;
    }
    s->x[i] = xa;
    s->v[i] = vn;
    weights(s, i);
  }
  if ((st = cnp_reduce(&s->akp, CNP_REDUCE_SUM, &s->aone, NULL, s->ws, NULL))) return say(err, errlen, "kinetic energy", st);
  ke = s->one[0];
  if ((st = deposit(s)) != CNP_OK) return say(err, errlen, "deposit", st);
  s->t[n] = (double)n * dt;
  s->fe[n] = fe;
  s->ke[n] = ke;
  s->q[n] = charge;
  if (s->rhoh) memcpy(s->rhoh + n * nc, s->rho, sizeof(double) * (size_t)nc);
  s->steps = n + 1;
  return 0;
}

static int rt_step(void *state, int64_t steps, char *err, size_t errlen)
{
  rt_state *s = state;
  for (int64_t i = 0; i < steps; i++) {
    if (s->steps >= s->p.max_steps) {
      if (err && errlen) snprintf(err, errlen, "es1d (runtime calls): the histories are full");
      return -1;
    }
    if (rt_one(s, err, errlen)) return -1;
  }
  return 0;
}

static int rt_histories(void *state, es1d_history *h, char *err, size_t errlen)
{
  (void)err;
  (void)errlen;
  const rt_state *s = state;
  *h = ES1D_HISTORY_OF(s);
  return 0;
}

static int rt_particles(void *state, double *x, double *v, char *err, size_t errlen)
{
  (void)err;
  (void)errlen;
  rt_state *s = state;
  memcpy(x, s->x, sizeof(double) * (size_t)s->n);
  memcpy(v, s->v, sizeof(double) * (size_t)s->n);
  return 0;
}

const es1d_impl es1d_rt_impl = {"runtime calls (examples/pic/es1d_rt.c)", rt_setup, rt_step,
                                rt_histories, rt_particles, rt_teardown};
