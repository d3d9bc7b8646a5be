/* cases.c -- see cases.h. */
#include "cases.h"

#include <math.h>
#include <string.h>

#include "fit.h"

#define PHYS_PI 3.14159265358979323846

/* The set-ups' common part: 64 cells, mode 1 of `amplitude`, dt 0.1, a quiet start. */
static es1d_params base_params(int64_t n_particles, double length, double amplitude)
{
  es1d_params d = ES1D_PARAMS_INIT;
  d.n_particles = n_particles;
  d.n_cells = 64;
  d.length = length;
  d.amplitude = amplitude;
  d.mode = 1;
  d.dt = 0.1;
  d.quiet = 1;
  return d;
}

void phys_landau_params(es1d_params *p, int64_t *steps)
{
  *p = base_params(400000, 4 * PHYS_PI, 0.01); /* k = 2 pi / L = 0.5: k lambda_D = 0.5 */
  p->vth = 1.0;                                /* lambda_D = 1 */
  *steps = 200;
}

void phys_landau4_params(es1d_params *p, int64_t *steps)
{
  *p = base_params(400000, 5 * PHYS_PI, 0.01); /* k = 2 pi / L = 0.4: k lambda_D = 0.4 */
  p->vth = 1.0;
  *steps = 350;
}

void phys_two_stream_params(es1d_params *p, int64_t *steps)
{
  /* k v0 = sqrt(3/8): the fastest mode */
  *p = base_params(100000, 2 * PHYS_PI / sqrt(3.0 / 8.0), 1e-4);
  p->vth = 0.0;
  p->v0 = 1.0;
  *steps = 400;
}

void phys_cold_params(es1d_params *p, int64_t *steps)
{
  *p = base_params(100000, 2 * PHYS_PI, 0.01);
  p->vth = 0.0;
  *steps = 200;
}

int phys_run(const es1d_impl *impl, const es1d_params *p, int64_t steps, void **state,
             es1d_history *h, char *err, size_t errlen)
{
  es1d_params q = *p;
  if (q.max_steps < steps) q.max_steps = steps;
  *state = NULL;
  if (impl->setup(state, &q, err, errlen)) return -1;
  if (impl->step(*state, steps, err, errlen) || impl->histories(*state, h, err, errlen)) {
    impl->teardown(*state);
    *state = NULL;
    return -1;
  }
  return 0;
}

static void judge(phys_check *c, const char *label, const char *symbol, double measured,
                  double theory, double tol)
{
  c->label = label;
  c->symbol = symbol;
  c->measured = measured;
  c->theory = theory;
  c->tol = tol;
  c->off = theory != 0 ? fabs(measured / theory - 1) : fabs(measured);
  c->pass = c->off <= tol; /* false for NaN */
}

static int fit_failed(char *err, size_t errlen, const char *what)
{
  if (err && errlen) snprintf(err, errlen, "%s", what);
  return -1;
}

/* One damped-oscillation check: fit the field energy's peaks over [PHYS_LANDAU_T0, t1] and
** judge the rate (relative tolerance tol_gamma) and the frequency (1%). */
static int check_damped(const es1d_history *h, double t1, const char *label, double gamma,
                        double omega, double tol_gamma, phys_check c[2], char *err,
                        size_t errlen)
{
  double g, w;
  if (fit_damped(h->t, h->field_energy, h->n_steps, PHYS_LANDAU_T0, t1, &g, &w) < 0) {
    char what[96];
    snprintf(what, sizeof what, "%s: fewer than 3 peaks of the field energy to fit", label);
    return fit_failed(err, errlen, what);
  }
  judge(&c[0], label, "γ", g, gamma, tol_gamma);
  judge(&c[1], label, "ω", w, omega, 0.01);
  return !c[0].pass + !c[1].pass;
}

int phys_check_landau(const es1d_history *h, phys_check c[2], char *err, size_t errlen)
{
  return check_damped(h, PHYS_LANDAU_T1, "Landau", PHYS_LANDAU_GAMMA, PHYS_LANDAU_OMEGA, 0.03,
                      c, err, errlen);
}

int phys_check_landau4(const es1d_history *h, phys_check c[2], char *err, size_t errlen)
{
  return check_damped(h, PHYS_LANDAU4_T1, "Landau k=0.4", PHYS_LANDAU4_GAMMA,
                      PHYS_LANDAU4_OMEGA, 0.05, c, err, errlen);
}

int phys_check_two_stream(const es1d_history *h, phys_check *c, double *ta, double *tb,
                          double *tsat, char *err, size_t errlen)
{
  double g;
  if (fit_growth(h->t, h->field_energy, h->n_steps, PHYS_TWO_STREAM_LO, PHYS_TWO_STREAM_HI, &g,
                 ta, tb, tsat) < 0)
    return fit_failed(err, errlen, "two-stream: no growth to saturation to fit");
  judge(c, "two-stream", "γ", g, PHYS_TWO_STREAM_GAMMA, 0.05);
  return !c->pass;
}

int phys_check_cold(const es1d_history *h, phys_check *c, char *err, size_t errlen)
{
  double g, w;
  if (fit_damped(h->t, h->field_energy, h->n_steps, PHYS_COLD_T0, PHYS_COLD_T1, &g, &w) < 0)
    return fit_failed(err, errlen, "cold plasma: fewer than 3 peaks of the field energy");
  judge(c, "cold plasma", "ω", w, PHYS_COLD_OMEGA, 0.02);
  return !c->pass;
}

int phys_check_energy(const es1d_history *h, const char *label, phys_check *c)
{
  double e0 = h->field_energy[0] + h->kinetic_energy[0], worst = 0;
  for (int64_t n = 0; n < h->n_steps; n++) {
    double d = fabs(h->field_energy[n] + h->kinetic_energy[n] - e0) / e0;
    if (!(d <= worst)) worst = d; /* NaN sticks */
  }
  judge(c, label, "energy drift", worst, 0.0, 0.01);
  return !c->pass;
}

int phys_check_charge(const es1d_history *h, double length, const char *label, phys_check *c)
{
  double worst = 0;
  for (int64_t n = 0; n < h->n_steps; n++)
    if (!(fabs(h->charge[n]) <= worst)) worst = fabs(h->charge[n]);
  judge(c, label, "max |charge| / L", worst / length, 0.0, 1e-12);
  return !c->pass;
}

void phys_print(FILE *f, const phys_check *c)
{
  if (c->theory != 0) {
    fprintf(f, "%s: %s = %.4f (theory %.4f, %.1f%% off)\n", c->label, c->symbol, c->measured,
            c->theory, 100 * c->off);
    if (!c->pass)
      fprintf(f, "FAIL: %s %s is %.1f%% off theory, outside its %.0f%% tolerance\n", c->label,
              c->symbol, 100 * c->off, 100 * c->tol);
  } else {
    fprintf(f, "%s: %s = %.3g (tolerance %.3g)\n", c->label, c->symbol, c->measured, c->tol);
    if (!c->pass)
      fprintf(f, "FAIL: %s %s %.3g is over its tolerance %.3g\n", c->label, c->symbol,
              c->measured, c->tol);
  }
}
