/*
** test_grid.c -- grid.cnp against a plain C reference: every boundary kind in 1D, 2D and 3D
** (ghost axes read like periodic ones after halo), coord(), a swap, particle reads and
** scatter-adds with explicit indices. Fields are read through their storage views (ghost
** planes included: interior j at storage j + W).
*/
#include "gm.h"
#include "e2e.h"
#define N1 37
#define NY 13
#define NX 17
#define NZ 3
#define NP 200
#define C 0.75

static int64_t wr(int64_t x, int64_t n) { x %= n; return x < 0 ? x + n : x; }
static int64_t cl(int64_t x, int64_t n) { return x < 0 ? 0 : x >= n ? n - 1 : x; }
static double *el(cnp_array *a, int64_t s0, int64_t s1, int64_t s2)
{
  char *p = (char *)a->data + s0 * a->strides[0];
  if (a->ndim > 1) p += s1 * a->strides[1];
  if (a->ndim > 2) p += s2 * a->strides[2];
  return (double *)p;
}

static double p1[N1], c1[N1], h1[N1], a2[NY][NX], b2[NY][NX], h2[NY][NX], rho[NY][NX], a3[NZ][NY][NX];
static int64_t px[NP], py[NP];
static double w[NP];

int main(void)
{
  uint64_t seed = 19;
  gm *p;
  char err[256];
  gm_config cfg = GM_CONFIG_INIT;
  cfg.n1 = 1, cfg.ny = NY, cfg.nx = NX, cfg.nz = NZ, cfg.N = NP;   /* H1 is ghost(2): n1 >= 2 */
  CHECK(gm_setup(&p, &cfg, err, sizeof err) == CNP_EINVAL &&
            strstr(err, "grid H1: axis 0 has 1 points, fewer than its ghost width 2"),
        "setup with n1 < W: %s", err);
  cfg.n1 = N1;
  CHECK(gm_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  cnp_array f;
  f = gm_field(p, "h1");
  CHECK(f.ndim == 1 && f.shape[0] == N1 + 4, "h1 storage %ld", (long)f.shape[0]);
  f = gm_field(p, "v2");
  CHECK(f.ndim == 3 && f.shape[0] == 2 && f.shape[1] == NY && f.shape[2] == NX, "v2 storage");
  f = gm_field(p, "h2");
  CHECK(f.ndim == 2 && f.shape[0] == NY + 2 && f.shape[1] == NX, "h2 storage");
  f = gm_field(p, "a3");
  CHECK(f.ndim == 3 && f.shape[0] == NZ && f.shape[1] == NY && f.shape[2] == NX + 2, "a3 storage");
  /* inputs (ghost planes get garbage: halo must overwrite what the maps read) */
  f = gm_field(p, "p1");
  for (int i = 0; i < N1; i++) p1[i] = *el(&f, i, 0, 0) = e2e_rand(&seed);
  f = gm_field(p, "c1");
  for (int i = 0; i < N1; i++) c1[i] = *el(&f, i, 0, 0) = e2e_rand(&seed);
  f = gm_field(p, "h1");
  for (int i = 0; i < N1 + 4; i++) *el(&f, i, 0, 0) = 1e6;
  for (int i = 0; i < N1; i++) h1[i] = *el(&f, i + 2, 0, 0) = e2e_rand(&seed);
  f = gm_field(p, "a2");
  for (int j = 0; j < NY; j++) for (int i = 0; i < NX; i++) a2[j][i] = *el(&f, j, i, 0) = e2e_rand(&seed);
  f = gm_field(p, "b2");
  for (int j = 0; j < NY; j++) for (int i = 0; i < NX; i++) b2[j][i] = *el(&f, j, i, 0) = e2e_rand(&seed);
  f = gm_field(p, "h2");
  for (int j = 0; j < NY + 2; j++) for (int i = 0; i < NX; i++) *el(&f, j, i, 0) = -1e6;
  for (int j = 0; j < NY; j++) for (int i = 0; i < NX; i++) h2[j][i] = *el(&f, j + 1, i, 0) = e2e_rand(&seed);
  f = gm_field(p, "rho");
  for (int j = 0; j < NY + 2; j++) for (int i = 0; i < NX; i++) *el(&f, j, i, 0) = 0.0;
  f = gm_field(p, "a3");
  for (int k = 0; k < NZ; k++) for (int j = 0; j < NY; j++) {
    for (int i = 0; i < NX + 2; i++) *el(&f, k, j, i) = 1e9;
    for (int i = 0; i < NX; i++) a3[k][j][i] = *el(&f, k, j, i + 1) = e2e_rand(&seed);
  }
  cnp_array fx = gm_field(p, "px"), fy = gm_field(p, "py"), fw = gm_field(p, "w");
  for (int q = 0; q < NP; q++) {
    px[q] = ((int64_t *)fx.data)[q] = (int64_t)(e2e_rand(&seed) * NX);
    py[q] = ((int64_t *)fy.data)[q] = (int64_t)(e2e_rand(&seed) * NY);
    w[q] = ((double *)fw.data)[q] = e2e_rand(&seed);
  }
  for (int step = 0; step < 2; step++) {
    CHECK(gm_step(p, C) == 0, "step: %s", gm_error(p));
    gm_sync(p);
    f = gm_field(p, "q1");
    for (int i = 0; i < N1; i++) {
      double r = p1[wr(i - 1, N1)] - 2.0 * p1[i] + p1[wr(i + 2, N1)];
      CHECK(e2e_close(*el(&f, i, 0, 0), r, 1e-13), "q1[%d] %g vs %g", i, *el(&f, i, 0, 0), r);
    }
    f = gm_field(p, "d1");
    for (int i = 0; i < N1; i++) {
      double r = c1[cl(i - 2, N1)] + c1[cl(i + 1, N1)] * C;
      CHECK(e2e_close(*el(&f, i, 0, 0), r, 1e-13), "d1[%d] %g vs %g", i, *el(&f, i, 0, 0), r);
    }
    f = gm_field(p, "k1");
    for (int i = 0; i < N1; i++) {
      double r = h1[wr(i - 2, N1)] + 3.0 * h1[wr(i + 2, N1)] - h1[i];
      CHECK(e2e_close(*el(&f, i + 2, 0, 0), r, 1e-13), "k1[%d] %g vs %g", i, *el(&f, i + 2, 0, 0), r);
    }
    static double nb[NY][NX];
    cnp_array fv = gm_field(p, "v2");
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++) {
        nb[j][i] = a2[wr(j - 1, NY)][i] + a2[wr(j + 1, NY)][i] + a2[j][cl(i - 1, NX)] - 2.0 * a2[j][cl(i + 1, NX)];
        double v0 = (double)j * (2.0 / NY) + a2[j][i], v1 = (double)i * (3.0 / NX);
        CHECK(e2e_close(*el(&fv, 0, j, i), v0, 1e-13), "v2[0,%d,%d] %g vs %g", j, i, *el(&fv, 0, j, i), v0);
        CHECK(e2e_close(*el(&fv, 1, j, i), v1, 1e-13), "v2[1,%d,%d] %g vs %g", j, i, *el(&fv, 1, j, i), v1);
      }
    memcpy(b2, a2, sizeof a2);   /* swap a2, b2: a2 now holds the new values */
    memcpy(a2, nb, sizeof a2);
    f = gm_field(p, "a2");
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++) CHECK(e2e_close(*el(&f, j, i, 0), a2[j][i], 1e-13), "a2[%d,%d]", j, i);
    {  /* the reductions over the new a2 */
      double tot = 0.0, top = -INFINITY;
      int64_t cnt = 0;
      for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
          tot += a2[j][cl(i + 1, NX)] * ((double)i * (3.0 / NX));
          double d = a2[wr(j - 1, NY)][i] - a2[j][i];
          if (d > top) top = d;
          cnt += a2[j][i] > 0.5;
        }
      double got_tot, got_top;
      int64_t got_cnt;
      CHECK(gm_scalar(p, "tot", &got_tot) == 0 && gm_scalar(p, "top", &got_top) == 0 &&
            gm_scalar(p, "cnt", &got_cnt) == 0, "scalars");
      CHECK(e2e_close(got_tot, tot, 1e-12), "tot %g vs %g", got_tot, tot);
      CHECK(got_top == top, "top %g vs %g", got_top, top);
      CHECK(got_cnt == cnt, "cnt %ld vs %ld", (long)got_cnt, (long)cnt);
    }
    f = gm_field(p, "k2");
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++) {
        double r = h2[wr(j - 1, NY)][i] * 2.0 + h2[wr(j + 1, NY)][wr(i + 1, NX)] - h2[j][wr(i - 1, NX)];
        CHECK(e2e_close(*el(&f, j + 1, i, 0), r, 1e-13), "k2[%d,%d] %g vs %g", j, i, *el(&f, j + 1, i, 0), r);
      }
    f = gm_field(p, "b3");
    for (int k = 0; k < NZ; k++)
      for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
          double r = a3[wr(k - 1, NZ)][j][i] + a3[k][cl(j + 1, NY)][i] * 2.0 + a3[k][j][wr(i - 1, NX)] -
                     a3[k][j][wr(i + 1, NX)] * 0.5 + a3[wr(k + 2, NZ)][cl(j - 2, NY)][i];
          CHECK(e2e_close(*el(&f, k, j, i + 1), r, 1e-13), "b3[%d,%d,%d] %g vs %g", k, j, i, *el(&f, k, j, i + 1), r);
        }
    cnp_array fg = gm_field(p, "got");
    for (int q = 0; q < NP; q++) {
      CHECK(((double *)fg.data)[q] == h2[py[q]][px[q]], "got[%d]", q);
      rho[py[q]][px[q]] += w[q];
    }
    f = gm_field(p, "rho");
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++)
        CHECK(e2e_close(*el(&f, j + 1, i, 0), rho[j][i], 1e-12), "rho[%d,%d] %g vs %g", j, i, *el(&f, j + 1, i, 0), rho[j][i]);
  }
  gm_teardown(p);
  printf("grid ok\n");
  return 0;
}
