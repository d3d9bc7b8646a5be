/*
** mpi_comm.c — communicators for MPI staging and migration, and MPI error translation.
**
** cnp never works on the caller's communicator: cnp_comm_create duplicates it and sets
** MPI_ERRORS_RETURN on the duplicate, so every MPI failure inside libcnp becomes CNP_EMPI
** with MPI_Error_string's text instead of aborting the job.
*/
#include "mpi_internal.h"

#include <string.h>

/*
** cnp__mpi_fail: record an MPI error code as CNP_EMPI.
*/
cnp_status cnp__mpi_fail(int mpierr, const char *op, const char *what)
{
  char text[MPI_MAX_ERROR_STRING + 1];
  int len = 0, klass = 0;
  if (MPI_Error_string(mpierr, text, &len) != MPI_SUCCESS) len = 0;
  text[len] = '\0';
  if (MPI_Error_class(mpierr, &klass) != MPI_SUCCESS) klass = mpierr;
  return cnp__fail(CNP_EMPI, op, "%s failed: %s (MPI error class %d)", what,
                   len ? text : "unknown MPI error", klass);
}

cnp_status cnp__mpi_ready(const char *op)
{
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init) return cnp__fail(CNP_ESTATE, op, "MPI is not initialized (call MPI_Init first)");
  if (fin) return cnp__fail(CNP_ESTATE, op, "MPI has been finalized");
  return CNP_OK;
}

/* A live communicator handle (registry first: no freed memory is read). */
static bool comm_live(const cnp_comm *c)
{
  return cnp__handle_live(c) && c->magic == CNP__MAGIC_COMM;
}

cnp_status cnp__comm_check(const cnp_comm *c, const char *op)
{
  /* Through the live-handle registry: a destroyed communicator is CNP_ESTATE without
  ** reading freed memory; another kind of handle is CNP_EINVAL. */
  cnp_status st = cnp__check_handle(c, CNP__MAGIC_COMM, "communicator", op);
  if (st != CNP_OK) return st;
  return cnp__mpi_ready(op);
}

MPI_Datatype cnp__mpi_type(cnp_dtype t)
{
  switch (t) {
  case CNP_BOOL: return MPI_UINT8_T;
  case CNP_INT32: return MPI_INT32_T;
  case CNP_INT64: return MPI_INT64_T;
  case CNP_UINT64: return MPI_UINT64_T;
  case CNP_FLOAT16: return MPI_UINT16_T;
  case CNP_FLOAT32: return MPI_FLOAT;
  case CNP_FLOAT64: return MPI_DOUBLE;
  case CNP_COMPLEX64: return MPI_C_FLOAT_COMPLEX;
  case CNP_COMPLEX128: return MPI_C_DOUBLE_COMPLEX;
  default: return MPI_DATATYPE_NULL;
  }
}

/*
** cnp__mpi_cuda_aware_library: MPICH answers through MPIX_GPU_query_support, Open MPI
** through MPIX_Query_cuda_support (mpi-ext.h); other libraries count as not CUDA-aware.
*/
int cnp__mpi_cuda_aware_library(void)
{
#if defined(MPIX_GPU_SUPPORT_CUDA)
  int yes = 0;
  if (MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &yes) != MPI_SUCCESS) return 0;
  return yes != 0;
#elif defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() != 0;
#else
  return 0;
#endif
}

/*
** Error handlers of the communicators an error may be raised on while cnp_comm_create looks
** at a caller's handle: MPI_COMM_WORLD and MPI_COMM_SELF (errors without a valid
** communicator) and the caller's communicator (MPI_Comm_dup's own errors). They switch to
** MPI_ERRORS_RETURN for the duration of the call, so that a bad handle is a status instead
** of the default MPI_ERRORS_ARE_FATAL abort, and are restored afterwards.
*/
typedef struct saved_handlers {
  MPI_Errhandler world, self;
} saved_handlers;

static void handlers_return(saved_handlers *h)
{
  MPI_Comm_get_errhandler(MPI_COMM_WORLD, &h->world);
  MPI_Comm_get_errhandler(MPI_COMM_SELF, &h->self);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
}

static void handlers_restore(saved_handlers *h)
{
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, h->world);
  MPI_Comm_set_errhandler(MPI_COMM_SELF, h->self);
  MPI_Errhandler_free(&h->world);
  MPI_Errhandler_free(&h->self);
}

/* Duplicate `user` with errors returned; CNP_EINVAL if it is not a valid handle. */
static cnp_status dup_checked(MPI_Comm user, MPI_Comm *out, const char *op)
{
  saved_handlers h;
  handlers_return(&h);
  MPI_Errhandler mine = MPI_ERRHANDLER_NULL;
  int rc = MPI_Comm_get_errhandler(user, &mine);
  if (rc != MPI_SUCCESS) {
    handlers_restore(&h);
    char text[MPI_MAX_ERROR_STRING + 1];
    int len = 0, klass = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
    text[len] = '\0';
    MPI_Error_class(rc, &klass);
    return cnp__fail(CNP_EINVAL, op, "not a valid communicator handle (pass "
                     "MPI_Comm_c2f(comm)): %s (MPI error class %d)", text, klass);
  }
  MPI_Comm_set_errhandler(user, MPI_ERRORS_RETURN);
  rc = MPI_Comm_dup(user, out);
  MPI_Comm_set_errhandler(user, mine);
  MPI_Errhandler_free(&mine);
  handlers_restore(&h);
  return rc == MPI_SUCCESS ? CNP_OK : cnp__mpi_fail(rc, op, "MPI_Comm_dup");
}

/*
** cnp_comm_create: duplicate the caller's communicator (collective) with MPI_ERRORS_RETURN.
*/
cnp_status cnp_comm_create(cnp_comm **out, int fcomm)
{
  static const char op[] = "cnp_comm_create";
  CNP__CHECK_NOTNULL(op, out);
  *out = NULL;
  cnp_status st = cnp__mpi_ready(op);
  if (st) return st;
  MPI_Comm user = MPI_Comm_f2c((MPI_Fint)fcomm);
  if (user == MPI_COMM_NULL) return cnp__fail(CNP_EINVAL, op, "communicator is MPI_COMM_NULL");
  cnp_comm *c = cnp__calloc(1, sizeof *c);
  if (!c) return cnp__fail(CNP_ENOMEM, op, "cannot allocate the communicator handle");
  if ((st = dup_checked(user, &c->comm, op))) {
    cnp__free(c);
    return st;
  }
  int rc = MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_rank(c->comm, &c->rank);
  if (rc == MPI_SUCCESS) rc = MPI_Comm_size(c->comm, &c->size);
  if (rc != MPI_SUCCESS) {
    MPI_Comm_free(&c->comm);
    cnp__free(c);
    return cnp__mpi_fail(rc, op, "MPI_Comm_set_errhandler/rank/size");
  }
  c->magic = CNP__MAGIC_COMM;
  if ((st = cnp__handle_register(c, op)) != CNP_OK) {
    MPI_Comm_free(&c->comm);
    cnp__free(c);
    return st;
  }
  *out = c;
  return CNP_OK;
}

cnp_status cnp_comm_destroy(cnp_comm *c)
{
  static const char op[] = "cnp_comm_destroy";
  if (c == NULL) return CNP_OK;
  cnp_status st = cnp__check_handle(c, CNP__MAGIC_COMM, "communicator", op);
  if (st != CNP_OK) return st;
  int fin = 0;
  MPI_Finalized(&fin);
  if (!fin) {
    int rc = MPI_Comm_free(&c->comm);
    if (rc != MPI_SUCCESS) st = cnp__mpi_fail(rc, op, "MPI_Comm_free");
  } else {
    st = cnp__fail(CNP_ESTATE, op, "MPI was finalized before the communicator was destroyed "
                   "(the handle is freed, the MPI duplicate leaked)");
  }
  cnp__handle_unregister(c);
  c->magic = CNP__MAGIC_DEAD;
  cnp__free(c);
  return st;
}

int cnp_comm_rank(const cnp_comm *c)
{
  return comm_live(c) ? c->rank : -1;
}

int cnp_comm_size(const cnp_comm *c)
{
  return comm_live(c) ? c->size : -1;
}

int cnp_comm_fortran(const cnp_comm *c)
{
  if (!comm_live(c)) return (int)MPI_Comm_c2f(MPI_COMM_NULL);
  return (int)MPI_Comm_c2f(c->comm);
}

/* cnp_comm_allgather: MPI_Allgather of nbytes bytes per rank (no allocation). */
cnp_status cnp_comm_allgather(cnp_comm *c, const void *send, int64_t nbytes, void *recv)
{
  static const char op[] = "cnp_comm_allgather";
  cnp_status st = cnp__comm_check(c, op);
  if (st) return st;
  CNP__CHECK_NOTNULL(op, send);
  CNP__CHECK_NOTNULL(op, recv);
  if (nbytes < 0 || nbytes > INT32_MAX)
    return cnp__fail(CNP_EINVAL, op, "nbytes %lld is outside [0, %d]", (long long)nbytes, INT32_MAX);
  int rc = MPI_Allgather(send, (int)nbytes, MPI_BYTE, recv, (int)nbytes, MPI_BYTE, c->comm);
  if (rc != MPI_SUCCESS) return cnp__mpi_fail(rc, op, "MPI_Allgather");
  return CNP_OK;
}

/*
** cnp_comm_partner_source: every rank names its destination; each learns who sends to it.
** Allocates (setup only).
*/
cnp_status cnp_comm_partner_source(cnp_comm *c, int dest, int *source)
{
  static const char op[] = "cnp_comm_partner_source";
  cnp_status st = cnp__comm_check(c, op);
  if (st) return st;
  CNP__CHECK_NOTNULL(op, source);
  int *all = cnp__malloc(sizeof(int) * (size_t)c->size);
  if (!all) return cnp__fail(CNP_ENOMEM, op, "cannot allocate %d ints", c->size);
  int mine = (dest >= 0 && dest < c->size) || dest == CNP_MPI_PROC_NULL ? dest : -2;
  int rc = MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, c->comm);
  if (rc != MPI_SUCCESS) {
    cnp__free(all);
    return cnp__mpi_fail(rc, op, "MPI_Allgather");
  }
  int src = CNP_MPI_PROC_NULL, bad = -1, dup = -1;
  for (int r = 0; r < c->size; r++) {
    if (all[r] == -2 && bad < 0) bad = r;
    if (all[r] == c->rank) {
      if (src != CNP_MPI_PROC_NULL && dup < 0) dup = r;
      else if (src == CNP_MPI_PROC_NULL) src = r;
    }
  }
  /* Duplicates are checked globally so that every rank returns the same status. */
  int local_dup = dup >= 0, any_dup = 0;
  rc = MPI_Allreduce(&local_dup, &any_dup, 1, MPI_INT, MPI_MAX, c->comm);
  cnp__free(all);
  if (rc != MPI_SUCCESS) return cnp__mpi_fail(rc, op, "MPI_Allreduce");
  if (bad >= 0)
    return cnp__fail(CNP_EINVAL, op, "rank %d named a destination outside [0, %d)", bad,
                     c->size);
  if (any_dup)
    return cnp__fail(CNP_EINVAL, op, "two ranks send to the same rank; the partner map "
                     "must be a permutation (or use CNP_MPI_PROC_NULL)");
  *source = src;
  return CNP_OK;
}

/* Pairing with a `from` formula: the first rank r whose destination's source is not r. */
static int pairing_from(const cnp_comm *c, cnp_rank_formula dest, cnp_rank_formula source,
                        void *ctx, cnp_pairing *out)
{
  for (int r = 0; r < c->size; r++) {
    int64_t d = dest(ctx, r);
    if (d < 0 || d >= c->size) continue;       /* reported on that rank (CNP_ERANGE) */
    int64_t sr = source(ctx, (int)d);
    if (sr != r) {
      out->bad_rank = r;
      out->bad_dest = d;
      out->bad_source = sr;
      return 0;
    }
  }
  int64_t s = source(ctx, c->rank);
  out->source = s >= 0 && s < c->size ? (int)s : -1;
  out->bad_source = s;                         /* for the range message */
  return 1;
}

/* Pairing without one: exactly one sender per rank; this rank's source is its sender. */
static cnp_status pairing_unique(const cnp_comm *c, cnp_rank_formula dest, void *ctx,
                                 cnp_pairing *out, int *ok, const char *op)
{
  int *senders = cnp__calloc((size_t)c->size, sizeof(int));
  if (!senders) return cnp__fail(CNP_ENOMEM, op, "cannot allocate %d ints", c->size);
  out->source = -1;
  for (int r = 0; r < c->size; r++) {
    int64_t d = dest(ctx, r);
    if (d < 0 || d >= c->size) {
      if (out->bad_rank < 0) {
        out->bad_rank = r;
        out->bad_dest = d;
      }
      continue;
    }
    senders[d]++;
    if (d == c->rank) out->source = r;
  }
  for (int r = 0; r < c->size && out->bad_rank < 0; r++)
    if (senders[r] != 1) {
      out->bad_rank = r;
      out->bad_dest = -1;
      out->bad_source = senders[r];
    }
  cnp__free(senders);
  *ok = out->bad_rank < 0;
  return CNP_OK;
}

cnp_status cnp_comm_check_pairing(const cnp_comm *c, cnp_rank_formula dest,
                                  cnp_rank_formula source, void *ctx, cnp_pairing *out)
{
  static const char op[] = "cnp_comm_check_pairing";
  CNP__CHECK_NOTNULL(op, out);
  out->bad_rank = -1;
  out->bad_dest = out->bad_source = -1;
  out->source = out->dest = -1;
  cnp_status st = cnp__comm_check(c, op);
  if (st) return st;
  CNP__CHECK_NOTNULL(op, dest);
  int ok = 1;
  if (source) {
    ok = pairing_from(c, dest, source, ctx, out);
    if (!ok)
      return cnp__fail(CNP_EINVAL, op, "rank %d sends to rank %lld, which receives from rank "
                       "%lld", out->bad_rank, (long long)out->bad_dest,
                       (long long)out->bad_source);
  } else {
    if ((st = pairing_unique(c, dest, ctx, out, &ok, op)) != CNP_OK) return st;
    if (!ok && out->bad_source < 0)
      return cnp__fail(CNP_EINVAL, op, "not exactly one rank sends to each rank: rank %d "
                       "sends to %lld, outside [0, %d)", out->bad_rank,
                       (long long)out->bad_dest, c->size);
    if (!ok)
      return cnp__fail(CNP_EINVAL, op, "not exactly one rank sends to each rank: rank %d has "
                       "%lld senders", out->bad_rank, (long long)out->bad_source);
    out->bad_source = out->source;
  }
  int64_t d = dest(ctx, c->rank);
  out->dest = d >= INT32_MIN && d <= INT32_MAX ? (int)d : -1;
  if (d < 0 || d >= c->size || out->source < 0) {
    out->bad_rank = c->rank;
    out->bad_dest = d;
    return cnp__fail(CNP_ERANGE, op, "rank %d: a partner rank is outside [0, %d) (sends to "
                     "%lld, receives from %lld)", c->rank, c->size, (long long)d,
                     (long long)out->bad_source);
  }
  out->bad_dest = out->bad_source = -1;
  return CNP_OK;
}

cnp_status cnp_mpi_library_version(char *buf, size_t len)
{
  static const char op[] = "cnp_mpi_library_version";
  CNP__CHECK_NOTNULL(op, buf);
  if (len == 0) return cnp__fail(CNP_EINVAL, op, "len is 0");
  char v[MPI_MAX_LIBRARY_VERSION_STRING + 1];
  int n = 0;
  int rc = MPI_Get_library_version(v, &n);
  if (rc != MPI_SUCCESS) return cnp__mpi_fail(rc, op, "MPI_Get_library_version");
  v[n] = '\0';
  size_t k = strcspn(v, "\n");
  while (k > 0 && (v[k - 1] == ' ' || v[k - 1] == '\t' || v[k - 1] == '\r')) k--;
  v[k] = '\0';
  if (k + 1 > len) {
    memcpy(buf, v, len - 1);
    buf[len - 1] = '\0';
    return cnp__fail(CNP_EOVERFLOW, op, "buffer of %zu bytes is too small (%zu needed)", len,
                     k + 1);
  }
  memcpy(buf, v, k + 1);
  return CNP_OK;
}

cnp_status cnp__comm_agree(const cnp_comm *c, cnp_status local, const char *op,
                           const char *when, const char *done)
{
  struct { int code, rank; } in = {(int)local, c->rank}, res;
  int rc = MPI_Allreduce(&in, &res, 1, MPI_2INT, MPI_MINLOC, c->comm);
  if (rc != MPI_SUCCESS) return cnp__mpi_fail(rc, op, "MPI_Allreduce");
  if (res.code == CNP_OK) return CNP_OK;
  if (res.code == (int)local) return local;    /* this rank's own message stands */
  return cnp__fail((cnp_status)res.code, op, "rank %d failed %s (%s); nothing was %s",
                   res.rank, when, cnp_status_string((cnp_status)res.code), done);
}
