/* scale.c -- host fallback of kernels/scale.cu (same name, same arguments). */
#include <stdint.h>

void scale(double *x, double f, double shift, int64_t n);

void scale(double *x, double f, double shift, int64_t n)
{
  for (int64_t i = 0; i < n; i++) x[i] = x[i] * f + shift;
}
