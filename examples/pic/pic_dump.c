/*
** pic_dump.c -- the C driver the Fortran, C++ and Python drivers of examples/pic are checked
** against (bit for bit on the host backend): the same small run as examples/fortran/pic_f.f90,
** python/tests/test_pic.py and examples/cxx/pic_cxx.cpp, with initial data computed from
** + - * / and truncation only (no libm, so every language gets the same bits), the host
** Gauss solve of pic_demo.c, and the final state dumped as raw bytes:
**   int64 live; f64 x[live]; f64 v[0][live], v[1][live], v[2][live]; f64 w[live];
**   f64 rho[n_cells] (the last snapshot); f64 E[n_cells]
**
**   pic_dump OUT.bin [particles [steps]]     (defaults 20000 particles, 40 steps, 64 cells)
*/
#include "pic.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double frac(double t) { return t - trunc(t); }

static int fail(const char *what, int st, pic *p)
{
  fprintf(stderr, "pic_dump: %s: %s (%s)\n", what, cnp_status_name((cnp_status)st),
          p ? pic_error(p) : cnp_last_error());
  return 1;
}

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: pic_dump OUT.bin [particles [steps]]\n");
    return 2;
  }
  int64_t n = argc > 2 ? atoll(argv[2]) : 20000, nc = 64;
  int steps = argc > 3 ? atoi(argv[3]) : 40;
  const double dt = 0.01, v0 = 0.1, g = 0.6180339887498949, h = 0.7548776662466927;
  pic_config cfg = PIC_CONFIG_INIT;
  cfg.N = n;
  cfg.n_cells = nc;
  cfg.qm = -1.0;
  pic *p = NULL;
  char err[512];
  int st = pic_setup(&p, &cfg, err, sizeof err);
  if (st != CNP_OK) {
    fprintf(stderr, "pic_dump: setup: %s\n", err);
    return 1;
  }
  if (pic_backend(p) != CNP_BACKEND_HOST) return fail("needs the host backend", CNP_EDEVICE, p);
  cnp_array fx = pic_field(p, "x"), fv = pic_field(p, "v"), fw = pic_field(p, "w");
  double *x = fx.data, *w = fw.data;
  for (int64_t i = 0; i < n; i++) {
    double t = (double)(i + 1);
    double u1 = frac(t * g);
    x[i] = u1 + 0.01 * u1 * (1.0 - u1);
    double *v = fv.data;
    int64_t s0 = fv.strides[0] / 8;
    v[i] = ((i & 1) ? v0 : -v0) + 0.01 * (frac(t * h) - 0.5);
    v[s0 + i] = 0.02 * (frac(t * g * h) - 0.5);
    v[2 * s0 + i] = 0.02 * (frac(t * 0.5 * g) - 0.5);
    w[i] = 1.0 / (double)n;
  }
  double *E = calloc((size_t)nc, sizeof(double));
  cnp_array rho = {0};
  for (int s = 0; s < steps; s++) {
    cnp_array fE = pic_field(p, "E");
    for (int64_t k = 0; k < nc; k++) ((double *)fE.data)[k] = E[k];
    if ((st = pic_step(p, dt)) != CNP_OK) return fail("step", st, p);
    if ((st = pic_sync(p)) != CNP_OK) return fail("sync", st, p);
    if ((st = pic_snapshot(p, "out", &rho)) != CNP_OK) return fail("snapshot", st, p);
    const double *r = rho.data;
    double total = 0.0, acc = 0.0, emean = 0.0;
    for (int64_t k = 0; k < nc; k++) total += r[k];
    double mean = total / (double)nc;
    for (int64_t k = 0; k < nc; k++) {
      acc += r[k] - mean;
      E[k] = -4.0 * acc;
      emean += E[k] / (double)nc;
    }
    for (int64_t k = 0; k < nc; k++) E[k] -= emean;
  }
  int64_t live = pic_extent(p, "N");
  fx = pic_field(p, "x");
  fv = pic_field(p, "v");
  fw = pic_field(p, "w");
  FILE *f = fopen(argv[1], "wb");
  if (!f) return fail("cannot write the output", CNP_EIO, p);
  fwrite(&live, sizeof live, 1, f);
  fwrite(fx.data, 8, (size_t)live, f);
  for (int c = 0; c < 3; c++) fwrite((char *)fv.data + c * fv.strides[0], 8, (size_t)live, f);
  fwrite(fw.data, 8, (size_t)live, f);
  fwrite(rho.data, 8, (size_t)nc, f);
  fwrite(E, 8, (size_t)nc, f);
  int bad = fclose(f) != 0;
  printf("pic_dump: %lld of %lld particles live after %d steps\n", (long long)live, (long long)n, steps);
  pic_teardown(p);
  free(E);
  return bad;
}
