/*
** test_mpi_migrate.c — particle migration under mpiexec -n 2 and -n 4 (host fields).
**
** Fields: x f64 (N,), v f32 (3, N), id i64 (N,), tag i32 (N,). Every particle's fields are
** derived from its globally unique id, so a row that is torn apart, lost or duplicated is
** caught; global count and per-field sums are checked after every step.
*/
#include "mpi_test.h"

#include <math.h>
#include <stdlib.h>

enum { CAP = 4096, NF = 4 };

static cnp_comm *comm;
static cnp_array fx, fv, fid, ftag, fdest;
static cnp_array fields[NF];
static cnp_migrate_plan *plan;

static double *X(void) { return fx.data; }
static float *V(void) { return fv.data; }          /* V()[c * CAP + i] */
static int64_t *ID(void) { return fid.data; }
static int32_t *TAG(void) { return ftag.data; }
static int32_t *DEST(void) { return fdest.data; }

/* A small, portable generator (the same sequence on every platform). */
static uint64_t rng_state;
static uint32_t rnd(void)
{
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 33);
}

static void set_row(int64_t i, int64_t id)
{
  X()[i] = (double)id * 0.5;
  for (int c = 0; c < 3; c++) V()[c * CAP + i] = (float)(id % 97 + c);
  ID()[i] = id;
  TAG()[i] = (int32_t)(id % 1000);
}

/* Every row is consistent with its id. */
static void check_rows(int64_t n)
{
  for (int64_t i = 0; i < n; i++) {
    int64_t id = ID()[i];
    ASSERT(X()[i] == (double)id * 0.5);
    for (int c = 0; c < 3; c++) ASSERT(V()[c * CAP + i] == (float)(id % 97 + c));
    ASSERT_EQ_I(id % 1000, TAG()[i]);
  }
}

/* Global invariants: count, sum of ids, sum of squares of ids, sum of every field. */
typedef struct totals { double n, id, id2, x, v, tag; } totals;

static totals global_totals(int64_t n)
{
  totals t = {0}, g;
  t.n = (double)n;
  for (int64_t i = 0; i < n; i++) {
    t.id += (double)ID()[i];
    t.id2 += (double)ID()[i] * (double)ID()[i];
    t.x += X()[i];
    for (int c = 0; c < 3; c++) t.v += V()[c * CAP + i];
    t.tag += TAG()[i];
  }
  MPI_Allreduce(&t, &g, 6, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return g;
}

static void assert_totals_equal(totals a, totals b)
{
  ASSERT(a.n == b.n && a.id == b.id && a.id2 == b.id2);
  ASSERT(a.x == b.x && a.v == b.v && a.tag == b.tag);
}

static int64_t fill_initial(int64_t n)
{
  for (int64_t i = 0; i < n; i++) set_row(i, (int64_t)t_rank * 100000 + i);
  return n;
}

static void setup(void)
{
  int64_t cap = CAP, vshape[2] = {3, CAP};
  OK(cnp_array_alloc_on(&fx, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &cap, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&fv, CNP_BACKEND_HOST, 0, CNP_FLOAT32, 2, vshape, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&fid, CNP_BACKEND_HOST, 0, CNP_INT64, 1, &cap, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&ftag, CNP_BACKEND_HOST, 0, CNP_INT32, 1, &cap, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&fdest, CNP_BACKEND_HOST, 0, CNP_INT32, 1, &cap, CNP_ORDER_C, 0));
  fields[0] = fx, fields[1] = fv, fields[2] = fid, fields[3] = ftag;
  OK(cnp_migrate_plan_create(&plan, comm, fields, NF, CNP_CUDA_AWARE_AUTO));
  ASSERT_EQ_I(CAP, cnp_migrate_plan_capacity(plan));
}

/* Many random steps, with special steps where some ranks send nothing and one rank
** receives everything. Rows that stay keep their order. */
static void test_random_steps(void)
{
  rng_state = 12345u + (uint64_t)t_rank * 7919u;
  int64_t n = fill_initial(300 + 97 * t_rank);
  totals t0 = global_totals(n);
  int64_t *stay_ids = malloc(sizeof(int64_t) * CAP);
  ASSERT(stay_ids);
  /* Fewer steps at 4 ranks: on a 2-core machine every collective of 4 busy-polling ranks
  ** waits for the scheduler. */
  int steps = t_size <= 2 ? 60 : 30;
  for (int step = 0; step < steps; step++) {
    int kind = step % 6;
    for (int64_t i = 0; i < n; i++) {
      int d;
      if (kind == 0) d = step % t_size;                       /* one rank gets everything */
      else if (kind == 1 && t_rank == 0) d = 0;               /* rank 0 sends nothing */
      else if (kind == 2) d = (int)(rnd() % (uint32_t)t_size); /* uniform shuffle */
      else d = rnd() % 4 == 0 ? (int)(rnd() % (uint32_t)t_size) : t_rank;  /* mostly stay */
      DEST()[i] = d;
    }
    int64_t n_stay = 0;
    for (int64_t i = 0; i < n; i++)
      if (DEST()[i] == t_rank) stay_ids[n_stay++] = ID()[i];
    int64_t n_new = -1;
    OK(cnp_migrate(plan, fields, NF, n, &fdest, NULL, NULL, &n_new));
    cnp_migrate_stats s;
    OK(cnp_migrate_last_stats(plan, &s));
    ASSERT_EQ_I(n, s.n_before);
    ASSERT_EQ_I(n_stay, s.n_stay);
    ASSERT_EQ_I(n - n_stay, s.n_sent);
    ASSERT_EQ_I(n_new, s.n_after);
    ASSERT_EQ_I(n_stay + s.n_received, n_new);
    if (kind == 0 && t_rank != step % t_size) ASSERT_EQ_I(0, n_new);
    if (kind == 1 && t_rank == 0) ASSERT_EQ_I(0, s.n_sent);
    for (int64_t i = 0; i < n_stay; i++) ASSERT_EQ_I(stay_ids[i], ID()[i]);
    n = n_new;
    check_rows(n);
    assert_totals_equal(t0, global_totals(n));
  }
  free(stay_ids);
}

/* Arrivals are ordered by source rank; every arriving row was destined here. */
static void test_arrival_order(void)
{
  int64_t n = 5;
  for (int64_t i = 0; i < n; i++) set_row(i, (int64_t)t_rank * 10 + i);
  /* Rows 0, 2, 4 go to rank 0; rows 1, 3 stay. */
  for (int64_t i = 0; i < n; i++) DEST()[i] = (i % 2 == 0) ? 0 : t_rank;
  int64_t n_new = 0;
  OK(cnp_migrate(plan, fields, NF, n, &fdest, NULL, NULL, &n_new));
  if (t_rank == 0) {
    ASSERT_EQ_I(5 + 3 * (t_size - 1), n_new);
    for (int64_t i = 0; i < 5; i++) ASSERT_EQ_I(i, ID()[i]);     /* own rows, in order */
    int64_t k = 5;
    for (int r = 1; r < t_size; r++)
      for (int64_t i = 0; i < 5; i += 2) ASSERT_EQ_I(r * 10 + i, ID()[k++]);
  } else {
    ASSERT_EQ_I(2, n_new);
    ASSERT_EQ_I(t_rank * 10 + 1, ID()[0]);
    ASSERT_EQ_I(t_rank * 10 + 3, ID()[1]);
  }
  check_rows(n_new);
  /* int64 destinations: everything moves one rank to the right. */
  int64_t cap = CAP;
  cnp_array d64;
  OK(cnp_array_alloc_on(&d64, CNP_BACKEND_HOST, 0, CNP_INT64, 1, &cap, CNP_ORDER_C, 0));
  n = 4;
  for (int64_t i = 0; i < n; i++) {
    set_row(i, (int64_t)t_rank * 10 + i);
    ((int64_t *)d64.data)[i] = (t_rank + 1) % t_size;
  }
  OK(cnp_migrate(plan, fields, NF, n, &d64, NULL, NULL, &n_new));
  ASSERT_EQ_I(4, n_new);
  int left = (t_rank + t_size - 1) % t_size;
  for (int64_t i = 0; i < 4; i++) ASSERT_EQ_I(left * 10 + i, ID()[i]);
  check_rows(n_new);
  ((int64_t *)d64.data)[2] = -1;
  ASSERT_ST(CNP_ERANGE, cnp_migrate(plan, fields, NF, n, &d64, NULL, NULL, &n_new));
  OK(cnp_array_free(&d64));
  /* n = 0 everywhere is a valid, empty step. */
  OK(cnp_migrate(plan, fields, NF, 0, &fdest, NULL, NULL, &n_new));
  ASSERT_EQ_I(0, n_new);
}

/* Snapshot of all field storage, to prove failed steps change nothing. */
typedef struct snap { double x[CAP]; float v[3 * CAP]; int64_t id[CAP]; int32_t tag[CAP]; } snap;

static void take(snap *s)
{
  memcpy(s->x, X(), sizeof s->x);
  memcpy(s->v, V(), sizeof s->v);
  memcpy(s->id, ID(), sizeof s->id);
  memcpy(s->tag, TAG(), sizeof s->tag);
}

static int same(const snap *s)
{
  return !memcmp(s->x, X(), sizeof s->x) && !memcmp(s->v, V(), sizeof s->v) &&
         !memcmp(s->id, ID(), sizeof s->id) && !memcmp(s->tag, TAG(), sizeof s->tag);
}

/* Capacity overflow: every rank gets CNP_EOVERFLOW, nothing moves, n_out untouched. */
static void test_overflow_leaves_data_intact(void)
{
  int64_t n = CAP / t_size + 10;       /* everything to rank 0 would exceed CAP */
  fill_initial(n);
  for (int64_t i = 0; i < n; i++) DEST()[i] = (i % 3 == 0) ? t_rank : 0;
  snap *before = malloc(sizeof *before);
  ASSERT(before);
  take(before);
  totals t0 = global_totals(n);
  int64_t n_new = -42;
  for (int64_t i = 0; i < n; i++) DEST()[i] = 0;
  ASSERT_ST(CNP_EOVERFLOW, cnp_migrate(plan, fields, NF, n, &fdest, NULL, NULL, &n_new));
  if (t_rank == 0) ASSERT_DETAIL("capacity is 4096");
  else ASSERT_DETAIL("rank 0 failed");
  ASSERT_EQ_I(-42, n_new);
  ASSERT(same(before));
  assert_totals_equal(t0, global_totals(n));
  /* The plan still works afterwards. */
  for (int64_t i = 0; i < n; i++) DEST()[i] = (int32_t)((i + (int64_t)t_rank) % t_size);
  OK(cnp_migrate(plan, fields, NF, n, &fdest, NULL, NULL, &n_new));
  check_rows(n_new);
  assert_totals_equal(t0, global_totals(n_new));
  free(before);
}

/* A bad destination or bad argument on one rank fails the step on every rank. */
static void test_errors_are_agreed(void)
{
  int64_t n = 50;
  fill_initial(n);
  for (int64_t i = 0; i < n; i++) DEST()[i] = (int32_t)((t_rank + 1) % t_size);
  snap *before = malloc(sizeof *before);
  ASSERT(before);
  take(before);
  int64_t n_new = -1;
  if (t_rank == t_size - 1) DEST()[17] = t_size;          /* out of range on one rank */
  ASSERT_ST(CNP_ERANGE, cnp_migrate(plan, fields, NF, n, &fdest, NULL, NULL, &n_new));
  if (t_rank == t_size - 1) ASSERT_DETAIL("dest[17]");
  ASSERT(same(before));
  DEST()[17] = (int32_t)((t_rank + 1) % t_size);
  /* n beyond the capacity on rank 0 only. */
  ASSERT_ST(CNP_ERANGE, cnp_migrate(plan, fields, NF, t_rank == 0 ? CAP + 1 : n, &fdest, NULL,
                                    NULL, &n_new));
  /* Wrong dtype for a field on rank 1 only (EDTYPE = -3 beats nothing else here). */
  cnp_array wrong[NF];
  memcpy(wrong, fields, sizeof wrong);
  if (t_rank == 1) wrong[1].dtype = CNP_INT32;
  ASSERT_ST(CNP_EDTYPE, cnp_migrate(plan, wrong, NF, n, &fdest, NULL, NULL, &n_new));
  /* Both producers on rank 0: CNP_EINVAL everywhere. */
  cnp_stream *s;
  cnp_event *e;
  OK(cnp_stream_create(&s));
  OK(cnp_event_create(&e, 0));
  OK(cnp_event_record(e, s));
  ASSERT_ST(CNP_EINVAL, cnp_migrate(plan, fields, NF, n, &fdest, t_rank == 0 ? s : NULL,
                                    e, &n_new));
  ASSERT(same(before));
  ASSERT_EQ_I(-1, n_new);
  /* With one producer it works. */
  OK(cnp_migrate(plan, fields, NF, n, &fdest, NULL, e, &n_new));
  ASSERT_EQ_I(n, n_new);
  check_rows(n_new);
  OK(cnp_migrate(plan, fields, NF, n_new, &fdest, s, NULL, &n_new));
  OK(cnp_event_destroy(e));
  OK(cnp_stream_destroy(s));
  free(before);
  /* Plan creation checks. */
  cnp_migrate_plan *bad = (cnp_migrate_plan *)&bad;
  cnp_array mismatch[2] = {fx, fdest};
  int64_t small = 10;
  OK(cnp_array_alloc_on(&mismatch[1], CNP_BACKEND_HOST, 0, CNP_INT32, 1, &small, CNP_ORDER_C,
                        0));
  ASSERT_ST(CNP_ESHAPE, cnp_migrate_plan_create(&bad, comm, mismatch, 2, 0));
  ASSERT(bad == NULL);
  OK(cnp_array_free(&mismatch[1]));
  ASSERT_ST(CNP_EINVAL, cnp_migrate_plan_create(&bad, NULL, fields, NF, 0));
  ASSERT_ST(CNP_EINVAL, cnp_migrate(NULL, fields, NF, 0, &fdest, NULL, NULL, &n_new));
}

/* Domain decomposition: owners of positions, and migration by position. */
static void test_domain(void)
{
  cnp_domain d1 = {.ndim = 1, .dims = {4}, .lo = {0.0}, .hi = {1.0}, .periodic = {1}};
  int r = -1;
  OK(cnp_domain_rank(&d1, (double[]){0.0}, &r));
  ASSERT_EQ_I(0, r);
  OK(cnp_domain_rank(&d1, (double[]){0.74}, &r));
  ASSERT_EQ_I(2, r);
  OK(cnp_domain_rank(&d1, (double[]){1.1}, &r));        /* wraps */
  ASSERT_EQ_I(0, r);
  OK(cnp_domain_rank(&d1, (double[]){-0.1}, &r));
  ASSERT_EQ_I(3, r);
  OK(cnp_domain_rank(&d1, (double[]){-1e-300}, &r));    /* rounds to 1.0: last rank */
  ASSERT_EQ_I(3, r);
  d1.periodic[0] = 0;
  ASSERT_ST(CNP_ERANGE, cnp_domain_rank(&d1, (double[]){1.0}, &r));
  ASSERT_ST(CNP_ERANGE, cnp_domain_rank(&d1, (double[]){NAN}, &r));
  cnp_domain d3 = {.ndim = 3, .dims = {2, 3, 4}, .lo = {0, 0, 0}, .hi = {2, 3, 4}};
  OK(cnp_domain_rank(&d3, (double[]){1.5, 2.5, 0.5}, &r));
  ASSERT_EQ_I((1 * 3 + 2) * 4 + 0, r);                  /* C order, last axis fastest */
  d3.dims[1] = 0;
  ASSERT_ST(CNP_EINVAL, cnp_domain_rank(&d3, (double[]){0, 0, 0}, &r));

  /* 2D periodic box over all ranks (MPI_Dims_create's factorization). */
  int dims[2] = {0, 0};
  MPI_Dims_create(t_size, 2, dims);
  cnp_domain d = {.ndim = 2, .dims = {dims[0], dims[1]}, .lo = {-1.0, 0.0}, .hi = {1.0, 2.0},
                  .periodic = {1, 1}};
  /* Positions live in the fields: x (axis 0) and v[0] (axis 1). */
  rng_state = 999u + (uint64_t)t_rank;
  int64_t n = 400;
  for (int64_t i = 0; i < n; i++) set_row(i, (int64_t)t_rank * 100000 + i);
  totals t0 = global_totals(n);
  cnp_array pos[2] = {fx, fv};
  pos[1].ndim = 1;                    /* row 0 of v as an (N,) view */
  pos[1].shape[0] = CAP;
  pos[1].strides[0] = 4;
  int64_t n_new = 0;
  OK(cnp_migrate_by_domain(plan, &d, pos, 2, fields, NF, n, NULL, NULL, &n_new));
  for (int64_t i = 0; i < n_new; i++) {
    int owner = -1;
    double x[2] = {X()[i], V()[i]};
    OK(cnp_domain_rank(&d, x, &owner));
    ASSERT_EQ_I(t_rank, owner);
  }
  check_rows(n_new);
  assert_totals_equal(t0, global_totals(n_new));
  /* A second pass moves nothing. */
  int64_t n2 = 0;
  OK(cnp_migrate_by_domain(plan, &d, pos, 2, fields, NF, n_new, NULL, NULL, &n2));
  cnp_migrate_stats s;
  OK(cnp_migrate_last_stats(plan, &s));
  ASSERT_EQ_I(n_new, n2);
  ASSERT_EQ_I(0, s.n_sent);
  /* cnp_domain_dest directly, with one (2, N) array of positions. */
  int64_t pshape[2] = {2, 3};
  cnp_array p2;
  OK(cnp_array_alloc_on(&p2, CNP_BACKEND_HOST, 0, CNP_FLOAT32, 2, pshape, CNP_ORDER_C, 0));
  float *pp = p2.data;
  pp[0] = -0.9f, pp[1] = 0.9f, pp[2] = 2.5f;     /* axis 0 (2.5 wraps to 0.5) */
  pp[3] = 0.1f, pp[4] = 1.9f, pp[5] = 0.5f;      /* axis 1 */
  OK(cnp_domain_dest(&d, &p2, 1, 3, &fdest));
  for (int i = 0; i < 3; i++) {
    double x[2] = {pp[i], pp[3 + i]};
    OK(cnp_domain_rank(&d, x, &r));
    ASSERT_EQ_I(r, DEST()[i]);
  }
  /* A position outside a non-periodic box: CNP_ERANGE, and dest as it was (the last row
  ** is the bad one, so a writing pass would have changed the first two). */
  int32_t before[3] = {DEST()[0], DEST()[1], DEST()[2]};
  DEST()[0] = DEST()[1] = DEST()[2] = -7;
  d.periodic[0] = 0;
  ASSERT_ST(CNP_ERANGE, cnp_domain_dest(&d, &p2, 1, 3, &fdest));
  for (int i = 0; i < 3; i++) ASSERT_EQ_I(-7, DEST()[i]);
  d.periodic[0] = 1;
  for (int i = 0; i < 3; i++) DEST()[i] = before[i];
  /* A position outside a non-periodic box fails the collective step on every rank. */
  d.periodic[0] = 0;
  if (t_rank == 0) X()[0] = 5.0;
  ASSERT_ST(CNP_ERANGE, cnp_migrate_by_domain(plan, &d, pos, 2, fields, NF, n2, NULL, NULL,
                                              &n_new));
  /* Wrong number of ranks in the decomposition. */
  d.dims[0] = t_size + 1;
  ASSERT_ST(CNP_EINVAL, cnp_migrate_by_domain(plan, &d, pos, 2, fields, NF, n2, NULL, NULL,
                                              &n_new));
  OK(cnp_array_free(&p2));
}

/* ---- exact placement over every item size ------------------------------------------------
** Fields of 1, 2, 8 and 16 bytes per item (bool, float16 (2, N), uint64 ids, complex128).
** Each pattern starts from a fresh fill with destinations computed from (id, pattern), so
** every rank can predict its exact result: its stayers in their order, then the rows sent
** to it by rank 0, 1, ... in their order on the source. Patterns cover sparse leavers (long
** runs of stayers), dense ones, first/last row only, everything, nothing.
*/
enum { XCAP = 8192, XNF = 4, XPATTERNS = 8 };

/* Test hook of libcnp (runtime/mpi_internal.h): while on, the payload exchange of a host
** migration step fails with CNP_EMPI without calling MPI (set on every rank). */
void cnp__migrate_fail_exchange(int on);

/* A failed exchange leaves all storage of the fields byte-identical. */
static void x_failed_step_changes_nothing(cnp_migrate_plan *xp, cnp_array *xf,
                                          const cnp_array *dest, int64_t n)
{
  size_t bytes[XNF];
  char *copy[XNF];
  for (int f = 0; f < XNF; f++) {
    bytes[f] = cnp_dtype_size(xf[f].dtype) * (size_t)(xf[f].ndim == 2 ? 2 * XCAP : XCAP);
    copy[f] = malloc(bytes[f]);
    ASSERT(copy[f]);
    memcpy(copy[f], xf[f].data, bytes[f]);
  }
  int64_t n_new = -7;
  cnp__migrate_fail_exchange(1);
  cnp_status st = cnp_migrate(xp, xf, XNF, n, dest, NULL, NULL, &n_new);
  cnp__migrate_fail_exchange(0);
  ASSERT_ST(CNP_EMPI, st);
  ASSERT_DETAIL("injected");
  ASSERT_EQ_I(-7, n_new);
  for (int f = 0; f < XNF; f++) {
    ASSERT(memcmp(copy[f], xf[f].data, bytes[f]) == 0);
    free(copy[f]);
  }
}

static int64_t x_count(int r) { return 1500 + 37 * r; }
static int64_t x_id(int r, int64_t i) { return (int64_t)r * 100000 + i; }

static uint64_t x_hash(uint64_t a, uint64_t b)
{
  uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 29);
}

/* Destination of the particle with id (on rank `r`, row i) under pattern k. */
static int x_dest(int k, int r, int64_t i, int64_t n)
{
  uint64_t h = x_hash((uint64_t)x_id(r, i), (uint64_t)k);
  int other = (int)((h >> 20) % (uint64_t)t_size);
  switch (k) {
  case 0: return h % 200 == 0 ? other : r;                 /* 0.5 %: runs of ~200 */
  case 1: return h % 33 == 0 ? other : r;                  /* 3 % */
  case 2: return h % 2 == 0 ? other : r;                   /* 50 % */
  case 3: return (r + 1) % t_size;                         /* all leave */
  case 4: return (i == 0 || i == n - 1) ? (r + 1) % t_size : r;   /* first and last row */
  case 5: return 0;                                        /* everything to rank 0 */
  case 6: return r;                                        /* nothing moves */
  default: return i % 9 == 8 ? other : r;                  /* runs of exactly 8 */
  }
}

static void x_set(cnp_array *xf, int64_t i, int64_t id)
{
  ((uint8_t *)xf[0].data)[i] = (uint8_t)(id % 3 == 0);
  for (int c = 0; c < 2; c++) ((uint16_t *)xf[1].data)[c * XCAP + i] = (uint16_t)(id * 7 + c);
  ((uint64_t *)xf[2].data)[i] = (uint64_t)id;
  ((double *)xf[3].data)[2 * i] = (double)id * 0.25;
  ((double *)xf[3].data)[2 * i + 1] = -(double)id;
}

static void x_check_row(const cnp_array *xf, int64_t i, int64_t id)
{
  ASSERT_EQ_I(id, (int64_t)((const uint64_t *)xf[2].data)[i]);
  ASSERT_EQ_I(id % 3 == 0, ((const uint8_t *)xf[0].data)[i]);
  for (int c = 0; c < 2; c++)
    ASSERT_EQ_I((uint16_t)(id * 7 + c), ((const uint16_t *)xf[1].data)[c * XCAP + i]);
  ASSERT(((const double *)xf[3].data)[2 * i] == (double)id * 0.25);
  ASSERT(((const double *)xf[3].data)[2 * i + 1] == -(double)id);
}

static void test_exact_placement_all_item_sizes(void)
{
  int64_t cap = XCAP, hshape[2] = {2, XCAP};
  cnp_array xf[XNF], d32, d64;
  OK(cnp_array_alloc_on(&xf[0], CNP_BACKEND_HOST, 0, CNP_BOOL, 1, &cap, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&xf[1], CNP_BACKEND_HOST, 0, CNP_FLOAT16, 2, hshape, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&xf[2], CNP_BACKEND_HOST, 0, CNP_UINT64, 1, &cap, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&xf[3], CNP_BACKEND_HOST, 0, CNP_COMPLEX128, 1, &cap, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&d32, CNP_BACKEND_HOST, 0, CNP_INT32, 1, &cap, CNP_ORDER_C, 0));
  OK(cnp_array_alloc_on(&d64, CNP_BACKEND_HOST, 0, CNP_INT64, 1, &cap, CNP_ORDER_C, 0));
  cnp_migrate_plan *xp;
  OK(cnp_migrate_plan_create(&xp, comm, xf, XNF, CNP_CUDA_AWARE_OFF));
  int64_t *want = malloc(sizeof(int64_t) * XCAP);
  ASSERT(want);
  for (int k = 0; k < XPATTERNS; k++) {
    int64_t n = x_count(t_rank);
    for (int64_t i = 0; i < n; i++) {
      x_set(xf, i, x_id(t_rank, i));
      ((int32_t *)d32.data)[i] = x_dest(k, t_rank, i, n);
      ((int64_t *)d64.data)[i] = x_dest(k, t_rank, i, n);
    }
    /* The expected rows: own stayers, then each source's rows for this rank. */
    int64_t m = 0, n_stay = 0;
    for (int64_t i = 0; i < n; i++)
      if (x_dest(k, t_rank, i, n) == t_rank) want[m++] = x_id(t_rank, i);
    n_stay = m;
    for (int r = 0; r < t_size; r++)
      for (int64_t i = 0; r != t_rank && i < x_count(r); i++)
        if (x_dest(k, r, i, x_count(r)) == t_rank) want[m++] = x_id(r, i);
    if (k % 3 == 1) x_failed_step_changes_nothing(xp, xf, k % 2 ? &d64 : &d32, n);
    int64_t n_new = -1;
    OK(cnp_migrate(xp, xf, XNF, n, k % 2 ? &d64 : &d32, NULL, NULL, &n_new));
    cnp_migrate_stats st;
    OK(cnp_migrate_last_stats(xp, &st));
    ASSERT_EQ_I(m, n_new);
    ASSERT_EQ_I(n_stay, st.n_stay);
    ASSERT_EQ_I(n - n_stay, st.n_sent);
    ASSERT_EQ_I(m - n_stay, st.n_received);
    for (int64_t i = 0; i < n_new; i++) x_check_row(xf, i, want[i]);
  }
  free(want);
  OK(cnp_migrate_plan_destroy(xp));
  for (int k = 0; k < XNF; k++) OK(cnp_array_free(&xf[k]));
  OK(cnp_array_free(&d32));
  OK(cnp_array_free(&d64));
}

/* A payload exchange that fails after the leavers were packed and the stayers compacted
** restores every rank's fields exactly (mixed run lengths, first and last row leaving);
** the same step then succeeds. */
static void test_failed_exchange_restores_fields(void)
{
  rng_state = 4242u + (uint64_t)t_rank;
  int64_t n = 700 + 13 * t_rank;
  fill_initial(n);
  for (int64_t i = 0; i < n; i++) {
    int go = i == 0 || i == n - 1 || (i >= 100 && i < 140) || rnd() % 5 == 0;
    DEST()[i] = go ? (int32_t)((t_rank + 1 + (int)(rnd() % (uint32_t)(t_size - 1))) % t_size)
                   : t_rank;
  }
  snap *before = malloc(sizeof *before);
  ASSERT(before);
  take(before);
  totals t0 = global_totals(n);
  int64_t n_new = -7;
  cnp__migrate_fail_exchange(1);
  cnp_status st = cnp_migrate(plan, fields, NF, n, &fdest, NULL, NULL, &n_new);
  cnp__migrate_fail_exchange(0);
  ASSERT_ST(CNP_EMPI, st);
  ASSERT_EQ_I(-7, n_new);
  ASSERT(same(before));
  OK(cnp_migrate(plan, fields, NF, n, &fdest, NULL, NULL, &n_new));
  check_rows(n_new);
  assert_totals_equal(t0, global_totals(n_new));
  free(before);
}

/* libcnp's fault-injection switch (runtime/internal.h): the k-th allocation fails. */
void cnp__fail_alloc_after(long k);

/* Every allocation failure during plan creation is CNP_ENOMEM and leaks nothing (the
** sanitizer build checks the leaks); creation succeeds once k passes the last one. */
static void test_create_under_allocation_failures(void)
{
  int succeeded = 0;
  for (long k = 1; k <= 200 && !succeeded; k++) {
    cnp_migrate_plan *p = NULL;
    cnp__fail_alloc_after(k);
    cnp_status st = cnp_migrate_plan_create(&p, comm, fields, NF, CNP_CUDA_AWARE_OFF);
    cnp__fail_alloc_after(0);
    if (st == CNP_OK) {
      succeeded = 1;
      ASSERT(k > 5);
      OK(cnp_migrate_plan_destroy(p));
    } else {
      ASSERT_ST(CNP_ENOMEM, st);
      ASSERT(p == NULL);
    }
  }
  ASSERT(succeeded);
  /* A staging object's lazy buffer: the failing context leaves the stage usable. */
  int64_t shape[2] = {4, 6}, strides[2] = {96, 16};
  double buf[4][12];
  cnp_array a;
  OK(cnp_array_wrap(&a, buf, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shape, strides));
  cnp_mpi_stage *s;
  OK(cnp_mpi_stage_create(&s, comm, CNP_FLOAT64, 2, shape, CNP_CUDA_AWARE_OFF));
  cnp_mpi_ctx *c = NULL;
  cnp__fail_alloc_after(1);
  ASSERT_ST(CNP_ENOMEM, cnp_mpi_send_begin(s, &a, NULL, NULL, &c));
  cnp__fail_alloc_after(0);
  OK(cnp_mpi_send_begin(s, &a, NULL, NULL, &c));
  OK(cnp_mpi_end(c));
  OK(cnp_mpi_stage_destroy(s));
}

/* Steps allocate nothing: with the next allocation armed to fail, a migration step and
** staging contexts still succeed, and the armed failure is still pending afterwards. */
static void test_steps_do_not_allocate(void)
{
  int64_t n = 64, shape[2] = {4, 6}, strides[2] = {96, 16};
  fill_initial(n);
  for (int64_t i = 0; i < n; i++) DEST()[i] = (int32_t)(i % t_size);
  double sbuf[4][12] = {{0}}, rbuf[4][12] = {{0}};
  cnp_array a, b;
  OK(cnp_array_wrap(&a, sbuf, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shape, strides));
  OK(cnp_array_wrap(&b, rbuf, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shape, strides));
  cnp_mpi_stage *ss, *rs;
  OK(cnp_mpi_stage_create(&ss, comm, CNP_FLOAT64, 2, shape, CNP_CUDA_AWARE_OFF));
  OK(cnp_mpi_stage_create(&rs, comm, CNP_FLOAT64, 2, shape, CNP_CUDA_AWARE_OFF));
  OK(cnp_mpi_stage_reserve(ss, &a));
  OK(cnp_mpi_stage_reserve(rs, &b));
  int right = (t_rank + 1) % t_size, left = (t_rank + t_size - 1) % t_size;
  cnp__fail_alloc_after(1);
  int64_t n_new = 0;
  cnp_status st1 = cnp_migrate(plan, fields, NF, n, &fdest, NULL, NULL, &n_new);
  cnp_mpi_ctx *sc = NULL, *rc = NULL;
  cnp_status st2 = cnp_mpi_send_begin(ss, &a, NULL, NULL, &sc);
  cnp_status st3 = cnp_mpi_recv_begin(rs, &b, NULL, NULL, &rc);
  cnp_status st4 = cnp_mpi_sendrecv(sc, right, 8, rc, left, 8);
  cnp_status st5 = cnp_mpi_end(sc), st6 = cnp_mpi_end(rc);
  cnp_status st7 = cnp_mpi_exchange(ss, &a, right, left, 9, NULL, NULL);
  cnp_array probe;
  int64_t one = 1;
  cnp_status armed = cnp_array_alloc_on(&probe, CNP_BACKEND_HOST, 0, CNP_INT32, 1, &one,
                                        CNP_ORDER_C, 0);
  cnp__fail_alloc_after(0);
  OK(st1);
  OK(st2);
  OK(st3);
  OK(st4);
  OK(st5);
  OK(st6);
  OK(st7);
  ASSERT_ST(CNP_ENOMEM, armed);
  check_rows(n_new);
  OK(cnp_mpi_stage_destroy(ss));
  OK(cnp_mpi_stage_destroy(rs));
}

static void teardown(void)
{
  OK(cnp_migrate_plan_destroy(plan));
  OK(cnp_migrate_plan_destroy(NULL));
  /* A destroyed plan is CNP_ESTATE (found through the live-handle registry). */
  cnp_migrate_stats stats;
  int64_t n_out = -1;
  ASSERT_EQ_I(-1, cnp_migrate_plan_capacity(plan));
  ASSERT_ST(CNP_ESTATE, cnp_migrate_last_stats(plan, &stats));
  ASSERT_ST(CNP_ESTATE, cnp_migrate(plan, &fx, 1, 0, &fdest, NULL, NULL, &n_out));
  ASSERT(n_out == -1);
  ASSERT_ST(CNP_ESTATE, cnp_migrate_plan_destroy(plan));
  ASSERT_DETAIL("cnp_migrate_plan_destroy");
  OK(cnp_array_free(&fx));
  OK(cnp_array_free(&fv));
  OK(cnp_array_free(&fid));
  OK(cnp_array_free(&ftag));
  OK(cnp_array_free(&fdest));
}

int main(int argc, char **argv)
{
  t_init(&argc, &argv);
  OK(cnp_comm_create_mpi(&comm, MPI_COMM_WORLD));
  setup();
  RUN(test_random_steps);
  RUN(test_arrival_order);
  RUN(test_overflow_leaves_data_intact);
  RUN(test_errors_are_agreed);
  RUN(test_domain);
  RUN(test_exact_placement_all_item_sizes);
  RUN(test_failed_exchange_restores_fields);
  RUN(test_create_under_allocation_failures);
  RUN(test_steps_do_not_allocate);
  teardown();
  OK(cnp_comm_destroy(comm));
  return t_finish("test_mpi_migrate");
}
