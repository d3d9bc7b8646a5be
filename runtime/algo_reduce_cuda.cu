/*
** algo_reduce_cuda.cu — the CUDA scans and reductions of cnp/algo.h (cnp_scan,
** cnp_reduce), entries of the table cnp__algo_cuda (algo_cuda.cu); the host ones are in
** algo_reduce_host.c. The workspace's `red` buffer holds their chunk partials.
*/
#include "algo_cuda.cuh"

#include <cub/block/block_scan.cuh>
#include <cuda_fp16.h>

#include <climits>
#include <math_constants.h>

/* ---- scans and reductions ---------------------------------------------------------------
** Deterministic without atomics (docs/algorithms.md): n rows (the device count, clamped to
** [0, N], or N) in kRedChunks chunks of ceil(n / kRedChunks) rows, chunk b reduced by block
** b: thread t takes rows lo + t, lo + t + 256, ... in order, then the 256 thread results
** are combined pairwise, neighbours first (t with t + 1, then t with t + 2, ...). One
** block combines the chunk results the same way (4 per thread in order, then the tree).
** Scans: the chunk totals as above, their exclusive prefix in chunk order by one thread,
** then each block scans its chunk in tiles of 256 x 8 rows from its offset (a thread's 8
** rows in order, the threads' totals by cub::BlockScan). */

/* Element types: S sums (integers wrap: unsigned), V compares (float16 as float). */
template <typename T> struct Elem;
template <> struct Elem<int> {
  typedef unsigned S;
  typedef int V;
  static __device__ S sum(int x) { return (unsigned)x; }
  static __device__ V val(int x) { return x; }
  static __device__ int of_sum(S s) { return (int)s; }
  static __device__ int of_val(V v) { return v; }
  static __device__ bool nz(int x) { return x != 0; }
  static __device__ bool nan(V) { return false; }
  static __device__ int qnan() { return 0; }
  static __device__ V lowest() { return INT_MIN; }
  static __device__ V highest() { return INT_MAX; }
};
template <> struct Elem<long long> {
  typedef unsigned long long S;
  typedef long long V;
  static __device__ S sum(long long x) { return (unsigned long long)x; }
  static __device__ V val(long long x) { return x; }
  static __device__ long long of_sum(S s) { return (long long)s; }
  static __device__ long long of_val(V v) { return v; }
  static __device__ bool nz(long long x) { return x != 0; }
  static __device__ bool nan(V) { return false; }
  static __device__ long long qnan() { return 0; }
  static __device__ V lowest() { return LLONG_MIN; }
  static __device__ V highest() { return LLONG_MAX; }
};
template <> struct Elem<unsigned long long> {
  typedef unsigned long long S;
  typedef unsigned long long V;
  static __device__ S sum(S x) { return x; }
  static __device__ V val(S x) { return x; }
  static __device__ S of_sum(S s) { return s; }
  static __device__ S of_val(V v) { return v; }
  static __device__ bool nz(S x) { return x != 0; }
  static __device__ bool nan(V) { return false; }
  static __device__ S qnan() { return 0; }
  static __device__ V lowest() { return 0; }
  static __device__ V highest() { return ULLONG_MAX; }
};
template <> struct Elem<unsigned short> {          /* float16 bits, float32 arithmetic */
  typedef float S;
  typedef float V;
  static __device__ float sum(unsigned short x) { return __half2float(__ushort_as_half(x)); }
  static __device__ float val(unsigned short x) { return sum(x); }
  static __device__ unsigned short of_sum(float s)
  {
    return __half_as_ushort(__float2half_rn(s));
  }
  static __device__ unsigned short of_val(float v) { return of_sum(v); }
  static __device__ bool nz(unsigned short x) { return (x & 0x7fffu) != 0; }
  static __device__ bool nan(float v) { return v != v; }
  static __device__ unsigned short qnan() { return 0x7e00u; }
  static __device__ V lowest() { return -CUDART_INF_F; }
  static __device__ V highest() { return CUDART_INF_F; }
};
/* float32 and float64: themselves; the quiet NaN with the sign bit clear */
template <typename F> struct ElemF {
  typedef F S;
  typedef F V;
  static __device__ F sum(F x) { return x; }
  static __device__ F val(F x) { return x; }
  static __device__ F of_sum(F s) { return s; }
  static __device__ F of_val(F v) { return v; }
  static __device__ bool nz(F x) { return x != (F)0; }
  static __device__ bool nan(F v) { return v != v; }
  static __device__ V lowest() { return (F)-CUDART_INF; }
  static __device__ V highest() { return (F)CUDART_INF; }
};
template <> struct Elem<float> : ElemF<float> {
  static __device__ float qnan() { return __int_as_float(0x7fc00000); }
};
template <> struct Elem<double> : ElemF<double> {
  static __device__ double qnan() { return __longlong_as_double(0x7ff8000000000000LL); }
};
template <> struct Elem<unsigned char> {           /* bool: counts only */
  typedef unsigned long long S;
  typedef unsigned V;
  static __device__ S sum(unsigned char x) { return x; }
  static __device__ V val(unsigned char x) { return x; }
  static __device__ unsigned char of_sum(S s) { return (unsigned char)s; }
  static __device__ unsigned char of_val(V v) { return (unsigned char)v; }
  static __device__ bool nz(unsigned char x) { return x != 0; }
  static __device__ bool nan(V) { return false; }
  static __device__ unsigned char qnan() { return 0; }
  static __device__ V lowest() { return 0; }
  static __device__ V highest() { return 255; }
};

/* One reduction: its accumulator R, identity, element step and combination. */
template <typename T, int OP> struct RedOp {
  typedef Elem<T> E;
  typedef typename std::conditional<
      OP == CNP_REDUCE_COUNT, long long,
      typename std::conditional<OP == CNP_REDUCE_SUM, typename E::S, typename E::V>::type>::type R;
  static __device__ R identity()
  {
    if (OP == CNP_REDUCE_MIN) return (R)E::highest();
    if (OP == CNP_REDUCE_MAX) return (R)E::lowest();
    return (R)0;
  }
  static __device__ R elem(T x, int *nan)
  {
    if (OP == CNP_REDUCE_COUNT) return (R)(E::nz(x) ? 1 : 0);
    if (OP == CNP_REDUCE_SUM) return (R)E::sum(x);
    typename E::V v = E::val(x);
    *nan |= E::nan(v);
    return (R)v;
  }
  static __device__ R join(R a, R b)
  {
    if (OP == CNP_REDUCE_MIN) return b < a ? b : a;
    if (OP == CNP_REDUCE_MAX) return b > a ? b : a;
    return a + b;
  }
};

static __device__ int64_t rows_of(const int64_t *count, int64_t n_axis)
{
  if (count == NULL) return n_axis;
  int64_t v = *count;
  return v < 0 ? 0 : v > n_axis ? n_axis : v;
}

static __device__ void chunk_of(int64_t n, int b, int64_t *lo, int64_t *hi)
{
  int64_t c = (n + kRedChunks - 1) / kRedChunks;
  int64_t l = c * b;
  *lo = l < n ? l : n;
  *hi = l + c < n ? l + c : n;
}

/* The neighbours-first tree over the block's 256 values (in shared memory). */
template <typename RO, typename R>
static __device__ R block_tree(R v, int nan, R *sh, int *shn)
{
  int t = threadIdx.x;
  sh[t] = v;
  shn[t] = nan;
  for (int s = 1; s < kThreads; s *= 2) {
    __syncthreads();
    if (t % (2 * s) == 0) {
      sh[t] = RO::join(sh[t], sh[t + s]);
      shn[t] |= shn[t + s];
    }
  }
  __syncthreads();
  return sh[0];
}

/* Chunk b's result into part[b] (and its NaN flag into nanf[b]). */
template <typename T, int OP>
__global__ void k_red_chunks(const T *x, int64_t n_axis, const int64_t *count,
                             typename RedOp<T, OP>::R *part, int *nanf)
{
  typedef RedOp<T, OP> RO;
  typedef typename RO::R R;
  __shared__ R sh[kThreads];
  __shared__ int shn[kThreads];
  int64_t lo, hi;
  chunk_of(rows_of(count, n_axis), blockIdx.x, &lo, &hi);
  R acc = RO::identity();
  int nan = 0;
  for (int64_t i = lo + threadIdx.x; i < hi; i += kThreads) acc = RO::join(acc, RO::elem(x[i], &nan));
  R r = block_tree<RO>(acc, nan, sh, shn);
  if (threadIdx.x == 0) {
    part[blockIdx.x] = r;
    nanf[blockIdx.x] = shn[0];
  }
}

/* The chunk results into out[0] (one block). */
template <typename T, int OP, typename OUT>
__global__ void k_red_final(const typename RedOp<T, OP>::R *part, const int *nanf, OUT *out)
{
  typedef RedOp<T, OP> RO;
  typedef typename RO::R R;
  typedef Elem<T> E;
  __shared__ R sh[kThreads];
  __shared__ int shn[kThreads];
  const int per = kRedChunks / kThreads;
  int t = threadIdx.x;
  R acc = part[t * per];
  int nan = nanf[t * per];
  for (int j = 1; j < per; j++) {
    acc = RO::join(acc, part[t * per + j]);
    nan |= nanf[t * per + j];
  }
  R r = block_tree<RO>(acc, nan, sh, shn);
  if (t != 0) return;
  if (OP == CNP_REDUCE_COUNT) out[0] = (OUT)r;
  else if (shn[0]) out[0] = (OUT)E::qnan();
  else if (OP == CNP_REDUCE_SUM) out[0] = (OUT)E::of_sum((typename E::S)r);
  else out[0] = (OUT)E::of_val((typename E::V)r);
}

/* Scans: each chunk's offset, the exclusive prefix of the chunk totals in chunk order. */
template <typename S> __global__ void k_scan_offsets(const S *tot, S *off)
{
  __shared__ S sh[kRedChunks];
  for (int b = threadIdx.x; b < kRedChunks; b += kThreads) sh[b] = tot[b];
  __syncthreads();
  if (threadIdx.x == 0) {
    S run = 0;
    for (int b = 0; b < kRedChunks; b++) {
      S v = sh[b];
      sh[b] = run;
      run += v;
    }
  }
  __syncthreads();
  for (int b = threadIdx.x; b < kRedChunks; b += kThreads) off[b] = sh[b];
}

static const int kScanItems = 8;

/* Chunk b scanned from its offset, in tiles of kThreads * kScanItems rows. */
template <typename T>
__global__ void k_scan_chunks(const T *x, T *y, int64_t n_axis, const int64_t *count,
                              const typename Elem<T>::S *off, int excl)
{
  typedef Elem<T> E;
  typedef typename E::S S;
  typedef cub::BlockScan<S, kThreads> Scan;
  __shared__ typename Scan::TempStorage tmp;
  int64_t lo, hi;
  chunk_of(rows_of(count, n_axis), blockIdx.x, &lo, &hi);
  S carry = off[blockIdx.x];
  for (int64_t base = lo; base < hi; base += (int64_t)kThreads * kScanItems) {
    int64_t i0 = base + (int64_t)threadIdx.x * kScanItems;
    S v[kScanItems], mine = 0;
    for (int j = 0; j < kScanItems; j++) {
      v[j] = i0 + j < hi ? E::sum(x[i0 + j]) : (S)0;
      mine += v[j];
    }
    S before, tile;
    Scan(tmp).ExclusiveSum(mine, before, tile);
    S run = carry + before;
    for (int j = 0; j < kScanItems; j++) {
      if (i0 + j >= hi) break;
      if (!excl) run += v[j];
      y[i0 + j] = E::of_sum(run);
      if (excl) run += v[j];
    }
    carry += tile;
    __syncthreads();                   /* tmp is reused by the next tile */
  }
}

template <typename T, int OP>
static cnp_status reduce_t(const char *op, const cnp_array *in, cnp_array *out,
                           const int64_t *count, CudaWs *w, cudaStream_t st)
{
  typedef typename RedOp<T, OP>::R R;
  R *part = (R *)w->red;
  int *nanf = (int *)((char *)w->red + (size_t)kRedChunks * 16);
  k_red_chunks<T, OP><<<kRedChunks, kThreads, 0, st>>>((const T *)in->data, in->shape[0],
                                                       count, part, nanf);
  if (OP == CNP_REDUCE_COUNT)
    k_red_final<T, OP><<<1, kThreads, 0, st>>>(part, nanf, (long long *)out->data);
  else
    k_red_final<T, OP><<<1, kThreads, 0, st>>>(part, nanf, (T *)out->data);
  CU_LAUNCHED(op, "reduction kernels");
  return CNP_OK;
}

template <typename T>
static cnp_status reduce_op_t(const char *op, cnp_reduce_op rop, const cnp_array *in,
                              cnp_array *out, const int64_t *count, CudaWs *w, cudaStream_t st)
{
  switch (rop) {
  case CNP_REDUCE_SUM: return reduce_t<T, CNP_REDUCE_SUM>(op, in, out, count, w, st);
  case CNP_REDUCE_MIN: return reduce_t<T, CNP_REDUCE_MIN>(op, in, out, count, w, st);
  case CNP_REDUCE_MAX: return reduce_t<T, CNP_REDUCE_MAX>(op, in, out, count, w, st);
  default: return reduce_t<T, CNP_REDUCE_COUNT>(op, in, out, count, w, st);
  }
}

cnp_status cnp__cuda_reduce(const cnp_array *in, cnp_reduce_op rop, cnp_array *out,
                            const cnp_array *count, cnp_workspace *ws, cnp_stream *s)
{
  static const char op[] = "cnp_reduce";
  if (ws == NULL)
    return cnp__fail(CNP_EINVAL, op, "ws is NULL: reductions on CUDA need a workspace");
  DEVICE_SCOPE(op, in->device);
  CudaWs *w = (CudaWs *)ws->impl;
  cudaStream_t st = native(s);
  const int64_t *c = count ? (const int64_t *)count->data : NULL;
  switch (in->dtype) {
  case CNP_BOOL: return reduce_t<unsigned char, CNP_REDUCE_COUNT>(op, in, out, c, w, st);
  case CNP_INT32: return reduce_op_t<int>(op, rop, in, out, c, w, st);
  case CNP_INT64: return reduce_op_t<long long>(op, rop, in, out, c, w, st);
  case CNP_UINT64: return reduce_op_t<unsigned long long>(op, rop, in, out, c, w, st);
  case CNP_FLOAT16: return reduce_op_t<unsigned short>(op, rop, in, out, c, w, st);
  case CNP_FLOAT32: return reduce_op_t<float>(op, rop, in, out, c, w, st);
  default: return reduce_op_t<double>(op, rop, in, out, c, w, st);
  }
}

template <typename T>
static cnp_status scan_t(const char *op, const cnp__rows *rows, const cnp_array *in,
                         cnp_array *out, int64_t n_axis, const int64_t *count, int excl,
                         CudaWs *w, cudaStream_t st)
{
  typedef typename Elem<T>::S S;
  typedef RedOp<T, CNP_REDUCE_SUM> RO;
  S *tot = (S *)w->red, *off = (S *)((char *)w->red + (size_t)kRedChunks * 8);
  int *nanf = (int *)((char *)w->red + (size_t)kRedChunks * 16);
  for (int64_t c = 0; c < rows->n_blocks; c++) {
    const T *x = (const T *)((const char *)in->data + c * rows->block_stride);
    T *y = (T *)((char *)out->data + c * rows->block_stride);
    k_red_chunks<T, CNP_REDUCE_SUM><<<kRedChunks, kThreads, 0, st>>>(
        x, n_axis, count, (typename RO::R *)tot, nanf);
    k_scan_offsets<S><<<1, kThreads, 0, st>>>(tot, off);
    k_scan_chunks<T><<<kRedChunks, kThreads, 0, st>>>(x, y, n_axis, count, off, excl);
    CU_LAUNCHED(op, "scan kernels");
  }
  return CNP_OK;
}

cnp_status cnp__cuda_scan(const cnp_array *in, cnp_array *out, cnp_scan_kind kind,
                          const cnp__rows *rows, int64_t n_axis, const cnp_array *count,
                          cnp_workspace *ws, cnp_stream *s)
{
  static const char op[] = "cnp_scan";
  if (ws == NULL)
    return cnp__fail(CNP_EINVAL, op, "ws is NULL: scans on CUDA need a workspace");
  if (n_axis == 0 || rows->n_blocks == 0) return CNP_OK;
  DEVICE_SCOPE(op, in->device);
  CudaWs *w = (CudaWs *)ws->impl;
  cudaStream_t st = native(s);
  const int64_t *c = count ? (const int64_t *)count->data : NULL;
  int excl = kind == CNP_SCAN_EXCLUSIVE;
  switch (in->dtype) {
  case CNP_INT32: return scan_t<int>(op, rows, in, out, n_axis, c, excl, w, st);
  case CNP_INT64: return scan_t<long long>(op, rows, in, out, n_axis, c, excl, w, st);
  case CNP_UINT64:
    return scan_t<unsigned long long>(op, rows, in, out, n_axis, c, excl, w, st);
  case CNP_FLOAT16: return scan_t<unsigned short>(op, rows, in, out, n_axis, c, excl, w, st);
  case CNP_FLOAT32: return scan_t<float>(op, rows, in, out, n_axis, c, excl, w, st);
  default: return scan_t<double>(op, rows, in, out, n_axis, c, excl, w, st);
  }
}
