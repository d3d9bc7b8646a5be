/*
** cnp/mpi.h — MPI staging and particle migration (libcnp, MPICH).
**
** Included by cnp/cnp.h. This header never includes <mpi.h>: communicators cross the API as
** an opaque cnp_comm made from the communicator's Fortran handle (MPI_Comm_c2f), which is a
** plain int in every MPI. cnp/mpi_comm.h (which does include <mpi.h>) adds inline helpers
** that take and return MPI_Comm directly.
**
** In a build without MPI every function here returns CNP_EUNSUPPORTED ("built without MPI").
**
** Error handling: cnp duplicates the caller's communicator (collective, at setup) and sets
** MPI_ERRORS_RETURN on the duplicate, so an MPI failure comes back as CNP_EMPI with the text
** of MPI_Error_string in cnp_last_error(); nothing here aborts.
**
** Allocation: only in the create calls and, lazily, at the first use of a staging object
** (cnp_mpi_stage_reserve does it up front). Per-step calls never allocate.
** See docs/mpi.md for the full description and examples.
*/
#ifndef CNP_MPI_H
#define CNP_MPI_H

#include "cnp/cnp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
** Communicators.
*/
typedef struct cnp_comm cnp_comm;

/* MPI_PROC_NULL as a rank argument ("no partner"). */
#define CNP_MPI_PROC_NULL (-1)

/* Duplicate the communicator whose Fortran handle is fcomm (MPI_Comm_c2f(comm)); collective
** over it. MPI must be initialized (CNP_ESTATE otherwise). */
cnp_status cnp_comm_create(cnp_comm **out, int fcomm);
/* Free the duplicate (collective). NULL is accepted. */
cnp_status cnp_comm_destroy(cnp_comm *c);
int        cnp_comm_rank(const cnp_comm *c);   /* -1 for an invalid handle */
int        cnp_comm_size(const cnp_comm *c);   /* -1 for an invalid handle */
/* Fortran handle of cnp's duplicate (for MPI calls on the same process group). */
int        cnp_comm_fortran(const cnp_comm *c);
/* Collective helper for "exchange with f(rank)": every rank passes the rank it sends to
** (dest, or CNP_MPI_PROC_NULL) and receives in *source the unique rank that sends to it
** (CNP_MPI_PROC_NULL if none). Two ranks sending to the same rank is CNP_EINVAL on every
** rank. Call once at setup. */
cnp_status cnp_comm_partner_source(cnp_comm *c, int dest, int *source);
/* Collective: every rank's nbytes bytes at send, gathered into recv in rank order (recv
** holds size * nbytes bytes; rank r's at r * nbytes). MPI_Allgather of bytes; allocates
** nothing (the generated `allreduce` statement combines the values in rank order). */
cnp_status cnp_comm_allgather(cnp_comm *c, const void *send, int64_t nbytes, void *recv);
/* Rank pairing of an exchange "send to dest(rank), receive from source(rank)", the check
** generated setup makes (cnpc's `exchange h to EXPR [from EXPR]`). No communication: every
** rank evaluates the formulas for all ranks, so all ranks return the same status and none
** is left waiting in its first exchange. A formula is called as f(ctx, r) and returns what
** rank r computes (ctx is the caller's, e.g. the pipeline with its rank set to r).
**   source != NULL: for every rank r whose destination d = dest(r) lies in [0, size),
**     source(d) must be r. The first r (in rank order) where it is not: CNP_EINVAL, with
**     out->bad_rank = r, bad_dest = d, bad_source = source(d). Else out->source =
**     source(this rank).
**   source == NULL: every destination must lie in [0, size) and every rank must have
**     exactly one sender, else CNP_EINVAL (out->bad_rank: the first rank whose
**     destination is outside, or else the first rank without exactly one sender; bad_dest
**     its destination or -1, bad_source its number of senders or -1). Else out->source =
**     the rank whose destination is this rank.
** Then this rank's own partners, dest(this rank) and its source, must lie in [0, size):
** CNP_ERANGE otherwise (out->bad_rank = this rank, bad_dest and bad_source its partners;
** out->source is -1 when the source is outside). Detail messages name the ranks.
** Preconditions: c valid (CNP_EINVAL / CNP_ESTATE), dest and out not NULL (CNP_EINVAL).
** On success bad_rank, bad_dest and bad_source are -1. Allocates size ints without a
** source formula (setup only; CNP_ENOMEM). */
typedef int64_t (*cnp_rank_formula)(void *ctx, int rank);
typedef struct cnp_pairing {
  int     source;                      /* the rank this rank receives from */
  int     dest;                        /* the rank this rank sends to */
  int     bad_rank;                    /* -1, or the rank the failure is about */
  int64_t bad_dest, bad_source;        /* see above */
} cnp_pairing;
cnp_status cnp_comm_check_pairing(const cnp_comm *c, cnp_rank_formula dest,
                                  cnp_rank_formula source, void *ctx, cnp_pairing *out);
/* Version string of the MPI library ("MPICH Version: 4.0.2 ..."), first line only. Needs no
** MPI initialization. */
cnp_status cnp_mpi_library_version(char *buf, size_t len);

/* ---------------------------------------------------------------------------------------
** Staging objects. One per (shape, dtype): a reusable host buffer (pinned when CUDA is
** present) between device arrays and MPI, plus a device C-order packing buffer for
** Fortran-order and strided device arrays. Host arrays in C order pass through unchanged.
*/
typedef enum cnp_cuda_aware {
  CNP_CUDA_AWARE_OFF  = 0,             /* device data always goes through the host buffer */
  CNP_CUDA_AWARE_ON   = 1,             /* device pointers go straight to MPI */
  CNP_CUDA_AWARE_AUTO = 2              /* ON if the MPI library reports CUDA support */
} cnp_cuda_aware;

typedef struct cnp_mpi_stage cnp_mpi_stage;
/* A context: the period during which MPI may touch a staged buffer. At most one per stage. */
typedef struct cnp_mpi_ctx   cnp_mpi_ctx;

/* Maximum nonblocking requests one context can hold. */
#define CNP_MPI_MAX_REQUESTS 8

/* Create a staging object for arrays of this dtype and shape (ndim 0..CNP_MAX_DIMS). comm
** is kept by reference (it must outlive the stage). Allocates no buffer yet. */
cnp_status cnp_mpi_stage_create(cnp_mpi_stage **out, cnp_comm *comm, cnp_dtype dtype,
                                int ndim, const int64_t *shape, cnp_cuda_aware mode);
/* CNP_EBUSY while a context is open. NULL is accepted. */
cnp_status cnp_mpi_stage_destroy(cnp_mpi_stage *s);
/* Allocate now what arrays on (backend, device) with this layout will need, so that the
** first step allocates nothing (generated setup code calls this). */
cnp_status cnp_mpi_stage_reserve(cnp_mpi_stage *s, const cnp_array *like);
/* 1 if device pointers go straight to MPI (mode ON, or AUTO with a CUDA-aware library). */
int        cnp_mpi_stage_cuda_aware(const cnp_mpi_stage *s);

/* Open a send context for `a` (dtype and shape must match the stage). Orders after exactly
** one producer: producer_stream (the staging copy is enqueued on it) or producer_event; with
** neither, all work on a's device is synchronized. When it returns, the context buffer holds
** a's data in C order and may be handed to MPI. Both producers non-NULL: CNP_EINVAL. A stage
** that already has an open context: CNP_EBUSY. */
cnp_status cnp_mpi_send_begin(cnp_mpi_stage *s, const cnp_array *a,
                              cnp_stream *producer_stream, cnp_event *producer_event,
                              cnp_mpi_ctx **ctx);
/* Open a receive context for `a`. The producer is the last work that used `a`; it is waited
** for before MPI writes into a's own storage (pass-through and CUDA-aware paths). The data
** received into the buffer is copied back into `a` (scattered into its view) by
** cnp_mpi_end, ordered on producer_stream when given, and completed before end returns. */
cnp_status cnp_mpi_recv_begin(cnp_mpi_stage *s, cnp_array *a,
                              cnp_stream *producer_stream, cnp_event *producer_event,
                              cnp_mpi_ctx **ctx);
/* The buffer MPI may use during the context: C-order data of the stage's shape. *bytes is
** the payload size. May point to device memory (CUDA-aware) or into `a` (pass-through). */
cnp_status cnp_mpi_ctx_buffer(cnp_mpi_ctx *ctx, void **ptr, size_t *bytes);
/* MPI operations on a context's buffer, on cnp's duplicate communicator. Send on a receive
** context (or receive on a send context) is CNP_ESTATE. */
cnp_status cnp_mpi_send(cnp_mpi_ctx *ctx, int dest, int tag);
cnp_status cnp_mpi_recv(cnp_mpi_ctx *ctx, int source, int tag);
cnp_status cnp_mpi_isend(cnp_mpi_ctx *ctx, int dest, int tag);
cnp_status cnp_mpi_irecv(cnp_mpi_ctx *ctx, int source, int tag);
/* MPI_Sendrecv between a send context and a receive context (of two stages). */
cnp_status cnp_mpi_sendrecv(cnp_mpi_ctx *send_ctx, int dest, int sendtag,
                            cnp_mpi_ctx *recv_ctx, int source, int recvtag);
/* Wait for the context's pending nonblocking requests. */
cnp_status cnp_mpi_wait(cnp_mpi_ctx *ctx);
/* Close the context: waits for pending requests (a closed context never leaves MPI work
** behind), then for a receive context copies the data back into the array and waits for
** that copy. The stage is free again even when an error is returned. */
cnp_status cnp_mpi_end(cnp_mpi_ctx *ctx);

/* One-call halo exchange through one stage: sends `a` to dest and replaces it with the data
** received from source (MPI_Sendrecv_replace semantics), staging both ways. Use
** cnp_comm_partner_source at setup to find source for a ring-like dest. */
cnp_status cnp_mpi_exchange(cnp_mpi_stage *s, cnp_array *a, int dest, int source, int tag,
                            cnp_stream *producer_stream, cnp_event *producer_event);

/* Wait for the producer of `a` before MPI touches it: producer_stream or producer_event
** (exactly one), or with neither, every stream of a's device. Both non-NULL: CNP_EINVAL. */
cnp_status cnp_synchronize_for_mpi(const cnp_array *a, cnp_stream *producer_stream,
                                   cnp_event *producer_event);

/* ---------------------------------------------------------------------------------------
** Particle migration. Fields are (N,) or component-major (k, N) C-contiguous arrays sharing
** one capacity N (their last extent). Rows [0, n) are live. A step moves every row whose
** destination is another rank there (counts exchanged first with MPI_Alltoall), compacts
** the rows that stay to the front in their original order, appends the arrivals (ordered
** by source rank, then by their order on the source) and returns the new count.
** Either every rank completes the step or none moves anything: errors found on any rank
** (bad destination, capacity overflow, invalid arguments) are agreed on with
** MPI_Allreduce before data moves, so no particle is lost or duplicated.
*/
typedef struct cnp_migrate_plan cnp_migrate_plan;

/* Fields describe dtype/shape/backend of the arrays the steps will pass (same order); the
** capacity N is their common last extent. Allocates everything a step needs: a destination
** buffer and, for host fields, leaver lists and packed send/receive buffers of N rows; for
** device fields the sort workspace, sort keys, one receive buffer of N rows per field
** component and, without CUDA-aware MPI, pinned host send/receive buffers. Local (no
** communication); mode as for staging objects. */
cnp_status cnp_migrate_plan_create(cnp_migrate_plan **out, cnp_comm *comm,
                                   const cnp_array *fields, int n_fields,
                                   cnp_cuda_aware mode);
cnp_status cnp_migrate_plan_destroy(cnp_migrate_plan *p);
int64_t    cnp_migrate_plan_capacity(const cnp_migrate_plan *p);

/* Statistics of the last successful step of a plan. */
typedef struct cnp_migrate_stats {
  int64_t n_before, n_stay, n_sent, n_received, n_after;
} cnp_migrate_stats;
cnp_status cnp_migrate_last_stats(const cnp_migrate_plan *p, cnp_migrate_stats *out);

/* Collective over the plan's communicator. dest: int32 or int64 (N,), contiguous, on the
** fields' backend, dest[i] in [0, size) for i < n (the own rank means "stays"). The
** producer (one stream or event, or neither: the device is synchronized) covers dest and
** the fields. On success *n_out is the new count.
** Errors (same status on every rank): CNP_ERANGE (a destination out of range on some rank),
** CNP_EOVERFLOW (some rank would hold more than N rows), CNP_EINVAL/ESHAPE/EDTYPE (bad
** arguments on some rank), CNP_EMPI. On error the fields and *n_out are left unchanged. */
cnp_status cnp_migrate(cnp_migrate_plan *p, cnp_array *fields, int n_fields, int64_t n,
                       const cnp_array *dest, cnp_stream *producer_stream,
                       cnp_event *producer_event, int64_t *n_out);

/* A regular Cartesian decomposition of the box [lo, hi) into dims[0]*...*dims[ndim-1]
** ranks, numbered in C order (the last axis fastest, as MPI_Cart_create does). */
typedef struct cnp_domain {
  int    ndim;                         /* 1..3 */
  int    dims[3];                      /* ranks per axis; the product is the comm size */
  double lo[3], hi[3];                 /* global box, hi > lo */
  int    periodic[3];                  /* 1: positions wrap; 0: outside is CNP_ERANGE */
} cnp_domain;

/* Rank owning position x[0..ndim-1]; CNP_ERANGE outside a non-periodic axis. */
cnp_status cnp_domain_rank(const cnp_domain *d, const double *x, int *rank);
/* dest[i] = owner of particle i < n. pos: either n_pos == ndim arrays of shape (N,), or one
** (ndim, N) component-major array; float32 or float64, host memory. Local (no MPI). A
** position outside a non-periodic axis is CNP_ERANGE, and dest is then left unchanged. */
cnp_status cnp_domain_dest(const cnp_domain *d, const cnp_array *pos, int n_pos, int64_t n,
                           cnp_array *dest);
/* cnp_domain_dest into the plan's own destination array, then cnp_migrate, with errors in
** the first part agreed on like the others. Positions must be host arrays. */
cnp_status cnp_migrate_by_domain(cnp_migrate_plan *p, const cnp_domain *d,
                                 const cnp_array *pos, int n_pos, cnp_array *fields,
                                 int n_fields, int64_t n, cnp_stream *producer_stream,
                                 cnp_event *producer_event, int64_t *n_out);

/* ---------------------------------------------------------------------------------------
** Grid halo exchange (docs/grids.md). A grid split in slabs along its axis 0 over the ranks
** of comm, in rank order: rank r holds global planes [off_r, off_r + n0_r) as a local
** C-contiguous array of shape (n0_r + 2g, n1, ...) (ndim 1..4, any dtype, host or CUDA):
** planes [0, g) are ghosts of the lower neighbour's last g planes, [g, g + n0_r) the
** interior, [g + n0_r, n0_r + 2g) ghosts of the upper neighbour's first g planes. The
** neighbours are r - 1 and r + 1, modulo the size when periodic (a single rank is then its
** own neighbour); without periodic, rank 0 has no lower and the last rank no upper
** neighbour, and those ghosts are left unchanged. n0_r >= g on every rank.
**   create    like: the local array's dtype/shape/backend; ghost g >= 1. Allocates, for CUDA
**             arrays, host staging buffers of 4g planes (device data goes through them);
**             local, no communication.
**   exchange  fills the ghosts from the neighbours' interiors (two MPI_Sendrecv, tags
**             0x6e01/0x6e02); collective over comm. The interior is not changed.
**   accumulate the reverse, for deposition with ghost cells: each rank's ghost planes are
**             added (float32/float64, else CNP_EDTYPE) into the neighbour's matching
**             interior planes (lower ghosts into the lower neighbour's last g planes, upper
**             ghosts into the upper's first g); the ghosts themselves are left unchanged.
**             A missing neighbour (non-periodic ends) receives nothing.
** s: the stream the array's producer used (CUDA: synchronized before MPI; NULL: the device's
** default stream). a must match like (CNP_ESHAPE / CNP_EDTYPE / CNP_EDEVICE, CNP_ELAYOUT
** for non-contiguous). Nothing is allocated per call. Argument errors are agreed across the
** ranks (one MPI_Allreduce): if any rank's checks fail, every rank returns that status before
** any data moves. Only a handle that is not a halo fails locally (it has no communicator). */
typedef struct cnp_halo cnp_halo;

cnp_status cnp_halo_create(cnp_halo **out, cnp_comm *comm, const cnp_array *like, int ghost,
                           int periodic);
cnp_status cnp_halo_destroy(cnp_halo *h);                 /* NULL is a no-op */
cnp_status cnp_halo_exchange(cnp_halo *h, cnp_array *a, cnp_stream *s);
cnp_status cnp_halo_accumulate(cnp_halo *h, cnp_array *a, cnp_stream *s);

/* ---------------------------------------------------------------------------------------
** Slab decomposition (docs/mpi.md): n planes along axis 0 split over `size` ranks in rank
** order, rank r holding the contiguous block [offset_r, offset_r + count_r) with
** count_r = n / size + (r < n % size), so the first n % size ranks hold one plane more
** (uneven splits; a rank may hold none when n < size). The distributed FFT below uses
** this split (cnp_halo takes any split with n0_r >= g). Local: no communication, no
** allocation.
**   cnp_slab_range  offset and count of rank `rank` (either output may be NULL).
**   cnp_slab_owner  the rank holding global plane `plane` in [0, n) (CNP_ERANGE outside).
**   cnp_slab_dest   the DEST field of cnp_migrate for a slab-decomposed grid: dest[i] = the
**                   owner of plane floor(x[i]) mod n for i < count, x the particles' axis-0
**                   positions in cell units (grid point j at x = j, periodic with period n:
**                   a position outside [0, n) wraps). x: float32/float64 (N,), dest: int32
**                   or int64 (N,), both contiguous host arrays, count <= N. A non-finite
**                   position is CNP_ERANGE (dest unchanged).
** Errors: n < 1, size < 1, a rank outside [0, size), NULL outputs: CNP_EINVAL; wrong
** dtypes/shapes as named; no output changes on any error. */
cnp_status cnp_slab_range(int64_t n, int size, int rank, int64_t *offset, int64_t *count);
cnp_status cnp_slab_owner(int64_t n, int size, int64_t plane, int *rank);
cnp_status cnp_slab_dest(int64_t n, int size, const cnp_array *x, int64_t count,
                         cnp_array *dest);

/* ---------------------------------------------------------------------------------------
** Distributed real-to-complex FFT of a 2D or 3D grid split in slabs along axis 0 over the
** ranks of comm (cnp_slab_range split of dims[0]). Built from FFTW's serial plans and
** MPI_Alltoallv transposes (docs/mpi.md, "Distributed FFT"); host arrays only (a CUDA
** array is CNP_EUNSUPPORTED), float32 or float64, a build without FFTW answers
** CNP_EUNSUPPORTED at create.
**   real slab     rank r: (n0_r, N1) or (n0_r, N1, N2) float, C-contiguous: global planes
**                 [off_r, off_r + n0_r) of the (N0, N1[, N2]) grid.
**   spectral      distributed along axis 1, axis order kept: rank r holds the C-contiguous
**   block         complex block (N0, m1_r) in 2D, (N0, m1_r, N2/2+1) in 3D, i.e. global
**                 indices [moff_r, moff_r + m1_r) along axis 1 of the r2c array (whose
**                 axis 1 has N1/2+1 entries in 2D, N1 in 3D), with (moff_r, m1_r) the
**                 cnp_slab_range split of that extent. All of axis 0 is local, so the
**                 forward transform ends after one transpose (as FFTW-MPI's
**                 FFTW_MPI_TRANSPOSED_OUT, but without permuting the axes).
** Values are those of the serial cnp_fft_forward of the whole grid (unnormalized; inverse
** of forward is N0*N1[*N2] times the input; cnp_fft_dist_norm gives the 1/N).
**   flags: CNP_FFT_MEASURE (FFTW_MEASURE planning at create), CNP_FFT_DESTROY_INPUT
**          (the inverse may overwrite its spectral input).
** create is collective (it checks that every rank passed the same dims, dtype and flags)
** and allocates everything: FFTW plans and three staging buffers (two of n0_r * L1 * L2
** complex entries, one of the spectral block; L1, L2 the r2c extents of axes 1, 2).
** forward / inverse are collective; each is one local FFT pass, a pack or unpack through
** the staging buffers, one MPI_Alltoallv and a second local FFT pass; they allocate
** nothing. Their arguments are checked on every rank and the result agreed on with one
** MPI_Allreduce before any data moves: a bad argument on any rank fails the call on every
** rank (the failing rank's status and message; the others name that rank), with no array
** changed. s: NULL or a host stream. */
typedef struct cnp_fft_dist_plan cnp_fft_dist_plan;

typedef struct cnp_fft_dist_layout {
  int     ndim;                        /* 2 or 3 */
  int     rank, size;                  /* this rank, ranks in the plan */
  int64_t global_real[3];              /* N0, N1[, N2] */
  int64_t global_complex[3];           /* N0, N1/2+1 (2D) | N0, N1, N2/2+1 (3D) */
  int64_t real_shape[3];               /* local real slab: n0_r, N1[, N2] */
  int64_t real_offset;                 /* its first global plane along axis 0 */
  int64_t complex_shape[3];            /* local spectral block: N0, m1_r[, N2/2+1] */
  int64_t complex_offset;              /* its first global index along axis 1 */
  int     complex_axis;                /* the split axis of the spectral block: 1 */
} cnp_fft_dist_layout;

cnp_status cnp_fft_dist_plan_create(cnp_fft_dist_plan **out, cnp_comm *comm, int ndim,
                                    const int64_t *global_dims, cnp_dtype dtype,
                                    unsigned flags);
cnp_status cnp_fft_dist_plan_destroy(cnp_fft_dist_plan *p);      /* NULL is a no-op */
/* real_in (local real slab) -> complex_out (local spectral block); real_in unchanged. */
cnp_status cnp_fft_dist_forward(cnp_fft_dist_plan *p, const cnp_array *real_in,
                                cnp_array *complex_out, cnp_stream *s);
/* complex_in (local spectral block) -> real_out (local real slab). */
cnp_status cnp_fft_dist_inverse(cnp_fft_dist_plan *p, const cnp_array *complex_in,
                                cnp_array *real_out, cnp_stream *s);
/* The local parts of this rank (out not NULL). */
cnp_status cnp_fft_dist_local(const cnp_fft_dist_plan *p, cnp_fft_dist_layout *out);
/* 1/N for the whole grid (0 for an invalid plan). */
double     cnp_fft_dist_norm(const cnp_fft_dist_plan *p);
/* Angular wave numbers of the local spectral block along `axis` (0..ndim-1) of a box of
** the given physical length (cnp_fft_wavenumber values): k, a contiguous host float64 or
** float32 array of complex_shape[axis] entries, gets the values of global indices
** [0, N0) on axis 0, [complex_offset, complex_offset + m1_r) on axis 1, [0, N2/2+1) on
** axis 2 of 3D (the halved last axis: axis 1 of 2D and axis 2 of 3D use rfftfreq values,
** the others fftfreq). Local; allocates nothing. */
cnp_status cnp_fft_dist_wavenumbers(const cnp_fft_dist_plan *p, int axis, double length,
                                    cnp_array *k);

#ifdef __cplusplus
}
#endif

#endif /* CNP_MPI_H */
