/*
** test_mpi_device.c — the CUDA paths of staging and migration, under mpiexec -n 2.
**
** GPU test policy: without a usable CUDA device every rank exits 77 (CTest: skipped), unless
** CNP_REQUIRE_CUDA=1, which makes that a failure. All ranks use device 0 of their node.
** Device data is filled and checked through host copies (cnp_array_copy).
*/
#include "mpi_test.h"

#include <stdlib.h>

static cnp_comm *comm;
static int right, left;

static double val(int r, int64_t i) { return r * 1000.0 + (double)i + 0.5; }

/* Device array of shape/order filled from a host array with val(rank, C-order index). */
static void device_filled(cnp_array *d, int ndim, const int64_t *shape, cnp_order order)
{
  cnp_array h;
  OK(cnp_array_alloc_on(&h, CNP_BACKEND_HOST, 0, CNP_FLOAT64, ndim, shape, CNP_ORDER_C, 0));
  for (int64_t i = 0; i < cnp_array_numel(&h); i++) ((double *)h.data)[i] = val(t_rank, i);
  OK(cnp_array_alloc_on(d, CNP_BACKEND_CUDA, 0, CNP_FLOAT64, ndim, shape, order, 0));
  OK(cnp_array_copy(d, &h, NULL));
  OK(cnp_device_synchronize());
  OK(cnp_array_free(&h));
}

/* Every element of device view d (any layout) equals val(from, C-order index). */
static void check_device(const cnp_array *d, int from)
{
  cnp_array h;
  OK(cnp_array_alloc_on(&h, CNP_BACKEND_HOST, 0, CNP_FLOAT64, d->ndim, d->shape, CNP_ORDER_C,
                        0));
  OK(cnp_array_copy(&h, d, NULL));
  OK(cnp_device_synchronize());
  for (int64_t i = 0; i < cnp_array_numel(&h); i++)
    ASSERT(((double *)h.data)[i] == val(from, i));
  OK(cnp_array_free(&h));
}

/* Staged round trips: C order (host buffer), Fortran order and strided (device packing
** buffer, then host buffer); the copies are counted by direction. */
static void test_device_roundtrips(void)
{
  int64_t shape[2] = {5, 7};
  size_t bytes = 5 * 7 * 8;
  cnp_order orders[2] = {CNP_ORDER_C, CNP_ORDER_F};
  for (int o = 0; o < 2; o++) {
    cnp_array a, b;
    device_filled(&a, 2, shape, orders[o]);
    device_filled(&b, 2, shape, orders[o]);
    cnp_mpi_stage *ss, *rs;
    OK(cnp_mpi_stage_create(&ss, comm, CNP_FLOAT64, 2, shape, CNP_CUDA_AWARE_OFF));
    OK(cnp_mpi_stage_create(&rs, comm, CNP_FLOAT64, 2, shape, CNP_CUDA_AWARE_OFF));
    OK(cnp_mpi_stage_reserve(ss, &a));
    OK(cnp_mpi_stage_reserve(rs, &b));
    cnp_stream *st;
    OK(cnp_stream_create(&st));
    cnp_transfer_scope sc;
    cnp_transfer_counts n;
    cnp_mpi_ctx *tx, *rx;
    OK(cnp_transfers_begin(&sc));
    OK(cnp_mpi_send_begin(ss, &a, st, NULL, &tx));
    OK(cnp_transfers_end(&sc, &n));
    ASSERT_EQ_I(bytes, n.d2h_bytes);
    ASSERT_EQ_I(o == 0 ? 0 : bytes, n.d2d_bytes);          /* Fortran order: packed first */
    void *p;
    OK(cnp_mpi_ctx_buffer(tx, &p, NULL));
    ASSERT(p != a.data);
    OK(cnp_mpi_recv_begin(rs, &b, st, NULL, &rx));
    OK(cnp_mpi_sendrecv(tx, right, 1, rx, left, 1));
    OK(cnp_mpi_end(tx));
    OK(cnp_transfers_begin(&sc));
    OK(cnp_mpi_end(rx));
    OK(cnp_transfers_end(&sc, &n));
    ASSERT_EQ_I(bytes, n.h2d_bytes);
    check_device(&b, left);
    /* Exchange in place, ordered after an event. */
    cnp_event *ev;
    OK(cnp_event_create(&ev, CNP_EVENT_DEFAULT));
    OK(cnp_event_record(ev, st));
    OK(cnp_mpi_exchange(ss, &a, right, left, 2, NULL, ev));
    check_device(&a, left);
    OK(cnp_event_destroy(ev));
    OK(cnp_stream_destroy(st));
    OK(cnp_mpi_stage_destroy(ss));
    OK(cnp_mpi_stage_destroy(rs));
    OK(cnp_array_free(&a));
    OK(cnp_array_free(&b));
  }
  /* A strided device view: every other column of a (4, 12) array. */
  int64_t full[2] = {4, 12}, vshape[2] = {4, 6}, vstrides[2] = {96, 16};
  cnp_array base, view;
  device_filled(&base, 2, full, CNP_ORDER_C);
  view = base;
  view.shape[0] = vshape[0], view.shape[1] = vshape[1];
  view.strides[0] = vstrides[0], view.strides[1] = vstrides[1];
  cnp_mpi_stage *s;
  OK(cnp_mpi_stage_create(&s, comm, CNP_FLOAT64, 2, vshape, CNP_CUDA_AWARE_OFF));
  OK(cnp_mpi_exchange(s, &view, right, left, 3, NULL, NULL));
  cnp_array h;
  OK(cnp_array_alloc_on(&h, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, full, CNP_ORDER_C, 0));
  OK(cnp_array_copy(&h, &base, NULL));
  OK(cnp_device_synchronize());
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 12; j++)
      ASSERT(((double *)h.data)[i * 12 + j] == val(j % 2 ? t_rank : left, i * 12 + j));
  OK(cnp_array_free(&h));
  OK(cnp_mpi_stage_destroy(s));
  OK(cnp_array_free(&base));
}

/* Migration of device fields: totals conserved, rows intact. */
static void test_device_migration(void)
{
  enum { CAP = 2048 };
  int64_t cap = CAP, vshape[2] = {2, CAP};
  cnp_array hx, hv, hd, dx, dv, dd;
  OK(cnp_array_alloc_on(&hx, CNP_BACKEND_HOST, 0, CNP_INT64, 1, &cap, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&hv, CNP_BACKEND_HOST, 0, CNP_FLOAT32, 2, vshape, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&hd, CNP_BACKEND_HOST, 0, CNP_INT32, 1, &cap, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&dx, CNP_BACKEND_CUDA, 0, CNP_INT64, 1, &cap, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&dv, CNP_BACKEND_CUDA, 0, CNP_FLOAT32, 2, vshape, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&dd, CNP_BACKEND_CUDA, 0, CNP_INT32, 1, &cap, CNP_ORDER_C, 0));
  int64_t *id = hx.data;
  float *v = hv.data;
  int32_t *d = hd.data;
  int64_t n = 500 + 10 * t_rank;
  for (int64_t i = 0; i < n; i++) {
    id[i] = (int64_t)t_rank * 100000 + i;
    v[i] = (float)(id[i] % 89), v[CAP + i] = (float)(id[i] % 89 + 1);
  }
  OK(cnp_array_copy(&dx, &hx, NULL));
  OK(cnp_array_copy(&dv, &hv, NULL));
  OK(cnp_device_synchronize());
  cnp_array fields[2] = {dx, dv};
  cnp_migrate_plan *plan;
  OK(cnp_migrate_plan_create(&plan, comm, fields, 2, CNP_CUDA_AWARE_OFF));
  double mine = 0, total0 = 0, count0 = 0, nn = (double)n;
  for (int64_t i = 0; i < n; i++) mine += (double)id[i];
  MPI_Allreduce(&mine, &total0, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&nn, &count0, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  uint64_t rng = 5u + (uint64_t)t_rank;
  for (int step = 0; step < 12; step++) {
    for (int64_t i = 0; i < n; i++) {
      rng = rng * 6364136223846793005ull + 1442695040888963407ull;
      d[i] = (rng >> 40) % 3 == 0 ? (int32_t)((rng >> 20) % (uint64_t)t_size) : t_rank;
    }
    OK(cnp_array_copy(&dd, &hd, NULL));
    int64_t n_new = 0;
    OK(cnp_migrate(plan, fields, 2, n, &dd, NULL, NULL, &n_new));
    n = n_new;
    OK(cnp_array_copy(&hx, &dx, NULL));
    OK(cnp_array_copy(&hv, &dv, NULL));
    OK(cnp_device_synchronize());
    double s = 0, total = 0, count = 0;
    nn = (double)n;
    for (int64_t i = 0; i < n; i++) {
      s += (double)id[i];
      ASSERT(v[i] == (float)(id[i] % 89) && v[CAP + i] == (float)(id[i] % 89 + 1));
    }
    MPI_Allreduce(&s, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&nn, &count, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    ASSERT(total == total0 && count == count0);
  }
  /* A bad destination on one rank: every rank fails, the device rows stay as they were. */
  for (int64_t i = 0; i < n; i++) d[i] = right;
  if (n > 0) d[n - 1] = t_size;          /* some rank holds particles: all must fail */
  OK(cnp_array_copy(&dd, &hd, NULL));
  int64_t n_new = -5;
  ASSERT_ST(CNP_ERANGE, cnp_migrate(plan, fields, 2, n, &dd, NULL, NULL, &n_new));
  ASSERT_EQ_I(-5, n_new);
  int64_t *before = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
  ASSERT(before);
  memcpy(before, id, sizeof(int64_t) * (size_t)n);
  OK(cnp_array_copy(&hx, &dx, NULL));
  OK(cnp_device_synchronize());
  ASSERT(memcmp(before, id, sizeof(int64_t) * (size_t)n) == 0);
  free(before);
  OK(cnp_migrate_plan_destroy(plan));
  cnp_array all[6] = {hx, hv, hd, dx, dv, dd};
  for (int k = 0; k < 6; k++) OK(cnp_array_free(&all[k]));
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &t_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &t_size);
  const char *reason = NULL;
  if (!cnp_cuda_available(&reason)) {
    const char *req = getenv("CNP_REQUIRE_CUDA");
    int required = req && strcmp(req, "1") == 0;
    if (t_rank == 0)
      printf("%s: %s\n", required ? "FAIL (CNP_REQUIRE_CUDA=1)" : "skipped",
             reason ? reason : "CUDA unavailable");
    MPI_Finalize();
    return required ? 1 : 77;
  }
  if (cnp_backend_select(CNP_BACKEND_CUDA, 1) != CNP_OK) T_FAIL("cannot select CUDA");
  right = (t_rank + 1) % t_size;
  left = (t_rank + t_size - 1) % t_size;
  OK(cnp_comm_create_mpi(&comm, MPI_COMM_WORLD));
  RUN(test_device_roundtrips);
  RUN(test_device_migration);
  OK(cnp_comm_destroy(comm));
  return t_finish("test_mpi_device");
}
