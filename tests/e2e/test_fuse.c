/*
** test_fuse.c -- fuse.cnp against a plain C reference: fused and unfused maps, gathers,
** scatter-adds (f64 and i32), math functions, casts, f32/i32/u64 per-step params and fields;
** four kernels per step.
*/
#include "fuse.h"
#include "e2e.h"
#define NN 3000
#define MM 257
#define NC 12
int main(void) {
  uint64_t seed = 7;
  fuse *p; char err[256];
  fuse_config cfg = FUSE_CONFIG_INIT;
  cfg.N = NN; cfg.M = MM; cfg.n_cells = NC;
  CHECK(fuse_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  static double x[NN], a[NN], b[NN], g[NN], E[NC], rho[NC], z[MM], zz[MM];
  static float y[NN]; static int32_t k[NN], cnt[NC]; static uint64_t id[NN]; static int64_t cell[NN];
  cnp_array fx = fuse_field(p, "x"), fy = fuse_field(p, "y"), fz = fuse_field(p, "z");
  for (int i = 0; i < NN; i++) {
    x[i] = ((double *)fx.data)[i] = e2e_rand(&seed);
    y[i] = ((float *)fy.data)[i] = (float)(e2e_rand(&seed) * 4 - 2);
  }
  for (int j = 0; j < MM; j++) z[j] = ((double *)fz.data)[j] = e2e_rand(&seed) * 6 - 3;
  for (int s = 0; s < 3; s++) {
    float alpha = 0.25f + (float)s; int32_t shift = s == 2 ? -5 : 3 * s;
    CHECK(fuse_step(p, alpha, shift) == 0, "step: %s", fuse_error(p));
    CHECK(fuse_sync(p) == 0, "sync");
    for (int i = 0; i < NN; i++) {
      a[i] = x[i] * 2.0; cell[i] = (int64_t)floor(x[i] * (double)NC);
      b[i] = a[i] + (double)(y[i] * alpha); k[i] = (int32_t)cell[i] + shift;
      id[i] = (uint64_t)i * 3 + (uint64_t)(int64_t)k[i];
    }
    for (int c = 0; c < NC; c++) { E[c] = (double)c * 0.5 - 1.0; rho[c] = 0; cnt[c] = 0; }
    for (int i = 0; i < NN; i++) { g[i] = E[cell[i]] + a[(i + 1) % NN]; rho[cell[i]] += b[i]; cnt[cell[i]] += 1; }
    for (int j = 0; j < MM; j++)
      zz[j] = sqrt(fabs(z[j])) + exp(-z[j]) + fmod(z[j], 0.3) + fmin(z[j], 0.5) + fmax(z[j], -0.5)
            + log(1.0 + fabs(z[j])) + sin(z[j]) * cos(z[j]) + ceil(z[j]) + pow(fabs(z[j]), 1.5);
#define F(name, T) ((T *)fuse_field(p, name).data)
    for (int i = 0; i < NN; i++) {
      CHECK(F("a", double)[i] == a[i], "a[%d]", i);
      CHECK(F("cell", int64_t)[i] == cell[i], "cell[%d]", i);
      CHECK(F("b", double)[i] == b[i], "b[%d] %.17g vs %.17g", i, F("b", double)[i], b[i]);
      CHECK(F("k", int32_t)[i] == k[i], "k[%d]", i);
      CHECK(F("id", uint64_t)[i] == id[i], "id[%d] %llu vs %llu", i, (unsigned long long)F("id", uint64_t)[i], (unsigned long long)id[i]);
      CHECK(F("g", double)[i] == g[i], "g[%d]", i);
    }
    for (int c = 0; c < NC; c++) {
      CHECK(F("E", double)[c] == E[c], "E");
      CHECK(e2e_close(F("rho", double)[c], rho[c], 1e-12), "rho[%d] %g vs %g", c, F("rho", double)[c], rho[c]);
      CHECK(F("cnt", int32_t)[c] == cnt[c], "cnt[%d] %d vs %d", c, F("cnt", int32_t)[c], cnt[c]);
    }
    for (int j = 0; j < MM; j++) CHECK(e2e_close(F("zz", double)[j], zz[j], 1e-13), "zz[%d] %.17g vs %.17g", j, F("zz", double)[j], zz[j]);
  }
  fuse_stats st; fuse_stats_get(p, &st);
  printf("fuse ok: launches per step %llu\n", (unsigned long long)st.launches);
  CHECK(st.launches == 4, "4 kernels per step, got %llu", (unsigned long long)st.launches);
  fuse_teardown(p);
  return 0;
}
