/*
** test_streams.c -- streams.cnp: three streams ordered by events, snapshots with 1 and 3
** slots, a mirror of the user's array, an imported declaration file, a hand-written kernel
** (host fallback kernels/smooth.c) taking a component-major i32 field.
** Built a second time with the CUDA unit (E2E_CUDA_UNIT): its host fallback here, and with
** E2E_BACKEND=cuda (e2e.streams.gpu) on a GPU: cross-stream events, pinned snapshot slots,
** the device mirror's refreshes and the NVRTC-compiled smooth kernel.
*/
#include "streamy.h"
#include "e2e.h"
#include "e2e_backend.h"
#define NN 300

int main(void) {
  static double hostarr[NN], x[NN], y[NN], z[NN], h[NN]; static int32_t m[2][NN];
  static double fx[NN], fz[NN]; static int32_t fm[2][NN];
  uint64_t seed = 3;
  streamy *p; char err[256];
  streamy_config cfg = STREAMY_CONFIG_INIT;
  int skip = e2e_choose_backend("streams", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = NN; cfg.gain = 1.5; cfg.hm_host = hostarr;
  for (int i = 0; i < NN; i++) h[i] = hostarr[i] = e2e_rand(&seed);
  CHECK(streamy_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  CHECK(streamy_backend(p) == (e2e_cuda ? CNP_BACKEND_CUDA : CNP_BACKEND_HOST), "backend");
  for (int i = 0; i < NN; i++) x[i] = e2e_rand(&seed);
  e2e_put(streamy_field(p, "x"), "x", x);
  for (int s = 0; s < 5; s++) {
    CHECK(streamy_step(p) == 0, "step: %s", streamy_error(p));
    CHECK(streamy_sync(p) == 0, "sync");
    for (int i = 0; i < NN; i++) { x[i] += 1.0; m[1][i] = m[0][i] + i; }
    for (int i = 0; i < NN; i++) y[i] = x[i] * 1.5;
    for (int i = 0; i < NN; i++) { int l = i > 0 ? i - 1 : 0, r = i + 1 < NN ? i + 1 : NN - 1; z[i] = (y[l] + y[i] + y[r]) / 3.0; m[0][i] += 1; }
    for (int i = 0; i < NN; i++) h[i] += z[i];
    cnp_array sx, sy;
    CHECK(streamy_snapshot(p, "sx", &sx) == 0, "sx");
    CHECK(streamy_snapshot(p, "sy", &sy) == 0, "sy");
    CHECK(sx.backend == CNP_BACKEND_HOST && sy.backend == CNP_BACKEND_HOST, "snapshots on the host");
    e2e_fetch(streamy_field(p, "x"), "x", fx);
    e2e_fetch(streamy_field(p, "z"), "z", fz);
    e2e_fetch(streamy_field(p, "m"), "m", fm);
    for (int i = 0; i < NN; i++) {
      CHECK(((double *)sx.data)[i] == x[i], "sx[%d] step %d", i, s);
      CHECK(((double *)sy.data)[i] == y[i], "sy[%d]", i);
      CHECK(fx[i] == x[i], "x[%d]", i);
      CHECK(fz[i] == z[i], "z[%d]", i);
      CHECK(hostarr[i] == h[i], "h[%d] %g vs %g", i, hostarr[i], h[i]);
      for (int k = 0; k < 2; k++) CHECK(fm[k][i] == m[k][i], "m[%d,%d]", k, i);
    }
  }
  streamy_teardown(p);
  printf("streams ok (%s backend)\n", e2e_cuda ? "CUDA" : "host");
  return 0;
}
