/*
** backend_host.c — the host backend: plain memory, synchronous HostStream/HostEvent.
**
** Work "enqueued" on a host stream runs at once, so streams are always done and events
** complete when recorded. A host event's native object holds its record time, for
** CNP_EVENT_TIMING.
*/
#define _POSIX_C_SOURCE 200809L
#include "internal.h"

#include <string.h>
#include <time.h>

typedef struct host_event {
  unsigned flags;
  double   t_ms;                       /* CLOCK_MONOTONIC at the last record, in ms */
} host_event;

static cnp_status h_mem_alloc(void **p, size_t bytes, int device, uint32_t flags)
{
  if (device != 0)
    return cnp__fail(CNP_EDEVICE, "host_mem_alloc", "host device must be 0, got %d", device);
  *p = (flags & CNP__MEM_ZERO) ? cnp__calloc(1, bytes) : cnp__malloc(bytes);
  if (!*p) return cnp__fail(CNP_ENOMEM, "host_mem_alloc", "cannot allocate %zu bytes", bytes);
  return CNP_OK;
}

static cnp_status h_mem_free(void *p, int device, uint32_t flags)
{
  (void)device, (void)flags;
  cnp__free(p);
  return CNP_OK;
}

static cnp_status h_host_alloc(void **p, size_t bytes, bool pinned)
{
  (void)pinned;
  return h_mem_alloc(p, bytes, 0, 0);
}

static cnp_status h_host_free(void *p, bool pinned)
{
  (void)pinned;
  cnp__free(p);
  return CNP_OK;
}

static cnp_status h_memcpy(void *dst, cnp_backend dst_b, const void *src, cnp_backend src_b,
                           size_t bytes, void *stream)
{
  (void)stream;
  if (dst_b != CNP_BACKEND_HOST || src_b != CNP_BACKEND_HOST)
    return cnp__fail(CNP_EDEVICE, "host_memcpy", "the host backend cannot reach device memory");
  if (bytes) memmove(dst, src, bytes);
  return CNP_OK;
}

static cnp_status h_memset(void *dst, int value, size_t bytes, void *stream)
{
  (void)stream;
  if (bytes) memset(dst, value, bytes);
  return CNP_OK;
}

static cnp_status h_memcpy2d(void *dst, size_t dpitch, cnp_backend dst_b, const void *src,
                             size_t spitch, cnp_backend src_b, size_t width, size_t height,
                             void *stream)
{
  (void)stream;
  if (dst_b != CNP_BACKEND_HOST || src_b != CNP_BACKEND_HOST)
    return cnp__fail(CNP_EDEVICE, "host_memcpy2d", "the host backend cannot reach device memory");
  char *d = dst;
  const char *s = src;
  if (width == 0) return CNP_OK;
  if (width == 8) {                    /* common case: strided doubles / int64 */
    for (size_t r = 0; r < height; r++) memcpy(d + r * dpitch, s + r * spitch, 8);
    return CNP_OK;
  }
  for (size_t r = 0; r < height; r++) memmove(d + r * dpitch, s + r * spitch, width);
  return CNP_OK;
}

static cnp_status h_memset2d(void *dst, size_t pitch, int value, size_t width, size_t height,
                             void *stream)
{
  (void)stream;
  char *d = dst;
  for (size_t r = 0; r < height && width; r++) memset(d + r * pitch, value, width);
  return CNP_OK;
}

static cnp_status h_stream_create(void **native, int device)
{
  if (device != 0)
    return cnp__fail(CNP_EDEVICE, "host_stream_create", "host device must be 0, got %d", device);
  *native = NULL;                      /* a HostStream needs no native object */
  return CNP_OK;
}

static cnp_status h_stream_destroy(void *native, int device) { (void)native, (void)device; return CNP_OK; }
static cnp_status h_stream_sync(void *native) { (void)native; return CNP_OK; }

static cnp_status h_stream_query(void *native, int *done)
{
  (void)native;
  *done = 1;
  return CNP_OK;
}

static cnp_status h_stream_wait_event(void *stream, void *event)
{
  (void)stream, (void)event;           /* host work already completed in order */
  return CNP_OK;
}

static cnp_status h_event_create(void **native, unsigned flags, int device)
{
  if (device != 0)
    return cnp__fail(CNP_EDEVICE, "host_event_create", "host device must be 0, got %d", device);
  host_event *e = cnp__calloc(1, sizeof *e);
  if (!e) return cnp__fail(CNP_ENOMEM, "host_event_create", "cannot allocate a host event");
  e->flags = flags;
  *native = e;
  return CNP_OK;
}

static cnp_status h_event_destroy(void *native)
{
  cnp__free(native);
  return CNP_OK;
}

static cnp_status h_event_record(void *native, void *stream)
{
  (void)stream;
  host_event *e = native;
  if (e->flags & CNP_EVENT_TIMING) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    e->t_ms = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
  }
  return CNP_OK;
}

static cnp_status h_event_query(void *native, int *done)
{
  (void)native;
  *done = 1;
  return CNP_OK;
}

static cnp_status h_event_sync(void *native) { (void)native; return CNP_OK; }

static cnp_status h_event_elapsed(void *start, void *stop, float *ms)
{
  const host_event *a = start, *b = stop;
  *ms = (float)(b->t_ms - a->t_ms);
  return CNP_OK;
}

static cnp_status h_device_sync(int device) { (void)device; return CNP_OK; }

static cnp_status h_set_device(int device)
{
  if (device != 0)
    return cnp__fail(CNP_ERANGE, "cnp_set_device", "the host backend has only device 0, got %d",
                     device);
  return CNP_OK;
}

static cnp_status h_device_count(int *n)
{
  *n = 1;
  return CNP_OK;
}

static cnp_status h_stream_device(void *native, int *device)
{
  (void)native;
  *device = 0;
  return CNP_OK;
}

const cnp__backend cnp__backend_host = {
  .name = "host",
  .mem_alloc = h_mem_alloc,
  .mem_free = h_mem_free,
  .host_alloc = h_host_alloc,
  .host_free = h_host_free,
  .memcpy_async = h_memcpy,
  .memset_async = h_memset,
  .stream_create = h_stream_create,
  .stream_destroy = h_stream_destroy,
  .stream_sync = h_stream_sync,
  .stream_query = h_stream_query,
  .stream_wait_event = h_stream_wait_event,
  .event_create = h_event_create,
  .event_destroy = h_event_destroy,
  .event_record = h_event_record,
  .event_query = h_event_query,
  .event_sync = h_event_sync,
  .event_elapsed = h_event_elapsed,
  .device_sync = h_device_sync,
  .set_device = h_set_device,
  .memcpy2d_async = h_memcpy2d,
  .memset2d_async = h_memset2d,
  .device_count = h_device_count,
  .stream_device = h_stream_device,
};
