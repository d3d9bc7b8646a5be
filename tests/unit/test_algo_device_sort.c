/*
** test_algo_device_sort.c — cnp_sort_by_key_device_count and
** cnp_segment_plan_build_device_count on the host backend: rows [0, n) end exactly as the
** ordinary calls leave an array of n rows, rows [n, N) are untouched, sums over a
** device-count plan equal sums over an ordinary plan of the n rows, and every argument
** error has its exact status. (The CUDA path needs a GPU: tests/cuda/test_gpu.cu.)
*/
#include "test_algo_util.h"

#include "cnp/algo.h"

/* The fields of a test: keys[N], x: f64[N], v: f64[2, N] (component-major), w: i32[N, 3]. */
typedef struct fields {
  int64_t n;
  cnp_array keys, x, v, w;
} fields;

static fields make_fields(cnp_dtype kt, int64_t n)
{
  fields f;
  int64_t s_2n[2] = {2, n}, s_n3[2] = {n, 3};
  f.n = n;
  f.keys = host_vec(kt, n);
  f.x = host_vec(CNP_FLOAT64, n);
  f.v = host_array(CNP_FLOAT64, 2, s_2n, 'C');
  f.w = host_array(CNP_INT32, 2, s_n3, 'C');
  return f;
}

static void free_fields(fields *f)
{
  free(f->keys.data);
  free(f->x.data);
  free(f->v.data);
  free(f->w.data);
}

/* Rows [0, m) of src into dst (dst has m rows, src n). */
static void copy_head(fields *dst, const fields *src, int64_t m)
{
  size_t ks = cnp_dtype_size(src->keys.dtype);
  memcpy(dst->keys.data, src->keys.data, (size_t)m * ks);
  memcpy(dst->x.data, src->x.data, (size_t)m * sizeof(double));
  for (int c = 0; c < 2; c++)
    memcpy((double *)dst->v.data + c * m, (const double *)src->v.data + c * src->n,
           (size_t)m * sizeof(double));
  memcpy(dst->w.data, src->w.data, (size_t)m * 3 * sizeof(int32_t));
}

static void fill_keys(cnp_array *k, int64_t n, int64_t lo, int64_t hi, uint64_t seed)
{
  for (int64_t i = 0; i < n; i++) {
    int64_t v = lo + (int64_t)(rng_next(&seed) % (uint64_t)(hi - lo));
    if (k->dtype == CNP_INT32) ((int32_t *)k->data)[i] = (int32_t)v;
    else ((int64_t *)k->data)[i] = v;
  }
}

/* Sorting rows [0, m) of N rows equals sorting an array of m rows; rows past m stay. */
static void check_sort(cnp_dtype kt, int64_t N, int64_t m, int64_t key_limit, uint64_t seed)
{
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, N, key_limit, 0), CNP_OK);
  fields a = make_fields(kt, N), r = make_fields(kt, m);
  fill_keys(&a.keys, N, key_limit ? 0 : -50, key_limit ? key_limit : 50, seed);
  fill_random(&a.x, seed + 1);
  fill_random(&a.v, seed + 2);
  fill_random(&a.w, seed + 3);
  copy_head(&r, &a, m);
  fields orig = make_fields(kt, N);
  copy_head(&orig, &a, N);
  cnp_array count = host_vec(CNP_INT64, 1), order = host_vec(CNP_INT64, N);
  cnp_array rorder = host_vec(CNP_INT64, m);
  ((int64_t *)count.data)[0] = m;
  cnp_array av[3] = {a.x, a.v, a.w}, rv[3] = {r.x, r.v, r.w};
  cr_assert_eq(cnp_sort_by_key_device_count(&a.keys, &order, av, 3, key_limit, &count, ws,
                                            NULL),
               CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_sort_by_key(&r.keys, &rorder, rv, 3, key_limit, ws, NULL), CNP_OK, "%s",
               cnp_last_error());
  size_t ks = cnp_dtype_size(kt);
  cr_assert_eq(memcmp(a.keys.data, r.keys.data, (size_t)m * ks), 0, "keys N=%lld m=%lld",
               (long long)N, (long long)m);
  cr_assert_eq(memcmp(order.data, rorder.data, (size_t)m * 8), 0);
  for (int64_t i = m; i < N; i++) cr_assert_eq(((int64_t *)order.data)[i], i);
  cr_assert_eq(memcmp(a.x.data, r.x.data, (size_t)m * 8), 0);
  for (int c = 0; c < 2; c++)
    cr_assert_eq(memcmp((double *)a.v.data + c * N, (double *)r.v.data + c * m, (size_t)m * 8),
                 0);
  cr_assert_eq(memcmp(a.w.data, r.w.data, (size_t)m * 12), 0);
  /* rows past m are untouched */
  cr_assert_eq(memcmp((char *)a.keys.data + m * ks, (char *)orig.keys.data + m * ks,
                      (size_t)(N - m) * ks), 0);
  cr_assert_eq(memcmp((double *)a.x.data + m, (double *)orig.x.data + m, (size_t)(N - m) * 8),
               0);
  for (int c = 0; c < 2; c++)
    cr_assert_eq(memcmp((double *)a.v.data + c * N + m, (double *)orig.v.data + c * N + m,
                        (size_t)(N - m) * 8), 0);
  cr_assert_eq(memcmp((int32_t *)a.w.data + 3 * m, (int32_t *)orig.w.data + 3 * m,
                      (size_t)(N - m) * 12), 0);
  free_fields(&a);
  free_fields(&r);
  free_fields(&orig);
  free(count.data);
  free(order.data);
  free(rorder.data);
  cnp_workspace_destroy(ws);
}

Test(algo_device_sort, same_as_sort_by_key)
{
  static const int64_t sizes[] = {1, 33, 1000, 100000};
  for (int t = 1; t <= 2; t++) {
    set_threads(t);
    for (int s = 0; s < 4; s++) {
      int64_t N = sizes[s];
      int64_t ms[3] = {0, N / 2 + 1 < N ? N / 2 + 1 : N, N};
      for (int k = 0; k < 3; k++) {
        check_sort(CNP_INT64, N, ms[k], 0, 11u + (uint64_t)s);
        check_sort(CNP_INT64, N, ms[k], 64, 21u + (uint64_t)s);
        check_sort(CNP_INT32, N, ms[k], 0, 31u + (uint64_t)s);
        check_sort(CNP_INT32, N, ms[k], 1000, 41u + (uint64_t)s);
      }
    }
  }
  set_threads(1);
}

/* Sums over a device-count plan of N rows equal sums over an ordinary plan of m rows. */
static void check_plan(cnp_dtype kt, int64_t N, int64_t m, int64_t ns, uint64_t seed)
{
  cnp_segment_plan *pd, *pr;
  cr_assert_eq(cnp_segment_plan_create(&pd, CNP_BACKEND_HOST, 0, N, ns), CNP_OK);
  cr_assert_eq(cnp_segment_plan_create(&pr, CNP_BACKEND_HOST, 0, N, ns), CNP_OK);
  cnp_array keys = host_vec(kt, N), x = host_vec(CNP_FLOAT64, N);
  int64_t s_n2[2] = {N, 2}, s_s2[2] = {ns, 2};
  cnp_array y = host_array(CNP_FLOAT32, 2, s_n2, 'C');
  cnp_array ox = host_vec(CNP_FLOAT64, ns), rx = host_vec(CNP_FLOAT64, ns);
  cnp_array oy = host_array(CNP_FLOAT32, 2, s_s2, 'C'), ry = host_array(CNP_FLOAT32, 2, s_s2, 'C');
  cnp_array count = host_vec(CNP_INT64, 1);
  fill_keys(&keys, N, -2, ns, seed);
  if (seed & 1) {                               /* sorted, none dropped: identity plans */
    for (int64_t i = 0; i < N; i++) {
      int64_t v = i * ns / N;
      if (kt == CNP_INT32) ((int32_t *)keys.data)[i] = (int32_t)v;
      else ((int64_t *)keys.data)[i] = v;
    }
  }
  for (int64_t i = 0; i < N; i++) {
    ((double *)x.data)[i] = rng_unit(&seed) - 0.5;
    ((float *)y.data)[2 * i] = (float)rng_unit(&seed);
    ((float *)y.data)[2 * i + 1] = (float)i;
  }
  ((int64_t *)count.data)[0] = m;
  cr_assert_eq(cnp_segment_plan_build_device_count(pd, &keys, &count, NULL), CNP_OK, "%s",
               cnp_last_error());
  /* the sorted form (what cnpc's graphs call after a sort) is the same build on the host,
  ** whatever the keys' order */
  cnp_segment_plan *psd;
  cr_assert_eq(cnp_segment_plan_create(&psd, CNP_BACKEND_HOST, 0, N, ns), CNP_OK);
  cr_assert_eq(cnp_segment_plan_build_sorted_device_count(psd, &keys, &count, NULL), CNP_OK,
               "%s", cnp_last_error());
  cnp_array kh = keys, xh = x, yh = y;
  kh.shape[0] = xh.shape[0] = yh.shape[0] = m;
  cr_assert_eq(cnp_segment_plan_build(pr, &kh, NULL), CNP_OK, "%s", cnp_last_error());
  int64_t kept_d, rows_d, kept_r, rows_r;
  cr_assert_eq(cnp_segment_plan_rows(pd, &kept_d, &rows_d), CNP_OK);
  cr_assert_eq(cnp_segment_plan_rows(pr, &kept_r, &rows_r), CNP_OK);
  cr_assert_eq(rows_d, N);
  cr_assert_eq(rows_r, m);
  cr_assert_eq(kept_d, kept_r);
  cr_assert_eq(cnp_segment_plan_sum(pd, &x, &ox, NULL), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_segment_plan_sum(pr, &xh, &rx, NULL), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_segment_plan_sum(pd, &y, &oy, NULL), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_segment_plan_sum(pr, &yh, &ry, NULL), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(memcmp(ox.data, rx.data, (size_t)ns * 8), 0, "N=%lld m=%lld", (long long)N,
               (long long)m);
  cr_assert_eq(memcmp(oy.data, ry.data, (size_t)ns * 8), 0);
  int64_t kept_s, rows_s;
  cr_assert_eq(cnp_segment_plan_rows(psd, &kept_s, &rows_s), CNP_OK);
  cr_assert(kept_s == kept_d && rows_s == N);
  cr_assert_eq(cnp_segment_plan_sum(psd, &x, &ox, NULL), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(memcmp(ox.data, rx.data, (size_t)ns * 8), 0);
  cnp_segment_plan_destroy(psd);
  /* the values of rows past m do not count */
  for (int64_t i = m; i < N; i++) ((double *)x.data)[i] = 1e300;
  cr_assert_eq(cnp_segment_plan_sum(pd, &x, &ox, NULL), CNP_OK);
  cr_assert_eq(memcmp(ox.data, rx.data, (size_t)ns * 8), 0);
  cnp_segment_plan_destroy(pd);
  cnp_segment_plan_destroy(pr);
  free(keys.data);
  free(x.data);
  free(y.data);
  free(ox.data);
  free(rx.data);
  free(oy.data);
  free(ry.data);
  free(count.data);
}

Test(algo_device_sort, plan_same_as_build)
{
  static const int64_t sizes[] = {1, 33, 1000, 100000};
  for (int t = 1; t <= 2; t++) {
    set_threads(t);
    for (int s = 0; s < 4; s++) {
      int64_t N = sizes[s];
      int64_t ms[3] = {0, N / 2 + 1 < N ? N / 2 + 1 : N, N};
      for (int k = 0; k < 3; k++)
        for (uint64_t seed = 4; seed < 6; seed++) {   /* even: random keys; odd: sorted */
          check_plan(CNP_INT64, N, ms[k], 17, seed);
          check_plan(CNP_INT32, N, ms[k], 300, seed + 10);
        }
    }
  }
  set_threads(1);
}

Test(algo_device_sort, sort_errors)
{
  cnp_workspace *ws, *small;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 8, 0, 0), CNP_OK);
  cr_assert_eq(cnp_workspace_create(&small, CNP_BACKEND_HOST, 0, 4, 0, 0), CNP_OK);
  cnp_array keys = host_vec(CNP_INT64, 8), x = host_vec(CNP_FLOAT64, 8);
  cnp_array count = host_vec(CNP_INT64, 1), c32 = host_vec(CNP_INT32, 1);
  cnp_array c2 = host_vec(CNP_INT64, 2), o7 = host_vec(CNP_INT64, 7);
  cnp_array fk = host_vec(CNP_FLOAT64, 8);
  for (int i = 0; i < 8; i++) ((int64_t *)keys.data)[i] = 7 - i;
  ((int64_t *)count.data)[0] = 8;
  cnp_array in_keys = keys, in_x = x;           /* a count inside another argument */
  in_keys.shape[0] = in_x.shape[0] = 1;
  in_x.dtype = CNP_INT64;
  cnp_array on_cuda = count;
  on_cuda.backend = CNP_BACKEND_CUDA;

  cr_expect_eq(cnp_sort_by_key_device_count(NULL, NULL, &x, 1, 0, &count, ws, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_sort_by_key_device_count(&keys, NULL, &x, 1, 0, NULL, ws, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_sort_by_key_device_count(&keys, NULL, &x, 1, 0, &count, NULL, NULL),
               CNP_EINVAL);
  cr_expect_eq(cnp_sort_by_key_device_count(&fk, NULL, &x, 1, 0, &count, ws, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_sort_by_key_device_count(&keys, NULL, &x, 1, -1, &count, ws, NULL),
               CNP_EINVAL);
  cr_expect_eq(cnp_sort_by_key_device_count(&keys, NULL, &x, 1, 0, &c32, ws, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_sort_by_key_device_count(&keys, NULL, &x, 1, 0, &c2, ws, NULL), CNP_ESHAPE);
  expect_msg("count must hold 1 element");
  cr_expect_eq(cnp_sort_by_key_device_count(&keys, &o7, &x, 1, 0, &count, ws, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_sort_by_key_device_count(&keys, NULL, &x, 1, 0, &in_keys, ws, NULL),
               CNP_EALIAS);
  cr_expect_eq(cnp_sort_by_key_device_count(&keys, NULL, &x, 1, 0, &in_x, ws, NULL), CNP_EALIAS);
  cr_expect_eq(cnp_sort_by_key_device_count(&keys, NULL, &x, 1, 0, &on_cuda, ws, NULL),
               CNP_EDEVICE);
  cr_expect_eq(cnp_sort_by_key_device_count(&keys, NULL, &x, 1, 0, &count, small, NULL),
               CNP_EOVERFLOW);
  ((int64_t *)count.data)[0] = 9;
  cr_expect_eq(cnp_sort_by_key_device_count(&keys, NULL, &x, 1, 0, &count, ws, NULL), CNP_ERANGE);
  expect_msg("count = 9 outside [0, N = 8]");
  ((int64_t *)count.data)[0] = -1;
  cr_expect_eq(cnp_sort_by_key_device_count(&keys, NULL, &x, 1, 0, &count, ws, NULL), CNP_ERANGE);
  /* a key past key_limit among rows [0, n) is reported; one past n is not looked at */
  ((int64_t *)count.data)[0] = 3;
  cr_expect_eq(cnp_sort_by_key_device_count(&keys, NULL, &x, 1, 5, &count, ws, NULL), CNP_ERANGE);
  cr_expect_eq(((int64_t *)keys.data)[0], 7);  /* unchanged */
  for (int i = 0; i < 8; i++) ((int64_t *)keys.data)[i] = i < 3 ? 2 - i : 100;
  cr_expect_eq(cnp_sort_by_key_device_count(&keys, NULL, &x, 1, 5, &count, ws, NULL), CNP_OK,
               "%s", cnp_last_error());
  cr_expect_eq(((int64_t *)keys.data)[0], 0);
  cr_expect_eq(((int64_t *)keys.data)[2], 2);
  cr_expect_eq(((int64_t *)keys.data)[3], 100);
  free(keys.data);
  free(x.data);
  free(count.data);
  free(c32.data);
  free(c2.data);
  free(o7.data);
  free(fk.data);
  cnp_workspace_destroy(ws);
  cnp_workspace_destroy(small);
}

Test(algo_device_sort, plan_errors)
{
  cnp_segment_plan *plan, *small;
  cr_assert_eq(cnp_segment_plan_create(&plan, CNP_BACKEND_HOST, 0, 8, 4), CNP_OK);
  cr_assert_eq(cnp_segment_plan_create(&small, CNP_BACKEND_HOST, 0, 4, 4), CNP_OK);
  cnp_array keys = host_vec(CNP_INT64, 8), fk = host_vec(CNP_FLOAT64, 8);
  cnp_array count = host_vec(CNP_INT64, 1), c32 = host_vec(CNP_INT32, 1);
  cnp_array x = host_vec(CNP_FLOAT64, 8), out = host_vec(CNP_FLOAT64, 4);
  for (int i = 0; i < 8; i++) ((int64_t *)keys.data)[i] = i < 4 ? i : 9;
  ((int64_t *)count.data)[0] = 4;
  cnp_array in_keys = keys;
  in_keys.shape[0] = 1;
  cnp_array on_cuda = count;
  on_cuda.backend = CNP_BACKEND_CUDA;

  /* the sorted form checks the same on the host (and builds the same plan) */
  typedef cnp_status (*build_fn)(cnp_segment_plan *, const cnp_array *, const cnp_array *,
                                 cnp_stream *);
  const build_fn builds[2] = {cnp_segment_plan_build_device_count,
                              cnp_segment_plan_build_sorted_device_count};
  for (int f = 0; f < 2; f++) {
    build_fn build = builds[f];
    ((int64_t *)count.data)[0] = 4;
    cr_expect_eq(build(NULL, &keys, &count, NULL), CNP_EINVAL);
    cr_expect_eq(build(plan, NULL, &count, NULL), CNP_EINVAL);
    cr_expect_eq(build(plan, &keys, NULL, NULL), CNP_EINVAL);
    cr_expect_eq(build(plan, &fk, &count, NULL), CNP_EDTYPE);
    cr_expect_eq(build(plan, &keys, &c32, NULL), CNP_EDTYPE);
    cr_expect_eq(build(plan, &keys, &in_keys, NULL), CNP_EALIAS);
    cr_expect_eq(build(plan, &keys, &on_cuda, NULL), CNP_EDEVICE);
    cr_expect_eq(build(small, &keys, &count, NULL), CNP_EOVERFLOW);
    /* keys 9 >= n_segments only past the count: fine; the plan then sums 8-row values */
    cr_expect_eq(build(plan, &keys, &count, NULL), CNP_OK, "%s",
                 cnp_last_error());
    for (int i = 0; i < 8; i++) ((double *)x.data)[i] = i + 1;
    cr_expect_eq(cnp_segment_plan_sum(plan, &x, &out, NULL), CNP_OK, "%s", cnp_last_error());
    for (int s = 0; s < 4; s++) cr_expect_eq(((double *)out.data)[s], (double)(s + 1));
    ((int64_t *)count.data)[0] = 5;               /* now key 9 counts */
    cr_expect_eq(build(plan, &keys, &count, NULL), CNP_ERANGE);
    cr_expect_eq(cnp_segment_plan_sum(plan, &x, &out, NULL), CNP_ESTATE);   /* unbuilt */
    ((int64_t *)count.data)[0] = 9;
    cr_expect_eq(build(plan, &keys, &count, NULL), CNP_ERANGE);
    expect_msg("count = 9 outside [0, N = 8]");
  }
  cnp_segment_plan_destroy(plan);
  cnp_segment_plan_destroy(small);
  free(keys.data);
  free(fk.data);
  free(count.data);
  free(c32.data);
  free(x.data);
  free(out.data);
}
