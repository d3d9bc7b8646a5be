/*
** fft_nofftw.c — the host FFT table (cnp__fft_host) in a build without FFTW3: plan
** creation answers CNP_EUNSUPPORTED ("built without FFTW"); no host plan can exist, so
** the other entries are never reached (they answer the same).
*/
#include "grid_internal.h"

static cnp_status no_fftw(const char *op)
{
  return cnp__fail(CNP_EUNSUPPORTED, op,
                   "this libcnp was built without FFTW (install libfftw3-dev and reconfigure)");
}

static cnp_status nf_create(cnp_fft_plan *p)
{
  (void)p;
  return no_fftw("cnp_fft_plan_create");
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
  return no_fftw("cnp_fft_forward");
}

static cnp_status nf_inverse(cnp_fft_plan *p, const cnp_array *in, cnp_array *out,
                             cnp_stream *s)
{
  (void)p; (void)in; (void)out; (void)s;
  return no_fftw("cnp_fft_inverse");
}

const cnp__fft_backend cnp__fft_host = {
  .name = "none",
  .create = nf_create,
  .destroy = nf_destroy,
  .forward = nf_forward,
  .inverse = nf_inverse,
};
