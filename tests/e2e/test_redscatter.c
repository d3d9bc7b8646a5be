/*
** test_redscatter.c -- redscatter.cnp against a plain C reference that reduces in the
** documented host order (docs/language.md, "Scalars": chunks of 4096 rows, row i into lane
** i % 8 in row order, the lanes combined in lane order, the chunks' partials in chunk order)
** and deposits in the documented one (each block's copy of a field, the copies added in block
** order after the loop: docs/codegen.md, "Gathers, scatter-adds"): the floating results bit
** for bit, with 1 and 3 OpenMP threads alike (e2e.redscatter.t1, .t3). N is not a multiple of
** 8 or 512, so the last chunk has a short sub-block and a tail.
*/
#include "redscatter.h"
#include "e2e.h"
#include "e2e_backend.h"   /* e2e_put, e2e_fetch (the host backend here) */
#define NN 21003
#define NC 37
#define STEPS 3
#define RCH 4096

static double x[NN], v[NN]; static float q[NN]; static int32_t k[NN];
static double dep[NC]; static float dq[NC];
static double gdep[NC]; static float gdq[NC];

static int64_t cell(double xi) {
  int64_t j = (int64_t)(xi * (double)NC);
  return j < NC - 1 ? j : NC - 1;
}

/* The blocks of the privatized deposit: chunks of 4096 rows per block, at least 16 rows per
** element of the target (gen_red.c, priv_chunks: PRIV_ROWS = 16). */
static int64_t chunks_per_block(int64_t elems) { return (16 * elems + RCH - 1) / RCH; }

int main(void) {
  uint64_t seed = 5;
  redscatter *p; char err[256];
  redscatter_config cfg = REDSCATTER_CONFIG_INIT;
  cfg.N = NN; cfg.n_cells = NC;
  CHECK(redscatter_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  for (int i = 0; i < NN; i++) {
    x[i] = e2e_rand(&seed);
    v[i] = e2e_rand(&seed) * 2 - 1;
    q[i] = (float)(e2e_rand(&seed) * 3 - 1);
    k[i] = (int32_t)(e2e_rand(&seed) * 4e9 - 2e9);
  }
  e2e_put(redscatter_field(p, "x"), "x", x);
  e2e_put(redscatter_field(p, "v"), "v", v);
  e2e_put(redscatter_field(p, "q"), "q", q);
  e2e_put(redscatter_field(p, "k"), "k", k);
  const int64_t nch = (NN + RCH - 1) / RCH;
  static double pdep[NN / RCH + 2][NC]; static float pdq[NN / RCH + 2][NC];
  for (int s = 0; s < STEPS; s++) {
    double dt = 0.25 * (s + 1);
    CHECK(redscatter_step(p, dt) == 0, "step: %s", redscatter_error(p));
    CHECK(redscatter_sync(p) == 0, "sync");
    /* kernel 1 */
    double ke = 0, kpos = 0, vlo = INFINITY, vhi = -INFINITY; int32_t ksum = 0; float qs = 0;
    int64_t nhi = 0;
    int64_t pc = chunks_per_block(NC), nb = (nch + pc - 1) / pc;
    for (int64_t b = 0; b < nb; b++)
      for (int j = 0; j < NC; j++) pdep[b][j] = -0.0;
    for (int64_t c = 0; c < nch; c++) {
      double l_ke[8] = {0}, l_kp[8] = {0}, l_lo[8], l_hi[8]; int32_t l_k[8] = {0};
      float l_q[8] = {0}; int64_t l_n[8] = {0};
      for (int l = 0; l < 8; l++) l_lo[l] = INFINITY, l_hi[l] = -INFINITY;
      for (int64_t i = c * RCH; i < NN && i < c * RCH + RCH; i++) {
        int l = (int)(i % 8);
        pdep[c / pc][cell(x[i])] += v[i];
        l_ke[l] += 0.5 * v[i] * v[i];
        if (v[i] > 0.0) l_kp[l] += v[i];
        if (v[i] < l_lo[l]) l_lo[l] = v[i];
        if (v[i] * dt > l_hi[l]) l_hi[l] = v[i] * dt;
        l_k[l] = (int32_t)((uint32_t)l_k[l] + (uint32_t)k[i]);
        l_q[l] += q[i];
        if (fabs(v[i]) > 0.75) l_n[l] += 1;
      }
      for (int l = 1; l < 8; l++) {
        l_ke[0] += l_ke[l]; l_kp[0] += l_kp[l];
        if (l_lo[l] < l_lo[0]) l_lo[0] = l_lo[l];
        if (l_hi[l] > l_hi[0]) l_hi[0] = l_hi[l];
        l_k[0] = (int32_t)((uint32_t)l_k[0] + (uint32_t)l_k[l]); l_q[0] += l_q[l]; l_n[0] += l_n[l];
      }
      ke += l_ke[0]; kpos += l_kp[0];
      if (l_lo[0] < vlo) vlo = l_lo[0];
      if (l_hi[0] > vhi) vhi = l_hi[0];
      ksum = (int32_t)((uint32_t)ksum + (uint32_t)l_k[0]); qs += l_q[0]; nhi += l_n[0];
    }
    for (int j = 0; j < NC; j++)
      for (int64_t b = 0; b < nb; b++) dep[j] += pdep[b][j];
    /* kernel 2: two reductions into `twice` per row */
    double twice = 0;
    pc = chunks_per_block(NC), nb = (nch + pc - 1) / pc;
    for (int64_t b = 0; b < nb; b++)
      for (int j = 0; j < NC; j++) pdq[b][j] = -0.0f;
    for (int64_t c = 0; c < nch; c++) {
      double l_t[8] = {0};
      for (int64_t i = c * RCH; i < NN && i < c * RCH + RCH; i++) {
        pdq[c / pc][cell(x[i])] += q[i];
        l_t[i % 8] += v[i];
        if (x[i] < 0.5) l_t[i % 8] += x[i];
      }
      for (int l = 1; l < 8; l++) l_t[0] += l_t[l];
      twice += l_t[0];
    }
    for (int j = 0; j < NC; j++)
      for (int64_t b = 0; b < nb; b++) dq[j] += pdq[b][j];
    /* kernel 3: unswitched on calls[0] == 0 */
    double sw = 0;
    for (int64_t b = 0; b < nb; b++)
      for (int j = 0; j < NC; j++) pdep[b][j] = -0.0;
    for (int64_t c = 0; c < nch; c++) {
      double l_s[8] = {0};
      for (int64_t i = c * RCH; i < NN && i < c * RCH + RCH; i++) {
        double w = s == 0 ? 2.0 * v[i] : v[i];
        pdep[c / pc][cell(x[i])] += w;
        l_s[i % 8] += w * x[i];
      }
      for (int l = 1; l < 8; l++) l_s[0] += l_s[l];
      sw += l_s[0];
    }
    for (int j = 0; j < NC; j++)
      for (int64_t b = 0; b < nb; b++) dep[j] += pdep[b][j];
    /* compare */
    double g_ke, g_kp, g_lo, g_hi, g_tw, g_sw; int32_t g_k; float g_q; int64_t g_n;
    CHECK(redscatter_scalar(p, "ke", &g_ke) == 0 && redscatter_scalar(p, "kpos", &g_kp) == 0 &&
          redscatter_scalar(p, "vlo", &g_lo) == 0 && redscatter_scalar(p, "vhi", &g_hi) == 0 &&
          redscatter_scalar(p, "ksum", &g_k) == 0 && redscatter_scalar(p, "qs", &g_q) == 0 &&
          redscatter_scalar(p, "nhi", &g_n) == 0 && redscatter_scalar(p, "twice", &g_tw) == 0 &&
          redscatter_scalar(p, "sw", &g_sw) == 0, "scalars");
    CHECK(g_ke == ke, "step %d: ke %.17g vs %.17g", s, g_ke, ke);
    CHECK(g_kp == kpos, "step %d: kpos %.17g vs %.17g", s, g_kp, kpos);
    CHECK(g_lo == vlo && g_hi == vhi, "step %d: vlo %g vs %g, vhi %g vs %g", s, g_lo, vlo, g_hi, vhi);
    CHECK(g_k == ksum, "step %d: ksum %d vs %d", s, g_k, ksum);
    CHECK(g_q == qs, "step %d: qs %.9g vs %.9g", s, (double)g_q, (double)qs);
    CHECK(g_n == nhi, "step %d: nhi %lld vs %lld", s, (long long)g_n, (long long)nhi);
    CHECK(g_tw == twice, "step %d: twice %.17g vs %.17g", s, g_tw, twice);
    CHECK(g_sw == sw, "step %d: sw %.17g vs %.17g", s, g_sw, sw);
    e2e_fetch(redscatter_field(p, "dep"), "dep", gdep);
    e2e_fetch(redscatter_field(p, "dq"), "dq", gdq);
    for (int j = 0; j < NC; j++) {
      CHECK(gdep[j] == dep[j], "step %d: dep[%d] %.17g vs %.17g", s, j, gdep[j], dep[j]);
      CHECK(gdq[j] == dq[j], "step %d: dq[%d] %.9g vs %.9g", s, j, (double)gdq[j], (double)dq[j]);
    }
  }
  printf("redscatter ok\n");
  redscatter_teardown(p);
  return 0;
}
