/*
** es1d.h -- a complete 1D electrostatic particle-in-cell step, written by hand in C + OpenMP:
** the reference that the generated complete step (examples/pic) is checked and timed against.
**
** Model (docs/physics.md): one species of electrons (q/m = -1) on a periodic domain [0, L)
** over a fixed neutralizing ion background of density n0 = 1; normalized units, so the
** plasma frequency is 1, times are in 1/omega_p, lengths in v_th/omega_p (= lambda_D when the
** thermal speed is 1). n_cells grid nodes x_j = j*dx, dx = L/n_cells. One step n -> n+1:
**   1. rho^n   = 1 - (n_cells/N) * sum_p CIC_j(x_p^n)        (deposited during step n-1)
**   2. E^n     Gauss's law by a prefix sum: E_{j+1/2} = dx * sum_{i<=j} rho_i, its mean
**              removed, then E_j = (E_{j-1/2} + E_{j+1/2}) / 2 at the nodes
**   3. v^{n+1/2} = v^{n-1/2} - dt * E^n(x^n)   (CIC gather, the same weights as the deposit)
**      x^{n+1}   = x^n + dt * v^{n+1/2}, wrapped into [0, L)
**      the CIC deposit of x^{n+1} for the next step, fused into the same particle loop
**   4. history entry n: time n*dt, field energy sum_j E_j^2/2 dx, kinetic energy
**      sum_p m (v^{n-1/2}^2 + v^{n+1/2}^2)/4 with m = L/N, total charge sum_j rho_j dx.
** Setup places the particles (x^0, v^0), deposits rho^0, solves E^0 and pushes the velocities
** back half a step: v^{-1/2} = v^0 + (dt/2) E^0(x^0).
**
** Determinism: particles are split into fixed chunks (the size depends only on N and
** n_cells); each chunk deposits into its own grid and keeps its own kinetic-energy partial
** sum, and the chunks are added in chunk order. So every result is bit-for-bit the same for
** any OMP_NUM_THREADS.
**
** Like libcnp: nothing here prints, aborts or exits; everything is allocated in es1d_setup
** and es1d_step allocates nothing.
*/
#ifndef ES1D_H
#define ES1D_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct es1d_params {
  int64_t n_particles;   /* N (> 0; even when v0 != 0) */
  int64_t n_cells;       /* grid nodes (>= 4) */
  double length;         /* L (> 0) */
  double dt;             /* omega_p dt (> 0) */
  int64_t max_steps;     /* capacity of the histories: es1d_step fails past it */
  double vth;            /* thermal speed (>= 0): lambda_D = vth / omega_p */
  double v0;             /* two cold (or warm) beams at +v0 and -v0, each of density 1/2 */
  double amplitude;      /* density perturbation n = 1 + amplitude * cos(k x) */
  int mode;              /* k = 2 pi mode / L */
  int quiet;             /* 1: quiet start (even positions, inverse-CDF velocities); 0: random */
  uint64_t seed;         /* random start only */
  int record_rho;        /* keep rho^n of every step (n_cells * max_steps doubles) */
} es1d_params;

/* Defaults: the Landau set-up of docs/physics.md (k lambda_D = 0.5, L = 4 pi). */
#define ES1D_PARAMS_INIT                                                                   \
  { 200000, 64, 12.566370614359172, 0.1, 1000, 1.0, 0.0, 0.01, 1, 1, 1, 0 }

typedef struct es1d es1d;

/* Per-step histories: entry n is time n*dt; n = 0 .. steps-1 after `steps` es1d_step calls.
** rho is n_steps rows of n_cells values (NULL unless params.record_rho). */
typedef struct es1d_history {
  int64_t n_steps, n_cells;
  const double *t, *field_energy, *kinetic_energy, *charge;
  const double *rho;
} es1d_history;

/* The histories of an implementation's state s that keeps them as es1d.c does: the fields
** steps, nc, t, fe, ke, q and rhoh (es1d.c, es1d_rt.c). C only (a compound literal). */
#define ES1D_HISTORY_OF(s) \
  ((es1d_history){(s)->steps, (s)->nc, (s)->t, (s)->fe, (s)->ke, (s)->q, (s)->rhoh})

/* 0 when the parameters are valid, or -1 with a message in err. */
int es1d_check_params(const es1d_params *params, char *err, size_t errlen);
/* The start of the model: x^0 and v^0 (n_particles each) of valid params, the same bits for
** any thread count. (es1d_setup does this, then v^0 -> v^{-1/2}.) */
void es1d_load(const es1d_params *params, double *x, double *v);
/* Returns 0, or -1 with a message in err (bad parameters, out of memory). */
int es1d_setup(es1d **out, const es1d_params *params, char *err, size_t errlen);
/* One complete step (above). Returns 0, or -1 when the histories are full. */
int es1d_step(es1d *s);
void es1d_histories(const es1d *s, es1d_history *h);
/* The particles now: x^n and v^{n-1/2} (N each), and the grid of the last solve. */
void es1d_particles(const es1d *s, const double **x, const double **v, int64_t *n);
void es1d_grid(const es1d *s, const double **rho, const double **E, int64_t *n_cells);
/* Bytes a step reads and writes per particle in its one particle loop (x, v: read + write). */
double es1d_bytes_per_particle(void);
void es1d_teardown(es1d *s);

#ifdef __cplusplus
}
#endif
#endif
