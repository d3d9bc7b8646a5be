/*
** test_kernel_nofallback.c -- kernel_nofallback.cnp's host unit (built with -Werror): setup
** on the host backend fails with CNP_EUNSUPPORTED and a message naming the kernel and its
** declaration (and no empty runtime detail after it), leaving no pipeline behind.
*/
#include "knofb.h"
#include "e2e.h"

int main(void)
{
  knofb *p = NULL;
  char err[256] = "";
  knofb_config cfg = KNOFB_CONFIG_INIT;
  cfg.N = 10;
  int st = knofb_setup(&p, &cfg, err, sizeof err);
  CHECK(st == CNP_EUNSUPPORTED, "setup: %s (%s)", cnp_status_name((cnp_status)st), err);
  CHECK(p == NULL, "no pipeline after a failed setup");
  CHECK(strstr(err, "kernel_nofallback.cnp:9: kernel scale has no host fallback") != NULL,
        "message: %s", err);
  size_t n = strlen(err);   /* the runtime left no detail: no empty ": " after the message */
  CHECK(n > 2 && strcmp(err + n - 2, ": ") != 0 && err[n - 1] == ')', "message ends: '%s'", err);
  printf("kernel_nofallback: setup on the host fails: %s\n", err);
  return 0;
}
