/*
** test_streams.c -- streams.cnp: three streams ordered by events, snapshots with 1 and 3
** slots, a mirror of the user's array, an imported declaration file, a hand-written kernel
** (host fallback kernels/smooth.c) taking a component-major i32 field.
*/
#include "streamy.h"
#include "e2e.h"
#define NN 300
int main(void) {
  static double hostarr[NN], x[NN], y[NN], z[NN], h[NN]; static int32_t m[2][NN];
  uint64_t seed = 3;
  streamy *p; char err[256];
  streamy_config cfg = STREAMY_CONFIG_INIT;
  cfg.N = NN; cfg.gain = 1.5; cfg.hm_host = hostarr;
  for (int i = 0; i < NN; i++) h[i] = hostarr[i] = e2e_rand(&seed);
  CHECK(streamy_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
#define F(name, T) ((T *)streamy_field(p, name).data)
  for (int i = 0; i < NN; i++) x[i] = F("x", double)[i] = e2e_rand(&seed);
  for (int s = 0; s < 5; s++) {
    CHECK(streamy_step(p) == 0, "step: %s", streamy_error(p));
    CHECK(streamy_sync(p) == 0, "sync");
    for (int i = 0; i < NN; i++) { x[i] += 1.0; m[1][i] = m[0][i] + i; }
    for (int i = 0; i < NN; i++) y[i] = x[i] * 1.5;
    for (int i = 0; i < NN; i++) { int l = i > 0 ? i - 1 : 0, r = i + 1 < NN ? i + 1 : NN - 1; z[i] = (y[l] + y[i] + y[r]) / 3.0; m[0][i] += 1; }
    for (int i = 0; i < NN; i++) h[i] += z[i];
    cnp_array sx, sy, fm = streamy_field(p, "m");
    CHECK(streamy_snapshot(p, "sx", &sx) == 0, "sx");
    CHECK(streamy_snapshot(p, "sy", &sy) == 0, "sy");
    for (int i = 0; i < NN; i++) {
      CHECK(((double *)sx.data)[i] == x[i], "sx[%d] step %d", i, s);
      CHECK(((double *)sy.data)[i] == y[i], "sy[%d]", i);
      CHECK(F("x", double)[i] == x[i], "x[%d]", i);
      CHECK(F("z", double)[i] == z[i], "z[%d]", i);
      CHECK(hostarr[i] == h[i], "h[%d] %g vs %g", i, hostarr[i], h[i]);
      for (int k = 0; k < 2; k++) CHECK(*(int32_t *)((char *)fm.data + k * fm.strides[0] + i * fm.strides[1]) == m[k][i], "m[%d,%d]", k, i);
    }
  }
  streamy_teardown(p);
  printf("streams ok\n");
  return 0;
}
