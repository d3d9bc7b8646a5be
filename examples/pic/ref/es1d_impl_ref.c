/* es1d_impl_ref.c -- the hand-written reference (es1d.c) as an es1d_impl. */
#include "es1d_impl.h"

#include <stdio.h>
#include <string.h>

static int ref_setup(void **state, const es1d_params *p, char *err, size_t errlen)
{
  es1d *s = NULL;
  int st = es1d_setup(&s, p, err, errlen);
  *state = s;
  return st;
}

static int ref_step(void *state, int64_t steps, char *err, size_t errlen)
{
  for (int64_t i = 0; i < steps; i++)
    if (es1d_step(state) != 0) {
      if (err && errlen) snprintf(err, errlen, "es1d: the histories are full");
      return -1;
    }
  return 0;
}

static int ref_histories(void *state, es1d_history *h, char *err, size_t errlen)
{
  (void)err;
  (void)errlen;
  es1d_histories(state, h);
  return 0;
}

static int ref_particles(void *state, double *x, double *v, char *err, size_t errlen)
{
  (void)err;
  (void)errlen;
  const double *px, *pv;
  int64_t n;
  es1d_particles(state, &px, &pv, &n);
  memcpy(x, px, sizeof(double) * (size_t)n);
  memcpy(v, pv, sizeof(double) * (size_t)n);
  return 0;
}

static void ref_teardown(void *state) { es1d_teardown(state); }

const es1d_impl es1d_ref_impl = {"C reference (examples/pic/ref/es1d.c)", ref_setup, ref_step,
                                 ref_histories, ref_particles, ref_teardown};
