/*
** test_xfrom.c -- xfrom.cnp: `exchange h with (rank + 1) % size from (rank + 1) % size;`. On 1
** and 2 ranks the buffers are swapped; on 3 or more setup fails on every rank with CNP_EINVAL
** naming a send that no receive meets.
*/
#include "xfrom.h"
#include "e2e.h"
#include <mpi.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  xfrom *p = NULL;
  char err[256] = "";
  xfrom_config cfg = XFROM_CONFIG_INIT;
  cfg.mpi_fcomm = MPI_Comm_c2f(MPI_COMM_WORLD);
  int st = xfrom_setup(&p, &cfg, err, sizeof err);
  if (size <= 2) {
    CHECK(st == 0, "rank %d: setup: %s", rank, err);
    double *h = (double *)xfrom_field(p, "h").data;
    h[0] = rank;
    h[1] = 0.5 + rank;
    CHECK(xfrom_step(p) == 0, "step: %s", xfrom_error(p));
    h = (double *)xfrom_field(p, "h").data;
    int from = (rank + 1) % size;
    CHECK(h[0] == from && h[1] == 0.5 + from, "rank %d: h = %g %g", rank, h[0], h[1]);
    xfrom_teardown(p);
  } else {
    CHECK(st == CNP_EINVAL && p == NULL, "rank %d: setup gave %d (%s), want CNP_EINVAL", rank, st, err);
    CHECK(strstr(err, "xfrom.cnp:7: exchange h: rank 0 sends to rank 1, which receives from rank 2") &&
              strstr(err, "`from`"), "rank %d: message '%s'", rank, err);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) printf("xfrom ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
