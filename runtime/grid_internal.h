/*
** grid_internal.h — private side of cnp/grid.h: the FFT plan and particle-grid plan
** layouts and the tables each backend fills.
**
** Division of labour (as algo_internal.h): fft.c and pgrid.c validate every argument's
** metadata (NULLs, dtypes, shapes, layouts, aliasing, backend/device agreement, capacity)
** and dispatch to a table; the tables trust their arguments.
**   FFT:   cnp__fft_host (fft_fftw.c, or fft_nofftw.c: CNP_EUNSUPPORTED "built without
**          FFTW"), cnp__fft_cuda (fft_cuda.cu with cuFFT, or fft_nocuda.c).
**   pgrid: cnp__pgrid_host (pgrid_host.c), cnp__pgrid_cuda (pgrid_cuda.cu or
**          pgrid_nocuda.c).
*/
#ifndef CNP_GRID_INTERNAL_H
#define CNP_GRID_INTERNAL_H

#include "algo_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CNP__MAGIC_FFT   0x434e5046u  /* "CNPF" */
#define CNP__MAGIC_PGRID 0x434e5049u  /* "CNPI" (particle-grid Interaction) */

struct cnp_fft_plan {
  uint32_t    magic;
  cnp_backend backend;
  int         device;
  int         ndim;                    /* spatial axes */
  int64_t     dims[3];
  int64_t     batch;                   /* 0: none */
  cnp_dtype   dtype;                   /* real dtype */
  unsigned    flags;
  int64_t     n_real;                  /* points of one transform */
  int64_t     n_complex;               /* complex entries of one transform */
  int64_t     howmany;                 /* max(batch, 1) */
  int         array_ndim;
  int64_t     real_shape[CNP_MAX_DIMS];
  int64_t     complex_shape[CNP_MAX_DIMS];
  void       *impl;                    /* backend-private */
};

/* A table whose backend is not built in (fft_nofftw.c, fft_nocuda.c) leaves the functions
** NULL and sets absent to the reason: fft.c then answers plan creation with
** CNP_EUNSUPPORTED and that reason, so no plan of it exists for the others to be reached. */
typedef struct cnp__fft_backend {
  const char *name;
  cnp_status (*create)(cnp_fft_plan *p);
  cnp_status (*destroy)(cnp_fft_plan *p);
  cnp_status (*forward)(cnp_fft_plan *p, const cnp_array *in, cnp_array *out, cnp_stream *s);
  cnp_status (*inverse)(cnp_fft_plan *p, const cnp_array *in, cnp_array *out, cnp_stream *s);
  const char *absent;                  /* non-NULL: not built in, why (see above) */
} cnp__fft_backend;

extern const cnp__fft_backend cnp__fft_host;

/* FFTW builds (fft_fftw.c): the process-wide FFTW planner mutex, shared with libcnp_mpi's
** distributed FFT (mpi_fft.c). enter locks it, initializes FFTW's threads once and sets
** fftw(f)_plan_with_nthreads for a plan of `points` real points (the serial plans' rule);
** on failure (CNP_EBACKEND) the mutex is not held. leave unlocks. */
cnp_status cnp__fftw_planner_enter(int64_t points, const char *op);
void       cnp__fftw_planner_leave(void);
extern const cnp__fft_backend cnp__fft_cuda;

struct cnp_pgrid {
  uint32_t    magic;
  cnp_backend backend;
  int         device;
  int         ndim;
  int64_t     dims[3];                 /* unused axes: 1 */
  int64_t     n_cells;
  cnp_shape   shape;
  int         S;                       /* points per axis */
  int         n_pts;                   /* S^ndim */
  cnp_dtype   dtype;
  int64_t     capacity;
  double      scale[3];
  /* SORTED mode storage (on the plan's backend): */
  cnp_array   keys;                    /* int64 [capacity] */
  cnp_array   order;                   /* int64 [capacity]: the sort's permutation */
  cnp_array   contrib;                 /* dtype [capacity, n_pts], in sorted order */
  cnp_array   rows;                    /* dtype [capacity, n_pts], particle order (host) */
  cnp_array   partial;                 /* dtype [n_cells + 1, n_pts] */
  cnp_array   count;                   /* int64 [1] (CUDA device-count calls) */
  cnp_workspace    *ws;
  cnp_segment_plan *seg;
};

typedef struct cnp__pgrid_backend {
  const char *name;
  /* SORTED mode: contributions/keys, the fold, and the sort + sum pipeline. */
  cnp_status (*deposit_sorted)(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w,
                               int64_t n, cnp_array *grid, cnp_stream *s);
  cnp_status (*deposit_atomic)(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w,
                               int64_t n, cnp_array *grid, cnp_stream *s);
  cnp_status (*gather)(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *grid,
                       int64_t n, cnp_array *out, cnp_stream *s);
  /* The _device_count forms (CUDA; NULL on the host backend, where pgrid.c reads the count
  ** itself): n the views' rows, d_n the live count on the device (clamped to [0, n]). */
  cnp_status (*deposit_sorted_dc)(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w,
                                  int64_t n, const int64_t *d_n, cnp_array *grid, cnp_stream *s);
  cnp_status (*deposit_atomic_dc)(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w,
                                  int64_t n, const int64_t *d_n, cnp_array *grid, cnp_stream *s);
  cnp_status (*gather_dc)(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *grid,
                          int64_t n, const int64_t *d_n, cnp_array *out, cnp_stream *s);
} cnp__pgrid_backend;

extern const cnp__pgrid_backend cnp__pgrid_host;
extern const cnp__pgrid_backend cnp__pgrid_cuda;

/* Base cell index along one axis for cell-unit position u (shape's rule), or INT64_MIN for
** a non-finite |u| >= 2^52. Shared by the host backend and the tests' expectations. */
#define CNP__PG_UMAX 4503599627370496.0   /* 2^52 */

#ifdef __cplusplus
}
#endif

#endif /* CNP_GRID_INTERNAL_H */
