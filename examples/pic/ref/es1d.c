/*
** es1d.c -- the hand-written complete 1D electrostatic PIC step (es1d.h has the model).
**
** The way an HPC programmer would write it: one particle loop per step that gathers, pushes,
** moves, wraps and deposits (x and v are read once and written once: 32 bytes per particle),
** private per-chunk charge grids instead of atomics, and the O(n_cells) field solve done by
** one thread inside the same parallel region.
*/
#include "es1d.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ES1D_PI 3.14159265358979323846

/* The node left of x and x's fraction of the way to the next one. x is in [0, L), but
** x * (n_cells / L) can round up to n_cells: then f = 1 puts all the weight on node
** n_cells, which is node 0 again. */
static inline int64_t node(double x, double idx, int64_t nc, double *f)
{
  double u = x * idx;
  int64_t j = (int64_t)u;
  if (j >= nc) j = nc - 1;
  *f = u - (double)j;
  return j;
}

struct es1d {
  es1d_params p;
  int64_t n, nc, chunk, nchunks, steps;
  double L, dx, idx, dt, qmdt;   /* qmdt = (q/m) dt = -dt */
  double wq;                     /* charge density of one particle's unit weight: -nc/N */
  double m;                      /* mass of one particle: L/N */
  double *x, *v;                 /* N each */
  double *rhoc;                  /* nchunks rows of nc+1 (the last node folds onto node 0) */
  double *kec;                   /* per-chunk kinetic-energy partial sums */
  double *rho, *Eh, *E;          /* nc, nc, nc+1 (E[nc] = E[0]: branch-free gather) */
  double *t, *fe, *ke, *q, *rhoh;/* histories */
};

static int fail(char *err, size_t len, const char *fmt, ...)
{
  if (err && len) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* ---- quiet start ---------------------------------------------------------------------- */

/* The inverse of the standard normal CDF: Acklam's rational approximation (relative error
** 1.15e-9) and one Halley step on erfc, which brings it to about 1e-15. */
static double norm_icdf(double p)
{
  static const double a[6] = {-3.969683028665376e+01, 2.209460984245205e+02,
                              -2.759285104469687e+02, 1.383577518672690e+02,
                              -3.066479806614716e+01, 2.506628277459239e+00};
  static const double b[5] = {-5.447609879822406e+01, 1.615858368580409e+02,
                              -1.556989798598866e+02, 6.680131188771972e+01,
                              -1.328068155288572e+01};
  static const double c[6] = {-7.784894002430293e-03, -3.223964580411365e-01,
                              -2.400758277161838e+00, -2.549732539343734e+00,
                              4.374664141464968e+00,  2.938163982698783e+00};
  static const double d[4] = {7.784695709041462e-03, 3.224671290700398e-01,
                              2.445134137142996e+00, 3.754408661907416e+00};
  double x;
  if (p < 0.02425) {
    double q = sqrt(-2 * log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p > 1 - 0.02425) {
    double q = sqrt(-2 * log(1 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else {
    double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  double e = 0.5 * erfc(-x / sqrt(2.0)) - p;
  double u = e * sqrt(2 * ES1D_PI) * exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

/* Point i of the base-2 van der Corput sequence of 2^bits points, centred in its stratum. */
static double vdc(uint64_t i, int bits)
{
  uint64_t r = 0;
  for (int k = 0; k < bits; k++, i >>= 1) r = (r << 1) | (i & 1);
  return ((double)r + 0.5) / (double)((uint64_t)1 << bits);
}

static uint64_t splitmix(uint64_t *s)
{
  uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static double uniform(uint64_t *s) /* (0, 1) */
{
  return ((double)(splitmix(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double wrap(double x, double L)
{
  if (x < 0 || x >= L) {
    x -= L * floor(x / L);
    if (x >= L) x = 0; /* x was a tiny negative number: x + L rounded to L */
  }
  return x;
}

void es1d_load(const es1d_params *p, double *x, double *v)
{
  const int64_t n = p->n_particles;
  const double L = p->length;
  const int beams = p->v0 != 0.0 ? 2 : 1;
  const int64_t per = n / beams; /* particles per beam */
  const double k = 2 * ES1D_PI * p->mode / L;
  int bits = 0;
  while (((int64_t)1 << bits) < per) bits++;
  uint64_t seed = p->seed;
  /* x holds x0 and v the unit normal g for now; the quiet start depends only on i (so it
  ** runs in parallel, first-touching the pages of the threads that push them), the random one
  ** on one sequence */
  if (p->quiet) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; i++) {
      int64_t b = i / beams;         /* index within the beam; beams interleave */
      x[i] = ((double)b + 0.5) * L / (double)per;
      v[i] = norm_icdf(vdc((uint64_t)b, bits));
    }
  } else {
    for (int64_t i = 0; i < n; i++) {
      x[i] = uniform(&seed) * L;
      double u1 = uniform(&seed), u2 = uniform(&seed);
      v[i] = sqrt(-2 * log(u1)) * cos(2 * ES1D_PI * u2);
    }
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) {
    double sign = (beams == 2 && (i & 1)) ? -1.0 : 1.0, x0 = x[i];
    /* displacement -(a/k) sin(k x0) makes the density 1 + a cos(k x) to first order */
    double xd = k > 0 ? x0 - p->amplitude / k * sin(k * x0) : x0;
    x[i] = wrap(xd, L);
    v[i] = (beams == 2 ? sign * p->v0 : 0.0) + p->vth * v[i];
  }
}

/* ---- the step ------------------------------------------------------------------------- */

/* Deposit chunk c of the particles into its own grid row (CIC onto nodes j and j+1). */
static void deposit_chunk(es1d *s, int64_t c)
{
  double *restrict r = s->rhoc + c * (s->nc + 1);
  const double *restrict x = s->x;
  const double idx = s->idx;
  int64_t lo = c * s->chunk, hi = lo + s->chunk < s->n ? lo + s->chunk : s->n;
  memset(r, 0, sizeof(double) * (size_t)(s->nc + 1));
  for (int64_t i = lo; i < hi; i++) {
    double f;
    int64_t j = node(x[i], idx, s->nc, &f);
    r[j] += 1.0 - f;
    r[j + 1] += f;
  }
}

/* rho from the chunk grids (in chunk order), E by Gauss's law, field energy and charge. */
static void solve(es1d *s, double *fe, double *q)
{
  const int64_t nc = s->nc, rows = s->nchunks, w = nc + 1;
  double *rho = s->rho, *Eh = s->Eh, *E = s->E;
  for (int64_t j = 0; j < nc; j++) rho[j] = 0.0;
  for (int64_t c = 0; c < rows; c++) {
    const double *r = s->rhoc + c * w;
    for (int64_t j = 0; j < nc; j++) rho[j] += r[j];
    rho[0] += r[nc];
  }
  double acc = 0.0, mean = 0.0, charge = 0.0;
  for (int64_t j = 0; j < nc; j++) {
    rho[j] = 1.0 + s->wq * rho[j];       /* ion background + electrons */
    charge += rho[j];
    acc += rho[j] * s->dx;               /* the scan: E at x_{j+1/2} */
    Eh[j] = acc;
    mean += acc;
  }
  mean /= (double)nc;
  double energy = 0.0;
  for (int64_t j = 0; j < nc; j++) {
    double left = j > 0 ? Eh[j - 1] : Eh[nc - 1];
    E[j] = 0.5 * (left + Eh[j]) - mean;
    energy += E[j] * E[j];
  }
  E[nc] = E[0];
  *fe = 0.5 * s->dx * energy;
  *q = charge * s->dx;
}

/* Gather, push, move, wrap and deposit chunk c; returns sum (v_old^2 + v_new^2). */
static double push_chunk(es1d *s, int64_t c)
{
  double *restrict r = s->rhoc + c * (s->nc + 1);
  double *restrict x = s->x, *restrict v = s->v;
  const double *restrict E = s->E;
  const double idx = s->idx, dt = s->dt, qmdt = s->qmdt, L = s->L;
  int64_t lo = c * s->chunk, hi = lo + s->chunk < s->n ? lo + s->chunk : s->n;
  double ke = 0.0;
  memset(r, 0, sizeof(double) * (size_t)(s->nc + 1));
  for (int64_t i = lo; i < hi; i++) {
    double f;
    int64_t j = node(x[i], idx, s->nc, &f);
    double e = E[j] + f * (E[j + 1] - E[j]);
    double vo = v[i], vn = vo + qmdt * e;
    ke += vo * vo + vn * vn;
    double xn = x[i] + dt * vn;
    if (xn < 0.0 || xn >= L) xn = wrap(xn, L);
    v[i] = vn;
    x[i] = xn;
    j = node(xn, idx, s->nc, &f);
    r[j] += 1.0 - f;
    r[j + 1] += f;
  }
  return ke;
}

int es1d_step(es1d *s)
{
  if (s->steps >= s->p.max_steps) return -1;
  const int64_t n = s->steps;
  double fe = 0.0, q = 0.0;
#pragma omp parallel
  {
#pragma omp single
    solve(s, &fe, &q);
#pragma omp for schedule(static)
    for (int64_t c = 0; c < s->nchunks; c++) s->kec[c] = push_chunk(s, c);
  }
  double ke = 0.0;
  for (int64_t c = 0; c < s->nchunks; c++) ke += s->kec[c];
  s->t[n] = (double)n * s->dt;
  s->fe[n] = fe;
  s->ke[n] = 0.25 * s->m * ke;
  s->q[n] = q;
  if (s->rhoh) memcpy(s->rhoh + n * s->nc, s->rho, sizeof(double) * (size_t)s->nc);
  s->steps = n + 1;
  return 0;
}

/* ---- setup ---------------------------------------------------------------------------- */

int es1d_check_params(const es1d_params *p, char *err, size_t errlen)
{
  if (p->n_particles <= 0) return fail(err, errlen, "es1d: n_particles must be > 0");
  if (p->n_cells < 4) return fail(err, errlen, "es1d: n_cells must be >= 4");
  if (!(p->length > 0) || !(p->dt > 0) || !isfinite(p->length) || !isfinite(p->dt))
    return fail(err, errlen, "es1d: length and dt must be finite and > 0");
  if (!isfinite(p->v0) || !isfinite(p->vth)) return fail(err, errlen, "es1d: v0 and vth must be finite");
  if (p->max_steps < 0) return fail(err, errlen, "es1d: max_steps must be >= 0");
  if (!(p->vth >= 0)) return fail(err, errlen, "es1d: vth must be >= 0");
  if (p->v0 != 0.0 && p->n_particles % 2)
    return fail(err, errlen, "es1d: two beams need an even n_particles");
  if (p->mode < 0 || p->mode > p->n_cells / 2)
    return fail(err, errlen, "es1d: mode must be in [0, n_cells/2]");
  if (!(fabs(p->amplitude) < 1)) return fail(err, errlen, "es1d: |amplitude| must be < 1");
  return 0;
}

int es1d_setup(es1d **out, const es1d_params *p, char *err, size_t errlen)
{
  *out = NULL;
  if (es1d_check_params(p, err, errlen)) return -1;
  es1d *s = calloc(1, sizeof *s);
  if (!s) return fail(err, errlen, "es1d: out of memory");
  s->p = *p;
  s->n = p->n_particles;
  s->nc = p->n_cells;
  s->L = p->length;
  s->dx = s->L / (double)s->nc;
  s->idx = (double)s->nc / s->L;
  s->dt = p->dt;
  s->qmdt = -p->dt;
  s->wq = -(double)s->nc / (double)s->n;
  s->m = s->L / (double)s->n;
  s->chunk = 8192;
  while (s->chunk < 16 * (s->nc + 1)) s->chunk *= 2;
  s->nchunks = (s->n + s->chunk - 1) / s->chunk;
  size_t n = (size_t)s->n, nc = (size_t)s->nc, ms = (size_t)p->max_steps;
  s->x = malloc(sizeof(double) * n);
  s->v = malloc(sizeof(double) * n);
  s->rhoc = malloc(sizeof(double) * (size_t)s->nchunks * (nc + 1));
  s->kec = malloc(sizeof(double) * (size_t)s->nchunks);
  s->rho = malloc(sizeof(double) * nc);
  s->Eh = malloc(sizeof(double) * nc);
  s->E = malloc(sizeof(double) * (nc + 1));
  s->t = malloc(sizeof(double) * (ms + 1));
  s->fe = malloc(sizeof(double) * (ms + 1));
  s->ke = malloc(sizeof(double) * (ms + 1));
  s->q = malloc(sizeof(double) * (ms + 1));
  s->rhoh = p->record_rho ? malloc(sizeof(double) * (ms + 1) * nc) : NULL;
  if (!s->x || !s->v || !s->rhoc || !s->kec || !s->rho || !s->Eh || !s->E || !s->t || !s->fe ||
      !s->ke || !s->q || (p->record_rho && !s->rhoh)) {
    es1d_teardown(s);
    return fail(err, errlen, "es1d: out of memory (%lld particles, %lld cells, %lld steps)",
                (long long)s->n, (long long)s->nc, (long long)p->max_steps);
  }
  es1d_load(p, s->x, s->v);
  double fe, q;
  /* rho^0, E^0; then v^{-1/2} = v^0 - (q/m)(dt/2) E^0(x^0). First touch by the threads that
  ** later push the same chunks. */
#pragma omp parallel
  {
#pragma omp for schedule(static)
    for (int64_t c = 0; c < s->nchunks; c++) deposit_chunk(s, c);
#pragma omp single
    solve(s, &fe, &q);
#pragma omp for schedule(static)
    for (int64_t i = 0; i < s->n; i++) {
      double f;
      int64_t j = node(s->x[i], s->idx, s->nc, &f);
      s->v[i] -= 0.5 * s->qmdt * (s->E[j] + f * (s->E[j + 1] - s->E[j]));
    }
  }
  *out = s;
  return 0;
}

void es1d_histories(const es1d *s, es1d_history *h)
{
  *h = ES1D_HISTORY_OF(s);
}

void es1d_particles(const es1d *s, const double **x, const double **v, int64_t *n)
{
  *x = s->x;
  *v = s->v;
  *n = s->n;
}

void es1d_grid(const es1d *s, const double **rho, const double **E, int64_t *n_cells)
{
  *rho = s->rho;
  *E = s->E;
  *n_cells = s->nc;
}

double es1d_bytes_per_particle(void) { return 4.0 * sizeof(double); }

void es1d_teardown(es1d *s)
{
  if (!s) return;
  free(s->x); free(s->v); free(s->rhoc); free(s->kec); free(s->rho); free(s->Eh); free(s->E);
  free(s->t); free(s->fe); free(s->ke); free(s->q); free(s->rhoh);
  free(s);
}
