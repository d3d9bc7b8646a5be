/*
** test_poisson.c -- poisson.cnp against the analytic solution: for the source
** rho = sin(a x) sin(b y) [sin(c z)] (a, b, c angular wave numbers of the box: 2 pi m / L),
** -lap(phi) = rho gives phi = rho / (a^2 + b^2 [+ c^2]). f64 to rounding (1e-12 relative to
** max |phi|), f32 to float rounding (1e-5). Odd and even extents, boxes other than 2 pi.
** Also the wave() order: a source of a negative frequency along y (fftfreq) and of the
** Nyquist mode. Exits 77 (skipped) without FFTW. With the CUDA unit and E2E_BACKEND=cuda
** (e2e.poisson.gpu) the same on the device: cuFFT and the k-space kernels.
*/
#include "poisson.h"
#include "e2e.h"
#include "e2e_backend.h"

#define NY 12
#define NX 15
#define NZ 6
#define PI 3.14159265358979323846

static double maxabs(const double *x, int n)
{
  double m = 0;
  for (int i = 0; i < n; i++) m = fabs(x[i]) > m ? fabs(x[i]) : m;
  return m;
}

int main(void)
{
  const double Ly = 1.5, Lx = 2.0 * PI, Lz = 3.0;
  poisson *p;
  char err[256];
  poisson_config cfg = POISSON_CONFIG_INIT;
  cfg.ny = NY, cfg.nx = NX, cfg.Ly = Ly, cfg.Lx = Lx;
  int skip = e2e_choose_backend("poisson", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  int st = poisson_setup(&p, &cfg, err, sizeof err);
  if (st == CNP_EUNSUPPORTED) {
    printf("poisson skipped: %s\n", err);
    return 77;
  }
  CHECK(st == 0, "setup: %s", err);
  const double a = 2 * PI * 3 / Lx, b = 2 * PI * 2 / Ly, c = 2 * PI * 1 / Lz;
  static double r1[NX], r2[NY * NX], r3[NZ * NY * NX];
  static float r32[NY * NX];
  static double want1[NX], want2[NY * NX], want3[NZ * NY * NX], want32[NY * NX];
  for (int i = 0; i < NX; i++) {
    double x = Lx * i / NX;
    r1[i] = sin(a * x) + 0.25 * cos(2 * PI * 7 / Lx * x);
    want1[i] = sin(a * x) / (a * a) + 0.25 * cos(2 * PI * 7 / Lx * x) / pow(2 * PI * 7 / Lx, 2);
  }
  for (int j = 0; j < NY; j++)
    for (int i = 0; i < NX; i++) {
      double x = Lx * i / NX, y = Ly * j / NY, kn = 2 * PI * (NY / 2) / Ly;
      /* sin·sin, plus the Nyquist mode along y (cos, its only real form) times cos(x) */
      double v = sin(a * x) * sin(b * y) + 0.5 * cos(kn * y) * cos(2 * PI / Lx * x);
      r2[j * NX + i] = v;
      want2[j * NX + i] = sin(a * x) * sin(b * y) / (a * a + b * b) +
                          0.5 * cos(kn * y) * cos(2 * PI / Lx * x) / (kn * kn + pow(2 * PI / Lx, 2));
      r32[j * NX + i] = (float)(sin(a * x) * sin(b * y));
      want32[j * NX + i] = sin(a * x) * sin(b * y) / (a * a + b * b);
    }
  for (int k = 0; k < NZ; k++)
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++) {
        double x = Lx * i / NX, y = Ly * j / NY, z = Lz * k / NZ;
        int q = (k * NY + j) * NX + i;
        r3[q] = sin(a * x) * sin(b * y) * sin(c * z);
        want3[q] = r3[q] / (a * a + b * b + c * c);
      }
  e2e_put(poisson_field(p, "rho1"), "rho1", r1);
  e2e_put(poisson_field(p, "rho"), "rho", r2);
  e2e_put(poisson_field(p, "rho3"), "rho3", r3);
  e2e_put(poisson_field(p, "rho32"), "rho32", r32);
  CHECK(poisson_step(p) == 0, "step: %s", poisson_error(p));
  poisson_sync(p);
  const double *p1 = e2e_get(poisson_field(p, "phi1"), "phi1"), *p2 = e2e_get(poisson_field(p, "phi"), "phi");
  const double *p3 = e2e_get(poisson_field(p, "phi3"), "phi3");
  const float *p32 = e2e_get(poisson_field(p, "phi32"), "phi32");
  double m1 = maxabs(want1, NX), m2 = maxabs(want2, NY * NX), m3 = maxabs(want3, NZ * NY * NX);
  double m32 = maxabs(want32, NY * NX), e1 = 0, e2 = 0, e3 = 0, e32 = 0;
  for (int i = 0; i < NX; i++) e1 = fmax(e1, fabs(p1[i] - want1[i]) / m1);
  for (int i = 0; i < NY * NX; i++) e2 = fmax(e2, fabs(p2[i] - want2[i]) / m2);
  for (int i = 0; i < NZ * NY * NX; i++) e3 = fmax(e3, fabs(p3[i] - want3[i]) / m3);
  for (int i = 0; i < NY * NX; i++) e32 = fmax(e32, fabs(p32[i] - want32[i]) / m32);
  printf("poisson: max relative error 1D %.2e, 2D %.2e, 3D %.2e, 2D f32 %.2e\n", e1, e2, e3, e32);
  CHECK(e1 <= 1e-12 && e2 <= 1e-12 && e3 <= 1e-12, "f64 solve off the analytic solution");
  CHECK(e32 <= 1e-5, "f32 solve off the analytic solution");
  e2e_release();
  poisson_teardown(p);
  return 0;
}
