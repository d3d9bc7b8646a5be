/*
** test_vectors_algo.c — the brief's "Algorithms" lines checked as an outside tester would:
** public headers only (cnp/cnp.h), host backend, small hand-made vectors with exact
** expected outputs. Complements test_brief.c (which has the basic cases) with every dtype
** and layout of the carried arrays, key extremes (INT64_MIN, INT32_MIN, UINT64_MAX), the
** first-error rules, the sum dtype rules checked bit for bit against a reference
** accumulation, empty inputs everywhere, and arguments on another backend.
*/
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cnp/cnp.h"
#include "test_blackbox.h"

static const cnp_dtype all_dtypes[] = {CNP_BOOL,    CNP_INT32,   CNP_INT64,
                                       CNP_UINT64,  CNP_FLOAT16, CNP_FLOAT32,
                                       CNP_FLOAT64, CNP_COMPLEX64, CNP_COMPLEX128};
#define N_DTYPES ((int)(sizeof all_dtypes / sizeof all_dtypes[0]))

static cnp_array alloc_nd(cnp_dtype t, int ndim, const int64_t *shape, cnp_order o)
{
  cnp_array a;
  OK(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, t, ndim, shape, o, 0));
  return a;
}

static cnp_array vec(cnp_dtype t, int64_t n) { return alloc_nd(t, 1, &n, CNP_ORDER_C); }

static cnp_workspace *host_ws(int64_t cap, int64_t key_limit, size_t row_bytes)
{
  cnp_workspace *ws = NULL;
  OK(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, cap, key_limit, row_bytes));
  return ws;
}

/* Element address from a multi-index (byte strides). */
static void *at(const cnp_array *a, const int64_t *idx)
{
  char *p = a->data;
  for (int d = 0; d < a->ndim; d++) p += idx[d] * a->strides[d];
  return p;
}

/* The value a test stores for (row r, component c): distinct, exact in every dtype
** (bool: parity of r + c; float16: small integers are exact). */
static void put(cnp_dtype t, void *p, int64_t r, int64_t c)
{
  int64_t v = r * 37 + c * 5 + 1;
  switch (t) {
  case CNP_BOOL: *(unsigned char *)p = (unsigned char)((r + c) & 1); break;
  case CNP_INT32: *(int32_t *)p = (int32_t)-v; break;
  case CNP_INT64: *(int64_t *)p = INT64_MIN + v; break;
  case CNP_UINT64: *(uint64_t *)p = UINT64_MAX - (uint64_t)v; break;
  case CNP_FLOAT16: *(uint16_t *)p = cnp_float_to_half((float)v); break;
  case CNP_FLOAT32: *(float *)p = (float)v + 0.25f; break;
  case CNP_FLOAT64: *(double *)p = (double)v + 0.125; break;
  case CNP_COMPLEX64: ((float *)p)[0] = (float)v; ((float *)p)[1] = (float)-v - 0.5f; break;
  case CNP_COMPLEX128: ((double *)p)[0] = (double)v; ((double *)p)[1] = -(double)v; break;
  default: cr_assert_fail("dtype");
  }
}

static int holds(cnp_dtype t, const void *p, int64_t r, int64_t c)
{
  unsigned char want[16];
  put(t, want, r, c);
  return memcmp(p, want, cnp_dtype_size(t)) == 0;
}

/* Fill every element of `a` (row axis `ax`) with put(row, flat component index). */
static void fill_rows(cnp_array *a, int ax)
{
  int64_t idx[CNP_MAX_DIMS] = {0};
  int64_t n = cnp_array_numel(a);
  for (int64_t e = 0; e < n; e++) {
    int64_t rem = e, comp = 0;
    for (int d = a->ndim - 1; d >= 0; d--) {
      idx[d] = rem % a->shape[d];
      rem /= a->shape[d];
    }
    for (int d = 0; d < a->ndim; d++)
      if (d != ax) comp = comp * a->shape[d] + idx[d];
    put(a->dtype, at(a, idx), idx[ax], comp);
  }
}

/* Check rows [0, n) of `a` hold the original rows src_row[j]. */
static void check_rows(const cnp_array *a, int ax, int64_t n, const int64_t *src_row,
                       const char *what)
{
  int64_t idx[CNP_MAX_DIMS] = {0};
  int64_t total = cnp_array_numel(a);
  for (int64_t e = 0; e < total; e++) {
    int64_t rem = e, comp = 0;
    for (int d = a->ndim - 1; d >= 0; d--) {
      idx[d] = rem % a->shape[d];
      rem /= a->shape[d];
    }
    if (idx[ax] >= n) continue;
    for (int d = 0; d < a->ndim; d++)
      if (d != ax) comp = comp * a->shape[d] + idx[d];
    cr_expect(holds(a->dtype, at(a, idx), src_row[idx[ax]], comp),
              "%s (%s, ndim %d, axis %d): row %lld comp %lld should be old row %lld", what,
              cnp_dtype_name(a->dtype), a->ndim, ax, (long long)idx[ax], (long long)comp,
              (long long)src_row[idx[ax]]);
  }
}

/* The layouts an outside tester tries for an array that travels with N rows. */
typedef struct layout {
  int ndim;
  int64_t shape[CNP_MAX_DIMS];   /* -1 stands for N */
  cnp_order order;
  int axis;
} layout;

static const layout layouts[] = {
    {1, {-1}, CNP_ORDER_C, 0},
    {2, {-1, 3}, CNP_ORDER_C, 0},
    {2, {-1, 3}, CNP_ORDER_F, 0},
    {2, {3, -1}, CNP_ORDER_C, 1},
    {2, {3, -1}, CNP_ORDER_F, 1},
    {2, {1, -1}, CNP_ORDER_C, 1},
    {3, {-1, 2, 2}, CNP_ORDER_C, 0},
    {3, {2, 2, -1}, CNP_ORDER_C, 2},
    {3, {-1, 2, 2}, CNP_ORDER_F, 0},
    {4, {2, 1, 2, -1}, CNP_ORDER_C, 3},
    {2, {-1, 21}, CNP_ORDER_C, 0},   /* rows wider than the workspace's row_bytes */
    {2, {21, -1}, CNP_ORDER_C, 1},
};
#define N_LAYOUTS ((int)(sizeof layouts / sizeof layouts[0]))

static cnp_array make_layout(const layout *l, cnp_dtype t, int64_t n)
{
  int64_t shape[CNP_MAX_DIMS];
  for (int d = 0; d < l->ndim; d++) shape[d] = l->shape[d] < 0 ? n : l->shape[d];
  return alloc_nd(t, l->ndim, shape, l->order);
}

/* ---- compact_by_mask ---------------------------------------------------------------- */

Test(vectors_compact, every_dtype_every_layout_one_call_each)
{
  enum { N = 9 };
  const unsigned char keep[N] = {1, 0, 0, 2, 1, 0, 255, 0, 1};
  const int64_t live[] = {0, 3, 4, 6, 8};
  cnp_array mask = vec(CNP_BOOL, N);
  memcpy(mask.data, keep, N);
  cnp_workspace *ws = host_ws(N, 0, 0);
  for (int di = 0; di < N_DTYPES; di++)
    for (int li = 0; li < N_LAYOUTS; li++) {
      cnp_array a = make_layout(&layouts[li], all_dtypes[di], N);
      fill_rows(&a, layouts[li].axis);
      int64_t n = -1;
      OK(cnp_compact_by_mask(&mask, &a, 1, &n, ws, NULL));
      cr_expect_eq(n, 5);
      check_rows(&a, layouts[li].axis, n, live, "compact");
      cnp_array_free(&a);
    }
  cnp_workspace_destroy(ws);
  cnp_array_free(&mask);
}

Test(vectors_compact, all_dtypes_and_layouts_in_one_call)
{
  enum { N = 11 };
  cnp_array mask = vec(CNP_BOOL, N);
  int64_t live[N], nl = 0;
  for (int i = 0; i < N; i++) {
    ((unsigned char *)mask.data)[i] = (unsigned char)(i % 3 != 1);
    if (i % 3 != 1) live[nl++] = i;
  }
  cnp_array arrs[N_DTYPES * 3];
  int axes[N_DTYPES * 3];
  int na = 0;
  for (int di = 0; di < N_DTYPES; di++)
    for (int li = 0; li < 3; li++) {
      const layout *l = &layouts[li == 0 ? 0 : li == 1 ? 2 : 4];
      arrs[na] = make_layout(l, all_dtypes[di], N);
      axes[na] = l->axis;
      fill_rows(&arrs[na], l->axis);
      na++;
    }
  cnp_workspace *ws = host_ws(N, 0, 8);
  int64_t n = -1;
  OK(cnp_compact_by_mask(&mask, arrs, na, &n, ws, NULL));
  cr_assert_eq(n, nl);
  for (int i = 0; i < na; i++) {
    check_rows(&arrs[i], axes[i], n, live, "compact (mixed call)");
    cnp_array_free(&arrs[i]);
  }
  cnp_workspace_destroy(ws);
  cnp_array_free(&mask);
}

Test(vectors_compact, empty_rows_every_layout)
{
  cnp_workspace *ws = host_ws(4, 0, 0);
  cnp_array mask = vec(CNP_BOOL, 0);
  for (int li = 0; li < N_LAYOUTS; li++) {
    cnp_array a = make_layout(&layouts[li], CNP_COMPLEX128, 0);
    int64_t n = -1;
    OK(cnp_compact_by_mask(&mask, &a, 1, &n, ws, NULL));
    cr_expect_eq(n, 0);
    cnp_array_free(&a);
  }
  /* A workspace of capacity 0 serves empty calls. */
  cnp_workspace *w0 = host_ws(0, 0, 0);
  int64_t n = -1;
  OK(cnp_compact_by_mask(&mask, NULL, 0, &n, w0, NULL));
  cr_expect_eq(n, 0);
  cnp_workspace_destroy(w0);
  cnp_workspace_destroy(ws);
  cnp_array_free(&mask);
}

Test(vectors_compact, every_row_kept_and_none_kept)
{
  enum { N = 5 };
  cnp_array mask = vec(CNP_BOOL, N);
  memset(mask.data, 1, N);
  int64_t shape[2] = {2, N};
  cnp_array v = alloc_nd(CNP_FLOAT16, 2, shape, CNP_ORDER_C);
  fill_rows(&v, 1);
  cnp_workspace *ws = host_ws(N, 0, 0);
  int64_t n = -1;
  OK(cnp_compact_by_mask(&mask, &v, 1, &n, ws, NULL));
  cr_expect_eq(n, N);
  const int64_t ident[N] = {0, 1, 2, 3, 4};
  check_rows(&v, 1, N, ident, "all kept");
  memset(mask.data, 0, N);
  OK(cnp_compact_by_mask(&mask, &v, 1, &n, ws, NULL));
  cr_expect_eq(n, 0);
  cnp_workspace_destroy(ws);
  cnp_array_free(&mask);
  cnp_array_free(&v);
}

Test(vectors_compact, mask_rejections)
{
  cnp_workspace *ws = host_ws(8, 0, 0);
  cnp_array x = vec(CNP_FLOAT64, 8), m8 = vec(CNP_UINT64, 8);
  int64_t n;
  /* A strided mask (every other byte of a 16-byte buffer) is not contiguous. */
  cnp_array buf = vec(CNP_BOOL, 16), sm;
  memcpy(&sm, &buf, sizeof sm);
  sm.shape[0] = 8;
  sm.strides[0] = 2;
  EXPECT_FAIL(cnp_compact_by_mask(&sm, &x, 1, &n, ws, NULL), CNP_ELAYOUT, "cnp_compact_by_mask");
  EXPECT_FAIL(cnp_compact_by_mask(&m8, &x, 1, &n, ws, NULL), CNP_EDTYPE, "cnp_compact_by_mask");
  cnp_array dmask = cuda_view(CNP_BOOL, 8);
  EXPECT_FAIL(cnp_compact_by_mask(&dmask, &x, 1, &n, ws, NULL), CNP_EDEVICE,
              "cnp_compact_by_mask");
  /* A (3, 5) array with N = 8 has no row axis. */
  int64_t sh[2] = {3, 5};
  cnp_array bad = alloc_nd(CNP_FLOAT64, 2, sh, CNP_ORDER_C);
  cnp_array mask = vec(CNP_BOOL, 8);
  EXPECT_FAIL(cnp_compact_by_mask(&mask, &bad, 1, &n, ws, NULL), CNP_ESHAPE, "cnp_compact_by_mask");
  /* A 0-d array is rejected. */
  cnp_array zd = alloc_nd(CNP_FLOAT64, 0, sh, CNP_ORDER_C);
  EXPECT_FAIL(cnp_compact_by_mask(&mask, &zd, 1, &n, ws, NULL), CNP_ESHAPE, "cnp_compact_by_mask");
  cnp_workspace_destroy(ws);
  cnp_array *all[] = {&x, &m8, &buf, &bad, &mask, &zd};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cnp_array_free(all[i]);
}

/* ---- sort_by_key -------------------------------------------------------------------- */

/* Reference: stable merge sort of row indices by key (as signed or unsigned). */
static int key_less(const void *keys, cnp_dtype t, int64_t a, int64_t b)
{
  if (t == CNP_INT32) return ((const int32_t *)keys)[a] < ((const int32_t *)keys)[b];
  if (t == CNP_INT64) return ((const int64_t *)keys)[a] < ((const int64_t *)keys)[b];
  return ((const uint64_t *)keys)[a] < ((const uint64_t *)keys)[b];
}

static void ref_order(const void *keys, cnp_dtype t, int64_t n, int64_t *order)
{
  int64_t *tmp = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  cr_assert(tmp);
  for (int64_t i = 0; i < n; i++) order[i] = i;
  for (int64_t w = 1; w < n; w *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * w) {
      int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) tmp[o++] = key_less(keys, t, order[j], order[i]) ? order[j++]
                                                                                 : order[i++];
      while (i < mid) tmp[o++] = order[i++];
      while (j < hi) tmp[o++] = order[j++];
    }
    memcpy(order, tmp, sizeof(int64_t) * (size_t)n);
  }
  free(tmp);
}

static void check_sorted(const cnp_array *keys, const void *orig, const int64_t *order,
                         const int64_t *want_order, int64_t n, const char *what)
{
  size_t isz = cnp_dtype_size(keys->dtype);
  for (int64_t i = 0; i < n; i++) {
    cr_expect_eq(order[i], want_order[i], "%s: order[%lld] = %lld, want %lld", what,
                 (long long)i, (long long)order[i], (long long)want_order[i]);
    cr_expect(memcmp((const char *)keys->data + i * isz,
                     (const char *)orig + want_order[i] * isz, isz) == 0,
              "%s: keys[%lld]", what, (long long)i);
  }
}

Test(vectors_sort, int64_extremes_stable)
{
  enum { N = 9 };
  const int64_t k0[N] = {INT64_MAX, INT64_MIN, 0, -1, INT64_MIN, INT64_MAX, 1, -1, INT64_MIN + 1};
  const int64_t want[N] = {1, 4, 8, 3, 7, 2, 6, 0, 5};
  cnp_array keys = vec(CNP_INT64, N), order = vec(CNP_INT64, N);
  cnp_workspace *ws = host_ws(N, 0, 0);
  memcpy(keys.data, k0, sizeof k0);
  OK(cnp_sort_by_key(&keys, &order, NULL, 0, 0, ws, NULL));
  check_sorted(&keys, k0, order.data, want, N, "int64 extremes");
  cnp_workspace_destroy(ws);
  cnp_array_free(&keys);
  cnp_array_free(&order);
}

Test(vectors_sort, int32_extremes_stable)
{
  enum { N = 8 };
  const int32_t k0[N] = {INT32_MAX, INT32_MIN, 5, -5, INT32_MIN, 5, INT32_MAX, 0};
  const int64_t want[N] = {1, 4, 3, 7, 2, 5, 0, 6};
  cnp_array keys = vec(CNP_INT32, N), order = vec(CNP_INT64, N);
  cnp_workspace *ws = host_ws(N, 0, 0);
  memcpy(keys.data, k0, sizeof k0);
  OK(cnp_sort_by_key(&keys, &order, NULL, 0, 0, ws, NULL));
  check_sorted(&keys, k0, order.data, want, N, "int32 extremes");
  cnp_workspace_destroy(ws);
  cnp_array_free(&keys);
  cnp_array_free(&order);
}

Test(vectors_sort, uint64_extremes_stable)
{
  enum { N = 8 };
  const uint64_t hi = UINT64_C(1) << 63;
  const uint64_t k0[N] = {UINT64_MAX, 0, UINT64_MAX, hi, hi - 1, 0, hi, 1};
  const int64_t want[N] = {1, 5, 7, 4, 3, 6, 0, 2};
  cnp_array keys = vec(CNP_UINT64, N), order = vec(CNP_INT64, N);
  cnp_workspace *ws = host_ws(N, 0, 0);
  memcpy(keys.data, k0, sizeof k0);
  OK(cnp_sort_by_key(&keys, &order, NULL, 0, 0, ws, NULL));
  check_sorted(&keys, k0, order.data, want, N, "uint64 extremes");
  cnp_workspace_destroy(ws);
  cnp_array_free(&keys);
  cnp_array_free(&order);
}

/* Values of every dtype and layout follow the keys; without `order` too. */
Test(vectors_sort, values_every_dtype_every_layout)
{
  enum { N = 10 };
  const int64_t k0[N] = {4, 1, 4, -3, 1, 0, 4, -3, 9, 1};
  int64_t want[N];
  ref_order(k0, CNP_INT64, N, want);
  cnp_array keys = vec(CNP_INT64, N), order = vec(CNP_INT64, N);
  cnp_workspace *ws = host_ws(N, 0, 0);
  for (int di = 0; di < N_DTYPES; di++)
    for (int li = 0; li < N_LAYOUTS; li++)
      for (int with_order = 0; with_order < 2; with_order++) {
        cnp_array a = make_layout(&layouts[li], all_dtypes[di], N);
        fill_rows(&a, layouts[li].axis);
        memcpy(keys.data, k0, sizeof k0);
        OK(cnp_sort_by_key(&keys, with_order ? &order : NULL, &a, 1, 0, ws, NULL));
        check_rows(&a, layouts[li].axis, N, want, "sort values");
        if (with_order)
          for (int i = 0; i < N; i++) cr_expect_eq(((int64_t *)order.data)[i], want[i]);
        cnp_array_free(&a);
      }
  cnp_workspace_destroy(ws);
  cnp_array_free(&keys);
  cnp_array_free(&order);
}

/* Random keys of every key dtype against a stable reference: few distinct keys, the full
** range (radix path, over 65536 distinct values), and with a key_limit. */
Test(vectors_sort, random_against_reference)
{
  enum { N = 3000 };
  const cnp_dtype kt[3] = {CNP_INT32, CNP_INT64, CNP_UINT64};
  uint64_t rng = 0x9e3779b97f4a7c15u;
  cnp_workspace *ws = host_ws(N, 0, 0);
  cnp_array order = vec(CNP_INT64, N), vals = vec(CNP_FLOAT64, N);
  int64_t *want = malloc(sizeof(int64_t) * N);
  char *orig = malloc(8 * N);
  for (int k = 0; k < 3; k++)
    for (int mode = 0; mode < 4; mode++) {
      cnp_array keys = vec(kt[k], N);
      size_t isz = cnp_dtype_size(kt[k]);
      for (int i = 0; i < N; i++) {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        uint64_t r = rng;
        if (mode == 0) r %= 5;                                  /* duplicates */
        else if (mode == 2) r = (r % 5) * (UINT64_MAX / 4);     /* spread, duplicates */
        else if (mode == 3) r %= 300;                           /* with a key_limit */
        if (kt[k] == CNP_INT32) {
          int32_t v = (int32_t)(uint32_t)(mode == 1 || mode == 2 ? (r >> 32) : r);
          memcpy((char *)keys.data + i * isz, &v, isz);
        } else {
          memcpy((char *)keys.data + i * isz, &r, isz);
        }
        ((double *)vals.data)[i] = i;
      }
      memcpy(orig, keys.data, isz * N);
      ref_order(orig, kt[k], N, want);
      int64_t limit = mode == 3 ? 300 : 0;
      OK(cnp_sort_by_key(&keys, &order, &vals, 1, limit, ws, NULL));
      check_sorted(&keys, orig, order.data, want, N, cnp_dtype_name(kt[k]));
      for (int i = 0; i < N; i++) cr_expect_eq(((double *)vals.data)[i], (double)want[i]);
      cnp_array_free(&keys);
    }
  free(want);
  free(orig);
  cnp_workspace_destroy(ws);
  cnp_array_free(&order);
  cnp_array_free(&vals);
}

Test(vectors_sort, key_limit_rejects_negative_and_limit_itself)
{
  cnp_workspace *ws = host_ws(8, 16, 0);
  const int32_t k32[4] = {3, -1, 2, 0};
  const uint64_t ku[4] = {3, 16, 2, 0};
  cnp_array a = vec(CNP_INT32, 4), b = vec(CNP_UINT64, 4), x = vec(CNP_FLOAT32, 4);
  memcpy(a.data, k32, sizeof k32);
  memcpy(b.data, ku, sizeof ku);
  for (int i = 0; i < 4; i++) ((float *)x.data)[i] = (float)i;
  EXPECT_FAIL(cnp_sort_by_key(&a, NULL, &x, 1, 16, ws, NULL), CNP_ERANGE, "-1");
  EXPECT_FAIL(cnp_sort_by_key(&b, NULL, &x, 1, 16, ws, NULL), CNP_ERANGE, "16");
  cr_expect_eq(memcmp(a.data, k32, sizeof k32), 0);
  cr_expect_eq(memcmp(b.data, ku, sizeof ku), 0);
  for (int i = 0; i < 4; i++) cr_expect_eq(((float *)x.data)[i], (float)i, "values unchanged");
  /* Every key just inside the limit: fine. */
  ((uint64_t *)b.data)[1] = 15;
  OK(cnp_sort_by_key(&b, NULL, &x, 1, 16, ws, NULL));
  const uint64_t wb[4] = {0, 2, 3, 15};
  const float wx[4] = {3, 2, 0, 1};
  for (int i = 0; i < 4; i++) {
    cr_expect_eq(((uint64_t *)b.data)[i], wb[i]);
    cr_expect_eq(((float *)x.data)[i], wx[i]);
  }
  /* n = 0 with values and order. */
  cnp_array k0 = vec(CNP_UINT64, 0), o0 = vec(CNP_INT64, 0), v0 = vec(CNP_COMPLEX64, 0);
  OK(cnp_sort_by_key(&k0, &o0, &v0, 1, 16, ws, NULL));
  cnp_workspace_destroy(ws);
  cnp_array *all[] = {&a, &b, &x, &k0, &o0, &v0};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cnp_array_free(all[i]);
}

Test(vectors_sort, layout_and_device_rejections)
{
  cnp_workspace *ws = host_ws(8, 0, 0);
  cnp_array keys = vec(CNP_INT64, 8), order = vec(CNP_INT64, 8), v = vec(CNP_FLOAT64, 8);
  /* 2-D keys, strided keys, a strided order, keys over capacity, keys on CUDA. */
  int64_t sh[2] = {8, 1};
  cnp_array k2 = alloc_nd(CNP_INT64, 2, sh, CNP_ORDER_C);
  EXPECT_FAIL(cnp_sort_by_key(&k2, NULL, NULL, 0, 0, ws, NULL), CNP_ESHAPE, "cnp_sort_by_key");
  cnp_array buf = vec(CNP_INT64, 16), sk = buf;
  sk.shape[0] = 8;
  sk.strides[0] = 16;
  EXPECT_FAIL(cnp_sort_by_key(&sk, NULL, NULL, 0, 0, ws, NULL), CNP_ELAYOUT, "cnp_sort_by_key");
  EXPECT_FAIL(cnp_sort_by_key(&keys, &sk, NULL, 0, 0, ws, NULL), CNP_ELAYOUT, "cnp_sort_by_key");
  cnp_array k9 = vec(CNP_INT64, 9);
  EXPECT_FAIL(cnp_sort_by_key(&k9, NULL, NULL, 0, 0, ws, NULL), CNP_EOVERFLOW, "cnp_sort_by_key");
  cnp_array dk = cuda_view(CNP_INT64, 8), dord = cuda_view(CNP_INT64, 8);
  EXPECT_FAIL(cnp_sort_by_key(&dk, NULL, NULL, 0, 0, ws, NULL), CNP_EDEVICE, "cnp_sort_by_key");
  EXPECT_FAIL(cnp_sort_by_key(&keys, &dord, &v, 1, 0, ws, NULL), CNP_EDEVICE, "cnp_sort_by_key");
  /* order overlapping a value; values overlapping each other. */
  cnp_array vo[1] = {order};
  EXPECT_FAIL(cnp_sort_by_key(&keys, &order, vo, 1, 0, ws, NULL), CNP_EALIAS, "cnp_sort_by_key");
  cnp_workspace_destroy(ws);
  cnp_array *all[] = {&keys, &order, &v, &k2, &buf, &k9};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cnp_array_free(all[i]);
}

/* ---- cell_offsets ------------------------------------------------------------------- */

Test(vectors_offsets, first_error_in_row_order)
{
  cnp_array cells = vec(CNP_INT64, 5), off = vec(CNP_INT64, 5);
  /* out of range at 1 comes before the descent at 2 */
  const int64_t a[5] = {0, 9, 1, 2, 3};
  memcpy(cells.data, a, sizeof a);
  EXPECT_FAIL(cnp_cell_offsets(&cells, 4, &off, NULL, NULL), CNP_ERANGE, "[1]");
  /* descent at 2 comes before the out of range at 4 */
  const int64_t b[5] = {0, 2, 1, 2, 7};
  memcpy(cells.data, b, sizeof b);
  EXPECT_FAIL(cnp_cell_offsets(&cells, 4, &off, NULL, NULL), CNP_EORDER, "index 2");
  /* INT64_MIN and INT64_MAX */
  const int64_t c[5] = {INT64_MIN, 0, 1, 2, 3};
  memcpy(cells.data, c, sizeof c);
  EXPECT_FAIL(cnp_cell_offsets(&cells, 4, &off, NULL, NULL), CNP_ERANGE, "[0]");
  const int64_t d[5] = {0, 1, 2, 3, INT64_MAX};
  memcpy(cells.data, d, sizeof d);
  EXPECT_FAIL(cnp_cell_offsets(&cells, 4, &off, NULL, NULL), CNP_ERANGE, "[4]");
  /* n_cells = 0 with rows: every id is out of range. */
  cnp_array one = vec(CNP_INT64, 1);
  const int64_t z[5] = {0, 0, 0, 0, 0};
  memcpy(cells.data, z, sizeof z);
  EXPECT_FAIL(cnp_cell_offsets(&cells, 0, &one, NULL, NULL), CNP_ERANGE, "[0]");
  /* int32 negative. */
  cnp_array c32 = vec(CNP_INT32, 3);
  const int32_t e[3] = {-2, -1, 0};
  memcpy(c32.data, e, sizeof e);
  EXPECT_FAIL(cnp_cell_offsets(&c32, 4, &off, NULL, NULL), CNP_ERANGE, "-2");
  cnp_array_free(&cells);
  cnp_array_free(&off);
  cnp_array_free(&one);
  cnp_array_free(&c32);
}

Test(vectors_offsets, all_rows_in_last_cell_and_argument_errors)
{
  const int64_t a[4] = {3, 3, 3, 3};
  cnp_array cells = vec(CNP_INT64, 4), off = vec(CNP_INT64, 5);
  memcpy(cells.data, a, sizeof a);
  OK(cnp_cell_offsets(&cells, 4, &off, NULL, NULL));
  const int64_t want[5] = {0, 0, 0, 0, 4};
  for (int k = 0; k < 5; k++) cr_expect_eq(((int64_t *)off.data)[k], want[k]);
  /* uint64 ids are not cell ids; a strided offsets array; offsets on CUDA. */
  cnp_array u = vec(CNP_UINT64, 4);
  EXPECT_FAIL(cnp_cell_offsets(&u, 4, &off, NULL, NULL), CNP_EDTYPE, "cnp_cell_offsets");
  cnp_array buf = vec(CNP_INT64, 10), so = buf;
  so.shape[0] = 5;
  so.strides[0] = 16;
  EXPECT_FAIL(cnp_cell_offsets(&cells, 4, &so, NULL, NULL), CNP_ELAYOUT, "cnp_cell_offsets");
  cnp_array doff = cuda_view(CNP_INT64, 5);
  EXPECT_FAIL(cnp_cell_offsets(&cells, 4, &doff, NULL, NULL), CNP_EDEVICE, "cnp_cell_offsets");
  cnp_array i32off = vec(CNP_INT32, 5);
  EXPECT_FAIL(cnp_cell_offsets(&cells, 4, &i32off, NULL, NULL), CNP_EDTYPE, "cnp_cell_offsets");
  cnp_array *all[] = {&cells, &off, &u, &buf, &i32off};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cnp_array_free(all[i]);
}

/* ---- segment_boundaries ------------------------------------------------------------- */

Test(vectors_boundaries, extremes_and_unsorted_runs)
{
  cnp_workspace *ws = host_ws(8, 0, 0);
  int64_t count = -1;
  const int64_t a[6] = {INT64_MIN, INT64_MIN, -1, 0, INT64_MAX, INT64_MAX};
  cnp_array keys = vec(CNP_INT64, 6), uk = vec(CNP_INT64, 6), st = vec(CNP_INT64, 6),
            sp = vec(CNP_INT64, 6);
  memcpy(keys.data, a, sizeof a);
  OK(cnp_segment_boundaries(&keys, &uk, &st, &sp, &count, ws, NULL));
  cr_assert_eq(count, 4);
  const int64_t wu[4] = {INT64_MIN, -1, 0, INT64_MAX}, w0[4] = {0, 2, 3, 4},
                w1[4] = {2, 3, 4, 6};
  for (int j = 0; j < 4; j++) {
    cr_expect_eq(((int64_t *)uk.data)[j], wu[j]);
    cr_expect_eq(((int64_t *)st.data)[j], w0[j]);
    cr_expect_eq(((int64_t *)sp.data)[j], w1[j]);
  }
  /* Unsorted input: each maximal run is a segment. */
  const int32_t b[6] = {1, 1, 0, 0, 1, INT32_MIN};
  cnp_array k32 = vec(CNP_INT32, 6), u32 = vec(CNP_INT32, 8);   /* room > N is fine */
  memcpy(k32.data, b, sizeof b);
  OK(cnp_segment_boundaries(&k32, &u32, &st, &sp, &count, ws, NULL));
  cr_assert_eq(count, 4);
  const int32_t wu32[4] = {1, 0, 1, INT32_MIN};
  const int64_t ws0[4] = {0, 2, 4, 5}, ws1[4] = {2, 4, 5, 6};
  for (int j = 0; j < 4; j++) {
    cr_expect_eq(((int32_t *)u32.data)[j], wu32[j]);
    cr_expect_eq(((int64_t *)st.data)[j], ws0[j]);
    cr_expect_eq(((int64_t *)sp.data)[j], ws1[j]);
  }
  /* uint64 Morton keys with the top bit set, every key distinct; all equal. */
  const uint64_t m[5] = {0, UINT64_C(0x7fffffffffffffff), UINT64_C(0x8000000000000000),
                         UINT64_C(0xc000000000000000), UINT64_MAX};
  cnp_array mk = vec(CNP_UINT64, 5), mu = vec(CNP_UINT64, 5);
  memcpy(mk.data, m, sizeof m);
  OK(cnp_segment_boundaries(&mk, &mu, &st, &sp, &count, ws, NULL));
  cr_assert_eq(count, 5);
  for (int j = 0; j < 5; j++) {
    cr_expect_eq(((uint64_t *)mu.data)[j], m[j]);
    cr_expect_eq(((int64_t *)st.data)[j], j);
    cr_expect_eq(((int64_t *)sp.data)[j], j + 1);
  }
  for (int j = 0; j < 5; j++) ((uint64_t *)mk.data)[j] = UINT64_MAX;
  OK(cnp_segment_boundaries(&mk, &mu, &st, &sp, &count, ws, NULL));
  cr_assert_eq(count, 1);
  cr_expect_eq(((uint64_t *)mu.data)[0], UINT64_MAX);
  cr_expect_eq(((int64_t *)st.data)[0], 0);
  cr_expect_eq(((int64_t *)sp.data)[0], 5);
  /* starts of the wrong dtype, keys on CUDA, float keys. */
  cnp_array st32 = vec(CNP_INT32, 6), fk = vec(CNP_FLOAT64, 6);
  EXPECT_FAIL(cnp_segment_boundaries(&keys, NULL, &st32, NULL, &count, ws, NULL), CNP_EDTYPE,
              "cnp_segment_boundaries");
  EXPECT_FAIL(cnp_segment_boundaries(&fk, NULL, NULL, NULL, &count, ws, NULL), CNP_EDTYPE,
              "cnp_segment_boundaries");
  cnp_array dk = cuda_view(CNP_INT64, 6);
  EXPECT_FAIL(cnp_segment_boundaries(&dk, NULL, NULL, NULL, &count, ws, NULL), CNP_EDEVICE,
              "cnp_segment_boundaries");
  cnp_array dst = cuda_view(CNP_INT64, 6);
  EXPECT_FAIL(cnp_segment_boundaries(&keys, NULL, &dst, NULL, &count, ws, NULL), CNP_EDEVICE,
              "cnp_segment_boundaries");
  cnp_workspace_destroy(ws);
  cnp_array *all[] = {&keys, &uk, &st, &sp, &k32, &u32, &mk, &mu, &st32, &fk};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cnp_array_free(all[i]);
}

/* ---- segment plans and sums --------------------------------------------------------- */

/* Reference accumulation of component c of segment s, in row order: double for
** float64/integer/bool, float for float32/float16 (then rounded to half). */
static double ref_sum_d(cnp_dtype t, const void *vals, const int64_t *keys, int64_t n,
                        int64_t k, int64_t s, int64_t c)
{
  double acc = 0.0;
  for (int64_t i = 0; i < n; i++) {
    if (keys[i] != s) continue;
    int64_t e = i * k + c;
    switch (t) {
    case CNP_BOOL: acc += ((const unsigned char *)vals)[e] ? 1.0 : 0.0; break;
    case CNP_INT32: acc += (double)((const int32_t *)vals)[e]; break;
    case CNP_INT64: acc += (double)((const int64_t *)vals)[e]; break;
    case CNP_UINT64: acc += (double)((const uint64_t *)vals)[e]; break;
    case CNP_FLOAT64: acc += ((const double *)vals)[e]; break;
    case CNP_COMPLEX128: acc += ((const double *)vals)[e]; break;   /* c indexes scalars */
    default: cr_assert_fail("ref_sum_d dtype");
    }
  }
  return acc;
}

static float ref_sum_f(cnp_dtype t, const void *vals, const int64_t *keys, int64_t n,
                       int64_t k, int64_t s, int64_t c)
{
  float acc = 0.0f;
  for (int64_t i = 0; i < n; i++) {
    if (keys[i] != s) continue;
    int64_t e = i * k + c;
    if (t == CNP_FLOAT16) acc += cnp_half_to_float(((const uint16_t *)vals)[e]);
    else acc += ((const float *)vals)[e];
  }
  return acc;
}

/* Every value dtype, with component dims, against a row-order reference bit for bit
** (row-order is what the docs promise below 32768 rows). */
Test(vectors_plan, every_dtype_exact_with_components)
{
  enum { N = 13, S = 4, K1 = 2, K2 = 3 };
  const int64_t keys0[N] = {3, -1, 0, 3, 2, -5, 0, 0, 3, INT64_MIN, 2, 3, 0};
  cnp_array keys = vec(CNP_INT64, N);
  memcpy(keys.data, keys0, sizeof keys0);
  cnp_segment_plan *p = NULL;
  OK(cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, N, S));
  OK(cnp_segment_plan_build(p, &keys, NULL));
  int64_t kept = -1, rows = -1;
  OK(cnp_segment_plan_rows(p, &kept, &rows));
  cr_expect_eq(kept, 10);
  cr_expect_eq(rows, N);
  for (int di = 0; di < N_DTYPES; di++) {
    cnp_dtype t = all_dtypes[di], ot = cnp_segment_sum_dtype(t);
    int64_t vshape[3] = {N, K1, K2}, oshape[3] = {S, K1, K2};
    for (int nd = 1; nd <= 3; nd++) {
      cnp_array v = alloc_nd(t, nd, vshape, CNP_ORDER_C);
      cnp_array out = alloc_nd(ot, nd, oshape, CNP_ORDER_C);
      int64_t k = cnp_array_numel(&v) / N;
      /* values: signed, fractional where the dtype allows, varying by row and component */
      for (int64_t i = 0; i < N; i++)
        for (int64_t c = 0; c < k; c++) {
          int64_t e = i * k + c;
          double x = (double)((i * 7 + c * 3) % 11) - 5.0;
          switch (t) {
          case CNP_BOOL: ((unsigned char *)v.data)[e] = (unsigned char)((i + c) % 3 == 0); break;
          case CNP_INT32: ((int32_t *)v.data)[e] = (int32_t)(x * 1000003); break;
          case CNP_INT64: ((int64_t *)v.data)[e] = (int64_t)x * (INT64_C(1) << 50); break;
          case CNP_UINT64: ((uint64_t *)v.data)[e] = (uint64_t)(x + 5.0) << 60; break;
          case CNP_FLOAT16: ((uint16_t *)v.data)[e] = cnp_float_to_half((float)(x * 0.1)); break;
          case CNP_FLOAT32: ((float *)v.data)[e] = (float)(x * 0.1); break;
          case CNP_FLOAT64: ((double *)v.data)[e] = x * 0.1; break;
          case CNP_COMPLEX64:
            ((float *)v.data)[2 * e] = (float)(x * 0.1);
            ((float *)v.data)[2 * e + 1] = (float)(x * -0.3);
            break;
          case CNP_COMPLEX128:
            ((double *)v.data)[2 * e] = x * 0.1;
            ((double *)v.data)[2 * e + 1] = x * -0.3;
            break;
          default: break;
          }
        }
      memset(out.data, 0x5a, cnp_array_nbytes(&out));      /* overwritten, not added to */
      OK(cnp_segment_plan_sum(p, &v, &out, NULL));
      for (int64_t s = 0; s < S; s++)
        for (int64_t c = 0; c < k; c++) {
          int64_t e = s * k + c;
          if (t == CNP_FLOAT16) {
            uint16_t want = cnp_float_to_half(ref_sum_f(t, v.data, keys0, N, k, s, c));
            cr_expect_eq(((uint16_t *)out.data)[e], want, "f16 out[%lld,%lld]", (long long)s,
                         (long long)c);
          } else if (t == CNP_FLOAT32) {
            float want = ref_sum_f(t, v.data, keys0, N, k, s, c);
            cr_expect_eq(((float *)out.data)[e], want, "f32 out[%lld,%lld]", (long long)s,
                         (long long)c);
          } else if (t == CNP_COMPLEX64) {
            for (int r = 0; r < 2; r++) {
              float want = ref_sum_f(CNP_FLOAT32, v.data, keys0, N, 2 * k, s, 2 * c + r);
              cr_expect_eq(((float *)out.data)[2 * e + r], want, "c64 out[%lld,%lld].%d",
                           (long long)s, (long long)c, r);
            }
          } else if (t == CNP_COMPLEX128) {
            for (int r = 0; r < 2; r++) {
              double want = ref_sum_d(t, v.data, keys0, N, 2 * k, s, 2 * c + r);
              cr_expect_eq(((double *)out.data)[2 * e + r], want, "c128 out[%lld,%lld].%d",
                           (long long)s, (long long)c, r);
            }
          } else {
            double want = ref_sum_d(t, v.data, keys0, N, k, s, c);
            cr_expect_eq(((double *)out.data)[e], want, "%s out[%lld,%lld] = %.17g, want %.17g",
                         cnp_dtype_name(t), (long long)s, (long long)c,
                         ((double *)out.data)[e], want);
          }
        }
      /* The one-off form gives the same bytes. */
      cnp_array out2 = alloc_nd(ot, nd, oshape, CNP_ORDER_C);
      OK(cnp_segment_sum(&v, &keys, S, &out2, NULL));
      cr_expect_eq(memcmp(out.data, out2.data, cnp_array_nbytes(&out)), 0, "%s one-off",
                   cnp_dtype_name(t));
      cnp_array_free(&v);
      cnp_array_free(&out);
      cnp_array_free(&out2);
    }
  }
  OK(cnp_segment_plan_destroy(p));
  cnp_array_free(&keys);
}

Test(vectors_plan, int32_keys_and_rebuild)
{
  enum { N = 6, S = 3 };
  const int32_t k0[N] = {INT32_MIN, 2, -1, 2, 0, 1};
  cnp_array keys = vec(CNP_INT32, N), v = vec(CNP_FLOAT64, N), out = vec(CNP_FLOAT64, S);
  memcpy(keys.data, k0, sizeof k0);
  for (int i = 0; i < N; i++) ((double *)v.data)[i] = 1 << i;
  cnp_segment_plan *p = NULL;
  OK(cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, N, S));
  OK(cnp_segment_plan_build(p, &keys, NULL));
  OK(cnp_segment_plan_sum(p, &v, &out, NULL));
  const double want[S] = {16, 32, 2 + 8};
  for (int s = 0; s < S; s++) cr_expect_eq(((double *)out.data)[s], want[s]);
  /* A failed build leaves the plan unbuilt; a good one rebuilds it, with fewer rows. */
  ((int32_t *)keys.data)[3] = INT32_MAX;
  EXPECT_FAIL(cnp_segment_plan_build(p, &keys, NULL), CNP_ERANGE, "[3]");
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v, &out, NULL), CNP_ESTATE, "cnp_segment_plan_sum");
  cnp_array k3, v3;
  OK(cnp_array_slice(&k3, &keys, 0, 0, 3));
  OK(cnp_array_slice(&v3, &v, 0, 0, 3));
  OK(cnp_segment_plan_build(p, &k3, NULL));
  OK(cnp_segment_plan_sum(p, &v3, &out, NULL));
  const double want3[S] = {0, 0, 2};
  for (int s = 0; s < S; s++) cr_expect_eq(((double *)out.data)[s], want3[s]);
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v, &out, NULL), CNP_ESHAPE, "cnp_segment_plan_sum");
  /* uint64 keys are not plan keys. */
  cnp_array uk = vec(CNP_UINT64, N);
  EXPECT_FAIL(cnp_segment_plan_build(p, &uk, NULL), CNP_EDTYPE, "cnp_segment_plan_build");
  cnp_array dk = cuda_view(CNP_INT32, N);
  EXPECT_FAIL(cnp_segment_plan_build(p, &dk, NULL), CNP_EDEVICE, "cnp_segment_plan_build");
  OK(cnp_segment_plan_destroy(p));
  cnp_array *all[] = {&keys, &v, &out, &uk};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cnp_array_free(all[i]);
}

Test(vectors_plan, out_shape_layout_alias_rules)
{
  enum { N = 6, S = 3 };
  cnp_array keys = vec(CNP_INT64, N);
  for (int i = 0; i < N; i++) ((int64_t *)keys.data)[i] = i % S;
  cnp_segment_plan *p = NULL;
  OK(cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, N, S));
  OK(cnp_segment_plan_build(p, &keys, NULL));
  int64_t vs[2] = {N, 2}, os[2] = {S, 2}, os3[2] = {S, 3}, ost[2] = {2, S};
  cnp_array v = alloc_nd(CNP_FLOAT32, 2, vs, CNP_ORDER_C);
  cnp_array vf = alloc_nd(CNP_FLOAT32, 2, vs, CNP_ORDER_F);
  cnp_array out = alloc_nd(CNP_FLOAT32, 2, os, CNP_ORDER_C);
  cnp_array outf = alloc_nd(CNP_FLOAT32, 2, os, CNP_ORDER_F);
  cnp_array out3 = alloc_nd(CNP_FLOAT32, 2, os3, CNP_ORDER_C);
  cnp_array outt = alloc_nd(CNP_FLOAT32, 2, ost, CNP_ORDER_C);
  cnp_array out1 = vec(CNP_FLOAT32, S);
  for (int i = 0; i < 2 * N; i++) ((float *)v.data)[i] = (float)i;
  OK(cnp_segment_plan_sum(p, &v, &out, NULL));
  const float want[S * 2] = {0 + 6, 1 + 7, 2 + 8, 3 + 9, 4 + 10, 5 + 11};
  for (int j = 0; j < 2 * S; j++) cr_expect_eq(((float *)out.data)[j], want[j]);
  EXPECT_FAIL(cnp_segment_plan_sum(p, &vf, &out, NULL), CNP_ELAYOUT, "cnp_segment_plan_sum");
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v, &outf, NULL), CNP_ELAYOUT, "cnp_segment_plan_sum");
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v, &out3, NULL), CNP_ESHAPE, "cnp_segment_plan_sum");
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v, &outt, NULL), CNP_ESHAPE, "cnp_segment_plan_sum");
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v, &out1, NULL), CNP_ESHAPE, "cnp_segment_plan_sum");
  /* out is values itself; out a partly overlapping view of values' buffer. */
  cnp_array big = vec(CNP_FLOAT64, 2 * N), vv, oo;
  OK(cnp_array_slice(&vv, &big, 0, 0, N));
  OK(cnp_array_slice(&oo, &big, 0, N - 1, N - 1 + S));
  EXPECT_FAIL(cnp_segment_plan_sum(p, &vv, &oo, NULL), CNP_EALIAS, "cnp_segment_plan_sum");
  cnp_segment_plan *p6 = NULL;
  OK(cnp_segment_plan_create(&p6, CNP_BACKEND_HOST, 0, N, N));
  OK(cnp_segment_plan_build(p6, &keys, NULL));
  EXPECT_FAIL(cnp_segment_plan_sum(p6, &vv, &vv, NULL), CNP_EALIAS, "cnp_segment_plan_sum");
  /* Adjacent, not overlapping: fine. */
  cnp_array adj;
  OK(cnp_array_slice(&adj, &big, 0, N, N + N));
  OK(cnp_segment_plan_sum(p6, &vv, &adj, NULL));
  /* values on CUDA. */
  cnp_array dv = cuda_view(CNP_FLOAT64, N);
  cnp_array o64 = vec(CNP_FLOAT64, S);
  EXPECT_FAIL(cnp_segment_plan_sum(p, &dv, &o64, NULL), CNP_EDEVICE, "cnp_segment_plan_sum");
  OK(cnp_segment_plan_destroy(p6));
  OK(cnp_segment_plan_destroy(p));
  cnp_array *all[] = {&keys, &v, &vf, &out, &outf, &out3, &outt, &out1, &big, &o64};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cnp_array_free(all[i]);
}

Test(vectors_plan, one_off_sum_edges)
{
  enum { S = 3 };
  cnp_array k0 = vec(CNP_INT64, 0), v0 = vec(CNP_INT32, 0), out = vec(CNP_FLOAT64, S);
  for (int s = 0; s < S; s++) ((double *)out.data)[s] = 7.0;
  OK(cnp_segment_sum(&v0, &k0, S, &out, NULL));
  for (int s = 0; s < S; s++) cr_expect_eq(((double *)out.data)[s], 0.0, "no rows: zeros");
  /* Every key negative: zeros too. */
  cnp_array k = vec(CNP_INT64, 4), v = vec(CNP_INT32, 4);
  for (int i = 0; i < 4; i++) {
    ((int64_t *)k.data)[i] = -1 - i;
    ((int32_t *)v.data)[i] = 100;
  }
  for (int s = 0; s < S; s++) ((double *)out.data)[s] = 7.0;
  OK(cnp_segment_sum(&v, &k, S, &out, NULL));
  for (int s = 0; s < S; s++) cr_expect_eq(((double *)out.data)[s], 0.0, "all dropped: zeros");
  /* Errors: key too large, rows disagree, negative n_segments, int32 out for int values. */
  ((int64_t *)k.data)[2] = S;
  EXPECT_FAIL(cnp_segment_sum(&v, &k, S, &out, NULL), CNP_ERANGE, "cnp_segment_sum");
  ((int64_t *)k.data)[2] = 0;
  cnp_array v5 = vec(CNP_INT32, 5), oi = vec(CNP_INT32, S);
  EXPECT_FAIL(cnp_segment_sum(&v5, &k, S, &out, NULL), CNP_ESHAPE, "cnp_segment_sum");
  EXPECT_FAIL(cnp_segment_sum(&v, &k, -1, &out, NULL), CNP_EINVAL, "cnp_segment_sum");
  EXPECT_FAIL(cnp_segment_sum(&v, &k, S, &oi, NULL), CNP_EDTYPE, "cnp_segment_sum");
  EXPECT_FAIL(cnp_segment_sum(NULL, &k, S, &out, NULL), CNP_EINVAL, "cnp_segment_sum");
  EXPECT_FAIL(cnp_segment_sum(&v, NULL, S, &out, NULL), CNP_EINVAL, "cnp_segment_sum");
  EXPECT_FAIL(cnp_segment_sum(&v, &k, S, NULL, NULL), CNP_EINVAL, "cnp_segment_sum");
  cnp_array dk = cuda_view(CNP_INT64, 4);
  EXPECT_FAIL(cnp_segment_sum(&v, &dk, S, &out, NULL), CNP_EDEVICE, "cnp_segment_sum");
  cnp_array *all[] = {&k0, &v0, &out, &k, &v, &v5, &oi};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cnp_array_free(all[i]);
}

/* Creating algorithm objects for CUDA in a build or on a machine without it fails
** cleanly with a reason, and leaves the output NULL. */
Test(vectors_backend, cuda_objects_without_cuda)
{
  if (cnp_cuda_available(NULL)) cr_skip_test("a CUDA device is usable here");
#ifdef CNP_HAVE_CUDA
  const cnp_status want = CNP_EUNAVAILABLE;        /* with the cached reason */
#else
  const cnp_status want = CNP_EUNSUPPORTED;        /* built without CUDA */
#endif
  const char *reason = NULL;
  cnp_cuda_available(&reason);
  cr_assert(reason != NULL);
  cnp_workspace *ws = (cnp_workspace *)(uintptr_t)1;
  EXPECT_FAIL(cnp_workspace_create(&ws, CNP_BACKEND_CUDA, 0, 16, 0, 0), want,
              "cnp_workspace_create");
  cr_expect_null(ws);
  cnp_segment_plan *p = (cnp_segment_plan *)(uintptr_t)1;
  EXPECT_FAIL(cnp_segment_plan_create(&p, CNP_BACKEND_CUDA, 0, 16, 4), want,
              "cnp_segment_plan_create");
  cr_expect_null(p);
#ifdef CNP_HAVE_CUDA
  EXPECT_FAIL(cnp_segment_plan_create(&p, CNP_BACKEND_CUDA, 0, 16, 4), want, reason);
#endif
  /* cell_offsets needs no workspace: CUDA views reach the CUDA backend itself. */
  cnp_array dc = cuda_view(CNP_INT64, 4), doff = cuda_view(CNP_INT64, 3);
  doff.data = (void *)(uintptr_t)0x200000;
  EXPECT_FAIL(cnp_cell_offsets(&dc, 2, &doff, NULL, NULL), want, "cnp_cell_offsets");
  cnp_status st;
  /* The one-off sum on CUDA views: rejected before any data is touched. */
  cnp_array dv = cuda_view(CNP_FLOAT64, 4), dk = cuda_view(CNP_INT64, 4),
            dout = cuda_view(CNP_FLOAT64, 2);
  st = cnp_segment_sum(&dv, &dk, 2, &dout, NULL);
  cr_expect(st == CNP_EUNAVAILABLE || st == CNP_EUNSUPPORTED || st == CNP_EDEVICE, "got %s",
            cnp_status_name(st));
}

/* ---- larger random vectors (past the 32768-row threshold of the threaded paths) ------ */

static uint64_t rng_next(uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

Test(vectors_large, compact_and_sort_every_dtype_against_reference)
{
  enum { N = 40000 };
  uint64_t rng = 12345;
  cnp_array mask = vec(CNP_BOOL, N), keys = vec(CNP_INT64, N), order = vec(CNP_INT64, N);
  int64_t *live = malloc(sizeof(int64_t) * N), *want = malloc(sizeof(int64_t) * N);
  int64_t *k0 = malloc(sizeof(int64_t) * N);
  cr_assert(live && want && k0);
  int64_t nl = 0;
  for (int64_t i = 0; i < N; i++) {
    int on = rng_next(&rng) % 3 != 0;
    ((unsigned char *)mask.data)[i] = (unsigned char)(on ? 1 + i % 200 : 0);
    if (on) live[nl++] = i;
    k0[i] = (int64_t)(rng_next(&rng) % 2001) - 1000;
  }
  ref_order(k0, CNP_INT64, N, want);
  const int pick[4] = {0, 2, 3, 7};           /* (N,), (N,3) F, (3,N) C, (2,2,N) C */
  cnp_workspace *ws = host_ws(N, 0, 0);
  for (int di = 0; di < N_DTYPES; di++)
    for (int pi = 0; pi < 4; pi++) {
      const layout *l = &layouts[pick[pi]];
      cnp_array a = make_layout(l, all_dtypes[di], N);
      fill_rows(&a, l->axis);
      int64_t n = -1;
      OK(cnp_compact_by_mask(&mask, &a, 1, &n, ws, NULL));
      cr_assert_eq(n, nl);
      check_rows(&a, l->axis, n, live, "large compact");
      fill_rows(&a, l->axis);
      memcpy(keys.data, k0, sizeof(int64_t) * N);
      OK(cnp_sort_by_key(&keys, &order, &a, 1, 0, ws, NULL));
      check_rows(&a, l->axis, N, want, "large sort");
      cr_assert_eq(memcmp(order.data, want, sizeof(int64_t) * N), 0, "large sort order");
      cnp_array_free(&a);
    }
  free(live);
  free(want);
  free(k0);
  cnp_workspace_destroy(ws);
  cnp_array_free(&mask);
  cnp_array_free(&keys);
  cnp_array_free(&order);
}

/* Integer-valued floats: every order of addition gives the exact sum, so the threaded
** paths can be compared with a reference bit for bit. */
Test(vectors_large, segment_sums_exact_every_dtype)
{
  enum { N = 50000, S = 37 };
  uint64_t rng = 777;
  cnp_array keys = vec(CNP_INT32, N);
  int64_t *k64 = malloc(sizeof(int64_t) * N);
  cr_assert(k64);
  for (int64_t i = 0; i < N; i++) {
    int32_t k = (int32_t)(rng_next(&rng) % (S + 5)) - 5;     /* some negative: dropped */
    ((int32_t *)keys.data)[i] = k;
    k64[i] = k;
  }
  cnp_segment_plan *p = NULL;
  OK(cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, N, S));
  OK(cnp_segment_plan_build(p, &keys, NULL));
  for (int run = 0; run < 3 * N_DTYPES; run++) {
    static const int64_t ks[3] = {1, 3, 5};            /* up to 10 scalars a row (complex) */
    const int64_t K = ks[run / N_DTYPES];
    cnp_dtype t = all_dtypes[run % N_DTYPES];
    int64_t vs[2] = {N, K}, os[2] = {S, K};
    cnp_array v = alloc_nd(t, 2, vs, CNP_ORDER_C), out = alloc_nd(cnp_segment_sum_dtype(t), 2,
                                                                    os, CNP_ORDER_C);
    int scal = (t == CNP_COMPLEX64 || t == CNP_COMPLEX128) ? 2 : 1;
    for (int64_t e = 0; e < N * K * scal; e++) {
      int64_t x = (int64_t)(rng_next(&rng) % 9) - 4;
      switch (t) {
      case CNP_BOOL: ((unsigned char *)v.data)[e] = (unsigned char)(x > 0); break;
      case CNP_INT32: ((int32_t *)v.data)[e] = (int32_t)x; break;
      case CNP_INT64: ((int64_t *)v.data)[e] = x; break;
      case CNP_UINT64: ((uint64_t *)v.data)[e] = (uint64_t)(x + 4); break;
      case CNP_FLOAT16: ((uint16_t *)v.data)[e] = cnp_float_to_half((float)x); break;
      case CNP_FLOAT32: case CNP_COMPLEX64: ((float *)v.data)[e] = (float)x; break;
      default: ((double *)v.data)[e] = (double)x; break;
      }
    }
    OK(cnp_segment_plan_sum(p, &v, &out, NULL));
    for (int64_t s = 0; s < S; s++)
      for (int64_t c = 0; c < K * scal; c++) {
        double want = 0.0;
        for (int64_t i = 0; i < N; i++) {
          if (k64[i] != s) continue;
          int64_t e = i * K * scal + c;
          switch (t) {
          case CNP_BOOL: want += ((unsigned char *)v.data)[e]; break;
          case CNP_INT32: want += ((int32_t *)v.data)[e]; break;
          case CNP_INT64: want += (double)((int64_t *)v.data)[e]; break;
          case CNP_UINT64: want += (double)((uint64_t *)v.data)[e]; break;
          case CNP_FLOAT16: want += cnp_half_to_float(((uint16_t *)v.data)[e]); break;
          case CNP_FLOAT32: case CNP_COMPLEX64: want += ((float *)v.data)[e]; break;
          default: want += ((double *)v.data)[e]; break;
          }
        }
        int64_t e = s * K * scal + c;
        double got;
        switch (cnp_segment_sum_dtype(t)) {
        case CNP_FLOAT16:
          got = cnp_half_to_float(((uint16_t *)out.data)[e]);
          want = cnp_half_to_float(cnp_float_to_half((float)want));
          break;
        case CNP_FLOAT32: case CNP_COMPLEX64: got = ((float *)out.data)[e]; break;
        default: got = ((double *)out.data)[e]; break;
        }
        cr_expect_eq(got, want, "%s out[%lld].%lld = %g, want %g", cnp_dtype_name(t),
                     (long long)s, (long long)c, got, want);
      }
    cnp_array_free(&v);
    cnp_array_free(&out);
  }
  free(k64);
  OK(cnp_segment_plan_destroy(p));
  cnp_array_free(&keys);
}

/* ---- the error messages the docs quote (docs/algorithms.md, docs/runtime.md) --------- */

Test(vectors_docs, quoted_messages_are_what_the_calls_say)
{
  /* "cnp_cell_offsets: sorted_cells not sorted at index 3 (2 after 3)" */
  const int64_t unsorted[5] = {0, 1, 3, 2, 3};
  cnp_array cells = vec(CNP_INT64, 5), off = vec(CNP_INT64, 5);
  memcpy(cells.data, unsorted, sizeof unsorted);
  EXPECT_FAIL(cnp_cell_offsets(&cells, 4, &off, NULL, NULL), CNP_EORDER,
              "cnp_cell_offsets: sorted_cells not sorted at index 3 (2 after 3)");
  /* "sorted_cells[3] = 4 outside [0, 4)" */
  const int64_t high[5] = {0, 1, 2, 4, 4};
  memcpy(cells.data, high, sizeof high);
  EXPECT_FAIL(cnp_cell_offsets(&cells, 4, &off, NULL, NULL), CNP_ERANGE,
              "sorted_cells[3] = 4 outside [0, 4)");
  /* "keys[60001] = -3 outside [0, key_limit 100)" */
  enum { N = 60002 };
  cnp_array keys = vec(CNP_INT64, N);
  for (int i = 0; i < N; i++) ((int64_t *)keys.data)[i] = i % 100;
  ((int64_t *)keys.data)[60001] = -3;
  cnp_workspace *ws = host_ws(N, 100, 0);
  EXPECT_FAIL(cnp_sort_by_key(&keys, NULL, NULL, 0, 100, ws, NULL), CNP_ERANGE,
              "keys[60001] = -3 outside [0, key_limit 100)");
  /* "keys[4] = 9 >= n_segments 4" */
  const int64_t pk[5] = {0, 1, 2, 3, 9};
  cnp_array k5 = vec(CNP_INT64, 5);
  memcpy(k5.data, pk, sizeof pk);
  cnp_segment_plan *p = NULL;
  OK(cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, 5, 4));
  EXPECT_FAIL(cnp_segment_plan_build(p, &k5, NULL), CNP_ERANGE, "keys[4] = 9 >= n_segments 4");
  /* "cnp_array_copy: extent mismatch in dimension 0: dst 4, src 3" */
  cnp_array d4 = vec(CNP_FLOAT64, 4), s3 = vec(CNP_FLOAT64, 3);
  EXPECT_FAIL(cnp_array_copy(&d4, &s3, NULL), CNP_ESHAPE,
              "cnp_array_copy: extent mismatch in dimension 0: dst 4, src 3");
  OK(cnp_segment_plan_destroy(p));
  cnp_workspace_destroy(ws);
  cnp_array *all[] = {&cells, &off, &keys, &k5, &d4, &s3};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cnp_array_free(all[i]);
}

/* ---- messages ------------------------------------------------------------------------ */

/* A uint64 key outside [0, key_limit) is printed unsigned (it was printed as a negative
** number: "keys[1] = -9223372036854775803 outside [0, key_limit 100)"). */
Test(vectors_messages, uint64_key_outside_limit_prints_unsigned)
{
  const uint64_t k0[3] = {1, (UINT64_C(1) << 63) + 5, 2};
  cnp_array keys = vec(CNP_UINT64, 3);
  memcpy(keys.data, k0, sizeof k0);
  cnp_workspace *ws = host_ws(3, 0, 0);
  EXPECT_FAIL(cnp_sort_by_key(&keys, NULL, NULL, 0, 100, ws, NULL), CNP_ERANGE,
              "keys[1] = 9223372036854775813 outside [0, key_limit 100)");
  cnp_workspace_destroy(ws);
  cnp_array_free(&keys);
}

/* ---- views into one buffer: disjoint slices are separate arrays ---------------------- */

Test(vectors_views, disjoint_slices_of_one_buffer)
{
  enum { N = 5 };
  /* One (3, N) buffer; its rows are three separate component arrays. */
  int64_t sh[2] = {3, N};
  cnp_array buf = alloc_nd(CNP_FLOAT64, 2, sh, CNP_ORDER_C), r[3];
  for (int c = 0; c < 3; c++) {
    cnp_array row;
    OK(cnp_array_slice(&row, &buf, 0, c, c + 1));
    r[c] = row;                                   /* (1, N): moves along its last axis */
    for (int i = 0; i < N; i++) ((double *)buf.data)[c * N + i] = 10 * c + i;
  }
  cnp_array mask = vec(CNP_BOOL, N);
  const unsigned char keep[N] = {0, 1, 1, 0, 1};
  memcpy(mask.data, keep, N);
  cnp_workspace *ws = host_ws(N, 0, 0);
  int64_t n = -1;
  OK(cnp_compact_by_mask(&mask, r, 3, &n, ws, NULL));
  cr_assert_eq(n, 3);
  const int live[3] = {1, 2, 4};
  for (int c = 0; c < 3; c++)
    for (int j = 0; j < 3; j++) cr_expect_eq(((double *)buf.data)[c * N + j], 10.0 * c + live[j]);
  /* Sort keys and values that are disjoint slices of one int64 buffer. */
  cnp_array kb = vec(CNP_INT64, 2 * N), keys, vals;
  OK(cnp_array_slice(&keys, &kb, 0, 0, N));
  OK(cnp_array_slice(&vals, &kb, 0, N, 2 * N));
  const int64_t k0[2 * N] = {4, 2, 4, 0, 2, 100, 101, 102, 103, 104};
  memcpy(kb.data, k0, sizeof k0);
  OK(cnp_sort_by_key(&keys, NULL, &vals, 1, 0, ws, NULL));
  const int64_t want[2 * N] = {0, 2, 2, 4, 4, 103, 101, 104, 100, 102};
  for (int i = 0; i < 2 * N; i++) cr_expect_eq(((int64_t *)kb.data)[i], want[i], "kb[%d]", i);
  /* Overlapping by one element: rejected. */
  cnp_array v2;
  OK(cnp_array_slice(&v2, &kb, 0, N - 1, 2 * N - 1));
  EXPECT_FAIL(cnp_sort_by_key(&keys, NULL, &v2, 1, 0, ws, NULL), CNP_EALIAS, "cnp_sort_by_key");
  cnp_workspace_destroy(ws);
  cnp_array_free(&buf);
  cnp_array_free(&mask);
  cnp_array_free(&kb);
}
