/*
** cnp/grid.h — grids of libcnp (included by cnp/cnp.h): real-to-complex FFTs over the
** spatial axes of a 1D/2D/3D grid, their wave numbers, and particle–grid interaction
** (deposition and gather with NGP, CIC and TSC shapes). docs/grids.md is the manual.
**
** Conventions (as cnp/algo.h): every call returns a cnp_status; plans are opaque handles
** created once at setup (they hold every buffer the per-step calls need: those allocate
** nothing); `s` orders the work (NULL: the backend's default stream; the host backend is
** synchronous); every array of a call lives on the plan's backend and device (else
** CNP_EDEVICE). A failing call leaves its output arrays unchanged when the failure is
** found from the arguments (NULLs, shapes, dtypes, layouts, backends), which is every
** failure but a backend error.
**
** Grid layout: a grid of ndim (1..3) spatial axes of extents dims[0..ndim-1] is a
** C-contiguous array of that shape, the last axis unit-stride; an optional leading
** component axis (FFT batch) comes first. Grid point j = (j0, j1, j2) sits at position
** (j0, j1, j2) in cell units; the box is periodic with period dims[a] along axis a.
*/
#ifndef CNP_GRID_H
#define CNP_GRID_H

#include "cnp/cnp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
** FFT plans: forward real-to-complex and inverse complex-to-real transforms over all
** ndim spatial axes of a grid, on the host (FFTW3, threaded) or CUDA (cuFFT).
**
**   ndim    1, 2 or 3; dims[a] >= 1 (any size: odd, even, prime).
**   batch   0: the arrays are the grid itself; >= 1: a leading component axis of that
**           extent, each component transformed independently (ndim + 1 <= CNP_MAX_DIMS).
**   dtype   the real dtype, CNP_FLOAT32 or CNP_FLOAT64; the complex arrays are
**           CNP_COMPLEX64 / CNP_COMPLEX128 (interleaved re, im).
**   Shapes  real:    [batch,] dims[0], ..., dims[ndim-1]
**           complex: [batch,] dims[0], ..., dims[ndim-2], dims[ndim-1] / 2 + 1
**           (FFTW's and numpy.fft.rfftn's r2c layout: the last axis keeps the
**           non-negative frequencies only). Both C-contiguous (CNP_ELAYOUT otherwise).
**   flags   CNP_FFT_ESTIMATE (0): FFTW_ESTIMATE planning, fast, no data touched.
**           CNP_FFT_MEASURE: FFTW_MEASURE planning (times candidate algorithms at create:
**           slower setup, faster transforms); CUDA ignores both.
**           CNP_FFT_DESTROY_INPUT: cnp_fft_inverse may overwrite its complex input (it
**           then skips a copy; without the flag the input is preserved).
**
** Normalization: none, as FFTW and cuFFT. forward: X[k] = sum_j x[j] exp(-2 pi i k.j/n);
** inverse: x[j] = sum_k X[k] exp(+2 pi i k.j/n), so inverse(forward(x)) = N x with
** N = dims[0] * ... * dims[ndim-1] (cnp_fft_norm gives 1/N for the k-space map to apply).
** The inverse reads only the Hermitian half; the imaginary parts of the self-conjugate
** modes (k = 0 and Nyquist along every axis) are ignored.
**
** Host: plans are made at create (under a process-wide lock: the FFTW planner is not
** thread-safe) with fftw_plan_with_nthreads(omp_get_max_threads()) for the threaded FFTW
** (fftw3_threads) when the plan has 2^18 points or more in all (one thread below) and applied to the caller's arrays with FFTW's new-array execute. An
** array whose alignment differs from FFTW's SIMD alignment goes through the plan's own
** aligned buffers (one extra copy, still no allocation). The plan holds a real and a
** complex buffer of one transform's size (plus FFTW's own plan data).
** CUDA: one cufftPlanMany per direction, made at create without auto-allocation; the
** work area (the larger of the two) is allocated at create and set on the plans; each call
** sets the stream and enqueues the transform (plus, for a preserved inverse, one
** device-to-device copy into the plan's complex buffer): no allocation, no
** synchronization, so the calls may be captured into a CUDA graph.
** A build without FFTW answers CNP_EUNSUPPORTED ("built without FFTW") for host plans,
** one without CUDA the same for CUDA plans.
**
**   cnp_fft_plan *fft;
**   int64_t dims[2] = {ny, nx};
**   cnp_fft_plan_create(&fft, CNP_BACKEND_HOST, 0, 2, dims, 0, CNP_FLOAT64, 0);   setup
**   cnp_fft_forward(fft, &rho, &rho_hat, s);                                       step
**   ... rho_hat[ky, kx] *= cnp_fft_norm(fft) / k2 ...                              k-space
**   cnp_fft_inverse(fft, &rho_hat, &phi, s);
*/
typedef struct cnp_fft_plan cnp_fft_plan;

#define CNP_FFT_ESTIMATE      0x0u
#define CNP_FFT_MEASURE       0x1u
#define CNP_FFT_DESTROY_INPUT 0x2u

cnp_status cnp_fft_plan_create(cnp_fft_plan **out, cnp_backend backend, int device,
                               int ndim, const int64_t *dims, int64_t batch,
                               cnp_dtype dtype, unsigned flags);
cnp_status cnp_fft_plan_destroy(cnp_fft_plan *plan);      /* NULL is a no-op */
/* real_in -> complex_out (real_in is not changed). */
cnp_status cnp_fft_forward(cnp_fft_plan *plan, const cnp_array *real_in,
                           cnp_array *complex_out, cnp_stream *s);
/* complex_in -> real_out (complex_in is preserved unless CNP_FFT_DESTROY_INPUT). */
cnp_status cnp_fft_inverse(cnp_fft_plan *plan, const cnp_array *complex_in,
                           cnp_array *real_out, cnp_stream *s);
/* The shapes the plan's calls take: ndim of the arrays (ndim or ndim + 1 with a batch)
** and their extents. Either output may be NULL. */
cnp_status cnp_fft_shapes(const cnp_fft_plan *plan, int *array_ndim,
                          int64_t real_shape[CNP_MAX_DIMS],
                          int64_t complex_shape[CNP_MAX_DIMS]);
/* 1/N, N the number of grid points of one transform (0 for a NULL plan). */
double     cnp_fft_norm(const cnp_fft_plan *plan);

/* ---------------------------------------------------------------------------------------
** Wave numbers in the r2c layout, for k-space maps.
** cnp_fft_wavenumber: the angular wave number of index j along an axis of n points and
**   period `length` (physical units): 2 pi m / length with m = j for j < (n + 1) / 2 and
**   m = j - n otherwise (numpy.fft.fftfreq order: for even n the Nyquist index n/2 is
**   negative); with half != 0 (the last, halved axis of the r2c layout, j in [0, n/2]):
**   m = j (numpy.fft.rfftfreq). j outside its range gives 0.
** cnp_fft_wavenumbers: fills k, a 1-D contiguous float64 (or float32) array on the plan's
**   backend and device with the complex_shape extent of spatial axis `axis` (0-based, not
**   counting the batch axis), with those values: kx, ky, kz of a box of the given length.
**   A setup call: on CUDA it stages through a small host buffer it allocates and frees.
*/
double     cnp_fft_wavenumber(int64_t n, double length, int64_t j, int half);
cnp_status cnp_fft_wavenumbers(const cnp_fft_plan *plan, int axis, double length,
                               cnp_array *k, cnp_stream *s);

/* ---------------------------------------------------------------------------------------
** Particle–grid interaction: deposition (scatter of particle weights onto the grid) and
** gather (interpolation of a grid field to the particles) with the same shape.
**
** Positions are in cell units: u = x * scale[a] along grid axis a (scale given at create,
** e.g. dims[a] / L[a] for physical positions in [0, L); NULL means 1, positions already in
** cell units), grid point j at u = j. Any finite u is wrapped periodically (the box
** repeats); a particle with a non-finite u or |u| >= 2^52 along some axis is skipped
** (deposits nothing, gathers 0).
** Shapes, per axis, with i = the grid point index and the weights summing to 1:
**   CNP_SHAPE_NGP  nearest grid point: 1 at i = floor(u + 1/2).
**   CNP_SHAPE_CIC  cloud in cell (linear): i = floor(u), f = u - i: 1 - f at i, f at i + 1.
**   CNP_SHAPE_TSC  triangular shaped cloud (quadratic): i = floor(u + 1/2), d = u - i:
**                  (1/2 - d)^2 / 2 at i - 1, 3/4 - d^2 at i, (1/2 + d)^2 / 2 at i + 1.
** In 2D and 3D the weight is the product of the per-axis weights (S^ndim points, S = 1, 2,
** 3). Indices are taken modulo dims[a] (periodic wrap).
**
** Arrays: pos is an array of ndim views, pos[a] the cell-unit (or scaled) coordinate along
** grid axis a (so for rho : f64[ny, nx] pass {y, x}), each 1-D contiguous of N elements;
** w is the weights, 1-D contiguous [N], or NULL for weight 1; grid is the grid (shape dims,
** C-contiguous); gather's out is [N] 1-D contiguous. All of the plan's dtype (float32 or
** float64). The shape weights and gather's sums are computed in float64; deposition sums
** are in the plan's dtype. N <= capacity (CNP_EOVERFLOW). Outputs must not
** overlap inputs (CNP_EALIAS).
**
** cnp_deposit overwrites grid with the sum over particles of w * weight (no accumulation
** into what was there). Modes:
**   CNP_DEPOSIT_SORTED  deterministic: the particles' base cells are sorted (cnp_sort_by_key,
**     stable counting sort, with the permutation); each particle's S^ndim contributions
**     become one row in that order; the rows are summed per base cell
**     (cnp_segment_plan_sum, row order = particle order); each grid point adds the S^ndim
**     partial sums that reach it in a fixed order. The result is bit-identical run to run
**     and for any number of host threads; it depends on the particles' order only among
**     those of one base cell (summed in array order). On CUDA the same steps run on the
**     device (the device-count sort and build: nothing synchronizes, capture-safe); CUDA's
**     segment sums use their own fixed order, so host and CUDA agree to rounding, each
**     deterministic.
**   CNP_DEPOSIT_ATOMIC  fast scatter: host: with one OpenMP thread a plain loop in particle
**     order (deterministic); with more, `#pragma omp atomic` adds, whose order (so the
**     rounding) varies run to run. CUDA: atomicAdd, not deterministic.
** The plan holds, for SORTED, capacity * (16 + 2 * S^ndim * itemsize) bytes on the host
** (keys, the sort's permutation, contribution rows in particle and in sorted order; CUDA:
** one set of rows), a partial-sum table of (cells + 1) * S^ndim * itemsize
** bytes, and a workspace and segment plan for capacity rows; ATOMIC uses none of it.
**
** cnp_gather: out[p] = sum over the S^ndim points of weight * grid[point] (fixed order),
** deterministic on both backends.
**
**   double scale[2] = {ny / Ly, nx / Lx};
**   cnp_pgrid *pg;
**   cnp_pgrid_create(&pg, CNP_BACKEND_HOST, 0, 2, dims, CNP_SHAPE_CIC, CNP_FLOAT64,
**                    n_particles, scale);                                          setup
**   cnp_array pos[2] = {y, x};
**   cnp_deposit(pg, pos, &q, &rho, CNP_DEPOSIT_SORTED, s);                        step
**   cnp_gather(pg, pos, &ex, &ex_p, s);
*/
typedef enum cnp_shape {
  CNP_SHAPE_NGP = 0,
  CNP_SHAPE_CIC = 1,
  CNP_SHAPE_TSC = 2
} cnp_shape;

typedef enum cnp_deposit_mode {
  CNP_DEPOSIT_SORTED = 0,
  CNP_DEPOSIT_ATOMIC = 1
} cnp_deposit_mode;

typedef struct cnp_pgrid cnp_pgrid;

cnp_status cnp_pgrid_create(cnp_pgrid **out, cnp_backend backend, int device, int ndim,
                            const int64_t *dims, cnp_shape shape, cnp_dtype dtype,
                            int64_t capacity, const double *scale);
cnp_status cnp_pgrid_destroy(cnp_pgrid *pg);              /* NULL is a no-op */
cnp_status cnp_deposit(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w,
                       cnp_array *grid, cnp_deposit_mode mode, cnp_stream *s);
cnp_status cnp_gather(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *grid,
                      cnp_array *out, cnp_stream *s);
/* The device-count forms (CUDA graphs: no host synchronization, nothing allocated). As
** cnp_deposit / cnp_gather over the leading n rows of the views, n held in `count`, an
** int64[1] array on the plan's backend and device (typically the live count a
** device-count compaction wrote). The views have N >= n rows (N <= capacity; typically the
** capacity); gather's out has N rows, and rows [n, N) of it are left as they were. On CUDA
** the work is sized by N and n is read only by kernels, so the calls may be captured into
** a CUDA graph; a count outside [0, N] is clamped there. On the host backend the calls are
** synchronous, n is read from host memory and must lie in [0, N] (CNP_ERANGE otherwise).
** `count` must not overlap the output (CNP_EALIAS); NULL is CNP_EINVAL.
**
**   cnp_deposit_device_count(pg, pos, &q, &d_count, &rho, CNP_DEPOSIT_SORTED, s);
*/
cnp_status cnp_deposit_device_count(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w,
                                    const cnp_array *count, cnp_array *grid,
                                    cnp_deposit_mode mode, cnp_stream *s);
cnp_status cnp_gather_device_count(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *grid,
                                   const cnp_array *count, cnp_array *out, cnp_stream *s);
/* Points per axis of a shape (1, 2, 3; 0 for an unknown shape). */
int        cnp_shape_points(cnp_shape shape);

#ifdef __cplusplus
}
#endif

#endif /* CNP_GRID_H */
