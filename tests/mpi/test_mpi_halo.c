/*
** test_mpi_halo.c — ghost-layer halo exchange of a slab-decomposed grid (cnp_halo_*, runtime/
** mpi_halo.c) at 2 and 4 ranks: a global 2D grid whose value is a function of the global
** index is split in uneven slabs along axis 0; after cnp_halo_exchange every ghost plane
** holds the neighbour's value (periodic: wrapping around; non-periodic: the end ghosts
** unchanged), and the interior is untouched. cnp_halo_accumulate adds ghost planes into
** the owners' planes: a deposition onto ghost cells then sums to the same grid as one rank.
** Also ghost width 2, float32, int64 exchange, and bad arguments.
*/
#include <stdlib.h>

#include "mpi_test.h"

static cnp_comm *comm;

/* Slab of rank r: n0_r planes starting at off_r, for a global extent N (uneven split). */
static void slab(int64_t N, int r, int64_t *off, int64_t *n0)
{
  int64_t base = N / t_size, extra = N % t_size;
  *n0 = base + (r < extra);
  *off = r * base + (r < extra ? r : extra);
}

static double value(int64_t gi, int64_t j) { return 1000.0 * (double)gi + (double)j; }

static void check_exchange(int64_t N, int64_t n1, int g, int periodic, cnp_dtype t)
{
  int64_t off, n0;
  slab(N, t_rank, &off, &n0);
  int64_t shape[2] = {n0 + 2 * g, n1};
  cnp_array a;
  OK(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, t, 2, shape, CNP_ORDER_C, 0));
  for (int64_t p = 0; p < shape[0]; p++)
    for (int64_t j = 0; j < n1; j++) {
      int interior = p >= g && p < g + n0;
      double v = interior ? value(off + p - g, j) : -1.0;
      if (t == CNP_FLOAT32) ((float *)a.data)[p * n1 + j] = (float)v;
      else if (t == CNP_INT64) ((int64_t *)a.data)[p * n1 + j] = (int64_t)v;
      else ((double *)a.data)[p * n1 + j] = v;
    }
  cnp_halo *h;
  OK(cnp_halo_create(&h, comm, &a, g, periodic));
  OK(cnp_halo_exchange(h, &a, NULL));
  for (int64_t p = 0; p < shape[0]; p++)
    for (int64_t j = 0; j < n1; j++) {
      int64_t gi = off + p - g;
      double want;
      if (p >= g && p < g + n0) want = value(gi, j);
      else if (gi < 0 || gi >= N) want = periodic ? value((gi + N) % N, j) : -1.0;
      else want = value(gi, j);
      double got = t == CNP_FLOAT32 ? ((float *)a.data)[p * n1 + j]
                 : t == CNP_INT64   ? (double)((int64_t *)a.data)[p * n1 + j]
                                    : ((double *)a.data)[p * n1 + j];
      if (got != want)
        T_FAIL("N %lld g %d periodic %d: plane %lld (global %lld) col %lld = %g, want %g",
               (long long)N, g, periodic, (long long)p, (long long)gi, (long long)j, got, want);
      t_checks++;
    }
  OK(cnp_halo_destroy(h));
  cnp_array_free(&a);
}

static void test_exchange(void)
{
  check_exchange(4 * t_size + 3, 5, 1, 1, CNP_FLOAT64);
  check_exchange(4 * t_size + 3, 5, 1, 0, CNP_FLOAT64);
  check_exchange(3 * t_size + 1, 4, 2, 1, CNP_FLOAT32);
  check_exchange(2 * t_size, 3, 2, 0, CNP_INT64);
}

/* Ghost cells for deposition: every rank adds 1 to each plane of [off - g, off + n0 + g)
** (ghosts included); after accumulate the interior holds the global count of additions. */
static void test_accumulate(void)
{
  for (int periodic = 0; periodic < 2; periodic++) {
    int g = 1;
    int64_t N = 3 * t_size + 2, n1 = 4, off, n0;
    slab(N, t_rank, &off, &n0);
    int64_t shape[2] = {n0 + 2 * g, n1};
    cnp_array a;
    OK(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shape, CNP_ORDER_C, 0));
    for (int64_t q = 0; q < shape[0] * n1; q++) ((double *)a.data)[q] = 1.0;
    cnp_halo *h;
    OK(cnp_halo_create(&h, comm, &a, g, periodic));
    OK(cnp_halo_accumulate(h, &a, NULL));
    for (int64_t p = g; p < g + n0; p++) {
      int64_t gi = off + p - g;
      /* plane gi is written by its owner and, as a ghost, by the ranks next to it */
      double want = 1.0;
      if (p == g && (periodic || t_rank > 0)) want += 1.0;
      if (p == g + n0 - 1 && (periodic || t_rank < t_size - 1)) want += 1.0;
      for (int64_t j = 0; j < n1; j++) {
        double got = ((double *)a.data)[p * n1 + j];
        if (got != want)
          T_FAIL("accumulate periodic %d: global plane %lld = %g, want %g", periodic,
                 (long long)gi, got, want);
        t_checks++;
      }
    }
    /* ghosts left as they were */
    ASSERT(((double *)a.data)[0] == 1.0);
    OK(cnp_halo_destroy(h));
    cnp_array_free(&a);
  }
}

static void test_bad_arguments(void)
{
  int64_t shape[2] = {6, 3}, small[2] = {2, 3}, other[2] = {6, 4};
  cnp_array a, b, c, ai;
  OK(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shape, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&b, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, small, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&c, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, other, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&ai, CNP_BACKEND_HOST, 0, CNP_INT32, 2, shape, CNP_ORDER_C, 0));
  cnp_halo *h = (cnp_halo *)&h;
  ASSERT_ST(CNP_EINVAL, cnp_halo_create(NULL, comm, &a, 1, 1));
  ASSERT_ST(CNP_EINVAL, cnp_halo_create(&h, comm, &a, 0, 1));
  ASSERT(h == NULL);
  ASSERT_ST(CNP_ESHAPE, cnp_halo_create(&h, comm, &b, 1, 1));      /* 0 interior planes */
  ASSERT_ST(CNP_ESHAPE, cnp_halo_create(&h, comm, &a, 3, 1));      /* 0 interior < 3 */
  ASSERT_ST(CNP_EINVAL, cnp_halo_create(&h, NULL, &a, 1, 1));
  OK(cnp_halo_create(&h, comm, &a, 1, 1));
  ASSERT_ST(CNP_ESHAPE, cnp_halo_exchange(h, &c, NULL));
  ASSERT_ST(CNP_EDTYPE, cnp_halo_exchange(h, &ai, NULL));
  ASSERT_ST(CNP_EINVAL, cnp_halo_exchange(h, NULL, NULL));
  ASSERT_ST(CNP_EINVAL, cnp_halo_exchange(NULL, &a, NULL));
  /* one rank's bad argument fails the call on every rank (agreed; no rank is left waiting
  ** in MPI_Sendrecv) and changes no rank's array */
  for (int64_t k = 0; k < 18; k++) ((double *)a.data)[k] = (double)k;
  ASSERT_ST(CNP_ESHAPE, cnp_halo_exchange(h, t_rank == 0 ? &c : &a, NULL));
  ASSERT_ST(CNP_EDTYPE, cnp_halo_accumulate(h, t_rank == t_size - 1 ? &ai : &a, NULL));
  for (int64_t k = 0; k < 18; k++) ASSERT(((double *)a.data)[k] == (double)k);
  OK(cnp_halo_exchange(h, &a, NULL));                /* and the next good call works */
  OK(cnp_halo_destroy(h));
  OK(cnp_halo_create(&h, comm, &ai, 1, 1));
  ASSERT_ST(CNP_EDTYPE, cnp_halo_accumulate(h, &ai, NULL));
  OK(cnp_halo_exchange(h, &ai, NULL));
  OK(cnp_halo_destroy(h));
  OK(cnp_halo_destroy(NULL));
  cnp_array_free(&a); cnp_array_free(&b); cnp_array_free(&c); cnp_array_free(&ai);
}

int main(int argc, char **argv)
{
  t_init(&argc, &argv);
  OK(cnp_comm_create_mpi(&comm, MPI_COMM_WORLD));
  RUN(test_exchange);
  RUN(test_accumulate);
  RUN(test_bad_arguments);
  OK(cnp_comm_destroy(comm));
  return t_finish("test_mpi_halo");
}
