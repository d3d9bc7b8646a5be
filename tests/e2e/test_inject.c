/*
** test_inject.c -- inject.cnp against a plain C reference: rows appended after a compaction
** (their global and local indices), the extent growing, then an append past the capacity:
** CNP_EOVERFLOW from step(), the extent clamped to the capacity, the guard rows past it intact.
** A count of 0 or less adds no rows.
*/
#include "inject.h"
#include "e2e.h"
#define CAP 64

int main(void) {
  inject *p; char err[256];
  inject_config cfg = INJECT_CONFIG_INIT;
  cfg.N = CAP;
  CHECK(inject_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  CHECK(inject_set_extent(p, "N", 0) == 0, "extent");
  static double x[CAP]; static int64_t id[CAP];
  int64_t n = 0;
  for (int call = 0; call < 8; call++) {
    int64_t add = call == 1 ? -4 : call == 2 ? 0 : 5 + call * 2;   /* a count <= 0 adds nothing */
    double tt = 0.25 * call;
    int st = inject_step(p, add, tt);
    CHECK(inject_sync(p) == 0, "sync");
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++) {
      x[i] += 1.0;
      if (x[i] < 40.0) { x[m] = x[i]; id[m] = id[i]; m++; }
    }
    n = m;
    int64_t room = CAP - n, got = add < 0 ? 0 : add < room ? add : room;
    for (int64_t k = 0; k < got; k++) { x[n + k] = tt + 0.5 * (double)k; id[n + k] = (n + k) * 1000 + k; }
    n += got;
    if (got < add) {
      CHECK(st == CNP_EOVERFLOW, "call %d: status %d, expected CNP_EOVERFLOW", call, st);
      printf("inject: call %d over capacity: %s\n", call, inject_error(p));
      break;   /* the step stopped after the append: the maps after it did not run */
    }
    CHECK(st == 0, "call %d: %s", call, inject_error(p));
    CHECK(inject_extent(p, "N") == n, "call %d: extent %lld vs %lld", call, (long long)inject_extent(p, "N"), (long long)n);
    double total = 0.0, lt[8] = {0};
    for (int64_t i = 0; i < n; i++) lt[i % 8] += x[i];
    total = lt[0];
    for (int l = 1; l < 8; l++) total += lt[l];
    double g;
    CHECK(inject_scalar(p, "total", &g) == 0 && g == total, "call %d: total %.17g vs %.17g", call, g, total);
    cnp_array fx = inject_field(p, "x"), fi = inject_field(p, "id");
    for (int64_t i = 0; i < n; i++) {
      CHECK(((double *)fx.data)[i] == x[i], "call %d: x[%lld]", call, (long long)i);
      CHECK(((int64_t *)fi.data)[i] == id[i], "call %d: id[%lld]", call, (long long)i);
    }
  }
  CHECK(inject_extent(p, "N") == CAP, "clamped to the capacity: %lld", (long long)inject_extent(p, "N"));
  cnp_array fi = inject_field(p, "id");
  for (int64_t i = 0; i < CAP; i++) CHECK(((int64_t *)fi.data)[i] == id[i], "id[%lld] after the clamp", (long long)i);
  printf("inject ok: %lld rows\n", (long long)n);
  inject_teardown(p);
  return 0;
}
