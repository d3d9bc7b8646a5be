/*
** test_physics2d_mpi.c -- the split-grid 2D step (examples/pic2d/es2d_mpi.cnp) on MPI ranks:
** 2D Landau damping along x (k lambda_D = 0.5, the set-up of physics2d.*.landau), the rate and
** frequency fitted from the mode energy against theory (cases2d.h's tolerances: 5 % and 1 %),
** every particle conserved (the global count after every step), the total charge 0.
**
**   mpiexec -n R test_physics2d_mpi landau [--write FILE | --compare FILE] [--nocomm]
**
** --write: rank 0 writes the four histories (binary f64) to FILE; --compare: they must equal
** FILE's within PHYS2D_MPI_RTOL (1e-11) relative to each history's largest value (the 4-rank run
** against the 1-rank one: the distributed FFT, the ghost fold over the ranks and the per-rank
** partial sums round differently; the particles are the same and in nearly the same order).
** --nocomm: one rank without a communicator (cfg.mpi_fcomm = 0).
** Every rank places the whole quiet start (es2d_load) and keeps the particles m % R == rank;
** the first step's migration sends each to the owner of its plane.
*/
#include "cases2d.h"
#include "es2d.h"
#include "es2d_mpi.h"
#include "fit.h"

#include <cnp/mpi.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Histories of R ranks against 1 rank's: within 1e-11 of the history's largest |value| (measured:
** 3e-15 on 4 ranks, 150 steps). */
#define PHYS2D_MPI_RTOL 1e-11

static int fail(int rank, const char *fmt, const char *a) {
  fprintf(stderr, "rank %d: ", rank);
  fprintf(stderr, fmt, a);
  fputc('\n', stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  return 1;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, R;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &R);
  const char *write = NULL, *compare = NULL;
  int nocomm = 0;
  if (argc < 2 || strcmp(argv[1], "landau")) return fail(rank, "usage: %s landau [--write F | --compare F] [--nocomm]", argv[0]);
  for (int a = 2; a < argc; a++) {
    if (!strcmp(argv[a], "--write") && a + 1 < argc) write = argv[++a];
    else if (!strcmp(argv[a], "--compare") && a + 1 < argc) compare = argv[++a];
    else if (!strcmp(argv[a], "--nocomm")) nocomm = 1;
    else return fail(rank, "unknown argument %s", argv[a]);
  }
  if (nocomm && R != 1) return fail(rank, "%s", "--nocomm runs on one rank");
  es2d_params prm;
  int64_t steps;
  phys2d_landau_params(&prm, 0, &steps);
  prm.max_steps = steps;
  char err[512];
  if (es2d_check_params(&prm, err, sizeof err)) return fail(rank, "%s", err);
  const int64_t n = prm.n_particles;
  es2d_mpi_config cfg = ES2D_MPI_CONFIG_INIT;
  cfg.N = n;   /* room for every particle: the arrivals of a migration */
  cfg.nx = prm.nx, cfg.ny = prm.ny, cfg.lx = prm.lx, cfg.ly = prm.ly, cfg.dt = prm.dt;
  cfg.wq = -(double)(prm.nx * prm.ny) / (double)n;
  cfg.mass = prm.lx * prm.ly / (double)n;
  cfg.kx_mode = prm.mode, cfg.ky_mode = 0;
  cfg.n_hist = steps;
  cfg.mpi_fcomm = nocomm ? 0 : MPI_Comm_c2f(MPI_COMM_WORLD);
  es2d_mpi *p;
  if (es2d_mpi_setup(&p, &cfg, err, sizeof err) != CNP_OK) return fail(rank, "setup: %s", err);
  double *all = malloc(sizeof(double) * 4 * (size_t)n);
  if (!all) return fail(rank, "%s", "out of memory");
  es2d_load(&prm, all, all + n, all + 2 * n, all + 3 * n);
  static const char *const names[4] = {"x", "y", "vx", "vy"};
  int64_t mine = 0;
  if (es2d_mpi_set_extent(p, "N", n) != CNP_OK) return fail(rank, "%s", "extent");
  for (int k = 0; k < 4; k++) {
    double *f = es2d_mpi_field(p, names[k]).data;
    mine = 0;
    for (int64_t m = 0; m < n; m++)
      if (m % R == rank) f[mine++] = all[k * n + m];
  }
  free(all);
  if (es2d_mpi_set_extent(p, "N", mine) != CNP_OK) return fail(rank, "%s", "extent");
  double t0 = MPI_Wtime();
  for (int64_t s = 0; s < steps; s++) {
    if (es2d_mpi_step(p) != CNP_OK) return fail(rank, "step: %s", es2d_mpi_error(p));
    int64_t live = es2d_mpi_extent(p, "N"), total = live;
    if (!nocomm) MPI_Allreduce(&live, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (total != n) {
      snprintf(err, sizeof err, "step %lld: %lld particles in all, %lld placed", (long long)s, (long long)total,
               (long long)n);
      return fail(rank, "%s", err);
    }
  }
  double secs = MPI_Wtime() - t0;
  static double fe[4][1024];
  static const char *const hn[4] = {"field_energy", "mode_energy", "kinetic_energy", "total_charge"};
  if (steps > 1024) return fail(rank, "%s", "too many steps");
  for (int k = 0; k < 4; k++)
    if (es2d_mpi_history(p, hn[k], fe[k], steps) != steps) return fail(rank, "reading history %s", hn[k]);
  /* every rank holds the same global histories */
  if (!nocomm) {
    static double r0[4][1024];
    memcpy(r0, fe, sizeof r0);
    MPI_Bcast(r0, 4 * 1024, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (memcmp(r0, fe, sizeof r0)) return fail(rank, "%s", "the histories differ between the ranks");
  }
  int bad = 0;
  if (rank == 0) {
    static double t[1024];
    for (int64_t k = 0; k < steps; k++) t[k] = (double)k * prm.dt;
    es2d_history h = {steps, t, fe[0], fe[2], fe[3], fe[1]};
    phys_check c[2];
    int f = phys2d_check_landau(&h, c, err, sizeof err);
    if (f < 0) return fail(rank, "%s", err);
    printf("2D Landau on %d rank%s%s (%lld particles, %lld x %lld grid split along y, %lld steps, %.2f s):\n", R,
           R == 1 ? "" : "s", nocomm ? " without a communicator" : "", (long long)n, (long long)prm.ny,
           (long long)prm.nx, (long long)steps, secs);
    for (int k = 0; k < 2; k++)
      printf("  %s = %.5f (theory %.5f, %+.2f %%, tolerance %.0f %%): %s\n", c[k].symbol, c[k].measured, c[k].theory,
             100.0 * (c[k].measured - c[k].theory) / fabs(c[k].theory), 100.0 * c[k].tol, c[k].pass ? "ok" : "FAIL");
    bad += f;
    double qmax = 0;
    for (int64_t k = 0; k < steps; k++) qmax = fmax(qmax, fabs(fe[3][k]));
    printf("  particles conserved every step (%lld); |total charge| <= %.3g\n", (long long)n, qmax);
    if (qmax > 1e-9) bad++, printf("  total charge FAIL\n");
    if (write) {
      FILE *o = fopen(write, "wb");
      if (!o || fwrite(fe, sizeof fe, 1, o) != 1 || fclose(o)) return fail(rank, "cannot write %s", write);
    }
    if (compare) {
      static double ref[4][1024];
      FILE *i = fopen(compare, "rb");
      if (!i || fread(ref, sizeof ref, 1, i) != 1) return fail(rank, "cannot read %s (run the 1-rank test first)", compare);
      fclose(i);
      for (int k = 0; k < 4; k++) {
        double big = 0, worst = 0;
        for (int64_t s = 0; s < steps; s++) big = fmax(big, fabs(ref[k][s]));
        for (int64_t s = 0; s < steps; s++) worst = fmax(worst, fabs(fe[k][s] - ref[k][s]));
        if (k == 3) big = fmax(big, 1.0);   /* the charge is 0 to rounding: absolute */
        printf("  %-14s: largest difference to the 1-rank run %.3g (%.3g of its largest value; tolerance %.0e)\n",
               hn[k], worst, worst / big, PHYS2D_MPI_RTOL);
        if (!(worst <= PHYS2D_MPI_RTOL * big)) bad++;
      }
    }
  }
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  es2d_mpi_teardown(p);
  MPI_Finalize();
  return bad ? 1 : 0;
}
