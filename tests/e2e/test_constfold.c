/*
** test_constfold.c -- constfold.cnp: every constant equals the same expression computed by
** the map, and both equal the value written here independently in C (f32 / f16 values as
** their exact decimal expansions, i32 results wrapped through uint32_t). Integer casts keep
** the low bits; bool(x) is x != 0.
*/
#include "constfold.h"
#include "e2e.h"

int main(void) {
  constfold *p;
  char err[256];
  constfold_config cfg = CONSTFOLD_CONFIG_INIT;
  cfg.N = 3;
  CHECK(constfold_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  int64_t *ki = constfold_field(p, "ki").data;
  uint64_t *ku = constfold_field(p, "ku").data;
  double *fd = constfold_field(p, "fd").data;
  uint8_t *cb = constfold_field(p, "cb").data;
  const int64_t kin[3] = {INT64_C(4294967301), -1, INT64_C(0x180000000)};
  const uint64_t kun[3] = {UINT64_C(1) << 63, 5, UINT64_MAX};
  const double fin[3] = {-0.0, NAN, 0.25};
  for (int n = 0; n < 3; n++) ki[n] = kin[n], ku[n] = kun[n], fd[n] = fin[n], cb[n] = 0;
  CHECK(constfold_step(p) == 0, "step: %s", constfold_error(p));
  CHECK(constfold_sync(p) == 0, "sync");
  const double *r = constfold_field(p, "r").data;
  const int64_t *q = constfold_field(p, "q").data;
  const double er[7] = {
    (double)0.1f,                       /* f64(f32(0.1)) */
    (double)(0.1f + 0.2f),              /* f32 arithmetic */
    (double)0.1f * 10.0,                /* a typed f32 constant's value */
    0.0999755859375,                    /* f16(0.1) */
    0.0999755859375 + 0.199951171875,   /* f16 values added in f32 (exact) */
    18446744073709551616.0,             /* u64 max as a double */
    18446744073709551616.0,
  };
  const int64_t eq[6] = {
    INT32_MIN, INT32_MIN, INT32_MIN, INT32_MIN,
    (int32_t)(uint32_t)(2000000000u * 3u),
    (int32_t)((uint32_t)~5u - 2147483647u),
  };
  for (int n = 0; n < 3; n++) {
    for (int k = 0; k < 7; k++) {
      double c = r[(2 * k) * 3 + n], m = r[(2 * k + 1) * 3 + n];
      CHECK(c == er[k] && m == er[k], "r pair %d row %d: const %.17g map %.17g expected %.17g", k, n,
            c, m, er[k]);
    }
    for (int k = 0; k < 6; k++) {
      int64_t c = q[(2 * k) * 3 + n], m = q[(2 * k + 1) * 3 + n];
      CHECK(c == eq[k] && m == eq[k], "q pair %d row %d: const %lld map %lld expected %lld", k, n,
            (long long)c, (long long)m, (long long)eq[k]);
    }
  }
  const int64_t *cv = constfold_field(p, "cv").data;
  cb = constfold_field(p, "cb").data;
  const int64_t ecv[6][3] = {
    {5, 5, 5},                                   /* L = i32(2^32 + 5) */
    {5, -1, INT32_MIN},                          /* i32(ki): the low 32 bits */
    {INT64_MIN, 5, -1},                          /* i64(ku): the bit pattern */
    {0, 15, 15},                                 /* u64 of a negative i32 sign-extends */
    {0, 2, 2},                                   /* bool(-0.0) false, bool(NaN) true (cb read before) */
    {INT64_MIN, INT64_MIN, INT64_MIN},           /* an untyped i64 constant wraps */
  };
  for (int c = 0; c < 6; c++)
    for (int n = 0; n < 3; n++)
      CHECK(cv[c * 3 + n] == ecv[c][n], "cv[%d, %d] = %lld, expected %lld", c, n, (long long)cv[c * 3 + n],
            (long long)ecv[c][n]);
  CHECK(cb[0] == 0 && cb[1] == 1 && cb[2] == 1, "bool(fd) = %d %d %d", cb[0], cb[1], cb[2]);
  constfold_teardown(p);
  printf("constfold: ok\n");
  return 0;
}
