/*
** test_xpsplit.c -- xpsplit.cnp on 1, 2 and 4 ranks (or on one rank without a communicator,
** argument "nocomm") against a serial plain-C reference of the whole grid, the shapes'
** kernels of the periodic distance (as test_pshape.c). Every rank starts with the particles
** i % size == rank (global positions, past the box on both sides); after the migration each
** holds exactly those whose plane floor(y * ny / Ly) mod ny it owns (cnp_slab_range), the
** global count is unchanged and every id is present once; its interior planes of every
** deposit match the reference, its ghost planes are 0, and its gathered values match.
*/
#include "xp.h"
#include "e2e.h"
#include <cnp/mpi.h>
#include <mpi.h>
#define NP 400
#define NY 9
#define NX 6
#define W 2
static const double LY = 2.0, LX = 3.0;
static double Y[NP], X[NP], Wt[NP], E[2][NY][NX];
static double R[4][NY][NX], M[4][NY][NX];   /* ngp, cic, tsc, unit cic; magnitudes */

static double kernel(int shape, double r) {
  double a = fabs(r);
  switch (shape) {
  case 0: return a < 0.5 ? 1.0 : 0.0;
  case 1: return a < 1.0 ? 1.0 - a : 0.0;
  default: return a < 0.5 ? 0.75 - a * a : a < 1.5 ? 0.5 * (1.5 - a) * (1.5 - a) : 0.0;
  }
}
static double pdist(double u, int64_t j, int64_t n) {
  double r = u - (double)j;
  return r - (double)n * floor(r / (double)n + 0.5);
}
static double wt(int shape, int q, int j, int i) {
  return kernel(shape, pdist(Y[q] * (NY / LY), j, NY)) * kernel(shape, pdist(X[q] * (NX / LX), i, NX));
}
static double *at(cnp_array a, int c, int64_t j, int64_t off, int i) {   /* local interior (j, i) */
  int nd = a.ndim;
  return (double *)((char *)a.data + (nd == 3 ? c * a.strides[0] : 0) + (j - off + W) * a.strides[nd - 2] +
                    i * a.strides[nd - 1]);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, Rn;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &Rn);
  int nocomm = argc > 1 && !strcmp(argv[1], "nocomm");
  int size = nocomm ? 1 : Rn, me = nocomm ? 0 : rank;
  uint64_t seed = 31;
  for (int q = 0; q < NP; q++) {
    Y[q] = -LY + 3.0 * LY * e2e_rand(&seed);
    X[q] = -LX + 3.0 * LX * e2e_rand(&seed);
    Wt[q] = 0.5 + e2e_rand(&seed);
  }
  Y[0] = 0.0, Y[1] = LY, Y[2] = -1e-17, Y[3] = LY * (1.0 - 1e-16);   /* plane edges */
  for (int c = 0; c < 2; c++)
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++) E[c][j][i] = e2e_rand(&seed) - 0.5;
  for (int q = 0; q < NP; q++)
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++)
        for (int k = 0; k < 4; k++) {
          double v = (k == 3 ? 1.0 : Wt[q]) * wt(k == 3 ? 1 : k, q, j, i);
          R[k][j][i] += v, M[k][j][i] += fabs(v);
        }
  xp *p;
  char err[256];
  xp_config cfg = XP_CONFIG_INIT;
  cfg.ny = NY, cfg.nx = NX, cfg.Ly = LY, cfg.Lx = LX, cfg.N = NP;
  cfg.mpi_fcomm = nocomm ? 0 : MPI_Comm_c2f(MPI_COMM_WORLD);
  CHECK(xp_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  int64_t off, n, mine = 0;
  CHECK(cnp_slab_range(NY, size, me, &off, &n) == CNP_OK, "slab range");
  CHECK(xp_set_extent(p, "N", NP) == 0, "extent");
  for (int q = 0; q < NP; q++)
    if (q % size == me) {
      ((double *)xp_field(p, "y").data)[mine] = Y[q];
      ((double *)xp_field(p, "x").data)[mine] = X[q];
      ((double *)xp_field(p, "w").data)[mine] = Wt[q];
      ((int64_t *)xp_field(p, "id").data)[mine] = q;
      mine++;
    }
  CHECK(xp_set_extent(p, "N", mine) == 0, "extent");
  cnp_array ea = xp_field(p, "e");
  for (int c = 0; c < 2; c++)
    for (int64_t j = -W; j < n + W; j++)
      for (int i = 0; i < NX; i++)
        *at(ea, c, off + j, off, i) = j >= 0 && j < n ? E[c][off + j][i] : 1e30;   /* ghosts: garbage until halo */
  CHECK(xp_step(p) == 0, "step: %s", xp_error(p));
  CHECK(xp_sync(p) == 0, "sync");
  /* the migration: owned rows only, all of them, each once */
  int64_t live = xp_extent(p, "N"), total = 0;
  static int seen[NP];
  const double *yv = xp_field(p, "y").data, *xv = xp_field(p, "x").data;
  const int64_t *iv = xp_field(p, "id").data;
  for (int64_t r = 0; r < live; r++) {
    int64_t q = iv[r];
    CHECK(q >= 0 && q < NP && yv[r] == Y[q] && xv[r] == X[q], "rank %d row %ld: id %ld moved apart", me, (long)r, (long)q);
    double u = fmod(Y[q] * (NY / LY), (double)NY);
    if (u < 0) u += NY;
    if (u >= NY) u = 0;
    int64_t plane = (int64_t)floor(u);
    CHECK(plane >= off && plane < off + n, "rank %d holds id %ld of plane %ld, outside [%ld, %ld)", me, (long)q,
          (long)plane, (long)off, (long)(off + n));
    seen[q] = 1;
  }
  if (nocomm) total = live;
  else MPI_Allreduce(&live, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  CHECK(total == NP, "particles: %ld after the migration, %d before", (long)total, NP);
  if (!nocomm) MPI_Allreduce(MPI_IN_PLACE, seen, NP, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int q = 0; q < NP; q++) CHECK(seen[q] == 1, "id %d held %d times", q, seen[q]);
  /* the deposits: interior planes vs the reference, ghosts 0 */
  static const char *const dn[4] = {"rn", "rc", "rt", "ra"};
  for (int k = 0; k < 4; k++) {
    cnp_array a = xp_field(p, dn[k]);
    CHECK(a.shape[0] == n + 2 * W, "%s: local storage %ld planes", dn[k], (long)a.shape[0]);
    for (int64_t j = off - W; j < off + n + W; j++)
      for (int i = 0; i < NX; i++) {
        double v = *at(a, 0, j, off, i);
        if (j < off || j >= off + n) CHECK(v == 0.0, "rank %d %s ghost plane %ld = %g", me, dn[k], (long)(j - off), v);
        else
          CHECK(fabs(v - R[k][j][i]) <= 1e-12 * (M[k][j][i] > 1 ? M[k][j][i] : 1), "rank %d %s[%ld, %d] = %.17g, reference %.17g",
                me, dn[k], (long)j, i, v, R[k][j][i]);
      }
  }
  /* the gather */
  cnp_array g = xp_field(p, "gt");
  for (int64_t r = 0; r < live; r++) {
    int64_t q = iv[r];
    for (int c = 0; c < 2; c++) {
      double ref = 0, mag = 0;
      for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) ref += wt(2, (int)q, j, i) * E[c][j][i], mag += fabs(wt(2, (int)q, j, i) * E[c][j][i]);
      double v = *(double *)((char *)g.data + c * g.strides[0] + r * g.strides[1]);
      CHECK(fabs(v - ref) <= 1e-12 * (mag > 1 ? mag : 1), "rank %d gather id %ld c %d: %.17g vs %.17g", me, (long)q, c, v, ref);
    }
  }
  if (me == 0)
    printf("xpsplit (%s, %d rank%s): migrate to the owners, deposits ngp/cic/tsc/atomic and a tsc gather match "
           "the serial reference\n", nocomm ? "no communicator" : "MPI", size, size == 1 ? "" : "s");
  xp_teardown(p);
  MPI_Finalize();
  return 0;
}
