/*
** mirror.c — device mirrors of another library's host array.
**
** On CUDA the mirror owns a C-order device copy of the host array (uploaded once at create);
** to_host() copies it back after a producer and waits, to_device() uploads after CPU work.
** On the host backend the mirror IS the host array: no storage, no copies.
*/
#include "internal.h"

#include <string.h>

struct cnp_mirror {
  uint32_t    magic;
  cnp_backend backend;
  int         device;
  cnp_array   host;                    /* the other library's array (not owned) */
  cnp_array   dev;                     /* owned device copy, or == host on the host backend */
  void       *stream;                  /* internal native stream (event-ordered to_host) */
};

static cnp_status check_mirror(const cnp_mirror *m, const char *op)
{
  return cnp__check_handle(m, CNP__MAGIC_MIRROR, "mirror", op);
}

static cnp_status mirror_new(cnp_mirror **out, const cnp_array *host, cnp_backend b,
                             int device, const char *op)
{
  CNP__CHECK_NOTNULL(op, out);
  *out = NULL;
  cnp_status st = cnp__check_binding(b, device, op);
  if (st != CNP_OK) return st;
  st = cnp__check_array(host, op, "host");
  if (st != CNP_OK) return st;
  if (host->backend != CNP_BACKEND_HOST)
    return cnp__fail(CNP_EDEVICE, op, "the mirrored array must be a host array, not %s",
                     cnp_backend_name(host->backend));
  cnp_mirror *m = cnp__calloc(1, sizeof *m);
  if (!m) return cnp__fail(CNP_ENOMEM, op, "cannot allocate the mirror");
  m->magic = CNP__MAGIC_MIRROR;
  m->backend = b;
  m->device = device;
  m->host = *host;
  m->dev = *host;
  const cnp__backend *be = cnp__backend_of(m->backend);
  if (m->backend == CNP_BACKEND_CUDA) {
    m->dev.data = NULL;
    if ((st = be->stream_create(&m->stream, m->device)) != CNP_OK) goto fail_stream;
    st = cnp_array_alloc_on(&m->dev, CNP_BACKEND_CUDA, m->device, host->dtype, host->ndim,
                            host->shape, CNP_ORDER_C, 0);
    if (st != CNP_OK) goto fail;
    if ((st = cnp__copy(&m->dev, &m->host, m->stream, op)) != CNP_OK) goto fail;
    if ((st = be->stream_sync(m->stream)) != CNP_OK) goto fail;
  }
  if ((st = cnp__handle_register(m, op)) != CNP_OK) goto fail;
  *out = m;
  return CNP_OK;
fail:
  if (m->backend == CNP_BACKEND_CUDA) {
    if (m->dev.data) cnp_array_free(&m->dev);
    be->stream_destroy(m->stream, m->device);
  }
fail_stream:
  cnp__free(m);
  return st;
}

cnp_status cnp_mirror_create(cnp_mirror **out, const cnp_array *host)
{
  return mirror_new(out, host, cnp_backend_current(), cnp_backend_device(),
                    "cnp_mirror_create");
}

cnp_status cnp_mirror_create_on(cnp_mirror **out, const cnp_array *host, cnp_backend b,
                                int device)
{
  return mirror_new(out, host, b, device, "cnp_mirror_create_on");
}

cnp_status cnp_mirror_destroy(cnp_mirror *m)
{
  cnp_status st = check_mirror(m, "cnp_mirror_destroy");
  if (st != CNP_OK) return st;
  cnp__handle_unregister(m);
  if (m->backend == CNP_BACKEND_CUDA) {
    const cnp__backend *be = cnp__backend_of(m->backend);
    cnp_status t = be->stream_sync(m->stream);
    st = cnp_array_free(&m->dev);
    if (st == CNP_OK) st = t;
    t = be->stream_destroy(m->stream, m->device);
    if (st == CNP_OK) st = t;
  }
  m->magic = CNP__MAGIC_DEAD;
  cnp__free(m);
  return st;
}

cnp_status cnp_mirror_device(cnp_mirror *m, cnp_array *device_view)
{
  static const char op[] = "cnp_mirror_device";
  cnp_status st = check_mirror(m, op);
  if (st != CNP_OK) return st;
  CNP__CHECK_NOTNULL(op, device_view);
  *device_view = m->dev;
  device_view->flags &= ~(uint32_t)CNP_ARRAY_OWNED;   /* the mirror keeps ownership */
  return CNP_OK;
}

/* A stream or event handed to a mirror call must be on the mirror's backend and device. */
static cnp_status check_on(const cnp_mirror *m, cnp_backend b, int dev, const char *what,
                           const char *op)
{
  if (b != m->backend || dev != m->device)
    return cnp__fail(CNP_EDEVICE, op, "%s is on %s:%d but the mirror on %s:%d", what,
                     cnp_backend_name(b), dev, cnp_backend_name(m->backend), m->device);
  return CNP_OK;
}

cnp_status cnp_mirror_to_host(cnp_mirror *m, cnp_stream *ps, cnp_event *pe)
{
  static const char op[] = "cnp_mirror_to_host";
  cnp_status st = check_mirror(m, op);
  if (st != CNP_OK) return st;
  if (ps && pe)
    return cnp__fail(CNP_EINVAL, op, "give a producer stream or a producer event, not both");
  if (ps && ((st = cnp__check_stream(ps, op)) != CNP_OK ||
             (st = check_on(m, ps->backend, ps->device, "producer stream", op)) != CNP_OK))
    return st;
  if (pe && ((st = cnp__check_event(pe, op)) != CNP_OK ||
             (st = check_on(m, pe->backend, pe->device, "producer event", op)) != CNP_OK))
    return st;
  if (m->backend == CNP_BACKEND_HOST) return CNP_OK;   /* the mirror is the host array */
  const cnp__backend *be = cnp__backend_of(m->backend);
  void *stream = NULL;
  if (ps) {
    stream = ps->native;
  } else if (pe) {
    stream = m->stream;
    if (pe->recorded && (st = be->stream_wait_event(stream, pe->native)) != CNP_OK) return st;
  }
  if ((st = cnp__copy(&m->host, &m->dev, stream, op)) != CNP_OK) return st;
  return be->stream_sync(stream);
}

cnp_status cnp_mirror_to_device(cnp_mirror *m, cnp_stream *s)
{
  static const char op[] = "cnp_mirror_to_device";
  cnp_status st = check_mirror(m, op);
  if (st != CNP_OK) return st;
  if (s && ((st = cnp__check_stream(s, op)) != CNP_OK ||
            (st = check_on(m, s->backend, s->device, "stream", op)) != CNP_OK))
    return st;
  if (m->backend == CNP_BACKEND_HOST) return CNP_OK;
  return cnp__copy(&m->dev, &m->host, cnp__native(s), op);
}
