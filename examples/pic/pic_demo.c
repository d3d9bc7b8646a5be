/*
** pic_demo.c -- drives the pipeline cnpc generates from wall.cnp: a 1D two-stream plasma
** in a box with absorbing walls, the complete step (push, compaction, sort, deposit, field
** solve) in the pipeline. The host only sets up, enqueues wall_step() and reads the charge
** snapshot (the pipeline's `out` staging, copied on the second stream) for the pictures.
**
**   pic_demo [--particles N] [--cells C] [--steps S] [--dt DT] [--backend host|cuda]
**            [--out DIR]
**
** Prints a progress line, the time per step, transfer counts per step and a charge
** conservation check; writes DIR/wall_density.npy (steps, cells: charge per cell over time,
** in units of the mean) and DIR/wall_phase.npy (live particles, 2: x, v_x at the end), which
** scripts/plot_wall.py draws with matplotlib.
*/
#define _POSIX_C_SOURCE 200809L
#include "npy.h"
#include "wall.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng = 0x853c49e6748fea9bULL;
static double urand(void)
{
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (double)((rng * 0x2545F4914F6CDD1DULL) >> 11) * (1.0 / 9007199254740992.0);
}

static int die(const char *what, int st, wall *p)
{
  fprintf(stderr, "pic_demo: %s: %s (%s)\n", what, cnp_status_name((cnp_status)st),
          p ? wall_error(p) : cnp_last_error());
  return 1;
}

int main(int argc, char **argv)
{
  int64_t n = 1000000, nc = 256;
  int steps = 300;
  double dt = 0.01, v0 = 0.1;
  const char *out = "out";
  cnp_backend want = CNP_BACKEND_HOST;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--particles")) n = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--cells")) nc = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--steps")) steps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--dt")) dt = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--out")) out = argv[i + 1];
    else if (!strcmp(argv[i], "--backend"))
      want = strcmp(argv[i + 1], "cuda") == 0 ? CNP_BACKEND_CUDA : CNP_BACKEND_HOST;
    else {
      fprintf(stderr, "usage: %s [--particles N] [--cells C] [--steps S] [--dt DT] "
                      "[--backend host|cuda] [--out DIR]\n", argv[0]);
      return 2;
    }
  }
  if (n <= 0 || nc <= 0 || steps <= 0) {
    fprintf(stderr, "pic_demo: particles, cells and steps must be > 0\n");
    return 2;
  }

  wall_config cfg = WALL_CONFIG_INIT;
  cfg.backend = want;
  cfg.strict = 0;                                  /* fall back to host without a GPU */
  cfg.N = n;
  cfg.n_cells = nc;
  cfg.qm = -1.0;
  cfg.wp2 = 4.0;                                   /* omega_p = 2: two-stream growth within the run */
  wall *p = NULL;
  char err[512];
  int st = wall_setup(&p, &cfg, err, sizeof err);
  if (st != CNP_OK) {
    fprintf(stderr, "pic_demo: setup: %s\n", err);
    return 1;
  }
  cnp_backend be = wall_backend(p);
  printf("pic_demo: %lld particles, %lld cells, %d steps, backend %s%s\n", (long long)n,
         (long long)nc, steps, cnp_backend_name(be),
         want == CNP_BACKEND_CUDA && be != want ? " (CUDA unavailable: fell back)" : "");

  /* Initial state, written on the host and copied into the pipeline's fields. */
  const double w0 = 1.0 / (double)n;
  double *hx = malloc(sizeof(double) * (size_t)n), *hv = calloc((size_t)(3 * n), sizeof(double));
  double *hw = malloc(sizeof(double) * (size_t)n);
  double *hist = calloc((size_t)steps * (size_t)nc, sizeof(double));
  if (!hx || !hv || !hw || !hist) return die("out of memory", CNP_ENOMEM, NULL);
  for (int64_t i = 0; i < n; i++) {
    double x = urand();
    hx[i] = fmod(x + 0.01 * sin(2 * 3.14159265358979323846 * 3 * x) + 1.0, 1.0);
    hv[i] = ((i & 1) ? v0 : -v0) + 0.01 * (urand() - 0.5);          /* v[0, i] */
    hv[n + i] = 0.02 * (urand() - 0.5);
    hv[2 * n + i] = 0.02 * (urand() - 0.5);
    hw[i] = w0;
  }
  cnp_array hxa, hva, hwa;
  const int64_t s1[1] = {n}, s3[2] = {3, n};
  cnp_array_wrap(&hxa, hx, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, s1, NULL);
  cnp_array_wrap(&hva, hv, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, s3, NULL);
  cnp_array_wrap(&hwa, hw, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, s1, NULL);
  cnp_array fx = wall_field(p, "x"), fv = wall_field(p, "v"), fw = wall_field(p, "w");
  if ((st = cnp_array_copy(&fx, &hxa, NULL)) || (st = cnp_array_copy(&fv, &hva, NULL)) ||
      (st = cnp_array_copy(&fw, &hwa, NULL)))
    return die("initial upload", st, p);

  cnp_transfer_scope scope;
  cnp_transfer_counts tc;
  cnp_transfers_begin(&scope);
  double t0 = now_s(), t_step = 0.0, worst = 0.0;
  for (int s = 0; s < steps; s++) {
    double a = now_s();
    if ((st = wall_step(p, dt)) != CNP_OK) return die("step", st, p);
    if ((st = wall_sync(p)) != CNP_OK) return die("sync", st, p);
    t_step += now_s() - a;
    cnp_array rho;                                 /* host copy of rho (staging slot) */
    if ((st = wall_snapshot(p, "out", &rho)) != CNP_OK) return die("snapshot", st, p);
    const double *r = (const double *)rho.data;
    double total = 0.0;
    for (int64_t k = 0; k < nc; k++) total += r[k];
    int64_t live = wall_extent(p, "N");
    double rel = fabs(total - (double)live * w0) / ((double)n * w0);
    if (rel > worst) worst = rel;
    for (int64_t k = 0; k < nc; k++)
      hist[(size_t)s * (size_t)nc + (size_t)k] = r[k] / (w0 * (double)n / (double)nc);
    if (s % 10 == 0 || s == steps - 1)
      fprintf(stderr, "\rstep %4d/%d  live %9lld  %7.2f ms/step", s + 1, steps, (long long)live,
              1e3 * t_step / (s + 1));
  }
  double wall = now_s() - t0;
  cnp_transfers_end(&scope, &tc);
  fprintf(stderr, "\n");
  wall_stats ps;
  wall_stats_get(p, &ps);
  int64_t live = wall_extent(p, "N");
  printf("time per step: %.3f ms (pipeline step + sync), %.3f ms with the snapshot read\n",
         1e3 * t_step / steps, 1e3 * wall / steps);
  printf("per step: %llu launch%s, %llu host sync%s\n", (unsigned long long)ps.launches,
         ps.launches == 1 ? "" : "es", (unsigned long long)ps.host_syncs,
         ps.host_syncs == 1 ? "" : "s");
  printf("transfers per step: h2d %.0f B (%.1f calls), d2h %.0f B (%.1f calls), "
         "device-local %.0f B (%.1f calls)\n",
         (double)tc.h2d_bytes / steps, (double)tc.h2d_calls / steps, (double)tc.d2h_bytes / steps,
         (double)tc.d2h_calls / steps, (double)tc.d2d_bytes / steps, (double)tc.d2d_calls / steps);
  printf("charge conservation: sum(rho) = live * w at every step, worst relative error %.2e "
         "(%s); %lld particles absorbed by the walls\n", worst, worst < 1e-9 ? "ok" : "FAILED",
         (long long)(n - live));

  /* Data for the pictures (scripts/plot_wall.py): density over time, phase space at the end. */
  char path[1024];
  snprintf(path, sizeof path, "%s/wall_density.npy", out);
  int npy_rc = npy_write(path, hist, steps, nc);
  cnp_array lx, lv;
  cnp_array_wrap(&lx, hx, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, (int64_t[1]){live}, NULL);
  cnp_array_wrap(&lv, hv, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, (int64_t[1]){live}, NULL);
  cnp_array fx1 = wall_field(p, "x"), fv1 = wall_field(p, "v"), fv0;
  cnp_array_slice(&fv0, &fv1, 0, 0, 1);
  fv0.ndim = 1;
  fv0.shape[0] = fv1.shape[1];
  fv0.strides[0] = fv1.strides[1];
  if (live > 0 && ((st = cnp_array_copy(&lx, &fx1, NULL)) || (st = cnp_array_copy(&lv, &fv0, NULL))))
    return die("download", st, p);
  double *xv = malloc(sizeof(double) * 2 * (size_t)(live > 0 ? live : 1));
  if (!xv) return die("out of memory", CNP_ENOMEM, NULL);
  for (int64_t i = 0; i < live; i++) {
    xv[2 * i] = hx[i];
    xv[2 * i + 1] = hv[i];
  }
  snprintf(path, sizeof path, "%s/wall_phase.npy", out);
  npy_rc |= npy_write(path, xv, live, 2);
  printf("wrote %s/wall_density.npy and %s/wall_phase.npy%s\n", out, out, npy_rc ? " (FAILED)" : "");
  wall_teardown(p);
  free(hx); free(hv); free(hw); free(hist); free(xv);
  return worst < 1e-9 && npy_rc == 0 ? 0 : 1;
}
