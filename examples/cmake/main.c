/* Drives the generated 'scale' pipeline and checks its result against plain C. */
#include "scale.h"

#include <math.h>
#include <stdio.h>
#ifdef _OPENMP
#include <omp.h>
#endif

int main(void) {
  scale_config cfg = SCALE_CONFIG_INIT;
  cfg.N = 1000;
  scale *p;
  char err[256];
  if (scale_setup(&p, &cfg, err, sizeof err) != 0) {
    fprintf(stderr, "setup failed: %s\n", err);
    return 1;
  }
  for (int k = 0; k < 10; k++)
    if (scale_step(p, 0.5) != 0) {
      fprintf(stderr, "step failed: %s\n", scale_error(p));
      return 1;
    }
  scale_sync(p);
  cnp_array x = scale_field(p, "x");
  double want = 0.0;                     /* fields start zeroed */
  for (int k = 0; k < 10; k++) want = want * 0.5 + 1.0;
  int bad = 0;
  for (int64_t i = 0; i < x.shape[0]; i++)
    if (fabs(((const double *)x.data)[i] - want) > 1e-12) bad++;
  printf("scale: %lld elements, x = %.6f (expected %.6f), %d wrong\n",
         (long long)x.shape[0], ((const double *)x.data)[0], want, bad);
#ifdef _OPENMP
  /* the flags cnp.pc (or cnp::cnp) gave this file are those of the generated unit */
  printf("scale: OpenMP, %d threads\n", omp_get_max_threads());
#else
  printf("scale: built without OpenMP, one thread\n");
#endif
  scale_teardown(p);
  return bad != 0;
}
