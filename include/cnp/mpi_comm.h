/*
** cnp/mpi_comm.h — MPI_Comm conveniences for cnp/mpi.h. Includes <mpi.h>, so only code
** that is compiled with MPI includes it; cnp/mpi.h itself never needs <mpi.h>.
**
**   cnp_comm *comm;
**   cnp_comm_create_mpi(&comm, MPI_COMM_WORLD);   // duplicates, sets MPI_ERRORS_RETURN
**   MPI_Comm mine = cnp_comm_mpi(comm);           // cnp's duplicate
*/
#ifndef CNP_MPI_COMM_H
#define CNP_MPI_COMM_H

#include <mpi.h>

#include "cnp/mpi.h"

static inline cnp_status cnp_comm_create_mpi(cnp_comm **out, MPI_Comm comm)
{
  return cnp_comm_create(out, (int)MPI_Comm_c2f(comm));
}

static inline MPI_Comm cnp_comm_mpi(const cnp_comm *c)
{
  return MPI_Comm_f2c((MPI_Fint)cnp_comm_fortran(c));
}

#endif /* CNP_MPI_COMM_H */
