/*
** cases.h -- the standard set-ups of the physics tests and the demo (docs/physics.md), their
** measurements against theory and their verdicts, for any es1d_impl.
*/
#ifndef PHYS_CASES_H
#define PHYS_CASES_H

#include <stdio.h>

#include "es1d_impl.h"

/* Theory (docs/physics.md, "Set-ups and theory"). */
#define PHYS_LANDAU_GAMMA (-0.1533)  /* k lambda_D = 0.5 */
#define PHYS_LANDAU_OMEGA 1.4157
#define PHYS_TWO_STREAM_GAMMA 0.35355339059327373 /* 1 / (2 sqrt 2) at k v0 = sqrt(3/8) */
#define PHYS_COLD_OMEGA 1.0
/* Landau damping at k lambda_D = 0.4 (the same dispersion relation, docs/physics.md) */
#define PHYS_LANDAU4_GAMMA (-0.0661)
#define PHYS_LANDAU4_OMEGA 1.2851

typedef struct phys_check {
  const char *label;   /* "Landau" */
  const char *symbol;  /* "γ" */
  double measured, theory, tol;  /* tol: relative, or absolute when theory == 0 */
  double off;          /* |measured/theory - 1|, or |measured| when theory == 0 */
  int pass;
} phys_check;

/* The set-ups: parameters and how many steps the measurement needs. */
void phys_landau_params(es1d_params *p, int64_t *steps);
void phys_two_stream_params(es1d_params *p, int64_t *steps);
void phys_cold_params(es1d_params *p, int64_t *steps);
void phys_landau4_params(es1d_params *p, int64_t *steps);   /* k lambda_D = 0.4 */
#define PHYS_CONSERVATION_STEPS 500   /* 50 / omega_p at omega_p dt = 0.1 */
#define PHYS_CONSERVATION_PARTICLES 100000 /* both set-ups, for the energy and charge checks */

/* Fit windows (docs/physics.md, "Fits"). */
#define PHYS_LANDAU_T0 0.5            /* peaks of W with t in [T0, T1] */
#define PHYS_LANDAU_T1 18.0
#define PHYS_TWO_STREAM_LO 1e-6       /* W from 1e-6 to 1e-2 of its saturation value */
#define PHYS_TWO_STREAM_HI 1e-2
#define PHYS_COLD_T0 0.5
#ifndef PHYS_LANDAU4_T1
#define PHYS_LANDAU4_T1 30.0          /* k lambda_D = 0.4: slower damping, a longer window */
#endif
#define PHYS_COLD_T1 1e9

/* Sets up impl with p and advances `steps` steps; on success *state is the caller's (teardown)
** and h holds the histories. 0, or -1 with a message in err. */
int phys_run(const es1d_impl *impl, const es1d_params *p, int64_t steps, void **state,
             es1d_history *h, char *err, size_t errlen);

/* Each fills its checks and returns how many failed, or -1 (message in err) when the fit
** itself failed. */
int phys_check_landau(const es1d_history *h, phys_check c[2], char *err, size_t errlen);
int phys_check_two_stream(const es1d_history *h, phys_check *c, double *ta, double *tb,
                          double *tsat, char *err, size_t errlen);
int phys_check_cold(const es1d_history *h, phys_check *c, char *err, size_t errlen);
int phys_check_landau4(const es1d_history *h, phys_check c[2], char *err, size_t errlen);
/* max_n |W_n + K_n - (W_0 + K_0)| / (W_0 + K_0) < 1%. */
int phys_check_energy(const es1d_history *h, const char *label, phys_check *c);
/* max_n |Q_n| <= 1e-12 L: the total charge is zero to rounding at every step. */
int phys_check_charge(const es1d_history *h, double length, const char *label, phys_check *c);

/* "Landau: γ = -0.151 (theory -0.153, 1.5% off)"; a failed check adds a FAIL line. */
void phys_print(FILE *f, const phys_check *c);

#endif
