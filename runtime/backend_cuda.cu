/*
** backend_cuda.cu — the CUDA backend (cudart runtime API only; cudart is linked
** statically and loads the driver itself, so a machine without a driver still starts).
**
** The probe runs once: cudaGetDeviceCount on a machine without a GPU returns error 35
** (cudaErrorInsufficientDriver) and leaves the count untouched, so the count starts at 0.
** Every CUDA error becomes CNP_EBACKEND (CNP_ENOMEM for allocation failures) with the
** call, cudaGetErrorName and cudaGetErrorString in the per-thread detail.
*/
#include "internal.h"

#include <cuda_runtime.h>
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------------------- */

static cnp_status cu_fail(cudaError_t e, const char *op, const char *call)
{
  (void)cudaGetLastError();            /* clear a non-sticky error */
  cnp_status st = e == cudaErrorMemoryAllocation ? CNP_ENOMEM : CNP_EBACKEND;
  return cnp__fail(st, op, "%s failed: %s (%d): %s", call, cudaGetErrorName(e), (int)e,
                   cudaGetErrorString(e));
}

#define CU_CHECK(op, call)                                                              \
  do {                                                                                  \
    cudaError_t e_ = (call);                                                            \
    if (e_ != cudaSuccess) return cu_fail(e_, (op), #call);                             \
  } while (0)

/* ---- probe --------------------------------------------------------------------------- */

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static int  probe_ok;
static int  probe_count;
static char probe_reason[256];

static void probe_run(void)
{
  int n = 0;                           /* left untouched when the call fails */
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    snprintf(probe_reason, sizeof probe_reason, "cudaGetDeviceCount failed: %s (%d): %s",
             cudaGetErrorName(e), (int)e, cudaGetErrorString(e));
    (void)cudaGetLastError();
    return;
  }
  if (n <= 0) {
    snprintf(probe_reason, sizeof probe_reason, "no CUDA device found (cudaGetDeviceCount = 0)");
    return;
  }
  probe_count = n;
  probe_ok = 1;
}

extern "C" int cnp__cuda_probe(const char **reason)
{
  pthread_once(&probe_once, probe_run);
  if (reason) *reason = probe_ok ? "" : probe_reason;
  return probe_ok;
}

/* ---- device scoping ----------------------------------------------------------------------
** Calls that create or free per-device objects make `device` current for the call and
** restore the thread's previous device afterwards. */

typedef struct dev_scope {
  int prev;
  bool switched;
} dev_scope;

static cnp_status dev_enter(dev_scope *sc, int device, const char *op)
{
  sc->switched = false;
  CU_CHECK(op, cudaGetDevice(&sc->prev));
  if (sc->prev != device) {
    CU_CHECK(op, cudaSetDevice(device));
    sc->switched = true;
  }
  return CNP_OK;
}

static void dev_leave(const dev_scope *sc)
{
  if (sc->switched) (void)cudaSetDevice(sc->prev);
}

/* Run `call` with `device` current; on error, restore and fail. */
#define CU_ON_DEVICE(op, device, call)                                                  \
  do {                                                                                  \
    dev_scope sc_;                                                                      \
    cnp_status st_ = dev_enter(&sc_, (device), (op));                                   \
    if (st_ != CNP_OK) return st_;                                                      \
    cudaError_t e_ = (call);                                                            \
    dev_leave(&sc_);                                                                    \
    if (e_ != cudaSuccess) return cu_fail(e_, (op), #call);                             \
  } while (0)

/* ---- memory -------------------------------------------------------------------------- */

static cudaMemcpyKind kind_of(cnp_backend dst, cnp_backend src)
{
  if (dst == CNP_BACKEND_CUDA)
    return src == CNP_BACKEND_CUDA ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
  return src == CNP_BACKEND_CUDA ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost;
}

/* cudaMalloc then, with CNP__MEM_ZERO, a zero fill that is complete on return. cudaMemset
** alone is not: it is queued on the legacy default stream, which a cudaStreamNonBlocking
** stream (a user's, through cnp_stream_wrap) does not wait for, so a kernel there could run
** before the fill or be overwritten by it. Setup-time only: the wait costs nothing per step. */
static cudaError_t malloc_zeroed(void **p, size_t bytes, bool zero)
{
  cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
  if (e != cudaSuccess || !zero) return e;
  e = cudaMemsetAsync(*p, 0, bytes ? bytes : 1, cudaStreamLegacy);
  if (e == cudaSuccess) e = cudaStreamSynchronize(cudaStreamLegacy);
  if (e != cudaSuccess) {
    (void)cudaFree(*p);
    *p = NULL;
  }
  return e;
}

static cnp_status c_mem_alloc(void **p, size_t bytes, int device, uint32_t flags)
{
  static const char op[] = "cuda_mem_alloc";
  if (cnp__alloc_should_fail())
    return cnp__fail(CNP_ENOMEM, op, "cudaMalloc of %zu bytes failed (fault injection)", bytes);
  *p = NULL;
  CU_ON_DEVICE(op, device, malloc_zeroed(p, bytes, (flags & CNP__MEM_ZERO) != 0));
  return CNP_OK;
}

static cnp_status c_mem_free(void *p, int device, uint32_t flags)
{
  (void)flags;
  CU_ON_DEVICE("cuda_mem_free", device, cudaFree(p));
  return CNP_OK;
}

static cnp_status c_host_alloc(void **p, size_t bytes, bool pinned)
{
  static const char op[] = "cuda_host_alloc";
  if (!pinned) {
    *p = cnp__malloc(bytes);
    if (!*p) return cnp__fail(CNP_ENOMEM, op, "cannot allocate %zu host bytes", bytes);
    return CNP_OK;
  }
  if (cnp__alloc_should_fail())
    return cnp__fail(CNP_ENOMEM, op, "cudaMallocHost of %zu bytes failed (fault injection)",
                     bytes);
  CU_CHECK(op, cudaMallocHost(p, bytes ? bytes : 1));
  return CNP_OK;
}

static cnp_status c_host_free(void *p, bool pinned)
{
  if (!pinned) {
    cnp__free(p);
    return CNP_OK;
  }
  CU_CHECK("cuda_host_free", cudaFreeHost(p));
  return CNP_OK;
}

static cnp_status c_memcpy(void *dst, cnp_backend dst_b, const void *src, cnp_backend src_b,
                           size_t bytes, void *stream)
{
  if (bytes == 0) return CNP_OK;
  CU_CHECK("cuda_memcpy", cudaMemcpyAsync(dst, src, bytes, kind_of(dst_b, src_b),
                                          (cudaStream_t)stream));
  return CNP_OK;
}

static cnp_status c_memset(void *dst, int value, size_t bytes, void *stream)
{
  if (bytes == 0) return CNP_OK;
  CU_CHECK("cuda_memset", cudaMemsetAsync(dst, value, bytes, (cudaStream_t)stream));
  return CNP_OK;
}

/* 2D copies and fills. cudaMemcpy2D* / cudaMemset2D* reject a pitch above the device's
** cudaDevAttrMaxPitch (2^31 - 1 bytes on current GPUs) with cudaErrorInvalidPitchValue, and
** copy.c hands over whole contiguous arrays as one row (pitch = width = all the bytes) and
** component rows of (k, N) fields with pitch N * item: both pass 2 GiB on large GPUs. So a
** contiguous block (one row, or rows without gaps) goes through the 1D call, which has no
** such limit, and only a gapped layout whose pitch exceeds kMaxPitch is split into rows
** (then pitch * height fits in device memory, so there are at most a few dozen rows). */
static const size_t kMaxPitch = 2147483647u;

static cnp_status c_memcpy2d(void *dst, size_t dpitch, cnp_backend dst_b, const void *src,
                             size_t spitch, cnp_backend src_b, size_t width, size_t height,
                             void *stream)
{
  if (width == 0 || height == 0) return CNP_OK;
  cudaStream_t s = (cudaStream_t)stream;
  cudaMemcpyKind kind = kind_of(dst_b, src_b);
  if (height == 1 || (dpitch == width && spitch == width)) {
    CU_CHECK("cuda_memcpy2d", cudaMemcpyAsync(dst, src, width * height, kind, s));
    return CNP_OK;
  }
  if (dpitch <= kMaxPitch && spitch <= kMaxPitch) {
    CU_CHECK("cuda_memcpy2d", cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, s));
    return CNP_OK;
  }
  for (size_t r = 0; r < height; r++)
    CU_CHECK("cuda_memcpy2d", cudaMemcpyAsync((char *)dst + r * dpitch,
                                              (const char *)src + r * spitch, width, kind, s));
  return CNP_OK;
}

static cnp_status c_memset2d(void *dst, size_t pitch, int value, size_t width, size_t height,
                             void *stream)
{
  if (width == 0 || height == 0) return CNP_OK;
  cudaStream_t s = (cudaStream_t)stream;
  if (height == 1 || pitch == width) {
    CU_CHECK("cuda_memset2d", cudaMemsetAsync(dst, value, width * height, s));
    return CNP_OK;
  }
  if (pitch <= kMaxPitch) {
    CU_CHECK("cuda_memset2d", cudaMemset2DAsync(dst, pitch, value, width, height, s));
    return CNP_OK;
  }
  for (size_t r = 0; r < height; r++)
    CU_CHECK("cuda_memset2d", cudaMemsetAsync((char *)dst + r * pitch, value, width, s));
  return CNP_OK;
}

/* ---- streams and events ---------------------------------------------------------------- */

static cnp_status c_stream_create(void **native, int device)
{
  static const char op[] = "cnp_stream_create";
  cudaStream_t s = NULL;
  CU_ON_DEVICE(op, device, cudaStreamCreate(&s));
  *native = (void *)s;
  return CNP_OK;
}

static cnp_status c_stream_destroy(void *native, int device)
{
  (void)device;
  CU_CHECK("cnp_stream_destroy", cudaStreamDestroy((cudaStream_t)native));
  return CNP_OK;
}

static cnp_status c_stream_sync(void *native)
{
  CU_CHECK("cnp_stream_synchronize", cudaStreamSynchronize((cudaStream_t)native));
  return CNP_OK;
}

static cnp_status c_stream_query(void *native, int *done)
{
  cudaError_t e = cudaStreamQuery((cudaStream_t)native);
  if (e == cudaErrorNotReady) {
    *done = 0;
    return CNP_OK;
  }
  if (e != cudaSuccess) return cu_fail(e, "cnp_stream_done", "cudaStreamQuery");
  *done = 1;
  return CNP_OK;
}

static cnp_status c_stream_wait_event(void *stream, void *event)
{
  CU_CHECK("cnp_stream_wait_event",
           cudaStreamWaitEvent((cudaStream_t)stream, (cudaEvent_t)event, 0));
  return CNP_OK;
}

static cnp_status c_event_create(void **native, unsigned flags, int device)
{
  static const char op[] = "cnp_event_create";
  cudaEvent_t e = NULL;
  unsigned cf = (flags & CNP_EVENT_TIMING) ? cudaEventDefault : cudaEventDisableTiming;
  CU_ON_DEVICE(op, device, cudaEventCreateWithFlags(&e, cf));
  *native = (void *)e;
  return CNP_OK;
}

static cnp_status c_event_destroy(void *native)
{
  CU_CHECK("cnp_event_destroy", cudaEventDestroy((cudaEvent_t)native));
  return CNP_OK;
}

static cnp_status c_event_record(void *event, void *stream)
{
  CU_CHECK("cnp_event_record", cudaEventRecord((cudaEvent_t)event, (cudaStream_t)stream));
  return CNP_OK;
}

static cnp_status c_event_query(void *native, int *done)
{
  cudaError_t e = cudaEventQuery((cudaEvent_t)native);
  if (e == cudaErrorNotReady) {
    *done = 0;
    return CNP_OK;
  }
  if (e != cudaSuccess) return cu_fail(e, "cnp_event_done", "cudaEventQuery");
  *done = 1;
  return CNP_OK;
}

static cnp_status c_event_sync(void *native)
{
  CU_CHECK("cnp_event_synchronize", cudaEventSynchronize((cudaEvent_t)native));
  return CNP_OK;
}

static cnp_status c_event_elapsed(void *start, void *stop, float *ms)
{
  CU_CHECK("cnp_event_elapsed_ms",
           cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)stop));
  return CNP_OK;
}

static cnp_status c_device_sync(int device)
{
  static const char op[] = "cnp_device_synchronize";
  CU_ON_DEVICE(op, device, cudaDeviceSynchronize());
  return CNP_OK;
}

static cnp_status c_set_device(int device)
{
  CU_CHECK("cnp_set_device", cudaSetDevice(device));
  return CNP_OK;
}

static cnp_status c_device_count(int *n)
{
  const char *why = NULL;
  if (!cnp__cuda_probe(&why))
    return cnp__fail(CNP_EUNAVAILABLE, "cuda_device_count", "%s", why);
  *n = probe_count;
  return CNP_OK;
}

static cnp_status c_stream_device(void *native, int *device)
{
  static const char op[] = "cnp_stream_wrap";
  if (!native) {
    CU_CHECK(op, cudaGetDevice(device));
    return CNP_OK;
  }
#if CUDART_VERSION >= 12080
  CU_CHECK(op, cudaStreamGetDevice((cudaStream_t)native, device));
#else
  /* cudaStreamGetDevice is CUDA 12.8+: older toolkits take the current device (a stream of
  ** another device then fails at its first use instead of at wrap). */
  CU_CHECK(op, cudaGetDevice(device));
#endif
  return CNP_OK;
}

static cnp__backend make_cuda_backend(void)
{
  cnp__backend b;
  memset(&b, 0, sizeof b);
  b.name = "cuda";
  b.mem_alloc = c_mem_alloc;
  b.mem_free = c_mem_free;
  b.host_alloc = c_host_alloc;
  b.host_free = c_host_free;
  b.memcpy_async = c_memcpy;
  b.memset_async = c_memset;
  b.stream_create = c_stream_create;
  b.stream_destroy = c_stream_destroy;
  b.stream_sync = c_stream_sync;
  b.stream_query = c_stream_query;
  b.stream_wait_event = c_stream_wait_event;
  b.event_create = c_event_create;
  b.event_destroy = c_event_destroy;
  b.event_record = c_event_record;
  b.event_query = c_event_query;
  b.event_sync = c_event_sync;
  b.event_elapsed = c_event_elapsed;
  b.device_sync = c_device_sync;
  b.set_device = c_set_device;
  b.memcpy2d_async = c_memcpy2d;
  b.memset2d_async = c_memset2d;
  b.device_count = c_device_count;
  b.stream_device = c_stream_device;
  return b;
}

static const cnp__backend cuda_backend = make_cuda_backend();

extern "C" const cnp__backend *cnp__backend_cuda(void) { return &cuda_backend; }

/* ---- backend info ------------------------------------------------------------------------ */

/* snprintf into buf at *pos, counting the full length even when it does not fit. */
static void put(char *buf, size_t len, size_t *pos, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

static void put(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(*pos < len ? buf + *pos : NULL, *pos < len ? len - *pos : 0, fmt, ap);
  va_end(ap);
  if (n > 0) *pos += (size_t)n;
}

static void put_string(char *buf, size_t len, size_t *pos, const char *s)
{
  put(buf, len, pos, "\"");
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') put(buf, len, pos, "\\%c", *p);
    else if (*p < 0x20) put(buf, len, pos, "\\u%04x", *p);
    else put(buf, len, pos, "%c", *p);
  }
  put(buf, len, pos, "\"");
}

extern "C" cnp_status cnp__cuda_info_json(char *buf, size_t len, size_t *used)
{
  size_t pos = 0;
  const char *why = NULL;
  int ok = cnp__cuda_probe(&why);
  int rt = 0, drv = 0, nv_major = 0, nv_minor = 0;
  cudaError_t ert = cudaRuntimeGetVersion(&rt);
  cudaError_t edrv = cudaDriverGetVersion(&drv);
  nvrtcResult env = nvrtcVersion(&nv_major, &nv_minor);
  (void)cudaGetLastError();
  put(buf, len, &pos, "\"cuda\":{\"built\":true,\"available\":%s,\"reason\":",
      ok ? "true" : "false");
  if (ok) put(buf, len, &pos, "null");
  else put_string(buf, len, &pos, why);
  if (ert == cudaSuccess) put(buf, len, &pos, ",\"runtime_version\":%d", rt);
  else put(buf, len, &pos, ",\"runtime_version\":null");
  if (edrv == cudaSuccess && drv > 0) put(buf, len, &pos, ",\"driver_version\":%d", drv);
  else put(buf, len, &pos, ",\"driver_version\":null");
  put(buf, len, &pos, ",\"device_count\":%d}", ok ? probe_count : 0);
  if (env == NVRTC_SUCCESS)
    put(buf, len, &pos, ",\"nvrtc\":{\"version\":\"%d.%d\"}", nv_major, nv_minor);
  else put(buf, len, &pos, ",\"nvrtc\":{\"version\":null}");
  *used = pos;
  return CNP_OK;
}

extern "C" cnp_status cnp__cuda_device_json(int device, char *buf, size_t len, size_t *used)
{
  cudaDeviceProp p;
  memset(&p, 0, sizeof p);
  CU_CHECK("cnp_backend_info", cudaGetDeviceProperties(&p, device));
  size_t pos = 0;
  put(buf, len, &pos, "{\"backend\":\"cuda\",\"ordinal\":%d,\"name\":", device);
  put_string(buf, len, &pos, p.name);
  put(buf, len, &pos,
      ",\"compute_capability\":\"%d.%d\",\"total_global_mem\":%zu,"
      "\"multiprocessors\":%d,\"warp_size\":%d,\"max_threads_per_block\":%d,"
      "\"max_block_dim\":[%d,%d,%d],\"max_grid_dim\":[%d,%d,%d],"
      "\"shared_mem_per_block\":%zu,\"shared_mem_per_block_optin\":%zu,"
      "\"regs_per_block\":%d,\"l2_cache_bytes\":%d}",
      p.major, p.minor, p.totalGlobalMem, p.multiProcessorCount, p.warpSize,
      p.maxThreadsPerBlock, p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2],
      p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2], p.sharedMemPerBlock,
      p.sharedMemPerBlockOptin, p.regsPerBlock, p.l2CacheSize);
  *used = pos;
  return CNP_OK;
}
