/*
** test_rng.c -- rng.cnp's draws: Philox4x32-10 against Random123's known-answer vectors
** (kat_vectors), every draw of three steps bit for bit against a plain-C reference built on
** that function (uniforms; normals bit for bit against the template's Box-Muller run here,
** which has its own log and cos so that a GPU gives the same bits, and within 1e-14 of
** Box-Muller through the C library), the step counter, and statistics over 3 x 2^20 rows: mean and variance
** of the uniforms and normals, a chi-square over 64 bins, and correlations between draws,
** between neighbouring rows and between steps, each within 6 standard errors. Run with one
** and with two OpenMP threads (the same reference: the draws do not depend on the thread
** count), and on the GPU with E2E_BACKEND=cuda.
*/
#include "rng.h"
#include "e2e.h"
#include "e2e_backend.h"
#ifndef CNP_G_INLINE
#define CNP_G_INLINE static inline
#endif
#ifndef CNP_G_RESTRICT
#define CNP_G_RESTRICT restrict
#endif
#include "../../templates/philox.tmpl"   /* the generator's Philox, for the KAT check */

#define NN (1 << 20)
#define STEPS 3
#define SEED UINT64_C(0x0123456789abcdef)

static double u[STEPS][3 * NN], g[STEPS][NN];
static float uf[STEPS][NN], gf[STEPS][NN];
static int64_t st[NN];
static double lit[NN];

static void words(uint64_t seed, int64_t step, int64_t row, uint32_t draw, uint32_t w[4])
{
  uint32_t c[4] = {(uint32_t)row, (uint32_t)((uint64_t)row >> 32), (uint32_t)step, draw};
  cnp_g_philox4x32_10(c, (uint32_t)seed, (uint32_t)(seed >> 32), w);
}
/* uniform(): rows 2b and 2b + 1 take w1:w0 and w3:w2 of block b */
static double ref_u(uint64_t seed, int64_t step, int64_t row, uint32_t draw)
{
  uint32_t w[4];
  words(seed, step, row >> 1, draw, w);
  const uint32_t *h = w + 2 * (row & 1);
  return ldexp((double)((((uint64_t)h[1] << 32) | h[0]) >> 11), -53);
}

/* Pearson correlation of x[0..n) and y[0..n) (strides sx, sy). */
static double corr(const double *x, const double *y, int n)
{
  double mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
  for (int i = 0; i < n; i++) mx += x[i], my += y[i];
  mx /= n, my /= n;
  for (int i = 0; i < n; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  return sxy / sqrt(sxx * syy);
}

int main(void)
{
  /* Random123 kat_vectors: philox4x32 10 CTR KEY -> OUT */
  static const uint32_t kat[3][10] = {
      {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
      {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0x408f276d, 0x41c83b0e,
       0xa20bc7c6, 0x6d5451fd},
      {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0, 0xd16cfe09, 0x94fdcceb,
       0x5001e420, 0x24126ea1}};
  for (int k = 0; k < 3; k++) {
    uint32_t out[4];
    cnp_g_philox4x32_10(kat[k], kat[k][4], kat[k][5], out);
    for (int j = 0; j < 4; j++)
      CHECK(out[j] == kat[k][6 + j], "KAT %d word %d: %08x, want %08x", k, j, out[j], kat[k][6 + j]);
  }
  rng *p;
  char err[256];
  rng_config cfg = RNG_CONFIG_INIT;
  int skip = e2e_choose_backend("rng", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = NN;
  cfg.seed = SEED;
  CHECK(rng_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  for (int t = 0; t < STEPS; t++) {
    CHECK(rng_step(p) == 0, "step: %s", rng_error(p));
    CHECK(rng_sync(p) == 0, "sync: %s", rng_error(p));
    e2e_get_into(rng_field(p, "u"), "u", u[t]);
    e2e_get_into(rng_field(p, "uf"), "uf", uf[t]);
    e2e_get_into(rng_field(p, "g"), "g", g[t]);
    e2e_get_into(rng_field(p, "gf"), "gf", gf[t]);
    e2e_get_into(rng_field(p, "st"), "st", st);
    e2e_get_into(rng_field(p, "lit"), "lit", lit);
    for (int i = 0; i < NN; i++) {
      CHECK(st[i] == t, "step_index() at step %d row %d: %lld", t, i, (long long)st[i]);
      double w0 = ref_u(SEED, t, i, 0), w1 = ref_u(SEED, t, i, 1), w2 = ref_u(SEED + 1, t, i, 2);
      CHECK(u[t][i] == w0 && u[t][NN + i] == w1 && u[t][2 * NN + i] == w2,
            "uniform at step %d row %d: %.17g %.17g %.17g, want %.17g %.17g %.17g", t, i, u[t][i], u[t][NN + i],
            u[t][2 * NN + i], w0, w1, w2);
      CHECK(lit[i] == ref_u(UINT64_C(18446744073709551557), t, i, 6), "literal seed at step %d row %d", t, i);
      uint32_t w[4];
      words(SEED, t, i >> 2, 3, w);   /* uniform_f32(): row 4b + j takes w_j of block b */
      CHECK(uf[t][i] == ldexpf((float)(w[i & 3] >> 8), -24), "uniform_f32 at step %d row %d", t, i);
      CHECK(u[t][i] >= 0.0 && u[t][i] < 1.0 && uf[t][i] >= 0.0f && uf[t][i] < 1.0f, "in [0, 1)");
      /* normals: bit for bit the template's (its own log and cos: the same on the GPU), and
      ** within 1e-14 / 1e-6 of Box-Muller through the C library */
      words(SEED, t, i, 4, w);
      double u1 = 1.0 - ldexp((double)((((uint64_t)w[1] << 32) | w[0]) >> 11), -53);
      double u2 = ldexp((double)((((uint64_t)w[3] << 32) | w[2]) >> 11), -53);
      double lg = sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2), wg = cnp_g_normal_f64(SEED, t, i, 4);
      CHECK(g[t][i] == wg && e2e_close(wg, lg, 1e-14), "normal at step %d row %d: %.17g, want %.17g (libm %.17g)",
            t, i, g[t][i], wg, lg);
      words(SEED, t, i, 5, w);
      double f1 = 1.0 - ldexp((double)(w[0] >> 8), -24), f2 = ldexp((double)(w[1] >> 8), -24);
      float lgf = (float)(sqrt(-2.0 * log(f1)) * cos(6.283185307179586 * f2)), wgf = cnp_g_normal_f32(SEED, t, i, 5);
      CHECK(gf[t][i] == wgf && e2e_close(wgf, lgf, 1e-6), "normal_f32 at step %d row %d: %.9g, want %.9g (libm %.9g)",
            t, i, gf[t][i], wgf, lgf);
    }
  }
  /* statistics over all steps and draws: 6 standard errors */
  const double n = (double)STEPS * NN;
  double su = 0, suu = 0, sg = 0, sgg = 0, sf = 0, sff = 0;
  static long bins[64];
  for (int t = 0; t < STEPS; t++)
    for (int i = 0; i < NN; i++) {
      su += u[t][i], suu += u[t][i] * u[t][i];
      sg += g[t][i], sgg += g[t][i] * g[t][i];
      sf += gf[t][i], sff += (double)gf[t][i] * gf[t][i];
      bins[(int)(u[t][NN + i] * 64.0)]++;
    }
  double mu = su / n, vu = suu / n - mu * mu, mg = sg / n, vg = sgg / n - mg * mg, mf = sf / n, vf = sff / n - mf * mf;
  CHECK(fabs(mu - 0.5) < 6 * sqrt(1.0 / 12 / n), "uniform mean %.6f", mu);
  CHECK(fabs(vu - 1.0 / 12) < 6 * sqrt(1.0 / 180 / n), "uniform variance %.6f", vu);
  CHECK(fabs(mg) < 6 / sqrt(n) && fabs(mf) < 6 / sqrt(n), "normal means %.6f %.6f", mg, mf);
  CHECK(fabs(vg - 1) < 6 * sqrt(2 / n) && fabs(vf - 1) < 6 * sqrt(2 / n), "normal variances %.6f %.6f", vg, vf);
  double chi2 = 0, e = n / 64;
  for (int k = 0; k < 64; k++) chi2 += (bins[k] - e) * (bins[k] - e) / e;
  CHECK(chi2 < 63 + 6 * sqrt(2 * 63.0), "chi-square over 64 bins: %.1f (63 degrees of freedom)", chi2);
  double lim = 6 / sqrt((double)NN - 1), r[4] = {corr(u[0], u[0] + NN, NN), corr(u[0], u[0] + 1, NN - 1),
                                                  corr(u[0], u[1], NN), corr(g[1], g[2], NN)};
  const char *what[4] = {"draws 0 and 1", "neighbouring rows", "steps 0 and 1", "normals of steps 1 and 2"};
  for (int k = 0; k < 4; k++) CHECK(fabs(r[k]) < lim, "correlation of %s: %.5f", what[k], r[k]);
  rng_teardown(p);
  printf("rng ok (%s): chi2 %.1f, mean %.5f var %.5f, normal mean %.5f var %.5f, correlations %.5f %.5f %.5f %.5f\n",
         e2e_cuda ? "cuda" : "host", chi2, mu, vu, mg, vg, r[0], r[1], r[2], r[3]);
  return 0;
}
