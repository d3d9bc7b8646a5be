/*
** algo_host.h — what the host algorithm files (algo_host.c, algo_host_segments.c) share:
** the OpenMP team helpers (one contiguous chunk of rows per thread, so results never
** depend on the thread count), the cell readers, and the segment-plan entry points that
** algo_host.c's table holds. Internal to libcnp.
*/
#ifndef CNP_ALGO_HOST_H
#define CNP_ALGO_HOST_H

#include "algo_internal.h"

#include <stdint.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

#define MAX_THREADS   256

static inline int max_threads(void)
{
#ifdef _OPENMP
  int t = omp_get_max_threads();
  return t < 1 ? 1 : t > MAX_THREADS ? MAX_THREADS : t;
#else
  return 1;
#endif
}

static inline int team_size(void)
{
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

static inline int thread_id(void)
{
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/* Start of chunk t of T over n rows. */
static inline int64_t chunk_start(int64_t n, int t, int T)
{
  return n * t / T;                            /* n <= 2^40, t <= 256: no overflow */
}

/* Threads worth using for n rows (tiny inputs stay on one thread). */
static inline int threads_for(int64_t n, int cap)
{
  int t = max_threads();
  if (t > cap) t = cap;
  if (n < 32768) t = 1;
  return t < 1 ? 1 : t;
}


static ALWAYS_INLINE int64_t cell_at(const void *c, int64_t i, cnp_dtype dt)
{
  return dt == CNP_INT32 ? ((const int32_t *)c)[i] : ((const int64_t *)c)[i];
}

/* 1 when a row of [i0, i1) (non-empty) is negative or below the row before it, without
** branches: every row and every difference to the row before must be >= 0 (no overflow
** between non-negative values), one sign bit over the OR of both. Else the last row is
** the largest. */
static ALWAYS_INLINE int block_unsorted(const void *c, int64_t i0, int64_t i1, cnp_dtype dt)
{
  if (dt == CNP_INT32) {
    const uint32_t *k = c;
    uint32_t acc = k[i0];
    for (int64_t i = i0 + 1; i < i1; i++) acc |= k[i] | (k[i] - k[i - 1]);
    return (int)(acc >> 31);
  }
  const uint64_t *k = c;
  uint64_t acc = k[i0];
  for (int64_t i = i0 + 1; i < i1; i++) acc |= k[i] | (k[i] - k[i - 1]);
  return (int)(acc >> 63);
}

/* Cell offsets and segment plans (algo_host_segments.c). */
cnp_status cnp__host_cell_offsets(const cnp_array *sorted_cells, int64_t n_cells,
                                 cnp_array *offsets, cnp_workspace *ws, cnp_stream *s);
cnp_status cnp__host_plan_create(cnp_segment_plan *plan);
cnp_status cnp__host_plan_destroy(cnp_segment_plan *plan);
cnp_status cnp__host_plan_build(cnp_segment_plan *plan, const cnp_array *keys,
                                cnp_stream *s);
cnp_status cnp__host_plan_build_rows(cnp_segment_plan *plan, const cnp_array *keys,
                                     int64_t n_rows);
cnp_status cnp__host_plan_sum(cnp_segment_plan *plan, const cnp_array *values,
                              cnp_array *out, cnp_stream *s);

#endif
