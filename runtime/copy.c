/*
** copy.c — array copies between any layouts and backends, and fill_zero.
**
** A copy is reduced to as few 2D copies (cudaMemcpy2DAsync semantics) as the layouts
** allow: size-1 dimensions are dropped, dimensions are ordered by destination stride,
** adjacent dimensions that are contiguous in both arrays are merged, and what remains
** outside the innermost one or two dimensions becomes a loop. Nothing is allocated, so
** copies are legal in per-step code.
*/
#include "internal.h"

#include <string.h>

cnp_transfer_kind cnp__xfer_kind(cnp_backend dst, cnp_backend src)
{
  if (dst == CNP_BACKEND_CUDA && src != CNP_BACKEND_CUDA) return CNP_XFER_H2D;
  if (dst != CNP_BACKEND_CUDA && src == CNP_BACKEND_CUDA) return CNP_XFER_D2H;
  return CNP_XFER_D2D;
}

/* A normalized walk over up to CNP_MAX_DIMS dimensions, outermost first. */
typedef struct plan {
  int     nd;
  int64_t shape[CNP_MAX_DIMS];
  int64_t ds[CNP_MAX_DIMS];            /* destination strides (bytes) */
  int64_t ss[CNP_MAX_DIMS];            /* source strides (bytes) */
} plan;

/* Drop size-1 dimensions, sort by destination stride (descending, stable), merge. */
static void plan_make(plan *p, const cnp_array *dst, const int64_t *src_strides)
{
  p->nd = 0;
  for (int d = 0; d < dst->ndim; d++) {
    if (dst->shape[d] == 1) continue;
    p->shape[p->nd] = dst->shape[d];
    p->ds[p->nd] = dst->strides[d];
    p->ss[p->nd] = src_strides[d];
    p->nd++;
  }
  for (int i = 1; i < p->nd; i++) {    /* insertion sort: at most 4 dims */
    for (int j = i; j > 0 && p->ds[j - 1] < p->ds[j]; j--) {
      int64_t t;
      t = p->shape[j], p->shape[j] = p->shape[j - 1], p->shape[j - 1] = t;
      t = p->ds[j], p->ds[j] = p->ds[j - 1], p->ds[j - 1] = t;
      t = p->ss[j], p->ss[j] = p->ss[j - 1], p->ss[j - 1] = t;
    }
  }
  int w = 0;                           /* merge (i, i+1) when contiguous in both */
  for (int i = 1; i < p->nd; i++) {
    if (p->ds[w] == p->ds[i] * p->shape[i] && p->ss[w] == p->ss[i] * p->shape[i]) {
      p->shape[w] *= p->shape[i];
      p->ds[w] = p->ds[i];
      p->ss[w] = p->ss[i];
    } else {
      w++;
      p->shape[w] = p->shape[i];
      p->ds[w] = p->ds[i];
      p->ss[w] = p->ss[i];
    }
  }
  if (p->nd > 0) p->nd = w + 1;
}

/* Run the copy (fill when src == NULL) described by p as 2D operations. */
static cnp_status plan_run(const plan *p, const cnp__backend *be, char *dst, cnp_backend db,
                           const char *src, cnp_backend sb, size_t item, void *stream,
                           const char *op)
{
  if (p->nd == 0) {                    /* a single element */
    return src ? be->memcpy_async(dst, db, src, sb, item, stream)
               : be->memset_async(dst, 0, item, stream);
  }
  /* Distinct destination elements: with strides sorted (descending), each dimension's stride
  ** must clear the bytes its inner dimensions span. This also catches overlaps that no single
  ** dimension shows (shape (3, 3) with both strides 12). Conservative: an interleaved layout
  ** that happens not to overlap is refused too. */
  int64_t span = (int64_t)item;
  for (int d = p->nd - 1; d >= 0; d--) {
    if (p->ds[d] < span)
      return cnp__fail(CNP_ELAYOUT, op, "destination elements overlap (stride %lld < %lld bytes)",
                       (long long)p->ds[d], (long long)span);
    span += p->ds[d] * (p->shape[d] - 1);
  }
  int k = p->nd - 1;                   /* innermost dimension */
  size_t width, height, dp, sp;
  int outer;                           /* dims [0, outer) are looped over */
  if ((size_t)p->ds[k] == item && (src == NULL || (size_t)p->ss[k] == item)) {
    width = (size_t)p->shape[k] * item;
    if (k >= 1 && (size_t)p->ds[k - 1] >= width && (!src || (size_t)p->ss[k - 1] >= width)) {
      height = (size_t)p->shape[k - 1];
      dp = (size_t)p->ds[k - 1];
      sp = src ? (size_t)p->ss[k - 1] : 0;
      outer = k - 1;
    } else {
      height = 1;
      dp = width;
      sp = width;
      outer = k;
    }
  } else {
    width = item;
    height = (size_t)p->shape[k];
    dp = (size_t)p->ds[k];
    sp = src ? (size_t)p->ss[k] : 0;
    outer = k;
  }
  if (src && sp < width && height > 1 && be != &cnp__backend_host)
    return cnp__fail(CNP_ELAYOUT, op,
                     "source with overlapping elements (stride %zu) is not supported on CUDA",
                     sp);
  int64_t idx[CNP_MAX_DIMS] = {0};
  for (;;) {
    int64_t doff = 0, soff = 0;
    for (int d = 0; d < outer; d++) {
      doff += idx[d] * p->ds[d];
      soff += idx[d] * p->ss[d];
    }
    cnp_status st;
    if (src) st = be->memcpy2d_async(dst + doff, dp, db, src + soff, sp, sb, width, height, stream);
    else st = be->memset2d_async(dst + doff, dp, 0, width, height, stream);
    if (st != CNP_OK) return st;
    int d = outer - 1;                 /* odometer over the outer dims */
    while (d >= 0 && ++idx[d] == p->shape[d]) idx[d--] = 0;
    if (d < 0) return CNP_OK;
  }
}

/* Backend that runs work on arrays of backends a and b, ordered on native stream of sb. */
static cnp_status pick_backend(const cnp__backend **be, cnp_backend a, cnp_backend b,
                               const char *op)
{
  if (a == CNP_BACKEND_CUDA || b == CNP_BACKEND_CUDA) {
    if (!cnp_cuda_available(NULL))
      return cnp__fail(CNP_EUNAVAILABLE, op, "a CUDA array but CUDA is unavailable");
    *be = cnp__backend_cuda();
  } else {
    *be = &cnp__backend_host;
  }
  return CNP_OK;
}

cnp_status cnp__copy(cnp_array *dst, const cnp_array *src, void *native_stream, const char *op)
{
  cnp_status st = cnp__check_array(dst, op, "dst");
  if (st != CNP_OK) return st;
  if ((st = cnp__check_array(src, op, "src")) != CNP_OK) return st;
  if (dst->dtype != src->dtype)
    return cnp__fail(CNP_EDTYPE, op, "dtype mismatch: dst is %s, src is %s",
                     cnp_dtype_name(dst->dtype), cnp_dtype_name(src->dtype));
  if (dst->ndim != src->ndim)
    return cnp__fail(CNP_ESHAPE, op, "dst has %d dimensions, src has %d", dst->ndim, src->ndim);
  for (int d = 0; d < dst->ndim; d++)
    if (dst->shape[d] != src->shape[d])
      return cnp__fail(CNP_ESHAPE, op, "extent mismatch in dimension %d: dst %lld, src %lld", d,
                       (long long)dst->shape[d], (long long)src->shape[d]);
  const cnp__backend *be = NULL;
  if ((st = pick_backend(&be, dst->backend, src->backend, op)) != CNP_OK) return st;
  size_t bytes = cnp_array_nbytes(dst);
  if (bytes == 0) return CNP_OK;
  plan p;
  plan_make(&p, dst, src->strides);
  st = plan_run(&p, be, dst->data, dst->backend, src->data, src->backend,
                cnp_dtype_size(dst->dtype), native_stream, op);
  if (st != CNP_OK) return st;
  cnp_transfers_note(cnp__xfer_kind(dst->backend, src->backend), bytes, op);
  bool same_layout = (cnp_array_is_c_contiguous(dst) && cnp_array_is_c_contiguous(src)) ||
                     (cnp_array_is_f_contiguous(dst) && cnp_array_is_f_contiguous(src)) ||
                     memcmp(dst->strides, src->strides, sizeof(int64_t) * (size_t)dst->ndim) == 0;
  if (!same_layout) cnp_transfers_note(CNP_XFER_CONVERSION, 0, op);
  return CNP_OK;
}

/* A stream given to a copy must be on the backend doing the work. */
static cnp_status check_stream_for(cnp_stream *s, const cnp_array *a, const cnp_array *b,
                                   const char *op)
{
  if (!s) return CNP_OK;
  cnp_status st = cnp__check_stream(s, op);
  if (st != CNP_OK) return st;
  bool cuda = a->backend == CNP_BACKEND_CUDA || (b && b->backend == CNP_BACKEND_CUDA);
  cnp_backend want = cuda ? CNP_BACKEND_CUDA : CNP_BACKEND_HOST;
  if (s->backend != want && !(s->backend == CNP_BACKEND_CUDA && !cuda))
    return cnp__fail(CNP_EDEVICE, op, "a %s stream cannot order work on %s arrays",
                     cnp_backend_name(s->backend), cnp_backend_name(want));
  const cnp_array *dev = a->backend == CNP_BACKEND_CUDA ? a : b;
  if (cuda && dev && dev->backend == CNP_BACKEND_CUDA && dev->device != s->device)
    return cnp__fail(CNP_EDEVICE, op, "stream is on device %d but the array on device %d",
                     s->device, dev->device);
  return CNP_OK;
}

cnp_status cnp_array_copy(cnp_array *dst, const cnp_array *src, cnp_stream *s)
{
  static const char op[] = "cnp_array_copy";
  cnp_status st = cnp__check_array(dst, op, "dst");
  if (st != CNP_OK) return st;
  if ((st = cnp__check_array(src, op, "src")) != CNP_OK) return st;
  if ((st = check_stream_for(s, dst, src, op)) != CNP_OK) return st;
  if (s && s->backend == CNP_BACKEND_CUDA && dst->backend == CNP_BACKEND_HOST &&
      src->backend == CNP_BACKEND_HOST) {
    /* host-only copy ordered on a CUDA stream: wait for it, then copy on the host */
    if ((st = cnp__backend_of(CNP_BACKEND_CUDA)->stream_sync(s->native)) != CNP_OK) return st;
    return cnp__copy(dst, src, NULL, op);
  }
  return cnp__copy(dst, src, cnp__native(s), op);
}

cnp_status cnp_array_fill_zero(cnp_array *a, cnp_stream *s)
{
  static const char op[] = "cnp_array_fill_zero";
  cnp_status st = cnp__check_array(a, op, "array");
  if (st != CNP_OK) return st;
  if ((st = check_stream_for(s, a, NULL, op)) != CNP_OK) return st;
  const cnp__backend *be = NULL;
  if ((st = pick_backend(&be, a->backend, a->backend, op)) != CNP_OK) return st;
  if (cnp_array_nbytes(a) == 0) return CNP_OK;
  if (a->backend == CNP_BACKEND_HOST && s && s->backend == CNP_BACKEND_CUDA) {
    if ((st = cnp__backend_of(CNP_BACKEND_CUDA)->stream_sync(s->native)) != CNP_OK) return st;
    s = NULL;
  }
  plan p;
  plan_make(&p, a, a->strides);
  return plan_run(&p, be, a->data, a->backend, NULL, a->backend, cnp_dtype_size(a->dtype),
                  cnp__native(s), op);
}
