/*
** bench_gpu.cu — GPU algorithm throughput: each libcnp algorithm's effective bandwidth as a
** fraction of the device's copy bandwidth (cudaMemcpy device-to-device, measured in the
** same run), and its time relative to the equivalent CUB call where one exists.
**
**   bench_gpu [log2 N]        (default 24: 16M rows)
**
** Effective bandwidth = the bytes an ideal implementation must move (inputs read once,
** outputs written once) / time. Times are the mean of REPS runs measured with CUDA events;
** inputs are restored before every run, outside the timed region. Never run by ctest.
*/
#include "cnp/cnp.h"
#include "cnp/algo.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_segmented_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(call)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

#define CNP(call)                                                                         \
  do {                                                                                    \
    cnp_status s_ = (call);                                                               \
    if (s_ != CNP_OK) {                                                                   \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cnp_last_error());    \
      exit(1);                                                                            \
    }                                                                                     \
  } while (0)

static const int REPS = 10;

/* Mean milliseconds of `run` over REPS, calling `reset` (untimed) before each. */
template <typename Reset, typename Run> static double time_ms(Reset reset, Run run)
{
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  reset();
  run();                                         /* warm-up */
  double total = 0;
  for (int r = 0; r < REPS; r++) {
    reset();
    CK(cudaEventRecord(a, 0));
    run();
    CK(cudaEventRecord(b, 0));
    CK(cudaEventSynchronize(b));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, a, b));
    total += ms;
  }
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return total / REPS;
}

static double g_copy_gbs;

static void report(const char *name, double bytes, double ms, double cub_ms)
{
  double gbs = bytes / (ms * 1e-3) / 1e9;
  if (cub_ms > 0)
    printf("%-22s %9.3f ms %8.1f GB/s  %5.1f%% of copy  %5.2fx CUB time\n", name, ms, gbs,
           100.0 * gbs / g_copy_gbs, ms / cub_ms);
  else
    printf("%-22s %9.3f ms %8.1f GB/s  %5.1f%% of copy  (no CUB equivalent)\n", name, ms, gbs,
           100.0 * gbs / g_copy_gbs);
}

static void *dmalloc(size_t bytes)
{
  void *p = NULL;
  CK(cudaMalloc(&p, bytes ? bytes : 1));
  return p;
}

static cnp_array wrap(void *p, cnp_dtype t, int64_t n)
{
  cnp_array a;
  int64_t shape[1] = {n};
  CNP(cnp_array_wrap(&a, p, CNP_BACKEND_CUDA, 0, t, 1, shape, NULL));
  return a;
}

int main(int argc, char **argv)
{
  int lg = argc > 1 ? atoi(argv[1]) : 24;
  int64_t n = (int64_t)1 << lg;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    const char *req = getenv("CNP_REQUIRE_CUDA");
    bool required = req && *req && strcmp(req, "0") != 0;
    printf("%s: no CUDA device\n", required ? "FAILED (CNP_REQUIRE_CUDA is set)" : "SKIP");
    return required ? 1 : 0;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s (sm_%d%d), N = %lld rows, %d reps\n", prop.name, prop.major, prop.minor,
         (long long)n, REPS);

  /* ---- copy bandwidth: read + write of 8N bytes ------------------------------------ */
  size_t xb = (size_t)n * 8;
  double *x = (double *)dmalloc(xb), *x0 = (double *)dmalloc(xb), *xo = (double *)dmalloc(xb);
  double copy_ms = time_ms([] {}, [&] { CK(cudaMemcpy(xo, x0, xb, cudaMemcpyDeviceToDevice)); });
  g_copy_gbs = 2.0 * xb / (copy_ms * 1e-3) / 1e9;
  printf("%-22s %9.3f ms %8.1f GB/s  (reference)\n", "cudaMemcpy D2D", copy_ms, g_copy_gbs);

  /* ---- inputs --------------------------------------------------------------------- */
  std::vector<unsigned char> hmask(n);
  std::vector<int32_t> hkeys(n);
  std::vector<double> hx(n);
  uint64_t s = 88172645463325252ull;
  const int32_t n_cells = 1 << 20;
  for (int64_t i = 0; i < n; i++) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    hmask[i] = (unsigned char)(s % 10 < 9);      /* 90% survive, as in a PIC step */
    hkeys[i] = (int32_t)((s >> 20) % n_cells);
    hx[i] = (double)i;
  }
  unsigned char *mask = (unsigned char *)dmalloc(n);
  int32_t *keys = (int32_t *)dmalloc(n * 4), *keys0 = (int32_t *)dmalloc(n * 4);
  int32_t *sorted = (int32_t *)dmalloc(n * 4);
  int64_t *order = (int64_t *)dmalloc(n * 8);
  CK(cudaMemcpy(mask, hmask.data(), n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(keys0, hkeys.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(x0, hx.data(), xb, cudaMemcpyHostToDevice));
  std::sort(hkeys.begin(), hkeys.end());
  CK(cudaMemcpy(sorted, hkeys.data(), n * 4, cudaMemcpyHostToDevice));

  cnp_workspace *ws;
  CNP(cnp_workspace_create(&ws, CNP_BACKEND_CUDA, 0, n, n_cells, 8));
  void *cub_tmp = NULL;
  size_t cub_bytes = 0, need = 0;
  int64_t *cub_n = (int64_t *)dmalloc(8);
  int64_t *iota = (int64_t *)dmalloc(n * 8), *order2 = (int64_t *)dmalloc(n * 8);
  int32_t *keys2 = (int32_t *)dmalloc(n * 4);
  {
    std::vector<int64_t> h(n);
    for (int64_t i = 0; i < n; i++) h[i] = i;
    CK(cudaMemcpy(iota, h.data(), n * 8, cudaMemcpyHostToDevice));
  }
  CK(cub::DeviceSelect::Flagged(NULL, need, x0, mask, xo, cub_n, n));
  cub_bytes = std::max(cub_bytes, need);
  CK(cub::DeviceRadixSort::SortPairs(NULL, need, keys0, keys2, iota, order2, n, 0, 20));
  cub_bytes = std::max(cub_bytes, need);
  CK(cub::DeviceRunLengthEncode::Encode(NULL, need, sorted, keys2, order2, cub_n, n));
  cub_bytes = std::max(cub_bytes, need);
  CK(cub::DeviceSegmentedReduce::Sum(NULL, need, x0, xo, n_cells, order, order + 1));
  cub_bytes = std::max(cub_bytes, need);
  cub_tmp = dmalloc(cub_bytes);

  /* ---- compact_by_mask: read mask + x, write the kept x --------------------------- */
  cnp_array am = wrap(mask, CNP_BOOL, n), ax = wrap(x, CNP_FLOAT64, n);
  int64_t kept = 0;
  auto reset_x = [&] { CK(cudaMemcpy(x, x0, xb, cudaMemcpyDeviceToDevice)); };
  double ms = time_ms(reset_x, [&] { CNP(cnp_compact_by_mask(&am, &ax, 1, &kept, ws, NULL)); });
  double cub_ms = time_ms([] {}, [&] {
    size_t b = cub_bytes;
    CK(cub::DeviceSelect::Flagged(cub_tmp, b, x0, mask, xo, cub_n, n));
    int64_t h;
    CK(cudaMemcpy(&h, cub_n, 8, cudaMemcpyDeviceToHost));     /* the count, as ours */
  });
  report("compact_by_mask f64", (double)n * 9 + (double)kept * 8, ms, cub_ms);

  /* ---- sort_by_key: int32 keys in [0, 2^20) with the permutation ------------------- */
  cnp_array ak = wrap(keys, CNP_INT32, n), ao = wrap(order, CNP_INT64, n);
  auto reset_k = [&] { CK(cudaMemcpy(keys, keys0, n * 4, cudaMemcpyDeviceToDevice)); };
  ms = time_ms(reset_k, [&] { CNP(cnp_sort_by_key(&ak, &ao, NULL, 0, n_cells, ws, NULL)); });
  cub_ms = time_ms([] {}, [&] {
    size_t b = cub_bytes;
    CK(cub::DeviceRadixSort::SortPairs(cub_tmp, b, keys0, keys2, iota, order2, n, 0, 20));
  });
  report("sort_by_key i32+order", (double)n * (4 + 4 + 8), ms, cub_ms);

  /* ---- sort_by_key with a payload: keys + x permuted ------------------------------ */
  ms = time_ms([&] { reset_k(); reset_x(); },
               [&] { CNP(cnp_sort_by_key(&ak, NULL, &ax, 1, n_cells, ws, NULL)); });
  report("sort_by_key i32, f64", (double)n * (4 + 4 + 8 + 8), ms, 0);

  /* ---- cell_offsets: read sorted cells, write n_cells + 1 offsets ----------------- */
  int64_t *offs = (int64_t *)dmalloc(((size_t)n_cells + 1) * 8);
  cnp_array as = wrap(sorted, CNP_INT32, n), aoff = wrap(offs, CNP_INT64, n_cells + 1);
  ms = time_ms([] {}, [&] { CNP(cnp_cell_offsets(&as, n_cells, &aoff, ws, NULL)); });
  report("cell_offsets", (double)n * 4 + (double)(n_cells + 1) * 8, ms, 0);

  /* ---- segment_boundaries: unique keys + starts (CUB: run-length encode) ---------- */
  int32_t *uk = (int32_t *)dmalloc(n * 4);
  int64_t *st = (int64_t *)dmalloc(n * 8), *sp = (int64_t *)dmalloc(n * 8), runs = 0;
  cnp_array auk = wrap(uk, CNP_INT32, n), ast = wrap(st, CNP_INT64, n), asp = wrap(sp, CNP_INT64, n);
  ms = time_ms([] {}, [&] {
    CNP(cnp_segment_boundaries(&as, &auk, &ast, &asp, &runs, ws, NULL));
  });
  cub_ms = time_ms([] {}, [&] {
    size_t b = cub_bytes;
    CK(cub::DeviceRunLengthEncode::Encode(cub_tmp, b, sorted, keys2, order2, cub_n, n));
    int64_t h;
    CK(cudaMemcpy(&h, cub_n, 8, cudaMemcpyDeviceToHost));
  });
  report("segment_boundaries", (double)n * 4 + (double)runs * 20, ms, cub_ms);

  /* ---- segment plan: build on sorted keys, then sum f64 --------------------------- */
  cnp_segment_plan *plan;
  CNP(cnp_segment_plan_create(&plan, CNP_BACKEND_CUDA, 0, n, n_cells));
  double *rho = (double *)dmalloc((size_t)n_cells * 8);
  int64_t so[1] = {n_cells};
  cnp_array arho;
  CNP(cnp_array_wrap(&arho, rho, CNP_BACKEND_CUDA, 0, CNP_FLOAT64, 1, so, NULL));
  cnp_array ax0 = wrap(x0, CNP_FLOAT64, n);
  ms = time_ms([] {}, [&] { CNP(cnp_segment_plan_build(plan, &as, NULL)); });
  report("segment_plan_build", (double)n * 4 + (double)(n_cells + 1) * 8, ms, 0);
  ms = time_ms([] {}, [&] { CNP(cnp_segment_plan_sum(plan, &ax0, &arho, NULL)); });
  cub_ms = time_ms([] {}, [&] {
    size_t b = cub_bytes;
    CK(cub::DeviceSegmentedReduce::Sum(cub_tmp, b, x0, xo, n_cells, offs, offs + 1));
  });
  report("segment_plan_sum f64", (double)n * 8 + (double)n_cells * 8, ms, cub_ms);

  /* ---- longer segments (a warp, then blocks per segment): sorted keys i * S / n ------ */
  for (int64_t rows_per : {512LL, 65536LL}) {
    int64_t ns = n / rows_per;
    if (ns < 1) continue;
    std::vector<int32_t> hk(n);
    for (int64_t i = 0; i < n; i++) hk[i] = (int32_t)(i * ns / n);
    std::vector<int64_t> ho(ns + 1);
    for (int64_t q = 0; q <= ns; q++) ho[q] = (q * n + ns - 1) / ns;   /* first i with key >= q */
    CK(cudaMemcpy(sorted, hk.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(offs, ho.data(), (ns + 1) * 8, cudaMemcpyHostToDevice));
    cnp_segment_plan *pl;
    CNP(cnp_segment_plan_create(&pl, CNP_BACKEND_CUDA, 0, n, ns));
    cnp_array ak2 = wrap(sorted, CNP_INT32, n), ar2;
    int64_t s2[1] = {ns};
    CNP(cnp_array_wrap(&ar2, rho, CNP_BACKEND_CUDA, 0, CNP_FLOAT64, 1, s2, NULL));
    CNP(cnp_segment_plan_build(pl, &ak2, NULL));
    ms = time_ms([] {}, [&] { CNP(cnp_segment_plan_sum(pl, &ax0, &ar2, NULL)); });
    cub_ms = time_ms([] {}, [&] {
      size_t b = cub_bytes;
      CK(cub::DeviceSegmentedReduce::Sum(cub_tmp, b, x0, xo, ns, offs, offs + 1));
    });
    char name[64];
    snprintf(name, sizeof name, "plan_sum f64 %lld/seg", (long long)rows_per);
    report(name, (double)n * 8 + (double)ns * 8, ms, cub_ms);
    cnp_segment_plan_destroy(pl);
  }

  cnp_segment_plan_destroy(plan);
  cnp_workspace_destroy(ws);
  void *bufs[] = {x, x0, xo, mask, keys, keys0, sorted, order, cub_n, iota, order2, keys2,
                  cub_tmp, offs, uk, st, sp, rho};
  for (void *p : bufs) cudaFree(p);
  return 0;
}
