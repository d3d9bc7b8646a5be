/*
** test_constfold.c -- constfold.cnp: every constant equals the same expression computed by
** the map, and both equal the value written here independently in C (f32 / f16 values as
** their exact decimal expansions, i32 results wrapped through uint32_t).
*/
#include "constfold.h"
#include "e2e.h"

int main(void) {
  constfold *p;
  char err[256];
  constfold_config cfg = CONSTFOLD_CONFIG_INIT;
  cfg.N = 3;
  CHECK(constfold_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
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
  constfold_teardown(p);
  printf("constfold: ok\n");
  return 0;
}
