/*
** test_algo_sort.c — cnp_sort_by_key on the host backend: randomized property tests against
** a stable reference sort (int32/int64/uint64 keys; duplicates, all equal, sorted, reverse
** sorted, nearly sorted, full-range extremes; with and without key_limit and order; values
** of mixed dtypes and layouts), every algorithm path (sorted fast path, counting pass with
** the default and a large histogram, LSD radix), thread-count independence, and errors.
*/
#include "test_algo_util.h"

#include "cnp/algo.h"

enum { RANDOM_SMALL, RANDOM_WIDE, FULL_RANGE, ALL_EQUAL, SORTED, REVERSE, NEARLY, N_KINDS };

static const cnp_dtype KEY_TYPES[3] = {CNP_INT32, CNP_INT64, CNP_UINT64};

static int64_t g_cmp_dtype;
static const void *g_cmp_keys;

static long double key_ld(const void *k, cnp_dtype dt, int64_t i)
{
  switch (dt) {
  case CNP_INT32: return ((const int32_t *)k)[i];
  case CNP_INT64: return ((const int64_t *)k)[i];
  default: return ((const uint64_t *)k)[i];
  }
}

static int cmp_key(const void *pa, const void *pb)     /* stable: ties by index */
{
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  cnp_dtype dt = (cnp_dtype)g_cmp_dtype;
  int r;
  if (dt == CNP_INT32) {
    int32_t x = ((const int32_t *)g_cmp_keys)[a], y = ((const int32_t *)g_cmp_keys)[b];
    r = (x > y) - (x < y);
  } else if (dt == CNP_INT64) {
    int64_t x = ((const int64_t *)g_cmp_keys)[a], y = ((const int64_t *)g_cmp_keys)[b];
    r = (x > y) - (x < y);
  } else {
    uint64_t x = ((const uint64_t *)g_cmp_keys)[a], y = ((const uint64_t *)g_cmp_keys)[b];
    r = (x > y) - (x < y);
  }
  return r ? r : (a > b) - (a < b);
}

static void put_key(void *k, cnp_dtype dt, int64_t i, int64_t v)
{
  if (dt == CNP_INT32) ((int32_t *)k)[i] = (int32_t)v;
  else if (dt == CNP_INT64) ((int64_t *)k)[i] = v;
  else ((uint64_t *)k)[i] = (uint64_t)v;
}

/* Fill keys of a kind; returns an exclusive upper bound when all keys are in [0, bound),
** else 0. */
static int64_t fill_keys(cnp_array *keys, int kind, uint64_t seed)
{
  int64_t n = keys->shape[0];
  cnp_dtype dt = keys->dtype;
  void *k = keys->data;
  int64_t bound = n / 8 + 3;
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = rng_next(&seed);
    switch (kind) {
    case RANDOM_SMALL: put_key(k, dt, i, (int64_t)(r % (uint64_t)bound)); break;
    case RANDOM_WIDE:                          /* signed keys go negative */
      put_key(k, dt, i, dt == CNP_UINT64 ? (int64_t)(r % 5000000)
                                         : (int64_t)(r % 5000000) - 2500000);
      break;
    case FULL_RANGE: {
      static const int64_t ext32[4] = {INT32_MIN, INT32_MAX, 0, -1};
      static const int64_t ext64[4] = {INT64_MIN, INT64_MAX, 0, -1};
      if (r % 4 == 0) {
        const int64_t *e = dt == CNP_INT32 ? ext32 : ext64;
        put_key(k, dt, i, e[(r >> 8) % 4]);
      } else if (dt == CNP_INT32) {
        put_key(k, dt, i, (int32_t)(uint32_t)(r >> 7));
      } else {
        put_key(k, dt, i, (int64_t)(r >> 1) * ((r & 2) ? 1 : -1));
        if (dt == CNP_UINT64 && (r & 4)) ((uint64_t *)k)[i] = UINT64_MAX - (r & 0xff);
      }
      break;
    }
    case ALL_EQUAL: put_key(k, dt, i, 42); break;
    case SORTED: put_key(k, dt, i, i / 3); break;
    case REVERSE: put_key(k, dt, i, n - i / 2); break;
    default: {                                 /* sorted, 10% moved by +-1 */
      int64_t v = i / 4;
      if (r % 10 == 0) v += (r & 1024) ? 1 : (v > 0 ? -1 : 0);
      put_key(k, dt, i, v);
      break;
    }
    }
  }
  switch (kind) {
  case RANDOM_SMALL: return bound;
  case ALL_EQUAL: return 43;
  case SORTED: return n / 3 + 1;
  case REVERSE: return n + 1;
  case NEARLY: return n / 4 + 2;
  default: return 0;
  }
}

#define N_VAL 5

static void run_case(cnp_dtype dt, int64_t n, int kind, int use_limit, int want_order,
                     uint64_t seed, cnp_workspace *ws)
{
  cnp_array keys = host_vec(dt, n), order = host_vec(CNP_INT64, n);
  int64_t bound = fill_keys(&keys, kind, seed);
  int64_t s_n[1] = {n}, s_2n[2] = {2, n}, s_n3[2] = {n, 3}, s_n4[2] = {n, 4};
  cnp_array val[N_VAL] = {
      host_array(CNP_FLOAT64, 1, s_n, 'C'),     /* (N,)                           */
      host_array(CNP_INT32, 2, s_2n, 'C'),      /* component-major (2,N)          */
      host_array(CNP_COMPLEX64, 2, s_n3, 'C'),  /* 24-byte rows: by column chunks */
      host_array(CNP_BOOL, 1, s_n, 'C'),
      host_array(CNP_FLOAT16, 2, s_n4, 'F'),    /* F-order: 4 blocks of 2 bytes   */
  };
  void *orig[N_VAL];
  for (int j = 0; j < N_VAL; j++) {
    fill_random(&val[j], seed * 31 + (uint64_t)j);
    orig[j] = dup_bytes(&val[j]);
  }
  void *okeys = dup_bytes(&keys);
  int64_t *ref = malloc((size_t)(n > 0 ? n : 1) * sizeof *ref);
  for (int64_t i = 0; i < n; i++) ref[i] = i;
  g_cmp_dtype = dt;
  g_cmp_keys = okeys;
  qsort(ref, (size_t)n, sizeof *ref, cmp_key);

  int64_t limit = use_limit ? bound : 0;
  cr_assert_eq(cnp_sort_by_key(&keys, want_order ? &order : NULL, val, N_VAL, limit, ws, NULL),
               CNP_OK, "%s", cnp_last_error());
  char what[96];
  snprintf(what, sizeof what, "%s n=%lld kind=%d limit=%lld order=%d", cnp_dtype_name(dt),
           (long long)n, kind, (long long)limit, want_order);
  for (int64_t i = 0; i < n; i++) {
    if (key_ld(keys.data, dt, i) != key_ld(okeys, dt, ref[i]))
      cr_assert_fail("%s: key %lld wrong", what, (long long)i);
    if (want_order && ((int64_t *)order.data)[i] != ref[i])
      cr_assert_fail("%s: order[%lld] = %lld, expected %lld", what, (long long)i,
                     (long long)((int64_t *)order.data)[i], (long long)ref[i]);
  }
  for (int j = 0; j < N_VAL; j++) {
    check_rows(&val[j], orig[j], n, ref, n, what);
    free(orig[j]);
    free(val[j].data);
  }
  free(ref);
  free(okeys);
  free(keys.data);
  free(order.data);
}

Test(algo_sort, property_all_kinds)
{
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 100000, 0, 0), CNP_OK);
  for (int t = 0; t < 3; t++)
    for (int s = 0; s < ALGO_NSIZES; s++)
      for (int kind = 0; kind < N_KINDS; kind++) {
        int64_t n = ALGO_SIZES[s];
        if (n == 100000 && kind != NEARLY && kind != FULL_RANGE && t != 1)
          continue;                            /* keep the large cases few */
        uint64_t seed = (uint64_t)(t * 100 + s * 10 + kind);
        run_case(KEY_TYPES[t], n, kind, 0, 1, seed, ws);
        int has_bound = kind != RANDOM_WIDE && kind != FULL_RANGE;
        if (has_bound) run_case(KEY_TYPES[t], n, kind, 1, (s & 1) != 0, seed + 7, ws);
      }
  cr_assert_eq(cnp_workspace_destroy(ws), CNP_OK);
}

/* A key_limit beyond the default histogram: the counting pass uses the big histogram. */
Test(algo_sort, large_key_limit_counting_pass)
{
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 100000, 300000, 32), CNP_OK);
  cnp_array keys = host_vec(CNP_INT64, 100000);
  int64_t *k = keys.data;
  uint64_t seed = 99;
  for (int i = 0; i < 100000; i++) k[i] = (int64_t)(rng_next(&seed) % 300000);
  cnp_array x = host_vec(CNP_FLOAT64, 100000), order = host_vec(CNP_INT64, 100000);
  double *xv = x.data;
  for (int i = 0; i < 100000; i++) xv[i] = (double)k[i] + 0.5;
  cr_assert_eq(cnp_sort_by_key(&keys, &order, &x, 1, 300000, ws, NULL), CNP_OK, "%s",
               cnp_last_error());
  int64_t *o = order.data;
  for (int i = 1; i < 100000; i++) {
    cr_assert_leq(k[i - 1], k[i]);
    if (k[i - 1] == k[i]) cr_assert_lt(o[i - 1], o[i], "not stable at %d", i);
    cr_assert_eq(xv[i], (double)k[i] + 0.5);
  }
  free(keys.data);
  free(x.data);
  free(order.data);
  cnp_workspace_destroy(ws);
}

/* Odd thread teams and one thread give the reference answer (so the same answer). */
Test(algo_sort, odd_thread_counts)
{
  for (int threads = 1; threads <= 3; threads += 2) {
    set_threads(threads);
    cnp_workspace *ws;
    cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 50001, 0, 0), CNP_OK);
    run_case(CNP_INT64, 50001, RANDOM_WIDE, 0, 1, 3, ws);
    run_case(CNP_INT32, 50001, NEARLY, 1, 1, 4, ws);
    run_case(CNP_UINT64, 50001, FULL_RANGE, 0, 0, 5, ws);
    cnp_workspace_destroy(ws);
  }
}

/* ---- errors ---------------------------------------------------------------------------- */

Test(algo_sort, key_limit_violation_leaves_data)
{
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 100000, 0, 0), CNP_OK);
  for (int t = 0; t < 3; t++) {
    cnp_array keys = host_vec(KEY_TYPES[t], 100000), order = host_vec(CNP_INT64, 100000);
    for (int64_t i = 0; i < 100000; i++) put_key(keys.data, KEY_TYPES[t], i, (i * 7) % 100);
    int64_t bad_at = 60001;
    put_key(keys.data, KEY_TYPES[t], bad_at, KEY_TYPES[t] == CNP_UINT64 ? 100 : -3);
    put_key(keys.data, KEY_TYPES[t], 70000, 5000);
    void *before = dup_bytes(&keys);
    cr_expect_eq(cnp_sort_by_key(&keys, &order, NULL, 0, 100, ws, NULL), CNP_ERANGE);
    expect_msg(KEY_TYPES[t] == CNP_UINT64 ? "keys[60001] = 100 outside [0, key_limit 100)"
                                          : "keys[60001] = -3 outside [0, key_limit 100)");
    cr_expect(memcmp(before, keys.data, span_bytes(&keys)) == 0);
    /* a limit beyond the histogram: checked by the min/max scan instead */
    put_key(keys.data, KEY_TYPES[t], bad_at, 3);
    put_key(keys.data, KEY_TYPES[t], 70000, 2000000);
    memcpy(before, keys.data, span_bytes(&keys));
    cr_expect_eq(cnp_sort_by_key(&keys, &order, NULL, 0, 1000000, ws, NULL), CNP_ERANGE);
    expect_msg("keys[70000] = 2000000 outside [0, key_limit 1000000)");
    cr_expect(memcmp(before, keys.data, span_bytes(&keys)) == 0);
    free(before);
    free(keys.data);
    free(order.data);
  }
  /* a run of equal bad keys is reported at its first row */
  cnp_array keys = host_vec(CNP_INT32, 9);
  int32_t kv[9] = {4, 4, 4, 250, 250, 250, 1, 1, 0};
  memcpy(keys.data, kv, sizeof kv);
  cr_expect_eq(cnp_sort_by_key(&keys, NULL, NULL, 0, 100, ws, NULL), CNP_ERANGE);
  expect_msg("keys[3] = 250 outside [0, key_limit 100)");
  free(keys.data);
  cnp_workspace_destroy(ws);
}

/* A key outside [0, key_limit) at the first or last row of a thread's rows (the histogram
** pass treats each thread's first row apart), in a nearly sorted input, on 2 and 3 threads:
** reported at its index, nothing written. */
Test(algo_sort, key_limit_violation_at_chunk_edges)
{
  const int64_t n = 100000;
  const int64_t at[] = {0, 33333, 33334, 49999, 50000, 66666, 66667, n - 1};
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, n, 2000, 0), CNP_OK);
  cnp_array keys = host_vec(CNP_INT64, n);
  int64_t *kv = keys.data;
  for (int threads = 2; threads <= 3; threads++) {
    set_threads(threads);
    for (int j = 0; j < (int)(sizeof at / sizeof at[0]); j++) {
      for (int64_t i = 0; i < n; i++) kv[i] = i / 50 + (i % 10 == 3 && i / 50 < 1999);
      kv[n - 1] = 1999;
      kv[at[j]] = j % 2 ? 2000 : -1;
      void *before = dup_bytes(&keys);
      cr_expect_eq(cnp_sort_by_key(&keys, NULL, NULL, 0, 2000, ws, NULL), CNP_ERANGE);
      char want[96];
      snprintf(want, sizeof want, "keys[%lld] = %lld outside [0, key_limit 2000)",
               (long long)at[j], (long long)kv[at[j]]);
      expect_msg(want);
      cr_expect(memcmp(before, keys.data, span_bytes(&keys)) == 0);
      free(before);
    }
  }
  free(keys.data);
  cnp_workspace_destroy(ws);
}

/* A uint64 key at or above 2^63 outside [0, key_limit) is printed unsigned. */
Test(algo_sort, key_limit_violation_uint64_printed_unsigned)
{
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 3, 0, 0), CNP_OK);
  cnp_array keys = host_vec(CNP_UINT64, 3);
  const uint64_t kv[3] = {1, (UINT64_C(1) << 63) + 5, 2};
  memcpy(keys.data, kv, sizeof kv);
  cr_expect_eq(cnp_sort_by_key(&keys, NULL, NULL, 0, 100, ws, NULL), CNP_ERANGE);
  expect_msg("keys[1] = 9223372036854775813 outside [0, key_limit 100)");
  free(keys.data);
  cnp_workspace_destroy(ws);
}

Test(algo_sort, errors)
{
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 8, 0, 0), CNP_OK);
  cnp_array keys = host_vec(CNP_INT64, 8), order = host_vec(CNP_INT64, 8);
  cnp_array fkeys = host_vec(CNP_FLOAT64, 8), o32 = host_vec(CNP_INT32, 8);
  cnp_array o7 = host_vec(CNP_INT64, 7), x = host_vec(CNP_FLOAT64, 8);
  cnp_array x9 = host_vec(CNP_FLOAT64, 9), k9 = host_vec(CNP_INT64, 9);
  int64_t s2[2] = {2, 4};
  cnp_array k2d = host_array(CNP_INT64, 2, s2, 'C');

  cr_expect_eq(cnp_sort_by_key(NULL, &order, NULL, 0, 0, ws, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_sort_by_key(&keys, &order, NULL, 0, 0, NULL, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_sort_by_key(&keys, &order, NULL, 1, 0, ws, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_sort_by_key(&keys, &order, NULL, 0, -1, ws, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_sort_by_key(&fkeys, &order, NULL, 0, 0, ws, NULL), CNP_EDTYPE);
  expect_msg("keys has unsupported dtype float64");
  cr_expect_eq(cnp_sort_by_key(&k2d, NULL, NULL, 0, 0, ws, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_sort_by_key(&keys, &o32, NULL, 0, 0, ws, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_sort_by_key(&keys, &o7, NULL, 0, 0, ws, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_sort_by_key(&keys, &x9, NULL, 0, 0, ws, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_sort_by_key(&keys, NULL, &x9, 1, 0, ws, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_sort_by_key(&k9, NULL, NULL, 0, 0, ws, NULL), CNP_EOVERFLOW);
  expect_msg("N = 9 exceeds the workspace capacity 8");

  /* aliasing */
  cnp_array same = keys;
  cr_expect_eq(cnp_sort_by_key(&keys, &same, NULL, 0, 0, ws, NULL), CNP_EALIAS);
  cnp_array vv[2] = {x, x};
  cr_expect_eq(cnp_sort_by_key(&keys, &order, vv, 2, 0, ws, NULL), CNP_EALIAS);
  cr_expect_eq(cnp_sort_by_key(&keys, &order, &order, 1, 0, ws, NULL), CNP_EALIAS);

  /* strided keys */
  cnp_array sk = keys;
  sk.shape[0] = 4;
  sk.strides[0] = 16;
  cr_expect_eq(cnp_sort_by_key(&sk, NULL, NULL, 0, 0, ws, NULL), CNP_ELAYOUT);

  /* mixed backends */
  cnp_array fake = x;
  fake.backend = CNP_BACKEND_CUDA;
  cr_expect_eq(cnp_sort_by_key(&keys, &order, &fake, 1, 0, ws, NULL), CNP_EDEVICE);
  cnp_array fake_order = order;
  fake_order.backend = CNP_BACKEND_CUDA;
  cr_expect_eq(cnp_sort_by_key(&keys, &fake_order, NULL, 0, 0, ws, NULL), CNP_EDEVICE);

  free(keys.data); free(order.data); free(fkeys.data); free(o32.data); free(o7.data);
  free(x.data); free(x9.data); free(k9.data); free(k2d.data);
  cnp_workspace_destroy(ws);
}

/* A host stream is accepted; the result is the same. */
Test(algo_sort, host_stream)
{
  cnp_stream *s = NULL;
  cr_assert_eq(cnp_stream_create(&s), CNP_OK, "%s", cnp_last_error());
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 4, 0, 0), CNP_OK);
  cnp_array keys = host_vec(CNP_INT32, 4), order = host_vec(CNP_INT64, 4);
  int32_t k[4] = {3, -1, 3, 0};
  memcpy(keys.data, k, sizeof k);
  cr_assert_eq(cnp_sort_by_key(&keys, &order, NULL, 0, 0, ws, s), CNP_OK, "%s",
               cnp_last_error());
  int32_t wk[4] = {-1, 0, 3, 3};
  int64_t wo[4] = {1, 3, 0, 2};
  cr_expect_arr_eq(keys.data, wk, sizeof wk);
  cr_expect_arr_eq(order.data, wo, sizeof wo);
  free(keys.data);
  free(order.data);
  cnp_workspace_destroy(ws);
  cnp_stream_destroy(s);
}

/* Rotated sorted keys: outputs read sources a fixed distance back (and the first ones from
** the far end, another thread's rows), or a fixed distance ahead. Reading back, the in-place
** window backs up by about shift / 2048 blocks: below, at and beyond what the ring holds. */
Test(algo_sort, rotated_keys_window_depths)
{
  int64_t n = 100000, shifts[5] = {1000, 6 * 2048 + 5, 7 * 2048 + 5, 9 * 2048, 40000};
  for (int threads = 2; threads <= 3; threads++) {
    set_threads(threads);
    cnp_workspace *ws;
    cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, n, n, 0), CNP_OK);
    for (int s = 0; s < 10; s++) {
      int64_t shift = (s & 1) ? shifts[s / 2] : n - shifts[s / 2];   /* back or ahead */
      cnp_array keys = host_vec(CNP_INT64, n), order = host_vec(CNP_INT64, n);
      int64_t s_n[1] = {n}, s_2n[2] = {2, n};
      cnp_array v[2] = {host_array(CNP_FLOAT64, 1, s_n, 'C'),
                        host_array(CNP_INT32, 2, s_2n, 'C')};
      int64_t *k = keys.data;
      for (int64_t i = 0; i < n; i++) k[i] = ((i + shift) % n) / 2;
      void *orig[2];
      for (int j = 0; j < 2; j++) {
        fill_random(&v[j], (uint64_t)(s * 2 + j));
        orig[j] = dup_bytes(&v[j]);
      }
      int64_t *ref = malloc((size_t)n * sizeof *ref);
      for (int64_t i = 0; i < n; i++) ref[i] = i;
      void *okeys = dup_bytes(&keys);
      g_cmp_dtype = CNP_INT64;
      g_cmp_keys = okeys;
      qsort(ref, (size_t)n, sizeof *ref, cmp_key);
      cr_assert_eq(cnp_sort_by_key(&keys, &order, v, 2, n, ws, NULL), CNP_OK, "%s",
                   cnp_last_error());
      cr_assert_arr_eq(order.data, ref, (size_t)n * sizeof *ref, "shift %lld threads %d",
                       (long long)shift, threads);
      for (int j = 0; j < 2; j++) {
        check_rows(&v[j], orig[j], n, ref, n, "rotated");
        free(orig[j]);
        free(v[j].data);
      }
      free(ref);
      free(okeys);
      free(keys.data);
      free(order.data);
    }
    cnp_workspace_destroy(ws);
  }
}
