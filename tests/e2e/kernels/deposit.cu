// deposit.cu -- the hand-written kernel the design brief's sketch declares (not called by
// the sketch): rho[cell[i]] += w[i].
extern "C" __global__ void deposit_custom(const double *w, const long long *cell, double *rho,
                                          long long n)
{
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&rho[cell[i]], w[i]);
}
