/*
** snapshot.c — host staging snapshots: N host slots for device->host copies of a field.
**
** copy() takes the next slot, bumps its generation and enqueues the copy after the
** producer (a stream, an event waited on GPU-side, or the default stream); the slot's event
** marks completion. A handle carries the generation it was made with, so a handle whose slot
** was reused gets CNP_ESTALE. On the host backend the copy still goes into the slot, so the
** output writer always gets a stable copy (counted as a device-local copy).
*/
#include "internal.h"

#include <stdatomic.h>
#include <string.h>

#define MAX_SLOTS 64

typedef struct slot {
  void                *data;            /* host buffer (pinned when bound to CUDA) */
  void                *event;           /* native event: completion of the last copy */
  bool                 used;            /* a copy was enqueued since creation */
  _Atomic uint64_t     generation;      /* bumped by every copy into this slot */
} slot;

struct cnp_snapshot {
  uint32_t          magic;
  cnp_backend       backend;            /* binding */
  int               device;
  cnp_dtype         dtype;
  int               ndim;
  int64_t           shape[CNP_MAX_DIMS];
  size_t            bytes;              /* of one slot */
  bool              pinned;
  void             *stream;             /* internal native stream (event-ordered copies) */
  bool              have_stream;
  int               nslots;
  int               next;
  slot              slots[];
};

static const cnp__backend *be_of(const cnp_snapshot *s) { return cnp__backend_of(s->backend); }

static cnp_status check_snapshot(const cnp_snapshot *s, const char *op)
{
  return cnp__check_handle(s, CNP__MAGIC_SNAPSHOT, "snapshot", op);
}

/* Release what exists of a (possibly partly built) snapshot. First status wins. */
static cnp_status release(cnp_snapshot *s)
{
  const cnp__backend *be = be_of(s);
  cnp_status st = CNP_OK, t;
  for (int i = 0; i < s->nslots; i++) {
    slot *sl = &s->slots[i];
    if (sl->event) {
      if ((t = be->event_sync(sl->event)) != CNP_OK && st == CNP_OK) st = t;
      if ((t = be->event_destroy(sl->event)) != CNP_OK && st == CNP_OK) st = t;
    }
    if (sl->data && (t = be->host_free(sl->data, s->pinned)) != CNP_OK && st == CNP_OK) st = t;
  }
  if (s->have_stream && (t = be->stream_destroy(s->stream, s->device)) != CNP_OK && st == CNP_OK)
    st = t;
  s->magic = CNP__MAGIC_DEAD;
  cnp__free(s);
  return st;
}

cnp_status cnp_snapshot_create(cnp_snapshot **out, const cnp_array *like, int slots)
{
  static const char op[] = "cnp_snapshot_create";
  CNP__CHECK_NOTNULL(op, out);
  *out = NULL;
  cnp_status st = cnp__check_array(like, op, "like");
  if (st != CNP_OK) return st;
  if (slots <= 0) slots = 2;
  if (slots > MAX_SLOTS)
    return cnp__fail(CNP_ERANGE, op, "%d slots requested; at most %d", slots, MAX_SLOTS);
  const cnp__backend *be = cnp__backend_of(like->backend);
  if (!be || (like->backend == CNP_BACKEND_CUDA && !cnp_cuda_available(NULL)))
    return cnp__fail(CNP_EUNAVAILABLE, op, "field is on %s, which is unavailable",
                     cnp_backend_name(like->backend));
  cnp_snapshot *s = cnp__calloc(1, sizeof *s + (size_t)slots * sizeof(slot));
  if (!s) return cnp__fail(CNP_ENOMEM, op, "cannot allocate the snapshot");
  s->magic = CNP__MAGIC_SNAPSHOT;
  s->backend = like->backend;
  s->device = like->device;
  s->dtype = like->dtype;
  s->ndim = like->ndim;
  memcpy(s->shape, like->shape, sizeof s->shape);
  s->bytes = cnp_array_nbytes(like);
  s->pinned = like->backend == CNP_BACKEND_CUDA;
  s->nslots = slots;
  if ((st = be->stream_create(&s->stream, s->device)) != CNP_OK) goto fail;
  s->have_stream = true;
  for (int i = 0; i < slots; i++) {
    if ((st = be->host_alloc(&s->slots[i].data, s->bytes, s->pinned)) != CNP_OK) goto fail;
    if ((st = be->event_create(&s->slots[i].event, 0, s->device)) != CNP_OK) goto fail;
  }
  if ((st = cnp__handle_register(s, op)) != CNP_OK) goto fail;
  *out = s;
  return CNP_OK;
fail:
  {
    size_t bytes = s->bytes;
    release(s);
    if (st == CNP_ENOMEM)
      return cnp__fail(CNP_ENOMEM, op, "cannot allocate %d slots of %zu bytes", slots, bytes);
  }
  return st;
}

cnp_status cnp_snapshot_destroy(cnp_snapshot *s)
{
  cnp_status st = check_snapshot(s, "cnp_snapshot_destroy");
  if (st != CNP_OK) return st;
  cnp__handle_unregister(s);
  return release(s);
}

int cnp_snapshot_slots(const cnp_snapshot *s)
{
  return cnp__handle_live(s) && s->magic == CNP__MAGIC_SNAPSHOT ? s->nslots : -1;
}

/* Host view of slot i, C order. */
static cnp_array slot_view(const cnp_snapshot *s, int i)
{
  cnp_array v;
  memset(&v, 0, sizeof v);
  v.data = s->slots[i].data;
  v.dtype = s->dtype;
  v.ndim = s->ndim;
  int64_t stride = (int64_t)cnp_dtype_size(s->dtype);
  for (int d = s->ndim - 1; d >= 0; d--) {
    v.shape[d] = s->shape[d];
    v.strides[d] = stride;
    /* Sizes were checked at create, but an array with a zero extent may have huge other
    ** extents: its strides are never used, so saturate instead of overflowing. */
    if (d > 0 && __builtin_mul_overflow(stride, s->shape[d] ? s->shape[d] : 1, &stride))
      stride = INT64_MAX;
  }
  v.backend = CNP_BACKEND_HOST;
  v.device = 0;
  v.flags = s->pinned ? CNP_ARRAY_PINNED : 0u;
  return v;
}

/* Check that a producer stream/event belongs to the snapshot's binding. */
static cnp_status check_producer(const cnp_snapshot *s, cnp_stream *ps, cnp_event *pe,
                                 const char *op)
{
  cnp_status st;
  if (ps && pe)
    return cnp__fail(CNP_EINVAL, op, "give a producer stream or a producer event, not both");
  if (ps) {
    if ((st = cnp__check_stream(ps, op)) != CNP_OK) return st;
    if (ps->backend != s->backend || ps->device != s->device)
      return cnp__fail(CNP_EDEVICE, op, "producer stream is on %s:%d but the binding is %s:%d",
                       cnp_backend_name(ps->backend), ps->device, cnp_backend_name(s->backend),
                       s->device);
  }
  if (pe) {
    if ((st = cnp__check_event(pe, op)) != CNP_OK) return st;
    if (pe->backend != s->backend || pe->device != s->device)
      return cnp__fail(CNP_EDEVICE, op, "producer event is on %s:%d but the binding is %s:%d",
                       cnp_backend_name(pe->backend), pe->device, cnp_backend_name(s->backend),
                       s->device);
  }
  return CNP_OK;
}

cnp_status cnp_snapshot_copy(cnp_snapshot *s, const cnp_array *field, cnp_stream *producer_stream,
                             cnp_event *producer_event, cnp_snapshot_handle *out)
{
  static const char op[] = "cnp_snapshot_copy";
  cnp_status st = check_snapshot(s, op);
  if (st != CNP_OK) return st;
  CNP__CHECK_NOTNULL(op, out);
  if ((st = cnp__check_array(field, op, "field")) != CNP_OK) return st;
  if (field->backend != s->backend || field->device != s->device)
    return cnp__fail(CNP_EDEVICE, op, "field is on %s:%d but the snapshot is bound to %s:%d",
                     cnp_backend_name(field->backend), field->device,
                     cnp_backend_name(s->backend), s->device);
  if (field->dtype != s->dtype)
    return cnp__fail(CNP_EDTYPE, op, "field is %s but the snapshot holds %s",
                     cnp_dtype_name(field->dtype), cnp_dtype_name(s->dtype));
  bool same = field->ndim == s->ndim;
  for (int d = 0; same && d < s->ndim; d++) same = field->shape[d] == s->shape[d];
  if (!same) return cnp__fail(CNP_ESHAPE, op, "field shape differs from the snapshot's");
  if ((st = check_producer(s, producer_stream, producer_event, op)) != CNP_OK) return st;

  const cnp__backend *be = be_of(s);
  void *stream = NULL;                 /* default stream */
  if (producer_stream) {
    stream = producer_stream->native;
  } else if (producer_event) {
    stream = s->stream;
    if (producer_event->recorded &&
        (st = be->stream_wait_event(stream, producer_event->native)) != CNP_OK)
      return st;
  }
  int i = s->next;
  slot *sl = &s->slots[i];
  /* the previous copy into this slot may still run on another stream */
  if (sl->used && (st = be->stream_wait_event(stream, sl->event)) != CNP_OK) return st;
  uint64_t gen = atomic_fetch_add(&sl->generation, 1) + 1;
  cnp_array dst = slot_view(s, i);
  if ((st = cnp__copy(&dst, field, stream, op)) != CNP_OK) return st;
  if ((st = be->event_record(sl->event, stream)) != CNP_OK) return st;
  sl->used = true;
  s->next = (i + 1) % s->nslots;
  out->owner = s;
  out->slot = i;
  out->generation = gen;
  return CNP_OK;
}

cnp_status cnp_snapshot_result(cnp_snapshot_handle h, cnp_array *host_view)
{
  static const char op[] = "cnp_snapshot_result";
  cnp_status st = check_snapshot(h.owner, op);
  if (st != CNP_OK) return st;
  CNP__CHECK_NOTNULL(op, host_view);
  cnp_snapshot *s = h.owner;
  if (h.slot < 0 || h.slot >= s->nslots)
    return cnp__fail(CNP_EINVAL, op, "handle names slot %d of %d", h.slot, s->nslots);
  slot *sl = &s->slots[h.slot];
  uint64_t now = atomic_load(&sl->generation);
  if (h.generation == 0 || h.generation > now)
    return cnp__fail(CNP_EINVAL, op, "handle was not made by cnp_snapshot_copy");
  if (h.generation != now)
    return cnp__fail(CNP_ESTALE, op,
                     "slot %d was reused (handle generation %llu, slot generation %llu)",
                     h.slot, (unsigned long long)h.generation, (unsigned long long)now);
  if ((st = be_of(s)->event_sync(sl->event)) != CNP_OK) return st;
  if (atomic_load(&sl->generation) != h.generation)
    return cnp__fail(CNP_ESTALE, op, "slot %d was reused while waiting", h.slot);
  *host_view = slot_view(s, h.slot);
  return CNP_OK;
}
