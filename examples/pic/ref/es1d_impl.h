/*
** es1d_impl.h -- a complete 1D electrostatic PIC step behind function pointers, so that the
** same physics tests, fits and demo driver (tests/physics/, examples/pic/physics_demo.c) run
** any implementation of it: the hand-written C reference (es1d_ref_impl, es1d_impl_ref.c)
** and the pipeline cnpc generates from examples/pic/es1d.cnp (es1d_cnp_impl, es1d_cnp.c).
**
** An implementation follows the model of es1d.h exactly (the same parameters, start, step and
** history definitions): entry n of each history is time n*dt, written by the (n+1)-th step.
*/
#ifndef ES1D_IMPL_H
#define ES1D_IMPL_H

#include "es1d.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct es1d_impl {
  const char *name;
  /* Allocates everything and places the particles; 0, or -1 with a message in err. */
  int (*setup)(void **state, const es1d_params *params, char *err, size_t errlen);
  /* Advances `steps` steps (the histories must have room); 0, or -1 with a message. */
  int (*step)(void *state, int64_t steps, char *err, size_t errlen);
  /* The histories so far (pointers valid until the next step or teardown). */
  int (*histories)(void *state, es1d_history *h, char *err, size_t errlen);
  /* The particles now, x^n and v^{n-1/2}, copied into x and v (room for N each). May be NULL
  ** for an implementation that cannot give them; the phase-space plots are then skipped. */
  int (*particles)(void *state, double *x, double *v, char *err, size_t errlen);
  void (*teardown)(void *state);
} es1d_impl;

extern const es1d_impl es1d_ref_impl;
/* The pipeline cnpc generates from examples/pic/es1d.cnp (examples/pic/es1d_cnp.c). */
extern const es1d_impl es1d_cnp_impl;
/* The same step as separate libcnp runtime calls (examples/pic/es1d_rt.c). */
extern const es1d_impl es1d_rt_impl;

#ifdef __cplusplus
}
#endif
#endif
