/*
** test_xpair.c -- xpair.cnp: `exchange h with rank ^ 1;` (no `from`). On 2
** ranks the partners swap their buffers; on 1 or 3 ranks the last rank's partner is outside
** [0, size) and setup fails on every rank with CNP_EINVAL and a message asking for `from`.
*/
#include "xpair.h"
#include "e2e.h"
#include <mpi.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  xpair *p = NULL;
  char err[256] = "";
  xpair_config cfg = XPAIR_CONFIG_INIT;
  cfg.mpi_fcomm = MPI_Comm_c2f(MPI_COMM_WORLD);
  int st = xpair_setup(&p, &cfg, err, sizeof err);
  if (size % 2 == 0) {
    CHECK(st == 0, "rank %d: setup: %s", rank, err);
    for (int k = 0; k < 3; k++) ((double *)xpair_field(p, "h").data)[k] = 10.0 * rank + k;
    for (int s = 1; s <= 3; s++) {   /* the buffer goes to the partner and comes back */
      CHECK(xpair_step(p) == 0, "step: %s", xpair_error(p));
      int from = s % 2 ? rank ^ 1 : rank;
      for (int k = 0; k < 3; k++)
        CHECK(((double *)xpair_field(p, "h").data)[k] == 10.0 * from + k, "rank %d step %d h[%d]", rank, s, k);
    }
    xpair_teardown(p);
  } else {
    CHECK(st == CNP_EINVAL, "rank %d: setup gave %d (%s), want CNP_EINVAL", rank, st, err);
    CHECK(p == NULL, "no pipeline after a failed setup");
    CHECK(strstr(err, "exchange h: not exactly one rank sends to each rank") && strstr(err, "`from`"),
          "rank %d: message '%s'", rank, err);
  }
  MPI_Barrier(MPI_COMM_WORLD);   /* no rank is left waiting in an exchange */
  if (rank == 0) printf("xpair ok on %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
