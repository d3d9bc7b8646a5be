/*
** test_two.c -- two pipelines (fuse.cnp and keys.cnp) linked into one executable: no
** symbol clashes, both run.
*/
#include "fuse.h"
#include "keys.h"
#include "e2e.h"
int main(void) {
  fuse *a; keys *b; char err[256];
  fuse_config ca = FUSE_CONFIG_INIT; ca.N = 10; ca.M = 5; ca.n_cells = 4;
  keys_config cb = KEYS_CONFIG_INIT; cb.N = 10; cb.n_cells = 4;
  CHECK(fuse_setup(&a, &ca, err, sizeof err) == 0, "%s", err);
  CHECK(keys_setup(&b, &cb, err, sizeof err) == 0, "%s", err);
  CHECK(fuse_step(a, 1.0f, 0) == 0, "a");
  CHECK(keys_step(b) == 0, "b %s", keys_error(b));
  fuse_teardown(a); keys_teardown(b);
  printf("two ok\n");
  return 0;
}
