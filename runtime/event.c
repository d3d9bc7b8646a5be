/*
** event.c — event handles: record on a stream, query, synchronize, elapsed time.
**
** Timing is off unless CNP_EVENT_TIMING is given. An event belongs to the backend and
** device current at its creation and can be recorded only on a stream of the same pair.
*/
#include "internal.h"

cnp_status cnp__check_event(const cnp_event *e, const char *op)
{
  return cnp__check_handle(e, CNP__MAGIC_EVENT, "event", op);
}

static cnp_status event_new(cnp_event **out, unsigned flags, cnp_backend b, int dev,
                            const char *op)
{
  CNP__CHECK_NOTNULL(op, out);
  *out = NULL;
  if (flags & ~CNP_EVENT_TIMING) return cnp__fail(CNP_EINVAL, op, "unknown flags 0x%x", flags);
  cnp_status bst = cnp__check_binding(b, dev, op);
  if (bst != CNP_OK) return bst;
  cnp_event *e = cnp__calloc(1, sizeof *e);
  if (!e) return cnp__fail(CNP_ENOMEM, op, "cannot allocate an event");
  cnp_status st = cnp__backend_of(b)->event_create(&e->native, flags, dev);
  if (st != CNP_OK) {
    cnp__free(e);
    return st;
  }
  e->magic = CNP__MAGIC_EVENT;
  e->backend = b;
  e->device = dev;
  e->flags = flags;
  if ((st = cnp__handle_register(e, op)) != CNP_OK) {
    cnp__backend_of(b)->event_destroy(e->native);
    cnp__free(e);
    return st;
  }
  *out = e;
  return CNP_OK;
}

cnp_status cnp_event_create(cnp_event **out, unsigned flags)
{
  return event_new(out, flags, cnp_backend_current(), cnp_backend_device(),
                   "cnp_event_create");
}

cnp_status cnp_event_create_on(cnp_event **out, unsigned flags, cnp_backend b, int device)
{
  return event_new(out, flags, b, device, "cnp_event_create_on");
}

cnp_status cnp_event_destroy(cnp_event *e)
{
  cnp_status st = cnp__check_event(e, "cnp_event_destroy");
  if (st != CNP_OK) return st;
  st = cnp__backend_of(e->backend)->event_destroy(e->native);
  cnp__handle_unregister(e);
  e->magic = CNP__MAGIC_DEAD;
  cnp__free(e);
  return st;
}

/* s == NULL records on the default stream of the event's backend. */
cnp_status cnp_event_record(cnp_event *e, cnp_stream *s)
{
  static const char op[] = "cnp_event_record";
  cnp_status st = cnp__check_event(e, op);
  if (st != CNP_OK) return st;
  if (s) {
    if ((st = cnp__check_stream(s, op)) != CNP_OK) return st;
    if (s->backend != e->backend || s->device != e->device)
      return cnp__fail(CNP_EDEVICE, op, "event is on %s:%d but the stream on %s:%d",
                       cnp_backend_name(e->backend), e->device, cnp_backend_name(s->backend),
                       s->device);
  }
  st = cnp__backend_of(e->backend)->event_record(e->native, cnp__native(s));
  if (st == CNP_OK) e->recorded = true;
  return st;
}

cnp_status cnp_event_done(cnp_event *e, int *done)
{
  static const char op[] = "cnp_event_done";
  cnp_status st = cnp__check_event(e, op);
  if (st != CNP_OK) return st;
  CNP__CHECK_NOTNULL(op, done);
  return cnp__backend_of(e->backend)->event_query(e->native, done);
}

cnp_status cnp_event_synchronize(cnp_event *e)
{
  cnp_status st = cnp__check_event(e, "cnp_event_synchronize");
  if (st != CNP_OK) return st;
  return cnp__backend_of(e->backend)->event_sync(e->native);
}

cnp_status cnp_event_elapsed_ms(cnp_event *start, cnp_event *stop, float *ms)
{
  static const char op[] = "cnp_event_elapsed_ms";
  cnp_status st = cnp__check_event(start, op);
  if (st != CNP_OK) return st;
  if ((st = cnp__check_event(stop, op)) != CNP_OK) return st;
  CNP__CHECK_NOTNULL(op, ms);
  if (start->backend != stop->backend || start->device != stop->device)
    return cnp__fail(CNP_EDEVICE, op, "events are on different backends or devices");
  if (!(start->flags & CNP_EVENT_TIMING) || !(stop->flags & CNP_EVENT_TIMING))
    return cnp__fail(CNP_EINVAL, op, "both events need CNP_EVENT_TIMING (the %s event lacks it)",
                     !(start->flags & CNP_EVENT_TIMING) ? "start" : "stop");
  if (!start->recorded || !stop->recorded)
    return cnp__fail(CNP_ESTATE, op, "the %s event was never recorded",
                     !start->recorded ? "start" : "stop");
  const cnp__backend *be = cnp__backend_of(start->backend);
  int d1 = 0, d2 = 0;
  if ((st = be->event_query(start->native, &d1)) != CNP_OK) return st;
  if ((st = be->event_query(stop->native, &d2)) != CNP_OK) return st;
  if (!d1 || !d2) return cnp__fail(CNP_ESTATE, op, "events have not completed yet");
  return be->event_elapsed(start->native, stop->native, ms);
}
