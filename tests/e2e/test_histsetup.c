/*
** test_histsetup.c -- the text of histsetup's setup errors: "FILE:LINE: history NAME: ..."
** for a length of 0 and of 2^62 (the allocation overflows), and a working length of 2.
*/
#include "histsetup.h"
#include "e2e.h"

static void expect_fail(int64_t k, const char *want)
{
  histsetup *p = NULL;
  char err[256];
  histsetup_config cfg = HISTSETUP_CONFIG_INIT;
  cfg.N = 3;
  cfg.k = k;
  CHECK(histsetup_setup(&p, &cfg, err, sizeof err) != 0, "k = %lld: setup succeeded", (long long)k);
  CHECK(strncmp(err, want, strlen(want)) == 0, "k = %lld:\n  got  '%s'\n  want '%s...'", (long long)k, err, want);
}

int main(void)
{
  expect_fail(0, "histsetup.cnp:8: history hh: length 'k' must be > 0 (got 0)");
  expect_fail(INT64_C(1) << 62, "histsetup.cnp:8: history hh: cnp_array_alloc: ");
  histsetup *p = NULL;
  char err[256];
  histsetup_config cfg = HISTSETUP_CONFIG_INIT;
  cfg.N = 3;
  cfg.k = 2;
  CHECK(histsetup_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
  for (int s = 0; s < 3; s++) {
    ((double *)histsetup_field(p, "x").data)[0] = s + 1.0;
    CHECK(histsetup_step(p) == 0, "step: %s", histsetup_error(p));
  }
  CHECK(histsetup_sync(p) == 0, "sync");
  double h[4] = {0};
  CHECK(histsetup_history(p, "hh", h, 4) == 2 && h[0] == 2.0 && h[1] == 3.0, "history %g %g", h[0], h[1]);
  histsetup_teardown(p);
  printf("histsetup: setup errors name the history\n");
  return 0;
}
