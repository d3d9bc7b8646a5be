/*
** algo_reduce_host.c — host (OpenMP) scans and reductions: cnp_scan and cnp_reduce
** (entries of cnp__algo_host, algo_host.c). Arguments arrive validated by algo.c.
**
** The fixed partition (docs/algorithms.md, "Scans and reductions"): n elements are cut into
** blocks of B = max(32768, ceil(n / 4096)) elements, block b holding [b*B, min(n, (b+1)*B)).
** B depends on n only, never on the thread count, and every floating-point operation below
** happens in an order fixed by n, so results are bit-identical for any number of threads.
**   block total  eight partial sums, element i of the block going to lane i mod 8, each
**                lane in element order from +0, then ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)).
**   reduction    the block totals (or minima, maxima, counts) combined in block order:
**                r = t0, then r = r (op) t_b for b = 1, 2, ...
**   scan         P_b = P_(b-1) + total_b (P_-1 = +0), in block order; block b is scanned
**                element by element from P_(b-1): inclusive y_i = run += x_i, exclusive
**                y_i = run, run += x_i. Threads take blocks round-robin and wait for
**                P_(b-1) (a chained scan: each block is read twice, the second time from
**                cache).
** Integers wrap (unsigned arithmetic of the element width); float16 accumulates in float32
** and rounds each output once.
*/
#define _POSIX_C_SOURCE 200809L
#include "algo_internal.h"

#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunknown-pragmas"   /* serial build: omp pragmas unused */
#endif

#define RB_MIN        32768            /* smallest block (elements) */
#define RB_MAX_BLOCKS 4096             /* most blocks: partials live on the stack */

static int64_t block_len(int64_t n)
{
  int64_t b = (n + RB_MAX_BLOCKS - 1) / RB_MAX_BLOCKS;
  return b > RB_MIN ? b : RB_MIN;
}

static int n_threads(int nb)
{
#ifdef _OPENMP
  int t = omp_get_max_threads();
  if (t > nb) t = nb;
  return t < 1 ? 1 : t;
#else
  (void)nb;
  return 1;
#endif
}

static int thread_num(void)
{
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

static int team(void)
{
#ifdef _OPENMP
  return omp_get_num_threads();
#else
  return 1;
#endif
}

/* Wait for a flag another thread of the team sets (yield now and then: the team may share
** cores with other work). */
static void wait_flag(atomic_int *f)
{
  for (unsigned spins = 0; !atomic_load_explicit(f, memory_order_acquire); spins++)
    if ((spins & 255u) == 255u) sched_yield();
}

/* ---- element access per dtype -------------------------------------------------------- */

#define LD_CAST(A) (A)
static inline float ld_half(uint16_t h) { return cnp_half_to_float(h); }

/* D: dtype tag; T: element type; A: sum accumulator; V: comparison value type;
** LA / LV: element -> A / V; SA: A -> element; NAN_: whether a V is a NaN. */
#define REDUCE_DEFS(D, T, A, V, LA, LV, SA, NAN_)                                                \
  static A D##_total(const T *x, int64_t lo, int64_t hi)                                   \
  {                                                                                        \
    A l[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                     \
    int64_t i = lo;                                                                        \
    for (; i + 8 <= hi; i += 8)                                                            \
      for (int j = 0; j < 8; j++) l[j] += LA(x[i + j]);                                    \
    for (int j = 0; i < hi; i++, j++) l[j] += LA(x[i]);                                    \
    return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));              \
  }                                                                                        \
  /* min (want_max 0) or max over a non-empty [lo, hi); *nan |= a NaN was seen */           \
  static V D##_ext(const T *x, int64_t lo, int64_t hi, int want_max, int *nan)             \
  {                                                                                        \
    V l[8];                                                                                \
    int bad = 0;                                                                           \
    for (int j = 0; j < 8; j++) l[j] = LV(x[lo]);                                          \
    int64_t i = lo;                                                                        \
    if (want_max) {                                                                        \
      for (; i + 8 <= hi; i += 8)                                                          \
        for (int j = 0; j < 8; j++) {                                                      \
          V v = LV(x[i + j]);                                                              \
          bad |= NAN_(v);                                                                   \
          l[j] = v > l[j] ? v : l[j];                                                      \
        }                                                                                  \
    } else {                                                                               \
      for (; i + 8 <= hi; i += 8)                                                          \
        for (int j = 0; j < 8; j++) {                                                      \
          V v = LV(x[i + j]);                                                              \
          bad |= NAN_(v);                                                                   \
          l[j] = v < l[j] ? v : l[j];                                                      \
        }                                                                                  \
    }                                                                                      \
    V r = l[0];                                                                            \
    for (int j = 1; j < 8; j++) r = want_max ? (l[j] > r ? l[j] : r) : (l[j] < r ? l[j] : r); \
    for (; i < hi; i++) {                                                                  \
      V v = LV(x[i]);                                                                      \
      bad |= NAN_(v);                                                                       \
      r = want_max ? (v > r ? v : r) : (v < r ? v : r);                                    \
    }                                                                                      \
    *nan |= bad;                                                                           \
    return r;                                                                              \
  }                                                                                        \
  static void D##_scan_block(const T *x, T *y, int64_t lo, int64_t hi, A run, int excl)    \
  {                                                                                        \
    if (excl) {                                                                            \
      for (int64_t i = lo; i < hi; i++) {                                                  \
        A v = LA(x[i]);                                                                    \
        y[i] = SA(run);                                                                    \
        run += v;                                                                          \
      }                                                                                    \
    } else {                                                                               \
      for (int64_t i = lo; i < hi; i++) {                                                  \
        run += LA(x[i]);                                                                   \
        y[i] = SA(run);                                                                    \
      }                                                                                    \
    }                                                                                      \
  }                                                                                        \
  /* Chained scan of one contiguous vector of n elements (see the header). */              \
  static void D##_scan(const void *xv, void *yv, int64_t n, int excl)                      \
  {                                                                                        \
    const T *x = xv;                                                                       \
    T *y = yv;                                                                             \
    int64_t B = block_len(n);                                                              \
    int nb = (int)((n + B - 1) / B);                                                       \
    A pre[RB_MAX_BLOCKS];                                                                  \
    atomic_int ready[RB_MAX_BLOCKS];                                                       \
    for (int b = 0; b < nb; b++) atomic_init(&ready[b], 0);                                \
    int nt = n_threads(nb);                                                                \
    _Pragma("omp parallel num_threads(nt) if (nt > 1)")                                    \
    {                                                                                      \
      for (int b = thread_num(), T_ = team(); b < nb; b += T_) {                           \
        int64_t lo = (int64_t)b * B, hi = lo + B < n ? lo + B : n;                         \
        A tot = D##_total(x, lo, hi);                                                      \
        A prev = 0;                                                                        \
        if (b > 0) {                                                                       \
          wait_flag(&ready[b - 1]);                                                        \
          prev = pre[b - 1];                                                               \
        }                                                                                  \
        pre[b] = prev + tot;                                                               \
        atomic_store_explicit(&ready[b], 1, memory_order_release);                         \
        D##_scan_block(x, y, lo, hi, prev, excl);                                          \
      }                                                                                    \
    }                                                                                      \
  }

#define ST_I32(a) ((int32_t)(a))
#define ST_SAME(a) (a)
static inline uint16_t st_half(float a) { return cnp_float_to_half(a); }

#define NO_NAN(v) 0
#define IS_NAN(v) ((v) != (v))

REDUCE_DEFS(i32, int32_t, uint32_t, int32_t, (uint32_t), LD_CAST(int32_t), ST_I32, NO_NAN)
REDUCE_DEFS(i64, int64_t, uint64_t, int64_t, (uint64_t), LD_CAST(int64_t), (int64_t), NO_NAN)
REDUCE_DEFS(u64, uint64_t, uint64_t, uint64_t, LD_CAST(uint64_t), LD_CAST(uint64_t), ST_SAME,
            NO_NAN)
REDUCE_DEFS(f16, uint16_t, float, float, ld_half, ld_half, st_half, IS_NAN)
REDUCE_DEFS(f32, float, float, float, LD_CAST(float), LD_CAST(float), ST_SAME, IS_NAN)
REDUCE_DEFS(f64, double, double, double, LD_CAST(double), LD_CAST(double), ST_SAME, IS_NAN)

/* ---- counts of nonzero elements ------------------------------------------------------ */

/* Nonzero test per dtype on the element's bytes: bool any nonzero byte, float16 any bit
** but the sign (so -0 is zero and NaN is nonzero, as for the other floats). */
#define COUNT_DEF(D, T, NZ)                                                                \
  static int64_t D##_count(const T *x, int64_t lo, int64_t hi)                             \
  {                                                                                        \
    int64_t c = 0;                                                                         \
    for (int64_t i = lo; i < hi; i++) c += NZ(x[i]);                                       \
    return c;                                                                              \
  }
#define NZ_PLAIN(v) ((v) != 0)
#define NZ_HALF(v) (((v) & 0x7fffu) != 0)
COUNT_DEF(b8, uint8_t, NZ_PLAIN)
COUNT_DEF(c32, int32_t, NZ_PLAIN)
COUNT_DEF(c64, uint64_t, NZ_PLAIN)
COUNT_DEF(c16, uint16_t, NZ_HALF)
COUNT_DEF(cf32, float, NZ_PLAIN)
COUNT_DEF(cf64, double, NZ_PLAIN)

static int64_t count_block(cnp_dtype t, const void *x, int64_t lo, int64_t hi)
{
  switch (t) {
  case CNP_BOOL: return b8_count(x, lo, hi);
  case CNP_INT32: return c32_count(x, lo, hi);
  case CNP_INT64: case CNP_UINT64: return c64_count(x, lo, hi);
  case CNP_FLOAT16: return c16_count(x, lo, hi);
  case CNP_FLOAT32: return cf32_count(x, lo, hi);
  default: return cf64_count(x, lo, hi);
  }
}

/* ---- reductions ---------------------------------------------------------------------- */

/* Block results of every dtype in one 8-byte slot. */
typedef union red_slot {
  uint32_t u32;
  int32_t  i32;
  int64_t  i64;
  uint64_t u64;
  float    f32;
  double   f64;
} red_slot;

/* Block b's result into *r (op over [lo, hi), non-empty); *nan set by min/max. */
static void block_result(cnp_dtype t, cnp_reduce_op op, const void *x, int64_t lo,
                         int64_t hi, red_slot *r, int *nan)
{
  int mx = op == CNP_REDUCE_MAX;
  if (op == CNP_REDUCE_COUNT) {
    r->i64 = count_block(t, x, lo, hi);
    return;
  }
  switch (t) {
  case CNP_INT32:
    if (op == CNP_REDUCE_SUM) r->u32 = i32_total(x, lo, hi);
    else r->i32 = i32_ext(x, lo, hi, mx, nan);
    break;
  case CNP_INT64:
    if (op == CNP_REDUCE_SUM) r->u64 = i64_total(x, lo, hi);
    else r->i64 = i64_ext(x, lo, hi, mx, nan);
    break;
  case CNP_UINT64:
    r->u64 = op == CNP_REDUCE_SUM ? u64_total(x, lo, hi) : u64_ext(x, lo, hi, mx, nan);
    break;
  case CNP_FLOAT16:
    r->f32 = op == CNP_REDUCE_SUM ? f16_total(x, lo, hi) : f16_ext(x, lo, hi, mx, nan);
    break;
  case CNP_FLOAT32:
    r->f32 = op == CNP_REDUCE_SUM ? f32_total(x, lo, hi) : f32_ext(x, lo, hi, mx, nan);
    break;
  default:
    r->f64 = op == CNP_REDUCE_SUM ? f64_total(x, lo, hi) : f64_ext(x, lo, hi, mx, nan);
    break;
  }
}

#define PICK(mx, a, b) ((mx) ? ((b) > (a) ? (b) : (a)) : ((b) < (a) ? (b) : (a)))

/* acc = acc (op) b, in the slot's type for dtype t. */
static void combine(cnp_dtype t, cnp_reduce_op op, red_slot *acc, const red_slot *b)
{
  int mx = op == CNP_REDUCE_MAX, sum = op == CNP_REDUCE_SUM;
  if (op == CNP_REDUCE_COUNT) {
    acc->i64 += b->i64;
    return;
  }
  switch (t) {
  case CNP_INT32:
    if (sum) acc->u32 += b->u32;
    else acc->i32 = PICK(mx, acc->i32, b->i32);
    break;
  case CNP_INT64:
    if (sum) acc->u64 += b->u64;
    else acc->i64 = PICK(mx, acc->i64, b->i64);
    break;
  case CNP_UINT64:
    acc->u64 = sum ? acc->u64 + b->u64 : PICK(mx, acc->u64, b->u64);
    break;
  case CNP_FLOAT16: case CNP_FLOAT32:
    acc->f32 = sum ? acc->f32 + b->f32 : PICK(mx, acc->f32, b->f32);
    break;
  default:
    acc->f64 = sum ? acc->f64 + b->f64 : PICK(mx, acc->f64, b->f64);
    break;
  }
}

/* The result of an empty reduction: 0 for sums and counts, the identity of min/max. */
static void empty_result(cnp_dtype t, cnp_reduce_op op, red_slot *r)
{
  memset(r, 0, sizeof *r);
  int mx = op == CNP_REDUCE_MAX;
  if (op == CNP_REDUCE_SUM || op == CNP_REDUCE_COUNT) return;
  switch (t) {
  case CNP_INT32: r->i32 = mx ? INT32_MIN : INT32_MAX; break;
  case CNP_INT64: r->i64 = mx ? INT64_MIN : INT64_MAX; break;
  case CNP_UINT64: r->u64 = mx ? 0 : UINT64_MAX; break;
  case CNP_FLOAT16: case CNP_FLOAT32: r->f32 = mx ? -INFINITY : INFINITY; break;
  default: r->f64 = mx ? -INFINITY : INFINITY; break;
  }
}

/* Store the slot into out (1 element of out's dtype). NaN seen by min/max: the quiet NaN. */
static void store_result(cnp_dtype t, cnp_reduce_op op, const red_slot *r, int nan,
                         cnp_array *out)
{
  if (op == CNP_REDUCE_COUNT) {
    memcpy(out->data, &r->i64, sizeof r->i64);
    return;
  }
  switch (t) {
  case CNP_INT32: memcpy(out->data, &r->u32, 4); break;
  case CNP_INT64: case CNP_UINT64: memcpy(out->data, &r->u64, 8); break;
  case CNP_FLOAT16: {
    uint16_t h = nan ? (uint16_t)0x7e00u : cnp_float_to_half(r->f32);
    memcpy(out->data, &h, 2);
    break;
  }
  case CNP_FLOAT32: {
    float f = nan ? (float)NAN : r->f32;
    memcpy(out->data, &f, 4);
    break;
  }
  default: {
    double d = nan ? (double)NAN : r->f64;
    memcpy(out->data, &d, 8);
    break;
  }
  }
}

cnp_status cnp__host_reduce(const cnp_array *in, cnp_reduce_op op, cnp_array *out,
                            int64_t n)
{
  red_slot acc;
  int nan = 0;
  if (n == 0) {
    empty_result(in->dtype, op, &acc);
    store_result(in->dtype, op, &acc, 0, out);
    return CNP_OK;
  }
  int64_t B = block_len(n);
  int nb = (int)((n + B - 1) / B);
  red_slot part[RB_MAX_BLOCKS];
  int nans[RB_MAX_BLOCKS];
  int nt = n_threads(nb);
  cnp_dtype t = in->dtype;
  const void *x = in->data;
#pragma omp parallel for schedule(static) num_threads(nt) if (nt > 1)
  for (int b = 0; b < nb; b++) {
    int64_t lo = (int64_t)b * B, hi = lo + B < n ? lo + B : n;
    nans[b] = 0;
    block_result(t, op, x, lo, hi, &part[b], &nans[b]);
  }
  acc = part[0];
  nan = nans[0];
  for (int b = 1; b < nb; b++) {
    combine(t, op, &acc, &part[b]);
    nan |= nans[b];
  }
  store_result(t, op, &acc, nan, out);
  return CNP_OK;
}

/* ---- scans --------------------------------------------------------------------------- */

cnp_status cnp__host_scan(const cnp_array *in, cnp_array *out, cnp_scan_kind kind,
                          const cnp__rows *rows, int64_t n)
{
  int excl = kind == CNP_SCAN_EXCLUSIVE;
  const char *x = in->data;
  char *y = out->data;
  for (int64_t c = 0; c < rows->n_blocks && n > 0; c++) {
    const void *xc = x + c * rows->block_stride;
    void *yc = y + c * rows->block_stride;
    switch (in->dtype) {
    case CNP_INT32: i32_scan(xc, yc, n, excl); break;
    case CNP_INT64: i64_scan(xc, yc, n, excl); break;
    case CNP_UINT64: u64_scan(xc, yc, n, excl); break;
    case CNP_FLOAT16: f16_scan(xc, yc, n, excl); break;
    case CNP_FLOAT32: f32_scan(xc, yc, n, excl); break;
    default: f64_scan(xc, yc, n, excl); break;
    }
  }
  return CNP_OK;
}
