/*
** physics_demo.c -- runs the Landau-damping and two-stream set-ups of docs/physics.md with a
** complete 1D electrostatic PIC step (through es1d_impl: the hand-written C reference now,
** the generated pipeline later), prints the measured rates next to theory, and writes the data
** that scripts/plot_physics.py draws:
**   CASE_history.npy   (steps, 4): t, field energy, kinetic energy, total charge
**   CASE_rho.npy       (steps, n_cells): charge density per step
**   CASE_phase_start.npy, CASE_phase_sat.npy, CASE_phase_end.npy   (N, 2): x, v
**   CASE_fit.json      parameters, measured and theory rates, fit windows, snapshot times
** CASE is landau and two_stream. Exits 1 with a FAIL line when a rate is outside tolerance.
**
**   physics_demo [--out DIR] [--impl ref|cnp]   (cnp: the step generated from es1d.cnp)
*/
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cases.h"
#include "npy.h"

static char err[512];
static const char *outdir = "out";

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A C-order float64 array as NumPy's .npy in outdir. */
static int write_npy(const char *name, const double *data, int64_t rows, int64_t cols)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", outdir, name);
  int rc = npy_write(path, data, rows, cols);
  if (rc == -1) fprintf(stderr, "physics_demo: cannot write %s: %s\n", path, strerror(errno));
  else if (rc) fprintf(stderr, "physics_demo: writing %s failed\n", path);
  return rc ? -1 : 0;
}

static int write_history(const char *cs, const es1d_history *h)
{
  int64_t n = h->n_steps;
  double *a = malloc(sizeof(double) * (size_t)(4 * n));
  if (!a) return -1;
  for (int64_t i = 0; i < n; i++) {
    a[4 * i] = h->t[i];
    a[4 * i + 1] = h->field_energy[i];
    a[4 * i + 2] = h->kinetic_energy[i];
    a[4 * i + 3] = h->charge[i];
  }
  char name[256];
  snprintf(name, sizeof name, "%s_history.npy", cs);
  int st = write_npy(name, a, n, 4);
  free(a);
  if (!st && h->rho) {
    snprintf(name, sizeof name, "%s_rho.npy", cs);
    st = write_npy(name, h->rho, n, h->n_cells);
  }
  return st;
}

static int write_phase(const es1d_impl *impl, void *st, int64_t n, const char *cs,
                       const char *when, double *x, double *v, double *xv)
{
  if (!impl->particles) return 0;
  if (impl->particles(st, x, v, err, sizeof err)) {
    fprintf(stderr, "physics_demo: %s: %s\n", impl->name, err);
    return -1;
  }
  for (int64_t i = 0; i < n; i++) {
    xv[2 * i] = x[i];
    xv[2 * i + 1] = v[i];
  }
  char name[256];
  snprintf(name, sizeof name, "%s_phase_%s.npy", cs, when);
  return write_npy(name, xv, n, 2);
}

/* Runs a case, snapshots the particles at steps 0, k_sat and the end, writes the data. */
static int run_case(const es1d_impl *impl, const char *cs, const es1d_params *p0, int64_t steps,
                    int64_t k_sat, es1d_history *h, void **state)
{
  es1d_params p = *p0;
  p.record_rho = 1;
  p.max_steps = steps;
  double t0 = now();
  if (impl->setup(state, &p, err, sizeof err)) {
    fprintf(stderr, "physics_demo: %s: %s\n", impl->name, err);
    return -1;
  }
  size_t n = (size_t)p.n_particles;
  double *x = malloc(sizeof(double) * n), *v = malloc(sizeof(double) * n);
  double *xv = malloc(sizeof(double) * 2 * n);
  int st = (!x || !v || !xv) ? -1 : 0;
  const int64_t marks[3] = {0, k_sat, steps};
  const char *names[3] = {"start", "sat", "end"};
  int64_t done = 0;
  for (int m = 0; m < 3 && !st; m++) {
    /* step to the mark in tenths, with a progress line */
    while (done < marks[m] && !st) {
      int64_t chunk = steps / 10 > 0 ? steps / 10 : 1;
      if (done + chunk > marks[m]) chunk = marks[m] - done;
      st = impl->step(*state, chunk, err, sizeof err);
      if (st) fprintf(stderr, "physics_demo: %s: %s\n", impl->name, err);
      done += chunk;
      fprintf(stderr, "\r%s: step %lld / %lld (%lld particles, %.1f s)", cs, (long long)done,
              (long long)steps, (long long)p.n_particles, now() - t0);
    }
    if (!st) st = write_phase(impl, *state, (int64_t)n, cs, names[m], x, v, xv);
  }
  fprintf(stderr, "\n");
  if (!st && impl->histories(*state, h, err, sizeof err)) {
    fprintf(stderr, "physics_demo: %s: %s\n", impl->name, err);
    st = -1;
  }
  if (!st) st = write_history(cs, h);
  free(x);
  free(v);
  free(xv);
  return st;
}

static FILE *open_json(const char *cs)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/%s_fit.json", outdir, cs);
  FILE *f = fopen(path, "w");
  if (!f) fprintf(stderr, "physics_demo: cannot write %s: %s\n", path, strerror(errno));
  return f;
}

static void json_params(FILE *f, const es1d_params *p, const char *impl)
{
  fprintf(f, "  \"implementation\": \"%s\",\n", impl);
  fprintf(f, "  \"n_particles\": %lld, \"n_cells\": %lld, \"length\": %.17g, \"dt\": %.17g,\n",
          (long long)p->n_particles, (long long)p->n_cells, p->length, p->dt);
  fprintf(f, "  \"vth\": %.17g, \"v0\": %.17g, \"amplitude\": %.17g, \"mode\": %d,\n", p->vth,
          p->v0, p->amplitude, p->mode);
}

int main(int argc, char **argv)
{
  const es1d_impl *impl = &es1d_ref_impl;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--out") && a + 1 < argc) outdir = argv[++a];
    else if (!strcmp(argv[a], "--impl") && a + 1 < argc) {
      a++;
      if (!strcmp(argv[a], "ref")) impl = &es1d_ref_impl;
#ifdef ES1D_HAVE_CNP
      else if (!strcmp(argv[a], "cnp")) impl = &es1d_cnp_impl;
      else if (!strcmp(argv[a], "rt")) impl = &es1d_rt_impl;
#endif
      else {
        fprintf(stderr, "physics_demo: no implementation named '%s'\n", argv[a]);
        return 2;
      }
    } else {
      fprintf(stderr, "usage: physics_demo [--out DIR] [--impl ref|cnp|rt]\n");
      return 2;
    }
  }
  if (mkdir(outdir, 0777) && errno != EEXIST) {
    fprintf(stderr, "physics_demo: cannot create %s: %s\n", outdir, strerror(errno));
    return 1;
  }
  int failed = 0;
  es1d_history h;
  void *st = NULL;

  /* Landau: 30 / omega_p, so the plot shows the noise floor after the fit window. */
  es1d_params p;
  int64_t steps;
  phys_landau_params(&p, &steps);
  steps = 300;
  int64_t k_mid = (int64_t)(PHYS_LANDAU_T1 / p.dt + 0.5);
  if (run_case(impl, "landau", &p, steps, k_mid, &h, &st)) return 1;
  phys_check lc[2];
  int r = phys_check_landau(&h, lc, err, sizeof err);
  if (r < 0) {
    printf("FAIL: %s\n", err);
    return 1;
  }
  phys_print(stdout, &lc[0]);
  phys_print(stdout, &lc[1]);
  failed += r;
  FILE *f = open_json("landau");
  if (!f) return 1;
  fprintf(f, "{\n  \"case\": \"Landau damping, k lambda_D = 0.5\",\n");
  json_params(f, &p, impl->name);
  fprintf(f, "  \"gamma\": %.17g, \"gamma_theory\": %.17g, \"omega\": %.17g, \"omega_theory\": %.17g,\n",
          lc[0].measured, lc[0].theory, lc[1].measured, lc[1].theory);
  fprintf(f, "  \"fit_t0\": %.17g, \"fit_t1\": %.17g,\n", PHYS_LANDAU_T0, PHYS_LANDAU_T1);
  fprintf(f, "  \"t_start\": 0, \"t_sat\": %.17g, \"t_end\": %.17g, \"sat_label\": \"end of the fit window\"\n}\n",
          (double)k_mid * p.dt, (double)steps * p.dt);
  fclose(f);
  impl->teardown(st);

  /* Two-stream: a first run finds the saturation, the second snapshots there. */
  phys_two_stream_params(&p, &steps);
  steps = 500;
  double ta, tb, tsat;
  phys_check tc;
  if (phys_run(impl, &p, steps, &st, &h, err, sizeof err)) {
    fprintf(stderr, "physics_demo: %s: %s\n", impl->name, err);
    return 1;
  }
  r = phys_check_two_stream(&h, &tc, &ta, &tb, &tsat, err, sizeof err);
  impl->teardown(st);
  if (r < 0) {
    printf("FAIL: %s\n", err);
    return 1;
  }
  int64_t k_sat = (int64_t)(tsat / p.dt + 0.5);
  if (run_case(impl, "two_stream", &p, steps, k_sat, &h, &st)) return 1;
  phys_print(stdout, &tc);
  failed += r;
  f = open_json("two_stream");
  if (!f) return 1;
  fprintf(f, "{\n  \"case\": \"cold two-stream, k v0 = sqrt(3/8)\",\n");
  json_params(f, &p, impl->name);
  fprintf(f, "  \"gamma\": %.17g, \"gamma_theory\": %.17g,\n", tc.measured, tc.theory);
  fprintf(f, "  \"fit_t0\": %.17g, \"fit_t1\": %.17g,\n", ta, tb);
  fprintf(f, "  \"t_start\": 0, \"t_sat\": %.17g, \"t_end\": %.17g, \"sat_label\": \"saturation\"\n}\n",
          tsat, (double)steps * p.dt);
  fclose(f);
  impl->teardown(st);

  if (failed) {
    printf("FAIL: %d of the 3 measured rates are outside their tolerance\n", failed);
    return 1;
  }
  printf("all 3 rates within tolerance; data in %s/\n", outdir);
  return 0;
}
