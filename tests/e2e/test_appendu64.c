/*
** test_appendu64.c -- appendu64.cnp: a u64 append count of 2, then of UINT64_MAX and of
** 2^63: the rows that fit are added and step() returns CNP_EOVERFLOW.
*/
#include "appendu64.h"
#include "e2e.h"
#define CAP 6

int main(void) {
  appendu64 *p;
  char err[256];
  appendu64_config cfg = APPENDU64_CONFIG_INIT;
  cfg.N = CAP;
  const uint64_t big[2] = {UINT64_MAX, UINT64_C(1) << 63};
  for (int b = 0; b < 2; b++) {
    CHECK(appendu64_setup(&p, &cfg, err, sizeof err) == 0, "setup: %s", err);
    CHECK(appendu64_set_extent(p, "N", 1) == 0, "extent");
    CHECK(appendu64_step(p, 2) == CNP_OK, "step: %s", appendu64_error(p));
    CHECK(appendu64_extent(p, "N") == 3, "extent %lld after 2 rows", (long long)appendu64_extent(p, "N"));
    int st = appendu64_step(p, big[b]);
    CHECK(st == CNP_EOVERFLOW, "count %llu: status %d, expected CNP_EOVERFLOW", (unsigned long long)big[b], st);
    CHECK(appendu64_sync(p) == CNP_OK, "sync");
    CHECK(appendu64_extent(p, "N") == CAP, "extent %lld, expected the capacity", (long long)appendu64_extent(p, "N"));
    const double *x = appendu64_field(p, "x").data;
    for (int i = 3; i < CAP; i++) CHECK(x[i] == (double)(i - 3) + 0.5, "x[%d] = %g", i, x[i]);
    appendu64_teardown(p);
  }
  printf("appendu64: ok\n");
  return 0;
}
