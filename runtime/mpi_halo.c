/*
** mpi_halo.c — ghost-layer halo exchange of slab-decomposed grids (cnp/mpi.h, part of
** libcnp_mpi): cnp_halo_create / _exchange / _accumulate / _destroy.
**
** The slab axis is axis 0 of a C-contiguous array, so every ghost or boundary layer of g
** planes is one contiguous run of g * plane_bytes bytes: host arrays go to MPI in place
** (MPI_BYTE counts), CUDA arrays through host staging buffers of 4g planes made at create
** (send low, send high, receive low, receive high). Two MPI_Sendrecv per call, each rank
** sending up while receiving from below and then the reverse, so no ordering of ranks can
** deadlock; a missing neighbour is MPI_PROC_NULL (its receive leaves the target as it was).
*/
#include "mpi_internal.h"

#include <limits.h>
#include <string.h>

enum { TAG_UP = 0x6e01, TAG_DOWN = 0x6e02 };

struct cnp_halo {
  uint32_t    magic;
  cnp_comm   *comm;
  cnp_dtype   dtype;
  int         ndim;
  int64_t     shape[CNP_MAX_DIMS];
  cnp_backend backend;
  int         device;
  int         g;
  int64_t     n0;                      /* interior planes */
  size_t      plane;                   /* bytes of one plane */
  int         lower, upper;            /* MPI ranks or MPI_PROC_NULL */
  bool        pinned;
  char       *buf;                     /* CUDA: 4g planes of host staging; host: 2g (recv) */
};

static cnp_status halo_check(const cnp_halo *h, const char *op)
{
  cnp_status st = cnp__check_handle(h, CNP__MAGIC_HALO, "halo", op);
  if (st != CNP_OK) return st;
  return cnp__comm_check(h->comm, op);
}

/* The host staging buffer (cnp__handle_open/_close): 2g planes (receive) on the host, 4g with
** CUDA, pinned there. */
static cnp_status halo_make(void *p)
{
  cnp_halo *h = p;
  size_t planes = (size_t)h->g * (h->backend == CNP_BACKEND_CUDA ? 4 : 2);
  const cnp__backend *b = cnp__backend_of(h->backend);
  return b ? b->host_alloc((void **)&h->buf, planes * h->plane, h->pinned)
           : cnp__fail(CNP_EUNSUPPORTED, "cnp_halo_create", "backend not built");
}

static cnp_status halo_unmake(void *p)
{
  cnp_halo *h = p;
  const cnp__backend *b = cnp__backend_of(h->backend);
  return b && h->buf ? b->host_free(h->buf, h->pinned) : CNP_OK;
}

static const cnp__handle_kind halo_kind = {halo_make, halo_unmake};

cnp_status cnp_halo_create(cnp_halo **out, cnp_comm *comm, const cnp_array *like, int ghost,
                           int periodic)
{
  static const char op[] = "cnp_halo_create";
  CNP__CHECK_NOTNULL(op, out);
  *out = NULL;
  cnp_status st = cnp__comm_check(comm, op);
  if (st != CNP_OK) return st;
  CNP__CHECK_NOTNULL(op, like);
  if ((st = cnp__check_array(like, op, "like")) != CNP_OK) return st;
  if (like->ndim < 1) return cnp__fail(CNP_ESHAPE, op, "like must have at least one axis");
  if (!cnp_array_is_c_contiguous(like))
    return cnp__fail(CNP_ELAYOUT, op, "like is not C-contiguous");
  if (ghost < 1) return cnp__fail(CNP_EINVAL, op, "ghost must be >= 1 (got %d)", ghost);
  int64_t n0 = like->shape[0] - 2 * (int64_t)ghost;
  if (n0 < ghost)
    return cnp__fail(CNP_ESHAPE, op,
                     "axis 0 has %lld planes: fewer than the %d interior + 2 * %d ghost planes "
                     "a rank needs", (long long)like->shape[0], ghost, ghost);
  size_t plane = cnp_dtype_size(like->dtype);
  for (int d = 1; d < like->ndim; d++) plane *= (size_t)like->shape[d];
  if (plane == 0 || plane * (size_t)ghost > (size_t)INT_MAX)
    return cnp__fail(CNP_EOVERFLOW, op, "a ghost layer must be 1 .. INT_MAX bytes");
  cnp_halo *h = cnp__calloc(1, sizeof *h);
  if (h == NULL) return cnp__fail(CNP_ENOMEM, op, "no memory for the halo");
  h->magic = CNP__MAGIC_HALO;
  h->comm = comm;
  h->dtype = like->dtype;
  h->ndim = like->ndim;
  for (int d = 0; d < CNP_MAX_DIMS; d++) h->shape[d] = d < like->ndim ? like->shape[d] : 0;
  h->backend = like->backend;
  h->device = like->device;
  h->g = ghost;
  h->n0 = n0;
  h->plane = plane;
  int r = comm->rank, n = comm->size;
  h->lower = r > 0 ? r - 1 : periodic ? n - 1 : MPI_PROC_NULL;
  h->upper = r < n - 1 ? r + 1 : periodic ? 0 : MPI_PROC_NULL;
  h->pinned = h->backend == CNP_BACKEND_CUDA;
  return cnp__handle_open(h, &h->magic, &halo_kind, (void **)out, op);
}

cnp_status cnp_halo_destroy(cnp_halo *h)
{
  if (h == NULL) return CNP_OK;
  cnp_status st = cnp__check_handle(h, CNP__MAGIC_HALO, "halo", "cnp_halo_destroy");
  if (st != CNP_OK) return st;
  return cnp__handle_close(h, &h->magic, &halo_kind);
}

static cnp_status check_array(const cnp_halo *h, const cnp_array *a, const char *op)
{
  CNP__CHECK_NOTNULL(op, a);
  cnp_status st = cnp__check_array(a, op, "a");
  if (st != CNP_OK) return st;
  if (a->backend != h->backend || a->device != h->device)
    return cnp__fail(CNP_EDEVICE, op, "a is on %s:%d but the halo was made for %s:%d",
                     cnp_backend_name(a->backend), a->device, cnp_backend_name(h->backend),
                     h->device);
  if (a->dtype != h->dtype)
    return cnp__fail(CNP_EDTYPE, op, "a is %s, the halo was made for %s",
                     cnp_dtype_name(a->dtype), cnp_dtype_name(h->dtype));
  int same = a->ndim == h->ndim;
  for (int d = 0; same && d < a->ndim; d++) same = a->shape[d] == h->shape[d];
  if (!same) return cnp__fail(CNP_ESHAPE, op, "a's shape differs from the halo's");
  if (!cnp_array_is_c_contiguous(a)) return cnp__fail(CNP_ELAYOUT, op, "a is not C-contiguous");
  return CNP_OK;
}

/* The g planes starting at plane p of a, as an array view. */
static cnp_status planes_of(const cnp_halo *h, const cnp_array *a, int64_t p, cnp_array *out)
{
  return cnp_array_slice(out, a, 0, p, p + h->g);
}

/* A host view of staging slot k (g planes). */
static cnp_status slot(const cnp_halo *h, int k, cnp_array *out)
{
  int64_t shape[CNP_MAX_DIMS];
  for (int d = 0; d < h->ndim; d++) shape[d] = h->shape[d];
  shape[0] = h->g;
  return cnp_array_wrap(out, h->buf + (size_t)k * (size_t)h->g * h->plane, CNP_BACKEND_HOST,
                        0, h->dtype, h->ndim, shape, NULL);
}

/* A copy between a CUDA array's planes and a host slot, completed before returning. */
static cnp_status copy_sync(const cnp_halo *h, cnp_array *dst, const cnp_array *src,
                            cnp_stream *s, const char *op)
{
  cnp_status st = cnp__copy(dst, src, cnp__native(s), op);
  if (st != CNP_OK) return st;
  return s ? cnp_stream_synchronize(s) : cnp_device_synchronize_on(h->backend, h->device);
}

static cnp_status sendrecv(const cnp_halo *h, const void *sbuf, int dest, int stag, void *rbuf,
                           int source, int rtag, const char *op)
{
  int bytes = (int)((size_t)h->g * h->plane);
  int rc = MPI_Sendrecv(sbuf, bytes, MPI_BYTE, dest, stag, rbuf, bytes, MPI_BYTE, source, rtag,
                        h->comm->comm, MPI_STATUS_IGNORE);
  return rc == MPI_SUCCESS ? CNP_OK : cnp__mpi_fail(rc, op, "MPI_Sendrecv");
}

/* The local checks (and the producer's synchronization), then their agreement. A handle
** that is not a halo has no communicator to agree over: that error stays local. */
static cnp_status prologue(cnp_halo *h, cnp_array *a, cnp_stream *s, bool sums, const char *op)
{
  cnp_status st = halo_check(h, op);
  if (st != CNP_OK) return st;
  st = check_array(h, a, op);
  if (st == CNP_OK && sums && h->dtype != CNP_FLOAT32 && h->dtype != CNP_FLOAT64)
    st = cnp__fail(CNP_EDTYPE, op, "accumulate needs float32 or float64 (got %s)",
                   cnp_dtype_name(h->dtype));
  if (st == CNP_OK && s) {
    if ((st = cnp__check_stream(s, op)) == CNP_OK && s->backend != h->backend)
      st = cnp__fail(CNP_EDEVICE, op, "stream is on %s, the array on %s",
                     cnp_backend_name(s->backend), cnp_backend_name(h->backend));
  }
  if (st == CNP_OK) st = cnp_synchronize_for_mpi(a, s, NULL);
  /* agreed, so one rank's bad argument cannot leave its neighbours in MPI_Sendrecv */
  return cnp__comm_agree(h->comm, st, op, "its checks", "exchanged");
}

cnp_status cnp_halo_exchange(cnp_halo *h, cnp_array *a, cnp_stream *s)
{
  static const char op[] = "cnp_halo_exchange";
  cnp_status st = prologue(h, a, s, false, op);
  if (st != CNP_OK) return st;
  int64_t g = h->g, n0 = h->n0;
  char *base = a->data;
  if (h->backend == CNP_BACKEND_HOST) {
    /* up: my last interior layer -> upper's low ghosts; mine from lower */
    st = sendrecv(h, base + (size_t)n0 * h->plane, h->upper, TAG_UP, base, h->lower, TAG_UP, op);
    if (st == CNP_OK)
      st = sendrecv(h, base + (size_t)g * h->plane, h->lower, TAG_DOWN,
                    base + (size_t)(g + n0) * h->plane, h->upper, TAG_DOWN, op);
    return st;
  }
  cnp_array s_lo, s_hi, r_lo, r_hi, dv;
  if ((st = slot(h, 0, &s_lo)) || (st = slot(h, 1, &s_hi)) || (st = slot(h, 2, &r_lo)) ||
      (st = slot(h, 3, &r_hi)))
    return st;
  if ((st = planes_of(h, a, g, &dv)) || (st = copy_sync(h, &s_lo, &dv, s, op))) return st;
  if ((st = planes_of(h, a, n0, &dv)) || (st = copy_sync(h, &s_hi, &dv, s, op))) return st;
  if ((st = sendrecv(h, s_hi.data, h->upper, TAG_UP, r_lo.data, h->lower, TAG_UP, op))) return st;
  if ((st = sendrecv(h, s_lo.data, h->lower, TAG_DOWN, r_hi.data, h->upper, TAG_DOWN, op)))
    return st;
  if (h->lower != MPI_PROC_NULL &&
      ((st = planes_of(h, a, 0, &dv)) || (st = copy_sync(h, &dv, &r_lo, s, op))))
    return st;
  if (h->upper != MPI_PROC_NULL &&
      ((st = planes_of(h, a, g + n0, &dv)) || (st = copy_sync(h, &dv, &r_hi, s, op))))
    return st;
  return CNP_OK;
}

static void add_into(const cnp_halo *h, void *dst, const void *src)
{
  size_t n = (size_t)h->g * h->plane / cnp_dtype_size(h->dtype);
  if (h->dtype == CNP_FLOAT32) {
    float *d = dst;
    const float *v = src;
    for (size_t i = 0; i < n; i++) d[i] += v[i];
  } else {
    double *d = dst;
    const double *v = src;
    for (size_t i = 0; i < n; i++) d[i] += v[i];
  }
}

cnp_status cnp_halo_accumulate(cnp_halo *h, cnp_array *a, cnp_stream *s)
{
  static const char op[] = "cnp_halo_accumulate";
  cnp_status st = prologue(h, a, s, true, op);
  if (st != CNP_OK) return st;
  int64_t g = h->g, n0 = h->n0;
  size_t P = h->plane;
  char *r_lo, *r_hi;
  const void *g_lo, *g_hi;
  cnp_array sl0, sl1, sl2, sl3, dv;
  if (h->backend == CNP_BACKEND_HOST) {
    char *base = a->data;
    g_lo = base;
    g_hi = base + (size_t)(g + n0) * P;
    r_lo = h->buf;
    r_hi = h->buf + (size_t)g * P;
  } else {
    if ((st = slot(h, 0, &sl0)) || (st = slot(h, 1, &sl1)) || (st = slot(h, 2, &sl2)) ||
        (st = slot(h, 3, &sl3)))
      return st;
    if ((st = planes_of(h, a, 0, &dv)) || (st = copy_sync(h, &sl0, &dv, s, op))) return st;
    if ((st = planes_of(h, a, g + n0, &dv)) || (st = copy_sync(h, &sl1, &dv, s, op))) return st;
    g_lo = sl0.data;
    g_hi = sl1.data;
    r_lo = sl2.data;
    r_hi = sl3.data;
  }
  /* my low ghosts -> lower (into its last interior layer); I receive the upper's */
  if ((st = sendrecv(h, g_lo, h->lower, TAG_DOWN, r_hi, h->upper, TAG_DOWN, op))) return st;
  /* my high ghosts -> upper (into its first interior layer); I receive the lower's */
  if ((st = sendrecv(h, g_hi, h->upper, TAG_UP, r_lo, h->lower, TAG_UP, op))) return st;
  if (h->backend == CNP_BACKEND_HOST) {
    char *base = a->data;
    if (h->upper != MPI_PROC_NULL) add_into(h, base + (size_t)n0 * P, r_hi);
    if (h->lower != MPI_PROC_NULL) add_into(h, base + (size_t)g * P, r_lo);
    return CNP_OK;
  }
  /* CUDA: the interior layers come to the host (the send slots are free again), take the
  ** sums and go back */
  if (h->upper != MPI_PROC_NULL) {
    if ((st = planes_of(h, a, n0, &dv)) || (st = copy_sync(h, &sl0, &dv, s, op))) return st;
    add_into(h, sl0.data, r_hi);
    if ((st = copy_sync(h, &dv, &sl0, s, op))) return st;
  }
  if (h->lower != MPI_PROC_NULL) {
    if ((st = planes_of(h, a, g, &dv)) || (st = copy_sync(h, &sl1, &dv, s, op))) return st;
    add_into(h, sl1.data, r_lo);
    if ((st = copy_sync(h, &dv, &sl1, s, op))) return st;
  }
  return CNP_OK;
}
