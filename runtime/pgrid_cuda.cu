/*
** pgrid_cuda.cu — CUDA particle–grid interaction (the table cnp__pgrid_cuda): kernels for
** the contributions, the fold, the atomic scatter and the gather, with the shapes of
** pgrid_shape.h (the same code as the host). SORTED mode: keys kernel, the row count
** written on the device by a one-thread kernel, cnp_sort_by_key_device_count (keys and the
** permutation), the contributions kernel in sorted order,
** cnp_segment_plan_build_sorted_device_count + cnp_segment_plan_sum (algo_cuda.cu), then
** the fold kernel: nothing allocates, nothing synchronizes (capture-safe). ATOMIC mode:
** cudaMemsetAsync and atomicAdd (float and double; sm_60+). The _device_count forms
** (cnp_deposit_device_count, cnp_gather_device_count) run the same kernels sized by the
** views' rows, each bounded by the live count it reads on the device.
*/
#include "grid_internal.h"
#include "cuda_common.cuh"
#include "pgrid_shape.h"

#include <cuda_runtime.h>

namespace {

using cnp_cu::blocks_for;
using cnp_cu::cuda_fail;
using cnp_cu::DeviceScope;
using cnp_cu::kThreads;

/* What every kernel needs of the plan, by value. */
struct KP {
  int     ndim, shape, S, S1, S2, np;
  int64_t dims[3];
  double  scale[3];
  int64_t n_cells;
};

KP kp_of(const cnp_pgrid *pg)
{
  KP k;
  k.ndim = pg->ndim;
  k.shape = (int)pg->shape;
  k.S = pg->S;
  k.S1 = pg->ndim > 1 ? pg->S : 1;
  k.S2 = pg->ndim > 2 ? pg->S : 1;
  k.np = pg->n_pts;
  for (int a = 0; a < 3; a++) {
    k.dims[a] = pg->dims[a];
    k.scale[a] = pg->scale[a];
  }
  k.n_cells = pg->n_cells;
  return k;
}

struct Pos {
  const void *p[3];
};

template <typename T>
__device__ __forceinline__ void upos(const KP &k, const Pos &pos, int64_t i, double u[3])
{
  for (int a = 0; a < 3; a++)
    u[a] = a < k.ndim ? (double)static_cast<const T *>(pos.p[a])[i] * k.scale[a] : 0.0;
}

/* The rows a kernel works on: n (the views' rows), or the device count *dn clamped to
** [0, n] (the _device_count forms; dn NULL otherwise). */
__device__ __forceinline__ int64_t rows_of(const int64_t *dn, int64_t n)
{
  if (!dn) return n;
  int64_t c = *dn;
  return c < 0 ? 0 : c > n ? n : c;
}

__device__ __forceinline__ int64_t wrap(int64_t j, int64_t n)
{
  if (j >= n) j -= n;
  if (j >= n) j -= n;
  return j;
}

template <typename T>
__global__ void keys_kernel(KP k, Pos pos, int64_t n, const int64_t *dn, int64_t *keys)
{
  n = rows_of(dn, n);
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    double u[3];
    cnp__pg_stencil st;
    upos<T>(k, pos, i, u);
    keys[i] = cnp__pg_stencil_of(u, k.ndim, k.shape, k.dims, &st)
                  ? (st.base[0] * k.dims[1] + st.base[1]) * k.dims[2] + st.base[2]
                  : k.n_cells;
  }
}

/* Row i: the contributions of particle order[i] (the sorted order). */
template <typename T>
__global__ void contrib_kernel(KP k, Pos pos, const T *w, int64_t n, const int64_t *dn,
                               const int64_t *order, T *rows)
{
  n = rows_of(dn, n);
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    int64_t p = order[i];
    double u[3];
    cnp__pg_stencil st;
    upos<T>(k, pos, p, u);
    T *row = rows + i * k.np;
    if (!cnp__pg_stencil_of(u, k.ndim, k.shape, k.dims, &st)) {
      for (int q = 0; q < k.np; q++) row[q] = T(0);
      continue;
    }
    double wi = w ? (double)w[p] : 1.0;
    int q = 0;
    for (int s0 = 0; s0 < k.S; s0++)
      for (int s1 = 0; s1 < k.S1; s1++)
        for (int s2 = 0; s2 < k.S2; s2++)
          row[q++] = (T)(wi * st.W[0][s0] * st.W[1][s1] * st.W[2][s2]);
  }
}

template <typename T>
__global__ void fold_kernel(KP k, const T *partial, T *grid)
{
  for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < k.n_cells;
       j += (int64_t)gridDim.x * blockDim.x) {
    int64_t n0 = k.dims[0], n1 = k.dims[1], n2 = k.dims[2];
    int64_t j2 = j % n2, j1 = (j / n2) % n1, j0 = j / (n1 * n2);
    T acc = T(0);
    int q = 0;
    for (int s0 = 0; s0 < k.S; s0++) {
      int64_t b0 = (j0 - s0 + 3 * n0) % n0;
      for (int s1 = 0; s1 < k.S1; s1++) {
        int64_t b1 = (j1 - s1 + 3 * n1) % n1;
        for (int s2 = 0; s2 < k.S2; s2++, q++) {
          int64_t b2 = (j2 - s2 + 3 * n2) % n2;
          acc += partial[((b0 * n1 + b1) * n2 + b2) * k.np + q];
        }
      }
    }
    grid[j] = acc;
  }
}

template <typename T>
__global__ void scatter_kernel(KP k, Pos pos, const T *w, int64_t n, const int64_t *dn, T *grid)
{
  n = rows_of(dn, n);
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    double u[3];
    cnp__pg_stencil st;
    upos<T>(k, pos, i, u);
    if (!cnp__pg_stencil_of(u, k.ndim, k.shape, k.dims, &st)) continue;
    double wi = w ? (double)w[i] : 1.0;
    for (int s0 = 0; s0 < k.S; s0++) {
      int64_t c0 = wrap(st.base[0] + s0, k.dims[0]) * k.dims[1];
      for (int s1 = 0; s1 < k.S1; s1++) {
        int64_t c1 = (c0 + wrap(st.base[1] + s1, k.dims[1])) * k.dims[2];
        double w01 = wi * st.W[0][s0] * st.W[1][s1];
        for (int s2 = 0; s2 < k.S2; s2++)
          atomicAdd(grid + c1 + wrap(st.base[2] + s2, k.dims[2]), (T)(w01 * st.W[2][s2]));
      }
    }
  }
}

template <typename T>
__global__ void gather_kernel(KP k, Pos pos, const T *grid, int64_t n, const int64_t *dn, T *out)
{
  n = rows_of(dn, n);
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    double u[3], acc = 0.0;
    cnp__pg_stencil st;
    upos<T>(k, pos, i, u);
    if (cnp__pg_stencil_of(u, k.ndim, k.shape, k.dims, &st)) {
      for (int s0 = 0; s0 < k.S; s0++) {
        int64_t c0 = wrap(st.base[0] + s0, k.dims[0]) * k.dims[1];
        for (int s1 = 0; s1 < k.S1; s1++) {
          int64_t c1 = (c0 + wrap(st.base[1] + s1, k.dims[1])) * k.dims[2];
          double w01 = st.W[0][s0] * st.W[1][s1];
          for (int s2 = 0; s2 < k.S2; s2++)
            acc += w01 * st.W[2][s2] * (double)grid[c1 + wrap(st.base[2] + s2, k.dims[2])];
        }
      }
    }
    out[i] = (T)acc;
  }
}

__global__ void set_count_kernel(int64_t *count, int64_t n, const int64_t *dn)
{
  *count = rows_of(dn, n);
}

Pos pos_of(const cnp_pgrid *pg, const cnp_array *pos)
{
  Pos p;
  for (int a = 0; a < 3; a++) p.p[a] = a < pg->ndim ? pos[a].data : nullptr;
  return p;
}

template <typename T>
cnp_status sorted_t(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w, int64_t n,
                    const int64_t *dn, cnp_array *grid, cnp_stream *s)
{
  static const char op[] = "cnp_deposit";
  cudaStream_t st = (cudaStream_t)cnp__native(s);
  KP k = kp_of(pg);
  if (n > 0) {
    Pos p = pos_of(pg, pos);
    keys_kernel<T><<<blocks_for(n), kThreads, 0, st>>>(k, p, n, dn,
                                                       static_cast<int64_t *>(pg->keys.data));
    set_count_kernel<<<1, 1, 0, st>>>(static_cast<int64_t *>(pg->count.data), n, dn);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) return cuda_fail(e, op, "key kernels");
    cnp_array keys, order, rows;
    cnp_status cs = cnp_array_slice(&keys, &pg->keys, 0, 0, n);
    if (cs == CNP_OK) cs = cnp_array_slice(&order, &pg->order, 0, 0, n);
    if (cs == CNP_OK) cs = cnp_array_slice(&rows, &pg->contrib, 0, 0, n);
    if (cs == CNP_OK)
      cs = cnp_sort_by_key_device_count(&keys, &order, nullptr, 0, pg->n_cells + 1,
                                        &pg->count, pg->ws, s);
    if (cs != CNP_OK) return cs;
    contrib_kernel<T><<<blocks_for(n), kThreads, 0, st>>>(
        k, p, w ? static_cast<const T *>(w->data) : nullptr, n,
        static_cast<const int64_t *>(pg->count.data), static_cast<const int64_t *>(pg->order.data), static_cast<T *>(pg->contrib.data));
    e = cudaGetLastError();
    if (e != cudaSuccess) return cuda_fail(e, op, "contribution kernel");
    cs = cnp_segment_plan_build_sorted_device_count(pg->seg, &keys, &pg->count, s);
    if (cs == CNP_OK) cs = cnp_segment_plan_sum(pg->seg, &rows, &pg->partial, s);
    if (cs != CNP_OK) return cs;
  } else {
    cudaError_t e = cudaMemsetAsync(pg->partial.data, 0, cnp_array_nbytes(&pg->partial), st);
    if (e != cudaSuccess) return cuda_fail(e, op, "cudaMemsetAsync");
  }
  fold_kernel<T><<<blocks_for(pg->n_cells), kThreads, 0, st>>>(
      k, static_cast<const T *>(pg->partial.data), static_cast<T *>(grid->data));
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return cuda_fail(e, op, "fold kernel");
  return CNP_OK;
}

template <typename T>
cnp_status atomic_t(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w, int64_t n,
                    const int64_t *dn, cnp_array *grid, cnp_stream *s)
{
  static const char op[] = "cnp_deposit";
  cudaStream_t st = (cudaStream_t)cnp__native(s);
  cudaError_t e = cudaMemsetAsync(grid->data, 0, cnp_array_nbytes(grid), st);
  if (e != cudaSuccess) return cuda_fail(e, op, "cudaMemsetAsync");
  if (n > 0)
    scatter_kernel<T><<<blocks_for(n), kThreads, 0, st>>>(
        kp_of(pg), pos_of(pg, pos), w ? static_cast<const T *>(w->data) : nullptr, n, dn,
        static_cast<T *>(grid->data));
  e = cudaGetLastError();
  if (e != cudaSuccess) return cuda_fail(e, op, "scatter kernel");
  return CNP_OK;
}

template <typename T>
cnp_status gather_t(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *grid, int64_t n,
                    const int64_t *dn, cnp_array *out, cnp_stream *s)
{
  cudaStream_t st = (cudaStream_t)cnp__native(s);
  if (n > 0)
    gather_kernel<T><<<blocks_for(n), kThreads, 0, st>>>(
        kp_of(pg), pos_of(pg, pos), static_cast<const T *>(grid->data), n, dn,
        static_cast<T *>(out->data));
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return cuda_fail(e, "cnp_gather", "gather kernel");
  return CNP_OK;
}

/* On the plan's device, the instance of the plan's dtype (f32 or f64) with the arguments. */
template <typename... A>
cnp_status on_device(const char *op, cnp_pgrid *pg, cnp_status (*f32)(cnp_pgrid *, A...),
                     cnp_status (*f64)(cnp_pgrid *, A...), A... a)
{
  DeviceScope ds(pg->device);
  if (ds.err != cudaSuccess) return cuda_fail(ds.err, op, "cudaSetDevice");
  return pg->dtype == CNP_FLOAT32 ? f32(pg, a...) : f64(pg, a...);
}

cnp_status c_sorted(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w, int64_t n,
                    cnp_array *grid, cnp_stream *s)
{
  return on_device("cnp_deposit", pg, sorted_t<float>, sorted_t<double>, pos, w, n,
                   (const int64_t *)nullptr, grid, s);
}

cnp_status c_atomic(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w, int64_t n,
                    cnp_array *grid, cnp_stream *s)
{
  return on_device("cnp_deposit", pg, atomic_t<float>, atomic_t<double>, pos, w, n,
                   (const int64_t *)nullptr, grid, s);
}

cnp_status c_gather(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *grid, int64_t n,
                    cnp_array *out, cnp_stream *s)
{
  return on_device("cnp_gather", pg, gather_t<float>, gather_t<double>, pos, grid, n,
                   (const int64_t *)nullptr, out, s);
}

/* The _device_count forms: n the views' rows (the capacity), dn the live count on the
** device; the kernels are sized by n and each reads *dn (capture-safe). */
cnp_status c_sorted_dc(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w, int64_t n,
                       const int64_t *dn, cnp_array *grid, cnp_stream *s)
{
  return on_device("cnp_deposit_device_count", pg, sorted_t<float>, sorted_t<double>, pos, w, n,
                   dn, grid, s);
}

cnp_status c_atomic_dc(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w, int64_t n,
                       const int64_t *dn, cnp_array *grid, cnp_stream *s)
{
  return on_device("cnp_deposit_device_count", pg, atomic_t<float>, atomic_t<double>, pos, w, n,
                   dn, grid, s);
}

cnp_status c_gather_dc(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *grid, int64_t n,
                       const int64_t *dn, cnp_array *out, cnp_stream *s)
{
  return on_device("cnp_gather_device_count", pg, gather_t<float>, gather_t<double>, pos, grid,
                   n, dn, out, s);
}

}  // namespace

extern "C" const cnp__pgrid_backend cnp__pgrid_cuda = {
  "cuda", c_sorted, c_atomic, c_gather, c_sorted_dc, c_atomic_dc, c_gather_dc,
};
