/*
** test_pic32.c -- pic32.cnp against a plain C version: stable compaction, stable sort by
** cell, offsets, per-cell sums of w and of v[3, N] (f32), the snapshot of j read back; 40
** steps with removals of nothing, some rows and everything, steps at extent 0, and a
** restart at extent 1 through pic32_set_extent.
*/
#include "e2e.h"
#include "pic32.h"

enum { CAP = 500, NC = 16 };
static float rx[CAP], rv[3][CAP], rw[CAP], rrho[NC], rj[3][NC];
static int32_t rcell[CAP];
static int64_t roff[NC + 1];
static int64_t rn;

static void ref_step(float dt, float lo) {
  int64_t n = 0;
  for (int64_t i = 0; i < rn; i++) {
    float x = rx[i] + dt * rv[0][i];
    int alive = x >= lo && x < 1.0f;
    int32_t c = (int32_t)(x * (float)NC);
    if (!alive) continue;
    rx[n] = x; rw[n] = rw[i]; rcell[n] = c;
    for (int k = 0; k < 3; k++) rv[k][n] = rv[k][i];
    n++;
  }
  rn = n;
  for (int64_t a = 1; a < rn; a++)   /* stable insertion sort by cell */
    for (int64_t b = a; b > 0 && rcell[b - 1] > rcell[b]; b--) {
#define SW(T, A) do { T t_ = A[b]; A[b] = A[b - 1]; A[b - 1] = t_; } while (0)
      SW(float, rx); SW(float, rw); SW(int32_t, rcell);
      for (int k = 0; k < 3; k++) SW(float, rv[k]);
#undef SW
    }
  for (int c = 0; c <= NC; c++) roff[c] = 0;
  for (int64_t i = 0; i < rn; i++) roff[rcell[i] + 1]++;
  for (int c = 0; c < NC; c++) roff[c + 1] += roff[c];
  for (int c = 0; c < NC; c++) {
    rrho[c] = 0;
    for (int k = 0; k < 3; k++) rj[k][c] = 0;
  }
  for (int64_t i = 0; i < rn; i++) {
    rrho[rcell[i]] += rw[i];
    for (int k = 0; k < 3; k++) rj[k][rcell[i]] += rv[k][i];
  }
}

static void load(pic32 *p, int64_t n, uint64_t *seed) {
  CHECK(pic32_set_extent(p, "N", n) == 0, "set_extent %lld", (long long)n);
  cnp_array xa = pic32_field(p, "x"), va = pic32_field(p, "v"), wa = pic32_field(p, "w");
  CHECK(xa.shape[0] == n && va.shape[1] == n, "views of %lld rows", (long long)n);
  for (int64_t i = 0; i < n; i++) {
    rx[i] = ((float *)xa.data)[i] = (float)e2e_rand(seed);
    rw[i] = ((float *)wa.data)[i] = (float)e2e_rand(seed) + 0.5f;
    for (int k = 0; k < 3; k++)
      rv[k][i] = *(float *)((char *)va.data + k * va.strides[0] + i * va.strides[1]) =
          (float)(e2e_rand(seed) - 0.5) * 0.05f;
  }
  rn = n;
}

static void compare(pic32 *p, int s) {
  CHECK(pic32_sync(p) == 0, "sync");
  CHECK(pic32_extent(p, "N") == rn, "step %d: N %lld vs %lld", s, (long long)pic32_extent(p, "N"), (long long)rn);
  cnp_array xa = pic32_field(p, "x"), va = pic32_field(p, "v"), wa = pic32_field(p, "w");
  cnp_array ca = pic32_field(p, "cell");
  CHECK(xa.shape[0] == rn && va.shape[1] == rn && ca.shape[0] == rn, "step %d: live views", s);
  for (int64_t i = 0; i < rn; i++) {
    CHECK(((float *)xa.data)[i] == rx[i], "step %d x[%lld] %.9g vs %.9g", s, (long long)i, ((float *)xa.data)[i], rx[i]);
    CHECK(((float *)wa.data)[i] == rw[i], "step %d w[%lld]", s, (long long)i);
    CHECK(((int32_t *)ca.data)[i] == rcell[i], "step %d cell[%lld]", s, (long long)i);
    for (int k = 0; k < 3; k++)
      CHECK(*(float *)((char *)va.data + k * va.strides[0] + i * va.strides[1]) == rv[k][i],
            "step %d v[%d, %lld]", s, k, (long long)i);
  }
  const int64_t *off = (const int64_t *)pic32_field(p, "off").data;
  const float *rho = (const float *)pic32_field(p, "rho").data;
  cnp_array ja = pic32_field(p, "j");
  for (int c = 0; c <= NC; c++) CHECK(off[c] == roff[c], "step %d off[%d] %lld vs %lld", s, c, (long long)off[c], (long long)roff[c]);
  for (int c = 0; c < NC; c++) {
    CHECK(e2e_close(rho[c], rrho[c], 1e-5), "step %d rho[%d] %g vs %g", s, c, rho[c], rrho[c]);
    for (int k = 0; k < 3; k++)
      CHECK(e2e_close(*(float *)((char *)ja.data + k * ja.strides[0] + c * ja.strides[1]), rj[k][c], 1e-5),
            "step %d j[%d, %d]", s, k, c);
  }
  cnp_array sv;
  CHECK(pic32_snapshot(p, "snap", &sv) == 0, "step %d snapshot", s);
  CHECK(sv.ndim == 2 && sv.shape[0] == 3 && sv.shape[1] == NC, "snapshot shape");
  for (int k = 0; k < 3; k++)
    for (int c = 0; c < NC; c++)
      CHECK(e2e_close(*(float *)((char *)sv.data + k * sv.strides[0] + c * sv.strides[1]), rj[k][c], 1e-5),
            "step %d snapshot j[%d, %d]", s, k, c);
}

int main(void) {
  pic32 *p; char err[256];
  pic32_config cfg = PIC32_CONFIG_INIT; cfg.N = CAP; cfg.n_cells = NC;
  CHECK(pic32_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  uint64_t seed = 5;
  load(p, CAP, &seed);
  int s = 0;
  for (; s < 40; s++) {
    /* lo: -1 removes nothing that stays below 1; 0.02 * s removes a growing left edge;
       step 30 removes everything (lo = 2), then steps at extent 0 */
    float lo = s < 5 ? -1.0f : s < 30 ? 0.02f * (float)s : 2.0f;
    float dt = 0.5f + 0.01f * (float)(s % 7);
    CHECK(pic32_step(p, dt, lo) == 0, "step %d: %s", s, pic32_error(p));
    ref_step(dt, lo);
    compare(p, s);
  }
  CHECK(rn == 0, "everything removed");
  load(p, 1, &seed);                 /* restart with one particle */
  for (int t = 0; t < 3; t++, s++) {
    CHECK(pic32_step(p, 0.1f, -1.0f) == 0, "step %d: %s", s, pic32_error(p));
    ref_step(0.1f, -1.0f);
    compare(p, s);
  }
  pic32_teardown(p);
  printf("pic32 ok\n");
  return 0;
}
