/*
** algo.c — front ends of the algorithms (cnp/algo.h).
**
** Every public call validates its arguments here (NULLs, handles, dtypes, shapes, layouts,
** aliasing, backend/device agreement, capacity) and then calls through the table of the
** arrays' backend (cnp__algo_of: algo_host.c, algo_cuda.cu or algo_nocuda.c); nothing here
** tests which backend it is. Checks that need the data itself (sortedness, key ranges)
** belong to the backends.
*/
#include "algo_internal.h"

#include <stdio.h>
#include <string.h>

/* ---- float16 ------------------------------------------------------------------------- */

float cnp_half_to_float(uint16_t h)
{
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1fu) {                            /* inf / NaN (payload kept) */
    bits = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) {                         /* normal */
    bits = sign | ((exp + 112u) << 23) | (man << 13);
  } else if (man == 0) {                         /* signed zero */
    bits = sign;
  } else {                                       /* subnormal: normalize */
    int e = -1;
    do {
      man <<= 1;
      e++;
    } while ((man & 0x400u) == 0);
    bits = sign | ((uint32_t)(112 - e) << 23) | ((man & 0x3ffu) << 13);
  }
  float f;
  memcpy(&f, &bits, sizeof f);
  return f;
}

uint16_t cnp_float_to_half(float f)
{
  uint32_t x;
  memcpy(&x, &f, sizeof x);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) {                       /* inf / NaN */
    if (ax == 0x7f800000u) return (uint16_t)(sign | 0x7c00u);
    return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  }
  if (ax >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);   /* rounds to >= 65520 */
  if (ax < 0x38800000u) {                        /* below the smallest normal 2^-14 */
    if (ax < 0x33000000u) return sign;           /* < 2^-25: rounds to zero */
    uint32_t e = ax >> 23;                       /* 102..112 */
    uint32_t m = (ax & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e;                   /* result = m >> (shift) in half ulps */
    uint32_t r = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) r++;
    return (uint16_t)(sign | r);
  }
  uint32_t r = ((ax - 0x38000000u) >> 13);       /* rebias exponent 127 -> 15 */
  uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) r++;
  return (uint16_t)(sign | r);
}

/* ---- layout helpers ------------------------------------------------------------------ */

static int64_t numel_of(const cnp_array *a);

static int is_contig(const cnp_array *a, int forder)
{
  if (numel_of(a) == 0) return 1;              /* an empty array has no layout */
  int64_t expect = (int64_t)cnp_dtype_size(a->dtype);
  for (int k = 0; k < a->ndim; k++) {
    int d = forder ? k : a->ndim - 1 - k;
    if (a->shape[d] != 1 && a->strides[d] != expect) return 0;
    expect *= a->shape[d];
  }
  return 1;
}

static int64_t numel_of(const cnp_array *a)
{
  int64_t n = 1;
  for (int d = 0; d < a->ndim; d++) n *= a->shape[d];
  return n;
}

void cnp__array_span(const cnp_array *a, uintptr_t *lo, uintptr_t *hi)
{
  uintptr_t base = (uintptr_t)a->data;
  if (a->data == NULL || numel_of(a) == 0) {
    *lo = *hi = base;
    return;
  }
  uintptr_t end = base + cnp_dtype_size(a->dtype);
  for (int d = 0; d < a->ndim; d++) end += (uintptr_t)((a->shape[d] - 1) * a->strides[d]);
  *lo = base;
  *hi = end;
}

static int spans_overlap(const cnp_array *a, const cnp_array *b)
{
  uintptr_t alo, ahi, blo, bhi;
  cnp__array_span(a, &alo, &ahi);
  cnp__array_span(b, &blo, &bhi);
  return alo < bhi && blo < ahi;
}

cnp_status cnp__algo_rows(const cnp_array *a, int64_t n, const char *op, const char *what,
                          cnp__rows *out)
{
  size_t isz = cnp_dtype_size(a->dtype);
  if (a->ndim < 1)
    return cnp__fail(CNP_ESHAPE, op, "%s is 0-d; need an axis of extent %lld", what,
                     (long long)n);
  int last = a->ndim - 1;
  int axis;
  if (a->shape[0] == n) axis = 0;
  else if (a->shape[last] == n) axis = last;
  else
    return cnp__fail(CNP_ESHAPE, op, "%s has no axis of extent N = %lld (shape[0] = %lld, "
                     "shape[%d] = %lld)", what, (long long)n, (long long)a->shape[0], last,
                     (long long)a->shape[last]);
  int c = is_contig(a, 0), f = is_contig(a, 1);
  if (!c && !f)
    return cnp__fail(CNP_ELAYOUT, op, "%s is neither C- nor F-contiguous", what);
  int64_t total = numel_of(a);
  out->data = (char *)a->data;
  if (n == 0 || total == 0) {
    out->n_blocks = 0;
    out->block_stride = 0;
    out->row_bytes = isz;
    return CNP_OK;
  }
  int64_t k = total / n;
  /* rows are whole contiguous blocks when the row axis varies slowest in memory */
  int one_block = k == 1 || (c && axis == 0) || (f && axis == last);
  if (one_block) {
    out->n_blocks = 1;
    out->block_stride = 0;
    out->row_bytes = (size_t)k * isz;
  } else {
    out->n_blocks = k;
    out->block_stride = n * (int64_t)isz;
    out->row_bytes = isz;
  }
  return CNP_OK;
}

/* ---- argument checks ----------------------------------------------------------------- */

static cnp_status check_on(const cnp_array *a, const cnp_array *ref, const char *op,
                           const char *what)
{
  if (a->backend != ref->backend || a->device != ref->device)
    return cnp__fail(CNP_EDEVICE, op, "%s is on %s:%d but the other arguments are on %s:%d",
                     what, cnp_backend_name(a->backend), a->device,
                     cnp_backend_name(ref->backend), ref->device);
  return CNP_OK;
}

static cnp_status check_stream_on(cnp_stream *s, cnp_backend b, int device, const char *op)
{
  if (s == NULL) return CNP_OK;
  cnp_status st = cnp__check_stream(s, op);
  if (st != CNP_OK) return st;
  if (s->backend != b || (b == CNP_BACKEND_CUDA && s->device != device))
    return cnp__fail(CNP_EDEVICE, op, "stream is on %s:%d but the arrays are on %s:%d",
                     cnp_backend_name(s->backend), s->device, cnp_backend_name(b), device);
  return CNP_OK;
}

/* Workspaces and plans are in the live-handle registry (alloc.c), so a destroyed one is
** recognized without reading freed memory. Same rules as streams and events
** (cnp__check_handle): NULL and a handle of another kind are CNP_EINVAL, a destroyed (or
** never created) one is CNP_ESTATE. */
static cnp_status check_ws_handle(const cnp_workspace *ws, const char *op)
{
  return cnp__check_handle(ws, CNP__MAGIC_WORKSPACE, "workspace", op);
}

static cnp_status check_plan_handle(const cnp_segment_plan *plan, const char *op)
{
  return cnp__check_handle(plan, CNP__MAGIC_PLAN, "segment plan", op);
}

static cnp_status check_ws(cnp_workspace *ws, const cnp_array *ref, int64_t n,
                           const char *op)
{
  cnp_status hst = check_ws_handle(ws, op);
  if (hst != CNP_OK) return hst;
  if (ws->backend != ref->backend || (ref->backend == CNP_BACKEND_CUDA &&
                                      ws->device != ref->device))
    return cnp__fail(CNP_EDEVICE, op, "workspace is on %s:%d but the arrays are on %s:%d",
                     cnp_backend_name(ws->backend), ws->device,
                     cnp_backend_name(ref->backend), ref->device);
  if (n > ws->capacity)
    return cnp__fail(CNP_EOVERFLOW, op, "N = %lld exceeds the workspace capacity %lld",
                     (long long)n, (long long)ws->capacity);
  return CNP_OK;
}

/* A 1-D contiguous array of one of the dtypes in `ok` (bit mask of 1 << dtype). */
static cnp_status check_vector(const cnp_array *a, unsigned ok, const char *op,
                               const char *what)
{
  cnp_status st = cnp__check_array(a, op, what);
  if (st != CNP_OK) return st;
  if (!((ok >> a->dtype) & 1u))
    return cnp__fail(CNP_EDTYPE, op, "%s has unsupported dtype %s", what,
                     cnp_dtype_name(a->dtype));
  if (a->ndim != 1)
    return cnp__fail(CNP_ESHAPE, op, "%s must be 1-D (ndim = %d)", what, a->ndim);
  if (a->shape[0] > 1 && a->strides[0] != (int64_t)cnp_dtype_size(a->dtype))
    return cnp__fail(CNP_ELAYOUT, op, "%s is not contiguous (stride %lld bytes)", what,
                     (long long)a->strides[0]);
  return CNP_OK;
}

#define KEY_DTYPES ((1u << CNP_INT32) | (1u << CNP_INT64) | (1u << CNP_UINT64))
#define CELL_DTYPES ((1u << CNP_INT32) | (1u << CNP_INT64))

/* Row-carrying arrays: validated, same backend as ref, a row axis of extent n, and no
** overlap with each other or with `others` (n_others arrays already checked). */
static cnp_status check_row_arrays(const cnp_array *arrays, int n_arrays, int64_t n,
                                   const cnp_array *ref, const cnp_array *const *others,
                                   int n_others, const char *op, const char *name)
{
  char what[48];
  if (n_arrays < 0) return cnp__fail(CNP_EINVAL, op, "n_%s = %d is negative", name, n_arrays);
  if (n_arrays > 0 && arrays == NULL) return cnp__fail(CNP_EINVAL, op, "%s is NULL", name);
  for (int j = 0; j < n_arrays; j++) {
    cnp__rows r;
    snprintf(what, sizeof what, "%s[%d]", name, j);
    cnp_status st = cnp__check_array(&arrays[j], op, what);
    if (st == CNP_OK) st = check_on(&arrays[j], ref, op, what);
    if (st == CNP_OK) st = cnp__algo_rows(&arrays[j], n, op, what, &r);
    if (st != CNP_OK) return st;
    for (int i = 0; i < n_others; i++)
      if (others[i] != NULL && spans_overlap(&arrays[j], others[i]))
        return cnp__fail(CNP_EALIAS, op, "%s overlaps another argument", what);
    for (int i = 0; i < j; i++)
      if (spans_overlap(&arrays[j], &arrays[i]))
        return cnp__fail(CNP_EALIAS, op, "%s[%d] overlaps %s[%d]", name, j, name, i);
  }
  return CNP_OK;
}

/* ---- handle lifecycles ------------------------------------------------------------------ */

const cnp__algo_backend *cnp__algo_of(cnp_backend b)
{
  return b == CNP_BACKEND_CUDA ? &cnp__algo_cuda : &cnp__algo_host;
}

/* (backend, device) of a new workspace or plan. */
static cnp_status check_binding(cnp_backend backend, int device, const char *op)
{
  if (backend != CNP_BACKEND_HOST && backend != CNP_BACKEND_CUDA)
    return cnp__fail(CNP_EINVAL, op, "unknown backend %d", (int)backend);
  if (backend == CNP_BACKEND_HOST && device != 0)
    return cnp__fail(CNP_EDEVICE, op, "host backend has only device 0 (got %d)", device);
  return CNP_OK;
}

static cnp_status ws_make(void *h)
{
  cnp_workspace *ws = h;
  return cnp__algo_of(ws->backend)->workspace_create(ws);
}

static cnp_status ws_unmake(void *h)
{
  cnp_workspace *ws = h;
  return cnp__algo_of(ws->backend)->workspace_destroy(ws);
}

static cnp_status plan_make(void *h)
{
  cnp_segment_plan *p = h;
  return cnp__algo_of(p->backend)->plan_create(p);
}

static cnp_status plan_unmake(void *h)
{
  cnp_segment_plan *p = h;
  return cnp__algo_of(p->backend)->plan_destroy(p);
}

static const cnp__handle_kind ws_kind = {ws_make, ws_unmake};
static const cnp__handle_kind plan_kind = {plan_make, plan_unmake};

/* ---- workspace ----------------------------------------------------------------------- */

cnp_status cnp_workspace_create(cnp_workspace **out, cnp_backend backend, int device,
                                int64_t capacity, int64_t key_limit, size_t row_bytes)
{
  static const char op[] = "cnp_workspace_create";
  CNP__CHECK_NOTNULL(op, out);
  *out = NULL;
  cnp_status st = check_binding(backend, device, op);
  if (st != CNP_OK) return st;
  if (capacity < 0 || key_limit < 0)
    return cnp__fail(CNP_EINVAL, op, "capacity (%lld) and key_limit (%lld) must be >= 0",
                     (long long)capacity, (long long)key_limit);
  if (row_bytes == 0) row_bytes = 16;
  if (row_bytes < 16) row_bytes = 16;
  if ((uint64_t)capacity > (UINT64_C(1) << 40) || (uint64_t)key_limit > (UINT64_C(1) << 40) ||
      row_bytes > (1u << 20))
    return cnp__fail(CNP_EOVERFLOW, op, "workspace sizes too large");
  cnp_workspace *ws = cnp__calloc(1, sizeof *ws);
  if (ws == NULL) return cnp__fail(CNP_ENOMEM, op, "no memory for the workspace");
  ws->magic = CNP__MAGIC_WORKSPACE;
  ws->backend = backend;
  ws->device = device;
  ws->capacity = capacity;
  ws->key_limit = key_limit;
  ws->row_bytes = row_bytes;
  return cnp__handle_open(ws, &ws->magic, &ws_kind, (void **)out, op);
}

cnp_status cnp_workspace_destroy(cnp_workspace *ws)
{
  if (ws == NULL) return CNP_OK;
  cnp_status hst = check_ws_handle(ws, "cnp_workspace_destroy");
  if (hst != CNP_OK) return hst;
  return cnp__handle_close(ws, &ws->magic, &ws_kind);
}

cnp_status cnp_workspace_bytes(const cnp_workspace *ws, size_t *bytes)
{
  static const char op[] = "cnp_workspace_bytes";
  CNP__CHECK_NOTNULL(op, ws);
  CNP__CHECK_NOTNULL(op, bytes);
  cnp_status hst = check_ws_handle(ws, op);
  if (hst != CNP_OK) return hst;
  *bytes = ws->bytes;
  return CNP_OK;
}

/* ---- compaction ---------------------------------------------------------------------- */

cnp_status cnp_compact_by_mask(const cnp_array *mask, const cnp_array *arrays, int n_arrays,
                               int64_t *n_out, cnp_workspace *ws, cnp_stream *s)
{
  static const char op[] = "cnp_compact_by_mask";
  CNP__CHECK_NOTNULL(op, mask);
  CNP__CHECK_NOTNULL(op, n_out);
  cnp_status st = check_vector(mask, 1u << CNP_BOOL, op, "mask");
  if (st != CNP_OK) return st;
  int64_t n = mask->shape[0];
  const cnp_array *others[1] = {mask};
  st = check_row_arrays(arrays, n_arrays, n, mask, others, 1, op, "arrays");
  if (st == CNP_OK) st = check_ws(ws, mask, n, op);
  if (st == CNP_OK) st = check_stream_on(s, mask->backend, mask->device, op);
  if (st != CNP_OK) return st;
  return cnp__algo_of(mask->backend)->compact(mask, arrays, n_arrays, n_out, ws, s);
}

cnp_status cnp_compact_by_mask_device_count(const cnp_array *mask, const cnp_array *arrays,
                                            int n_arrays, cnp_array *count,
                                            cnp_workspace *ws, cnp_stream *s)
{
  static const char op[] = "cnp_compact_by_mask_device_count";
  CNP__CHECK_NOTNULL(op, mask);
  CNP__CHECK_NOTNULL(op, count);
  cnp_status st = check_vector(mask, 1u << CNP_BOOL, op, "mask");
  if (st == CNP_OK) st = check_vector(count, 1u << CNP_INT64, op, "count");
  if (st == CNP_OK) st = check_on(count, mask, op, "count");
  if (st != CNP_OK) return st;
  if (count->shape[0] != 1)
    return cnp__fail(CNP_ESHAPE, op, "count must hold 1 element (has %lld)",
                     (long long)count->shape[0]);
  if (spans_overlap(count, mask)) return cnp__fail(CNP_EALIAS, op, "count overlaps mask");
  int64_t n = mask->shape[0];
  const cnp_array *others[2] = {mask, count};
  st = check_row_arrays(arrays, n_arrays, n, mask, others, 2, op, "arrays");
  if (st == CNP_OK) st = check_ws(ws, mask, n, op);
  if (st == CNP_OK) st = check_stream_on(s, mask->backend, mask->device, op);
  if (st != CNP_OK) return st;
  return cnp__algo_of(mask->backend)->compact_dc(mask, arrays, n_arrays, count, ws, s);
}

/* ---- sort ---------------------------------------------------------------------------- */

/* keys (a key vector), key_limit and the optional order output of both sort forms. */
static cnp_status check_sort_keys(const cnp_array *keys, const cnp_array *order,
                                  int64_t key_limit, const char *op)
{
  cnp_status st = check_vector(keys, KEY_DTYPES, op, "keys");
  if (st != CNP_OK) return st;
  int64_t n = keys->shape[0];
  if (key_limit < 0)
    return cnp__fail(CNP_EINVAL, op, "key_limit = %lld is negative", (long long)key_limit);
  if (order == NULL) return CNP_OK;
  st = check_vector(order, 1u << CNP_INT64, op, "order");
  if (st == CNP_OK) st = check_on(order, keys, op, "order");
  if (st != CNP_OK) return st;
  if (order->shape[0] != n)
    return cnp__fail(CNP_ESHAPE, op, "order has %lld rows, keys %lld",
                     (long long)order->shape[0], (long long)n);
  if (spans_overlap(order, keys)) return cnp__fail(CNP_EALIAS, op, "order overlaps keys");
  return CNP_OK;
}

cnp_status cnp_sort_by_key(cnp_array *keys, cnp_array *order, const cnp_array *values,
                           int n_values, int64_t key_limit, cnp_workspace *ws,
                           cnp_stream *s)
{
  static const char op[] = "cnp_sort_by_key";
  CNP__CHECK_NOTNULL(op, keys);
  cnp_status st = check_sort_keys(keys, order, key_limit, op);
  if (st != CNP_OK) return st;
  int64_t n = keys->shape[0];
  const cnp_array *others[2] = {keys, order};
  st = check_row_arrays(values, n_values, n, keys, others, 2, op, "values");
  if (st == CNP_OK) st = check_ws(ws, keys, n, op);
  if (st == CNP_OK) st = check_stream_on(s, keys->backend, keys->device, op);
  if (st != CNP_OK) return st;
  return cnp__algo_of(keys->backend)->sort(keys, order, values, n_values, key_limit, ws, s);
}

/* ---- device counts ------------------------------------------------------------------- */

/* count: int64[1] on ref's backend/device, not overlapping any of others[0..n_others). */
static cnp_status check_count(const cnp_array *count, const cnp_array *ref,
                              const cnp_array *const *others, int n_others, const char *op)
{
  cnp_status st = check_vector(count, 1u << CNP_INT64, op, "count");
  if (st == CNP_OK) st = check_on(count, ref, op, "count");
  if (st != CNP_OK) return st;
  if (count->shape[0] != 1)
    return cnp__fail(CNP_ESHAPE, op, "count must hold 1 element (has %lld)",
                     (long long)count->shape[0]);
  for (int i = 0; i < n_others; i++)
    if (others[i] != NULL && spans_overlap(count, others[i]))
      return cnp__fail(CNP_EALIAS, op, "count overlaps another argument");
  return CNP_OK;
}

cnp_status cnp_sort_by_key_device_count(cnp_array *keys, cnp_array *order,
                                        const cnp_array *values, int n_values,
                                        int64_t key_limit, const cnp_array *count,
                                        cnp_workspace *ws, cnp_stream *s)
{
  static const char op[] = "cnp_sort_by_key_device_count";
  CNP__CHECK_NOTNULL(op, keys);
  CNP__CHECK_NOTNULL(op, count);
  cnp_status st = check_sort_keys(keys, order, key_limit, op);
  if (st != CNP_OK) return st;
  int64_t n = keys->shape[0];
  const cnp_array *pair[2] = {keys, order};
  st = check_count(count, keys, pair, 2, op);
  if (st != CNP_OK) return st;
  const cnp_array *others[3] = {keys, order, count};
  st = check_row_arrays(values, n_values, n, keys, others, 3, op, "values");
  if (st == CNP_OK) st = check_ws(ws, keys, n, op);
  if (st == CNP_OK) st = check_stream_on(s, keys->backend, keys->device, op);
  if (st != CNP_OK) return st;
  return cnp__algo_of(keys->backend)->sort_dc(keys, order, values, n_values, key_limit,
                                              count, ws, s);
}

/* ---- cell offsets -------------------------------------------------------------------- */

cnp_status cnp_cell_offsets(const cnp_array *sorted_cells, int64_t n_cells,
                            cnp_array *offsets, cnp_workspace *ws, cnp_stream *s)
{
  static const char op[] = "cnp_cell_offsets";
  CNP__CHECK_NOTNULL(op, sorted_cells);
  CNP__CHECK_NOTNULL(op, offsets);
  cnp_status st = check_vector(sorted_cells, CELL_DTYPES, op, "sorted_cells");
  if (st == CNP_OK) st = check_vector(offsets, 1u << CNP_INT64, op, "offsets");
  if (st == CNP_OK) st = check_on(offsets, sorted_cells, op, "offsets");
  if (st != CNP_OK) return st;
  if (n_cells < 0)
    return cnp__fail(CNP_EINVAL, op, "n_cells = %lld is negative", (long long)n_cells);
  if (n_cells == INT64_MAX || offsets->shape[0] != n_cells + 1)
    return cnp__fail(CNP_ESHAPE, op, "offsets has %lld entries, need n_cells + 1 = %lld + 1",
                     (long long)offsets->shape[0], (long long)n_cells);
  if (spans_overlap(offsets, sorted_cells))
    return cnp__fail(CNP_EALIAS, op, "offsets overlaps sorted_cells");
  if (ws != NULL) {
    st = check_ws(ws, sorted_cells, 0, op);
    if (st != CNP_OK) return st;
  }
  st = check_stream_on(s, sorted_cells->backend, sorted_cells->device, op);
  if (st != CNP_OK) return st;
  return cnp__algo_of(sorted_cells->backend)->cell_offsets(sorted_cells, n_cells, offsets, ws,
                                                           s);
}

/* ---- segment boundaries -------------------------------------------------------------- */

static cnp_status check_capacity_out(const cnp_array *a, cnp_dtype want, int64_t n,
                                     const cnp_array *keys, const char *op, const char *what)
{
  cnp_status st = check_vector(a, 1u << want, op, what);
  if (st == CNP_OK) st = check_on(a, keys, op, what);
  if (st != CNP_OK) return st;
  if (a->shape[0] < n)
    return cnp__fail(CNP_ESHAPE, op, "%s holds %lld entries, need capacity N = %lld", what,
                     (long long)a->shape[0], (long long)n);
  return CNP_OK;
}

cnp_status cnp_segment_boundaries(const cnp_array *sorted_keys, cnp_array *unique_keys,
                                  cnp_array *starts, cnp_array *stops, int64_t *count,
                                  cnp_workspace *ws, cnp_stream *s)
{
  static const char op[] = "cnp_segment_boundaries";
  CNP__CHECK_NOTNULL(op, sorted_keys);
  CNP__CHECK_NOTNULL(op, count);
  cnp_status st = check_vector(sorted_keys, KEY_DTYPES, op, "sorted_keys");
  if (st != CNP_OK) return st;
  int64_t n = sorted_keys->shape[0];
  const cnp_array *outs[3] = {unique_keys, starts, stops};
  const char *names[3] = {"unique_keys", "starts", "stops"};
  for (int i = 0; i < 3; i++) {
    if (outs[i] == NULL) continue;
    st = check_capacity_out(outs[i], i == 0 ? sorted_keys->dtype : CNP_INT64, n,
                            sorted_keys, op, names[i]);
    if (st != CNP_OK) return st;
    if (spans_overlap(outs[i], sorted_keys))
      return cnp__fail(CNP_EALIAS, op, "%s overlaps sorted_keys", names[i]);
    for (int j = 0; j < i; j++)
      if (outs[j] != NULL && spans_overlap(outs[i], outs[j]))
        return cnp__fail(CNP_EALIAS, op, "%s overlaps %s", names[i], names[j]);
  }
  st = check_ws(ws, sorted_keys, n, op);
  if (st == CNP_OK) st = check_stream_on(s, sorted_keys->backend, sorted_keys->device, op);
  if (st != CNP_OK) return st;
  return cnp__algo_of(sorted_keys->backend)->segment_boundaries(sorted_keys, unique_keys,
                                                                starts, stops, count, ws, s);
}

/* ---- segment plans ------------------------------------------------------------------- */

cnp_dtype cnp_segment_sum_dtype(cnp_dtype t)
{
  switch (t) {
  case CNP_FLOAT16: case CNP_FLOAT32: case CNP_FLOAT64: case CNP_COMPLEX64:
  case CNP_COMPLEX128:
    return t;
  default:
    return CNP_FLOAT64;
  }
}

static cnp_status check_plan(const cnp_segment_plan *plan, const char *op)
{
  return check_plan_handle(plan, op);
}

static cnp_status check_plan_on(const cnp_segment_plan *plan, const cnp_array *a,
                                const char *op, const char *what)
{
  if (a->backend != plan->backend ||
      (a->backend == CNP_BACKEND_CUDA && a->device != plan->device))
    return cnp__fail(CNP_EDEVICE, op, "%s is on %s:%d but the plan is on %s:%d", what,
                     cnp_backend_name(a->backend), a->device,
                     cnp_backend_name(plan->backend), plan->device);
  return CNP_OK;
}

cnp_status cnp_segment_plan_create(cnp_segment_plan **out, cnp_backend backend, int device,
                                   int64_t capacity, int64_t n_segments)
{
  static const char op[] = "cnp_segment_plan_create";
  CNP__CHECK_NOTNULL(op, out);
  *out = NULL;
  cnp_status st = check_binding(backend, device, op);
  if (st != CNP_OK) return st;
  if (capacity < 0 || n_segments < 0)
    return cnp__fail(CNP_EINVAL, op, "capacity (%lld) and n_segments (%lld) must be >= 0",
                     (long long)capacity, (long long)n_segments);
  if ((uint64_t)capacity > (UINT64_C(1) << 40) || (uint64_t)n_segments > (UINT64_C(1) << 40))
    return cnp__fail(CNP_EOVERFLOW, op, "plan sizes too large");
  cnp_segment_plan *p = cnp__calloc(1, sizeof *p);
  if (p == NULL) return cnp__fail(CNP_ENOMEM, op, "no memory for the plan");
  p->magic = CNP__MAGIC_PLAN;
  p->backend = backend;
  p->device = device;
  p->capacity = capacity;
  p->n_segments = n_segments;
  return cnp__handle_open(p, &p->magic, &plan_kind, (void **)out, op);
}

cnp_status cnp_segment_plan_destroy(cnp_segment_plan *plan)
{
  if (plan == NULL) return CNP_OK;
  cnp_status hst = check_plan_handle(plan, "cnp_segment_plan_destroy");
  if (hst != CNP_OK) return hst;
  return cnp__handle_close(plan, &plan->magic, &plan_kind);
}

/* The checks both plan builds share; with_count: the device-count form, whose `count` must
** be a valid count of the keys' rows. */
static cnp_status check_build(cnp_segment_plan *plan, const cnp_array *keys,
                              const cnp_array *count, int with_count, cnp_stream *s,
                              const char *op)
{
  cnp_status st = check_plan(plan, op);
  if (st != CNP_OK) return st;
  CNP__CHECK_NOTNULL(op, keys);
  if (with_count) CNP__CHECK_NOTNULL(op, count);
  st = check_vector(keys, CELL_DTYPES, op, "keys");
  if (st == CNP_OK) st = check_plan_on(plan, keys, op, "keys");
  if (st == CNP_OK && with_count) {
    const cnp_array *others[1] = {keys};
    st = check_count(count, keys, others, 1, op);
  }
  if (st == CNP_OK) st = check_stream_on(s, plan->backend, plan->device, op);
  if (st != CNP_OK) return st;
  if (keys->shape[0] > plan->capacity)
    return cnp__fail(CNP_EOVERFLOW, op, "N = %lld exceeds the plan capacity %lld",
                     (long long)keys->shape[0], (long long)plan->capacity);
  return CNP_OK;
}

cnp_status cnp_segment_plan_build(cnp_segment_plan *plan, const cnp_array *keys,
                                  cnp_stream *s)
{
  static const char op[] = "cnp_segment_plan_build";
  cnp_status st = check_build(plan, keys, NULL, 0, s, op);
  if (st != CNP_OK) return st;
  plan->built = 0;
  st = cnp__algo_of(plan->backend)->plan_build(plan, keys, s);
  if (st == CNP_OK) plan->built = 1;
  return st;
}

/* Both device-count builds; `sorted`: the caller sorted rows [0, n) by these keys. */
static cnp_status build_dc(cnp_segment_plan *plan, const cnp_array *keys,
                           const cnp_array *count, int sorted, cnp_stream *s, const char *op)
{
  cnp_status st = check_build(plan, keys, count, 1, s, op);
  if (st != CNP_OK) return st;
  plan->built = 0;
  st = cnp__algo_of(plan->backend)->plan_build_dc(plan, keys, count, sorted, s);
  if (st == CNP_OK) plan->built = 1;
  return st;
}

cnp_status cnp_segment_plan_build_device_count(cnp_segment_plan *plan, const cnp_array *keys,
                                               const cnp_array *count, cnp_stream *s)
{
  return build_dc(plan, keys, count, 0, s, "cnp_segment_plan_build_device_count");
}

cnp_status cnp_segment_plan_build_sorted_device_count(cnp_segment_plan *plan,
                                                      const cnp_array *keys,
                                                      const cnp_array *count, cnp_stream *s)
{
  return build_dc(plan, keys, count, 1, s, "cnp_segment_plan_build_sorted_device_count");
}

cnp_status cnp_segment_plan_sum(cnp_segment_plan *plan, const cnp_array *values,
                                cnp_array *out, cnp_stream *s)
{
  static const char op[] = "cnp_segment_plan_sum";
  cnp_status st = check_plan(plan, op);
  if (st != CNP_OK) return st;
  CNP__CHECK_NOTNULL(op, values);
  CNP__CHECK_NOTNULL(op, out);
  st = cnp__check_array(values, op, "values");
  if (st == CNP_OK) st = cnp__check_array(out, op, "out");
  if (st == CNP_OK) st = check_plan_on(plan, values, op, "values");
  if (st == CNP_OK) st = check_plan_on(plan, out, op, "out");
  if (st == CNP_OK) st = check_stream_on(s, plan->backend, plan->device, op);
  if (st != CNP_OK) return st;
  if (!plan->built)
    return cnp__fail(CNP_ESTATE, op, "the plan has not been built (call "
                     "cnp_segment_plan_build first)");
  if (values->ndim < 1 || values->shape[0] != plan->n_rows)
    return cnp__fail(CNP_ESHAPE, op, "values must be [N, k...] with N = %lld rows (the "
                     "keys at build); got ndim %d, shape[0] = %lld", (long long)plan->n_rows,
                     values->ndim, values->ndim ? (long long)values->shape[0] : 0LL);
  cnp_dtype want = cnp_segment_sum_dtype(values->dtype);
  if (out->dtype != want)
    return cnp__fail(CNP_EDTYPE, op, "out is %s; the sum of %s values is %s",
                     cnp_dtype_name(out->dtype), cnp_dtype_name(values->dtype),
                     cnp_dtype_name(want));
  int shape_ok = out->ndim == values->ndim && out->shape[0] == plan->n_segments;
  for (int d = 1; shape_ok && d < values->ndim; d++)
    shape_ok = out->shape[d] == values->shape[d];
  if (!shape_ok) {
    char buf[96];
    int len = snprintf(buf, sizeof buf, "(%lld", (long long)plan->n_segments);
    for (int d = 1; d < values->ndim && len < (int)sizeof buf - 24; d++)
      len += snprintf(buf + len, sizeof buf - (size_t)len, ", %lld",
                      (long long)values->shape[d]);
    snprintf(buf + len, sizeof buf - (size_t)len, ")");
    return cnp__fail(CNP_ESHAPE, op, "out must have shape %s (n_segments, k...)", buf);
  }
  if (!is_contig(values, 0))
    return cnp__fail(CNP_ELAYOUT, op, "values is not C-contiguous");
  if (!is_contig(out, 0))
    return cnp__fail(CNP_ELAYOUT, op, "out is not C-contiguous");
  if (spans_overlap(values, out))
    return cnp__fail(CNP_EALIAS, op, "out overlaps values");
  return cnp__algo_of(plan->backend)->plan_sum(plan, values, out, s);
}

cnp_status cnp_segment_plan_rows(const cnp_segment_plan *plan, int64_t *n_kept,
                                 int64_t *n_rows)
{
  static const char op[] = "cnp_segment_plan_rows";
  cnp_status st = check_plan(plan, op);
  if (st != CNP_OK) return st;
  if (n_kept) *n_kept = plan->built ? plan->n_kept : 0;
  if (n_rows) *n_rows = plan->built ? plan->n_rows : 0;
  return CNP_OK;
}

cnp_status cnp_segment_sum(const cnp_array *values, const cnp_array *keys,
                           int64_t n_segments, cnp_array *out, cnp_stream *s)
{
  static const char op[] = "cnp_segment_sum";
  CNP__CHECK_NOTNULL(op, values);
  CNP__CHECK_NOTNULL(op, keys);
  CNP__CHECK_NOTNULL(op, out);
  cnp_status st = check_vector(keys, CELL_DTYPES, op, "keys");
  if (st == CNP_OK) st = cnp__check_array(values, op, "values");
  if (st == CNP_OK) st = cnp__check_array(out, op, "out");
  /* Mixed backends are CNP_EDEVICE before a plan is made on the keys' backend (which
  ** could itself fail for another reason, e.g. CUDA unavailable). */
  if (st == CNP_OK) st = check_on(values, keys, op, "values");
  if (st == CNP_OK) st = check_on(out, keys, op, "out");
  if (st != CNP_OK) return st;
  if (n_segments < 0)
    return cnp__fail(CNP_EINVAL, op, "n_segments = %lld is negative", (long long)n_segments);
  cnp_segment_plan *plan = NULL;
  st = cnp_segment_plan_create(&plan, keys->backend, keys->device, keys->shape[0],
                               n_segments);
  if (st == CNP_OK) st = cnp_segment_plan_build(plan, keys, s);
  if (st == CNP_OK) st = cnp_segment_plan_sum(plan, values, out, s);
  if (st != CNP_OK) {
    /* The detail names the inner call ("cnp_segment_plan_sum: out is float32; ..."):
    ** prefix the call the user made. */
    char inner[512];
    snprintf(inner, sizeof inner, "%s", cnp_last_error());
    cnp_segment_plan_destroy(plan);
    return cnp__fail(st, op, "%s", inner);
  }
  return cnp_segment_plan_destroy(plan);
}

/* ---- scans and reductions ------------------------------------------------------------ */

#define SCAN_DTYPES ((1u << CNP_INT32) | (1u << CNP_INT64) | (1u << CNP_UINT64) |              \
                     (1u << CNP_FLOAT16) | (1u << CNP_FLOAT32) | (1u << CNP_FLOAT64))

cnp_dtype cnp_reduce_dtype(cnp_reduce_op op, cnp_dtype t)
{
  return op == CNP_REDUCE_COUNT ? CNP_INT64 : t;
}

/* The element axis of a scan operand (cnp/algo.h), or -1 when its components are not
** contiguous runs along one axis. */
static int scan_axis(const cnp_array *a)
{
  int c = is_contig(a, 0), f = is_contig(a, 1);
  if (a->ndim == 1) return c ? 0 : -1;         /* a strided vector is no contiguous run */
  if (c && f) {
    for (int d = 0; d < a->ndim; d++)
      if (a->shape[d] != 1) return d;
    return 0;
  }
  if (c) return a->ndim - 1;
  if (f) return 0;
  return -1;
}

static int same_view(const cnp_array *a, const cnp_array *b)
{
  if (a->data != b->data || a->ndim != b->ndim) return 0;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] != b->shape[d] || a->strides[d] != b->strides[d]) return 0;
  return 1;
}

/* The optional count and workspace of a scan or reduction over N rows of ref. */
static cnp_status check_count_ws(const cnp_array *count, cnp_workspace *ws,
                                 const cnp_array *ref, const cnp_array *out, int64_t n,
                                 const char *op)
{
  if (count != NULL) {
    const cnp_array *others[2] = {ref, out};
    cnp_status st = check_count(count, ref, others, 2, op);
    if (st != CNP_OK) return st;
  }
  return ws != NULL ? check_ws(ws, ref, n, op) : CNP_OK;
}

/* Validate a scan: returns the component layout and N. */
static cnp_status check_scan(const cnp_array *in, const cnp_array *out, cnp_scan_kind kind,
                             cnp__rows *rows, int64_t *n, const char *op)
{
  cnp_status st = cnp__check_array(in, op, "in");
  if (st == CNP_OK) st = cnp__check_array(out, op, "out");
  if (st == CNP_OK) st = check_on(out, in, op, "out");
  if (st != CNP_OK) return st;
  if (kind != CNP_SCAN_INCLUSIVE && kind != CNP_SCAN_EXCLUSIVE)
    return cnp__fail(CNP_EINVAL, op, "unknown scan kind %d", (int)kind);
  if (!((SCAN_DTYPES >> in->dtype) & 1u))
    return cnp__fail(CNP_EDTYPE, op, "in has unsupported dtype %s (scans take int32, int64, "
                     "uint64 and float16/32/64)", cnp_dtype_name(in->dtype));
  if (out->dtype != in->dtype)
    return cnp__fail(CNP_EDTYPE, op, "out is %s but in is %s", cnp_dtype_name(out->dtype),
                     cnp_dtype_name(in->dtype));
  if (in->ndim < 1) return cnp__fail(CNP_ESHAPE, op, "in is 0-d");
  int same_shape = out->ndim == in->ndim;
  for (int d = 0; same_shape && d < in->ndim; d++) same_shape = out->shape[d] == in->shape[d];
  if (!same_shape) return cnp__fail(CNP_ESHAPE, op, "out and in differ in shape");
  int axis = scan_axis(in);
  if (axis < 0 && in->ndim == 1)
    return cnp__fail(CNP_ELAYOUT, op, "in is not contiguous (stride %lld bytes)",
                     (long long)in->strides[0]);
  if (axis < 0)
    return cnp__fail(CNP_ELAYOUT, op, "in is neither C- nor F-contiguous");
  for (int d = 0; d < in->ndim && numel_of(in) > 0; d++)
    if (in->shape[d] != 1 && out->strides[d] != in->strides[d])
      return cnp__fail(CNP_ELAYOUT, op, "out and in differ in layout (strides)");
  if (!same_view(in, out) && spans_overlap(in, out))
    return cnp__fail(CNP_EALIAS, op, "out overlaps in (only the very same view is in place)");
  *n = in->shape[axis];
  int64_t total = numel_of(in);
  rows->data = (char *)in->data;
  rows->row_bytes = cnp_dtype_size(in->dtype);
  rows->n_blocks = *n > 0 ? total / *n : 0;
  rows->block_stride = *n * (int64_t)rows->row_bytes;
  return CNP_OK;
}

cnp_status cnp_scan(const cnp_array *in, cnp_array *out, cnp_scan_kind kind,
                    const cnp_array *count, cnp_workspace *ws, cnp_stream *s)
{
  static const char op[] = "cnp_scan";
  CNP__CHECK_NOTNULL(op, in);
  CNP__CHECK_NOTNULL(op, out);
  cnp__rows rows;
  int64_t n = 0;
  cnp_status st = check_scan(in, out, kind, &rows, &n, op);
  if (st == CNP_OK) st = check_count_ws(count, ws, in, out, n, op);
  if (st == CNP_OK) st = check_stream_on(s, in->backend, in->device, op);
  if (st != CNP_OK) return st;
  return cnp__algo_of(in->backend)->scan(in, out, kind, &rows, n, count, ws, s);
}

cnp_status cnp_reduce(const cnp_array *in, cnp_reduce_op op_, cnp_array *out,
                      const cnp_array *count, cnp_workspace *ws, cnp_stream *s)
{
  static const char op[] = "cnp_reduce";
  CNP__CHECK_NOTNULL(op, in);
  CNP__CHECK_NOTNULL(op, out);
  if (op_ < CNP_REDUCE_SUM || op_ > CNP_REDUCE_COUNT)
    return cnp__fail(CNP_EINVAL, op, "unknown reduction %d", (int)op_);
  unsigned ok = op_ == CNP_REDUCE_COUNT ? SCAN_DTYPES | (1u << CNP_BOOL) : SCAN_DTYPES;
  cnp_status st = check_vector(in, ok, op, "in");
  if (st != CNP_OK) return st;
  cnp_dtype want = cnp_reduce_dtype(op_, in->dtype);
  st = check_vector(out, 1u << want, op, "out");
  if (st == CNP_OK) st = check_on(out, in, op, "out");
  if (st != CNP_OK) return st;
  if (out->shape[0] != 1)
    return cnp__fail(CNP_ESHAPE, op, "out must hold 1 element (has %lld)",
                     (long long)out->shape[0]);
  if (spans_overlap(out, in)) return cnp__fail(CNP_EALIAS, op, "out overlaps in");
  st = check_count_ws(count, ws, in, out, in->shape[0], op);
  if (st == CNP_OK) st = check_stream_on(s, in->backend, in->device, op);
  if (st != CNP_OK) return st;
  return cnp__algo_of(in->backend)->reduce(in, op_, out, count, ws, s);
}
