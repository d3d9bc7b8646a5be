/*
** test_intsem.c -- intsem.cnp against the documented integer semantics, written here
** independently in C through the unsigned types: wrapping + - * and unary -, x / 0 = x % 0
** = 0, INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0. The operands pair every edge value
** (0, +-1, +-2, INT_MIN, INT_MAX, ...) with every other, then random values.
** With E2E_BACKEND=cuda (the CUDA unit only) the pipeline runs on the GPU, fields copied in
** and out; without a usable device the test exits 77 (skipped), or fails under
** CNP_REQUIRE_CUDA=1.
*/
#include "intsem.h"
#include "e2e.h"
#include "e2e_backend.h"
#define NE 12
#define NN (NE * NE + 200)
static int32_t w32(uint32_t v) { return (int32_t)v; }
static int64_t w64(uint64_t v) { return (int64_t)v; }
static int32_t div32(int32_t a, int32_t b) {
  if (b == 0) return 0;
  if (b == -1) return w32(0u - (uint32_t)a);
  return a / b;
}
static int32_t mod32(int32_t a, int32_t b) { return b == 0 || b == -1 ? 0 : a % b; }
static int64_t div64(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return w64(0u - (uint64_t)a);
  return a / b;
}
static int64_t mod64(int64_t a, int64_t b) { return b == 0 || b == -1 ? 0 : a % b; }
/* Copies host data into field `name` / field `name` into host memory `data`. */
static void put(intsem *p, const char *name, const void *data)
{
  e2e_put(intsem_field(p, name), name, data);
}
static void get(intsem *p, const char *name, void *data)
{
  e2e_get_into(intsem_field(p, name), name, data);
}

static int32_t a[NN], b[NN], acc32[NN], a0[NN], s32[6 * NN], lit[NN];
static int64_t x[NN], y[NN], acc64[NN], x0[NN], s64[6 * NN], mix[NN];

int main(void) {
  static const int32_t e32[NE] = {0, 1, -1, 2, -2, 7, -7, 65536, INT32_MAX, INT32_MIN,
                                  INT32_MAX - 1, INT32_MIN + 1};
  static const int64_t e64[NE] = {0, 1, -1, 2, -2, 7, -7, INT64_C(4294967296), INT64_MAX,
                                  INT64_MIN, INT64_MAX - 1, INT64_MIN + 1};
  uint64_t seed = 7;
  intsem *p;
  char err[256];
  intsem_config cfg = INTSEM_CONFIG_INIT;
  int skip = e2e_choose_backend("intsem", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = NN;
  CHECK(intsem_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  for (int i = 0; i < NN; i++) {
    if (i < NE * NE) {
      a[i] = e32[i / NE], b[i] = e32[i % NE];
      x[i] = e64[i / NE], y[i] = e64[i % NE];
    } else {
      a[i] = w32((uint32_t)(e2e_rand(&seed) * 4294967296.0));
      b[i] = i % 5 == 0 ? 0 : w32((uint32_t)(e2e_rand(&seed) * 65536.0)) - 32768;
      x[i] = w64((uint64_t)(e2e_rand(&seed) * 4294967296.0) << 32 | (uint64_t)(e2e_rand(&seed) * 4294967296.0));
      y[i] = i % 7 == 0 ? -1 : w64((uint64_t)(e2e_rand(&seed) * 4294967296.0) << 32);
    }
    acc32[i] = INT32_MAX - i;
    acc64[i] = INT64_MIN + i;
    a0[i] = acc32[i];
    x0[i] = acc64[i];
  }
  put(p, "a", a);
  put(p, "b", b);
  put(p, "x", x);
  put(p, "y", y);
  put(p, "acc32", acc32);
  put(p, "acc64", acc64);
  CHECK(intsem_step(p) == 0, "step: %s", intsem_error(p));
  CHECK(intsem_sync(p) == 0, "sync: %s", intsem_error(p));
  get(p, "s32", s32);
  get(p, "s64", s64);
  get(p, "acc32", acc32);
  get(p, "acc64", acc64);
  get(p, "mix", mix);
  get(p, "lit", lit);
  int checked = 0;
  for (int i = 0; i < NN; i++) {
    uint32_t ua = (uint32_t)a[i], ub = (uint32_t)b[i];
    uint64_t ux = (uint64_t)x[i], uy = (uint64_t)y[i];
    int32_t r32[6] = {w32(ua + ub), w32(ua - ub), w32(ua * ub), w32(0u - ua), div32(a[i], b[i]),
                      mod32(a[i], b[i])};
    int64_t r64[6] = {w64(ux + uy), w64(ux - uy), w64(ux * uy), w64(0u - ux), div64(x[i], y[i]),
                      mod64(x[i], y[i])};
    for (int c = 0; c < 6; c++) {
      CHECK(s32[c * NN + i] == r32[c], "s32[%d, %d]: %d %c %d = %d, want %d", c, i, a[i],
            "+-*-/%"[c], b[i], s32[c * NN + i], r32[c]);
      CHECK(s64[c * NN + i] == r64[c], "s64[%d, %d]: %lld %c %lld = %lld, want %lld", c, i,
            (long long)x[i], "+-*-/%"[c], (long long)y[i], (long long)s64[c * NN + i],
            (long long)r64[c]);
      checked += 2;
    }
    CHECK(acc32[i] == w32((uint32_t)a0[i] + ua + ub), "acc32[%d]", i);
    CHECK(acc64[i] == w64((uint64_t)x0[i] + ux * 3u), "acc64[%d]", i);
    CHECK(mix[i] == w64((uint64_t)(int64_t)a[i] * uy - 1u), "mix[%d]", i);
    CHECK(lit[i] == w32(0u - ua + 3u + 3u + ua * (0u - 2u)), "lit[%d]", i);
    checked += 4;
  }
  /* the documented edge cases, spelled out */
  int imin = 9 * NE, mone = 2;   /* e32[9] = INT32_MIN, e32[2] = -1 */
  CHECK(s32[4 * NN + imin + mone] == INT32_MIN && s32[5 * NN + imin + mone] == 0, "INT32_MIN / -1");
  CHECK(s64[4 * NN + imin + mone] == INT64_MIN && s64[5 * NN + imin + mone] == 0, "INT64_MIN / -1");
  CHECK(s32[4 * NN + 5 * NE] == 0 && s32[5 * NN + 5 * NE] == 0, "7 / 0, 7 %% 0");
  CHECK(s32[0 * NN + 8 * NE + 1] == INT32_MIN, "INT32_MAX + 1");
  CHECK(s64[3 * NN + 9 * NE] == INT64_MIN, "-INT64_MIN");
  intsem_teardown(p);
  printf("intsem ok (%s): %d values\n", e2e_cuda ? "cuda" : "host", checked);
  return 0;
}
