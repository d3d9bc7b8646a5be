/*
** backend.c — backend selection, the current device, and cnp_backend_info().
**
** The current backend and device are process-wide (atomics). Selection of CUDA is checked
** against the cached probe of backend_cuda.cu / backend_nocuda.c; the environment variable
** CNP_BACKEND=host|cuda overrides the caller's choice.
*/
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cnp/mpi.h"

static atomic_int cur_backend = CNP_BACKEND_HOST;
static atomic_int cur_device = 0;

const cnp__backend *cnp__backend_of(cnp_backend b)
{
  if (b == CNP_BACKEND_HOST) return &cnp__backend_host;
  if (b == CNP_BACKEND_CUDA) return cnp__backend_cuda();
  return NULL;
}

const char *cnp_backend_name(cnp_backend b)
{
  switch (b) {
  case CNP_BACKEND_HOST: return "host";
  case CNP_BACKEND_CUDA: return "cuda";
  }
  return "?";
}

int cnp_cuda_available(const char **reason)
{
  const char *why = NULL;
  int ok = cnp__cuda_probe(&why);
  if (reason) *reason = ok ? NULL : why;
  return ok;
}

cnp_backend cnp_backend_current(void) { return (cnp_backend)atomic_load(&cur_backend); }

int cnp_backend_device(void) { return atomic_load(&cur_device); }

/*
** env_backend: the backend forced by CNP_BACKEND, or -1 if unset; -2 if it is malformed.
*/
static int env_backend(void)
{
  const char *v = getenv("CNP_BACKEND");
  if (!v || !*v) return -1;
  if (strcasecmp(v, "host") == 0) return CNP_BACKEND_HOST;     /* any letter case */
  if (strcasecmp(v, "cuda") == 0) return CNP_BACKEND_CUDA;
  return -2;
}

/* The selection rule of cnp_backend_select and cnp_backend_resolve, touching no state but
** the fallback marker of transfer accounting. */
static cnp_status resolve(cnp_backend want, int strict, cnp_backend *out, const char *op)
{
  int forced = env_backend();
  if (forced == -2)
    return cnp__fail(CNP_EINVAL, op, "CNP_BACKEND='%s' is neither 'host' nor 'cuda'",
                     getenv("CNP_BACKEND"));
  if (forced >= 0) want = (cnp_backend)forced;
  if (want != CNP_BACKEND_HOST && want != CNP_BACKEND_CUDA)
    return cnp__fail(CNP_EINVAL, op, "unknown backend %d", (int)want);
  const char *why = NULL;
  if (want == CNP_BACKEND_CUDA && !cnp__cuda_probe(&why)) {
    if (strict)
      return cnp__fail(CNP_EUNAVAILABLE, op, "CUDA backend unavailable%s: %s",
                       forced >= 0 ? " (forced by CNP_BACKEND=cuda)" : "", why);
    cnp_transfers_note(CNP_XFER_FALLBACK, 0, op);
    want = CNP_BACKEND_HOST;
  }
  *out = want;
  return CNP_OK;
}

cnp_status cnp_backend_resolve(cnp_backend requested, int strict, cnp_backend *out)
{
  static const char op[] = "cnp_backend_resolve";
  CNP__CHECK_NOTNULL(op, out);
  return resolve(requested, strict, out, op);
}

cnp_status cnp__check_binding(cnp_backend b, int device, const char *op)
{
  if (b != CNP_BACKEND_HOST && b != CNP_BACKEND_CUDA)
    return cnp__fail(CNP_EINVAL, op, "unknown backend %d", (int)b);
  const char *why = NULL;
  if (b == CNP_BACKEND_CUDA && !cnp__cuda_probe(&why))
    return cnp__fail(CNP_EUNAVAILABLE, op, "CUDA backend unavailable: %s", why);
  if (device < 0 || (b == CNP_BACKEND_HOST && device != 0))
    return cnp__fail(CNP_EDEVICE, op, "invalid device %d for the %s backend", device,
                     cnp_backend_name(b));
  return CNP_OK;
}

cnp_status cnp_backend_select(cnp_backend want, int strict)
{
  static const char op[] = "cnp_backend_select";
  cnp_status rst = resolve(want, strict, &want, op);
  if (rst != CNP_OK) return rst;
  if (want == CNP_BACKEND_HOST) {
    atomic_store(&cur_backend, CNP_BACKEND_HOST);
    atomic_store(&cur_device, 0);
    return CNP_OK;
  }
  const cnp__backend *cu = cnp__backend_cuda();
  int dev = atomic_load(&cur_backend) == CNP_BACKEND_CUDA ? atomic_load(&cur_device) : 0;
  cnp_status st = cu->set_device(dev);
  if (st != CNP_OK) return st;
  atomic_store(&cur_device, dev);
  atomic_store(&cur_backend, CNP_BACKEND_CUDA);
  return CNP_OK;
}

cnp_status cnp_set_device(int device)
{
  static const char op[] = "cnp_set_device";
  cnp_backend b = cnp_backend_current();
  const cnp__backend *be = cnp__backend_of(b);
  int n = 0;
  cnp_status st = be->device_count(&n);
  if (st != CNP_OK) return st;
  if (device < 0 || device >= n)
    return cnp__fail(CNP_ERANGE, op, "device %d out of range: the %s backend has %d device%s",
                     device, be->name, n, n == 1 ? "" : "s");
  st = be->set_device(device);
  if (st != CNP_OK) return st;
  atomic_store(&cur_device, device);
  return CNP_OK;
}

/* ---- JSON writer ------------------------------------------------------------------------
** snprintf-like: writes what fits, counts everything, so the caller learns the full size. */
typedef struct jw {
  char  *buf;
  size_t len;
  size_t pos;                          /* full length so far (may exceed len) */
} jw;

static void jw_printf(jw *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void jw_printf(jw *w, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  char *dst = w->pos < w->len ? w->buf + w->pos : NULL;
  size_t room = w->pos < w->len ? w->len - w->pos : 0;
  int n = vsnprintf(dst, room, fmt, ap);
  va_end(ap);
  if (n > 0) w->pos += (size_t)n;
}

/* Append s as a JSON string literal (quotes, escapes, control characters as \u00XX). */
static void jw_string(jw *w, const char *s)
{
  jw_printf(w, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') jw_printf(w, "\\%c", *p);
    else if (*p == '\n') jw_printf(w, "\\n");
    else if (*p == '\t') jw_printf(w, "\\t");
    else if (*p < 0x20) jw_printf(w, "\\u%04x", *p);
    else jw_printf(w, "%c", *p);
  }
  jw_printf(w, "\"");
}

/* Append a fragment produced by an snprintf-like callback. */
static cnp_status jw_fragment(jw *w, cnp_status (*fn)(char *, size_t, size_t *))
{
  size_t used = 0;
  char *dst = w->pos < w->len ? w->buf + w->pos : NULL;
  size_t room = w->pos < w->len ? w->len - w->pos : 0;
  cnp_status st = fn(dst, room, &used);
  if (st == CNP_OK) w->pos += used;
  return st;
}

/* The MPI part comes from the MPI module, libcnp_mpi (mpi_comm.c, or mpi_nompi.c in a build
** without MPI), which libcnp does not link: the reference is weak, so a program without
** cnp_mpi gets no MPI library and reports "built": false. MPI_Get_library_version is legal
** before MPI_Init; MPI is never initialized here. */
extern cnp_status cnp_mpi_library_version(char *buf, size_t len) __attribute__((weak));

static void mpi_json(jw *w)
{
  char ver[512];
  cnp_status st = cnp_mpi_library_version ? cnp_mpi_library_version(ver, sizeof ver)
                                          : CNP_EUNSUPPORTED;
  if (st == CNP_EUNSUPPORTED) {
    cnp_clear_error();
    jw_printf(w, "\"mpi\":{\"built\":false,\"library_version\":null}");
    return;
  }
  jw_printf(w, "\"mpi\":{\"built\":true,\"library_version\":");
  if (st == CNP_OK || st == CNP_EOVERFLOW) {
    jw_string(w, ver);                   /* EOVERFLOW: truncated but NUL-terminated */
  } else {
    jw_printf(w, "null");
  }
  jw_printf(w, "}");
}

static void device_json(jw *w)
{
  int dev = cnp_backend_device();
  if (cnp_backend_current() == CNP_BACKEND_CUDA) {
    size_t used = 0;
    jw_printf(w, "\"device\":");
    char *dst = w->pos < w->len ? w->buf + w->pos : NULL;
    size_t room = w->pos < w->len ? w->len - w->pos : 0;
    if (cnp__cuda_device_json(dev, dst, room, &used) == CNP_OK) {
      w->pos += used;
      return;
    }
    jw_printf(w, "null");
    return;
  }
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  jw_printf(w, "\"device\":{\"backend\":\"host\",\"ordinal\":0,\"name\":\"host CPU\","
               "\"logical_cpus\":%ld}", ncpu > 0 ? ncpu : 1);
}

cnp_status cnp_backend_info(char *buf, size_t len, size_t *needed)
{
  static const char op[] = "cnp_backend_info";
  if (!buf && len > 0) return cnp__fail(CNP_EINVAL, op, "buf is NULL but len is %zu", len);
  jw w = {buf, len, 0};
  jw_printf(&w, "{\"cnp\":{\"version\":\"%s\",\"abi\":%d},\"backend\":\"%s\",",
            cnp_version_string(), CNP_ABI_VERSION, cnp_backend_name(cnp_backend_current()));
  cnp_status st = jw_fragment(&w, cnp__cuda_info_json);
  if (st != CNP_OK) return st;
  jw_printf(&w, ",");
  mpi_json(&w);
  jw_printf(&w, ",");
  device_json(&w);
  jw_printf(&w, "}");
  if (needed) *needed = w.pos + 1;
  if (w.pos + 1 > len) {
    if (len > 0) buf[len - 1] = '\0';
    return cnp__fail(CNP_EOVERFLOW, op, "buffer of %zu bytes too small: %zu needed", len,
                     w.pos + 1);
  }
  return CNP_OK;
}
