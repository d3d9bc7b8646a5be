/*
** algo_cuda.cuh — what the CUDA algorithm files share (algo_cuda.cu: compaction, sorts,
** offsets, boundaries, segment plans and the table; algo_reduce_cuda.cu: scans and
** reductions): the error and device-scope macros, the device scalars, the workspace.
*/
#ifndef CNP_ALGO_CUDA_CUH
#define CNP_ALGO_CUDA_CUH

#include "algo_internal.h"
#include "cuda_common.cuh"

#include <cuda_runtime.h>
#include <stdint.h>

using cnp_cu::cuda_fail;
using cnp_cu::DeviceScope;
using cnp_cu::kThreads;
using cnp_cu::blocks_for;

#define CU(op, call)                                                                      \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) return cuda_fail(e_, (op), #call);                               \
  } while (0)

/* After kernel launches (`what` documents the call site). */
#define CU_LAUNCHED(op, what) CU(op, cudaGetLastError())

/* Without a usable device (no driver, no GPU) the first runtime call of any entry fails:
** that is CNP_EUNAVAILABLE with the cached reason (as cnp_array_alloc_on and
** cnp_backend_select say it), not a CNP_EBACKEND about cudaSetDevice. */
static inline cnp_status scope_fail(cudaError_t e, const char *op)
{
  const char *why = NULL;
  if (!cnp_cuda_available(&why)) {
    (void)cudaGetLastError();
    return cnp__fail(CNP_EUNAVAILABLE, op, "CUDA is unavailable: %s", why ? why : "unknown");
  }
  return cuda_fail(e, op, "cudaSetDevice");
}

#define DEVICE_SCOPE(op, dev)                                                             \
  DeviceScope scope_(dev);                                                                \
  if (scope_.err != cudaSuccess) return scope_fail(scope_.err, (op))

static inline cudaStream_t native(cnp_stream *s) { return (cudaStream_t)cnp__native(s); }

/* ---- device scalars ---------------------------------------------------------------------
** Results the host reads back with the call's single synchronization. */
struct Scalars {
  unsigned long long lo;               /* min ordered key */
  unsigned long long hi;               /* max ordered key */
  unsigned long long bad;              /* first offending index (~0: none) */
  unsigned long long descents;         /* count of i with key[i] < key[i-1] */
  unsigned long long negatives;        /* count of negative keys */
  unsigned long long count;            /* compaction / run count */
};

/* Scans and reductions cut the rows into kRedChunks chunks (one block each, a fixed
** partition of n): the workspace holds a partial (8 bytes) and a NaN flag per chunk, and
** a second row of partials for the scans' chunk offsets. */
static const int kRedChunks = 1024;
static const size_t kRedBytes = (size_t)kRedChunks * (8 + 8 + 4);

struct CudaWs {
  int64_t        cap;
  size_t         chunk;                /* bytes of a row chunk (>= 16, multiple of 8) */
  unsigned long long *rk[2];           /* radix keys (uint64, or uint32 in the same space) */
  int64_t       *idx[2];               /* permutation / scan buffers */
  void          *rows;                 /* cap * chunk bytes */
  void          *temp;                 /* CUB temporary storage */
  size_t         temp_bytes;
  Scalars       *scal;
  void          *red;                  /* scans and reductions: kRedChunks partials */
};

/* Scans and reductions (algo_reduce_cuda.cu), entries of the table cnp__algo_cuda. */
cnp_status cnp__cuda_scan(const cnp_array *in, cnp_array *out, cnp_scan_kind kind,
                          const cnp__rows *rows, int64_t n_axis, const cnp_array *count,
                          cnp_workspace *ws, cnp_stream *s);
cnp_status cnp__cuda_reduce(const cnp_array *in, cnp_reduce_op rop, cnp_array *out,
                            const cnp_array *count, cnp_workspace *ws, cnp_stream *s);

#endif
