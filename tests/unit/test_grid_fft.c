/*
** test_grid_fft.c — FFT plans of cnp/grid.h on the host (FFTW): spectral Poisson solves in
** 1D, 2D and 3D against the analytic solution, round trips for float32 and float64 over odd
** and even sizes (with and without a batch axis), a naive DFT for the layout and sign,
** preserved inputs, misaligned arrays, wave numbers, and bad arguments (status, outputs
** unchanged). Without FFTW every host plan is CNP_EUNSUPPORTED and that is all we check.
*/
#include <criterion/criterion.h>
#include <complex.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cnp/cnp.h"

static const double PI = 3.14159265358979323846;

static uint64_t rng_state = 12345;
static double urand(void)
{
  uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

static cnp_array alloc(cnp_dtype t, int ndim, const int64_t *shape)
{
  cnp_array a;
  cr_assert_eq(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, t, ndim, shape, CNP_ORDER_C, 0),
               CNP_OK, "%s", cnp_last_error());
  return a;
}

static int have_fftw(void)
{
  cnp_fft_plan *p = NULL;
  int64_t n = 4;
  cnp_status st = cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, 1, &n, 0, CNP_FLOAT64, 0);
  if (st == CNP_OK) cnp_fft_plan_destroy(p);
  else cr_assert_eq(st, CNP_EUNSUPPORTED, "%s", cnp_last_error());
  return st == CNP_OK;
}

/* ∇²φ = −ρ, ρ = Π_a sin(2π x_a / L_a), on a periodic box: φ = ρ / Σ_a (2π/L_a)². */
static void poisson(int ndim, const int64_t *dims, const double *L, unsigned flags)
{
  cnp_fft_plan *p;
  cr_assert_eq(cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, ndim, dims, 0, CNP_FLOAT64,
                                   flags), CNP_OK, "%s", cnp_last_error());
  int an;
  int64_t rs[CNP_MAX_DIMS], cs[CNP_MAX_DIMS];
  cr_assert_eq(cnp_fft_shapes(p, &an, rs, cs), CNP_OK);
  cr_assert_eq(an, ndim);
  cnp_array rho = alloc(CNP_FLOAT64, ndim, rs), phi = alloc(CNP_FLOAT64, ndim, rs);
  cnp_array hat = alloc(CNP_COMPLEX128, ndim, cs);
  cnp_array k[3];
  for (int a = 0; a < ndim; a++) {
    k[a] = alloc(CNP_FLOAT64, 1, &cs[a]);
    cr_assert_eq(cnp_fft_wavenumbers(p, a, L[a], &k[a], NULL), CNP_OK, "%s", cnp_last_error());
  }
  int64_t d0 = dims[0], d1 = ndim > 1 ? dims[1] : 1, d2 = ndim > 2 ? dims[2] : 1;
  double kk = 0;
  for (int a = 0; a < ndim; a++) kk += (2 * PI / L[a]) * (2 * PI / L[a]);
  double *r = rho.data;
  for (int64_t i = 0; i < d0; i++)
    for (int64_t j = 0; j < d1; j++)
      for (int64_t l = 0; l < d2; l++) {
        double v = sin(2 * PI * (double)i / (double)d0);
        if (ndim > 1) v *= sin(2 * PI * (double)j / (double)d1);
        if (ndim > 2) v *= sin(2 * PI * (double)l / (double)d2);
        r[(i * d1 + j) * d2 + l] = v;
      }
  cr_assert_eq(cnp_fft_forward(p, &rho, &hat, NULL), CNP_OK, "%s", cnp_last_error());
  /* the k-space map: φ̂ = ρ̂ / k² (k = 0: 0), times 1/N */
  int64_t c0 = cs[0], c1 = ndim > 1 ? cs[1] : 1, c2 = ndim > 2 ? cs[2] : 1;
  double complex *h = hat.data;
  double norm = cnp_fft_norm(p);
  const double *kx = k[0].data, *ky = ndim > 1 ? k[1].data : NULL,
               *kz = ndim > 2 ? k[2].data : NULL;
  for (int64_t i = 0; i < c0; i++)
    for (int64_t j = 0; j < c1; j++)
      for (int64_t l = 0; l < c2; l++) {
        double k2 = kx[i] * kx[i] + (ky ? ky[j] * ky[j] : 0) + (kz ? kz[l] * kz[l] : 0);
        int64_t q = (i * c1 + j) * c2 + l;
        h[q] = k2 == 0 ? 0 : h[q] * norm / k2;
      }
  cr_assert_eq(cnp_fft_inverse(p, &hat, &phi, NULL), CNP_OK, "%s", cnp_last_error());
  double err = 0, mx = 0;
  for (int64_t q = 0; q < d0 * d1 * d2; q++) {
    double want = r[q] / kk;
    err = fmax(err, fabs(((double *)phi.data)[q] - want));
    mx = fmax(mx, fabs(want));
  }
  cr_expect(err <= 1e-12 * mx, "Poisson %dD: max error %.3g of max %.3g", ndim, err, mx);
  for (int a = 0; a < ndim; a++) cnp_array_free(&k[a]);
  cnp_array_free(&rho);
  cnp_array_free(&phi);
  cnp_array_free(&hat);
  cnp_fft_plan_destroy(p);
}

Test(grid_fft, poisson_1d_2d_3d)
{
  if (!have_fftw()) return;
  int64_t d1[1] = {64};
  double L1[1] = {3.0};
  poisson(1, d1, L1, CNP_FFT_ESTIMATE);
  int64_t d2[2] = {48, 64};
  double L2[2] = {2.0, 5.0};
  poisson(2, d2, L2, CNP_FFT_ESTIMATE);
  poisson(2, d2, L2, CNP_FFT_MEASURE);
  int64_t d2o[2] = {45, 33};             /* odd sizes */
  poisson(2, d2o, L2, CNP_FFT_ESTIMATE);
  int64_t d3[3] = {16, 12, 20};
  double L3[3] = {1.0, 2.0, 1.5};
  poisson(3, d3, L3, CNP_FFT_ESTIMATE);
  int64_t d3o[3] = {9, 15, 7};
  poisson(3, d3o, L3, CNP_FFT_ESTIMATE);
}

static void fill_real(cnp_array *a)
{
  int64_t n = cnp_array_numel(a);
  for (int64_t i = 0; i < n; i++) {
    double v = urand() * 2 - 1;
    if (a->dtype == CNP_FLOAT32) ((float *)a->data)[i] = (float)v;
    else ((double *)a->data)[i] = v;
  }
}

static double rd(const cnp_array *a, int64_t i)
{
  return a->dtype == CNP_FLOAT32 ? ((float *)a->data)[i] : ((double *)a->data)[i];
}

static void round_trip(int ndim, const int64_t *dims, int64_t batch, cnp_dtype t,
                       unsigned flags)
{
  cnp_fft_plan *p;
  cr_assert_eq(cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, ndim, dims, batch, t, flags),
               CNP_OK, "%s", cnp_last_error());
  int an;
  int64_t rs[CNP_MAX_DIMS], cs[CNP_MAX_DIMS];
  cnp_fft_shapes(p, &an, rs, cs);
  cr_assert_eq(an, ndim + (batch > 0));
  cnp_dtype ct = t == CNP_FLOAT32 ? CNP_COMPLEX64 : CNP_COMPLEX128;
  cnp_array x = alloc(t, an, rs), y = alloc(t, an, rs), X = alloc(ct, an, cs);
  cnp_array X0 = alloc(ct, an, cs), x0 = alloc(t, an, rs);
  fill_real(&x);
  memcpy(x0.data, x.data, cnp_array_nbytes(&x));
  cr_assert_eq(cnp_fft_forward(p, &x, &X, NULL), CNP_OK, "%s", cnp_last_error());
  cr_expect(memcmp(x0.data, x.data, cnp_array_nbytes(&x)) == 0, "forward changed its input");
  memcpy(X0.data, X.data, cnp_array_nbytes(&X));
  cr_assert_eq(cnp_fft_inverse(p, &X, &y, NULL), CNP_OK, "%s", cnp_last_error());
  if (!(flags & CNP_FFT_DESTROY_INPUT))
    cr_expect(memcmp(X0.data, X.data, cnp_array_nbytes(&X)) == 0, "inverse changed its input");
  double tol = t == CNP_FLOAT32 ? 2e-5 : 1e-13, norm = cnp_fft_norm(p), err = 0;
  for (int64_t i = 0; i < cnp_array_numel(&x); i++)
    err = fmax(err, fabs(rd(&y, i) * norm - rd(&x, i)));
  cr_expect(err <= tol, "round trip %dD %lld (batch %lld) %s: error %.3g", ndim,
            (long long)dims[0], (long long)batch, cnp_dtype_name(t), err);
  cnp_array_free(&x); cnp_array_free(&y); cnp_array_free(&X);
  cnp_array_free(&X0); cnp_array_free(&x0);
  cnp_fft_plan_destroy(p);
}

Test(grid_fft, round_trips)
{
  if (!have_fftw()) return;
  static const int64_t s1[] = {1, 2, 7, 16, 15, 101};
  for (int t = 0; t < 2; t++) {
    cnp_dtype dt = t ? CNP_FLOAT64 : CNP_FLOAT32;
    for (size_t i = 0; i < sizeof s1 / sizeof s1[0]; i++) {
      round_trip(1, &s1[i], 0, dt, 0);
      round_trip(1, &s1[i], 3, dt, 0);
    }
    int64_t a[2] = {5, 8}, b[2] = {6, 9}, c[3] = {3, 4, 5}, d[3] = {4, 6, 8};
    round_trip(2, a, 0, dt, 0);
    round_trip(2, b, 2, dt, CNP_FFT_MEASURE);
    round_trip(2, b, 0, dt, CNP_FFT_DESTROY_INPUT);
    round_trip(3, c, 0, dt, 0);
    round_trip(3, d, 2, dt, CNP_FFT_DESTROY_INPUT);
  }
}

/* The r2c layout and sign against a naive DFT (2D 5 x 6, batch 2). */
Test(grid_fft, naive_dft_layout)
{
  if (!have_fftw()) return;
  int64_t dims[2] = {5, 6};
  cnp_fft_plan *p;
  cr_assert_eq(cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, 2, dims, 2, CNP_FLOAT64, 0), CNP_OK);
  int64_t rs[4], cs[4];
  cnp_fft_shapes(p, NULL, rs, cs);
  cr_assert_eq(cs[2], 4);
  cnp_array x = alloc(CNP_FLOAT64, 3, rs), X = alloc(CNP_COMPLEX128, 3, cs);
  fill_real(&x);
  cr_assert_eq(cnp_fft_forward(p, &x, &X, NULL), CNP_OK);
  const double *xv = x.data;
  const double complex *Xv = X.data;
  double err = 0;
  for (int b = 0; b < 2; b++)
    for (int k0 = 0; k0 < 5; k0++)
      for (int k1 = 0; k1 < 4; k1++) {
        double complex s = 0;
        for (int j0 = 0; j0 < 5; j0++)
          for (int j1 = 0; j1 < 6; j1++)
            s += xv[(b * 5 + j0) * 6 + j1] *
                 cexp(-2 * PI * I * ((double)(k0 * j0) / 5 + (double)(k1 * j1) / 6));
        err = fmax(err, cabs(s - Xv[(b * 5 + k0) * 4 + k1]));
      }
  cr_expect(err < 1e-12, "naive DFT differs by %.3g", err);
  cnp_array_free(&x); cnp_array_free(&X);
  cnp_fft_plan_destroy(p);
}

/* Arrays not at FFTW's alignment go through the plan's buffers: same results. */
Test(grid_fft, misaligned_arrays)
{
  if (!have_fftw()) return;
  int64_t dims[2] = {8, 10}, cdims[2] = {8, 6};
  cnp_fft_plan *p;
  cr_assert_eq(cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, 2, dims, 0, CNP_FLOAT64, 0), CNP_OK);
  double *rb = calloc(81, sizeof(double)), *yb = calloc(81, sizeof(double));
  double complex *cb = calloc(49, sizeof(double complex));
  cnp_array x, y, X, xa = alloc(CNP_FLOAT64, 2, dims), Xa = alloc(CNP_COMPLEX128, 2, cdims);
  cr_assert_eq(cnp_array_wrap(&x, rb + 1, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, dims, NULL), CNP_OK);
  cr_assert_eq(cnp_array_wrap(&y, yb + 1, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, dims, NULL), CNP_OK);
  cr_assert_eq(cnp_array_wrap(&X, (char *)cb + 8, CNP_BACKEND_HOST, 0, CNP_COMPLEX128, 2,
                              cdims, NULL), CNP_OK);
  fill_real(&x);
  memcpy(xa.data, x.data, 80 * sizeof(double));
  cr_assert_eq(cnp_fft_forward(p, &x, &X, NULL), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_fft_forward(p, &xa, &Xa, NULL), CNP_OK);
  cr_expect(memcmp(X.data, Xa.data, 48 * sizeof(double complex)) == 0);
  cr_assert_eq(cnp_fft_inverse(p, &X, &y, NULL), CNP_OK);
  double err = 0;
  for (int i = 0; i < 80; i++) err = fmax(err, fabs(rd(&y, i) / 80 - rd(&x, i)));
  cr_expect(err < 1e-14, "misaligned round trip error %.3g", err);
  free(rb); free(yb); free(cb);
  cnp_array_free(&xa); cnp_array_free(&Xa);
  cnp_fft_plan_destroy(p);
}

Test(grid_fft, wavenumbers)
{
  double L = 2 * PI;
  static const double e8[] = {0, 1, 2, 3, -4, -3, -2, -1}, e7[] = {0, 1, 2, 3, -3, -2, -1};
  for (int j = 0; j < 8; j++) cr_expect_float_eq(cnp_fft_wavenumber(8, L, j, 0), e8[j], 1e-15);
  for (int j = 0; j < 7; j++) cr_expect_float_eq(cnp_fft_wavenumber(7, L, j, 0), e7[j], 1e-15);
  for (int j = 0; j <= 4; j++) cr_expect_float_eq(cnp_fft_wavenumber(8, L, j, 1), j, 1e-15);
  cr_expect_eq(cnp_fft_wavenumber(8, L, 5, 1), 0.0);
  cr_expect_eq(cnp_fft_wavenumber(8, L, 8, 0), 0.0);
  cr_expect_float_eq(cnp_fft_wavenumber(10, 0.5, 3, 0), 2 * PI * 3 / 0.5, 1e-12);
  if (!have_fftw()) return;
  int64_t dims[3] = {8, 7, 6};
  cnp_fft_plan *p;
  cr_assert_eq(cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, 3, dims, 0, CNP_FLOAT32, 0), CNP_OK);
  int64_t n0 = 8, n2 = 4, wrong = 6;
  cnp_array k0 = alloc(CNP_FLOAT64, 1, &n0), k2 = alloc(CNP_FLOAT32, 1, &n2);
  cnp_array kw = alloc(CNP_FLOAT64, 1, &wrong);
  cr_assert_eq(cnp_fft_wavenumbers(p, 0, L, &k0, NULL), CNP_OK);
  cr_assert_eq(cnp_fft_wavenumbers(p, 2, L, &k2, NULL), CNP_OK);
  for (int j = 0; j < 8; j++) cr_expect_float_eq(((double *)k0.data)[j], e8[j], 1e-15);
  for (int j = 0; j < 4; j++) cr_expect_float_eq(((float *)k2.data)[j], (float)j, 1e-6);
  cr_expect_eq(cnp_fft_wavenumbers(p, 2, L, &kw, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_fft_wavenumbers(p, 3, L, &k0, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_fft_wavenumbers(p, 0, -1.0, &k0, NULL), CNP_EINVAL);
  cnp_array_free(&k0); cnp_array_free(&k2); cnp_array_free(&kw);
  cnp_fft_plan_destroy(p);
}

Test(grid_fft, bad_arguments)
{
  int64_t dims[2] = {4, 6}, zero[2] = {4, 0};
  cnp_fft_plan *p = NULL;
  cr_expect_eq(cnp_fft_plan_create(NULL, CNP_BACKEND_HOST, 0, 2, dims, 0, CNP_FLOAT64, 0), CNP_EINVAL);
  cr_expect_eq(cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, 0, dims, 0, CNP_FLOAT64, 0), CNP_EINVAL);
  cr_expect_eq(cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, 4, dims, 0, CNP_FLOAT64, 0), CNP_EINVAL);
  cr_expect_eq(cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, 2, zero, 0, CNP_FLOAT64, 0), CNP_EINVAL);
  cr_expect_eq(cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, 2, dims, -1, CNP_FLOAT64, 0), CNP_EINVAL);
  cr_expect_eq(cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, 2, dims, 0, CNP_INT32, 0), CNP_EDTYPE);
  cr_expect_eq(cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, 2, dims, 0, CNP_COMPLEX128, 0), CNP_EDTYPE);
  cr_expect_eq(cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, 2, dims, 0, CNP_FLOAT64, 0x80), CNP_EINVAL);
  cr_expect_eq(cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 1, 2, dims, 0, CNP_FLOAT64, 0), CNP_EDEVICE);
  cr_expect_eq(cnp_fft_plan_create(&p, (cnp_backend)7, 0, 2, dims, 0, CNP_FLOAT64, 0), CNP_EINVAL);
  cr_expect_eq(cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, 2, NULL, 0, CNP_FLOAT64, 0), CNP_EINVAL);
  cr_expect(p == NULL);
#ifndef CNP_HAVE_CUDA
  cr_expect_eq(cnp_fft_plan_create(&p, CNP_BACKEND_CUDA, 0, 2, dims, 0, CNP_FLOAT64, 0),
               CNP_EUNSUPPORTED);
#endif
  cr_expect_eq(cnp_fft_plan_destroy(NULL), CNP_OK);
  if (!have_fftw()) return;
  cr_assert_eq(cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, 2, dims, 0, CNP_FLOAT64, 0), CNP_OK);
  int64_t cd[2] = {4, 4}, bad[2] = {4, 3}, big[2] = {8, 6};
  cnp_array x = alloc(CNP_FLOAT64, 2, dims), X = alloc(CNP_COMPLEX128, 2, cd);
  cnp_array Xb = alloc(CNP_COMPLEX128, 2, bad), xf = alloc(CNP_FLOAT32, 2, dims);
  cnp_array xx = alloc(CNP_FLOAT64, 2, big), Xc = alloc(CNP_COMPLEX64, 2, cd);
  fill_real(&x);
  memset(X.data, 0x5a, cnp_array_nbytes(&X));
  unsigned char before[256];
  memcpy(before, X.data, cnp_array_nbytes(&X));
  cr_expect_eq(cnp_fft_forward(NULL, &x, &X, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_fft_forward(p, NULL, &X, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_fft_forward(p, &x, NULL, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_fft_forward(p, &x, &Xb, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_fft_forward(p, &xf, &X, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_fft_forward(p, &x, &Xc, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_fft_inverse(p, &x, &X, NULL), CNP_EDTYPE);       /* swapped */
  /* a strided view (every other row of an (8, 6) array) */
  cnp_array strided = xx;
  strided.shape[0] = 4;
  strided.strides[0] *= 2;
  cr_expect_eq(cnp_fft_forward(p, &strided, &X, NULL), CNP_ELAYOUT);
  /* overlap: a complex view over the real input's bytes */
  cnp_array alias;
  cr_assert_eq(cnp_array_wrap(&alias, x.data, CNP_BACKEND_HOST, 0, CNP_COMPLEX128, 2, cd, NULL),
               CNP_OK);
  cr_expect_eq(cnp_fft_forward(p, &x, &alias, NULL), CNP_EALIAS);
  cr_expect(memcmp(before, X.data, cnp_array_nbytes(&X)) == 0, "failed calls changed the output");
  cr_expect_eq(cnp_fft_shapes(NULL, NULL, NULL, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_fft_norm(NULL), 0.0);
  cr_expect_float_eq(cnp_fft_norm(p), 1.0 / 24, 1e-16);
  cnp_array_free(&x); cnp_array_free(&X); cnp_array_free(&Xb); cnp_array_free(&xf);
  cnp_array_free(&xx); cnp_array_free(&Xc);
  cr_expect_eq(cnp_fft_plan_destroy(p), CNP_OK);
  cr_expect_neq(cnp_fft_plan_destroy(p), CNP_OK);                  /* destroyed handle */
}

void cnp__fail_alloc_after(long k);
Test(grid_fft, allocation_failures)
{
  int64_t dims[2] = {6, 8};
  int done = 0;
  for (long k = 1; k < 20 && !done; k++) {
    cnp_fft_plan *p = (cnp_fft_plan *)&p;
    cnp__fail_alloc_after(k);
    cnp_status st = cnp_fft_plan_create(&p, CNP_BACKEND_HOST, 0, 2, dims, 0, CNP_FLOAT64, 0);
    cnp__fail_alloc_after(0);
    if (st == CNP_OK) {
      cr_expect_eq(cnp_fft_plan_destroy(p), CNP_OK);
      done = 1;
    } else {
      cr_expect(st == CNP_ENOMEM || st == CNP_EUNSUPPORTED, "k %ld: %s", k, cnp_last_error());
      cr_expect(p == NULL);
      if (st == CNP_EUNSUPPORTED) done = 1;
    }
  }
  cr_expect(done, "create never succeeded");
}
