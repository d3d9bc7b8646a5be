// z[i] = (y[i-1] + y[i] + y[i+1]) / 3 (clamped), m[0, i] += 1; gain unused but passed.
extern "C" __global__ void smooth(const double *y, double *z, int *m, double gain, long long n)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  long long l = i > 0 ? i - 1 : 0, r = i + 1 < n ? i + 1 : n - 1;
  z[i] = (y[l] + y[i] + y[r]) / 3.0 + 0.0 * gain;
  m[i] += 1;
}
