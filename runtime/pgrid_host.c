/*
** pgrid_host.c — host particle–grid interaction (cnp__pgrid_host): OpenMP loops over
** particles (contributions, atomic scatter, gather) and over grid points (the fold of the
** SORTED mode), with the sort and the per-cell sums done by cnp_sort_by_key and the
** segment plan (algo_host.c). The shapes are pgrid_shape.h.
*/
#include "grid_internal.h"
#include "pgrid_shape.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static inline double ld(const void *p, int64_t i, int f32)
{
  return f32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* Cell-unit positions of particle i. */
static inline void upos(const cnp_pgrid *pg, const cnp_array *pos, int64_t i, int f32,
                        double u[3])
{
  for (int a = 0; a < 3; a++)
    u[a] = a < pg->ndim ? ld(pos[a].data, i, f32) * pg->scale[a] : 0.0;
}

/* j = base + offset in [0, n + 2]: into [0, n) (n >= 1, so j < 3n). */
static inline int64_t wrap(int64_t j, int64_t n)
{
  if (j >= n) j -= n;
  if (j >= n) j -= n;
  return j;
}

/* Contribution rows and base-cell keys; a skipped particle gets key n_cells (a trash
** segment never folded) and a zero row. */
static void contributions(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w, int64_t n)
{
  int f32 = pg->dtype == CNP_FLOAT32;
  int64_t *keys = pg->keys.data;
  int np = pg->n_pts, S = pg->S, nd = pg->ndim;
  int S1 = nd > 1 ? S : 1, S2 = nd > 2 ? S : 1;
  const int64_t *dims = pg->dims;
#pragma omp parallel for schedule(static) if (n > 4096)
  for (int64_t i = 0; i < n; i++) {
    double u[3], c[27];
    cnp__pg_stencil st;
    upos(pg, pos, i, f32, u);
    double wi = w ? ld(w->data, i, f32) : 1.0;
    if (!cnp__pg_stencil_of(u, nd, (int)pg->shape, dims, &st)) {
      keys[i] = pg->n_cells;
      for (int k = 0; k < np; k++) c[k] = 0.0;
    } else {
      keys[i] = (st.base[0] * dims[1] + st.base[1]) * dims[2] + st.base[2];
      int k = 0;
      for (int s0 = 0; s0 < S; s0++)
        for (int s1 = 0; s1 < S1; s1++)
          for (int s2 = 0; s2 < S2; s2++)
            c[k++] = wi * st.W[0][s0] * st.W[1][s1] * st.W[2][s2];
    }
    if (f32) {
      float *row = (float *)pg->contrib.data + i * np;
      for (int k = 0; k < np; k++) row[k] = (float)c[k];
    } else {
      double *row = (double *)pg->contrib.data + i * np;
      for (int k = 0; k < np; k++) row[k] = c[k];
    }
  }
}

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
            int64_t b2 = (j2 - s2 + 3 * n2) % n2;
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
  contributions(pg, pos, w, n);
  cnp_array keys, rows;
  cnp_status st = cnp_array_slice(&keys, &pg->keys, 0, 0, n);
  if (st == CNP_OK) st = cnp_array_slice(&rows, &pg->contrib, 0, 0, n);
  if (st == CNP_OK) st = cnp_sort_by_key(&keys, NULL, &rows, 1, pg->n_cells + 1, pg->ws, s);
  if (st == CNP_OK) st = cnp_segment_plan_build(pg->seg, &keys, s);
  if (st == CNP_OK) st = cnp_segment_plan_sum(pg->seg, &rows, &pg->partial, s);
  if (st != CNP_OK) return st;
  fold(pg, grid);
  return CNP_OK;
}

#define SCATTER_LOOP(T, ATOMIC)                                                          \
  for (int64_t i = 0; i < n; i++) {                                                      \
    double u[3];                                                                         \
    cnp__pg_stencil st;                                                                  \
    upos(pg, pos, i, f32, u);                                                            \
    if (!cnp__pg_stencil_of(u, nd, (int)pg->shape, dims, &st)) continue;                 \
    double wi = w ? ld(w->data, i, f32) : 1.0;                                           \
    for (int s0 = 0; s0 < S; s0++) {                                                     \
      int64_t c0 = wrap(st.base[0] + s0, dims[0]) * dims[1];                             \
      double w0 = wi * st.W[0][s0];                                                      \
      for (int s1 = 0; s1 < S1; s1++) {                                                  \
        int64_t c1 = (c0 + wrap(st.base[1] + s1, dims[1])) * dims[2];                    \
        double w1 = w0 * st.W[1][s1];                                                    \
        for (int s2 = 0; s2 < S2; s2++) {                                                \
          int64_t c = c1 + wrap(st.base[2] + s2, dims[2]);                               \
          T v = (T)(w1 * st.W[2][s2]);                                                   \
          ATOMIC                                                                         \
          g[c] += v;                                                                     \
        }                                                                                \
      }                                                                                  \
    }                                                                                    \
  }

#define CNP__PRAGMA(x) _Pragma(#x)

static cnp_status h_deposit_atomic(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w,
                                   int64_t n, cnp_array *grid, cnp_stream *s)
{
  (void)s;
  int f32 = pg->dtype == CNP_FLOAT32;
  int S = pg->S, nd = pg->ndim;
  int S1 = nd > 1 ? S : 1, S2 = nd > 2 ? S : 1;
  const int64_t *dims = pg->dims;
  memset(grid->data, 0, (size_t)pg->n_cells * cnp_dtype_size(pg->dtype));
  int threads = 1;
#ifdef _OPENMP
  threads = n > 4096 ? omp_get_max_threads() : 1;
#endif
  if (threads <= 1) {
    if (f32) {
      float *g = grid->data;
      SCATTER_LOOP(float, )
    } else {
      double *g = grid->data;
      SCATTER_LOOP(double, )
    }
    return CNP_OK;
  }
  if (f32) {
    float *g = grid->data;
#pragma omp parallel for schedule(static)
    SCATTER_LOOP(float, CNP__PRAGMA(omp atomic))
  } else {
    double *g = grid->data;
#pragma omp parallel for schedule(static)
    SCATTER_LOOP(double, CNP__PRAGMA(omp atomic))
  }
  return CNP_OK;
}

static cnp_status h_gather(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *grid,
                           int64_t n, cnp_array *out, cnp_stream *s)
{
  (void)s;
  int f32 = pg->dtype == CNP_FLOAT32;
  int S = pg->S, nd = pg->ndim;
  int S1 = nd > 1 ? S : 1, S2 = nd > 2 ? S : 1;
  const int64_t *dims = pg->dims;
#pragma omp parallel for schedule(static) if (n > 4096)
  for (int64_t i = 0; i < n; i++) {
    double u[3], acc = 0.0;
    cnp__pg_stencil st;
    upos(pg, pos, i, f32, u);
    if (cnp__pg_stencil_of(u, nd, (int)pg->shape, dims, &st)) {
      for (int s0 = 0; s0 < S; s0++) {
        int64_t c0 = wrap(st.base[0] + s0, dims[0]) * dims[1];
        for (int s1 = 0; s1 < S1; s1++) {
          int64_t c1 = (c0 + wrap(st.base[1] + s1, dims[1])) * dims[2];
          double w01 = st.W[0][s0] * st.W[1][s1];
          for (int s2 = 0; s2 < S2; s2++) {
            int64_t c = c1 + wrap(st.base[2] + s2, dims[2]);
            acc += w01 * st.W[2][s2] * ld(grid->data, c, f32);
          }
        }
      }
    }
    if (f32) ((float *)out->data)[i] = (float)acc;
    else ((double *)out->data)[i] = acc;
  }
  return CNP_OK;
}

const cnp__pgrid_backend cnp__pgrid_host = {
  .name = "host",
  .deposit_sorted = h_deposit_sorted,
  .deposit_atomic = h_deposit_atomic,
  .gather = h_gather,
};
