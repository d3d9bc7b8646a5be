/* cases2d.c -- see cases2d.h. */
#include "cases2d.h"

#include <math.h>
#include <stdio.h>

#include "fit.h"

#define PHYS_PI 3.14159265358979323846

void phys2d_landau_params(es2d_params *p, int axis, int64_t *steps)
{
  es2d_params d = ES2D_PARAMS_INIT; /* 64 x 16 cells, L = 4 pi along x: k lambda_D = 0.5 */
  if (axis) {                       /* the same box turned: 16 x 64, 4 pi along y */
    d.nx = 16;
    d.ny = 64;
    d.lx = PHYS_PI;
    d.ly = 4 * PHYS_PI;
    d.axis = 1;
  }
  *p = d;
  *steps = 150;
}

void phys2d_cold_params(es2d_params *p, int64_t *steps)
{
  es2d_params d = ES2D_PARAMS_INIT;
  d.lx = 2 * PHYS_PI;                /* k = 1, 64 x 16 square cells */
  d.ly = PHYS_PI / 2;
  d.vth = 0.0;
  d.n_particles = 65536;             /* all at rest */
  *p = d;
  *steps = 200;
}

int phys2d_run(const es2d_impl *impl, const es2d_params *p, int64_t steps, void **state,
               es2d_history *h, char *err, size_t errlen)
{
  es2d_params q = *p;
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

es1d_history phys2d_as_1d(const es2d_history *h)
{
  es1d_history o = {h->n_steps, 0, h->t, h->field_energy, h->kinetic_energy, h->charge, NULL};
  return o;
}

static void judge(phys_check *c, const char *symbol, double measured, double theory, double tol)
{
  c->label = "2D Landau";
  c->symbol = symbol;
  c->measured = measured;
  c->theory = theory;
  c->tol = tol;
  c->off = fabs(measured / theory - 1);
  c->pass = c->off <= tol; /* false for NaN */
}

int phys2d_check_landau(const es2d_history *h, phys_check c[2], char *err, size_t errlen)
{
  double g, w;
  if (fit_damped(h->t, h->mode_energy, h->n_steps, PHYS_LANDAU_T0, PHYS2D_LANDAU_T1, &g, &w) < 0) {
    if (err && errlen) snprintf(err, errlen, "2D Landau: fewer than 3 peaks of the field energy");
    return -1;
  }
  judge(&c[0], "γ", g, PHYS_LANDAU_GAMMA, PHYS2D_LANDAU_GAMMA_TOL);
  judge(&c[1], "ω", w, PHYS_LANDAU_OMEGA, PHYS2D_LANDAU_OMEGA_TOL);
  return !c[0].pass + !c[1].pass;
}
