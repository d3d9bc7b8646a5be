/*
** algo_cuda.cu — CUDA algorithms of cnp/algo.h: the table cnp__algo_cuda (algo_internal.h).
**
** The front end (algo.c) has validated every argument's metadata; here we do the data
** checks (key ranges, sortedness) with the same statuses and messages as algo_host.c.
**
** Building blocks: CUB's DeviceRadixSort (pairs, begin/end bits sized to the measured key
** range) and DeviceScan, plus small kernels of our own for flags, scatters/gathers of rows
** and per-segment sums. All temporary device memory belongs to the workspace or the plan
** (allocated at create); per-call work allocates nothing. Scans and reductions are in
** algo_reduce_cuda.cu; what both files share is in algo_cuda.cuh.
**
** Synchronization (each is one cudaStreamSynchronize of the call's stream):
**   compact_by_mask         once, for the count (after all its kernels are enqueued);
**   sort_by_key             once, after the key statistics (range check, range, sortedness);
**   cell_offsets            once, for the validation result;
**   segment_boundaries      once, for the count;
**   segment_plan_build      once, for validation, the kept-row count and sortedness;
**   segment_plan_sum        never.
** The *_device_count forms (compaction, sort, plan build) never synchronize and allocate
** nothing: the row count stays in device memory, the work is sized by the arrays' rows, so
** they can be captured into a CUDA graph (the generated code does, docs/codegen.md).
*/
#include "algo_internal.h"
#include "algo_cuda.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cub/block/block_scan.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <limits>
#include <math_constants.h>
#include <type_traits>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- launch sizes --------------------------------------------------------------------- */



static const int kStatWarps = kThreads / 32;  /* warps of a block of the reduction kernels */
/* Blocks of the reduction kernels (key statistics): a few per multiprocessor is enough to
** stream the keys, and each block ends in global atomics. */
static const unsigned kStatBlocks = 1024;



/* Scratch for cell_offsets called without a workspace (one per device context). Calls that
** use it hold g_scratch_lock until their synchronization, so two of them (other threads,
** other streams) never interleave their kernels on it. */
static __device__ Scalars g_scratch;
static pthread_mutex_t g_scratch_lock = PTHREAD_MUTEX_INITIALIZER;

__global__ void k_init_scalars(Scalars *s)
{
  s->lo = ~0ull;
  s->hi = 0;
  s->bad = ~0ull;
  s->descents = 0;
  s->negatives = 0;
  s->count = 0;
}

/* ---- keys ------------------------------------------------------------------------------ */

/* Order-preserving unsigned value of a key. */
template <typename K> __device__ __forceinline__ unsigned long long ord(K k);
template <> __device__ __forceinline__ unsigned long long ord<int32_t>(int32_t k)
{
  return (unsigned long long)((uint32_t)k ^ 0x80000000u);
}
template <> __device__ __forceinline__ unsigned long long ord<int64_t>(int64_t k)
{
  return (unsigned long long)k ^ 0x8000000000000000ull;
}
template <> __device__ __forceinline__ unsigned long long ord<uint64_t>(uint64_t k)
{
  return k;
}
template <typename K> __device__ __forceinline__ K unord(unsigned long long u);
template <> __device__ __forceinline__ int32_t unord<int32_t>(unsigned long long u)
{
  return (int32_t)((uint32_t)u ^ 0x80000000u);
}
template <> __device__ __forceinline__ int64_t unord<int64_t>(unsigned long long u)
{
  return (int64_t)(u ^ 0x8000000000000000ull);
}
template <> __device__ __forceinline__ uint64_t unord<uint64_t>(unsigned long long u)
{
  return u;
}

template <typename K> __device__ __forceinline__ bool is_neg(K k) { return k < (K)0; }
template <> __device__ __forceinline__ bool is_neg<uint64_t>(uint64_t) { return false; }

/* Whether key k lies outside [0, limit) (limit > 0). */
template <typename K> __device__ __forceinline__ bool out_of(K k, long long limit)
{
  return is_neg<K>(k) || (unsigned long long)k >= (unsigned long long)limit;
}
template <> __device__ __forceinline__ bool out_of<uint64_t>(uint64_t k, long long limit)
{
  return k >= (unsigned long long)limit;
}

__device__ __forceinline__ unsigned long long warp_min(unsigned long long v)
{
  for (int d = 16; d > 0; d >>= 1) {
    unsigned long long o = __shfl_down_sync(0xffffffffu, v, d);
    v = o < v ? o : v;
  }
  return v;
}
__device__ __forceinline__ unsigned long long warp_max(unsigned long long v)
{
  for (int d = 16; d > 0; d >>= 1) {
    unsigned long long o = __shfl_down_sync(0xffffffffu, v, d);
    v = o > v ? o : v;
  }
  return v;
}
__device__ __forceinline__ unsigned long long warp_add(unsigned long long v)
{
  for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
  return v;
}

/* Key statistics: range, descents, negatives, and the first key outside [0, limit) when
** limit > 0 (or, with seg_mode, the first key >= limit). Grid-stride; every thread of
** every warp reaches the warp reductions. */
template <typename K>
__global__ void k_key_stats(const K *keys, int64_t n, long long limit, int seg_mode,
                            Scalars *out)
{
  unsigned long long lo = ~0ull, hi = 0, bad = ~0ull, desc = 0, neg = 0;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    K k = keys[i];
    unsigned long long u = ord<K>(k);
    lo = u < lo ? u : lo;
    hi = u > hi ? u : hi;
    if (i > 0 && k < keys[i - 1]) desc++;
    if (is_neg<K>(k)) neg++;
    bool b = seg_mode ? (!is_neg<K>(k) && (unsigned long long)k >= (unsigned long long)limit)
                      : (limit > 0 && out_of<K>(k, limit));
    if (b && (unsigned long long)i < bad) bad = (unsigned long long)i;
  }
  lo = warp_min(lo);
  hi = warp_max(hi);
  bad = warp_min(bad);
  desc = warp_add(desc);
  neg = warp_add(neg);
  /* then over the block, so that only one thread per block meets the others at the five
  ** global atomics (a warp each made 16M keys take milliseconds of contention) */
  __shared__ unsigned long long red[5][kStatWarps];
  int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
  if (lane == 0) {
    red[0][wid] = lo;
    red[1][wid] = hi;
    red[2][wid] = bad;
    red[3][wid] = desc;
    red[4][wid] = neg;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int q = 1; q < nw; q++) {
      lo = red[0][q] < lo ? red[0][q] : lo;
      hi = red[1][q] > hi ? red[1][q] : hi;
      bad = red[2][q] < bad ? red[2][q] : bad;
      desc += red[3][q];
      neg += red[4][q];
    }
    if (lo != ~0ull) atomicMin(&out->lo, lo);
    if (hi) atomicMax(&out->hi, hi);
    if (bad != ~0ull) atomicMin(&out->bad, bad);
    if (desc) atomicAdd(&out->descents, desc);
    if (neg) atomicAdd(&out->negatives, neg);
  }
}

/* Radix input: rk[i] = ord(key[i]) - lo (or, in seg_mode, key >= 0 ? key : sentinel);
** idx[i] = i. */
template <typename K, typename R, typename I = int64_t>
__global__ void k_radix_in(const K *keys, int64_t n, unsigned long long lo, int seg_mode,
                           unsigned long long sentinel, R *rk, I *idx)
{
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    K k = keys[i];
    unsigned long long v = seg_mode ? (is_neg<K>(k) ? sentinel : (unsigned long long)k)
                                    : ord<K>(k) - lo;
    rk[i] = (R)v;
    idx[i] = (I)i;
  }
}

/* keys[i] = unord(rk[i] + lo) and perm[i] = p32[i] after a sort with 32-bit row indices. */
template <typename K, typename R>
__global__ void k_radix_out_perm(K *keys, int64_t n, unsigned long long lo, const R *rk,
                                 const uint32_t *p32, int64_t *perm)
{
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    keys[i] = unord<K>((unsigned long long)rk[i] + lo);
    perm[i] = (int64_t)p32[i];
  }
}

/* keys[i] = unord(rk[i] + lo) after the sort. */
template <typename K, typename R>
__global__ void k_radix_out(K *keys, int64_t n, unsigned long long lo, const R *rk)
{
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    keys[i] = unord<K>((unsigned long long)rk[i] + lo);
}

__global__ void k_iota(int64_t *p, int64_t n)
{
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) p[i] = i;
}

/* off[q] = first i with v[i] >= q, for q in [0, nq] (v sorted ascending, n entries). With
** d_n, the first *d_n entries (clamped into [0, n]) are searched (device-count plans). */
template <typename V>
__global__ void k_lower_bounds(const V *v, int64_t n, int64_t *off, int64_t nq,
                               const int64_t *d_n = NULL)
{
  if (d_n) {
    int64_t c = *d_n;
    n = c < 0 ? 0 : c > n ? n : c;
  }
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q <= nq; q += stride) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      int64_t mid = lo + (hi - lo) / 2;
      if ((long long)v[mid] < (long long)q) lo = mid + 1; else hi = mid;
    }
    off[q] = lo;
  }
}

/* cell_offsets in one pass over the cells, with the validation: boundary i (between cells
** c[i-1] and c[i], with c[-1] = -1 and c[n] = n_cells) writes off[q] = i for every q in
** (c[i-1], c[i]]. An invalid cell (outside [0, n_cells) or below its predecessor) records
** the first such index in out->bad and writes nothing (the call then fails). */
template <typename C>
__global__ void k_cell_offsets(const C *c, int64_t n, int64_t n_cells, int64_t *off,
                               Scalars *out)
{
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i <= n; i += stride) {
    long long cur = i < n ? (long long)c[i] : (long long)n_cells;
    long long prev = i > 0 ? (long long)c[i - 1] : -1;
    if (i < n && (cur < 0 || cur >= n_cells || cur < prev)) {
      atomicMin(&out->bad, (unsigned long long)i);
      continue;
    }
    if (prev < -1 || prev >= n_cells) continue;   /* row i - 1 reports itself */
    for (long long q = prev + 1; q <= cur; q++) off[q] = i;
  }
}

/* ---- compaction / permutation of rows ---------------------------------------------------
** A row block is base + b * block_stride; row i of it is `rb` bytes at i * rb. A chunk is
** `w` bytes at byte `col` of every row, moved as words of type W. */

__global__ void k_flags(const unsigned char *mask, int64_t n, int64_t *pos)
{
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    pos[i] = mask[i] != 0;
}

/* After the exclusive scan: count = pos[n-1] + flag[n-1]. */
__global__ void k_count(const unsigned char *mask, const int64_t *pos, int64_t n, Scalars *out)
{
  out->count = (unsigned long long)(pos[n - 1] + (mask[n - 1] != 0));
}

template <typename W>
__global__ void k_compact_chunk(const W *src, int64_t rbw, int64_t colw, int64_t ww,
                                const unsigned char *mask, const int64_t *pos, int64_t n,
                                W *tmp)
{
  int64_t total = n * ww, stride = (int64_t)gridDim.x * blockDim.x;
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (ww == 1) {                       /* one word per row: no 64-bit division per word */
    for (; t < n; t += stride)
      if (mask[t]) tmp[pos[t]] = src[t * rbw + colw];
    return;
  }
  for (; t < total; t += stride) {
    int64_t i = t / ww, c = t - i * ww;
    if (mask[i]) tmp[pos[i] * ww + c] = src[i * rbw + colw + c];
  }
}

/* Rows [0, rows) of the chunk through perm into tmp; rows = *d_count when d_count, else n.
** P: int64_t, or uint32_t for the device-count sort's 32-bit permutation. */
template <typename W, typename P = int64_t>
__global__ void k_gather_chunk(const W *src, int64_t rbw, int64_t colw, int64_t ww,
                               const P *perm, int64_t n, W *tmp,
                               const unsigned long long *d_count)
{
  int64_t rows = d_count ? (int64_t)*d_count : n;
  int64_t total = rows * ww, stride = (int64_t)gridDim.x * blockDim.x;
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (ww == 1) {
    for (; t < rows; t += stride) tmp[t] = src[(int64_t)perm[t] * rbw + colw];
    return;
  }
  for (; t < total; t += stride) {
    int64_t i = t / ww, c = t - i * ww;
    tmp[t] = src[(int64_t)perm[i] * rbw + colw + c];
  }
}

/* Rows [0, count) of tmp back into the chunk; count = *d_count when d_count, else n. */
template <typename W>
__global__ void k_chunk_back(W *dst, int64_t rbw, int64_t colw, int64_t ww, const W *tmp,
                             int64_t n, const unsigned long long *d_count)
{
  int64_t rows = d_count ? (int64_t)*d_count : n;
  int64_t total = rows * ww, stride = (int64_t)gridDim.x * blockDim.x;
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (ww == 1) {
    for (; t < rows; t += stride) dst[t * rbw + colw] = tmp[t];
    return;
  }
  for (; t < total; t += stride) {
    int64_t i = t / ww, c = t - i * ww;
    dst[i * rbw + colw + c] = tmp[t];
  }
}

/* ---- workspace --------------------------------------------------------------------------- */


/* Whether row i starts a run (its key differs from the previous row's). */
template <typename K> struct RunHead {
  const K *k;
  __host__ __device__ bool operator()(int64_t i) const { return i == 0 || k[i] != k[i - 1]; }
};

/* Rows of 16, 24 and 32 bytes as one item each, for CUB's in-place selection. */
template <int W> struct Words {
  unsigned long long w[W];
};

/* Temporary storage of an in-place cub::DeviceSelect::Flagged over n items of type T. */
template <typename T> static cudaError_t select_temp(int64_t n, size_t *bytes)
{
  *bytes = 0;
  return cub::DeviceSelect::Flagged((void *)NULL, *bytes, (T *)NULL,
                                    (const unsigned char *)NULL, (unsigned long long *)NULL,
                                    (::cuda::std::int64_t)n, (cudaStream_t)0);
}

/* Temporary storage of a cub::DeviceRadixSort::SortPairs of n (K, V) pairs over `bits` bits. */
template <typename K, typename V> static cudaError_t sort_temp(int64_t n, int bits, size_t *bytes)
{
  *bytes = 0;
  return cub::DeviceRadixSort::SortPairs((void *)NULL, *bytes, (const K *)NULL, (K *)NULL,
                                         (const V *)NULL, (V *)NULL, n, 0, bits);
}

/* CUB temporary storage for everything a workspace or plan of capacity n runs. */
static cudaError_t cub_temp_bytes(int64_t n, size_t *out)
{
  size_t a = 0, c = 0;                 /* the largest sort; the largest selection or scan */
  cudaError_t e;
  size_t sel[7];
  if ((e = select_temp<unsigned char>(n, &sel[0])) != cudaSuccess ||
      (e = select_temp<unsigned short>(n, &sel[1])) != cudaSuccess ||
      (e = select_temp<unsigned>(n, &sel[2])) != cudaSuccess ||
      (e = select_temp<unsigned long long>(n, &sel[3])) != cudaSuccess ||
      (e = select_temp<Words<2>>(n, &sel[4])) != cudaSuccess ||
      (e = select_temp<Words<3>>(n, &sel[5])) != cudaSuccess ||
      (e = select_temp<Words<4>>(n, &sel[6])) != cudaSuccess)
    return e;
  for (size_t t : sel) c = t > c ? t : c;
  size_t sorts[4];                     /* keys of 64 and 32 bits, row indices of 64 and 32 */
  if ((e = sort_temp<uint64_t, int64_t>(n, 64, &sorts[0])) != cudaSuccess ||
      (e = sort_temp<uint32_t, int64_t>(n, 32, &sorts[1])) != cudaSuccess ||
      (e = sort_temp<uint64_t, uint32_t>(n, 64, &sorts[2])) != cudaSuccess ||
      (e = sort_temp<uint32_t, uint32_t>(n, 32, &sorts[3])) != cudaSuccess)
    return e;
  for (size_t t : sorts) a = t > a ? t : a;
  size_t scan = 0, runs = 0;
  e = cub::DeviceScan::ExclusiveSum((void *)NULL, scan, (const int64_t *)NULL, (int64_t *)NULL,
                                    n);
  if (e != cudaSuccess) return e;
  c = scan > c ? scan : c;
  e = cub::DeviceSelect::If((void *)NULL, runs, thrust::make_counting_iterator<int64_t>(0),
                            (int64_t *)NULL, (unsigned long long *)NULL,
                            (::cuda::std::int64_t)n, RunHead<int64_t>{NULL});
  if (e != cudaSuccess) return e;
  c = runs > c ? runs : c;
  *out = (a > c ? a : c) + 256;
  return cudaSuccess;
}

static void ws_free(CudaWs *w)
{
  if (!w) return;
  for (int i = 0; i < 2; i++) {
    cudaFree(w->rk[i]);
    cudaFree(w->idx[i]);
  }
  cudaFree(w->rows);
  cudaFree(w->temp);
  cudaFree(w->scal);
  cudaFree(w->red);
  cnp__free(w);
}

static cnp_status ws_alloc(const char *op, int64_t cap, size_t chunk, CudaWs **out)
{
  CudaWs *w = (CudaWs *)cnp__calloc(1, sizeof *w);
  if (!w) return cnp__fail(CNP_ENOMEM, op, "no memory");
  size_t n = (size_t)(cap > 0 ? cap : 1);
  w->cap = cap;
  w->chunk = chunk;
  cudaError_t e = cub_temp_bytes(cap, &w->temp_bytes);
  for (int i = 0; e == cudaSuccess && i < 2; i++) {
    if ((e = cudaMalloc((void **)&w->rk[i], n * sizeof(unsigned long long))) == cudaSuccess)
      e = cudaMalloc((void **)&w->idx[i], n * sizeof(int64_t));
  }
  if (e == cudaSuccess && chunk) e = cudaMalloc(&w->rows, n * chunk);
  if (e == cudaSuccess) e = cudaMalloc(&w->temp, w->temp_bytes);
  if (e == cudaSuccess) e = cudaMalloc((void **)&w->scal, sizeof(Scalars));
  if (e == cudaSuccess) e = cudaMalloc(&w->red, kRedBytes);
  if (e != cudaSuccess) {
    ws_free(w);
    return cuda_fail(e, op, "device workspace allocation");
  }
  *out = w;
  return CNP_OK;
}

static size_t ws_bytes(const CudaWs *w)
{
  size_t n = (size_t)(w->cap > 0 ? w->cap : 1);
  return n * (2 * sizeof(unsigned long long) + 2 * sizeof(int64_t) + w->chunk) +
         w->temp_bytes + sizeof(Scalars) + kRedBytes;
}

static cnp_status cuda_workspace_create(cnp_workspace *ws)
{
  static const char op[] = "cnp_workspace_create";
  DEVICE_SCOPE(op, ws->device);
  CudaWs *w = NULL;
  size_t chunk = (ws->row_bytes + 7) / 8 * 8;
  cnp_status st = ws_alloc(op, ws->capacity, chunk, &w);
  if (st != CNP_OK) return st;
  ws->impl = w;
  ws->bytes = ws_bytes(w);
  return CNP_OK;
}

static cnp_status cuda_workspace_destroy(cnp_workspace *ws)
{
  DeviceScope scope(ws->device);
  ws_free((CudaWs *)ws->impl);
  ws->impl = NULL;
  return CNP_OK;
}

/* Read the scalars back: the call's one synchronization, and a device->host transfer
** (reported, so an assert-no-transfers scope names the call). */
static cnp_status read_scalars(const char *op, const Scalars *d, Scalars *h, cudaStream_t st)
{
  CU(op, cudaMemcpyAsync(h, d, sizeof *h, cudaMemcpyDeviceToHost, st));
  cnp_transfers_note(CNP_XFER_D2H, sizeof *h, op);
  CU(op, cudaStreamSynchronize(st));
  return CNP_OK;
}

/* A few bytes of device memory for an error message, after the call's synchronization: on
** the call's stream (a cudaMemcpy would go through the legacy default stream, waiting for
** every blocking stream and breaking another thread's stream capture), and reported. */
static cnp_status read_back(const char *op, void *h, const void *d, size_t bytes,
                            cudaStream_t st)
{
  CU(op, cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, st));
  cnp_transfers_note(CNP_XFER_D2H, bytes, op);
  CU(op, cudaStreamSynchronize(st));
  return CNP_OK;
}

/* Exclusive sum of in[0, n) into out (in place when in == out) in the workspace's temporary
** storage; `in` may be an iterator. */
template <typename In>
static cnp_status exclusive_sum(const char *op, CudaWs *w, In in, int64_t *out, int64_t n,
                                cudaStream_t st)
{
  size_t tb = 0;
  CU(op, cub::DeviceScan::ExclusiveSum(NULL, tb, in, out, n, st));
  if (tb > w->temp_bytes)
    return cnp__fail(CNP_EOVERFLOW, op, "scan needs %zu bytes of temporary storage, the "
                     "workspace holds %zu", tb, w->temp_bytes);
  tb = w->temp_bytes;
  CU(op, cub::DeviceScan::ExclusiveSum(w->temp, tb, in, out, n, st));
  return CNP_OK;
}

/* ---- moving rows ------------------------------------------------------------------------ */

/* Largest word size (8, 4, 2, 1) dividing every value. */
static size_t word_for(uintptr_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e)
{
  uint64_t all = (uint64_t)a | b | c | d | e;
  for (size_t w = 8; w > 1; w >>= 1)
    if (all % w == 0) return w;
  return 1;
}

enum MoveKind { MOVE_COMPACT, MOVE_GATHER };

template <typename W>
static void launch_move(MoveKind kind, char *block, size_t rb, size_t col, size_t w,
                        const unsigned char *mask, const int64_t *pos_or_perm, int64_t n,
                        void *tmp, const unsigned long long *d_count, cudaStream_t st,
                        const uint32_t *perm32)
{
  int64_t rbw = (int64_t)(rb / sizeof(W)), colw = (int64_t)(col / sizeof(W));
  int64_t ww = (int64_t)(w / sizeof(W));
  unsigned g = blocks_for(n * ww);
  if (kind == MOVE_COMPACT)
    k_compact_chunk<W><<<g, kThreads, 0, st>>>((const W *)block, rbw, colw, ww, mask,
                                               pos_or_perm, n, (W *)tmp);
  else if (perm32)
    k_gather_chunk<W, uint32_t><<<g, kThreads, 0, st>>>((const W *)block, rbw, colw, ww,
                                                        perm32, n, (W *)tmp, d_count);
  else
    k_gather_chunk<W><<<g, kThreads, 0, st>>>((const W *)block, rbw, colw, ww, pos_or_perm,
                                              n, (W *)tmp, d_count);
  k_chunk_back<W><<<g, kThreads, 0, st>>>((W *)block, rbw, colw, ww, (const W *)tmp, n,
                                          d_count);
}

/* Compact (mask + exclusive positions) or gather (perm, or perm32 when given) every row
** block of `a`. */
static cnp_status move_rows(const char *op, MoveKind kind, const cnp_array *a, int64_t n,
                            const unsigned char *mask, const int64_t *pos_or_perm,
                            const unsigned long long *d_count, CudaWs *w, cudaStream_t st,
                            const uint32_t *perm32 = NULL)
{
  cnp__rows r;
  cnp_status s = cnp__algo_rows(a, n, op, "arrays", &r);
  if (s != CNP_OK) return s;
  for (int64_t b = 0; b < r.n_blocks; b++) {
    char *block = r.data + b * r.block_stride;
    for (size_t col = 0; col < r.row_bytes; col += w->chunk) {
      size_t width = r.row_bytes - col < w->chunk ? r.row_bytes - col : w->chunk;
      size_t word = word_for((uintptr_t)block, r.row_bytes, col, width, w->chunk);
      switch (word) {
      case 8: launch_move<unsigned long long>(kind, block, r.row_bytes, col, width, mask,
                                              pos_or_perm, n, w->rows, d_count, st, perm32);
        break;
      case 4: launch_move<unsigned>(kind, block, r.row_bytes, col, width, mask, pos_or_perm,
                                    n, w->rows, d_count, st, perm32); break;
      case 2: launch_move<unsigned short>(kind, block, r.row_bytes, col, width, mask,
                                          pos_or_perm, n, w->rows, d_count, st, perm32); break;
      default: launch_move<unsigned char>(kind, block, r.row_bytes, col, width, mask,
                                          pos_or_perm, n, w->rows, d_count, st, perm32); break;
      }
      CU_LAUNCHED(op, "row move");
    }
  }
  return CNP_OK;
}

/* ---- compaction ------------------------------------------------------------------------- */

/* CUB's single-pass stable selection (decoupled look-back), in place: each row block is read
** once and its kept rows written once, instead of flags, a scan of positions, a scatter to
** the workspace and a copy back. For row blocks of 1, 2, 4, 8, 16, 24 or 32 bytes, aligned. */
static bool select_fits(const cnp__rows &r)
{
  size_t rb = r.row_bytes;
  size_t align = rb < 8 ? rb : 8;
  if (!(rb == 1 || rb == 2 || rb == 4 || rb == 8 || rb == 16 || rb == 24 || rb == 32))
    return false;
  return (uintptr_t)r.data % align == 0 && (size_t)r.block_stride % align == 0;
}

template <typename T>
static cnp_status select_block(const char *op, char *block, const unsigned char *mask,
                               int64_t n, unsigned long long *count, CudaWs *w, cudaStream_t st)
{
  size_t tb = 0;
  CU(op, cub::DeviceSelect::Flagged((void *)NULL, tb, (T *)block, mask, count,
                                    (::cuda::std::int64_t)n, st));
  if (tb > w->temp_bytes)
    return cnp__fail(CNP_EOVERFLOW, op, "selection needs %zu bytes of temporary storage, the "
                     "workspace holds %zu", tb, w->temp_bytes);
  tb = w->temp_bytes;
  CU(op, cub::DeviceSelect::Flagged(w->temp, tb, (T *)block, mask, count,
                                    (::cuda::std::int64_t)n, st));
  return CNP_OK;
}

/* Compacts every row block of every array with select_block, the count into *count; false
** in *done (nothing enqueued) when some block does not fit it (or there is no array). */
static cnp_status compact_select(const char *op, const cnp_array *arrays, int n_arrays,
                                 const unsigned char *mask, int64_t n,
                                 unsigned long long *count, CudaWs *w, cudaStream_t st,
                                 bool *done)
{
  *done = false;
  if (n_arrays == 0) return CNP_OK;
  for (int j = 0; j < n_arrays; j++) {
    cnp__rows r;
    cnp_status s = cnp__algo_rows(&arrays[j], n, op, "arrays", &r);
    if (s != CNP_OK) return s;
    if (!select_fits(r)) return CNP_OK;
  }
  for (int j = 0; j < n_arrays; j++) {
    cnp__rows r;
    cnp_status s = cnp__algo_rows(&arrays[j], n, op, "arrays", &r);
    for (int64_t b = 0; s == CNP_OK && b < r.n_blocks; b++) {
      char *block = r.data + b * r.block_stride;
      switch (r.row_bytes) {
      case 1: s = select_block<unsigned char>(op, block, mask, n, count, w, st); break;
      case 2: s = select_block<unsigned short>(op, block, mask, n, count, w, st); break;
      case 4: s = select_block<unsigned>(op, block, mask, n, count, w, st); break;
      case 8: s = select_block<unsigned long long>(op, block, mask, n, count, w, st); break;
      case 16: s = select_block<Words<2>>(op, block, mask, n, count, w, st); break;
      case 24: s = select_block<Words<3>>(op, block, mask, n, count, w, st); break;
      default: s = select_block<Words<4>>(op, block, mask, n, count, w, st); break;
      }
    }
    if (s != CNP_OK) return s;
  }
  *done = true;
  return CNP_OK;
}

static cnp_status cuda_compact_by_mask(const cnp_array *mask, const cnp_array *arrays,
                                       int n_arrays, int64_t *n_out,
                                       cnp_workspace *ws, cnp_stream *s)
{
  static const char op[] = "cnp_compact_by_mask";
  DEVICE_SCOPE(op, mask->device);
  CudaWs *w = (CudaWs *)ws->impl;
  cudaStream_t st = native(s);
  int64_t n = mask->shape[0];
  const unsigned char *m = (const unsigned char *)mask->data;
  if (n == 0) {
    *n_out = 0;
    return CNP_OK;
  }
  int64_t *pos = w->idx[0];
  k_init_scalars<<<1, 1, 0, st>>>(w->scal);
  bool done = false;
  cnp_status r = compact_select(op, arrays, n_arrays, m, n, &w->scal->count, w, st, &done);
  if (r != CNP_OK) return r;
  if (done) {
    Scalars h;
    if ((r = read_scalars(op, w->scal, &h, st)) != CNP_OK) return r;
    *n_out = (int64_t)h.count;
    return CNP_OK;
  }
  k_flags<<<blocks_for(n), kThreads, 0, st>>>(m, n, pos);
  CU_LAUNCHED(op, "flags");
  r = exclusive_sum(op, w, pos, pos, n, st);
  if (r != CNP_OK) return r;
  k_count<<<1, 1, 0, st>>>(m, pos, n, w->scal);
  CU_LAUNCHED(op, "count");
  for (int j = 0; j < n_arrays; j++) {
    r = move_rows(op, MOVE_COMPACT, &arrays[j], n, m, pos, &w->scal->count, w, st);
    if (r != CNP_OK) return r;
  }
  Scalars h;
  r = read_scalars(op, w->scal, &h, st);
  if (r != CNP_OK) return r;
  *n_out = (int64_t)h.count;
  return CNP_OK;
}

/* After the exclusive scan: the count into the scalars and into the caller's int64. */
__global__ void k_count_out(const unsigned char *mask, const int64_t *pos, int64_t n,
                            Scalars *out, int64_t *count)
{
  int64_t c = pos[n - 1] + (mask[n - 1] != 0);
  out->count = (unsigned long long)c;
  *count = c;
}

__global__ void k_copy_count(const unsigned long long *from, int64_t *count)
{
  *count = (int64_t)*from;
}

/* The count stays in device memory: no synchronization, so it can be graph-captured. */
static cnp_status cuda_compact_by_mask_device_count(const cnp_array *mask,
                                                    const cnp_array *arrays,
                                                    int n_arrays, cnp_array *count,
                                                    cnp_workspace *ws,
                                                    cnp_stream *s)
{
  static const char op[] = "cnp_compact_by_mask_device_count";
  DEVICE_SCOPE(op, mask->device);
  CudaWs *w = (CudaWs *)ws->impl;
  cudaStream_t st = native(s);
  int64_t n = mask->shape[0];
  const unsigned char *m = (const unsigned char *)mask->data;
  int64_t *d_count = (int64_t *)count->data;
  if (n == 0) {
    CU(op, cudaMemsetAsync(d_count, 0, sizeof *d_count, st));
    return CNP_OK;
  }
  int64_t *pos = w->idx[0];
  bool done = false;
  cnp_status r = compact_select(op, arrays, n_arrays, m, n, &w->scal->count, w, st, &done);
  if (r != CNP_OK) return r;
  if (done) {                          /* the count, as int64, where the caller wants it */
    k_copy_count<<<1, 1, 0, st>>>(&w->scal->count, d_count);
    CU_LAUNCHED(op, "count");
    return CNP_OK;
  }
  k_flags<<<blocks_for(n), kThreads, 0, st>>>(m, n, pos);
  CU_LAUNCHED(op, "flags");
  r = exclusive_sum(op, w, pos, pos, n, st);
  if (r != CNP_OK) return r;
  k_count_out<<<1, 1, 0, st>>>(m, pos, n, w->scal, d_count);
  CU_LAUNCHED(op, "count");
  for (int j = 0; j < n_arrays; j++) {
    r = move_rows(op, MOVE_COMPACT, &arrays[j], n, m, pos, &w->scal->count, w, st);
    if (r != CNP_OK) return r;
  }
  return CNP_OK;
}

/* ---- sort by key -------------------------------------------------------------------------- */

static int bits_for(unsigned long long span)
{
  int b = 0;
  while (b < 64 && (span >> b) != 0) b++;
  return b;
}

template <typename K>
static cnp_status key_stats(const char *op, const K *k, int64_t n, long long limit,
                            int seg_mode, CudaWs *w, cudaStream_t st, Scalars *h)
{
  k_init_scalars<<<1, 1, 0, st>>>(w->scal);
  unsigned g = blocks_for(n) < kStatBlocks ? blocks_for(n) : kStatBlocks;
  k_key_stats<K><<<g, kThreads, 0, st>>>(k, n, limit, seg_mode, w->scal);
  CU_LAUNCHED(op, "key statistics");
  return read_scalars(op, w->scal, h, st);
}

/* Radix sort of rk[0] (keys as R) with idx[0] = iota into rk[1] and perm_out. */
template <typename R, typename I = int64_t>
static cnp_status radix_pairs(const char *op, CudaWs *w, int64_t n, int bits, I *perm_out,
                              cudaStream_t st, const I *idx_in = NULL)
{
  const I *in = idx_in ? idx_in : (const I *)(const void *)w->idx[0];
  size_t tb = 0;
  CU(op, cub::DeviceRadixSort::SortPairs(NULL, tb, (const R *)w->rk[0], (R *)w->rk[1], in,
                                         perm_out, n, 0, bits > 0 ? bits : 1, st));
  if (tb > w->temp_bytes)
    return cnp__fail(CNP_EOVERFLOW, op, "radix sort needs %zu bytes of temporary storage, "
                     "the workspace holds %zu", tb, w->temp_bytes);
  tb = w->temp_bytes;
  CU(op, cub::DeviceRadixSort::SortPairs(w->temp, tb, (const R *)w->rk[0], (R *)w->rk[1], in,
                                         perm_out, n, 0, bits > 0 ? bits : 1, st));
  return CNP_OK;
}

/* The sort of sort_keys over R-typed radix keys: with 32-bit row indices (half the bytes of
** the pairs each radix pass moves) when they fit, the permutation widened to int64 while the
** keys are written back; else with int64 indices straight into perm. */
template <typename K, typename R>
static cnp_status sort_radix(const char *op, K *k, int64_t n, unsigned long long lo, int bits,
                             int64_t *perm, CudaWs *w, cudaStream_t st)
{
  cnp_status r;
  if (n <= (int64_t)UINT32_MAX) {
    uint32_t *in = (uint32_t *)(void *)w->idx[0], *out = in + (w->cap > 0 ? w->cap : 1);
    k_radix_in<K, R, uint32_t><<<blocks_for(n), kThreads, 0, st>>>(k, n, lo, 0, 0,
                                                                 (R *)w->rk[0], in);
    CU_LAUNCHED(op, "radix keys");
    if ((r = radix_pairs<R, uint32_t>(op, w, n, bits, out, st, in)) != CNP_OK) return r;
    k_radix_out_perm<K, R><<<blocks_for(n), kThreads, 0, st>>>(k, n, lo, (const R *)w->rk[1],
                                                             out, perm);
    CU_LAUNCHED(op, "sorted keys");
    return CNP_OK;
  }
  k_radix_in<K, R><<<blocks_for(n), kThreads, 0, st>>>(k, n, lo, 0, 0, (R *)w->rk[0], w->idx[0]);
  CU_LAUNCHED(op, "radix keys");
  if ((r = radix_pairs<R>(op, w, n, bits, perm, st)) != CNP_OK) return r;
  k_radix_out<K, R><<<blocks_for(n), kThreads, 0, st>>>(k, n, lo, (const R *)w->rk[1]);
  CU_LAUNCHED(op, "sorted keys");
  return CNP_OK;
}

template <typename K>
static cnp_status sort_keys(const char *op, cnp_array *keys, int64_t *perm, int64_t key_limit,
                            CudaWs *w, cudaStream_t st, bool *sorted)
{
  K *k = (K *)keys->data;
  int64_t n = keys->shape[0];
  Scalars h;
  cnp_status r = key_stats<K>(op, k, n, key_limit, 0, w, st, &h);
  if (r != CNP_OK) return r;
  if (h.bad != ~0ull) {
    K v;
    if ((r = read_back(op, &v, k + h.bad, sizeof v, st)) != CNP_OK) return r;
    char val[24];                      /* uint64 keys print unsigned (2^63 + 5, not negative) */
    if (std::numeric_limits<K>::is_signed) snprintf(val, sizeof val, "%lld", (long long)v);
    else snprintf(val, sizeof val, "%llu", (unsigned long long)v);
    return cnp__fail(CNP_ERANGE, op, "keys[%lld] = %s outside [0, key_limit %lld)",
                     (long long)h.bad, val, (long long)key_limit);
  }
  *sorted = h.descents == 0;
  if (*sorted) return CNP_OK;
  unsigned long long span = h.hi - h.lo;
  int bits = bits_for(span);
  if (bits <= 32) return sort_radix<K, uint32_t>(op, k, n, h.lo, bits, perm, w, st);
  return sort_radix<K, uint64_t>(op, k, n, h.lo, bits, perm, w, st);
}

static cnp_status cuda_sort_by_key(cnp_array *keys, cnp_array *order,
                                   const cnp_array *values, int n_values,
                                   int64_t key_limit, cnp_workspace *ws,
                                   cnp_stream *s)
{
  static const char op[] = "cnp_sort_by_key";
  DEVICE_SCOPE(op, keys->device);
  CudaWs *w = (CudaWs *)ws->impl;
  cudaStream_t st = native(s);
  int64_t n = keys->shape[0];
  if (n == 0) return CNP_OK;
  int64_t *perm = order ? (int64_t *)order->data : w->idx[1];
  bool sorted = false;
  cnp_status r;
  switch (keys->dtype) {
  case CNP_INT32: r = sort_keys<int32_t>(op, keys, perm, key_limit, w, st, &sorted); break;
  case CNP_INT64: r = sort_keys<int64_t>(op, keys, perm, key_limit, w, st, &sorted); break;
  default: r = sort_keys<uint64_t>(op, keys, perm, key_limit, w, st, &sorted); break;
  }
  if (r != CNP_OK) return r;
  if (sorted) {
    if (order) {
      k_iota<<<blocks_for(n), kThreads, 0, st>>>(perm, n);
      CU_LAUNCHED(op, "iota");
    }
    return CNP_OK;
  }
  for (int j = 0; j < n_values; j++)
    if ((r = move_rows(op, MOVE_GATHER, &values[j], n, NULL, perm, NULL, w, st)) != CNP_OK)
      return r;
  return CNP_OK;
}

/* ---- sort by key over a device-held row count (graph-capturable) --------------------------
** Everything is sized by N (the arrays' rows): rows [0, n) carry their radix key, rows past
** n the sentinel (the largest value of the sorted bits), so the stable radix sort over all
** N rows leaves them last and in place; keys and values are then gathered through the
** permutation for rows [0, n) only. n is read by kernels: no synchronization. */

/* n = *d_n clamped into [0, N], as the row count of the gathers. */
__global__ void k_dc_count(const int64_t *d_n, int64_t N, Scalars *out)
{
  int64_t n = *d_n;
  out->count = (unsigned long long)(n < 0 ? 0 : n > N ? N : n);
}

/* rk[i] = radix key of row i for i < n, else sentinel; idx[i] = i. Without a limit the
** radix key is ord(key). With limit > 0 it is a bucket: 1 + key for a key in [0, limit), 0
** for a negative key, limit + 1 for a key >= limit (sentinel limit + 2); the rows of the two
** outer buckets are then sorted by their full keys by k_dc_fix_outliers. */
template <typename K, typename R, typename I>
__global__ void k_dc_sort_in(const K *keys, int64_t N, const int64_t *d_n, long long limit,
                             unsigned long long sentinel, R *rk, I *idx)
{
  const int64_t n = *d_n;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < N; i += stride) {
    unsigned long long v = sentinel;
    if (i < n) {
      K k = keys[i];
      if (limit <= 0) v = ord<K>(k);
      else if (is_neg<K>(k)) v = 0;
      else if ((unsigned long long)k >= (unsigned long long)limit) v = (unsigned long long)limit + 1;
      else v = (unsigned long long)k + 1;
    }
    rk[i] = (R)v;
    idx[i] = (I)i;
  }
}

/* First i in [0, n) with v[i] >= x (v ascending; n if none), searched by a whole warp: each
** round the 32 lanes probe evenly spaced rows and the range shrinks 32-fold, so 10^7 rows
** take 5 dependent loads instead of 24. Every lane of the warp calls it; all get the answer. */
template <typename R>
__device__ int64_t warp_first_at_least(const R *v, int64_t n, unsigned long long x)
{
  const int lane = threadIdx.x & 31;
  int64_t lo = 0, hi = n;              /* the answer lies in [lo, hi] */
  while (lo < hi) {
    int64_t step = (hi - lo + 31) / 32, pos = lo + lane * step;
    bool ge = pos >= hi || (unsigned long long)v[pos] >= x;
    unsigned b = __ballot_sync(0xffffffffu, ge);
    int f = b ? __ffs(b) - 1 : 32;     /* first probe at or past the answer */
    int64_t nhi = f < 32 ? lo + f * step : hi;
    lo = f > 0 ? lo + (int64_t)(f - 1) * step + 1 : lo;
    hi = nhi < hi ? nhi : hi;
  }
  return lo;
}

/* Number of entries of p[a, e) whose row's key is below u (or, with or_equal, not above). */
template <typename K, typename P>
__device__ int64_t rank_in(const K *keys, const P *p, int64_t a, int64_t e,
                           unsigned long long u, bool or_equal)
{
  int64_t lo = a, hi = e;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    unsigned long long m = ord<K>(keys[p[mid]]);
    if (m < u || (or_equal && m == u)) lo = mid + 1; else hi = mid;
  }
  return lo - a;
}

static const int kFixShared = 2048;    /* outliers a block sorts in shared memory */

/* After the range-hinted sort (radix keys sorted in rk, N rows): block 0 takes the rows of
** bucket 0 (negative keys), block 1 those of bucket limit + 1 (keys >= limit). Each bucket's
** permutation entries are in row order (the radix sort is stable); the block sorts them by
** their full keys, stably, so the whole sort is exact whatever the keys. Up to kFixShared
** rows by rank in shared memory, more by merge passes through `scratch` (N entries, the
** bucket's rows at the same offsets). Valid keys leave both buckets empty: two binary
** searches per block. */
static const int kFixThreads = 1024;

template <typename K, typename R, typename P>
__global__ void __launch_bounds__(kFixThreads)
    k_dc_fix_outliers(const K *keys, const R *rk, int64_t N, unsigned long long limit,
                      P *perm, P *scratch)
{
  __shared__ unsigned long long sk[kFixShared];
  __shared__ P si[kFixShared];
  __shared__ int64_t range[2];
  if (threadIdx.x < 64) {               /* warp 0: the bucket's start, warp 1: its end */
    unsigned long long b = (blockIdx.x == 0 ? 0 : limit + 1) + (threadIdx.x >> 5);
    int64_t at = warp_first_at_least<R>(rk, N, b);
    if ((threadIdx.x & 31) == 0) range[threadIdx.x >> 5] = at;
  }
  __syncthreads();
  const int64_t a = range[0], m = range[1] - range[0];
  if (m < 2) return;                   /* the same for the whole block */
  P *p = perm + a;
  if (m <= kFixShared) {
    for (int64_t i = threadIdx.x; i < m; i += blockDim.x) {
      si[i] = p[i];
      sk[i] = ord<K>(keys[si[i]]);
    }
    __syncthreads();
    for (int64_t i = threadIdx.x; i < m; i += blockDim.x) {
      unsigned long long u = sk[i];
      int64_t r = 0;
      for (int64_t j = 0; j < m; j++) r += sk[j] < u || (sk[j] == u && j < i);
      p[r] = si[i];
    }
    return;
  }
  P *src = p, *dst = scratch + a;
  for (int64_t w = 1; w < m; w *= 2) {  /* merge runs of w into runs of 2w */
    for (int64_t i = threadIdx.x; i < m; i += blockDim.x) {
      int64_t lo = i / (2 * w) * (2 * w);
      int64_t mid = lo + w < m ? lo + w : m, hi = lo + 2 * w < m ? lo + 2 * w : m;
      unsigned long long u = ord<K>(keys[src[i]]);
      /* left-run rows go before equal right-run rows: stable */
      int64_t at = i < mid ? (i - lo) + rank_in<K, P>(keys, src, mid, hi, u, false)
                           : (i - mid) + rank_in<K, P>(keys, src, lo, mid, u, true);
      dst[lo + at] = src[i];
    }
    __syncthreads();
    P *t = src;
    src = dst;
    dst = t;
  }
  if (src != p) {
    for (int64_t i = threadIdx.x; i < m; i += blockDim.x) p[i] = src[i];
  }
}

/* The sort of the device-count form into perm (I: int64_t, or uint32_t when N < 2^32: the
** radix pairs then move 8 bytes per row instead of 12, and the gathers read 4-byte indices);
** idx_in and scratch are N-entry buffers of the workspace. */
template <typename K, typename I>
static cnp_status sort_dc_t(const char *op, const cnp_array *keys, I *perm, I *idx_in,
                            I *scratch, int64_t key_limit, const int64_t *d_n, CudaWs *w,
                            cudaStream_t st)
{
  const K *k = (const K *)keys->data;
  int64_t n = keys->shape[0];
  int bits;
  unsigned long long sentinel, L = (unsigned long long)key_limit;
  if (key_limit > 0 && L < (1ull << 62)) {  /* buckets 0 .. key_limit + 1, sentinel + 2 */
    bits = bits_for(L + 2);
    sentinel = L + 2;
  } else {                             /* every bit of the ordered key */
    key_limit = 0;
    bits = (int)(8 * sizeof(K));
    sentinel = bits == 64 ? ~0ull : 0xffffffffull;
  }
  cnp_status r;
  if (bits <= 32) {
    k_dc_sort_in<K, uint32_t, I><<<blocks_for(n), kThreads, 0, st>>>(
        k, n, d_n, (long long)key_limit, sentinel, (uint32_t *)w->rk[0], idx_in);
    CU_LAUNCHED(op, "radix keys");
    if ((r = radix_pairs<uint32_t, I>(op, w, n, bits, perm, st, idx_in)) != CNP_OK) return r;
    if (key_limit > 0) {
      k_dc_fix_outliers<K, uint32_t, I><<<2, kFixThreads, 0, st>>>(
          k, (const uint32_t *)w->rk[1], n, L, perm, scratch);
      CU_LAUNCHED(op, "keys outside key_limit");
    }
    return CNP_OK;
  }
  k_dc_sort_in<K, uint64_t, I><<<blocks_for(n), kThreads, 0, st>>>(
      k, n, d_n, (long long)key_limit, sentinel, (uint64_t *)w->rk[0], idx_in);
  CU_LAUNCHED(op, "radix keys");
  if ((r = radix_pairs<uint64_t, I>(op, w, n, bits, perm, st, idx_in)) != CNP_OK) return r;
  if (key_limit > 0) {
    k_dc_fix_outliers<K, uint64_t, I><<<2, kFixThreads, 0, st>>>(
        k, (const uint64_t *)w->rk[1], n, L, perm, scratch);
    CU_LAUNCHED(op, "keys outside key_limit");
  }
  return CNP_OK;
}

/* order[i] = p32[i], widened. */
__global__ void k_widen(const uint32_t *p32, int64_t n, int64_t *out)
{
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
    out[i] = (int64_t)p32[i];
}

template <typename K>
static cnp_status sort_dc_keys(const char *op, const cnp_array *keys, int64_t *perm,
                               uint32_t *p32, int64_t key_limit, const int64_t *d_n,
                               CudaWs *w, cudaStream_t st)
{
  if (p32) {                           /* idx[0] holds 2 N-entry uint32 halves */
    uint32_t *in = (uint32_t *)(void *)w->idx[0] + (w->cap > 0 ? w->cap : 1);
    return sort_dc_t<K, uint32_t>(op, keys, p32, in, (uint32_t *)(void *)w->idx[1], key_limit,
                                  d_n, w, st);
  }
  return sort_dc_t<K, int64_t>(op, keys, perm, w->idx[0], w->idx[0], key_limit, d_n, w, st);
}

static cnp_status cuda_sort_by_key_device_count(cnp_array *keys, cnp_array *order,
                                                const cnp_array *values,
                                                int n_values, int64_t key_limit,
                                                const cnp_array *count,
                                                cnp_workspace *ws, cnp_stream *s)
{
  static const char op[] = "cnp_sort_by_key_device_count";
  DEVICE_SCOPE(op, keys->device);
  CudaWs *w = (CudaWs *)ws->impl;
  cudaStream_t st = native(s);
  int64_t n = keys->shape[0];
  const int64_t *d_n = (const int64_t *)count->data;
  if (n == 0) return CNP_OK;
  int64_t *perm = order ? (int64_t *)order->data : w->idx[1];
  /* 32-bit row indices when they fit: in the first half of idx[0] */
  uint32_t *p32 = n <= (int64_t)UINT32_MAX ? (uint32_t *)(void *)w->idx[0] : NULL;
  cnp_status r;
  switch (keys->dtype) {
  case CNP_INT32: r = sort_dc_keys<int32_t>(op, keys, perm, p32, key_limit, d_n, w, st); break;
  case CNP_INT64: r = sort_dc_keys<int64_t>(op, keys, perm, p32, key_limit, d_n, w, st); break;
  default: r = sort_dc_keys<uint64_t>(op, keys, perm, p32, key_limit, d_n, w, st); break;
  }
  if (r != CNP_OK) return r;
  if (p32 && order) {
    k_widen<<<blocks_for(n), kThreads, 0, st>>>(p32, n, perm);
    CU_LAUNCHED(op, "permutation");
  }
  k_dc_count<<<1, 1, 0, st>>>(d_n, n, w->scal);
  CU_LAUNCHED(op, "row count");
  /* the keys themselves go through the permutation too (radix keys are buckets, not keys) */
  for (int j = -1; j < n_values; j++) {
    const cnp_array *a = j < 0 ? keys : &values[j];
    if ((r = move_rows(op, MOVE_GATHER, a, n, NULL, perm, &w->scal->count, w, st, p32)) !=
        CNP_OK)
      return r;
  }
  return CNP_OK;
}

/* ---- cell offsets ------------------------------------------------------------------------- */

template <typename C>
static cnp_status cell_offsets_t(const char *op, const cnp_array *cells, int64_t n_cells,
                                 int64_t *off, Scalars *d_scal, cudaStream_t st)
{
  const C *c = (const C *)cells->data;
  int64_t n = cells->shape[0];
  k_init_scalars<<<1, 1, 0, st>>>(d_scal);
  k_cell_offsets<C><<<blocks_for(n + 1), kThreads, 0, st>>>(c, n, n_cells, off, d_scal);
  CU_LAUNCHED(op, "cell offsets");
  Scalars h;
  cnp_status r = read_scalars(op, d_scal, &h, st);
  if (r != CNP_OK || h.bad == ~0ull) return r;
  C v[2] = {0, 0};
  int64_t i = (int64_t)h.bad;
  r = read_back(op, v, c + (i > 0 ? i - 1 : 0), (i > 0 ? 2 : 1) * sizeof(C), st);
  if (r != CNP_OK) return r;
  long long cur = i > 0 ? (long long)v[1] : (long long)v[0], prev = (long long)v[0];
  if (cur < 0 || cur >= n_cells)
    return cnp__fail(CNP_ERANGE, op, "sorted_cells[%lld] = %lld outside [0, %lld)",
                     (long long)i, cur, (long long)n_cells);
  return cnp__fail(CNP_EORDER, op, "sorted_cells not sorted at index %lld (%lld after %lld)",
                   (long long)i, cur, prev);
}

static cnp_status cuda_cell_offsets(const cnp_array *sorted_cells, int64_t n_cells,
                                    cnp_array *offsets, cnp_workspace *ws,
                                    cnp_stream *s)
{
  static const char op[] = "cnp_cell_offsets";
  DEVICE_SCOPE(op, sorted_cells->device);
  Scalars *d_scal = NULL;
  if (ws) {
    d_scal = ((CudaWs *)ws->impl)->scal;
  } else {
    CU(op, cudaGetSymbolAddress((void **)&d_scal, g_scratch));
  }
  int64_t *off = (int64_t *)offsets->data;
  if (!ws) pthread_mutex_lock(&g_scratch_lock);
  cnp_status r = sorted_cells->dtype == CNP_INT32
                     ? cell_offsets_t<int32_t>(op, sorted_cells, n_cells, off, d_scal, native(s))
                     : cell_offsets_t<int64_t>(op, sorted_cells, n_cells, off, d_scal, native(s));
  if (!ws) pthread_mutex_unlock(&g_scratch_lock);
  return r;
}

/* ---- segment boundaries ------------------------------------------------------------------- */

/* 1 where row i starts a run: the scan reads the keys through it (no flags array). */
/* heads: the first row of each of the *d_count runs. Writes run j's key and stop. */
template <typename K>
__global__ void k_run_fill(const K *k, int64_t n, const int64_t *heads,
                           const unsigned long long *d_count, K *uk, int64_t *stops)
{
  const int64_t count = (int64_t)*d_count;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < count; j += stride) {
    int64_t h = heads[j];
    if (uk) uk[j] = k[h];
    if (stops) stops[j] = j + 1 < count ? heads[j + 1] : n;
  }
}

/* One selection pass over the keys picks the run heads (their row numbers are the starts),
** with the run count on the device; then one pass over the runs writes keys and stops. */
template <typename K>
static cnp_status boundaries_t(const char *op, const cnp_array *keys, cnp_array *unique_keys,
                               cnp_array *starts, cnp_array *stops, int64_t *count, CudaWs *w,
                               cudaStream_t st)
{
  const K *k = (const K *)keys->data;
  int64_t n = keys->shape[0];
  if (n == 0) {
    *count = 0;
    return CNP_OK;
  }
  int64_t *heads = starts ? (int64_t *)starts->data : w->idx[0];
  unsigned long long *d_count = &w->scal->count;
  auto rows = thrust::make_counting_iterator<int64_t>(0);
  size_t tb = 0;
  CU(op, cub::DeviceSelect::If((void *)NULL, tb, rows, heads, d_count,
                               (::cuda::std::int64_t)n, RunHead<K>{k}, st));
  if (tb > w->temp_bytes)
    return cnp__fail(CNP_EOVERFLOW, op, "run selection needs %zu bytes of temporary storage, "
                     "the workspace holds %zu", tb, w->temp_bytes);
  tb = w->temp_bytes;
  CU(op, cub::DeviceSelect::If(w->temp, tb, rows, heads, d_count, (::cuda::std::int64_t)n,
                               RunHead<K>{k}, st));
  if (unique_keys || stops) {
    k_run_fill<K><<<blocks_for(n), kThreads, 0, st>>>(
        k, n, heads, d_count, unique_keys ? (K *)unique_keys->data : NULL,
        stops ? (int64_t *)stops->data : NULL);
    CU_LAUNCHED(op, "runs");
  }
  Scalars h;
  cnp_status r = read_scalars(op, w->scal, &h, st);
  if (r == CNP_OK) *count = (int64_t)h.count;
  return r;
}

static cnp_status cuda_segment_boundaries(const cnp_array *sorted_keys,
                                          cnp_array *unique_keys, cnp_array *starts,
                                          cnp_array *stops, int64_t *count,
                                          cnp_workspace *ws, cnp_stream *s)
{
  static const char op[] = "cnp_segment_boundaries";
  DEVICE_SCOPE(op, sorted_keys->device);
  CudaWs *w = (CudaWs *)ws->impl;
  switch (sorted_keys->dtype) {
  case CNP_INT32:
    return boundaries_t<int32_t>(op, sorted_keys, unique_keys, starts, stops, count, w,
                                 native(s));
  case CNP_INT64:
    return boundaries_t<int64_t>(op, sorted_keys, unique_keys, starts, stops, count, w,
                                 native(s));
  default:
    return boundaries_t<uint64_t>(op, sorted_keys, unique_keys, starts, stops, count, w,
                                  native(s));
  }
}

/* ---- segment plans ---------------------------------------------------------------------- */

struct CudaPlan {
  CudaWs  *w;                          /* sort buffers (no row chunk) */
  int64_t *perm;                       /* kept rows in (segment, row) order */
  int64_t *off;                        /* n_segments + 1 */
  int      identity;                   /* keys sorted, none negative: perm unused */
};

static cnp_status cuda_segment_plan_create(cnp_segment_plan *plan)
{
  static const char op[] = "cnp_segment_plan_create";
  DEVICE_SCOPE(op, plan->device);
  CudaPlan *p = (CudaPlan *)cnp__calloc(1, sizeof *p);
  if (!p) return cnp__fail(CNP_ENOMEM, op, "no memory");
  cnp_status st = ws_alloc(op, plan->capacity, 0, &p->w);
  cudaError_t e = cudaSuccess;
  if (st == CNP_OK)
    e = cudaMalloc((void **)&p->off, (size_t)(plan->n_segments + 1) * sizeof(int64_t));
  if (st == CNP_OK && e == cudaSuccess)
    e = cudaMalloc((void **)&p->perm, (size_t)(plan->capacity > 0 ? plan->capacity : 1) *
                                          sizeof(int64_t));
  if (st == CNP_OK && e != cudaSuccess) st = cuda_fail(e, op, "device plan allocation");
  if (st != CNP_OK) {
    ws_free(p->w);
    cudaFree(p->off);
    cudaFree(p->perm);
    cnp__free(p);
    return st;
  }
  plan->impl = p;
  return CNP_OK;
}

static cnp_status cuda_segment_plan_destroy(cnp_segment_plan *plan)
{
  DeviceScope scope(plan->device);
  CudaPlan *p = (CudaPlan *)plan->impl;
  if (p) {
    ws_free(p->w);
    cudaFree(p->off);
    cudaFree(p->perm);
    cnp__free(p);
  }
  plan->impl = NULL;
  return CNP_OK;
}

template <typename K>
static cnp_status plan_build_t(const char *op, cnp_segment_plan *plan, const cnp_array *keys,
                               cudaStream_t st)
{
  CudaPlan *p = (CudaPlan *)plan->impl;
  CudaWs *w = p->w;
  const K *k = (const K *)keys->data;
  int64_t n = keys->shape[0], ns = plan->n_segments;
  Scalars h;
  memset(&h, 0, sizeof h);
  h.bad = ~0ull;
  if (n > 0) {
    cnp_status r = key_stats<K>(op, k, n, (long long)ns, 1, w, st, &h);
    if (r != CNP_OK) return r;
  }
  if (h.bad != ~0ull) {
    K v;
    cnp_status r = read_back(op, &v, k + h.bad, sizeof v, st);
    if (r != CNP_OK) return r;
    return cnp__fail(CNP_ERANGE, op, "keys[%lld] = %lld >= n_segments %lld",
                     (long long)h.bad, (long long)v, (long long)ns);
  }
  plan->n_rows = n;
  plan->n_kept = n - (int64_t)h.negatives;
  p->identity = h.negatives == 0 && h.descents == 0;
  if (p->identity) {
    k_lower_bounds<K><<<blocks_for(ns + 1), kThreads, 0, st>>>(k, n, p->off, ns);
    CU_LAUNCHED(op, "segment offsets");
    return CNP_OK;
  }
  /* Negative keys go to bucket ns (past every segment), then one stable radix sort. */
  int bits = bits_for((unsigned long long)ns);
  if (bits <= 32) {
    k_radix_in<K, uint32_t><<<blocks_for(n), kThreads, 0, st>>>(
        k, n, 0, 1, (unsigned long long)ns, (uint32_t *)w->rk[0], w->idx[0]);
    CU_LAUNCHED(op, "radix keys");
    cnp_status r = radix_pairs<uint32_t>(op, w, n, bits, p->perm, st);
    if (r != CNP_OK) return r;
    k_lower_bounds<uint32_t><<<blocks_for(ns + 1), kThreads, 0, st>>>(
        (const uint32_t *)w->rk[1], n, p->off, ns);
  } else {
    k_radix_in<K, uint64_t><<<blocks_for(n), kThreads, 0, st>>>(
        k, n, 0, 1, (unsigned long long)ns, (uint64_t *)w->rk[0], w->idx[0]);
    CU_LAUNCHED(op, "radix keys");
    cnp_status r = radix_pairs<uint64_t>(op, w, n, bits, p->perm, st);
    if (r != CNP_OK) return r;
    k_lower_bounds<uint64_t><<<blocks_for(ns + 1), kThreads, 0, st>>>(
        (const uint64_t *)w->rk[1], n, p->off, ns);
  }
  CU_LAUNCHED(op, "segment offsets");
  return CNP_OK;
}

static cnp_status cuda_segment_plan_build(cnp_segment_plan *plan,
                                          const cnp_array *keys, cnp_stream *s)
{
  static const char op[] = "cnp_segment_plan_build";
  DEVICE_SCOPE(op, plan->device);
  if (keys->dtype == CNP_INT32) return plan_build_t<int32_t>(op, plan, keys, native(s));
  return plan_build_t<int64_t>(op, plan, keys, native(s));
}

/* Device-count build: rk[i] = key for i < n with 0 <= key < ns, else ns (dropped rows sort
** past every segment); idx[i] = i. */
template <typename K, typename R>
__global__ void k_dc_seg_in(const K *keys, int64_t N, const int64_t *d_n, long long ns, R *rk,
                            int64_t *idx)
{
  const int64_t n = *d_n;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < N; i += stride) {
    unsigned long long v = (unsigned long long)ns;
    if (i < n) {
      K k = keys[i];
      if (!is_neg<K>(k) && (unsigned long long)k < (unsigned long long)ns)
        v = (unsigned long long)k;
    }
    rk[i] = (R)v;
    idx[i] = i;
  }
}

/* Always the permutation form (the host cannot know whether the keys were sorted): one
** stable radix sort over N rows of the bits of n_segments, offsets by binary search. */
template <typename K>
static cnp_status plan_build_dc_t(const char *op, cnp_segment_plan *plan, const cnp_array *keys,
                                  const int64_t *d_n, cudaStream_t st)
{
  CudaPlan *p = (CudaPlan *)plan->impl;
  CudaWs *w = p->w;
  const K *k = (const K *)keys->data;
  int64_t n = keys->shape[0], ns = plan->n_segments;
  plan->n_rows = n;
  plan->n_kept = -1;                   /* on the device only: off[ns] */
  p->identity = 0;
  int bits = bits_for((unsigned long long)ns);
  if (bits <= 32) {
    if (n > 0) {
      k_dc_seg_in<K, uint32_t><<<blocks_for(n), kThreads, 0, st>>>(
          k, n, d_n, (long long)ns, (uint32_t *)w->rk[0], w->idx[0]);
      CU_LAUNCHED(op, "radix keys");
      cnp_status r = radix_pairs<uint32_t>(op, w, n, bits, p->perm, st);
      if (r != CNP_OK) return r;
    }
    k_lower_bounds<uint32_t><<<blocks_for(ns + 1), kThreads, 0, st>>>(
        (const uint32_t *)w->rk[1], n, p->off, ns);
  } else {
    if (n > 0) {
      k_dc_seg_in<K, uint64_t><<<blocks_for(n), kThreads, 0, st>>>(
          k, n, d_n, (long long)ns, (uint64_t *)w->rk[0], w->idx[0]);
      CU_LAUNCHED(op, "radix keys");
      cnp_status r = radix_pairs<uint64_t>(op, w, n, bits, p->perm, st);
      if (r != CNP_OK) return r;
    }
    k_lower_bounds<uint64_t><<<blocks_for(ns + 1), kThreads, 0, st>>>(
        (const uint64_t *)w->rk[1], n, p->off, ns);
  }
  CU_LAUNCHED(op, "segment offsets");
  return CNP_OK;
}

/* Keys the caller sorted (cnpc's graph, right after a sort by the same key): no sort, the
** offsets by binary search over rows [0, n); negative keys fall before off[0], keys >=
** n_segments after off[n_segments], so both are dropped as in the build above. */
template <typename K>
static cnp_status plan_build_sorted_dc_t(const char *op, cnp_segment_plan *plan,
                                         const cnp_array *keys, const int64_t *d_n,
                                         cudaStream_t st)
{
  CudaPlan *p = (CudaPlan *)plan->impl;
  int64_t n = keys->shape[0], ns = plan->n_segments;
  plan->n_rows = n;
  plan->n_kept = -1;
  p->identity = 1;
  k_lower_bounds<K><<<blocks_for(ns + 1), kThreads, 0, st>>>((const K *)keys->data, n, p->off, ns,
                                                           d_n);
  CU_LAUNCHED(op, "segment offsets");
  return CNP_OK;
}

static cnp_status cuda_segment_plan_build_sorted_device_count(cnp_segment_plan *plan,
                                                              const cnp_array *keys,
                                                              const cnp_array *count,
                                                              cnp_stream *s)
{
  static const char op[] = "cnp_segment_plan_build_sorted_device_count";
  DEVICE_SCOPE(op, plan->device);
  const int64_t *d_n = (const int64_t *)count->data;
  if (keys->dtype == CNP_INT32)
    return plan_build_sorted_dc_t<int32_t>(op, plan, keys, d_n, native(s));
  return plan_build_sorted_dc_t<int64_t>(op, plan, keys, d_n, native(s));
}

static cnp_status cuda_segment_plan_build_device_count(cnp_segment_plan *plan,
                                                       const cnp_array *keys,
                                                       const cnp_array *count,
                                                       cnp_stream *s)
{
  static const char op[] = "cnp_segment_plan_build_device_count";
  DEVICE_SCOPE(op, plan->device);
  const int64_t *d_n = (const int64_t *)count->data;
  if (keys->dtype == CNP_INT32) return plan_build_dc_t<int32_t>(op, plan, keys, d_n, native(s));
  return plan_build_dc_t<int64_t>(op, plan, keys, d_n, native(s));
}

/* Loads and stores of the sum kernel. */
struct LoadId {
  template <typename T> __device__ T operator()(T x) const { return x; }
};
struct LoadBool {
  __device__ double operator()(unsigned char x) const { return x != 0 ? 1.0 : 0.0; }
};
struct LoadDbl {
  template <typename T> __device__ double operator()(T x) const { return (double)x; }
};
struct LoadHalf {
  __device__ float operator()(unsigned short x) const
  {
    return __half2float(__ushort_as_half(x));
  }
};
struct StoreId {
  template <typename T> __device__ T operator()(T x) const { return x; }
};
struct StoreHalf {
  __device__ unsigned short operator()(float x) const
  {
    return __half_as_ushort(__float2half_rn(x));
  }
};

/* Short segments (under 128 rows on average): one thread per (segment, scalar component) sums
** its rows in row order (the order of the host backend on one thread), one launch for every
** component. */
template <typename IN, typename ACC, typename OUT, typename LOAD, typename STORE>
__global__ void k_segment_sum(const IN *v, OUT *o, const int64_t *off, const int64_t *perm,
                              int identity, int64_t ns, int64_t kc)
{
  LOAD load;
  STORE store;
  int64_t total = ns * kc, stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += stride) {
    int64_t seg = t / kc, c = t - seg * kc;
    int64_t j0 = off[seg], j1 = off[seg + 1];
    ACC acc = 0;
    if (identity)
      for (int64_t j = j0; j < j1; j++) acc += load(v[j * kc + c]);
    else
      for (int64_t j = j0; j < j1; j++) acc += load(v[perm[j] * kc + c]);
    o[t] = store(acc);
  }
}

/* Short segments of one scalar component: a warp takes 32 neighbouring segments, whose rows
** [off[s0], off[s0 + 32]) are contiguous in the plan's order, and stages them kTileRows at a
** time in shared memory with coalesced loads (of v, or of perm and then v). Lane l then adds
** the staged rows of segment s0 + l in row order, so the sum is the thread-per-segment one,
** bit for bit, without each lane's loads touching its own cache lines. Measured on an H200
** (bench_gpu, 16 rows per segment, f64): 0.063 -> 0.057 ms at 16M rows, 0.260 -> 0.191 ms at
** 64M; tiles of 128 or 512 rows were no faster than a thread per segment at 16M. */
static const int kTileRows = 256;

template <typename IN, typename ACC, typename OUT, typename LOAD, typename STORE>
__global__ void k_segment_sum_tile(const IN *v, OUT *o, const int64_t *off, const int64_t *perm,
                                   int identity, int64_t ns)
{
  __shared__ IN tile[kThreads / 32][kTileRows];
  LOAD load;
  STORE store;
  const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
  const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
  IN *t = tile[wid];
  for (int64_t s0 = ((int64_t)blockIdx.x * (blockDim.x / 32) + wid) * 32; s0 < ns;
       s0 += warps * 32) {
    const int64_t s = s0 + lane, last = s0 + 32 < ns ? s0 + 32 : ns;
    const int64_t a = s < ns ? off[s] : 0, e = s < ns ? off[s + 1] : 0;
    const int64_t base = off[s0], end = off[last];     /* the same for the whole warp */
    ACC acc = 0;
    for (int64_t c = base; c < end; c += kTileRows) {
      const int64_t ce = c + kTileRows < end ? c + kTileRows : end;
      for (int64_t j = c + lane; j < ce; j += 32) t[j - c] = identity ? v[j] : v[perm[j]];
      __syncwarp();
      const int64_t j0 = a > c ? a : c, j1 = e < ce ? e : ce;
      for (int64_t j = j0; j < j1; j++) acc += load(t[j - c]);
      __syncwarp();                    /* the tile is refilled next */
    }
    if (s < ns) o[s] = store(acc);
  }
}

/* Middle-sized segments (128 to 1024 rows on average): G lanes of a warp per (segment,
** component). Lane l adds rows l, l + G, ... (G neighbouring rows per load: coalesced for
** sorted keys), then a fixed shuffle tree over the G lanes; deterministic. Every lane of a
** warp runs the same iterations (the warp shares `base`), so the shuffles see full warps. */
template <int G, typename IN, typename ACC, typename OUT, typename LOAD, typename STORE>
__global__ void k_segment_sum_group(const IN *v, OUT *o, const int64_t *off, const int64_t *perm,
                                    int identity, int64_t ns, int64_t kc)
{
  LOAD load;
  STORE store;
  const int lane = threadIdx.x & 31, sub = lane & (G - 1);
  const int64_t per_warp = 32 / G, total = ns * kc;
  const int64_t warps = (int64_t)gridDim.x * (blockDim.x / 32);
  for (int64_t base = ((int64_t)blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5)) * per_warp;
       base < total; base += warps * per_warp) {
    int64_t t = base + lane / G;
    ACC acc = 0;
    if (t < total) {
      int64_t seg = t / kc, c = t - seg * kc;
      int64_t j1 = off[seg + 1];
      if (identity)
        for (int64_t j = off[seg] + sub; j < j1; j += G) acc += load(v[j * kc + c]);
      else
        for (int64_t j = off[seg] + sub; j < j1; j += G) acc += load(v[perm[j] * kc + c]);
    }
    for (int h = G / 2; h > 0; h >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, h, G);
    if (t < total && sub == 0) o[t] = store(acc);
  }
}

/* Long segments (a PIC deposit: a few hundred cells, thousands of rows each), where a thread
** per segment would walk tens of thousands of rows alone. Block b sums part b % parts of
** (segment, component) b / parts: thread i adds rows i, i + blockDim.x, ... of the part, then
** a fixed tree over the block. With one part the sum goes to o, else to partial[b] and
** k_segment_combine adds the parts in order. Deterministic (the same order on every run), but
** not the host backend's order: the last bits may differ from it. */
template <typename IN, typename ACC, typename OUT, typename LOAD, typename STORE>
__global__ void k_segment_sum_long(const IN *v, OUT *o, ACC *partial, const int64_t *off,
                                   const int64_t *perm, int identity, int64_t ns, int64_t kc,
                                   int parts)
{
  __shared__ ACC red[kThreads];
  LOAD load;
  STORE store;
  int64_t total = ns * kc * parts;
  for (int64_t b = blockIdx.x; b < total; b += gridDim.x) {
    int64_t t = b / parts, part = b - t * parts;
    int64_t seg = t / kc, c = t - seg * kc;
    int64_t j0 = off[seg], len = off[seg + 1] - j0;
    int64_t a = j0 + len * part / parts, e = j0 + len * (part + 1) / parts;
    ACC acc = 0;
    if (identity)
      for (int64_t j = a + threadIdx.x; j < e; j += blockDim.x) acc += load(v[j * kc + c]);
    else
      for (int64_t j = a + threadIdx.x; j < e; j += blockDim.x) acc += load(v[perm[j] * kc + c]);
    red[threadIdx.x] = acc;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h >>= 1) {
      if ((int)threadIdx.x < h) red[threadIdx.x] += red[threadIdx.x + h];
      __syncthreads();
    }
    if (threadIdx.x == 0) {
      if (parts == 1) o[t] = store(red[0]);
      else partial[b] = red[0];
    }
    __syncthreads();                   /* red is reused by the block's next b */
  }
}

template <typename ACC, typename OUT, typename STORE>
__global__ void k_segment_combine(const ACC *partial, OUT *o, int64_t total, int parts)
{
  STORE store;
  int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += stride) {
    ACC acc = 0;
    for (int q = 0; q < parts; q++) acc += partial[t * parts + q];
    o[t] = store(acc);
  }
}

/* Rows per segment, on average, from which a warp sums each segment (each lane 4 rows or
** more), and from which blocks do. */
static const int64_t kGroupSegment = 128;
static const int64_t kLongSegment = 1024;
static const int64_t kPartRows = 256;   /* rows of a part of a long segment, on average */

template <int G, typename IN, typename ACC, typename OUT, typename LOAD, typename STORE>
static void launch_group(const CudaPlan *p, const void *v, void *o, int64_t ns, int64_t kc,
                         cudaStream_t st)
{
  k_segment_sum_group<G, IN, ACC, OUT, LOAD, STORE><<<blocks_for(ns * kc * G), kThreads, 0, st>>>(
      (const IN *)v, (OUT *)o, p->off, p->perm, p->identity, ns, kc);
}

template <typename IN, typename ACC, typename OUT, typename LOAD, typename STORE>
static void launch_sum(const CudaPlan *p, int64_t n_rows, const void *v, void *o, int64_t ns,
                       int64_t kc, cudaStream_t st)
{
  /* Rows per segment, on average, pick the kernel. Measured on an H200 (bench_gpu, 16M rows,
  ** sorted keys, 16 rows per segment): a thread per segment 0.063 ms, 16 lanes per segment
  ** 0.149 ms (each lane then loads one row, and pays the offsets and the shuffles alone). */
  int64_t avg = n_rows / ns;
  if (avg < kGroupSegment && kc == 1) {
    k_segment_sum_tile<IN, ACC, OUT, LOAD, STORE><<<blocks_for(ns), kThreads, 0, st>>>(
        (const IN *)v, (OUT *)o, p->off, p->perm, p->identity, ns);
    return;
  }
  if (avg < kGroupSegment) {
    k_segment_sum<IN, ACC, OUT, LOAD, STORE><<<blocks_for(ns * kc), kThreads, 0, st>>>(
        (const IN *)v, (OUT *)o, p->off, p->perm, p->identity, ns, kc);
    return;
  }
  if (avg < kLongSegment) {
    launch_group<32, IN, ACC, OUT, LOAD, STORE>(p, v, o, ns, kc, st);
    return;
  }
  /* Enough blocks to fill the device: split each (segment, component) into parts of at
  ** least kPartRows rows on average, at most 64, the partials in the plan's radix-key
  ** buffer (free after the build: capacity * 8 bytes). */
  int64_t t = ns * kc, parts = 1;
  while (parts < 64 && t * parts * 2 <= 2048 && n_rows / (ns * parts * 2) >= kPartRows &&
         t * parts * 2 <= p->w->cap)
    parts *= 2;
  int64_t blocks = t * parts;
  k_segment_sum_long<IN, ACC, OUT, LOAD, STORE>
      <<<(unsigned)(blocks < 65535 ? blocks : 65535), kThreads, 0, st>>>(
          (const IN *)v, (OUT *)o, (ACC *)(void *)p->w->rk[0], p->off, p->perm, p->identity,
          ns, kc, (int)parts);
  if (parts > 1)
    k_segment_combine<ACC, OUT, STORE><<<blocks_for(t), kThreads, 0, st>>>(
        (const ACC *)(const void *)p->w->rk[0], (OUT *)o, t, (int)parts);
}

static cnp_status cuda_segment_plan_sum(cnp_segment_plan *plan, const cnp_array *values,
                                        cnp_array *out, cnp_stream *s)
{
  static const char op[] = "cnp_segment_plan_sum";
  DEVICE_SCOPE(op, plan->device);
  CudaPlan *p = (CudaPlan *)plan->impl;
  cudaStream_t st = native(s);
  int64_t ns = plan->n_segments, kc = 1;
  for (int d = 1; d < values->ndim; d++) kc *= values->shape[d];
  if (values->dtype == CNP_COMPLEX64 || values->dtype == CNP_COMPLEX128) kc *= 2;
  if (ns == 0 || kc == 0) return CNP_OK;
  const void *v = values->data;
  void *o = out->data;
  int64_t n_rows = plan->n_rows;
  switch (values->dtype) {
  case CNP_FLOAT64: case CNP_COMPLEX128:
    launch_sum<double, double, double, LoadId, StoreId>(p, n_rows, v, o, ns, kc, st); break;
  case CNP_FLOAT32: case CNP_COMPLEX64:
    launch_sum<float, float, float, LoadId, StoreId>(p, n_rows, v, o, ns, kc, st); break;
  case CNP_FLOAT16:
    launch_sum<unsigned short, float, unsigned short, LoadHalf, StoreHalf>(p, n_rows, v, o, ns,
                                                                           kc, st);
    break;
  case CNP_BOOL:
    launch_sum<unsigned char, double, double, LoadBool, StoreId>(p, n_rows, v, o, ns, kc, st);
    break;
  case CNP_INT32:
    launch_sum<int32_t, double, double, LoadDbl, StoreId>(p, n_rows, v, o, ns, kc, st); break;
  case CNP_INT64:
    launch_sum<int64_t, double, double, LoadDbl, StoreId>(p, n_rows, v, o, ns, kc, st); break;
  default:
    launch_sum<uint64_t, double, double, LoadDbl, StoreId>(p, n_rows, v, o, ns, kc, st); break;
  }
  CU_LAUNCHED(op, "segment sum");
  return CNP_OK;
}

/* Both device-count builds behind one entry (`sorted`: no sort, see cnp/algo.h). */
static cnp_status cuda_plan_build_dc(cnp_segment_plan *plan, const cnp_array *keys,
                                     const cnp_array *count, int sorted, cnp_stream *s)
{
  return sorted ? cuda_segment_plan_build_sorted_device_count(plan, keys, count, s)
                : cuda_segment_plan_build_device_count(plan, keys, count, s);
}

/* The table (positional: C++ before C++20 has no designated initializers; the order is
** cnp__algo_backend's in algo_internal.h). */
extern "C" const cnp__algo_backend cnp__algo_cuda = {
    "cuda",
    cuda_workspace_create,
    cuda_workspace_destroy,
    cuda_compact_by_mask,
    cuda_compact_by_mask_device_count,
    cuda_sort_by_key,
    cuda_sort_by_key_device_count,
    cuda_cell_offsets,
    cuda_segment_boundaries,
    cuda_segment_plan_create,
    cuda_segment_plan_destroy,
    cuda_segment_plan_build,
    cuda_plan_build_dc,
    cuda_segment_plan_sum,
    cnp__cuda_scan,
    cnp__cuda_reduce,
};
