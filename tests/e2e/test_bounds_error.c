/*
** test_bounds_error.c -- index checks (-DCNP_DEBUG_BOUNDS): a gather/scatter index out of
** range makes step() return CNP_ERANGE with the .cnp location in NAME_error(); in range,
** the gather and the scatter-add give the expected values.
*/
#include "gather.h"
#include "e2e.h"

int main(void)
{
  gather *p = NULL;
  char err[256];
  gather_config cfg = GATHER_CONFIG_INIT;
  cfg.N = 8;
  cfg.n_cells = 4;
  CHECK(gather_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  cnp_array idx = gather_field(p, "idx"), E = gather_field(p, "E");
  for (int i = 0; i < 8; i++) ((int64_t *)idx.data)[i] = i % 4;
  for (int k = 0; k < 4; k++) ((double *)E.data)[k] = 10.0 * k;
  CHECK(gather_step(p) == CNP_OK, "in range: %s", gather_error(p));
  cnp_array out = gather_field(p, "out"), J = gather_field(p, "J");
  for (int i = 0; i < 8; i++) CHECK(((double *)out.data)[i] == 20.0 * (i % 4), "gather %d", i);
  for (int k = 0; k < 4; k++) CHECK(((double *)J.data)[k] == 2.0, "scatter %d", k);
  ((int64_t *)idx.data)[5] = 4;                    /* one past the end */
  int st = gather_step(p);
  CHECK(st == CNP_ERANGE, "out of range gave %s", cnp_status_name((cnp_status)st));
  CHECK(strstr(gather_error(p), "gather.cnp:11:"), "error names the map: %s", gather_error(p));
  CHECK(strstr(gather_error(p), "an index is out of range"), "error says why: %s", gather_error(p));
  ((int64_t *)idx.data)[5] = -1;
  CHECK(cnp_stream_synchronize(NULL) == CNP_EINVAL, "an unrelated failure first");
  CHECK(gather_step(p) == CNP_ERANGE, "negative index");
  CHECK(!strstr(gather_error(p), "cnp_stream_synchronize"), "stale detail: %s", gather_error(p));
  CHECK(strstr(gather_error(p), "an index is out of range"), "error says why: %s", gather_error(p));
  gather_teardown(p);
  printf("bounds: out-of-range gathers are CNP_ERANGE\n");
  return 0;
}
