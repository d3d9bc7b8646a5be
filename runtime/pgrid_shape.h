/*
** pgrid_shape.h — the particle shapes of cnp/grid.h, one definition for the host (C) and
** CUDA (included by pgrid_host.c and pgrid_cuda.cu), so both compute the same weights.
** Weights are computed in float64 whatever the plan's dtype.
*/
#ifndef CNP_PGRID_SHAPE_H
#define CNP_PGRID_SHAPE_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define CNP__HD __host__ __device__ __forceinline__
#elif defined(__GNUC__)
#define CNP__HD static inline __attribute__((always_inline))
#else
#define CNP__HD static inline
#endif

/* Per-axis base index (wrapped into [0, n)) and the S weights at base, base+1, base+2
** (mod n). Returns 0 for a position that is skipped (non-finite or |u| >= 2^52). */
CNP__HD int cnp__pg_axis(double u, int shape, int64_t n, int64_t *base, double W[3])
{
  if (!(fabs(u) < 4503599627370496.0)) return 0;
  double i;
  if (shape == 0) {                    /* NGP */
    i = floor(u + 0.5);
    W[0] = 1.0;
  } else if (shape == 1) {             /* CIC */
    i = floor(u);
    double f = u - i;
    W[0] = 1.0 - f;
    W[1] = f;
  } else {                             /* TSC */
    i = floor(u + 0.5);
    double d = u - i;
    W[0] = 0.5 * (0.5 - d) * (0.5 - d);
    W[1] = 0.75 - d * d;
    W[2] = 0.5 * (0.5 + d) * (0.5 + d);
    i -= 1.0;
  }
  int64_t b = (int64_t)i;
  if ((uint64_t)b >= (uint64_t)n) {    /* outside [0, n): wrap (rare in a periodic box) */
    b %= n;
    if (b < 0) b += n;
  }
  *base = b;
  return 1;
}

/* The stencil of one particle: base cell per axis, weights per axis. Unused axes (d >=
** ndim) get base 0 and weight 1 with one point. Returns 0 when skipped. */
typedef struct cnp__pg_stencil {
  int64_t base[3];
  double  W[3][3];
} cnp__pg_stencil;

CNP__HD int cnp__pg_stencil_of(const double u[3], int ndim, int shape, const int64_t dims[3],
                               cnp__pg_stencil *st)
{
  for (int a = 0; a < 3; a++) {
    if (a < ndim) {
      if (!cnp__pg_axis(u[a], shape, dims[a], &st->base[a], st->W[a])) return 0;
    } else {
      st->base[a] = 0;
      st->W[a][0] = 1.0;
    }
  }
  return 1;
}

#endif /* CNP_PGRID_SHAPE_H */
