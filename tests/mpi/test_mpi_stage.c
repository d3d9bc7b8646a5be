/*
** test_mpi_stage.c — communicators and staging contexts, run under mpiexec -n 2 and -n 4.
** Host arrays only: this is what runs everywhere (device paths need a GPU; see docs/mpi.md).
*/
#include "mpi_test.h"

#include <stdlib.h>

static cnp_comm *comm;
static int right, left;                /* ring neighbours */

/* Value element i of rank r's array holds in the tests below. */
static double val(int r, int64_t i) { return r * 1000.0 + (double)i + 0.25; }

static void test_comm(void)
{
  ASSERT_EQ_I(t_rank, cnp_comm_rank(comm));
  ASSERT_EQ_I(t_size, cnp_comm_size(comm));
  int cmp = 0;
  MPI_Comm_compare(cnp_comm_mpi(comm), MPI_COMM_WORLD, &cmp);
  ASSERT(cmp == MPI_CONGRUENT);        /* a duplicate, not the caller's communicator */
  int source = -7;
  OK(cnp_comm_partner_source(comm, right, &source));
  ASSERT_EQ_I(left, source);
  /* Pairwise partner (rank ^ 1 when it exists). */
  int partner = (t_rank ^ 1) < t_size ? (t_rank ^ 1) : CNP_MPI_PROC_NULL;
  OK(cnp_comm_partner_source(comm, partner, &source));
  ASSERT_EQ_I(partner, source);
  /* Everyone sending to rank 0 is not a permutation: same error on every rank. */
  ASSERT_ST(CNP_EINVAL, cnp_comm_partner_source(comm, 0, &source));
  ASSERT_DETAIL("same rank");
  ASSERT_ST(CNP_EINVAL, cnp_comm_partner_source(comm, t_size, &source));
  char v[256];
  OK(cnp_mpi_library_version(v, sizeof v));
  ASSERT(strlen(v) > 0 && strchr(v, '\n') == NULL);
  ASSERT_ST(CNP_EOVERFLOW, cnp_mpi_library_version(v, 4));
  ASSERT_EQ_I(3, (long long)strlen(v));
  ASSERT_ST(CNP_EINVAL, cnp_comm_create(NULL, 0));
  /* Bad handles are statuses, not MPI_ERRORS_ARE_FATAL aborts, and the caller's error
  ** handlers are left as they were. */
  cnp_comm *bad = (cnp_comm *)&bad;
  ASSERT_ST(CNP_EINVAL, cnp_comm_create(&bad, 12345));
  ASSERT(bad == NULL);
  ASSERT_DETAIL("not a valid communicator handle");
  ASSERT_ST(CNP_EINVAL, cnp_comm_create_mpi(&bad, MPI_COMM_NULL));
  MPI_Errhandler eh;
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
  ASSERT(eh == MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&eh);
  MPI_Comm_get_errhandler(MPI_COMM_SELF, &eh);
  ASSERT(eh == MPI_ERRORS_ARE_FATAL);
  MPI_Errhandler_free(&eh);
  ASSERT_EQ_I(-1, cnp_comm_rank(NULL));
}

/* Rank-pairing check of generated setup (cnp_comm_check_pairing): formulas of the rank. */
static int64_t f_right(void *ctx, int r) { (void)ctx; return (r + 1) % t_size; }
static int64_t f_left(void *ctx, int r) { (void)ctx; return (r + t_size - 1) % t_size; }
static int64_t f_self(void *ctx, int r) { (void)ctx; return r; }
static int64_t f_zero(void *ctx, int r) { (void)ctx; (void)r; return 0; }
static int64_t f_size(void *ctx, int r) { (void)ctx; (void)r; return t_size; }
static int64_t f_swap(void *ctx, int r) { (void)ctx; return (r ^ 1) < t_size ? r ^ 1 : r; }
/* dest = rank + *(int *)ctx: ctx reaches the formula */
static int64_t f_shift(void *ctx, int r) { return (r + *(int *)ctx) % t_size; }

static void test_pairing(void)
{
  cnp_pairing pr;
  OK(cnp_comm_check_pairing(comm, f_right, f_left, NULL, &pr));
  ASSERT_EQ_I(left, pr.source);
  ASSERT_EQ_I(right, pr.dest);
  ASSERT_EQ_I(-1, pr.bad_rank);
  OK(cnp_comm_check_pairing(comm, f_right, NULL, NULL, &pr));    /* no `from`: the sender */
  ASSERT_EQ_I(left, pr.source);
  OK(cnp_comm_check_pairing(comm, f_swap, NULL, NULL, &pr));
  ASSERT_EQ_I(f_swap(NULL, t_rank), pr.source);
  int k = t_size - 1;
  OK(cnp_comm_check_pairing(comm, f_shift, NULL, &k, &pr));
  ASSERT_EQ_I(right, pr.source);
  /* `from` that does not match: the same first bad rank on every rank */
  ASSERT_ST(CNP_EINVAL, cnp_comm_check_pairing(comm, f_right, f_self, NULL, &pr));
  ASSERT_EQ_I(0, pr.bad_rank);
  ASSERT_EQ_I(1 % t_size, pr.bad_dest);
  ASSERT_EQ_I(1 % t_size, pr.bad_source);
  ASSERT_DETAIL("rank 0 sends to rank 1, which receives from rank 1");
  /* no `from`: everyone sends to rank 0 */
  ASSERT_ST(CNP_EINVAL, cnp_comm_check_pairing(comm, f_zero, NULL, NULL, &pr));
  ASSERT_EQ_I(0, pr.bad_rank);
  ASSERT_EQ_I(t_size, pr.bad_source);
  ASSERT_DETAIL("not exactly one rank sends to each rank: rank 0 has");
  ASSERT_ST(CNP_EINVAL, cnp_comm_check_pairing(comm, f_size, NULL, NULL, &pr));
  ASSERT_EQ_I(0, pr.bad_rank);
  ASSERT_EQ_I(t_size, pr.bad_dest);
  ASSERT_DETAIL("outside [0, ");
  /* with `from`, a destination outside the communicator: this rank's partners, ERANGE */
  ASSERT_ST(CNP_ERANGE, cnp_comm_check_pairing(comm, f_size, f_zero, NULL, &pr));
  ASSERT_EQ_I(t_rank, pr.bad_rank);
  ASSERT_EQ_I(t_size, pr.bad_dest);
  ASSERT_DETAIL("a partner rank is outside");
  ASSERT_ST(CNP_EINVAL, cnp_comm_check_pairing(comm, NULL, NULL, NULL, &pr));
  ASSERT_ST(CNP_EINVAL, cnp_comm_check_pairing(comm, f_right, NULL, NULL, NULL));
  ASSERT_ST(CNP_EINVAL, cnp_comm_check_pairing(NULL, f_right, NULL, NULL, &pr));
}

/* Contiguous host arrays pass through: MPI uses the array's own storage, nothing copied. */
static void test_contiguous_roundtrip(void)
{
  int64_t shape[2] = {7, 9};
  cnp_array a, b;
  OK(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shape, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&b, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shape, CNP_ORDER_C, 0));
  double *pa = a.data, *pb = b.data;
  for (int64_t i = 0; i < 63; i++) pa[i] = val(t_rank, i);
  cnp_mpi_stage *ss, *rs;
  OK(cnp_mpi_stage_create(&ss, comm, CNP_FLOAT64, 2, shape, CNP_CUDA_AWARE_AUTO));
  OK(cnp_mpi_stage_create(&rs, comm, CNP_FLOAT64, 2, shape, CNP_CUDA_AWARE_OFF));
  cnp_transfer_scope sc;
  cnp_transfer_counts n;
  OK(cnp_transfers_begin(&sc));
  for (int rep = 0; rep < 3; rep++) {
    cnp_mpi_ctx *sctx, *rctx;
    OK(cnp_mpi_send_begin(ss, &a, NULL, NULL, &sctx));
    OK(cnp_mpi_recv_begin(rs, &b, NULL, NULL, &rctx));
    void *p = NULL;
    size_t bytes = 0;
    OK(cnp_mpi_ctx_buffer(sctx, &p, &bytes));
    ASSERT(p == a.data);
    ASSERT_EQ_I(63 * 8, bytes);
    OK(cnp_mpi_ctx_buffer(rctx, &p, NULL));
    ASSERT(p == b.data);
    OK(cnp_mpi_sendrecv(sctx, right, 5, rctx, left, 5));
    OK(cnp_mpi_end(sctx));
    OK(cnp_mpi_end(rctx));
    for (int64_t i = 0; i < 63; i++) ASSERT(pb[i] == val(left, i));
    memset(pb, 0, 63 * 8);
  }
  OK(cnp_transfers_end(&sc, &n));
  ASSERT_EQ_I(0, n.h2d_bytes + n.d2h_bytes + n.d2d_bytes);
  OK(cnp_mpi_stage_destroy(ss));
  OK(cnp_mpi_stage_destroy(rs));
  OK(cnp_array_free(&a));
  OK(cnp_array_free(&b));
}

/* Strided views go through the packing buffer; receive scatters back into the view and
** leaves the elements between the view's elements alone. */
static void test_strided_roundtrip(void)
{
  enum { R = 4, C = 6 };
  double sendbuf[R][2 * C], recvbuf[R][2 * C];
  for (int i = 0; i < R; i++)
    for (int j = 0; j < 2 * C; j++) {
      sendbuf[i][j] = (j % 2) ? -1.0 : val(t_rank, i * C + j / 2);
      recvbuf[i][j] = -2.0;
    }
  int64_t shape[2] = {R, C}, strides[2] = {2 * C * 8, 16};
  cnp_array a, b;
  OK(cnp_array_wrap(&a, sendbuf, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shape, strides));
  OK(cnp_array_wrap(&b, recvbuf, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shape, strides));
  ASSERT(!cnp_array_is_c_contiguous(&a));
  cnp_mpi_stage *ss, *rs;
  OK(cnp_mpi_stage_create(&ss, comm, CNP_FLOAT64, 2, shape, CNP_CUDA_AWARE_OFF));
  OK(cnp_mpi_stage_create(&rs, comm, CNP_FLOAT64, 2, shape, CNP_CUDA_AWARE_OFF));
  OK(cnp_mpi_stage_reserve(ss, &a));
  cnp_transfer_scope sc;
  cnp_transfer_counts n;
  for (int rep = 0; rep < 2; rep++) {
    cnp_mpi_ctx *sctx, *rctx;
    OK(cnp_transfers_begin(&sc));
    OK(cnp_mpi_send_begin(ss, &a, NULL, NULL, &sctx));
    OK(cnp_transfers_end(&sc, &n));
    ASSERT_EQ_I(R * C * 8, n.d2d_bytes);        /* the pack is one counted copy */
    ASSERT_EQ_I(0, n.h2d_bytes + n.d2h_bytes);
    void *p = NULL;
    OK(cnp_mpi_ctx_buffer(sctx, &p, NULL));
    ASSERT(p != a.data);
    const double *packed = p;                   /* C order, contiguous */
    for (int k = 0; k < R * C; k++) ASSERT(packed[k] == val(t_rank, k));
    OK(cnp_mpi_recv_begin(rs, &b, NULL, NULL, &rctx));
    OK(cnp_mpi_irecv(rctx, left, 9));
    OK(cnp_mpi_isend(sctx, right, 9));
    OK(cnp_transfers_begin(&sc));
    OK(cnp_mpi_end(rctx));                      /* waits for the irecv, then scatters */
    OK(cnp_transfers_end(&sc, &n));
    ASSERT_EQ_I(R * C * 8, n.d2d_bytes);
    OK(cnp_mpi_end(sctx));                      /* waits for the isend */
    for (int i = 0; i < R; i++)
      for (int j = 0; j < 2 * C; j++)
        ASSERT(recvbuf[i][j] == ((j % 2) ? -2.0 : val(left, i * C + j / 2)));
  }
  OK(cnp_mpi_stage_destroy(ss));
  OK(cnp_mpi_stage_destroy(rs));
}

/* Fortran-order arrays: packed to C order for MPI, scattered back in place (exchange). */
static void test_fortran_exchange(void)
{
  int64_t shape[3] = {3, 4, 5};
  cnp_array a;
  OK(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, CNP_INT32, 3, shape, CNP_ORDER_F, 0));
  ASSERT(cnp_array_is_f_contiguous(&a) && !cnp_array_is_c_contiguous(&a));
  /* Element (i, j, k) holds rank*1000 + its C-order index. */
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 5; k++)
        *(int32_t *)((char *)a.data + i * a.strides[0] + j * a.strides[1] + k * a.strides[2]) =
            t_rank * 1000 + (i * 4 + j) * 5 + k;
  cnp_mpi_stage *s;
  OK(cnp_mpi_stage_create(&s, comm, CNP_INT32, 3, shape, CNP_CUDA_AWARE_AUTO));
  for (int rep = 1; rep <= 2; rep++) {
    OK(cnp_mpi_exchange(s, &a, right, left, 3, NULL, NULL));
    /* After rep exchanges the data came from rank - rep. */
    int from = ((t_rank - rep) % t_size + t_size) % t_size;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 4; j++)
        for (int k = 0; k < 5; k++)
          ASSERT_EQ_I(from * 1000 + (i * 4 + j) * 5 + k,
                      *(int32_t *)((char *)a.data + i * a.strides[0] + j * a.strides[1] +
                                   k * a.strides[2]));
  }
  /* Contiguous exchange in place (pass-through, MPI_Sendrecv_replace). */
  int64_t n5 = 5;
  cnp_array c;
  OK(cnp_array_alloc_on(&c, CNP_BACKEND_HOST, 0, CNP_INT64, 1, &n5, CNP_ORDER_C, 0));
  for (int i = 0; i < 5; i++) ((int64_t *)c.data)[i] = t_rank * 10 + i;
  cnp_mpi_stage *s5;
  OK(cnp_mpi_stage_create(&s5, comm, CNP_INT64, 1, &n5, CNP_CUDA_AWARE_OFF));
  OK(cnp_mpi_exchange(s5, &c, left, right, 4, NULL, NULL));
  for (int i = 0; i < 5; i++) ASSERT_EQ_I(right * 10 + i, ((int64_t *)c.data)[i]);
  /* No partner at all: nothing changes. */
  OK(cnp_mpi_exchange(s5, &c, CNP_MPI_PROC_NULL, CNP_MPI_PROC_NULL, 4, NULL, NULL));
  for (int i = 0; i < 5; i++) ASSERT_EQ_I(right * 10 + i, ((int64_t *)c.data)[i]);
  /* A 0-d array (one value). */
  cnp_array z;
  OK(cnp_array_alloc_on(&z, CNP_BACKEND_HOST, 0, CNP_COMPLEX128, 0, NULL, CNP_ORDER_C, 0));
  ((double *)z.data)[0] = t_rank, ((double *)z.data)[1] = -t_rank;
  cnp_mpi_stage *s0;
  OK(cnp_mpi_stage_create(&s0, comm, CNP_COMPLEX128, 0, NULL, CNP_CUDA_AWARE_OFF));
  OK(cnp_mpi_exchange(s0, &z, right, left, 5, NULL, NULL));
  ASSERT(((double *)z.data)[0] == left && ((double *)z.data)[1] == -left);
  OK(cnp_mpi_stage_destroy(s0));
  OK(cnp_array_free(&z));
  OK(cnp_mpi_stage_destroy(s5));
  OK(cnp_mpi_stage_destroy(s));
  OK(cnp_array_free(&c));
  OK(cnp_array_free(&a));
}

/* One staging object, two overlapping contexts: CNP_EBUSY, and nothing breaks. */
static void test_overlap_rejected(void)
{
  int64_t n = 16;
  cnp_array a, b;
  OK(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, CNP_FLOAT32, 1, &n, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&b, CNP_BACKEND_HOST, 0, CNP_FLOAT32, 1, &n, CNP_ORDER_C, 0));
  for (int i = 0; i < 16; i++) ((float *)a.data)[i] = (float)(t_rank + i);
  cnp_mpi_stage *s;
  OK(cnp_mpi_stage_create(&s, comm, CNP_FLOAT32, 1, &n, CNP_CUDA_AWARE_OFF));
  cnp_mpi_ctx *c1 = NULL, *c2 = (cnp_mpi_ctx *)&c2;
  OK(cnp_mpi_send_begin(s, &a, NULL, NULL, &c1));
  ASSERT_ST(CNP_EBUSY, cnp_mpi_recv_begin(s, &b, NULL, NULL, &c2));
  ASSERT(c2 == NULL);
  ASSERT_DETAIL("already has an open send context");
  ASSERT_ST(CNP_EBUSY, cnp_mpi_send_begin(s, &a, NULL, NULL, &c2));
  ASSERT_ST(CNP_EBUSY, cnp_mpi_exchange(s, &b, right, left, 1, NULL, NULL));
  ASSERT_ST(CNP_EBUSY, cnp_mpi_stage_destroy(s));
  /* Wrong operation for the context's direction. */
  ASSERT_ST(CNP_ESTATE, cnp_mpi_recv(c1, left, 1));
  ASSERT_ST(CNP_ESTATE, cnp_mpi_irecv(c1, left, 1));
  OK(cnp_mpi_isend(c1, right, 1));
  OK(cnp_mpi_wait(c1));
  OK(cnp_mpi_wait(c1));                /* nothing pending: a no-op */
  OK(cnp_mpi_end(c1));                 /* the first context still works and completes */
  ASSERT_ST(CNP_ESTATE, cnp_mpi_ctx_buffer(c1, NULL, NULL));
  ASSERT_ST(CNP_ESTATE, cnp_mpi_send(c1, right, 1));   /* closed */
  ASSERT_ST(CNP_ESTATE, cnp_mpi_end(c1));
  OK(cnp_mpi_recv_begin(s, &b, NULL, NULL, &c2));
  OK(cnp_mpi_recv(c2, left, 1));
  ASSERT_ST(CNP_EBUSY, cnp_mpi_irecv(c2, left, 1)); /* a second receive into one buffer */
  OK(cnp_mpi_end(c2));
  for (int i = 0; i < 16; i++) ASSERT(((float *)b.data)[i] == (float)(left + i));
  OK(cnp_mpi_stage_destroy(s));
  OK(cnp_array_free(&a));
  OK(cnp_array_free(&b));
}

/* Producers: exactly one of stream/event; dtype, shape and peer checks. */
static void test_producers_and_arguments(void)
{
  int64_t n = 8, m = 9;
  cnp_array a, wrong_shape, wrong_type;
  OK(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &n, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&wrong_shape, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &m, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&wrong_type, CNP_BACKEND_HOST, 0, CNP_FLOAT32, 1, &n, CNP_ORDER_C, 0));
  cnp_stream *st;
  cnp_event *ev;
  OK(cnp_stream_create(&st));
  OK(cnp_event_create(&ev, CNP_EVENT_DEFAULT));
  OK(cnp_event_record(ev, st));
  ASSERT_ST(CNP_EINVAL, cnp_synchronize_for_mpi(&a, st, ev));
  OK(cnp_synchronize_for_mpi(&a, st, NULL));
  OK(cnp_synchronize_for_mpi(&a, NULL, ev));
  OK(cnp_synchronize_for_mpi(&a, NULL, NULL));
  cnp_mpi_stage *s;
  cnp_mpi_ctx *c;
  OK(cnp_mpi_stage_create(&s, comm, CNP_FLOAT64, 1, &n, CNP_CUDA_AWARE_OFF));
  ASSERT_ST(CNP_EINVAL, cnp_mpi_send_begin(s, &a, st, ev, &c));
  ASSERT_ST(CNP_ESHAPE, cnp_mpi_send_begin(s, &wrong_shape, NULL, NULL, &c));
  ASSERT_ST(CNP_EDTYPE, cnp_mpi_send_begin(s, &wrong_type, NULL, NULL, &c));
  for (int i = 0; i < 8; i++) ((double *)a.data)[i] = t_rank;
  /* Stream producer on send, event producer on receive. */
  cnp_mpi_ctx *rc;
  cnp_mpi_stage *r;
  OK(cnp_mpi_stage_create(&r, comm, CNP_FLOAT64, 1, &n, CNP_CUDA_AWARE_ON));
  ASSERT_EQ_I(1, cnp_mpi_stage_cuda_aware(r));
  ASSERT_EQ_I(0, cnp_mpi_stage_cuda_aware(s));
  cnp_mpi_stage *au;                   /* auto: what the library says */
  OK(cnp_mpi_stage_create(&au, comm, CNP_FLOAT64, 1, &n, CNP_CUDA_AWARE_AUTO));
  int lib_cuda = 0;
#ifdef MPIX_GPU_SUPPORT_CUDA
  MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &lib_cuda);
#endif
  ASSERT_EQ_I(lib_cuda != 0, cnp_mpi_stage_cuda_aware(au));
  OK(cnp_mpi_stage_destroy(au));
  OK(cnp_mpi_send_begin(s, &a, st, NULL, &c));
  cnp_array b;
  OK(cnp_array_alloc_on(&b, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &n, CNP_ORDER_C, 0));
  OK(cnp_mpi_recv_begin(r, &b, NULL, ev, &rc));
  ASSERT_ST(CNP_ERANGE, cnp_mpi_send(c, t_size, 0));
  OK(cnp_mpi_sendrecv(c, right, 2, rc, left, 2));
  OK(cnp_mpi_end(c));
  OK(cnp_mpi_end(rc));
  for (int i = 0; i < 8; i++) ASSERT(((double *)b.data)[i] == left);
  OK(cnp_array_free(&b));
  /* Bad arguments at creation. */
  cnp_mpi_stage *bad = (cnp_mpi_stage *)&bad;
  ASSERT_ST(CNP_EDTYPE, cnp_mpi_stage_create(&bad, comm, (cnp_dtype)99, 1, &n, 0));
  ASSERT(bad == NULL);
  ASSERT_ST(CNP_EINVAL, cnp_mpi_stage_create(&bad, NULL, CNP_FLOAT64, 1, &n, 0));
  ASSERT_ST(CNP_EINVAL, cnp_mpi_stage_create(&bad, comm, CNP_FLOAT64, 1, &n, 7));
  int64_t neg = -1;
  ASSERT_ST(CNP_ESHAPE, cnp_mpi_stage_create(&bad, comm, CNP_FLOAT64, 1, &neg, 0));
  OK(cnp_mpi_stage_destroy(r));
  OK(cnp_mpi_stage_destroy(s));
  OK(cnp_mpi_stage_destroy(NULL));
  OK(cnp_event_destroy(ev));
  OK(cnp_stream_destroy(st));
  OK(cnp_array_free(&a));
  OK(cnp_array_free(&wrong_shape));
  OK(cnp_array_free(&wrong_type));
}

/* MPI failures come back as CNP_EMPI with MPI's text; a short message is CNP_ESHAPE. */
static void test_mpi_errors(void)
{
  int64_t n = 4, m = 3;
  cnp_array a, small;
  OK(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, CNP_INT32, 1, &n, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&small, CNP_BACKEND_HOST, 0, CNP_INT32, 1, &m, CNP_ORDER_C, 0));
  cnp_mpi_stage *s4, *s3;
  OK(cnp_mpi_stage_create(&s4, comm, CNP_INT32, 1, &n, CNP_CUDA_AWARE_OFF));
  OK(cnp_mpi_stage_create(&s3, comm, CNP_INT32, 1, &m, CNP_CUDA_AWARE_OFF));
  cnp_mpi_ctx *c;
  OK(cnp_mpi_send_begin(s4, &a, NULL, NULL, &c));
  ASSERT_ST(CNP_EMPI, cnp_mpi_send(c, right, -5));  /* invalid tag: MPI_ERR_TAG */
  ASSERT_DETAIL("MPI_Send failed");
  ASSERT_DETAIL("tag");
  if (t_rank == 0 && getenv("CNP_TEST_VERBOSE")) printf("  detail: %s\n", cnp_last_error());
  OK(cnp_mpi_end(c));
  /* Rank r sends 3 elements to the right; the right neighbour expects 4. */
  cnp_mpi_ctx *sc, *rc;
  OK(cnp_mpi_send_begin(s3, &small, NULL, NULL, &sc));
  OK(cnp_mpi_recv_begin(s4, &a, NULL, NULL, &rc));
  ASSERT_ST(CNP_ESHAPE, cnp_mpi_sendrecv(sc, right, 6, rc, left, 6));
  ASSERT_DETAIL("received 3 elements");
  OK(cnp_mpi_end(sc));
  OK(cnp_mpi_end(rc));
  /* A message longer than the buffer is MPI's truncation error. */
  OK(cnp_mpi_send_begin(s4, &a, NULL, NULL, &sc));
  OK(cnp_mpi_recv_begin(s3, &small, NULL, NULL, &rc));
  ASSERT_ST(CNP_EMPI, cnp_mpi_sendrecv(sc, right, 7, rc, left, 7));
  ASSERT_DETAIL("MPI_Sendrecv failed");
  OK(cnp_mpi_end(sc));
  ASSERT(cnp_mpi_end(rc) == CNP_OK);
  OK(cnp_mpi_stage_destroy(s4));
  OK(cnp_mpi_stage_destroy(s3));
  OK(cnp_array_free(&a));
  OK(cnp_array_free(&small));
}

/* Destroyed handles are CNP_ESTATE and handles of another kind CNP_EINVAL, found through
** the live-handle registry (no freed memory is read: the ASan build checks that). */
static void test_stale_and_wrong_kind_handles(void)
{
  int64_t n = 4;
  cnp_array a;
  OK(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, CNP_INT32, 1, &n, CNP_ORDER_C, 0));
  cnp_comm *c2 = NULL;
  OK(cnp_comm_create_mpi(&c2, MPI_COMM_WORLD));
  cnp_mpi_stage *s = NULL;
  OK(cnp_mpi_stage_create(&s, c2, CNP_INT32, 1, &n, CNP_CUDA_AWARE_OFF));
  cnp_mpi_ctx *ctx = NULL;
  OK(cnp_mpi_send_begin(s, &a, NULL, NULL, &ctx));
  OK(cnp_mpi_end(ctx));
  /* Another kind of handle. */
  ASSERT_ST(CNP_EINVAL, cnp_mpi_stage_reserve((cnp_mpi_stage *)c2, &a));
  ASSERT_DETAIL("not a staging object handle");
  cnp_stream *st = NULL;
  OK(cnp_stream_create(&st));
  cnp_mpi_stage *s2 = NULL;
  ASSERT_ST(CNP_EINVAL, cnp_mpi_stage_create(&s2, (cnp_comm *)st, CNP_INT32, 1, &n,
                                             CNP_CUDA_AWARE_OFF));
  ASSERT_DETAIL("not a communicator handle");
  ASSERT(s2 == NULL);
  ASSERT_EQ_I(-1, cnp_comm_rank((cnp_comm *)st));
  OK(cnp_stream_destroy(st));
  /* Never created: not live. */
  ASSERT_ST(CNP_ESTATE, cnp_mpi_stage_reserve((cnp_mpi_stage *)&a, &a));
  /* Destroyed stage: its calls and its (closed) context. */
  OK(cnp_mpi_stage_destroy(s));
  ASSERT_ST(CNP_ESTATE, cnp_mpi_stage_reserve(s, &a));
  ASSERT_DETAIL("cnp_mpi_stage_reserve");
  ASSERT_ST(CNP_ESTATE, cnp_mpi_send_begin(s, &a, NULL, NULL, &ctx));
  ASSERT_ST(CNP_ESTATE, cnp_mpi_send(ctx, right, 1));
  ASSERT_DETAIL("destroyed staging object");
  ASSERT_ST(CNP_ESTATE, cnp_mpi_end(ctx));
  ASSERT_ST(CNP_ESTATE, cnp_mpi_stage_destroy(s));
  ASSERT_EQ_I(0, cnp_mpi_stage_cuda_aware(s));
  /* Destroyed communicator (collective free). */
  OK(cnp_comm_destroy(c2));
  ASSERT_EQ_I(-1, cnp_comm_rank(c2));
  ASSERT_EQ_I(-1, cnp_comm_size(c2));
  ASSERT_ST(CNP_ESTATE, cnp_mpi_stage_create(&s, c2, CNP_INT32, 1, &n, CNP_CUDA_AWARE_OFF));
  ASSERT(s == NULL);
  ASSERT_ST(CNP_ESTATE, cnp_comm_destroy(c2));
  ASSERT_DETAIL("cnp_comm_destroy");
  OK(cnp_array_free(&a));
}

/* Device arrays where CUDA cannot be used (no GPU, or built without CUDA): every staging
** call on them is CNP_EUNAVAILABLE naming the call and the reason, before any device or MPI
** work, and the stage stays usable for host arrays. */
static void test_device_array_without_cuda(void)
{
  if (cnp_cuda_available(NULL)) return;          /* the device paths: test_mpi_device */
  int64_t n = 6;
  cnp_array d, h;
  OK(cnp_array_wrap(&d, (void *)(uintptr_t)0x100000, CNP_BACKEND_CUDA, 0, CNP_FLOAT64, 1, &n,
                    NULL));
  OK(cnp_array_alloc_on(&h, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &n, CNP_ORDER_C, 0));
  cnp_mpi_stage *s = NULL;
  OK(cnp_mpi_stage_create(&s, comm, CNP_FLOAT64, 1, &n, CNP_CUDA_AWARE_OFF));
  cnp_mpi_ctx *ctx = NULL;
  ASSERT_ST(CNP_EUNAVAILABLE, cnp_mpi_stage_reserve(s, &d));
  ASSERT_DETAIL("cnp_mpi_stage_reserve");
  ASSERT_ST(CNP_EUNAVAILABLE, cnp_mpi_send_begin(s, &d, NULL, NULL, &ctx));
  ASSERT_DETAIL("cnp_mpi_send_begin");
  ASSERT(ctx == NULL);
  ASSERT_ST(CNP_EUNAVAILABLE, cnp_mpi_recv_begin(s, &d, NULL, NULL, &ctx));
  ASSERT_ST(CNP_EUNAVAILABLE, cnp_mpi_exchange(s, &d, right, left, 3, NULL, NULL));
  ASSERT_DETAIL("cnp_mpi_exchange");
  ASSERT_ST(CNP_EUNAVAILABLE, cnp_synchronize_for_mpi(&d, NULL, NULL));
  ASSERT_DETAIL("cnp_synchronize_for_mpi");
  /* The stage is not left busy. */
  for (int i = 0; i < 6; i++) ((double *)h.data)[i] = 10.0 * t_rank + i;
  OK(cnp_mpi_exchange(s, &h, right, left, 4, NULL, NULL));
  for (int i = 0; i < 6; i++) ASSERT(((double *)h.data)[i] == 10.0 * left + i);
  OK(cnp_mpi_stage_destroy(s));
  OK(cnp_array_free(&h));
}

int main(int argc, char **argv)
{
  /* Before MPI_Init: a polite CNP_ESTATE, and the version needs no MPI. */
  cnp_comm *early = NULL;
  char version[64];
  if (cnp_comm_create(&early, 0) != CNP_ESTATE || early != NULL ||
      !strstr(cnp_last_error(), "MPI is not initialized") ||
      cnp_mpi_library_version(version, sizeof version) != CNP_OK) {
    fprintf(stderr, "before MPI_Init: unexpected answer (%s)\n", cnp_last_error());
    return 1;
  }
  t_init(&argc, &argv);
  right = (t_rank + 1) % t_size;
  left = (t_rank + t_size - 1) % t_size;
  OK(cnp_comm_create_mpi(&comm, MPI_COMM_WORLD));
  RUN(test_comm);
  RUN(test_pairing);
  RUN(test_contiguous_roundtrip);
  RUN(test_strided_roundtrip);
  RUN(test_fortran_exchange);
  RUN(test_overlap_rejected);
  RUN(test_producers_and_arguments);
  RUN(test_mpi_errors);
  RUN(test_stale_and_wrong_kind_handles);
  RUN(test_device_array_without_cuda);
  OK(cnp_comm_destroy(comm));
  return t_finish("test_mpi_stage");
}
