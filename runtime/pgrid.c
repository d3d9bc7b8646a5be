/*
** pgrid.c — front end of particle–grid interaction (cnp/grid.h): the cnp_pgrid plan and
** the argument checks of cnp_deposit and cnp_gather, dispatching to cnp__pgrid_host
** (pgrid_host.c) or cnp__pgrid_cuda (pgrid_cuda.cu / pgrid_nocuda.c).
**
** SORTED mode storage is made here through the public calls (arrays, a workspace and a
** segment plan on the plan's backend), so both backends share it.
*/
#include "grid_check.h"

#include <math.h>
#include <string.h>

static const cnp__pgrid_backend *pg_of(cnp_backend b)
{
  return b == CNP_BACKEND_CUDA ? &cnp__pgrid_cuda : &cnp__pgrid_host;
}

int cnp_shape_points(cnp_shape shape)
{
  switch (shape) {
  case CNP_SHAPE_NGP: return 1;
  case CNP_SHAPE_CIC: return 2;
  case CNP_SHAPE_TSC: return 3;
  }
  return 0;
}

static void pg_free(cnp_pgrid *pg)
{
  if (pg->seg) cnp_segment_plan_destroy(pg->seg);
  if (pg->ws) cnp_workspace_destroy(pg->ws);
  if (pg->keys.data) cnp_array_free(&pg->keys);
  if (pg->order.data) cnp_array_free(&pg->order);
  if (pg->contrib.data) cnp_array_free(&pg->contrib);
  if (pg->rows.data) cnp_array_free(&pg->rows);
  if (pg->partial.data) cnp_array_free(&pg->partial);
  if (pg->count.data) cnp_array_free(&pg->count);
}

cnp_status cnp_pgrid_create(cnp_pgrid **out, cnp_backend backend, int device, int ndim,
                            const int64_t *dims, cnp_shape shape, cnp_dtype dtype,
                            int64_t capacity, const double *scale)
{
  static const char op[] = "cnp_pgrid_create";
  CNP__CHECK_NOTNULL(op, out);
  *out = NULL;
  cnp_status st = cnp__g_plan_args(dims, backend, device, ndim, op);
  if (st != CNP_OK) return st;
  int S = cnp_shape_points(shape);
  if (S == 0) return cnp__fail(CNP_EINVAL, op, "unknown shape %d", (int)shape);
  if ((st = cnp__g_real_dtype(dtype, op)) != CNP_OK) return st;
  if (capacity < 0 || capacity > (INT64_C(1) << 40))
    return cnp__fail(CNP_EINVAL, op, "capacity %lld outside [0, 2^40]", (long long)capacity);
  int64_t cells = 1;
  for (int d = 0; d < ndim; d++) {
    if (dims[d] < 1)
      return cnp__fail(CNP_EINVAL, op, "dims[%d] = %lld must be >= 1", d, (long long)dims[d]);
    if (dims[d] > (INT64_C(1) << 31))
      return cnp__fail(CNP_EOVERFLOW, op, "dims[%d] = %lld too large", d, (long long)dims[d]);
    cells *= dims[d];
    if (cells > (INT64_C(1) << 36)) return cnp__fail(CNP_EOVERFLOW, op, "grid too large");
  }
  for (int d = 0; scale && d < ndim; d++)
    if (!isfinite(scale[d]) || scale[d] == 0.0)
      return cnp__fail(CNP_EINVAL, op, "scale[%d] = %g must be finite and nonzero", d,
                       scale[d]);
  if (backend == CNP_BACKEND_CUDA) {
#ifndef CNP_HAVE_CUDA
    return cnp__fail(CNP_EUNSUPPORTED, op, "this libcnp was built without CUDA");
#else
    const char *why = NULL;
    if (!cnp_cuda_available(&why))
      return cnp__fail(CNP_EUNAVAILABLE, op, "CUDA backend unavailable: %s", why ? why : "?");
#endif
  }
  cnp_pgrid *pg = cnp__calloc(1, sizeof *pg);
  if (pg == NULL) return cnp__fail(CNP_ENOMEM, op, "no memory for the plan");
  pg->magic = CNP__MAGIC_PGRID;
  pg->backend = backend;
  pg->device = device;
  pg->ndim = ndim;
  for (int d = 0; d < 3; d++) {
    pg->dims[d] = d < ndim ? dims[d] : 1;
    pg->scale[d] = scale && d < ndim ? scale[d] : 1.0;
  }
  pg->n_cells = cells;
  pg->shape = shape;
  pg->S = S;
  pg->n_pts = S * (ndim > 1 ? S : 1) * (ndim > 2 ? S : 1);
  pg->dtype = dtype;
  pg->capacity = capacity;
  int64_t cap = capacity > 0 ? capacity : 1;
  int64_t kshape[1] = {cap};
  int64_t cshape[2] = {cap, pg->n_pts};
  int64_t pshape[2] = {cells + 1, pg->n_pts};
  int64_t one[1] = {1};
  st = cnp_array_alloc_on(&pg->keys, backend, device, CNP_INT64, 1, kshape, CNP_ORDER_C, 0);
  if (st == CNP_OK)
    st = cnp_array_alloc_on(&pg->order, backend, device, CNP_INT64, 1, kshape, CNP_ORDER_C, 0);
  if (st == CNP_OK)
    st = cnp_array_alloc_on(&pg->contrib, backend, device, dtype, 2, cshape, CNP_ORDER_C, 0);
  if (st == CNP_OK && backend == CNP_BACKEND_HOST)
    st = cnp_array_alloc_on(&pg->rows, backend, device, dtype, 2, cshape, CNP_ORDER_C, 0);
  if (st == CNP_OK)
    st = cnp_array_alloc_on(&pg->partial, backend, device, dtype, 2, pshape, CNP_ORDER_C, 0);
  if (st == CNP_OK)
    st = cnp_array_alloc_on(&pg->count, backend, device, CNP_INT64, 1, one, CNP_ORDER_C, 0);
  if (st == CNP_OK)
    st = cnp_workspace_create(&pg->ws, backend, device, cap, cells + 1, 0);
  if (st == CNP_OK) st = cnp_segment_plan_create(&pg->seg, backend, device, cap, cells + 1);
  if (st == CNP_OK) st = cnp__handle_register(pg, op);
  if (st != CNP_OK) {
    pg_free(pg);
    pg->magic = CNP__MAGIC_DEAD;
    cnp__free(pg);
    return st;
  }
  *out = pg;
  return CNP_OK;
}

static cnp_status check_pg(const cnp_pgrid *pg, const char *op)
{
  return cnp__check_handle(pg, CNP__MAGIC_PGRID, "particle-grid plan", op);
}

cnp_status cnp_pgrid_destroy(cnp_pgrid *pg)
{
  if (pg == NULL) return CNP_OK;
  cnp_status st = check_pg(pg, "cnp_pgrid_destroy");
  if (st != CNP_OK) return st;
  cnp__handle_unregister(pg);
  pg_free(pg);
  pg->magic = CNP__MAGIC_DEAD;
  cnp__free(pg);
  return CNP_OK;
}

/* pos[0..ndim-1] (1-D contiguous, same N, plan dtype), and w (NULL or the same). *n: N. */
static cnp_status check_particles(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w,
                                  int64_t *n, const char *op)
{
  CNP__CHECK_NOTNULL(op, pos);
  static const char *names[3] = {"pos[0]", "pos[1]", "pos[2]"};
  cnp_status st = cnp__check_array(&pos[0], op, names[0]);
  if (st != CNP_OK) return st;
  int64_t N = pos[0].ndim == 1 ? pos[0].shape[0] : -1;
  if (N < 0) return cnp__fail(CNP_ESHAPE, op, "pos[0] must be 1-D (got %d dims)", pos[0].ndim);
  for (int a = 0; a < pg->ndim; a++) {
    st = cnp__g_array(&pos[a], pg->backend, pg->device, pg->dtype, 1, &N, op, names[a]);
    if (st != CNP_OK) return st;
  }
  if (w) {
    st = cnp__g_array(w, pg->backend, pg->device, pg->dtype, 1, &N, op, "w");
    if (st != CNP_OK) return st;
  }
  if (N > pg->capacity)
    return cnp__fail(CNP_EOVERFLOW, op, "%lld particles exceed the plan's capacity %lld",
                     (long long)N, (long long)pg->capacity);
  *n = N;
  return CNP_OK;
}

static cnp_status check_grid(cnp_pgrid *pg, const cnp_array *grid, const char *op)
{
  return cnp__g_array(grid, pg->backend, pg->device, pg->dtype, pg->ndim, pg->dims, op,
                      "grid");
}

/* The _device_count forms' count: int64[1] on the plan's backend and device, not
** overlapping `out`. On the host backend (host memory) it is read here: *n becomes it,
** which must lie in [0, *n] (CNP_ERANGE); on CUDA *n stays the views' rows and *d_n is the
** device pointer the kernels read. */
static cnp_status check_count(cnp_pgrid *pg, const cnp_array *count, const cnp_array *out,
                              int64_t *n, const int64_t **d_n, const char *op)
{
  static const int64_t one = 1;
  cnp_status st = cnp__g_array(count, pg->backend, pg->device, CNP_INT64, 1, &one, op, "count");
  if (st != CNP_OK) return st;
  if (cnp__g_overlap(out, count)) return cnp__fail(CNP_EALIAS, op, "count overlaps the output");
  if (pg->backend != CNP_BACKEND_HOST) {
    *d_n = (const int64_t *)count->data;
    return CNP_OK;
  }
  int64_t c = *(const int64_t *)count->data;
  if (c < 0 || c > *n)
    return cnp__fail(CNP_ERANGE, op, "count %lld outside [0, %lld] (the views' rows)",
                     (long long)c, (long long)*n);
  *n = c;
  return CNP_OK;
}

static cnp_status deposit(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w,
                          const cnp_array *count, cnp_array *grid, cnp_deposit_mode mode,
                          cnp_stream *s, const char *op)
{
  cnp_status st = check_pg(pg, op);
  if (st != CNP_OK) return st;
  if (mode != CNP_DEPOSIT_SORTED && mode != CNP_DEPOSIT_ATOMIC)
    return cnp__fail(CNP_EINVAL, op, "unknown mode %d", (int)mode);
  int64_t n;
  const int64_t *d_n = NULL;
  if ((st = check_particles(pg, pos, w, &n, op)) != CNP_OK) return st;
  if ((st = check_grid(pg, grid, op)) != CNP_OK) return st;
  for (int a = 0; a < pg->ndim; a++)
    if (cnp__g_overlap(grid, &pos[a]))
      return cnp__fail(CNP_EALIAS, op, "grid overlaps pos[%d]", a);
  if (w && cnp__g_overlap(grid, w)) return cnp__fail(CNP_EALIAS, op, "grid overlaps w");
  if (count && (st = check_count(pg, count, grid, &n, &d_n, op)) != CNP_OK) return st;
  if ((st = cnp__g_stream(s, pg->backend, pg->device, op)) != CNP_OK) return st;
  const cnp__pgrid_backend *b = pg_of(pg->backend);
  if (d_n) {
    if (!b->deposit_sorted_dc || !b->deposit_atomic_dc)
      return cnp__fail(CNP_EUNSUPPORTED, op, "no device-count form on backend %s", b->name);
    return mode == CNP_DEPOSIT_SORTED ? b->deposit_sorted_dc(pg, pos, w, n, d_n, grid, s)
                                      : b->deposit_atomic_dc(pg, pos, w, n, d_n, grid, s);
  }
  return mode == CNP_DEPOSIT_SORTED ? b->deposit_sorted(pg, pos, w, n, grid, s)
                                    : b->deposit_atomic(pg, pos, w, n, grid, s);
}

cnp_status cnp_deposit(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w,
                       cnp_array *grid, cnp_deposit_mode mode, cnp_stream *s)
{
  return deposit(pg, pos, w, NULL, grid, mode, s, "cnp_deposit");
}

cnp_status cnp_deposit_device_count(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w,
                                    const cnp_array *count, cnp_array *grid,
                                    cnp_deposit_mode mode, cnp_stream *s)
{
  static const char op[] = "cnp_deposit_device_count";
  if (count == NULL) return cnp__fail(CNP_EINVAL, op, "count is NULL");
  return deposit(pg, pos, w, count, grid, mode, s, op);
}

static cnp_status gather(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *grid,
                         const cnp_array *count, cnp_array *out, cnp_stream *s, const char *op)
{
  cnp_status st = check_pg(pg, op);
  if (st != CNP_OK) return st;
  int64_t n;
  const int64_t *d_n = NULL;
  if ((st = check_particles(pg, pos, NULL, &n, op)) != CNP_OK) return st;
  if ((st = check_grid(pg, grid, op)) != CNP_OK) return st;
  st = cnp__g_array(out, pg->backend, pg->device, pg->dtype, 1, &n, op, "out");
  if (st != CNP_OK) return st;
  for (int a = 0; a < pg->ndim; a++)
    if (cnp__g_overlap(out, &pos[a]))
      return cnp__fail(CNP_EALIAS, op, "out overlaps pos[%d]", a);
  if (cnp__g_overlap(out, grid)) return cnp__fail(CNP_EALIAS, op, "out overlaps grid");
  if (count && (st = check_count(pg, count, out, &n, &d_n, op)) != CNP_OK) return st;
  if ((st = cnp__g_stream(s, pg->backend, pg->device, op)) != CNP_OK) return st;
  const cnp__pgrid_backend *b = pg_of(pg->backend);
  if (d_n) {
    if (!b->gather_dc)
      return cnp__fail(CNP_EUNSUPPORTED, op, "no device-count form on backend %s", b->name);
    return b->gather_dc(pg, pos, grid, n, d_n, out, s);
  }
  return b->gather(pg, pos, grid, n, out, s);
}

cnp_status cnp_gather(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *grid,
                      cnp_array *out, cnp_stream *s)
{
  return gather(pg, pos, grid, NULL, out, s, "cnp_gather");
}

cnp_status cnp_gather_device_count(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *grid,
                                   const cnp_array *count, cnp_array *out, cnp_stream *s)
{
  static const char op[] = "cnp_gather_device_count";
  if (count == NULL) return cnp__fail(CNP_EINVAL, op, "count is NULL");
  return gather(pg, pos, grid, count, out, s, op);
}
