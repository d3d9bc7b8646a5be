/*
** test_imag.c -- imag.cnp against C99 <complex.h>: imaginary literals in c64 (float
** _Complex) and c128 (double _Complex) arithmetic, three steps.
*/
#include <complex.h>
#include "e2e.h"
#include "imag.h"

enum { NP = 23 };

int main(void) {
  imag *p; char err[256];
  imag_config cfg = IMAG_CONFIG_INIT; cfg.N = NP;
  CHECK(imag_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  static float complex ry[NP];
  static double complex rz[NP];
  static float ra[NP];
  static double rb[NP];
  uint64_t seed = 9;
  float complex *y = imag_field(p, "y").data;
  double complex *z = imag_field(p, "z").data;
  double *b = imag_field(p, "b").data;
  for (int i = 0; i < NP; i++) {
    ry[i] = y[i] = (float)e2e_rand(&seed) + I * (float)e2e_rand(&seed);
    rz[i] = z[i] = e2e_rand(&seed) - 0.5 + I * e2e_rand(&seed);
    rb[i] = b[i] = e2e_rand(&seed);
  }
  for (int s = 0; s < 3; s++) {
    cnp_complex64 w = {0.5f * (float)s, -1.0f};
    float complex wc = w.re + I * w.im;
    CHECK(imag_step(p, w) == 0, "step %d: %s", s, imag_error(p));
    for (int i = 0; i < NP; i++) {
      float complex u = ry[i] * (2.0f * I) + wc * (1.0f * I) - 0.5f * I + 0.1f * I;
      ry[i] = u;
      rz[i] = rz[i] * (3.0 * I) + (rb[i] + 0.0 * I) * (2.5 * I);
      ra[i] = cimagf((2.0f * I) * ry[i]) + crealf((1.5f * I) * (1.5f * I));
      rb[i] = cabs(4.0 * I) + cimag(rz[i]);
    }
    CHECK(imag_sync(p) == 0, "sync");
    y = imag_field(p, "y").data; z = imag_field(p, "z").data; b = imag_field(p, "b").data;
    const float *a = imag_field(p, "a").data;
    for (int i = 0; i < NP; i++) {
      CHECK(e2e_close(crealf(y[i]), crealf(ry[i]), 1e-6) && e2e_close(cimagf(y[i]), cimagf(ry[i]), 1e-6),
            "step %d y[%d] %g%+gi vs %g%+gi", s, i, crealf(y[i]), cimagf(y[i]), crealf(ry[i]), cimagf(ry[i]));
      CHECK(e2e_close(creal(z[i]), creal(rz[i]), 1e-14) && e2e_close(cimag(z[i]), cimag(rz[i]), 1e-14),
            "step %d z[%d]", s, i);
      CHECK(e2e_close(a[i], ra[i], 1e-6), "step %d a[%d] %g vs %g", s, i, a[i], ra[i]);
      CHECK(e2e_close(b[i], rb[i], 1e-14), "step %d b[%d] %g vs %g", s, i, b[i], rb[i]);
    }
  }
  imag_teardown(p);
  printf("imag ok\n");
  return 0;
}
