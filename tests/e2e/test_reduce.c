/*
** test_reduce.c -- reduce.cnp against a plain C reference that sums in the documented order
** (docs/codegen.md, "Reductions and scans": chunks of 4096 rows on the host, row i into lane
** i % 8, lanes combined in order, partials in chunk order; scans in chunks of 1024 rows), so floating results are compared bit for bit; run
** also with 1 and 3 OpenMP threads (e2e.reduce.t1, .t3): the same bits. With the CUDA unit
** (E2E_CUDA_UNIT) its host fallback, and on a GPU (E2E_BACKEND=cuda): integer results, min,
** max and the scans bit for bit (the scans' order is the same on both backends; the reference
** then subtracts the device's mean), the floating sums within 1e-12 (another order), x within
** 1e-15 (nvcc contracts x + dt * v into an fma).
*/
#include "reduce.h"
#include "e2e.h"
#include "e2e_backend.h"
#define NN 20000
#define NC 3000
#define STEPS 6
#define RCH 4096
#define SCH 1024

static double x[NN], v[NN]; static float q[2][NN]; static int32_t k[NN]; static uint64_t id[NN];
static double rho[NC], ex[NC]; static float cq[2][NN];
static double gx[NN], grho[NC], gex[NC]; static int32_t gkk[NN]; static float gcq[2 * NN];

/* inclusive (incl) or exclusive scan of n values in the generated order */
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
  uint64_t seed = 11;
  reduce *p; char err[256];
  reduce_config cfg = REDUCE_CONFIG_INIT;
  int skip = e2e_choose_backend("reduce", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = NN; cfg.n_cells = NC;
  CHECK(reduce_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  for (int i = 0; i < NN; i++) {
    x[i] = e2e_rand(&seed) * 0.9;
    v[i] = e2e_rand(&seed) * 2 - 1;
    q[0][i] = (float)(e2e_rand(&seed) * 2 - 1);
    q[1][i] = (float)(e2e_rand(&seed) * 4 - 1);
    k[i] = (int32_t)(e2e_rand(&seed) * 4e9 - 2e9);
    id[i] = (uint64_t)(e2e_rand(&seed) * 1.8e19) + 5;
  }
  for (int c = 0; c < NC; c++) rho[c] = e2e_rand(&seed) - 0.3;
  e2e_put(reduce_field(p, "x"), "x", x);
  e2e_put(reduce_field(p, "v"), "v", v);
  e2e_put(reduce_field(p, "q"), "q", q);
  e2e_put(reduce_field(p, "k"), "k", k);
  e2e_put(reduce_field(p, "id"), "id", id);
  e2e_put(reduce_field(p, "rho"), "rho", rho);
  int64_t n = NN;
  double keh[STEPS];
  for (int s = 0; s < STEPS; s++) {
    double dt = 0.01 * (s + 1);
    CHECK(reduce_step(p, dt) == 0, "step: %s", reduce_error(p));
    CHECK(reduce_sync(p) == 0, "sync");
    /* the reference: map 1 in chunks of 4096 rows */
    int64_t nch = (n + RCH - 1) / RCH;
    double ke = 0.0, vmax = -INFINITY; float vmin = INFINITY; int64_t nfast = 0;
    int32_t ksum = 0; uint64_t idmin = UINT64_MAX;
    for (int64_t c = 0; c < nch; c++) {
      double pke = 0.0, lke[8] = {0}, pvmax = -INFINITY; float pvmin = INFINITY; int64_t pn = 0;
      int32_t pk = 0; uint64_t pid = UINT64_MAX;
      for (int64_t i = c * RCH; i < n && i < c * RCH + RCH; i++) {
        x[i] = x[i] + dt * v[i];
        lke[i % 8] += 0.5 * v[i] * v[i];
        if (v[i] > pvmax) pvmax = v[i];
        if (q[1][i] < pvmin) pvmin = q[1][i];
        if (fabs(v[i]) > 0.5) pn += 1;
        pk = (int32_t)((uint32_t)pk + (uint32_t)k[i]);
        if (id[i] < pid) pid = id[i];
      }
      pke = lke[0];
      for (int l = 1; l < 8; l++) pke += lke[l];
      ke += pke; if (pvmax > vmax) vmax = pvmax; if (pvmin < vmin) vmin = pvmin; nfast += pn;
      ksum = (int32_t)((uint32_t)ksum + (uint32_t)pk); if (pid < idmin) idmin = pid;
    }
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
      if (x[i] < 0.95) {
        x[m] = x[i]; v[m] = v[i]; q[0][m] = q[0][i]; q[1][m] = q[1][i]; k[m] = k[i]; id[m] = id[i];
        m++;
      }
    n = m;
    double rsum = 0.0, lr[8] = {0};
    for (int c = 0; c < NC; c++) lr[c % 8] += rho[c];   /* one chunk, 8 lanes */
    rsum = lr[0];
    for (int l = 1; l < 8; l++) rsum += lr[l];
    double grsum_ = 0;
    CHECK(reduce_scalar(p, "rsum", &grsum_) == 0, "rsum");
    const double mean_sum = e2e_cuda ? grsum_ : rsum;   /* the device's sum: the scans match */
    for (int c = 0; c < NC; c++) rho[c] = rho[c] - mean_sum / (double)NC;
    SCAN(double, double, rho, ex, NC, 1);
    SCAN(int32_t, uint32_t, k, k, n, 0);
    SCAN(float, float, q[0], cq[0], n, 1);
    SCAN(float, float, q[1], cq[1], n, 1);
    { double g = 0; reduce_scalar(p, "ke", &g); keh[s] = e2e_cuda ? g : ke; }
    /* compare */
    double gke, gvmax, grsum; float gvmin; int64_t gn, glive; int32_t gk; uint64_t gid;
    CHECK(reduce_scalar(p, "ke", &gke) == 0 && reduce_scalar(p, "vmax", &gvmax) == 0 &&
          reduce_scalar(p, "vmin", &gvmin) == 0 && reduce_scalar(p, "nfast", &gn) == 0 &&
          reduce_scalar(p, "ksum", &gk) == 0 && reduce_scalar(p, "idmin", &gid) == 0 &&
          reduce_scalar(p, "rsum", &grsum) == 0 && reduce_scalar(p, "live", &glive) == 0, "scalars");
    CHECK(e2e_cuda ? e2e_close(gke, ke, 1e-12) : gke == ke, "step %d: ke %.17g vs %.17g", s, gke, ke);
    CHECK(gvmax == vmax && gvmin == vmin, "step %d: vmax %g vs %g, vmin %g vs %g", s, gvmax, vmax, gvmin, vmin);
    CHECK(gn == nfast, "step %d: nfast %lld vs %lld", s, (long long)gn, (long long)nfast);
    CHECK(gk == ksum, "step %d: ksum %d vs %d", s, gk, ksum);
    CHECK(gid == idmin, "step %d: idmin", s);
    CHECK(e2e_cuda ? e2e_close(grsum, rsum, 1e-12) : grsum == rsum, "step %d: rsum %.17g vs %.17g", s, grsum, rsum);
    CHECK(glive == n && reduce_extent(p, "N") == n, "step %d: live %lld vs %lld", s, (long long)glive, (long long)n);
    e2e_fetch(reduce_field(p, "rho"), "rho", grho);
    e2e_fetch(reduce_field(p, "ex"), "ex", gex);
    e2e_fetch(reduce_field(p, "x"), "x", gx);
    e2e_fetch(reduce_field(p, "k"), "k", gkk);
    e2e_fetch(reduce_field(p, "cq"), "cq", gcq);   /* C order: [2][n] */
    for (int c = 0; c < NC; c++) {
      CHECK(grho[c] == rho[c], "step %d: rho[%d]", s, c);
      CHECK(gex[c] == ex[c], "step %d: ex[%d] %.17g vs %.17g", s, c, gex[c], ex[c]);
    }
    for (int64_t i = 0; i < n; i++) {
      CHECK(e2e_cuda ? e2e_close(gx[i], x[i], 1e-15) : gx[i] == x[i], "step %d: x[%lld]", s, (long long)i);
      if (e2e_cuda) x[i] = gx[i];   /* continue from the device's values */
      CHECK(gkk[i] == k[i], "step %d: k[%lld] %d vs %d", s, (long long)i, gkk[i], k[i]);
      CHECK(gcq[i] == cq[0][i], "step %d: cq[0, %lld]", s, (long long)i);
      CHECK(gcq[n + i] == cq[1][i], "step %d: cq[1, %lld]", s, (long long)i);
    }
  }
  double h[8];
  int64_t got = reduce_history(p, "keh", h, 8);
  CHECK(got == 4, "history: %lld values", (long long)got);
  for (int j = 0; j < 4; j++) CHECK(h[j] == keh[STEPS - 4 + j], "history[%d] %.17g vs %.17g", j, h[j], keh[STEPS - 4 + j]);
  CHECK(reduce_history(p, "keh", h, 2) == 2 && h[0] == keh[STEPS - 2] && h[1] == keh[STEPS - 1], "history, 2 values");
  CHECK(reduce_history(p, "ke", h, 2) == CNP_EINVAL, "ke is not a history");
  double d;
  CHECK(reduce_scalar(p, "x", &d) == CNP_EINVAL, "x is not a scalar");
  CHECK(reduce_scalar(p, "one", &d) == CNP_EINVAL, "one (a field of one element) is not a scalar");
  CHECK(reduce_scalar(p, "keh", &d) == CNP_EINVAL && reduce_scalar(p, NULL, &d) == CNP_EINVAL, "a history, NULL");
  reduce_stats st; reduce_stats_get(p, &st);
  if (e2e_cuda) CHECK(st.host_syncs == 0 || st.graph_replays == 0, "graph steps without host syncs");
  printf("reduce ok (%s backend): %lld rows live, launches per step %llu\n", e2e_cuda ? "CUDA" : "host",
         (long long)n, (unsigned long long)st.launches);
  reduce_teardown(p);
  return 0;
}
