/*
** mpi_fft.c — slab decomposition helpers and the distributed real-to-complex FFT of
** cnp/mpi.h (part of libcnp_mpi): cnp_slab_*, cnp_fft_dist_*.
**
** The grid (N0, N1[, N2]) is seen as (N0, L1, L2) with L2 = 1 in 2D: L1 = N1/2+1, L2 = 1
** (2D) or L1 = N1, L2 = N2/2+1 (3D) are the r2c extents after the local transform over
** the axes past 0. Rank r holds real planes [off_r, off_r + n0_r) and spectral columns
** [moff_r, moff_r + m_r) of axis 1 (both cnp_slab_range splits).
**
** forward (real (n0, N1[, N2]) -> spectral (N0, m, L2)):
**   1. FFTW r2c over the axes past 0 of each local plane (plan_many, howmany n0) into A
**      (n0, L1, L2);
**   2. pack: for each rank q in order, the block A[:, moff_q .. moff_q + m_q, :] goes to
**      S as one contiguous (n0, m_q, L2) run;
**   3. MPI_Alltoallv S -> out: the block from q is (n0_q, m, L2), global planes
**      [off_q, off_q + n0_q); concatenated in rank order they are (N0, m, L2) in C order,
**      so the receive buffer is the output array itself (no unpack);
**   4. FFTW c2c along axis 0 of out, in place (stride m * L2, howmany m * L2).
** inverse (spectral -> real): the same backwards: c2c (backward) along axis 0 into B
**   (a copy of the input, or the input itself under CNP_FFT_DESTROY_INPUT); the planes
**   [off_q, off_q + n0_q) of B are contiguous, so B is the send buffer; MPI_Alltoallv
**   B -> S (blocks (n0, m_q, L2) from each q); unpack S into A (n0, L1, L2); FFTW c2r over
**   the axes past 0 from A into the real slab (c2r overwrites A, which is ours).
** On one rank (n0 = N0, m = L1) A's layout is the spectral block's: the r2c writes the
** output directly, the c2r reads the axis-0 result directly, with no pack and no MPI.
** Buffers (fftw_malloc, made at create): A and S of n0 * L1 * L2 complex, B of N0 * m * L2;
** S doubles as the real planning buffer (it is at least as large). The plans are made on
** the buffers; a call runs them on the caller's arrays with the new-array execute
** functions when the arrays have the buffers' SIMD alignment, else through the buffers
** (one memcpy more, still no allocation). FFTW's planner mutex is libcnp's
** (cnp__fftw_planner_enter). MPI counts are in real elements (MPI_FLOAT / MPI_DOUBLE, two
** per complex): int, so a rank's send or receive total must stay below 2^31 elements.
*/
#include "mpi_internal.h"
#include "grid_check.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#if CNP_HAVE_FFTW
#include <fftw3.h>
#endif

#define CNP__MAGIC_FFTD 0x434e5044u   /* "CNPD" */

/* ---- slab decomposition ------------------------------------------------------------ */

static cnp_status slab_args(int64_t n, int size, const char *op)
{
  if (n < 1) return cnp__fail(CNP_EINVAL, op, "n must be >= 1 (got %lld)", (long long)n);
  if (size < 1) return cnp__fail(CNP_EINVAL, op, "size must be >= 1 (got %d)", size);
  return CNP_OK;
}

static void slab_of(int64_t n, int size, int rank, int64_t *off, int64_t *cnt)
{
  int64_t q = n / size, r = n % size;
  *cnt = q + (rank < r);
  *off = (int64_t)rank * q + (rank < r ? rank : r);
}

/* The owner of plane j in [0, n). */
static int owner_of(int64_t n, int size, int64_t j)
{
  int64_t q = n / size, r = n % size;
  int64_t big = r * (q + 1);           /* planes held by the ranks with one more */
  if (j < big) return (int)(j / (q + 1));
  return (int)(r + (j - big) / q);
}

cnp_status cnp_slab_range(int64_t n, int size, int rank, int64_t *offset, int64_t *count)
{
  static const char op[] = "cnp_slab_range";
  cnp_status st = slab_args(n, size, op);
  if (st != CNP_OK) return st;
  if (rank < 0 || rank >= size)
    return cnp__fail(CNP_EINVAL, op, "rank %d outside [0, %d)", rank, size);
  int64_t off, cnt;
  slab_of(n, size, rank, &off, &cnt);
  if (offset) *offset = off;
  if (count) *count = cnt;
  return CNP_OK;
}

cnp_status cnp_slab_owner(int64_t n, int size, int64_t plane, int *rank)
{
  static const char op[] = "cnp_slab_owner";
  CNP__CHECK_NOTNULL(op, rank);
  cnp_status st = slab_args(n, size, op);
  if (st != CNP_OK) return st;
  if (plane < 0 || plane >= n)
    return cnp__fail(CNP_ERANGE, op, "plane %lld outside [0, %lld)", (long long)plane,
                     (long long)n);
  *rank = owner_of(n, size, plane);
  return CNP_OK;
}

static cnp_status vec_check(const cnp_array *a, const char *what, int want_float,
                            const char *op)
{
  if (a == NULL) return cnp__fail(CNP_EINVAL, op, "%s is NULL", what);
  cnp_status st = cnp__check_array(a, op, what);
  if (st != CNP_OK) return st;
  if (a->backend != CNP_BACKEND_HOST)
    return cnp__fail(CNP_EUNSUPPORTED, op, "%s must be a host array", what);
  int ok = want_float ? a->dtype == CNP_FLOAT32 || a->dtype == CNP_FLOAT64
                      : a->dtype == CNP_INT32 || a->dtype == CNP_INT64;
  if (!ok)
    return cnp__fail(CNP_EDTYPE, op, "%s must be %s (got %s)", what,
                     want_float ? "float32 or float64" : "int32 or int64",
                     cnp_dtype_name(a->dtype));
  if (a->ndim != 1) return cnp__fail(CNP_ESHAPE, op, "%s must be 1-D (N,)", what);
  if (!cnp_array_is_c_contiguous(a))
    return cnp__fail(CNP_ELAYOUT, op, "%s is not contiguous", what);
  return CNP_OK;
}

static double x_at(const cnp_array *x, int64_t i)
{
  return x->dtype == CNP_FLOAT32 ? (double)((const float *)x->data)[i]
                                 : ((const double *)x->data)[i];
}

/* The plane of position v (cell units, periodic with period n), or -1 if not finite. */
static int64_t plane_of(double v, int64_t n)
{
  if (!isfinite(v)) return -1;
  double c = floor(v);
  double m = fmod(c, (double)n);
  if (m < 0) m += (double)n;
  int64_t j = (int64_t)m;
  return j >= n ? n - 1 : j < 0 ? 0 : j;
}

cnp_status cnp_slab_dest(int64_t n, int size, const cnp_array *x, int64_t count,
                         cnp_array *dest)
{
  static const char op[] = "cnp_slab_dest";
  cnp_status st = slab_args(n, size, op);
  if (st != CNP_OK) return st;
  if ((st = vec_check(x, "x", 1, op)) != CNP_OK) return st;
  if ((st = vec_check(dest, "dest", 0, op)) != CNP_OK) return st;
  if (x->shape[0] != dest->shape[0])
    return cnp__fail(CNP_ESHAPE, op, "x has %lld rows, dest %lld", (long long)x->shape[0],
                     (long long)dest->shape[0]);
  if (count < 0 || count > x->shape[0])
    return cnp__fail(CNP_EINVAL, op, "count %lld outside [0, %lld]", (long long)count,
                     (long long)x->shape[0]);
  for (int64_t i = 0; i < count; i++)      /* first pass: validate, so an error writes none */
    if (!isfinite(x_at(x, i)))
      return cnp__fail(CNP_ERANGE, op, "x[%lld] is not finite", (long long)i);
  for (int64_t i = 0; i < count; i++) {
    int r = owner_of(n, size, plane_of(x_at(x, i), n));
    if (dest->dtype == CNP_INT32) ((int32_t *)dest->data)[i] = r;
    else ((int64_t *)dest->data)[i] = r;
  }
  return CNP_OK;
}

/* ---- distributed FFT: plan ----------------------------------------------------------- */

struct cnp_fft_dist_plan {
  uint32_t  magic;
  cnp_comm *comm;
  int       ndim;
  cnp_dtype dtype;                     /* real dtype */
  unsigned  flags;
  int64_t   dims[3];                   /* N0, N1, N2 (N2 = 1 in 2D) */
  int64_t   L1, L2;                    /* r2c extents of axes 1, 2 (L2 = 1 in 2D) */
  int64_t   n0, off;                   /* local real planes */
  int64_t   m, moff;                   /* local spectral columns of axis 1 */
  int64_t   real_shape[3], cplx_shape[3];
  size_t    csz;                       /* bytes of one complex element */
  size_t    a_elems, b_elems;          /* complex elements of A (= S) and of B */
  void     *A, *S, *B;                 /* staging buffers (fftw_malloc) */
  int      *scnt, *sdsp, *rcnt, *rdsp; /* forward Alltoallv (real elements), by rank */
  int64_t  *qm, *qmoff;                /* m_q, moff_q of every rank (pack/unpack) */
  void     *r2c, *c2r, *fwd0, *bwd0;   /* fftw_plan or fftwf_plan; NULL when empty */
};

static cnp_status plan_check(const cnp_fft_dist_plan *p, const char *op)
{
  cnp_status st = cnp__check_handle(p, CNP__MAGIC_FFTD, "distributed FFT plan", op);
  if (st != CNP_OK) return st;
  return cnp__comm_check(p->comm, op);
}

#if CNP_HAVE_FFTW

static void *buf_alloc(const cnp_fft_dist_plan *p, size_t elems)
{
  size_t bytes = (elems ? elems : 1) * p->csz;
  return p->dtype == CNP_FLOAT32 ? fftwf_malloc(bytes) : fftw_malloc(bytes);
}

static void buf_free(const cnp_fft_dist_plan *p, void *b)
{
  if (b == NULL) return;
  if (p->dtype == CNP_FLOAT32) fftwf_free(b);
  else fftw_free(b);
}

static void plans_free(cnp_fft_dist_plan *p)
{
  void **pl[4] = {&p->r2c, &p->c2r, &p->fwd0, &p->bwd0};
  for (int i = 0; i < 4; i++) {
    if (*pl[i] == NULL) continue;
    if (p->dtype == CNP_FLOAT32) fftwf_destroy_plan(*pl[i]);
    else fftw_destroy_plan(*pl[i]);
    *pl[i] = NULL;
  }
}

/* FFTW plans on the buffers. Called with the planner mutex held. A part with no points on
** this rank (n0 = 0 or m = 0) gets no plan. */
static int make_plans(cnp_fft_dist_plan *p)
{
  unsigned fl = (p->flags & CNP_FFT_MEASURE) ? FFTW_MEASURE : FFTW_ESTIMATE;
  int rk = p->ndim - 1;
  int n[2] = {(int)p->dims[1], (int)p->dims[2]};
  int nreal = (int)(p->dims[1] * p->dims[2]);    /* points of one plane */
  int ncplx = (int)(p->L1 * p->L2);
  int n0 = (int)p->n0, N0 = (int)p->dims[0];
  int col = (int)(p->m * p->L2);                 /* columns of the spectral block */
  if (p->dtype == CNP_FLOAT32) {
    if (n0 > 0) {
      p->r2c = fftwf_plan_many_dft_r2c(rk, n, n0, p->S, NULL, 1, nreal, p->A, NULL, 1,
                                       ncplx, fl);
      p->c2r = fftwf_plan_many_dft_c2r(rk, n, n0, p->A, NULL, 1, ncplx, p->S, NULL, 1,
                                       nreal, fl);
      if (!p->r2c || !p->c2r) return 0;
    }
    if (col > 0) {
      p->fwd0 = fftwf_plan_many_dft(1, &N0, col, p->B, NULL, col, 1, p->B, NULL, col, 1,
                                    FFTW_FORWARD, fl);
      p->bwd0 = fftwf_plan_many_dft(1, &N0, col, p->B, NULL, col, 1, p->B, NULL, col, 1,
                                    FFTW_BACKWARD, fl);
      if (!p->fwd0 || !p->bwd0) return 0;
    }
  } else {
    if (n0 > 0) {
      p->r2c = fftw_plan_many_dft_r2c(rk, n, n0, p->S, NULL, 1, nreal, p->A, NULL, 1,
                                      ncplx, fl);
      p->c2r = fftw_plan_many_dft_c2r(rk, n, n0, p->A, NULL, 1, ncplx, p->S, NULL, 1,
                                      nreal, fl);
      if (!p->r2c || !p->c2r) return 0;
    }
    if (col > 0) {
      p->fwd0 = fftw_plan_many_dft(1, &N0, col, p->B, NULL, col, 1, p->B, NULL, col, 1,
                                   FFTW_FORWARD, fl);
      p->bwd0 = fftw_plan_many_dft(1, &N0, col, p->B, NULL, col, 1, p->B, NULL, col, 1,
                                   FFTW_BACKWARD, fl);
      if (!p->fwd0 || !p->bwd0) return 0;
    }
  }
  return 1;
}

static int same_alignment(const cnp_fft_dist_plan *p, const void *a, const void *ref)
{
  if (p->dtype == CNP_FLOAT32)
    return fftwf_alignment_of((float *)(uintptr_t)a) == fftwf_alignment_of((float *)ref);
  return fftw_alignment_of((double *)(uintptr_t)a) == fftw_alignment_of((double *)ref);
}

static cnp_status fftd_unmake(void *h);

/* The plan's tables, buffers and FFTW plans; on failure what was made is freed again
** (cnp__handle_open does not call unmake after a failed make). */
static cnp_status fftd_build(cnp_fft_dist_plan *p)
{
  static const char op[] = "cnp_fft_dist_plan_create";
  int P = p->comm->size;
  p->scnt = cnp__calloc((size_t)P * 4, sizeof(int));
  p->qm = cnp__calloc((size_t)P * 2, sizeof(int64_t));
  if (p->scnt == NULL || p->qm == NULL)
    return cnp__fail(CNP_ENOMEM, op, "no memory for the transpose tables");
  p->sdsp = p->scnt + P;
  p->rcnt = p->scnt + 2 * P;
  p->rdsp = p->scnt + 3 * P;
  p->qmoff = p->qm + P;
  int64_t plane_c = p->L2 * 2;         /* real elements of one (axis-1 index) row */
  int64_t so = 0, ro = 0;             /* running send, receive displacements */
  for (int q = 0; q < P; q++) {
    int64_t qoff, qn0;
    slab_of(p->dims[0], P, q, &qoff, &qn0);
    slab_of(p->L1, P, q, &p->qmoff[q], &p->qm[q]);
    int64_t sc = p->n0 * p->qm[q] * plane_c;     /* to q: (n0, m_q, L2) */
    int64_t rc = qn0 * p->m * plane_c;           /* from q: (n0_q, m, L2) */
    p->scnt[q] = (int)sc;
    p->sdsp[q] = (int)so;
    p->rcnt[q] = (int)rc;
    p->rdsp[q] = (int)ro;
    so += sc;
    ro += rc;
  }
  if (cnp__alloc_should_fail())        /* fftw_malloc is not libcnp's: same injection */
    return cnp__fail(CNP_ENOMEM, op, "no memory for the FFT buffers");
  p->A = buf_alloc(p, p->a_elems);
  p->S = buf_alloc(p, p->a_elems);
  p->B = buf_alloc(p, p->b_elems);
  if (p->A == NULL || p->S == NULL || p->B == NULL)
    return cnp__fail(CNP_ENOMEM, op, "cannot allocate 2 x %zu + %zu bytes of FFT buffers",
                     p->a_elems * p->csz, p->b_elems * p->csz);
  int64_t points = p->n0 * p->dims[1] * p->dims[2];
  cnp_status st = cnp__fftw_planner_enter(points, op);
  if (st != CNP_OK) return st;
  int ok = make_plans(p);
  cnp__fftw_planner_leave();
  if (!ok) return cnp__fail(CNP_EBACKEND, op, "FFTW could not make a plan");
  return CNP_OK;
}

static cnp_status fftd_make(void *h)
{
  cnp_status st = fftd_build(h);
  if (st != CNP_OK) fftd_unmake(h);
  return st;
}

static cnp_status fftd_unmake(void *h)
{
  cnp_fft_dist_plan *p = h;
  if (p->r2c || p->c2r || p->fwd0 || p->bwd0) {
    cnp_status st = cnp__fftw_planner_enter(1, "cnp_fft_dist_plan_destroy");
    if (st != CNP_OK) return st;
    plans_free(p);
    cnp__fftw_planner_leave();
  }
  buf_free(p, p->A);
  buf_free(p, p->S);
  buf_free(p, p->B);
  p->A = p->S = p->B = NULL;
  cnp__free(p->scnt);
  cnp__free(p->qm);
  p->scnt = NULL;
  p->qm = NULL;
  return CNP_OK;
}

#else /* !CNP_HAVE_FFTW */

static cnp_status fftd_make(void *h)
{
  (void)h;
  return cnp__fail(CNP_EUNSUPPORTED, "cnp_fft_dist_plan_create", "built without FFTW");
}

static cnp_status fftd_unmake(void *h)
{
  (void)h;
  return CNP_OK;
}

#endif

static const cnp__handle_kind fftd_kind = {fftd_make, fftd_unmake};

/* Every rank's (ndim, dims, dtype, flags) must be rank 0's; agreed with one MPI_Allreduce
** of (min, -max) pairs so every rank returns the same status. */
static cnp_status agree_args(cnp_comm *c, int ndim, const int64_t *dims, cnp_dtype dtype,
                             unsigned flags, cnp_status local, const char *op)
{
  int64_t v[6] = {(int64_t)local, ndim, dims[0], dims[1], ndim == 3 ? dims[2] : 1,
                  (int64_t)dtype * 16 + (int64_t)flags};
  int64_t in[12], res[12];
  for (int i = 0; i < 6; i++) {
    in[i] = v[i];
    in[6 + i] = -v[i];
  }
  int rc = MPI_Allreduce(in, res, 12, MPI_INT64_T, MPI_MIN, c->comm);
  if (rc != MPI_SUCCESS) return cnp__mpi_fail(rc, op, "MPI_Allreduce");
  if (local != CNP_OK) return local;
  if (res[0] != CNP_OK)
    return cnp__fail((cnp_status)res[0], op, "another rank failed the argument checks (%s)",
                     cnp_status_string((cnp_status)res[0]));
  for (int i = 1; i < 6; i++)
    if (res[i] != -res[6 + i])
      return cnp__fail(CNP_EINVAL, op, "the ranks passed different %s",
                       i == 1 ? "ndim" : i <= 4 ? "global_dims" : "dtype or flags");
  return CNP_OK;
}

static cnp_status create_args(int ndim, const int64_t *dims, cnp_dtype dtype, unsigned flags,
                              const char *op)
{
  if (ndim != 2 && ndim != 3)
    return cnp__fail(CNP_EINVAL, op, "ndim must be 2 or 3 (got %d)", ndim);
  CNP__CHECK_NOTNULL(op, dims);
  cnp_status st = cnp__g_real_dtype(dtype, op);
  if (st != CNP_OK) return st;
  if (flags & ~(CNP_FFT_MEASURE | CNP_FFT_DESTROY_INPUT))
    return cnp__fail(CNP_EINVAL, op, "unknown flags 0x%x", flags);
  int64_t n = 1;
  for (int d = 0; d < ndim; d++) {
    if (dims[d] < 1)
      return cnp__fail(CNP_EINVAL, op, "global_dims[%d] = %lld must be >= 1", d,
                       (long long)dims[d]);
    if (dims[d] > INT_MAX)
      return cnp__fail(CNP_EOVERFLOW, op, "global_dims[%d] = %lld too large", d,
                       (long long)dims[d]);
    n *= dims[d];
    if (n > (INT64_C(1) << 40))
      return cnp__fail(CNP_EOVERFLOW, op, "grid of more than 2^40 points");
  }
  return CNP_OK;
}

cnp_status cnp_fft_dist_plan_create(cnp_fft_dist_plan **out, cnp_comm *comm, int ndim,
                                    const int64_t *global_dims, cnp_dtype dtype,
                                    unsigned flags)
{
  static const char op[] = "cnp_fft_dist_plan_create";
  CNP__CHECK_NOTNULL(op, out);
  *out = NULL;
  cnp_status st = cnp__comm_check(comm, op);
  if (st != CNP_OK) return st;
  static const int64_t none[3] = {1, 1, 1};
  st = create_args(ndim, global_dims, dtype, flags, op);
  st = agree_args(comm, ndim, st == CNP_OK ? global_dims : none, dtype, flags, st, op);
  if (st != CNP_OK) return st;
  int64_t N0 = global_dims[0], N1 = global_dims[1], N2 = ndim == 3 ? global_dims[2] : 1;
  int P = comm->size, r = comm->rank;
  cnp_fft_dist_plan tmp = {0};
  tmp.L1 = ndim == 2 ? N1 / 2 + 1 : N1;
  tmp.L2 = ndim == 2 ? 1 : N2 / 2 + 1;
  slab_of(N0, P, r, &tmp.off, &tmp.n0);
  slab_of(tmp.L1, P, r, &tmp.moff, &tmp.m);
  /* the largest send or receive total (and the displacements) must fit an int */
  int64_t n0max = N0 / P + (N0 % P != 0), mmax = tmp.L1 / P + (tmp.L1 % P != 0);
  int64_t worst = 2 * tmp.L2 * (n0max * tmp.L1 > N0 * mmax ? n0max * tmp.L1 : N0 * mmax);
  if (worst > INT_MAX || N1 * N2 > INT_MAX)
    st = cnp__fail(CNP_EOVERFLOW, op, "a rank's part exceeds 2^31 - 1 elements (MPI counts "
                   "are int): use more ranks");
  /* every rank computes the same worst case: no agreement needed */
  if (st != CNP_OK) return st;
  cnp_fft_dist_plan *p = cnp__calloc(1, sizeof *p);
  if (p == NULL) return cnp__fail(CNP_ENOMEM, op, "no memory for the plan");
  *p = tmp;
  p->magic = CNP__MAGIC_FFTD;
  p->comm = comm;
  p->ndim = ndim;
  p->dtype = dtype;
  p->flags = flags;
  p->dims[0] = N0;
  p->dims[1] = N1;
  p->dims[2] = N2;
  p->csz = 2 * cnp_dtype_size(dtype);
  p->a_elems = (size_t)(p->n0 * p->L1 * p->L2);
  p->b_elems = (size_t)(N0 * p->m * p->L2);
  p->real_shape[0] = p->n0;
  p->real_shape[1] = N1;
  p->real_shape[2] = N2;
  p->cplx_shape[0] = N0;
  p->cplx_shape[1] = p->m;
  p->cplx_shape[2] = p->L2;
  st = cnp__handle_open(p, &p->magic, &fftd_kind, (void **)out, op);
  /* a failure on one rank (memory, FFTW) fails the create everywhere */
  cnp_status all = agree_args(comm, ndim, global_dims, dtype, flags, st, op);
  if (all != CNP_OK && st == CNP_OK) {
    cnp_fft_dist_plan_destroy(*out);
    *out = NULL;
  }
  return all;
}

cnp_status cnp_fft_dist_plan_destroy(cnp_fft_dist_plan *p)
{
  if (p == NULL) return CNP_OK;
  cnp_status st = cnp__check_handle(p, CNP__MAGIC_FFTD, "distributed FFT plan",
                                    "cnp_fft_dist_plan_destroy");
  if (st != CNP_OK) return st;
  return cnp__handle_close(p, &p->magic, &fftd_kind);
}

cnp_status cnp_fft_dist_local(const cnp_fft_dist_plan *p, cnp_fft_dist_layout *out)
{
  static const char op[] = "cnp_fft_dist_local";
  cnp_status st = plan_check(p, op);
  if (st != CNP_OK) return st;
  CNP__CHECK_NOTNULL(op, out);
  memset(out, 0, sizeof *out);
  out->ndim = p->ndim;
  out->rank = p->comm->rank;
  out->size = p->comm->size;
  for (int d = 0; d < p->ndim; d++) {
    out->global_real[d] = p->dims[d];
    out->real_shape[d] = p->real_shape[d];
    out->complex_shape[d] = p->cplx_shape[d];
  }
  out->global_complex[0] = p->dims[0];
  out->global_complex[1] = p->L1;
  if (p->ndim == 3) out->global_complex[2] = p->L2;
  out->real_offset = p->off;
  out->complex_offset = p->moff;
  out->complex_axis = 1;
  return CNP_OK;
}

double cnp_fft_dist_norm(const cnp_fft_dist_plan *p)
{
  if (p == NULL || !cnp__handle_live(p) || p->magic != CNP__MAGIC_FFTD) return 0.0;
  return 1.0 / ((double)p->dims[0] * (double)p->dims[1] * (double)p->dims[2]);
}

cnp_status cnp_fft_dist_wavenumbers(const cnp_fft_dist_plan *p, int axis, double length,
                                    cnp_array *k)
{
  static const char op[] = "cnp_fft_dist_wavenumbers";
  cnp_status st = plan_check(p, op);
  if (st != CNP_OK) return st;
  if (axis < 0 || axis >= p->ndim)
    return cnp__fail(CNP_EINVAL, op, "axis %d outside [0, %d)", axis, p->ndim);
  if (!(length > 0.0) || !isfinite(length))
    return cnp__fail(CNP_EINVAL, op, "length must be finite and > 0 (got %g)", length);
  CNP__CHECK_NOTNULL(op, k);
  if (k->backend == CNP_BACKEND_CUDA)
    return cnp__fail(CNP_EUNSUPPORTED, op, "the distributed FFT is host-only (k is on CUDA)");
  cnp_dtype t = k->dtype == CNP_FLOAT32 ? CNP_FLOAT32 : CNP_FLOAT64;
  int64_t ext = p->cplx_shape[axis];
  st = cnp__g_array(k, CNP_BACKEND_HOST, 0, t, 1, &ext, op, "k");
  if (st != CNP_OK) return st;
  int half = axis == p->ndim - 1;
  int64_t first = axis == 1 ? p->moff : 0;
  for (int64_t j = 0; j < ext; j++) {
    double v = cnp_fft_wavenumber(p->dims[axis], length, first + j, half);
    if (t == CNP_FLOAT32) ((float *)k->data)[j] = (float)v;
    else ((double *)k->data)[j] = v;
  }
  return CNP_OK;
}

/* ---- distributed FFT: transforms ----------------------------------------------------- */

/* Local checks of one call; returns the status (the message set on failure). */
static cnp_status call_args(cnp_fft_dist_plan *p, const cnp_array *in, cnp_array *out,
                            int forward, cnp_stream *s, const char *op)
{
  const char *in_name = forward ? "real_in" : "complex_in";
  const char *out_name = forward ? "complex_out" : "real_out";
  if (in == NULL) return cnp__fail(CNP_EINVAL, op, "%s is NULL", in_name);
  if (out == NULL) return cnp__fail(CNP_EINVAL, op, "%s is NULL", out_name);
  if (in->backend == CNP_BACKEND_CUDA || out->backend == CNP_BACKEND_CUDA ||
      (s != NULL && cnp__check_stream(s, op) == CNP_OK && s->backend == CNP_BACKEND_CUDA))
    return cnp__fail(CNP_EUNSUPPORTED, op, "the distributed FFT is host-only (no CUDA "
                     "arrays or streams)");
  cnp_dtype rt = p->dtype, ct = p->dtype == CNP_FLOAT32 ? CNP_COMPLEX64 : CNP_COMPLEX128;
  cnp_status st = cnp__g_array(in, CNP_BACKEND_HOST, 0, forward ? rt : ct, p->ndim,
                               forward ? p->real_shape : p->cplx_shape, op, in_name);
  if (st != CNP_OK) return st;
  st = cnp__g_array(out, CNP_BACKEND_HOST, 0, forward ? ct : rt, p->ndim,
                    forward ? p->cplx_shape : p->real_shape, op, out_name);
  if (st != CNP_OK) return st;
  if (cnp_array_nbytes(in) > 0 && cnp_array_nbytes(out) > 0 && cnp__g_overlap(in, out))
    return cnp__fail(CNP_EALIAS, op, "%s overlaps %s (transforms are out of place)",
                     out_name, in_name);
  return cnp__g_stream(s, CNP_BACKEND_HOST, 0, op);
}

/* Every rank returns an error if any rank failed (its own message, or one naming the
** failing rank). */
static cnp_status agree_call(cnp_fft_dist_plan *p, cnp_status local, const char *op)
{
  return cnp__comm_agree(p->comm, local, op, "its argument checks", "transformed");
}

#if CNP_HAVE_FFTW

static cnp_status alltoallv(cnp_fft_dist_plan *p, const void *sbuf, const int *sc,
                            const int *sd, void *rbuf, const int *rc_, const int *rd,
                            const char *op)
{
  MPI_Datatype t = p->dtype == CNP_FLOAT32 ? MPI_FLOAT : MPI_DOUBLE;
  int rc = MPI_Alltoallv(sbuf, sc, sd, t, rbuf, rc_, rd, t, p->comm->comm);
  return rc == MPI_SUCCESS ? CNP_OK : cnp__mpi_fail(rc, op, "MPI_Alltoallv");
}

/* A (n0, L1, L2) <-> S (blocks (n0, m_q, L2) by rank q). pack: A -> S; else S -> A. */
static void transpose_blocks(cnp_fft_dist_plan *p, int pack)
{
  size_t row = (size_t)p->L2 * p->csz;   /* bytes of one axis-1 index */
  char *a = p->A, *s = p->S;
  int P = p->comm->size;
  for (int q = 0; q < P; q++) {
    size_t run = (size_t)p->qm[q] * row;
    if (run == 0) continue;
    char *blk = s + (size_t)p->sdsp[q] * (p->csz / 2);
    for (int64_t i = 0; i < p->n0; i++) {
      char *ap = a + ((size_t)i * (size_t)p->L1 + (size_t)p->qmoff[q]) * row;
      char *sp = blk + (size_t)i * run;
      if (pack) memcpy(sp, ap, run);
      else memcpy(ap, sp, run);
    }
  }
}

static void exec_r2c(cnp_fft_dist_plan *p, const void *in, void *out)
{
  if (p->dtype == CNP_FLOAT32)
    fftwf_execute_dft_r2c(p->r2c, (float *)(uintptr_t)in, out);
  else fftw_execute_dft_r2c(p->r2c, (double *)(uintptr_t)in, out);
}

static void exec_c2r(cnp_fft_dist_plan *p, void *in, void *out)
{
  if (p->dtype == CNP_FLOAT32) fftwf_execute_dft_c2r(p->c2r, in, out);
  else fftw_execute_dft_c2r(p->c2r, in, out);
}

static void exec_c2c(cnp_fft_dist_plan *p, void *plan, void *io)
{
  if (p->dtype == CNP_FLOAT32) fftwf_execute_dft(plan, io, io);
  else fftw_execute_dft(plan, io, io);
}

static cnp_status do_forward(cnp_fft_dist_plan *p, const cnp_array *in, cnp_array *out,
                             const char *op)
{
  size_t rbytes = (size_t)(p->n0 * p->dims[1] * p->dims[2]) * (p->csz / 2);
  int one = p->comm->size == 1;          /* (n0, L1, L2) is the spectral block itself */
  int direct = p->m > 0 && same_alignment(p, out->data, p->B);
  void *dst = direct || p->m == 0 ? out->data : p->B;
  if (p->n0 > 0) {
    const void *src = in->data;
    if (!same_alignment(p, src, p->S)) {
      memcpy(p->S, src, rbytes);
      src = p->S;
    }
    exec_r2c(p, src, one ? dst : p->A);
    if (!one) transpose_blocks(p, 1);
  }
  if (!one) {
    cnp_status st = alltoallv(p, p->S, p->scnt, p->sdsp, dst, p->rcnt, p->rdsp, op);
    if (st != CNP_OK) return st;
  }
  if (p->m > 0) {
    exec_c2c(p, p->fwd0, dst);
    if (!direct) memcpy(out->data, p->B, p->b_elems * p->csz);
  }
  return CNP_OK;
}

static cnp_status do_inverse(cnp_fft_dist_plan *p, const cnp_array *in, cnp_array *out,
                             const char *op)
{
  void *src = p->B;
  if (p->m > 0) {
    if ((p->flags & CNP_FFT_DESTROY_INPUT) && same_alignment(p, in->data, p->B)) src = in->data;
    else memcpy(p->B, in->data, p->b_elems * p->csz);
    exec_c2c(p, p->bwd0, src);
  }
  /* one rank: src (B, or the input under DESTROY_INPUT) is already (n0, L1, L2) and has
  ** A's alignment; else the reverse transpose (the forward counts swapped) and unpack */
  void *spec = src;
  if (p->comm->size > 1) {
    cnp_status st = alltoallv(p, src, p->rcnt, p->rdsp, p->S, p->scnt, p->sdsp, op);
    if (st != CNP_OK) return st;
    if (p->n0 > 0) transpose_blocks(p, 0);
    spec = p->A;
  }
  if (p->n0 > 0) {
    size_t rbytes = (size_t)(p->n0 * p->dims[1] * p->dims[2]) * (p->csz / 2);
    if (same_alignment(p, out->data, p->S)) {
      exec_c2r(p, spec, out->data);
    } else {
      exec_c2r(p, spec, p->S);
      memcpy(out->data, p->S, rbytes);
    }
  }
  return CNP_OK;
}

#else

static cnp_status do_forward(cnp_fft_dist_plan *p, const cnp_array *in, cnp_array *out,
                             const char *op)
{
  (void)p, (void)in, (void)out;
  return cnp__fail(CNP_EUNSUPPORTED, op, "built without FFTW");
}

static cnp_status do_inverse(cnp_fft_dist_plan *p, const cnp_array *in, cnp_array *out,
                             const char *op)
{
  (void)p, (void)in, (void)out;
  return cnp__fail(CNP_EUNSUPPORTED, op, "built without FFTW");
}

#endif

cnp_status cnp_fft_dist_forward(cnp_fft_dist_plan *p, const cnp_array *real_in,
                                cnp_array *complex_out, cnp_stream *s)
{
  static const char op[] = "cnp_fft_dist_forward";
  cnp_status st = plan_check(p, op);
  if (st != CNP_OK) return st;
  st = agree_call(p, call_args(p, real_in, complex_out, 1, s, op), op);
  if (st != CNP_OK) return st;
  return do_forward(p, real_in, complex_out, op);
}

cnp_status cnp_fft_dist_inverse(cnp_fft_dist_plan *p, const cnp_array *complex_in,
                                cnp_array *real_out, cnp_stream *s)
{
  static const char op[] = "cnp_fft_dist_inverse";
  cnp_status st = plan_check(p, op);
  if (st != CNP_OK) return st;
  st = agree_call(p, call_args(p, complex_in, real_out, 0, s, op), op);
  if (st != CNP_OK) return st;
  return do_inverse(p, complex_in, real_out, op);
}
