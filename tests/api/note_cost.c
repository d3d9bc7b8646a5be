/*
** note_cost.c — measures cnp_transfers_note() with no scope active (the off path: one load
** and one predictable branch) and inside a counting scope. Not a test (no timed
** assertions); run ./tests/api/api_note_cost from the build directory. See docs/runtime.md.
*/
#define _POSIX_C_SOURCE 200809L
#include "cnp/cnp.h"
#include <stdio.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(void)
{
  enum { N = 100000000 };
  double t0 = now();
  for (int i = 0; i < N; i++) cnp_transfers_note(CNP_XFER_D2D, 8, "x");
  double t1 = now();
  cnp_transfer_scope s;
  cnp_transfers_begin(&s);
  for (int i = 0; i < N; i++) cnp_transfers_note(CNP_XFER_D2D, 8, "x");
  double t2 = now();
  cnp_transfers_end(&s, NULL);
  printf("no scope: %.2f ns/call, counting: %.2f ns/call\n", (t1 - t0) / N * 1e9, (t2 - t1) / N * 1e9);
  return 0;
}
