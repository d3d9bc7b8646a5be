/*
** es1d_cnp.c -- the complete step that cnpc generates from examples/pic/es1d.cnp, as an
** es1d_impl (es1d_impl.h), so that the physics tests, the demo and the benchmark run it
** like the hand-written reference.
**
** The driver only sets up (the parameters are checked and the particles placed by the
** reference's es1d_check_params and es1d_load, the same start bit for bit), calls
** es1d_gen_step() once per step, and reads the histories when asked: nothing runs on the
** host between steps. Compile with the host unit (es1d_gen.c) or the CUDA one (es1d_gen.cu:
** the fields are then device arrays, filled and read with cnp_array_copy).
*/
#include "es1d_impl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "es1d_gen.h"

typedef struct cnp_state {
  es1d_gen *p;
  es1d_params prm;
  int64_t steps, rho_rows;
  double *t, *fe, *ke, *q, *rho; /* host copies of the histories, filled by histories() */
} cnp_state;

static int say(char *err, size_t errlen, const char *what, int st, const char *detail)
{
  if (err && errlen) snprintf(err, errlen, "es1d (cnp): %s: status %d%s%s", what, st,
                              detail && detail[0] ? ": " : "", detail ? detail : "");
  return -1;
}

/* Copies n doubles from host memory into field `name` (host or device). */
static int put(es1d_gen *p, const char *name, const void *src, int64_t n)
{
  cnp_array f = es1d_gen_field(p, name), h;
  if (!f.data) return CNP_EINVAL;
  int64_t shape = n;
  int st = (int)cnp_array_wrap(&h, (void *)src, CNP_BACKEND_HOST, 0, f.dtype, 1, &shape, NULL);
  if (st != CNP_OK) return st;
  return (int)cnp_array_copy(&f, &h, NULL);
}

static int get(es1d_gen *p, const char *name, void *dst, int64_t n)
{
  cnp_array f = es1d_gen_field(p, name), h;
  if (!f.data) return CNP_EINVAL;
  int64_t shape = n;
  int st = (int)cnp_array_wrap(&h, dst, CNP_BACKEND_HOST, 0, f.dtype, 1, &shape, NULL);
  if (st != CNP_OK) return st;
  return (int)cnp_array_copy(&h, &f, NULL);
}

static void cnp_teardown(void *state)
{
  cnp_state *s = state;
  if (!s) return;
  es1d_gen_teardown(s->p);
  free(s->t); free(s->fe); free(s->ke); free(s->q); free(s->rho);
  free(s);
}

static int cnp_setup(void **state, const es1d_params *prm, char *err, size_t errlen)
{
  *state = NULL;
  if (es1d_check_params(prm, err, errlen)) return -1;
  cnp_state *s = calloc(1, sizeof *s);
  if (!s) return say(err, errlen, "setup", CNP_ENOMEM, "out of memory");
  s->prm = *prm;
  const int64_t n = prm->n_particles, nc = prm->n_cells;
  const int64_t hist = prm->max_steps > 0 ? prm->max_steps : 1;
  s->rho_rows = prm->record_rho ? hist : 1;
  es1d_gen_config cfg = ES1D_GEN_CONFIG_INIT;
  const char *b = getenv("ES1D_CNP_BACKEND"); /* cuda: the CUDA unit on the GPU, or fail */
  cfg.backend = b && !strcmp(b, "cuda") ? CNP_BACKEND_CUDA : CNP_BACKEND_HOST;
  cfg.strict = cfg.backend == CNP_BACKEND_CUDA;
  cfg.N = n;
  cfg.n_cells = nc;
  cfg.n_nodes = nc + 1;
  cfg.L = prm->length;
  cfg.dt = prm->dt;
  cfg.wq = -(double)nc / (double)n;
  cfg.mass = prm->length / (double)n;
  cfg.n_hist = hist;
  cfg.rho_len = s->rho_rows * nc;
  cfg.once = hist + 1; /* step start runs on call 0 only */
  char msg[256] = "";
  int st = es1d_gen_setup(&s->p, &cfg, msg, sizeof msg);
  if (st != CNP_OK) {
    cnp_teardown(s);
    return say(err, errlen, "es1d_gen_setup", st, msg);
  }
  size_t hn = (size_t)hist;
  s->t = malloc(sizeof(double) * hn);
  s->fe = malloc(sizeof(double) * hn);
  s->ke = malloc(sizeof(double) * hn);
  s->q = malloc(sizeof(double) * hn);
  s->rho = calloc((size_t)(s->rho_rows * nc), sizeof(double));
  double *x = malloc(sizeof(double) * (size_t)n), *v = malloc(sizeof(double) * (size_t)n);
  if (!s->t || !s->fe || !s->ke || !s->q || !s->rho || !x || !v) {
    free(x);
    free(v);
    cnp_teardown(s);
    return say(err, errlen, "setup", CNP_ENOMEM, "out of memory");
  }
  es1d_load(prm, x, v);
  int64_t zero = 0;
  st = put(s->p, "x", x, n);
  if (st == CNP_OK) st = put(s->p, "v", v, n);
  if (st == CNP_OK) st = put(s->p, "calls", &zero, 1);
  if (st == CNP_OK) st = put(s->p, "rhoh", s->rho, s->rho_rows * nc);
  free(x);
  free(v);
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
      if (err && errlen) snprintf(err, errlen, "es1d (cnp): the histories are full");
      return -1;
    }
    int st = es1d_gen_step(s->p);
    if (st != CNP_OK) return say(err, errlen, "es1d_gen_step", st, es1d_gen_error(s->p));
    s->steps++;
  }
  return 0;
}

static int cnp_histories(void *state, es1d_history *h, char *err, size_t errlen)
{
  cnp_state *s = state;
  int st = es1d_gen_sync(s->p);
  if (st != CNP_OK) return say(err, errlen, "es1d_gen_sync", st, es1d_gen_error(s->p));
  int64_t n = s->steps;
  if (n > 0) {
    if (es1d_gen_history(s->p, "field_energy", s->fe, n) != n ||
        es1d_gen_history(s->p, "kinetic_energy", s->ke, n) != n ||
        es1d_gen_history(s->p, "total_charge", s->q, n) != n)
      return say(err, errlen, "reading the histories", CNP_EINVAL, NULL);
    if (s->prm.record_rho && (st = get(s->p, "rhoh", s->rho, s->rho_rows * s->prm.n_cells)))
      return say(err, errlen, "reading the rho history", st, NULL);
  }
  for (int64_t k = 0; k < n; k++) s->t[k] = (double)k * s->prm.dt;
  h->n_steps = n;
  h->n_cells = s->prm.n_cells;
  h->t = s->t;
  h->field_energy = s->fe;
  h->kinetic_energy = s->ke;
  h->charge = s->q;
  h->rho = s->prm.record_rho ? s->rho : NULL;
  return 0;
}

static int cnp_particles(void *state, double *x, double *v, char *err, size_t errlen)
{
  cnp_state *s = state;
  int st = es1d_gen_sync(s->p);
  if (st == CNP_OK) st = get(s->p, "x", x, s->prm.n_particles);
  if (st == CNP_OK) st = get(s->p, "v", v, s->prm.n_particles);
  return st == CNP_OK ? 0 : say(err, errlen, "reading the particles", st, NULL);
}

const es1d_impl es1d_cnp_impl = {"generated (cnpc, examples/pic/es1d.cnp)", cnp_setup, cnp_step,
                                 cnp_histories, cnp_particles, cnp_teardown};
