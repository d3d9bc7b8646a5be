/*
** test_cmath.c -- end to end: tests/e2e/cmath.cnp (the complex builtins complex, real, imag,
** conj, arg) against the same formulas written with C99 <complex.h>. Two steps (z carries
** over through conj(z)); inputs include signed zeros and negative values (arg of a real
** value is 0 or pi, atan2 of -0.0 included). f64/c128 results agree to 1e-13, f32/c64 ones
** to 1e-5 (the CUDA unit multiplies and divides c64 through its own formulas and
** cuda::std::complex). real/imag/conj of a real value and integer results are exact.
** With E2E_BACKEND=cuda (the CUDA unit only) the pipeline runs on the GPU; without a usable
** device the test exits 77 (skipped), or fails under CNP_REQUIRE_CUDA=1.
*/
#include "cmath.h"
#include "e2e.h"
#include "e2e_backend.h"

#include <complex.h>

#define NN 1000
#define STEPS 2
#define PI 3.14159265358979323846

static const void *get(cmath *p, const char *name) { return e2e_get(cmath_field(p, name), name); }
static void release(void) { e2e_release(); }
static void put(cmath *p, const char *name, const void *data)
{
  e2e_put(cmath_field(p, name), name, data);
}

static int close_z(double complex a, double complex b, double tol)
{
  return e2e_close(creal(a), creal(b), tol) && e2e_close(cimag(a), cimag(b), tol);
}

/* Inputs and the reference state. */
static double A[NN], B[NN];
static float AF[NN], BF[NN];
static int64_t AI[NN];
static uint16_t H[NN];
static double complex Z[NN];
static float complex Y[NN], V[NN];

static void fill(void)
{
  uint64_t seed = 11;
  for (int i = 0; i < NN; i++) {
    A[i] = 4.0 * e2e_rand(&seed) - 2.0;
    B[i] = 4.0 * e2e_rand(&seed) - 2.0;
    AF[i] = (float)(4.0 * e2e_rand(&seed) - 2.0);
    BF[i] = (float)(4.0 * e2e_rand(&seed) - 2.0);
    AI[i] = (int64_t)(e2e_rand(&seed) * 200.0) - 100;
    H[i] = cnp_float_to_half((float)(8.0 * e2e_rand(&seed) - 4.0));
    Z[i] = (e2e_rand(&seed) - 0.5) + (e2e_rand(&seed) - 0.5) * I;
  }
  /* signed zeros: arg(-0.0) = pi, arg(+0.0) = 0, for f64 and f16 */
  A[0] = 0.0;
  A[1] = -0.0;
  A[2] = -1.0;
  H[0] = 0x0000;
  H[1] = 0x8000;
  B[3] = 0.0;
  A[3] = -3.0;       /* z = -3 + 0i: arg on the branch cut */
}

int main(void)
{
  cmath *p = NULL;
  char err[256];
  cmath_config cfg = CMATH_CONFIG_INIT;
  int skip = e2e_choose_backend("cmath", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = NN;
  CHECK(cmath_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  fill();
  put(p, "a", A);
  put(p, "b", B);
  put(p, "af", AF);
  put(p, "bf", BF);
  put(p, "ai", AI);
  put(p, "h", H);
  put(p, "z", Z);
  const double complex w = 0.75 - 1.5 * I;
  const float s = 0.375f;
  cnp_complex128 wp = {creal(w), cimag(w)};
  for (int step = 0; step < STEPS; step++) {
    int st = cmath_step(p, wp, s);
    CHECK(st == CNP_OK, "step: %s (%s)", cnp_status_name((cnp_status)st), cmath_error(p));
    CHECK(cmath_sync(p) == CNP_OK, "sync");
    const double complex *GZ = get(p, "z");
    const float complex *GY = get(p, "y"), *GV = get(p, "v");
    const double *ZR = get(p, "zr"), *ZI = get(p, "zi"), *ZP = get(p, "zp"), *RR = get(p, "rr");
    const float *YR = get(p, "yr"), *YI = get(p, "yi"), *YP = get(p, "yp"), *RH = get(p, "rh");
    const int64_t *RI = get(p, "ri");
    for (int i = 0; i < NN; i++) {
      /* the reference: cmath.cnp's map, line by line */
      Z[i] = (A[i] + B[i] * I) * w + conj(Z[i]) - (1.0 + 0.25 * I);
      Y[i] = (AF[i] + BF[i] * I) * (0.0f + 1.0f * I) + (float complex)(A[i] + B[i] * I);
      float hv = cnp_half_to_float(H[i]);
      float complex q = hv + s * I;
      V[i] = conjf(q) * Y[i] + (float complex)((float)AI[i] + 2.0f * I) / 4.0f + (AF[i] + 0.5f * I);
      double zp = carg(Z[i]) + 5.0;
      float yr = crealf(V[i]) + s, yi = -cimagf(V[i]), yp = cargf(Y[i]);
      double rr = A[i] + 0.0 + B[i] + atan2(0.0, A[i]) + A[i];
      int64_t ri = AI[i];
      float rh = atan2f(0.0f, hv) + hv;
      CHECK(close_z(GZ[i], Z[i], 1e-13), "step %d: z[%d] = %.17g%+.17gi, reference %.17g%+.17gi",
            step, i, creal(GZ[i]), cimag(GZ[i]), creal(Z[i]), cimag(Z[i]));
      /* carry the pipeline's own z (the difference must not grow over steps) */
      Z[i] = GZ[i];
      CHECK(close_z(GY[i], Y[i], 1e-5), "y[%d] = %.9g%+.9gi, reference %.9g%+.9gi", i, crealf(GY[i]),
            cimagf(GY[i]), crealf(Y[i]), cimagf(Y[i]));
      CHECK(close_z(GV[i], V[i], 1e-5), "v[%d] = %.9g%+.9gi, reference %.9g%+.9gi", i, crealf(GV[i]),
            cimagf(GV[i]), crealf(V[i]), cimagf(V[i]));
      /* real/imag of the pipeline's own z, exactly (the reference z may differ in the last bits
         on a GPU, where the compiler contracts the complex product into FMAs) */
      CHECK(ZR[i] == creal(Z[i]) && ZI[i] == cimag(Z[i]), "zr/zi[%d] = %.17g %.17g, z %.17g%+.17gi",
            i, ZR[i], ZI[i], creal(Z[i]), cimag(Z[i]));
      CHECK(e2e_close(ZP[i], zp, 1e-13), "zp[%d] = %.17g, reference %.17g", i, ZP[i], zp);
      CHECK(e2e_close(YR[i], yr, 1e-5), "yr[%d] = %.9g, reference %.9g", i, YR[i], yr);
      CHECK(e2e_close(YI[i], yi, 1e-5), "yi[%d] = %.9g, reference %.9g", i, YI[i], yi);
      CHECK(e2e_close(YP[i], yp, 1e-5), "yp[%d] = %.9g, reference %.9g", i, YP[i], yp);
      CHECK(e2e_close(RR[i], rr, 1e-13), "rr[%d] = %.17g, reference %.17g", i, RR[i], rr);
      CHECK(RI[i] == ri, "ri[%d] = %lld, reference %lld", i, (long long)RI[i], (long long)ri);
      CHECK(e2e_close(RH[i], rh, 1e-6), "rh[%d] = %.9g, reference %.9g", i, RH[i], rh);
    }
    /* the signed zeros and the branch cut, exactly */
    CHECK(RR[0] == 0.0 + B[0] && RR[1] == PI + B[1] && RR[2] == -2.0 + B[2] + PI,
          "arg of 0.0, -0.0, -1.0: rr = %.17g %.17g %.17g", RR[0] - B[0], RR[1] - B[1], RR[2] - B[2]);
    CHECK(RH[0] == 0.0f && RH[1] == (float)PI, "arg of f16 +0, -0: %.9g %.9g", RH[0], RH[1]);
    release();
  }
  cmath_teardown(p);
  printf("cmath (%s backend): complex, real, imag, conj, arg match <complex.h> over %d steps\n",
         e2e_cuda ? "CUDA" : "host", STEPS);
  return 0;
}
