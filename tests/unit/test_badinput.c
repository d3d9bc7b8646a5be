/*
** test_badinput.c -- table-driven bad input for the runtime's entry points.
**
** Every row runs one call against a fresh fixture (host arrays with known contents, a
** workspace, a segment plan, a stream, an event, a snapshot) and asserts
**   - the exact status,
**   - a nonempty cnp_last_error() naming the call,
**   - that no data changed: an FNV-1a checksum over every fixture array (and the output
**     struct the call was given) is the same before and after. The one exception is the
**     offsets output of cnp_cell_offsets, written while the input is checked (rows marked
**     out_unspecified): the inputs are still checked to be unchanged.
** Rows cover NULL arguments, zero and negative sizes, overflowing size computations, wrong
** dtypes, wrong backends/devices, aliasing, unsorted and out-of-range keys, stale and
** destroyed handles, capacity overflow. MPI entry points are not here (tests/mpi).
*/
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cnp/cnp.h"
#include "internal.h"

#define N 16
#define NSEG 8

typedef struct fx {
  cnp_array keys;       /* int64[N], unsorted, in [0, NSEG) */
  cnp_array sorted;     /* int64[N], sorted, in [0, NSEG) */
  cnp_array x;          /* float64[N] */
  cnp_array v;          /* float64[3, N] (component-major) */
  cnp_array mask;       /* bool[N] */
  cnp_array order;      /* int64[N] */
  cnp_array f32;        /* float32[N] */
  cnp_array offsets;    /* int64[NSEG + 1] */
  cnp_array out;        /* float64[NSEG] */
  cnp_array scratch;    /* output struct handed to view-producing calls */
  cnp_array freed;      /* a float64[N] view whose storage was freed */
  cnp_workspace *ws;
  cnp_segment_plan *plan;
  cnp_stream *s;
  cnp_event *e;
  cnp_snapshot *snap;
  cnp_snapshot_handle h;
  int64_t count;
} fx;

static void alloc1(cnp_array *a, cnp_dtype t, int64_t n)
{
  cr_assert_eq(cnp_array_alloc_on(a, CNP_BACKEND_HOST, 0, t, 1, &n, CNP_ORDER_C, 0), CNP_OK,
               "%s", cnp_last_error());
}

static void fx_init(fx *f)
{
  memset(f, 0, sizeof *f);
  cnp__fail_alloc_after(0);
  alloc1(&f->keys, CNP_INT64, N);
  alloc1(&f->sorted, CNP_INT64, N);
  alloc1(&f->x, CNP_FLOAT64, N);
  int64_t vs[2] = {3, N};
  cr_assert_eq(cnp_array_alloc_on(&f->v, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, vs, CNP_ORDER_C, 0),
               CNP_OK);
  alloc1(&f->mask, CNP_BOOL, N);
  alloc1(&f->order, CNP_INT64, N);
  alloc1(&f->f32, CNP_FLOAT32, N);
  alloc1(&f->offsets, CNP_INT64, NSEG + 1);
  alloc1(&f->out, CNP_FLOAT64, NSEG);
  alloc1(&f->freed, CNP_FLOAT64, N);
  cnp_array tmp = f->freed;
  cr_assert_eq(cnp_array_free(&tmp), CNP_OK);
  int64_t *k = f->keys.data, *so = f->sorted.data, *o = f->order.data;
  double *x = f->x.data, *v = f->v.data;
  float *g = f->f32.data;
  unsigned char *m = f->mask.data;
  for (int i = 0; i < N; i++) {
    k[i] = (i * 5 + 3) % NSEG;
    so[i] = i * NSEG / N;
    x[i] = 0.5 + i;
    for (int c = 0; c < 3; c++) v[c * N + i] = 100.0 * c + i;
    m[i] = (unsigned char)(i % 3 != 0);
    o[i] = -7;
    g[i] = (float)i;
  }
  int64_t *of = f->offsets.data;
  for (int i = 0; i <= NSEG; i++) of[i] = -1;
  double *ou = f->out.data;
  for (int i = 0; i < NSEG; i++) ou[i] = -2.0;
  memset(&f->scratch, 0x5a, sizeof f->scratch);
  cr_assert_eq(cnp_workspace_create(&f->ws, CNP_BACKEND_HOST, 0, N, NSEG, 0), CNP_OK);
  cr_assert_eq(cnp_segment_plan_create(&f->plan, CNP_BACKEND_HOST, 0, N, NSEG), CNP_OK);
  cr_assert_eq(cnp_stream_create(&f->s), CNP_OK);
  cr_assert_eq(cnp_event_create(&f->e, CNP_EVENT_DEFAULT), CNP_OK);
  cr_assert_eq(cnp_snapshot_create(&f->snap, &f->x, 2), CNP_OK);
  cr_assert_eq(cnp_snapshot_copy(f->snap, &f->x, NULL, NULL, &f->h), CNP_OK);
  f->count = -5;
  cnp_clear_error();
}

static void fx_fini(fx *f)
{
  cnp__fail_alloc_after(0);
  cnp_array *all[] = {&f->keys, &f->sorted, &f->x,  &f->v,       &f->mask,
                      &f->order, &f->f32,   &f->offsets, &f->out};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    cr_expect_eq(cnp_array_free(all[i]), CNP_OK, "%s", cnp_last_error());
  cr_expect_eq(cnp_workspace_destroy(f->ws), CNP_OK);
  cr_expect_eq(cnp_segment_plan_destroy(f->plan), CNP_OK);
  cr_expect_eq(cnp_stream_destroy(f->s), CNP_OK);
  cr_expect_eq(cnp_event_destroy(f->e), CNP_OK);
  cr_expect_eq(cnp_snapshot_destroy(f->snap), CNP_OK);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

static uint64_t fx_sum(const fx *f, int skip_offsets)
{
  uint64_t h = 0xcbf29ce484222325ull;
  const cnp_array *all[] = {&f->keys, &f->sorted, &f->x,  &f->v,       &f->mask,
                            &f->order, &f->f32,   &f->offsets, &f->out};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
    h = fnv(h, all[i], sizeof *all[i]);
    if (!(skip_offsets && all[i] == &f->offsets)) h = fnv(h, all[i]->data, cnp_array_nbytes(all[i]));
  }
  h = fnv(h, &f->scratch, sizeof f->scratch);
  h = fnv(h, &f->count, sizeof f->count);
  cnp_array snapv;                      /* the snapshot's slot: made from x at init */
  if (cnp_snapshot_result(f->h, &snapv) == CNP_OK) h = fnv(h, snapv.data, cnp_array_nbytes(&snapv));
  cnp_clear_error();
  return h;
}

typedef struct row {
  const char *name;
  cnp_status  want;
  const char *op;                       /* the call named in cnp_last_error() */
  cnp_status (*run)(fx *f);
  int         out_unspecified;          /* 1: the call's documented output (offsets) may be
                                        ** partly written before the error is found */
} row;

static void run_table(const row *rows, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    fx f;
    fx_init(&f);
    uint64_t before = fx_sum(&f, rows[i].out_unspecified);
    cnp_status got = rows[i].run(&f);
    char detail[512];
    snprintf(detail, sizeof detail, "%s", cnp_last_error());
    cnp__fail_alloc_after(0);
    cr_expect_eq(got, rows[i].want, "%s: got %s, want %s (%s)", rows[i].name,
                 cnp_status_name(got), cnp_status_name(rows[i].want), detail);
    cr_expect(strstr(detail, rows[i].op) != NULL, "%s: detail '%s' does not name %s",
              rows[i].name, detail, rows[i].op);
    cr_expect_eq(fx_sum(&f, rows[i].out_unspecified), before, "%s: data changed by a rejected call", rows[i].name);
    fx_fini(&f);
  }
}

#define ROWS(table) run_table(table, sizeof table / sizeof table[0])
#define R(fn) static cnp_status fn(fx *f)

/* ---- array views: cnp_array_validate ---------------------------------------------------- */

static cnp_status validate_with(fx *f, void (*bad)(cnp_array *))
{
  f->scratch = f->x;
  bad(&f->scratch);
  cnp_status st = cnp_array_validate(&f->scratch, "x");
  f->scratch = f->x;                    /* the checksum compares against the fixture, not the probe */
  memset(&f->scratch, 0x5a, sizeof f->scratch);
  return st;
}
static void b_dtype_neg(cnp_array *a) { a->dtype = (cnp_dtype)-1; }
static void b_dtype_big(cnp_array *a) { a->dtype = CNP_DTYPE_COUNT_; }
static void b_ndim_neg(cnp_array *a) { a->ndim = -1; }
static void b_ndim_big(cnp_array *a) { a->ndim = CNP_MAX_DIMS + 1; }
static void b_backend(cnp_array *a) { a->backend = (cnp_backend)7; }
static void b_device(cnp_array *a) { a->device = 1; }
static void b_device_neg(cnp_array *a) { a->device = -1; }
static void b_shape_neg(cnp_array *a) { a->shape[0] = -1; }
static void b_stride_odd(cnp_array *a) { a->strides[0] = 3; }
static void b_stride_neg(cnp_array *a) { a->strides[0] = -8; }
static void b_overflow(cnp_array *a)
{
  a->ndim = 2;
  a->shape[0] = INT64_MAX / 2;
  a->shape[1] = 4;
  a->strides[0] = 32;
  a->strides[1] = 8;
}
static void b_overflow_numel(cnp_array *a)
{
  a->ndim = 4;
  for (int d = 0; d < 4; d++) a->shape[d] = (int64_t)1 << 20;
  for (int d = 0; d < 4; d++) a->strides[d] = 8;
}
static void b_null_data(cnp_array *a) { a->data = NULL; }
static void b_misaligned(cnp_array *a) { a->data = (char *)a->data + 1; a->shape[0] -= 1; }
static void b_outside(cnp_array *a) { a->shape[0] += 1; }
static void b_outside_stride(cnp_array *a) { a->strides[0] = 16; }
static void b_wrong_registry_backend(cnp_array *a) { a->backend = CNP_BACKEND_CUDA; }
/* A forged data pointer in the upper half of the address space and an extent that would wrap
 * it past zero (the runtime fuzzer's case): the check itself must stay defined (UBSan). */
static void b_far_wrap(cnp_array *a)
{
  a->data = (void *)((uintptr_t)a->data ^ ((uintptr_t)1 << (sizeof(uintptr_t) * 8 - 1)));
  a->strides[0] = (INT64_MAX / 8 - 1) * 8; /* extent 2^63 - 8 */
  a->shape[0] = 2;
}
static void b_below(cnp_array *a) { a->data = (char *)a->data - 8; }

R(v_null) { (void)f; return cnp_array_validate(NULL, "x"); }
R(v_dtype_neg) { return validate_with(f, b_dtype_neg); }
R(v_dtype_big) { return validate_with(f, b_dtype_big); }
R(v_ndim_neg) { return validate_with(f, b_ndim_neg); }
R(v_ndim_big) { return validate_with(f, b_ndim_big); }
R(v_backend) { return validate_with(f, b_backend); }
R(v_device) { return validate_with(f, b_device); }
R(v_device_neg) { return validate_with(f, b_device_neg); }
R(v_shape_neg) { return validate_with(f, b_shape_neg); }
R(v_stride_odd) { return validate_with(f, b_stride_odd); }
R(v_stride_neg) { return validate_with(f, b_stride_neg); }
R(v_overflow) { return validate_with(f, b_overflow); }
R(v_overflow_numel) { return validate_with(f, b_overflow_numel); }
R(v_null_data) { return validate_with(f, b_null_data); }
R(v_misaligned) { return validate_with(f, b_misaligned); }
R(v_outside) { return validate_with(f, b_outside); }
R(v_outside_stride) { return validate_with(f, b_outside_stride); }
R(v_wrong_backend) { return validate_with(f, b_wrong_registry_backend); }
R(v_far_wrap) { return validate_with(f, b_far_wrap); }
R(v_below) { return validate_with(f, b_below); }
R(v_freed) { return cnp_array_validate(&f->freed, "freed"); }

Test(badinput, array_validate)
{
  static const row rows[] = {
      {"NULL view", CNP_EINVAL, "cnp_array_validate", v_null, 0},
      {"dtype -1", CNP_EDTYPE, "cnp_array_validate", v_dtype_neg, 0},
      {"dtype COUNT", CNP_EDTYPE, "cnp_array_validate", v_dtype_big, 0},
      {"ndim -1", CNP_ESHAPE, "cnp_array_validate", v_ndim_neg, 0},
      {"ndim 5", CNP_ESHAPE, "cnp_array_validate", v_ndim_big, 0},
      {"backend 7", CNP_EDEVICE, "cnp_array_validate", v_backend, 0},
      {"host device 1", CNP_EDEVICE, "cnp_array_validate", v_device, 0},
      {"device -1", CNP_EDEVICE, "cnp_array_validate", v_device_neg, 0},
      {"negative extent", CNP_ESHAPE, "cnp_array_validate", v_shape_neg, 0},
      {"stride not a multiple", CNP_ELAYOUT, "cnp_array_validate", v_stride_odd, 0},
      {"negative stride", CNP_ELAYOUT, "cnp_array_validate", v_stride_neg, 0},
      {"bytes overflow", CNP_EOVERFLOW, "cnp_array_validate", v_overflow, 0},
      {"numel overflow", CNP_EOVERFLOW, "cnp_array_validate", v_overflow_numel, 0},
      {"NULL data", CNP_ESTATE, "cnp_array_validate", v_null_data, 0},
      {"misaligned", CNP_ELAYOUT, "cnp_array_validate", v_misaligned, 0},
      {"one past storage", CNP_ERANGE, "cnp_array_validate", v_outside, 0},
      {"stride past storage", CNP_ERANGE, "cnp_array_validate", v_outside_stride, 0},
      {"forged far pointer, wrapping extent", CNP_ERANGE, "cnp_array_validate", v_far_wrap, 0},
      {"starts before storage", CNP_ERANGE, "cnp_array_validate", v_below, 0},
      {"claims CUDA, storage on host", CNP_EDEVICE, "cnp_array_validate", v_wrong_backend, 0},
      {"freed storage", CNP_ESTATE, "cnp_array_validate", v_freed, 0},
  };
  ROWS(rows);
}

/* ---- allocation and wrapping ------------------------------------------------------------- */

static const int64_t shape1[1] = {N};
R(a_null_out) { (void)f; return cnp_array_alloc_on(NULL, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, shape1, CNP_ORDER_C, 0); }
R(a_null_shape) { return cnp_array_alloc_on(&f->scratch, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, NULL, CNP_ORDER_C, 0); }
R(a_dtype) { return cnp_array_alloc_on(&f->scratch, CNP_BACKEND_HOST, 0, (cnp_dtype)99, 1, shape1, CNP_ORDER_C, 0); }
R(a_ndim) { return cnp_array_alloc_on(&f->scratch, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 5, shape1, CNP_ORDER_C, 0); }
R(a_ndim_neg) { return cnp_array_alloc_on(&f->scratch, CNP_BACKEND_HOST, 0, CNP_FLOAT64, -1, shape1, CNP_ORDER_C, 0); }
R(a_neg_extent)
{
  int64_t s[2] = {4, -3};
  return cnp_array_alloc_on(&f->scratch, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, s, CNP_ORDER_C, 0);
}
R(a_overflow)
{
  int64_t s[3] = {(int64_t)1 << 30, (int64_t)1 << 30, (int64_t)1 << 4};
  return cnp_array_alloc_on(&f->scratch, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 3, s, CNP_ORDER_C, 0);
}
R(a_overflow_f)
{
  int64_t s[2] = {INT64_MAX / 4, 3};
  return cnp_array_alloc_on(&f->scratch, CNP_BACKEND_HOST, 0, CNP_INT32, 2, s, CNP_ORDER_F, 0);
}
R(a_order) { return cnp_array_alloc_on(&f->scratch, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, shape1, (cnp_order)2, 0); }
R(a_flags) { return cnp_array_alloc_on(&f->scratch, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, shape1, CNP_ORDER_C, 0x80); }
R(a_backend) { return cnp_array_alloc_on(&f->scratch, (cnp_backend)5, 0, CNP_FLOAT64, 1, shape1, CNP_ORDER_C, 0); }
R(a_device) { return cnp_array_alloc_on(&f->scratch, CNP_BACKEND_HOST, 2, CNP_FLOAT64, 1, shape1, CNP_ORDER_C, 0); }
R(a_enomem)
{
  cnp__fail_alloc_after(1);
  return cnp_array_alloc_on(&f->scratch, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, shape1, CNP_ORDER_C, 0);
}
R(a_enomem2)
{
  cnp__fail_alloc_after(2);
  return cnp_array_alloc_on(&f->scratch, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, shape1, CNP_ORDER_C, 0);
}
R(w_null_data_nonempty) { return cnp_array_wrap(&f->scratch, NULL, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, shape1, NULL); }
R(w_neg_stride)
{
  int64_t st[1] = {-8};
  return cnp_array_wrap(&f->scratch, f->x.data, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, shape1, st);
}
R(w_odd_stride)
{
  int64_t st[1] = {12};
  return cnp_array_wrap(&f->scratch, f->x.data, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, shape1, st);
}
R(w_misaligned) { return cnp_array_wrap(&f->scratch, (char *)f->x.data + 4, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, shape1, NULL); }
R(w_device) { return cnp_array_wrap(&f->scratch, f->x.data, CNP_BACKEND_HOST, 1, CNP_FLOAT64, 1, shape1, NULL); }
R(free_twice) { return cnp_array_free(&f->freed); }
R(free_null) { (void)f; return cnp_array_free(NULL); }

Test(badinput, array_alloc_wrap_free)
{
  static const row rows[] = {
      {"alloc: out NULL", CNP_EINVAL, "cnp_array_alloc", a_null_out, 0},
      {"alloc: shape NULL", CNP_EINVAL, "cnp_array_alloc", a_null_shape, 0},
      {"alloc: dtype 99", CNP_EDTYPE, "cnp_array_alloc", a_dtype, 0},
      {"alloc: ndim 5", CNP_ESHAPE, "cnp_array_alloc", a_ndim, 0},
      {"alloc: ndim -1", CNP_ESHAPE, "cnp_array_alloc", a_ndim_neg, 0},
      {"alloc: negative extent", CNP_ESHAPE, "cnp_array_alloc", a_neg_extent, 0},
      {"alloc: 2^64 elements", CNP_EOVERFLOW, "cnp_array_alloc", a_overflow, 0},
      {"alloc: F-order overflow", CNP_EOVERFLOW, "cnp_array_alloc", a_overflow_f, 0},
      {"alloc: order 2", CNP_EINVAL, "cnp_array_alloc", a_order, 0},
      {"alloc: unknown flag", CNP_EINVAL, "cnp_array_alloc", a_flags, 0},
      {"alloc: backend 5", CNP_EDEVICE, "cnp_array_alloc", a_backend, 0},
      {"alloc: host device 2", CNP_EDEVICE, "cnp_array_alloc", a_device, 0},
      {"alloc: first allocation fails", CNP_ENOMEM, "cnp_array_alloc", a_enomem, 0},
      {"alloc: second allocation fails", CNP_ENOMEM, "cnp_array_alloc", a_enomem2, 0},
      {"wrap: NULL data, 16 elements", CNP_ESTATE, "cnp_array_wrap", w_null_data_nonempty, 0},
      {"wrap: negative stride", CNP_ELAYOUT, "cnp_array_wrap", w_neg_stride, 0},
      {"wrap: stride 12 for float64", CNP_ELAYOUT, "cnp_array_wrap", w_odd_stride, 0},
      {"wrap: misaligned", CNP_ELAYOUT, "cnp_array_wrap", w_misaligned, 0},
      {"wrap: host device 1", CNP_EDEVICE, "cnp_array_wrap", w_device, 0},
      {"free: twice", CNP_ESTATE, "cnp_array_free", free_twice, 0},
      {"free: NULL", CNP_EINVAL, "cnp_array_free", free_null, 0},
  };
  ROWS(rows);
}

Test(badinput, cuda_alloc_without_cuda)
{
  if (cnp_cuda_available(NULL)) cr_skip_test("CUDA is available here");
  fx f;
  fx_init(&f);
  uint64_t before = fx_sum(&f, 0);
  cnp_status st = cnp_array_alloc_on(&f.scratch, CNP_BACKEND_CUDA, 0, CNP_FLOAT64, 1, shape1,
                                     CNP_ORDER_C, 0);
  cr_expect_eq(st, CNP_EUNAVAILABLE, "alloc on CUDA without CUDA: %s", cnp_status_name(st));
  cr_expect(strstr(cnp_last_error(), "cnp_array_alloc") != NULL, "%s", cnp_last_error());
  cr_expect_eq(fx_sum(&f, 0), before, "the output view was changed");
  fx_fini(&f);
}

/* ---- slices ----------------------------------------------------------------------------- */

R(s_null_out) { return cnp_array_slice(NULL, &f->x, 0, 0, 1); }
R(s_null_src) { return cnp_array_slice(&f->scratch, NULL, 0, 0, 1); }
R(s_axis_neg) { return cnp_array_slice(&f->scratch, &f->x, -1, 0, 1); }
R(s_axis_big) { return cnp_array_slice(&f->scratch, &f->v, 2, 0, 1); }
R(s_start_neg) { return cnp_array_slice(&f->scratch, &f->x, 0, -1, 1); }
R(s_stop_lt_start) { return cnp_array_slice(&f->scratch, &f->x, 0, 5, 4); }
R(s_stop_big) { return cnp_array_slice(&f->scratch, &f->x, 0, 0, N + 1); }
R(s_huge) { return cnp_array_slice(&f->scratch, &f->x, 0, INT64_MAX - 1, INT64_MAX); }
R(s_freed) { return cnp_array_slice(&f->scratch, &f->freed, 0, 0, 1); }
R(s_0d)
{
  cnp_array z = f->x;
  z.ndim = 0;
  return cnp_array_slice(&f->scratch, &z, 0, 0, 0);
}

Test(badinput, array_slice)
{
  static const row rows[] = {
      {"out NULL", CNP_EINVAL, "cnp_array_slice", s_null_out, 0},
      {"source NULL", CNP_EINVAL, "cnp_array_slice", s_null_src, 0},
      {"axis -1", CNP_ERANGE, "cnp_array_slice", s_axis_neg, 0},
      {"axis 2 of 2-d", CNP_ERANGE, "cnp_array_slice", s_axis_big, 0},
      {"start -1", CNP_ERANGE, "cnp_array_slice", s_start_neg, 0},
      {"stop < start", CNP_ERANGE, "cnp_array_slice", s_stop_lt_start, 0},
      {"stop past extent", CNP_ERANGE, "cnp_array_slice", s_stop_big, 0},
      {"start near INT64_MAX", CNP_ERANGE, "cnp_array_slice", s_huge, 0},
      {"freed source", CNP_ESTATE, "cnp_array_slice", s_freed, 0},
      {"0-d source", CNP_ERANGE, "cnp_array_slice", s_0d, 0},
  };
  ROWS(rows);
}

/* ---- copies and fills -------------------------------------------------------------------- */

R(c_dtype) { return cnp_array_copy(&f->f32, &f->x, NULL); }
R(c_ndim) { return cnp_array_copy(&f->v, &f->x, NULL); }
R(c_shape) { return cnp_array_copy(&f->out, &f->x, NULL); }
R(c_dst_null) { return cnp_array_copy(NULL, &f->x, NULL); }
R(c_src_null) { return cnp_array_copy(&f->x, NULL, NULL); }
R(c_dst_freed) { return cnp_array_copy(&f->freed, &f->x, NULL); }
R(c_src_freed) { return cnp_array_copy(&f->x, &f->freed, NULL); }
R(c_dead_stream)
{
  cnp_stream *s = NULL;
  cr_assert_eq(cnp_stream_create(&s), CNP_OK);
  cr_assert_eq(cnp_stream_destroy(s), CNP_OK);
  return cnp_array_copy(&f->keys, &f->sorted, s);
}
R(c_event_as_stream) { return cnp_array_copy(&f->keys, &f->sorted, (cnp_stream *)f->e); }
R(c_dst_outside) { cnp_array d = f->x; d.shape[0] = N + 1; cnp_array s = d; s.data = f->v.data; return cnp_array_copy(&d, &s, NULL); }
R(fz_freed) { return cnp_array_fill_zero(&f->freed, NULL); }
R(fz_bad_stride) { cnp_array a = f->x; a.strides[0] = 4; return cnp_array_fill_zero(&a, NULL); }
R(fz_outside) { cnp_array a = f->out; a.shape[0] = NSEG + 1; return cnp_array_fill_zero(&a, NULL); }

Test(badinput, array_copy_fill)
{
  static const row rows[] = {
      {"copy: dtype mismatch", CNP_EDTYPE, "cnp_array_copy", c_dtype, 0},
      {"copy: ndim mismatch", CNP_ESHAPE, "cnp_array_copy", c_ndim, 0},
      {"copy: extent mismatch", CNP_ESHAPE, "cnp_array_copy", c_shape, 0},
      {"copy: dst NULL", CNP_EINVAL, "cnp_array_copy", c_dst_null, 0},
      {"copy: src NULL", CNP_EINVAL, "cnp_array_copy", c_src_null, 0},
      {"copy: dst freed", CNP_ESTATE, "cnp_array_copy", c_dst_freed, 0},
      {"copy: src freed", CNP_ESTATE, "cnp_array_copy", c_src_freed, 0},
      {"copy: destroyed stream", CNP_ESTATE, "cnp_array_copy", c_dead_stream, 0},
      {"copy: an event passed as stream", CNP_EINVAL, "cnp_array_copy", c_event_as_stream, 0},
      {"copy: dst one past its storage", CNP_ERANGE, "cnp_array_copy", c_dst_outside, 0},
      {"fill: freed", CNP_ESTATE, "cnp_array_fill_zero", fz_freed, 0},
      {"fill: stride 4 for float64", CNP_ELAYOUT, "cnp_array_fill_zero", fz_bad_stride, 0},
      {"fill: one past storage", CNP_ERANGE, "cnp_array_fill_zero", fz_outside, 0},
  };
  ROWS(rows);
}

/* ---- algorithms ---------------------------------------------------------------------------- */

R(cm_mask_dtype) { return cnp_compact_by_mask(&f->x, &f->keys, 1, &f->count, f->ws, NULL); }
R(cm_mask_2d) { return cnp_compact_by_mask(&f->v, &f->keys, 1, &f->count, f->ws, NULL); }
R(cm_array_shape) { return cnp_compact_by_mask(&f->mask, &f->out, 1, &f->count, f->ws, NULL); }
R(cm_alias_mask)
{
  cnp_array a[2] = {f->keys, f->mask};
  return cnp_compact_by_mask(&f->mask, a, 2, &f->count, f->ws, NULL);
}
R(cm_alias_partial)
{
  cnp_array row0, row1;                 /* rows 0..1 and 1..2 of v: overlap in row 1 */
  cr_assert_eq(cnp_array_slice(&row0, &f->v, 0, 0, 2), CNP_OK);
  cr_assert_eq(cnp_array_slice(&row1, &f->v, 0, 1, 3), CNP_OK);
  cnp_array a[2] = {row0, row1};
  return cnp_compact_by_mask(&f->mask, a, 2, &f->count, f->ws, NULL);
}
R(cm_alias_each)
{
  cnp_array a[2] = {f->x, f->x};
  return cnp_compact_by_mask(&f->mask, a, 2, &f->count, f->ws, NULL);
}
R(cm_n_neg) { return cnp_compact_by_mask(&f->mask, &f->keys, -1, &f->count, f->ws, NULL); }
R(cm_arrays_null) { return cnp_compact_by_mask(&f->mask, NULL, 1, &f->count, f->ws, NULL); }
R(cm_nout_null) { return cnp_compact_by_mask(&f->mask, &f->keys, 1, NULL, f->ws, NULL); }
R(cm_ws_null) { return cnp_compact_by_mask(&f->mask, &f->keys, 1, &f->count, NULL, NULL); }
R(cm_ws_dead)
{
  cnp_workspace *w = NULL;
  cr_assert_eq(cnp_workspace_create(&w, CNP_BACKEND_HOST, 0, N, 0, 0), CNP_OK);
  cr_assert_eq(cnp_workspace_destroy(w), CNP_OK);
  return cnp_compact_by_mask(&f->mask, &f->keys, 1, &f->count, w, NULL);
}
R(cm_capacity)
{
  cnp_workspace *w = NULL;
  cr_assert_eq(cnp_workspace_create(&w, CNP_BACKEND_HOST, 0, N - 1, 0, 0), CNP_OK);
  cnp_status st = cnp_compact_by_mask(&f->mask, &f->keys, 1, &f->count, w, NULL);
  cr_assert_eq(cnp_workspace_destroy(w), CNP_OK);
  return st;
}
R(cm_strided)
{
  cnp_array x2 = f->v;                  /* a [N] view with a 3-element gap: not contiguous */
  x2.ndim = 1;
  x2.shape[0] = N / 2;
  x2.strides[0] = 16;
  cnp_array m = f->mask;
  m.shape[0] = N / 2;
  return cnp_compact_by_mask(&m, &x2, 1, &f->count, f->ws, NULL);
}
R(cm_fake_cuda)
{
  cnp_array d = f->x;
  d.backend = CNP_BACKEND_CUDA;
  d.alloc_id = 0;
  return cnp_compact_by_mask(&f->mask, &d, 1, &f->count, f->ws, NULL);
}

R(so_key_dtype) { return cnp_sort_by_key(&f->x, NULL, NULL, 0, 0, f->ws, NULL); }
R(so_key_bool) { return cnp_sort_by_key(&f->mask, NULL, NULL, 0, 0, f->ws, NULL); }
R(so_key_2d) { return cnp_sort_by_key(&f->v, NULL, NULL, 0, 0, f->ws, NULL); }
R(so_key_range)
{
  cnp_array vals[2] = {f->x, f->v};
  return cnp_sort_by_key(&f->keys, &f->order, vals, 2, NSEG - 1, f->ws, NULL);
}
R(so_key_negative)
{
  ((int64_t *)f->keys.data)[N - 1] = -1;
  cnp_status st = cnp_sort_by_key(&f->keys, NULL, &f->x, 1, NSEG, f->ws, NULL);
  ((int64_t *)f->keys.data)[N - 1] = (int64_t)(((N - 1) * 5 + 3) % NSEG);
  return st;
}
R(so_limit_neg) { return cnp_sort_by_key(&f->keys, NULL, NULL, 0, -1, f->ws, NULL); }
R(so_alias_vals) { return cnp_sort_by_key(&f->keys, NULL, &f->keys, 1, NSEG, f->ws, NULL); }
R(so_alias_order) { return cnp_sort_by_key(&f->keys, &f->keys, NULL, 0, NSEG, f->ws, NULL); }
R(so_order_dtype) { return cnp_sort_by_key(&f->keys, &f->x, NULL, 0, NSEG, f->ws, NULL); }
R(so_order_short) { return cnp_sort_by_key(&f->keys, &f->offsets, NULL, 0, NSEG, f->ws, NULL); }
R(so_values_shape) { return cnp_sort_by_key(&f->keys, NULL, &f->out, 1, NSEG, f->ws, NULL); }
R(so_capacity)
{
  cnp_workspace *w = NULL;
  cr_assert_eq(cnp_workspace_create(&w, CNP_BACKEND_HOST, 0, 4, NSEG, 0), CNP_OK);
  cnp_status st = cnp_sort_by_key(&f->keys, NULL, &f->x, 1, NSEG, w, NULL);
  cr_assert_eq(cnp_workspace_destroy(w), CNP_OK);
  return st;
}

R(co_unsorted) { return cnp_cell_offsets(&f->keys, NSEG, &f->offsets, NULL, NULL); }
R(co_range) { return cnp_cell_offsets(&f->sorted, NSEG - 1, &f->scratch, NULL, NULL); }
R(co_range2)
{
  cnp_array off;
  cr_assert_eq(cnp_array_slice(&off, &f->offsets, 0, 0, NSEG), CNP_OK);
  return cnp_cell_offsets(&f->sorted, NSEG - 1, &off, NULL, NULL);
}
R(co_ncells_neg) { return cnp_cell_offsets(&f->sorted, -1, &f->offsets, NULL, NULL); }
R(co_offsets_short) { return cnp_cell_offsets(&f->sorted, NSEG + 1, &f->offsets, NULL, NULL); }
R(co_offsets_dtype)
{
  cnp_array o = f->f32;                 /* 16 float32 entries: wrong dtype, right size check */
  return cnp_cell_offsets(&f->sorted, N - 1, &o, NULL, NULL);
}
R(co_alias) { return cnp_cell_offsets(&f->sorted, N - 1, &f->sorted, NULL, NULL); }
R(co_cells_float) { return cnp_cell_offsets(&f->x, NSEG, &f->offsets, NULL, NULL); }

R(sb_keys_float) { return cnp_segment_boundaries(&f->x, NULL, &f->order, NULL, &f->count, f->ws, NULL); }
R(sb_alias) { return cnp_segment_boundaries(&f->sorted, &f->sorted, NULL, NULL, &f->count, f->ws, NULL); }
R(sb_starts_short) { return cnp_segment_boundaries(&f->sorted, NULL, &f->offsets, NULL, &f->count, f->ws, NULL); }
R(sb_starts_dtype) { return cnp_segment_boundaries(&f->sorted, NULL, &f->x, NULL, &f->count, f->ws, NULL); }
R(sb_unique_dtype) { return cnp_segment_boundaries(&f->sorted, &f->x, NULL, NULL, &f->count, f->ws, NULL); }
R(sb_count_null) { return cnp_segment_boundaries(&f->sorted, NULL, &f->order, NULL, NULL, f->ws, NULL); }

Test(badinput, compact_sort_offsets_boundaries)
{
  static const row rows[] = {
      {"compact: float mask", CNP_EDTYPE, "cnp_compact_by_mask", cm_mask_dtype, 0},
      {"compact: 2-d mask", CNP_EDTYPE, "cnp_compact_by_mask", cm_mask_2d, 0},
      {"compact: array without an N axis", CNP_ESHAPE, "cnp_compact_by_mask", cm_array_shape, 0},
      {"compact: array is the mask", CNP_EALIAS, "cnp_compact_by_mask", cm_alias_mask, 0},
      {"compact: array twice", CNP_EALIAS, "cnp_compact_by_mask", cm_alias_each, 0},
      {"compact: overlapping slices", CNP_EALIAS, "cnp_compact_by_mask", cm_alias_partial, 0},
      {"compact: n_arrays -1", CNP_EINVAL, "cnp_compact_by_mask", cm_n_neg, 0},
      {"compact: arrays NULL", CNP_EINVAL, "cnp_compact_by_mask", cm_arrays_null, 0},
      {"compact: n_out NULL", CNP_EINVAL, "cnp_compact_by_mask", cm_nout_null, 0},
      {"compact: ws NULL", CNP_EINVAL, "cnp_compact_by_mask", cm_ws_null, 0},
      {"compact: destroyed ws", CNP_ESTATE, "cnp_compact_by_mask", cm_ws_dead, 0},
      {"compact: N over capacity", CNP_EOVERFLOW, "cnp_compact_by_mask", cm_capacity, 0},
      {"compact: strided array", CNP_ELAYOUT, "cnp_compact_by_mask", cm_strided, 0},
      {"compact: array on CUDA", CNP_EDEVICE, "cnp_compact_by_mask", cm_fake_cuda, 0},
      {"sort: float keys", CNP_EDTYPE, "cnp_sort_by_key", so_key_dtype, 0},
      {"sort: bool keys", CNP_EDTYPE, "cnp_sort_by_key", so_key_bool, 0},
      {"sort: 2-d keys", CNP_EDTYPE, "cnp_sort_by_key", so_key_2d, 0},
      {"sort: key == key_limit", CNP_ERANGE, "cnp_sort_by_key", so_key_range, 0},
      {"sort: negative key", CNP_ERANGE, "cnp_sort_by_key", so_key_negative, 0},
      {"sort: key_limit -1", CNP_EINVAL, "cnp_sort_by_key", so_limit_neg, 0},
      {"sort: values alias keys", CNP_EALIAS, "cnp_sort_by_key", so_alias_vals, 0},
      {"sort: order aliases keys", CNP_EALIAS, "cnp_sort_by_key", so_alias_order, 0},
      {"sort: float order", CNP_EDTYPE, "cnp_sort_by_key", so_order_dtype, 0},
      {"sort: short order", CNP_ESHAPE, "cnp_sort_by_key", so_order_short, 0},
      {"sort: values without an N axis", CNP_ESHAPE, "cnp_sort_by_key", so_values_shape, 0},
      {"sort: N over capacity", CNP_EOVERFLOW, "cnp_sort_by_key", so_capacity, 0},
      {"offsets: unsorted", CNP_EORDER, "cnp_cell_offsets", co_unsorted, 1},
      {"offsets: invalid offsets view", CNP_EDTYPE, "cnp_cell_offsets", co_range, 0},
      {"offsets: id == n_cells", CNP_ERANGE, "cnp_cell_offsets", co_range2, 1},
      {"offsets: n_cells -1", CNP_EINVAL, "cnp_cell_offsets", co_ncells_neg, 0},
      {"offsets: too few offsets", CNP_ESHAPE, "cnp_cell_offsets", co_offsets_short, 0},
      {"offsets: float offsets", CNP_EDTYPE, "cnp_cell_offsets", co_offsets_dtype, 0},
      {"offsets: offsets alias cells", CNP_EALIAS, "cnp_cell_offsets", co_alias, 0},
      {"offsets: float cells", CNP_EDTYPE, "cnp_cell_offsets", co_cells_float, 0},
      {"boundaries: float keys", CNP_EDTYPE, "cnp_segment_boundaries", sb_keys_float, 0},
      {"boundaries: unique aliases keys", CNP_EALIAS, "cnp_segment_boundaries", sb_alias, 0},
      {"boundaries: starts too short", CNP_ESHAPE, "cnp_segment_boundaries", sb_starts_short, 0},
      {"boundaries: float starts", CNP_EDTYPE, "cnp_segment_boundaries", sb_starts_dtype, 0},
      {"boundaries: unique of another dtype", CNP_EDTYPE, "cnp_segment_boundaries", sb_unique_dtype, 0},
      {"boundaries: count NULL", CNP_EINVAL, "cnp_segment_boundaries", sb_count_null, 0},
  };
  ROWS(rows);
}

R(ws_neg_cap) { cnp_workspace *w = NULL; return cnp_workspace_create(&w, CNP_BACKEND_HOST, 0, -1, 0, 0); }
R(ws_neg_lim) { cnp_workspace *w = NULL; return cnp_workspace_create(&w, CNP_BACKEND_HOST, 0, N, -1, 0); }
R(ws_backend) { cnp_workspace *w = NULL; return cnp_workspace_create(&w, (cnp_backend)9, 0, N, 0, 0); }
R(ws_device) { cnp_workspace *w = NULL; return cnp_workspace_create(&w, CNP_BACKEND_HOST, 3, N, 0, 0); }
R(ws_huge) { cnp_workspace *w = NULL; return cnp_workspace_create(&w, CNP_BACKEND_HOST, 0, INT64_MAX / 2, 0, 0); }
R(ws_huge_row) { cnp_workspace *w = NULL; return cnp_workspace_create(&w, CNP_BACKEND_HOST, 0, (int64_t)1 << 40, 0, SIZE_MAX / 2); }
R(ws_huge_lim) { cnp_workspace *w = NULL; return cnp_workspace_create(&w, CNP_BACKEND_HOST, 0, N, INT64_MAX, 0); }
R(ws_enomem) { cnp_workspace *w = NULL; cnp__fail_alloc_after(1); return cnp_workspace_create(&w, CNP_BACKEND_HOST, 0, N, NSEG, 0); }
R(ws_destroy_twice)
{
  cnp_workspace *w = NULL;
  cr_assert_eq(cnp_workspace_create(&w, CNP_BACKEND_HOST, 0, N, 0, 0), CNP_OK);
  cr_assert_eq(cnp_workspace_destroy(w), CNP_OK);
  return cnp_workspace_destroy(w);
}
R(pl_neg_cap) { cnp_segment_plan *p = NULL; return cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, -4, NSEG); }
R(pl_neg_seg) { cnp_segment_plan *p = NULL; return cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, N, -1); }
R(pl_huge) { cnp_segment_plan *p = NULL; return cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, INT64_MAX / 2, INT64_MAX / 2); }
R(pl_backend) { cnp_segment_plan *p = NULL; return cnp_segment_plan_create(&p, (cnp_backend)3, 0, N, NSEG); }
R(pl_enomem) { cnp_segment_plan *p = NULL; cnp__fail_alloc_after(1); return cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, N, NSEG); }
R(pl_sum_unbuilt) { return cnp_segment_plan_sum(f->plan, &f->x, &f->out, NULL); }
R(pl_build_range)
{
  cnp_segment_plan *p = NULL;
  cr_assert_eq(cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, N, NSEG - 1), CNP_OK);
  cnp_status st = cnp_segment_plan_build(p, &f->keys, NULL);
  cnp_status st2 = cnp_segment_plan_sum(p, &f->x, &f->out, NULL);   /* unbuilt after the failure */
  cr_expect_eq(st2, CNP_ESTATE, "sum after a failed build: %s", cnp_status_name(st2));
  cr_assert_eq(cnp_segment_plan_destroy(p), CNP_OK);
  return st;
}
R(pl_build_float) { return cnp_segment_plan_build(f->plan, &f->x, NULL); }
R(pl_build_capacity)
{
  cnp_segment_plan *p = NULL;
  cr_assert_eq(cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, N - 1, NSEG), CNP_OK);
  cnp_status st = cnp_segment_plan_build(p, &f->keys, NULL);
  cr_assert_eq(cnp_segment_plan_destroy(p), CNP_OK);
  return st;
}
static cnp_status built(fx *f)
{
  cnp_status st = cnp_segment_plan_build(f->plan, &f->keys, NULL);
  cr_assert_eq(st, CNP_OK, "%s", cnp_last_error());
  cnp_clear_error();
  return st;
}
R(pl_sum_alias) { built(f); cnp_array o; cr_assert_eq(cnp_array_slice(&o, &f->x, 0, 0, NSEG), CNP_OK); return cnp_segment_plan_sum(f->plan, &f->x, &o, NULL); }
R(pl_sum_out_shape) { built(f); return cnp_segment_plan_sum(f->plan, &f->x, &f->v, NULL); }
R(pl_sum_out_dtype) { built(f); cnp_array o; cr_assert_eq(cnp_array_slice(&o, &f->f32, 0, 0, NSEG), CNP_OK); return cnp_segment_plan_sum(f->plan, &f->x, &o, NULL); }
R(pl_sum_values_rows) { built(f); return cnp_segment_plan_sum(f->plan, &f->out, &f->out, NULL); }
R(pl_sum_dead)
{
  cnp_segment_plan *p = NULL;
  cr_assert_eq(cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, N, NSEG), CNP_OK);
  cr_assert_eq(cnp_segment_plan_destroy(p), CNP_OK);
  return cnp_segment_plan_sum(p, &f->x, &f->out, NULL);
}
R(pl_sum_null) { (void)f; return cnp_segment_plan_sum(NULL, &f->x, &f->out, NULL); }
R(ss_nseg_neg) { return cnp_segment_sum(&f->x, &f->keys, -1, &f->out, NULL); }
R(ss_range) { return cnp_segment_sum(&f->x, &f->keys, NSEG - 1, &f->out, NULL); }

Test(badinput, workspace_and_segment_plans)
{
  static const row rows[] = {
      {"workspace: capacity -1", CNP_EINVAL, "cnp_workspace_create", ws_neg_cap, 0},
      {"workspace: key_limit -1", CNP_EINVAL, "cnp_workspace_create", ws_neg_lim, 0},
      {"workspace: backend 9", CNP_EINVAL, "cnp_workspace_create", ws_backend, 0},
      {"workspace: host device 3", CNP_EDEVICE, "cnp_workspace_create", ws_device, 0},
      {"workspace: capacity INT64_MAX/2", CNP_EOVERFLOW, "cnp_workspace_create", ws_huge, 0},
      {"workspace: row_bytes SIZE_MAX/2", CNP_EOVERFLOW, "cnp_workspace_create", ws_huge_row, 0},
      {"workspace: key_limit INT64_MAX", CNP_EOVERFLOW, "cnp_workspace_create", ws_huge_lim, 0},
      {"workspace: no memory", CNP_ENOMEM, "cnp_workspace_create", ws_enomem, 0},
      {"workspace: destroyed twice", CNP_ESTATE, "cnp_workspace_destroy", ws_destroy_twice, 0},
      {"plan: capacity -4", CNP_EINVAL, "cnp_segment_plan_create", pl_neg_cap, 0},
      {"plan: n_segments -1", CNP_EINVAL, "cnp_segment_plan_create", pl_neg_seg, 0},
      {"plan: sizes overflow", CNP_EOVERFLOW, "cnp_segment_plan_create", pl_huge, 0},
      {"plan: backend 3", CNP_EINVAL, "cnp_segment_plan_create", pl_backend, 0},
      {"plan: no memory", CNP_ENOMEM, "cnp_segment_plan_create", pl_enomem, 0},
      {"plan: sum before build", CNP_ESTATE, "cnp_segment_plan_sum", pl_sum_unbuilt, 0},
      {"plan: key == n_segments", CNP_ERANGE, "cnp_segment_plan_build", pl_build_range, 0},
      {"plan: float keys", CNP_EDTYPE, "cnp_segment_plan_build", pl_build_float, 0},
      {"plan: N over capacity", CNP_EOVERFLOW, "cnp_segment_plan_build", pl_build_capacity, 0},
      {"plan: out overlaps values", CNP_EALIAS, "cnp_segment_plan_sum", pl_sum_alias, 0},
      {"plan: out of shape [3, 16]", CNP_ESHAPE, "cnp_segment_plan_sum", pl_sum_out_shape, 0},
      {"plan: float32 out for float64", CNP_EDTYPE, "cnp_segment_plan_sum", pl_sum_out_dtype, 0},
      {"plan: values of 8 rows, built with 16", CNP_ESHAPE, "cnp_segment_plan_sum", pl_sum_values_rows, 0},
      {"plan: destroyed", CNP_ESTATE, "cnp_segment_plan_sum", pl_sum_dead, 0},
      {"plan: NULL", CNP_EINVAL, "cnp_segment_plan_sum", pl_sum_null, 0},
      {"segment_sum: n_segments -1", CNP_EINVAL, "cnp_segment_sum", ss_nseg_neg, 0},
      {"segment_sum: key == n_segments", CNP_ERANGE, "cnp_segment_plan_build", ss_range, 0},
  };
  ROWS(rows);
}

/* ---- snapshots, streams, events ---------------------------------------------------------- */

R(sn_null_out) { return cnp_snapshot_create(NULL, &f->x, 2); }
R(sn_null_like) { cnp_snapshot *s = NULL; (void)f; return cnp_snapshot_create(&s, NULL, 2); }
R(sn_like_freed) { cnp_snapshot *s = NULL; return cnp_snapshot_create(&s, &f->freed, 2); }
R(sn_like_overflow)
{
  cnp_snapshot *s = NULL;
  cnp_array a = f->x;
  a.ndim = 2;
  a.shape[0] = INT64_MAX / 4;
  a.shape[1] = 8;
  a.strides[0] = 64;
  a.strides[1] = 8;
  a.alloc_id = 0;
  return cnp_snapshot_create(&s, &a, 2);
}
R(sn_slots_big) { cnp_snapshot *s = NULL; return cnp_snapshot_create(&s, &f->x, 1 << 20); }
R(sn_enomem) { cnp_snapshot *s = NULL; cnp__fail_alloc_after(1); return cnp_snapshot_create(&s, &f->x, 2); }
R(sn_enomem_slot) { cnp_snapshot *s = NULL; cnp__fail_alloc_after(3); return cnp_snapshot_create(&s, &f->x, 3); }
R(sc_dtype) { cnp_snapshot_handle h; return cnp_snapshot_copy(f->snap, &f->keys, NULL, NULL, &h); }
R(sc_shape) { cnp_snapshot_handle h; return cnp_snapshot_copy(f->snap, &f->out, NULL, NULL, &h); }
R(sc_both) { cnp_snapshot_handle h; return cnp_snapshot_copy(f->snap, &f->x, f->s, f->e, &h); }
R(sc_freed) { cnp_snapshot_handle h; return cnp_snapshot_copy(f->snap, &f->freed, NULL, NULL, &h); }
R(sc_null_out) { return cnp_snapshot_copy(f->snap, &f->x, NULL, NULL, NULL); }
R(sc_dead_stream)
{
  cnp_stream *s = NULL;
  cnp_snapshot_handle h;
  cr_assert_eq(cnp_stream_create(&s), CNP_OK);
  cr_assert_eq(cnp_stream_destroy(s), CNP_OK);
  return cnp_snapshot_copy(f->snap, &f->x, s, NULL, &h);
}
R(sc_dead_snapshot)
{
  cnp_snapshot *s = NULL;
  cnp_snapshot_handle h;
  cr_assert_eq(cnp_snapshot_create(&s, &f->x, 2), CNP_OK);
  cr_assert_eq(cnp_snapshot_destroy(s), CNP_OK);
  return cnp_snapshot_copy(s, &f->x, NULL, NULL, &h);
}
R(sr_stale)
{
  cnp_snapshot_handle h1, h2, h3;
  cr_assert_eq(cnp_snapshot_copy(f->snap, &f->x, NULL, NULL, &h1), CNP_OK);
  cr_assert_eq(cnp_snapshot_copy(f->snap, &f->x, NULL, NULL, &h2), CNP_OK);
  cr_assert_eq(cnp_snapshot_copy(f->snap, &f->x, NULL, NULL, &h3), CNP_OK);  /* reuses h1's slot */
  f->h = h3;                            /* the checksum reads a live handle */
  cnp_clear_error();
  return cnp_snapshot_result(h1, &f->scratch);
}
R(sr_slot) { cnp_snapshot_handle h = f->h; h.slot = 7; return cnp_snapshot_result(h, &f->scratch); }
R(sr_slot_neg) { cnp_snapshot_handle h = f->h; h.slot = -1; return cnp_snapshot_result(h, &f->scratch); }
R(sr_owner_null) { cnp_snapshot_handle h = f->h; h.owner = NULL; return cnp_snapshot_result(h, &f->scratch); }
R(sr_generation0) { cnp_snapshot_handle h = f->h; h.generation = 0; return cnp_snapshot_result(h, &f->scratch); }
R(sr_future) { cnp_snapshot_handle h = f->h; h.generation += 5; return cnp_snapshot_result(h, &f->scratch); }
R(sr_null_view) { return cnp_snapshot_result(f->h, NULL); }
R(sr_dead_owner)
{
  cnp_snapshot *s = NULL;
  cnp_snapshot_handle h;
  cr_assert_eq(cnp_snapshot_create(&s, &f->x, 2), CNP_OK);
  cr_assert_eq(cnp_snapshot_copy(s, &f->x, NULL, NULL, &h), CNP_OK);
  cr_assert_eq(cnp_snapshot_destroy(s), CNP_OK);
  return cnp_snapshot_result(h, &f->scratch);
}
R(st_null) { (void)f; return cnp_stream_create(NULL); }
R(st_destroy_twice)
{
  cnp_stream *s = NULL;
  cr_assert_eq(cnp_stream_create(&s), CNP_OK);
  cr_assert_eq(cnp_stream_destroy(s), CNP_OK);
  return cnp_stream_destroy(s);
}
R(st_sync_event) { return cnp_stream_synchronize((cnp_stream *)f->e); }
R(st_enomem) { cnp_stream *s = NULL; (void)f; cnp__fail_alloc_after(1); return cnp_stream_create(&s); }
R(ev_elapsed_notiming) { float ms = -1; return cnp_event_elapsed_ms(f->e, f->e, &ms); }
R(ev_dead_record)
{
  cnp_event *e = NULL;
  cr_assert_eq(cnp_event_create(&e, 0), CNP_OK);
  cr_assert_eq(cnp_event_destroy(e), CNP_OK);
  return cnp_event_record(e, f->s);
}
R(ev_flags) { cnp_event *e = NULL; (void)f; return cnp_event_create(&e, 0x40); }
R(ev_wait_stream_as_event) { return cnp_stream_wait_event(f->s, (cnp_event *)f->s); }

Test(badinput, snapshots_streams_events)
{
  static const row rows[] = {
      {"snapshot: out NULL", CNP_EINVAL, "cnp_snapshot_create", sn_null_out, 0},
      {"snapshot: like NULL", CNP_EINVAL, "cnp_snapshot_create", sn_null_like, 0},
      {"snapshot: like freed", CNP_ESTATE, "cnp_snapshot_create", sn_like_freed, 0},
      {"snapshot: like overflows", CNP_EOVERFLOW, "cnp_snapshot_create", sn_like_overflow, 0},
      {"snapshot: 2^20 slots", CNP_ERANGE, "cnp_snapshot_create", sn_slots_big, 0},
      {"snapshot: no memory (struct)", CNP_ENOMEM, "cnp_snapshot_create", sn_enomem, 0},
      {"snapshot: no memory (third slot)", CNP_ENOMEM, "cnp_snapshot_create", sn_enomem_slot, 0},
      {"copy: dtype differs", CNP_EDTYPE, "cnp_snapshot_copy", sc_dtype, 0},
      {"copy: shape differs", CNP_ESHAPE, "cnp_snapshot_copy", sc_shape, 0},
      {"copy: stream and event", CNP_EINVAL, "cnp_snapshot_copy", sc_both, 0},
      {"copy: freed field", CNP_ESTATE, "cnp_snapshot_copy", sc_freed, 0},
      {"copy: out NULL", CNP_EINVAL, "cnp_snapshot_copy", sc_null_out, 0},
      {"copy: destroyed stream", CNP_ESTATE, "cnp_snapshot_copy", sc_dead_stream, 0},
      {"copy: destroyed snapshot", CNP_ESTATE, "cnp_snapshot_copy", sc_dead_snapshot, 0},
      {"result: slot reused", CNP_ESTALE, "cnp_snapshot_result", sr_stale, 0},
      {"result: slot 7 of 2", CNP_EINVAL, "cnp_snapshot_result", sr_slot, 0},
      {"result: slot -1", CNP_EINVAL, "cnp_snapshot_result", sr_slot_neg, 0},
      {"result: no owner", CNP_EINVAL, "cnp_snapshot_result", sr_owner_null, 0},
      {"result: generation 0", CNP_EINVAL, "cnp_snapshot_result", sr_generation0, 0},
      {"result: generation from the future", CNP_EINVAL, "cnp_snapshot_result", sr_future, 0},
      {"result: view NULL", CNP_EINVAL, "cnp_snapshot_result", sr_null_view, 0},
      {"result: destroyed snapshot", CNP_ESTATE, "cnp_snapshot_result", sr_dead_owner, 0},
      {"stream: out NULL", CNP_EINVAL, "cnp_stream_create", st_null, 0},
      {"stream: destroyed twice", CNP_ESTATE, "cnp_stream_destroy", st_destroy_twice, 0},
      {"stream: an event passed", CNP_EINVAL, "cnp_stream_synchronize", st_sync_event, 0},
      {"stream: no memory", CNP_ENOMEM, "cnp_stream_create", st_enomem, 0},
      {"event: elapsed without timing", CNP_EINVAL, "cnp_event_elapsed_ms", ev_elapsed_notiming, 0},
      {"event: record destroyed", CNP_ESTATE, "cnp_event_record", ev_dead_record, 0},
      {"event: unknown flags", CNP_EINVAL, "cnp_event_create", ev_flags, 0},
      {"event: a stream passed", CNP_EINVAL, "cnp_stream_wait_event", ev_wait_stream_as_event, 0},
  };
  ROWS(rows);
}
