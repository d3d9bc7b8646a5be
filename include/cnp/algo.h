/*
** cnp/algo.h — data-parallel algorithms of libcnp (included by cnp/cnp.h).
**
** compaction, stable sort by key, cell offsets, segment boundaries, per-segment sums,
** scans and reductions, on both backends with the same call sites. Results stay on the
** input's backend; every array argument of one call must live on the same backend and
** device (else CNP_EDEVICE), and a non-NULL stream must belong to that backend/device too.
**
** Conventions
**   - Temporary storage comes from a cnp_workspace (or the cnp_segment_plan itself), created
**     once at setup; the per-step calls below allocate nothing. A workspace serves any
**     number of calls, one at a time (it is not thread-safe).
**   - `s` is the stream the work is ordered on (NULL: the backend's default stream). On the
**     host backend every call is synchronous. Calls that return a count to host memory
**     (compact, segment_boundaries) synchronize `s` on CUDA before returning.
**   - Results are deterministic: the same inputs give bit-identical outputs run to run and
**     independently of the number of host threads, with one exception: floating-point
**     segment sums over unsorted keys may split the rows between host threads, and then
**     depend on the thread count (see cnp_segment_plan_sum).
**
** Row axis ("the axis of extent N") for arrays that travel with a mask or with keys:
**   an array of ndim >= 1 is moved along axis 0 when shape[0] == N, otherwise along its
**   last axis when shape[ndim-1] == N (component-major fields such as v : f64[3, N]);
**   anything else is CNP_ESHAPE. So a square (N, N) array moves along axis 0; to move a
**   component-major square array along its last axis, pass each row as a 1-D slice. Arrays
**   must be C- or F-contiguous (CNP_ELAYOUT otherwise); any dtype. 0-d arrays are rejected.
**   "Rows" below are the entries along that axis.
*/
#ifndef CNP_ALGO_H
#define CNP_ALGO_H

#include "cnp/cnp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------
** Workspace: temporary storage for compact/sort/segment_boundaries, sized once.
**   capacity   largest row count N any call will see.
**   key_limit  largest exclusive key bound a sort will be given (e.g. n_cells), or 0. With
**              it, sort_by_key can use a one-pass counting sort with key_limit buckets; the
**              workspace then holds a histogram of key_limit entries per host thread.
**   row_bytes  largest row size in bytes of any value or compacted array (k * itemsize for
**              an (N, k) array; itemsize for component-major). 0 means 16. Bigger rows still
**              work, a component at a time.
** The workspace binds to (backend, device). Host: about capacity * (32 + row_bytes) bytes
** plus the histograms (max(key_limit, 65536) int64 per thread). CUDA without a usable
** device: CNP_EUNAVAILABLE with the cached reason (cnp_cuda_available); in a build without
** CUDA: CNP_EUNSUPPORTED. The same holds for cnp_segment_plan_create.
*/
typedef struct cnp_workspace cnp_workspace;

cnp_status cnp_workspace_create(cnp_workspace **out, cnp_backend backend, int device,
                                int64_t capacity, int64_t key_limit, size_t row_bytes);
cnp_status cnp_workspace_destroy(cnp_workspace *ws);       /* NULL is a no-op */
/* Bytes of temporary storage the workspace holds (for reports). */
cnp_status cnp_workspace_bytes(const cnp_workspace *ws, size_t *bytes);

/* ---------------------------------------------------------------------------------------
** Compaction. mask: bool[N] (1-D, contiguous; any nonzero byte is true). Moves the rows
** whose mask is true to the front of every array, in place and stable (relative order
** kept), and stores their count in *n_out (host memory). Rows past n are unspecified.
** arrays: n_arrays views (n_arrays may be 0: then only the count is computed), mixed
** dtypes and shapes (N,), (N, k...), (k..., N) — see "Row axis" above. The arrays must not
** overlap each other or the mask (CNP_EALIAS). N <= workspace capacity (CNP_EOVERFLOW).
**
**   cnp_array arrs[3] = {x, v, w};                  x: f64[N], v: f64[3, N], w: f64[N, 2]
**   int64_t n;
**   cnp_compact_by_mask(&alive, arrs, 3, &n, ws, stream);
*/
cnp_status cnp_compact_by_mask(const cnp_array *mask, const cnp_array *arrays, int n_arrays,
                               int64_t *n_out, cnp_workspace *ws, cnp_stream *s);

/* ---------------------------------------------------------------------------------------
** Stable sort by key (LSD radix / counting sort, never a comparison sort).
** keys: int32, int64 or uint64 [N], 1-D contiguous; sorted in place (ascending; signed keys
** in signed order). order: optional (NULL to skip) int64 [N] 1-D contiguous, receives the
** permutation: sorted keys[i] == original keys[order[i]]. values: n_values arrays (see "Row
** axis"), permuted in place alike. key_limit: 0 if unknown (the key range is then measured
** each call), else the caller promises 0 <= key < key_limit (checked: CNP_ERANGE with the
** offending index and value; the arrays are then left unchanged). Keys that are already
** sorted cost one read; nearly sorted keys with a known range cost one counting pass.
** N <= workspace capacity. No argument may overlap another (CNP_EALIAS).
**
**   cnp_array vals[2] = {x, v};
**   cnp_sort_by_key(&cell, &order, vals, 2, n_cells, ws, stream);
*/
cnp_status cnp_sort_by_key(cnp_array *keys, cnp_array *order, const cnp_array *values,
                           int n_values, int64_t key_limit, cnp_workspace *ws,
                           cnp_stream *s);

/* ---------------------------------------------------------------------------------------
** Dense cell offsets. sorted_cells: int32 or int64 [N], 1-D contiguous, non-decreasing,
** each in [0, n_cells). offsets: int64 [n_cells + 1], 1-D contiguous; cell k owns rows
** [offsets[k], offsets[k+1]). An unsorted input is CNP_EORDER and an id out of range is
** CNP_ERANGE; the message names the first offending index and its value(s), and offsets is
** then partly written (docs/algorithms.md). ws is optional
** (may be NULL; on CUDA, calls without one share a device scratch and run one at a time).
*/
cnp_status cnp_cell_offsets(const cnp_array *sorted_cells, int64_t n_cells,
                            cnp_array *offsets, cnp_workspace *ws, cnp_stream *s);

/* ---------------------------------------------------------------------------------------
** Runs of equal keys. sorted_keys: int32, int64 or uint64 [N], 1-D contiguous (negative
** ids and uint64 Morton keys are fine; the input need not be sorted: each maximal run of
** equal adjacent keys is one segment, so sorted input gives unique keys). Outputs, 1-D
** contiguous with capacity >= N: unique_keys (same dtype as the keys), starts and stops
** (int64; run j is [starts[j], stops[j])). *count (host) receives the number of runs.
** unique_keys, starts or stops may be NULL when not wanted.
*/
cnp_status cnp_segment_boundaries(const cnp_array *sorted_keys, cnp_array *unique_keys,
                                  cnp_array *starts, cnp_array *stops, int64_t *count,
                                  cnp_workspace *ws, cnp_stream *s);

/* ---------------------------------------------------------------------------------------
** Segment plans: per-segment sums over a key array snapshot.
**   create  allocates for up to `capacity` rows and `n_segments` segments, on (backend,
**           device).
**   build   snapshots and validates keys (int32 or int64 [N], 1-D contiguous, N <=
**           capacity, need not be sorted): rows with a negative key are dropped, a key >=
**           n_segments is CNP_ERANGE (message: index and value; the plan is then unbuilt).
**           Sorted keys with none dropped make sum one sequential pass over values.
**   sum     values: [N, k...] (N = rows at build; trailing component dims, C-contiguous).
**           Overwrites out: [n_segments, k...] C-contiguous, reducing all components in one
**           pass. Output dtype: float32/float64/complex64/complex128 as the input; bool and
**           integer -> float64; float16 -> float16, accumulated in float32. Accumulation is
**           in the output type otherwise (double for integers). Order of addition (host):
**           each segment in row order, except with the row split: unsorted keys (or rows
**           dropped), T > 1 host threads and n_segments * g <= N / 2, where g = min(k,
**           4, (capacity / 2) / n_segments) with k the scalars per row (complex: 2 per
**           element). Then rows [N*t/T, N*(t+1)/T) are summed in row order from zero by
**           thread t, and the T partial sums are added in thread order. T is the number of
**           OpenMP threads (capped by that at create), or 1 when N < 32768. So results are
**           bit-identical run to run for a given T; with T = 1 they are the row-order sums.
**           Wrong shape -> CNP_ESHAPE, wrong dtype -> CNP_EDTYPE,
**           non-contiguous -> CNP_ELAYOUT, out overlapping values -> CNP_EALIAS, sum before
**           build -> CNP_ESTATE, arrays on another backend/device -> CNP_EDEVICE.
**
**   cnp_segment_plan *dep;
**   cnp_segment_plan_create(&dep, CNP_BACKEND_HOST, 0, N, n_cells);    setup
**   cnp_segment_plan_build(dep, &cell, s);                             each step
**   cnp_segment_plan_sum(dep, &w, &rho, s);
*/
typedef struct cnp_segment_plan cnp_segment_plan;

cnp_status cnp_segment_plan_create(cnp_segment_plan **out, cnp_backend backend, int device,
                                   int64_t capacity, int64_t n_segments);
cnp_status cnp_segment_plan_destroy(cnp_segment_plan *plan);   /* NULL is a no-op */
cnp_status cnp_segment_plan_build(cnp_segment_plan *plan, const cnp_array *keys,
                                  cnp_stream *s);
cnp_status cnp_segment_plan_sum(cnp_segment_plan *plan, const cnp_array *values,
                                cnp_array *out, cnp_stream *s);
/* Rows kept by the last build (keys >= 0), and rows it saw. */
cnp_status cnp_segment_plan_rows(const cnp_segment_plan *plan, int64_t *n_kept,
                                 int64_t *n_rows);
/* The dtype sum writes for values of dtype t (the rule above). */
cnp_dtype  cnp_segment_sum_dtype(cnp_dtype t);

/* One-off sum: creates a plan, builds, sums, destroys it. Allocates, so keep it out of
** timestep loops. Same rules as the plan calls; n_segments > 0 or 0 with an empty out. */
cnp_status cnp_segment_sum(const cnp_array *values, const cnp_array *keys,
                           int64_t n_segments, cnp_array *out, cnp_stream *s);

/* ---------------------------------------------------------------------------------------
** float16 helpers (IEEE binary16 bits in a uint16_t; round to nearest even, NaN kept).
*/
float    cnp_half_to_float(uint16_t h);
uint16_t cnp_float_to_half(float f);

/* ---------------------------------------------------------------------------------------
** Compaction with the count left on the device (CUDA graphs: no host synchronization).
** As cnp_compact_by_mask, but the number of kept rows is written into `count`, an int64[1]
** array on the mask's backend and device (device memory on CUDA, written by a kernel on
** `s`, so later work on `s` may read it; host memory on the host backend, where the call
** is synchronous). `count` must not overlap the mask or the arrays (CNP_EALIAS). On CUDA
** the call only enqueues work (no host synchronization), so it may be captured into a
** CUDA graph; errors found on the device are not reported.
*/
cnp_status cnp_compact_by_mask_device_count(const cnp_array *mask, const cnp_array *arrays,
                                            int n_arrays, cnp_array *count,
                                            cnp_workspace *ws, cnp_stream *s);

/* ---------------------------------------------------------------------------------------
** Sort and segment plans over a row count held on the device (CUDA graphs, continued).
** `count` is an int64[1] array on the keys' backend and device holding n, the number of
** leading rows that take part (typically the count a device-count compaction wrote). The
** arrays themselves have N >= n rows (N <= capacity; typically the capacity). On CUDA the
** work is sized by N, n is read only by kernels (no host synchronization, nothing
** allocated), so the calls may be captured into a CUDA graph; a count outside [0, N] is
** clamped there. On the host backend the calls are synchronous, n is read from host
** memory and must lie in [0, N] (CNP_ERANGE otherwise).
**
** cnp_sort_by_key_device_count: as cnp_sort_by_key for rows [0, n): sorted stably by key,
**   `order` (int64 [N], optional) receives the permutation (order[i] = i for i >= n), the
**   values follow. Rows [n, N) are left as they were. key_limit 0: the full key range
**   (CUDA: a radix sort over all key bits). key_limit > 0: the caller expects 0 <= key <
**   key_limit for rows [0, n) and the radix sort covers only the bits of key_limit + 2. On
**   the host backend a key outside is CNP_ERANGE (arrays unchanged). On CUDA it is not
**   reported and the sort stays exact: rows with a negative key or one >= key_limit are
**   sorted by their full keys afterwards by one thread block (in shared memory up to 2048
**   such rows on each side, else by slower merge passes), so the hint costs time only when
**   it is wrong.
**
**   cnp_sort_by_key_device_count(&cell, NULL, vals, 2, 0, &d_count, ws, stream);
*/
cnp_status cnp_sort_by_key_device_count(cnp_array *keys, cnp_array *order,
                                        const cnp_array *values, int n_values,
                                        int64_t key_limit, const cnp_array *count,
                                        cnp_workspace *ws, cnp_stream *s);

/* cnp_segment_plan_build_device_count: as cnp_segment_plan_build over rows [0, n) of keys
**   (int32 or int64 [N], N <= plan capacity); rows [n, N) are dropped like negative keys.
**   The plan then describes N rows: cnp_segment_plan_sum takes values of N rows (rows past
**   n are never read) and is itself capture-safe on CUDA (it reads the plan's offsets on
**   the device, never synchronizes). A key >= n_segments among rows [0, n) is CNP_ERANGE on
**   the host backend; on CUDA it is not reported and the row is dropped. On CUDA the plan
**   always keeps a permutation (one radix sort over N rows of the bits of n_segments) and
**   cnp_segment_plan_rows reports n_kept = -1 (the kept count stays on the device); on the
**   host backend n_kept is the rows kept.
*/
cnp_status cnp_segment_plan_build_device_count(cnp_segment_plan *plan, const cnp_array *keys,
                                               const cnp_array *count, cnp_stream *s);

/* cnp_segment_plan_build_sorted_device_count: as cnp_segment_plan_build_device_count for
**   keys the caller has sorted over rows [0, n) (cnpc emits it right after a sort by the
**   same key, with nothing writing the key in between). On CUDA the plan then needs no sort
**   and no permutation: its offsets come from binary searches over the sorted keys, and the
**   sums read each segment's rows in place. Keys that are not sorted give unspecified sums
**   on CUDA (never an access outside the arrays). On the host backend the build is the
**   same as cnp_segment_plan_build_device_count (it detects sorted keys itself).
*/
cnp_status cnp_segment_plan_build_sorted_device_count(cnp_segment_plan *plan,
                                                      const cnp_array *keys,
                                                      const cnp_array *count, cnp_stream *s);

/* ---------------------------------------------------------------------------------------
** Scans and reductions, deterministic on both backends (the orders: docs/algorithms.md).
**
** cnp_scan: prefix sums along the element axis, every component at once.
**   in:    int32, int64, uint64, float16, float32 or float64; 1-D contiguous (N,) (a
**          strided or stride-0 vector is CNP_ELAYOUT), or a component-major C-order
**          (k..., N) array (each component a contiguous run of N elements), or its
**          F-order twin (N, k...). The element axis is the last axis of a C-order
**          array, axis 0 of an F-order one, the axis of extent > 1 of an array that is both
**          (a (N, 1) column scans along N). Anything else is CNP_ELAYOUT.
**   out:   the same dtype, shape and strides (CNP_EDTYPE / CNP_ESHAPE / CNP_ELAYOUT), on the
**          same backend and device; out may be in itself (in place: the very same view),
**          any other overlap is CNP_EALIAS.
**   kind:  CNP_SCAN_INCLUSIVE  out[i] = in[0] + ... + in[i]
**          CNP_SCAN_EXCLUSIVE  out[i] = in[0] + ... + in[i-1]   (out[0] = 0)
**   Integers wrap (two's complement, the element width). float16 accumulates in float32
**   and rounds each output to float16. Floating-point sums follow the fixed order of
**   docs/algorithms.md: bit-identical run to run and, on the host, for any thread count.
**
** cnp_reduce: one value of a 1-D contiguous [N] array into out, a 1-element 1-D array on
**   the same backend and device (device memory on CUDA: it stays there for later kernels
**   and graphs; read it back with cnp_copy after synchronizing).
**   CNP_REDUCE_SUM    in: int32, int64, uint64, float16, float32, float64; out: the same
**                     dtype. Integers wrap; float16 accumulates in float32. Empty: 0.
**   CNP_REDUCE_MIN,   same dtypes. Any NaN among the elements gives the quiet NaN
**   CNP_REDUCE_MAX    (0x7e00, 0x7fc00000, 0x7ff8000000000000: NaN propagates). Empty: the
**                     operation's identity: +inf / -inf for floats, the type's largest /
**                     smallest value for integers. Of -0.0 and +0.0 tied as the extreme,
**                     either may be returned (always the same one for the same input).
**   CNP_REDUCE_COUNT  elements that are nonzero (bool: any nonzero byte; floats: != 0, so
**                     NaN counts and -0.0 does not); in: bool or any dtype above; out:
**                     int64.
**   A bool in with another operation, or a complex dtype, is CNP_EDTYPE.
**
** Both:
**   count  NULL: all N rows. Else an int64[1] array on the same backend and device holding
**          n, the number of leading rows that take part (the count a device-count
**          compaction wrote): on CUDA n is read only by kernels (clamped to [0, N]), so the
**          calls never synchronize the host and may be captured into a CUDA graph; on the
**          host it must lie in [0, N] (CNP_ERANGE). A scan leaves rows [n, N) of out as they
**          were; a reduction covers rows [0, n).
**   ws     a workspace with capacity >= N on the same backend and device (CNP_EDEVICE /
**          CNP_EOVERFLOW otherwise). Optional (NULL) on the host backend, which needs no
**          temporary storage; required on CUDA (CNP_EINVAL), where it holds the per-chunk
**          partials (cnp_workspace_bytes includes them). Nothing is allocated per call.
**   No data moves between host and device memory, so nothing is reported to transfer
**   accounting. On CUDA the work is enqueued on s and the calls return at once.
**
**   cnp_scan(&rho, &e, CNP_SCAN_INCLUSIVE, NULL, ws, s);         1D Gauss law: E = cumsum
**   cnp_reduce(&q, CNP_REDUCE_SUM, &qtot, &n_alive, ws, s);       qtot: f64[1] on the device
*/
typedef enum cnp_scan_kind {
  CNP_SCAN_INCLUSIVE = 0,
  CNP_SCAN_EXCLUSIVE = 1
} cnp_scan_kind;

typedef enum cnp_reduce_op {
  CNP_REDUCE_SUM = 0,
  CNP_REDUCE_MIN = 1,
  CNP_REDUCE_MAX = 2,
  CNP_REDUCE_COUNT = 3
} cnp_reduce_op;

cnp_status cnp_scan(const cnp_array *in, cnp_array *out, cnp_scan_kind kind,
                    const cnp_array *count, cnp_workspace *ws, cnp_stream *s);
cnp_status cnp_reduce(const cnp_array *in, cnp_reduce_op op, cnp_array *out,
                      const cnp_array *count, cnp_workspace *ws, cnp_stream *s);
/* The dtype cnp_reduce writes for op over dtype t (int64 for counts, t otherwise). */
cnp_dtype  cnp_reduce_dtype(cnp_reduce_op op, cnp_dtype t);

#ifdef __cplusplus
}
#endif

#endif /* CNP_ALGO_H */
