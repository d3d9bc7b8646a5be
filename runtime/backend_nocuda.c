/*
** backend_nocuda.c — CUDA entry points of a build without the CUDA backend.
*/
#include "internal.h"

#include <stdio.h>

const cnp__backend *cnp__backend_cuda(void) { return NULL; }

int cnp__cuda_probe(const char **reason)
{
  if (reason) *reason = "built without CUDA";
  return 0;
}

cnp_status cnp__cuda_info_json(char *buf, size_t len, size_t *used)
{
  int n = snprintf(buf, len,
                   "\"cuda\":{\"built\":false,\"available\":false,"
                   "\"reason\":\"built without CUDA\",\"runtime_version\":null,"
                   "\"driver_version\":null},\"nvrtc\":{\"version\":null}");
  if (n < 0) return cnp__fail(CNP_EIO, "cnp_backend_info", "formatting failed");
  *used = (size_t)n;
  return CNP_OK;
}

cnp_status cnp__cuda_device_json(int device, char *buf, size_t len, size_t *used)
{
  (void)device, (void)buf, (void)len, (void)used;
  return cnp__fail(CNP_EUNSUPPORTED, "cnp_backend_info", "built without CUDA");
}
