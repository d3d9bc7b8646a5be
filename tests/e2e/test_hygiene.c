/*
** test_hygiene.c -- hygiene.cnp (pipeline 'spelled'): C macros, typedefs, library names and
** the generated code's own names as params, fields, lets, streams, events, a snapshot and a
** plan. This file includes <math.h>, <stdio.h> and <errno.h> before spelled.h, so a macro
** reaching the generated header would break the build. Three steps against a C reference.
*/
#include <errno.h>
#include "e2e.h"
#include "spelled.h"

enum { NP = 37, NC = 5 };
static double r_double[NP], r_A[NP], r_S[NP], r_n[NP], r_other[9][NP], r_memset[NC], r_printf[NP];
static int32_t r_int[NP];
static int64_t r_key[NP];

static double *fld(spelled *p, const char *name) {
  cnp_array a = spelled_field(p, name);
  CHECK(a.data != NULL, "field %s", name);
  return (double *)a.data;
}

/* stable sort of the reference rows by key (insertion sort: NP is small) */
static void ref_sort(void) {
  for (int a = 1; a < NP; a++)
    for (int b = a; b > 0 && r_key[b - 1] > r_key[b]; b--) {
#define SWAP(T, arr) do { T tmp_ = arr[b]; arr[b] = arr[b - 1]; arr[b - 1] = tmp_; } while (0)
      SWAP(int64_t, r_key); SWAP(double, r_double); SWAP(double, r_n); SWAP(int32_t, r_int);
      SWAP(double, r_A); SWAP(double, r_S);
      for (int o = 0; o < 9; o++) SWAP(double, r_other[o]);
#undef SWAP
    }
}

int main(void) {
  static const char *const others[9] = {"i", "t", "lo", "hi", "cap", "err", "cfg", "EOF", "abs"};
  spelled *p; char err[256];
  spelled_config cfg = SPELLED_CONFIG_INIT; cfg.N = NP; cfg.n_cells = NC;
  CHECK(spelled_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  uint64_t seed = 7;
  double *x = fld(p, "double"), *A = fld(p, "A"), *S = fld(p, "S");
  int32_t *in = (int32_t *)spelled_field(p, "int").data;
  int64_t *key = (int64_t *)spelled_field(p, "key").data;
  for (int j = 0; j < NP; j++) {
    r_double[j] = x[j] = e2e_rand(&seed);
    r_A[j] = A[j] = e2e_rand(&seed) - 0.5;
    r_S[j] = S[j] = e2e_rand(&seed);
    r_int[j] = in[j] = j - 10;
    r_key[j] = key[j] = (j * 7) % NC;
    for (int o = 0; o < 9; o++) r_other[o][j] = fld(p, others[o])[j] = e2e_rand(&seed);
  }
  for (int s = 0; s < 3; s++) {
    const double vNULL = 0.5 + s, verrno = 0.25, vlinux = -1.0, vint64 = 2.0, vp = 0.125 * s,
                 vp_ = 3.0, vexp = 1.5, vx = -0.75, vy = 0.0625;
    const int64_t k2 = 5 - s;
    const int32_t vsize = 2 + s;
    CHECK(spelled_step(p, vNULL, verrno, vlinux, vint64, k2, vp, vp_, vexp, vx, vy, vsize) == 0,
          "step %d: %s", s, spelled_error(p));
    /* reference: the map, then the sort (which permutes i, t, lo, ... too) */
    for (int j = 0; j < NP; j++) {
      double fl = r_double[j] * vexp + vNULL;
      double sg = verrno + vlinux + vint64 + (double)k2 + vp + vp_ + vx + vy + (double)vsize;
      double sd = fabs(r_A[j] - r_S[j]);
      r_double[j] = fl + sg;
      r_int[j] += vsize;
      r_key[j] = (r_key[j] + 1) % NC;
      double o = 0;
      for (int k = 0; k < 9; k++) o += r_other[k][j];
      r_n[j] = sd + o;
    }
    ref_sort();
    for (int c = 0; c < NC; c++) r_memset[c] = 0;
    for (int j = 0; j < NP; j++) r_memset[r_key[j]] += r_n[j];
    for (int j = 0; j < NP; j++) { r_printf[j] = r_double[j] * 2.0; r_S[j] += r_printf[j]; }
    CHECK(spelled_sync(p) == 0, "sync");
    x = fld(p, "double"); A = fld(p, "A"); S = fld(p, "S");
    in = (int32_t *)spelled_field(p, "int").data;
    key = (int64_t *)spelled_field(p, "key").data;
    const double *n = fld(p, "n"), *pr = fld(p, "printf"), *ms = fld(p, "memset");
    for (int j = 0; j < NP; j++) {
      CHECK(key[j] == r_key[j], "step %d key[%d] %lld vs %lld", s, j, (long long)key[j], (long long)r_key[j]);
      CHECK(e2e_close(x[j], r_double[j], 1e-14), "step %d double[%d] %g vs %g", s, j, x[j], r_double[j]);
      CHECK(in[j] == r_int[j], "step %d int[%d] %d vs %d", s, j, in[j], r_int[j]);
      CHECK(A[j] == r_A[j] && e2e_close(S[j], r_S[j], 1e-14), "step %d A/S[%d]", s, j);
      CHECK(e2e_close(n[j], r_n[j], 1e-14), "step %d n[%d] %g vs %g", s, j, n[j], r_n[j]);
      CHECK(e2e_close(pr[j], r_printf[j], 1e-14), "step %d printf[%d]", s, j);
    }
    for (int c = 0; c < NC; c++)
      CHECK(e2e_close(ms[c], r_memset[c], 1e-13), "step %d memset[%d] %g vs %g", s, c, ms[c], r_memset[c]);
    cnp_array snap;
    CHECK(spelled_snapshot(p, "main", &snap) == 0, "snapshot main");
    CHECK(snap.shape[snap.ndim - 1] == NC, "snapshot extent");
    for (int c = 0; c < NC; c++)
      CHECK(e2e_close(((const double *)snap.data)[c], r_memset[c], 1e-13), "step %d snapshot[%d]", s, c);
  }
  (void)errno;
  spelled_teardown(p);
  printf("hygiene ok\n");
  return 0;
}
