/*
** array.c — array views: dtypes, allocation on either backend, wrapping, validation and
** slicing.
**
** Storage that libcnp owns is recorded in a registry (alloc_id -> base, size, backend), so
** a freed view, or a copy of it, is detected by its alloc_id instead of crashing.
*/
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* ---- dtypes --------------------------------------------------------------------------- */

static const struct {
  const char *name;
  size_t      size;
} dtypes[CNP_DTYPE_COUNT_] = {
  [CNP_BOOL] = {"bool", 1},           [CNP_INT32] = {"int32", 4},
  [CNP_INT64] = {"int64", 8},         [CNP_UINT64] = {"uint64", 8},
  [CNP_FLOAT16] = {"float16", 2},     [CNP_FLOAT32] = {"float32", 4},
  [CNP_FLOAT64] = {"float64", 8},     [CNP_COMPLEX64] = {"complex64", 8},
  [CNP_COMPLEX128] = {"complex128", 16},
};

static bool dtype_ok(cnp_dtype t) { return (unsigned)t < (unsigned)CNP_DTYPE_COUNT_; }

size_t cnp_dtype_size(cnp_dtype t) { return dtype_ok(t) ? dtypes[t].size : 0; }

const char *cnp_dtype_name(cnp_dtype t) { return dtype_ok(t) ? dtypes[t].name : "?"; }

/* ---- registry of owned storage --------------------------------------------------------- */

typedef struct reg_node {
  uint64_t         id;
  void            *base;
  size_t           bytes;
  cnp_backend      backend;
  int              device;
  uint32_t         flags;
  struct reg_node *next;
} reg_node;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static reg_node       *reg_head;

/* Look up a live allocation; copies it to *out (if found) under the lock. */
static bool reg_find(uint64_t id, reg_node *out)
{
  bool found = false;
  pthread_mutex_lock(&reg_lock);
  for (reg_node *n = reg_head; n; n = n->next) {
    if (n->id == id) {
      if (out) *out = *n;
      found = true;
      break;
    }
  }
  pthread_mutex_unlock(&reg_lock);
  return found;
}

static reg_node *reg_remove(uint64_t id)
{
  reg_node *hit = NULL;
  pthread_mutex_lock(&reg_lock);
  for (reg_node **pp = &reg_head; *pp; pp = &(*pp)->next) {
    if ((*pp)->id == id) {
      hit = *pp;
      *pp = hit->next;
      break;
    }
  }
  pthread_mutex_unlock(&reg_lock);
  return hit;
}

/* ---- size arithmetic -------------------------------------------------------------------- */

static bool mul_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_mul_overflow(a, b, r); }
static bool add_ok(int64_t a, int64_t b, int64_t *r) { return !__builtin_add_overflow(a, b, r); }

int64_t cnp_array_numel(const cnp_array *a)
{
  if (!a || a->ndim < 0 || a->ndim > CNP_MAX_DIMS) return -1;
  int64_t n = 1;
  for (int d = 0; d < a->ndim; d++)
    if (a->shape[d] < 0 || !mul_ok(n, a->shape[d], &n)) return -1;
  return n;
}

size_t cnp_array_nbytes(const cnp_array *a)
{
  int64_t n = cnp_array_numel(a), b;
  if (n < 0 || !mul_ok(n, (int64_t)cnp_dtype_size(a->dtype), &b)) return 0;
  return (size_t)b;
}

/* Byte offset of the last element + itemsize (0 for an empty array); -1 on overflow. */
static int64_t extent_bytes(const cnp_array *a)
{
  int64_t ext = (int64_t)cnp_dtype_size(a->dtype), t;
  for (int d = 0; d < a->ndim; d++) {
    if (a->shape[d] == 0) return 0;
    if (!mul_ok(a->shape[d] - 1, a->strides[d], &t) || !add_ok(ext, t, &ext)) return -1;
  }
  return ext;
}

static int is_contiguous(const cnp_array *a, bool c_order)
{
  if (!a || !dtype_ok(a->dtype) || a->ndim < 0 || a->ndim > CNP_MAX_DIMS) return 0;
  int64_t expect = (int64_t)cnp_dtype_size(a->dtype);
  for (int i = 0; i < a->ndim; i++) {
    int d = c_order ? a->ndim - 1 - i : i;
    if (a->shape[d] == 0) return 1;
    if (a->shape[d] != 1 && a->strides[d] != expect) return 0;
    expect *= a->shape[d];
  }
  return 1;
}

int cnp_array_is_c_contiguous(const cnp_array *a) { return is_contiguous(a, true); }
int cnp_array_is_f_contiguous(const cnp_array *a) { return is_contiguous(a, false); }

/* ---- validation ----------------------------------------------------------------------- */

cnp_status cnp__check_array(const cnp_array *a, const char *op, const char *what)
{
  if (!what) what = "array";
  if (!a) return cnp__fail(CNP_EINVAL, op, "%s is NULL", what);
  if (!dtype_ok(a->dtype))
    return cnp__fail(CNP_EDTYPE, op, "%s has invalid dtype %d", what, (int)a->dtype);
  if (a->ndim < 0 || a->ndim > CNP_MAX_DIMS)
    return cnp__fail(CNP_ESHAPE, op, "%s has ndim %d (must be 0..%d)", what, a->ndim,
                     CNP_MAX_DIMS);
  if (a->backend != CNP_BACKEND_HOST && a->backend != CNP_BACKEND_CUDA)
    return cnp__fail(CNP_EDEVICE, op, "%s has invalid backend %d", what, (int)a->backend);
  if (a->device < 0 || (a->backend == CNP_BACKEND_HOST && a->device != 0))
    return cnp__fail(CNP_EDEVICE, op, "%s has invalid device %d for the %s backend", what,
                     a->device, cnp_backend_name(a->backend));
  int64_t item = (int64_t)cnp_dtype_size(a->dtype);
  for (int d = 0; d < a->ndim; d++) {
    if (a->shape[d] < 0)
      return cnp__fail(CNP_ESHAPE, op, "%s has negative extent %lld in dimension %d", what,
                       (long long)a->shape[d], d);
    if (a->strides[d] < 0 || a->strides[d] % item != 0)
      return cnp__fail(CNP_ELAYOUT, op,
                       "%s has stride %lld in dimension %d (must be a non-negative multiple "
                       "of the %lld-byte item)",
                       what, (long long)a->strides[d], d, (long long)item);
  }
  int64_t n = cnp_array_numel(a), bytes;
  if (n < 0 || !mul_ok(n, item, &bytes) || extent_bytes(a) < 0)
    return cnp__fail(CNP_EOVERFLOW, op, "%s: size computation overflows", what);
  if (n > 0 && !a->data)
    return cnp__fail(CNP_ESTATE, op, "%s has no storage (freed or never allocated)", what);
  if (n > 0 && ((uintptr_t)a->data % (uintptr_t)(item > 8 ? 8 : item)) != 0)
    return cnp__fail(CNP_ELAYOUT, op, "%s data %p is misaligned for %s", what, a->data,
                     cnp_dtype_name(a->dtype));
  if (a->alloc_id != 0) {
    reg_node r;
    if (!reg_find(a->alloc_id, &r))
      return cnp__fail(CNP_ESTATE, op, "%s uses storage #%llu that was freed", what,
                       (unsigned long long)a->alloc_id);
    if (r.backend != a->backend || r.device != a->device)
      return cnp__fail(CNP_EDEVICE, op, "%s says %s:%d but its storage is on %s:%d", what,
                       cnp_backend_name(a->backend), a->device, cnp_backend_name(r.backend),
                       r.device);
    /* Integer arithmetic: a forged data pointer must not make the check itself undefined. */
    uintptr_t lo = (uintptr_t)r.base, p = (uintptr_t)a->data;
    if (n > 0 && (p < lo || p - lo > (uintptr_t)r.bytes ||
                  (uintptr_t)extent_bytes(a) > (uintptr_t)r.bytes - (p - lo)))
      return cnp__fail(CNP_ERANGE, op, "%s reaches outside its storage #%llu", what,
                       (unsigned long long)a->alloc_id);
  }
  return CNP_OK;
}

cnp_status cnp_array_validate(const cnp_array *a, const char *what)
{
  return cnp__check_array(a, "cnp_array_validate", what);
}

/* ---- construction --------------------------------------------------------------------- */

/* Fill dtype/ndim/shape/strides of *v for a contiguous layout; checks arguments. */
static cnp_status make_layout(cnp_array *v, const char *op, cnp_dtype t, int ndim,
                              const int64_t *shape, const int64_t *strides, cnp_order order)
{
  if (!dtype_ok(t)) return cnp__fail(CNP_EDTYPE, op, "invalid dtype %d", (int)t);
  if (ndim < 0 || ndim > CNP_MAX_DIMS)
    return cnp__fail(CNP_ESHAPE, op, "ndim %d out of range 0..%d", ndim, CNP_MAX_DIMS);
  if (ndim > 0 && !shape) return cnp__fail(CNP_EINVAL, op, "shape is NULL");
  if (order != CNP_ORDER_C && order != CNP_ORDER_F)
    return cnp__fail(CNP_EINVAL, op, "invalid order %d", (int)order);
  memset(v, 0, sizeof *v);
  v->dtype = t;
  v->ndim = ndim;
  int64_t stride = (int64_t)cnp_dtype_size(t);
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0)
      return cnp__fail(CNP_ESHAPE, op, "negative extent %lld in dimension %d",
                       (long long)shape[d], d);
    v->shape[d] = shape[d];
  }
  for (int i = 0; i < ndim; i++) {
    int d = order == CNP_ORDER_C ? ndim - 1 - i : i;
    if (strides && (strides[d] < 0 || strides[d] % (int64_t)cnp_dtype_size(t) != 0))
      return cnp__fail(CNP_ELAYOUT, op,
                       "stride %lld in dimension %d is not a non-negative multiple of the "
                       "%zu-byte item", (long long)strides[d], d, cnp_dtype_size(t));
    v->strides[d] = strides ? strides[d] : stride;
    if (!strides && !mul_ok(stride, shape[d] ? shape[d] : 1, &stride))
      return cnp__fail(CNP_EOVERFLOW, op, "array size overflows");
  }
  int64_t bytes;
  if (cnp_array_numel(v) < 0 || extent_bytes(v) < 0 ||
      !mul_ok(cnp_array_numel(v), (int64_t)cnp_dtype_size(t), &bytes))
    return cnp__fail(CNP_EOVERFLOW, op, "array size overflows");
  return CNP_OK;
}

cnp_status cnp_array_alloc_on(cnp_array *out, cnp_backend b, int device, cnp_dtype t,
                              int ndim, const int64_t *shape, cnp_order order, uint32_t flags)
{
  static const char op[] = "cnp_array_alloc";
  CNP__CHECK_NOTNULL(op, out);
  const char *why = NULL;
  if (b == CNP_BACKEND_CUDA && !cnp_cuda_available(&why))
    return cnp__fail(CNP_EUNAVAILABLE, op, "CUDA array requested but CUDA is unavailable: %s",
                     why);
  const cnp__backend *be = cnp__backend_of(b);
  if (!be) return cnp__fail(CNP_EDEVICE, op, "invalid backend %d", (int)b);
  if (device < 0 || (b == CNP_BACKEND_HOST && device != 0))
    return cnp__fail(CNP_EDEVICE, op, "invalid device %d for the %s backend", device,
                     be->name);
  if (flags & ~(uint32_t)(CNP_ARRAY_OWNED | CNP_ARRAY_PINNED))
    return cnp__fail(CNP_EINVAL, op, "unknown flags 0x%x", flags);
  cnp_array v;
  cnp_status st = make_layout(&v, op, t, ndim, shape, NULL, order);
  if (st != CNP_OK) return st;
  /* Pinned host memory needs a usable CUDA backend; otherwise plain host memory. */
  bool pinned = b == CNP_BACKEND_HOST && (flags & CNP_ARRAY_PINNED) && cnp_cuda_available(NULL);
  size_t bytes = cnp_array_nbytes(&v);
  reg_node *node = cnp__malloc(sizeof *node);
  if (!node) return cnp__fail(CNP_ENOMEM, op, "cannot allocate the registry entry");
  void *p = NULL;
  if (pinned) {
    st = cnp__backend_cuda()->host_alloc(&p, bytes, true);
    if (st == CNP_OK) memset(p, 0, bytes);
  } else {
    st = be->mem_alloc(&p, bytes, device, CNP__MEM_ZERO);
  }
  if (st != CNP_OK) {
    cnp__free(node);
    if (st == CNP_ENOMEM) {
      char why[256];
      snprintf(why, sizeof why, "%s", cnp_last_error());
      return cnp__fail(CNP_ENOMEM, op, "cannot allocate %zu bytes on %s:%d (%s)", bytes,
                       be->name, device, why);
    }
    return st;
  }
  v.data = p;
  v.backend = b;
  v.device = device;
  v.flags = CNP_ARRAY_OWNED | (pinned ? CNP_ARRAY_PINNED : 0u);
  v.alloc_id = cnp__next_alloc_id();
  *node = (reg_node){v.alloc_id, p, bytes, b, device, v.flags, NULL};
  pthread_mutex_lock(&reg_lock);
  node->next = reg_head;
  reg_head = node;
  pthread_mutex_unlock(&reg_lock);
  *out = v;
  return CNP_OK;
}

cnp_status cnp_array_alloc(cnp_array *out, cnp_dtype t, int ndim, const int64_t *shape,
                           cnp_order order)
{
  return cnp_array_alloc_on(out, cnp_backend_current(), cnp_backend_device(), t, ndim, shape,
                            order, 0);
}

cnp_status cnp_array_free(cnp_array *a)
{
  static const char op[] = "cnp_array_free";
  CNP__CHECK_NOTNULL(op, a);
  if (a->alloc_id == 0) {
    if (!a->data) return cnp__fail(CNP_ESTATE, op, "array was already freed or never allocated");
    return cnp__fail(CNP_EINVAL, op, "array wraps caller memory (libcnp does not own it)");
  }
  reg_node r;
  if (!reg_find(a->alloc_id, &r))
    return cnp__fail(CNP_ESTATE, op, "storage #%llu was already freed",
                     (unsigned long long)a->alloc_id);
  if (!(a->flags & CNP_ARRAY_OWNED) || a->data != r.base)
    return cnp__fail(CNP_EINVAL, op, "view does not own storage #%llu (a slice?)",
                     (unsigned long long)a->alloc_id);
  reg_node *node = reg_remove(a->alloc_id);
  if (!node) return cnp__fail(CNP_ESTATE, op, "storage was freed concurrently");
  cnp_status st;
  if (node->flags & CNP_ARRAY_PINNED) st = cnp__backend_cuda()->host_free(node->base, true);
  else st = cnp__backend_of(node->backend)->mem_free(node->base, node->device, 0);
  cnp__free(node);
  a->data = NULL;
  a->alloc_id = 0;
  a->flags = 0;
  return st;
}

cnp_status cnp_array_wrap(cnp_array *out, void *data, cnp_backend b, int device, cnp_dtype t,
                          int ndim, const int64_t *shape, const int64_t *strides)
{
  static const char op[] = "cnp_array_wrap";
  CNP__CHECK_NOTNULL(op, out);
  cnp_array v;
  cnp_status st = make_layout(&v, op, t, ndim, shape, strides, CNP_ORDER_C);
  if (st != CNP_OK) return st;
  v.data = data;
  v.backend = b;
  v.device = device;
  st = cnp__check_array(&v, op, "wrapped array");
  if (st != CNP_OK) return st;
  *out = v;
  return CNP_OK;
}

cnp_status cnp_array_slice(cnp_array *out, const cnp_array *a, int axis, int64_t start,
                           int64_t stop)
{
  static const char op[] = "cnp_array_slice";
  CNP__CHECK_NOTNULL(op, out);
  cnp_status st = cnp__check_array(a, op, "source");
  if (st != CNP_OK) return st;
  if (axis < 0 || axis >= a->ndim)
    return cnp__fail(CNP_ERANGE, op, "axis %d out of range for a %d-d array", axis, a->ndim);
  if (start < 0 || stop < start || stop > a->shape[axis])
    return cnp__fail(CNP_ERANGE, op, "[%lld, %lld) out of range for extent %lld",
                     (long long)start, (long long)stop, (long long)a->shape[axis]);
  cnp_array v = *a;
  /* An empty array (another extent 0) is valid with any strides, so start * stride may not
  ** fit: it has no element to point at, and keeps its data pointer. */
  if (stop > start && cnp_array_numel(a) > 0)
    v.data = (char *)a->data + start * a->strides[axis];
  v.shape[axis] = stop - start;
  v.flags &= ~(uint32_t)CNP_ARRAY_OWNED;
  *out = v;
  return CNP_OK;
}
