/*
** test_cadparam.c -- a cadence `every K [offset J]` with K, J setup params: setup checks
** K >= 1 and 0 <= J < K (a zero K once reached the step as a modulo by zero: SIGFPE), with
** the message naming the step's line; valid values run the steps on the due calls. A repeat
** count R given at setup must be >= 1 (as cnpc requires of a constant one).
*/
#include "cadparam.h"
#include "e2e.h"

static int setup_rep(cadparam **p, int64_t k, int64_t j, int64_t r, char *err, size_t n)
{
  cadparam_config cfg = CADPARAM_CONFIG_INIT;
  cfg.N = 4;
  cfg.K = k;
  cfg.J = j;
  cfg.R = r;
  return cadparam_setup(p, &cfg, err, n);
}

static int setup_with(cadparam **p, int64_t k, int64_t j, char *err, size_t n)
{
  return setup_rep(p, k, j, 2, err, n);
}

int main(void)
{
  cadparam *p = NULL;
  char err[256];
  static const struct { int64_t k, j; const char *want; } bad[] = {
    {0, 0, "cadparam.cnp:9: step every 'K': the cadence must be >= 1 and the offset in [0, cadence) (got every 0 offset 0)"},
    {-3, 0, "cadparam.cnp:9: step every 'K': the cadence must be >= 1 and the offset in [0, cadence) (got every -3 offset 0)"},
    {2, 2, "cadparam.cnp:9: step every 'K': the cadence must be >= 1 and the offset in [0, cadence) (got every 2 offset 2)"},
    {2, -1, "cadparam.cnp:9: step every 'K': the cadence must be >= 1 and the offset in [0, cadence) (got every 2 offset -1)"},
  };
  for (size_t c = 0; c < sizeof bad / sizeof bad[0]; c++) {
    p = NULL;
    int st = setup_with(&p, bad[c].k, bad[c].j, err, sizeof err);
    CHECK(st == CNP_EINVAL && p == NULL, "K=%lld J=%lld: setup gave %s", (long long)bad[c].k,
          (long long)bad[c].j, cnp_status_name((cnp_status)st));
    CHECK(strcmp(err, bad[c].want) == 0, "error text:\n  got  '%s'\n  want '%s'", err, bad[c].want);
  }
  static const int64_t bad_r[] = {0, -2};
  for (size_t c = 0; c < 2; c++) {
    char want[128];
    p = NULL;
    snprintf(want, sizeof want, "cadparam.cnp:12: repeat 'R': the count must be >= 1 (got %lld)",
             (long long)bad_r[c]);
    int st = setup_rep(&p, 3, 1, bad_r[c], err, sizeof err);
    CHECK(st == CNP_EINVAL && p == NULL, "R=%lld: setup gave %s", (long long)bad_r[c],
          cnp_status_name((cnp_status)st));
    CHECK(strcmp(err, want) == 0, "error text:\n  got  '%s'\n  want '%s'", err, want);
  }
  /* K = 3, J = 1: step 1 (x += 1) on calls 1, 4; the block (x *= 2) on calls 0, 3. */
  CHECK(setup_with(&p, 3, 1, err, sizeof err) == CNP_OK, "setup: %s", err);
  cnp_array x = cadparam_field(p, "x");
  for (int i = 0; i < 4; i++) ((double *)x.data)[i] = i;
  double ref[4] = {0, 1, 2, 3};
  for (int call = 0; call < 6; call++) {
    CHECK(cadparam_step(p) == CNP_OK, "call %d: %s", call, cadparam_error(p));
    for (int i = 0; i < 4; i++) {
      if (call % 3 == 1) ref[i] += 1.0;
      if (call % 3 == 0) ref[i] *= 2.0;
      ref[i] += 2 * 0.25;   /* repeat R = 2 */
    }
  }
  CHECK(cadparam_sync(p) == CNP_OK, "sync");
  for (int i = 0; i < 4; i++)
    CHECK(((double *)x.data)[i] == ref[i], "x[%d] = %g, want %g", i, ((double *)x.data)[i], ref[i]);
  cadparam_teardown(p);
  printf("cadparam: setup rejects 4 bad cadences and 2 repeat counts; every 3 offset 1 ran as due\n");
  return 0;
}
