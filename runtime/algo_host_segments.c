/*
** algo_host_segments.c — host cell offsets and segment plans (cnp/algo.h).
**   offsets  a branch-free check per block of rows, then writes only where the cell
**            changes (the plans' builds reuse it).
**   plans    a plan snapshots the keys (or notes that they were sorted with none dropped:
**            sums are then one pass over each segment's rows). Unsorted keys with few
**            segments split the rows between threads, each adding into its own partial
**            sums (allocated by the plan), added in thread order; with many segments each
**            thread owns a segment range and scans every row.
** Both sit behind algo_host.c's table.
*/
#include "algo_host.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if !defined(_OPENMP) && defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunknown-pragmas"   /* serial build: omp pragmas unused */
#endif

/* ---- cell offsets -------------------------------------------------------------------- */

/* Offsets for rows [a, b), checking each row before it writes. Returns the first bad index
** (kind 1: range, 2: order) or -1. prev: the (clamped) cell before row a. */
static ALWAYS_INLINE int64_t offsets_rows_t(const void *c, int64_t a, int64_t b,
                                            int64_t n_cells, int64_t prev, int64_t *off,
                                            int *kind, cnp_dtype dt)
{
  for (int64_t i = a; i < b; i++) {
    int64_t v = cell_at(c, i, dt);
    if (v < 0 || v >= n_cells) {
      *kind = 1;
      return i;
    }
    if (v < prev) {
      *kind = 2;
      return i;
    }
    for (int64_t q = prev + 1; q <= v; q++) off[q] = i;
    prev = v;
  }
  return -1;
}

/* Offsets for the rows [a, b) of one thread, a block of OFF_BLOCK rows at a time: a
** branch-free (vectorized) check of the whole block, then the writes, which skip 8 rows at
** once while the cell does not change (the block is sorted: row i + 7 equal to the current
** cell means rows i..i+7 are). A bad block is redone row by row to find the first error.
** The check streams the block from memory; the writes run on it in L1, so each skip also
** prefetches the row OFF_PF_BYTES ahead (the next block), keeping the memory stream going
** while no load misses (measured: 25% less time at 10^7 rows, docs/algorithms.md).
** Returns the first bad index (kind 1: range, 2: order) or -1. */
#define OFF_BLOCK 2048
#define OFF_PF_BYTES 16384
static ALWAYS_INLINE int64_t offsets_chunk_t(const void *c, int64_t a, int64_t b,
                                             int64_t n_cells, int64_t *off, int *kind,
                                             cnp_dtype dt)
{
  const int64_t pf = OFF_PF_BYTES / (dt == CNP_INT32 ? 4 : 8);
  int64_t prev = a > 0 ? cell_at(c, a - 1, dt) : -1;
  if (prev >= n_cells) prev = n_cells - 1;     /* reported by the chunk that owns it */
  if (prev < -1) prev = -1;
  for (int64_t i0 = a; i0 < b; i0 += OFF_BLOCK) {
    int64_t i1 = b - i0 < OFF_BLOCK ? b : i0 + OFF_BLOCK;
    int bad = block_unsorted(c, i0, i1, dt) || cell_at(c, i0, dt) < prev ||
              cell_at(c, i1 - 1, dt) >= n_cells;
    if (bad) return offsets_rows_t(c, i0, i1, n_cells, prev, off, kind, dt);
    int64_t q = prev, pf_end = b - pf;
    for (int64_t i = i0; i < i1;) {
      if (i + 8 <= i1 && cell_at(c, i + 7, dt) == q) {
        if (i < pf_end)
          __builtin_prefetch((const char *)c + (size_t)(i + pf) * (dt == CNP_INT32 ? 4 : 8));
        i += 8;
        continue;
      }
      int64_t v = cell_at(c, i, dt);
      for (int64_t x = q + 1; x <= v; x++) off[x] = i;
      q = v;
      i++;
    }
    prev = q;
  }
  return -1;
}

cnp_status cnp__host_cell_offsets(const cnp_array *sorted_cells, int64_t n_cells,
                                 cnp_array *offsets, cnp_workspace *ws, cnp_stream *s)
{
  (void)ws;
  (void)s;
  static const char op[] = "cnp_cell_offsets";
  const void *c = sorted_cells->data;
  cnp_dtype dt = sorted_cells->dtype;
  int64_t n = sorted_cells->shape[0];
  int64_t *off = offsets->data;
  int nt = threads_for(n, MAX_THREADS);
  (void)nt;                                    /* unused in a serial build */
  int64_t bad[MAX_THREADS];
  int kind[MAX_THREADS];
  int used = 1;
#pragma omp parallel num_threads(nt)
  {
    int T = team_size(), t = thread_id();
    if (t == 0) used = T;
    int64_t a = chunk_start(n, t, T), b = chunk_start(n, t + 1, T);
    kind[t] = 0;
    if (dt == CNP_INT32) bad[t] = offsets_chunk_t(c, a, b, n_cells, off, &kind[t], CNP_INT32);
    else bad[t] = offsets_chunk_t(c, a, b, n_cells, off, &kind[t], CNP_INT64);
  }
  for (int t = 0; t < used; t++) {
    int64_t i = bad[t];
    if (i < 0) continue;
    if (kind[t] == 1)
      return cnp__fail(CNP_ERANGE, op, "sorted_cells[%lld] = %lld outside [0, %lld)",
                       (long long)i, (long long)cell_at(c, i, dt), (long long)n_cells);
    return cnp__fail(CNP_EORDER, op, "sorted_cells not sorted at index %lld (%lld after %lld)",
                     (long long)i, (long long)cell_at(c, i, dt),
                     (long long)cell_at(c, i - 1, dt));
  }
  int64_t last = n > 0 ? cell_at(c, n - 1, dt) : -1;
  for (int64_t q = last + 1; q <= n_cells; q++) off[q] = n;
  return CNP_OK;
}

/* ---- segment plans ------------------------------------------------------------------- */

#define HALF_GROUP 4                   /* float accumulators per segment for float16 */

#define PRIV_G     4                   /* components per pass of the row-split sum */
#define PRIV_PF    16                  /* rows ahead whose partial sums are prefetched */
/* rows ahead whose values are prefetched non-temporally (prefetchnta): values are read
** once, and streaming them into L2 evicted partial sums there (measured: the 3-component
** random-key sum at 10^7 rows took 10-25% less time with other processes on the machine) */
#define PRIV_PFV   96

typedef struct host_plan {
  int      nt;
  int      identity;                   /* keys sorted, none dropped: offsets describe rows */
  int      wide;                       /* skeys holds int64 (else int32) */
  int      dropped;                    /* the last build dropped rows (negative keys) */
  void    *skeys;                      /* capacity: snapshot of the keys (negatives < 0) */
  int64_t *offsets;                    /* n_segments + 1 (identity plans) */
  float   *facc;                       /* n_segments * HALF_GROUP (float16 sums) */
  char    *priv;                       /* (nt - 1) partitions of priv_slots 8-byte slots */
  int64_t  priv_slots;                 /* per partition: n_segments * priv_g */
  int64_t  priv_g;                     /* components per pass the partitions hold (0: none) */
  int64_t  rows_used;                  /* rows the build read: [rows_used, n_rows) are dropped */
} host_plan;

static void host_plan_free(host_plan *p)
{
  if (p == NULL) return;
  cnp__free(p->skeys);
  cnp__free(p->offsets);
  cnp__free(p->facc);
  cnp__free(p->priv);
  cnp__free(p);
}

cnp_status cnp__host_plan_create(cnp_segment_plan *plan)
{
  host_plan *p = cnp__calloc(1, sizeof *p);
  if (p == NULL) return cnp__fail(CNP_ENOMEM, "cnp_segment_plan_create", "no memory");
  p->nt = max_threads();
  size_t cap = (size_t)(plan->capacity > 0 ? plan->capacity : 1);
  size_t ns = (size_t)plan->n_segments;
  p->wide = plan->n_segments > INT32_MAX;
  p->skeys = cnp__malloc(cap * (p->wide ? 8 : 4));
  p->offsets = cnp__malloc((ns + 1) * sizeof(int64_t));
  p->facc = cnp__malloc((ns > 0 ? ns : 1) * HALF_GROUP * sizeof(float));
  /* row-split sums (see cnp__host_plan_sum): each extra thread's partial sums, as
  ** many components per pass as fit n_segments * g <= capacity / 2 (at most PRIV_G) */
  int64_t g = ns > 0 ? (int64_t)(cap / 2) / (int64_t)ns : 0;
  p->priv_g = g > PRIV_G ? PRIV_G : g;
  p->priv_slots = (int64_t)ns * p->priv_g;
  if (p->nt > 1 && p->priv_slots > 0)
    p->priv = cnp__malloc((size_t)(p->nt - 1) * (size_t)p->priv_slots * 8);
  else
    p->priv_g = 0;
  if (!p->skeys || !p->offsets || !p->facc || (p->priv_g > 0 && !p->priv)) {
    host_plan_free(p);
    return cnp__fail(CNP_ENOMEM, "cnp_segment_plan_create",
                     "no memory for a plan of %lld rows and %lld segments",
                     (long long)plan->capacity, (long long)plan->n_segments);
  }
  plan->impl = p;
  return CNP_OK;
}

cnp_status cnp__host_plan_destroy(cnp_segment_plan *plan)
{
  host_plan_free(plan->impl);
  plan->impl = NULL;
  return CNP_OK;
}

typedef struct build_res {
  int64_t bad, negatives, descents;
  int     copied;                      /* the chunk's snapshot is written */
} build_res;

/* Snapshot rows [a, b) of the keys; negative keys become -1. */
static ALWAYS_INLINE void build_copy_t(const void *k, int64_t a, int64_t b, void *sk, int wide,
                                       cnp_dtype dt)
{
  if (wide) {
    int64_t *o = sk;
    for (int64_t i = a; i < b; i++) o[i] = cell_at(k, i, dt);
  } else {
    int32_t *o = sk;
    for (int64_t i = a; i < b; i++) {
      int64_t v = cell_at(k, i, dt);
      o[i] = (int32_t)(v < 0 ? -1 : v);
    }
  }
}

/* Checks rows [a, b) (first key >= ns, negatives, descents). While the rows are sorted and
** non-negative nothing is written (the plan may turn out an identity plan); from the first
** row that is not, the snapshot is written in the same pass, rows before it first. */
static ALWAYS_INLINE void build_scan_t(const void *k, int64_t a, int64_t b, int64_t ns,
                                       build_res *r, void *sk, int wide, cnp_dtype dt)
{
  int64_t bad = -1, neg = 0, desc = 0, prev = a > 0 ? cell_at(k, a - 1, dt) : INT64_MIN;
  int64_t i = a;
  for (; i < b; i += OFF_BLOCK) {              /* sorted, non-negative blocks */
    int64_t e = b - i < OFF_BLOCK ? b : i + OFF_BLOCK;
    if (block_unsorted(k, i, e, dt) || cell_at(k, i, dt) < prev) break;
    if (bad < 0 && cell_at(k, e - 1, dt) >= ns)
      for (int64_t j = i; j < e; j++)
        if (cell_at(k, j, dt) >= ns) {
          bad = j;
          break;
        }
    prev = cell_at(k, e - 1, dt);
  }
  if (i > b) i = b;
  r->copied = 0;
  if (i < b) {
    build_copy_t(k, a, i, sk, wide, dt);
    if (wide) {
      int64_t *o = sk;
      for (; i < b; i++) {
        int64_t v = cell_at(k, i, dt);
        if (v >= ns && bad < 0) bad = i;
        neg += v < 0;
        desc += v < prev;
        prev = v;
        o[i] = v;
      }
    } else {
      int32_t *o = sk;
      for (; i < b; i++) {
        int64_t v = cell_at(k, i, dt);
        if (v >= ns && bad < 0) bad = i;
        neg += v < 0;
        desc += v < prev;
        prev = v;
        o[i] = (int32_t)(v < 0 ? -1 : v);
      }
    }
    r->copied = 1;
  }
  r->bad = bad;
  r->negatives = neg;
  r->descents = desc;
}

cnp_status cnp__host_plan_build(cnp_segment_plan *plan, const cnp_array *keys,
                                cnp_stream *s)
{
  (void)s;
  static const char op[] = "cnp_segment_plan_build";
  host_plan *p = plan->impl;
  const void *k = keys->data;
  cnp_dtype dt = keys->dtype;
  int64_t n = keys->shape[0], ns = plan->n_segments;
  int nt = threads_for(n, p->nt);
  (void)nt;                                    /* unused in a serial build */
  build_res res[MAX_THREADS];
  int used = 1;
#pragma omp parallel num_threads(nt)
  {
    int T = team_size(), t = thread_id();
    if (t == 0) used = T;
    int64_t a = chunk_start(n, t, T), b = chunk_start(n, t + 1, T);
    if (dt == CNP_INT32) build_scan_t(k, a, b, ns, &res[t], p->skeys, p->wide, CNP_INT32);
    else build_scan_t(k, a, b, ns, &res[t], p->skeys, p->wide, CNP_INT64);
  }
  int64_t neg = 0, desc = 0;
  for (int t = 0; t < used; t++) {
    if (res[t].bad >= 0)
      return cnp__fail(CNP_ERANGE, op, "keys[%lld] = %lld >= n_segments %lld",
                       (long long)res[t].bad, (long long)cell_at(k, res[t].bad, dt),
                       (long long)ns);
    neg += res[t].negatives;
    desc += res[t].descents;
  }
  plan->n_rows = n;
  p->rows_used = n;
  plan->n_kept = n - neg;
  p->identity = neg == 0 && desc == 0;
  p->dropped = neg > 0;
  int64_t *off = p->offsets;
  int all_copied = 1;
  for (int t = 0; t < used; t++) all_copied &= res[t].copied;
  if (p->identity || !all_copied) {
#pragma omp parallel num_threads(used)
    {
      int T = team_size(), t = thread_id();
      int64_t a = chunk_start(n, t, T), b = chunk_start(n, t + 1, T);
      int kd = 0;
      if (p->identity) {                       /* validated above: no error possible */
        if (dt == CNP_INT32) offsets_chunk_t(k, a, b, ns, off, &kd, CNP_INT32);
        else offsets_chunk_t(k, a, b, ns, off, &kd, CNP_INT64);
      } else if (T != used || !res[t].copied) {  /* chunks the scan left unwritten */
        if (dt == CNP_INT32) build_copy_t(k, a, b, p->skeys, p->wide, CNP_INT32);
        else build_copy_t(k, a, b, p->skeys, p->wide, CNP_INT64);
      }
    }
  }
  if (p->identity) {
    int64_t last = n > 0 ? cell_at(k, n - 1, dt) : -1;
    for (int64_t q = last + 1; q <= ns; q++) off[q] = n;
  }
  return CNP_OK;
}

cnp_status cnp__host_plan_build_rows(cnp_segment_plan *plan, const cnp_array *keys,
                                     int64_t n)
{
  host_plan *p = plan->impl;
  int64_t n_axis = keys->shape[0];
  cnp_array head = *keys;                      /* rows [0, n): 1-D contiguous like keys */
  head.shape[0] = n;
  cnp_status st = cnp__host_plan_build(plan, &head, NULL);
  if (st != CNP_OK) return st;
  plan->n_rows = n_axis;                       /* sums take values of N rows */
  if (!p->identity) {                          /* rows [n, N) dropped: key -1 */
    for (int64_t i = n; i < n_axis; i++) {
      if (p->wide) ((int64_t *)p->skeys)[i] = -1;
      else ((int32_t *)p->skeys)[i] = -1;
    }
  }
  return CNP_OK;
}

/* d[c] += r[c] for c < g (float64 row of the row-split sum, partial sums in L3): two
** components per SSE2 instruction, the same additions as the scalar loop (bit-identical),
** fewer instructions waiting on the accumulators' cache misses (measured: about 5% less
** time for 3 components at 10^7 rows, docs/algorithms.md). d and r never overlap. */
static ALWAYS_INLINE void add_pairs_f64(double *d, const double *r, int64_t g)
{
  int64_t c = 0;
#if defined(__SSE2__)
  for (; c + 2 <= g; c += 2)
    _mm_storeu_pd(d + c, _mm_add_pd(_mm_loadu_pd(d + c), _mm_loadu_pd(r + c)));
#endif
  for (; c < g; c++) d[c] += r[c];
}

/* Per-segment sums, IN element type, ACC accumulator (also the output type, except for
** float16, OUT_IS_ACC 0); kc scalars per row (complex counts two).
**   _seg:   identity plans, segments [s0, s1) summed from their contiguous rows;
**   _scan:  any plan; the thread owns segments [s0, s1), scans every row and adds those
**           whose key it owns, so each segment is still summed in row order;
**   _split: any plan with few segments; the thread owns rows, adds them into its own
**           accumulators (thread 0: out itself), g components per pass; the partial sums
**           are then added in thread order (see cnp__host_plan_sum). */
#define SUM_GROUP 16
#define SINK_WAYS 8                    /* rows of other threads cycle through 8 sink rows */
#define DEFINE_SUM(name, IN, ACC, OUT, OUT_IS_ACC, LOAD, STORE, VEC)                    \
  static void name##_seg(const host_plan *p, const void *vals, void *outp, int64_t n,    \
                         int64_t kc, int64_t s0, int64_t s1)                             \
  {                                                                                      \
    const IN *v = vals;                                                                  \
    OUT *o = outp;                                                                       \
    const int64_t *off = p->offsets;                                                     \
    (void)n;                                                                             \
    for (int64_t s = s0; s < s1; s++) {                                                  \
      int64_t j0 = off[s], j1 = off[s + 1];                                              \
      if (kc == 1) {                                                                     \
        ACC acc = 0;                                                                     \
        for (int64_t j = j0; j < j1; j++) acc += LOAD(v[j]);                             \
        o[s] = STORE(acc);                                                               \
        continue;                                                                        \
      }                                                                                  \
      for (int64_t c0 = 0; c0 < kc; c0 += SUM_GROUP) {                                   \
        int64_t g = kc - c0 < SUM_GROUP ? kc - c0 : SUM_GROUP;                           \
        ACC acc[SUM_GROUP] = {0};                                                        \
        for (int64_t j = j0; j < j1; j++) {                                              \
          const IN *row = v + j * kc + c0;                                               \
          for (int64_t c = 0; c < g; c++) acc[c] += LOAD(row[c]);                        \
        }                                                                                \
        for (int64_t c = 0; c < g; c++) o[s * kc + c0 + c] = STORE(acc[c]);              \
      }                                                                                  \
    }                                                                                    \
  }                                                                                      \
  static ALWAYS_INLINE void name##_scan_t(const void *sk, int wide, const IN *v, OUT *o, \
                                          int64_t n, int64_t kc, int64_t s0, int64_t s1) \
  {                                                                                      \
    uint64_t span = (uint64_t)(s1 - s0);                                                 \
    /* rows of other threads add into a sink row: no branch; SINK_WAYS rows so that the  \
    ** additions do not form one dependency chain through memory */                     \
    OUT sink[SINK_WAYS * SUM_GROUP] = {0};                                               \
    if (kc == 1) {                                                                       \
      for (int64_t i = 0; i < n; i++) {                                                  \
        int64_t s = wide ? ((const int64_t *)sk)[i] : ((const int32_t *)sk)[i];          \
        OUT *dst = (uint64_t)(s - s0) < span ? o + s : sink + (i & (SINK_WAYS - 1));     \
        *dst += LOAD(v[i]);                                                              \
      }                                                                                  \
    } else if (kc <= SUM_GROUP) {                                                        \
      for (int64_t i = 0; i < n; i++) {                                                  \
        int64_t s = wide ? ((const int64_t *)sk)[i] : ((const int32_t *)sk)[i];          \
        OUT *dst = (uint64_t)(s - s0) < span ? o + s * kc                                \
                                             : sink + (i & (SINK_WAYS - 1)) * SUM_GROUP; \
        const IN *row = v + i * kc;                                                      \
        for (int64_t c = 0; c < kc; c++) dst[c] += LOAD(row[c]);                         \
      }                                                                                  \
    } else {                                                                             \
      for (int64_t i = 0; i < n; i++) {                                                  \
        int64_t s = wide ? ((const int64_t *)sk)[i] : ((const int32_t *)sk)[i];          \
        if ((uint64_t)(s - s0) >= span) continue;                                        \
        const IN *row = v + i * kc;                                                      \
        for (int64_t c = 0; c < kc; c++) o[s * kc + c] += LOAD(row[c]);                  \
      }                                                                                  \
    }                                                                                    \
  }                                                                                      \
  static void name##_scan(const host_plan *p, const void *vals, void *outp, int64_t n,   \
                          int64_t kc, int64_t s0, int64_t s1)                            \
  {                                                                                      \
    OUT *o = outp;                                                                       \
    for (int64_t e = s0 * kc; e < s1 * kc; e++) o[e] = 0;                                \
    if (p->wide) name##_scan_t(p->skeys, 1, vals, o, n, kc, s0, s1);                     \
    else name##_scan_t(p->skeys, 0, vals, o, n, kc, s0, s1);                             \
  }                                                                                      \
  /* rows [a, b): components [c0, c0 + G) of each row added into acc[key * st + c] */     \
  /* WIDE, NEG (rows may be dropped), PF (prefetch) and G are constants where it matters */ \
  static ALWAYS_INLINE void name##_rows_t(const void *sk, int WIDE, int NEG, int PF,     \
                                          const IN *v, ACC *acc, int64_t st, int64_t a,  \
                                          int64_t b, int64_t kc, int64_t c0, int64_t G)  \
  {                                                                                      \
    ACC sink[SINK_WAYS * PRIV_G] = {0};       /* dropped rows (negative keys) */         \
    int64_t i = a, m = PF && b - a > PRIV_PF ? b - PRIV_PF : a;                          \
    int64_t mv = b - PRIV_PFV;                                                           \
    for (; i < m; i++) {                      /* partial sums beyond L2: prefetch */     \
      int64_t q = WIDE ? ((const int64_t *)sk)[i + PRIV_PF]                              \
                       : ((const int32_t *)sk)[i + PRIV_PF];                             \
      __builtin_prefetch(acc + (q > 0 ? q : 0) * st, 1);                                 \
      if (i < mv) __builtin_prefetch(v + (i + PRIV_PFV) * kc + c0, 0, 0);                \
      int64_t s = WIDE ? ((const int64_t *)sk)[i] : ((const int32_t *)sk)[i];            \
      ACC *d = !NEG || s >= 0 ? acc + s * st : sink + (i & (SINK_WAYS - 1)) * PRIV_G;    \
      const IN *row = v + i * kc + c0;                                                   \
      if (VEC) add_pairs_f64((double *)(void *)d, (const double *)(const void *)row, G); \
      else                                                                               \
        for (int64_t c = 0; c < G; c++) d[c] += LOAD(row[c]);                            \
    }                                                                                    \
    for (; i < b; i++) {                                                                 \
      int64_t s = WIDE ? ((const int64_t *)sk)[i] : ((const int32_t *)sk)[i];            \
      ACC *d = !NEG || s >= 0 ? acc + s * st : sink + (i & (SINK_WAYS - 1)) * PRIV_G;    \
      const IN *row = v + i * kc + c0;                                                   \
      for (int64_t c = 0; c < G; c++) d[c] += LOAD(row[c]);                              \
    }                                                                                    \
  }                                                                                      \
  static void name##_rows(const host_plan *p, const IN *v, ACC *acc, int64_t st,         \
                          int64_t a, int64_t b, int64_t kc, int64_t c0, int64_t g)       \
  {                                                                                      \
    const void *sk = p->skeys;                                                           \
    int w = p->wide;                                                                     \
    if (kc == 1 && !w && !p->dropped) {       /* the common case: one scalar, all kept */ \
      name##_rows_t(sk, 0, 0, 0, v, acc, st, a, b, 1, 0, 1);                             \
      return;                                                                            \
    }                                                                                    \
    switch (g) {                                                                         \
    case 1:                                                                              \
      if (kc == 1) name##_rows_t(sk, w, 1, 0, v, acc, st, a, b, 1, 0, 1);                \
      else name##_rows_t(sk, w, 1, 1, v, acc, st, a, b, kc, c0, 1);                      \
      break;                                                                             \
    case 2: name##_rows_t(sk, w, 1, 1, v, acc, st, a, b, kc, c0, 2); break;              \
    case 3:                                                                              \
      if (kc == 3 && !w && !p->dropped)                                                  \
        name##_rows_t(sk, 0, 0, 1, v, acc, st, a, b, 3, 0, 3);                           \
      else if (kc == 3) name##_rows_t(sk, w, 1, 1, v, acc, st, a, b, 3, 0, 3);           \
      else name##_rows_t(sk, w, 1, 1, v, acc, st, a, b, kc, c0, 3);                      \
      break;                                                                             \
    default: name##_rows_t(sk, w, 1, 1, v, acc, st, a, b, kc, c0, PRIV_G); break;        \
    }                                                                                    \
  }                                                                                      \
  static void name##_split(const host_plan *p, const void *vals, void *outp, int64_t n,  \
                           int64_t ns, int64_t kc, int64_t gmax, int nt)                 \
  {                                                                                      \
    const IN *v = vals;                                                                  \
    OUT *o = outp;                                                                       \
    (void)nt;                                                                            \
    _Pragma("omp parallel num_threads(nt)")                                              \
    {                                                                                    \
      int T = team_size(), t = thread_id();                                              \
      int64_t a = chunk_start(n, t, T), b = chunk_start(n, t + 1, T);                    \
      int64_t s0 = chunk_start(ns, t, T), s1 = chunk_start(ns, t + 1, T);                \
      for (int64_t c0 = 0; c0 < kc; c0 += gmax) {                                        \
        int64_t g = kc - c0 < gmax ? kc - c0 : gmax;                                     \
        ACC *acc0 = OUT_IS_ACC ? (ACC *)(void *)o + c0 : (ACC *)(void *)p->facc;         \
        int64_t st0 = OUT_IS_ACC ? kc : g;                                               \
        ACC *acc = t == 0 ? acc0 : (ACC *)(void *)(p->priv + (size_t)(t - 1) *           \
                                                   (size_t)p->priv_slots * 8);           \
        int64_t st = t == 0 ? st0 : g;                                                   \
        for (int64_t s = 0; s < ns; s++)                                                 \
          for (int64_t c = 0; c < g; c++) acc[s * st + c] = 0;                           \
        name##_rows(p, v, acc, st, a, b, kc, c0, g);                                     \
        _Pragma("omp barrier")                                                           \
        for (int64_t s = s0; s < s1; s++)                                                \
          for (int64_t c = 0; c < g; c++) {                                              \
            ACC x = acc0[s * st0 + c];                                                   \
            for (int u = 1; u < T; u++)                                                  \
              x += ((const ACC *)(const void *)(p->priv + (size_t)(u - 1) *              \
                                                (size_t)p->priv_slots * 8))[s * g + c];  \
            o[s * kc + c0 + c] = STORE(x);                                               \
          }                                                                              \
        _Pragma("omp barrier")                                                           \
      }                                                                                  \
    }                                                                                    \
  }

#define LOAD_ID(x) (x)
#define LOAD_BOOL(x) ((x) != 0 ? 1.0 : 0.0)
#define LOAD_DBL(x) ((double)(x))
#define LOAD_HALF(x) cnp_half_to_float(x)
#define STORE_ID(x) (x)
#define STORE_HALF(x) cnp_float_to_half(x)

DEFINE_SUM(sum_f64, double, double, double, 1, LOAD_ID, STORE_ID, 1)
DEFINE_SUM(sum_f32, float, float, float, 1, LOAD_ID, STORE_ID, 0)
DEFINE_SUM(sum_bool, unsigned char, double, double, 1, LOAD_BOOL, STORE_ID, 0)
DEFINE_SUM(sum_i32, int32_t, double, double, 1, LOAD_DBL, STORE_ID, 0)
DEFINE_SUM(sum_i64, int64_t, double, double, 1, LOAD_DBL, STORE_ID, 0)
DEFINE_SUM(sum_u64, uint64_t, double, double, 1, LOAD_DBL, STORE_ID, 0)
/* float16 segments reuse the macro's _seg (float accumulators, float16 stores); its _scan
** would accumulate in float16, so sum_f16_scan below replaces it. */
DEFINE_SUM(sum_f16, uint16_t, float, uint16_t, 0, LOAD_HALF, STORE_HALF, 0)

/* float16, any plan: float accumulators in p->facc, HALF_GROUP components per scan. */
static void sum_f16_scan_fl(const host_plan *p, const void *vals, void *outp, int64_t n,
                            int64_t kc, int64_t s0, int64_t s1)
{
  const uint16_t *v = vals;
  uint16_t *o = outp;
  uint64_t span = (uint64_t)(s1 - s0);
  for (int64_t c0 = 0; c0 < kc; c0 += HALF_GROUP) {
    int64_t g = kc - c0 < HALF_GROUP ? kc - c0 : HALF_GROUP;
    float *acc = p->facc;
    for (int64_t e = s0 * HALF_GROUP; e < s1 * HALF_GROUP; e++) acc[e] = 0;
    for (int64_t i = 0; i < n; i++) {
      int64_t s = p->wide ? ((const int64_t *)p->skeys)[i] : ((const int32_t *)p->skeys)[i];
      if ((uint64_t)(s - s0) >= span) continue;
      for (int64_t c = 0; c < g; c++)
        acc[s * HALF_GROUP + c] += cnp_half_to_float(v[i * kc + c0 + c]);
    }
    for (int64_t s = s0; s < s1; s++)
      for (int64_t c = 0; c < g; c++)
        o[s * kc + c0 + c] = cnp_float_to_half(acc[s * HALF_GROUP + c]);
  }
}

typedef void (*sum_fn)(const host_plan *, const void *, void *, int64_t, int64_t, int64_t,
                       int64_t);
typedef void (*split_fn)(const host_plan *, const void *, void *, int64_t, int64_t, int64_t,
                         int64_t, int);

cnp_status cnp__host_plan_sum(cnp_segment_plan *plan, const cnp_array *values,
                              cnp_array *out, cnp_stream *s)
{
  (void)s;
  host_plan *p = plan->impl;
  int64_t n = plan->n_rows, ns = plan->n_segments;
  int64_t kc = 1;
  for (int d = 1; d < values->ndim; d++) kc *= values->shape[d];
  sum_fn seg, scan;
  split_fn split;
  switch (values->dtype) {
  case CNP_FLOAT64: seg = sum_f64_seg; scan = sum_f64_scan; split = sum_f64_split; break;
  case CNP_COMPLEX128:
    seg = sum_f64_seg; scan = sum_f64_scan; split = sum_f64_split; kc *= 2; break;
  case CNP_FLOAT32: seg = sum_f32_seg; scan = sum_f32_scan; split = sum_f32_split; break;
  case CNP_COMPLEX64:
    seg = sum_f32_seg; scan = sum_f32_scan; split = sum_f32_split; kc *= 2; break;
  case CNP_FLOAT16: seg = sum_f16_seg; scan = sum_f16_scan_fl; split = sum_f16_split; break;
  case CNP_BOOL: seg = sum_bool_seg; scan = sum_bool_scan; split = sum_bool_split; break;
  case CNP_INT32: seg = sum_i32_seg; scan = sum_i32_scan; split = sum_i32_split; break;
  case CNP_INT64: seg = sum_i64_seg; scan = sum_i64_scan; split = sum_i64_split; break;
  default: seg = sum_u64_seg; scan = sum_u64_scan; split = sum_u64_split; break;
  }
  (void)sum_f16_scan;
  if (ns == 0 || kc == 0) return CNP_OK;
  /* Rows past rows_used (a device-count build) are dropped: leave them out of the thread
  ** split too, so that the sums equal those of a plan built over the used rows alone. */
  n = p->rows_used;
  int nt = threads_for(n > ns ? n : ns, p->nt);
  (void)nt;                                    /* unused in a serial build */
  /* Unsorted keys and few segments: split the rows between the threads (each reads only its
  ** share of keys and values) when every thread's partial sums, n_segments * g, take at most
  ** half as many slots as there are rows. Else the threads own segments and each scans all
  ** rows. Both are deterministic for a given thread count; the split changes the order of
  ** addition (row order within each thread's rows, then the partials in thread order). */
  int64_t g = kc < p->priv_g ? kc : p->priv_g;
  if (!p->identity && nt > 1 && g > 0 && ns * g <= n / 2) {
    split(p, values->data, out->data, n, ns, kc, p->priv_g, nt);
    return CNP_OK;
  }
  const int64_t *off = p->offsets;
#pragma omp parallel num_threads(nt)
  {
    int T = team_size(), t = thread_id();
    int64_t s0 = chunk_start(ns, t, T), s1 = chunk_start(ns, t + 1, T);
    if (!p->identity) {
      scan(p, values->data, out->data, n, kc, s0, s1);
    } else {
      /* balance by rows: thread t owns the segments starting in its share of the rows */
      int64_t r0 = chunk_start(n, t, T), r1 = chunk_start(n, t + 1, T);
      int64_t lo = 0, hi = ns;
      while (lo < hi) {                        /* first segment with off[s] >= r0 */
        int64_t mid = lo + (hi - lo) / 2;
        if (off[mid] < r0) lo = mid + 1; else hi = mid;
      }
      s0 = t == 0 ? 0 : lo;
      lo = 0;
      hi = ns;
      while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (off[mid] < r1) lo = mid + 1; else hi = mid;
      }
      s1 = t == T - 1 ? ns : lo;
      seg(p, values->data, out->data, n, kc, s0, s1);
    }
  }
  return CNP_OK;
}
