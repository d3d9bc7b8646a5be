/*
** test_fftrt.c -- fftrt.cnp against a plain C reference: the forward transforms against a
** direct DFT in the r2c layout (numpy.fft.rfftn: unnormalized, the last axis halved), the
** inverses giving the input back (1/N, numpy.fft.irfftn). Exits 77 (skipped) when libcnp was
** built without FFTW (setup answers CNP_EUNSUPPORTED). With the CUDA unit and
** E2E_BACKEND=cuda (e2e.fftrt.gpu) the same checks of cuFFT.
*/
#include "fftrt.h"
#include "e2e.h"
#include "e2e_backend.h"

#include <complex.h>

#define NY 6
#define NX 7
#define PI 3.14159265358979323846

/* Direct r2c DFT of a real [n0][n1][n2] array (unused axes of extent 1), into [.][.][n2/2+1]. */
static void dft(const double *x, double complex *X, int n0, int n1, int n2)
{
  int h = n2 / 2 + 1;
  for (int k0 = 0; k0 < n0; k0++)
    for (int k1 = 0; k1 < n1; k1++)
      for (int k2 = 0; k2 < h; k2++) {
        double complex acc = 0;
        for (int j0 = 0; j0 < n0; j0++)
          for (int j1 = 0; j1 < n1; j1++)
            for (int j2 = 0; j2 < n2; j2++) {
              double ph = -2 * PI * ((double)k0 * j0 / n0 + (double)k1 * j1 / n1 + (double)k2 * j2 / n2);
              acc += x[(j0 * n1 + j1) * n2 + j2] * cexp(I * ph);
            }
        X[(k0 * n1 + k1) * h + k2] = acc;
      }
}

static void check_pair(const char *what, const double *x, const double *X, const double *y, int n0, int n1,
                       int n2, double tol)
{
  int n = n0 * n1 * n2, m = n0 * n1 * (n2 / 2 + 1);
  double complex *R = malloc(sizeof *R * (size_t)m);
  dft(x, R, n0, n1, n2);
  double scale = 0;
  for (int i = 0; i < n; i++) scale += fabs(x[i]);
  for (int k = 0; k < m; k++) {
    CHECK(fabs(X[2 * k] - creal(R[k])) <= tol * scale && fabs(X[2 * k + 1] - cimag(R[k])) <= tol * scale,
          "%s: X[%d] = %g%+gi, the DFT %g%+gi", what, k, X[2 * k], X[2 * k + 1], creal(R[k]), cimag(R[k]));
  }
  for (int i = 0; i < n; i++)
    CHECK(fabs(y[i] - x[i]) <= tol * (1 + fabs(x[i])), "%s: ifft(fft(x))[%d] = %.17g, x %.17g", what, i, y[i], x[i]);
  free(R);
}

int main(void)
{
  uint64_t seed = 19;
  fftrt *p;
  char err[256];
  fftrt_config cfg = FFTRT_CONFIG_INIT;
  cfg.ny = NY;
  cfg.nx = NX;
  int skip = e2e_choose_backend("fftrt", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  int st = fftrt_setup(&p, &cfg, err, sizeof err);
  if (st == CNP_EUNSUPPORTED) {
    printf("fftrt skipped: %s\n", err);
    return 77;
  }
  CHECK(st == 0, "setup: %s", err);
  cnp_array fx = fftrt_field(p, "x"), fxh = fftrt_field(p, "xh");
  CHECK(fx.ndim == 2 && fx.shape[0] == NY && fx.shape[1] == NX, "x is [ny, nx]");
  CHECK(fxh.ndim == 2 && fxh.shape[0] == NY && fxh.shape[1] == NX / 2 + 1, "xh is [ny, nx/2+1]");
  CHECK(fftrt_field(p, "eh").ndim == 3 && fftrt_field(p, "eh").shape[0] == 3, "eh is [3, ny, nx/2+1]");
  CHECK(fftrt_field(p, "ch").shape[2] == 3 && fftrt_field(p, "ah").shape[0] == 5, "ch, ah");
  static double x[NY * NX], e[3 * NY * NX], a[9], c[4 * 6 * 5];
  static float s[NY * NX];
  for (int i = 0; i < NY * NX; i++) x[i] = e2e_rand(&seed) - 0.5;
  for (int i = 0; i < 3 * NY * NX; i++) e[i] = e2e_rand(&seed) - 0.5;
  for (int i = 0; i < NY * NX; i++) s[i] = (float)(e2e_rand(&seed) - 0.5);
  for (int i = 0; i < 9; i++) a[i] = e2e_rand(&seed) - 0.5;
  for (int i = 0; i < 120; i++) c[i] = e2e_rand(&seed) - 0.5;
  e2e_put(fx, "x", x);
  e2e_put(fftrt_field(p, "e"), "e", e);
  e2e_put(fftrt_field(p, "s"), "s", s);
  e2e_put(fftrt_field(p, "a"), "a", a);
  e2e_put(fftrt_field(p, "c"), "c", c);
  CHECK(fftrt_step(p) == 0, "step: %s", fftrt_error(p));
  fftrt_sync(p);
#define GET(name) ((const double *)e2e_get(fftrt_field(p, name), name))
  check_pair("2D f64", x, GET("xh"), GET("y"), 1, NY, NX, 1e-13);
  for (int k = 0; k < 3; k++)
    check_pair("2D f64, component", e + k * NY * NX, GET("eh") + 2 * k * NY * (NX / 2 + 1),
               GET("e2") + k * NY * NX, 1, NY, NX, 1e-13);
  check_pair("1D f64 (odd)", a, GET("ah"), GET("a2"), 1, 1, 9, 1e-13);
  check_pair("3D f64", c, GET("ch"), GET("c2"), 4, 6, 5, 1e-13);
  {  /* f32: to float rounding */
    static double sd[NY * NX], sh[2 * NY * (NX / 2 + 1)], s2[NY * NX];
    const float *fh = e2e_get(fftrt_field(p, "sh"), "sh"), *f2 = e2e_get(fftrt_field(p, "s2"), "s2");
    for (int i = 0; i < NY * NX; i++) sd[i] = s[i], s2[i] = f2[i];
    for (int i = 0; i < 2 * NY * (NX / 2 + 1); i++) sh[i] = fh[i];
    check_pair("2D f32", sd, sh, s2, 1, NY, NX, 2e-6);
  }
  e2e_release();
  fftrt_teardown(p);
  printf("fftrt ok\n");
  return 0;
}
