/*
** stream.c — stream handles: create/wrap/destroy, synchronize, query, GPU-side waits.
**
** A stream belongs to the backend and device current at its creation; work on arrays of
** another backend, or waits on events of another backend, are rejected with CNP_EDEVICE.
*/
#include "internal.h"

#include <string.h>

cnp_status cnp__check_stream(const cnp_stream *s, const char *op)
{
  return cnp__check_handle(s, CNP__MAGIC_STREAM, "stream", op);
}

static cnp_status stream_new(cnp_stream **out, void *native, bool wrap, cnp_backend b,
                             int dev, const char *op)
{
  CNP__CHECK_NOTNULL(op, out);
  *out = NULL;
  cnp_status bst = cnp__check_binding(b, dev, op);
  if (bst != CNP_OK) return bst;
  const cnp__backend *be = cnp__backend_of(b);
  if (wrap && b == CNP_BACKEND_HOST && native != NULL)
    return cnp__fail(CNP_EDEVICE, op, "a native stream was given but the %sbackend is host",
                     strcmp(op, "cnp_stream_wrap") == 0 ? "current " : "");
  cnp_stream *s = cnp__calloc(1, sizeof *s);
  if (!s) return cnp__fail(CNP_ENOMEM, op, "cannot allocate a stream");
  if (!wrap) {
    cnp_status st = be->stream_create(&native, dev);
    if (st != CNP_OK) {
      cnp__free(s);
      return st;
    }
  } else {
    cnp_status st = be->stream_device(native, &dev);   /* a user stream keeps its device */
    if (st != CNP_OK) {
      cnp__free(s);
      return st;
    }
  }
  s->magic = CNP__MAGIC_STREAM;
  s->backend = b;
  s->device = dev;
  s->wrapped = wrap;
  s->native = native;
  cnp_status st = cnp__handle_register(s, op);
  if (st != CNP_OK) {
    if (!wrap) be->stream_destroy(native, dev);
    cnp__free(s);
    return st;
  }
  *out = s;
  return CNP_OK;
}

cnp_status cnp_stream_create(cnp_stream **out)
{
  return stream_new(out, NULL, false, cnp_backend_current(), cnp_backend_device(),
                    "cnp_stream_create");
}

cnp_status cnp_stream_wrap(cnp_stream **out, void *native)
{
  return stream_new(out, native, true, cnp_backend_current(), cnp_backend_device(),
                    "cnp_stream_wrap");
}

cnp_status cnp_stream_create_on(cnp_stream **out, cnp_backend b, int device)
{
  return stream_new(out, NULL, false, b, device, "cnp_stream_create_on");
}

cnp_status cnp_stream_wrap_on(cnp_stream **out, cnp_backend b, void *native)
{
  return stream_new(out, native, true, b, 0, "cnp_stream_wrap_on");
}

cnp_status cnp_stream_destroy(cnp_stream *s)
{
  cnp_status st = cnp__check_stream(s, "cnp_stream_destroy");
  if (st != CNP_OK) return st;
  if (!s->wrapped) st = cnp__backend_of(s->backend)->stream_destroy(s->native, s->device);
  cnp__handle_unregister(s);
  s->magic = CNP__MAGIC_DEAD;
  cnp__free(s);
  return st;
}

cnp_status cnp_stream_synchronize(cnp_stream *s)
{
  cnp_status st = cnp__check_stream(s, "cnp_stream_synchronize");
  if (st != CNP_OK) return st;
  return cnp__backend_of(s->backend)->stream_sync(s->native);
}

cnp_status cnp_stream_done(cnp_stream *s, int *done)
{
  static const char op[] = "cnp_stream_done";
  cnp_status st = cnp__check_stream(s, op);
  if (st != CNP_OK) return st;
  CNP__CHECK_NOTNULL(op, done);
  return cnp__backend_of(s->backend)->stream_query(s->native, done);
}

cnp_status cnp_stream_wait_event(cnp_stream *s, cnp_event *e)
{
  static const char op[] = "cnp_stream_wait_event";
  cnp_status st = cnp__check_stream(s, op);
  if (st != CNP_OK) return st;
  if ((st = cnp__check_event(e, op)) != CNP_OK) return st;
  if (e->backend != s->backend)
    return cnp__fail(CNP_EDEVICE, op, "stream is on the %s backend but the event on %s",
                     cnp_backend_name(s->backend), cnp_backend_name(e->backend));
  if (!e->recorded) return CNP_OK;     /* like CUDA: waiting on an unrecorded event is a no-op */
  return cnp__backend_of(s->backend)->stream_wait_event(s->native, e->native);
}

cnp_backend cnp_stream_backend(const cnp_stream *s)
{
  return cnp__handle_live(s) && s->magic == CNP__MAGIC_STREAM ? s->backend : CNP_BACKEND_HOST;
}

int cnp_stream_device(const cnp_stream *s)
{
  return cnp__handle_live(s) && s->magic == CNP__MAGIC_STREAM ? s->device : -1;
}

void *cnp_stream_native(cnp_stream *s)
{
  return cnp__handle_live(s) && s->magic == CNP__MAGIC_STREAM ? s->native : NULL;
}

cnp_status cnp_device_synchronize(void)
{
  return cnp__backend_of(cnp_backend_current())->device_sync(cnp_backend_device());
}

cnp_status cnp_device_synchronize_on(cnp_backend b, int device)
{
  cnp_status st = cnp__check_binding(b, device, "cnp_device_synchronize_on");
  if (st != CNP_OK) return st;
  return cnp__backend_of(b)->device_sync(device);
}
