/*
** test_cmixed.c -- end to end: tests/e2e/cmixed.cnp, complex values times and over real
** ones, against the component-wise formulas (C99 Annex G G.5.1) bit for bit: a complex
** division by (r, 0) would differ in the last bits (and with an infinite part give NaNs).
** With E2E_BACKEND=cuda (the CUDA unit only) the pipeline runs on the GPU; without a usable
** device the test exits 77 (skipped), or fails under CNP_REQUIRE_CUDA=1.
*/
#include "cmixed.h"
#include "e2e.h"
#include "e2e_backend.h"

#include <math.h>
#include <string.h>

#define NN 257

static double Z[NN][2], R[NN], Z1[NN][2];
static float Y[NN][2], RF[NN];
static uint16_t H[NN];
static int64_t K[NN];

static int same64(const double *got, double re, double im)
{
  return !memcmp(&got[0], &re, sizeof re) && !memcmp(&got[1], &im, sizeof im);
}
static int same32(const float *got, float re, float im)
{
  return !memcmp(&got[0], &re, sizeof re) && !memcmp(&got[1], &im, sizeof im);
}

int main(void)
{
  cmixed *p = NULL;
  char err[256];
  cmixed_config cfg = CMIXED_CONFIG_INIT;
  int skip = e2e_choose_backend("cmixed", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = NN;
  CHECK(cmixed_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  uint64_t seed = 5;
  for (int i = 0; i < NN; i++) {
    Z[i][0] = 4.0 * e2e_rand(&seed) - 2.0;
    Z[i][1] = 4.0 * e2e_rand(&seed) - 2.0;
    Y[i][0] = (float)(4.0 * e2e_rand(&seed) - 2.0);
    Y[i][1] = (float)(4.0 * e2e_rand(&seed) - 2.0);
    R[i] = 3.0 * e2e_rand(&seed) + 0.1;
    RF[i] = (float)(3.0 * e2e_rand(&seed) + 0.1);
    H[i] = cnp_float_to_half((float)(3.0 * e2e_rand(&seed) + 0.1));
    K[i] = 1 + (int64_t)(e2e_rand(&seed) * 7.0);
  }
  Z[0][0] = INFINITY;      /* (inf, b) / r is (inf, b / r): no NaN */
  Y[1][1] = -INFINITY;
  e2e_put(cmixed_field(p, "z"), "z", Z);
  e2e_put(cmixed_field(p, "y"), "y", Y);
  e2e_put(cmixed_field(p, "r"), "r", R);
  e2e_put(cmixed_field(p, "rf"), "rf", RF);
  e2e_put(cmixed_field(p, "h"), "h", H);
  e2e_put(cmixed_field(p, "k"), "k", K);
  CHECK(cmixed_step(p) == CNP_OK, "step: %s", cmixed_error(p));
  CHECK(cmixed_sync(p) == CNP_OK, "sync: %s", cmixed_error(p));
  const double(*z1)[2] = e2e_get(cmixed_field(p, "z1"), "z1");
  memcpy(Z1, z1, sizeof Z1);
  e2e_release();
  const double(*z2)[2] = e2e_get(cmixed_field(p, "z2"), "z2");
  for (int i = 0; i < NN; i++) {
    CHECK(same64(Z1[i], Z[i][0] / R[i], Z[i][1] / R[i]), "z1[%d] %.17g%+.17gi", i, Z1[i][0], Z1[i][1]);
    CHECK(same64(z2[i], R[i] * Z[i][0] * 0.5, R[i] * Z[i][1] * 0.5), "z2[%d]", i);
  }
  e2e_release();
  const double(*z3)[2] = e2e_get(cmixed_field(p, "z3"), "z3");
  for (int i = 0; i < NN; i++) {
    double kd = (double)K[i];
    CHECK(same64(z3[i], Z[i][0] / kd + (double)Y[i][0] * R[i], Z[i][1] / kd + (double)Y[i][1] * R[i]),
          "z3[%d]", i);
  }
  e2e_release();
  const double(*z4)[2] = e2e_get(cmixed_field(p, "z4"), "z4");
  for (int i = 0; i < NN; i++) CHECK(same64(z4[i], Z[i][0] / 4.0, Z[i][1] / 4.0), "z4[%d]", i);
  e2e_release();
  const float(*y1)[2] = e2e_get(cmixed_field(p, "y1"), "y1");
  for (int i = 0; i < NN; i++) CHECK(same32(y1[i], Y[i][0] / RF[i], Y[i][1] / RF[i]), "y1[%d]", i);
  e2e_release();
  const float(*y2)[2] = e2e_get(cmixed_field(p, "y2"), "y2");
  for (int i = 0; i < NN; i++) CHECK(same32(y2[i], RF[i] * Y[i][0], RF[i] * Y[i][1]), "y2[%d]", i);
  e2e_release();
  const float(*y3)[2] = e2e_get(cmixed_field(p, "y3"), "y3");
  for (int i = 0; i < NN; i++) {
    float hv = cnp_half_to_float(H[i]);
    CHECK(same32(y3[i], Y[i][0] * hv / 2.0f, Y[i][1] * hv / 2.0f), "y3[%d]", i);
  }
  e2e_release();
  const float(*y4)[2] = e2e_get(cmixed_field(p, "y4"), "y4");
  for (int i = 0; i < NN; i++) {
    float kf = (float)K[i];
    CHECK(same32(y4[i], Y[i][0] * kf, Y[i][1] * kf), "y4[%d]", i);
  }
  e2e_release();
  cmixed_teardown(p);
  printf("cmixed ok\n");
  return 0;
}
