/*
** algo_internal.h — private side of cnp/algo.h: handle layouts, the row-layout helper,
** and the table of functions each algorithm backend fills (host, CUDA, no-CUDA).
**
** Division of labour: algo.c validates every argument (NULLs, dtypes, shapes, layouts,
** aliasing, backend/device agreement, N <= capacity, stream backend) before dispatching,
** so the backend tables' functions may trust their arguments' metadata. What needs the data
** (key range checks, sortedness for cell_offsets) is the backend's job and reported with
** the same statuses and message shapes as the host backend (see algo_host.c):
**   "cnp_cell_offsets: sorted_cells not sorted at index %lld (%lld after %lld)"   EORDER
**   "cnp_cell_offsets: sorted_cells[%lld] = %lld outside [0, %lld)"              ERANGE
**   "cnp_sort_by_key: keys[%lld] = %lld (%llu for uint64) outside [0, key_limit %lld)" ERANGE
**   "cnp_segment_plan_build: keys[%lld] = %lld >= n_segments %lld"               ERANGE
** The op names passed to cnp__fail are the public function names.
** The backends are tables of functions (cnp__algo_backend below), like the core's.
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

/* ---- the algorithm backends ------------------------------------------------------------
** One table per implementation file: cnp__algo_host (algo_host.c), cnp__algo_cuda
** (algo_cuda.cu, or algo_nocuda.c where every entry but the destroys answers
** CNP_EUNSUPPORTED). The front ends (algo.c) validate, pick the table of the arrays'
** backend (cnp__algo_of) and call through it; no front end tests the backend itself.
** Every entry takes the public call's arguments, already validated, and the stream (the
** host ignores it). Device-count forms: count is a validated int64[1] on the keys'
** backend and device, N = the keys' (mask's) rows; the host reads it from host memory
** (CNP_ERANGE outside [0, N]), CUDA only from kernels. */
typedef struct cnp__algo_backend {
  const char *name;
  /* Fill ws->impl (and ws->bytes) for ws->capacity/key_limit/row_bytes on ws->device. */
  cnp_status (*workspace_create)(cnp_workspace *ws);
  cnp_status (*workspace_destroy)(cnp_workspace *ws);
  cnp_status (*compact)(const cnp_array *mask, const cnp_array *arrays, int n_arrays,
                        int64_t *n_out, cnp_workspace *ws, cnp_stream *s);
  cnp_status (*compact_dc)(const cnp_array *mask, const cnp_array *arrays, int n_arrays,
                           cnp_array *count, cnp_workspace *ws, cnp_stream *s);
  cnp_status (*sort)(cnp_array *keys, cnp_array *order, const cnp_array *values,
                     int n_values, int64_t key_limit, cnp_workspace *ws, cnp_stream *s);
  cnp_status (*sort_dc)(cnp_array *keys, cnp_array *order, const cnp_array *values,
                        int n_values, int64_t key_limit, const cnp_array *count,
                        cnp_workspace *ws, cnp_stream *s);
  /* ws may be NULL here (optional on every backend for cell_offsets). */
  cnp_status (*cell_offsets)(const cnp_array *sorted_cells, int64_t n_cells,
                             cnp_array *offsets, cnp_workspace *ws, cnp_stream *s);
  cnp_status (*segment_boundaries)(const cnp_array *sorted_keys, cnp_array *unique_keys,
                                   cnp_array *starts, cnp_array *stops, int64_t *count,
                                   cnp_workspace *ws, cnp_stream *s);
  /* Fill plan->impl for plan->capacity/n_segments; destroy frees it. */
  cnp_status (*plan_create)(cnp_segment_plan *plan);
  cnp_status (*plan_destroy)(cnp_segment_plan *plan);
  /* Sets plan->n_rows and plan->n_kept; the front end sets plan->built on success. */
  cnp_status (*plan_build)(cnp_segment_plan *plan, const cnp_array *keys, cnp_stream *s);
  /* Device-count builds over rows [0, n) of the N rows; `sorted`: the caller sorted those
  ** rows by these keys (CUDA then skips the sort). CUDA sets n_kept = -1. */
  cnp_status (*plan_build_dc)(cnp_segment_plan *plan, const cnp_array *keys,
                              const cnp_array *count, int sorted, cnp_stream *s);
  /* values/out already checked against the plan (shape, dtype rule, layout, aliasing). */
  cnp_status (*plan_sum)(cnp_segment_plan *plan, const cnp_array *values, cnp_array *out,
                         cnp_stream *s);
  /* cnp_scan: rows = the components of in (and out: same layout), each a contiguous run of
  ** n_axis elements (row_bytes = itemsize). count: NULL or the device count. ws: NULL or
  ** checked. */
  cnp_status (*scan)(const cnp_array *in, cnp_array *out, cnp_scan_kind kind,
                     const cnp__rows *rows, int64_t n_axis, const cnp_array *count,
                     cnp_workspace *ws, cnp_stream *s);
  /* cnp_reduce: in 1-D contiguous of N = in->shape[0] elements; out 1 element of
  ** cnp_reduce_dtype(op, in->dtype). */
  cnp_status (*reduce)(const cnp_array *in, cnp_reduce_op op, cnp_array *out,
                       const cnp_array *count, cnp_workspace *ws, cnp_stream *s);
} cnp__algo_backend;

extern const cnp__algo_backend cnp__algo_host;
extern const cnp__algo_backend cnp__algo_cuda;
/* Host scans and reductions (algo_reduce_host.c) over n rows, behind cnp__algo_host. */
cnp_status cnp__host_scan(const cnp_array *in, cnp_array *out, cnp_scan_kind kind,
                          const cnp__rows *rows, int64_t n);
cnp_status cnp__host_reduce(const cnp_array *in, cnp_reduce_op op, cnp_array *out,
                            int64_t n);

/* The table of backend b (b validated by the caller: host or CUDA). */
const cnp__algo_backend *cnp__algo_of(cnp_backend b);

#ifdef __cplusplus
}
#endif

#endif /* CNP_ALGO_INTERNAL_H */
