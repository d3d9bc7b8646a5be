#include <stdint.h>
void smooth(const double *y, double *z, int32_t *m, double gain, int64_t n);
void smooth(const double *y, double *z, int32_t *m, double gain, int64_t n)
{
  for (int64_t i = 0; i < n; i++) {
    int64_t l = i > 0 ? i - 1 : 0, r = i + 1 < n ? i + 1 : n - 1;
    z[i] = (y[l] + y[i] + y[r]) / 3.0 + 0.0 * gain;
    m[i] += 1;
  }
}
