/*
** es2d_cnp.c -- the complete 2D step that cnpc generates from examples/pic2d/es2d.cnp, as an
** es2d_impl (ref/es2d.h), so that the 2D physics tests, the demo and the benchmark run it
** like the step written as runtime calls.
**
** The driver only sets up (the parameters are checked and the particles placed by
** es2d_check_params and es2d_load, the same start bit for bit), calls es2d_gen_step() once
** per step, and reads the histories and grids when asked: nothing runs on the host between
** steps. Compile with the host unit (es2d_gen.c) or the CUDA one (es2d_gen.cu: the fields are
** then device arrays, filled and read with cnp_array_copy; ES2D_CNP_BACKEND=cuda).
*/
#include "es2d.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es2d_gen.h"

typedef struct cnp_state {
  es2d_gen *p;
  es2d_params prm;
  int64_t steps;
  double *t, *fe, *fk, *ke, *q; /* host copies of the histories, filled by histories() */
} cnp_state;

static int say(char *err, size_t errlen, const char *what, int st, const char *detail)
{
  if (err && errlen) snprintf(err, errlen, "es2d (cnp): %s: status %d%s%s", what, st,
                              detail && detail[0] ? ": " : "", detail ? detail : "");
  return -1;
}

/* Copies field `name` (host or device) to or from host memory of its own shape. */
static int xfer(es2d_gen *p, const char *name, void *host, int to_field)
{
  cnp_array f = es2d_gen_field(p, name), h;
  if (!f.data) return CNP_EINVAL;
  int st = (int)cnp_array_wrap(&h, host, CNP_BACKEND_HOST, 0, f.dtype, f.ndim, f.shape, NULL);
  if (st != CNP_OK) return st;
  return (int)(to_field ? cnp_array_copy(&f, &h, NULL) : cnp_array_copy(&h, &f, NULL));
}

static void cnp_teardown(void *state)
{
  cnp_state *s = state;
  if (!s) return;
  es2d_gen_teardown(s->p);
  free(s->t); free(s->fe); free(s->fk); free(s->ke); free(s->q);
  free(s);
}

static int cnp_setup(void **state, const es2d_params *prm, char *err, size_t errlen)
{
  *state = NULL;
  if (es2d_check_params(prm, err, errlen)) return -1;
  cnp_state *s = calloc(1, sizeof *s);
  if (!s) return say(err, errlen, "setup", CNP_ENOMEM, "out of memory");
  s->prm = *prm;
  const int64_t n = prm->n_particles;
  const int64_t hist = prm->max_steps > 0 ? prm->max_steps : 1;
  es2d_gen_config cfg = ES2D_GEN_CONFIG_INIT;
  const char *b = getenv("ES2D_CNP_BACKEND"); /* cuda: the CUDA unit on the GPU, or fail */
  cfg.backend = b && !strcmp(b, "cuda") ? CNP_BACKEND_CUDA : CNP_BACKEND_HOST;
  cfg.strict = cfg.backend == CNP_BACKEND_CUDA;
  cfg.N = n;
  cfg.nx = prm->nx;
  cfg.ny = prm->ny;
  cfg.lx = prm->lx;
  cfg.ly = prm->ly;
  cfg.dt = prm->dt;
  cfg.wq = -(double)(prm->nx * prm->ny) / (double)n;
  cfg.mass = prm->lx * prm->ly / (double)n;
  cfg.kx_mode = prm->axis ? 0 : prm->mode;   /* (ky, kx) of the perturbed mode */
  cfg.ky_mode = prm->axis ? prm->mode : 0;
  cfg.n_hist = hist;
  char msg[256] = "";
  int st = es2d_gen_setup(&s->p, &cfg, msg, sizeof msg);
  if (st != CNP_OK) {
    cnp_teardown(s);
    return say(err, errlen, "es2d_gen_setup", st, msg);
  }
  size_t hn = (size_t)hist;
  s->t = malloc(sizeof(double) * hn);
  s->fe = malloc(sizeof(double) * hn);
  s->fk = malloc(sizeof(double) * hn);
  s->ke = malloc(sizeof(double) * hn);
  s->q = malloc(sizeof(double) * hn);
  double *x = malloc(sizeof(double) * 4 * (size_t)n);
  if (!s->t || !s->fe || !s->fk || !s->ke || !s->q || !x) {
    free(x);
    cnp_teardown(s);
    return say(err, errlen, "setup", CNP_ENOMEM, "out of memory");
  }
  double *y = x + n, *vx = y + n, *vy = vx + n;
  es2d_load(prm, x, y, vx, vy);
  st = xfer(s->p, "x", x, 1);
  if (st == CNP_OK) st = xfer(s->p, "y", y, 1);
  if (st == CNP_OK) st = xfer(s->p, "vx", vx, 1);
  if (st == CNP_OK) st = xfer(s->p, "vy", vy, 1);
  free(x);
  if (st != CNP_OK) {
    cnp_teardown(s);
    return say(err, errlen, "loading the particles", st, NULL);
  }
  *state = s;
  return 0;
}

static int cnp_step(void *state, int64_t steps, char *err, size_t errlen)
{
  cnp_state *s = state;
  for (int64_t i = 0; i < steps; i++) {
    if (s->steps >= s->prm.max_steps) {
      if (err && errlen) snprintf(err, errlen, "es2d (cnp): the histories are full");
      return -1;
    }
    int st = es2d_gen_step(s->p);
    if (st != CNP_OK) return say(err, errlen, "es2d_gen_step", st, es2d_gen_error(s->p));
    s->steps++;
  }
  return 0;
}

static int cnp_histories(void *state, es2d_history *h, char *err, size_t errlen)
{
  cnp_state *s = state;
  int st = es2d_gen_sync(s->p);
  if (st != CNP_OK) return say(err, errlen, "es2d_gen_sync", st, es2d_gen_error(s->p));
  int64_t n = s->steps;
  if (n > 0 && (es2d_gen_history(s->p, "field_energy", s->fe, n) != n ||
                es2d_gen_history(s->p, "mode_energy", s->fk, n) != n ||
                es2d_gen_history(s->p, "kinetic_energy", s->ke, n) != n ||
                es2d_gen_history(s->p, "total_charge", s->q, n) != n))
    return say(err, errlen, "reading the histories", CNP_EINVAL, NULL);
  for (int64_t k = 0; k < n; k++) s->t[k] = (double)k * s->prm.dt;
  h->n_steps = n;
  h->t = s->t;
  h->field_energy = s->fe;
  h->mode_energy = s->fk;
  h->kinetic_energy = s->ke;
  h->charge = s->q;
  return 0;
}

static int cnp_grids(void *state, double *rho, double *phi, char *err, size_t errlen)
{
  cnp_state *s = state;
  int st = es2d_gen_sync(s->p);
  if (st == CNP_OK) st = xfer(s->p, "rho", rho, 0);
  if (st == CNP_OK) st = xfer(s->p, "phi", phi, 0);
  return st == CNP_OK ? 0 : say(err, errlen, "reading rho and phi", st, NULL);
}

const es2d_impl es2d_cnp_impl = {"generated (cnpc, examples/pic2d/es2d.cnp)", cnp_setup, cnp_step,
                                 cnp_histories, cnp_grids, cnp_teardown};
