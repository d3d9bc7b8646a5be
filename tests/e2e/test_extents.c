/*
** test_extents.c -- extents.cnp: setup rejects computed extents that overflow int64 (before
** this, 4294967297^3 wrapped to a small positive size and setup allocated it) or are not
** positive, naming the field, and a u64 setup param above INT64_MAX; valid ones allocate
** their computed sizes.
*/
#include "e2e.h"
#include "extents.h"

static void expect_fail_nu(long long nc, long long n, uint64_t nu, const char *what) {
  extents *p; char err[256] = "";
  extents_config cfg = EXTENTS_CONFIG_INIT; cfg.nc = nc; cfg.N = n; cfg.nu = nu;
  int rc = extents_setup(&p, &cfg, err, sizeof err);
  CHECK(rc == CNP_EINVAL, "nc=%lld N=%lld: rc %d (%s)", nc, n, rc, err);
  CHECK(strstr(err, what) != NULL, "nc=%lld N=%lld: '%s' lacks '%s'", nc, n, err, what);
}

static void expect_fail(long long nc, long long n, const char *what) { expect_fail_nu(nc, n, 1, what); }

int main(void) {
  expect_fail(4294967297LL, 4, "extents.cnp:9: field q: extent 'nc * nc * nc' overflows int64");
  expect_fail(3037000500LL, 4, "field q: extent 'nc * nc * nc' overflows int64");
  expect_fail(-2097152, 4, "field z: extent 'nc - 100' must be > 0");
  expect_fail(100, 4, "field z: extent 'nc - 100' must be > 0 (got 0)");
  expect_fail(101, 3037000500LL, "field r: extent 'N * N + 1' overflows int64");
  expect_fail(102, 4, "extents.cnp:14: history hx: length 'nc - 102' must be > 0 (got 0)");
  expect_fail_nu(103, 4, UINT64_MAX, "extents.cnp:16: field ua: extent 'nu + 2' overflows int64");
  expect_fail_nu(103, 4, UINT64_C(1) << 63, "extents.cnp:16: field ua: extent 'nu + 2' overflows int64");
  expect_fail_nu(103, 4, 0, "extents.cnp:17: field ub: extent 'nu' must be > 0 (got 0)");
  extents *p; char err[256];
  extents_config cfg = EXTENTS_CONFIG_INIT; cfg.nc = 103; cfg.N = 5; cfg.nu = 7;
  CHECK(extents_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  CHECK(extents_field(p, "z").shape[0] == 3, "z extent");
  CHECK(extents_field(p, "q").shape[0] == 103LL * 103 * 103, "q extent");
  CHECK(extents_field(p, "ua").shape[0] == 9 && extents_field(p, "ub").shape[0] == 7, "ua, ub extents");
  cnp_array r = extents_field(p, "r");
  CHECK(r.ndim == 2 && r.shape[0] == 3 && r.shape[1] == 26, "r shape %lld", (long long)r.shape[1]);
  double *x = (double *)extents_field(p, "x").data;
  for (int i = 0; i < 5; i++) x[i] = i;
  CHECK(extents_step(p) == 0, "step: %s", extents_error(p));
  x = (double *)extents_field(p, "x").data;
  for (int i = 0; i < 5; i++) CHECK(x[i] == 1.5 * i, "x[%d] %g", i, x[i]);
  extents_teardown(p);
  printf("extents ok\n");
  return 0;
}
