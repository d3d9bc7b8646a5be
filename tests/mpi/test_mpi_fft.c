/*
** test_mpi_fft.c — the distributed real-to-complex FFT (cnp_fft_dist_*, runtime/mpi_fft.c)
** and the slab helpers (cnp_slab_*) at 1, 2 and 4 ranks.
**   - forward on the local slabs equals the serial cnp_fft_forward of the whole grid (every
**     rank computes the serial reference itself and compares its spectral block) for 2D and
**     3D grids, even and uneven splits (10 planes on 4 ranks), ranks holding no plane or no
**     spectral column, float64 and float32;
**   - inverse(forward(x)) / N == x, with and without CNP_FFT_DESTROY_INPUT; arrays
**     without FFTW's SIMD alignment (through the plan's buffers) give the same results;
**   - a spectral Poisson solve -lap(phi) = rho against the analytic sin*sin solution
**     (1e-12 relative) and against the serial solve of the same grid (rounding), which also
**     makes the 1-, 2- and 4-rank results agree;
**   - wave numbers and layout of the local block; bad arguments on one rank fail the call on
**     every rank and change no array; CUDA arrays are CNP_EUNSUPPORTED;
**   - cnp_slab_range / _owner / _dest, and cnp_slab_dest driving cnp_migrate.
*/
#include <math.h>
#include <stdlib.h>

#include "mpi_test.h"

static cnp_comm *comm;
static const double PI = 3.14159265358979323846;

/* A deterministic, non-symmetric field value at global point (i, j, l). */
static double field(int64_t i, int64_t j, int64_t l)
{
  return sin(0.37 * (double)i + 1.3) + cos(0.71 * (double)j - 0.2 * (double)i) +
         0.5 * sin(0.53 * (double)l + 0.11 * (double)j) + 0.01 * (double)((i * 7 + j * 3 + l) % 5);
}

static double rget(const cnp_array *a, int64_t idx)
{
  return a->dtype == CNP_FLOAT32 ? (double)((float *)a->data)[idx] : ((double *)a->data)[idx];
}

static void rset(cnp_array *a, int64_t idx, double v)
{
  if (a->dtype == CNP_FLOAT32) ((float *)a->data)[idx] = (float)v;
  else ((double *)a->data)[idx] = v;
}

/* Complex element idx (re, im) of a complex64/complex128 array. */
static void cget(const cnp_array *a, int64_t idx, double *re, double *im)
{
  if (a->dtype == CNP_COMPLEX64) {
    *re = ((float *)a->data)[2 * idx];
    *im = ((float *)a->data)[2 * idx + 1];
  } else {
    *re = ((double *)a->data)[2 * idx];
    *im = ((double *)a->data)[2 * idx + 1];
  }
}

static cnp_dtype cplx(cnp_dtype t) { return t == CNP_FLOAT32 ? CNP_COMPLEX64 : CNP_COMPLEX128; }

static void alloc(cnp_array *a, cnp_dtype t, int ndim, const int64_t *shape)
{
  OK(cnp_array_alloc_on(a, CNP_BACKEND_HOST, 0, t, ndim, shape, CNP_ORDER_C, 0));
}

/* The local real slab of the global field. */
static void fill_slab(cnp_array *x, const cnp_fft_dist_layout *L)
{
  int64_t n1 = L->real_shape[1], n2 = L->ndim == 3 ? L->real_shape[2] : 1;
  for (int64_t i = 0; i < L->real_shape[0]; i++)
    for (int64_t j = 0; j < n1; j++)
      for (int64_t l = 0; l < n2; l++)
        rset(x, (i * n1 + j) * n2 + l, field(L->real_offset + i, j, l));
}

/* Forward vs the serial FFT of the whole grid, and the round trip. */
static void check_forward(int ndim, int64_t n0, int64_t n1, int64_t n2, cnp_dtype t,
                          unsigned flags)
{
  int64_t dims[3] = {n0, n1, n2};
  cnp_fft_dist_plan *p;
  OK(cnp_fft_dist_plan_create(&p, comm, ndim, dims, t, flags));
  cnp_fft_dist_layout L;
  OK(cnp_fft_dist_local(p, &L));
  ASSERT_EQ_I(ndim, L.ndim);
  ASSERT_EQ_I(t_rank, L.rank);
  ASSERT_EQ_I(1, L.complex_axis);
  int64_t off, cnt;
  OK(cnp_slab_range(n0, t_size, t_rank, &off, &cnt));
  ASSERT_EQ_I(off, L.real_offset);
  ASSERT_EQ_I(cnt, L.real_shape[0]);
  int64_t L1 = ndim == 2 ? n1 / 2 + 1 : n1, L2 = ndim == 2 ? 1 : n2 / 2 + 1;
  OK(cnp_slab_range(L1, t_size, t_rank, &off, &cnt));
  ASSERT_EQ_I(off, L.complex_offset);
  ASSERT_EQ_I(cnt, L.complex_shape[1]);
  ASSERT_EQ_I(n0, L.complex_shape[0]);
  ASSERT_EQ_I(L1, L.global_complex[1]);

  /* serial reference, whole grid on every rank */
  cnp_fft_plan *sp;
  OK(cnp_fft_plan_create(&sp, CNP_BACKEND_HOST, 0, ndim, dims, 0, t, 0));
  int64_t gshape[3] = {n0, n1, n2}, gcshape[3] = {n0, L1, L2};
  cnp_array gx, gX;
  alloc(&gx, t, ndim, gshape);
  alloc(&gX, cplx(t), ndim, gcshape);
  int64_t m2 = ndim == 3 ? n2 : 1;
  for (int64_t i = 0; i < n0; i++)
    for (int64_t j = 0; j < n1; j++)
      for (int64_t l = 0; l < m2; l++) rset(&gx, (i * n1 + j) * m2 + l, field(i, j, l));
  OK(cnp_fft_forward(sp, &gx, &gX, NULL));

  cnp_array x, X, y;
  alloc(&x, t, ndim, L.real_shape);
  alloc(&y, t, ndim, L.real_shape);
  alloc(&X, cplx(t), ndim, L.complex_shape);
  fill_slab(&x, &L);
  OK(cnp_fft_dist_forward(p, &x, &X, NULL));
  double tol = t == CNP_FLOAT32 ? 2e-5 : 1e-13, scale = 0.0, err = 0.0;
  for (int64_t i = 0; i < cnp_array_numel(&gX); i++) {
    double re, im;
    cget(&gX, i, &re, &im);
    scale = fmax(scale, hypot(re, im));
  }
  int64_t m = L.complex_shape[1];
  for (int64_t i = 0; i < n0; i++)
    for (int64_t j = 0; j < m; j++)
      for (int64_t l = 0; l < L2; l++) {
        double a, b, c, d;
        cget(&X, (i * m + j) * L2 + l, &a, &b);
        cget(&gX, (i * L1 + L.complex_offset + j) * L2 + l, &c, &d);
        err = fmax(err, hypot(a - c, b - d));
      }
  if (err > tol * scale)
    T_FAIL("forward %dD %lldx%lldx%lld %s: max error %.3g of %.3g", ndim, (long long)n0,
           (long long)n1, (long long)n2, cnp_dtype_name(t), err, scale);
  t_checks++;
  /* the input is unchanged */
  cnp_array xc;
  alloc(&xc, t, ndim, L.real_shape);
  fill_slab(&xc, &L);
  ASSERT(cnp_array_nbytes(&x) == 0 || memcmp(x.data, xc.data, cnp_array_nbytes(&x)) == 0);

  /* round trip */
  cnp_array Xc;
  alloc(&Xc, cplx(t), ndim, L.complex_shape);
  if (cnp_array_nbytes(&X)) memcpy(Xc.data, X.data, cnp_array_nbytes(&X));
  OK(cnp_fft_dist_inverse(p, &X, &y, NULL));
  if (!(flags & CNP_FFT_DESTROY_INPUT))
    ASSERT(cnp_array_nbytes(&X) == 0 || memcmp(X.data, Xc.data, cnp_array_nbytes(&X)) == 0);
  double norm = cnp_fft_dist_norm(p), rerr = 0.0;
  ASSERT(fabs(norm * (double)(n0 * n1 * m2) - 1.0) < 1e-15);
  for (int64_t i = 0; i < cnp_array_numel(&x); i++)
    rerr = fmax(rerr, fabs(rget(&y, i) * norm - rget(&x, i)));
  if (rerr > (t == CNP_FLOAT32 ? 1e-5 : 1e-13))
    T_FAIL("round trip %dD %lldx%lldx%lld: error %.3g", ndim, (long long)n0, (long long)n1,
           (long long)n2, rerr);
  t_checks++;

  cnp_array_free(&Xc);
  cnp_array_free(&xc);
  cnp_array_free(&x);
  cnp_array_free(&y);
  cnp_array_free(&X);
  cnp_array_free(&gx);
  cnp_array_free(&gX);
  OK(cnp_fft_plan_destroy(sp));
  OK(cnp_fft_dist_plan_destroy(p));
}

static void test_forward_2d(void)
{
  check_forward(2, 16, 12, 1, CNP_FLOAT64, 0);                    /* even */
  check_forward(2, 10, 9, 1, CNP_FLOAT64, 0);                     /* 10 planes, odd N1 */
  check_forward(2, 3, 8, 1, CNP_FLOAT64, 0);                      /* a rank with no plane */
  check_forward(2, 7, 2, 1, CNP_FLOAT64, CNP_FFT_DESTROY_INPUT);  /* 2 spectral columns */
  check_forward(2, 32, 30, 1, CNP_FLOAT64, CNP_FFT_MEASURE);
  check_forward(2, 10, 16, 1, CNP_FLOAT32, 0);
}

static void test_forward_3d(void)
{
  check_forward(3, 8, 8, 8, CNP_FLOAT64, 0);
  check_forward(3, 10, 6, 5, CNP_FLOAT64, 0);
  check_forward(3, 5, 3, 4, CNP_FLOAT64, CNP_FFT_DESTROY_INPUT);  /* 3 columns on 4 ranks */
  check_forward(3, 9, 7, 6, CNP_FLOAT32, 0);
}

/* Arrays without FFTW's SIMD alignment (8 bytes past an aligned block) go through the
** plan's buffers: the same results as aligned arrays, inputs preserved. */
static void check_unaligned(int ndim, int64_t n0, int64_t n1, int64_t n2, unsigned flags)
{
  int64_t dims[3] = {n0, n1, n2};
  cnp_fft_dist_plan *p;
  OK(cnp_fft_dist_plan_create(&p, comm, ndim, dims, CNP_FLOAT64, flags));
  cnp_fft_dist_layout L;
  OK(cnp_fft_dist_local(p, &L));
  int64_t nr = 1, nc = 1;
  for (int d = 0; d < ndim; d++) nr *= L.real_shape[d], nc *= L.complex_shape[d];
  char *rb = malloc((size_t)nr * 8 + 64), *cb = malloc((size_t)nc * 16 + 64);
  char *yb = malloc((size_t)nr * 8 + 64);
  ASSERT(rb && cb && yb);
  cnp_array x, X, y, ax, aX, ay;
  OK(cnp_array_wrap(&x, rb + 8, CNP_BACKEND_HOST, 0, CNP_FLOAT64, ndim, L.real_shape, NULL));
  OK(cnp_array_wrap(&y, yb + 8, CNP_BACKEND_HOST, 0, CNP_FLOAT64, ndim, L.real_shape, NULL));
  OK(cnp_array_wrap(&X, cb + 8, CNP_BACKEND_HOST, 0, CNP_COMPLEX128, ndim, L.complex_shape,
                    NULL));
  alloc(&ax, CNP_FLOAT64, ndim, L.real_shape);
  alloc(&ay, CNP_FLOAT64, ndim, L.real_shape);
  alloc(&aX, CNP_COMPLEX128, ndim, L.complex_shape);
  fill_slab(&x, &L);
  fill_slab(&ax, &L);
  OK(cnp_fft_dist_forward(p, &x, &X, NULL));
  OK(cnp_fft_dist_forward(p, &ax, &aX, NULL));
  for (int64_t i = 0; i < 2 * nc; i++)
    ASSERT(fabs(((double *)X.data)[i] - ((double *)aX.data)[i]) <= 1e-12);
  OK(cnp_fft_dist_inverse(p, &X, &y, NULL));
  OK(cnp_fft_dist_inverse(p, &aX, &ay, NULL));
  double norm = cnp_fft_dist_norm(p);
  for (int64_t i = 0; i < nr; i++) {
    ASSERT(fabs(((double *)y.data)[i] - ((double *)ay.data)[i]) <= 1e-12);
    ASSERT(fabs(((double *)y.data)[i] * norm - ((double *)ax.data)[i]) <= 1e-13);
  }
  cnp_array_free(&ax);
  cnp_array_free(&ay);
  cnp_array_free(&aX);
  free(rb);
  free(cb);
  free(yb);
  OK(cnp_fft_dist_plan_destroy(p));
}

static void test_unaligned(void)
{
  check_unaligned(2, 10, 9, 1, 0);
  check_unaligned(2, 12, 16, 1, CNP_FFT_DESTROY_INPUT);
  check_unaligned(3, 6, 5, 4, 0);
}

/* -lap(phi) = rho on the periodic box [0, Lx) x [0, Ly) with phi = sin(2 pi a x / Lx) *
** sin(2 pi b y / Ly): forward, phi_hat = rho_hat / |k|^2 (0 at k = 0), inverse. Compared
** with the analytic phi and with the serial solve (cnp_fft on the whole grid). */
static void test_poisson_2d(void)
{
  int64_t N0 = 48, N1 = 40, dims[2] = {N0, N1};
  double Lx = 2.0, Ly = 3.0, a = 3.0, b = 2.0;
  double ka = 2 * PI * a / Lx, kb = 2 * PI * b / Ly;
  cnp_fft_dist_plan *p;
  OK(cnp_fft_dist_plan_create(&p, comm, 2, dims, CNP_FLOAT64, 0));
  cnp_fft_dist_layout L;
  OK(cnp_fft_dist_local(p, &L));
  cnp_array rho, phi, hat, kx, ky;
  alloc(&rho, CNP_FLOAT64, 2, L.real_shape);
  alloc(&phi, CNP_FLOAT64, 2, L.real_shape);
  alloc(&hat, CNP_COMPLEX128, 2, L.complex_shape);
  alloc(&kx, CNP_FLOAT64, 1, &L.complex_shape[0]);
  alloc(&ky, CNP_FLOAT64, 1, &L.complex_shape[1]);
  OK(cnp_fft_dist_wavenumbers(p, 0, Lx, &kx));
  OK(cnp_fft_dist_wavenumbers(p, 1, Ly, &ky));
  for (int64_t j = 0; j < L.complex_shape[1]; j++)
    ASSERT(((double *)ky.data)[j] == cnp_fft_wavenumber(N1, Ly, L.complex_offset + j, 1));
  for (int64_t i = 0; i < N0; i++)
    ASSERT(((double *)kx.data)[i] == cnp_fft_wavenumber(N0, Lx, i, 0));
  double *r = rho.data;
  for (int64_t i = 0; i < L.real_shape[0]; i++)
    for (int64_t j = 0; j < N1; j++) {
      double x = Lx * (double)(L.real_offset + i) / (double)N0, y = Ly * (double)j / (double)N1;
      r[i * N1 + j] = (ka * ka + kb * kb) * sin(ka * x) * sin(kb * y);
    }
  OK(cnp_fft_dist_forward(p, &rho, &hat, NULL));
  double norm = cnp_fft_dist_norm(p), *h = hat.data;
  int64_t m = L.complex_shape[1];
  for (int64_t i = 0; i < N0; i++)
    for (int64_t j = 0; j < m; j++) {
      double k2 = ((double *)kx.data)[i] * ((double *)kx.data)[i] +
                  ((double *)ky.data)[j] * ((double *)ky.data)[j];
      double f = k2 > 0 ? norm / k2 : 0.0;
      h[2 * (i * m + j)] *= f;
      h[2 * (i * m + j) + 1] *= f;
    }
  OK(cnp_fft_dist_inverse(p, &hat, &phi, NULL));
  double err = 0.0, *ph = phi.data;
  for (int64_t i = 0; i < L.real_shape[0]; i++)
    for (int64_t j = 0; j < N1; j++) {
      double x = Lx * (double)(L.real_offset + i) / (double)N0, y = Ly * (double)j / (double)N1;
      err = fmax(err, fabs(ph[i * N1 + j] - sin(ka * x) * sin(kb * y)));
    }
  double gerr;
  MPI_Allreduce(&err, &gerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (gerr > 1e-12) T_FAIL("Poisson: max error %.3g (peak 1)", gerr);
  t_checks++;

  /* the serial solve of the same grid agrees to rounding (so 1, 2, 4 ranks agree) */
  cnp_fft_plan *sp;
  OK(cnp_fft_plan_create(&sp, CNP_BACKEND_HOST, 0, 2, dims, 0, CNP_FLOAT64, 0));
  int64_t gs[2] = {N0, N1}, gc[2] = {N0, N1 / 2 + 1};
  cnp_array grho, gphi, ghat;
  alloc(&grho, CNP_FLOAT64, 2, gs);
  alloc(&gphi, CNP_FLOAT64, 2, gs);
  alloc(&ghat, CNP_COMPLEX128, 2, gc);
  for (int64_t i = 0; i < N0; i++)
    for (int64_t j = 0; j < N1; j++) {
      double x = Lx * (double)i / (double)N0, y = Ly * (double)j / (double)N1;
      ((double *)grho.data)[i * N1 + j] = (ka * ka + kb * kb) * sin(ka * x) * sin(kb * y);
    }
  OK(cnp_fft_forward(sp, &grho, &ghat, NULL));
  for (int64_t i = 0; i < N0; i++)
    for (int64_t j = 0; j < gc[1]; j++) {
      double kxx = cnp_fft_wavenumber(N0, Lx, i, 0), kyy = cnp_fft_wavenumber(N1, Ly, j, 1);
      double k2 = kxx * kxx + kyy * kyy, f = k2 > 0 ? cnp_fft_norm(sp) / k2 : 0.0;
      ((double *)ghat.data)[2 * (i * gc[1] + j)] *= f;
      ((double *)ghat.data)[2 * (i * gc[1] + j) + 1] *= f;
    }
  OK(cnp_fft_inverse(sp, &ghat, &gphi, NULL));
  double d = 0.0;
  for (int64_t i = 0; i < L.real_shape[0]; i++)
    for (int64_t j = 0; j < N1; j++)
      d = fmax(d, fabs(ph[i * N1 + j] - ((double *)gphi.data)[(L.real_offset + i) * N1 + j]));
  if (d > 1e-14) T_FAIL("Poisson: distributed vs serial differ by %.3g", d);
  t_checks++;
  cnp_array_free(&grho);
  cnp_array_free(&gphi);
  cnp_array_free(&ghat);
  OK(cnp_fft_plan_destroy(sp));
  cnp_array_free(&rho);
  cnp_array_free(&phi);
  cnp_array_free(&hat);
  cnp_array_free(&kx);
  cnp_array_free(&ky);
  OK(cnp_fft_dist_plan_destroy(p));
}

/* 3D: phi = sin(x) sin(2y) cos(z) on [0, 2 pi)^3, the same solve (third axis halved). */
static void test_poisson_3d(void)
{
  int64_t N = 16, dims[3] = {N, 12, 10};
  double Lb = 2 * PI;
  cnp_fft_dist_plan *p;
  OK(cnp_fft_dist_plan_create(&p, comm, 3, dims, CNP_FLOAT64, CNP_FFT_DESTROY_INPUT));
  cnp_fft_dist_layout L;
  OK(cnp_fft_dist_local(p, &L));
  cnp_array rho, phi, hat, k[3];
  alloc(&rho, CNP_FLOAT64, 3, L.real_shape);
  alloc(&phi, CNP_FLOAT64, 3, L.real_shape);
  alloc(&hat, CNP_COMPLEX128, 3, L.complex_shape);
  for (int a = 0; a < 3; a++) {
    alloc(&k[a], CNP_FLOAT64, 1, &L.complex_shape[a]);
    OK(cnp_fft_dist_wavenumbers(p, a, Lb, &k[a]));
  }
  int64_t n1 = dims[1], n2 = dims[2];
  for (int64_t i = 0; i < L.real_shape[0]; i++)
    for (int64_t j = 0; j < n1; j++)
      for (int64_t l = 0; l < n2; l++) {
        double x = Lb * (double)(L.real_offset + i) / (double)N;
        double y = Lb * (double)j / (double)n1, z = Lb * (double)l / (double)n2;
        ((double *)rho.data)[(i * n1 + j) * n2 + l] = 6.0 * sin(x) * sin(2 * y) * cos(z);
      }
  OK(cnp_fft_dist_forward(p, &rho, &hat, NULL));
  int64_t m = L.complex_shape[1], c2 = L.complex_shape[2];
  double norm = cnp_fft_dist_norm(p);
  for (int64_t i = 0; i < N; i++)
    for (int64_t j = 0; j < m; j++)
      for (int64_t l = 0; l < c2; l++) {
        double a = ((double *)k[0].data)[i], b = ((double *)k[1].data)[j],
               c = ((double *)k[2].data)[l];
        double k2 = a * a + b * b + c * c, f = k2 > 0 ? norm / k2 : 0.0;
        double *e = (double *)hat.data + 2 * ((i * m + j) * c2 + l);
        e[0] *= f;
        e[1] *= f;
      }
  OK(cnp_fft_dist_inverse(p, &hat, &phi, NULL));
  double err = 0.0, gerr;
  for (int64_t i = 0; i < L.real_shape[0]; i++)
    for (int64_t j = 0; j < n1; j++)
      for (int64_t l = 0; l < n2; l++) {
        double x = Lb * (double)(L.real_offset + i) / (double)N;
        double y = Lb * (double)j / (double)n1, z = Lb * (double)l / (double)n2;
        err = fmax(err, fabs(((double *)phi.data)[(i * n1 + j) * n2 + l] -
                             sin(x) * sin(2 * y) * cos(z)));
      }
  MPI_Allreduce(&err, &gerr, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (gerr > 1e-12) T_FAIL("3D Poisson: max error %.3g", gerr);
  t_checks++;
  for (int a = 0; a < 3; a++) cnp_array_free(&k[a]);
  cnp_array_free(&rho);
  cnp_array_free(&phi);
  cnp_array_free(&hat);
  OK(cnp_fft_dist_plan_destroy(p));
}

/* Bad arguments: one rank's error fails every rank and no array changes. */
static void test_errors(void)
{
  int64_t dims[2] = {10, 8};
  cnp_fft_dist_plan *p = (cnp_fft_dist_plan *)&dims;
  ASSERT_ST(CNP_EINVAL, cnp_fft_dist_plan_create(&p, comm, 1, dims, CNP_FLOAT64, 0));
  ASSERT(p == NULL);
  ASSERT_ST(CNP_EDTYPE, cnp_fft_dist_plan_create(&p, comm, 2, dims, CNP_INT32, 0));
  ASSERT_ST(CNP_EINVAL, cnp_fft_dist_plan_create(&p, comm, 2, dims, CNP_FLOAT64, 0x100));
  ASSERT_ST(CNP_EINVAL, cnp_fft_dist_plan_create(&p, NULL, 2, dims, CNP_FLOAT64, 0));
  if (t_size > 1) {
    /* rank 0 asks for another grid: every rank fails */
    int64_t other[2] = {t_rank == 0 ? 12 : 10, 8};
    ASSERT_ST(CNP_EINVAL, cnp_fft_dist_plan_create(&p, comm, 2, other, CNP_FLOAT64, 0));
    ASSERT_DETAIL("different global_dims");
    /* rank 0's arguments are invalid: the others fail too, naming it */
    ASSERT_ST(CNP_EDTYPE, cnp_fft_dist_plan_create(&p, comm, 2, dims,
                                             t_rank == 0 ? CNP_INT32 : CNP_FLOAT64, 0));
  }
  OK(cnp_fft_dist_plan_create(&p, comm, 2, dims, CNP_FLOAT64, 0));
  cnp_fft_dist_layout L;
  OK(cnp_fft_dist_local(p, &L));
  cnp_array x, X, bad;
  alloc(&x, CNP_FLOAT64, 2, L.real_shape);
  alloc(&X, CNP_COMPLEX128, 2, L.complex_shape);
  for (int64_t i = 0; i < cnp_array_numel(&x); i++) ((double *)x.data)[i] = 7.0;
  for (int64_t i = 0; i < 2 * cnp_array_numel(&X); i++) ((double *)X.data)[i] = -3.0;
  int64_t wrong[2] = {L.real_shape[0] + 1, L.real_shape[1]};
  alloc(&bad, CNP_FLOAT64, 2, wrong);
  /* rank 0 passes a wrong shape (others are right): all fail, nothing changes */
  cnp_array *in = t_rank == 0 ? &bad : &x;
  ASSERT_ST(CNP_ESHAPE, cnp_fft_dist_forward(p, in, &X, NULL));
  if (t_rank != 0) ASSERT_DETAIL("rank 0 failed");
  ASSERT_ST(CNP_ESHAPE, cnp_fft_dist_inverse(p, &X, t_rank == 0 ? &bad : &x, NULL));
  for (int64_t i = 0; i < cnp_array_numel(&x); i++) ASSERT(((double *)x.data)[i] == 7.0);
  for (int64_t i = 0; i < 2 * cnp_array_numel(&X); i++) ASSERT(((double *)X.data)[i] == -3.0);
  /* wrong dtype, NULL, aliasing, CUDA */
  ASSERT_ST(CNP_EDTYPE, cnp_fft_dist_forward(p, &X, &X, NULL));
  ASSERT_ST(CNP_EINVAL, cnp_fft_dist_forward(p, NULL, &X, NULL));
  cnp_array dev = x;
  dev.backend = CNP_BACKEND_CUDA;
  ASSERT_ST(CNP_EUNSUPPORTED, cnp_fft_dist_forward(p, &dev, &X, NULL));
  ASSERT_DETAIL("host-only");
  for (int64_t i = 0; i < cnp_array_numel(&x); i++) ASSERT(((double *)x.data)[i] == 7.0);
  for (int64_t i = 0; i < 2 * cnp_array_numel(&X); i++) ASSERT(((double *)X.data)[i] == -3.0);
  /* wave numbers: bad axis, wrong extent, bad length */
  cnp_array k;
  alloc(&k, CNP_FLOAT64, 1, &L.complex_shape[1]);
  ASSERT_ST(CNP_EINVAL, cnp_fft_dist_wavenumbers(p, 2, 1.0, &k));
  ASSERT_ST(CNP_EINVAL, cnp_fft_dist_wavenumbers(p, 1, 0.0, &k));
  if (L.complex_shape[1] != L.complex_shape[0])
    ASSERT_ST(CNP_ESHAPE, cnp_fft_dist_wavenumbers(p, 0, 1.0, &k));
  ASSERT_ST(CNP_EINVAL, cnp_fft_dist_local(p, NULL));
  cnp_array_free(&k);
  cnp_array_free(&bad);
  cnp_array_free(&x);
  cnp_array_free(&X);
  OK(cnp_fft_dist_plan_destroy(p));
  ASSERT_ST(CNP_ESTATE, cnp_fft_dist_local(p, &L));
  ASSERT(cnp_fft_dist_norm(p) == 0.0);
  OK(cnp_fft_dist_plan_destroy(NULL));
}

/* libcnp's fault-injection switch (runtime/internal.h): the k-th allocation fails. */
void cnp__fail_alloc_after(long k);

/* Every allocation failure during plan creation is CNP_ENOMEM on every rank, with no plan
** (the sanitizer build checks the leaks); the transforms allocate nothing: with the next
** allocation armed to fail they succeed and the failure is still pending afterwards. */
static void test_allocation(void)
{
  int64_t dims[3] = {9, 6, 4};
  int succeeded = 0;
  for (long k = 1; k <= 50 && !succeeded; k++) {
    cnp_fft_dist_plan *p = NULL;
    cnp__fail_alloc_after(k);
    cnp_status st = cnp_fft_dist_plan_create(&p, comm, 3, dims, CNP_FLOAT64, 0);
    cnp__fail_alloc_after(0);
    if (st == CNP_OK) {
      succeeded = 1;
      ASSERT(k > 3);
      OK(cnp_fft_dist_plan_destroy(p));
    } else {
      ASSERT_ST(CNP_ENOMEM, st);
      ASSERT(p == NULL);
    }
  }
  ASSERT(succeeded);
  cnp_fft_dist_plan *p;
  OK(cnp_fft_dist_plan_create(&p, comm, 3, dims, CNP_FLOAT64, 0));
  cnp_fft_dist_layout L;
  OK(cnp_fft_dist_local(p, &L));
  cnp_array x, X, y, k0, probe;
  alloc(&x, CNP_FLOAT64, 3, L.real_shape);
  alloc(&y, CNP_FLOAT64, 3, L.real_shape);
  alloc(&X, CNP_COMPLEX128, 3, L.complex_shape);
  alloc(&k0, CNP_FLOAT64, 1, &L.complex_shape[0]);
  fill_slab(&x, &L);
  int64_t one = 1;
  cnp__fail_alloc_after(1);
  cnp_status st1 = cnp_fft_dist_forward(p, &x, &X, NULL);
  cnp_status st2 = cnp_fft_dist_inverse(p, &X, &y, NULL);
  cnp_status st3 = cnp_fft_dist_wavenumbers(p, 0, 1.0, &k0);
  cnp_status armed = cnp_array_alloc_on(&probe, CNP_BACKEND_HOST, 0, CNP_INT32, 1, &one,
                                        CNP_ORDER_C, 0);
  cnp__fail_alloc_after(0);
  OK(st1);
  OK(st2);
  OK(st3);
  ASSERT_ST(CNP_ENOMEM, armed);
  cnp_array_free(&x);
  cnp_array_free(&y);
  cnp_array_free(&X);
  cnp_array_free(&k0);
  OK(cnp_fft_dist_plan_destroy(p));
}

static void test_slab(void)
{
  for (int size = 1; size <= 5; size++)
    for (int64_t n = 1; n <= 13; n++) {
      int64_t next = 0;
      for (int r = 0; r < size; r++) {
        int64_t off, cnt;
        OK(cnp_slab_range(n, size, r, &off, &cnt));
        ASSERT_EQ_I(next, off);
        ASSERT(cnt == n / size || cnt == n / size + 1);
        for (int64_t j = off; j < off + cnt; j++) {
          int owner = -1;
          OK(cnp_slab_owner(n, size, j, &owner));
          ASSERT_EQ_I(r, owner);
        }
        next = off + cnt;
      }
      ASSERT_EQ_I(n, next);
    }
  int64_t off = -5, cnt = -5;
  int owner = -7;
  ASSERT_ST(CNP_EINVAL, cnp_slab_range(0, 2, 0, &off, &cnt));
  ASSERT_ST(CNP_EINVAL, cnp_slab_range(4, 0, 0, &off, &cnt));
  ASSERT_ST(CNP_EINVAL, cnp_slab_range(4, 2, 2, &off, &cnt));
  ASSERT(off == -5 && cnt == -5);
  ASSERT_ST(CNP_ERANGE, cnp_slab_owner(4, 2, 4, &owner));
  ASSERT_ST(CNP_ERANGE, cnp_slab_owner(4, 2, -1, &owner));
  ASSERT_ST(CNP_EINVAL, cnp_slab_owner(4, 2, 0, NULL));
  ASSERT_EQ_I(-7, owner);

  /* dest: 10 planes on 4 ranks (3, 3, 2, 2) */
  double xs[7] = {0.0, 2.99, 3.0, 8.5, 9.999, -0.5, 10.25};
  int32_t want[7] = {0, 0, 1, 3, 3, 3, 0};
  int64_t n7 = 7;
  cnp_array x, d, d64;
  OK(cnp_array_wrap(&x, xs, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &n7, NULL));
  int32_t dd[7];
  int64_t dd64[7];
  for (int i = 0; i < 7; i++) dd[i] = dd64[i] = -9;
  OK(cnp_array_wrap(&d, dd, CNP_BACKEND_HOST, 0, CNP_INT32, 1, &n7, NULL));
  OK(cnp_array_wrap(&d64, dd64, CNP_BACKEND_HOST, 0, CNP_INT64, 1, &n7, NULL));
  OK(cnp_slab_dest(10, 4, &x, 6, &d));
  for (int i = 0; i < 6; i++) ASSERT_EQ_I(want[i], dd[i]);
  ASSERT_EQ_I(-9, dd[6]);
  OK(cnp_slab_dest(10, 4, &x, 7, &d64));
  for (int i = 0; i < 7; i++) ASSERT_EQ_I(want[i], dd64[i]);
  xs[4] = NAN;
  for (int i = 0; i < 7; i++) dd[i] = -9;
  ASSERT_ST(CNP_ERANGE, cnp_slab_dest(10, 4, &x, 7, &d));
  for (int i = 0; i < 7; i++) ASSERT_EQ_I(-9, dd[i]);
  ASSERT_ST(CNP_EDTYPE, cnp_slab_dest(10, 4, &d, 7, &d));
  ASSERT_ST(CNP_EINVAL, cnp_slab_dest(10, 4, &x, 8, &d));
}

/* cnp_slab_dest builds the DEST field of cnp_migrate: every particle ends on the rank that
** owns its plane. */
static void test_migrate_by_slab(void)
{
  int64_t NP = 10, cap = 16 * t_size + 8, n = 16;
  cnp_array xs;
  OK(cnp_array_alloc_on(&xs, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &cap, CNP_ORDER_C, 0));
  double *x = xs.data;
  for (int64_t i = 0; i < n; i++) x[i] = fmod(0.77 * (double)(i + 16 * t_rank) + 0.3, 10.0);
  cnp_array dest;
  OK(cnp_array_alloc_on(&dest, CNP_BACKEND_HOST, 0, CNP_INT32, 1, &cap, CNP_ORDER_C, 0));
  cnp_migrate_plan *mp;
  OK(cnp_migrate_plan_create(&mp, comm, &xs, 1, CNP_CUDA_AWARE_OFF));
  OK(cnp_slab_dest(NP, t_size, &xs, n, &dest));
  int64_t n_new = -1;
  OK(cnp_migrate(mp, &xs, 1, n, &dest, NULL, NULL, &n_new));
  int64_t off, cnt, total;
  OK(cnp_slab_range(NP, t_size, t_rank, &off, &cnt));
  for (int64_t i = 0; i < n_new; i++) ASSERT(x[i] >= (double)off && x[i] < (double)(off + cnt));
  MPI_Allreduce(&n_new, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  ASSERT_EQ_I(16 * t_size, total);
  OK(cnp_migrate_plan_destroy(mp));
  cnp_array_free(&xs);
  cnp_array_free(&dest);
}

int main(int argc, char **argv)
{
  t_init(&argc, &argv);
  OK(cnp_comm_create_mpi(&comm, MPI_COMM_WORLD));
  RUN(test_slab);
  RUN(test_forward_2d);
  RUN(test_forward_3d);
  RUN(test_unaligned);
  RUN(test_poisson_2d);
  RUN(test_poisson_3d);
  RUN(test_errors);
  RUN(test_allocation);
  RUN(test_migrate_by_slab);
  OK(cnp_comm_destroy(comm));
  return t_finish("test_mpi_fft");
}
