/*
** test_bare.c -- bare.cnp (no step) and emptystep.cnp (an empty step): setup, step, views
** and teardown work, and step() leaves the data alone.
*/
#include "bare.h"
#include "e2e.h"
#include "emptystep.h"

int main(void) {
  char err[256];
  bare *b; emptystep *e;
  bare_config cb = BARE_CONFIG_INIT; cb.N = 3; cb.n = 4;
  emptystep_config ce = EMPTYSTEP_CONFIG_INIT; ce.N = 2;
  CHECK(bare_setup(&b, &cb, err, sizeof err) == 0, "bare: %s", err);
  CHECK(emptystep_setup(&e, &ce, err, sizeof err) == 0, "emptystep: %s", err);
  double *x = bare_field(b, "x").data;
  for (int i = 0; i < 3; i++) x[i] = i;
  CHECK(bare_field(b, "g").shape[0] == 5, "g extent");
  ((double *)emptystep_field(e, "x").data)[1] = 7.0;
  for (int s = 0; s < 3; s++)
    CHECK(bare_step(b, 0.5) == 0 && emptystep_step(e) == 0 && bare_sync(b) == 0 && emptystep_sync(e) == 0, "steps");
  x = bare_field(b, "x").data;
  for (int i = 0; i < 3; i++) CHECK(x[i] == i, "x[%d]", i);
  CHECK(((double *)emptystep_field(e, "x").data)[1] == 7.0, "emptystep x");
  bare_stats st;
  bare_stats_get(b, &st);
  CHECK(st.steps == 3 && st.launches == 0, "stats %llu %llu", (unsigned long long)st.steps, (unsigned long long)st.launches);
  bare_teardown(b); emptystep_teardown(e);
  printf("bare ok\n");
  return 0;
}
