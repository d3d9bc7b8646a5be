/*
** algo_reduce_host.c — host (OpenMP) scans and reductions: cnp_scan and cnp_reduce
** (entries of cnp__algo_host, algo_host.c). Arguments arrive validated by algo.c.
**
** The fixed partition (docs/algorithms.md, "Scans and reductions"): n elements are cut into
** blocks of B = max(32768, ceil(n / 1024)) elements, block b holding [b*B, min(n, (b+1)*B)).
** B depends on n only, never on the thread count, and every floating-point operation below
** happens in an order fixed by n, so results are bit-identical for any number of threads.
**   block total  eight partial sums, element i of the block going to lane i mod 8, each
**                lane in element order from +0, then ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)).
**   reduction    the block totals (or minima, maxima, counts) combined in block order:
**                r = t0, then r = r (op) t_b for b = 1, 2, ...
**   scan         block b is cut into 4 sub-blocks of L = ceil(len / 4) elements (the last
**                ones shorter or empty); each has a running sum from +0 in element order
**                (inclusive: run += x_i then the output, exclusive: the output then
**                run += x_i) and a total r_s. With P_(-1) = +0 and o_0 = P_(b-1),
**                o_s = o_(s-1) + r_(s-1): y_i = o_s + run_i, and P_b = o_3 + r_3. The 4
**                running sums advance together (4 independent chains); threads take
**                blocks round-robin; whoever brings in the totals that let the chain
**                advance computes the next P_b, always in block order; a block gets its
**                offsets once P_(b-1) is known (at once, from cache, when the threads keep
**                pace; a thread waits only after reading all its blocks).
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
#define RB_MAX_BLOCKS 1024             /* most blocks: partials live on the stack */

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
** LA / LV: element -> A / V; SA: A -> element; NAN_: whether a V is a NaN; HALF_: 1 for
** float16 (whose scans cannot keep float32 partial sums in the output). */
#define REDUCE_DEFS(D, T, A, V, LA, LV, SA, NAN_, HALF_)                                                \
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
  /* Pass 1 over block [lo, hi): the running sums of its 4 sub-blocks from +0 (4 chains  \
  ** at once), stored into y unless HALF_ (float16 keeps no float32 there); r: totals. */  \
  static void D##_local(const T *x, T *y, int64_t lo, int64_t hi, int excl, A *r)          \
  {                                                                                        \
    int64_t L = (hi - lo + 3) / 4, b_[4], e_[4];                                           \
    for (int s = 0; s < 4; s++) {                                                          \
      b_[s] = lo + s * L < hi ? lo + s * L : hi;                                           \
      e_[s] = b_[s] + L < hi ? b_[s] + L : hi;                                             \
    }                                                                                      \
    A a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                                      \
    int64_t m = e_[3] - b_[3];                 /* the last sub-block is the shortest */    \
    for (int64_t k = 0; k < m; k++) {          /* excl is loop-invariant: unswitched */   \
      A v0 = LA(x[b_[0] + k]), v1 = LA(x[b_[1] + k]);                                      \
      A v2 = LA(x[b_[2] + k]), v3 = LA(x[b_[3] + k]);                                      \
      if (!excl) {                                                                         \
        a0 += v0;                                                                          \
        a1 += v1;                                                                          \
        a2 += v2;                                                                          \
        a3 += v3;                                                                          \
      }                                                                                    \
      if (!HALF_) {                                                                        \
        y[b_[0] + k] = SA(a0);                                                             \
        y[b_[1] + k] = SA(a1);                                                             \
        y[b_[2] + k] = SA(a2);                                                             \
        y[b_[3] + k] = SA(a3);                                                             \
      }                                                                                    \
      if (excl) {                                                                          \
        a0 += v0;                                                                          \
        a1 += v1;                                                                          \
        a2 += v2;                                                                          \
        a3 += v3;                                                                          \
      }                                                                                    \
    }                                                                                      \
    A acc[4] = {a0, a1, a2, a3};                                                           \
    for (int s = 0; s < 3; s++)                /* the tails of sub-blocks 0..2 */          \
      for (int64_t i = b_[s] + m; i < e_[s]; i++) {                                        \
        A v = LA(x[i]);                                                                    \
        if (!excl) acc[s] += v;                                                            \
        if (!HALF_) y[i] = SA(acc[s]);                                                     \
        if (excl) acc[s] += v;                                                             \
      }                                                                                    \
    for (int s = 0; s < 4; s++) r[s] = acc[s];                                             \
  }                                                                                        \
  /* Pass 2: y_i = o[s] + (running sum of sub-block s up to i), from cache. */             \
  static void D##_offset(const T *x, T *y, int64_t lo, int64_t hi, int excl, const A *o)   \
  {                                                                                        \
    int64_t L = (hi - lo + 3) / 4;                                                         \
    for (int s = 0; s < 4; s++) {                                                          \
      int64_t b0 = lo + s * L < hi ? lo + s * L : hi, e0 = b0 + L < hi ? b0 + L : hi;      \
      A off = o[s];                                                                        \
      if (!HALF_) {                                                                        \
        for (int64_t i = b0; i < e0; i++) y[i] = SA(off + LA(y[i]));                       \
        continue;                                                                          \
      }                                                                                    \
      A run = 0;                                                                           \
      for (int64_t i = b0; i < e0; i++) {                                                  \
        A v = LA(x[i]);                                                                    \
        if (!excl) run += v;                                                               \
        y[i] = SA(off + run);                                                              \
        if (excl) run += v;                                                                \
      }                                                                                    \
    }                                                                                      \
  }                                                                                        \
  /* Block b's offsets from P_(b-1) and its sub-block totals, then its offset pass. */     \
  static void D##_finish(const T *x, T *y, int b, int64_t B, int64_t n, int excl,          \
                         const A *r, A p)                                                  \
  {                                                                                        \
    int64_t lo = (int64_t)b * B, hi = lo + B < n ? lo + B : n;                             \
    A o[4];                                                                                \
    o[0] = p;                                                                              \
    for (int k = 1; k < 4; k++) o[k] = o[k - 1] + r[k - 1];                                \
    D##_offset(x, y, lo, hi, excl, o);                                                     \
  }                                                                                        \
  /* Advance the chain: P_c = (((P_(c-1) + r0) + r1) + r2) + r3 for every next block whose \
  ** totals are in, in block order (whoever fills a gap carries the chain past it). */     \
  static void D##_advance(A (*rs)[4], A *pre, atomic_int *has_r, atomic_int *has_p,        \
                          int *chain, int nb)                                              \
  {                                                                                        \
    _Pragma("omp critical(cnp_scan_chain)")                                                \
    while (*chain < nb && atomic_load_explicit(&has_r[*chain], memory_order_acquire)) {     \
      int c = *chain;                                                                      \
      A o = c ? pre[c - 1] : 0;                                                            \
      for (int k = 0; k < 4; k++) o = o + rs[c][k];                                        \
      pre[c] = o;                                                                          \
      atomic_store_explicit(&has_p[c], 1, memory_order_release);                           \
      (*chain)++;                                                                          \
    }                                                                                      \
  }                                                                                        \
  /* Chained scan of one contiguous vector of n elements (see the header). A thread never  \
  ** waits while it has blocks left to read: it finishes those whose predecessor's P is     \
  ** known (typically at once, from cache) and waits only at the end. */                   \
  static void D##_scan(const void *xv, void *yv, int64_t n, int excl)                      \
  {                                                                                        \
    const T *x = xv;                                                                       \
    T *y = yv;                                                                             \
    int64_t B = block_len(n);                                                              \
    int nb = (int)((n + B - 1) / B), chain = 0;                                            \
    A rs[RB_MAX_BLOCKS][4], pre[RB_MAX_BLOCKS];                                            \
    atomic_int has_r[RB_MAX_BLOCKS], has_p[RB_MAX_BLOCKS];                                 \
    for (int b = 0; b < nb; b++) {                                                         \
      atomic_init(&has_r[b], 0);                                                           \
      atomic_init(&has_p[b], 0);                                                           \
    }                                                                                      \
    int nt = n_threads(nb);                                                                \
    _Pragma("omp parallel num_threads(nt) if (nt > 1)")                                    \
    {                                                                                      \
      int T_ = team(), done = thread_num();    /* own next block to finish */              \
      for (int b = done; b < nb; b += T_) {                                                \
        int64_t lo = (int64_t)b * B, hi = lo + B < n ? lo + B : n;                         \
        D##_local(x, y, lo, hi, excl, rs[b]);                                              \
        atomic_store_explicit(&has_r[b], 1, memory_order_release);                         \
        D##_advance(rs, pre, has_r, has_p, &chain, nb);                                    \
        while (done <= b &&                                                                \
               (done == 0 || atomic_load_explicit(&has_p[done - 1], memory_order_acquire))) { \
          D##_finish(x, y, done, B, n, excl, rs[done], done ? pre[done - 1] : 0);          \
          done += T_;                                                                      \
        }                                                                                  \
      }                                                                                    \
      for (; done < nb; done += T_) {                                                      \
        if (done > 0) wait_flag(&has_p[done - 1]);                                         \
        D##_finish(x, y, done, B, n, excl, rs[done], done ? pre[done - 1] : 0);            \
      }                                                                                    \
    }                                                                                      \
  }

#define ST_I32(a) ((int32_t)(a))
#define ST_SAME(a) (a)
static inline uint16_t st_half(float a) { return cnp_float_to_half(a); }

#define NO_NAN(v) 0
#define IS_NAN(v) ((v) != (v))

REDUCE_DEFS(i32, int32_t, uint32_t, int32_t, (uint32_t), LD_CAST(int32_t), ST_I32, NO_NAN, 0)
REDUCE_DEFS(i64, int64_t, uint64_t, int64_t, (uint64_t), LD_CAST(int64_t), (int64_t), NO_NAN,
            0)
REDUCE_DEFS(u64, uint64_t, uint64_t, uint64_t, LD_CAST(uint64_t), LD_CAST(uint64_t), ST_SAME,
            NO_NAN, 0)
REDUCE_DEFS(f16, uint16_t, float, float, ld_half, ld_half, st_half, IS_NAN, 1)
REDUCE_DEFS(f32, float, float, float, LD_CAST(float), LD_CAST(float), ST_SAME, IS_NAN, 0)
REDUCE_DEFS(f64, double, double, double, LD_CAST(double), LD_CAST(double), ST_SAME, IS_NAN, 0)

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
/* bool: 64 byte-wide counters (each at most 255 per chunk of 255 * 64 bytes), so the loop
** vectorizes as byte compares and byte adds. */
static int64_t b8_count(const uint8_t *x, int64_t lo, int64_t hi)
{
  int64_t c = 0, i = lo;
  while (i < hi) {
    int64_t e = hi - i > 255 * 64 ? i + 255 * 64 : hi;
    uint8_t acc[64] = {0};
    for (; i + 64 <= e; i += 64)
      for (int j = 0; j < 64; j++) acc[j] = (uint8_t)(acc[j] + (x[i + j] != 0));
    for (int j = 0; j < 64; j++) c += acc[j];
    for (; i < e; i++) c += x[i] != 0;
  }
  return c;
}
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
