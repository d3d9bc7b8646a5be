/*
** test_dryno.c -- dryno.cnp: fast paths whose first pass cannot be dry (the maps read the
** mask the first pass stores; a written component is not a constant) against a plain C
** version, bit for bit, over several steps: the live rows compacted and stably sorted by
** key, per-key sums in sorted order, the mask (not compacted) holding the maps' results.
*/
#include "dryno.h"
#include "e2e.h"

#define CAP 4000
#define NC 16
#define STEPS 5

static double x[CAP], w[CAP], s[NC], y[2][CAP], t[2][NC];
static uint8_t live[CAP], ok[CAP];
static int64_t cell[CAP], key[CAP];

static int64_t ref_a(int64_t n)
{
  static double tx[CAP], tw[CAP];
  static int64_t tc[CAP];
  int64_t m = 0;
  for (int64_t i = 0; i < n; i++) {
    x[i] = x[i] + 0.125;
    live[i] = live[i] && x[i] < 1.0;
    cell[i] = (int64_t)(x[i] * (double)NC);
  }
  for (int64_t c = 0; c < NC; c++)
    for (int64_t i = 0; i < n; i++)
      if (live[i] && cell[i] == c) tx[m] = x[i], tw[m] = w[i], tc[m] = cell[i], m++;
  memcpy(x, tx, sizeof(double) * (size_t)m);
  memcpy(w, tw, sizeof(double) * (size_t)m);
  memcpy(cell, tc, sizeof(int64_t) * (size_t)m);
  for (int64_t c = 0; c < NC; c++) {
    double acc = 0;
    for (int64_t i = 0; i < m; i++)
      if (cell[i] == c) acc += w[i];
    s[c] = acc;
  }
  return m;
}

static int64_t ref_b(int64_t n)
{
  static double ty[2][CAP];
  static int64_t tk[CAP];
  int64_t m = 0;
  for (int64_t j = 0; j < n; j++) {
    int64_t c = (int64_t)(y[0][j] < 0.5);
    y[c][j] = y[c][j] + 0.25;
    ok[j] = y[0][j] < 1.0;
    int64_t kk = (int64_t)(y[0][j] * (double)NC);
    key[j] = kk < NC - 1 ? kk : NC - 1;
  }
  for (int64_t c = 0; c < NC; c++)
    for (int64_t j = 0; j < n; j++)
      if (ok[j] && key[j] == c) ty[0][m] = y[0][j], ty[1][m] = y[1][j], tk[m] = key[j], m++;
  for (int q = 0; q < 2; q++) memcpy(y[q], ty[q], sizeof(double) * (size_t)m);
  memcpy(key, tk, sizeof(int64_t) * (size_t)m);
  for (int q = 0; q < 2; q++)
    for (int64_t c = 0; c < NC; c++) {
      double acc = 0;
      for (int64_t j = 0; j < m; j++)
        if (key[j] == c) acc += y[q][j];
      t[q][c] = acc;
    }
  return m;
}

int main(void)
{
  dryno *p = NULL;
  char err[256];
  dryno_config cfg = DRYNO_CONFIG_INIT;
  cfg.N = CAP;
  cfg.M = CAP;
  cfg.n_cells = NC;
  CHECK(dryno_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  uint64_t seed = 5;
  for (int64_t i = 0; i < CAP; i++) {
    x[i] = 0.5 * e2e_rand(&seed);
    live[i] = i % 5 != 0;
    w[i] = (double)i;
    y[0][i] = e2e_rand(&seed);
    y[1][i] = e2e_rand(&seed);
  }
  cnp_array X = dryno_field(p, "x"), L = dryno_field(p, "live"), W = dryno_field(p, "w");
  cnp_array Y = dryno_field(p, "y");
  memcpy(X.data, x, sizeof x);
  memcpy(L.data, live, sizeof live);
  memcpy(W.data, w, sizeof w);
  for (int q = 0; q < 2; q++) memcpy((char *)Y.data + q * Y.strides[0], y[q], sizeof y[q]);
  int64_t n = CAP, m = CAP;
  for (int st = 0; st < STEPS; st++) {
    int64_t n_old = n;
    n = ref_a(n);
    m = ref_b(m);
    CHECK(dryno_step(p) == CNP_OK, "step %d: %s", st, dryno_error(p));
    CHECK(dryno_extent(p, "N") == n && dryno_extent(p, "M") == m, "step %d: live %lld %lld vs %lld %lld",
          st, (long long)dryno_extent(p, "N"), (long long)dryno_extent(p, "M"), (long long)n,
          (long long)m);
    X = dryno_field(p, "x"), L = dryno_field(p, "live"), W = dryno_field(p, "w"), Y = dryno_field(p, "y");
    cnp_array C = dryno_field(p, "cell"), K = dryno_field(p, "key");
    cnp_array S = dryno_field(p, "s"), T = dryno_field(p, "t");
    for (int64_t i = 0; i < n; i++) {
      CHECK(((double *)X.data)[i] == x[i], "step %d: x[%lld]", st, (long long)i);
      CHECK(((double *)W.data)[i] == w[i], "step %d: w[%lld]", st, (long long)i);
      CHECK(((int64_t *)C.data)[i] == cell[i], "step %d: cell[%lld]", st, (long long)i);
    }
    for (int64_t i = 0; i < n_old; i++)
      CHECK(((uint8_t *)L.data)[i] == live[i], "step %d: live[%lld]", st, (long long)i);
    for (int64_t j = 0; j < m; j++) {
      CHECK(((int64_t *)K.data)[j] == key[j], "step %d: key[%lld]", st, (long long)j);
      for (int q = 0; q < 2; q++)
        CHECK(*e2e_at(Y.data, Y.strides, q, j) == y[q][j], "step %d: y[%d, %lld]", st, q, (long long)j);
    }
    for (int c = 0; c < NC; c++) {
      CHECK(((double *)S.data)[c] == s[c], "step %d: s[%d]", st, c);
      for (int q = 0; q < 2; q++)
        CHECK(*e2e_at(T.data, T.strides, q, c) == t[q][c], "step %d: t[%d, %d]", st, q, c);
    }
  }
  CHECK(n > 0 && n < CAP && m > 0 && m < CAP, "rows left and stayed: %lld %lld", (long long)n,
        (long long)m);
  dryno_stats stats;
  dryno_stats_get(p, &stats);
  CHECK(stats.launches == 2, "fast paths: 2 kernels (the sums inside), got %llu", (unsigned long long)stats.launches);
  dryno_teardown(p);
  printf("dryno: fast paths without a dry first pass match the reference over %d steps\n", STEPS);
  return 0;
}
