/*
** test_physics2d.c -- the physics tests (ctest -L physics; docs/physics.md, "2D") of the
** complete 2D electrostatic PIC step of examples/pic2d, run through the es2d_impl interface so
** that the same tests run the step written as runtime calls (rt) and the generated one (cnp).
**
**   test_physics2d [--impl rt|cnp] CASE
**   CASE: landau (k lambda_D = 0.5 along x) | landau_y (the same along y) | cold (a cold
**         plasma oscillation) | energy | charge | threads | params | match (NAME against rt,
**         step by step)
** The set-ups are in cases2d.c; the fits and verdict lines are the 1D tests' (cases.c, fit.c),
** the 2D histories passed to them as an es1d_history. PHYS2D_DUMP=1 prints the Landau
** histories (t, field energy, mode energy, kinetic energy), one line a step.
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cases.h"
#include "es2d.h"
#include "fit.h"
#include "cases2d.h"

static const struct {
  const char *name;
  const es2d_impl *impl;
} impls[] = {
    {"rt", &es2d_rt_impl},
#ifdef ES2D_HAVE_CNP
    {"cnp", &es2d_cnp_impl},
#endif
};

static char err[512];

static int run(const es2d_impl *impl, const es2d_params *p, int64_t steps, void **st,
               es2d_history *h)
{
  if (phys2d_run(impl, p, steps, st, h, err, sizeof err)) {
    fprintf(stderr, "FAIL: %s: %s\n", impl->name, err);
    return -1;
  }
  return 0;
}

static int conservation(const es2d_impl *impl, int energy)
{
  int failed = 0;
  for (int which = 0; which < 2; which++) {
    es2d_params p;
    int64_t steps;
    const char *label = which ? "2D cold plasma" : "2D Landau";
    if (which) phys2d_cold_params(&p, &steps);
    else phys2d_landau_params(&p, 0, &steps);
    p.n_particles = PHYS2D_CONSERVATION_PARTICLES;
    void *st;
    es2d_history h;
    if (run(impl, &p, PHYS_CONSERVATION_STEPS, &st, &h)) return 1;
    es1d_history h1 = phys2d_as_1d(&h);
    phys_check c;
    failed += energy ? phys_check_energy(&h1, label, &c)
                     : phys_check_charge(&h1, p.lx * p.ly, label, &c);
    phys_print(stdout, &c);
    impl->teardown(st);
  }
  return failed != 0;
}

/* setup refuses bad parameters with a message, and step a full history. */
static int params(const es2d_impl *impl)
{
  int failed = 0;
  for (int k = 0; k < 8; k++) {
    es2d_params p;
    int64_t steps;
    phys2d_landau_params(&p, 0, &steps);
    p.n_particles = 1024;
    switch (k) {
    case 0: p.n_particles = 1000; break;
    case 1: p.ny = 2; break;
    case 2: p.dt = 0; break;
    case 3: p.axis = 2; break;
    case 4: p.mode = 33; break;
    case 5: p.amplitude = 1.5; break;
    case 6: p.vth = -1; break;
    case 7: p.max_steps = -1; break;
    }
    void *s = &p;
    char msg[128] = "";
    int st = impl->setup(&s, &p, msg, sizeof msg);
    printf("bad parameters %d: %s\n", k, msg);
    if (st != -1 || s != NULL || !msg[0]) {
      printf("FAIL: setup accepted bad parameters (%d)\n", k);
      failed = 1;
      if (st == 0) impl->teardown(s);
    }
  }
  es2d_params p;
  int64_t steps;
  phys2d_landau_params(&p, 0, &steps);
  p.n_particles = 1024;
  p.max_steps = 2;
  void *s;
  if (impl->setup(&s, &p, err, sizeof err)) {
    printf("FAIL: %s\n", err);
    return 1;
  }
  int a = impl->step(s, 1, err, sizeof err), b = impl->step(s, 1, err, sizeof err);
  int c = impl->step(s, 1, err, sizeof err);
  es2d_history h;
  if (impl->histories(s, &h, err, sizeof err)) h.n_steps = -1;
  if (a || b || c != -1 || h.n_steps != 2) {
    printf("FAIL: a history of 2 steps took %lld (step results %d %d %d)\n",
           (long long)h.n_steps, a, b, c);
    failed = 1;
  } else {
    printf("a third step into a history of 2: %s\n", err);
  }
  impl->teardown(s);
  return failed;
}

/* impl against the runtime-call step on the Landau set-up, step by step: the largest
** relative differences of the energies over the first steps, and of rho and phi at the end
** (the same discretization, additions in another order). */
static int match(const es2d_impl *impl)
{
  es2d_params p;
  int64_t steps;
  phys2d_landau_params(&p, 0, &steps);
  p.n_particles = 32768;
  steps = 50;
  void *sa, *sb;
  es2d_history a, b;
  if (run(&es2d_rt_impl, &p, steps, &sa, &a)) return 1;
  if (run(impl, &p, steps, &sb, &b)) return 1;
  double dfe = 0, dke = 0, dq = 0, drho = 0, dphi = 0;
  for (int64_t n = 0; n < steps; n++) {
    double e = fabs(a.field_energy[n] - b.field_energy[n]) / a.field_energy[0];
    double k = fabs(a.kinetic_energy[n] - b.kinetic_energy[n]) / a.kinetic_energy[n];
    dfe = e > dfe ? e : dfe;
    dke = k > dke ? k : dke;
    dq = fabs(b.charge[n]) > dq ? fabs(b.charge[n]) : dq;
  }
  size_t ng = (size_t)(p.nx * p.ny);
  double *g = malloc(sizeof(double) * 4 * ng);
  if (!g) return 1;
  int failed = 0;
  if (es2d_rt_impl.grids(sa, g, g + ng, err, sizeof err) ||
      impl->grids(sb, g + 2 * ng, g + 3 * ng, err, sizeof err)) {
    printf("FAIL: %s\n", err);
    failed = 1;
  }
  double pmax = 0;
  for (size_t k = 0; k < ng && !failed; k++) {
    double r = fabs(g[k] - g[2 * ng + k]), f = fabs(g[ng + k] - g[3 * ng + k]);
    drho = r > drho ? r : drho;
    dphi = f > dphi ? f : dphi;
    pmax = fabs(g[ng + k]) > pmax ? fabs(g[ng + k]) : pmax;
  }
  free(g);
  printf("%s against the runtime calls over %lld steps (2D Landau, %lld particles):\n",
         impl->name, (long long)steps, (long long)p.n_particles);
  printf("  max |dW|/W_0 = %.3g, max |dK|/K = %.3g, max |Q| = %.3g, at the end max |d rho| = "
         "%.3g, max |d phi| / max |phi| = %.3g\n", dfe, dke, dq, drho, dphi / pmax);
  es2d_rt_impl.teardown(sa);
  impl->teardown(sb);
  const double tol = 1e-9;
  if (failed || dfe > tol || dke > tol || drho > tol || dphi > tol * pmax) {
    printf("FAIL: the step differs from the runtime-call step by more than %g\n", tol);
    return 1;
  }
  return 0;
}

/* The histories must not depend on the number of threads. */
static int threads(const es2d_impl *impl)
{
#ifdef _OPENMP
  es2d_params p;
  int64_t steps;
  phys2d_landau_params(&p, 0, &steps);
  p.n_particles = 32768;
  steps = 30;
  double *ref = NULL;
  size_t len = 0;
  int failed = 0;
  const int counts[] = {1, 2, 3};
  for (int k = 0; k < 3; k++) {
    omp_set_num_threads(counts[k]);
    void *st;
    es2d_history h;
    if (run(impl, &p, steps, &st, &h)) return 1;
    size_t n = (size_t)h.n_steps, ng = (size_t)(p.nx * p.ny);
    double *all = malloc(sizeof(double) * (3 * n + 2 * ng));
    if (!all) return 1;
    memcpy(all, h.field_energy, sizeof(double) * n);
    memcpy(all + n, h.kinetic_energy, sizeof(double) * n);
    memcpy(all + 2 * n, h.charge, sizeof(double) * n);
    if (impl->grids(st, all + 3 * n, all + 3 * n + ng, err, sizeof err)) {
      printf("FAIL: %s\n", err);
      return 1;
    }
    impl->teardown(st);
    if (!ref) {
      ref = all;
      len = 3 * n + 2 * ng;
      continue;
    }
    if (memcmp(ref, all, sizeof(double) * len)) {
      printf("FAIL: the histories with %d threads differ from those with 1 thread\n", counts[k]);
      failed = 1;
    } else {
      printf("%d threads: histories, rho and phi bit-for-bit those of 1 thread\n", counts[k]);
    }
    free(all);
  }
  free(ref);
  return failed;
#else
  (void)impl;
  printf("built without OpenMP: nothing to compare\n");
  return 0;
#endif
}

int main(int argc, char **argv)
{
  const es2d_impl *impl = &es2d_rt_impl;
  int a = 1;
  if (a + 1 < argc && !strcmp(argv[a], "--impl")) {
    impl = NULL;
    for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++)
      if (!strcmp(impls[i].name, argv[a + 1])) impl = impls[i].impl;
    if (!impl) {
      fprintf(stderr, "test_physics2d: no implementation named '%s'\n", argv[a + 1]);
      return 2;
    }
    a += 2;
  }
  if (a >= argc) {
    fprintf(stderr, "usage: test_physics2d [--impl rt|cnp] "
                    "landau|landau_y|cold|energy|charge|threads|params|match\n");
    return 2;
  }
  const char *which = argv[a];
  printf("implementation: %s\n", impl->name);
  if (!strcmp(which, "energy")) return conservation(impl, 1);
  if (!strcmp(which, "charge")) return conservation(impl, 0);
  if (!strcmp(which, "threads")) return threads(impl);
  if (!strcmp(which, "params")) return params(impl);
  if (!strcmp(which, "match")) return match(impl);
  es2d_params p;
  int64_t steps;
  void *st;
  es2d_history h;
  phys_check c[2];
  int failed;
  if (!strcmp(which, "landau") || !strcmp(which, "landau_y")) {
    phys2d_landau_params(&p, which[6] == '_', &steps);
    if (run(impl, &p, steps, &st, &h)) return 1;
    if (getenv("PHYS2D_DUMP"))
      for (int64_t n = 0; n < h.n_steps; n++)
        printf("%g %.6e %.6e %.6e\n", h.t[n], h.field_energy[n], h.mode_energy[n], h.kinetic_energy[n]);
    failed = phys2d_check_landau(&h, c, err, sizeof err);
    if (failed >= 0) {
      phys_print(stdout, &c[0]);
      phys_print(stdout, &c[1]);
    }
  } else if (!strcmp(which, "cold")) {
    phys2d_cold_params(&p, &steps);
    if (run(impl, &p, steps, &st, &h)) return 1;
    es1d_history h1 = phys2d_as_1d(&h);
    failed = phys_check_cold(&h1, c, err, sizeof err);
    if (failed >= 0) phys_print(stdout, &c[0]);
  } else {
    fprintf(stderr, "test_physics2d: unknown case '%s'\n", which);
    return 2;
  }
  if (failed < 0) printf("FAIL: %s\n", err);
  impl->teardown(st);
  return failed != 0;
}
