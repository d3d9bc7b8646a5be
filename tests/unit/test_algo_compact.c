/*
** test_algo_compact.c — cnp_compact_by_mask on the host backend: randomized property tests
** against a brute-force reference (every size of ALGO_SIZES, five mask patterns, mixed
** dtypes, (N,), (N,k), component-major (k,N) and F-order layouts), thread-count
** independence, and every argument error with its exact status.
*/
#include "test_algo_util.h"

#include "cnp/algo.h"
#include "internal.h"             /* cnp__fail_alloc_after */

enum { ALL_TRUE, ALL_FALSE, ALTERNATING, MOSTLY_LIVE, MOSTLY_DEAD, N_PATTERNS };

static void fill_mask(cnp_array *m, int pattern, uint64_t seed)
{
  unsigned char *p = m->data;
  for (int64_t i = 0; i < m->shape[0]; i++) {
    double u = rng_unit(&seed);
    unsigned char live = (unsigned char)(1 + rng_next(&seed) % 255);   /* any nonzero byte */
    switch (pattern) {
    case ALL_TRUE: p[i] = 1; break;
    case ALL_FALSE: p[i] = 0; break;
    case ALTERNATING: p[i] = (unsigned char)(i % 2 == 0); break;
    case MOSTLY_LIVE: p[i] = u < 0.9 ? live : 0; break;
    default: p[i] = u < 0.1 ? live : 0; break;
    }
  }
}

#define N_ARR 8

/* One case: n rows, a mask pattern, eight arrays of mixed dtypes and layouts. */
static void run_case(int64_t n, int pattern, uint64_t seed, cnp_workspace *ws)
{
  cnp_array mask = host_vec(CNP_BOOL, n);
  fill_mask(&mask, pattern, seed);
  int64_t s_n[1] = {n}, s_n3[2] = {n, 3}, s_2n[2] = {2, n}, s_n2[2] = {n, 2};
  int64_t s_3n[2] = {3, n}, s_n5[2] = {n, 5}, s_n12[3] = {n, 1, 2}, s_22n[3] = {2, 2, n};
  cnp_array arr[N_ARR] = {
      host_array(CNP_FLOAT64, 1, s_n, 'C'),     /* (N,)                      */
      host_array(CNP_INT32, 2, s_n3, 'C'),      /* (N,3): 12-byte rows       */
      host_array(CNP_FLOAT32, 2, s_2n, 'C'),    /* component-major (2,N)     */
      host_array(CNP_COMPLEX128, 2, s_n2, 'F'), /* F-order (N,2): 2 blocks   */
      host_array(CNP_FLOAT16, 2, s_3n, 'F'),    /* F-order (3,N): 6-byte rows */
      host_array(CNP_INT64, 2, s_n5, 'C'),      /* 40-byte rows (> row_bytes) */
      host_array(CNP_BOOL, 3, s_n12, 'C'),      /* (N,1,2)                    */
      host_array(CNP_UINT64, 3, s_22n, 'C'),    /* (2,2,N)                    */
  };
  void *orig[N_ARR];
  for (int j = 0; j < N_ARR; j++) {
    fill_random(&arr[j], seed + 17 * (uint64_t)j);
    orig[j] = dup_bytes(&arr[j]);
  }
  int64_t *src = malloc((size_t)(n > 0 ? n : 1) * sizeof *src), m = 0;
  const unsigned char *mk = mask.data;
  for (int64_t i = 0; i < n; i++)
    if (mk[i]) src[m++] = i;
  int64_t got = -1;
  cr_assert_eq(cnp_compact_by_mask(&mask, arr, N_ARR, &got, ws, NULL), CNP_OK, "%s",
               cnp_last_error());
  cr_assert_eq(got, m, "n = %lld pattern %d: count %lld, expected %lld", (long long)n, pattern,
               (long long)got, (long long)m);
  for (int j = 0; j < N_ARR; j++) {
    char what[64];
    snprintf(what, sizeof what, "n=%lld pattern=%d array %d", (long long)n, pattern, j);
    check_rows(&arr[j], orig[j], n, src, m, what);
    free(orig[j]);
    free(arr[j].data);
  }
  free(src);
  free(mask.data);
}

Test(algo_compact, property_all_sizes_and_patterns)
{
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 100000, 0, 0), CNP_OK);
  for (int s = 0; s < ALGO_NSIZES; s++)
    for (int p = 0; p < N_PATTERNS; p++)
      run_case(ALGO_SIZES[s], p, 1000u * (uint64_t)s + (uint64_t)p, ws);
  cr_assert_eq(cnp_workspace_destroy(ws), CNP_OK);
}

/* Three threads (an odd team) and one thread give the same answers as the reference. */
Test(algo_compact, odd_thread_counts)
{
  for (int threads = 1; threads <= 3; threads += 2) {
    set_threads(threads);
    cnp_workspace *ws;
    cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 77777, 0, 64), CNP_OK);
    run_case(77777, MOSTLY_LIVE, 5, ws);
    run_case(77777, MOSTLY_DEAD, 6, ws);
    run_case(77777, ALTERNATING, 7, ws);
    cnp_workspace_destroy(ws);
  }
}

/* A square (N, N) array moves along axis 0 (documented rule). */
Test(algo_compact, square_moves_along_axis0)
{
  int64_t n = 4, sh[2] = {4, 4};
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, n, 0, 0), CNP_OK);
  cnp_array mask = host_vec(CNP_BOOL, n), sq = host_array(CNP_INT32, 2, sh, 'C');
  unsigned char mk[4] = {0, 1, 0, 1};
  memcpy(mask.data, mk, 4);
  int32_t *v = sq.data;
  for (int i = 0; i < 16; i++) v[i] = i;
  int64_t got;
  cr_assert_eq(cnp_compact_by_mask(&mask, &sq, 1, &got, ws, NULL), CNP_OK);
  cr_assert_eq(got, 2);
  int32_t want[8] = {4, 5, 6, 7, 12, 13, 14, 15};
  cr_assert_arr_eq(v, want, sizeof want);
  free(mask.data);
  free(sq.data);
  cnp_workspace_destroy(ws);
}

/* No arrays: only the count. */
Test(algo_compact, count_only)
{
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 10, 0, 0), CNP_OK);
  cnp_array mask = host_vec(CNP_BOOL, 10);
  ((unsigned char *)mask.data)[3] = 7;
  ((unsigned char *)mask.data)[9] = 1;
  int64_t got = -1;
  cr_assert_eq(cnp_compact_by_mask(&mask, NULL, 0, &got, ws, NULL), CNP_OK);
  cr_assert_eq(got, 2);
  free(mask.data);
  cnp_workspace_destroy(ws);
}

/* ---- errors ---------------------------------------------------------------------------- */

Test(algo_compact, errors)
{
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 8, 0, 0), CNP_OK);
  cnp_array mask = host_vec(CNP_BOOL, 8), x = host_vec(CNP_FLOAT64, 8);
  cnp_array bad_dt = host_vec(CNP_INT32, 8), x7 = host_vec(CNP_FLOAT64, 7);
  int64_t got, s2[2] = {2, 4};
  cnp_array mask2d = host_array(CNP_BOOL, 2, s2, 'C');

  cr_expect_eq(cnp_compact_by_mask(NULL, &x, 1, &got, ws, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_compact_by_mask(&mask, &x, 1, NULL, ws, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_compact_by_mask(&mask, &x, 1, &got, NULL, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_compact_by_mask(&mask, NULL, 1, &got, ws, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_compact_by_mask(&mask, &x, -1, &got, ws, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_compact_by_mask(&bad_dt, &x, 1, &got, ws, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_compact_by_mask(&mask2d, &x, 1, &got, ws, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_compact_by_mask(&mask, &x7, 1, &got, ws, NULL), CNP_ESHAPE);
  expect_msg("arrays[0] has no axis of extent N = 8");

  /* strided mask and strided array */
  cnp_array sm = mask;
  sm.shape[0] = 4;
  sm.strides[0] = 2;
  cr_expect_eq(cnp_compact_by_mask(&sm, &x, 0, &got, ws, NULL), CNP_ELAYOUT);
  cnp_array sx = x;
  sx.shape[0] = 4;
  sx.strides[0] = 16;
  cnp_array m4 = mask;
  m4.shape[0] = 4;
  cr_expect_eq(cnp_compact_by_mask(&m4, &sx, 1, &got, ws, NULL), CNP_ELAYOUT);

  /* 0-d array */
  cnp_array scalar = x;
  scalar.ndim = 0;
  cr_expect_eq(cnp_compact_by_mask(&mask, &scalar, 1, &got, ws, NULL), CNP_ESHAPE);

  /* aliasing: the same array twice, an array over the mask, overlapping halves */
  cnp_array two[2] = {x, x};
  cr_expect_eq(cnp_compact_by_mask(&mask, two, 2, &got, ws, NULL), CNP_EALIAS);
  expect_msg("arrays[1] overlaps arrays[0]");
  cnp_array over_mask = mask;
  cr_expect_eq(cnp_compact_by_mask(&mask, &over_mask, 1, &got, ws, NULL), CNP_EALIAS);

  /* capacity */
  cnp_array big_mask = host_vec(CNP_BOOL, 9);
  cr_expect_eq(cnp_compact_by_mask(&big_mask, NULL, 0, &got, ws, NULL), CNP_EOVERFLOW);

  /* mixed backends: an array that claims to live on CUDA */
  cnp_array fake = x;
  fake.backend = CNP_BACKEND_CUDA;
  cr_expect_eq(cnp_compact_by_mask(&mask, &fake, 1, &got, ws, NULL), CNP_EDEVICE);
  cnp_array fake_mask = mask;
  fake_mask.backend = CNP_BACKEND_CUDA;
  cr_expect_eq(cnp_compact_by_mask(&fake_mask, NULL, 0, &got, ws, NULL), CNP_EDEVICE);
  expect_msg("workspace is on host");

  /* nothing was moved by any failed call */
  free(mask.data);
  free(x.data);
  free(bad_dt.data);
  free(x7.data);
  free(mask2d.data);
  free(big_mask.data);
  cr_expect_eq(cnp_workspace_destroy(ws), CNP_OK);
  cr_expect_eq(cnp_workspace_destroy(NULL), CNP_OK);
}

Test(algo_compact, workspace_errors)
{
  cnp_workspace *ws = (cnp_workspace *)1;
  cr_expect_eq(cnp_workspace_create(NULL, CNP_BACKEND_HOST, 0, 1, 0, 0), CNP_EINVAL);
  cr_expect_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, -1, 0, 0), CNP_EINVAL);
  cr_expect_eq(ws, NULL);
  cr_expect_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 1, -5, 0), CNP_EINVAL);
  cr_expect_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 1, 1, 0, 0), CNP_EDEVICE);
  cr_expect_eq(cnp_workspace_create(&ws, (cnp_backend)7, 0, 1, 0, 0), CNP_EINVAL);
  cr_expect_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, INT64_C(1) << 50, 0, 0),
               CNP_EOVERFLOW);
#ifndef CNP_HAVE_CUDA
  cr_expect_eq(cnp_workspace_create(&ws, CNP_BACKEND_CUDA, 0, 1, 0, 0), CNP_EUNSUPPORTED);
#endif
  size_t bytes = 0;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 1000, 0, 0), CNP_OK);
  cr_expect_eq(cnp_workspace_bytes(ws, &bytes), CNP_OK);
  cr_expect_geq(bytes, 1000u * 32u);
  cr_expect_eq(cnp_workspace_bytes(ws, NULL), CNP_EINVAL);
  cnp_workspace_destroy(ws);
}

/* A failed allocation during create is CNP_ENOMEM and leaks nothing. */
Test(algo_compact, workspace_out_of_memory)
{
  cnp_workspace *ws = NULL;
  int saw_enomem = 0;
  for (long k = 1; k <= 8; k++) {
    cnp__fail_alloc_after(k);
    cnp_status st = cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 100, 0, 0);
    cnp__fail_alloc_after(0);
    if (st == CNP_ENOMEM) {
      saw_enomem = 1;
      cr_expect_eq(ws, NULL);
    } else {
      cr_expect_eq(st, CNP_OK);
      cnp_workspace_destroy(ws);
    }
  }
  cr_expect(saw_enomem);
}
