/*
** test_misc.c -- misc.cnp against a plain C reference, two steps with different per-step params.
*/
#include "misc.h"
#include "e2e.h"
#include <stdbool.h>
#define NN 2000
#define NC 10
int main(void) {
  uint64_t seed = 17;
  misc *p; char err[256];
  misc_config cfg = MISC_CONFIG_INIT; cfg.N = NN; cfg.nc = NC;
  CHECK(misc_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
#define F(name, T) ((T *)misc_field(p, name).data)
  static double x[NN], v[NN], j[3][NC]; static int64_t cell[NN], m[NN], big[NC]; static bool alive[NN];
  static int32_t ib[NN]; static uint64_t u[NN], cnt[NC]; static float fs[NC];
  for (int i = 0; i < NN; i++) { x[i] = F("x", double)[i] = e2e_rand(&seed); v[i] = F("v", double)[i] = e2e_rand(&seed) * 2 - 1; }
  for (int s = 0; s < 2; s++) {
    int64_t off = s ? -13 : 4;
    CHECK(misc_step(p, off) == 0, "step: %s", misc_error(p));
    misc_sync(p);
    for (int i = 0; i < NN; i++) {
      cell[i] = (int64_t)(x[i] * NC); alive[i] = x[i] > 0.25 || v[i] < 0.0;
      ib[i] = (int32_t)alive[i] + (int32_t)(!alive[i]) * 10;
      m[i] = ((int64_t)i - 50 + off) % 7; u[i] = (uint64_t)i * 0xFFFFFFFFFFFFull;
      if (alive[i]) { j[1][cell[i]] += v[i]; if (v[i] > 0.0) cnt[cell[i]] += 1; else fs[cell[i]] += (float)v[i]; }
      else { big[cell[i]] += m[i]; j[2][cell[i]] += v[i] > 0.5 ? 1.0 : 2.0; }
    }
    cnp_array fj = misc_field(p, "j");
    for (int i = 0; i < NN; i++) {
      CHECK(F("alive", bool)[i] == alive[i], "alive");
      CHECK(F("ib", int32_t)[i] == ib[i], "ib[%d] %d vs %d", i, F("ib", int32_t)[i], ib[i]);
      CHECK(F("m", int64_t)[i] == m[i], "m[%d]", i);
      CHECK(F("u", uint64_t)[i] == u[i], "u[%d]", i);
      CHECK(F("neg", double)[i] == -v[i], "neg");
    }
    for (int c = 0; c < NC; c++) {
      for (int k = 0; k < 3; k++) CHECK(e2e_close(*e2e_at(fj.data, fj.strides, k, c), j[k][c], 1e-12), "j[%d,%d] %g vs %g", k, c, *e2e_at(fj.data, fj.strides, k, c), j[k][c]);
      CHECK(F("cnt", uint64_t)[c] == cnt[c], "cnt");
      CHECK(e2e_close(F("fs", float)[c], fs[c], 1e-4), "fs[%d] %g vs %g", c, F("fs", float)[c], fs[c]);
      CHECK(F("big", int64_t)[c] == big[c], "big[%d]", c);
    }
  }
  misc_teardown(p);
  printf("misc ok\n");
  return 0;
}
