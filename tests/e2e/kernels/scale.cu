// scale.cu -- x[i] = x[i] * f + shift: a hand-written kernel for tests/e2e/kernel.cnp.
// Arguments follow the call: fields as element pointers, params/consts by value, then the
// extent of `over` as int64_t.
extern "C" __global__ void scale(double *x, double f, double shift, long long n)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * f + shift;
}
