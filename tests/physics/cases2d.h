/*
** cases2d.h -- the standard set-ups of the 2D physics tests and the 2D demo (docs/physics.md,
** "2D"), for any es2d_impl; the fits and verdicts are the 1D ones (cases.h, fit.h), applied to
** the 2D histories through phys2d_as_1d.
*/
#ifndef PHYS_CASES2D_H
#define PHYS_CASES2D_H

#include <stddef.h>

#include "cases.h"
#include "es2d.h"

/* Tolerances of the 2D Landau fit (relative): the 1D rate within 5%, the frequency within 1%. */
#define PHYS2D_LANDAU_GAMMA_TOL 0.05
#define PHYS2D_LANDAU_OMEGA_TOL 0.01
/* The Landau fit's window: the peaks of the mode energy with t in [PHYS_LANDAU_T0, T1]. */
#define PHYS2D_LANDAU_T1 14.0
/* The energy and charge checks: PHYS_CONSERVATION_STEPS steps with this many particles. */
#define PHYS2D_CONSERVATION_PARTICLES 32768

/* Landau damping at k lambda_D = 0.5 along x (axis 0) or y (axis 1); a cold plasma
** oscillation. The parameters and the number of steps the measurement needs. */
void phys2d_landau_params(es2d_params *p, int axis, int64_t *steps);
void phys2d_cold_params(es2d_params *p, int64_t *steps);

/* Sets up impl with p and advances `steps` steps (as phys_run). */
int phys2d_run(const es2d_impl *impl, const es2d_params *p, int64_t steps, void **state,
               es2d_history *h, char *err, size_t errlen);

/* The 2D histories seen as 1D ones (no rho history), for the checks of cases.h. */
es1d_history phys2d_as_1d(const es2d_history *h);

/* The damped-peak fit of the field energy (fit_damped over PHYS_LANDAU_T0..T1) against the
** 1D theory with the tolerances above; how many failed, or -1 (message in err). */
int phys2d_check_landau(const es2d_history *h, phys_check c[2], char *err, size_t errlen);

#endif
