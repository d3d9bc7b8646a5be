/*
** test_scanfuse.c -- scanfuse.cnp against a plain C reference that runs each map, then each
** scan in the documented order (chunks of 1024 rows: totals in row order, their exclusive
** prefix, each chunk again from its offset), so floats compare bit for bit: a fused scan (its
** chunk totals computed by the kernel that writes the rows) gives the unfused bits. 409000
** live rows of 420000: quads of full chunks, single chunks and a partial one; with one thread
** (e2e.scanfuse.t1) several tiles of the blocked host scan (16 items of 4 chunks a tile: 100
** items), with 2 or 3 (e2e.scanfuse, .t3) its two parallel loops. With the CUDA unit
** (E2E_CUDA_UNIT) its host fallback, and on a GPU (E2E_BACKEND=cuda): the same bits (the
** scans' order is the same on both backends, and the maps have no a * b + c to contract).
*/
#include "scanfuse.h"
#include "e2e.h"
#include "e2e_backend.h"
#define NN 420000
#define NL 409000
#define MC 3333
#define STEPS 3
#define SCH 1024

static double x[2][NN], cx[2][NN], y[NN], cy[NN];
static int64_t k[NN], ky[NN], gky[NN];
static int32_t c[MC], cc[MC];
static double gx[2 * NN], gcx[2 * NN], gcy[NN];
static int64_t gk[NN];
static int32_t gcc[MC];

#define SCAN(T, UT, src, dst, n, incl)                                                    \
  do {                                                                                    \
    int64_t nch_ = ((n) + SCH - 1) / SCH;                                                 \
    static T part_[NN / SCH + 2];                                                         \
    for (int64_t c_ = 0; c_ < nch_; c_++) {                                               \
      T s_ = 0;                                                                           \
      for (int64_t i_ = c_ * SCH; i_ < (n) && i_ < c_ * SCH + SCH; i_++) s_ = (T)((UT)s_ + (UT)(src)[i_]); \
      part_[c_] = s_;                                                                     \
    }                                                                                     \
    T a_ = 0;                                                                             \
    for (int64_t c_ = 0; c_ < nch_; c_++) { T t_ = part_[c_]; part_[c_] = a_; a_ = (T)((UT)a_ + (UT)t_); } \
    for (int64_t c_ = 0; c_ < nch_; c_++) {                                               \
      T b_ = part_[c_];                                                                   \
      for (int64_t i_ = c_ * SCH; i_ < (n) && i_ < c_ * SCH + SCH; i_++) {                \
        T x_ = (src)[i_];                                                                 \
        if (incl) b_ = (T)((UT)b_ + (UT)x_);                                              \
        (dst)[i_] = b_;                                                                   \
        if (!(incl)) b_ = (T)((UT)b_ + (UT)x_);                                           \
      }                                                                                   \
    }                                                                                     \
  } while (0)

int main(void) {
  uint64_t seed = 5;
  scanfuse *p; char err[256];
  scanfuse_config cfg = SCANFUSE_CONFIG_INIT;
  int skip = e2e_choose_backend("scanfuse", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = NN; cfg.m = MC;
  CHECK(scanfuse_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  for (int i = 0; i < NL; i++) {
    x[0][i] = e2e_rand(&seed) - 0.4;
    x[1][i] = e2e_rand(&seed) * 1e3;
    k[i] = (int64_t)(e2e_rand(&seed) * 9e18) - (int64_t)4e18;   /* the sums wrap */
  }
  for (int j = 0; j < MC; j++) c[j] = (int32_t)(e2e_rand(&seed) * 4e9 - 2e9);
  e2e_put(scanfuse_field(p, "x"), "x", x);   /* the capacity's rows, then NL of them live */
  e2e_put(scanfuse_field(p, "k"), "k", k);
  e2e_put(scanfuse_field(p, "c"), "c", c);
  CHECK(scanfuse_set_extent(p, "N", NL) == 0, "set_extent");
  for (int s = 0; s < STEPS; s++) {
    double av = 1.0 + 0.25 * s;
    CHECK(scanfuse_step(p, av) == 0, "step: %s", scanfuse_error(p));
    CHECK(scanfuse_sync(p) == 0, "sync");
    for (int i = 0; i < NL; i++) {
      x[0][i] = x[0][i] * av;
      x[1][i] = x[1][i] - av;
      k[i] = (int64_t)((uint64_t)k[i] + (uint64_t)i);
    }
    SCAN(double, double, x[0], cx[0], NL, 1);
    SCAN(double, double, x[1], cx[1], NL, 1);
    for (int i = 0; i < NL; i++) k[i] = (int64_t)((uint64_t)k[i] * 3u);
    SCAN(int64_t, uint64_t, k, k, NL, 0);
    for (int j = 0; j < MC; j++) c[j] = (int32_t)((uint32_t)c[j] * 5u + 3u);
    SCAN(int32_t, uint32_t, c, cc, MC, 1);
    for (int i = 0; i < NL; i++) y[i] = cx[0][i > 0 ? i - 1 : 0] + 1.0;
    SCAN(int64_t, uint64_t, k, ky, NL, 1);
    SCAN(double, double, y, cy, NL, 0);
    e2e_fetch(scanfuse_field(p, "x"), "x", gx);
    e2e_fetch(scanfuse_field(p, "cx"), "cx", gcx);
    e2e_fetch(scanfuse_field(p, "k"), "k", gk);
    e2e_fetch(scanfuse_field(p, "cc"), "cc", gcc);
    e2e_fetch(scanfuse_field(p, "cy"), "cy", gcy);
    e2e_fetch(scanfuse_field(p, "ky"), "ky", gky);
    for (int i = 0; i < NL; i++) {
      CHECK(gx[i] == x[0][i] && gx[NL + i] == x[1][i], "step %d: x[., %d]", s, i);
      CHECK(gcx[i] == cx[0][i], "step %d: cx[0, %d] %.17g vs %.17g", s, i, gcx[i], cx[0][i]);
      CHECK(gcx[NL + i] == cx[1][i], "step %d: cx[1, %d] %.17g vs %.17g", s, i, gcx[NL + i], cx[1][i]);
      CHECK(gk[i] == k[i], "step %d: k[%d]", s, i);
      CHECK(gcy[i] == cy[i], "step %d: cy[%d]", s, i);
      CHECK(gky[i] == ky[i], "step %d: ky[%d]", s, i);
    }
    for (int j = 0; j < MC; j++) CHECK(gcc[j] == cc[j], "step %d: cc[%d]", s, j);
  }
  printf("scanfuse ok (%s backend)\n", e2e_cuda ? "CUDA" : "host");
  scanfuse_teardown(p);
  return 0;
}
