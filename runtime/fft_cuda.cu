/*
** fft_cuda.cu — CUDA FFTs of cnp/grid.h with cuFFT (the table cnp__fft_cuda).
**
** create: on the plan's device, one cufftPlanMany (64-bit sizes) per direction (D2Z/Z2D
** for float64, R2C/C2R for float32) with auto-allocation off; one work area, the larger of
** the two plans' needs, allocated here and set on both; a complex buffer of one batch for
** the preserved inverse (cuFFT's c2r overwrites its input). forward/inverse: set the
** stream on the plan and enqueue (inverse: a device-to-device copy into the buffer first,
** unless CNP_FFT_DESTROY_INPUT). Nothing is allocated and nothing synchronizes per call, so
** the calls can be captured into a CUDA graph. Linked with CUDA::cufft.
*/
#include "grid_internal.h"
#include "cuda_common.cuh"

#include <cuda_runtime.h>
#include <cufft.h>
#include <new>

namespace {

struct CufftImpl {
  cufftHandle fwd = 0, inv = 0;
  bool have_fwd = false, have_inv = false;
  void  *work = nullptr;
  void  *cbuf = nullptr;
  size_t cbytes = 0;
};

const char *cufft_name(cufftResult r)
{
  switch (r) {
  case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
  case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
  case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
  case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
  case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
  case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
  case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
  case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
  case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
  case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
  default: return "cufftResult";
  }
}

cnp_status cufft_fail(cufftResult r, const char *op, const char *what)
{
  return cnp__fail(r == CUFFT_ALLOC_FAILED ? CNP_ENOMEM : CNP_EBACKEND, op,
                   "%s failed: %s (%d)", what, cufft_name(r), (int)r);
}

using cnp_cu::cuda_fail;
using cnp_cu::DeviceScope;

cnp_status c_destroy(cnp_fft_plan *p)
{
  CufftImpl *im = static_cast<CufftImpl *>(p->impl);
  if (im == nullptr) return CNP_OK;
  DeviceScope ds(p->device);
  if (im->have_fwd) cufftDestroy(im->fwd);
  if (im->have_inv) cufftDestroy(im->inv);
  const cnp__backend *b = cnp__backend_cuda();
  if (b && im->work) b->mem_free(im->work, p->device, 0);
  if (b && im->cbuf) b->mem_free(im->cbuf, p->device, 0);
  delete im;
  p->impl = nullptr;
  return CNP_OK;
}

cnp_status c_create(cnp_fft_plan *p)
{
  static const char op[] = "cnp_fft_plan_create";
  const char *why = nullptr;
  if (!cnp_cuda_available(&why))
    return cnp__fail(CNP_EUNAVAILABLE, op, "CUDA backend unavailable: %s", why ? why : "?");
  const cnp__backend *b = cnp__backend_cuda();
  DeviceScope ds(p->device);
  if (ds.err != cudaSuccess) return cuda_fail(ds.err, op, "cudaSetDevice");
  CufftImpl *im = new (std::nothrow) CufftImpl();
  if (im == nullptr) return cnp__fail(CNP_ENOMEM, op, "no memory for the FFT");
  p->impl = im;
  long long n[3];
  for (int d = 0; d < p->ndim; d++) n[d] = (long long)p->dims[d];
  long long idist = p->n_real, odist = p->n_complex, howmany = p->howmany;
  bool f32 = p->dtype == CNP_FLOAT32;
  size_t ws_f = 0, ws_i = 0;
  cufftResult r = cufftCreate(&im->fwd);
  if (r != CUFFT_SUCCESS) { c_destroy(p); return cufft_fail(r, op, "cufftCreate"); }
  im->have_fwd = true;
  r = cufftCreate(&im->inv);
  if (r != CUFFT_SUCCESS) { c_destroy(p); return cufft_fail(r, op, "cufftCreate"); }
  im->have_inv = true;
  cufftSetAutoAllocation(im->fwd, 0);
  cufftSetAutoAllocation(im->inv, 0);
  r = cufftMakePlanMany64(im->fwd, p->ndim, n, nullptr, 1, idist, nullptr, 1, odist,
                          f32 ? CUFFT_R2C : CUFFT_D2Z, howmany, &ws_f);
  if (r != CUFFT_SUCCESS) { c_destroy(p); return cufft_fail(r, op, "cufftMakePlanMany64 (forward)"); }
  r = cufftMakePlanMany64(im->inv, p->ndim, n, nullptr, 1, odist, nullptr, 1, idist,
                          f32 ? CUFFT_C2R : CUFFT_Z2D, howmany, &ws_i);
  if (r != CUFFT_SUCCESS) { c_destroy(p); return cufft_fail(r, op, "cufftMakePlanMany64 (inverse)"); }
  size_t ws = ws_f > ws_i ? ws_f : ws_i;
  cnp_status st = CNP_OK;
  if (ws > 0) st = b->mem_alloc(&im->work, ws, p->device, 0);
  if (st != CNP_OK) { c_destroy(p); return st; }
  if (ws > 0) {
    cufftSetWorkArea(im->fwd, im->work);
    cufftSetWorkArea(im->inv, im->work);
  }
  im->cbytes = (size_t)(p->n_complex * p->howmany) * 2 * (f32 ? sizeof(float) : sizeof(double));
  if (!(p->flags & CNP_FFT_DESTROY_INPUT)) {
    st = b->mem_alloc(&im->cbuf, im->cbytes, p->device, 0);
    if (st != CNP_OK) { c_destroy(p); return st; }
  }
  return CNP_OK;
}

cnp_status c_forward(cnp_fft_plan *p, const cnp_array *in, cnp_array *out, cnp_stream *s)
{
  static const char op[] = "cnp_fft_forward";
  CufftImpl *im = static_cast<CufftImpl *>(p->impl);
  DeviceScope ds(p->device);
  if (ds.err != cudaSuccess) return cuda_fail(ds.err, op, "cudaSetDevice");
  cufftResult r = cufftSetStream(im->fwd, (cudaStream_t)cnp__native(s));
  if (r != CUFFT_SUCCESS) return cufft_fail(r, op, "cufftSetStream");
  if (p->dtype == CNP_FLOAT32)
    r = cufftExecR2C(im->fwd, (cufftReal *)in->data, (cufftComplex *)out->data);
  else
    r = cufftExecD2Z(im->fwd, (cufftDoubleReal *)in->data, (cufftDoubleComplex *)out->data);
  if (r != CUFFT_SUCCESS) return cufft_fail(r, op, "cufftExec (forward)");
  return CNP_OK;
}

cnp_status c_inverse(cnp_fft_plan *p, const cnp_array *in, cnp_array *out, cnp_stream *s)
{
  static const char op[] = "cnp_fft_inverse";
  CufftImpl *im = static_cast<CufftImpl *>(p->impl);
  DeviceScope ds(p->device);
  if (ds.err != cudaSuccess) return cuda_fail(ds.err, op, "cudaSetDevice");
  cudaStream_t st = (cudaStream_t)cnp__native(s);
  void *src = in->data;
  if (!(p->flags & CNP_FFT_DESTROY_INPUT)) {
    cudaError_t e = cudaMemcpyAsync(im->cbuf, src, im->cbytes, cudaMemcpyDeviceToDevice, st);
    if (e != cudaSuccess) return cuda_fail(e, op, "cudaMemcpyAsync");
    cnp_transfers_note(CNP_XFER_D2D, im->cbytes, op);
    src = im->cbuf;
  }
  cufftResult r = cufftSetStream(im->inv, st);
  if (r != CUFFT_SUCCESS) return cufft_fail(r, op, "cufftSetStream");
  if (p->dtype == CNP_FLOAT32)
    r = cufftExecC2R(im->inv, (cufftComplex *)src, (cufftReal *)out->data);
  else
    r = cufftExecZ2D(im->inv, (cufftDoubleComplex *)src, (cufftDoubleReal *)out->data);
  if (r != CUFFT_SUCCESS) return cufft_fail(r, op, "cufftExec (inverse)");
  return CNP_OK;
}

}  // namespace

extern "C" const cnp__fft_backend cnp__fft_cuda = {
  "cufft", c_create, c_destroy, c_forward, c_inverse, nullptr,
};
