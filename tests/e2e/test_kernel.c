/*
** test_kernel.c -- kernel.cnp on the host backend: the generated maps around the
** hand-written kernel's host fallback give y = 2 * ((x + 1) * factor + 0.5).
** Built a second time with the CUDA unit (E2E_CUDA_UNIT): its host fallback here, and with
** E2E_BACKEND=cuda (e2e.kernel.gpu) on a GPU, where NVRTC compiles kernels/scale.cu at setup
** and the kernel catalog launches it between the two generated kernels.
*/
#include "kcall.h"
#include "e2e.h"
#include "e2e_backend.h"

int main(void)
{
  kcall *p = NULL;
  char err[256];
  kcall_config cfg = KCALL_CONFIG_INIT;
  int skip = e2e_choose_backend("kernel", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = 100;
  CHECK(kcall_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  CHECK(kcall_backend(p) == (e2e_cuda ? CNP_BACKEND_CUDA : CNP_BACKEND_HOST), "backend");
  double x[100], y[60];
  for (int i = 0; i < 100; i++) x[i] = i;
  e2e_put(kcall_field(p, "x"), "x", x);
  CHECK(kcall_set_extent(p, "N", 60) == CNP_OK, "extent");
  CHECK(kcall_step(p, 3.0) == CNP_OK, "step: %s", kcall_error(p));
  CHECK(kcall_sync(p) == CNP_OK, "sync: %s", kcall_error(p));
  e2e_get_into(kcall_field(p, "y"), "y", y);
  for (int i = 0; i < 60; i++)
    CHECK(y[i] == 2.0 * ((i + 1.0) * 3.0 + 0.5), "y[%d] = %g", i, y[i]);
  CHECK(kcall_set_extent(p, "N", 100) == CNP_OK, "extent");
  e2e_get_into(kcall_field(p, "x"), "x", x);
  CHECK(x[60] == 60.0, "rows past the live extent untouched");
  kcall_stats s;
  kcall_stats_get(p, &s);
  CHECK(s.launches == 3, "2 kernels + 1 call: %llu", (unsigned long long)s.launches);
  kcall_teardown(p);
  printf("kernel (%s backend): the hand-written kernel runs between generated maps\n",
         e2e_cuda ? "CUDA" : "host");
  return 0;
}
