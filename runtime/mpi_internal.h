/*
** mpi_internal.h — private declarations shared by runtime/mpi_*.c (built only with MPI).
*/
#ifndef CNP_MPI_INTERNAL_H
#define CNP_MPI_INTERNAL_H

#include <mpi.h>

#include "internal.h"
#include "cnp/mpi.h"

#define CNP__MAGIC_COMM    0x434e5043u  /* "CNPC" */
#define CNP__MAGIC_STAGE   0x434e5047u  /* "CNPG" */
#define CNP__MAGIC_MIGRATE 0x434e5052u  /* "CNPR" */
#define CNP__MAGIC_HALO    0x434e5048u  /* "CNPH" */

struct cnp_comm {
  uint32_t magic;
  MPI_Comm comm;                       /* our duplicate, MPI_ERRORS_RETURN */
  int      rank, size;
};

/* Validate a communicator handle and that MPI is still usable. */
cnp_status cnp__comm_check(const cnp_comm *c, const char *op);
/* One MPI_Allreduce(MINLOC) of every rank's local status over c: CNP_OK when all are fine,
** else the lowest failing status on every rank (a rank that failed with it keeps its own
** message; the others get "rank R failed WHEN (...); nothing was DONE"). */
cnp_status cnp__comm_agree(const cnp_comm *c, cnp_status local, const char *op,
                           const char *when, const char *done);
/* CNP_EMPI with "<what> failed: <MPI_Error_string> (MPI error class N)". */
cnp_status cnp__mpi_fail(int mpierr, const char *op, const char *what);
/* CNP_ESTATE unless MPI is initialized and not finalized. */
cnp_status cnp__mpi_ready(const char *op);
/* CNP_MPI_PROC_NULL -> MPI_PROC_NULL; other ranks unchanged. */
static inline int cnp__mpi_rank(int r) { return r == CNP_MPI_PROC_NULL ? MPI_PROC_NULL : r; }
/* The predefined MPI datatype moving one element of t (bool -> MPI_UINT8_T, float16 ->
** MPI_UINT16_T: MPI only transports them). MPI_DATATYPE_NULL for an invalid dtype. */
MPI_Datatype cnp__mpi_type(cnp_dtype t);
/* 1 if the MPI library says it can take CUDA device pointers. */
int cnp__mpi_cuda_aware_library(void);
/* Test hook: while on != 0, a migration step of host fields fails its payload exchange with
** CNP_EMPI instead of calling MPI (set it on every rank). Tests only. */
void cnp__migrate_fail_exchange(int on);

#endif /* CNP_MPI_INTERNAL_H */
