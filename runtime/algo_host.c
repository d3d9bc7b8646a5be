/*
** algo_host.c — host (OpenMP) implementations of the algorithms in cnp/algo.h.
**
** Arguments arrive validated by algo.c. Every routine splits rows into one contiguous chunk
** per thread and combines per-thread results in thread order, so outputs never depend on
** the number of threads (except floating-point segment sums taking the row split below):
**   compaction   count live rows per chunk, then each chunk moves its rows to their final
**                place in parallel; rows whose destination lies below the chunk (inside a
**                chunk not yet read) go through the workspace first.
**   sort         one scan gives min/max, the number of descents and the key_limit check.
**                Sorted input stops there. A key range that fits the workspace histogram
**                uses one counting pass (keys are regenerated from the histogram with
**                streaming stores), else LSD radix passes of <= 11 bits over the range.
**                Values are permuted through a small ring when rows move little, else
**                gathered into the workspace and copied back.
**   offsets      algo_host_segments.c; boundaries: one pass, each thread writing its runs from its own
**                first row, moved down afterwards.
**   segments     algo_host_segments.c (its header comment).
*/
#include "algo_host.h"

#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#ifdef _OPENMP
#include <omp.h>
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunknown-pragmas"   /* serial build: omp pragmas unused */
#endif

#define RADIX_BITS    11
#define MIN_HIST      65536        /* counting-sort buckets always available */

/* ---- workspace ----------------------------------------------------------------------- */

typedef struct host_ws {
  int       nt;                        /* threads the histograms are sized for */
  int64_t   hist_len;                  /* histogram entries per thread */
  int64_t  *hist;                      /* nt * hist_len */
  uint64_t *ukeys[2];                  /* radix ping-pong keys, capacity each */
  int64_t  *idx[2];                    /* permutation ping-pong, capacity each */
  char     *tmp;                       /* capacity * row_bytes */
  size_t    tmp_bytes;
} host_ws;

static void host_ws_free(host_ws *h)
{
  if (h == NULL) return;
  cnp__free(h->hist);
  cnp__free(h->ukeys[0]);
  cnp__free(h->ukeys[1]);
  cnp__free(h->idx[0]);
  cnp__free(h->idx[1]);
  cnp__free(h->tmp);
  cnp__free(h);
}

static cnp_status host_workspace_create(cnp_workspace *ws)
{
  host_ws *h = cnp__calloc(1, sizeof *h);
  if (h == NULL) return cnp__fail(CNP_ENOMEM, "cnp_workspace_create", "no memory");
  size_t cap = (size_t)(ws->capacity > 0 ? ws->capacity : 1);
  h->nt = max_threads();
  h->hist_len = ws->key_limit > MIN_HIST ? ws->key_limit : MIN_HIST;
  h->tmp_bytes = cap * ws->row_bytes;
  h->hist = cnp__malloc((size_t)h->nt * (size_t)h->hist_len * sizeof(int64_t));
  for (int i = 0; i < 2; i++) {
    h->ukeys[i] = cnp__malloc(cap * sizeof(uint64_t));
    h->idx[i] = cnp__malloc(cap * sizeof(int64_t));
  }
  h->tmp = cnp__malloc(h->tmp_bytes);
  if (!h->hist || !h->ukeys[0] || !h->ukeys[1] || !h->idx[0] || !h->idx[1] || !h->tmp) {
    host_ws_free(h);
    return cnp__fail(CNP_ENOMEM, "cnp_workspace_create",
                     "no memory for a workspace of %lld rows", (long long)ws->capacity);
  }
  ws->bytes = (size_t)h->nt * (size_t)h->hist_len * 8 + cap * 32 + h->tmp_bytes;
  ws->impl = h;
  return CNP_OK;
}

static cnp_status host_workspace_destroy(cnp_workspace *ws)
{
  host_ws_free(ws->impl);
  ws->impl = NULL;
  return CNP_OK;
}

/* ---- row movers ---------------------------------------------------------------------- */

static ALWAYS_INLINE void copy_row(char *dst, const char *src, size_t rb)
{
  switch (rb) {
  case 1: *dst = *src; break;
  case 2: memcpy(dst, src, 2); break;
  case 4: memcpy(dst, src, 4); break;
  case 8: memcpy(dst, src, 8); break;
  case 16: memcpy(dst, src, 16); break;
  default: memcpy(dst, src, rb); break;
  }
}

/* dst[i] = src[perm[i]] for i in [a, b): `width` bytes at byte `col` of rows `rb` apart;
** dst rows are `width` bytes apart. */
static ALWAYS_INLINE void gather_w(char *dst, const char *src, const int64_t *perm, int64_t a,
                                   int64_t b, size_t rb, size_t col, size_t width)
{
  for (int64_t i = a; i < b; i++)
    copy_row(dst + (size_t)i * width, src + (size_t)perm[i] * rb + col, width);
}

static void gather(char *dst, const char *src, const int64_t *perm, int64_t a, int64_t b,
                   size_t rb, size_t col, size_t width)
{
  switch (width) {
  case 1: gather_w(dst, src, perm, a, b, rb, col, 1); break;
  case 2: gather_w(dst, src, perm, a, b, rb, col, 2); break;
  case 4: gather_w(dst, src, perm, a, b, rb, col, 4); break;
  case 8: gather_w(dst, src, perm, a, b, rb, col, 8); break;
  case 16: gather_w(dst, src, perm, a, b, rb, col, 16); break;
  default: gather_w(dst, src, perm, a, b, rb, col, width); break;
  }
}

/* Write back rows [a, b) of width bytes from tmp into byte col of rows rb apart. */
static void scatter_back(char *base, const char *tmp, int64_t a, int64_t b, size_t rb,
                         size_t col, size_t width)
{
  if (col == 0 && width == rb) {
    memcpy(base + (size_t)a * rb, tmp + (size_t)a * rb, (size_t)(b - a) * rb);
    return;
  }
  for (int64_t i = a; i < b; i++)
    memcpy(base + (size_t)i * rb + col, tmp + (size_t)i * width, width);
}

/* In-place permutation through a small ring ("windowed"), for permutations that move
** rows only a little, such as a re-sort after a timestep. Threads own block-aligned
** row ranges. Rows whose source lies in another thread's range ("foreign") are copied to a
** side buffer first; then each thread gathers its blocks into a ring of WIN_RING blocks and
** writes a block back as soon as no later output of the thread reads a source row in or
** before it (suffix minimum of the sources per block). win_prepare decides once per sort
** whether every thread's backlog fits the ring; if not, the plain gather path is used. */
#define WIN_B    2048
#define WIN_RING 8

typedef struct win {
  int      ok, T;
  int64_t  nb;                         /* blocks */
  int64_t  kb[MAX_THREADS + 1];        /* thread t owns blocks [kb[t], kb[t+1]) */
  int64_t  nf[MAX_THREADS];            /* foreign rows of thread t */
  int64_t  foff[MAX_THREADS + 1];      /* their offsets in the side buffer */
  int64_t *sufmin;                     /* per block: min own source of this and later blocks */
  int64_t *flist;                      /* foreign rows of thread t at flist[first row of t] */
} win;

static void win_prepare(win *w, const int64_t *perm, int64_t n, host_ws *h, int64_t *flist,
                        int nt)
{
  w->ok = 0;
  w->nb = (n + WIN_B - 1) / WIN_B;
  if (w->nb > (int64_t)h->nt * h->hist_len || w->nb < 1) return;
  w->sufmin = h->hist;
  w->flist = flist;
  int64_t maxlag[MAX_THREADS];
  int used = 1;
#pragma omp parallel num_threads(nt)
  {
    int T = team_size(), t = thread_id();
    if (t == 0) used = T;
    int64_t k0 = chunk_start(w->nb, t, T), k1 = chunk_start(w->nb, t + 1, T);
    int64_t a = k0 * WIN_B, b = k1 * WIN_B < n ? k1 * WIN_B : n, f = 0;
    w->kb[t] = k0;
    if (t == T - 1) w->kb[T] = w->nb;
    for (int64_t kk = k0; kk < k1; kk++) {
      int64_t m = INT64_MAX, e = (kk + 1) * WIN_B < n ? (kk + 1) * WIN_B : n;
      for (int64_t i = kk * WIN_B; i < e; i++) {
        int64_t s = perm[i];
        if (s >= a && s < b) m = s < m ? s : m;
        else flist[a + f++] = i;
      }
      w->sufmin[kk] = m;
    }
    w->nf[t] = f;
    int64_t run = INT64_MAX;
    for (int64_t kk = k1 - 1; kk >= k0; kk--) {
      run = w->sufmin[kk] < run ? w->sufmin[kk] : run;
      w->sufmin[kk] = run;
    }
    int64_t rel = k0, lag = 0;
    for (int64_t kk = k0; kk < k1; kk++) {
      int64_t next = kk + 1 < k1 ? w->sufmin[kk + 1] : INT64_MAX;
      while (rel <= kk && (rel + 1) * WIN_B <= next) rel++;
      lag = kk + 1 - rel > lag ? kk + 1 - rel : lag;
    }
    maxlag[t] = lag;
  }
  w->T = used;
  w->foff[0] = 0;
  for (int t = 0; t < used; t++) {
    if (maxlag[t] >= WIN_RING) return;
    w->foff[t + 1] = w->foff[t] + w->nf[t];
  }
  w->ok = 1;
}

/* One byte-column range [col, col + width) of one block of rows rb bytes apart: the unit
** the permutation moves. */
typedef struct ptarget {
  char  *base;
  size_t rb, col, width;
} ptarget;

#define GROUP_MAX   16                 /* targets permuted in one sweep over perm */
#define GROUP_BYTES 64                 /* their summed widths */

/* slot[i - i0] = source row of output i, for outputs [i0, e): own rows from base, foreign
** ones from side (in order, starting at fi). Returns the next fi. */
static ALWAYS_INLINE int64_t win_fill_w(char *slot, const char *base, const int64_t *perm,
                                        int64_t i0, int64_t e, int64_t a, int64_t b,
                                        size_t rb, size_t col, const char *side, int64_t fi,
                                        size_t width)
{
  for (int64_t i = i0; i < e; i++) {
    int64_t s = perm[i];
    const char *src = (s >= a && s < b) ? base + (size_t)s * rb + col
                                        : side + (size_t)(fi++) * width;
    copy_row(slot + (size_t)(i - i0) * width, src, width);
  }
  return fi;
}

static int64_t win_fill(char *slot, const char *base, const int64_t *perm, int64_t i0,
                        int64_t e, int64_t a, int64_t b, size_t rb, size_t col,
                        const char *side, int64_t fi, size_t width)
{
  switch (width) {
  case 1: return win_fill_w(slot, base, perm, i0, e, a, b, rb, col, side, fi, 1);
  case 2: return win_fill_w(slot, base, perm, i0, e, a, b, rb, col, side, fi, 2);
  case 4: return win_fill_w(slot, base, perm, i0, e, a, b, rb, col, side, fi, 4);
  case 8: return win_fill_w(slot, base, perm, i0, e, a, b, rb, col, side, fi, 8);
  case 16: return win_fill_w(slot, base, perm, i0, e, a, b, rb, col, side, fi, 16);
  default: return win_fill_w(slot, base, perm, i0, e, a, b, rb, col, side, fi, width);
  }
}

/* Windowed permutation of up to GROUP_MAX targets in one sweep over perm. Returns 0 when
** the team or the workspace does not fit the plan (nothing was written then). */
static int permute_windowed(const ptarget *tg, int ntg, const int64_t *perm, int64_t n,
                            host_ws *h, const win *w)
{
  size_t W = 0, woff[GROUP_MAX];
  for (int j = 0; j < ntg; j++) {
    woff[j] = W;
    W += tg[j].width;
  }
  size_t ring_bytes = (size_t)WIN_RING * WIN_B * W;
  size_t nfor = (size_t)w->foff[w->T];
  if ((size_t)w->T * ring_bytes + nfor * W > h->tmp_bytes) return 0;
  int team_ok = 1;
#pragma omp parallel num_threads(w->T)
  {
    int T = team_size(), t = thread_id();
    if (T != w->T) {
      team_ok = 0;                             /* every thread sees the same T */
    } else {
      int64_t k0 = w->kb[t], k1 = w->kb[t + 1];
      int64_t a = k0 * WIN_B, b = k1 * WIN_B < n ? k1 * WIN_B : n;
      char *ring = h->tmp + (size_t)t * ring_bytes;
      char *side[GROUP_MAX];
      for (int j = 0; j < ntg; j++)
        side[j] = h->tmp + (size_t)T * ring_bytes + nfor * woff[j] +
                  (size_t)w->foff[t] * tg[j].width;
      const int64_t *fl = w->flist + a;
      for (int64_t f = 0; f < w->nf[t]; f++)
        for (int j = 0; j < ntg; j++)
          memcpy(side[j] + (size_t)f * tg[j].width,
                 tg[j].base + (size_t)perm[fl[f]] * tg[j].rb + tg[j].col, tg[j].width);
#pragma omp barrier
      int64_t rel = k0, fi = 0;
      for (int64_t kk = k0; kk < k1; kk++) {
        char *slot = ring + (size_t)(kk % WIN_RING) * WIN_B * W;
        int64_t i0 = kk * WIN_B, e = i0 + WIN_B < n ? i0 + WIN_B : n, fnext = fi;
        for (int j = 0; j < ntg; j++)
          fnext = win_fill(slot + WIN_B * woff[j], tg[j].base, perm, i0, e, a, b, tg[j].rb,
                           tg[j].col, side[j], fi, tg[j].width);
        fi = fnext;
        int64_t next = kk + 1 < k1 ? w->sufmin[kk + 1] : INT64_MAX;
        for (; rel <= kk && ((rel + 1) * WIN_B <= next || kk + 1 == k1); rel++) {
          int64_t r0 = rel * WIN_B, r1 = r0 + WIN_B < n ? r0 + WIN_B : n;
          const char *from = ring + (size_t)(rel % WIN_RING) * WIN_B * W;
          for (int j = 0; j < ntg; j++) {
            const char *fj = from + WIN_B * woff[j];
            size_t rb = tg[j].rb, col = tg[j].col, wd = tg[j].width;
            if (col == 0 && wd == rb) {
              memcpy(tg[j].base + (size_t)r0 * rb, fj, (size_t)(r1 - r0) * rb);
            } else {
              for (int64_t i = r0; i < r1; i++)
                memcpy(tg[j].base + (size_t)i * rb + col, fj + (size_t)(i - r0) * wd, wd);
            }
          }
        }
      }
    }
  }
  return team_ok;
}

/* Permute a group of targets by perm (n rows): windowed when w allows, else each target is
** gathered into tmp and copied back. */
static void permute_group(const ptarget *tg, int ntg, const int64_t *perm, int64_t n,
                          host_ws *h, int nt, const win *w)
{
  if (ntg == 0 || (w->ok && permute_windowed(tg, ntg, perm, n, h, w))) return;
  for (int j = 0; j < ntg; j++) {
#pragma omp parallel num_threads(nt)
    {
      int T = team_size(), t = thread_id();
      int64_t a = chunk_start(n, t, T), b = chunk_start(n, t + 1, T);
      gather(h->tmp, tg[j].base, perm, a, b, tg[j].rb, tg[j].col, tg[j].width);
#pragma omp barrier
      scatter_back(tg[j].base, h->tmp, a, b, tg[j].rb, tg[j].col, tg[j].width);
    }
  }
}

/* ---- compaction ---------------------------------------------------------------------- */

/* Compact rows [a, b) of one block: the first `spill` live rows go to tmp (rows rb apart),
** the rest in place from row `dst`. */
static ALWAYS_INLINE void compact_chunk_w(char *base, const unsigned char *m, int64_t a,
                                          int64_t b, int64_t dst, int64_t spill, char *tmp,
                                          size_t rb)
{
  int64_t i = a, j = 0;
  for (; i < b && j < spill; i++)
    if (m[i]) copy_row(tmp + (size_t)(j++) * rb, base + (size_t)i * rb, rb);
  int64_t d = dst + j;
  if (d < a) return;                           /* every live row was spilled */
  for (; i < b; i++) {                         /* branch-free: d never passes i */
    copy_row(base + (size_t)d * rb, base + (size_t)i * rb, rb);
    d += m[i] != 0;
  }
}

static void compact_chunk(char *base, const unsigned char *m, int64_t a, int64_t b,
                          int64_t dst, int64_t spill, char *tmp, size_t rb)
{
  switch (rb) {
  case 1: compact_chunk_w(base, m, a, b, dst, spill, tmp, 1); break;
  case 2: compact_chunk_w(base, m, a, b, dst, spill, tmp, 2); break;
  case 4: compact_chunk_w(base, m, a, b, dst, spill, tmp, 4); break;
  case 8: compact_chunk_w(base, m, a, b, dst, spill, tmp, 8); break;
  case 16: compact_chunk_w(base, m, a, b, dst, spill, tmp, 16); break;
  default: compact_chunk_w(base, m, a, b, dst, spill, tmp, rb); break;
  }
}

static cnp_status host_compact_by_mask(const cnp_array *mask, const cnp_array *arrays,
                                       int n_arrays, int64_t *n_out, cnp_workspace *ws,
                                       cnp_stream *s)
{
  (void)s;
  host_ws *h = ws->impl;
  const unsigned char *m = mask->data;
  int64_t n = mask->shape[0];
  int nt = threads_for(n, h->nt);
  (void)nt;                                    /* unused in a serial build */
  int64_t cnt[MAX_THREADS + 1], pre[MAX_THREADS + 1], spill[MAX_THREADS + 1];
  int used = 1;
#pragma omp parallel num_threads(nt)
  {
    int T = team_size(), t = thread_id();
    int64_t a = chunk_start(n, t, T), b = chunk_start(n, t + 1, T), c = 0;
    for (int64_t i = a; i < b; i++) c += m[i] != 0;
    cnt[t] = c;
    if (t == 0) used = T;
  }
  int64_t total = 0, spill_total = 0;
  for (int t = 0; t < used; t++) {
    int64_t a = chunk_start(n, t, used);
    pre[t] = total;
    int64_t gap = a - total;                   /* rows whose destination lies below a */
    spill[t] = cnt[t] < gap ? cnt[t] : gap;
    spill_total += spill[t];
    total += cnt[t];
  }
  *n_out = total;
  if (total == n) return CNP_OK;               /* nothing moves */
  for (int j = 0; j < n_arrays; j++) {
    cnp__rows r;
    cnp_status st = cnp__algo_rows(&arrays[j], n, "cnp_compact_by_mask", "arrays", &r);
    if (st != CNP_OK) return st;
    int par = used > 1 && (size_t)spill_total * r.row_bytes <= h->tmp_bytes;
    for (int64_t blk = 0; blk < r.n_blocks; blk++) {
      char *base = r.data + blk * r.block_stride;
      if (!par) {
        compact_chunk(base, m, 0, n, 0, 0, h->tmp, r.row_bytes);
        continue;
      }
#pragma omp parallel num_threads(used)
      {
        int T = team_size(), t = thread_id();
        if (T == used) {
          int64_t a = chunk_start(n, t, T), b = chunk_start(n, t + 1, T);
          int64_t off = 0;
          for (int u = 0; u < t; u++) off += spill[u];
          char *tmp = h->tmp + (size_t)off * r.row_bytes;
          compact_chunk(base, m, a, b, pre[t], spill[t], tmp, r.row_bytes);
#pragma omp barrier
          memcpy(base + (size_t)pre[t] * r.row_bytes, tmp, (size_t)spill[t] * r.row_bytes);
        } else if (t == 0) {                   /* fewer threads than planned: serial */
          compact_chunk(base, m, 0, n, 0, 0, h->tmp, r.row_bytes);
        }
      }
    }
  }
  return CNP_OK;
}

/* ---- keys ---------------------------------------------------------------------------- */

/* Keys as order-preserving unsigned values. */
static ALWAYS_INLINE uint64_t key_ord(const void *k, int64_t i, cnp_dtype dt)
{
  switch (dt) {
  case CNP_INT32: return (uint64_t)((uint32_t)((const int32_t *)k)[i] ^ 0x80000000u);
  case CNP_INT64: return (uint64_t)((const int64_t *)k)[i] ^ (UINT64_C(1) << 63);
  default: return ((const uint64_t *)k)[i];
  }
}

static ALWAYS_INLINE void key_put(void *k, int64_t i, uint64_t u, cnp_dtype dt)
{
  switch (dt) {
  case CNP_INT32: ((int32_t *)k)[i] = (int32_t)((uint32_t)u ^ 0x80000000u); break;
  case CNP_INT64: ((int64_t *)k)[i] = (int64_t)(u ^ (UINT64_C(1) << 63)); break;
  default: ((uint64_t *)k)[i] = u; break;
  }
}

/* Ordered value of key 0 (the bottom of [0, key_limit)). */
static uint64_t ord_zero(cnp_dtype dt)
{
  return dt == CNP_INT32 ? 0x80000000u : dt == CNP_INT64 ? (UINT64_C(1) << 63) : 0;
}

static long long key_value(const void *k, int64_t i, cnp_dtype dt)
{
  switch (dt) {
  case CNP_INT32: return ((const int32_t *)k)[i];
  case CNP_INT64: return (long long)((const int64_t *)k)[i];
  default: return (long long)((const uint64_t *)k)[i];
  }
}

typedef struct scan_res {
  uint64_t lo, hi;                     /* ordered min / max */
  int64_t  descents;                   /* i with key[i] < key[i-1] */
  int64_t  bad;                        /* first index outside [0, limit), or -1 */
} scan_res;

/* One pass over keys [a, b): ordered min/max, descents, and the first key outside
** [0, limit) (limit 0: no check). With H, also the histogram of key - zero (limit buckets;
** out-of-range keys are not counted). */
static ALWAYS_INLINE void scan_chunk_t(const void *k, int64_t a, int64_t b, uint64_t zero,
                                       uint64_t limit, int64_t *H, cnp_dtype dt, scan_res *r)
{
  uint64_t lo = UINT64_MAX, hi = 0, prev = key_ord(k, a > 0 ? a - 1 : a, dt);
  int64_t desc = 0, bad = -1;
  if (H) {                                     /* runs of equal keys count in a register */
    uint64_t cur = a < b ? key_ord(k, a, dt) : 0;
    int64_t start = a;
    for (int64_t i = a; i <= b; i++) {
      uint64_t u = i < b ? key_ord(k, i, dt) : ~cur;
      if (i < b) {
        desc += u < prev;
        prev = u;
      }
      if (u == cur) continue;
      if (i > start) {
        if (cur - zero < limit) H[cur - zero] += i - start;
        else if (bad < 0) bad = start;
      }
      cur = u;
      start = i;
    }
    r->lo = zero;
    r->hi = zero + limit - 1;
    r->descents = desc;
    r->bad = bad;
    return;
  }
  for (int64_t i = a; i < b; i++) {
    uint64_t u = key_ord(k, i, dt);
    desc += u < prev;
    prev = u;
    lo = u < lo ? u : lo;
    hi = u > hi ? u : hi;
  }
  if (limit && (lo < zero || hi - zero >= limit))
    for (int64_t i = a; i < b; i++)
      if (key_ord(k, i, dt) - zero >= limit) {
        bad = i;
        break;
      }
  r->lo = lo;
  r->hi = hi;
  r->descents = desc;
  r->bad = bad;
}

static void scan_chunk(const void *k, int64_t a, int64_t b, uint64_t zero, uint64_t limit,
                       int64_t *H, cnp_dtype dt, scan_res *r)
{
  switch (dt) {
  case CNP_INT32: scan_chunk_t(k, a, b, zero, limit, H, CNP_INT32, r); break;
  case CNP_INT64: scan_chunk_t(k, a, b, zero, limit, H, CNP_INT64, r); break;
  default: scan_chunk_t(k, a, b, zero, limit, H, CNP_UINT64, r); break;
  }
}

/* ---- sort: counting pass ------------------------------------------------------------- */

/* Both loops treat a run of equal keys at once: a nearly sorted input has long runs, and
** bumping one counter per row would chain every row through memory. */
static ALWAYS_INLINE void count_hist_t(const void *k, int64_t a, int64_t b, uint64_t lo,
                                       int64_t *H, cnp_dtype dt)
{
  for (int64_t i = a; i < b;) {
    uint64_t u = key_ord(k, i, dt);
    int64_t j = i + 1;
    while (j < b && key_ord(k, j, dt) == u) j++;
    H[u - lo] += j - i;
    i = j;
  }
}

static ALWAYS_INLINE void count_scatter_t(const void *k, int64_t a, int64_t b, uint64_t lo,
                                          int64_t *H, int64_t *idx, cnp_dtype dt)
{
  for (int64_t i = a; i < b;) {
    uint64_t u = key_ord(k, i, dt);
    int64_t j = i + 1;
    while (j < b && key_ord(k, j, dt) == u) j++;
    int64_t pos = H[u - lo];
    H[u - lo] = pos + (j - i);
    for (int64_t q = i; q < j; q++) idx[pos + (q - i)] = q;
    i = j;
  }
}

#define KEY_SWITCH(dt, call_)                                                    \
  switch (dt) {                                                                  \
  case CNP_INT32: { const cnp_dtype DT_ = CNP_INT32; call_; break; }             \
  case CNP_INT64: { const cnp_dtype DT_ = CNP_INT64; call_; break; }             \
  default: { const cnp_dtype DT_ = CNP_UINT64; call_; break; }                   \
  }

/* Sorted keys of rows [r0, r1) from the bucket ends (bucket v: ordered key lo + v, rows
** [end[v - 1], end[v])). Whole cache lines are written with streaming stores where SSE2 is
** available: the keys were read long before, so this saves reading each line back. */
static ALWAYS_INLINE void regen_keys_t(void *k, uint64_t lo, const int64_t *end, int64_t R,
                                       int64_t r0, int64_t r1, cnp_dtype dt)
{
  if (r0 >= r1) return;
  int64_t v = 0, hi = R - 1;                   /* first bucket with end[v] > r0 */
  while (v < hi) {
    int64_t mid = v + (hi - v) / 2;
    if (end[mid] > r0) hi = mid; else v = mid + 1;
  }
  const size_t isz = dt == CNP_INT32 ? 4 : 8;
  int64_t i = r0;
#if defined(__SSE2__)
  const int64_t per = (int64_t)(64 / isz);     /* keys per cache line */
  for (; i < r1 && ((uintptr_t)((char *)k + (size_t)i * isz) & 63) != 0; i++) {
    while (end[v] <= i) v++;
    key_put(k, i, lo + (uint64_t)v, dt);
  }
  for (; i + per <= r1; i += per) {
    _Alignas(64) unsigned char line[64];
    while (end[v] <= i) v++;
    if (end[v] >= i + per) {                   /* one bucket covers the line */
      for (int64_t q = 0; q < per; q++) key_put(line, q, lo + (uint64_t)v, dt);
    } else {
      for (int64_t q = 0; q < per; q++) {
        while (end[v] <= i + q) v++;
        key_put(line, q, lo + (uint64_t)v, dt);
      }
    }
    __m128i *dst = (__m128i *)(void *)((char *)k + (size_t)i * isz);
    for (int q = 0; q < 4; q++)
      _mm_stream_si128(dst + q, _mm_load_si128((const __m128i *)(void *)(line + 16 * q)));
  }
  _mm_sfence();                                /* before the team's barrier */
#endif
  for (; i < r1; i++) {
    while (end[v] <= i) v++;
    key_put(k, i, lo + (uint64_t)v, dt);
  }
}

/* hist_team > 0: the per-thread histograms were filled by a team of that size already. */
static void counting_sort(void *k, cnp_dtype dt, int64_t n, uint64_t lo, int64_t range,
                          int64_t *idx, host_ws *h, int nt, int hist_team)
{
  int64_t R = range;
  int64_t part[MAX_THREADS];
#pragma omp parallel num_threads(nt)
  {
    int T = team_size(), t = thread_id();
    int64_t a = chunk_start(n, t, T), b = chunk_start(n, t + 1, T);
    int64_t *H = h->hist + (size_t)t * (size_t)R;
    if (hist_team != T) {
      memset(H, 0, (size_t)R * sizeof *H);
      KEY_SWITCH(dt, count_hist_t(k, a, b, lo, H, DT_));
    }
#pragma omp barrier
    /* exclusive prefix sum over (bucket, thread), buckets split between the threads: each
    ** totals its buckets, then rewrites them from the totals of the buckets below */
    int64_t v0 = chunk_start(R, t, T), v1 = chunk_start(R, t + 1, T), sum = 0;
    for (int u = 0; u < T; u++) {
      const int64_t *Hu = h->hist + (size_t)u * (size_t)R;
      for (int64_t v = v0; v < v1; v++) sum += Hu[v];
    }
    part[t] = sum;
#pragma omp barrier
    sum = 0;
    for (int u = 0; u < t; u++) sum += part[u];
    for (int64_t v = v0; v < v1; v++)
      for (int u = 0; u < T; u++) {
        int64_t c = h->hist[(size_t)u * (size_t)R + v];
        h->hist[(size_t)u * (size_t)R + v] = sum;
        sum += c;
      }
#pragma omp barrier
    KEY_SWITCH(dt, count_scatter_t(k, a, b, lo, H, idx, DT_));
#pragma omp barrier
    /* after the scatter, hist[T-1][v] is the end of bucket v: regenerate the keys */
    const int64_t *end = h->hist + (size_t)(T - 1) * (size_t)R;
    KEY_SWITCH(dt, regen_keys_t(k, lo, end, R, a, b, DT_));
  }
}

/* ---- sort: LSD radix ----------------------------------------------------------------- */

static ALWAYS_INLINE uint64_t src_key(const void *k, const uint64_t *uk, int64_t i,
                                      uint64_t lo, int first, cnp_dtype dt)
{
  return first ? key_ord(k, i, dt) - lo : uk[i];
}

static ALWAYS_INLINE void radix_pass_t(const void *k, const uint64_t *uk_in,
                                       const int64_t *idx_in, uint64_t *uk_out,
                                       void *k_out, int64_t *idx_out, int64_t a, int64_t b,
                                       int shift, uint64_t mask, uint64_t lo, int first,
                                       int last, int64_t *H, int phase, cnp_dtype dt)
{
  if (phase == 0) {
    for (int64_t i = a; i < b; i++) H[(src_key(k, uk_in, i, lo, first, dt) >> shift) & mask]++;
    return;
  }
  for (int64_t i = a; i < b; i++) {
    uint64_t u = src_key(k, uk_in, i, lo, first, dt);
    int64_t pos = H[(u >> shift) & mask]++;
    if (last) key_put(k_out, pos, u + lo, dt);
    else uk_out[pos] = u;
    idx_out[pos] = first ? i : idx_in[i];
  }
}

static void radix_sort(void *k, cnp_dtype dt, int64_t n, uint64_t lo, int bits,
                       int64_t *final_idx, host_ws *h, int nt)
{
  int passes = (bits + RADIX_BITS - 1) / RADIX_BITS;
  int dbits = (bits + passes - 1) / passes;
  int64_t R = (int64_t)1 << dbits;
  uint64_t mask = (uint64_t)R - 1;
  for (int p = 0; p < passes; p++) {
    int first = p == 0, last = p == passes - 1;
    const uint64_t *uk_in = first ? NULL : h->ukeys[(p - 1) & 1];
    const int64_t *idx_in = first ? NULL : h->idx[(p - 1) & 1];
    uint64_t *uk_out = last ? NULL : h->ukeys[p & 1];
    int64_t *idx_out = last ? final_idx : h->idx[p & 1];
    int shift = p * dbits;
#pragma omp parallel num_threads(nt)
    {
      int T = team_size(), t = thread_id();
      int64_t a = chunk_start(n, t, T), b = chunk_start(n, t + 1, T);
      int64_t *H = h->hist + (size_t)t * (size_t)R;
      memset(H, 0, (size_t)R * sizeof *H);
      KEY_SWITCH(dt, radix_pass_t(k, uk_in, idx_in, uk_out, k, idx_out, a, b, shift, mask, lo,
                                  first, last, H, 0, DT_));
#pragma omp barrier
#pragma omp single
      {
        int64_t sum = 0;
        for (int64_t v = 0; v < R; v++)
          for (int u = 0; u < T; u++) {
            int64_t c = h->hist[(size_t)u * (size_t)R + v];
            h->hist[(size_t)u * (size_t)R + v] = sum;
            sum += c;
          }
      }
      /* the last pass writes the keys in place: every thread must have read its
      ** source first, which the first pass (reading the user keys) never overlaps with
      ** because passes >= 2 */
      KEY_SWITCH(dt, radix_pass_t(k, uk_in, idx_in, uk_out, k, idx_out, a, b, shift, mask, lo,
                                  first, last, H, 1, DT_));
    }
  }
}

static cnp_status host_sort_by_key_rows(cnp_array *keys, cnp_array *order,
                                        const cnp_array *values, int n_values,
                                        int64_t key_limit, cnp_workspace *ws, int64_t n);

static cnp_status host_sort_by_key(cnp_array *keys, cnp_array *order,
                                   const cnp_array *values, int n_values, int64_t key_limit,
                                   cnp_workspace *ws, cnp_stream *s)
{
  (void)s;
  return host_sort_by_key_rows(keys, order, values, n_values, key_limit, ws,
                               keys->shape[0]);
}

/* The rows' axis has extent N = keys->shape[0]; only rows [0, n) take part. */
static cnp_status sort_rows(cnp_array *keys, cnp_array *order, const cnp_array *values,
                            int n_values, int64_t key_limit, cnp_workspace *ws, int64_t n);

static cnp_status host_sort_by_key_rows(cnp_array *keys, cnp_array *order,
                                        const cnp_array *values, int n_values,
                                        int64_t key_limit, cnp_workspace *ws, int64_t n)
{
  cnp_status st = sort_rows(keys, order, values, n_values, key_limit, ws, n);
  if (st == CNP_OK && order != NULL) {          /* rows past n stay where they are */
    int64_t *o = order->data;
    for (int64_t i = n; i < keys->shape[0]; i++) o[i] = i;
  }
  return st;
}

static cnp_status sort_rows(cnp_array *keys, cnp_array *order, const cnp_array *values,
                            int n_values, int64_t key_limit, cnp_workspace *ws, int64_t n)
{
  static const char op[] = "cnp_sort_by_key";
  host_ws *h = ws->impl;
  const int64_t n_axis = keys->shape[0];       /* extent of the row axis of every array */
  if (n == 0) return CNP_OK;
  cnp_dtype dt = keys->dtype;
  void *k = keys->data;
  int nt = threads_for(n, h->nt);
  (void)nt;                                    /* unused in a serial build */
  scan_res res[MAX_THREADS];
  int used = 1;
  uint64_t zero = ord_zero(dt);
  /* a known key range that fits the histogram: count while scanning */
  int fused = key_limit > 0 && key_limit <= h->hist_len;
#pragma omp parallel num_threads(nt)
  {
    int T = team_size(), t = thread_id();
    if (t == 0) used = T;
    int64_t *H = NULL;
    if (fused) {
      H = h->hist + (size_t)t * (size_t)key_limit;
      memset(H, 0, (size_t)key_limit * sizeof *H);
    }
    scan_chunk(k, chunk_start(n, t, T), chunk_start(n, t + 1, T), zero, (uint64_t)key_limit,
               H, dt, &res[t]);
  }
  uint64_t lo = UINT64_MAX, hi = 0;
  int64_t desc = 0;
  for (int t = 0; t < used; t++) {
    if (res[t].bad >= 0 && dt == CNP_UINT64)  /* printed unsigned, as the CUDA backend does */
      return cnp__fail(CNP_ERANGE, op, "keys[%lld] = %llu outside [0, key_limit %lld)",
                       (long long)res[t].bad,
                       (unsigned long long)((const uint64_t *)k)[res[t].bad],
                       (long long)key_limit);
    if (res[t].bad >= 0)
      return cnp__fail(CNP_ERANGE, op, "keys[%lld] = %lld outside [0, key_limit %lld)",
                       (long long)res[t].bad, key_value(k, res[t].bad, dt),
                       (long long)key_limit);
    lo = res[t].lo < lo ? res[t].lo : lo;
    hi = res[t].hi > hi ? res[t].hi : hi;
    desc += res[t].descents;
  }
  int64_t *perm = order ? (int64_t *)order->data : h->idx[0];
  if (desc == 0) {                             /* already sorted */
    if (order) {
#pragma omp parallel for num_threads(nt) schedule(static)
      for (int64_t i = 0; i < n; i++) perm[i] = i;
    }
    return CNP_OK;
  }
  uint64_t span = hi - lo;                     /* range - 1 */
  if (fused) {
    counting_sort(k, dt, n, lo, key_limit, perm, h, nt, used);
  } else if (span < (uint64_t)h->hist_len) {
    counting_sort(k, dt, n, lo, (int64_t)span + 1, perm, h, nt, 0);
  } else {
    int bits = 64 - __builtin_clzll(span);
    if (!order) perm = h->idx[(((bits + RADIX_BITS - 1) / RADIX_BITS) - 1) & 1];
    radix_sort(k, dt, n, lo, bits, perm, h, nt);
  }
  if (n_values == 0) return CNP_OK;
  win w;
  win_prepare(&w, perm, n, h, perm == h->idx[0] ? h->idx[1] : h->idx[0], nt);
  /* every (array, block, column range) is a target; targets go in groups, one sweep each */
  ptarget grp[GROUP_MAX];
  int ng = 0;
  size_t gw = 0;
  for (int j = 0; j < n_values; j++) {
    cnp__rows r;
    cnp_status st = cnp__algo_rows(&values[j], n_axis, op, "values", &r);
    if (st != CNP_OK) return st;
    for (int64_t blk = 0; blk < r.n_blocks; blk++)
      for (size_t col = 0; col < r.row_bytes; col += ws->row_bytes) {
        size_t width = r.row_bytes - col < ws->row_bytes ? r.row_bytes - col : ws->row_bytes;
        if (ng == GROUP_MAX || (ng > 0 && gw + width > GROUP_BYTES)) {
          permute_group(grp, ng, perm, n, h, nt, &w);
          ng = 0;
          gw = 0;
        }
        grp[ng].base = r.data + blk * r.block_stride;
        grp[ng].rb = r.row_bytes;
        grp[ng].col = col;
        grp[ng].width = width;
        gw += width;
        ng++;
      }
  }
  permute_group(grp, ng, perm, n, h, nt, &w);
  return CNP_OK;
}

/* ---- cell offsets -------------------------------------------------------------------- */
/* ---- segment boundaries -------------------------------------------------------------- */

/* Runs that start in rows [a, b) (row i starts one when i == 0 or key i differs from key
** i - 1), written at output indices a, a + 1, ... (the outputs hold >= N entries and each
** row starts at most one run, so a thread's runs fit below its next thread's). The stop of
** the last run is left to the caller. Eight rows at a time are skipped when no key among
** them differs from the one before. Returns the number of runs; *first: the row of the
** first one. */
#define DEFINE_RUNS(name, K_T)                                                            \
  static ALWAYS_INLINE int64_t name(const K_T *k, int64_t a, int64_t b, K_T *uk,          \
                                    int64_t *starts, int64_t *stops, int64_t *first)      \
  {                                                                                       \
    int64_t j = a, i = a;                                                                 \
    *first = -1;                                                                          \
    if (i < b && (i == 0 || k[i] != k[i - 1])) {                                          \
      *first = i;                                                                         \
      if (uk) uk[j] = k[i];                                                               \
      if (starts) starts[j] = i;                                                          \
      j++;                                                                                \
    }                                                                                     \
    i = a < b ? a + 1 : b;                                                                \
    while (i < b) {                                                                       \
      for (; i + 8 <= b; i += 8) {            /* skip groups without a new run */         \
        K_T x = 0;                                                                        \
        for (int q = 0; q < 8; q++) x |= k[i + q] ^ k[i + q - 1];                         \
        if (x != 0) break;                                                                \
      }                                                                                   \
      int64_t e = i + 8 <= b ? i + 8 : b;     /* a group with one, or the tail */         \
      for (; i < e; i++) {                                                                \
        if (k[i] == k[i - 1]) continue;                                                   \
        if (*first < 0) *first = i;                                                       \
        if (uk) uk[j] = k[i];                                                             \
        if (starts) starts[j] = i;                                                        \
        if (stops && j > a) stops[j - 1] = i;                                             \
        j++;                                                                              \
      }                                                                                   \
    }                                                                                     \
    return j - a;                                                                         \
  }
DEFINE_RUNS(runs_local32, uint32_t)
DEFINE_RUNS(runs_local64, uint64_t)

static cnp_status host_segment_boundaries(const cnp_array *sorted_keys,
                                          cnp_array *unique_keys, cnp_array *starts,
                                          cnp_array *stops, int64_t *count, cnp_workspace *ws,
                                          cnp_stream *s)
{
  (void)ws;
  (void)s;
  const void *k = sorted_keys->data;
  int w32 = sorted_keys->dtype == CNP_INT32;
  size_t ksz = w32 ? 4 : 8;
  int64_t n = sorted_keys->shape[0];
  char *uk = unique_keys ? (char *)unique_keys->data : NULL;
  int64_t *st = starts ? (int64_t *)starts->data : NULL;
  int64_t *sp = stops ? (int64_t *)stops->data : NULL;
  int nt = threads_for(n, MAX_THREADS);
  (void)nt;                                    /* unused in a serial build */
  int64_t cnt[MAX_THREADS], first[MAX_THREADS];
  int used = 1;
  /* one pass: each thread writes its runs from its own first row on */
#pragma omp parallel num_threads(nt)
  {
    int T = team_size(), t = thread_id();
    if (t == 0) used = T;
    int64_t a = chunk_start(n, t, T), b = chunk_start(n, t + 1, T);
    if (w32) cnt[t] = runs_local32(k, a, b, (uint32_t *)(void *)uk, st, sp, &first[t]);
    else cnt[t] = runs_local64(k, a, b, (uint64_t *)(void *)uk, st, sp, &first[t]);
  }
  /* then, in thread order, move each thread's runs down to their final index (never onto
  ** a later thread's, which start at or after its first row) and set the stop of its last
  ** run: the first run of a later thread, else n */
  int64_t total = 0;
  for (int t = 0; t < used; t++) {
    if (cnt[t] == 0) continue;
    int64_t a = chunk_start(n, t, used);
    if (a != total) {
      if (uk) memmove(uk + (size_t)total * ksz, uk + (size_t)a * ksz, (size_t)cnt[t] * ksz);
      if (st) memmove(st + total, st + a, (size_t)cnt[t] * sizeof *st);
      if (sp) memmove(sp + total, sp + a, (size_t)(cnt[t] - 1) * sizeof *sp);
    }
    total += cnt[t];
    if (sp) {
      int64_t next = n;
      for (int u = t + 1; u < used; u++)
        if (cnt[u] > 0) {
          next = first[u];
          break;
        }
      sp[total - 1] = next;
    }
  }
  *count = total;
  return CNP_OK;
}

/* ---- device-count forms and the table -------------------------------------------------- */

/* The row count from host memory (the host backend's "device"), checked against N. */
static cnp_status host_count(const cnp_array *count, int64_t n_axis, const char *op,
                             int64_t *n)
{
  int64_t v;
  memcpy(&v, count->data, sizeof v);
  if (v < 0 || v > n_axis)
    return cnp__fail(CNP_ERANGE, op, "count = %lld outside [0, N = %lld]", (long long)v,
                     (long long)n_axis);
  *n = v;
  return CNP_OK;
}

static cnp_status host_compact_dc(const cnp_array *mask, const cnp_array *arrays,
                                  int n_arrays, cnp_array *count, cnp_workspace *ws,
                                  cnp_stream *s)
{
  int64_t kept = 0;
  cnp_status st = host_compact_by_mask(mask, arrays, n_arrays, &kept, ws, s);
  if (st == CNP_OK) memcpy(count->data, &kept, sizeof kept);
  return st;
}

static cnp_status host_sort_dc(cnp_array *keys, cnp_array *order, const cnp_array *values,
                               int n_values, int64_t key_limit, const cnp_array *count,
                               cnp_workspace *ws, cnp_stream *s)
{
  (void)s;
  int64_t rows = 0;
  cnp_status st = host_count(count, keys->shape[0], "cnp_sort_by_key_device_count", &rows);
  if (st != CNP_OK) return st;
  return host_sort_by_key_rows(keys, order, values, n_values, key_limit, ws, rows);
}

/* The host build finds sorted keys itself, so `sorted` changes only the op name. */
static cnp_status host_plan_build_dc(cnp_segment_plan *plan, const cnp_array *keys,
                                     const cnp_array *count, int sorted, cnp_stream *s)
{
  (void)s;
  const char *op = sorted ? "cnp_segment_plan_build_sorted_device_count"
                          : "cnp_segment_plan_build_device_count";
  int64_t rows = 0;
  cnp_status st = host_count(count, keys->shape[0], op, &rows);
  if (st == CNP_OK) st = cnp__host_plan_build_rows(plan, keys, rows);
  return st;
}

static cnp_status host_scan(const cnp_array *in, cnp_array *out, cnp_scan_kind kind,
                            const cnp__rows *rows, int64_t n_axis, const cnp_array *count,
                            cnp_workspace *ws, cnp_stream *s)
{
  (void)ws;
  (void)s;
  int64_t n = n_axis;
  if (count != NULL) {
    cnp_status st = host_count(count, n_axis, "cnp_scan", &n);
    if (st != CNP_OK) return st;
  }
  return cnp__host_scan(in, out, kind, rows, n);
}

static cnp_status host_reduce(const cnp_array *in, cnp_reduce_op op, cnp_array *out,
                              const cnp_array *count, cnp_workspace *ws, cnp_stream *s)
{
  (void)ws;
  (void)s;
  int64_t n = in->shape[0];
  if (count != NULL) {
    cnp_status st = host_count(count, in->shape[0], "cnp_reduce", &n);
    if (st != CNP_OK) return st;
  }
  return cnp__host_reduce(in, op, out, n);
}

const cnp__algo_backend cnp__algo_host = {
    .name = "host",
    .workspace_create = host_workspace_create,
    .workspace_destroy = host_workspace_destroy,
    .compact = host_compact_by_mask,
    .compact_dc = host_compact_dc,
    .sort = host_sort_by_key,
    .sort_dc = host_sort_dc,
    .cell_offsets = cnp__host_cell_offsets,
    .segment_boundaries = host_segment_boundaries,
    .plan_create = cnp__host_plan_create,
    .plan_destroy = cnp__host_plan_destroy,
    .plan_build = cnp__host_plan_build,
    .plan_build_dc = host_plan_build_dc,
    .plan_sum = cnp__host_plan_sum,
    .scan = host_scan,
    .reduce = host_reduce,
};
