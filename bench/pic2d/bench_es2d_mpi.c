/*
** bench_es2d_mpi.c -- weak scaling of the split-grid 2D PIC step (examples/pic2d/es2d_mpi.cnp):
** every rank holds the same number of particles and grid planes whatever the rank count
** (the grid grows along y, the split axis, with the ranks), so the ideal time per step is
** constant; efficiency = t(1 rank) / t(R ranks). run_weak.sh runs it at 1, 2 and 4 ranks and
** prints the table.
**
**   mpiexec -n R bench_es2d_mpi [particles_per_rank] [planes_per_rank] [steps]
**
** Defaults 65536 particles and 16 planes (of 64 points) per rank, 40 steps after 5 warm-up
** steps (the first one distributes the initial load). Prints one line, from rank 0:
**   ranks R particles P grid NYxNX steps S time_per_step_ms T (min over ranks of the max ...)
** The time per step is the slowest rank's (MPI_Wtime around the step loop, MPI_MAX).
*/
#include "es2d.h"
#include "es2d_mpi.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, R;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &R);
  int64_t per_rank = argc > 1 ? atoll(argv[1]) : 65536, planes = argc > 2 ? atoll(argv[2]) : 16;
  int64_t steps = argc > 3 ? atoll(argv[3]) : 40, warm = 5;
  es2d_params prm = ES2D_PARAMS_INIT;   /* Landau along x: 64 points, 4 pi; y grows with R */
  prm.ny = planes * R;
  prm.ly = 3.141592653589793 * (double)R;   /* pi per rank: the cells stay the same */
  prm.n_particles = per_rank * R;
  prm.rows = 16 * R;
  prm.max_steps = steps + warm;
  char err[512];
  if (es2d_check_params(&prm, err, sizeof err)) {
    fprintf(stderr, "bench_es2d_mpi: %s\n", err);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  const int64_t n = prm.n_particles;
  es2d_mpi_config cfg = ES2D_MPI_CONFIG_INIT;
  cfg.N = per_rank * 2 + 4096;   /* room for arrivals */
  cfg.nx = prm.nx, cfg.ny = prm.ny, cfg.lx = prm.lx, cfg.ly = prm.ly, cfg.dt = prm.dt;
  cfg.wq = -(double)(prm.nx * prm.ny) / (double)n;
  cfg.mass = prm.lx * prm.ly / (double)n;
  cfg.kx_mode = prm.mode, cfg.ky_mode = 0, cfg.n_hist = prm.max_steps;
  cfg.mpi_fcomm = MPI_Comm_c2f(MPI_COMM_WORLD);
  es2d_mpi *p;
  if (es2d_mpi_setup(&p, &cfg, err, sizeof err) != 0) {
    fprintf(stderr, "bench_es2d_mpi: setup: %s\n", err);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  /* this rank's share of the quiet start: the particles of its own planes' band of y, so the
  ** first migration moves few (es2d_load places them all; each rank keeps its band) */
  double *all = malloc(sizeof(double) * 4 * (size_t)n);
  if (!all) MPI_Abort(MPI_COMM_WORLD, 1);
  es2d_load(&prm, all, all + n, all + 2 * n, all + 3 * n);
  static const char *const names[4] = {"x", "y", "vx", "vy"};
  int64_t mine = 0;
  es2d_mpi_set_extent(p, "N", cfg.N);
  double lo = prm.ly * (double)rank / R, hi = prm.ly * (double)(rank + 1) / R;
  for (int k = 0; k < 4; k++) {
    double *f = es2d_mpi_field(p, names[k]).data;
    mine = 0;
    for (int64_t m = 0; m < n && mine < cfg.N; m++)
      if (all[n + m] >= lo && all[n + m] < hi) f[mine++] = all[k * n + m];
  }
  free(all);
  es2d_mpi_set_extent(p, "N", mine);
  for (int64_t s = 0; s < warm; s++)
    if (es2d_mpi_step(p) != 0) {
      fprintf(stderr, "bench_es2d_mpi: step: %s\n", es2d_mpi_error(p));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  for (int64_t s = 0; s < steps; s++)
    if (es2d_mpi_step(p) != 0) {
      fprintf(stderr, "bench_es2d_mpi: step: %s\n", es2d_mpi_error(p));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  double t = MPI_Wtime() - t0, tmax = t;
  MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  int64_t live = es2d_mpi_extent(p, "N"), total = live;
  MPI_Reduce(&live, &total, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("ranks %d particles %lld (%lld per rank) grid %lldx%lld (%lld planes per rank) steps %lld "
           "time_per_step_ms %.3f ns_per_particle_step %.2f\n", R, (long long)total, (long long)per_rank,
           (long long)prm.ny, (long long)prm.nx, (long long)planes, (long long)steps, 1e3 * tmax / (double)steps,
           1e9 * tmax / (double)steps / (double)per_rank);
  es2d_mpi_teardown(p);
  MPI_Finalize();
  return 0;
}
