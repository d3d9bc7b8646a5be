/*
** test_xmpi.c -- xmpi.cnp on 3 ranks against a reference that simulates every rank:
** migration of f64/u64/i32/f32[2, N] rows (order: stayers, then arrivals by source rank),
** a component-major halo exchanged on a stream inside a step and an i64 one at top level.
*/
#include "xmpi.h"
#include "e2e.h"
#include <mpi.h>
#define CAP 400
#define N0 50
#define MAXR 8
#define NG 4
typedef struct { double x; uint64_t id; int32_t q; float p[2]; } part;
static part P[MAXR][CAP]; static int64_t n[MAXR];
static double ghost[MAXR][2][NG]; static int64_t edge[MAXR][NG];
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, R; MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &R);
  CHECK(R <= MAXR, "ranks");
  uint64_t seed = 1234;
  for (int r = 0; r < R; r++) {
    n[r] = N0;
    for (int i = 0; i < N0; i++) {
      part *a = &P[r][i];
      a->x = (r + e2e_rand(&seed)) / R; a->id = (uint64_t)r * 1000 + (uint64_t)i; a->q = 0;
      a->p[0] = (float)a->id * 0.5f; a->p[1] = -(float)a->id;
    }
    for (int g = 0; g < NG; g++) { ghost[r][0][g] = 0; ghost[r][1][g] = r * 10 + g; edge[r][g] = r; }
  }
  xmpi *p; char err[256];
  xmpi_config cfg = XMPI_CONFIG_INIT;
  cfg.N = CAP; cfg.nranks = R; cfg.mpi_fcomm = MPI_Comm_c2f(MPI_COMM_WORLD);
  CHECK(xmpi_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
#define F(name, T) ((T *)xmpi_field(p, name).data)
  CHECK(xmpi_set_extent(p, "N", N0) == 0, "extent");
  cnp_array fp = xmpi_field(p, "p2"), fg = xmpi_field(p, "ghost");
  for (int i = 0; i < N0; i++) {
    part *a = &P[rank][i];
    F("x", double)[i] = a->x; F("id", uint64_t)[i] = a->id; F("q", int32_t)[i] = a->q;
    for (int k = 0; k < 2; k++) *(float *)((char *)fp.data + k * fp.strides[0] + i * fp.strides[1]) = a->p[k];
  }
  for (int g = 0; g < NG; g++) { for (int k = 0; k < 2; k++) *e2e_at(fg.data, fg.strides, k, g) = ghost[rank][k][g]; F("edge", int64_t)[g] = edge[rank][g]; }
  for (int s = 0; s < 4; s++) {
    cnp_array ring = xmpi_field(p, "ring");  /* the staging buffer: a host i32[2, 3] */
    CHECK(ring.ndim == 2 && ring.shape[0] == 2 && ring.shape[1] == 3 && ring.dtype == CNP_INT32, "ring view");
    for (int k = 0; k < 6; k++) ((int32_t *)ring.data)[k] = 1000 * rank + 10 * s + k;
    CHECK(xmpi_step(p) == 0, "step: %s", xmpi_error(p));
    CHECK(xmpi_sync(p) == 0, "sync");
    /* reference for every rank */
    static int32_t dst[MAXR][CAP];
    for (int r = 0; r < R; r++)
      for (int64_t i = 0; i < n[r]; i++) {
        part *a = &P[r][i];
        a->x = fmod(a->x + 0.3, 1.0); dst[r][i] = (int32_t)(a->x * (double)R); a->q += 1;
      }
    static double ng[MAXR][2][NG];
    for (int r = 0; r < R; r++) for (int g = 0; g < NG; g++) { ghost[r][0][g] = g; ghost[r][1][g] += 1.0; edge[r][g] = edge[r][g] * 2 + 1; }
    for (int r = 0; r < R; r++) memcpy(ng[r], ghost[(r + R - 1) % R], sizeof ng[r]);
    memcpy(ghost, ng, sizeof ng);
    static part Q[MAXR][CAP]; int64_t m[MAXR];
    for (int r = 0; r < R; r++) {
      m[r] = 0;
      for (int64_t i = 0; i < n[r]; i++) if (dst[r][i] == r) Q[r][m[r]++] = P[r][i];
      for (int src = 0; src < R; src++) if (src != r)
        for (int64_t i = 0; i < n[src]; i++) if (dst[src][i] == r) Q[r][m[r]++] = P[src][i];
    }
    for (int r = 0; r < R; r++) { n[r] = m[r]; memcpy(P[r], Q[r], sizeof Q[r]); }
    static int64_t ne[MAXR][NG];
    for (int r = 0; r < R; r++) memcpy(ne[r], edge[(r + R - 1) % R], sizeof ne[r]);
    memcpy(edge, ne, sizeof ne);
    /* compare this rank */
    CHECK(xmpi_extent(p, "N") == n[rank], "rank %d step %d: N %ld vs %ld", rank, s, (long)xmpi_extent(p, "N"), (long)n[rank]);
    fp = xmpi_field(p, "p2"); fg = xmpi_field(p, "ghost");
    for (int64_t i = 0; i < n[rank]; i++) {
      part *a = &P[rank][i];
      CHECK(F("x", double)[i] == a->x, "x[%ld]", (long)i);
      CHECK(F("id", uint64_t)[i] == a->id, "rank %d id[%ld] %lu vs %lu", rank, (long)i, (unsigned long)F("id", uint64_t)[i], (unsigned long)a->id);
      CHECK(F("q", int32_t)[i] == a->q, "q[%ld]", (long)i);
      for (int k = 0; k < 2; k++) CHECK(*(float *)((char *)fp.data + k * fp.strides[0] + i * fp.strides[1]) == a->p[k], "p2");
    }
    ring = xmpi_field(p, "ring");               /* from the rank whose destination is this one */
    for (int k = 0; k < 6; k++)
      CHECK(((int32_t *)ring.data)[k] == 1000 * ((rank + R - 1) % R) + 10 * s + k,
            "rank %d ring[%d] %d", rank, k, ((int32_t *)ring.data)[k]);
    for (int g = 0; g < NG; g++) {
      for (int k = 0; k < 2; k++) CHECK(*e2e_at(fg.data, fg.strides, k, g) == ghost[rank][k][g], "rank %d ghost[%d,%d] %g vs %g", rank, k, g, *e2e_at(fg.data, fg.strides, k, g), ghost[rank][k][g]);
      CHECK(F("edge", int64_t)[g] == edge[rank][g], "rank %d edge[%d] %ld vs %ld", rank, g, (long)F("edge", int64_t)[g], (long)edge[rank][g]);
    }
  }
  xmpi_teardown(p);
  if (rank == 0) printf("xmpi ok on %d ranks\n", R);
  MPI_Finalize();
  return 0;
}
