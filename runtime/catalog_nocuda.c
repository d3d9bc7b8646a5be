/*
** catalog_nocuda.c — kernel catalog in a build without CUDA: everything that needs NVRTC or
** a device answers CNP_EUNSUPPORTED ("built without CUDA"); registration, cache keys and
** cnp_launch_check (catalog.c) still work.
*/
#include "catalog_internal.h"

#define CNP__NO_CUDA "built without CUDA"

int cnp__kc_nvrtc_version(void) { return 0; }

cnp_status cnp__kc_compile(const char *op, const cnp__kernel *k, const char *const *opts,
                           int n_opts, bool ptx, char **image, size_t *size, char **lowered,
                           char **log)
{
  (void)opts; (void)n_opts; (void)ptx; (void)size;
  *image = *lowered = *log = NULL;
  return cnp__fail(CNP_EUNSUPPORTED, op, "kernel '%s': " CNP__NO_CUDA, k->name);
}

cnp_status cnp__kc_device(int *device, int *arch, const char **reason)
{
  *device = 0;
  *arch = 0;
  *reason = CNP__NO_CUDA;
  return CNP_EUNSUPPORTED;
}

cnp_status cnp__kc_current(int *device, const char **reason)
{
  *device = 0;
  *reason = CNP__NO_CUDA;
  return CNP_EUNSUPPORTED;
}

cnp_status cnp__kc_load(const char *op, const cnp__kernel *k, cnp__kimage *im)
{
  (void)im;
  return cnp__fail(CNP_EUNSUPPORTED, op, "kernel '%s': " CNP__NO_CUDA, k->name);
}

void cnp__kc_unload(cnp__kimage *im) { (void)im; }

cnp_status cnp__kc_optin(const char *op, const cnp__kernel *k, cnp__kimage *im, size_t bytes,
                         int device)
{
  (void)im; (void)bytes; (void)device;
  return cnp__fail(CNP_EUNSUPPORTED, op, "kernel '%s': " CNP__NO_CUDA, k->name);
}

cnp_status cnp__kc_launch(const char *op, const cnp__kernel *k, cnp__kimage *im,
                          cnp_dim3 grid, cnp_dim3 block, size_t dyn_smem, void *stream,
                          void **args)
{
  (void)im; (void)grid; (void)block; (void)dyn_smem; (void)stream; (void)args;
  return cnp__fail(CNP_EUNSUPPORTED, op, "kernel '%s': " CNP__NO_CUDA, k->name);
}

cnp_status cnp_device_limits_query(int device, cnp_device_limits *out)
{
  (void)device; (void)out;
  return cnp__fail(CNP_EUNSUPPORTED, "cnp_device_limits_query", CNP__NO_CUDA);
}
