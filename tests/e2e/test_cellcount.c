/*
** test_cellcount.c -- cellcount.cnp against plain C: the keys sorted, their offsets, then per
** cell count = off[k + 1] - off[k], start = off[k] and last = off[k + 1] - 1 (or -1 for an
** empty cell), read in a map over n_cells from off : i64[n_cells + 1] (the map index on an
** extent one larger). Three steps with new keys each time, some cells left empty; on the
** host backend, and on CUDA through the CUDA unit (e2e.cellcount.gpu).
*/
#include "e2e.h"
#include "e2e_backend.h"
#include "cellcount.h"

enum { NP = 1000, NC = 37, STEPS = 3 };
static int64_t CELL[NP], rcount[NC], rstart[NC], rlast[NC];
static double W[NP];

static const void *get(cellcount *p, const char *name) { return e2e_get(cellcount_field(p, name), name); }

int main(void)
{
  cellcount *p = NULL;
  char err[256];
  cellcount_config cfg = CELLCOUNT_CONFIG_INIT;
  int skip = e2e_choose_backend("cellcount", &cfg.backend, &cfg.strict);
  if (skip) return skip;
  cfg.N = NP;
  cfg.n_cells = NC;
  CHECK(cellcount_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup: %s", err);
  uint64_t seed = 5;
  for (int s = 0; s < STEPS; s++) {
    for (int i = 0; i < NP; i++) {
      int64_t c = (int64_t)(e2e_rand(&seed) * NC);
      if (c % 5 == s) c = (c + 1) % NC;              /* every fifth cell (shifting) stays empty */
      CELL[i] = c;
      W[i] = (double)i;
    }
    e2e_put(cellcount_field(p, "cell"), "cell", CELL);
    e2e_put(cellcount_field(p, "w"), "w", W);
    int st = cellcount_step(p);
    CHECK(st == CNP_OK, "step %d: %s (%s)", s, cnp_status_name((cnp_status)st), cellcount_error(p));
    CHECK(cellcount_sync(p) == CNP_OK, "sync");
    /* the reference: counts per cell, starts by an exclusive prefix sum */
    for (int k = 0; k < NC; k++) rcount[k] = 0;
    for (int i = 0; i < NP; i++) rcount[CELL[i]]++;
    int64_t at = 0;
    for (int k = 0; k < NC; k++) {
      rstart[k] = at;
      rlast[k] = rcount[k] > 0 ? at + rcount[k] - 1 : -1;
      at += rcount[k];
    }
    const int64_t *count = get(p, "count"), *start = get(p, "start"), *last = get(p, "last");
    const int64_t *off = get(p, "off"), *cell = get(p, "cell");
    int empty = 0;
    for (int k = 0; k < NC; k++) {
      CHECK(count[k] == rcount[k], "step %d: count[%d] = %lld, reference %lld", s, k, (long long)count[k], (long long)rcount[k]);
      CHECK(start[k] == rstart[k], "step %d: start[%d] = %lld, reference %lld", s, k, (long long)start[k], (long long)rstart[k]);
      CHECK(last[k] == rlast[k], "step %d: last[%d] = %lld, reference %lld", s, k, (long long)last[k], (long long)rlast[k]);
      CHECK(off[k] == rstart[k], "step %d: off[%d]", s, k);
      empty += rcount[k] == 0;
    }
    CHECK(off[NC] == NP, "step %d: off[n_cells] = %lld", s, (long long)off[NC]);
    CHECK(empty > 0, "step %d: some cells are empty", s);
    for (int i = 1; i < NP; i++) CHECK(cell[i - 1] <= cell[i], "step %d: cell sorted at %d", s, i);
    e2e_release();
  }
  cellcount_teardown(p);
  printf("cellcount: per-cell counts from offsets match C over %d steps (%s)\n", STEPS, e2e_cuda ? "CUDA" : "host");
  return 0;
}
