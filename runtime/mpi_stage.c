/*
** mpi_stage.c — MPI staging objects and their send/receive contexts.
**
** A stage serves arrays of one (dtype, shape). For each array a context picks a path:
**
**   a on the host, C-contiguous                 PASS       MPI uses a's own storage
**   a on the host, strided / Fortran order      HOST_PACK  packed into the host buffer
**   a on CUDA, C-contiguous, CUDA-aware MPI     PASS       MPI gets the device pointer
**   a on CUDA, strided,      CUDA-aware MPI     DEV_PACK   packed into the device buffer
**   a on CUDA, C-contiguous, no CUDA-aware MPI  STAGE      copied to the pinned host buffer
**   a on CUDA, strided,      no CUDA-aware MPI  DEV_STAGE  device pack, then host buffer
**
** The host buffer (pinned when CUDA is available) and the device packing buffer are
** allocated at the first context that needs them (or by cnp_mpi_stage_reserve) and reused.
** Every copy goes through cnp__copy, which reports it to transfer accounting.
*/
#include "mpi_internal.h"

#include <stddef.h>
#include <string.h>

typedef enum stage_path { PATH_PASS, PATH_HOST_PACK, PATH_DEV_PACK, PATH_STAGE, PATH_DEV_STAGE }
    stage_path;

typedef enum ctx_kind { CTX_NONE = 0, CTX_SEND, CTX_RECV, CTX_EXCHANGE } ctx_kind;

struct cnp_mpi_ctx {
  cnp_mpi_stage *stage;
  ctx_kind       kind;
  stage_path     path;
  cnp_array      target;               /* the user's view (copied) */
  void          *buf;                  /* what MPI reads/writes */
  cnp_stream    *stream;               /* producer stream (may be NULL) */
  cnp_event     *event;                /* producer event (may be NULL) */
  MPI_Request    req[CNP_MPI_MAX_REQUESTS];
  int            n_req;
  bool           received;             /* a receive was posted (one per context) */
};

struct cnp_mpi_stage {
  uint32_t       magic;
  cnp_comm      *comm;
  cnp_dtype      dtype;
  int            ndim;
  int64_t        shape[CNP_MAX_DIMS];
  int64_t        numel;
  size_t         bytes;
  cnp_cuda_aware mode;
  int            aware;                /* resolved: device pointers go to MPI */
  MPI_Datatype   elem;                 /* predefined type of one element */
  cnp_array      host;                 /* host buffer, C order (data NULL until needed) */
  cnp_array      dpack;                /* device packing buffer, C order */
  bool           busy;
  cnp_mpi_ctx    ctx;
};

/* ---- helpers ---------------------------------------------------------------------------- */

static cnp_status stage_check(const cnp_mpi_stage *s, const char *op)
{
  /* Through the live-handle registry: a destroyed stage is CNP_ESTATE without reading
  ** freed memory; another kind of handle is CNP_EINVAL. */
  cnp_status st = cnp__check_handle(s, CNP__MAGIC_STAGE, "staging object", op);
  if (st != CNP_OK) return st;
  return cnp__comm_check(s->comm, op);
}

static cnp_status ctx_check(const cnp_mpi_ctx *c, const char *op)
{
  if (c == NULL) return cnp__fail(CNP_EINVAL, op, "context is NULL");
  /* A context lives inside its stage: check the stage is live before reading c. */
  const cnp_mpi_stage *owner =
      (const cnp_mpi_stage *)(const void *)((const char *)c - offsetof(cnp_mpi_stage, ctx));
  if (!cnp__handle_live(owner) || owner->magic != CNP__MAGIC_STAGE || c->stage != owner)
    return cnp__fail(CNP_ESTATE, op, "context belongs to a destroyed staging object");
  if (c->kind == CTX_NONE || !c->stage->busy)
    return cnp__fail(CNP_ESTATE, op, "context is closed");
  return CNP_OK;
}

/* Does a have the stage's dtype and shape? */
static cnp_status match_stage(const cnp_mpi_stage *s, const cnp_array *a, const char *op)
{
  cnp_status st = cnp__check_array(a, op, "array");
  if (st) return st;
  const char *why = NULL;
  if (a->backend == CNP_BACKEND_CUDA && !cnp_cuda_available(&why))
    return cnp__fail(CNP_EUNAVAILABLE, op, "the array is on cuda, which is unavailable: %s",
                     why);
  if (a->dtype != s->dtype)
    return cnp__fail(CNP_EDTYPE, op, "array is %s, staging object is %s",
                     cnp_dtype_name(a->dtype), cnp_dtype_name(s->dtype));
  bool same = a->ndim == s->ndim;
  for (int d = 0; same && d < a->ndim; d++) same = a->shape[d] == s->shape[d];
  if (!same) return cnp__fail(CNP_ESHAPE, op, "array shape differs from the staging object's");
  return CNP_OK;
}

static stage_path choose_path(const cnp_mpi_stage *s, const cnp_array *a)
{
  bool contig = cnp_array_is_c_contiguous(a);
  if (a->backend == CNP_BACKEND_HOST) return contig ? PATH_PASS : PATH_HOST_PACK;
  if (s->aware) return contig ? PATH_PASS : PATH_DEV_PACK;
  return contig ? PATH_STAGE : PATH_DEV_STAGE;
}

/* Allocate the buffers a path needs (first use only). */
static cnp_status ensure_buffers(cnp_mpi_stage *s, stage_path path, const cnp_array *a,
                                 const char *op)
{
  cnp_status st;
  bool need_host = path == PATH_HOST_PACK || path == PATH_STAGE || path == PATH_DEV_STAGE;
  bool need_dev = path == PATH_DEV_PACK || path == PATH_DEV_STAGE;
  if (need_dev && s->dpack.data != NULL && s->dpack.device != a->device)
    return cnp__fail(CNP_EDEVICE, op, "staging object is bound to CUDA device %d, array is "
                     "on device %d", s->dpack.device, a->device);
  if (need_host && s->host.data == NULL && s->numel > 0) {
    st = cnp_array_alloc_on(&s->host, CNP_BACKEND_HOST, 0, s->dtype, s->ndim, s->shape,
                            CNP_ORDER_C, CNP_ARRAY_PINNED);
    if (st) return st;
  }
  if (need_dev && s->dpack.data == NULL && s->numel > 0) {
    st = cnp_array_alloc_on(&s->dpack, CNP_BACKEND_CUDA, a->device, s->dtype, s->ndim,
                            s->shape, CNP_ORDER_C, 0);
    if (st) return st;
  }
  return CNP_OK;
}

static void *path_buffer(cnp_mpi_stage *s, stage_path path, const cnp_array *a)
{
  switch (path) {
  case PATH_PASS: return a->data;
  case PATH_DEV_PACK: return s->dpack.data;
  default: return s->host.data;
  }
}

/*
** order_after_producer: order what comes next after the one named producer. A staged path
** with a producer stream needs no CPU wait: its copies are enqueued on that stream (and
** the stream is synchronized after them). Otherwise the CPU waits for the producer event,
** or with neither, for every stream of a's device. *native receives the stream the copies
** go on.
*/
static cnp_status order_after_producer(const cnp_array *a, stage_path path, cnp_stream *ps,
                                       cnp_event *pe, void **native)
{
  *native = cnp__native(ps);
  if (ps && path != PATH_PASS && path != PATH_HOST_PACK) return CNP_OK;
  return cnp_synchronize_for_mpi(a, ps, pe);
}

/* Copy a -> MPI buffer for the path, then wait for the copy. */
static cnp_status stage_out(cnp_mpi_stage *s, stage_path path, const cnp_array *a,
                            void *native, const char *op)
{
  cnp_status st = CNP_OK;
  switch (path) {
  case PATH_PASS: return CNP_OK;
  case PATH_HOST_PACK: return cnp__copy(&s->host, a, NULL, op);
  case PATH_DEV_PACK: st = cnp__copy(&s->dpack, a, native, op); break;
  case PATH_STAGE: st = cnp__copy(&s->host, a, native, op); break;
  case PATH_DEV_STAGE:
    st = cnp__copy(&s->dpack, a, native, op);
    if (!st) st = cnp__copy(&s->host, &s->dpack, native, op);
    break;
  }
  if (st) return st;
  return cnp__backend_of(a->backend)->stream_sync(native);
}

/* Copy the MPI buffer back into a (scattering into its view), then wait for the copy. */
static cnp_status stage_in(cnp_mpi_stage *s, stage_path path, cnp_array *a, void *native,
                           const char *op)
{
  cnp_status st = CNP_OK;
  switch (path) {
  case PATH_PASS: return CNP_OK;
  case PATH_HOST_PACK: return cnp__copy(a, &s->host, NULL, op);
  case PATH_DEV_PACK: st = cnp__copy(a, &s->dpack, native, op); break;
  case PATH_STAGE: st = cnp__copy(a, &s->host, native, op); break;
  case PATH_DEV_STAGE:
    st = cnp__copy(&s->dpack, &s->host, native, op);
    if (!st) st = cnp__copy(a, &s->dpack, native, op);
    break;
  }
  if (st) return st;
  return cnp__backend_of(a->backend)->stream_sync(native);
}

/* ---- stage lifetime ------------------------------------------------------------------- */

cnp_status cnp_mpi_stage_create(cnp_mpi_stage **out, cnp_comm *comm, cnp_dtype dtype,
                                int ndim, const int64_t *shape, cnp_cuda_aware mode)
{
  static const char op[] = "cnp_mpi_stage_create";
  CNP__CHECK_NOTNULL(op, out);
  *out = NULL;
  cnp_status st = cnp__comm_check(comm, op);
  if (st) return st;
  size_t item = cnp_dtype_size(dtype);
  if (item == 0) return cnp__fail(CNP_EDTYPE, op, "invalid dtype %d", (int)dtype);
  if (ndim < 0 || ndim > CNP_MAX_DIMS)
    return cnp__fail(CNP_ESHAPE, op, "ndim %d out of range 0..%d", ndim, CNP_MAX_DIMS);
  if (ndim > 0 && shape == NULL) return cnp__fail(CNP_EINVAL, op, "shape is NULL");
  if (mode != CNP_CUDA_AWARE_OFF && mode != CNP_CUDA_AWARE_ON && mode != CNP_CUDA_AWARE_AUTO)
    return cnp__fail(CNP_EINVAL, op, "invalid cuda_aware mode %d", (int)mode);
  int64_t numel = 1;
  for (int d = 0; d < ndim; d++) {
    if (shape[d] < 0)
      return cnp__fail(CNP_ESHAPE, op, "negative extent %lld in dimension %d",
                       (long long)shape[d], d);
    if (__builtin_mul_overflow(numel, shape[d], &numel) || numel > INT32_MAX)
      return cnp__fail(CNP_EOVERFLOW, op, "more than %d elements (one MPI message)",
                       INT32_MAX);
  }
  cnp_mpi_stage *s = cnp__calloc(1, sizeof *s);
  if (!s) return cnp__fail(CNP_ENOMEM, op, "cannot allocate the staging object");
  s->magic = CNP__MAGIC_STAGE;
  s->elem = cnp__mpi_type(dtype);
  s->comm = comm;
  s->dtype = dtype;
  s->ndim = ndim;
  for (int d = 0; d < ndim; d++) s->shape[d] = shape[d];
  s->numel = numel;
  s->bytes = (size_t)numel * item;
  s->mode = mode;
  s->aware = mode == CNP_CUDA_AWARE_ON ||
             (mode == CNP_CUDA_AWARE_AUTO && cnp__mpi_cuda_aware_library());
  if ((st = cnp__handle_register(s, op)) != CNP_OK) {
    cnp__free(s);
    return st;
  }
  *out = s;
  return CNP_OK;
}

cnp_status cnp_mpi_stage_destroy(cnp_mpi_stage *s)
{
  static const char op[] = "cnp_mpi_stage_destroy";
  if (s == NULL) return CNP_OK;
  cnp_status hst = cnp__check_handle(s, CNP__MAGIC_STAGE, "staging object", op);
  if (hst != CNP_OK) return hst;
  if (s->busy) return cnp__fail(CNP_EBUSY, op, "a context is still open (call cnp_mpi_end)");
  cnp_status st = CNP_OK, st2;
  if (s->host.data && (st2 = cnp_array_free(&s->host)) && !st) st = st2;
  if (s->dpack.data && (st2 = cnp_array_free(&s->dpack)) && !st) st = st2;
  cnp__handle_unregister(s);
  s->magic = CNP__MAGIC_DEAD;
  cnp__free(s);
  return st;
}

cnp_status cnp_mpi_stage_reserve(cnp_mpi_stage *s, const cnp_array *like)
{
  static const char op[] = "cnp_mpi_stage_reserve";
  cnp_status st = stage_check(s, op);
  if (st) return st;
  if ((st = match_stage(s, like, op))) return st;
  return ensure_buffers(s, choose_path(s, like), like, op);
}

int cnp_mpi_stage_cuda_aware(const cnp_mpi_stage *s)
{
  return cnp__handle_live(s) && s->magic == CNP__MAGIC_STAGE ? s->aware : 0;
}

/* ---- contexts ------------------------------------------------------------------------- */

static cnp_status ctx_begin(cnp_mpi_stage *s, ctx_kind kind, cnp_array *a, cnp_stream *ps,
                            cnp_event *pe, cnp_mpi_ctx **ctx, const char *op)
{
  cnp_status st = stage_check(s, op);
  if (st) return st;
  CNP__CHECK_NOTNULL(op, ctx);
  *ctx = NULL;
  if (s->busy)
    return cnp__fail(CNP_EBUSY, op, "staging object already has an open %s context; close it "
                     "with cnp_mpi_end first (one context per staging object at a time)",
                     s->ctx.kind == CTX_SEND ? "send" : s->ctx.kind == CTX_RECV ? "receive"
                                                                                : "exchange");
  if (ps && pe)
    return cnp__fail(CNP_EINVAL, op, "give one producer (a stream or an event), not both");
  if ((st = match_stage(s, a, op))) return st;
  if (ps && (st = cnp__check_stream(ps, op))) return st;
  if (pe && (st = cnp__check_event(pe, op))) return st;
  stage_path path = choose_path(s, a);
  if ((st = ensure_buffers(s, path, a, op))) return st;

  cnp_mpi_ctx *c = &s->ctx;
  memset(c, 0, sizeof *c);
  c->stage = s;
  c->kind = kind;
  c->path = path;
  c->target = *a;
  c->stream = ps;
  c->event = pe;
  c->buf = path_buffer(s, path, a);
  /* Sends (and exchanges) need a's data in the buffer before MPI reads it. A receive into
  ** a's own storage (PASS) must wait until the producer is done with it; a staged receive
  ** orders its copy back at cnp_mpi_end instead. */
  if (kind != CTX_RECV || path == PATH_PASS) {
    void *native = NULL;
    st = order_after_producer(a, path, ps, pe, &native);
    if (!st && kind != CTX_RECV) st = stage_out(s, path, a, native, op);
    if (st) {
      c->kind = CTX_NONE;
      return st;
    }
  }
  s->busy = true;
  *ctx = c;
  return CNP_OK;
}

cnp_status cnp_mpi_send_begin(cnp_mpi_stage *s, const cnp_array *a, cnp_stream *ps,
                              cnp_event *pe, cnp_mpi_ctx **ctx)
{
  /* The send path only reads a; ctx_begin takes a non-const view for the receive case. */
  return ctx_begin(s, CTX_SEND, (cnp_array *)a, ps, pe, ctx, "cnp_mpi_send_begin");
}

cnp_status cnp_mpi_recv_begin(cnp_mpi_stage *s, cnp_array *a, cnp_stream *ps, cnp_event *pe,
                              cnp_mpi_ctx **ctx)
{
  return ctx_begin(s, CTX_RECV, a, ps, pe, ctx, "cnp_mpi_recv_begin");
}

cnp_status cnp_mpi_ctx_buffer(cnp_mpi_ctx *ctx, void **ptr, size_t *bytes)
{
  static const char op[] = "cnp_mpi_ctx_buffer";
  cnp_status st = ctx_check(ctx, op);
  if (st) return st;
  if (ptr) *ptr = ctx->buf;
  if (bytes) *bytes = ctx->stage->bytes;
  return CNP_OK;
}

static cnp_status need_kind(const cnp_mpi_ctx *c, ctx_kind want, const char *op)
{
  cnp_status st = ctx_check(c, op);
  if (st) return st;
  if (c->kind != want)
    return cnp__fail(CNP_ESTATE, op, "this is a %s context", c->kind == CTX_SEND ? "send"
                     : c->kind == CTX_RECV ? "receive" : "exchange");
  return CNP_OK;
}

static cnp_status check_peer(const cnp_mpi_ctx *c, int peer, const char *op)
{
  if (peer == CNP_MPI_PROC_NULL || (peer >= 0 && peer < c->stage->comm->size)) return CNP_OK;
  return cnp__fail(CNP_ERANGE, op, "rank %d outside [0, %d)", peer, c->stage->comm->size);
}

/* A receive must deliver the whole array: a shorter message would leave stale data. */
static cnp_status check_count(const cnp_mpi_ctx *c, MPI_Status *status, int source,
                              const char *op)
{
  if (source == CNP_MPI_PROC_NULL) return CNP_OK;
  int count = 0;
  int rc = MPI_Get_count(status, c->stage->elem, &count);
  if (rc != MPI_SUCCESS) return cnp__mpi_fail(rc, op, "MPI_Get_count");
  if (count != (int)c->stage->numel)
    return cnp__fail(CNP_ESHAPE, op, "received %d elements, the array has %lld", count,
                     (long long)c->stage->numel);
  return CNP_OK;
}

/* A receive context takes one receive: two would write the same buffer. */
static cnp_status one_receive(cnp_mpi_ctx *ctx, const char *op)
{
  if (ctx->received)
    return cnp__fail(CNP_EBUSY, op, "this receive context already received (two receives "
                     "would write the same buffer)");
  ctx->received = true;
  return CNP_OK;
}

cnp_status cnp_mpi_send(cnp_mpi_ctx *ctx, int dest, int tag)
{
  static const char op[] = "cnp_mpi_send";
  cnp_status st = need_kind(ctx, CTX_SEND, op);
  if (st || (st = check_peer(ctx, dest, op))) return st;
  cnp_mpi_stage *s = ctx->stage;
  int rc = MPI_Send(ctx->buf, (int)s->numel, s->elem, cnp__mpi_rank(dest), tag, s->comm->comm);
  return rc == MPI_SUCCESS ? CNP_OK : cnp__mpi_fail(rc, op, "MPI_Send");
}

cnp_status cnp_mpi_recv(cnp_mpi_ctx *ctx, int source, int tag)
{
  static const char op[] = "cnp_mpi_recv";
  cnp_status st = need_kind(ctx, CTX_RECV, op);
  if (st || (st = check_peer(ctx, source, op)) || (st = one_receive(ctx, op))) return st;
  cnp_mpi_stage *s = ctx->stage;
  MPI_Status status;
  int rc = MPI_Recv(ctx->buf, (int)s->numel, s->elem, cnp__mpi_rank(source), tag,
                    s->comm->comm, &status);
  if (rc != MPI_SUCCESS) return cnp__mpi_fail(rc, op, "MPI_Recv");
  return check_count(ctx, &status, source, op);
}

static cnp_status post(cnp_mpi_ctx *ctx, ctx_kind kind, int peer, int tag, const char *op)
{
  cnp_status st = need_kind(ctx, kind, op);
  if (st || (st = check_peer(ctx, peer, op))) return st;
  if (ctx->n_req == CNP_MPI_MAX_REQUESTS)
    return cnp__fail(CNP_EOVERFLOW, op, "context already holds %d pending requests",
                     CNP_MPI_MAX_REQUESTS);
  if (kind == CTX_RECV && (st = one_receive(ctx, op))) return st;
  cnp_mpi_stage *s = ctx->stage;
  MPI_Request *r = &ctx->req[ctx->n_req];
  int rc = kind == CTX_SEND
               ? MPI_Isend(ctx->buf, (int)s->numel, s->elem, cnp__mpi_rank(peer), tag,
                           s->comm->comm, r)
               : MPI_Irecv(ctx->buf, (int)s->numel, s->elem, cnp__mpi_rank(peer), tag,
                           s->comm->comm, r);
  if (rc != MPI_SUCCESS) return cnp__mpi_fail(rc, op, kind == CTX_SEND ? "MPI_Isend" : "MPI_Irecv");
  ctx->n_req++;
  return CNP_OK;
}

cnp_status cnp_mpi_isend(cnp_mpi_ctx *ctx, int dest, int tag)
{
  return post(ctx, CTX_SEND, dest, tag, "cnp_mpi_isend");
}

cnp_status cnp_mpi_irecv(cnp_mpi_ctx *ctx, int source, int tag)
{
  return post(ctx, CTX_RECV, source, tag, "cnp_mpi_irecv");
}

cnp_status cnp_mpi_sendrecv(cnp_mpi_ctx *send_ctx, int dest, int sendtag,
                            cnp_mpi_ctx *recv_ctx, int source, int recvtag)
{
  static const char op[] = "cnp_mpi_sendrecv";
  cnp_status st = need_kind(send_ctx, CTX_SEND, op);
  if (st || (st = need_kind(recv_ctx, CTX_RECV, op))) return st;
  if ((st = check_peer(send_ctx, dest, op)) || (st = check_peer(recv_ctx, source, op)) ||
      (st = one_receive(recv_ctx, op)))
    return st;
  cnp_mpi_stage *ss = send_ctx->stage, *rs = recv_ctx->stage;
  if (ss->comm != rs->comm)
    return cnp__fail(CNP_EINVAL, op, "the two contexts use different communicators");
  MPI_Status status;
  int rc = MPI_Sendrecv(send_ctx->buf, (int)ss->numel, ss->elem, cnp__mpi_rank(dest), sendtag,
                        recv_ctx->buf, (int)rs->numel, rs->elem, cnp__mpi_rank(source), recvtag,
                        ss->comm->comm, &status);
  if (rc != MPI_SUCCESS) return cnp__mpi_fail(rc, op, "MPI_Sendrecv");
  return check_count(recv_ctx, &status, source, op);
}

/* Complete every pending request; the request slots are released even on error. */
static cnp_status wait_all(cnp_mpi_ctx *ctx, const char *op)
{
  if (ctx->n_req == 0) return CNP_OK;
  MPI_Status status[CNP_MPI_MAX_REQUESTS];
  int n = ctx->n_req;
  int rc = MPI_Waitall(n, ctx->req, status);
  ctx->n_req = 0;
  if (rc != MPI_SUCCESS) {
    /* MPI_ERR_IN_STATUS: report the first request that failed. */
    for (int i = 0; rc == MPI_ERR_IN_STATUS && i < n; i++)
      if (status[i].MPI_ERROR != MPI_SUCCESS && status[i].MPI_ERROR != MPI_ERR_PENDING)
        return cnp__mpi_fail(status[i].MPI_ERROR, op, "MPI_Waitall");
    return cnp__mpi_fail(rc, op, "MPI_Waitall");
  }
  if (ctx->kind == CTX_RECV) {
    int source = status[0].MPI_SOURCE == MPI_PROC_NULL ? CNP_MPI_PROC_NULL : 0;
    return check_count(ctx, &status[0], source, op);
  }
  return CNP_OK;
}

cnp_status cnp_mpi_wait(cnp_mpi_ctx *ctx)
{
  static const char op[] = "cnp_mpi_wait";
  cnp_status st = ctx_check(ctx, op);
  if (st) return st;
  return wait_all(ctx, op);
}

/*
** cnp_mpi_end: pending requests are completed (never left behind), then received data goes
** back into the user's array, ordered after the context's producer.
*/
cnp_status cnp_mpi_end(cnp_mpi_ctx *ctx)
{
  static const char op[] = "cnp_mpi_end";
  cnp_status st = ctx_check(ctx, op);
  if (st) return st;
  cnp_mpi_stage *s = ctx->stage;
  st = wait_all(ctx, op);
  if (!st && ctx->kind != CTX_SEND && ctx->path != PATH_PASS) {
    void *native = cnp__native(ctx->stream);
    if (ctx->kind == CTX_RECV)
      st = order_after_producer(&ctx->target, ctx->path, ctx->stream, ctx->event, &native);
    if (!st) st = stage_in(s, ctx->path, &ctx->target, native, op);
  }
  ctx->kind = CTX_NONE;
  s->busy = false;
  return st;
}

cnp_status cnp_mpi_exchange(cnp_mpi_stage *s, cnp_array *a, int dest, int source, int tag,
                            cnp_stream *ps, cnp_event *pe)
{
  static const char op[] = "cnp_mpi_exchange";
  cnp_mpi_ctx *ctx = NULL;
  cnp_status st = ctx_begin(s, CTX_EXCHANGE, a, ps, pe, &ctx, op);
  if (st) return st;
  if ((st = check_peer(ctx, dest, op)) == CNP_OK && (st = check_peer(ctx, source, op)) == CNP_OK) {
    MPI_Status status;
    int rc = MPI_Sendrecv_replace(ctx->buf, (int)s->numel, s->elem, cnp__mpi_rank(dest), tag,
                                  cnp__mpi_rank(source), tag, s->comm->comm, &status);
    if (rc != MPI_SUCCESS) st = cnp__mpi_fail(rc, op, "MPI_Sendrecv_replace");
    else st = check_count(ctx, &status, source, op);
  }
  if (st) {                            /* close without copying anything back */
    ctx->kind = CTX_NONE;
    s->busy = false;
    return st;
  }
  return cnp_mpi_end(ctx);
}

/*
** cnp_synchronize_for_mpi: the CPU waits for exactly the named producer; with none, for all
** work on the array's device.
*/
cnp_status cnp_synchronize_for_mpi(const cnp_array *a, cnp_stream *ps, cnp_event *pe)
{
  static const char op[] = "cnp_synchronize_for_mpi";
  if (ps && pe)
    return cnp__fail(CNP_EINVAL, op, "give one producer (a stream or an event), not both");
  cnp_status st = cnp__check_array(a, op, "array");
  if (st) return st;
  const char *why = NULL;
  if (a->backend == CNP_BACKEND_CUDA && !cnp_cuda_available(&why))
    return cnp__fail(CNP_EUNAVAILABLE, op, "the array is on cuda, which is unavailable: %s",
                     why);
  if (ps) return cnp_stream_synchronize(ps);
  if (pe) return cnp_event_synchronize(pe);
  const cnp__backend *be = cnp__backend_of(a->backend);
  if (!be) return cnp__fail(CNP_EUNAVAILABLE, op, "the array's backend is not built");
  return be->device_sync(a->device);
}
