/*
** internal.h — libcnp private declarations (cnp__ prefix). Never installed.
**
** Shared by every runtime file: error reporting, argument checks, the backend vtable that
** hides the CUDA/host split (one file per backend: backend_host.c, backend_cuda.cu or
** backend_nocuda.c), and the allocation-failure switch used by fault-injection tests.
*/
#ifndef CNP_INTERNAL_H
#define CNP_INTERNAL_H

#include "cnp/cnp.h"

#include <stdarg.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors (error.c) ------------------------------------------------------------------
** Record the per-thread detail and return st, so call sites read
**   return cnp__fail(CNP_EINVAL, "cnp_stream_create", "out is NULL");
** The message is "<op>: <formatted text>". */
cnp_status cnp__fail(cnp_status st, const char *op, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
cnp_status cnp__failv(cnp_status st, const char *op, const char *fmt, va_list ap);

/* Argument-check helpers: return the status (after recording detail) when the check fails. */
#define CNP__CHECK_NOTNULL(op, p)                                                   \
  do {                                                                              \
    if ((p) == NULL) return cnp__fail(CNP_EINVAL, (op), "%s is NULL", #p);          \
  } while (0)

/* ---- allocation (alloc.c) ---------------------------------------------------------------
** Every host allocation of the runtime goes through these, so the fault-injection switch
** (CNP_FAIL_ALLOC=k or cnp__fail_alloc_after(k)) can fail the k-th one. */
void *cnp__malloc(size_t n);
void *cnp__calloc(size_t n, size_t size);
void  cnp__free(void *p);
/* k > 0: the k-th allocation from now fails (returns NULL); 0 disables. */
void  cnp__fail_alloc_after(long k);
uint64_t cnp__next_alloc_id(void);
/* Consumes one step of the fault-injection countdown; true when this allocation must fail.
** Backends call it before device and pinned allocations so those fail alike. */
bool  cnp__alloc_should_fail(void);

/* ---- backend vtable (backend.c + one file per backend) ----------------------------------
** The front-end files (array.c, stream.c, event.c, snapshot.c, mirror.c, algo*.c) call
** through this; only backend_*.c know CUDA.
** mem_alloc flag CNP__MEM_ZERO: the backend zero-fills the new storage before returning. */
#define CNP__MEM_ZERO 0x100u

typedef struct cnp__backend {
  const char *name;
  cnp_status (*mem_alloc)(void **p, size_t bytes, int device, uint32_t flags);
  cnp_status (*mem_free)(void *p, int device, uint32_t flags);
  /* Host memory for staging (pinned when the backend can). */
  cnp_status (*host_alloc)(void **p, size_t bytes, bool pinned);
  cnp_status (*host_free)(void *p, bool pinned);
  /* dst/src backend given so a CUDA build can do H2D/D2H/D2D; s may be NULL. */
  cnp_status (*memcpy_async)(void *dst, cnp_backend dst_b, const void *src,
                             cnp_backend src_b, size_t bytes, void *native_stream);
  cnp_status (*memset_async)(void *dst, int value, size_t bytes, void *native_stream);
  cnp_status (*stream_create)(void **native, int device);
  cnp_status (*stream_destroy)(void *native, int device);
  cnp_status (*stream_sync)(void *native);
  cnp_status (*stream_query)(void *native, int *done);
  cnp_status (*stream_wait_event)(void *native_stream, void *native_event);
  cnp_status (*event_create)(void **native, unsigned flags, int device);
  cnp_status (*event_destroy)(void *native);
  cnp_status (*event_record)(void *native_event, void *native_stream);
  cnp_status (*event_query)(void *native, int *done);
  cnp_status (*event_sync)(void *native);
  cnp_status (*event_elapsed)(void *start, void *stop, float *ms);
  cnp_status (*device_sync)(int device);
  cnp_status (*set_device)(int device);
  /* 2D copies/fills: `height` rows of `width` bytes, rows `dpitch`/`spitch` bytes apart
  ** (cudaMemcpy2DAsync semantics; pitch >= width). Used for strided layouts. */
  cnp_status (*memcpy2d_async)(void *dst, size_t dpitch, cnp_backend dst_b, const void *src,
                               size_t spitch, cnp_backend src_b, size_t width, size_t height,
                               void *native_stream);
  cnp_status (*memset2d_async)(void *dst, size_t pitch, int value, size_t width,
                               size_t height, void *native_stream);
  /* Number of devices (host: 1). */
  cnp_status (*device_count)(int *n);
  /* Device of a native stream (NULL: the current device); host: 0. */
  cnp_status (*stream_device)(void *native, int *device);
} cnp__backend;

extern const cnp__backend cnp__backend_host;
/* NULL in a build without CUDA. */
const cnp__backend *cnp__backend_cuda(void);
const cnp__backend *cnp__backend_of(cnp_backend b);

/* A (backend, device) pair given explicitly to a *_on call: CNP_EINVAL for an unknown
** backend, CNP_EUNAVAILABLE (with the cached reason) for CUDA without a usable device,
** CNP_EDEVICE for a negative device or a host device other than 0. */
cnp_status cnp__check_binding(cnp_backend b, int device, const char *op);

/* Cached CUDA availability (first call probes; later calls return the cached answer). */
int cnp__cuda_probe(const char **reason);
/* JSON fragment describing CUDA runtime/driver/NVRTC versions and the current device. */
cnp_status cnp__cuda_info_json(char *buf, size_t len, size_t *used);
/* JSON object (no key) describing the current CUDA device and its limits. snprintf-like:
** writes at most len bytes, *used receives the full length (without the NUL). */
cnp_status cnp__cuda_device_json(int device, char *buf, size_t len, size_t *used);

/* ---- handles -----------------------------------------------------------------------------
** Every opaque handle starts with a magic word so use after destroy is detected (the
** destroy call poisons it before freeing; a freed block is typically reused, so this is a
** best effort, documented as "where detectable"). */
#define CNP__MAGIC_STREAM   0x434e5053u  /* "CNPS" */
#define CNP__MAGIC_EVENT    0x434e5045u
#define CNP__MAGIC_SNAPSHOT 0x434e504eu
#define CNP__MAGIC_MIRROR   0x434e504du
#define CNP__MAGIC_DEAD     0xdeadc0deu

struct cnp_stream {
  uint32_t    magic;
  cnp_backend backend;
  int         device;
  bool        wrapped;                 /* user-provided native stream: not destroyed */
  void       *native;                  /* cudaStream_t, or NULL on host */
};

struct cnp_event {
  uint32_t    magic;
  cnp_backend backend;
  int         device;
  unsigned    flags;
  bool        recorded;
  void       *native;                  /* cudaEvent_t, or NULL on host */
};

/* Live-handle registry (alloc.c): create calls register a handle, destroy unregisters it
** before freeing, so a destroyed handle is recognized without reading freed memory
** (best effort: a new handle may reuse the address). register may fail with CNP_ENOMEM. */
cnp_status cnp__handle_register(const void *h, const char *op);
void       cnp__handle_unregister(const void *h);
bool       cnp__handle_live(const void *h);
/* The lifecycle of a handle (workspaces, plans, FFT plans, halos). open: `h` (allocated with
** cnp__calloc, its magic and fields set) is filled by make, registered, and published in
** *out; a failure (make's, or the registration's after unmake) poisons and frees h and is
** returned. close: unmake frees the kind's part, the handle is unregistered, poisoned and
** freed; unmake's status is returned. */
typedef struct cnp__handle_kind {
  cnp_status (*make)(void *h);
  cnp_status (*unmake)(void *h);
} cnp__handle_kind;
cnp_status cnp__handle_open(void *h, uint32_t *magic, const cnp__handle_kind *k, void **out,
                            const char *op);
cnp_status cnp__handle_close(void *h, uint32_t *magic, const cnp__handle_kind *k);
/* NULL -> CNP_EINVAL, not live -> CNP_ESTATE, wrong magic -> CNP_EINVAL. */
cnp_status cnp__check_handle(const void *h, uint32_t magic, const char *kind, const char *op);

/* Validate handles: CNP_EINVAL for NULL, CNP_ESTATE for a destroyed handle. */
cnp_status cnp__check_stream(const cnp_stream *s, const char *op);
cnp_status cnp__check_event(const cnp_event *e, const char *op);

/* ---- arrays and copies (array.c, copy.c) ------------------------------------------------
** Checks a view like cnp_array_validate, with `op` naming the public call. */
cnp_status cnp__check_array(const cnp_array *a, const char *op, const char *what);
/* Copy src -> dst (same dtype and shape, any layouts/backends) on a native stream, without
** allocating; reports the payload to transfer accounting under `op`. */
cnp_status cnp__copy(cnp_array *dst, const cnp_array *src, void *native_stream,
                     const char *op);
/* Transfer kind for a copy from backend src to backend dst. */
cnp_transfer_kind cnp__xfer_kind(cnp_backend dst, cnp_backend src);

/* Native stream of s, or NULL (default stream) when s is NULL. */
static inline void *cnp__native(cnp_stream *s) { return s ? s->native : NULL; }

#ifdef __cplusplus
}
#endif

#endif /* CNP_INTERNAL_H */
