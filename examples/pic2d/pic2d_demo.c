/*
** pic2d_demo.c -- runs the 2D Landau set-up of docs/physics.md ("2D") with a complete 2D
** electrostatic PIC step (through es2d_impl: the step generated from es2d.cnp, or the one
** written as runtime calls), prints the measured rate and frequency next to theory, and
** writes the data scripts/plot_pic2d.py draws (in DIR):
**   history.npy      (steps, 5): t, field energy, mode energy, kinetic energy, total charge
**   rho.npy, phi.npy (snapshots * ny, nx): rho and phi at the snapshot times, stacked
**   pic2d_fit.json   parameters, measured and theory values, the fit window, snapshot times
** Exits 1 with a FAIL line when a value is outside its tolerance.
**
**   pic2d_demo [--out DIR] [--impl cnp|rt] [--axis 0|1]   (default: cnp when built)
*/
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cases2d.h"
#include "npy.h"

static const char *outdir = "out/pic2d";

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int write_npy(const char *name, const double *data, int64_t rows, int64_t cols)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", outdir, name);
  int rc = npy_write(path, data, rows, cols);
  if (rc == -1) fprintf(stderr, "pic2d_demo: cannot write %s: %s\n", path, strerror(errno));
  else if (rc) fprintf(stderr, "pic2d_demo: writing %s failed\n", path);
  return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
  const es2d_impl *impl = NULL;
  int axis = 0;
#ifdef ES2D_HAVE_CNP
  const char *name = "cnp";
#else
  const char *name = "rt"; /* a build without the generated step */
#endif
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--out") && a + 1 < argc) outdir = argv[++a];
    else if (!strcmp(argv[a], "--impl") && a + 1 < argc) name = argv[++a];
    else if (!strcmp(argv[a], "--axis") && a + 1 < argc) axis = atoi(argv[++a]) != 0;
    else {
      fprintf(stderr, "usage: pic2d_demo [--out DIR] [--impl cnp|rt] [--axis 0|1]\n");
      return 2;
    }
  }
  if (!strcmp(name, "rt")) impl = &es2d_rt_impl;
#ifdef ES2D_HAVE_CNP
  if (!strcmp(name, "cnp")) impl = &es2d_cnp_impl;
#endif
  if (!impl) {
    fprintf(stderr, "pic2d_demo: no implementation named '%s' in this build\n", name);
    return 2;
  }
  es2d_params p;
  int64_t steps;
  phys2d_landau_params(&p, axis, &steps);
  /* snapshots after these many steps: the grids of time (k - 1) dt */
  enum { NSNAP = 4 };
  const int64_t snap[NSNAP] = {1, 21, 61, 141};
  const int64_t ng = p.nx * p.ny;
  double *rho = malloc(sizeof(double) * (size_t)(NSNAP * ng));
  double *phi = malloc(sizeof(double) * (size_t)(NSNAP * ng));
  char err[512];
  void *st = NULL;
  if (!rho || !phi) {
    fprintf(stderr, "pic2d_demo: out of memory\n");
    return 1;
  }
  printf("pic2d: 2D Landau damping along %s, k lambda_D = 0.5, %lld x %lld grid, %lld particles, "
         "%lld steps (%s)\n", axis ? "y" : "x", (long long)p.nx, (long long)p.ny,
         (long long)p.n_particles, (long long)steps, impl->name);
  double t0 = now();
  int64_t done = 0;
  if (impl->setup(&st, &p, err, sizeof err)) goto fail;
  for (int k = 0; k < NSNAP; k++) {
    if (impl->step(st, snap[k] - done, err, sizeof err)) goto fail;
    done = snap[k];
    if (impl->grids(st, rho + k * ng, phi + k * ng, err, sizeof err)) goto fail;
  }
  if (impl->step(st, steps - done, err, sizeof err)) goto fail;
  double secs = now() - t0;
  es2d_history h;
  if (impl->histories(st, &h, err, sizeof err)) goto fail;
  phys_check c[2];
  int failed = phys2d_check_landau(&h, c, err, sizeof err);
  if (failed < 0) {
    printf("FAIL: %s\n", err);
  } else {
    phys_print(stdout, &c[0]);
    phys_print(stdout, &c[1]);
  }
  printf("%.2f s, %.1f ns per particle per step\n", secs,
         1e9 * secs / ((double)steps * (double)p.n_particles));
  double *hist = malloc(sizeof(double) * (size_t)(5 * h.n_steps));
  if (!hist) return 1;
  for (int64_t n = 0; n < h.n_steps; n++) {
    double row[5] = {h.t[n], h.field_energy[n], h.mode_energy[n], h.kinetic_energy[n], h.charge[n]};
    memcpy(hist + 5 * n, row, sizeof row);
  }
  int wr = write_npy("history.npy", hist, h.n_steps, 5) ||
           write_npy("rho.npy", rho, NSNAP * p.ny, p.nx) ||
           write_npy("phi.npy", phi, NSNAP * p.ny, p.nx);
  char path[1024];
  snprintf(path, sizeof path, "%s/pic2d_fit.json", outdir);
  FILE *f = fopen(path, "w");
  if (f) {
    fprintf(f, "{\"impl\": \"%s\", \"axis\": %d, \"nx\": %lld, \"ny\": %lld, \"lx\": %.17g, "
               "\"ly\": %.17g, \"n_particles\": %lld, \"dt\": %.17g, \"steps\": %lld,\n",
            impl->name, axis, (long long)p.nx, (long long)p.ny, p.lx, p.ly,
            (long long)p.n_particles, p.dt, (long long)steps);
    fprintf(f, " \"gamma\": %.17g, \"omega\": %.17g, \"gamma_theory\": %.17g, "
               "\"omega_theory\": %.17g, \"fit_t0\": %g, \"fit_t1\": %g,\n",
            failed < 0 ? 0.0 : c[0].measured, failed < 0 ? 0.0 : c[1].measured,
            PHYS_LANDAU_GAMMA, PHYS_LANDAU_OMEGA, PHYS_LANDAU_T0, PHYS2D_LANDAU_T1);
    fprintf(f, " \"snap_t\": [");
    for (int k = 0; k < NSNAP; k++) fprintf(f, "%s%.17g", k ? ", " : "", (double)(snap[k] - 1) * p.dt);
    fprintf(f, "]}\n");
    wr |= fclose(f) != 0;
  } else {
    wr = 1;
  }
  free(hist);
  free(rho);
  free(phi);
  impl->teardown(st);
  if (wr) {
    fprintf(stderr, "pic2d_demo: writing into %s failed\n", outdir);
    return 1;
  }
  printf("wrote %s/history.npy rho.npy phi.npy pic2d_fit.json\n", outdir);
  return failed != 0;
fail:
  fprintf(stderr, "pic2d_demo: %s\n", err);
  if (st) impl->teardown(st);
  return 1;
}
