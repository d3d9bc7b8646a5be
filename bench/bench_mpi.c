/*
** bench_mpi.c — MPI staging throughput and particle migration rate, each printed next to a
** plain MPI_Sendrecv of the same bytes measured in the same run.
**
**   mpiexec -n 2 build/bench/bench_mpi [--particles N] [--leave PERCENT] [--steps S]
**                                      [--staging 0|1]
**
** Host arrays (this is what a machine without a GPU can measure). Times are the slowest
** rank's; staging reports the best of 7 repetitions, migration the best step and the mean
** step. Rates are per rank.
*/
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "cnp/cnp.h"
#include "cnp/mpi_comm.h"

static int rank, size;

static void die(const char *what, cnp_status st)
{
  fprintf(stderr, "rank %d: %s: %s (%s)\n", rank, what, cnp_status_name(st), cnp_last_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CHECK(call)                                                                  \
  do {                                                                               \
    cnp_status st_ = (call);                                                         \
    if (st_ != CNP_OK) die(#call, st_);                                              \
  } while (0)

/* Slowest rank's elapsed time since t0 (every rank gets it). */
static double max_elapsed(double t0)
{
  double t = MPI_Wtime() - t0, m = 0;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

/* ---- staging ------------------------------------------------------------------------------ */

typedef enum { PLAIN, CNP_CONTIG, CNP_STRIDED } stage_kind;

/* Seconds per ring exchange of `bytes` (send right, receive left). */
static double time_ring(cnp_comm *comm, stage_kind kind, int64_t n_doubles, int iters)
{
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  double *sbuf = calloc((size_t)n_doubles * 2, sizeof(double));
  double *rbuf = calloc((size_t)n_doubles * 2, sizeof(double));
  if (!sbuf || !rbuf) die("calloc", CNP_ENOMEM);
  for (int64_t i = 0; i < 2 * n_doubles; i++) sbuf[i] = (double)i, rbuf[i] = -1.0;
  cnp_array a, b;
  cnp_mpi_stage *ss = NULL, *rs = NULL;
  int64_t shape[1] = {n_doubles}, strided[1] = {16};
  if (kind != PLAIN) {
    CHECK(cnp_array_wrap(&a, sbuf, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, shape,
                         kind == CNP_STRIDED ? strided : NULL));
    CHECK(cnp_array_wrap(&b, rbuf, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, shape,
                         kind == CNP_STRIDED ? strided : NULL));
    CHECK(cnp_mpi_stage_create(&ss, comm, CNP_FLOAT64, 1, shape, CNP_CUDA_AWARE_AUTO));
    CHECK(cnp_mpi_stage_create(&rs, comm, CNP_FLOAT64, 1, shape, CNP_CUDA_AWARE_AUTO));
    CHECK(cnp_mpi_stage_reserve(ss, &a));
    CHECK(cnp_mpi_stage_reserve(rs, &b));
  }
  double best = 1e30;
  for (int rep = 0; rep < 7; rep++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
      if (kind == PLAIN) {
        MPI_Sendrecv(sbuf, (int)n_doubles, MPI_DOUBLE, right, 1, rbuf, (int)n_doubles,
                     MPI_DOUBLE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        cnp_mpi_ctx *sc, *rc;
        CHECK(cnp_mpi_send_begin(ss, &a, NULL, NULL, &sc));
        CHECK(cnp_mpi_recv_begin(rs, &b, NULL, NULL, &rc));
        CHECK(cnp_mpi_sendrecv(sc, right, 1, rc, left, 1));
        CHECK(cnp_mpi_end(sc));
        CHECK(cnp_mpi_end(rc));
      }
    }
    double t = max_elapsed(t0) / iters;
    if (t < best) best = t;
  }
  if (kind != PLAIN) {
    CHECK(cnp_mpi_stage_destroy(ss));
    CHECK(cnp_mpi_stage_destroy(rs));
  }
  free(sbuf);
  free(rbuf);
  return best;
}

static void bench_staging(cnp_comm *comm)
{
  static const int64_t sizes[] = {8 * 1024, 128 * 1024, 1024 * 1024};   /* doubles */
  if (rank == 0)
    printf("%-10s %12s %16s %16s %16s\n", "staging", "bytes", "plain Sendrecv", "cnp contiguous",
           "cnp strided");
  /* Warm-up: the first messages set up the transport's connections and buffers. */
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) time_ring(comm, PLAIN, sizes[k], 4);
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    int64_t n = sizes[k];
    int iters = (int)(4 * 1024 * 1024 / (n * 8)) + 2;
    double tp = time_ring(comm, PLAIN, n, iters);
    double tc = time_ring(comm, CNP_CONTIG, n, iters);
    double ts = time_ring(comm, CNP_STRIDED, n, iters);
    double gb = (double)n * 8 / 1e9;
    if (rank == 0)
      printf("%-10s %12lld %11.2f GB/s %11.2f GB/s %11.2f GB/s\n", "", (long long)(n * 8),
             gb / tp, gb / tc, gb / ts);
  }
}

/* ---- migration ---------------------------------------------------------------------------- */

static uint64_t rng;
static uint32_t rnd(void)
{
  rng = rng * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng >> 33);
}

static void bench_migration(cnp_comm *comm, int64_t n, int leave_pct, int steps)
{
  int64_t cap = n * 2, shape3[2] = {3, cap};
  cnp_array f[4], dest;
  CHECK(cnp_array_alloc_on(&f[0], CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shape3, CNP_ORDER_C, 0));
  CHECK(cnp_array_alloc_on(&f[1], CNP_BACKEND_HOST, 0, CNP_FLOAT32, 2, shape3, CNP_ORDER_C, 0));
  CHECK(cnp_array_alloc_on(&f[2], CNP_BACKEND_HOST, 0, CNP_INT64, 1, &cap, CNP_ORDER_C, 0));
  CHECK(cnp_array_alloc_on(&f[3], CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &cap, CNP_ORDER_C, 0));
  CHECK(cnp_array_alloc_on(&dest, CNP_BACKEND_HOST, 0, CNP_INT32, 1, &cap, CNP_ORDER_C, 0));
  const size_t row_bytes = 3 * 8 + 3 * 4 + 8 + 8;
  cnp_migrate_plan *plan;
  CHECK(cnp_migrate_plan_create(&plan, comm, f, 4, CNP_CUDA_AWARE_AUTO));
  int64_t *id = f[2].data;
  for (int64_t i = 0; i < n; i++) id[i] = (int64_t)rank * n + i;
  char *pbuf = malloc((size_t)cap * row_bytes), *qbuf = malloc((size_t)cap * row_bytes);
  if (!pbuf || !qbuf) die("malloc", CNP_ENOMEM);
  rng = 77u + (uint64_t)rank;
  int32_t *d = dest.data;
  double t_mig = 0, t_plain = 0, best_mig = 1e30, best_plain = 1e30;
  int64_t moved = 0, cur = n, processed = 0;
  for (int s = 0; s < steps; s++) {
    for (int64_t i = 0; i < cur; i++) {
      int go = (int)(rnd() % 100) < leave_pct && size > 1;
      int r = go ? (int)(rnd() % (uint32_t)(size - 1)) : 0;
      d[i] = go ? (rank + 1 + r) % size : rank;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    int64_t n_new = 0;
    CHECK(cnp_migrate(plan, f, 4, cur, &dest, NULL, NULL, &n_new));
    double tm = max_elapsed(t0);
    t_mig += tm;
    if (tm < best_mig) best_mig = tm;
    cnp_migrate_stats st;
    CHECK(cnp_migrate_last_stats(plan, &st));
    /* The same bytes as a plain ring Sendrecv (no counting, packing or compaction). */
    int bytes = (int)((size_t)st.n_sent * row_bytes), rbytes = 0;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Sendrecv(&bytes, 1, MPI_INT, right, 2, &rbytes, 1, MPI_INT, left, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    MPI_Sendrecv(pbuf, bytes, MPI_BYTE, right, 3, qbuf, rbytes, MPI_BYTE, left, 3,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double tp = max_elapsed(t0);
    t_plain += tp;
    if (tp < best_plain) best_plain = tp;
    moved += st.n_sent;
    processed += cur;
    cur = n_new;
  }
  int64_t all_moved = 0;
  MPI_Reduce(&moved, &all_moved, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    double per_step = t_mig / steps, plain = t_plain / steps;
    printf("migration  %lld particles/rank (%zu B/row), %d%% leave, %d steps, %.1f MB sent "
           "per step (all ranks)\n", (long long)n, row_bytes, leave_pct, steps,
           (double)all_moved * (double)row_bytes / steps / 1e6);
    printf("%-10s cnp_migrate     best %8.2f ms/step = %6.1f M particles/s/rank, "
           "mean %8.2f ms/step\n", "", best_mig * 1e3,
           (double)processed / size / steps / best_mig / 1e6, per_step * 1e3);
    printf("%-10s plain Sendrecv  best %8.2f ms/step (same bytes),             "
           "mean %8.2f ms/step\n", "", best_plain * 1e3, plain * 1e3);
  }
  CHECK(cnp_migrate_plan_destroy(plan));
  for (int k = 0; k < 4; k++) CHECK(cnp_array_free(&f[k]));
  CHECK(cnp_array_free(&dest));
  free(pbuf);
  free(qbuf);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int64_t n = 1000000;
  int leave = 10, steps = 10, staging = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--particles")) n = atoll(argv[i + 1]);
    else if (!strcmp(argv[i], "--leave")) leave = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--steps")) steps = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--staging")) staging = atoi(argv[i + 1]);
  }
  CHECK(cnp_backend_select(CNP_BACKEND_HOST, 0));
  cnp_comm *comm;
  CHECK(cnp_comm_create_mpi(&comm, MPI_COMM_WORLD));
  char ver[256];
  CHECK(cnp_mpi_library_version(ver, sizeof ver));
  if (rank == 0) printf("bench_mpi: %d ranks, %s, host arrays\n", size, ver);
  if (staging) bench_staging(comm);
  bench_migration(comm, n, leave, steps);
  CHECK(cnp_comm_destroy(comm));
  MPI_Finalize();
  return 0;
}
