/*
** test_drawnum.c -- drawnum.cnp's draws against an independent Philox4x32-10, written here
** from Random123's definition (philox4x32_R with 10 rounds; its kat_vectors checked first),
** with the layout docs/language.md states: key (seed low 32, seed high 32), counter (block
** low 32, block high 32, step low 32, draw number); uniform (w1:w0 >> 11) * 2^-53 at row 2b
** and (w3:w2 >> 11) * 2^-53 at row 2b + 1 of block b, uniform_f32 (w_j >> 8) * 2^-24 at row
** 4b + j, bit for bit; normals one block per row; normal and normal_f32 (Box-Muller, the generator's own
** log and cos) within a few ulps of the C library's. Two steps, the three appended rows of
** each, and the same bytes with one and two OpenMP threads (ctest e2e.drawnum.threads*).
*/
#include "drawnum.h"
#include "e2e.h"

static void philox(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
  uint32_t c0 = ctr[0], c1 = ctr[1], c2 = ctr[2], c3 = ctr[3], k0 = key[0], k1 = key[1];
  for (int r = 0; r < 10; r++) {
    if (r) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n1 = (uint32_t)p1;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1, n3 = (uint32_t)p0;
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
  }
  out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}

static void words(uint64_t seed, uint64_t row, uint64_t step, uint32_t draw, uint32_t w[4])
{
  uint32_t ctr[4] = {(uint32_t)row, (uint32_t)(row >> 32), (uint32_t)step, draw};
  uint32_t key[2] = {(uint32_t)seed, (uint32_t)(seed >> 32)};
  philox(ctr, key, w);
}

static double uni(uint32_t lo, uint32_t hi) { return (double)((((uint64_t)hi << 32) | lo) >> 11) * 0x1p-53; }

/* uniform(seed) at a row: block row / 2, its first or second pair of words */
static double uni_row(uint64_t seed, uint64_t row, uint64_t step, uint32_t draw)
{
  uint32_t w[4];
  words(seed, row >> 1, step, draw, w);
  return row & 1 ? uni(w[2], w[3]) : uni(w[0], w[1]);
}

/* uniform_f32(seed) at a row: block row / 4, its word row % 4 */
static float unif_row(uint64_t seed, uint64_t row, uint64_t step, uint32_t draw)
{
  uint32_t w[4];
  words(seed, row >> 2, step, draw, w);
  return (float)((w[row & 3] >> 8) * 0x1p-24);
}

static const double two_pi = 6.283185307179586;

static double nor(const uint32_t w[4])
{
  double u1 = 1.0 - uni(w[0], w[1]), u2 = uni(w[2], w[3]);
  return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}

static double norf(const uint32_t w[4])
{
  double u1 = 1.0 - (w[0] >> 8) * 0x1p-24, u2 = (w[1] >> 8) * 0x1p-24;
  return sqrt(-2.0 * log(u1)) * cos(two_pi * u2);
}

int main(void)
{
  static const uint32_t kat[3][10] = {   /* Random123 kat_vectors: philox4x32 10 CTR KEY -> OUT */
    {0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8},
    {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
     0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
    {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
     0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}};
  for (int k = 0; k < 3; k++) {
    uint32_t out[4];
    philox(kat[k], kat[k] + 4, out);
    for (int j = 0; j < 4; j++) CHECK(out[j] == kat[k][6 + j], "KAT %d word %d: %08x", k, j, out[j]);
  }

  const int64_t n = 5001;   /* odd: the last chunk ends inside a Philox block */
  const uint64_t seed = UINT64_C(0x123456789abcdef0);
  drawnum_config cfg = DRAWNUM_CONFIG_INIT;
  cfg.N = n + 100;
  cfg.seed = seed;
  drawnum *p;
  char err[256];
  CHECK(drawnum_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  CHECK(drawnum_set_extent(p, "N", n) == CNP_OK, "set_extent");
  int64_t *sd = drawnum_field(p, "sd").data;
  for (int64_t i = 0; i < n + 100; i++) sd[i] = -(i * 7919) - 3;
  for (uint64_t step = 0; step < 2; step++) {
    CHECK(drawnum_step(p) == CNP_OK, "step %d: %s", (int)step, drawnum_error(p));
    CHECK(drawnum_sync(p) == CNP_OK, "sync");
    double *a = drawnum_field(p, "a").data, *b = drawnum_field(p, "b").data;
    double *e = drawnum_field(p, "e").data;
    float *c = drawnum_field(p, "c").data, *d = drawnum_field(p, "d").data;
    int64_t live = drawnum_extent(p, "N");
    CHECK(live == n + 3, "append: %lld rows", (long long)live);
    for (int64_t i = 0; i < n; i++) {
      uint32_t w[4];
      double ea = uni_row(seed, (uint64_t)i, step, 0);
      CHECK(memcmp(&a[i], &ea, 8) == 0, "uniform row %lld step %d: %.17g, want %.17g", (long long)i, (int)step, a[i], ea);
      words(seed, (uint64_t)i, step, 1, w);
      double eb = nor(w);
      CHECK(fabs(b[i] - eb) <= 1e-14, "normal row %lld: %.17g, want %.17g", (long long)i, b[i], eb);
      float ec = unif_row((uint64_t)sd[i], (uint64_t)i, step, 2);
      CHECK(memcmp(&c[i], &ec, 4) == 0, "uniform_f32 row %lld: %.9g, want %.9g", (long long)i, c[i], ec);
      words(seed, (uint64_t)i, step, 3, w);
      double ed = norf(w);
      CHECK(fabs(d[i] - ed) <= 2 * 0x1p-24 * fabs(ed) + 1e-30, "normal_f32 row %lld: %.9g, want %.9g", (long long)i, d[i], ed);
      words(seed, (uint64_t)i, step, 5, w);
      double inner = nor(w);
      uint64_t s2 = inner <= 0.0 ? 0 : (uint64_t)inner;   /* u64(x): saturating, toward zero */
      CHECK(fabs(inner - floor(inner + 0.5)) > 1e-9 || inner < 0.0, "row %lld: normal too close to an integer", (long long)i);
      double ee = uni_row(s2, (uint64_t)i, step, 4);
      CHECK(memcmp(&e[i], &ee, 8) == 0, "uniform(u64(normal)) row %lld: %.17g, want %.17g", (long long)i, e[i], ee);
    }
    for (int64_t i = live - 3; i < live; i++) {
      double ea = uni_row(seed, (uint64_t)i, step, 6);
      CHECK(memcmp(&a[i], &ea, 8) == 0, "append row %lld step %d: %.17g, want %.17g", (long long)i, (int)step, a[i], ea);
    }
    CHECK(drawnum_set_extent(p, "N", n) == CNP_OK, "set_extent");
  }
  drawnum_teardown(p);
  printf("drawnum: ok\n");
  return 0;
}
