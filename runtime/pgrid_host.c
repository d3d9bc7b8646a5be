/*
** pgrid_host.c — host particle–grid interaction (cnp__pgrid_host): OpenMP loops over
** particles (keys, contributions, atomic scatter, gather) and over grid points (the fold of
** the SORTED mode), with the sort and the per-cell sums done by cnp_sort_by_key and the
** segment plan (algo_host_segments.c). The shapes are pgrid_shape.h. Every loop body is an
** always-inline function of (float32?, ndim, shape) instantiated for the 18 constant
** combinations (PG_DISPATCH), so the stencil loops unroll.
**
** SORTED: keys[i] = base cell of particle i (n_cells for a skipped one: a trash segment)
** and rows[i] = its S^ndim contributions, in one streaming pass; cnp_sort_by_key sorts the
** keys with the permutation `order` (stable counting sort, keys only); contrib[i] =
** rows[order[i]] (one prefetched row read per particle, cheaper than re-reading the
** particle's positions and weight at random);
** the segment plan sums the rows of each key (row order = particle order); the fold adds,
** at each grid point, the partial sums that reach it in a fixed order.
*/
#include "grid_internal.h"
#include "pgrid_shape.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#if defined(__GNUC__)
#define PG_AI static inline __attribute__((always_inline))
#else
#define PG_AI static inline
#endif

#define PG_PAR_MIN 4096                /* particles below which loops run serially */
#define PG_PREFETCH 24                 /* prefetch distance of the permuted reads */

PG_AI double ld(const void *p, int64_t i, const int F32)
{
  return F32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* j = base + offset in [0, n + 2]: into [0, n) (n >= 1, so j < 3n). */
PG_AI int64_t wrap(int64_t j, int64_t n)
{
  if (j >= n) j -= n;
  if (j >= n) j -= n;
  return j;
}

PG_AI int stencil(const cnp_pgrid *pg, const cnp_array *pos, int64_t i, const int F32,
                  const int ND, const int SH, cnp__pg_stencil *st)
{
  double u[3] = {0.0, 0.0, 0.0};
  for (int a = 0; a < ND; a++) u[a] = ld(pos[a].data, i, F32) * pg->scale[a];
  return cnp__pg_stencil_of(u, ND, SH, pg->dims, st);
}

#define PG_CASES(F, CALL)                                                                \
  switch (pg->ndim * 3 + (int)pg->shape) {                                               \
  case 3: CALL(F, 1, 0); break;                                                          \
  case 4: CALL(F, 1, 1); break;                                                          \
  case 5: CALL(F, 1, 2); break;                                                          \
  case 6: CALL(F, 2, 0); break;                                                          \
  case 7: CALL(F, 2, 1); break;                                                          \
  case 8: CALL(F, 2, 2); break;                                                          \
  case 9: CALL(F, 3, 0); break;                                                          \
  case 10: CALL(F, 3, 1); break;                                                         \
  default: CALL(F, 3, 2); break;                                                         \
  }
#define PG_DISPATCH(CALL)                                                                \
  do {                                                                                   \
    if (pg->dtype == CNP_FLOAT32) {                                                      \
      PG_CASES(1, CALL)                                                                  \
    } else {                                                                             \
      PG_CASES(0, CALL)                                                                  \
    }                                                                                    \
  } while (0)

/* ---- SORTED ------------------------------------------------------------------------- */

/* Pass 1, in particle order (streaming): keys[i] = base cell of particle i (n_cells for a
** skipped one) and rows[i] = its S^ndim contributions. */
PG_AI void rows_body(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w, int64_t n,
                     const int F32, const int ND, const int SH)
{
  int64_t *keys = pg->keys.data;
  const int64_t d1 = pg->dims[1], d2 = pg->dims[2];
  const int S = SH + 1, S1 = ND > 1 ? S : 1, S2 = ND > 2 ? S : 1, NP = S * S1 * S2;
  const void *wd = w ? w->data : NULL;
#pragma omp parallel for schedule(static) if (n > PG_PAR_MIN)
  for (int64_t i = 0; i < n; i++) {
    cnp__pg_stencil st;
    double c[27];
    if (stencil(pg, pos, i, F32, ND, SH, &st)) {
      keys[i] = (st.base[0] * d1 + st.base[1]) * d2 + st.base[2];
      double wi = wd ? ld(wd, i, F32) : 1.0;
      int k = 0;
      for (int s0 = 0; s0 < S; s0++)
        for (int s1 = 0; s1 < S1; s1++)
          for (int s2 = 0; s2 < S2; s2++)
            c[k++] = wi * st.W[0][s0] * st.W[1][s1] * st.W[2][s2];
    } else {
      keys[i] = pg->n_cells;
      for (int k = 0; k < NP; k++) c[k] = 0.0;
    }
    if (F32) {
      float *row = (float *)pg->rows.data + i * NP;
      for (int k = 0; k < NP; k++) row[k] = (float)c[k];
    } else {
      double *row = (double *)pg->rows.data + i * NP;
      for (int k = 0; k < NP; k++) row[k] = c[k];
    }
  }
}

/* Pass 2: contrib[i] = rows[order[i]] (one row read per particle, prefetched ahead). */
PG_AI void permute_body(cnp_pgrid *pg, int64_t n, const int F32, const int ND, const int SH)
{
  const int64_t *order = pg->order.data;
  const int S = SH + 1, S1 = ND > 1 ? S : 1, S2 = ND > 2 ? S : 1, NP = S * S1 * S2;
  const size_t rb = (size_t)NP * (F32 ? 4 : 8);
  const char *src = pg->rows.data;
  char *dst = pg->contrib.data;
#pragma omp parallel for schedule(static) if (n > PG_PAR_MIN)
  for (int64_t i = 0; i < n; i++) {
#if defined(__GNUC__)
    if (i + PG_PREFETCH < n) __builtin_prefetch(src + (size_t)order[i + PG_PREFETCH] * rb);
#endif
    memcpy(dst + (size_t)i * rb, src + (size_t)order[i] * rb, rb);   /* rb is a constant */
  }
}

#define ROWS_CALL(F, N, S) rows_body(pg, pos, w, n, F, N, S)
#define PERMUTE_CALL(F, N, S) permute_body(pg, n, F, N, S)

/* grid[j] = sum over offsets o (C order) of partial[cell(j - o), index(o)]. */
static void fold(cnp_pgrid *pg, cnp_array *grid)
{
  int f32 = pg->dtype == CNP_FLOAT32;
  int np = pg->n_pts, S = pg->S, nd = pg->ndim;
  int S1 = nd > 1 ? S : 1, S2 = nd > 2 ? S : 1;
  int64_t n0 = pg->dims[0], n1 = pg->dims[1], n2 = pg->dims[2];
  int64_t rows = n0 * n1;
#pragma omp parallel for schedule(static) if (pg->n_cells > 16384)
  for (int64_t r = 0; r < rows; r++) {
    int64_t j0 = r / n1, j1 = r % n1;
    for (int64_t j2 = 0; j2 < n2; j2++) {
      double acc = 0.0;
      float accf = 0.0f;
      int k = 0;
      for (int s0 = 0; s0 < S; s0++) {
        int64_t b0 = (j0 - s0 + 3 * n0) % n0;
        for (int s1 = 0; s1 < S1; s1++) {
          int64_t b1 = (j1 - s1 + 3 * n1) % n1;
          for (int s2 = 0; s2 < S2; s2++, k++) {
            int64_t b2 = j2 - s2 >= 0 ? j2 - s2 : (j2 - s2 + 3 * n2) % n2;
            int64_t cell = (b0 * n1 + b1) * n2 + b2;
            if (f32) accf += ((const float *)pg->partial.data)[cell * np + k];
            else acc += ((const double *)pg->partial.data)[cell * np + k];
          }
        }
      }
      int64_t j = r * n2 + j2;
      if (f32) ((float *)grid->data)[j] = accf;
      else ((double *)grid->data)[j] = acc;
    }
  }
}

static cnp_status h_deposit_sorted(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w,
                                   int64_t n, cnp_array *grid, cnp_stream *s)
{
  if (n == 0) {
    memset(grid->data, 0, (size_t)pg->n_cells * cnp_dtype_size(pg->dtype));
    return CNP_OK;
  }
  PG_DISPATCH(ROWS_CALL);
  cnp_array keys, order, rows;
  cnp_status st = cnp_array_slice(&keys, &pg->keys, 0, 0, n);
  if (st == CNP_OK) st = cnp_array_slice(&order, &pg->order, 0, 0, n);
  if (st == CNP_OK) st = cnp_array_slice(&rows, &pg->contrib, 0, 0, n);
  if (st == CNP_OK) st = cnp_sort_by_key(&keys, &order, NULL, 0, pg->n_cells + 1, pg->ws, s);
  if (st != CNP_OK) return st;
  PG_DISPATCH(PERMUTE_CALL);
  st = cnp_segment_plan_build(pg->seg, &keys, s);
  if (st == CNP_OK) st = cnp_segment_plan_sum(pg->seg, &rows, &pg->partial, s);
  if (st != CNP_OK) return st;
  fold(pg, grid);
  return CNP_OK;
}

/* ---- ATOMIC ------------------------------------------------------------------------- */

#define PG_PRAGMA(x) _Pragma(#x)

/* One particle's scatter; ATOMIC selects `omp atomic` adds. */
#define PG_SCATTER_ONE(ATOMIC_PRAGMA)                                                    \
  do {                                                                                   \
    cnp__pg_stencil st;                                                                  \
    if (!stencil(pg, pos, i, F32, ND, SH, &st)) break;                                   \
    double wi = wd ? ld(wd, i, F32) : 1.0;                                               \
    for (int s0 = 0; s0 < S; s0++) {                                                     \
      int64_t c0 = wrap(st.base[0] + s0, dims[0]) * dims[1];                             \
      double w0 = wi * st.W[0][s0];                                                      \
      for (int s1 = 0; s1 < S1; s1++) {                                                  \
        int64_t c1 = (c0 + wrap(st.base[1] + s1, dims[1])) * dims[2];                    \
        double w1 = w0 * st.W[1][s1];                                                    \
        for (int s2 = 0; s2 < S2; s2++) {                                                \
          int64_t c = c1 + wrap(st.base[2] + s2, dims[2]);                               \
          double v = w1 * st.W[2][s2];                                                   \
          if (F32) {                                                                     \
            float *g = gd;                                                               \
            float vf = (float)v;                                                         \
            ATOMIC_PRAGMA                                                                \
            g[c] += vf;                                                                  \
          } else {                                                                       \
            double *g = gd;                                                              \
            ATOMIC_PRAGMA                                                                \
            g[c] += v;                                                                   \
          }                                                                              \
        }                                                                                \
      }                                                                                  \
    }                                                                                    \
  } while (0)

PG_AI void scatter_body(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w, int64_t n,
                        cnp_array *grid, int threads, const int F32, const int ND,
                        const int SH)
{
  const int S = SH + 1, S1 = ND > 1 ? S : 1, S2 = ND > 2 ? S : 1;
  const int64_t *dims = pg->dims;
  const void *wd = w ? w->data : NULL;
  void *gd = grid->data;
  if (threads <= 1) {
    for (int64_t i = 0; i < n; i++) PG_SCATTER_ONE();
    return;
  }
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < n; i++) PG_SCATTER_ONE(PG_PRAGMA(omp atomic));
}

#define SCATTER_CALL(F, N, S) scatter_body(pg, pos, w, n, grid, threads, F, N, S)

static cnp_status h_deposit_atomic(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w,
                                   int64_t n, cnp_array *grid, cnp_stream *s)
{
  (void)s;
  memset(grid->data, 0, (size_t)pg->n_cells * cnp_dtype_size(pg->dtype));
  int threads = 1;
#ifdef _OPENMP
  threads = n > PG_PAR_MIN ? omp_get_max_threads() : 1;
#endif
  PG_DISPATCH(SCATTER_CALL);
  return CNP_OK;
}

/* ---- gather ------------------------------------------------------------------------- */

PG_AI void gather_body(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *grid, int64_t n,
                       cnp_array *out, const int F32, const int ND, const int SH)
{
  const int S = SH + 1, S1 = ND > 1 ? S : 1, S2 = ND > 2 ? S : 1;
  const int64_t *dims = pg->dims;
  const void *gd = grid->data;
#pragma omp parallel for schedule(static) if (n > PG_PAR_MIN)
  for (int64_t i = 0; i < n; i++) {
    cnp__pg_stencil st;
    double acc = 0.0;
    if (stencil(pg, pos, i, F32, ND, SH, &st)) {
      for (int s0 = 0; s0 < S; s0++) {
        int64_t c0 = wrap(st.base[0] + s0, dims[0]) * dims[1];
        for (int s1 = 0; s1 < S1; s1++) {
          int64_t c1 = (c0 + wrap(st.base[1] + s1, dims[1])) * dims[2];
          double w01 = st.W[0][s0] * st.W[1][s1];
          for (int s2 = 0; s2 < S2; s2++)
            acc += w01 * st.W[2][s2] * ld(gd, c1 + wrap(st.base[2] + s2, dims[2]), F32);
        }
      }
    }
    if (F32) ((float *)out->data)[i] = (float)acc;
    else ((double *)out->data)[i] = acc;
  }
}

#define GATHER_CALL(F, N, S) gather_body(pg, pos, grid, n, out, F, N, S)

static cnp_status h_gather(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *grid,
                           int64_t n, cnp_array *out, cnp_stream *s)
{
  (void)s;
  PG_DISPATCH(GATHER_CALL);
  return CNP_OK;
}

const cnp__pgrid_backend cnp__pgrid_host = {
  .name = "host",
  .deposit_sorted = h_deposit_sorted,
  .deposit_atomic = h_deposit_atomic,
  .gather = h_gather,
};
