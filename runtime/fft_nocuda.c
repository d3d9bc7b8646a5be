/*
** fft_nocuda.c — the CUDA FFT table (cnp__fft_cuda) in a build without CUDA: plan
** creation answers CNP_EUNSUPPORTED ("built without CUDA"); no CUDA plan can exist, so
** the other entries are never reached (they answer the same).
*/
#include "grid_internal.h"

static cnp_status no_cuda(const char *op)
{
  return cnp__fail(CNP_EUNSUPPORTED, op,
                   "this libcnp was built without CUDA");
}

static cnp_status nf_create(cnp_fft_plan *p)
{
  (void)p;
  return no_cuda("cnp_fft_plan_create");
}

static cnp_status nf_destroy(cnp_fft_plan *p)
{
  (void)p;
  return CNP_OK;
}

static cnp_status nf_forward(cnp_fft_plan *p, const cnp_array *in, cnp_array *out,
                             cnp_stream *s)
{
  (void)p; (void)in; (void)out; (void)s;
  return no_cuda("cnp_fft_forward");
}

static cnp_status nf_inverse(cnp_fft_plan *p, const cnp_array *in, cnp_array *out,
                             cnp_stream *s)
{
  (void)p; (void)in; (void)out; (void)s;
  return no_cuda("cnp_fft_inverse");
}

const cnp__fft_backend cnp__fft_cuda = {
  .name = "none",
  .create = nf_create,
  .destroy = nf_destroy,
  .forward = nf_forward,
  .inverse = nf_inverse,
};
