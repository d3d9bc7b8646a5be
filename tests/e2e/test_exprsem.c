/*
** test_exprsem.c -- exprsem.cnp against the documented expression semantics, written here
** independently in plain C: u64 x / 0 = x % 0 = 0, the bit operators (a shift by a count
** outside [0, bits) gives 0, or -1 for >> of a negative value; << wraps), float -> integer
** casts saturating with NaN -> 0, and the math builtins against libm. Integer results and
** casts are compared exactly; libm results exactly on the host and within a few ulps on a
** GPU. With E2E_BACKEND=cuda (the CUDA unit only) the pipeline runs on the GPU.
*/
#include "exprsem.h"
#include "e2e.h"
#include "e2e_backend.h"
#define NE 12
#define NF 27
#define NN (NE * NE + 100)

static uint64_t ua[NN], ub[NN], us[7 * NN], bu[6 * NN], cu[3 * NN], gu[3 * NN];
static int32_t a[NN], b[NN], s32[8 * NN], ci[3 * NN], gi[3 * NN], ab32[NN];
static int64_t x[NN], y[NN], s64[8 * NN], cd[3 * NN], gf[3 * NN], hh[2 * NN], ab64[NN];
static double fd[NN], md[7 * NN];
static float ff[NN], mf[7 * NN];
static uint16_t fh[NN];
static uint8_t bb[4 * NN];

static uint64_t udiv(uint64_t p, uint64_t q) { return q ? p / q : 0; }
static uint64_t umod(uint64_t p, uint64_t q) { return q ? p % q : 0; }
static int32_t shl32(int32_t v, int32_t c) { return c >= 0 && c < 32 ? (int32_t)((uint32_t)v << c) : 0; }
static int32_t shr32(int32_t v, int32_t c)
{
  if (c < 0 || c >= 32) return v < 0 ? -1 : 0;
  int32_t r = (int32_t)((uint32_t)v >> c);          /* logical, then the sign bits */
  if (v < 0 && c > 0) r = (int32_t)((uint32_t)r | ~(UINT32_MAX >> c));
  return r;
}
static int64_t shl64(int64_t v, int64_t c) { return c >= 0 && c < 64 ? (int64_t)((uint64_t)v << c) : 0; }
static int64_t shr64(int64_t v, int64_t c)
{
  if (c < 0 || c >= 64) return v < 0 ? -1 : 0;
  int64_t r = (int64_t)((uint64_t)v >> c);
  if (v < 0 && c > 0) r = (int64_t)((uint64_t)r | ~(UINT64_MAX >> c));
  return r;
}
static uint64_t shlu(uint64_t v, uint64_t c) { return c < 64 ? v << c : 0; }
static uint64_t shru(uint64_t v, uint64_t c) { return c < 64 ? v >> c : 0; }
/* saturating conversions, NaN -> 0, in long double where the bounds are exact */
static int64_t sat64(double v)
{
  if (isnan(v)) return 0;
  if (v >= 9223372036854775807.0L) return INT64_MAX;   /* 2^63 - 1 rounds to 2^63 in double */
  if (v <= -9223372036854775808.0L) return INT64_MIN;
  return (int64_t)trunc(v);
}
static int32_t sat32(double v)
{
  if (isnan(v)) return 0;
  if (v >= 2147483647.0) return INT32_MAX;
  if (v <= -2147483648.0) return INT32_MIN;
  return (int32_t)trunc(v);
}
static uint64_t satu(double v)
{
  if (isnan(v) || v <= 0.0) return 0;
  if (v >= 18446744073709551615.0L) return UINT64_MAX;
  return (uint64_t)trunc(v);
}
/* f16 bits -> float (normal, subnormal, inf, NaN) */
static float h2f(uint16_t h)
{
  int e = (h >> 10) & 31, m = h & 1023;
  float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 1024), e - 25);
  return h & 0x8000 ? -v : v;
}
static int same_or_close(double g, double w, double tol)
{
  if (isnan(w)) return isnan(g);
  if (isinf(w) || !e2e_cuda) return g == w || (w == 0.0 && g == 0.0);
  return e2e_close(g, w, tol);
}

static void put(exprsem *p, const char *name, const void *data) { e2e_put(exprsem_field(p, name), name, data); }
static void get(exprsem *p, const char *name, void *data) { e2e_get_into(exprsem_field(p, name), name, data); }

int main(void)
{
  static const uint64_t eu[NE] = {0, 1, 2, 3, 7, 63, 64, 65, UINT64_C(1) << 63, UINT64_MAX, UINT64_MAX - 1,
                                  UINT64_C(1) << 32};
  static const int32_t e32[NE] = {0, 1, -1, 2, -2, 31, 32, 33, -32, INT32_MAX, INT32_MIN, 100};
  static const int64_t e64[NE] = {0, 1, -1, 63, 64, 65, -64, INT64_MAX, INT64_MIN, 5, -7, INT64_C(1) << 40};
  const double F[NF] = {NAN, INFINITY, -INFINITY, 1e300, -1e300, 9223372036854775808.0,
                        9223372036854774784.0, -9223372036854775808.0, -9223372036854777856.0, -0.0,
                        0.5, -0.5, 2147483647.5, 2147483648.0, -2147483648.5, -2147483649.0,
                        18446744073709551616.0, 18446744073709549568.0, -1.0, -0.99, 2.5, -2.5,
                        1.5, 3.0e9, -7.25, 1e-300, 1234.5678};
  static const uint16_t H[9] = {0x7e00, 0x7c00, 0xfc00, 0x7bff, 0xfbff, 0x8000, 0x3c00, 0xc100, 0x3800};
  uint64_t seed = 11;
  exprsem *p;
  char err[256];
  exprsem_config cfg = EXPRSEM_CONFIG_INIT;
  int skip = e2e_choose_backend("exprsem", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = NN;
  CHECK(exprsem_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  for (int i = 0; i < NN; i++) {
    if (i < NE * NE) {
      ua[i] = eu[i / NE], ub[i] = eu[i % NE];
      a[i] = e32[i / NE], b[i] = e32[i % NE];
      x[i] = e64[i / NE], y[i] = e64[i % NE];
    } else {
      ua[i] = (uint64_t)(e2e_rand(&seed) * 4294967296.0) << 32 | (uint64_t)(e2e_rand(&seed) * 4294967296.0);
      ub[i] = i % 3 == 0 ? 0 : (uint64_t)(e2e_rand(&seed) * 70.0);
      a[i] = (int32_t)(uint32_t)(e2e_rand(&seed) * 4294967296.0);
      b[i] = (int32_t)(e2e_rand(&seed) * 80.0) - 20;
      x[i] = (int64_t)((uint64_t)(e2e_rand(&seed) * 4294967296.0) << 32);
      y[i] = (int64_t)(e2e_rand(&seed) * 140.0) - 40;
    }
    fd[i] = i < NF ? F[i] : (e2e_rand(&seed) - 0.5) * 1e4;
    ff[i] = (float)fd[i];
    fh[i] = H[i % 9];
  }
  const char *in[] = {"ua", "ub", "a", "b", "x", "y", "fd", "ff", "fh"};
  const void *inp[] = {ua, ub, a, b, x, y, fd, ff, fh};
  for (int k = 0; k < 9; k++) put(p, in[k], inp[k]);
  CHECK(exprsem_step(p, 0) == 0, "step: %s", exprsem_error(p));   /* dz = 0 */
  CHECK(exprsem_sync(p) == 0, "sync: %s", exprsem_error(p));
  const char *out[] = {"us", "bu", "cu", "gu", "s32", "ci", "gi", "s64", "cd", "gf", "hh", "md", "mf", "bb",
                       "ab32", "ab64"};
  void *outp[] = {us, bu, cu, gu, s32, ci, gi, s64, cd, gf, hh, md, mf, bb, ab32, ab64};
  for (int k = 0; k < 16; k++) get(p, out[k], outp[k]);
  const uint64_t BIG = UINT64_MAX, Q3 = BIG / 3, R7 = BIG % 7;
  const int64_t M = (INT64_C(1) << 40) | 5;
  int checked = 0;
  for (int i = 0; i < NN; i++) {
    uint64_t wu[7] = {udiv(ua[i], ub[i]), umod(ua[i], ub[i]), 0, 0, udiv(ua[i], Q3) + umod(ua[i], BIG / 5),
                      Q3 + R7 + (uint64_t)M + 4u, udiv((uint64_t)INT64_MIN + 1u, ub[i])};
    for (int c = 0; c < 7; c++, checked++)
      CHECK(us[c * NN + i] == wu[c], "us[%d, %d]: %llu, %llu -> %llu, want %llu", c, i,
            (unsigned long long)ua[i], (unsigned long long)ub[i], (unsigned long long)us[c * NN + i],
            (unsigned long long)wu[c]);
    uint64_t wb[6] = {ua[i] & ub[i], ua[i] | ub[i], ua[i] ^ ub[i], ~ua[i], shlu(ua[i], ub[i]), shru(ua[i], ub[i])};
    for (int c = 0; c < 6; c++, checked++)
      CHECK(bu[c * NN + i] == wb[c], "bu[%d, %d]: %llu, %llu -> %llu, want %llu", c, i,
            (unsigned long long)ua[i], (unsigned long long)ub[i], (unsigned long long)bu[c * NN + i],
            (unsigned long long)wb[c]);
    int32_t A = a[i], B = b[i];
    int32_t w32[8] = {A & B, A | B, A ^ B, ~A, shl32(A, B), shr32(A, B),
                      (shr32(shl32(A, 3), 1) & 255) | 1,
                      (A ^ (B & ~A)) | shl32((int32_t)((uint32_t)A + (uint32_t)B), 2)};
    for (int c = 0; c < 8; c++, checked++)
      CHECK(s32[c * NN + i] == w32[c], "s32[%d, %d]: %d, %d -> %d, want %d", c, i, A, B, s32[c * NN + i], w32[c]);
    int64_t X = x[i], Y = y[i];
    int64_t w64[8] = {X & Y, X | Y, X ^ Y, ~X, shl64(X, Y), shr64(X, Y), shl64(X, B), shr64(A, Y)};
    for (int c = 0; c < 8; c++, checked++)
      CHECK(s64[c * NN + i] == w64[c], "s64[%d, %d]: %lld, %lld -> %lld, want %lld", c, i, (long long)X,
            (long long)Y, (long long)s64[c * NN + i], (long long)w64[c]);
    double D = fd[i], Ff = ff[i], Hf = h2f(fh[i]);
    int64_t wcd[3] = {sat64(D), sat64(Ff), sat64(Hf)};
    int32_t wci[3] = {sat32(D), sat32(Ff), sat32(Hf * 2.0)};
    uint64_t wcu[3] = {satu(D), satu(Ff), satu(D * 2.0)};
    for (int c = 0; c < 3; c++, checked += 3) {
      CHECK(cd[c * NN + i] == wcd[c], "i64 cast [%d, %d] of %.17g: %lld, want %lld", c, i, c ? (c == 1 ? Ff : Hf) : D,
            (long long)cd[c * NN + i], (long long)wcd[c]);
      CHECK(ci[c * NN + i] == wci[c], "i32 cast [%d, %d] of %.17g: %d, want %d", c, i, c ? (c == 1 ? Ff : Hf) : D,
            ci[c * NN + i], wci[c]);
      CHECK(cu[c * NN + i] == wcu[c], "u64 cast [%d, %d] of %.17g: %llu, want %llu", c, i, c == 1 ? Ff : D,
            (unsigned long long)cu[c * NN + i], (unsigned long long)wcu[c]);
    }
    CHECK(gf[i] == INT64_MAX && gf[NN + i] == INT64_MIN && gf[2 * NN + i] == INT64_MIN, "i64 of +-1e300");
    CHECK(gi[i] == INT32_MAX && gi[NN + i] == INT32_MIN && gi[2 * NN + i] == -2, "i32 of +-3e9, -2.5");
    CHECK(gu[i] == 0 && gu[NN + i] == UINT64_MAX && gu[2 * NN + i] == 2, "u64 of -5, 1e20, 2.5");
    CHECK(hh[i] == M && hh[NN + i] == -4, "constants (1 << 40) | 5, -16 >> 2");
    CHECK(ab32[i] == (A < 0 ? (int32_t)(0u - (uint32_t)A) : A) && ab64[i] == (X < 0 ? (int64_t)(0u - (uint64_t)X) : X),
          "abs(%d) = %d, abs(%lld) = %lld", A, ab32[i], (long long)X, (long long)ab64[i]);
    double wd[7] = {atan2(D, 2.0), tanh(D), sinh(D * 0.001), cosh(D * 0.001), erf(D), round(D), trunc(D)};
    float wf[7] = {atan2f(ff[i], 2.0f), tanhf(ff[i]), sinhf(ff[i] * 0.001f), coshf(ff[i] * 0.001f), erff(ff[i]),
                   roundf(ff[i]), truncf(ff[i]) + (float)round((double)A)};
    for (int c = 0; c < 7; c++, checked += 2) {
      double tol = c >= 5 ? 0.0 : 1e-14;
      CHECK(same_or_close(md[c * NN + i], wd[c], tol), "md[%d, %d] of %.17g: %.17g, want %.17g", c, i, D,
            md[c * NN + i], wd[c]);
      CHECK(same_or_close(mf[c * NN + i], wf[c], c >= 5 ? 0.0 : 1e-6), "mf[%d, %d] of %.9g: %.9g, want %.9g", c,
            i, Ff, mf[c * NN + i], wf[c]);
    }
    uint8_t wbb[4] = {(uint8_t)(isnan(D) != 0), (uint8_t)(isfinite(D) != 0),
                      (uint8_t)(isnan(Ff) || isnan(Hf)), (uint8_t)(isfinite(Ff) != 0)};
    for (int c = 0; c < 4; c++, checked++)
      CHECK(bb[c * NN + i] == wbb[c], "bb[%d, %d] of %g: %d, want %d", c, i, D, bb[c * NN + i], wbb[c]);
  }
  /* the documented edge cases, spelled out */
  CHECK(cd[0] == 0 && cd[1] == INT64_MAX && cd[2] == INT64_MIN && cd[5] == INT64_MAX && cd[7] == INT64_MIN &&
            cd[9] == 0 && ci[12] == INT32_MAX && ci[14] == INT32_MIN && cu[16] == UINT64_MAX && cu[19] == 0,
        "NaN, +-inf, 2^63, -2^63, -0.0, INT32 ends, 2^64, -0.99");
  CHECK(cd[6] == INT64_C(9223372036854774784) && cd[8] == INT64_MIN, "just below 2^63, beyond -2^63");
  CHECK(md[5 * NN + 20] == 3.0 && md[5 * NN + 21] == -3.0 && md[5 * NN + 10] == 1.0 && md[5 * NN + 11] == -1.0,
        "round half away from zero (round(-0.5) is -1)");
  CHECK(md[5 * NN + 9] == 0.0 && signbit(md[5 * NN + 9]), "round(-0.0) is -0");
  CHECK(ab32[10 * NE] == INT32_MIN && ab64[8 * NE] == INT64_MIN, "abs(INT_MIN) wraps");
  CHECK(us[9 * NE + 0] == 0 && us[NN + 9 * NE + 0] == 0, "UINT64_MAX / 0, %% 0");
  CHECK(bu[4 * NN + 9 * NE + 6] == 0 && s32[5 * NN + 10 * NE + 6] == -1 && s64[5 * NN + 8 * NE + 4] == -1,
        "u << 64, INT32_MIN >> 32, INT64_MIN >> 64");
  exprsem_teardown(p);
  printf("exprsem ok (%s): %d values\n", e2e_cuda ? "cuda" : "host", checked);
  return 0;
}
