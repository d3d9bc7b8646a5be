/*
** test_xsplit.c -- xsplit.cnp on 1, 2 and 4 ranks (or on one rank without a communicator,
** argument "nocomm") against a serial plain-C reference of the whole grid: every rank
** checks its planes [off, off + n) (cnp_slab_range) of every field, and its rank-local
** reductions against the reference's sums over the same planes; lap equals the unsplit
** grid's lapu (the same planes of the whole grid, which every rank computes) exactly; and every
** field (random draws included) equals, bit for bit, the same planes of a second instance of
** the pipeline on one rank without a communicator (the serial run), made on every rank.
*/
#include "xs.h"
#include "e2e.h"
#include <cnp/mpi.h>
#ifndef E2E_NOMPI   /* (a build without MPI: one rank without a communicator) */
#include <mpi.h>
#endif
#define NY 10
#define NX 7
static double U[NY][NX], LAP[NY][NX], E[2][NY][NX], D[NY][NX], Hh[NY][NX], HK[NY][NX];
static int wr(int j) { return (j % NY + NY) % NY; }
static int wc(int i) { return (i % NX + NX) % NX; }
/* the local interior element (j, i) of field f (ghost width w on axis 0, wx on axis 1, component c) */
static double at(cnp_array a, int c, int64_t j, int64_t off, int w, int wx, int i) {
  int nd = a.ndim;
  return *(double *)((char *)a.data + (nd == 3 ? c * a.strides[0] : 0) + (j - off + w) * a.strides[nd - 2] +
                     (i + wx) * a.strides[nd - 1]);
}
int main(int argc, char **argv) {
#ifdef E2E_NOMPI
  int rank = 0, R = 1, nocomm = 1;
  (void)argc;
  (void)argv;
#else
  MPI_Init(&argc, &argv);
  int rank, R;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &R);
  int nocomm = argc > 1 && !strcmp(argv[1], "nocomm");
#endif
  const double pi2 = 6.283185307179586;
  for (int j = 0; j < NY; j++)
    for (int i = 0; i < NX; i++) {
      U[j][i] = sin((double)j * (pi2 / NY)) * cos(2.0 * ((double)i * (3.0 / NX))) + 0.01 * (double)j;
      Hh[j][i] = (double)(j * 100 + i);
    }
  for (int j = 0; j < NY; j++)
    for (int i = 0; i < NX; i++) {
      LAP[j][i] = U[wr(j + 1)][i] + U[wr(j - 1)][i] + U[j][wc(i + 1)] + U[j][wc(i - 1)] - 4.0 * U[j][i];
      E[0][j][i] = U[wr(j + 1)][i] - U[wr(j - 1)][i];
      E[1][j][i] = U[j][wc(i + 1)] - U[j][wc(i - 1)];
    }
  for (int j = 0; j < NY; j++)
    for (int i = 0; i < NX; i++) {
      D[j][i] = E[0][wr(j + 1)][i] - 2.0 * E[1][wr(j - 1)][i];
      HK[j][i] = Hh[wr(j - 2)][i] + 3.0 * Hh[wr(j + 2)][wc(i - 1)] - Hh[wr(j + 1)][wc(i + 1)];
    }
  xs *p;
  char err[256];
  xs_config cfg = XS_CONFIG_INIT;
  cfg.ny = NY;
  cfg.nx = NX;
#ifndef E2E_NOMPI
  cfg.mpi_fcomm = nocomm ? 0 : MPI_Comm_c2f(MPI_COMM_WORLD);
#endif
  CHECK(xs_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  int size = nocomm ? 1 : R, me = nocomm ? 0 : rank;
  int64_t off = 0, n = NY;
  CHECK(nocomm || cnp_slab_range(NY, size, me, &off, &n) == CNP_OK, "slab range");
  CHECK(xs_field(p, "u").shape[0] == n + 2 && xs_field(p, "h").shape[0] == n + 4, "local storage extents");
  CHECK(xs_step(p) == 0, "step: %s", xs_error(p));
  CHECK(xs_sync(p) == 0, "sync");
  double tot_ref = 0, top_ref = -1e300, tot, top;
  for (int64_t j = off; j < off + n; j++)
    for (int i = 0; i < NX; i++) {
      CHECK(at(xs_field(p, "u"), 0, j, off, 1, 0, i) == U[j][i], "rank %d u[%ld, %d]", rank, (long)j, i);
      CHECK(e2e_close(at(xs_field(p, "lap"), 0, j, off, 1, 0, i), LAP[j][i], 1e-14), "rank %d lap[%ld, %d]", rank,
            (long)j, i);
      CHECK(at(xs_field(p, "lap"), 0, j, off, 1, 0, i) == at(xs_field(p, "lapu"), 0, j, 0, 1, 0, i),
            "rank %d lap[%ld, %d] differs from the unsplit grid's", rank, (long)j, i);
      for (int c = 0; c < 2; c++)
        CHECK(e2e_close(at(xs_field(p, "e"), c, j, off, 1, 0, i), E[c][j][i], 1e-14), "e[%d, %ld, %d]", c, (long)j, i);
      CHECK(e2e_close(at(xs_field(p, "d"), 0, j, off, 1, 0, i), D[j][i], 1e-14), "rank %d d[%ld, %d]", rank, (long)j,
            i);
      CHECK(at(xs_field(p, "hk"), 0, j, off, 2, 1, i) == HK[j][i], "rank %d hk[%ld, %d]: %g vs %g", rank, (long)j, i,
            at(xs_field(p, "hk"), 0, j, off, 2, 1, i), HK[j][i]);
      tot_ref += LAP[j][i];
      if (U[j][i] > top_ref) top_ref = U[j][i];
    }
  CHECK(xs_scalar(p, "tot", &tot) == 0 && xs_scalar(p, "top", &top) == 0, "scalars");
  CHECK(e2e_close(tot, tot_ref, 1e-12), "rank %d tot %.17g vs %.17g", rank, tot, tot_ref);
  CHECK(top == top_ref, "rank %d top", rank);
  if (!nocomm) {   /* the serial run: one rank, the whole grid */
    xs *q;
    xs_config c1 = cfg;
    c1.mpi_fcomm = 0;
    CHECK(xs_setup(&q, &c1, err, sizeof err) == 0, "serial setup: %s", err);
    CHECK(xs_step(q) == 0 && xs_sync(q) == 0, "serial step: %s", xs_error(q));
    static const char *const names[] = {"u", "lap", "d", "rnd", "rr"};
    for (int f = 0; f < 5; f++)
      for (int64_t j = off; j < off + n; j++)
        for (int i = 0; i < NX; i++)
          CHECK(at(xs_field(p, names[f]), 0, j, off, 1, 0, i) == at(xs_field(q, names[f]), 0, j, 0, 1, 0, i),
                "rank %d %s[%ld, %d] differs from the serial run's", rank, names[f], (long)j, i);
    for (int64_t j = off; j < off + n; j++)
      for (int i = 0; i < NX; i++)
        for (int c = 0; c < 2; c++)
          CHECK(at(xs_field(p, "e"), c, j, off, 1, 0, i) == at(xs_field(q, "e"), c, j, 0, 1, 0, i), "e vs serial");
    xs_teardown(q);
  }
  xs_teardown(p);
#ifndef E2E_NOMPI
  MPI_Finalize();
#endif
  return 0;
}
