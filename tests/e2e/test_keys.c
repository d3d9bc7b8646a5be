/*
** test_keys.c -- keys.cnp against a plain C reference: stable sorts by u64 and i32 keys,
** a segment plan dropping negative keys, sums of f64/f32/i32/component-major values, offsets.
*/
#include "keys.h"
#include "e2e.h"
#define NN 5000
#define NC 37
static int32_t c32[NN]; static uint64_t m64[NN]; static int64_t tag[NN], ckey[NN], off[NC + 1];
static double w[NN], v[2][NN], rho[NC], cnt[NC], j[2][NC]; static float wf[NN], rhof[NC]; static int32_t ni[NN];
static int64_t perm[NN];
static void stable_order(int n, int (*less)(int64_t, int64_t)) {
  for (int i = 0; i < n; i++) perm[i] = i;
  for (int i = 1; i < n; i++) { /* insertion sort: stable */
    int64_t t = perm[i]; int q = i;
    while (q > 0 && less(t, perm[q - 1])) { perm[q] = perm[q - 1]; q--; }
    perm[q] = t;
  }
}
static int less_m(int64_t a, int64_t b) { return m64[a] < m64[b]; }
static int less_c(int64_t a, int64_t b) { return c32[a] < c32[b]; }
#define APPLY(arr, T) do { static T tmp_[NN]; for (int i = 0; i < NN; i++) tmp_[i] = arr[perm[i]]; memcpy(arr, tmp_, sizeof tmp_); } while (0)
int main(void) {
  uint64_t seed = 99;
  keys *p; char err[256];
  keys_config cfg = KEYS_CONFIG_INIT;
  cfg.N = NN; cfg.n_cells = NC;
  CHECK(keys_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
#define F(name, T) ((T *)keys_field(p, name).data)
  cnp_array fv = keys_field(p, "v");
  for (int i = 0; i < NN; i++) {
    c32[i] = F("c32", int32_t)[i] = (int32_t)(e2e_rand(&seed) * (NC + 2));
    uint64_t hi = (uint64_t)(e2e_rand(&seed) * 4294967296.0), lo = (uint64_t)(e2e_rand(&seed) * 4294967296.0);
    m64[i] = F("m64", uint64_t)[i] = (i % 7 == 0) ? 0xFFFFFFFF00000000ull + (uint64_t)(i % 3) : (hi << 32 | lo);
    w[i] = F("w", double)[i] = e2e_rand(&seed);
    wf[i] = F("wf", float)[i] = (float)e2e_rand(&seed);
    ni[i] = F("ni", int32_t)[i] = (int32_t)(e2e_rand(&seed) * 100) - 50;
    for (int k = 0; k < 2; k++) v[k][i] = *e2e_at(fv.data, fv.strides, k, i) = e2e_rand(&seed);
  }
  CHECK(keys_step(p) == 0, "step: %s", keys_error(p));
  CHECK(keys_sync(p) == 0, "sync");
  for (int i = 0; i < NN; i++) tag[i] = i;
  stable_order(NN, less_m); APPLY(m64, uint64_t); APPLY(tag, int64_t); APPLY(w, double);
  stable_order(NN, less_c); APPLY(c32, int32_t); APPLY(m64, uint64_t); APPLY(tag, int64_t); APPLY(wf, float);
  APPLY(ni, int32_t); APPLY(v[0], double); APPLY(v[1], double);
  for (int i = 0; i < NN; i++) ckey[i] = (int64_t)c32[i] - 2;
  for (int c = 0; c < NC; c++) { rho[c] = 0; rhof[c] = 0; cnt[c] = 0; j[0][c] = j[1][c] = 0; }
  for (int i = 0; i < NN; i++) if (ckey[i] >= 0) {
    rho[ckey[i]] += w[i]; rhof[ckey[i]] += wf[i]; cnt[ckey[i]] += ni[i];
    j[0][ckey[i]] += v[0][i]; j[1][ckey[i]] += v[1][i];
  }
  for (int i = 0; i < NN; i++) ckey[i] = ckey[i] > 0 ? ckey[i] : 0;
  for (int c = 0; c <= NC; c++) { off[c] = 0; for (int i = 0; i < NN; i++) if (ckey[i] < c) off[c]++; }
  cnp_array fj = keys_field(p, "j"); fv = keys_field(p, "v");
  for (int i = 0; i < NN; i++) {
    CHECK(F("c32", int32_t)[i] == c32[i], "c32[%d]", i);
    CHECK(F("m64", uint64_t)[i] == m64[i], "m64[%d]", i);
    CHECK(F("tag", int64_t)[i] == tag[i], "tag[%d] %ld vs %ld", i, (long)F("tag", int64_t)[i], (long)tag[i]);
    CHECK(F("w", double)[i] == w[i], "w[%d]", i);
    CHECK(F("wf", float)[i] == wf[i], "wf[%d]", i);
    CHECK(F("ni", int32_t)[i] == ni[i], "ni[%d]", i);
    CHECK(F("ckey", int64_t)[i] == ckey[i], "ckey[%d]", i);
    for (int k = 0; k < 2; k++) CHECK(*e2e_at(fv.data, fv.strides, k, i) == v[k][i], "v[%d,%d]", k, i);
  }
  for (int c = 0; c < NC; c++) {
    CHECK(e2e_close(F("rho", double)[c], rho[c], 1e-12), "rho[%d]", c);
    CHECK(e2e_close(F("rhof", float)[c], rhof[c], 1e-5), "rhof[%d] %g vs %g", c, F("rhof", float)[c], rhof[c]);
    CHECK(F("cnt", double)[c] == cnt[c], "cnt[%d] %g vs %g", c, F("cnt", double)[c], cnt[c]);
    for (int k = 0; k < 2; k++) CHECK(e2e_close(*e2e_at(fj.data, fj.strides, k, c), j[k][c], 1e-12), "j[%d,%d]", k, c);
  }
  for (int c = 0; c <= NC; c++) CHECK(F("off", int64_t)[c] == off[c], "off[%d] %ld vs %ld", c, (long)F("off", int64_t)[c], (long)off[c]);
  keys_teardown(p);
  printf("keys ok\n");
  return 0;
}
