/*
** test_halo.c -- end to end with MPI (run with mpiexec -n 2, or more): examples/mpi/halo.cnp
** against a hand-written reference that pushes every particle of all ranks. After each
** step each rank must hold exactly the particles whose position it owns, with the
** reference positions, sorted by cell; rho must be their charge per cell; `left` must be
** the left neighbour's last-cell charge; particles and charge are conserved.
*/
#include <mpi.h>

#include "halo.h"
#include "e2e.h"

#define NG 3000          /* particles in total */
#define CAP 3000         /* capacity per rank (any rank could hold them all) */
#define NC 8
#define DT 0.05

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static double gx[NG], gv[NG];                    /* the reference: every particle */
  uint64_t seed = 99;
  for (int i = 0; i < NG; i++) {
    gx[i] = e2e_rand(&seed);
    gv[i] = 0.6 * e2e_rand(&seed) - 0.3;
  }

  halo_config cfg = HALO_CONFIG_INIT;
  cfg.mpi_fcomm = (int)MPI_Comm_c2f(MPI_COMM_WORLD);
  cfg.N = CAP;
  cfg.nranks = size;
  cfg.n_cells = NC;
  cfg.lo = (double)rank / size;
  cfg.width = 1.0 / size;
  halo *p = NULL;
  char err[256];
  CHECK(halo_setup(&p, &cfg, err, sizeof err) == CNP_OK, "rank %d: setup: %s", rank, err);

  int64_t n = 0;                                   /* load the particles this rank owns */
  cnp_array X = halo_field(p, "x"), V = halo_field(p, "v"), W = halo_field(p, "w");
  for (int i = 0; i < NG; i++)
    if ((int)(gx[i] * size) == rank) {
      ((double *)X.data)[n] = gx[i];
      ((double *)V.data)[n] = gv[i];
      ((double *)W.data)[n] = (double)i;           /* the weight is the particle's id */
      n++;
    }
  CHECK(halo_set_extent(p, "N", n) == CNP_OK, "extent");

  for (int step = 0; step < 20; step++) {
    for (int i = 0; i < NG; i++) gx[i] = fmod(gx[i] + DT * gv[i] + 1.0, 1.0);
    int st = halo_step(p, DT);
    CHECK(st == CNP_OK, "rank %d step %d: %s", rank, step, halo_error(p));
    CHECK(halo_sync(p) == CNP_OK, "sync");
    n = halo_extent(p, "N");
    const double *x = halo_field(p, "x").data, *w = halo_field(p, "w").data;
    const double *rho = halo_field(p, "rho").data;
    const int64_t *cell = halo_field(p, "cell").data;
    double q[NC] = {0}, wsum = 0;
    int64_t mine = 0;
    for (int i = 0; i < NG; i++) {
      int64_t d = (int64_t)(gx[i] * size);
      mine += (d < 0 ? 0 : d > size - 1 ? size - 1 : d) == rank;
    }
    CHECK(n == mine, "rank %d step %d: %lld particles, reference %lld", rank, step, (long long)n,
          (long long)mine);
    for (int64_t j = 0; j < n; j++) {
      int id = (int)w[j];
      CHECK(id >= 0 && id < NG && x[j] == gx[id], "rank %d step %d: particle %d at %.17g, "
            "reference %.17g", rank, step, id, x[j], gx[id]);
      CHECK(j == 0 || cell[j - 1] <= cell[j], "sorted by cell");
      q[cell[j]] += w[j];
      wsum += w[j];
    }
    for (int k = 0; k < NC; k++) CHECK(q[k] == rho[k], "rank %d: rho[%d]", rank, k);
    double total = 0, last = rho[NC - 1], from_left = -1;
    MPI_Allreduce(&wsum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total == (double)NG * (NG - 1) / 2, "charge conserved: %.17g", total);
    MPI_Sendrecv(&last, 1, MPI_DOUBLE, (rank + 1) % size, 7, &from_left, 1, MPI_DOUBLE,
                 (rank + size - 1) % size, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(((double *)halo_field(p, "left").data)[0] == from_left, "rank %d: halo %.17g vs %.17g",
          rank, ((double *)halo_field(p, "left").data)[0], from_left);
  }
  halo_stats s;
  halo_stats_get(p, &s);
  CHECK(s.host_syncs == 2, "migrate and exchange synchronize: %llu", (unsigned long long)s.host_syncs);
  halo_teardown(p);
  if (rank == 0) printf("halo: %d ranks, 20 steps match the reference\n", size);
  MPI_Finalize();
  return 0;
}
