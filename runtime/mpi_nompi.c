/*
** mpi_nompi.c — the MPI API of a build without MPI: every call is CNP_EUNSUPPORTED.
*/
#include "internal.h"
#include "cnp/mpi.h"

#define CNP__NOMPI(op) cnp__fail(CNP_EUNSUPPORTED, (op), "built without MPI")

cnp_status cnp_comm_create(cnp_comm **out, int fcomm)
{
  if (out) *out = NULL;
  return CNP__NOMPI("cnp_comm_create");
}
cnp_status cnp_comm_destroy(cnp_comm *c)
{
  return c ? CNP__NOMPI("cnp_comm_destroy") : CNP_OK;
}
int cnp_comm_rank(const cnp_comm *c) { return -1; }
int cnp_comm_size(const cnp_comm *c) { return -1; }
int cnp_comm_fortran(const cnp_comm *c) { return -1; }
cnp_status cnp_comm_partner_source(cnp_comm *c, int dest, int *source)
{
  return CNP__NOMPI("cnp_comm_partner_source");
}
cnp_status cnp_comm_allgather(cnp_comm *c, const void *send, int64_t nbytes, void *recv)
{
  return CNP__NOMPI("cnp_comm_allgather");
}
cnp_status cnp_comm_check_pairing(const cnp_comm *c, cnp_rank_formula dest,
                                  cnp_rank_formula source, void *ctx, cnp_pairing *out)
{
  if (out) out->bad_rank = -1;
  return CNP__NOMPI("cnp_comm_check_pairing");
}
cnp_status cnp_mpi_library_version(char *buf, size_t len)
{
  if (buf && len) buf[0] = '\0';
  return CNP__NOMPI("cnp_mpi_library_version");
}

cnp_status cnp_mpi_stage_create(cnp_mpi_stage **out, cnp_comm *comm, cnp_dtype dtype,
                                int ndim, const int64_t *shape, cnp_cuda_aware mode)
{
  if (out) *out = NULL;
  return CNP__NOMPI("cnp_mpi_stage_create");
}
cnp_status cnp_mpi_stage_destroy(cnp_mpi_stage *s)
{
  return s ? CNP__NOMPI("cnp_mpi_stage_destroy") : CNP_OK;
}
cnp_status cnp_mpi_stage_reserve(cnp_mpi_stage *s, const cnp_array *like)
{
  return CNP__NOMPI("cnp_mpi_stage_reserve");
}
int cnp_mpi_stage_cuda_aware(const cnp_mpi_stage *s) { return 0; }
cnp_status cnp_mpi_send_begin(cnp_mpi_stage *s, const cnp_array *a, cnp_stream *ps,
                              cnp_event *pe, cnp_mpi_ctx **ctx)
{
  if (ctx) *ctx = NULL;
  return CNP__NOMPI("cnp_mpi_send_begin");
}
cnp_status cnp_mpi_recv_begin(cnp_mpi_stage *s, cnp_array *a, cnp_stream *ps, cnp_event *pe,
                              cnp_mpi_ctx **ctx)
{
  if (ctx) *ctx = NULL;
  return CNP__NOMPI("cnp_mpi_recv_begin");
}
cnp_status cnp_mpi_ctx_buffer(cnp_mpi_ctx *ctx, void **ptr, size_t *bytes)
{
  return CNP__NOMPI("cnp_mpi_ctx_buffer");
}
cnp_status cnp_mpi_send(cnp_mpi_ctx *ctx, int dest, int tag)
{
  return CNP__NOMPI("cnp_mpi_send");
}
cnp_status cnp_mpi_recv(cnp_mpi_ctx *ctx, int source, int tag)
{
  return CNP__NOMPI("cnp_mpi_recv");
}
cnp_status cnp_mpi_isend(cnp_mpi_ctx *ctx, int dest, int tag)
{
  return CNP__NOMPI("cnp_mpi_isend");
}
cnp_status cnp_mpi_irecv(cnp_mpi_ctx *ctx, int source, int tag)
{
  return CNP__NOMPI("cnp_mpi_irecv");
}
cnp_status cnp_mpi_sendrecv(cnp_mpi_ctx *send_ctx, int dest, int sendtag,
                            cnp_mpi_ctx *recv_ctx, int source, int recvtag)
{
  return CNP__NOMPI("cnp_mpi_sendrecv");
}
cnp_status cnp_mpi_wait(cnp_mpi_ctx *ctx) { return CNP__NOMPI("cnp_mpi_wait"); }
cnp_status cnp_mpi_end(cnp_mpi_ctx *ctx) { return CNP__NOMPI("cnp_mpi_end"); }
cnp_status cnp_mpi_exchange(cnp_mpi_stage *s, cnp_array *a, int dest, int source, int tag,
                            cnp_stream *ps, cnp_event *pe)
{
  return CNP__NOMPI("cnp_mpi_exchange");
}
cnp_status cnp_synchronize_for_mpi(const cnp_array *a, cnp_stream *ps, cnp_event *pe)
{
  return CNP__NOMPI("cnp_synchronize_for_mpi");
}

cnp_status cnp_migrate_plan_create(cnp_migrate_plan **out, cnp_comm *comm,
                                   const cnp_array *fields, int n_fields, cnp_cuda_aware mode)
{
  if (out) *out = NULL;
  return CNP__NOMPI("cnp_migrate_plan_create");
}
cnp_status cnp_migrate_plan_destroy(cnp_migrate_plan *p)
{
  return p ? CNP__NOMPI("cnp_migrate_plan_destroy") : CNP_OK;
}
int64_t cnp_migrate_plan_capacity(const cnp_migrate_plan *p) { return -1; }
cnp_status cnp_migrate_last_stats(const cnp_migrate_plan *p, cnp_migrate_stats *out)
{
  return CNP__NOMPI("cnp_migrate_last_stats");
}
cnp_status cnp_migrate(cnp_migrate_plan *p, cnp_array *fields, int n_fields, int64_t n,
                       const cnp_array *dest, cnp_stream *ps, cnp_event *pe, int64_t *n_out)
{
  return CNP__NOMPI("cnp_migrate");
}
cnp_status cnp_domain_rank(const cnp_domain *d, const double *x, int *rank)
{
  return CNP__NOMPI("cnp_domain_rank");
}
cnp_status cnp_domain_dest(const cnp_domain *d, const cnp_array *pos, int n_pos, int64_t n,
                           cnp_array *dest)
{
  return CNP__NOMPI("cnp_domain_dest");
}
cnp_status cnp_migrate_by_domain(cnp_migrate_plan *p, const cnp_domain *d,
                                 const cnp_array *pos, int n_pos, cnp_array *fields,
                                 int n_fields, int64_t n, cnp_stream *ps, cnp_event *pe,
                                 int64_t *n_out)
{
  return CNP__NOMPI("cnp_migrate_by_domain");
}
cnp_status cnp_halo_create(cnp_halo **out, cnp_comm *comm, const cnp_array *like, int ghost,
                           int periodic)
{
  if (out) *out = NULL;
  return CNP__NOMPI("cnp_halo_create");
}
cnp_status cnp_halo_destroy(cnp_halo *h)
{
  return h ? CNP__NOMPI("cnp_halo_destroy") : CNP_OK;
}
cnp_status cnp_halo_exchange(cnp_halo *h, cnp_array *a, cnp_stream *s)
{
  return CNP__NOMPI("cnp_halo_exchange");
}
cnp_status cnp_halo_accumulate(cnp_halo *h, cnp_array *a, cnp_stream *s)
{
  return CNP__NOMPI("cnp_halo_accumulate");
}
cnp_status cnp_slab_range(int64_t n, int size, int rank, int64_t *offset, int64_t *count)
{
  return CNP__NOMPI("cnp_slab_range");
}
cnp_status cnp_slab_owner(int64_t n, int size, int64_t plane, int *rank)
{
  return CNP__NOMPI("cnp_slab_owner");
}
cnp_status cnp_slab_dest(int64_t n, int size, const cnp_array *x, int64_t count,
                         cnp_array *dest)
{
  return CNP__NOMPI("cnp_slab_dest");
}
cnp_status cnp_fft_dist_plan_create(cnp_fft_dist_plan **out, cnp_comm *comm, int ndim,
                                    const int64_t *global_dims, cnp_dtype dtype,
                                    unsigned flags)
{
  if (out) *out = NULL;
  return CNP__NOMPI("cnp_fft_dist_plan_create");
}
cnp_status cnp_fft_dist_plan_destroy(cnp_fft_dist_plan *p)
{
  return p ? CNP__NOMPI("cnp_fft_dist_plan_destroy") : CNP_OK;
}
cnp_status cnp_fft_dist_forward(cnp_fft_dist_plan *p, const cnp_array *real_in,
                                cnp_array *complex_out, cnp_stream *s)
{
  return CNP__NOMPI("cnp_fft_dist_forward");
}
cnp_status cnp_fft_dist_inverse(cnp_fft_dist_plan *p, const cnp_array *complex_in,
                                cnp_array *real_out, cnp_stream *s)
{
  return CNP__NOMPI("cnp_fft_dist_inverse");
}
cnp_status cnp_fft_dist_local(const cnp_fft_dist_plan *p, cnp_fft_dist_layout *out)
{
  return CNP__NOMPI("cnp_fft_dist_local");
}
double cnp_fft_dist_norm(const cnp_fft_dist_plan *p) { return 0.0; }
cnp_status cnp_fft_dist_wavenumbers(const cnp_fft_dist_plan *p, int axis, double length,
                                    cnp_array *k)
{
  return CNP__NOMPI("cnp_fft_dist_wavenumbers");
}
