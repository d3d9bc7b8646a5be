/*
** cnp/atomic.cuh — atomic add for CUDA kernels (nvcc and NVRTC), plain and indexed.
**
** \brief cnp_atomic_add(p, v) adds v to *p atomically and returns the value *p held before.
** Overloads: int, unsigned, long long, unsigned long long, float, double, and long /
** unsigned long (64-bit on LP64 Linux, where int64_t is long).
**
** Signed 64-bit adds wrap modulo 2^64 (two's complement), never trap: they are done with
** the unsigned 64-bit atomicAdd. So cnp_atomic_add(&x, 1LL) with x == LLONG_MAX leaves
** LLONG_MIN in x and returns LLONG_MAX. 32-bit int adds wrap the same way (hardware).
**
** Indexed variants for C-order (row-major) arrays, last index fastest:
**   cnp_atomic_add_2d(a, n1, i, j, v)          adds v to a[i * n1 + j]         (shape n0 x n1)
**   cnp_atomic_add_3d(a, n1, n2, i, j, k, v)   adds v to a[(i * n1 + j) * n2 + k]
** Indices and extents are long long, so offsets past 2^31 elements are computed correctly.
** No bounds checks here (the generated code checks indices in its debug mode).
**
** \par Snippet — a histogram
** \code
**   #include <cnp/atomic.cuh>
**   extern "C" __global__ void hist(const int *cell, unsigned long long *count, int n)
**   {
**     int i = blockIdx.x * blockDim.x + threadIdx.x;
**     if (i < n) cnp_atomic_add(&count[cell[i]], 1ull);
**   }
** \endcode
** For cell = 0, 2, 2, 1, 2 and count initially 0, 0, 0 the result is count = 1, 1, 3.
**
** \par Snippet — scatter-add into a (3, n_cells) component-major field
** \code
**   cnp_atomic_add_2d(rho, n_cells, 0, cell[i], q[i]);   // rho[0 * n_cells + cell[i]] += q[i]
** \endcode
*/
#ifndef CNP_ATOMIC_CUH
#define CNP_ATOMIC_CUH

#if !defined(__CUDACC__) && !defined(__CUDACC_RTC__)
#error "cnp/atomic.cuh is for CUDA device code (nvcc or NVRTC)"
#endif

static __device__ __forceinline__ int cnp_atomic_add(int *p, int v)
{
  return atomicAdd(p, v);
}

static __device__ __forceinline__ unsigned cnp_atomic_add(unsigned *p, unsigned v)
{
  return atomicAdd(p, v);
}

static __device__ __forceinline__ unsigned long long cnp_atomic_add(unsigned long long *p,
                                                                    unsigned long long v)
{
  return atomicAdd(p, v);
}

/* Signed 64-bit: unsigned add, so overflow wraps modulo 2^64 instead of being undefined. */
static __device__ __forceinline__ long long cnp_atomic_add(long long *p, long long v)
{
  return (long long)atomicAdd((unsigned long long *)p, (unsigned long long)v);
}

static __device__ __forceinline__ float cnp_atomic_add(float *p, float v)
{
  return atomicAdd(p, v);
}

static __device__ __forceinline__ double cnp_atomic_add(double *p, double v)
{
  return atomicAdd(p, v);
}

/* long / unsigned long: 64-bit on the LP64 platforms CUDA supports (Linux x86-64, aarch64). */
static_assert(sizeof(long) == 8, "cnp/atomic.cuh assumes an LP64 platform");

static __device__ __forceinline__ long cnp_atomic_add(long *p, long v)
{
  return (long)atomicAdd((unsigned long long *)p, (unsigned long long)v);
}

static __device__ __forceinline__ unsigned long cnp_atomic_add(unsigned long *p, unsigned long v)
{
  return (unsigned long)atomicAdd((unsigned long long *)p, (unsigned long long)v);
}

/* a[i * n1 + j] += v; returns the old value. */
template <typename T, typename V>
static __device__ __forceinline__ T cnp_atomic_add_2d(T *a, long long n1, long long i,
                                                      long long j, V v)
{
  return cnp_atomic_add(a + (i * n1 + j), (T)v);
}

/* a[(i * n1 + j) * n2 + k] += v; returns the old value. */
template <typename T, typename V>
static __device__ __forceinline__ T cnp_atomic_add_3d(T *a, long long n1, long long n2,
                                                      long long i, long long j, long long k,
                                                      V v)
{
  return cnp_atomic_add(a + ((i * n1 + j) * n2 + k), (T)v);
}

#endif /* CNP_ATOMIC_CUH */
