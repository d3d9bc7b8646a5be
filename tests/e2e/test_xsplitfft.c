/*
** test_xsplitfft.c -- xsplitfft.cnp on 1, 2 and 4 ranks (or on one rank without a
** communicator, argument "nocomm"): the distributed FFT Poisson solve of rho = sin(a y)
** sin(b x) against phi = rho / (a^2 + b^2) on every rank's planes (1e-12), its gradient by a
** stencil across the ranks' boundaries, the spectral block of rfft(G) along axis 1
** (cnp_slab_range of nx / 2 + 1), and allreduce: the global sums, min, max and counts, the
** same on every rank and equal to the serial values (within rounding: 1e-12 relative);
** phi against phiu, the unsplit grid's solve (1e-14: the distributed FFT sums in another
** order); a history recorded in a step after the allreduce holds the combined value.
*/
#include "xf.h"
#include "e2e.h"
#include <cnp/mpi.h>
#ifndef E2E_NOMPI   /* (a build without MPI: one rank without a communicator) */
#include <mpi.h>
#endif
#define NY 16
#define NX 12
#define MAXR_ALL 16
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
  const double a = 2.0, b = 3.0, pi2 = 6.283185307179586, dy = pi2 / NY, dx = pi2 / NX;
  xf *p;
  char err[256];
  xf_config cfg = XF_CONFIG_INIT;
  cfg.ny = NY;
  cfg.nx = NX;
#ifndef E2E_NOMPI
  cfg.mpi_fcomm = nocomm ? 0 : MPI_Comm_c2f(MPI_COMM_WORLD);
#endif
  CHECK(xf_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  int size = nocomm ? 1 : R, me = nocomm ? 0 : rank;
  int64_t off = 0, n = NY, koff = 0, kn = NX / 2 + 1;
  CHECK(nocomm || cnp_slab_range(NY, size, me, &off, &n) == CNP_OK, "slab range");
  CHECK(nocomm || cnp_slab_range(NX / 2 + 1, size, me, &koff, &kn) == CNP_OK, "spectral block");
  cnp_array rk = xf_field(p, "rk");
  CHECK(rk.ndim == 2 && rk.shape[0] == NY && rk.shape[1] == kn, "rank %d: rk is (%ld, %ld), not (%d, %ld)", rank,
        (long)rk.shape[0], (long)rk.shape[1], NY, (long)kn);
  CHECK(xf_step(p, a, b) == 0, "step: %s", xf_error(p));
  CHECK(xf_sync(p) == 0, "sync");
  cnp_array phi = xf_field(p, "phi"), ey = xf_field(p, "ey"), phiu = xf_field(p, "phiu");
  CHECK(phi.shape[0] == n + 2 && phi.shape[1] == NX, "phi's local storage");
  const double c = 1.0 / (a * a + b * b);
  double energy_ref = 0.0;
  for (int64_t j = off; j < off + n; j++)
    for (int i = 0; i < NX; i++) {
      double y = (double)j * dy, x = (double)i * dx;
      double ph = *(double *)((char *)phi.data + (j - off + 1) * phi.strides[0] + i * phi.strides[1]);
      double e = *(double *)((char *)ey.data + (j - off + 1) * ey.strides[0] + i * ey.strides[1]);
      double e_ref = c * (sin(a * (y - dy)) - sin(a * (y + dy))) * sin(b * x) / (2.0 * dy);
      CHECK(fabs(ph - c * sin(a * y) * sin(b * x)) < 1e-12, "rank %d phi[%ld, %d] %.17g", rank, (long)j, i, ph);
      double pu = *(double *)((char *)phiu.data + j * phiu.strides[0] + i * phiu.strides[1]);
      CHECK(fabs(ph - pu) < 1e-14, "rank %d phi[%ld, %d] %.17g vs unsplit %.17g", rank, (long)j, i, ph, pu);
      CHECK(fabs(e - e_ref) < 1e-12, "rank %d ey[%ld, %d] %.17g vs %.17g", rank, (long)j, i, e, e_ref);
    }
  for (int j = 0; j < NY; j++)
    for (int i = 0; i < NX; i++) {
      double s = sin(a * j * dy) * sin(b * i * dx);
      energy_ref += 0.5 * s * s * c;
    }
  {   /* 3D: phi3 = rho3 / (1 + a^2 + b^2), this rank's planes of axis 0 (nz = 8) */
    int64_t off3 = 0, n3 = 8;
    CHECK(nocomm || cnp_slab_range(8, size, me, &off3, &n3) == CNP_OK, "slab range 3D");
    cnp_array p3 = xf_field(p, "phi3"), k3 = xf_field(p, "rk3");
    int64_t m1 = NY, mo = 0;
    CHECK(nocomm || cnp_slab_range(NY, size, me, &mo, &m1) == CNP_OK, "spectral block 3D");
    CHECK(p3.shape[0] == n3 + 2 && k3.shape[0] == 8 && k3.shape[1] == m1 && k3.shape[2] == NX / 2 + 1,
          "rank %d 3D local shapes", rank);
    const double c3 = 1.0 / (1.0 + a * a + b * b), dz = pi2 / 8;
    for (int64_t k = off3; k < off3 + n3; k++)
      for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
          double v = *(double *)((char *)p3.data + (k - off3 + 1) * p3.strides[0] + j * p3.strides[1] +
                                 i * p3.strides[2]);
          double r = c3 * sin((double)k * dz) * sin(a * j * dy) * cos(b * i * dx);
          CHECK(fabs(v - r) < 1e-12, "rank %d phi3[%ld, %d, %d] %.17g vs %.17g", rank, (long)k, j, i, v, r);
        }
  }
  double energy, pmin, pmax, kmax;
  int64_t npts;
  CHECK(xf_scalar(p, "energy", &energy) == 0 && xf_scalar(p, "pmin", &pmin) == 0 &&
        xf_scalar(p, "pmax", &pmax) == 0 && xf_scalar(p, "npts", &npts) == 0 && xf_scalar(p, "kmax", &kmax) == 0,
        "scalars");
  CHECK(npts == NY * NX, "rank %d npts %ld", rank, (long)npts);
  CHECK(e2e_close(energy, energy_ref, 1e-12), "rank %d energy %.17g vs %.17g", rank, energy, energy_ref);
  CHECK(fabs(pmax - c) < 1e-12 && fabs(pmin + c) < 1e-12, "rank %d pmin %g pmax %g", rank, pmin, pmax);
  CHECK(kmax == (double)(NX / 2), "rank %d kmax %g", rank, kmax);
  double eh[4];
  CHECK(xf_history(p, "eh", eh, 4) == 1 && eh[0] == energy, "rank %d: the history records the combined energy",
        rank);
#ifndef E2E_NOMPI
  if (!nocomm) {   /* the combined values are the same bytes on every rank */
    double all[MAXR_ALL];
    CHECK(R <= MAXR_ALL, "ranks");
    MPI_Allgather(&energy, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int r = 0; r < R; r++) CHECK(all[r] == energy, "energy differs on rank %d", r);
  }
#endif
  xf_teardown(p);
#ifndef E2E_NOMPI
  MPI_Finalize();
#endif
  return 0;
}
