/*
** mpi_test.h — a tiny self-checking harness for tests run under mpiexec (chibicc ASSERT
** style). Criterion forks per test, which MPI does not survive, so these are plain C.
** A failed check prints "rank R: file:line: ..." and aborts the whole job with
** MPI_Abort(…, 1), so mpiexec (and CTest) exit non-zero instead of hanging.
*/
#ifndef CNP_MPI_TEST_H
#define CNP_MPI_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <mpi.h>

#include "cnp/cnp.h"
#include "cnp/mpi_comm.h"

static int t_rank, t_size, t_checks;

#define T_FAIL(...)                                                                  \
  do {                                                                               \
    fprintf(stderr, "rank %d: %s:%d: ", t_rank, __FILE__, __LINE__);                 \
    fprintf(stderr, __VA_ARGS__);                                                    \
    fprintf(stderr, "\n  last error: %s\n", cnp_last_error());                       \
    fflush(stderr);                                                                  \
    MPI_Abort(MPI_COMM_WORLD, 1);                                                    \
  } while (0)

#define ASSERT(cond)                                                                 \
  do {                                                                               \
    t_checks++;                                                                      \
    if (!(cond)) T_FAIL("check failed: %s", #cond);                                  \
  } while (0)

/* The call must return exactly the expected status. */
#define ASSERT_ST(want, call)                                                        \
  do {                                                                               \
    cnp_status st_ = (call);                                                         \
    t_checks++;                                                                      \
    if (st_ != (want))                                                               \
      T_FAIL("%s returned %s, expected %s", #call, cnp_status_name(st_),             \
             cnp_status_name(want));                                                 \
  } while (0)

#define OK(call) ASSERT_ST(CNP_OK, call)

#define ASSERT_EQ_I(want, got)                                                       \
  do {                                                                               \
    long long w_ = (long long)(want), g_ = (long long)(got);                         \
    t_checks++;                                                                      \
    if (w_ != g_) T_FAIL("%s == %lld, expected %s == %lld", #got, g_, #want, w_);    \
  } while (0)

/* The last error detail contains `needle`. */
#define ASSERT_DETAIL(needle)                                                        \
  do {                                                                               \
    t_checks++;                                                                      \
    if (!strstr(cnp_last_error(), (needle)))                                         \
      T_FAIL("detail lacks \"%s\"", (needle));                                       \
  } while (0)

static inline void t_init(int *argc, char ***argv)
{
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &t_size);
  if (cnp_backend_select(CNP_BACKEND_HOST, 1) != CNP_OK) {
    fprintf(stderr, "cannot select the host backend\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* Run one case on every rank, with a barrier after it so cases do not interleave. */
#define RUN(fn)                                                                      \
  do {                                                                               \
    fn();                                                                            \
    MPI_Barrier(MPI_COMM_WORLD);                                                     \
    if (t_rank == 0) printf("ok %s\n", #fn);                                         \
  } while (0)

static inline int t_finish(const char *name)
{
  long long mine = t_checks, all = 0;
  MPI_Reduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (t_rank == 0) printf("%s: %d ranks, %lld checks passed\n", name, t_size, all);
  MPI_Finalize();
  return 0;
}

#endif /* CNP_MPI_TEST_H */
