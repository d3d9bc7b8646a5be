/*
** test_mirror.c -- mirror.cnp on the host backend: the mirrored field is the user's own
** host array (no copies), refresh keeps it current, and the snapshot holds t.
*/
#include "mirrored.h"
#include "e2e.h"

int main(void)
{
  static double mine[50];
  for (int i = 0; i < 50; i++) mine[i] = i;
  mirrored *p = NULL;
  char err[256];
  mirrored_config cfg = MIRRORED_CONFIG_INIT;
  cfg.N = 50;
  CHECK(mirrored_setup(&p, &cfg, err, sizeof err) == CNP_EINVAL, "missing host array accepted");
  CHECK(strstr(err, "mirror.cnp:9: mirror em: cfg.em_host"), "message: %s", err);
  cfg.em_host = mine;
  CHECK(mirrored_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  CHECK(mirrored_field(p, "e").data == (void *)mine, "host mirror is the user's array");
  for (int k = 1; k <= 4; k++) {
    CHECK(mirrored_step(p) == CNP_OK, "step: %s", mirrored_error(p));
    CHECK(mirrored_sync(p) == CNP_OK, "sync");
    cnp_array snap;
    CHECK(mirrored_snapshot(p, "snap", &snap) == CNP_OK, "snapshot");
    for (int i = 0; i < 50; i++) {
      CHECK(mine[i] == i * (double)(1 << k), "e[%d] after %d steps: %g", i, k, mine[i]);
      CHECK(((double *)snap.data)[i] == mine[i] + 1.0, "snapshot t[%d]", i);
    }
  }
  mirrored_teardown(p);
  printf("mirror: the user's array is updated in place; snapshot ok\n");
  return 0;
}
