/*
** test_morton.c -- morton.cnp against C: a stable sort by u64 keys (top bit set for some),
** the values permuted alike, per-cell sums (negative cells dropped) of i32, f64, bool and
** u64[2, N] values into f64; a second step on sorted input changes nothing.
*/
#include "e2e.h"
#include "morton.h"

enum { NP = 257, NC = 16 };

int main(void) {
  morton *p; char err[256];
  morton_config cfg = MORTON_CONFIG_INIT; cfg.N = NP; cfg.nc = NC;
  CHECK(morton_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  static uint64_t rkey[NP], ruv[2][NP];
  static int64_t rcell[NP];
  static int32_t rid[NP];
  static double rm[NP];
  static uint8_t rflag[NP];
  uint64_t seed = 3;
  uint64_t *key = morton_field(p, "key").data;
  int64_t *cell = morton_field(p, "cell").data;
  int32_t *id = morton_field(p, "id").data;
  double *m = morton_field(p, "m").data;
  uint8_t *flag = morton_field(p, "flag").data;
  cnp_array uva = morton_field(p, "uv");
  for (int i = 0; i < NP; i++) {
    /* 16 coarse cells in the top 4 bits; duplicates (i % 5 == 0 share a key) test stability */
    uint64_t k = (uint64_t)(e2e_rand(&seed) * 16.0) << 60 | (uint64_t)(i % 5 == 0 ? 7 : i * 2654435761u % 1000);
    rkey[i] = key[i] = k;
    rcell[i] = cell[i] = i % 11 == 0 ? -1 : (int64_t)(k >> 60);
    rid[i] = id[i] = i - 100;
    rm[i] = m[i] = e2e_rand(&seed);
    rflag[i] = flag[i] = (uint8_t)(i % 3 == 0);
    for (int c = 0; c < 2; c++)
      ruv[c][i] = *(uint64_t *)((char *)uva.data + c * uva.strides[0] + i * uva.strides[1]) =
          (uint64_t)i * 1000003u + (uint64_t)c;
  }
  for (int a = 1; a < NP; a++)   /* stable insertion sort by key */
    for (int b = a; b > 0 && rkey[b - 1] > rkey[b]; b--) {
#define SW(T, A) do { T t_ = A[b]; A[b] = A[b - 1]; A[b - 1] = t_; } while (0)
      SW(uint64_t, rkey); SW(int64_t, rcell); SW(int32_t, rid); SW(double, rm); SW(uint8_t, rflag);
      SW(uint64_t, ruv[0]); SW(uint64_t, ruv[1]);
#undef SW
    }
  double rcnt[NC] = {0}, rmass[NC] = {0}, rnflag[NC] = {0}, rus[2][NC] = {{0}};
  for (int i = 0; i < NP; i++) {
    if (rcell[i] < 0) continue;
    rcnt[rcell[i]] += rid[i];
    rmass[rcell[i]] += rm[i];
    rnflag[rcell[i]] += rflag[i];
    for (int c = 0; c < 2; c++) rus[c][rcell[i]] += (double)ruv[c][i];
  }
  for (int s = 0; s < 2; s++) {
    CHECK(morton_step(p) == 0, "step %d: %s", s, morton_error(p));
    CHECK(morton_sync(p) == 0, "sync");
    key = morton_field(p, "key").data; cell = morton_field(p, "cell").data;
    id = morton_field(p, "id").data; m = morton_field(p, "m").data; flag = morton_field(p, "flag").data;
    uva = morton_field(p, "uv");
    for (int i = 0; i < NP; i++) {
      CHECK(key[i] == rkey[i] && cell[i] == rcell[i] && id[i] == rid[i] && m[i] == rm[i] && flag[i] == rflag[i],
            "step %d row %d: key %llx vs %llx id %d vs %d", s, i, (unsigned long long)key[i],
            (unsigned long long)rkey[i], id[i], rid[i]);
      for (int c = 0; c < 2; c++)
        CHECK(*(uint64_t *)((char *)uva.data + c * uva.strides[0] + i * uva.strides[1]) == ruv[c][i], "uv");
    }
    const double *cnt = morton_field(p, "cnt").data, *mass = morton_field(p, "mass").data;
    const double *nflag = morton_field(p, "nflag").data;
    cnp_array us = morton_field(p, "usum");
    for (int c = 0; c < NC; c++) {
      CHECK(cnt[c] == rcnt[c] && nflag[c] == rnflag[c], "step %d cnt/nflag[%d] %g %g vs %g %g", s, c,
            cnt[c], nflag[c], rcnt[c], rnflag[c]);
      CHECK(e2e_close(mass[c], rmass[c], 1e-13), "step %d mass[%d]", s, c);
      for (int k = 0; k < 2; k++)
        CHECK(e2e_close(*(double *)((char *)us.data + k * us.strides[0] + c * us.strides[1]), rus[k][c], 1e-13),
              "step %d usum[%d, %d]", s, k, c);
    }
  }
  morton_teardown(p);
  printf("morton ok\n");
  return 0;
}
