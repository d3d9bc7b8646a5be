/*
** test_edge.c -- edge.cnp: a live extent set below capacity, a dim of extent 0, every row
** compacted away (empty sort, offsets, plan and sums), snapshots of a component-major field.
*/
#include "edge.h"
#include "e2e.h"
#include <stdbool.h>
#define CAP 1000
#define NC 9
static double x[CAP], pv[2][CAP], st[2][NC], qs[NC]; static int32_t k32[CAP]; static int64_t q[CAP], off[NC + 1];
static uint64_t key[CAP]; static int64_t n;
int main(void) {
  uint64_t seed = 11;
  edge *p; char err[256];
  edge_config cfg = EDGE_CONFIG_INIT;
  cfg.N = CAP; cfg.P = 16; cfg.nc = NC;
  CHECK(edge_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
#define F(name, T) ((T *)edge_field(p, name).data)
  n = 700;
  CHECK(edge_set_extent(p, "N", n) == 0, "set N");
  CHECK(edge_set_extent(p, "P", 0) == 0, "set P");
  CHECK(edge_set_extent(p, "N", CAP + 1) == CNP_ERANGE, "N > cap");
  cnp_array fpv = edge_field(p, "pv");
  CHECK(fpv.shape[1] == 700, "pv live view %ld", (long)fpv.shape[1]);
  for (int i = 0; i < n; i++) {
    x[i] = F("x", double)[i] = e2e_rand(&seed);
    key[i] = F("key", uint64_t)[i] = (uint64_t)i * 0x9E3779B97F4A7C15ull;
    for (int k = 0; k < 2; k++) pv[k][i] = *e2e_at(fpv.data, fpv.strides, k, i) = e2e_rand(&seed);
  }
  for (int s = 0; s < 3; s++) {
    if (s == 1) { for (int i = 0; i < n; i++) x[i] = F("x", double)[i] = 0.1; }
    CHECK(edge_step(p) == 0, "step %d: %s", s, edge_error(p));
    CHECK(edge_sync(p) == 0, "sync");
    int64_t m = 0;
    static int32_t kk[CAP]; static int64_t qq[CAP];
    for (int64_t i = 0; i < n; i++) { kk[i] = (int32_t)(x[i] * NC); qq[i] = i - 3; }
    for (int64_t i = 0; i < n; i++) if (x[i] > 0.3) {
      x[m] = x[i]; key[m] = key[i]; k32[m] = kk[i]; q[m] = qq[i]; pv[0][m] = pv[0][i]; pv[1][m] = pv[1][i]; m++;
    }
    n = m;
    /* stable sort of k32 carrying x and q */
    static double tx[CAP]; static int64_t tq[CAP]; static int32_t tk[CAP]; int64_t at = 0;
    for (int c = 0; c < NC; c++) for (int64_t i = 0; i < n; i++) if (k32[i] == c) { tx[at] = x[i]; tq[at] = q[i]; tk[at] = c; at++; }
    CHECK(at == n, "ref keys");
    memcpy(x, tx, sizeof x); memcpy(q, tq, sizeof q); memcpy(k32, tk, sizeof k32);
    for (int c = 0; c <= NC; c++) { off[c] = 0; for (int64_t i = 0; i < n; i++) off[c] += k32[i] < c; }
    for (int c = 0; c < NC; c++) { qs[c] = 0; st[0][c] = st[1][c] = 0; }
    for (int64_t i = 0; i < n; i++) { qs[k32[i]] += (double)q[i]; st[0][k32[i]] += pv[0][i]; st[1][k32[i]] += pv[1][i]; }
    CHECK(edge_extent(p, "N") == n, "N %ld vs %ld", (long)edge_extent(p, "N"), (long)n);
    fpv = edge_field(p, "pv");
    cnp_array fst = edge_field(p, "st"), snap;
    CHECK(edge_snapshot(p, "sp", &snap) == 0, "snapshot");
    CHECK(snap.shape[0] == 2 && snap.shape[1] == n, "snapshot shape: the live rows at the copy (%ld, %ld)", (long)snap.shape[1], (long)n);
    for (int64_t i = 0; i < n; i++) {
      CHECK(F("x", double)[i] == x[i], "x[%ld]", (long)i);
      CHECK(F("key", uint64_t)[i] == key[i], "key[%ld]", (long)i);
      CHECK(F("q", int64_t)[i] == q[i], "q[%ld]", (long)i);
      CHECK(F("k32", int32_t)[i] == k32[i], "k32[%ld]", (long)i);
      for (int k = 0; k < 2; k++) {
        CHECK(*e2e_at(fpv.data, fpv.strides, k, i) == pv[k][i], "pv");
        CHECK(*e2e_at(snap.data, snap.strides, k, i) == pv[k][i], "snap pv[%d,%ld]", k, (long)i);
      }
    }
    for (int c = 0; c <= NC; c++) CHECK(F("off", int64_t)[c] == off[c], "off[%d] %ld vs %ld (step %d)", c, (long)F("off", int64_t)[c], (long)off[c], s);
    for (int c = 0; c < NC; c++) {
      CHECK(e2e_close(F("qs", double)[c], qs[c], 1e-12), "qs[%d] %g vs %g", c, F("qs", double)[c], qs[c]);
      for (int k = 0; k < 2; k++) CHECK(e2e_close(*e2e_at(fst.data, fst.strides, k, c), st[k][c], 1e-12), "st");
    }
    for (int c = 0; c < 5; c++) CHECK(F("cc", double)[c] == 2.0 * c, "cc");
    CHECK(edge_extent(p, "P") == 0, "P");
  }
  edge_teardown(p);
  printf("edge ok\n");
  return 0;
}
