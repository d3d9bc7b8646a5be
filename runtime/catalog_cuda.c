/*
** catalog_cuda.c — kernel catalog: NVRTC compilation and loading/launching through the CUDA
** runtime's library API (cudaLibraryLoadData, cudaLibraryGetKernel, cudaLaunchKernel with a
** cudaKernel_t). No driver API: libcuda is loaded by the static cudart at run time, so a
** machine without a driver still compiles kernels to PTX.
*/
#include "catalog_internal.h"

#include <cuda_runtime_api.h>
#include <nvrtc.h>
#include <string.h>

int cnp__kc_nvrtc_version(void)
{
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return 0;
  return 1000 * major + 10 * minor;
}

static char *copy_n(const char *s, size_t n)
{
  char *p = cnp__malloc(n + 1);
  if (p) {
    memcpy(p, s, n);
    p[n] = '\0';
  }
  return p;
}

static cnp_status nvrtc_fail(const char *op, const cnp__kernel *k, nvrtcResult r,
                             const char *what)
{
  return cnp__fail(r == NVRTC_ERROR_OUT_OF_MEMORY ? CNP_ENOMEM : CNP_ECOMPILE, op,
                   "kernel '%s': %s: %s", k->name, what, nvrtcGetErrorString(r));
}

cnp_status cnp__kc_compile(const char *op, const cnp__kernel *k, const char *const *opts,
                           int n_opts, bool ptx, char **image, size_t *size, char **lowered,
                           char **log)
{
  nvrtcProgram prog;
  nvrtcResult r = nvrtcCreateProgram(&prog, k->source, k->source_name, 0, NULL, NULL);
  cnp_status st = CNP_OK;
  *image = *lowered = *log = NULL;
  if (r != NVRTC_SUCCESS) return nvrtc_fail(op, k, r, "nvrtcCreateProgram");
  if ((r = nvrtcAddNameExpression(prog, k->name)) != NVRTC_SUCCESS) {
    st = nvrtc_fail(op, k, r, "nvrtcAddNameExpression");
    goto done;
  }
  nvrtcResult cr = nvrtcCompileProgram(prog, n_opts, opts);
  size_t log_size = 0;
  if (nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && log_size > 0) {
    if ((*log = cnp__malloc(log_size)) != NULL &&
        nvrtcGetProgramLog(prog, *log) != NVRTC_SUCCESS)
      (*log)[0] = '\0';
  } else {
    *log = copy_n("", 0);
  }
  if (cr != NVRTC_SUCCESS) {
    st = cnp__fail(CNP_ECOMPILE, op, "kernel '%s' (%s, %s): NVRTC compilation failed:\n%s",
                   k->name, k->source_name, opts[0], *log ? *log : "(no log)");
    goto done;
  }
  const char *name = NULL;
  if ((r = nvrtcGetLoweredName(prog, k->name, &name)) != NVRTC_SUCCESS || !name) {
    st = nvrtc_fail(op, k, r, "nvrtcGetLoweredName");
    goto done;
  }
  if (!(*lowered = copy_n(name, strlen(name)))) {
    st = cnp__fail(CNP_ENOMEM, op, "kernel '%s': lowered name", k->name);
    goto done;
  }
  size_t n = 0;
  r = ptx ? nvrtcGetPTXSize(prog, &n) : nvrtcGetCUBINSize(prog, &n);
  if (r != NVRTC_SUCCESS) {
    st = nvrtc_fail(op, k, r, ptx ? "nvrtcGetPTXSize" : "nvrtcGetCUBINSize");
    goto done;
  }
  if (!(*image = cnp__malloc(n + 1))) {
    st = cnp__fail(CNP_ENOMEM, op, "kernel '%s': image of %zu bytes", k->name, n);
    goto done;
  }
  r = ptx ? nvrtcGetPTX(prog, *image) : nvrtcGetCUBIN(prog, *image);
  if (r != NVRTC_SUCCESS) {
    st = nvrtc_fail(op, k, r, ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN");
    goto done;
  }
  (*image)[n] = '\0';
  /* PTX size includes its NUL; report the text length so disk round trips are exact. */
  *size = ptx ? strlen(*image) : n;
done:
  nvrtcDestroyProgram(&prog);
  if (st != CNP_OK) {
    cnp__free(*image);
    cnp__free(*lowered);
    *image = *lowered = NULL;
  }
  return st;
}

cnp_status cnp__kc_device(int *device, int *arch, const char **reason)
{
  int count = 0, dev = 0, major = 0, minor = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    *reason = cudaGetErrorString(e);
    return CNP_EUNAVAILABLE;
  }
  if (count <= 0) {
    *reason = "no CUDA device";
    return CNP_EUNAVAILABLE;
  }
  if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
      (e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) !=
          cudaSuccess ||
      (e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev)) !=
          cudaSuccess) {
    *reason = cudaGetErrorString(e);
    return CNP_EUNAVAILABLE;
  }
  *device = dev;
  *arch = 10 * major + minor;
  return CNP_OK;
}

cnp_status cnp__kc_current(int *device, const char **reason)
{
  cudaError_t e = cudaGetDevice(device);
  if (e != cudaSuccess) {
    *reason = cudaGetErrorString(e);
    (void)cudaGetLastError();
    return CNP_EUNAVAILABLE;
  }
  return CNP_OK;
}

static cnp_status cuda_fail(const char *op, const cnp__kernel *k, cudaError_t e,
                            const char *what)
{
  return cnp__fail(CNP_EBACKEND, op, "kernel '%s': %s: %s (%s)", k->name, what,
                   cudaGetErrorName(e), cudaGetErrorString(e));
}

cnp_status cnp__kc_load(const char *op, const cnp__kernel *k, cnp__kimage *im)
{
  cudaLibrary_t lib = NULL;
  cudaKernel_t kern = NULL;
  struct cudaFuncAttributes attr;
  cudaError_t e = cudaLibraryLoadData(&lib, im->data, NULL, NULL, 0, NULL, NULL, 0);
  if (e != cudaSuccess) return cuda_fail(op, k, e, "cudaLibraryLoadData");
  if ((e = cudaLibraryGetKernel(&kern, lib, im->lowered)) != cudaSuccess) {
    cudaLibraryUnload(lib);
    return cuda_fail(op, k, e, "cudaLibraryGetKernel");
  }
  memset(&attr, 0, sizeof attr);
  if ((e = cudaFuncGetAttributes(&attr, (const void *)kern)) != cudaSuccess) {
    cudaLibraryUnload(lib);
    return cuda_fail(op, k, e, "cudaFuncGetAttributes");
  }
  im->library = lib;
  im->kernel = kern;
  im->static_smem = attr.sharedSizeBytes;
  im->max_threads = attr.maxThreadsPerBlock;
  im->optin_smem = 0;
  return CNP_OK;
}

void cnp__kc_unload(cnp__kimage *im)
{
  if (im->library) cudaLibraryUnload((cudaLibrary_t)im->library);
  im->library = NULL;
  im->kernel = NULL;
}

cnp_status cnp__kc_optin(const char *op, const cnp__kernel *k, cnp__kimage *im, size_t bytes,
                         int device)
{
  cudaError_t e = cudaKernelSetAttributeForDevice(
      (cudaKernel_t)im->kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes, device);
  return e == cudaSuccess ? CNP_OK : cuda_fail(op, k, e, "set max dynamic shared memory");
}

cnp_status cnp__kc_launch(const char *op, const cnp__kernel *k, cnp__kimage *im,
                          cnp_dim3 grid, cnp_dim3 block, size_t dyn_smem, void *stream,
                          void **args)
{
  dim3 g = {grid.x, grid.y, grid.z}, b = {block.x, block.y, block.z};
  cudaError_t e = cudaLaunchKernel((const void *)im->kernel, g, b, args, dyn_smem,
                                   (cudaStream_t)stream);
  return e == cudaSuccess ? CNP_OK : cuda_fail(op, k, e, "cudaLaunchKernel");
}

cnp_status cnp_device_limits_query(int device, cnp_device_limits *out)
{
  static const char *op = "cnp_device_limits_query";
  static const enum cudaDeviceAttr attrs[] = {
      cudaDevAttrComputeCapabilityMajor, cudaDevAttrComputeCapabilityMinor,
      cudaDevAttrMaxThreadsPerBlock,     cudaDevAttrMaxBlockDimX,
      cudaDevAttrMaxBlockDimY,           cudaDevAttrMaxBlockDimZ,
      cudaDevAttrMaxGridDimX,            cudaDevAttrMaxGridDimY,
      cudaDevAttrMaxGridDimZ,            cudaDevAttrMaxSharedMemoryPerBlock,
      cudaDevAttrMaxSharedMemoryPerBlockOptin};
  int v[sizeof attrs / sizeof attrs[0]];
  int count = 0;
  CNP__CHECK_NOTNULL(op, out);
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    return cnp__fail(CNP_EUNAVAILABLE, op, "no usable CUDA device: %s", cudaGetErrorString(e));
  if (device < 0 || device >= count)
    return cnp__fail(CNP_EDEVICE, op, "device %d (the machine has %d)", device, count);
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
    if ((e = cudaDeviceGetAttribute(&v[i], attrs[i], device)) != cudaSuccess)
      return cnp__fail(CNP_EBACKEND, op, "cudaDeviceGetAttribute: %s", cudaGetErrorString(e));
  }
  out->arch = 10 * v[0] + v[1];
  out->max_threads_per_block = v[2];
  for (int d = 0; d < 3; d++) {
    out->max_block_dim[d] = v[3 + d];
    out->max_grid_dim[d] = v[6 + d];
  }
  out->max_shared_per_block = (size_t)v[9];
  out->max_shared_per_block_optin = (size_t)v[10];
  return CNP_OK;
}
