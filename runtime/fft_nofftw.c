/*
** fft_nofftw.c — the host FFT table (cnp__fft_host) in a build without FFTW3: absent, so
** fft.c answers plan creation with CNP_EUNSUPPORTED ("built without FFTW"); no host plan
** can exist, so the (NULL) entries are never reached. See grid_internal.h.
*/
#include "grid_internal.h"

const cnp__fft_backend cnp__fft_host = {
  .name = "none",
  .absent = "this libcnp was built without FFTW (install libfftw3-dev and reconfigure)",
};
