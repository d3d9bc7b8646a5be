/*
** test_physics.c -- the physics tests (ctest -L physics; docs/physics.md) of a complete 1D
** electrostatic PIC step, run through the es1d_impl interface so that the same tests run
** the hand-written C reference and, later, the generated pipeline.
**
**   test_physics [--impl NAME] CASE
**   CASE: landau | two_stream | cold | energy | charge | threads | fit (the fits alone) |
**         params (setup's checks) | match (NAME against the reference, step by step)
**   NAME: ref (the C reference, default), cnp (the pipeline generated from
**         examples/pic/es1d.cnp, when built with cnpc), rt (the same step as separate
**         runtime calls, examples/pic/es1d_rt.c)
*/
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "cases.h"
#include "fit.h"

static const struct {
  const char *name;
  const es1d_impl *impl;
} impls[] = {
    {"ref", &es1d_ref_impl},
#ifdef ES1D_HAVE_CNP
    {"cnp", &es1d_cnp_impl},
    {"rt", &es1d_rt_impl},
#endif
};

static char err[512];

static int run(const es1d_impl *impl, const es1d_params *p, int64_t steps, void **st,
               es1d_history *h)
{
  if (phys_run(impl, p, steps, st, h, err, sizeof err)) {
    fprintf(stderr, "FAIL: %s: %s\n", impl->name, err);
    return -1;
  }
  return 0;
}

static int conservation(const es1d_impl *impl, int energy)
{
  int failed = 0;
  for (int which = 0; which < 2; which++) {
    es1d_params p;
    int64_t steps;
    const char *label = which ? "two-stream" : "Landau";
    if (which) phys_two_stream_params(&p, &steps);
    else phys_landau_params(&p, &steps);
    p.n_particles = PHYS_CONSERVATION_PARTICLES;
    void *st;
    es1d_history h;
    if (run(impl, &p, PHYS_CONSERVATION_STEPS, &st, &h)) return 1;
    phys_check c;
    failed += energy ? phys_check_energy(&h, label, &c) : phys_check_charge(&h, p.length, label, &c);
    phys_print(stdout, &c);
    impl->teardown(st);
  }
  return failed != 0;
}

/* setup refuses bad parameters with a message, and step a full history. */
static int params(const es1d_impl *impl)
{
  int failed = 0;
  for (int k = 0; k < 8; k++) {
    es1d_params p;
    int64_t steps;
    phys_landau_params(&p, &steps);
    p.n_particles = 1000;
    switch (k) {
    case 0: p.n_particles = 0; break;
    case 1: p.n_cells = 2; break;
    case 2: p.dt = 0; break;
    case 3: p.v0 = 1; p.n_particles = 999; break;
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
  es1d_params p;
  int64_t steps;
  phys_landau_params(&p, &steps);
  p.n_particles = 1000;
  p.max_steps = 2;
  void *s;
  if (impl->setup(&s, &p, err, sizeof err)) {
    printf("FAIL: %s\n", err);
    return 1;
  }
  int a = impl->step(s, 1, err, sizeof err), b = impl->step(s, 1, err, sizeof err);
  int c = impl->step(s, 1, err, sizeof err);
  es1d_history h;
  if (impl->histories(s, &h, err, sizeof err)) h.n_steps = -1;
  if (a || b || c != -1 || h.n_steps != 2) {
    printf("FAIL: a history of 2 steps took %lld (step results %d %d %d)\n", (long long)h.n_steps, a, b, c);
    failed = 1;
  } else {
    printf("a third step into a history of 2: %s\n", err);
  }
  impl->teardown(s);
  return failed;
}

/* impl against the reference on the Landau set-up, step by step: the largest relative
** differences of the energies and of rho over the first steps (docs/physics.md, "The generated
** step": the same discretization, additions in another order). */
static int match(const es1d_impl *impl)
{
  es1d_params p;
  int64_t steps;
  phys_landau_params(&p, &steps);
  p.n_particles = 100000;
  steps = 100;
  p.record_rho = 1;
  void *sa, *sb;
  es1d_history a, b;
  if (run(&es1d_ref_impl, &p, steps, &sa, &a)) return 1;
  if (run(impl, &p, steps, &sb, &b)) return 1;
  double dfe = 0, dke = 0, drho = 0, dq = 0;
  int64_t bits = 0;
  for (int64_t n = 0; n < steps; n++) {
    double e = fabs(a.field_energy[n] - b.field_energy[n]) / a.field_energy[0];
    double k = fabs(a.kinetic_energy[n] - b.kinetic_energy[n]) / a.kinetic_energy[n];
    dfe = e > dfe ? e : dfe;
    dke = k > dke ? k : dke;
    dq = fabs(b.charge[n]) > dq ? fabs(b.charge[n]) : dq;
    bits += a.field_energy[n] == b.field_energy[n];
    for (int64_t j = 0; j < p.n_cells; j++) {
      double r = fabs(a.rho[n * p.n_cells + j] - b.rho[n * p.n_cells + j]);
      drho = r > drho ? r : drho;
    }
  }
  printf("%s against the reference over %lld steps (Landau, %lld particles):\n", impl->name,
         (long long)steps, (long long)p.n_particles);
  printf("  max |dW|/W_0 = %.3g, max |dK|/K = %.3g, max |d rho| = %.3g, max |Q| = %.3g, "
         "W bit-identical at %lld of %lld steps\n", dfe, dke, drho, dq, (long long)bits, (long long)steps);
  es1d_ref_impl.teardown(sa);
  impl->teardown(sb);
  const double tol = 1e-9;
  if (dfe > tol || dke > tol || drho > tol) {
    printf("FAIL: the step differs from the reference by more than %g\n", tol);
    return 1;
  }
  return 0;
}

/* The fits on synthetic data whose rates are known exactly. */
static int fits(void)
{
  enum { N = 400 };
  static double t[N], W[N];
  const double g = -0.1533, w = 1.4157, dt = 0.1;
  for (int i = 0; i < N; i++) {
    t[i] = i * dt;
    double c = cos(w * t[i] + 0.3);
    W[i] = 1e-3 * c * c * exp(2 * g * t[i]);
  }
  double gm, wm, ta, tb, ts;
  int failed = 0;
  int64_t m = fit_damped(t, W, N, 0.5, 18.0, &gm, &wm);
  printf("fit_damped: %lld peaks, gamma %.6f (exact %.4f), omega %.6f (exact %.4f)\n",
         (long long)m, gm, g, wm, w);
  failed += m < 3 || fabs(gm / g - 1) > 1e-3 || fabs(wm / w - 1) > 1e-4;
  /* growth 0.35 to a saturation at t = 30, on top of a constant oscillating floor */
  for (int i = 0; i < N; i++) {
    double s = t[i] < 30 ? exp(2 * 0.35 * (t[i] - 30)) : exp(-0.2 * (t[i] - 30));
    W[i] = s + 1e-9 * (1.5 + cos(2 * t[i]));
  }
  m = fit_growth(t, W, N, 1e-6, 1e-2, &gm, &ta, &tb, &ts);
  printf("fit_growth: %lld points over t = %.1f .. %.1f, saturation %.1f, gamma %.6f (exact 0.35)\n",
         (long long)m, ta, tb, ts, gm);
  failed += m < 3 || fabs(gm / 0.35 - 1) > 2e-3 || fabs(ts - 30) > 0.05;
  if (failed) printf("FAIL: the fits do not recover the rates of synthetic data\n");
  return failed != 0;
}

/* The histories must not depend on the number of threads (fixed partition reductions). */
static int threads(const es1d_impl *impl)
{
#ifdef _OPENMP
  es1d_params p;
  int64_t steps;
  phys_landau_params(&p, &steps);
  steps = 50;
  p.record_rho = 1;
  double *ref = NULL;
  size_t len = 0;
  int failed = 0;
  const int counts[] = {1, 2, 3};
  for (int k = 0; k < 3; k++) {
    omp_set_num_threads(counts[k]);
    void *st;
    es1d_history h;
    if (run(impl, &p, steps, &st, &h)) return 1;
    size_t n = (size_t)h.n_steps;
    size_t cells = n * (size_t)h.n_cells;
    double *all = malloc(sizeof(double) * (4 * n + cells));
    if (!all) return 1;
    memcpy(all, h.field_energy, sizeof(double) * n);
    memcpy(all + n, h.kinetic_energy, sizeof(double) * n);
    memcpy(all + 2 * n, h.charge, sizeof(double) * n);
    memcpy(all + 3 * n, h.t, sizeof(double) * n);
    memcpy(all + 4 * n, h.rho, sizeof(double) * cells);
    impl->teardown(st);
    if (!ref) {
      ref = all;
      len = 4 * n + cells;
      continue;
    }
    if (memcmp(ref, all, sizeof(double) * len)) {
      printf("FAIL: the histories with %d threads differ from those with 1 thread\n", counts[k]);
      failed = 1;
    } else {
      printf("%d threads: histories bit-for-bit those of 1 thread\n", counts[k]);
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
  const es1d_impl *impl = &es1d_ref_impl;
  int a = 1;
  if (a + 1 < argc && !strcmp(argv[a], "--impl")) {
    impl = NULL;
    for (size_t i = 0; i < sizeof impls / sizeof impls[0]; i++)
      if (!strcmp(impls[i].name, argv[a + 1])) impl = impls[i].impl;
    if (!impl) {
      fprintf(stderr, "test_physics: no implementation named '%s'\n", argv[a + 1]);
      return 2;
    }
    a += 2;
  }
  if (a >= argc) {
    fprintf(stderr, "usage: test_physics [--impl ref|cnp|rt] landau|landau4|two_stream|cold|energy|charge|threads|fit|params|match\n");
    return 2;
  }
  const char *which = argv[a];
  printf("implementation: %s\n", impl->name);
  if (!strcmp(which, "energy")) return conservation(impl, 1);
  if (!strcmp(which, "charge")) return conservation(impl, 0);
  if (!strcmp(which, "threads")) return threads(impl);
  if (!strcmp(which, "fit")) return fits();
  if (!strcmp(which, "params")) return params(impl);
  if (!strcmp(which, "match")) return match(impl);
  es1d_params p;
  int64_t steps;
  void *st;
  es1d_history h;
  phys_check c[2];
  int failed;
  if (!strcmp(which, "landau")) {
    phys_landau_params(&p, &steps);
    if (run(impl, &p, steps, &st, &h)) return 1;
    failed = phys_check_landau(&h, c, err, sizeof err);
    if (failed >= 0) {
      phys_print(stdout, &c[0]);
      phys_print(stdout, &c[1]);
    }
  } else if (!strcmp(which, "landau4")) {
    phys_landau4_params(&p, &steps);
    if (run(impl, &p, steps, &st, &h)) return 1;
    failed = phys_check_landau4(&h, c, err, sizeof err);
    if (failed >= 0) {
      phys_print(stdout, &c[0]);
      phys_print(stdout, &c[1]);
    }
  } else if (!strcmp(which, "two_stream")) {
    double ta, tb, tsat;
    phys_two_stream_params(&p, &steps);
    if (run(impl, &p, steps, &st, &h)) return 1;
    failed = phys_check_two_stream(&h, c, &ta, &tb, &tsat, err, sizeof err);
    if (failed >= 0) {
      printf("two-stream: fit window t = %.1f .. %.1f, saturation at t = %.1f\n", ta, tb, tsat);
      phys_print(stdout, &c[0]);
    }
  } else if (!strcmp(which, "cold")) {
    phys_cold_params(&p, &steps);
    if (run(impl, &p, steps, &st, &h)) return 1;
    failed = phys_check_cold(&h, c, err, sizeof err);
    if (failed >= 0) phys_print(stdout, &c[0]);
  } else {
    fprintf(stderr, "test_physics: unknown case '%s'\n", which);
    return 2;
  }
  if (failed < 0) printf("FAIL: %s\n", err);
  impl->teardown(st);
  return failed != 0;
}
