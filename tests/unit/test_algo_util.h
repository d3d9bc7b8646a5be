/*
** test_algo_util.h — helpers shared by the tests/unit/test_algo_*.c suites: a seeded RNG,
** host array wrappers, thread-count control, and a row checker that compares any array
** (any dtype, shape and contiguous layout) with a byte copy of its original contents.
*/
#ifndef CNP_TEST_ALGO_UTIL_H
#define CNP_TEST_ALGO_UTIL_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cnp/cnp.h"

/* The sizes every property test runs (both sides of the 32-wide and thread thresholds). */
static const int64_t ALGO_SIZES[] = {0, 1, 2, 31, 32, 33, 1000, 100000};
#define ALGO_NSIZES ((int)(sizeof ALGO_SIZES / sizeof ALGO_SIZES[0]))

static inline uint64_t rng_next(uint64_t *s)    /* splitmix64 */
{
  uint64_t z = (*s += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static inline double rng_unit(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1p-53; }

static inline void set_threads(int n)
{
#ifdef _OPENMP
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

/* A host array of the given shape over calloc'd storage (never NULL, even when empty).
** order 'C' or 'F'. */
static inline cnp_array host_array(cnp_dtype t, int ndim, const int64_t *shape, char order)
{
  int64_t strides[CNP_MAX_DIMS], st = (int64_t)cnp_dtype_size(t), numel = 1;
  for (int i = 0; i < ndim; i++) {
    int d = order == 'C' ? ndim - 1 - i : i;
    strides[d] = st;
    st *= shape[d] ? shape[d] : 1;
    numel *= shape[d];
  }
  void *p = calloc((size_t)(numel > 0 ? numel : 1), cnp_dtype_size(t));
  cr_assert(p != NULL);
  cnp_array a;
  cr_assert_eq(cnp_array_wrap(&a, p, CNP_BACKEND_HOST, 0, t, ndim, shape, strides), CNP_OK,
               "%s", cnp_last_error());
  return a;
}

static inline cnp_array host_vec(cnp_dtype t, int64_t n)
{
  return host_array(t, 1, &n, 'C');
}

static inline int64_t numel(const cnp_array *a)
{
  int64_t n = 1;
  for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
  return n;
}

/* Byte span of an array's data (as laid out). */
static inline size_t span_bytes(const cnp_array *a)
{
  if (numel(a) == 0) return 0;
  size_t end = cnp_dtype_size(a->dtype);
  for (int d = 0; d < a->ndim; d++) end += (size_t)((a->shape[d] - 1) * a->strides[d]);
  return end;
}

static inline void *dup_bytes(const cnp_array *a)
{
  size_t b = span_bytes(a);
  void *p = malloc(b ? b : 1);
  cr_assert(p != NULL);
  if (b) memcpy(p, a->data, b);
  return p;
}

/* Fill with distinct bytes derived from seed. */
static inline void fill_random(cnp_array *a, uint64_t seed)
{
  size_t b = span_bytes(a);
  unsigned char *p = a->data;
  for (size_t i = 0; i < b; i++) p[i] = (unsigned char)rng_next(&seed);
}

/* The row axis rule of cnp/algo.h. */
static inline int row_axis(const cnp_array *a, int64_t n)
{
  return a->shape[0] == n ? 0 : a->ndim - 1;
}

/* Assert that for rows j < m, every element of `a` at row j equals the element of `orig`
** (a byte copy of a's old contents) at row src[j]. */
static inline void check_rows(const cnp_array *a, const void *orig, int64_t n,
                              const int64_t *src, int64_t m, const char *what)
{
  int axis = row_axis(a, n);
  size_t isz = cnp_dtype_size(a->dtype);
  int64_t idx[CNP_MAX_DIMS] = {0};
  int64_t total = numel(a);
  for (int64_t e = 0; e < total; e++) {
    int64_t off = 0;
    for (int d = 0; d < a->ndim; d++) off += idx[d] * a->strides[d];
    int64_t j = idx[axis];
    if (j < m) {
      int64_t soff = off + (src[j] - j) * a->strides[axis];
      if (memcmp((const char *)a->data + off, (const char *)orig + soff, isz) != 0)
        cr_assert_fail("%s: element at row %lld (from row %lld) differs", what, (long long)j,
                       (long long)src[j]);
    }
    for (int d = a->ndim - 1; d >= 0; d--) {     /* odometer */
      if (++idx[d] < a->shape[d]) break;
      idx[d] = 0;
    }
  }
}

static inline void expect_msg(const char *part)
{
  cr_expect(strstr(cnp_last_error(), part) != NULL, "'%s' not in '%s'", part,
            cnp_last_error());
}

#endif /* CNP_TEST_ALGO_UTIL_H */
