/*
** fft.c — front end of the FFT plans of cnp/grid.h: argument checks, shapes, wave numbers,
** and dispatch to the backend tables (fft_fftw.c / fft_nofftw.c, fft_cuda.cu /
** fft_nocuda.c). See grid_internal.h.
*/
#include "grid_check.h"

#include <math.h>
#include <string.h>

static const cnp__fft_backend *fft_of(cnp_backend b)
{
  return b == CNP_BACKEND_CUDA ? &cnp__fft_cuda : &cnp__fft_host;
}

/* A plan's backend part (cnp__handle_open/_close): the table's create (an absent table's
** CNP_EUNSUPPORTED) and destroy. */
static cnp_status fft_make(void *h)
{
  cnp_fft_plan *p = h;
  const cnp__fft_backend *t = fft_of(p->backend);
  return t->absent ? cnp__fail(CNP_EUNSUPPORTED, "cnp_fft_plan_create", "%s", t->absent)
                   : t->create(p);
}

static cnp_status fft_unmake(void *h)
{
  cnp_fft_plan *p = h;
  return fft_of(p->backend)->destroy(p);
}

static const cnp__handle_kind fft_kind = {fft_make, fft_unmake};

static cnp_status check_plan(const cnp_fft_plan *p, const char *op)
{
  return cnp__check_handle(p, CNP__MAGIC_FFT, "FFT plan", op);
}

cnp_status cnp_fft_plan_create(cnp_fft_plan **out, cnp_backend backend, int device,
                               int ndim, const int64_t *dims, int64_t batch,
                               cnp_dtype dtype, unsigned flags)
{
  static const char op[] = "cnp_fft_plan_create";
  CNP__CHECK_NOTNULL(op, out);
  *out = NULL;
  cnp_status st = cnp__g_plan_args(dims, backend, device, ndim, op);
  if (st != CNP_OK) return st;
  if (batch < 0)
    return cnp__fail(CNP_EINVAL, op, "batch must be >= 0 (got %lld)", (long long)batch);
  if ((st = cnp__g_real_dtype(dtype, op)) != CNP_OK) return st;
  if (flags & ~(CNP_FFT_MEASURE | CNP_FFT_DESTROY_INPUT))
    return cnp__fail(CNP_EINVAL, op, "unknown flags 0x%x", flags);
  int64_t n = 1, nc = 1;
  for (int d = 0; d < ndim; d++) {
    if (dims[d] < 1)
      return cnp__fail(CNP_EINVAL, op, "dims[%d] = %lld must be >= 1", d, (long long)dims[d]);
    if (dims[d] > (INT64_C(1) << 31))
      return cnp__fail(CNP_EOVERFLOW, op, "dims[%d] = %lld too large", d, (long long)dims[d]);
    n *= dims[d];
    nc *= d == ndim - 1 ? dims[d] / 2 + 1 : dims[d];
    if (n > (INT64_C(1) << 40))
      return cnp__fail(CNP_EOVERFLOW, op, "grid of more than 2^40 points");
  }
  int64_t howmany = batch > 0 ? batch : 1;
  if (howmany > (INT64_C(1) << 40) / n)
    return cnp__fail(CNP_EOVERFLOW, op, "batch * points exceeds 2^40");
  cnp_fft_plan *p = cnp__calloc(1, sizeof *p);
  if (p == NULL) return cnp__fail(CNP_ENOMEM, op, "no memory for the plan");
  p->magic = CNP__MAGIC_FFT;
  p->backend = backend;
  p->device = device;
  p->ndim = ndim;
  for (int d = 0; d < 3; d++) p->dims[d] = d < ndim ? dims[d] : 1;
  p->batch = batch;
  p->dtype = dtype;
  p->flags = flags;
  p->n_real = n;
  p->n_complex = nc;
  p->howmany = howmany;
  int o = 0;
  if (batch > 0) {
    p->real_shape[0] = p->complex_shape[0] = batch;
    o = 1;
  }
  for (int d = 0; d < ndim; d++) {
    p->real_shape[o + d] = dims[d];
    p->complex_shape[o + d] = d == ndim - 1 ? dims[d] / 2 + 1 : dims[d];
  }
  p->array_ndim = o + ndim;
  return cnp__handle_open(p, &p->magic, &fft_kind, (void **)out, op);
}

cnp_status cnp_fft_plan_destroy(cnp_fft_plan *plan)
{
  if (plan == NULL) return CNP_OK;
  cnp_status st = check_plan(plan, "cnp_fft_plan_destroy");
  if (st != CNP_OK) return st;
  return cnp__handle_close(plan, &plan->magic, &fft_kind);
}

static cnp_dtype complex_of(cnp_dtype t)
{
  return t == CNP_FLOAT32 ? CNP_COMPLEX64 : CNP_COMPLEX128;
}

static cnp_status check_call(cnp_fft_plan *p, const cnp_array *in, const cnp_array *out,
                             int forward, cnp_stream *s, const char *op)
{
  cnp_status st = check_plan(p, op);
  if (st != CNP_OK) return st;
  cnp_dtype rt = p->dtype, ct = complex_of(p->dtype);
  const char *in_name = forward ? "real_in" : "complex_in";
  const char *out_name = forward ? "complex_out" : "real_out";
  st = cnp__g_array(in, p->backend, p->device, forward ? rt : ct, p->array_ndim,
                    forward ? p->real_shape : p->complex_shape, op, in_name);
  if (st != CNP_OK) return st;
  st = cnp__g_array(out, p->backend, p->device, forward ? ct : rt, p->array_ndim,
                    forward ? p->complex_shape : p->real_shape, op, out_name);
  if (st != CNP_OK) return st;
  if (cnp__g_overlap(in, out))
    return cnp__fail(CNP_EALIAS, op, "%s overlaps %s (transforms are out of place)",
                     out_name, in_name);
  return cnp__g_stream(s, p->backend, p->device, op);
}

/* A transform call: the checks of check_call, then the backend's forward or inverse. */
static cnp_status fft_exec(cnp_fft_plan *plan, const cnp_array *in, cnp_array *out,
                           int forward, cnp_stream *s, const char *op)
{
  cnp_status st = check_call(plan, in, out, forward, s, op);
  if (st != CNP_OK) return st;
  const cnp__fft_backend *t = fft_of(plan->backend);
  return (forward ? t->forward : t->inverse)(plan, in, out, s);
}

cnp_status cnp_fft_forward(cnp_fft_plan *plan, const cnp_array *real_in,
                           cnp_array *complex_out, cnp_stream *s)
{
  return fft_exec(plan, real_in, complex_out, 1, s, "cnp_fft_forward");
}

cnp_status cnp_fft_inverse(cnp_fft_plan *plan, const cnp_array *complex_in,
                           cnp_array *real_out, cnp_stream *s)
{
  return fft_exec(plan, complex_in, real_out, 0, s, "cnp_fft_inverse");
}

cnp_status cnp_fft_shapes(const cnp_fft_plan *plan, int *array_ndim,
                          int64_t real_shape[CNP_MAX_DIMS],
                          int64_t complex_shape[CNP_MAX_DIMS])
{
  static const char op[] = "cnp_fft_shapes";
  cnp_status st = check_plan(plan, op);
  if (st != CNP_OK) return st;
  if (array_ndim) *array_ndim = plan->array_ndim;
  for (int d = 0; d < CNP_MAX_DIMS; d++) {
    if (real_shape) real_shape[d] = d < plan->array_ndim ? plan->real_shape[d] : 0;
    if (complex_shape) complex_shape[d] = d < plan->array_ndim ? plan->complex_shape[d] : 0;
  }
  return CNP_OK;
}

double cnp_fft_norm(const cnp_fft_plan *plan)
{
  if (plan == NULL || !cnp__handle_live(plan) || plan->magic != CNP__MAGIC_FFT) return 0.0;
  return 1.0 / (double)plan->n_real;
}

double cnp_fft_wavenumber(int64_t n, double length, int64_t j, int half)
{
  if (n < 1 || j < 0) return 0.0;
  int64_t m;
  if (half) {
    if (j > n / 2) return 0.0;
    m = j;
  } else {
    if (j >= n) return 0.0;
    m = j < (n + 1) / 2 ? j : j - n;
  }
  return 2.0 * 3.14159265358979323846 * (double)m / length;
}

cnp_status cnp_fft_wavenumbers(const cnp_fft_plan *plan, int axis, double length,
                               cnp_array *k, cnp_stream *s)
{
  static const char op[] = "cnp_fft_wavenumbers";
  cnp_status st = check_plan(plan, op);
  if (st != CNP_OK) return st;
  if (axis < 0 || axis >= plan->ndim)
    return cnp__fail(CNP_EINVAL, op, "axis %d outside [0, %d)", axis, plan->ndim);
  if (!(length > 0.0) || !isfinite(length))
    return cnp__fail(CNP_EINVAL, op, "length must be finite and > 0 (got %g)", length);
  CNP__CHECK_NOTNULL(op, k);
  cnp_dtype t = k->dtype == CNP_FLOAT32 ? CNP_FLOAT32 : CNP_FLOAT64;
  int half = axis == plan->ndim - 1;
  int64_t n = plan->dims[axis];
  int64_t ext = half ? n / 2 + 1 : n;
  st = cnp__g_array(k, plan->backend, plan->device, t, 1, &ext, op, "k");
  if (st != CNP_OK) return st;
  st = cnp__g_stream(s, plan->backend, plan->device, op);
  if (st != CNP_OK) return st;
  size_t isz = cnp_dtype_size(t);
  void *buf = k->data;
  if (plan->backend != CNP_BACKEND_HOST) {
    buf = cnp__malloc((size_t)ext * isz);
    if (buf == NULL) return cnp__fail(CNP_ENOMEM, op, "no memory for %lld wave numbers",
                                      (long long)ext);
  }
  for (int64_t j = 0; j < ext; j++) {
    double v = cnp_fft_wavenumber(n, length, j, half);
    if (t == CNP_FLOAT32) ((float *)buf)[j] = (float)v;
    else ((double *)buf)[j] = v;
  }
  if (plan->backend != CNP_BACKEND_HOST) {
    cnp_array h;
    st = cnp_array_wrap(&h, buf, CNP_BACKEND_HOST, 0, t, 1, &ext, NULL);
    if (st == CNP_OK) st = cnp_array_copy(k, &h, s);
    if (st == CNP_OK) st = s ? cnp_stream_synchronize(s) : cnp_device_synchronize_on(plan->backend, plan->device);
    cnp__free(buf);
  }
  return st;
}
