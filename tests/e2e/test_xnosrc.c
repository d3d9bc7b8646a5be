/*
** test_xnosrc.c -- xnosrc.cnp: `exchange h with 0;` (no `from`). One rank: the buffer goes to
** itself and back. Two or more: setup fails on every rank with a message asking for `from`.
*/
#include "xnosrc.h"
#include "e2e.h"
#include <mpi.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  xnosrc *p = NULL;
  char err[256] = "";
  xnosrc_config cfg = XNOSRC_CONFIG_INIT;
  cfg.mpi_fcomm = MPI_Comm_c2f(MPI_COMM_WORLD);
  int st = xnosrc_setup(&p, &cfg, err, sizeof err);
  if (size == 1) {
    CHECK(st == 0, "setup on one rank: %s", err);
    cnp_array h = xnosrc_field(p, "h");
    CHECK(h.ndim == 1 && h.shape[0] == 4 && h.dtype == CNP_FLOAT64, "h view");
    for (int k = 0; k < 4; k++) ((double *)h.data)[k] = 0.5 + k;
    CHECK(xnosrc_step(p) == 0, "step: %s", xnosrc_error(p));
    CHECK(xnosrc_sync(p) == 0, "sync");
    for (int k = 0; k < 4; k++) CHECK(((double *)xnosrc_field(p, "h").data)[k] == 0.5 + k, "h[%d]", k);
    xnosrc_teardown(p);
  } else {
    CHECK(st == CNP_EINVAL, "rank %d: setup gave %d (%s), want CNP_EINVAL", rank, st, err);
    CHECK(p == NULL, "no pipeline after a failed setup");
    CHECK(strstr(err, "exchange h: not exactly one rank sends to each rank") != NULL &&
              strstr(err, "`from`") != NULL,
          "rank %d: message '%s'", rank, err);
  }
  if (rank == 0) printf("xnosrc ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
