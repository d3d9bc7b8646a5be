/*
** test_grid_gpu.c — cnp/grid.h on a CUDA device against the host backend: cuFFT forward
** and inverse (float32, float64, batch, odd sizes) vs FFTW, and cnp_deposit (SORTED and
** ATOMIC) and cnp_gather for every shape in 1D, 2D and 3D vs the host, SORTED bit-identical
** run to run on the device. Each test skips without a device, and fails instead under
** CNP_REQUIRE_CUDA=1. In CUDA builds also a CUDA graph capture of a forward FFT, a SORTED
** deposition and an inverse FFT on one stream, replayed and compared with the direct calls
** (the calls must neither synchronize nor allocate).
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cnp/cnp.h"
#ifdef CNP_HAVE_CUDA
#include <cuda_runtime.h>
#endif

static void need_cuda(void)
{
  const char *why = NULL;
  if (!cnp_cuda_available(&why)) {
    const char *req = getenv("CNP_REQUIRE_CUDA");
    if (req && strcmp(req, "1") == 0)
      cr_assert_fail("CNP_REQUIRE_CUDA=1 but CUDA is unavailable: %s", why);
    cr_skip_test("no CUDA device: %s", why);
  }
}

static uint64_t rng_state = 99;
static double urand(void)
{
  uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

static cnp_array alloc_on(cnp_backend b, cnp_dtype t, int ndim, const int64_t *shape)
{
  cnp_array a;
  cr_assert_eq(cnp_array_alloc_on(&a, b, 0, t, ndim, shape, CNP_ORDER_C, 0), CNP_OK, "%s",
               cnp_last_error());
  return a;
}

static void copy(cnp_array *dst, const cnp_array *src)
{
  cr_assert_eq(cnp_array_copy(dst, src, NULL), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_device_synchronize_on(CNP_BACKEND_CUDA, 0), CNP_OK);
}

static double rd(const cnp_array *a, int64_t i)
{
  return a->dtype == CNP_FLOAT32 ? ((float *)a->data)[i] : ((double *)a->data)[i];
}

static void fft_case(int ndim, const int64_t *dims, int64_t batch, cnp_dtype t)
{
  cnp_fft_plan *ph, *pd;
  cr_assert_eq(cnp_fft_plan_create(&ph, CNP_BACKEND_HOST, 0, ndim, dims, batch, t, 0), CNP_OK,
               "%s", cnp_last_error());
  cr_assert_eq(cnp_fft_plan_create(&pd, CNP_BACKEND_CUDA, 0, ndim, dims, batch, t, 0), CNP_OK,
               "%s", cnp_last_error());
  int an;
  int64_t rs[4], cs[4];
  cnp_fft_shapes(ph, &an, rs, cs);
  cnp_dtype ct = t == CNP_FLOAT32 ? CNP_COMPLEX64 : CNP_COMPLEX128;
  cnp_array x = alloc_on(CNP_BACKEND_HOST, t, an, rs), X = alloc_on(CNP_BACKEND_HOST, ct, an, cs);
  cnp_array Xd_h = alloc_on(CNP_BACKEND_HOST, ct, an, cs), y = alloc_on(CNP_BACKEND_HOST, t, an, rs);
  cnp_array dx = alloc_on(CNP_BACKEND_CUDA, t, an, rs), dX = alloc_on(CNP_BACKEND_CUDA, ct, an, cs);
  cnp_array dy = alloc_on(CNP_BACKEND_CUDA, t, an, rs);
  int64_t n = cnp_array_numel(&x);
  for (int64_t i = 0; i < n; i++) {
    if (t == CNP_FLOAT32) ((float *)x.data)[i] = (float)(urand() - 0.5);
    else ((double *)x.data)[i] = urand() - 0.5;
  }
  copy(&dx, &x);
  cr_assert_eq(cnp_fft_forward(ph, &x, &X, NULL), CNP_OK);
  cr_assert_eq(cnp_fft_forward(pd, &dx, &dX, NULL), CNP_OK, "%s", cnp_last_error());
  copy(&Xd_h, &dX);
  double tol = t == CNP_FLOAT32 ? 1e-4 : 1e-11, err = 0;
  int64_t nc = 2 * cnp_array_numel(&X);
  for (int64_t i = 0; i < nc; i++) {
    double a = t == CNP_FLOAT32 ? ((float *)X.data)[i] : ((double *)X.data)[i];
    double b = t == CNP_FLOAT32 ? ((float *)Xd_h.data)[i] : ((double *)Xd_h.data)[i];
    err = fmax(err, fabs(a - b));
  }
  cr_expect(err <= tol * sqrt((double)n), "cuFFT vs FFTW forward: %.3g", err);
  cr_assert_eq(cnp_fft_inverse(pd, &dX, &dy, NULL), CNP_OK, "%s", cnp_last_error());
  copy(&y, &dy);
  double rerr = 0, norm = cnp_fft_norm(pd);
  for (int64_t i = 0; i < n; i++) rerr = fmax(rerr, fabs(rd(&y, i) * norm - rd(&x, i)));
  cr_expect(rerr <= tol, "cuFFT round trip: %.3g", rerr);
  cnp_array_free(&x); cnp_array_free(&X); cnp_array_free(&Xd_h); cnp_array_free(&y);
  cnp_array_free(&dx); cnp_array_free(&dX); cnp_array_free(&dy);
  cnp_fft_plan_destroy(ph);
  cnp_fft_plan_destroy(pd);
}

Test(grid_gpu, fft_vs_fftw)
{
  need_cuda();
  int64_t a[1] = {101}, b[2] = {48, 33}, c[3] = {9, 16, 10};
  for (int k = 0; k < 2; k++) {
    cnp_dtype t = k ? CNP_FLOAT64 : CNP_FLOAT32;
    fft_case(1, a, 0, t);
    fft_case(1, a, 3, t);
    fft_case(2, b, 0, t);
    fft_case(3, c, 2, t);
  }
}

static void deposit_case(int ndim, const int64_t *dims, int shape, int64_t n)
{
  cnp_pgrid *ph, *pd;
  cr_assert_eq(cnp_pgrid_create(&ph, CNP_BACKEND_HOST, 0, ndim, dims, (cnp_shape)shape,
                                CNP_FLOAT64, n, NULL), CNP_OK);
  cr_assert_eq(cnp_pgrid_create(&pd, CNP_BACKEND_CUDA, 0, ndim, dims, (cnp_shape)shape,
                                CNP_FLOAT64, n, NULL), CNP_OK, "%s", cnp_last_error());
  cnp_array hp[3], dp[3], hw = alloc_on(CNP_BACKEND_HOST, CNP_FLOAT64, 1, &n);
  cnp_array dw = alloc_on(CNP_BACKEND_CUDA, CNP_FLOAT64, 1, &n);
  for (int a = 0; a < ndim; a++) {
    hp[a] = alloc_on(CNP_BACKEND_HOST, CNP_FLOAT64, 1, &n);
    dp[a] = alloc_on(CNP_BACKEND_CUDA, CNP_FLOAT64, 1, &n);
    for (int64_t i = 0; i < n; i++) ((double *)hp[a].data)[i] = (urand() * 3 - 1) * (double)dims[a];
    copy(&dp[a], &hp[a]);
  }
  for (int64_t i = 0; i < n; i++) ((double *)hw.data)[i] = 0.5 + urand();
  copy(&dw, &hw);
  cnp_array hg = alloc_on(CNP_BACKEND_HOST, CNP_FLOAT64, ndim, dims);
  cnp_array dg_h = alloc_on(CNP_BACKEND_HOST, CNP_FLOAT64, ndim, dims);
  cnp_array dg_h2 = alloc_on(CNP_BACKEND_HOST, CNP_FLOAT64, ndim, dims);
  cnp_array dg = alloc_on(CNP_BACKEND_CUDA, CNP_FLOAT64, ndim, dims);
  cr_assert_eq(cnp_deposit(ph, hp, &hw, &hg, CNP_DEPOSIT_SORTED, NULL), CNP_OK);
  int64_t cells = cnp_array_numel(&hg);
  for (int mode = 0; mode < 2; mode++) {
    cr_assert_eq(cnp_deposit(pd, dp, &dw, &dg, (cnp_deposit_mode)mode, NULL), CNP_OK, "%s",
                 cnp_last_error());
    copy(&dg_h, &dg);
    double err = 0, mx = 0;
    for (int64_t c = 0; c < cells; c++) {
      err = fmax(err, fabs(rd(&dg_h, c) - rd(&hg, c)));
      mx = fmax(mx, fabs(rd(&hg, c)));
    }
    cr_expect(err <= 1e-12 * (mx + 1), "shape %d %dD mode %d: device vs host %.3g", shape,
              ndim, mode, err);
    if (mode == 0) {
      cr_assert_eq(cnp_deposit(pd, dp, &dw, &dg, CNP_DEPOSIT_SORTED, NULL), CNP_OK);
      copy(&dg_h2, &dg);
      cr_expect(memcmp(dg_h.data, dg_h2.data, cnp_array_nbytes(&hg)) == 0,
                "SORTED on the device differs run to run");
    }
  }
  cnp_array ho = alloc_on(CNP_BACKEND_HOST, CNP_FLOAT64, 1, &n);
  cnp_array do_h = alloc_on(CNP_BACKEND_HOST, CNP_FLOAT64, 1, &n);
  cnp_array dout = alloc_on(CNP_BACKEND_CUDA, CNP_FLOAT64, 1, &n);
  copy(&dg, &hg);
  cr_assert_eq(cnp_gather(ph, hp, &hg, &ho, NULL), CNP_OK);
  cr_assert_eq(cnp_gather(pd, dp, &dg, &dout, NULL), CNP_OK, "%s", cnp_last_error());
  copy(&do_h, &dout);
  double gerr = 0;
  for (int64_t i = 0; i < n; i++) gerr = fmax(gerr, fabs(rd(&ho, i) - rd(&do_h, i)));
  cr_expect(gerr <= 1e-12, "gather device vs host %.3g", gerr);
  for (int a = 0; a < ndim; a++) { cnp_array_free(&hp[a]); cnp_array_free(&dp[a]); }
  cnp_array_free(&hw); cnp_array_free(&dw); cnp_array_free(&hg); cnp_array_free(&dg_h);
  cnp_array_free(&dg_h2); cnp_array_free(&dg); cnp_array_free(&ho); cnp_array_free(&do_h);
  cnp_array_free(&dout);
  cnp_pgrid_destroy(ph);
  cnp_pgrid_destroy(pd);
}

Test(grid_gpu, deposit_gather_vs_host)
{
  need_cuda();
  int64_t d1[1] = {64}, d2[2] = {40, 33}, d3[3] = {8, 9, 10};
  for (int s = 0; s < 3; s++) {
    deposit_case(1, d1, s, 20000);
    deposit_case(2, d2, s, 50000);
    deposit_case(3, d3, s, 20000);
  }
}

#ifdef CNP_HAVE_CUDA
Test(grid_gpu, graph_capture)
{
  need_cuda();
  int64_t dims[2] = {64, 48}, cd[2] = {64, 25}, n = 30000;
  cnp_stream *s;
  cr_assert_eq(cnp_stream_create_on(&s, CNP_BACKEND_CUDA, 0), CNP_OK, "%s", cnp_last_error());
  cnp_fft_plan *fft;
  cr_assert_eq(cnp_fft_plan_create(&fft, CNP_BACKEND_CUDA, 0, 2, dims, 0, CNP_FLOAT64, 0), CNP_OK);
  cnp_pgrid *pg;
  cr_assert_eq(cnp_pgrid_create(&pg, CNP_BACKEND_CUDA, 0, 2, dims, CNP_SHAPE_CIC, CNP_FLOAT64,
                                n, NULL), CNP_OK, "%s", cnp_last_error());
  cnp_array hp[2], dp[2];
  for (int a = 0; a < 2; a++) {
    hp[a] = alloc_on(CNP_BACKEND_HOST, CNP_FLOAT64, 1, &n);
    dp[a] = alloc_on(CNP_BACKEND_CUDA, CNP_FLOAT64, 1, &n);
    for (int64_t i = 0; i < n; i++) ((double *)hp[a].data)[i] = urand() * (double)dims[a];
    copy(&dp[a], &hp[a]);
  }
  cnp_array rho = alloc_on(CNP_BACKEND_CUDA, CNP_FLOAT64, 2, dims);
  cnp_array hat = alloc_on(CNP_BACKEND_CUDA, CNP_COMPLEX128, 2, cd);
  cnp_array phi = alloc_on(CNP_BACKEND_CUDA, CNP_FLOAT64, 2, dims);
  cnp_array want = alloc_on(CNP_BACKEND_HOST, CNP_FLOAT64, 2, dims);
  cnp_array got = alloc_on(CNP_BACKEND_HOST, CNP_FLOAT64, 2, dims);
  /* direct */
  cr_assert_eq(cnp_deposit(pg, dp, NULL, &rho, CNP_DEPOSIT_SORTED, s), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_fft_forward(fft, &rho, &hat, s), CNP_OK);
  cr_assert_eq(cnp_fft_inverse(fft, &hat, &phi, s), CNP_OK);
  cr_assert_eq(cnp_stream_synchronize(s), CNP_OK);
  cr_assert_eq(cnp_array_copy(&want, &phi, NULL), CNP_OK);
  cr_assert_eq(cnp_array_fill_zero(&phi, s), CNP_OK);
  cr_assert_eq(cnp_stream_synchronize(s), CNP_OK);
  /* captured */
  cudaStream_t cs = (cudaStream_t)cnp_stream_native(s);
  cr_assert_eq(cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  cnp_status s1 = cnp_deposit(pg, dp, NULL, &rho, CNP_DEPOSIT_SORTED, s);
  cnp_status s2 = cnp_fft_forward(fft, &rho, &hat, s);
  cnp_status s3 = cnp_fft_inverse(fft, &hat, &phi, s);
  cudaGraph_t graph;
  cudaError_t e = cudaStreamEndCapture(cs, &graph);
  cr_assert_eq(s1, CNP_OK, "deposit in capture: %s", cnp_last_error());
  cr_assert_eq(s2, CNP_OK, "forward in capture: %s", cnp_last_error());
  cr_assert_eq(s3, CNP_OK, "inverse in capture: %s", cnp_last_error());
  cr_assert_eq(e, cudaSuccess, "capture: %s", cudaGetErrorString(e));
  cudaGraphExec_t exec;
  cr_assert_eq(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  for (int r = 0; r < 2; r++) cr_assert_eq(cudaGraphLaunch(exec, cs), cudaSuccess);
  cr_assert_eq(cnp_stream_synchronize(s), CNP_OK);
  cr_assert_eq(cnp_array_copy(&got, &phi, NULL), CNP_OK);
  cr_expect(memcmp(got.data, want.data, cnp_array_nbytes(&want)) == 0,
            "graph replay differs from the direct calls");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  for (int a = 0; a < 2; a++) { cnp_array_free(&hp[a]); cnp_array_free(&dp[a]); }
  cnp_array_free(&rho); cnp_array_free(&hat); cnp_array_free(&phi);
  cnp_array_free(&want); cnp_array_free(&got);
  cnp_pgrid_destroy(pg);
  cnp_fft_plan_destroy(fft);
  cnp_stream_destroy(s);
}
#endif
