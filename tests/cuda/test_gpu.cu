/*
** test_gpu.cu — GPU tests: cnp/scan.cuh and cnp/atomic.cuh against sequential host
** results, every GPU algorithm against the host backend (statuses, messages and bytes), and
** the kernel catalog's load/launch path.
**
** Without a CUDA device it prints "SKIP: no CUDA device" and exits 77 (ctest: skipped);
** with CNP_REQUIRE_CUDA=1 it fails instead. Compiling this file is itself the nvcc check of
** both device headers.
*/
#include "cnp/cnp.h"
#include "cnp/algo.h"
#include "cnp/catalog.h"

#include <cnp/atomic.cuh>
#include <cnp/scan.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

static int g_checks, g_fails;
static int g_small;                    /* CNP_GPU_SMALL=1: smaller sizes (sanitizer runs) */

/* A problem size, divided by 16 under CNP_GPU_SMALL=1. */
static int64_t sz(int64_t n) { return g_small ? n / 16 + 1 : n; }

#define CHECK(cond, ...)                                                                  \
  do {                                                                                    \
    g_checks++;                                                                           \
    if (!(cond)) {                                                                        \
      g_fails++;                                                                          \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                     \
      fprintf(stderr, __VA_ARGS__);                                                       \
      fputc('\n', stderr);                                                                \
    }                                                                                     \
  } while (0)

#define CK(call)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    CHECK(e_ == cudaSuccess, "%s: %s", #call, cudaGetErrorString(e_));                    \
  } while (0)

/* Deterministic pseudo-random numbers (xorshift64*). */
static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
  g_rng ^= g_rng >> 12;
  g_rng ^= g_rng << 25;
  g_rng ^= g_rng >> 27;
  return g_rng * 0x2545f4914f6cdd1dull;
}

/* ======================================================================================
** scan.cuh
*/

template <typename T>
__global__ void k_block_scan(const T *in, T *incl, T *excl, T *tot, T *tot2)
{
  size_t i = (size_t)blockIdx.x * cnp_block_threads() + cnp_block_thread();
  T x = in[i], total;
  incl[i] = cnp_block_inclusive_sum(x);
  excl[i] = cnp_block_exclusive_sum(x, &total);
  tot[i] = cnp_block_sum(x);
  tot2[i] = total;
}

template <typename T>
__global__ void k_warp_scan(const T *in, T *incl, T *excl, T *tot, unsigned mask)
{
  size_t i = (size_t)blockIdx.x * cnp_block_threads() + cnp_block_thread();
  unsigned lane = cnp_block_thread() & 31u;
  T x = in[i];
  if (mask == 0) {
    incl[i] = cnp_warp_inclusive_sum(x);
    excl[i] = cnp_warp_exclusive_sum(x);
    tot[i] = cnp_warp_sum(x);
  } else if ((mask >> lane) & 1u) {
    incl[i] = cnp_warp_inclusive_sum_mask(mask, x);
    excl[i] = cnp_warp_exclusive_sum_mask(mask, x);
    tot[i] = cnp_warp_sum_mask(mask, x);
  }
}

template <typename T> struct DevBuf {
  T *p = nullptr;
  size_t n = 0;
  explicit DevBuf(size_t n_) : n(n_) { CK(cudaMalloc((void **)&p, (n ? n : 1) * sizeof(T))); }
  ~DevBuf() { cudaFree(p); }
  void put(const std::vector<T> &h) { CK(cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice)); }
  std::vector<T> get() const
  {
    std::vector<T> h(n);
    CK(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
};

template <typename T>
static void test_block_scan(const char *tname, dim3 block, unsigned blocks)
{
  unsigned bt = block.x * block.y * block.z;
  size_t n = (size_t)bt * blocks;
  std::vector<T> in(n);
  for (size_t i = 0; i < n; i++) in[i] = (T)(rnd() % 4);
  DevBuf<T> d_in(n), d_incl(n), d_excl(n), d_tot(n), d_tot2(n);
  d_in.put(in);
  k_block_scan<T><<<blocks, block>>>(d_in.p, d_incl.p, d_excl.p, d_tot.p, d_tot2.p);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<T> incl = d_incl.get(), excl = d_excl.get(), tot = d_tot.get(), tot2 = d_tot2.get();
  int bad = 0;
  for (unsigned b = 0; b < blocks; b++) {
    T run = 0, sum = 0;
    for (unsigned t = 0; t < bt; t++) sum += in[b * bt + t];
    for (unsigned t = 0; t < bt && bad < 3; t++) {
      size_t i = (size_t)b * bt + t;
      bool ok = excl[i] == run && incl[i] == run + in[i] && tot[i] == sum && tot2[i] == sum;
      if (!ok) bad++;
      CHECK(ok, "block scan %s block (%u,%u,%u) thread %u: incl %g excl %g tot %g/%g, want "
            "%g %g %g", tname, block.x, block.y, block.z, t, (double)incl[i], (double)excl[i],
            (double)tot[i], (double)tot2[i], (double)(run + in[i]), (double)run, (double)sum);
      run += in[i];
    }
  }
}

template <typename T>
static void test_warp_scan(const char *tname, dim3 block, unsigned mask)
{
  unsigned bt = block.x * block.y * block.z, blocks = 2;
  size_t n = (size_t)bt * blocks;
  std::vector<T> in(n), zero(n, (T)0);
  for (size_t i = 0; i < n; i++) in[i] = (T)(1 + rnd() % 5);
  DevBuf<T> d_in(n), d_incl(n), d_excl(n), d_tot(n);
  d_in.put(in);
  d_incl.put(zero);
  d_excl.put(zero);
  d_tot.put(zero);
  k_warp_scan<T><<<blocks, block>>>(d_in.p, d_incl.p, d_excl.p, d_tot.p, mask);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<T> incl = d_incl.get(), excl = d_excl.get(), tot = d_tot.get();
  int bad = 0;
  for (unsigned b = 0; b < blocks; b++) {
    for (unsigned w0 = 0; w0 < bt; w0 += 32) {
      unsigned lanes = bt - w0 < 32 ? bt - w0 : 32;
      unsigned m = mask ? mask : (lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u);
      T sum = 0, run = 0;
      for (unsigned l = 0; l < lanes; l++)
        if ((m >> l) & 1u) sum += in[(size_t)b * bt + w0 + l];
      for (unsigned l = 0; l < lanes && bad < 3; l++) {
        if (!((m >> l) & 1u)) continue;
        size_t i = (size_t)b * bt + w0 + l;
        bool ok = excl[i] == run && incl[i] == run + in[i] && tot[i] == sum;
        if (!ok) bad++;
        CHECK(ok, "warp scan %s block (%u,%u,%u) mask %08x thread %u: incl %g excl %g tot "
              "%g, want %g %g %g", tname, block.x, block.y, block.z, mask, w0 + l,
              (double)incl[i], (double)excl[i], (double)tot[i], (double)(run + in[i]),
              (double)run, (double)sum);
        run += in[i];
      }
    }
  }
}

template <typename T> static void test_scans(const char *tname)
{
  const dim3 shapes[] = {dim3(128), dim3(100), dim3(8, 4, 3), dim3(7, 5, 3), dim3(1024),
                         dim3(32, 32), dim3(1), dim3(33), dim3(2, 3, 5)};
  for (const dim3 &s : shapes) {
    test_block_scan<T>(tname, s, 3);
    test_warp_scan<T>(tname, s, 0);
  }
  const unsigned masks[] = {0xffffffffu, 0x55555555u, 0xaaaaaaaau, 0x80000001u, 0x0000ff00u,
                            0x00000001u, 0x7fffffffu, 0x9c3a51e7u};
  for (unsigned m : masks) {
    test_warp_scan<T>(tname, dim3(64), m);
    test_warp_scan<T>(tname, dim3(8, 4, 2), m);
  }
}

/* ======================================================================================
** atomic.cuh
*/

__global__ void k_atomics(int *i32, unsigned *u32, long long *i64, unsigned long long *u64,
                          float *f32, double *f64, long *l64, int *olds, long long *wrap,
                          double *g2, int *g3, int n)
{
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  olds[t] = cnp_atomic_add(i32, 1);
  cnp_atomic_add(u32, 2u);
  cnp_atomic_add(i64, -3LL);
  cnp_atomic_add(u64, 5ull);
  cnp_atomic_add(f32, 0.5f);
  cnp_atomic_add(f64, 0.25);
  cnp_atomic_add(l64, 7L);
  if (t == 0) {
    wrap[1] = cnp_atomic_add(&wrap[0], 1LL);
    wrap[3] = cnp_atomic_add(&wrap[2], -1LL);
  }
  cnp_atomic_add_2d(g2, 4, t % 3, t % 4, 1.0);
  cnp_atomic_add_3d(g3, 3, 2, t % 2, t % 3, t % 2, 1);
}

static void test_atomics(void)
{
  const int n = 1000;
  DevBuf<int> i32(1), olds(n), g3(12);
  DevBuf<unsigned> u32(1);
  DevBuf<long long> i64(1), wrap(4);
  DevBuf<unsigned long long> u64(1);
  DevBuf<float> f32(1);
  DevBuf<double> f64(1), g2(12);
  DevBuf<long> l64(1);
  i32.put({0});
  u32.put({0});
  i64.put({0});
  u64.put({0});
  f32.put({0});
  f64.put({0});
  l64.put({0});
  wrap.put({LLONG_MAX, 0, LLONG_MIN, 0});
  g2.put(std::vector<double>(12, 0.0));
  g3.put(std::vector<int>(12, 0));
  k_atomics<<<(n + 127) / 128, 128>>>(i32.p, u32.p, i64.p, u64.p, f32.p, f64.p, l64.p, olds.p,
                                      wrap.p, g2.p, g3.p, n);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CHECK(i32.get()[0] == n, "int sum %d", i32.get()[0]);
  CHECK(u32.get()[0] == 2u * n, "unsigned sum %u", u32.get()[0]);
  CHECK(i64.get()[0] == -3LL * n, "long long sum %lld", i64.get()[0]);
  CHECK(u64.get()[0] == 5ull * n, "unsigned long long sum %llu", u64.get()[0]);
  CHECK(f32.get()[0] == 0.5f * n, "float sum %g", (double)f32.get()[0]);
  CHECK(f64.get()[0] == 0.25 * n, "double sum %g", f64.get()[0]);
  CHECK(l64.get()[0] == 7L * n, "long sum %ld", l64.get()[0]);
  std::vector<int> o = olds.get(), seen(n, 0);
  bool perm = true;
  for (int v : o) {
    if (v < 0 || v >= n || seen[v]++) perm = false;
  }
  CHECK(perm, "returned old values are not a permutation of 0..%d", n - 1);
  std::vector<long long> w = wrap.get();
  CHECK(w[0] == LLONG_MIN && w[1] == LLONG_MAX, "wrap up: %lld (old %lld)", w[0], w[1]);
  CHECK(w[2] == LLONG_MAX && w[3] == LLONG_MIN, "wrap down: %lld (old %lld)", w[2], w[3]);
  std::vector<double> h2(12, 0.0);
  std::vector<int> h3(12, 0);
  for (int t = 0; t < n; t++) {
    h2[(t % 3) * 4 + t % 4] += 1.0;
    h3[((t % 2) * 3 + t % 3) * 2 + t % 2] += 1;
  }
  CHECK(g2.get() == h2, "2-D indexed adds differ");
  CHECK(g3.get() == h3, "3-D indexed adds differ");
}

/* ======================================================================================
** Algorithms: device results against the host backend's.
*/

struct Pair {                          /* the same data on both backends */
  cnp_array h, d;
  void *hp = nullptr, *dp = nullptr;
  size_t bytes = 0;
};

static void pair_make(Pair &p, cnp_dtype t, int ndim, const int64_t *shape, const void *data)
{
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  p.bytes = (size_t)n * cnp_dtype_size(t);
  p.hp = calloc(p.bytes ? p.bytes : 1, 1);
  CK(cudaMalloc(&p.dp, p.bytes ? p.bytes : 1));
  if (data && p.bytes) {
    memcpy(p.hp, data, p.bytes);
    CK(cudaMemcpy(p.dp, data, p.bytes, cudaMemcpyHostToDevice));
  } else {
    CK(cudaMemset(p.dp, 0, p.bytes ? p.bytes : 1));
  }
  /* Both went to the legacy default stream, and a pageable cudaMemcpy may return before its
  ** DMA lands: work on a cudaStreamNonBlocking stream (test_dc_graph) is not ordered after it. */
  CK(cudaDeviceSynchronize());
  CHECK(cnp_array_wrap(&p.h, p.hp, CNP_BACKEND_HOST, 0, t, ndim, shape, NULL) == CNP_OK, "%s",
        cnp_last_error());
  CHECK(cnp_array_wrap(&p.d, p.dp, CNP_BACKEND_CUDA, 0, t, ndim, shape, NULL) == CNP_OK, "%s",
        cnp_last_error());
}

static void pair_free(Pair &p)
{
  free(p.hp);
  cudaFree(p.dp);
  p.hp = p.dp = nullptr;
}

/* Compare the first `bytes` bytes (all when SIZE_MAX) of both sides. */
static void pair_same(const Pair &p, const char *what, size_t bytes = SIZE_MAX)
{
  if (bytes > p.bytes) bytes = p.bytes;
  std::vector<unsigned char> d(bytes ? bytes : 1);
  CK(cudaMemcpy(d.data(), p.dp, bytes, cudaMemcpyDeviceToHost));
  size_t i = 0;
  while (i < bytes && d[i] == ((unsigned char *)p.hp)[i]) i++;
  CHECK(i == bytes, "%s: device and host differ at byte %zu of %zu", what, i, bytes);
}

/* Status and message of a host call, to compare with the device call. */
struct Outcome {
  cnp_status st;
  char msg[512];
};
static Outcome outcome(cnp_status st)
{
  Outcome o;
  o.st = st;
  snprintf(o.msg, sizeof o.msg, "%s", st == CNP_OK ? "" : cnp_last_error());
  return o;
}
static void same_outcome(const Outcome &h, const Outcome &d, const char *what)
{
  CHECK(h.st == d.st && strcmp(h.msg, d.msg) == 0, "%s: host %s '%s', device %s '%s'", what,
        cnp_status_name(h.st), h.msg, cnp_status_name(d.st), d.msg);
}

struct Workspaces {
  cnp_workspace *h = nullptr, *d = nullptr;
  Workspaces(int64_t cap, int64_t key_limit, size_t row_bytes)
  {
    CHECK(cnp_workspace_create(&h, CNP_BACKEND_HOST, 0, cap, key_limit, row_bytes) == CNP_OK,
          "%s", cnp_last_error());
    CHECK(cnp_workspace_create(&d, CNP_BACKEND_CUDA, 0, cap, key_limit, row_bytes) == CNP_OK,
          "%s", cnp_last_error());
  }
  ~Workspaces()
  {
    cnp_workspace_destroy(h);
    cnp_workspace_destroy(d);
  }
};

static void test_compact(int64_t n, int density_pct)
{
  std::vector<unsigned char> mask(n);
  std::vector<double> x(n), v(3 * n);
  std::vector<float> w(2 * n);
  std::vector<int64_t> c(n);
  std::vector<unsigned char> b(n);
  std::vector<uint16_t> hlf(n);
  for (int64_t i = 0; i < n; i++) {
    mask[i] = (unsigned char)((int)(rnd() % 100) < density_pct ? 1 + rnd() % 3 : 0);
    x[i] = (double)i;
    for (int k = 0; k < 3; k++) v[k * n + i] = (double)(k * 1000000 + i);
    w[2 * i] = (float)i;
    w[2 * i + 1] = -(float)i;
    c[i] = (int64_t)(rnd() % 1000);
    b[i] = (unsigned char)(i & 1);
    hlf[i] = (uint16_t)rnd();
  }
  Pair pm, px, pv, pw, pc, pb, ph;
  int64_t s1[1] = {n}, s3n[2] = {3, n}, sn2[2] = {n, 2};
  pair_make(pm, CNP_BOOL, 1, s1, mask.data());
  pair_make(px, CNP_FLOAT64, 1, s1, x.data());
  pair_make(pv, CNP_FLOAT64, 2, s3n, v.data());
  pair_make(pw, CNP_FLOAT32, 2, sn2, w.data());
  pair_make(pc, CNP_INT64, 1, s1, c.data());
  pair_make(pb, CNP_BOOL, 1, s1, b.data());
  pair_make(ph, CNP_FLOAT16, 1, s1, hlf.data());
  cnp_array ha[6] = {px.h, pv.h, pw.h, pc.h, pb.h, ph.h};
  cnp_array da[6] = {px.d, pv.d, pw.d, pc.d, pb.d, ph.d};
  Workspaces ws(n, 0, 0);
  int64_t nh = -1, nd = -2;
  Outcome oh = outcome(cnp_compact_by_mask(&pm.h, ha, 6, &nh, ws.h, NULL));
  Outcome od = outcome(cnp_compact_by_mask(&pm.d, da, 6, &nd, ws.d, NULL));
  same_outcome(oh, od, "compact");
  CHECK(nh == nd, "compact count: host %lld device %lld", (long long)nh, (long long)nd);
  pair_same(px, "compact x", (size_t)nh * 8);
  for (int k = 0; k < 3; k++) {               /* component-major: each row of (3, N) */
    std::vector<double> dv(nh > 0 ? nh : 1);
    CK(cudaMemcpy(dv.data(), (double *)pv.dp + k * n, (size_t)nh * 8, cudaMemcpyDeviceToHost));
    CHECK(nh == 0 || memcmp(dv.data(), (double *)pv.hp + k * n, (size_t)nh * 8) == 0,
          "compact v component %d differs", k);
  }
  pair_same(pw, "compact w (N, 2)", (size_t)nh * 8);
  pair_same(pc, "compact cell", (size_t)nh * 8);
  pair_same(pb, "compact bool", (size_t)nh);
  pair_same(ph, "compact float16", (size_t)nh * 2);
  /* zero arrays: only the count */
  Outcome o2 = outcome(cnp_compact_by_mask(&pm.d, NULL, 0, &nd, ws.d, NULL));
  CHECK(o2.st == CNP_OK && nd == nh, "count-only compact: %s %lld", o2.msg, (long long)nd);
  Pair *all[] = {&pm, &px, &pv, &pw, &pc, &pb, &ph};
  for (Pair *p : all) pair_free(*p);
}

template <typename K>
static void test_sort(cnp_dtype kt, int64_t n, int64_t key_limit, std::vector<K> keys,
                      const char *what)
{
  std::vector<double> x(n), v(3 * n);
  std::vector<int32_t> y(n);
  for (int64_t i = 0; i < n; i++) {
    x[i] = (double)i * 0.5;
    y[i] = (int32_t)(i * 7);
    for (int k = 0; k < 3; k++) v[k * n + i] = (double)(k * 1000000 + i);
  }
  Pair pk, po, px, pv, py;
  int64_t s1[1] = {n}, s3n[2] = {3, n};
  pair_make(pk, kt, 1, s1, keys.data());
  pair_make(po, CNP_INT64, 1, s1, NULL);
  pair_make(px, CNP_FLOAT64, 1, s1, x.data());
  pair_make(pv, CNP_FLOAT64, 2, s3n, v.data());
  pair_make(py, CNP_INT32, 1, s1, y.data());
  cnp_array hv[3] = {px.h, pv.h, py.h}, dv[3] = {px.d, pv.d, py.d};
  Workspaces ws(n, key_limit, 0);
  Outcome oh = outcome(cnp_sort_by_key(&pk.h, &po.h, hv, 3, key_limit, ws.h, NULL));
  Outcome od = outcome(cnp_sort_by_key(&pk.d, &po.d, dv, 3, key_limit, ws.d, NULL));
  same_outcome(oh, od, what);
  pair_same(pk, what);
  if (oh.st == CNP_OK) pair_same(po, what);
  pair_same(px, what);
  pair_same(pv, what);
  pair_same(py, what);
  /* without order */
  if (oh.st == CNP_OK) {
    Pair pk2;
    pair_make(pk2, kt, 1, s1, keys.data());
    CHECK(cnp_sort_by_key(&pk2.h, NULL, NULL, 0, key_limit, ws.h, NULL) == CNP_OK, "%s",
          cnp_last_error());
    CHECK(cnp_sort_by_key(&pk2.d, NULL, NULL, 0, key_limit, ws.d, NULL) == CNP_OK, "%s",
          cnp_last_error());
    pair_same(pk2, what);
    pair_free(pk2);
  }
  Pair *all[] = {&pk, &po, &px, &pv, &py};
  for (Pair *p : all) pair_free(*p);
}

static void test_sorts(void)
{
  const int64_t n = sz(70001);
  std::vector<int32_t> k32(n);
  std::vector<int64_t> k64(n), ksorted(n);
  std::vector<uint64_t> ku(n);
  for (int64_t i = 0; i < n; i++) {
    k32[i] = (int32_t)(rnd() % 1000);
    k64[i] = (int64_t)(rnd() % 200001) - 100000;
    ku[i] = rnd();
    ksorted[i] = i / 3;
  }
  test_sort<int32_t>(CNP_INT32, n, 1000, k32, "sort int32 key_limit 1000");
  test_sort<int32_t>(CNP_INT32, n, 0, k32, "sort int32 measured range");
  test_sort<int64_t>(CNP_INT64, n, 0, k64, "sort int64 with negatives");
  test_sort<uint64_t>(CNP_UINT64, n, 0, ku, "sort uint64 (64-bit range)");
  test_sort<int64_t>(CNP_INT64, n, 0, ksorted, "sort already sorted");
  test_sort<int32_t>(CNP_INT32, 1, 0, std::vector<int32_t>(1, 5), "sort one key");
  std::vector<int32_t> badk = k32;
  badk[n / 3] = 1000;
  badk[n / 2] = -1;
  test_sort<int32_t>(CNP_INT32, n, 1000, badk, "sort key outside key_limit (ERANGE)");
}

template <typename C>
static void test_cells(cnp_dtype ct, std::vector<C> cells, int64_t n_cells, bool with_ws,
                       const char *what)
{
  int64_t n = (int64_t)cells.size();
  Pair pc, po;
  int64_t s1[1] = {n}, so[1] = {n_cells + 1};
  pair_make(pc, ct, 1, s1, cells.data());
  pair_make(po, CNP_INT64, 1, so, NULL);
  Workspaces ws(n, 0, 0);
  Outcome oh = outcome(cnp_cell_offsets(&pc.h, n_cells, &po.h, with_ws ? ws.h : NULL, NULL));
  Outcome od = outcome(cnp_cell_offsets(&pc.d, n_cells, &po.d, with_ws ? ws.d : NULL, NULL));
  same_outcome(oh, od, what);
  if (oh.st == CNP_OK) pair_same(po, what);
  pair_free(pc);
  pair_free(po);
}

static void test_cell_offsets(void)
{
  const int64_t n = sz(50000), n_cells = sz(20000) * 2;
  std::vector<int64_t> c(n);
  for (int64_t i = 0; i < n; i++) c[i] = (int64_t)(rnd() % (n_cells / 2)) * 2;  /* gaps */
  std::sort(c.begin(), c.end());
  std::vector<int32_t> c32(c.begin(), c.end());
  test_cells<int64_t>(CNP_INT64, c, n_cells, true, "cell_offsets int64");
  test_cells<int32_t>(CNP_INT32, c32, n_cells, false, "cell_offsets int32 without workspace");
  test_cells<int64_t>(CNP_INT64, std::vector<int64_t>(), 5, true, "cell_offsets empty");
  std::vector<int64_t> bad = c;
  bad[n / 7] = n_cells;
  test_cells<int64_t>(CNP_INT64, bad, n_cells, true, "cell_offsets out of range");
  bad = c;
  bad[n / 9] = -1;
  test_cells<int64_t>(CNP_INT64, bad, n_cells, true, "cell_offsets negative");
  bad = c;
  std::swap(bad[n / 50], bad[n / 2]);
  test_cells<int64_t>(CNP_INT64, bad, n_cells, false, "cell_offsets unsorted");
}

template <typename K>
static void test_runs(cnp_dtype kt, std::vector<K> keys, const char *what)
{
  int64_t n = (int64_t)keys.size();
  Pair pk, pu, ps, pe;
  int64_t s1[1] = {n};
  pair_make(pk, kt, 1, s1, keys.data());
  pair_make(pu, kt, 1, s1, NULL);
  pair_make(ps, CNP_INT64, 1, s1, NULL);
  pair_make(pe, CNP_INT64, 1, s1, NULL);
  Workspaces ws(n, 0, 0);
  int64_t ch = -1, cd = -2;
  Outcome oh = outcome(cnp_segment_boundaries(&pk.h, &pu.h, &ps.h, &pe.h, &ch, ws.h, NULL));
  Outcome od = outcome(cnp_segment_boundaries(&pk.d, &pu.d, &ps.d, &pe.d, &cd, ws.d, NULL));
  same_outcome(oh, od, what);
  CHECK(ch == cd, "%s: count host %lld device %lld", what, (long long)ch, (long long)cd);
  pair_same(pu, what, (size_t)ch * sizeof(K));
  pair_same(ps, what, (size_t)ch * 8);
  pair_same(pe, what, (size_t)ch * 8);
  /* optional outputs left out */
  CHECK(cnp_segment_boundaries(&pk.d, NULL, &ps.d, NULL, &cd, ws.d, NULL) == CNP_OK && cd == ch,
        "%s without unique/stops: %s", what, cnp_last_error());
  /* without starts (the run heads then go through the workspace) */
  if (n > 0) {
    CK(cudaMemset(pu.d.data, 0xa5, (size_t)n * sizeof(K)));
    CK(cudaMemset(pe.d.data, 0xa5, (size_t)n * 8));
  }
  CHECK(cnp_segment_boundaries(&pk.d, &pu.d, NULL, &pe.d, &cd, ws.d, NULL) == CNP_OK && cd == ch,
        "%s without starts: %s", what, cnp_last_error());
  pair_same(pu, what, (size_t)ch * sizeof(K));
  pair_same(pe, what, (size_t)ch * 8);
  Pair *all[] = {&pk, &pu, &ps, &pe};
  for (Pair *p : all) pair_free(*p);
}

static void test_boundaries(void)
{
  const int64_t n = sz(40000);
  std::vector<int64_t> k(n);
  std::vector<uint64_t> m(n);
  std::vector<int32_t> k32(n);
  for (int64_t i = 0; i < n; i++) {
    k[i] = (int64_t)(rnd() % 5000) - 2500;
    m[i] = rnd() | 0x8000000000000000ull;
  }
  std::sort(k.begin(), k.end());
  std::sort(m.begin(), m.end());
  for (int64_t i = 0; i < n; i++) {
    m[i] = i > 0 && rnd() % 3 == 0 ? m[i - 1] : m[i];
    k32[i] = (int32_t)(rnd() % 4);           /* unsorted: runs of equal neighbours */
  }
  test_runs<int64_t>(CNP_INT64, k, "segment_boundaries int64 with negatives");
  test_runs<uint64_t>(CNP_UINT64, m, "segment_boundaries uint64 Morton");
  test_runs<int32_t>(CNP_INT32, k32, "segment_boundaries int32 unsorted");
  test_runs<int64_t>(CNP_INT64, std::vector<int64_t>(), "segment_boundaries empty");
  test_runs<int64_t>(CNP_INT64, std::vector<int64_t>(7, 3), "segment_boundaries one run");
}

/* Float outputs of both sides within a relative tolerance (a long-segment device sum adds in
** another order than the host); int32 and bool sums are exact in any order. */
static double as_double(const unsigned char *p, cnp_dtype t)
{
  switch (t) {
  case CNP_FLOAT64: case CNP_COMPLEX128: { double x; memcpy(&x, p, 8); return x; }
  case CNP_FLOAT32: case CNP_COMPLEX64: { float x; memcpy(&x, p, 4); return x; }
  case CNP_FLOAT16: { uint16_t x; memcpy(&x, p, 2); return cnp_half_to_float(x); }
  default: return 0;
  }
}
static void pair_close(const Pair &p, cnp_dtype t, double rel, const char *what)
{
  size_t isz = t == CNP_COMPLEX128 ? 8 : t == CNP_COMPLEX64 ? 4 : cnp_dtype_size(t);
  size_t n = p.bytes / isz;
  std::vector<unsigned char> d(p.bytes ? p.bytes : 1);
  CK(cudaMemcpy(d.data(), p.dp, p.bytes, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < n; i++) {
    double a = as_double(d.data() + i * isz, t), b = as_double((unsigned char *)p.hp + i * isz, t);
    if (a == b || fabs(a - b) <= rel * fabs(b)) continue;
    CHECK(false, "%s: element %zu: device %.17g, host %.17g", what, i, a, b);
    return;
  }
}

/* Plan build + sums for several value dtypes, host against device: the plan and integer sums
** bit for bit, float sums within rounding (from 4 rows per segment on average the device adds
** each segment's rows in a fixed tree, not in row order as the host). */
template <typename K>
static void test_plan(cnp_dtype kt, std::vector<K> keys, int64_t ns, const char *what)
{
  int64_t n = (int64_t)keys.size();
  cnp_segment_plan *ph = nullptr, *pd = nullptr;
  CHECK(cnp_segment_plan_create(&ph, CNP_BACKEND_HOST, 0, n, ns) == CNP_OK, "%s",
        cnp_last_error());
  CHECK(cnp_segment_plan_create(&pd, CNP_BACKEND_CUDA, 0, n, ns) == CNP_OK, "%s",
        cnp_last_error());
  Pair pk;
  int64_t s1[1] = {n};
  pair_make(pk, kt, 1, s1, keys.data());
  Outcome oh = outcome(cnp_segment_plan_build(ph, &pk.h, NULL));
  Outcome od = outcome(cnp_segment_plan_build(pd, &pk.d, NULL));
  same_outcome(oh, od, what);
  if (oh.st == CNP_OK) {
    int64_t kh = -1, kd = -2, rh = -1, rd = -2;
    cnp_segment_plan_rows(ph, &kh, &rh);
    cnp_segment_plan_rows(pd, &kd, &rd);
    CHECK(kh == kd && rh == rd, "%s: rows host %lld/%lld device %lld/%lld", what,
          (long long)kh, (long long)rh, (long long)kd, (long long)rd);
    struct { cnp_dtype t; int k; } cases[] = {
        {CNP_FLOAT64, 1}, {CNP_FLOAT64, 3}, {CNP_FLOAT32, 2}, {CNP_INT32, 1}, {CNP_INT64, 1},
        {CNP_UINT64, 1},  {CNP_BOOL, 1},    {CNP_FLOAT16, 1}, {CNP_COMPLEX128, 1},
        {CNP_COMPLEX64, 2}};
    for (auto &cs : cases) {
      size_t isz = cnp_dtype_size(cs.t);
      std::vector<unsigned char> vals((size_t)n * cs.k * isz);
      for (size_t i = 0; i < vals.size(); i++) vals[i] = (unsigned char)rnd();
      if (cs.t == CNP_FLOAT64 || cs.t == CNP_COMPLEX128)
        for (size_t i = 0; i < vals.size() / 8; i++) ((double *)vals.data())[i] = (double)(rnd() % 1000) / 7.0;
      if (cs.t == CNP_FLOAT32 || cs.t == CNP_COMPLEX64)
        for (size_t i = 0; i < vals.size() / 4; i++) ((float *)vals.data())[i] = (float)(rnd() % 1000) / 7.0f;
      if (cs.t == CNP_FLOAT16)
        for (size_t i = 0; i < vals.size() / 2; i++) ((uint16_t *)vals.data())[i] = (uint16_t)(0x3c00 + rnd() % 0x400);
      if (cs.t == CNP_INT64 || cs.t == CNP_UINT64)
        for (size_t i = 0; i < vals.size() / 8; i++)
          ((int64_t *)vals.data())[i] = (int64_t)(rnd() >> 34) - (cs.t == CNP_INT64 ? (1 << 29) : 0);
      Pair pv, po;
      int64_t sv[2] = {n, cs.k}, so[2] = {ns, cs.k};
      cnp_dtype ot = cnp_segment_sum_dtype(cs.t);
      pair_make(pv, cs.t, cs.k > 1 ? 2 : 1, sv, vals.data());
      pair_make(po, ot, cs.k > 1 ? 2 : 1, so, NULL);
      Outcome sh = outcome(cnp_segment_plan_sum(ph, &pv.h, &po.h, NULL));
      Outcome sd = outcome(cnp_segment_plan_sum(pd, &pv.d, &po.d, NULL));
      char w2[160];
      snprintf(w2, sizeof w2, "%s, sum of %s[N, %d]", what, cnp_dtype_name(cs.t), cs.k);
      same_outcome(sh, sd, w2);
      CK(cudaDeviceSynchronize());
      /* integer and bool sums are exact in doubles in any order (the 64-bit values are
      ** kept under 2^30); float sums, as rounded in the device's order of addition */
      if (cs.t == CNP_INT32 || cs.t == CNP_BOOL || cs.t == CNP_INT64 || cs.t == CNP_UINT64)
        pair_same(po, w2);
      else
        pair_close(po, ot, ot == CNP_FLOAT16 ? 2e-3 : ot == CNP_FLOAT32 || ot == CNP_COMPLEX64
                                                          ? 1e-5 : 1e-12, w2);
      pair_free(pv);
      pair_free(po);
    }
  }
  pair_free(pk);
  cnp_segment_plan_destroy(ph);
  cnp_segment_plan_destroy(pd);
}

static void test_plans(void)
{
  const int64_t n = sz(30000), ns = 777;
  std::vector<int64_t> k(n), ks(n);
  std::vector<int32_t> k32(n);
  for (int64_t i = 0; i < n; i++) {
    k[i] = (int64_t)(rnd() % (ns + 3)) - 3;           /* negatives dropped, unsorted */
    ks[i] = i * ns / n;                                /* sorted, none negative */
    k32[i] = (int32_t)(rnd() % ns);
  }
  test_plan<int64_t>(CNP_INT64, k, ns, "plan unsorted with negatives");
  test_plan<int64_t>(CNP_INT64, ks, ns, "plan sorted (identity)");
  test_plan<int32_t>(CNP_INT32, k32, ns, "plan int32 keys");
  test_plan<int64_t>(CNP_INT64, std::vector<int64_t>(), ns, "plan empty");
  std::vector<int64_t> bad = k;
  bad[n / 5] = ns;
  test_plan<int64_t>(CNP_INT64, bad, ns, "plan key >= n_segments (ERANGE)");
  /* long segments: a block per (segment, component), in parts */
  const int64_t nl = sz(200003);
  std::vector<int64_t> kl(nl), kls(nl);
  for (int64_t i = 0; i < nl; i++) {
    kl[i] = (int64_t)(rnd() % 4) - 1;                  /* 3 segments, negatives dropped */
    kls[i] = i * 300 / nl;                             /* sorted, 300 segments */
  }
  test_plan<int64_t>(CNP_INT64, kl, 3, "plan long segments, unsorted");
  test_plan<int64_t>(CNP_INT64, kls, 300, "plan long segments, sorted");
  /* short segments: a thread per segment, in row order */
  std::vector<int64_t> kt(n);
  for (int64_t i = 0; i < n; i++) kt[i] = (int64_t)(rnd() % (uint64_t)(n / 2)) - 1;
  test_plan<int64_t>(CNP_INT64, kt, n / 2, "plan short segments (under 4 rows)");

  /* one-off segment_sum */
  Pair pv, pk, po;
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; i++) v[i] = (double)(i % 10);
  int64_t s1[1] = {n}, so[1] = {ns};
  pair_make(pv, CNP_FLOAT64, 1, s1, v.data());
  pair_make(pk, CNP_INT64, 1, s1, k.data());
  pair_make(po, CNP_FLOAT64, 1, so, NULL);
  CHECK(cnp_segment_sum(&pv.h, &pk.h, ns, &po.h, NULL) == CNP_OK, "%s", cnp_last_error());
  CHECK(cnp_segment_sum(&pv.d, &pk.d, ns, &po.d, NULL) == CNP_OK, "%s", cnp_last_error());
  CK(cudaDeviceSynchronize());
  pair_close(po, CNP_FLOAT64, 1e-12, "segment_sum one-off");
  pair_free(pv);
  pair_free(pk);
  pair_free(po);
}

/* ======================================================================================
** Device-count forms (CUDA graphs): the row count lives in an int64[1] on each backend.
** The host side (whose results equal the ordinary calls over the first n rows:
** tests/unit/test_algo_device_sort.c) against the device side, then the whole PIC chain
** captured into one CUDA graph and replayed.
*/

template <typename K>
static void test_dc_sort(cnp_dtype kt, int64_t n, int64_t m, int64_t key_limit,
                         std::vector<K> keys, const char *what)
{
  std::vector<double> x(n), v(3 * n);
  std::vector<int32_t> y(n);
  for (int64_t i = 0; i < n; i++) {
    x[i] = (double)i * 0.5;
    y[i] = (int32_t)(i * 7);
    for (int k = 0; k < 3; k++) v[k * n + i] = (double)(k * 1000000 + i);
  }
  Pair pk, po, px, pv, py, pc;
  int64_t s1[1] = {n}, s3n[2] = {3, n}, one[1] = {1};
  pair_make(pk, kt, 1, s1, keys.data());
  pair_make(po, CNP_INT64, 1, s1, NULL);
  pair_make(px, CNP_FLOAT64, 1, s1, x.data());
  pair_make(pv, CNP_FLOAT64, 2, s3n, v.data());
  pair_make(py, CNP_INT32, 1, s1, y.data());
  pair_make(pc, CNP_INT64, 1, one, &m);
  cnp_array hv[3] = {px.h, pv.h, py.h}, dv[3] = {px.d, pv.d, py.d};
  Workspaces ws(n, key_limit, 0);
  Outcome oh = outcome(
      cnp_sort_by_key_device_count(&pk.h, &po.h, hv, 3, key_limit, &pc.h, ws.h, NULL));
  Outcome od = outcome(
      cnp_sort_by_key_device_count(&pk.d, &po.d, dv, 3, key_limit, &pc.d, ws.d, NULL));
  CHECK(oh.st == CNP_OK && od.st == CNP_OK, "%s: host %s '%s', device %s '%s'", what,
        cnp_status_name(oh.st), oh.msg, cnp_status_name(od.st), od.msg);
  CK(cudaDeviceSynchronize());
  pair_same(pk, what);                         /* every row: those past m are untouched */
  pair_same(po, what);
  pair_same(px, what);
  pair_same(pv, what);
  pair_same(py, what);
  Pair *all[] = {&pk, &po, &px, &pv, &py, &pc};
  for (Pair *p : all) pair_free(*p);
}

/* The range-hinted device sort with keys outside [0, key_limit) among rows [0, m): the host
** (which would report them) sorts with no hint; the device must still end exactly alike. */
template <typename K>
static void test_dc_sort_hint(cnp_dtype kt, int64_t n, int64_t m, int64_t key_limit,
                              std::vector<K> keys, const char *what)
{
  std::vector<double> x(n);
  for (int64_t i = 0; i < n; i++) x[i] = (double)i * 0.25;
  Pair pk, po, px, pc;
  int64_t s1[1] = {n}, one[1] = {1};
  pair_make(pk, kt, 1, s1, keys.data());
  pair_make(po, CNP_INT64, 1, s1, NULL);
  pair_make(px, CNP_FLOAT64, 1, s1, x.data());
  pair_make(pc, CNP_INT64, 1, one, &m);
  Workspaces ws(n, 0, 0);
  Outcome oh = outcome(cnp_sort_by_key_device_count(&pk.h, &po.h, &px.h, 1, 0, &pc.h, ws.h,
                                                    NULL));
  Outcome od = outcome(cnp_sort_by_key_device_count(&pk.d, &po.d, &px.d, 1, key_limit, &pc.d,
                                                    ws.d, NULL));
  CHECK(oh.st == CNP_OK && od.st == CNP_OK, "%s: host %s '%s', device %s '%s'", what,
        cnp_status_name(oh.st), oh.msg, cnp_status_name(od.st), od.msg);
  CK(cudaDeviceSynchronize());
  pair_same(pk, what);
  pair_same(po, what);
  pair_same(px, what);
  Pair *all[] = {&pk, &po, &px, &pc};
  for (Pair *p : all) pair_free(*p);
}

/* Keys in [0, limit) but `outside` of them (spread at random) replaced by negative keys and
** keys >= limit, extremes of K among them, with duplicates. */
template <typename K>
static std::vector<K> keys_with_outliers(int64_t n, int64_t limit, int64_t outside)
{
  std::vector<K> k(n);
  for (int64_t i = 0; i < n; i++) k[i] = (K)(rnd() % (uint64_t)limit);
  const K odd[6] = {std::numeric_limits<K>::min(), std::numeric_limits<K>::max(), (K)-1,
                    (K)limit, (K)(limit + 1), (K)-(K)limit};
  for (int64_t j = 0; j < outside && n > 0; j++) {
    int64_t i = (int64_t)(rnd() % (uint64_t)n);
    uint64_t r = rnd();
    k[i] = r % 3 == 0 ? odd[r / 3 % 6] : r % 3 == 1 ? (K)(limit + (K)(r % 97))
                                                    : (K)(-1 - (K)(r % 89));
  }
  return k;
}

/* Build over the first m of n keys, then sums of n-row values, host against device. */
template <typename K>
static void test_dc_plan(cnp_dtype kt, std::vector<K> keys, int64_t m, int64_t ns,
                         const char *what, bool sorted = false)
{
  int64_t n = (int64_t)keys.size();
  cnp_segment_plan *ph = nullptr, *pd = nullptr;
  CHECK(cnp_segment_plan_create(&ph, CNP_BACKEND_HOST, 0, n, ns) == CNP_OK, "%s",
        cnp_last_error());
  CHECK(cnp_segment_plan_create(&pd, CNP_BACKEND_CUDA, 0, n, ns) == CNP_OK, "%s",
        cnp_last_error());
  Pair pk, pc, pv, po;
  int64_t s1[1] = {n}, one[1] = {1}, sv[2] = {n, 2}, so[2] = {ns, 2};
  pair_make(pk, kt, 1, s1, keys.data());
  pair_make(pc, CNP_INT64, 1, one, &m);
  std::vector<double> vals(2 * n);
  for (int64_t i = 0; i < 2 * n; i++) vals[i] = (double)(rnd() % 1000) / 7.0;
  pair_make(pv, CNP_FLOAT64, 2, sv, vals.data());
  pair_make(po, CNP_FLOAT64, 2, so, NULL);
  Outcome bh = outcome(cnp_segment_plan_build_device_count(ph, &pk.h, &pc.h, NULL));
  Outcome bd = outcome(sorted ? cnp_segment_plan_build_sorted_device_count(pd, &pk.d, &pc.d, NULL)
                              : cnp_segment_plan_build_device_count(pd, &pk.d, &pc.d, NULL));
  CHECK(bh.st == CNP_OK && bd.st == CNP_OK, "%s: host %s '%s', device %s '%s'", what,
        cnp_status_name(bh.st), bh.msg, cnp_status_name(bd.st), bd.msg);
  int64_t kd = 0, rd = 0;
  cnp_segment_plan_rows(pd, &kd, &rd);
  CHECK(kd == -1 && rd == n, "%s: device rows %lld/%lld", what, (long long)kd, (long long)rd);
  Outcome sh = outcome(cnp_segment_plan_sum(ph, &pv.h, &po.h, NULL));
  Outcome sd = outcome(cnp_segment_plan_sum(pd, &pv.d, &po.d, NULL));
  same_outcome(sh, sd, what);
  CK(cudaDeviceSynchronize());
  pair_close(po, CNP_FLOAT64, 1e-12, what);
  Pair *all[] = {&pk, &pc, &pv, &po};
  for (Pair *p : all) pair_free(*p);
  cnp_segment_plan_destroy(ph);
  cnp_segment_plan_destroy(pd);
}

/* The PIC step's runtime chain (compact, sort by cell, plan build, sum) over the capacity
** with the count on the device, captured once into a CUDA graph and replayed; the same
** calls on the host backend give the expected rows, count and sums. */
static void test_dc_graph(int64_t cap, int64_t n_cells)
{
  std::vector<unsigned char> mask(cap);
  std::vector<int64_t> cell(cap);
  std::vector<double> x(cap), w(cap);
  for (int64_t i = 0; i < cap; i++) {
    mask[i] = (unsigned char)(rnd() % 4 != 0);
    cell[i] = (int64_t)(rnd() % (uint64_t)n_cells);
    x[i] = (double)i;
    w[i] = (double)(rnd() % 1000) / 8.0;
  }
  Pair pm, pcell, px, pw, pn, prho;
  int64_t s1[1] = {cap}, one[1] = {1}, sr[1] = {n_cells}, zero = 0;
  pair_make(pm, CNP_BOOL, 1, s1, mask.data());
  pair_make(pcell, CNP_INT64, 1, s1, cell.data());
  pair_make(px, CNP_FLOAT64, 1, s1, x.data());
  pair_make(pw, CNP_FLOAT64, 1, s1, w.data());
  pair_make(pn, CNP_INT64, 1, one, &zero);
  pair_make(prho, CNP_FLOAT64, 1, sr, NULL);
  Workspaces ws(cap, 0, 0);
  cnp_segment_plan *ph = nullptr, *pd = nullptr;
  CHECK(cnp_segment_plan_create(&ph, CNP_BACKEND_HOST, 0, cap, n_cells) == CNP_OK, "%s",
        cnp_last_error());
  CHECK(cnp_segment_plan_create(&pd, CNP_BACKEND_CUDA, 0, cap, n_cells) == CNP_OK, "%s",
        cnp_last_error());
  /* host: the expected state */
  cnp_array hc[3] = {px.h, pw.h, pcell.h}, hs[2] = {px.h, pw.h};
  CHECK(cnp_compact_by_mask_device_count(&pm.h, hc, 3, &pn.h, ws.h, NULL) == CNP_OK, "%s",
        cnp_last_error());
  CHECK(cnp_sort_by_key_device_count(&pcell.h, NULL, hs, 2, 0, &pn.h, ws.h, NULL) == CNP_OK,
        "%s", cnp_last_error());
  CHECK(cnp_segment_plan_build_device_count(ph, &pcell.h, &pn.h, NULL) == CNP_OK, "%s",
        cnp_last_error());
  CHECK(cnp_segment_plan_sum(ph, &pw.h, &prho.h, NULL) == CNP_OK, "%s", cnp_last_error());
  /* device: capture on a stream of our own, then one replay */
  cudaStream_t cs;
  CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
  cnp_backend prev = cnp_backend_current();
  CHECK(cnp_backend_select(CNP_BACKEND_CUDA, 1) == CNP_OK, "%s", cnp_last_error());
  cnp_stream *S = nullptr;
  CHECK(cnp_stream_wrap(&S, (void *)cs) == CNP_OK, "%s", cnp_last_error());
  cnp_array dc[3] = {px.d, pw.d, pcell.d}, ds[2] = {px.d, pw.d};
  cudaGraph_t g = nullptr;
  cudaGraphExec_t gx = nullptr;
  CK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
  cnp_status st = cnp_compact_by_mask_device_count(&pm.d, dc, 3, &pn.d, ws.d, S);
  /* as cnpc's graph: the sort hinted by the plan's range, the plan built from sorted keys */
  if (st == CNP_OK)
    st = cnp_sort_by_key_device_count(&pcell.d, NULL, ds, 2, n_cells, &pn.d, ws.d, S);
  if (st == CNP_OK) st = cnp_segment_plan_build_sorted_device_count(pd, &pcell.d, &pn.d, S);
  if (st == CNP_OK) st = cnp_segment_plan_sum(pd, &pw.d, &prho.d, S);
  CHECK(st == CNP_OK, "graph capture: %s", cnp_last_error());
  CK(cudaStreamEndCapture(cs, &g));
  CK(cudaGraphInstantiate(&gx, g, 0ULL));
  size_t n_nodes = 0;
  CK(cudaGraphGetNodes(g, NULL, &n_nodes));
  CK(cudaGraphLaunch(gx, cs));
  CK(cudaStreamSynchronize(cs));
  int64_t live = 0;
  memcpy(&live, pn.hp, sizeof live);
  pair_same(pn, "graph: live count");
  pair_same(px, "graph: x", (size_t)live * 8);
  pair_same(pw, "graph: w", (size_t)live * 8);
  pair_same(pcell, "graph: cell", (size_t)live * 8);
  pair_close(prho, CNP_FLOAT64, 1e-12, "graph: rho");
  printf("graph of compact + sort + segments + sum over %lld rows: %zu nodes, %lld live\n",
         (long long)cap, n_nodes, (long long)live);
  cudaGraphExecDestroy(gx);
  cudaGraphDestroy(g);
  cnp_stream_destroy(S);
  cudaStreamDestroy(cs);
  cnp_backend_select(prev, 0);
  Pair *all[] = {&pm, &pcell, &px, &pw, &pn, &prho};
  for (Pair *p : all) pair_free(*p);
  cnp_segment_plan_destroy(ph);
  cnp_segment_plan_destroy(pd);
}

static void test_device_counts(void)
{
  const int64_t n = sz(70001);
  std::vector<int32_t> k32(n);
  std::vector<int64_t> k64(n), kseg(n);
  std::vector<uint64_t> ku(n);
  for (int64_t i = 0; i < n; i++) {
    k32[i] = (int32_t)(rnd() % 1000);
    k64[i] = (int64_t)(rnd() % 200001) - 100000;
    ku[i] = rnd();
    kseg[i] = (int64_t)(rnd() % 780) - 3;            /* negatives dropped */
  }
  const int64_t ms[3] = {0, n / 2 + 1, n};
  for (int64_t m : ms) {
    test_dc_sort<int32_t>(CNP_INT32, n, m, 1000, k32, "device-count sort int32 key_limit");
    test_dc_sort<int32_t>(CNP_INT32, n, m, 0, k32, "device-count sort int32 full range");
    test_dc_sort<int64_t>(CNP_INT64, n, m, 0, k64, "device-count sort int64 negatives");
    test_dc_sort<uint64_t>(CNP_UINT64, n, m, 0, ku, "device-count sort uint64");
    test_dc_plan<int64_t>(CNP_INT64, kseg, m, 777, "device-count plan int64");
    std::vector<int32_t> kp32(k32);
    test_dc_plan<int32_t>(CNP_INT32, kp32, m, 1000, "device-count plan int32");
  }
  test_dc_sort<int64_t>(CNP_INT64, 1, 1, 0, std::vector<int64_t>(1, 9), "device-count sort one");
  /* hinted sorts with keys outside the hint: none, a few (shared-memory fix-up) and many
  ** (merge passes) on each side */
  const int64_t outs[4] = {0, 1, 300, n / 3};
  for (int64_t o : outs)
    for (int64_t m : ms) {
      test_dc_sort_hint<int64_t>(CNP_INT64, n, m, 5000, keys_with_outliers<int64_t>(n, 5000, o),
                                 "device-count sort int64, keys outside key_limit");
      test_dc_sort_hint<int32_t>(CNP_INT32, n, m, 777, keys_with_outliers<int32_t>(n, 777, o),
                                 "device-count sort int32, keys outside key_limit");
    }
  /* the sorted-key plan build: sorted keys with negatives first (dropped), sums against the
  ** host's build */
  for (int64_t m : ms) {
    std::vector<int64_t> ks(kseg);
    std::sort(ks.begin(), ks.begin() + m);
    test_dc_plan<int64_t>(CNP_INT64, ks, m, 777, "device-count sorted plan int64", true);
    std::vector<int32_t> ks32(k32);
    std::sort(ks32.begin(), ks32.begin() + m);
    test_dc_plan<int32_t>(CNP_INT32, ks32, m, 1000, "device-count sorted plan int32", true);
    std::vector<int64_t> few(ks);             /* long segments: the block kernels */
    for (int64_t i = 0; i < m; i++) few[i] = i * 3 / (m > 0 ? m : 1);
    test_dc_plan<int64_t>(CNP_INT64, few, m, 3, "device-count sorted plan, 3 segments", true);
  }
  test_dc_graph(sz(100003), 512);
  test_dc_graph(1, 4);
}

/* ======================================================================================
** Kernel catalog on the device: compile for this device, load, launch, check limits.
*/

static const char *k_catalog_src =
    "#include <cnp/scan.cuh>\n"
    "#include <cnp/atomic.cuh>\n"
    "extern \"C\" __global__ void offsets(const int *flag, int *pos, unsigned long long *n,\n"
    "                                     int count)\n"
    "{\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  int f = i < count ? flag[i] : 0;\n"
    "  int total;\n"
    "  int p = cnp_block_exclusive_sum(f, &total);\n"
    "  if (i < count) pos[i] = p;\n"
    "  if (cnp_block_thread() == 0) cnp_atomic_add(n, (unsigned long long)total);\n"
    "}\n";

static void test_catalog(void)
{
  cnp_catalog *cat = nullptr;
  cnp_catalog_config cfg = CNP_CATALOG_CONFIG_INIT;
  cfg.cache_dir = "";
  CHECK(cnp_catalog_create(&cat, &cfg) == CNP_OK, "%s", cnp_last_error());
  CHECK(cnp_catalog_add_source(cat, "offsets", k_catalog_src, "offsets.cu", NULL, 0) == CNP_OK,
        "%s", cnp_last_error());
  CHECK(cnp_catalog_setup(cat) == CNP_OK, "%s", cnp_last_error());
  const int count = 1000;
  std::vector<int> flag(count);
  for (int i = 0; i < count; i++) flag[i] = (int)(rnd() % 2);
  DevBuf<int> d_flag(count), d_pos(count);
  DevBuf<unsigned long long> d_n(1);
  d_flag.put(flag);
  d_n.put({0});
  int c = count;
  void *args[] = {&d_flag.p, &d_pos.p, &d_n.p, &c};
  cnp_dim3 grid = {(count + 127) / 128, 1, 1}, block = {128, 1, 1};
  CHECK(cnp_catalog_launch(cat, "offsets", grid, block, 0, NULL, args) == CNP_OK, "%s",
        cnp_last_error());
  CK(cudaDeviceSynchronize());
  std::vector<int> pos = d_pos.get();
  unsigned long long total = 0;
  int bad = 0;
  for (int b = 0; b * 128 < count; b++) {
    int run = 0;
    for (int t = 0; t < 128 && b * 128 + t < count; t++) {
      int i = b * 128 + t;
      if (pos[i] != run && bad++ == 0)
        fprintf(stderr, "catalog kernel: first wrong pos[%d] = %d, want %d\n", i, pos[i], run);
      run += flag[i];
      total += (unsigned long long)flag[i];
    }
  }
  CHECK(bad == 0, "catalog kernel: %d wrong positions", bad);
  CHECK(d_n.get()[0] == total, "catalog kernel total %llu, want %llu", d_n.get()[0], total);
  cnp_dim3 big = {2048, 1, 1};
  CHECK(cnp_catalog_launch(cat, "offsets", grid, big, 0, NULL, args) == CNP_ELAUNCH, "%s",
        cnp_last_error());
  CHECK(strstr(cnp_last_error(), "kernel 'offsets'") != NULL, "%s", cnp_last_error());
  CHECK(cnp_catalog_launch(cat, "offsets", grid, block, (size_t)1 << 30, NULL, args) ==
            CNP_ELAUNCH, "%s", cnp_last_error());
  cnp_device_limits lim;
  CHECK(cnp_device_limits_query(0, &lim) == CNP_OK, "%s", cnp_last_error());
  CHECK(lim.arch >= 50 && lim.max_threads_per_block >= 1024, "limits arch %d threads %d",
        lim.arch, lim.max_threads_per_block);
  cnp_catalog_stats st;
  cnp_catalog_stats_get(cat, &st);
  CHECK(st.compiles == 1 && st.loads == 1 && st.launches == 1,
        "stats compiles %llu loads %llu launches %llu", (unsigned long long)st.compiles,
        (unsigned long long)st.loads, (unsigned long long)st.launches);
  const char *img = NULL;
  int is_ptx = 1;
  CHECK(cnp_catalog_image(cat, "offsets", 0, &img, NULL, &is_ptx) == CNP_OK && img &&
            is_ptx == 0, "device image should be a CUBIN: %s", cnp_last_error());
  CHECK(cnp_catalog_destroy(cat) == CNP_OK, "%s", cnp_last_error());
}

/* ====================================================================================== */

/* OpenMP's thread count, when libcnp was built with OpenMP (weak: a build without it has none). */
extern "C" void omp_set_num_threads(int) __attribute__((weak));

/* Scans and reductions: integers bit for bit against the host backend, floats within
** rounding (the orders differ, docs/algorithms.md) and bit for bit run to run on the device,
** NaN propagation, counts, and a captured graph with a device-side row count. */
static void test_scan_reduce(void)
{
  const int64_t n = sz(300007);
  std::vector<int64_t> ki(n);
  std::vector<double> kd(n);
  for (int64_t i = 0; i < n; i++) {
    ki[i] = (int64_t)rnd();
    kd[i] = (double)(rnd() % 100000) / 977.0 - 40.0;
  }
  int64_t s1[1] = {n}, one[1] = {1}, half = n / 2 + 1;
  Pair pi, po, pd, pdo, pr, prd, pc;
  pair_make(pi, CNP_INT64, 1, s1, ki.data());
  pair_make(po, CNP_INT64, 1, s1, NULL);
  pair_make(pd, CNP_FLOAT64, 1, s1, kd.data());
  pair_make(pdo, CNP_FLOAT64, 1, s1, NULL);
  pair_make(pr, CNP_INT64, 1, one, NULL);
  pair_make(prd, CNP_FLOAT64, 1, one, NULL);
  pair_make(pc, CNP_INT64, 1, one, &half);
  Workspaces ws(n, 0, 0);
  for (int k = 0; k < 2; k++) {
    cnp_scan_kind kind = k ? CNP_SCAN_EXCLUSIVE : CNP_SCAN_INCLUSIVE;
    same_outcome(outcome(cnp_scan(&pi.h, &po.h, kind, NULL, ws.h, NULL)),
                 outcome(cnp_scan(&pi.d, &po.d, kind, NULL, ws.d, NULL)), "scan int64");
    pair_same(po, "scan int64");
    same_outcome(outcome(cnp_scan(&pd.h, &pdo.h, kind, &pc.h, ws.h, NULL)),
                 outcome(cnp_scan(&pd.d, &pdo.d, kind, &pc.d, ws.d, NULL)), "scan f64 count");
    pair_close(pdo, CNP_FLOAT64, 1e-9, "scan f64 with a device count");
  }
  std::vector<double> first(n), again(n);
  cnp_scan(&pd.d, &pdo.d, CNP_SCAN_INCLUSIVE, NULL, ws.d, NULL);
  CK(cudaMemcpy(first.data(), pdo.dp, (size_t)n * 8, cudaMemcpyDeviceToHost));
  cnp_scan(&pd.d, &pdo.d, CNP_SCAN_INCLUSIVE, NULL, ws.d, NULL);
  CK(cudaMemcpy(again.data(), pdo.dp, (size_t)n * 8, cudaMemcpyDeviceToHost));
  CHECK(memcmp(first.data(), again.data(), (size_t)n * 8) == 0, "device scan run to run");
  const cnp_reduce_op ops[4] = {CNP_REDUCE_SUM, CNP_REDUCE_MIN, CNP_REDUCE_MAX,
                                CNP_REDUCE_COUNT};
  for (int o = 0; o < 4; o++) {
    same_outcome(outcome(cnp_reduce(&pi.h, ops[o], &pr.h, NULL, ws.h, NULL)),
                 outcome(cnp_reduce(&pi.d, ops[o], &pr.d, NULL, ws.d, NULL)), "reduce int64");
    pair_same(pr, "reduce int64");
    if (ops[o] == CNP_REDUCE_COUNT) continue;
    same_outcome(outcome(cnp_reduce(&pd.h, ops[o], &prd.h, &pc.h, ws.h, NULL)),
                 outcome(cnp_reduce(&pd.d, ops[o], &prd.d, &pc.d, ws.d, NULL)), "reduce f64");
    pair_close(prd, CNP_FLOAT64, 1e-12, "reduce f64 with a device count");
  }
  /* NaN propagates */
  double nan = std::numeric_limits<double>::quiet_NaN(), got = 0;
  CK(cudaMemcpy((double *)pd.dp + n / 3, &nan, 8, cudaMemcpyHostToDevice));
  CHECK(cnp_reduce(&pd.d, CNP_REDUCE_MAX, &prd.d, NULL, ws.d, NULL) == CNP_OK, "%s",
        cnp_last_error());
  CK(cudaMemcpy(&got, prd.dp, 8, cudaMemcpyDeviceToHost));
  CHECK(got != got, "max over a NaN is NaN (got %g)", got);
  /* a CUDA graph: count-limited reduction and scan, captured, replayed */
  cudaStream_t cs;
  CK(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
  cnp_stream *S = nullptr;
  CHECK(cnp_stream_wrap_on(&S, CNP_BACKEND_CUDA, (void *)cs) == CNP_OK, "%s", cnp_last_error());
  cudaGraph_t g = nullptr;
  cudaGraphExec_t gx = nullptr;
  CK(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal));
  cnp_status st = cnp_reduce(&pi.d, CNP_REDUCE_SUM, &pr.d, &pc.d, ws.d, S);
  if (st == CNP_OK) st = cnp_scan(&pi.d, &po.d, CNP_SCAN_INCLUSIVE, &pc.d, ws.d, S);
  CHECK(st == CNP_OK, "graph capture: %s", cnp_last_error());
  CK(cudaStreamEndCapture(cs, &g));
  CK(cudaGraphInstantiate(&gx, g, 0ULL));
  CK(cudaGraphLaunch(gx, cs));
  CK(cudaStreamSynchronize(cs));
  CHECK(cnp_reduce(&pi.h, CNP_REDUCE_SUM, &pr.h, &pc.h, ws.h, NULL) == CNP_OK, "%s",
        cnp_last_error());
  CHECK(cnp_scan(&pi.h, &po.h, CNP_SCAN_INCLUSIVE, &pc.h, ws.h, NULL) == CNP_OK, "%s",
        cnp_last_error());
  pair_same(pr, "graph: reduce");
  pair_same(po, "graph: scan", (size_t)half * 8);
  cudaGraphExecDestroy(gx);
  cudaGraphDestroy(g);
  cnp_stream_destroy(S);
  cudaStreamDestroy(cs);
  Pair *all[] = {&pi, &po, &pd, &pdo, &pr, &prd, &pc};
  for (Pair *p : all) pair_free(*p);
}

int main(void)
{
  /* The host side runs on one thread: its row-split sum (several threads, few segments) adds
  ** per-thread partials, and the device's short-segment sums (a thread per segment, in row
  ** order) are compared with it bit for bit. */
  if (omp_set_num_threads) omp_set_num_threads(1);
  int count = 0;
  const char *req = getenv("CNP_REQUIRE_CUDA");
  bool require = req && strcmp(req, "1") == 0;
  const char *small = getenv("CNP_GPU_SMALL");
  g_small = small && strcmp(small, "1") == 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count <= 0) {
    if (require) {
      fprintf(stderr, "FAIL: CNP_REQUIRE_CUDA=1 but no CUDA device is usable\n");
      return 1;
    }
    printf("SKIP: no CUDA device\n");
    return 77;
  }
  test_scans<int>("int");
  test_scans<unsigned>("unsigned");
  test_scans<long long>("long long");
  test_scans<float>("float");
  test_scans<double>("double");
  test_atomics();
  test_compact(sz(100003), 50);
  test_compact(4097, 0);
  test_compact(4097, 100);
  test_compact(1, 100);
  test_sorts();
  test_cell_offsets();
  test_boundaries();
  test_plans();
  test_device_counts();
  test_scan_reduce();
  test_catalog();
  CK(cudaDeviceSynchronize());
  printf("%d checks, %d failures\n", g_checks, g_fails);
  return g_fails ? 1 : 0;
}
