/*
** test_sketch.c -- the brief's sketch on the host backend (one MPI rank): push, compaction,
** stable sort by cell, segment sum and snapshot against a plain C reference; the exchange
** sends the staging buffer (pic_step_field "halo") to this same rank and back.
*/
#include "pic_step.h"
#include "e2e.h"
#include <mpi.h>
#define N0 1024
#define NC 16
static double rx[N0], rv[3][N0], rw[N0], rrho[NC]; static int64_t rcell[N0]; static int64_t rn;
static void ref_step(double dt) {
  int64_t n = 0;
  static double tx[N0], tv[3][N0], tw[N0]; static int64_t tc[N0];
  for (int64_t i = 0; i < rn; i++) {
    double x = rx[i] + dt * rv[0][i];
    int alive = x >= 0.0 && x < 1.0;
    int64_t c = (int64_t)(x * (double)NC);
    if (alive) { tx[n] = x; for (int k = 0; k < 3; k++) tv[k][n] = rv[k][i]; tw[n] = rw[i]; tc[n] = c; n++; }
  }
  /* stable counting sort by cell */
  int64_t pos = 0;
  for (int64_t c = 0; c < NC; c++) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) if (tc[i] == c) {
      rx[pos] = tx[i]; for (int k = 0; k < 3; k++) rv[k][pos] = tv[k][i]; rw[pos] = tw[i]; rcell[pos] = c; pos++;
      s += tw[i];
    }
    rrho[c] = s;
  }
  CHECK(pos == n, "ref cells");
  rn = n;
}
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  uint64_t seed = 42;
  pic_step *p; char err[256];
  pic_step_config cfg = PIC_STEP_CONFIG_INIT;
  cfg.N = N0; cfg.n_cells = NC; cfg.mpi_fcomm = MPI_Comm_c2f(MPI_COMM_WORLD);
  CHECK(pic_step_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  cnp_array x = pic_step_field(p, "x"), v = pic_step_field(p, "v"), w = pic_step_field(p, "w");
  for (int i = 0; i < N0; i++) {
    rx[i] = ((double *)x.data)[i] = e2e_rand(&seed);
    for (int k = 0; k < 3; k++) rv[k][i] = *e2e_at(v.data, v.strides, k, i) = e2e_rand(&seed) * 2 - 1;
    rw[i] = ((double *)w.data)[i] = e2e_rand(&seed);
  }
  rn = N0;
  for (int s = 0; s < 5; s++) {
    double dt = 0.03 * (s + 1);
    cnp_array halo = pic_step_field(p, "halo");   /* the staging buffer, f64[3, 1024] on the host */
    CHECK(halo.ndim == 2 && halo.shape[0] == 3 && halo.shape[1] == 1024, "halo view");
    for (int k = 0; k < 3 * 1024; k++) ((double *)halo.data)[k] = s * 1e4 + k;
    CHECK(pic_step_step(p, dt) == 0, "step: %s", pic_step_error(p));
    CHECK(pic_step_sync(p) == 0, "sync");
    ref_step(dt);
    CHECK(pic_step_extent(p, "N") == rn, "N %ld vs %ld", (long)pic_step_extent(p, "N"), (long)rn);
    x = pic_step_field(p, "x"); v = pic_step_field(p, "v"); w = pic_step_field(p, "w");
    cnp_array cell = pic_step_field(p, "cell"), rho = pic_step_field(p, "rho");
    CHECK(x.shape[0] == rn && v.shape[1] == rn, "view extents");
    for (int64_t i = 0; i < rn; i++) {
      CHECK(((double *)x.data)[i] == rx[i], "x[%ld]", (long)i);
      CHECK(((double *)w.data)[i] == rw[i], "w[%ld]", (long)i);
      CHECK(((int64_t *)cell.data)[i] == rcell[i], "cell[%ld]", (long)i);
      for (int k = 0; k < 3; k++) CHECK(*e2e_at(v.data, v.strides, k, i) == rv[k][i], "v[%d,%ld]", k, (long)i);
    }
    cnp_array halo2 = pic_step_field(p, "halo");
    for (int k = 0; k < 3 * 1024; k++) CHECK(((double *)halo2.data)[k] == s * 1e4 + k, "halo[%d]", k);
    cnp_array snap;
    CHECK(pic_step_snapshot(p, "out", &snap) == 0, "snapshot");
    for (int c = 0; c < NC; c++) {
      CHECK(e2e_close(((double *)rho.data)[c], rrho[c], 1e-12), "rho[%d] %g vs %g", c, ((double *)rho.data)[c], rrho[c]);
      CHECK(((double *)snap.data)[c] == ((double *)rho.data)[c], "snap[%d]", c);
    }
  }
  pic_step_teardown(p);
  printf("sketch ok: %ld live\n", (long)rn);
  MPI_Finalize();
  return 0;
}
