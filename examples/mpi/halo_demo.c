/*
** halo_demo.c -- runs examples/mpi/halo.cnp: mpiexec -n 2 halo_demo [particles] [steps]
** Prints each rank's particle count and the charge received from its left neighbour.
*/
#include <mpi.h>

#include "halo.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int64_t n = argc > 1 ? atoll(argv[1]) : 100000;
  int steps = argc > 2 ? atoi(argv[2]) : 50;
  halo_config cfg = HALO_CONFIG_INIT;
  cfg.mpi_fcomm = (int)MPI_Comm_c2f(MPI_COMM_WORLD);
  cfg.N = 2 * n;                                   /* room for arrivals */
  cfg.nranks = size;
  cfg.n_cells = 64;
  cfg.lo = (double)rank / size;
  cfg.width = 1.0 / size;
  halo *p = NULL;
  char err[256];
  if (halo_setup(&p, &cfg, err, sizeof err) != CNP_OK) {
    fprintf(stderr, "rank %d: %s\n", rank, err);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  double *x = halo_field(p, "x").data, *v = halo_field(p, "v").data, *w = halo_field(p, "w").data;
  unsigned s = 1u + (unsigned)rank;
  for (int64_t i = 0; i < n; i++) {
    s = s * 1103515245u + 12345u;
    x[i] = cfg.lo + cfg.width * (double)(s >> 8) / 16777216.0;
    s = s * 1103515245u + 12345u;
    v[i] = 0.2 * ((double)(s >> 8) / 16777216.0 - 0.5);
    w[i] = 1.0;
  }
  halo_set_extent(p, "N", n);
  for (int t = 0; t < steps; t++)
    if (halo_step(p, 0.05) != CNP_OK) {
      fprintf(stderr, "rank %d: %s\n", rank, halo_error(p));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  halo_sync(p);
  printf("rank %d: %lld particles, charge from the left neighbour's last cell %.0f\n", rank,
         (long long)halo_extent(p, "N"), ((double *)halo_field(p, "left").data)[0]);
  halo_teardown(p);
  MPI_Finalize();
  return 0;
}
