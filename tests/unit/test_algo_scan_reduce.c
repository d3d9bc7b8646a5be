/*
** test_algo_scan_reduce.c — cnp_scan and cnp_reduce on the host backend against plain loops
** (exact where the sums are exact: integers, and floats holding small integers), against
** the documented order of docs/algorithms.md for real-valued floats, across thread counts
** (bit-identical), and every argument error with its exact status. (The CUDA path needs a
** GPU: tests/gpu.)
*/
#include "test_algo_util.h"
#include "test_core_util.h"

#include <math.h>

#include "cnp/algo.h"

/* Sizes: the shared ones, plus both sides of the 32768-element block. */
static const int64_t SIZES[] = {0, 1, 2, 7, 31, 33, 1000, 32767, 32768, 32769, 100001};
#define NSIZES ((int)(sizeof SIZES / sizeof SIZES[0]))

static void free_all(cnp_array *a, int n)
{
  for (int i = 0; i < n; i++) free(a[i].data);
}

/* ---- the documented order (docs/algorithms.md), as a plain reference ---------------- */

static int64_t doc_block(int64_t n)
{
  int64_t b = (n + 1023) / 1024;
  return b > 32768 ? b : 32768;
}

static double doc_total(const double *x, int64_t lo, int64_t hi)
{
  double l[8] = {0};
  for (int64_t i = lo; i < hi; i++) l[(i - lo) % 8] += x[i];
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

static double doc_sum(const double *x, int64_t n)
{
  int64_t B = doc_block(n);
  double r = 0;
  for (int64_t lo = 0; lo < n; lo += B) {
    double t = doc_total(x, lo, lo + B < n ? lo + B : n);
    r = lo == 0 ? t : r + t;
  }
  return r;
}

static void doc_scan(const double *x, double *y, int64_t n, int excl)
{
  int64_t B = doc_block(n);
  double p = 0;
  for (int64_t lo = 0; lo < n; lo += B) {
    int64_t hi = lo + B < n ? lo + B : n, L = (hi - lo + 3) / 4;
    double o = p;
    for (int s = 0; s < 4; s++) {              /* 4 sub-blocks, each from +0 */
      int64_t b0 = lo + s * L < hi ? lo + s * L : hi, e0 = b0 + L < hi ? b0 + L : hi;
      double run = 0;
      for (int64_t i = b0; i < e0; i++) {
        double v = x[i];
        if (!excl) run += v;
        y[i] = o + run;
        if (excl) run += v;
      }
      double r = 0;
      for (int64_t i = b0; i < e0; i++) r += x[i];
      o = o + r;                               /* o_(s+1) = o_s + r_s */
    }
    p = o;
  }
}

/* ---- scans ---------------------------------------------------------------------------- */

Test(algo_scan, integers_wrap_like_plain_loops)
{
  uint64_t seed = 11;
  for (int k = 0; k < NSIZES; k++) {
    int64_t n = SIZES[k];
    cnp_array a32 = host_vec(CNP_INT32, n), o32 = host_vec(CNP_INT32, n);
    cnp_array a64 = host_vec(CNP_INT64, n), o64 = host_vec(CNP_INT64, n);
    cnp_array au = host_vec(CNP_UINT64, n), ou = host_vec(CNP_UINT64, n);
    int32_t *x32 = a32.data;
    int64_t *x64 = a64.data;
    uint64_t *xu = au.data;
    for (int64_t i = 0; i < n; i++) {
      uint64_t r = rng_next(&seed);
      x32[i] = (int32_t)(uint32_t)r;           /* full range: sums wrap */
      x64[i] = (int64_t)r;
      xu[i] = r;
    }
    for (int excl = 0; excl < 2; excl++) {
      cnp_scan_kind kind = excl ? CNP_SCAN_EXCLUSIVE : CNP_SCAN_INCLUSIVE;
      cr_assert_eq(cnp_scan(&a32, &o32, kind, NULL, NULL, NULL), CNP_OK, "%s", cnp_last_error());
      cr_assert_eq(cnp_scan(&a64, &o64, kind, NULL, NULL, NULL), CNP_OK);
      cr_assert_eq(cnp_scan(&au, &ou, kind, NULL, NULL, NULL), CNP_OK);
      uint32_t r32 = 0;
      uint64_t r64 = 0, ru = 0;
      for (int64_t i = 0; i < n; i++) {
        if (!excl) {
          r32 += (uint32_t)x32[i];
          r64 += (uint64_t)x64[i];
          ru += xu[i];
        }
        cr_assert_eq(((int32_t *)o32.data)[i], (int32_t)r32, "n %lld i %lld", (long long)n,
                     (long long)i);
        cr_assert_eq(((int64_t *)o64.data)[i], (int64_t)r64);
        cr_assert_eq(((uint64_t *)ou.data)[i], ru);
        if (excl) {
          r32 += (uint32_t)x32[i];
          r64 += (uint64_t)x64[i];
          ru += xu[i];
        }
      }
    }
    cnp_array all[6] = {a32, o32, a64, o64, au, ou};
    free_all(all, 6);
  }
}

Test(algo_scan, floats_exact_sums_match_plain_loops_and_in_place)
{
  uint64_t seed = 5;
  for (int k = 0; k < NSIZES; k++) {
    int64_t n = SIZES[k];
    cnp_array a = host_vec(CNP_FLOAT64, n), o = host_vec(CNP_FLOAT64, n);
    cnp_array f = host_vec(CNP_FLOAT32, n);
    double *x = a.data;
    float *xf = f.data;
    for (int64_t i = 0; i < n; i++) {
      x[i] = (double)(int)(rng_next(&seed) % 201) - 100.0;   /* exact in any order */
      xf[i] = (float)((int)(rng_next(&seed) % 21) - 10);
    }
    cr_assert_eq(cnp_scan(&a, &o, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_OK);
    double run = 0;
    for (int64_t i = 0; i < n; i++) {
      run += x[i];
      cr_assert_eq(((double *)o.data)[i], run);
    }
    /* float32 in place, exclusive */
    float *ref = malloc((size_t)(n > 0 ? n : 1) * sizeof *ref);
    float rf = 0;
    for (int64_t i = 0; i < n; i++) {
      ref[i] = rf;
      rf += xf[i];
    }
    cr_assert_eq(cnp_scan(&f, &f, CNP_SCAN_EXCLUSIVE, NULL, NULL, NULL), CNP_OK);
    for (int64_t i = 0; i < n; i++) cr_assert_eq(xf[i], ref[i], "i %lld", (long long)i);
    free(ref);
    cnp_array all[3] = {a, o, f};
    free_all(all, 3);
  }
}

Test(algo_scan, real_floats_follow_the_documented_order)
{
  uint64_t seed = 99;
  const int64_t sizes[] = {1, 1000, 32768, 32769, 100001, 300007};
  for (int k = 0; k < 6; k++) {
    int64_t n = sizes[k];
    cnp_array a = host_vec(CNP_FLOAT64, n), o = host_vec(CNP_FLOAT64, n);
    double *x = a.data, *ref = malloc((size_t)n * sizeof *ref);
    for (int64_t i = 0; i < n; i++) x[i] = rng_unit(&seed) - 0.3;
    for (int excl = 0; excl < 2; excl++) {
      doc_scan(x, ref, n, excl);
      cr_assert_eq(cnp_scan(&a, &o, excl ? CNP_SCAN_EXCLUSIVE : CNP_SCAN_INCLUSIVE, NULL, NULL,
                            NULL), CNP_OK);
      cr_assert(memcmp(o.data, ref, (size_t)n * sizeof *ref) == 0, "n %lld excl %d",
                (long long)n, excl);
    }
    free(ref);
    cnp_array all[2] = {a, o};
    free_all(all, 2);
  }
}

Test(algo_scan, float16_accumulates_in_float32)
{
  const int64_t n = 5000;
  cnp_array a = host_vec(CNP_FLOAT16, n), o = host_vec(CNP_FLOAT16, n);
  uint16_t *x = a.data;
  uint64_t seed = 3;
  for (int64_t i = 0; i < n; i++) x[i] = cnp_float_to_half((float)rng_unit(&seed));
  cr_assert_eq(cnp_scan(&a, &o, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_OK);
  float run = 0;
  for (int64_t i = 0; i < n; i++) {
    run += cnp_half_to_float(x[i]);
    cr_assert_eq(((uint16_t *)o.data)[i], cnp_float_to_half(run), "i %lld", (long long)i);
  }
  cnp_array all[2] = {a, o};
  free_all(all, 2);
}

Test(algo_scan, every_component_of_both_layouts)
{
  const int64_t n = 40001, k = 3;
  int64_t s_kn[2] = {k, n}, s_nk[2] = {n, k}, s_n1[2] = {n, 1};
  cnp_array c = host_array(CNP_INT64, 2, s_kn, 'C'), co = host_array(CNP_INT64, 2, s_kn, 'C');
  cnp_array f = host_array(CNP_INT64, 2, s_nk, 'F');
  cnp_array col = host_array(CNP_INT64, 2, s_n1, 'C');
  int64_t *xc = c.data, *xf = f.data, *xcol = col.data;
  for (int64_t j = 0; j < k; j++)
    for (int64_t i = 0; i < n; i++) {
      xc[j * n + i] = (j + 1) * (i % 7) - 3;
      xf[j * n + i] = (j + 1) * (i % 7) - 3;   /* F-order (n, k): component j contiguous */
    }
  for (int64_t i = 0; i < n; i++) xcol[i] = i;
  cr_assert_eq(cnp_scan(&c, &co, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_OK, "%s",
               cnp_last_error());
  cr_assert_eq(cnp_scan(&f, &f, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_OK, "%s",
               cnp_last_error());
  cr_assert_eq(cnp_scan(&col, &col, CNP_SCAN_EXCLUSIVE, NULL, NULL, NULL), CNP_OK);
  for (int64_t j = 0; j < k; j++) {
    int64_t run = 0;
    for (int64_t i = 0; i < n; i++) {
      run += (j + 1) * (i % 7) - 3;
      cr_assert_eq(((int64_t *)co.data)[j * n + i], run);
      cr_assert_eq(xf[j * n + i], run);
    }
  }
  for (int64_t i = 0; i < n; i++) cr_assert_eq(xcol[i], i * (i - 1) / 2, "(n, 1) scans along n");
  cnp_array all[4] = {c, co, f, col};
  free_all(all, 4);
}

Test(algo_scan, device_count_rows_and_threads)
{
  const int64_t n = 300007;
  cnp_array a = host_vec(CNP_FLOAT64, n), o1 = host_vec(CNP_FLOAT64, n);
  cnp_array o2 = host_vec(CNP_FLOAT64, n), cnt = host_vec(CNP_INT64, 1);
  double *x = a.data;
  uint64_t seed = 17;
  for (int64_t i = 0; i < n; i++) x[i] = rng_unit(&seed) * 3 - 1;
  set_threads(1);
  cr_assert_eq(cnp_scan(&a, &o1, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_OK);
  set_threads(2);
  cr_assert_eq(cnp_scan(&a, &o2, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_OK);
  set_threads(3);
  cr_assert(memcmp(o1.data, o2.data, (size_t)n * 8) == 0, "1 and 2 threads agree");
  cr_assert_eq(cnp_scan(&a, &o2, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_OK);
  cr_assert(memcmp(o1.data, o2.data, (size_t)n * 8) == 0, "and 3");
  /* a count: rows past it untouched */
  for (int64_t i = 0; i < n; i++) ((double *)o2.data)[i] = -7;
  ((int64_t *)cnt.data)[0] = 40000;
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, n, 0, 0), CNP_OK);
  cr_assert_eq(cnp_scan(&a, &o2, CNP_SCAN_INCLUSIVE, &cnt, ws, NULL), CNP_OK);
  double *ref = malloc(40000 * sizeof *ref);
  doc_scan(x, ref, 40000, 0);                  /* the order of 40000 rows, not of n */
  cr_assert(memcmp(o2.data, ref, 40000 * sizeof *ref) == 0);
  free(ref);
  for (int64_t i = 40000; i < n; i++) cr_assert_eq(((double *)o2.data)[i], -7);
  ((int64_t *)cnt.data)[0] = n + 1;
  EXPECT_FAIL(cnp_scan(&a, &o2, CNP_SCAN_INCLUSIVE, &cnt, ws, NULL), CNP_ERANGE,
              "cnp_scan: count = 300008 outside [0, N = 300007]");
  cnp_workspace_destroy(ws);
  cnp_array all[4] = {a, o1, o2, cnt};
  free_all(all, 4);
}

Test(algo_scan, errors)
{
  int64_t s23[2] = {2, 3}, s32[2] = {3, 2};
  cnp_array a = host_vec(CNP_FLOAT64, 8), o = host_vec(CNP_FLOAT64, 8);
  cnp_array b = host_vec(CNP_BOOL, 8), i32 = host_vec(CNP_INT32, 8), o7 = host_vec(CNP_FLOAT64, 7);
  cnp_array m23 = host_array(CNP_FLOAT64, 2, s23, 'C'), m32 = host_array(CNP_FLOAT64, 2, s32, 'C');
  cnp_array mf = host_array(CNP_FLOAT64, 2, s23, 'F'), cnt = host_vec(CNP_INT64, 1);
  cnp_array c64 = host_vec(CNP_COMPLEX128, 8);
  EXPECT_FAIL(cnp_scan(NULL, &o, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_EINVAL, "in is NULL");
  EXPECT_FAIL(cnp_scan(&a, &o, (cnp_scan_kind)5, NULL, NULL, NULL), CNP_EINVAL,
              "unknown scan kind 5");
  EXPECT_FAIL(cnp_scan(&b, &b, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_EDTYPE,
              "in has unsupported dtype bool");
  EXPECT_FAIL(cnp_scan(&c64, &c64, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_EDTYPE,
              "unsupported dtype complex128");
  EXPECT_FAIL(cnp_scan(&a, &i32, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_EDTYPE,
              "out is int32 but in is float64");
  EXPECT_FAIL(cnp_scan(&a, &o7, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_ESHAPE,
              "out and in differ in shape");
  EXPECT_FAIL(cnp_scan(&m23, &m32, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_ESHAPE,
              "differ in shape");
  EXPECT_FAIL(cnp_scan(&m23, &mf, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_ELAYOUT,
              "out and in differ in layout");
  cnp_array strided = a;
  strided.shape[0] = 4;
  strided.strides[0] = 16;
  cnp_array o4 = o;
  o4.shape[0] = 4;
  cnp_array o4s = o4;                          /* a strided vector is no contiguous run */
  o4s.strides[0] = 16;
  double before[8];
  memcpy(before, a.data, sizeof before);
  EXPECT_FAIL(cnp_scan(&strided, &o4s, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_ELAYOUT,
              "in is not contiguous (stride 16 bytes)");
  EXPECT_FAIL(cnp_scan(&strided, &strided, CNP_SCAN_EXCLUSIVE, NULL, NULL, NULL), CNP_ELAYOUT,
              "in is not contiguous (stride 16 bytes)");
  cnp_array bcast = a;                         /* stride 0: one element seen 8 times */
  bcast.strides[0] = 0;
  EXPECT_FAIL(cnp_scan(&bcast, &bcast, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_ELAYOUT,
              "in is not contiguous (stride 0 bytes)");
  cr_assert_eq(memcmp(before, a.data, sizeof before), 0, "a failed scan changed its input");
  cnp_array m3 = m23;
  m3.strides[0] = 48;                          /* rows 48 bytes apart: neither C nor F */
  cnp_array m3o = m3;
  m3o.data = o.data;
  EXPECT_FAIL(cnp_scan(&m3, &m3o, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_ELAYOUT,
              "neither C- nor F-contiguous");
  cnp_array shifted = a;
  shifted.data = (double *)a.data + 1;
  shifted.shape[0] = 7;
  cnp_array head = a;
  head.shape[0] = 7;
  EXPECT_FAIL(cnp_scan(&head, &shifted, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_EALIAS,
              "out overlaps in");
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 4, 0, 0), CNP_OK);
  EXPECT_FAIL(cnp_scan(&a, &o, CNP_SCAN_INCLUSIVE, NULL, ws, NULL), CNP_EOVERFLOW,
              "N = 8 exceeds the workspace capacity 4");
  EXPECT_FAIL(cnp_scan(&a, &o, CNP_SCAN_INCLUSIVE, &i32, NULL, NULL), CNP_EDTYPE,
              "count has unsupported dtype int32");
  EXPECT_FAIL(cnp_scan(&a, &o, CNP_SCAN_INCLUSIVE, &o, NULL, NULL), CNP_EDTYPE, "count");
  cnp_array cnt_alias = a;
  cnt_alias.dtype = CNP_INT64;
  cnt_alias.shape[0] = 1;
  EXPECT_FAIL(cnp_scan(&a, &o, CNP_SCAN_INCLUSIVE, &cnt_alias, NULL, NULL), CNP_EALIAS,
              "count overlaps another argument");
  cnp_stream fake = fake_cuda_stream();
  cr_assert_eq(cnp__handle_register(&fake, "test"), CNP_OK);
  EXPECT_FAIL(cnp_scan(&a, &o, CNP_SCAN_INCLUSIVE, NULL, NULL, &fake), CNP_EDEVICE,
              "stream is on cuda:0 but the arrays are on host:0");
  cnp__handle_unregister(&fake);
#ifndef CNP_HAVE_CUDA
  cnp_array fc = fake_cuda_array(8), fco = fc;
  fco.data = (void *)(uintptr_t)0x20000;
  EXPECT_FAIL(cnp_scan(&fc, &fco, CNP_SCAN_INCLUSIVE, NULL, NULL, NULL), CNP_EUNSUPPORTED,
              "cnp_scan: this libcnp was built without CUDA");
  cnp_array fr = fc;
  fr.shape[0] = 1;
  fr.data = (void *)(uintptr_t)0x30000;
  EXPECT_FAIL(cnp_reduce(&fc, CNP_REDUCE_SUM, &fr, NULL, NULL, NULL), CNP_EUNSUPPORTED,
              "cnp_reduce: this libcnp was built without CUDA");
#endif
  cnp_workspace_destroy(ws);
  cnp_array all[10] = {a, o, b, i32, o7, m23, m32, mf, cnt, c64};
  free_all(all, 10);
}

/* ---- reductions ------------------------------------------------------------------------ */

Test(algo_reduce, integers_like_plain_loops)
{
  uint64_t seed = 21;
  for (int k = 0; k < NSIZES; k++) {
    int64_t n = SIZES[k];
    cnp_array a = host_vec(CNP_INT32, n), b = host_vec(CNP_INT64, n), u = host_vec(CNP_UINT64, n);
    cnp_array r32 = host_vec(CNP_INT32, 1), r64 = host_vec(CNP_INT64, 1);
    cnp_array ru = host_vec(CNP_UINT64, 1), rc = host_vec(CNP_INT64, 1);
    int32_t *x = a.data;
    int64_t *y = b.data;
    uint64_t *z = u.data;
    for (int64_t i = 0; i < n; i++) {
      uint64_t r = rng_next(&seed);
      x[i] = (int32_t)(uint32_t)r;
      y[i] = (int64_t)(r >> 3) * (r & 1 ? -1 : 1);
      z[i] = r % 5 == 0 ? 0 : r;
    }
    uint32_t s32 = 0;
    uint64_t s64 = 0, su = 0;
    int32_t mn32 = INT32_MAX, mx32 = INT32_MIN;
    int64_t mn64 = INT64_MAX, mx64 = INT64_MIN, nz = 0;
    uint64_t mnu = UINT64_MAX, mxu = 0;
    for (int64_t i = 0; i < n; i++) {
      s32 += (uint32_t)x[i];
      s64 += (uint64_t)y[i];
      su += z[i];
      mn32 = x[i] < mn32 ? x[i] : mn32;
      mx32 = x[i] > mx32 ? x[i] : mx32;
      mn64 = y[i] < mn64 ? y[i] : mn64;
      mx64 = y[i] > mx64 ? y[i] : mx64;
      mnu = z[i] < mnu ? z[i] : mnu;
      mxu = z[i] > mxu ? z[i] : mxu;
      nz += z[i] != 0;
    }
#define RED(arr, op, out) cr_assert_eq(cnp_reduce(&arr, op, &out, NULL, NULL, NULL), CNP_OK, "%s", cnp_last_error())
    RED(a, CNP_REDUCE_SUM, r32);
    cr_assert_eq(*(int32_t *)r32.data, (int32_t)s32, "n %lld", (long long)n);
    RED(a, CNP_REDUCE_MIN, r32);
    cr_assert_eq(*(int32_t *)r32.data, mn32);
    RED(a, CNP_REDUCE_MAX, r32);
    cr_assert_eq(*(int32_t *)r32.data, mx32);
    RED(b, CNP_REDUCE_SUM, r64);
    cr_assert_eq(*(int64_t *)r64.data, (int64_t)s64);
    RED(b, CNP_REDUCE_MIN, r64);
    cr_assert_eq(*(int64_t *)r64.data, mn64);
    RED(b, CNP_REDUCE_MAX, r64);
    cr_assert_eq(*(int64_t *)r64.data, mx64);
    RED(u, CNP_REDUCE_SUM, ru);
    cr_assert_eq(*(uint64_t *)ru.data, su);
    RED(u, CNP_REDUCE_MIN, ru);
    cr_assert_eq(*(uint64_t *)ru.data, mnu);
    RED(u, CNP_REDUCE_MAX, ru);
    cr_assert_eq(*(uint64_t *)ru.data, mxu);
    RED(u, CNP_REDUCE_COUNT, rc);
    cr_assert_eq(*(int64_t *)rc.data, nz);
    cnp_array all[7] = {a, b, u, r32, r64, ru, rc};
    free_all(all, 7);
  }
}

Test(algo_reduce, floats_documented_order_nan_and_empty)
{
  uint64_t seed = 8;
  for (int k = 0; k < NSIZES; k++) {
    int64_t n = SIZES[k];
    cnp_array a = host_vec(CNP_FLOAT64, n), f = host_vec(CNP_FLOAT32, n);
    cnp_array r = host_vec(CNP_FLOAT64, 1), rf = host_vec(CNP_FLOAT32, 1);
    cnp_array rc = host_vec(CNP_INT64, 1);
    double *x = a.data, mn = INFINITY, mx = -INFINITY;
    float *xf = f.data;
    int64_t nz = 0;
    for (int64_t i = 0; i < n; i++) {
      x[i] = (rng_next(&seed) % 4 == 0) ? 0.0 : rng_unit(&seed) - 0.5;
      xf[i] = (float)((int)(rng_next(&seed) % 9) - 4);     /* exact float32 sums */
      mn = x[i] < mn ? x[i] : mn;
      mx = x[i] > mx ? x[i] : mx;
      nz += x[i] != 0;
    }
    RED(a, CNP_REDUCE_SUM, r);
    double want = doc_sum(x, n);
    cr_assert(memcmp(r.data, &want, 8) == 0, "n %lld: %.17g vs %.17g", (long long)n,
              *(double *)r.data, want);
    RED(a, CNP_REDUCE_MIN, r);
    cr_assert_eq(*(double *)r.data, mn);
    RED(a, CNP_REDUCE_MAX, r);
    cr_assert_eq(*(double *)r.data, mx);
    RED(a, CNP_REDUCE_COUNT, rc);
    cr_assert_eq(*(int64_t *)rc.data, nz);
    float sf = 0;
    for (int64_t i = 0; i < n; i++) sf += xf[i];
    RED(f, CNP_REDUCE_SUM, rf);
    cr_assert_eq(*(float *)rf.data, sf);
    if (n > 0) {                               /* NaN propagates, wherever it is */
      int was_nonzero = x[n / 2] != 0;
      x[n / 2] = NAN;
      RED(a, CNP_REDUCE_MIN, r);
      cr_assert(isnan(*(double *)r.data));
      RED(a, CNP_REDUCE_MAX, r);
      cr_assert(isnan(*(double *)r.data));
      RED(a, CNP_REDUCE_COUNT, rc);
      cr_assert_eq(*(int64_t *)rc.data, nz - was_nonzero + 1, "NaN counts as nonzero");
    }
    cnp_array all[5] = {a, f, r, rf, rc};
    free_all(all, 5);
  }
}

Test(algo_reduce, empty_gives_identities_and_bool_counts)
{
  cnp_array e = host_vec(CNP_FLOAT64, 0), ei = host_vec(CNP_INT32, 0);
  cnp_array r = host_vec(CNP_FLOAT64, 1), ri = host_vec(CNP_INT32, 1), rc = host_vec(CNP_INT64, 1);
  RED(e, CNP_REDUCE_SUM, r);
  cr_assert_eq(*(double *)r.data, 0.0);
  RED(e, CNP_REDUCE_MIN, r);
  cr_assert_eq(*(double *)r.data, INFINITY);
  RED(e, CNP_REDUCE_MAX, r);
  cr_assert_eq(*(double *)r.data, -INFINITY);
  RED(ei, CNP_REDUCE_MIN, ri);
  cr_assert_eq(*(int32_t *)ri.data, INT32_MAX);
  RED(ei, CNP_REDUCE_MAX, ri);
  cr_assert_eq(*(int32_t *)ri.data, INT32_MIN);
  RED(e, CNP_REDUCE_COUNT, rc);
  cr_assert_eq(*(int64_t *)rc.data, 0);
  cnp_array b = host_vec(CNP_BOOL, 70001);
  unsigned char *bd = b.data;
  int64_t want = 0;
  for (int64_t i = 0; i < 70001; i++) {
    bd[i] = (unsigned char)(i % 3 == 0 ? 0 : i % 5 == 0 ? 2 : 1);
    want += bd[i] != 0;
  }
  RED(b, CNP_REDUCE_COUNT, rc);
  cr_assert_eq(*(int64_t *)rc.data, want);
  /* float16: accumulates in float32, NaN propagates as 0x7e00 */
  cnp_array h = host_vec(CNP_FLOAT16, 3), rh = host_vec(CNP_FLOAT16, 1);
  uint16_t *hd = h.data;
  hd[0] = cnp_float_to_half(1.5f);
  hd[1] = cnp_float_to_half(-4.0f);
  hd[2] = cnp_float_to_half(0.25f);
  RED(h, CNP_REDUCE_SUM, rh);
  cr_assert_eq(*(uint16_t *)rh.data, cnp_float_to_half(-2.25f));
  RED(h, CNP_REDUCE_MIN, rh);
  cr_assert_eq(*(uint16_t *)rh.data, cnp_float_to_half(-4.0f));
  hd[1] = 0x7e01;
  RED(h, CNP_REDUCE_MAX, rh);
  cr_assert_eq(*(uint16_t *)rh.data, 0x7e00);
  cnp_array all[8] = {e, ei, r, ri, rc, b, h, rh};
  free_all(all, 8);
}

Test(algo_reduce, device_count_and_threads)
{
  const int64_t n = 500009;
  cnp_array a = host_vec(CNP_FLOAT64, n), r = host_vec(CNP_FLOAT64, 1);
  cnp_array cnt = host_vec(CNP_INT64, 1);
  double *x = a.data;
  uint64_t seed = 4;
  for (int64_t i = 0; i < n; i++) x[i] = rng_unit(&seed) * 2 - 1;
  double got[3];
  for (int t = 1; t <= 3; t++) {
    set_threads(t);
    RED(a, CNP_REDUCE_SUM, r);
    got[t - 1] = *(double *)r.data;
  }
  cr_assert(memcmp(&got[0], &got[1], 8) == 0 && memcmp(&got[0], &got[2], 8) == 0,
            "bit-identical for 1, 2 and 3 threads");
  double want = doc_sum(x, n);
  cr_assert(memcmp(&got[0], &want, 8) == 0);
  ((int64_t *)cnt.data)[0] = 1000;
  cr_assert_eq(cnp_reduce(&a, CNP_REDUCE_SUM, &r, &cnt, NULL, NULL), CNP_OK);
  want = doc_sum(x, 1000);
  cr_assert(memcmp(r.data, &want, 8) == 0);
  ((int64_t *)cnt.data)[0] = 0;
  cr_assert_eq(cnp_reduce(&a, CNP_REDUCE_MAX, &r, &cnt, NULL, NULL), CNP_OK);
  cr_assert_eq(*(double *)r.data, -INFINITY);
  ((int64_t *)cnt.data)[0] = -1;
  EXPECT_FAIL(cnp_reduce(&a, CNP_REDUCE_MAX, &r, &cnt, NULL, NULL), CNP_ERANGE,
              "cnp_reduce: count = -1 outside [0, N = 500009]");
  cnp_array all[3] = {a, r, cnt};
  free_all(all, 3);
}

Test(algo_reduce, errors)
{
  int64_t s22[2] = {2, 2};
  cnp_array a = host_vec(CNP_FLOAT64, 8), r = host_vec(CNP_FLOAT64, 1), r2 = host_vec(CNP_FLOAT64, 2);
  cnp_array b = host_vec(CNP_BOOL, 8), ri = host_vec(CNP_INT64, 1), m = host_array(CNP_FLOAT64, 2, s22, 'C');
  cnp_array rf = host_vec(CNP_FLOAT32, 1);
  EXPECT_FAIL(cnp_reduce(&a, (cnp_reduce_op)9, &r, NULL, NULL, NULL), CNP_EINVAL,
              "unknown reduction 9");
  EXPECT_FAIL(cnp_reduce(&a, CNP_REDUCE_SUM, NULL, NULL, NULL, NULL), CNP_EINVAL, "out is NULL");
  EXPECT_FAIL(cnp_reduce(&b, CNP_REDUCE_MIN, &r, NULL, NULL, NULL), CNP_EDTYPE,
              "in has unsupported dtype bool");
  EXPECT_FAIL(cnp_reduce(&a, CNP_REDUCE_SUM, &rf, NULL, NULL, NULL), CNP_EDTYPE,
              "out has unsupported dtype float32");
  EXPECT_FAIL(cnp_reduce(&a, CNP_REDUCE_COUNT, &r, NULL, NULL, NULL), CNP_EDTYPE,
              "out has unsupported dtype float64");
  EXPECT_FAIL(cnp_reduce(&a, CNP_REDUCE_SUM, &r2, NULL, NULL, NULL), CNP_ESHAPE,
              "out must hold 1 element (has 2)");
  EXPECT_FAIL(cnp_reduce(&m, CNP_REDUCE_SUM, &r, NULL, NULL, NULL), CNP_ESHAPE,
              "in must be 1-D");
  cnp_array inside = a;
  inside.shape[0] = 1;
  EXPECT_FAIL(cnp_reduce(&a, CNP_REDUCE_SUM, &inside, NULL, NULL, NULL), CNP_EALIAS,
              "out overlaps in");
  EXPECT_FAIL(cnp_reduce(&a, CNP_REDUCE_SUM, &r, &r, NULL, NULL), CNP_EDTYPE, "count");
  cr_assert_eq(cnp_reduce(&b, CNP_REDUCE_COUNT, &ri, NULL, NULL, NULL), CNP_OK);
  cnp_array all[7] = {a, r, r2, b, ri, m, rf};
  free_all(all, 7);
}
