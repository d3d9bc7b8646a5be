/*
** cnp/scan.cuh — warp and block prefix sums for CUDA kernels (nvcc and NVRTC).
**
** \brief Inclusive / exclusive sums and totals over a warp or a whole thread block, for
** int, unsigned, long, unsigned long, long long, unsigned long long, float and double
** (and bool, summed as int 0/1, for compaction flags).
**
** Thread numbering. Threads are numbered linearly with x fastest:
**   cnp_block_thread()  = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)
**   cnp_block_threads() = blockDim.x * blockDim.y * blockDim.z
** Warps are consecutive groups of 32 in that numbering (as the hardware forms them), so any
** legal block shape works, including blocks whose size is not a multiple of 32 (the last
** warp is then partial).
**
** Warp collectives.
**   cnp_warp_inclusive_sum(x), cnp_warp_exclusive_sum(x), cnp_warp_sum(x):
**     every existing lane of the calling warp must call (a partial last warp is fine; its
**     lanes are the ones that exist). Scan order is increasing lane id.
**   cnp_warp_inclusive_sum_mask(mask, x), ... (mask first, as __shfl_sync):
**     only the lanes named in mask take part and every one of them must call with the same
**     mask; the calling lane must be in mask. The scan runs over the named lanes in
**     increasing lane id, so sparse masks (0x5555aaaa) are allowed: lane k's inclusive sum
**     is the sum over named lanes <= k.
**   The exclusive sum of the first participating lane is 0; cnp_warp_sum returns the total
**   to every participating lane.
**
** Block collectives.
**   cnp_block_inclusive_sum(x), cnp_block_exclusive_sum(x), cnp_block_sum(x):
**     EVERY thread of the block must call them (they contain __syncthreads()): do not return
**     early from a kernel before a block collective; guard the work instead, contributing
**     0 from threads past the end of the data (see the snippet). Consecutive calls are safe:
**     each call synchronizes before returning, so its shared storage can be reused.
**     The optional second argument (T *total) receives the block total.
**   Each uses 33 elements of static shared memory per type (<= 264 bytes).
**
** Floating-point sums are associative only up to rounding: the result equals a sequential
** sum exactly for integer-valued data that is representable, and otherwise within rounding.
**
** \par Snippet — per-block compaction offsets (1-D grid, any block size)
** \code
**   #include <cnp/scan.cuh>
**   extern "C" __global__ void keep_offsets(const int *alive, int *offset, int *count, int n)
**   {
**     int i = blockIdx.x * blockDim.x + threadIdx.x;
**     int flag = i < n ? alive[i] != 0 : 0;      // no early return: every thread calls
**     int total;
**     int pos = cnp_block_exclusive_sum(flag, &total);
**     if (i < n) offset[i] = pos;
**     if (cnp_block_thread() == 0) count[blockIdx.x] = total;
**   }
** \endcode
** With a block of 128 threads and alive = 1, 1, 1, ... the block's offsets are
** 0, 1, 2, ..., 127 and count is 128. With alive = 1, 0, 1, 0, ... the offsets are
** 0, 1, 1, 2, 2, ..., 63, 64 and count is 64.
**
** \par Snippet — sparse warp mask
** \code
**   unsigned mask = 0xAAAAAAAAu;                 // odd lanes only
**   if ((cnp_block_thread() & 1) == 1) {
**     int s = cnp_warp_inclusive_sum_mask(mask, 1);   // lane 1 -> 1, lane 3 -> 2, ... lane 31 -> 16
**   }
** \endcode
*/
#ifndef CNP_SCAN_CUH
#define CNP_SCAN_CUH

#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
#error "cnp/scan.cuh is for CUDA device code (nvcc or NVRTC)"
#endif

/* Linear thread index inside the block, x fastest. */
static __device__ __forceinline__ unsigned cnp_block_thread(void)
{
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

/* Number of threads in the block. */
static __device__ __forceinline__ unsigned cnp_block_threads(void)
{
  return blockDim.x * blockDim.y * blockDim.z;
}

/* ---- internals (cnp__ prefix: not part of the interface) ------------------------------- */

/* Lanes of the calling warp that exist (all 32 except in a partial last warp). */
static __device__ __forceinline__ unsigned cnp__warp_lanes(void)
{
  unsigned base = cnp_block_thread() & ~31u;
  unsigned n = cnp_block_threads() - base;
  return n >= 32u ? 0xffffffffu : ((1u << n) - 1u);
}

/* Lane id of the k-th (0-based) set bit of mask; k < popc(mask). */
static __device__ __forceinline__ int cnp__nth_lane(unsigned mask, int k)
{
  int lo = 0, hi = 31;
  while (lo < hi) {
    int mid = (lo + hi) >> 1;
    unsigned below = (2u << mid) - 1u;          /* bits 0..mid (mid == 31: all) */
    if (__popc(mask & below) > k) hi = mid; else lo = mid + 1;
  }
  return lo;
}

/* Inclusive scan over the lanes of mask (increasing lane id); *excl and *total optional. */
template <typename T>
static __device__ __forceinline__ T cnp__warp_scan(unsigned mask, T x, T *excl, T *total)
{
  int lane = (int)(cnp_block_thread() & 31u);
  int n = __popc(mask);
  T s = x;
  if (mask == 0xffffffffu) {
    for (int d = 1; d < 32; d <<= 1) {
      T y = __shfl_up_sync(mask, s, (unsigned)d);
      if (lane >= d) s += y;
    }
    if (excl) {
      T e = __shfl_up_sync(mask, s, 1u);
      *excl = lane == 0 ? T(0) : e;
    }
    if (total) *total = __shfl_sync(mask, s, 31);
    return s;
  }
  int rank = __popc(mask & ((1u << lane) - 1u));
  for (int d = 1; d < n; d <<= 1) {
    int src = rank >= d ? cnp__nth_lane(mask, rank - d) : lane;
    T y = __shfl_sync(mask, s, src);
    if (rank >= d) s += y;
  }
  if (excl) {
    int src = rank >= 1 ? cnp__nth_lane(mask, rank - 1) : lane;
    T e = __shfl_sync(mask, s, src);
    *excl = rank == 0 ? T(0) : e;
  }
  if (total) *total = __shfl_sync(mask, s, cnp__nth_lane(mask, n - 1));
  return s;
}

/* Block scan: every thread calls. Returns the inclusive sum; *excl and *total optional. */
template <typename T>
static __device__ __forceinline__ T cnp__block_scan(T x, T *excl, T *total)
{
  __shared__ T cnp__part[33];                   /* per-warp totals, then prefixes; [32] total */
  unsigned tid = cnp_block_thread();
  unsigned warp = tid >> 5, lane = tid & 31u;
  unsigned nwarps = (cnp_block_threads() + 31u) >> 5;
  T wex, wtot;
  T s = cnp__warp_scan<T>(cnp__warp_lanes(), x, &wex, &wtot);
  if (lane == 0) cnp__part[warp] = wtot;
  __syncthreads();
  if (warp == 0) {
    T v = lane < nwarps ? cnp__part[lane] : T(0);
    T pe, pt;
    cnp__warp_scan<T>(cnp__warp_lanes(), v, &pe, &pt);
    if (lane < nwarps) cnp__part[lane] = pe;
    if (lane == 0) cnp__part[32] = pt;
  }
  __syncthreads();
  T base = cnp__part[warp];
  if (excl) *excl = base + wex;
  if (total) *total = cnp__part[32];
  __syncthreads();                              /* storage reusable by the next call */
  return base + s;
}

/* ---- the interface: overloads for the supported types ----------------------------------- */

#define CNP__SCAN_OVERLOADS(T)                                                             \
  static __device__ __forceinline__ T cnp_warp_inclusive_sum_mask(unsigned mask, T x)      \
  { return cnp__warp_scan<T>(mask, x, (T *)0, (T *)0); }                                   \
  static __device__ __forceinline__ T cnp_warp_exclusive_sum_mask(unsigned mask, T x)      \
  { T e; cnp__warp_scan<T>(mask, x, &e, (T *)0); return e; }                               \
  static __device__ __forceinline__ T cnp_warp_sum_mask(unsigned mask, T x)                \
  { T t; cnp__warp_scan<T>(mask, x, (T *)0, &t); return t; }                               \
  static __device__ __forceinline__ T cnp_warp_inclusive_sum(T x)                          \
  { return cnp__warp_scan<T>(cnp__warp_lanes(), x, (T *)0, (T *)0); }                      \
  static __device__ __forceinline__ T cnp_warp_exclusive_sum(T x)                          \
  { T e; cnp__warp_scan<T>(cnp__warp_lanes(), x, &e, (T *)0); return e; }                  \
  static __device__ __forceinline__ T cnp_warp_sum(T x)                                    \
  { T t; cnp__warp_scan<T>(cnp__warp_lanes(), x, (T *)0, &t); return t; }                 \
  static __device__ __forceinline__ T cnp_block_inclusive_sum(T x, T *total = 0)           \
  { return cnp__block_scan<T>(x, (T *)0, total); }                                         \
  static __device__ __forceinline__ T cnp_block_exclusive_sum(T x, T *total = 0)           \
  { T e; cnp__block_scan<T>(x, &e, total); return e; }                                     \
  static __device__ __forceinline__ T cnp_block_sum(T x)                                   \
  { T t; cnp__block_scan<T>(x, (T *)0, &t); return t; }

CNP__SCAN_OVERLOADS(int)
CNP__SCAN_OVERLOADS(unsigned)
CNP__SCAN_OVERLOADS(long)
CNP__SCAN_OVERLOADS(unsigned long)
CNP__SCAN_OVERLOADS(long long)
CNP__SCAN_OVERLOADS(unsigned long long)
CNP__SCAN_OVERLOADS(float)
CNP__SCAN_OVERLOADS(double)

#undef CNP__SCAN_OVERLOADS

/* bool (compaction flags) counts as int 0 / 1. */
static __device__ __forceinline__ int cnp_warp_inclusive_sum_mask(unsigned mask, bool x)
{ return cnp_warp_inclusive_sum_mask(mask, (int)x); }
static __device__ __forceinline__ int cnp_warp_exclusive_sum_mask(unsigned mask, bool x)
{ return cnp_warp_exclusive_sum_mask(mask, (int)x); }
static __device__ __forceinline__ int cnp_warp_sum_mask(unsigned mask, bool x)
{ return cnp_warp_sum_mask(mask, (int)x); }
static __device__ __forceinline__ int cnp_warp_inclusive_sum(bool x)
{ return cnp_warp_inclusive_sum((int)x); }
static __device__ __forceinline__ int cnp_warp_exclusive_sum(bool x)
{ return cnp_warp_exclusive_sum((int)x); }
static __device__ __forceinline__ int cnp_warp_sum(bool x) { return cnp_warp_sum((int)x); }
static __device__ __forceinline__ int cnp_block_inclusive_sum(bool x, int *total = 0)
{ return cnp_block_inclusive_sum((int)x, total); }
static __device__ __forceinline__ int cnp_block_exclusive_sum(bool x, int *total = 0)
{ return cnp_block_exclusive_sum((int)x, total); }
static __device__ __forceinline__ int cnp_block_sum(bool x) { return cnp_block_sum((int)x); }

#endif /* CNP_SCAN_CUH */
