/*
** test_sabuf.c -- sabuf.cnp against a plain C reference that deposits in the documented order
** (each block's copy of a field, filled with -0, the rows added in row order, the copies added
** in block order after the loop: docs/codegen.md, "Gathers, scatter-adds"): the positions, the
** i32 casts and the deposited fields bit for bit, with 1 and 3 OpenMP threads alike
** (e2e.sabuf.t1, .t3). The first kernel's scatter-adds are buffered ("Buffered scatter-adds"),
** the second's (under an if) are not. N is not a multiple of 8 or 512; some positions are
** NaN, huge, infinite or far outside [0, L), for the saturating casts (NaN -> 0, the range's
** ends) that the vectorized loop writes as conditional expressions.
*/
#include "sabuf.h"
#include "e2e.h"
#include "e2e_backend.h"   /* e2e_put, e2e_fetch (the host backend here) */
#define NN 21003
#define NC 37
#define STEPS 3
#define RCH 4096

static double x[NN], v[NN], gx[NN]; static float q[NN]; static int32_t c32[NN], gc32[NN];
static double dep[NC + 1], gdep[NC + 1], pos[NC], gpos[NC]; static float dq[NC], gdq[NC];
static const double L = 3.5;

/* i64(u) as the language defines it: NaN 0, beyond the range the nearest end */
static int64_t to_i64(double u) {
  if (u != u) return 0;
  if (u >= 9223372036854775808.0) return INT64_MAX;
  if (u < -9223372036854775808.0) return INT64_MIN;
  return (int64_t)u;
}
static int32_t to_i32(double u) {
  if (u != u) return 0;
  if (u >= 2147483648.0) return INT32_MAX;
  if (u <= -2147483649.0) return INT32_MIN;
  return (int32_t)u;
}
static int64_t cell(double u) {
  int64_t j = to_i64(u);
  j = j > 0 ? j : 0;
  return j < NC - 1 ? j : NC - 1;
}
static int same(double a, double b) { return (a != a && b != b) || (a == b && signbit(a) == signbit(b)); }
/* chunks of 4096 rows per block: at least 16 rows per element of the targets (priv_chunks) */
static int64_t chunks_per_block(int64_t elems) { return (16 * elems + RCH - 1) / RCH; }

int main(void) {
  uint64_t seed = 11;
  sabuf *p; char err[256];
  sabuf_config cfg = SABUF_CONFIG_INIT;
  cfg.N = NN; cfg.n_cells = NC; cfg.L = L;
  CHECK(sabuf_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  for (int i = 0; i < NN; i++) {
    x[i] = e2e_rand(&seed) * L;
    v[i] = (e2e_rand(&seed) * 2 - 1) * 3.0;
    q[i] = (float)(e2e_rand(&seed) * 3 - 1);
  }
  x[5] = NAN; x[77] = 1e300; x[600] = -1e300; x[1000] = INFINITY; x[1001] = -INFINITY;
  x[2000] = -40.25; x[3000] = 1e20; v[3000] = 0.0;
  e2e_put(sabuf_field(p, "x"), "x", x);
  e2e_put(sabuf_field(p, "v"), "v", v);
  e2e_put(sabuf_field(p, "q"), "q", q);
  const int64_t nch = (NN + RCH - 1) / RCH;
  static double pdep[NN / RCH + 2][NC + 1], ppos[NN / RCH + 2][NC]; static float pdq[NN / RCH + 2][NC];
  for (int s = 0; s < STEPS; s++) {
    double dt = 0.25 * (s + 1);
    CHECK(sabuf_step(p, dt) == 0, "step: %s", sabuf_error(p));
    CHECK(sabuf_sync(p) == 0, "sync");
    /* kernel 1: targets dep (NC + 1) and dq (NC): one block size from both */
    int64_t pc = chunks_per_block(2 * NC + 1), nb = (nch + pc - 1) / pc;
    for (int64_t b = 0; b < nb; b++) {
      for (int j = 0; j <= NC; j++) pdep[b][j] = -0.0;
      for (int j = 0; j < NC; j++) pdq[b][j] = -0.0f;
    }
    for (int64_t i = 0; i < NN; i++) {
      double xa = x[i] + dt * v[i];
      if (xa < 0.0 || xa >= L) {
        xa = xa - L * floor(xa / L);
        xa = xa >= L ? 0.0 : xa;
      }
      x[i] = xa;
      double u = xa * ((double)NC / L);
      int64_t j = cell(u);
      double f = u - (double)j;
      c32[i] = to_i32(u * 1e8);
      int64_t b = (i / RCH) / pc;
      pdep[b][j] += 1.0 - f;
      pdep[b][j + 1] += f;
      pdq[b][j] += q[i];
    }
    for (int j = 0; j <= NC; j++)
      for (int64_t b = 0; b < nb; b++) dep[j] += pdep[b][j];
    for (int j = 0; j < NC; j++)
      for (int64_t b = 0; b < nb; b++) dq[j] += pdq[b][j];
    /* kernel 2: the conditional deposit into pos */
    pc = chunks_per_block(NC), nb = (nch + pc - 1) / pc;
    for (int64_t b = 0; b < nb; b++)
      for (int j = 0; j < NC; j++) ppos[b][j] = -0.0;
    for (int64_t i = 0; i < NN; i++)
      if (v[i] > 0.0) ppos[(i / RCH) / pc][cell(x[i] * ((double)NC / L))] += v[i];
    for (int j = 0; j < NC; j++)
      for (int64_t b = 0; b < nb; b++) pos[j] += ppos[b][j];
    /* compare, bit for bit (NaN positions compared as NaN) */
    e2e_fetch(sabuf_field(p, "x"), "x", gx);
    e2e_fetch(sabuf_field(p, "c32"), "c32", gc32);
    for (int i = 0; i < NN; i++) {
      CHECK(same(gx[i], x[i]), "step %d: x[%d] %.17g vs %.17g", s, i, gx[i], x[i]);
      CHECK(gc32[i] == c32[i], "step %d: c32[%d] %d vs %d", s, i, gc32[i], c32[i]);
    }
    e2e_fetch(sabuf_field(p, "dep"), "dep", gdep);
    e2e_fetch(sabuf_field(p, "dq"), "dq", gdq);
    e2e_fetch(sabuf_field(p, "pos"), "pos", gpos);
    /* the NaN and infinite positions make dep[0] NaN (compared as NaN); the rest exactly,
    ** -0 from +0 told apart */
    for (int j = 0; j <= NC; j++)
      CHECK(same(gdep[j], dep[j]), "step %d: dep[%d] %.17g vs %.17g", s, j, gdep[j], dep[j]);
    for (int j = 0; j < NC; j++) {
      CHECK(same(gdq[j], dq[j]), "step %d: dq[%d] %.9g vs %.9g", s, j, (double)gdq[j], (double)dq[j]);
      CHECK(same(gpos[j], pos[j]), "step %d: pos[%d] %.17g vs %.17g", s, j, gpos[j], pos[j]);
    }
  }
  printf("sabuf ok\n");
  sabuf_teardown(p);
  return 0;
}
