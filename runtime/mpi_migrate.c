/*
** mpi_migrate.c — particle migration between MPI ranks, and regular domain decompositions.
**
** A step of host fields costs one streaming pass over dest, work proportional to the
** leavers, and one pass moving the stayers behind the first leaver down (stable
** compaction); three collectives (Alltoall, Allreduce, Alltoallv):
**   1. wait for the producer; bring dest to the host if it lives on the device;
**   2. one host pass over dest: validate it and list the leavers (row and destination);
**      device fields instead get sort keys (0 for rows that stay, dest + 1 for leavers);
**   3. MPI_Alltoall of the per-destination counts (and of a host/device flag); check that
**      stayers + arrivals fit;
**   4. agree on success with MPI_Allreduce(MINLOC) of every rank's status — on any error all
**      ranks return the same status and nothing has moved;
**   5. host fields: a stable counting placement of the leavers alone gives each its slot in
**      the packed send buffer (grouped by destination); one pass per component packs the
**      leavers and closes the gaps (each stayer moves down once, order kept).
**      Device fields: cnp_sort_by_key (stable, key_limit = size + 1) moves the stayers to
**      the front and groups the leavers; a second agreement covers a failure here;
**   6. host fields: one MPI_Alltoallv of packed rows (a failure restores this rank's fields
**      exactly); device fields: one MPI_Alltoallv per component into receive buffers
**      (pinned host buffers without CUDA-aware MPI);
**   7. the arrivals are copied to rows [n_stay, n_stay + n_arrived).
** Everything is allocated by cnp_migrate_plan_create.
*/
#include "mpi_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct mig_field {
  cnp_dtype    dtype;
  int          ndim;                   /* 1: (N,)  2: (k, N) */
  int64_t      ncomp;
  size_t       item;
  MPI_Datatype elem;
} mig_field;

struct cnp_migrate_plan {
  uint32_t       magic;
  cnp_comm      *comm;
  int            n_fields;
  mig_field     *fields;
  int            n_values;             /* sum of ncomp: one sort value / message per row */
  int64_t        cap;
  cnp_backend    backend;
  int            device;
  int            aware;                /* device pointers go to MPI */
  cnp_workspace *ws;                   /* device fields: the sort's workspace */
  cnp_array      keys_host;            /* int32 [cap]: device sort keys, staged on the host */
  cnp_array      keys_dev;             /* int32 [cap] on the device (device fields) */
  cnp_array      dest_host;            /* int64 [cap]: dest brought to the host (int32 or
                                       ** int64), or the domain's int32 destinations */
  cnp_array      leave_row;            /* host fields: int32 [cap] rows that leave, ascending */
  cnp_array      leave_dest;           /* host fields: int32 [cap] their destinations */
  cnp_array      leave_slot;           /* host fields: int32 [cap] each leaver's row in the
                                       ** send buffer (grouped by destination, stable) */
  size_t         row_bytes;            /* bytes of one particle, all components */
  size_t        *voff;                 /* [n_values] byte offset of each component in a row */
  char          *sendb, *recvb;        /* host fields: [cap * row_bytes] packed rows */
  MPI_Datatype   rowtype;              /* host fields: row_bytes contiguous bytes */
  cnp_array     *values;               /* [n_values] one (n,) view per field component */
  cnp_array     *rbuf;                 /* [n_values] receive buffers, (cap,) each (device) */
  cnp_array     *sbuf;                 /* [n_values] pinned send buffers (staged device) */
  int64_t       *cnt_send, *cnt_recv;  /* [size] leavers per destination, arrivals per source */
  int64_t       *msg_send, *msg_recv;  /* [2 * size] the Alltoall: (count, fields on device) */
  size_t        *blk;                  /* [size] one component's byte offset per destination */
  int           *scount, *sdispl, *rcount, *rdispl;  /* [size] */
  cnp_migrate_stats stats;
  bool           have_stats;
};

/* A 1-D view of `n` items at `data`. */
static cnp_array view1d(void *data, cnp_dtype t, int64_t n, cnp_backend b, int device)
{
  cnp_array v;
  memset(&v, 0, sizeof v);
  v.data = data;
  v.dtype = t;
  v.ndim = 1;
  v.shape[0] = n;
  v.strides[0] = (int64_t)cnp_dtype_size(t);
  v.backend = b;
  v.device = device;
  return v;
}

static cnp_status plan_check(const cnp_migrate_plan *p, const char *op)
{
  /* Through the live-handle registry: a destroyed plan is CNP_ESTATE without reading freed
  ** memory; another kind of handle is CNP_EINVAL. */
  cnp_status st = cnp__check_handle(p, CNP__MAGIC_MIGRATE, "migration plan", op);
  if (st != CNP_OK) return st;
  return cnp__comm_check(p->comm, op);
}

/* Check a field template or a step's field against the plan's rules. */
static cnp_status field_shape(const cnp_array *a, int i, const char *op, int64_t *ncomp,
                              int64_t *cap)
{
  char what[32];
  snprintf(what, sizeof what, "fields[%d]", i);
  cnp_status st = cnp__check_array(a, op, what);
  if (st) return st;
  if (a->ndim != 1 && a->ndim != 2)
    return cnp__fail(CNP_ESHAPE, op, "%s must be (N,) or component-major (k, N), has ndim %d",
                     what, a->ndim);
  if (!cnp_array_is_c_contiguous(a))
    return cnp__fail(CNP_ELAYOUT, op, "%s must be C-contiguous", what);
  *ncomp = a->ndim == 2 ? a->shape[0] : 1;
  *cap = a->shape[a->ndim - 1];
  return CNP_OK;
}

/* ---- plan lifetime --------------------------------------------------------------------- */

static void plan_free(cnp_migrate_plan *p)
{
  cnp_workspace_destroy(p->ws);
  if (p->keys_host.data) cnp_array_free(&p->keys_host);
  if (p->keys_dev.data) cnp_array_free(&p->keys_dev);
  if (p->dest_host.data) cnp_array_free(&p->dest_host);
  if (p->leave_row.data) cnp_array_free(&p->leave_row);
  if (p->leave_dest.data) cnp_array_free(&p->leave_dest);
  if (p->leave_slot.data) cnp_array_free(&p->leave_slot);
  for (int v = 0; v < p->n_values; v++) {
    if (p->rbuf && p->rbuf[v].data) cnp_array_free(&p->rbuf[v]);
    if (p->sbuf && p->sbuf[v].data) cnp_array_free(&p->sbuf[v]);
  }
  if (p->rowtype != MPI_DATATYPE_NULL) {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin) MPI_Type_free(&p->rowtype);
  }
  cnp__free(p->sendb);
  cnp__free(p->recvb);
  cnp__free(p->voff);
  cnp__free(p->fields);
  cnp__free(p->values);
  cnp__free(p->rbuf);
  cnp__free(p->sbuf);
  cnp__free(p->cnt_send);
  cnp__free(p->blk);
  cnp__free(p->scount);
  cnp__handle_unregister(p);
  p->magic = CNP__MAGIC_DEAD;
  cnp__free(p);
}

static cnp_status plan_alloc(cnp_migrate_plan *p, const char *op)
{
  cnp_status st;
  int size = p->comm->size;
  int64_t cap = p->cap;
  p->values = cnp__calloc((size_t)p->n_values, sizeof *p->values);
  p->rbuf = cnp__calloc((size_t)p->n_values, sizeof *p->rbuf);
  p->sbuf = cnp__calloc((size_t)p->n_values, sizeof *p->sbuf);
  p->voff = cnp__calloc((size_t)p->n_values + 1, sizeof *p->voff);
  p->cnt_send = cnp__calloc(6 * (size_t)size, sizeof(int64_t));
  p->blk = cnp__calloc((size_t)size, sizeof *p->blk);
  p->scount = cnp__calloc(4 * (size_t)size, sizeof(int));
  if (!p->values || !p->rbuf || !p->sbuf || !p->voff || !p->cnt_send || !p->blk ||
      !p->scount)
    return cnp__fail(CNP_ENOMEM, op, "cannot allocate the plan tables");
  p->cnt_recv = p->cnt_send + size;
  p->msg_send = p->cnt_send + 2 * size;
  p->msg_recv = p->cnt_send + 4 * size;
  p->row_bytes = 0;
  for (int v = 0, f = 0; f < p->n_fields; f++)
    for (int64_t c = 0; c < p->fields[f].ncomp; c++, v++) {
      p->voff[v] = p->row_bytes;
      p->row_bytes += p->fields[f].item;
    }
  p->sdispl = p->scount + size;
  p->rcount = p->scount + 2 * size;
  p->rdispl = p->scount + 3 * size;

  bool dev = p->backend == CNP_BACKEND_CUDA;
  if ((st = cnp_array_alloc_on(&p->dest_host, CNP_BACKEND_HOST, 0, CNP_INT64, 1, &cap,
                               CNP_ORDER_C, dev ? CNP_ARRAY_PINNED : 0)))
    return st;
  if (!dev) {                          /* host fields: leaver lists, packed row buffers */
    cnp_array *lists[3] = {&p->leave_row, &p->leave_dest, &p->leave_slot};
    for (int k = 0; k < 3; k++)
      if ((st = cnp_array_alloc_on(lists[k], CNP_BACKEND_HOST, 0, CNP_INT32, 1, &cap,
                                   CNP_ORDER_C, 0)))
        return st;
    if ((uint64_t)cap > SIZE_MAX / 2 / (p->row_bytes + 1) || p->row_bytes > INT32_MAX)
      return cnp__fail(CNP_EOVERFLOW, op, "capacity %lld rows of %zu bytes is too large",
                       (long long)cap, p->row_bytes);
    size_t bytes = (size_t)cap * p->row_bytes + 1;
    p->sendb = cnp__malloc(bytes);
    p->recvb = cnp__malloc(bytes);
    if (!p->sendb || !p->recvb)
      return cnp__fail(CNP_ENOMEM, op, "cannot allocate %zu bytes of migration buffers",
                       2 * bytes);
    int rc = MPI_Type_contiguous((int)p->row_bytes, MPI_BYTE, &p->rowtype);
    if (rc == MPI_SUCCESS) rc = MPI_Type_commit(&p->rowtype);
    if (rc != MPI_SUCCESS) return cnp__mpi_fail(rc, op, "MPI_Type_contiguous");
    return CNP_OK;
  }
  size_t max_item = 0;
  for (int f = 0; f < p->n_fields; f++)
    if (p->fields[f].item > max_item) max_item = p->fields[f].item;
  if ((st = cnp_workspace_create(&p->ws, p->backend, p->device, cap, (int64_t)size + 1,
                                 max_item)))
    return st;
  if ((st = cnp_array_alloc_on(&p->keys_host, CNP_BACKEND_HOST, 0, CNP_INT32, 1, &cap,
                               CNP_ORDER_C, CNP_ARRAY_PINNED)))
    return st;
  if ((st = cnp_array_alloc_on(&p->keys_dev, p->backend, p->device, CNP_INT32, 1, &cap,
                               CNP_ORDER_C, 0)))
    return st;
  int v = 0;
  for (int f = 0; f < p->n_fields; f++) {
    for (int64_t c = 0; c < p->fields[f].ncomp; c++, v++) {
      cnp_dtype t = p->fields[f].dtype;
      if (p->aware) st = cnp_array_alloc_on(&p->rbuf[v], p->backend, p->device, t, 1, &cap,
                                            CNP_ORDER_C, 0);
      else {
        st = cnp_array_alloc_on(&p->rbuf[v], CNP_BACKEND_HOST, 0, t, 1, &cap, CNP_ORDER_C,
                                CNP_ARRAY_PINNED);
        if (!st) st = cnp_array_alloc_on(&p->sbuf[v], CNP_BACKEND_HOST, 0, t, 1, &cap,
                                         CNP_ORDER_C, CNP_ARRAY_PINNED);
      }
      if (st) return st;
    }
  }
  return CNP_OK;
}

cnp_status cnp_migrate_plan_create(cnp_migrate_plan **out, cnp_comm *comm,
                                   const cnp_array *fields, int n_fields, cnp_cuda_aware mode)
{
  static const char op[] = "cnp_migrate_plan_create";
  CNP__CHECK_NOTNULL(op, out);
  *out = NULL;
  cnp_status st = cnp__comm_check(comm, op);
  if (st) return st;
  if (n_fields < 0 || (n_fields > 0 && !fields))
    return cnp__fail(CNP_EINVAL, op, "need n_fields >= 0 field templates");
  if (mode != CNP_CUDA_AWARE_OFF && mode != CNP_CUDA_AWARE_ON && mode != CNP_CUDA_AWARE_AUTO)
    return cnp__fail(CNP_EINVAL, op, "invalid cuda_aware mode %d", (int)mode);
  int64_t cap = -1, n_values = 0;
  for (int f = 0; f < n_fields; f++) {
    int64_t k = 0, c = 0;
    if ((st = field_shape(&fields[f], f, op, &k, &c))) return st;
    if (cap < 0) cap = c;
    if (c != cap)
      return cnp__fail(CNP_ESHAPE, op, "fields[%d] has capacity %lld, fields[0] has %lld", f,
                       (long long)c, (long long)cap);
    if (fields[f].backend != fields[0].backend || fields[f].device != fields[0].device)
      return cnp__fail(CNP_EDEVICE, op, "fields[%d] is on another backend or device", f);
    n_values += k;
  }
  if (cap < 0) cap = 0;
  if (cap > INT32_MAX || n_values > INT32_MAX)
    return cnp__fail(CNP_EOVERFLOW, op, "capacity %lld exceeds MPI's int counts",
                     (long long)cap);

  cnp_migrate_plan *p = cnp__calloc(1, sizeof *p);
  if (!p) return cnp__fail(CNP_ENOMEM, op, "cannot allocate the plan");
  p->magic = CNP__MAGIC_MIGRATE;
  p->comm = comm;
  p->rowtype = MPI_DATATYPE_NULL;
  p->n_fields = n_fields;
  p->n_values = (int)n_values;
  p->cap = cap;
  p->backend = n_fields ? fields[0].backend : CNP_BACKEND_HOST;
  p->device = n_fields ? fields[0].device : 0;
  p->aware = p->backend == CNP_BACKEND_CUDA &&
             (mode == CNP_CUDA_AWARE_ON ||
              (mode == CNP_CUDA_AWARE_AUTO && cnp__mpi_cuda_aware_library()));
  p->fields = cnp__calloc((size_t)(n_fields ? n_fields : 1), sizeof *p->fields);
  if (!p->fields) {
    plan_free(p);
    return cnp__fail(CNP_ENOMEM, op, "cannot allocate the plan");
  }
  for (int f = 0; f < n_fields; f++) {
    mig_field *m = &p->fields[f];
    m->dtype = fields[f].dtype;
    m->ndim = fields[f].ndim;
    m->ncomp = m->ndim == 2 ? fields[f].shape[0] : 1;
    m->item = cnp_dtype_size(m->dtype);
    m->elem = cnp__mpi_type(m->dtype);
  }
  if ((st = plan_alloc(p, op)) || (st = cnp__handle_register(p, op))) {
    plan_free(p);                      /* unregistering an unregistered plan is harmless */
    return st;
  }
  *out = p;
  return CNP_OK;
}

cnp_status cnp_migrate_plan_destroy(cnp_migrate_plan *p)
{
  if (p == NULL) return CNP_OK;
  cnp_status st = cnp__check_handle(p, CNP__MAGIC_MIGRATE, "migration plan",
                                    "cnp_migrate_plan_destroy");
  if (st != CNP_OK) return st;
  plan_free(p);
  return CNP_OK;
}

int64_t cnp_migrate_plan_capacity(const cnp_migrate_plan *p)
{
  return cnp__handle_live(p) && p->magic == CNP__MAGIC_MIGRATE ? p->cap : -1;
}

cnp_status cnp_migrate_last_stats(const cnp_migrate_plan *p, cnp_migrate_stats *out)
{
  static const char op[] = "cnp_migrate_last_stats";
  if (p == NULL) return cnp__fail(CNP_EINVAL, op, "migration plan is NULL");
  cnp_status hst = cnp__check_handle(p, CNP__MAGIC_MIGRATE, "migration plan", op);
  if (hst != CNP_OK) return hst;
  CNP__CHECK_NOTNULL(op, out);
  if (!p->have_stats) return cnp__fail(CNP_ESTATE, op, "no step has completed yet");
  *out = p->stats;
  return CNP_OK;
}

/* ---- one step ---------------------------------------------------------------------------- */

/* The step's arrays must match the plan's templates. */
static cnp_status check_step_args(cnp_migrate_plan *p, const cnp_array *fields, int n_fields,
                                  int64_t n, const cnp_array *dest, const char *op)
{
  if (n_fields != p->n_fields)
    return cnp__fail(CNP_EINVAL, op, "%d fields given, the plan has %d", n_fields,
                     p->n_fields);
  if (n_fields > 0 && !fields) return cnp__fail(CNP_EINVAL, op, "fields is NULL");
  for (int f = 0; f < n_fields; f++) {
    int64_t k = 0, c = 0;
    cnp_status st = field_shape(&fields[f], f, op, &k, &c);
    if (st) return st;
    if (fields[f].dtype != p->fields[f].dtype)
      return cnp__fail(CNP_EDTYPE, op, "fields[%d] is %s, the plan says %s", f,
                       cnp_dtype_name(fields[f].dtype), cnp_dtype_name(p->fields[f].dtype));
    if (fields[f].ndim != p->fields[f].ndim || k != p->fields[f].ncomp || c != p->cap)
      return cnp__fail(CNP_ESHAPE, op, "fields[%d] shape differs from the plan's template", f);
    if (fields[f].backend != p->backend || fields[f].device != p->device)
      return cnp__fail(CNP_EDEVICE, op, "fields[%d] is on another backend or device than the "
                       "plan", f);
  }
  if (n < 0 || n > p->cap)
    return cnp__fail(CNP_ERANGE, op, "n = %lld outside [0, capacity %lld]", (long long)n,
                     (long long)p->cap);
  cnp_status st = cnp__check_array(dest, op, "dest");
  if (st) return st;
  if ((dest->dtype != CNP_INT32 && dest->dtype != CNP_INT64) || dest->ndim != 1 ||
      dest->shape[0] < n || !cnp_array_is_c_contiguous(dest))
    return cnp__fail(CNP_EDTYPE, op, "dest must be a contiguous int32 or int64 (N,) array "
                     "with at least n entries");
  if (dest->backend != p->backend || dest->device != p->device)
    return cnp__fail(CNP_EDEVICE, op, "dest is on another backend or device than the fields");
  return CNP_OK;
}

/* The first destination outside [0, size): the error of the scans below. */
#define CNP__FIND_BAD(T)                                                              \
  do {                                                                                \
    const T *dv = dest;                                                               \
    for (int64_t i = 0; i < n; i++)                                                   \
      if (dv[i] < 0 || dv[i] >= size)                                                 \
        return cnp__fail(CNP_ERANGE, op, "dest[%lld] = %lld outside [0, %d)",         \
                         (long long)i, (long long)dv[i], size);                       \
  } while (0)

static cnp_status bad_dest(const void *dest, cnp_dtype t, int64_t n, int size, const char *op)
{
  if (t == CNP_INT32) CNP__FIND_BAD(int32_t);
  else CNP__FIND_BAD(int64_t);
  return cnp__fail(CNP_ERANGE, op, "dest has a destination outside [0, %d)", size);
}

/* Device fields: validate destinations, count them and build the sort keys. */
#define CNP__COUNT_AND_KEY(T)                                                         \
  do {                                                                                \
    const T *dv = dest;                                                               \
    for (int64_t i = 0; i < n; i++) {                                                 \
      T d = dv[i];                                                                    \
      if (d < 0 || d >= size) return bad_dest(dest, t, n, size, op);                 \
      cnt[d]++;                                                                       \
      key[i] = d == me ? 0 : (int32_t)d + 1;                                          \
    }                                                                                 \
  } while (0)

static cnp_status count_and_key(cnp_migrate_plan *p, const void *dest, cnp_dtype t, int64_t n,
                                const char *op)
{
  int size = p->comm->size, me = p->comm->rank;
  int32_t *key = p->keys_host.data;
  int64_t *cnt = p->cnt_send;
  if (t == CNP_INT32) CNP__COUNT_AND_KEY(int32_t);
  else CNP__COUNT_AND_KEY(int64_t);
  cnt[me] = 0;
  return CNP_OK;
}

/*
** Host fields: one branch-free pass over dest validates it and lists the leavers (rows in
** ascending order, with their destinations); the per-destination counts come from the
** leavers only. Returns the number of leavers in *n_leave.
*/
#define CNP__SCAN_LEAVERS(T)                                                          \
  do {                                                                                \
    const T *dv = dest;                                                               \
    unsigned bad = 0;                                                                 \
    for (int64_t i = 0; i < n; i++) {                                                 \
      T d = dv[i];                                                                    \
      bad |= (unsigned)(d < 0) | (unsigned)(d >= size);                               \
      row[nl] = (int32_t)i;                                                           \
      to[nl] = (int32_t)d;                                                            \
      nl += d != me;                                                                  \
    }                                                                                 \
    if (bad) return bad_dest(dest, t, n, size, op);                                   \
  } while (0)

static cnp_status scan_leavers(cnp_migrate_plan *p, const void *dest, cnp_dtype t, int64_t n,
                               int64_t *n_leave, const char *op)
{
  int size = p->comm->size, me = p->comm->rank;
  int32_t *row = p->leave_row.data, *to = p->leave_dest.data;
  int64_t nl = 0;
  if (t == CNP_INT32) CNP__SCAN_LEAVERS(int32_t);
  else CNP__SCAN_LEAVERS(int64_t);
  for (int64_t j = 0; j < nl; j++) p->cnt_send[to[j]]++;
  *n_leave = nl;
  return CNP_OK;
}

/*
** agree: every rank learns the lowest status of all ranks (and the lowest rank with it).
** Returns CNP_OK when every rank is fine; otherwise that status on every rank.
*/
static cnp_status agree(cnp_migrate_plan *p, cnp_status local, const char *op,
                        const char *when)
{
  return cnp__comm_agree(p->comm, local, op, when, "moved");
}

/* One step's state: counts of this rank and the stream the copies are ordered on. */
typedef struct step {
  int64_t n, n_stay, n_leave, n_arrive;
  void   *native;                      /* producer stream's native handle, or NULL */
  bool    dev;                         /* fields on CUDA */
} step;

/*
** step_local (1-2): argument checks, the producer, dest on the host, then the pass over
** dest. Returns the local status; on error the send counts are all zero.
*/
static cnp_status step_local(cnp_migrate_plan *p, step *t, const cnp_array *fields,
                             int n_fields, const cnp_array *dest, cnp_stream *ps,
                             cnp_event *pe, cnp_status local, const int64_t *n_out,
                             const char *op)
{
  int size = p->comm->size;
  memset(p->cnt_send, 0, sizeof(int64_t) * (size_t)size);
  if (!local && !n_out) local = cnp__fail(CNP_EINVAL, op, "n_out is NULL");
  if (!local) local = check_step_args(p, fields, n_fields, t->n, dest, op);
  if (!local && ps && pe)
    local = cnp__fail(CNP_EINVAL, op, "give one producer (a stream or an event), not both");
  if (!local) local = cnp_synchronize_for_mpi(dest, ps, pe);
  const void *dh = NULL;
  if (!local && !t->dev) dh = dest->data;
  if (!local && t->dev) {              /* dest to the host: 4 or 8 bytes per particle */
    cnp_array hv = view1d(p->dest_host.data, dest->dtype, t->n, CNP_BACKEND_HOST, 0);
    cnp_array dv = view1d(dest->data, dest->dtype, t->n, dest->backend, dest->device);
    local = cnp__copy(&hv, &dv, t->native, op);
    if (!local) local = cnp__backend_of(p->backend)->stream_sync(t->native);
    dh = p->dest_host.data;
  }
  int64_t n_leave = 0;
  if (!local && t->dev) local = count_and_key(p, dh, dest->dtype, t->n, op);
  if (!local && !t->dev) local = scan_leavers(p, dh, dest->dtype, t->n, &n_leave, op);
  if (local) memset(p->cnt_send, 0, sizeof(int64_t) * (size_t)size);
  for (int r = 0; !local && t->dev && r < size; r++) n_leave += p->cnt_send[r];
  t->n_stay = local ? 0 : t->n - n_leave;
  return local;
}

/*
** exchange_counts (3): MPI_Alltoall of the per-destination counts (with each rank's "fields
** on the device" flag: the payload protocols of host and device plans differ, so a mix is
** an agreed error), the MPI displacement tables, and the capacity check (into *local).
** Returns CNP_EMPI only for MPI failures.
*/
static cnp_status exchange_counts(cnp_migrate_plan *p, step *t, cnp_status *local,
                                  const char *op)
{
  int size = p->comm->size, other = -1;
  for (int r = 0; r < size; r++) {
    p->msg_send[2 * r] = p->cnt_send[r];
    p->msg_send[2 * r + 1] = t->dev;
  }
  int rc = MPI_Alltoall(p->msg_send, 2, MPI_INT64_T, p->msg_recv, 2, MPI_INT64_T,
                        p->comm->comm);
  if (rc != MPI_SUCCESS) return cnp__mpi_fail(rc, op, "MPI_Alltoall");
  t->n_arrive = t->n_leave = 0;
  for (int r = 0; r < size; r++) {
    p->cnt_recv[r] = p->msg_recv[2 * r];
    if (p->msg_recv[2 * r + 1] != t->dev && other < 0) other = r;
    p->scount[r] = (int)p->cnt_send[r];
    p->sdispl[r] = (int)t->n_leave;
    p->rcount[r] = (int)p->cnt_recv[r];
    p->rdispl[r] = (int)t->n_arrive;
    t->n_leave += p->cnt_send[r];
    t->n_arrive += p->cnt_recv[r];
  }
  if (!*local && other >= 0)
    *local = cnp__fail(CNP_EDEVICE, op, "rank %d migrates %s fields, rank %d %s fields: all "
                       "ranks of a step must use the same kind; nothing was moved", other,
                       t->dev ? "host" : "device", p->comm->rank, t->dev ? "device" : "host");
  if (!*local && t->n_stay + t->n_arrive > p->cap)
    *local = cnp__fail(CNP_EOVERFLOW, op, "rank %d would hold %lld rows (%lld staying + %lld "
                       "arriving) but its capacity is %lld; nothing was moved", p->comm->rank,
                       (long long)(t->n_stay + t->n_arrive), (long long)t->n_stay,
                       (long long)t->n_arrive, (long long)p->cap);
  return CNP_OK;
}

/* The (n,) view of every field component, in plan order. */
static void set_views(cnp_migrate_plan *p, const step *t, const cnp_array *fields,
                      int n_fields)
{
  int v = 0;
  for (int f = 0; f < n_fields; f++) {
    const mig_field *m = &p->fields[f];
    for (int64_t c = 0; c < m->ncomp; c++, v++)
      p->values[v] = view1d((char *)fields[f].data + (size_t)(c * p->cap) * m->item, m->dtype,
                            t->n, p->backend, p->device);
  }
}

/*
** Host fields travel packed: the block for destination r holds its scount[r] rows, each
** component's items contiguous (component v at byte voff[v] * scount[r] of the block); the
** blocks follow each other at sdispl[r] rows of row_bytes. Arrivals come in the same form.
** Leaver j (row[j], ascending) goes to block to[j] at position slot[j] - sdispl[to[j]].
*/

/* Where component v of each destination's rows starts, less sdispl[r] items: leaver j's
** item goes to byte blk[to[j]] + slot[j] * sz of the send buffer. */
static void component_blocks(cnp_migrate_plan *p, int v, size_t sz)
{
  for (int r = 0; r < p->comm->size; r++)
    p->blk[r] = (size_t)p->sdispl[r] * (p->row_bytes - sz) + p->voff[v] * (size_t)p->scount[r];
}

/*
** One pass over a component of n rows, from the first leaver on: each leaver's item goes to
** its place in the send buffer, and the run of stayers behind it moves down to close the
** gap (a run of up to 8 items item by item, a longer one with memmove). Stayers keep their
** order; a leaver is read before anything is written over it (runs only move down).
*/
#define CNP__PACK_COMPACT(SZ)                                                          \
  do {                                                                                 \
    int64_t w = row[0];                                                                \
    for (int64_t j = 0; j < nl; j++) {                                                 \
      memcpy(sb + blk[to[j]] + (size_t)slot[j] * SZ, b + (size_t)row[j] * SZ, SZ);      \
      int64_t s = (int64_t)row[j] + 1, e = j + 1 < nl ? row[j + 1] : n, len = e - s;   \
      if (len > 8) memmove(b + (size_t)w * SZ, b + (size_t)s * SZ, (size_t)len * SZ);  \
      else                                                                             \
        for (int64_t i = 0; i < len; i++)                                              \
          memcpy(b + (size_t)(w + i) * SZ, b + (size_t)(s + i) * SZ, SZ);              \
      w += len;                                                                        \
    }                                                                                  \
  } while (0)

static void pack_compact(cnp_migrate_plan *p, char *b, size_t sz, int64_t nl, int64_t n)
{
  const int32_t *row = p->leave_row.data, *to = p->leave_dest.data;
  const int32_t *slot = p->leave_slot.data;
  const size_t *blk = p->blk;
  char *sb = p->sendb;
  switch (sz) {
  case 1: CNP__PACK_COMPACT(1); return;
  case 2: CNP__PACK_COMPACT(2); return;
  case 4: CNP__PACK_COMPACT(4); return;
  case 8: CNP__PACK_COMPACT(8); return;
  case 16: CNP__PACK_COMPACT(16); return;
  default: CNP__PACK_COMPACT(sz); return;
  }
}

/* The inverse of pack_compact (after a failed exchange): runs move back up, last first,
** and each leaver's item returns from the send buffer. */
static void unpack_uncompact(cnp_migrate_plan *p, char *b, size_t sz, int64_t nl, int64_t n)
{
  const int32_t *row = p->leave_row.data, *to = p->leave_dest.data;
  const int32_t *slot = p->leave_slot.data;
  for (int64_t j = nl - 1; j >= 0; j--) {
    int64_t s = (int64_t)row[j] + 1, e = j + 1 < nl ? row[j + 1] : n, w = row[j] - j;
    if (e > s) memmove(b + (size_t)s * sz, b + (size_t)w * sz, (size_t)(e - s) * sz);
    memcpy(b + (size_t)row[j] * sz, p->sendb + p->blk[to[j]] + (size_t)slot[j] * sz, sz);
  }
}

/*
** pack_rows (5, host fields): a stable counting placement of the leavers alone (their rows
** are ascending) gives each its slot, grouped by destination; then one pass per component
** packs the leavers and compacts the stayers. Cannot fail; undone by unpack_rows.
*/
static void pack_rows(cnp_migrate_plan *p, const step *t)
{
  if (t->n_leave == 0) return;         /* everything stays, in order */
  const int32_t *to = p->leave_dest.data;
  int32_t *slot = p->leave_slot.data;
  int64_t *next = p->cnt_send;         /* the counts are in scount now: reuse as cursors */
  for (int r = 0; r < p->comm->size; r++) next[r] = p->sdispl[r];
  for (int64_t j = 0; j < t->n_leave; j++) slot[j] = (int32_t)next[to[j]]++;
  for (int v = 0; v < p->n_values; v++) {
    size_t sz = cnp_dtype_size(p->values[v].dtype);
    component_blocks(p, v, sz);
    pack_compact(p, p->values[v].data, sz, t->n_leave, t->n);
  }
}

/* unpack_rows: restore every component as it was before pack_rows (the send buffer and the
** leaver lists are intact after a failed exchange). */
static void unpack_rows(cnp_migrate_plan *p, const step *t)
{
  for (int v = 0; t->n_leave > 0 && v < p->n_values; v++) {
    size_t sz = cnp_dtype_size(p->values[v].dtype);
    component_blocks(p, v, sz);
    unpack_uncompact(p, p->values[v].data, sz, t->n_leave, t->n);
  }
}

/* append_packed (7, host fields): the arrivals, block by block (source rank order), behind
** the stayers. */
static void append_packed(cnp_migrate_plan *p, const step *t)
{
  for (int v = 0; v < p->n_values; v++) {
    char *b = p->values[v].data;
    size_t sz = cnp_dtype_size(p->values[v].dtype);
    for (int r = 0; r < p->comm->size; r++)
      if (p->rcount[r] > 0)
        memcpy(b + (size_t)(t->n_stay + p->rdispl[r]) * sz,
               p->recvb + (size_t)p->rdispl[r] * p->row_bytes + p->voff[v] * (size_t)p->rcount[r],
               (size_t)p->rcount[r] * sz);
  }
}

/* Test hook (see mpi_internal.h): the next host payload exchanges fail without MPI. */
static int fail_exchange;
void cnp__migrate_fail_exchange(int on) { fail_exchange = on; }

/*
** sort_rows (5, device fields): stable sort by key — stayers (key 0) first, then leavers
** grouped by destination — and, without CUDA-aware MPI, the leaver rows [n_stay, n) to the
** pinned send buffers. Returns the local status.
*/
static cnp_status sort_rows(cnp_migrate_plan *p, step *t, cnp_stream *ps, const char *op)
{
  if (t->n_leave == 0) return CNP_OK;  /* everything stays, in order */
  cnp_status st = CNP_OK;
  cnp_array keys = view1d(p->keys_dev.data, CNP_INT32, t->n, p->backend, p->device);
  cnp_array kh = view1d(p->keys_host.data, CNP_INT32, t->n, CNP_BACKEND_HOST, 0);
  st = cnp__copy(&keys, &kh, t->native, op);
  if (!st)
    st = cnp_sort_by_key(&keys, NULL, p->values, p->n_values, (int64_t)p->comm->size + 1,
                         p->ws, ps);
  for (int v = 0; !st && !p->aware && v < p->n_values; v++) {
    cnp_array src = p->values[v];
    src.data = (char *)src.data + (size_t)t->n_stay * cnp_dtype_size(src.dtype);
    src.shape[0] = t->n_leave;
    cnp_array dst = view1d(p->sbuf[v].data, src.dtype, t->n_leave, CNP_BACKEND_HOST, 0);
    st = cnp__copy(&dst, &src, t->native, op);
  }
  if (!st) st = cnp__backend_of(p->backend)->stream_sync(t->native);
  return st;
}

/*
** send_rows (6): host fields: one MPI_Alltoallv of the packed rows. Device fields: one
** MPI_Alltoallv per field component into the receive buffers, from the pinned send buffers
** or (CUDA-aware) from the sorted leaver rows [n_stay, n).
*/
static cnp_status send_rows(cnp_migrate_plan *p, const step *t, const char *op)
{
  if (!t->dev) {
    if (fail_exchange) return cnp__fail(CNP_EMPI, op, "MPI_Alltoallv failed (injected)");
    int rc = MPI_Alltoallv(p->sendb, p->scount, p->sdispl, p->rowtype, p->recvb, p->rcount,
                           p->rdispl, p->rowtype, p->comm->comm);
    return rc == MPI_SUCCESS ? CNP_OK : cnp__mpi_fail(rc, op, "MPI_Alltoallv");
  }
  int v = 0;
  for (int f = 0; f < p->n_fields; f++) {
    const mig_field *m = &p->fields[f];
    for (int64_t c = 0; c < m->ncomp; c++, v++) {
      const char *sp = p->aware ? (const char *)p->values[v].data + (size_t)t->n_stay * m->item
                                : (const char *)p->sbuf[v].data;
      int rc = MPI_Alltoallv(sp, p->scount, p->sdispl, m->elem, p->rbuf[v].data, p->rcount,
                             p->rdispl, m->elem, p->comm->comm);
      if (rc != MPI_SUCCESS) return cnp__mpi_fail(rc, op, "MPI_Alltoallv");
    }
  }
  return CNP_OK;
}

/* append_arrivals (7, device fields): received rows to [n_stay, n_stay + n_arrive). */
static cnp_status append_arrivals(cnp_migrate_plan *p, const step *t, const char *op)
{
  cnp_status st;
  for (int v = 0; t->n_arrive > 0 && v < p->n_values; v++) {
    cnp_array dst = p->values[v];
    dst.data = (char *)dst.data + (size_t)t->n_stay * cnp_dtype_size(dst.dtype);
    dst.shape[0] = t->n_arrive;
    cnp_array src = view1d(p->rbuf[v].data, dst.dtype, t->n_arrive, p->rbuf[v].backend,
                           p->rbuf[v].device);
    if ((st = cnp__copy(&dst, &src, t->native, op))) return st;
  }
  return cnp__backend_of(p->backend)->stream_sync(t->native);
}

/*
** migrate_impl: one step (see the top of the file). `local` carries an error found by the
** caller (cnp_migrate_by_domain), which still joins the collectives so no rank waits.
*/
static cnp_status migrate_impl(cnp_migrate_plan *p, cnp_array *fields, int n_fields,
                               int64_t n, const cnp_array *dest, cnp_stream *ps,
                               cnp_event *pe, cnp_status local, int64_t *n_out,
                               const char *op)
{
  step t = {.n = n, .native = cnp__native(ps), .dev = p->backend == CNP_BACKEND_CUDA};
  cnp_status st;
  local = step_local(p, &t, fields, n_fields, dest, ps, pe, local, n_out, op);
  if ((st = exchange_counts(p, &t, &local, op))) return st;
  if ((st = agree(p, local, op, "checking the step"))) return st;
  set_views(p, &t, fields, n_fields);
  if (t.dev) {                         /* every rank is a device rank (checked above) */
    local = sort_rows(p, &t, ps, op);
    if ((st = agree(p, local, op, "sorting by destination"))) return st;
    if ((st = send_rows(p, &t, op)) || (st = append_arrivals(p, &t, op))) return st;
  } else {
    pack_rows(p, &t);
    if ((st = send_rows(p, &t, op))) {
      unpack_rows(p, &t);              /* this rank's fields as they were */
      return st;
    }
    append_packed(p, &t);
  }
  *n_out = t.n_stay + t.n_arrive;
  p->stats = (cnp_migrate_stats){n, t.n_stay, t.n_leave, t.n_arrive, *n_out};
  p->have_stats = true;
  return CNP_OK;
}

cnp_status cnp_migrate(cnp_migrate_plan *p, cnp_array *fields, int n_fields, int64_t n,
                       const cnp_array *dest, cnp_stream *ps, cnp_event *pe, int64_t *n_out)
{
  static const char op[] = "cnp_migrate";
  cnp_status st = plan_check(p, op);
  if (st) return st;
  return migrate_impl(p, fields, n_fields, n, dest, ps, pe, CNP_OK, n_out, op);
}

/* ---- domain decomposition ----------------------------------------------------------------- */

static cnp_status domain_check(const cnp_domain *d, const char *op)
{
  if (d == NULL) return cnp__fail(CNP_EINVAL, op, "domain is NULL");
  if (d->ndim < 1 || d->ndim > 3)
    return cnp__fail(CNP_EINVAL, op, "domain ndim %d (must be 1..3)", d->ndim);
  for (int k = 0; k < d->ndim; k++) {
    if (d->dims[k] < 1)
      return cnp__fail(CNP_EINVAL, op, "domain dims[%d] = %d (must be >= 1)", k, d->dims[k]);
    if (!(d->hi[k] > d->lo[k]) || !isfinite(d->hi[k] - d->lo[k]))
      return cnp__fail(CNP_EINVAL, op, "domain axis %d: need finite lo < hi", k);
  }
  return CNP_OK;
}

/* Owner of x, assuming a checked domain; -1 (and *axis) when outside a non-periodic axis. */
static int owner(const cnp_domain *d, const double *x, int *axis)
{
  int rank = 0;
  for (int k = 0; k < d->ndim; k++) {
    double t = (x[k] - d->lo[k]) / (d->hi[k] - d->lo[k]);
    if (d->periodic[k]) t -= floor(t);
    if (!(t >= 0.0 && (t < 1.0 || (d->periodic[k] && t <= 1.0)))) {
      *axis = k;
      return -1;
    }
    int i = (int)(t * d->dims[k]);
    if (i >= d->dims[k]) i = d->dims[k] - 1;
    rank = rank * d->dims[k] + i;
  }
  return rank;
}

cnp_status cnp_domain_rank(const cnp_domain *d, const double *x, int *rank)
{
  static const char op[] = "cnp_domain_rank";
  cnp_status st = domain_check(d, op);
  if (st) return st;
  CNP__CHECK_NOTNULL(op, x);
  CNP__CHECK_NOTNULL(op, rank);
  int axis = 0, r = owner(d, x, &axis);
  if (r < 0)
    return cnp__fail(CNP_ERANGE, op, "position %g on axis %d is outside [%g, %g)", x[axis],
                     axis, d->lo[axis], d->hi[axis]);
  *rank = r;
  return CNP_OK;
}

/* Base pointer and byte stride of axis k's coordinates. */
typedef struct pos_axis { const char *base; int64_t stride; cnp_dtype t; } pos_axis;

static cnp_status pos_axes(const cnp_domain *d, const cnp_array *pos, int n_pos, int64_t n,
                           pos_axis *ax, const char *op)
{
  if (!pos) return cnp__fail(CNP_EINVAL, op, "pos is NULL");
  bool split = n_pos == d->ndim;
  if (!split && n_pos != 1)
    return cnp__fail(CNP_EINVAL, op, "give %d position arrays or one (%d, N) array, not %d",
                     d->ndim, d->ndim, n_pos);
  for (int i = 0; i < n_pos; i++) {
    cnp_status st = cnp__check_array(&pos[i], op, "pos");
    if (st) return st;
    if (pos[i].backend != CNP_BACKEND_HOST)
      return cnp__fail(CNP_EDEVICE, op, "positions must be host arrays");
    if (pos[i].dtype != CNP_FLOAT64 && pos[i].dtype != CNP_FLOAT32)
      return cnp__fail(CNP_EDTYPE, op, "positions must be float32 or float64");
  }
  for (int k = 0; k < d->ndim; k++) {
    const cnp_array *a = split ? &pos[k] : &pos[0];
    int last = a->ndim - 1;
    bool ok = split ? (a->ndim == 1 || (a->ndim == 2 && a->shape[0] == 1))
                    : (a->ndim == 2 && a->shape[0] == d->ndim) || (d->ndim == 1 && a->ndim == 1);
    if (!ok || a->shape[last] < n)
      return cnp__fail(CNP_ESHAPE, op, "positions must be (N,) per axis or (%d, N), with N >= n",
                       d->ndim);
    ax[k].base = (const char *)a->data + (split || a->ndim == 1 ? 0 : k * a->strides[0]);
    ax[k].stride = a->strides[last];
    ax[k].t = a->dtype;
  }
  return CNP_OK;
}

cnp_status cnp_domain_dest(const cnp_domain *d, const cnp_array *pos, int n_pos, int64_t n,
                           cnp_array *dest)
{
  static const char op[] = "cnp_domain_dest";
  cnp_status st = domain_check(d, op);
  if (st) return st;
  pos_axis ax[3];
  if ((st = pos_axes(d, pos, n_pos, n, ax, op))) return st;
  if ((st = cnp__check_array(dest, op, "dest"))) return st;
  if (dest->dtype != CNP_INT32 || dest->ndim != 1 || dest->shape[0] < n ||
      dest->backend != CNP_BACKEND_HOST)
    return cnp__fail(CNP_EDTYPE, op, "dest must be a host int32 (N,) array with N >= n");
  char *out = dest->data;
  for (int pass = 0; pass < 2; pass++)   /* check every position, then write: a failure
                                         ** leaves dest as it was */
    for (int64_t i = 0; i < n; i++) {
      double x[3];
      for (int k = 0; k < d->ndim; k++) {
        const char *p = ax[k].base + i * ax[k].stride;
        x[k] = ax[k].t == CNP_FLOAT64 ? *(const double *)p : (double)*(const float *)p;
      }
      int axis = 0, r = owner(d, x, &axis);
      if (r < 0)
        return cnp__fail(CNP_ERANGE, op, "particle %lld: position %g on axis %d is outside "
                         "[%g, %g)", (long long)i, x[axis], axis, d->lo[axis], d->hi[axis]);
      if (pass) *(int32_t *)(out + i * dest->strides[0]) = r;
    }
  return CNP_OK;
}

cnp_status cnp_migrate_by_domain(cnp_migrate_plan *p, const cnp_domain *d,
                                 const cnp_array *pos, int n_pos, cnp_array *fields,
                                 int n_fields, int64_t n, cnp_stream *ps, cnp_event *pe,
                                 int64_t *n_out)
{
  static const char op[] = "cnp_migrate_by_domain";
  cnp_status st = plan_check(p, op);
  if (st) return st;
  cnp_array dest = view1d(p->dest_host.data, CNP_INT32, p->cap, CNP_BACKEND_HOST, 0);
  cnp_status local = domain_check(d, op);
  if (!local && (int64_t)d->dims[0] * (d->ndim > 1 ? d->dims[1] : 1) *
                        (d->ndim > 2 ? d->dims[2] : 1) != p->comm->size)
    local = cnp__fail(CNP_EINVAL, op, "domain has a different number of ranks than the "
                      "communicator (%d)", p->comm->size);
  if (!local && p->backend != CNP_BACKEND_HOST)
    local = cnp__fail(CNP_EDEVICE, op, "domain migration needs host fields; compute dest on "
                      "the device and call cnp_migrate");
  if (!local && (n < 0 || n > p->cap))
    local = cnp__fail(CNP_ERANGE, op, "n = %lld outside [0, capacity %lld]", (long long)n,
                      (long long)p->cap);
  if (!local && ps && pe)
    local = cnp__fail(CNP_EINVAL, op, "give one producer (a stream or an event), not both");
  if (!local && pos && n_pos > 0) local = cnp_synchronize_for_mpi(&pos[0], ps, pe);
  if (!local) local = cnp_domain_dest(d, pos, n_pos, n, &dest);
  return migrate_impl(p, fields, n_fields, n, &dest, ps, pe, local, n_out, op);
}
