/*
** es2d.h -- a complete 2D electrostatic particle-in-cell step on a periodic box, and the
** function-pointer interface (es2d_impl) through which the physics tests, the demo and the
** benchmark run each implementation of it: es2d_rt_impl (ref/es2d.c, the step written with
** libcnp's grid runtime calls: cnp_deposit, cnp_fft_*, cnp_gather) and es2d_cnp_impl
** (es2d_cnp.c, the step cnpc generates from examples/pic2d/es2d.cnp).
**
** Model (docs/physics.md, "2D"): electrons (q/m = -1) over a fixed neutralizing ion
** background of density 1 on the periodic box [0, lx) x [0, ly); normalized units (omega_p =
** 1, lengths in lambda_D when vth = 1). Grid G = [ny, nx] (C order: x is the unit-stride
** axis), node (j, i) at (x, y) = (i dx, j dy), dx = lx/nx, dy = ly/ny, cell area dA = dx dy.
** N macro-particles of charge -lx ly / N and mass lx ly / N. One step n -> n+1 (state x^n,
** v^{n-1/2}):
**   1. rho^n   = 1 + wq * sum_p CIC(x_p^n, y_p^n)   (unit weights, wq = -nx ny / N)
**   2. phi^n   by FFT: phi_hat = rho_hat / |k|^2 (k = 0: 0), |k|^2 = kx^2 + ky^2 the exact
**              wave numbers of the r2c layout
**   3. E^n     central differences of phi: Ex = -(phi[j, i+1] - phi[j, i-1]) / (2 dx), Ey
**              likewise along j (periodic)
**   4. CIC gather of E^n at x^n; v^{n+1/2} = v^{n-1/2} - dt E, x^{n+1} = x^n + dt v^{n+1/2},
**      wrapped into the box. The first step (n = 0) starts from v^0 and pushes it back half a
**      step first, v^{-1/2} = v^0 + (dt/2) E^0(x^0), inside the same push.
**   5. history entry n (time n dt): field energy sum (Ex^2 + Ey^2) / 2 dA, kinetic energy
**      m sum_p (|v^{n-1/2}|^2 + |v^{n+1/2}|^2) / 4, total charge sum rho dA, and the field
**      energy of the perturbed mode k = +-(2 pi mode / L) along `axis`, spectrally: dA
**      |rho_hat_k|^2 / (nx ny |k|^2) (the fits use it: the grid's other modes hold the noise).
**
** Quiet start (es2d_load): along the perturbed axis (`axis`), the 1D quiet start of
** examples/pic/ref/es1d.h with all N particles: particle m at s0 = (m + 1/2) L/N, displaced by
** -(a/k) sin(k s0) for the density 1 + a cos(k s), with the velocity vth Phi^-1((bitrev(m) +
** 1/2) / 2^B) along. Across: particle m is in beamlet c = m mod beams and row b = (m / beams)
** mod rows, at (b + 1/2) L'/rows, with the velocity vth Phi^-1((c + 1/2) / beams) across.
** The density summed across is then exactly the 1D quiet start's (the Landau mode is as
** quiet as in 1D with N particles); each beamlet is a set of evenly spaced rows moving
** together, whose own 1D loadings (every (beams rows)-th particle) are quiet too, so the
** modes across only hold the small differences between those.
** Like libcnp: nothing prints, aborts or exits; everything is allocated at setup.
*/
#ifndef ES2D_H
#define ES2D_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct es2d_params {
  int64_t nx, ny;              /* grid points along x (the unit-stride axis) and y (>= 4) */
  double lx, ly;               /* box lengths (> 0) */
  int64_t n_particles;         /* N (divisible by rows * beams) */
  int64_t rows;                /* rows across of the quiet start (a whole number per cell) */
  int64_t beams;               /* beamlets: velocities across */
  int axis;                    /* 0: perturbation along x, 1: along y */
  int mode;                    /* k = 2 pi mode / (lx or ly), 0 <= mode <= n_axis / 2 */
  double amplitude;            /* density 1 + amplitude cos(k s), |amplitude| < 1 */
  double vth;                  /* thermal speed (>= 0): lambda_D = vth / omega_p */
  double dt;                   /* omega_p dt (> 0) */
  int64_t max_steps;           /* capacity of the histories (>= 0) */
} es2d_params;

/* The Landau set-up of docs/physics.md: k lambda_D = 0.5 along x, 64 x 16 cells, N = 2^17. */
#define ES2D_PARAMS_INIT \
  { 64, 16, 12.566370614359172, 3.141592653589793, 131072, 16, 16, 0, 1, 0.01, 1.0, 0.1, 150 }

/* Entry n is time n*dt, written by the (n+1)-th step; n = 0 .. n_steps-1. */
typedef struct es2d_history {
  int64_t n_steps;
  const double *t, *field_energy, *kinetic_energy, *charge;
  const double *mode_energy;   /* the field energy of the perturbed mode alone (below) */
} es2d_history;

typedef struct es2d_impl {
  const char *name;
  /* Allocates everything and places the particles; 0, or -1 with a message in err. */
  int (*setup)(void **state, const es2d_params *params, char *err, size_t errlen);
  /* Advances `steps` steps (-1 with a message when the histories are full). */
  int (*step)(void *state, int64_t steps, char *err, size_t errlen);
  /* The histories so far (pointers valid until the next step or teardown). */
  int (*histories)(void *state, es2d_history *h, char *err, size_t errlen);
  /* rho^n and phi^n of the last step's solve (step n-1 solved for x^{n-1}: after `steps`
  ** steps, the fields at time (steps-1) dt), copied into rho and phi (ny * nx each). */
  int (*grids)(void *state, double *rho, double *phi, char *err, size_t errlen);
  void (*teardown)(void *state);
} es2d_impl;

/* The step as libcnp grid runtime calls (ref/es2d.c). */
extern const es2d_impl es2d_rt_impl;
/* The pipeline cnpc generates from examples/pic2d/es2d.cnp (es2d_cnp.c). */
extern const es2d_impl es2d_cnp_impl;

/* 0 when the parameters are valid, or -1 with a message in err. */
int es2d_check_params(const es2d_params *p, char *err, size_t errlen);
/* The quiet start x^0, y^0, v^0 (N each): the same bits for any
** thread count. */
void es2d_load(const es2d_params *p, double *x, double *y, double *vx, double *vy);

#ifdef __cplusplus
}
#endif
#endif
