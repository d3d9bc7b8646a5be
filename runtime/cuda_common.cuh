/*
** cuda_common.cuh — helpers shared by the CUDA table files (algo_cuda.cu, fft_cuda.cu,
** pgrid_cuda.cu; C++ only): the CUDA error status, the device scope and the launch size of
** the grid-stride kernels.
*/
#ifndef CNP_CUDA_COMMON_CUH
#define CNP_CUDA_COMMON_CUH

#include "internal.h"

#include <cuda_runtime.h>
#include <stdint.h>

namespace cnp_cu {

/* A failed CUDA runtime call `what` of `op`: CNP_ENOMEM for an allocation, else
** CNP_EBACKEND with the error's name and text. Clears the sticky last error. */
inline cnp_status cuda_fail(cudaError_t e, const char *op, const char *what)
{
  (void)cudaGetLastError();
  return cnp__fail(e == cudaErrorMemoryAllocation ? CNP_ENOMEM : CNP_EBACKEND, op,
                   "%s failed: %s (%d): %s", what, cudaGetErrorName(e), (int)e,
                   cudaGetErrorString(e));
}

/* Makes `device` current for the scope and restores the previous one; err is the error of
** switching (cudaSuccess when it worked). */
struct DeviceScope {
  int prev = -1;
  cudaError_t err = cudaSuccess;
  explicit DeviceScope(int device)
  {
    if ((err = cudaGetDevice(&prev)) == cudaSuccess && prev != device)
      err = cudaSetDevice(device);
  }
  ~DeviceScope()
  {
    int cur = -1;
    if (prev >= 0 && cudaGetDevice(&cur) == cudaSuccess && cur != prev) cudaSetDevice(prev);
  }
  DeviceScope(const DeviceScope &) = delete;
  DeviceScope &operator=(const DeviceScope &) = delete;
};

/* Threads per block of the grid-stride kernels. */
const int kThreads = 256;

/* Blocks for n items with grid-stride loops (capped at 65536; at least 1). */
inline unsigned blocks_for(int64_t n)
{
  int64_t b = (n + kThreads - 1) / kThreads;
  if (b > 65536) b = 65536;
  return b < 1 ? 1u : (unsigned)b;
}

}  // namespace cnp_cu

#endif
