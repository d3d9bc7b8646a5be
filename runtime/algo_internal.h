/*
** algo_internal.h — private side of cnp/algo.h: handle layouts, the row-layout helper, and
** the CUDA entry points the front ends (algo.c) call for arrays that live on CUDA.
**
** Division of labour: algo.c validates every argument (NULLs, dtypes, shapes, layouts,
** aliasing, backend/device agreement, N <= capacity, stream backend) before dispatching,
** so the cnp__cuda_* functions may trust their arguments' metadata. What needs the data
** (key range checks, sortedness for cell_offsets) is the backend's job and reported with
** the same statuses and message shapes as the host backend (see algo_host.c):
**   "cnp_cell_offsets: sorted_cells not sorted at index %lld (%lld after %lld)"   EORDER
**   "cnp_cell_offsets: sorted_cells[%lld] = %lld outside [0, %lld)"              ERANGE
**   "cnp_sort_by_key: keys[%lld] = %lld (%llu for uint64) outside [0, key_limit %lld)" ERANGE
**   "cnp_segment_plan_build: keys[%lld] = %lld >= n_segments %lld"               ERANGE
** The op names passed to cnp__fail are the public function names.
** Implemented in algo_cuda.cu (CUDA builds) or algo_nocuda.c (CNP_EUNSUPPORTED).
*/
#ifndef CNP_ALGO_INTERNAL_H
#define CNP_ALGO_INTERNAL_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CNP__MAGIC_WORKSPACE 0x434e5057u  /* "CNPW" */
#define CNP__MAGIC_PLAN      0x434e5050u  /* "CNPP" */

struct cnp_workspace {
  uint32_t    magic;
  cnp_backend backend;
  int         device;
  int64_t     capacity;                /* rows */
  int64_t     key_limit;               /* counting-sort bucket bound, 0 if none */
  size_t      row_bytes;               /* >= 16 */
  size_t      bytes;                   /* temporary storage held (for reports) */
  void       *impl;                    /* backend-private storage (host: cnp__host_ws) */
};

struct cnp_segment_plan {
  uint32_t    magic;
  cnp_backend backend;
  int         device;
  int64_t     capacity;                /* rows */
  int64_t     n_segments;
  int         built;                   /* 1 after a successful build */
  int64_t     n_rows;                  /* N of the last build */
  int64_t     n_kept;                  /* rows with key >= 0 at the last build */
  void       *impl;                    /* backend-private storage */
};

/* How an array's rows are laid out in memory, along its row axis (see cnp/algo.h):
** n_blocks blocks, block b starts at data + b * block_stride; in each block row i occupies
** row_bytes contiguous bytes at offset i * row_bytes. (N,), C-order (N, k...) and F-order
** (k..., N): one block of rows of k*itemsize bytes. C-order (k..., N) and F-order
** (N, k...): k blocks of rows of itemsize bytes, block_stride = N * itemsize. */
typedef struct cnp__rows {
  char   *data;
  int64_t n_blocks;
  int64_t block_stride;                /* bytes */
  size_t  row_bytes;
} cnp__rows;

/* Resolve the row axis of `a` for N rows (a validated array). CNP_ESHAPE / CNP_ELAYOUT with
** a message naming `op` and `what` when the array does not qualify. */
cnp_status cnp__algo_rows(const cnp_array *a, int64_t n, const char *op, const char *what,
                          cnp__rows *out);
/* First and one-past-last byte an array's data covers (for alias checks). */
void cnp__array_span(const cnp_array *a, uintptr_t *lo, uintptr_t *hi);

/* ---- CUDA entry points: same arguments as the public calls, already validated ---------- */
/* Fill ws->impl (and ws->bytes) for ws->capacity/key_limit/row_bytes on ws->device. */
cnp_status cnp__cuda_workspace_create(cnp_workspace *ws);
cnp_status cnp__cuda_workspace_destroy(cnp_workspace *ws);

cnp_status cnp__cuda_compact_by_mask(const cnp_array *mask, const cnp_array *arrays,
                                     int n_arrays, int64_t *n_out, cnp_workspace *ws,
                                     cnp_stream *s);
cnp_status cnp__cuda_compact_by_mask_device_count(const cnp_array *mask,
                                                  const cnp_array *arrays, int n_arrays,
                                                  cnp_array *count, cnp_workspace *ws,
                                                  cnp_stream *s);
cnp_status cnp__cuda_sort_by_key(cnp_array *keys, cnp_array *order, const cnp_array *values,
                                 int n_values, int64_t key_limit, cnp_workspace *ws,
                                 cnp_stream *s);
/* ws may be NULL here (optional on every backend for cell_offsets). */
cnp_status cnp__cuda_cell_offsets(const cnp_array *sorted_cells, int64_t n_cells,
                                  cnp_array *offsets, cnp_workspace *ws, cnp_stream *s);
cnp_status cnp__cuda_segment_boundaries(const cnp_array *sorted_keys,
                                        cnp_array *unique_keys, cnp_array *starts,
                                        cnp_array *stops, int64_t *count,
                                        cnp_workspace *ws, cnp_stream *s);

/* Device-count forms (count: validated int64[1] on the keys' device; N = keys->shape[0]). */
cnp_status cnp__cuda_sort_by_key_device_count(cnp_array *keys, cnp_array *order,
                                              const cnp_array *values, int n_values,
                                              int64_t key_limit, const cnp_array *count,
                                              cnp_workspace *ws, cnp_stream *s);
/* Sets plan->n_rows = N and plan->n_kept = -1. */
cnp_status cnp__cuda_segment_plan_build_device_count(cnp_segment_plan *plan,
                                                     const cnp_array *keys,
                                                     const cnp_array *count, cnp_stream *s);

/* As above, for keys sorted over rows [0, n): no sort (identity plan, offsets on device). */
cnp_status cnp__cuda_segment_plan_build_sorted_device_count(cnp_segment_plan *plan,
                                                            const cnp_array *keys,
                                                            const cnp_array *count,
                                                            cnp_stream *s);

/* Fill plan->impl for plan->capacity/n_segments; destroy frees it. */
cnp_status cnp__cuda_segment_plan_create(cnp_segment_plan *plan);
cnp_status cnp__cuda_segment_plan_destroy(cnp_segment_plan *plan);
/* Sets plan->n_rows and plan->n_kept; the front end sets plan->built on success. */
cnp_status cnp__cuda_segment_plan_build(cnp_segment_plan *plan, const cnp_array *keys,
                                        cnp_stream *s);
/* values/out already checked against the plan (shape, dtype rule, layout, aliasing). */
cnp_status cnp__cuda_segment_plan_sum(cnp_segment_plan *plan, const cnp_array *values,
                                      cnp_array *out, cnp_stream *s);

/* ---- host implementations (algo_host.c), same contract -------------------------------- */
cnp_status cnp__host_workspace_create(cnp_workspace *ws);
cnp_status cnp__host_workspace_destroy(cnp_workspace *ws);
cnp_status cnp__host_compact_by_mask(const cnp_array *mask, const cnp_array *arrays,
                                     int n_arrays, int64_t *n_out, cnp_workspace *ws);
cnp_status cnp__host_sort_by_key(cnp_array *keys, cnp_array *order, const cnp_array *values,
                                 int n_values, int64_t key_limit, cnp_workspace *ws);
cnp_status cnp__host_cell_offsets(const cnp_array *sorted_cells, int64_t n_cells,
                                  cnp_array *offsets);
cnp_status cnp__host_segment_boundaries(const cnp_array *sorted_keys,
                                        cnp_array *unique_keys, cnp_array *starts,
                                        cnp_array *stops, int64_t *count);
/* Sorts rows [0, n) of the N = keys->shape[0] rows (n <= N); order[i] = i for i >= n. */
cnp_status cnp__host_sort_by_key_rows(cnp_array *keys, cnp_array *order,
                                      const cnp_array *values, int n_values, int64_t key_limit,
                                      cnp_workspace *ws, int64_t n);
cnp_status cnp__host_segment_plan_create(cnp_segment_plan *plan);
cnp_status cnp__host_segment_plan_destroy(cnp_segment_plan *plan);
cnp_status cnp__host_segment_plan_build(cnp_segment_plan *plan, const cnp_array *keys);
/* Builds over rows [0, n) of keys (n <= N = keys->shape[0]); the plan describes N rows,
** rows [n, N) dropped. */
cnp_status cnp__host_segment_plan_build_rows(cnp_segment_plan *plan, const cnp_array *keys,
                                             int64_t n);
cnp_status cnp__host_segment_plan_sum(cnp_segment_plan *plan, const cnp_array *values,
                                      cnp_array *out);

#ifdef __cplusplus
}
#endif

#endif /* CNP_ALGO_INTERNAL_H */
