/*
** es2d.c -- the complete 2D electrostatic PIC step of es2d.h written with libcnp's grid
** runtime calls directly (es2d_rt_impl): what a programmer using the runtime without cnpc
** writes, and the numerics the generated step (examples/pic2d/es2d.cnp) is checked against.
**
** Per step, on the host backend: cnp_deposit (CIC, CNP_DEPOSIT_SORTED: deterministic) of unit
** weights at (y, x), a loop for rho and the charge, cnp_fft_forward, a k-space loop (times
** 1/(N |k|^2), the wave numbers from cnp_fft_wavenumber at setup), cnp_fft_inverse, a loop for
** E by central differences and the field energy, two cnp_gather calls (Ex, Ey), and the push
** loop over fixed particle chunks (the kinetic energy summed per chunk, the chunks in order),
** so that every history is bit-for-bit the same for any number of threads. The arithmetic is
** written in the order es2d.cnp writes it.
**
** Also here: the parameter checks and the quiet start that every implementation shares.
*/
#include "es2d.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnp/cnp.h"

#define ES2D_PI 3.14159265358979323846

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

/* ---- parameters and the quiet start ---------------------------------------------------- */

int es2d_check_params(const es2d_params *p, char *err, size_t errlen)
{
  if (p->nx < 4 || p->ny < 4) return fail(err, errlen, "es2d: nx and ny must be >= 4");
  if (!(p->lx > 0) || !(p->ly > 0) || !isfinite(p->lx) || !isfinite(p->ly))
    return fail(err, errlen, "es2d: lx and ly must be finite and > 0");
  if (p->n_particles < 1 || p->n_particles > (INT64_C(1) << 40))
    return fail(err, errlen, "es2d: n_particles must be in [1, 2^40]");
  if (p->rows < 1 || p->beams < 1 || p->n_particles % (p->rows * p->beams))
    return fail(err, errlen, "es2d: rows and beams must be >= 1 and divide n_particles");
  if (p->axis != 0 && p->axis != 1) return fail(err, errlen, "es2d: axis must be 0 (x) or 1 (y)");
  int64_t n_axis = p->axis ? p->ny : p->nx;
  if (p->mode < 0 || p->mode > n_axis / 2)
    return fail(err, errlen, "es2d: mode must be in [0, n/2] of its axis");
  if (!(fabs(p->amplitude) < 1)) return fail(err, errlen, "es2d: |amplitude| must be < 1");
  if (!(p->vth >= 0) || !isfinite(p->vth)) return fail(err, errlen, "es2d: vth must be finite and >= 0");
  if (!(p->dt > 0) || !isfinite(p->dt)) return fail(err, errlen, "es2d: dt must be finite and > 0");
  if (p->max_steps < 0) return fail(err, errlen, "es2d: max_steps must be >= 0");
  return 0;
}

/* The inverse of the standard normal CDF: Acklam's rational approximation and one Halley
** step on erfc (about 1e-15), as examples/pic/ref/es1d.c. */
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
  double u = e * sqrt(2 * ES2D_PI) * exp(x * x / 2);
  return x - u / (1 + x * u / 2);
}

/* Point i of the base-2 van der Corput sequence of 2^bits points, centred in its stratum. */
static double vdc(uint64_t i, int bits)
{
  uint64_t r = 0;
  for (int k = 0; k < bits; k++, i >>= 1) r = (r << 1) | (i & 1);
  return ((double)r + 0.5) / (double)((uint64_t)1 << bits);
}

/* Into [0, L): the expression es2d.cnp uses (a tiny negative x + L may round to L: 0). */
static inline double wrap(double x, double L)
{
  if (x < 0.0 || x >= L) {
    x = x - L * floor(x / L);
    x = x >= L ? 0.0 : x;
  }
  return x;
}

void es2d_load(const es2d_params *p, double *x, double *y, double *vx, double *vy)
{
  const int64_t n = p->n_particles, nt = p->rows, nb = p->beams;
  const double la = p->axis ? p->ly : p->lx, lt = p->axis ? p->lx : p->ly;
  const double k = 2 * ES2D_PI * p->mode / la;
  int bits = 0;
  while ((INT64_C(1) << bits) < n) bits++;
  double *sa = p->axis ? y : x, *st = p->axis ? x : y;
  double *va = p->axis ? vy : vx, *vt = p->axis ? vx : vy;
#pragma omp parallel for schedule(static)
  for (int64_t m = 0; m < n; m++) {
    int64_t c = m % nb, b = (m / nb) % nt; /* beamlet, row */
    double s0 = ((double)m + 0.5) * la / (double)n;
    /* displacement -(a/k) sin(k s0): the density 1 + a cos(k s) to first order */
    sa[m] = wrap(k > 0 ? s0 - p->amplitude / k * sin(k * s0) : s0, la);
    st[m] = ((double)b + 0.5) * lt / (double)nt;
    va[m] = p->vth > 0 ? p->vth * norm_icdf(vdc((uint64_t)m, bits)) : 0.0;
    vt[m] = p->vth > 0 ? p->vth * norm_icdf(((double)c + 0.5) / (double)nb) : 0.0;
  }
}

/* ---- the step as runtime calls --------------------------------------------------------- */

enum { CHUNK = 16384 };  /* particles per kinetic-energy partial sum (fixed: determinism) */

typedef struct rt_state {
  es2d_params p;
  int64_t n, nx, ny, ng, nkx, nk, kmode, nchunks, steps, hist;
  double dx, dy, dA, dt, wq, m;
  double *x, *y, *vx, *vy, *exp_, *eyp; /* N each */
  double *kec;                          /* nchunks kinetic-energy partial sums */
  double *rho, *phi, *ex, *ey;          /* ny * nx each */
  double *rhok;                         /* ny * (nx/2 + 1) complex (re, im) */
  double *green;                        /* ny * (nx/2 + 1): 1 / (N |k|^2), 0 at k = 0 */
  double *t, *fe, *fk, *ke, *q;         /* histories */
  cnp_array ax, ay, aexp, aeyp, arho, aphi, aex, aey, arhok;
  cnp_pgrid *pg;
  cnp_fft_plan *fft;
} rt_state;

static int say(char *err, size_t errlen, const char *what, cnp_status st)
{
  if (err && errlen)
    snprintf(err, errlen, "es2d (runtime calls): %s: %s (%s)", what, cnp_status_name(st),
             cnp_last_error());
  return -1;
}

static void rt_teardown(void *state)
{
  rt_state *s = state;
  if (!s) return;
  cnp_pgrid_destroy(s->pg);
  cnp_fft_plan_destroy(s->fft);
  free(s->x); free(s->y); free(s->vx); free(s->vy); free(s->exp_); free(s->eyp); free(s->kec);
  free(s->rho); free(s->phi); free(s->ex); free(s->ey); free(s->rhok); free(s->green);
  free(s->t); free(s->fe); free(s->fk); free(s->ke); free(s->q);
  free(s);
}

static cnp_status wrap_array(cnp_array *a, void *data, cnp_dtype t, int ndim, int64_t n0,
                             int64_t n1)
{
  int64_t shape[2] = {n0, n1};
  return cnp_array_wrap(a, data, CNP_BACKEND_HOST, 0, t, ndim, shape, NULL);
}

static int rt_setup(void **state, const es2d_params *p, char *err, size_t errlen)
{
  *state = NULL;
  if (es2d_check_params(p, err, errlen)) return -1;
  rt_state *s = calloc(1, sizeof *s);
  if (!s) return say(err, errlen, "setup", CNP_ENOMEM);
  s->p = *p;
  s->n = p->n_particles;
  s->nx = p->nx;
  s->ny = p->ny;
  s->ng = s->nx * s->ny;
  s->nkx = s->nx / 2 + 1;
  s->nk = s->ny * s->nkx;
  s->kmode = p->axis ? (int64_t)p->mode * s->nkx : p->mode; /* (ky, kx) = (mode, 0) or (0, mode) */
  s->nchunks = (s->n + CHUNK - 1) / CHUNK;
  s->hist = p->max_steps > 0 ? p->max_steps : 1;
  s->dx = p->lx / (double)s->nx;
  s->dy = p->ly / (double)s->ny;
  s->dA = s->dx * s->dy;
  s->dt = p->dt;
  s->wq = -(double)s->ng / (double)s->n;
  s->m = p->lx * p->ly / (double)s->n;
  size_t n = (size_t)s->n, ng = (size_t)s->ng, nk = (size_t)s->nk, h = (size_t)s->hist;
  s->x = malloc(sizeof(double) * n); s->y = malloc(sizeof(double) * n);
  s->vx = malloc(sizeof(double) * n); s->vy = malloc(sizeof(double) * n);
  s->exp_ = malloc(sizeof(double) * n); s->eyp = malloc(sizeof(double) * n);
  s->kec = malloc(sizeof(double) * (size_t)s->nchunks);
  s->rho = calloc(ng, sizeof(double)); s->phi = calloc(ng, sizeof(double));
  s->ex = calloc(ng, sizeof(double)); s->ey = calloc(ng, sizeof(double));
  s->rhok = malloc(sizeof(double) * 2 * nk); s->green = malloc(sizeof(double) * nk);
  s->t = malloc(sizeof(double) * h); s->fe = malloc(sizeof(double) * h);
  s->fk = malloc(sizeof(double) * h);
  s->ke = malloc(sizeof(double) * h); s->q = malloc(sizeof(double) * h);
  if (!s->x || !s->y || !s->vx || !s->vy || !s->exp_ || !s->eyp || !s->kec || !s->rho ||
      !s->phi || !s->ex || !s->ey || !s->rhok || !s->green || !s->t || !s->fe || !s->fk || !s->ke || !s->q) {
    rt_teardown(s);
    return say(err, errlen, "setup", CNP_ENOMEM);
  }
  cnp_status st = CNP_OK;
  if (st == CNP_OK) st = wrap_array(&s->ax, s->x, CNP_FLOAT64, 1, s->n, 0);
  if (st == CNP_OK) st = wrap_array(&s->ay, s->y, CNP_FLOAT64, 1, s->n, 0);
  if (st == CNP_OK) st = wrap_array(&s->aexp, s->exp_, CNP_FLOAT64, 1, s->n, 0);
  if (st == CNP_OK) st = wrap_array(&s->aeyp, s->eyp, CNP_FLOAT64, 1, s->n, 0);
  if (st == CNP_OK) st = wrap_array(&s->arho, s->rho, CNP_FLOAT64, 2, s->ny, s->nx);
  if (st == CNP_OK) st = wrap_array(&s->aphi, s->phi, CNP_FLOAT64, 2, s->ny, s->nx);
  if (st == CNP_OK) st = wrap_array(&s->aex, s->ex, CNP_FLOAT64, 2, s->ny, s->nx);
  if (st == CNP_OK) st = wrap_array(&s->aey, s->ey, CNP_FLOAT64, 2, s->ny, s->nx);
  if (st == CNP_OK) st = wrap_array(&s->arhok, s->rhok, CNP_COMPLEX128, 2, s->ny, s->nkx);
  int64_t dims[2] = {s->ny, s->nx};
  double scale[2] = {(double)s->ny / p->ly, (double)s->nx / p->lx};
  if (st == CNP_OK)
    st = cnp_pgrid_create(&s->pg, CNP_BACKEND_HOST, 0, 2, dims, CNP_SHAPE_CIC, CNP_FLOAT64, s->n,
                          scale);
  if (st == CNP_OK)
    st = cnp_fft_plan_create(&s->fft, CNP_BACKEND_HOST, 0, 2, dims, 0, CNP_FLOAT64,
                             CNP_FFT_DESTROY_INPUT);
  if (st != CNP_OK) {
    rt_teardown(s);
    return say(err, errlen, "setup", st);
  }
  /* The Green's function with the inverse FFT's 1/N folded in. */
  const double norm = cnp_fft_norm(s->fft);
  for (int64_t j = 0; j < s->ny; j++) {
    double ky = cnp_fft_wavenumber(s->ny, p->ly, j, 0);
    for (int64_t i = 0; i < s->nkx; i++) {
      double kx = cnp_fft_wavenumber(s->nx, p->lx, i, 1);
      double k2 = ky * ky + kx * kx;
      s->green[j * s->nkx + i] = k2 > 0.0 ? norm / k2 : 0.0;
    }
  }
  es2d_load(p, s->x, s->y, s->vx, s->vy);
  *state = s;
  return 0;
}

/* Steps 1-3 of es2d.h: rho, phi and E of the particles now; the charge and field energy. */
static cnp_status solve(rt_state *s, double *charge, double *energy, double *mode_energy)
{
  cnp_array pos[2] = {s->ay, s->ax};
  cnp_status st = cnp_deposit(s->pg, pos, NULL, &s->arho, CNP_DEPOSIT_SORTED, NULL);
  if (st != CNP_OK) return st;
  double q = 0.0;
  for (int64_t g = 0; g < s->ng; g++) {
    s->rho[g] = 1.0 + s->wq * s->rho[g];
    q += s->rho[g] * s->dA;
  }
  st = cnp_fft_forward(s->fft, &s->arho, &s->arhok, NULL);
  if (st != CNP_OK) return st;
  /* the field energy of the perturbed mode (spectral): dA |rho_k|^2 / (N_g |k|^2) */
  {
    const double *r = s->rhok + 2 * s->kmode;
    double g = s->green[s->kmode] * (double)s->ng; /* 1 / |k|^2 */
    *mode_energy = s->dA * (r[0] * r[0] + r[1] * r[1]) * g / (double)s->ng;
  }
  for (int64_t k = 0; k < s->nk; k++) {
    s->rhok[2 * k] *= s->green[k];
    s->rhok[2 * k + 1] *= s->green[k];
  }
  st = cnp_fft_inverse(s->fft, &s->arhok, &s->aphi, NULL);
  if (st != CNP_OK) return st;
  const int64_t nx = s->nx, ny = s->ny;
  const double hx = 0.5 / s->dx, hy = 0.5 / s->dy;
  double w = 0.0;
  for (int64_t j = 0; j < ny; j++) {
    const double *row = s->phi + j * nx;
    const double *up = s->phi + (j + 1 < ny ? j + 1 : 0) * nx;
    const double *dn = s->phi + (j > 0 ? j - 1 : ny - 1) * nx;
    for (int64_t i = 0; i < nx; i++) {
      double l = row[i > 0 ? i - 1 : nx - 1], r = row[i + 1 < nx ? i + 1 : 0];
      double ex = (l - r) * hx, ey = (dn[i] - up[i]) * hy;
      s->ex[j * nx + i] = ex;
      s->ey[j * nx + i] = ey;
      w += 0.5 * s->dA * (ex * ex + ey * ey);
    }
  }
  *charge = q;
  *energy = w;
  return CNP_OK;
}

static int rt_step(void *state, int64_t steps, char *err, size_t errlen)
{
  rt_state *s = state;
  for (int64_t it = 0; it < steps; it++) {
    if (s->steps >= s->p.max_steps) return fail(err, errlen, "es2d (runtime calls): the histories are full");
    double q, w, wk;
    cnp_status st = solve(s, &q, &w, &wk);
    cnp_array pos[2] = {s->ay, s->ax};
    if (st == CNP_OK) st = cnp_gather(s->pg, pos, &s->aex, &s->aexp, NULL);
    if (st == CNP_OK) st = cnp_gather(s->pg, pos, &s->aey, &s->aeyp, NULL);
    if (st != CNP_OK) return say(err, errlen, "step", st);
    const int first = s->steps == 0;
    const double dt = s->dt, lx = s->p.lx, ly = s->p.ly;
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < s->nchunks; c++) {
      int64_t lo = c * CHUNK, hi = lo + CHUNK < s->n ? lo + CHUNK : s->n;
      double ke = 0.0;
      for (int64_t i = lo; i < hi; i++) {
        double ex = s->exp_[i], ey = s->eyp[i];
        double vxo = first ? s->vx[i] + 0.5 * dt * ex : s->vx[i];
        double vyo = first ? s->vy[i] + 0.5 * dt * ey : s->vy[i];
        double vxn = vxo - dt * ex, vyn = vyo - dt * ey;
        ke += (vxo * vxo + vyo * vyo) + (vxn * vxn + vyn * vyn);
        s->x[i] = wrap(s->x[i] + dt * vxn, lx);
        s->y[i] = wrap(s->y[i] + dt * vyn, ly);
        s->vx[i] = vxn;
        s->vy[i] = vyn;
      }
      s->kec[c] = ke;
    }
    double ke = 0.0;
    for (int64_t c = 0; c < s->nchunks; c++) ke += s->kec[c];
    int64_t n = s->steps;
    s->t[n] = (double)n * dt;
    s->fe[n] = w;
    s->fk[n] = wk;
    s->ke[n] = 0.25 * s->m * ke;
    s->q[n] = q;
    s->steps = n + 1;
  }
  return 0;
}

static int rt_histories(void *state, es2d_history *h, char *err, size_t errlen)
{
  (void)err;
  (void)errlen;
  rt_state *s = state;
  h->n_steps = s->steps;
  h->t = s->t;
  h->field_energy = s->fe;
  h->mode_energy = s->fk;
  h->kinetic_energy = s->ke;
  h->charge = s->q;
  return 0;
}

static int rt_grids(void *state, double *rho, double *phi, char *err, size_t errlen)
{
  (void)err;
  (void)errlen;
  rt_state *s = state;
  memcpy(rho, s->rho, sizeof(double) * (size_t)s->ng);
  memcpy(phi, s->phi, sizeof(double) * (size_t)s->ng);
  return 0;
}

const es2d_impl es2d_rt_impl = {"runtime calls (examples/pic2d/ref/es2d.c)", rt_setup, rt_step,
                                rt_histories, rt_grids, rt_teardown};
