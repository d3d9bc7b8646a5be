/*
** fft_nocuda.c — the CUDA FFT table (cnp__fft_cuda) in a build without CUDA: absent, so
** fft.c answers plan creation with CNP_EUNSUPPORTED ("built without CUDA"); no CUDA plan
** can exist, so the (NULL) entries are never reached. See grid_internal.h.
*/
#include "grid_internal.h"

const cnp__fft_backend cnp__fft_cuda = {
  .name = "none",
  .absent = "this libcnp was built without CUDA",
};
