/*
** bench_algo.c — host-backend timings of the algorithms in cnp/algo.h at N rows (default
** 10^7), next to the machine's memcpy bandwidth measured in the same process and, when
** /usr/bin/python3 with NumPy is present, the NumPy equivalents (numpy_peer.py, run in the
** same invocation).
**
**   bench_algo [N] [reps]
**   CNP_NUMPY_PEER=/path/numpy_peer.py   script to run (default: ../shared/bench/numpy_peer.py
**                                        beside the source tree); CNP_NUMPY_PEER=off skips it
**   CNP_BENCH_ONLY=text                  time only the operations whose name contains text
**                                        (for before/after comparisons of one operation)
**   CNP_BENCH_CPU=1                      also print each operation's least CPU time (all
**                                        threads), less disturbed by other processes
**
** Each figure is the best of `reps` (default 5) runs on pre-faulted buffers, inputs restored
** between runs outside the timed region. "bytes" is the minimal traffic, counted as
** numpy_peer.py counts it; "x memcpy" is the time divided by the time memcpy needs for the
** same bytes; "x numpy" is the NumPy time divided by ours (above 1: we are faster).
*/
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cnp/cnp.h"

#define CHECK(call)                                                                   \
  do {                                                                                \
    cnp_status st_ = (call);                                                          \
    if (st_ != CNP_OK) {                                                              \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cnp_last_error()); \
      exit(1);                                                                        \
    }                                                                                 \
  } while (0)

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t rng_state = 1;
static uint64_t rnd(void)
{
  uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}
static double unit(void) { return (double)(rnd() >> 11) * 0x1p-53; }

static void *xmalloc(size_t n)
{
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", n);
    exit(1);
  }
  memset(p, 0, n);                               /* pre-fault */
  return p;
}

static cnp_array wrap(void *p, cnp_dtype t, int ndim, int64_t a, int64_t b)
{
  cnp_array v;
  int64_t shape[2] = {a, b};
  CHECK(cnp_array_wrap(&v, p, CNP_BACKEND_HOST, 0, t, ndim, shape, NULL));
  return v;
}

/* ---- NumPy peer figures ------------------------------------------------------------- */

#define MAX_PEER 16
static struct { char name[64]; double ms; } peer[MAX_PEER];
static int n_peer;

static void run_numpy_peer(int64_t n)
{
  const char *script = getenv("CNP_NUMPY_PEER");
  char path[4096];
  if (script && strcmp(script, "off") == 0) return;
  if (!script) {                                 /* <repo>/../shared/bench/numpy_peer.py */
    snprintf(path, sizeof path, "%s", __FILE__);
    char *slash = strrchr(path, '/');
    if (slash) *slash = '\0';                    /* <repo>/bench */
    slash = strrchr(path, '/');
    if (slash) *slash = '\0';                    /* <repo> */
    else snprintf(path, sizeof path, "..");
    strncat(path, "/../shared/bench/numpy_peer.py", sizeof path - strlen(path) - 1);
    script = path;
  }
  FILE *f = fopen(script, "r");
  if (!f) {
    printf("# numpy peer: %s not found (set CNP_NUMPY_PEER)\n", script);
    return;
  }
  fclose(f);
  char cmd[4300];
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' %lld 2>/dev/null", script, (long long)n);
  FILE *p = popen(cmd, "r");
  if (!p) return;
  char line[256];
  while (n_peer < MAX_PEER && fgets(line, sizeof line, p)) {
    double ms;
    if (sscanf(line, "%63s %lf ms", peer[n_peer].name, &ms) == 2) peer[n_peer++].ms = ms;
  }
  pclose(p);
  printf("# numpy peer: %s (%d figures)\n", script, n_peer);
}

static double peer_ms(const char *name)
{
  for (int i = 0; i < n_peer; i++)
    if (strcmp(peer[i].name, name) == 0) return peer[i].ms;
  return 0;
}

/* CNP_BENCH_ONLY: run only the operations whose name contains it. */
static int wanted(const char *name)
{
  const char *only = getenv("CNP_BENCH_ONLY");
  return only == NULL || *only == '\0' || strstr(name, only) != NULL;
}

/* CNP_BENCH_CPU=1: also print the least CPU time (all threads) of the reps, which other
** processes disturb less than wall time (a busy machine preempts us, but CPU time only
** counts while we run). */
static double cpu_best = 1e30;

static double cpu_now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void cpu_note(double c)
{
  cpu_best = c < cpu_best ? c : cpu_best;
}

/* ---- reporting ---------------------------------------------------------------------- */

static double membw;                             /* bytes/s, read+write counted */

static void report(const char *name, double sec, double bytes, const char *peer_name)
{
  double memcpy_sec = bytes / membw;
  double np = peer_name ? peer_ms(peer_name) : 0;
  printf("%-34s %9.2f ms %7.2f GB/s %6.2f x memcpy", name, sec * 1e3, bytes / sec / 1e9,
         sec / memcpy_sec);
  if (np > 0) printf("  %6.2f x numpy (%s %.2f ms)", np / (sec * 1e3), peer_name, np);
  const char *cpu = getenv("CNP_BENCH_CPU");
  if (cpu && strcmp(cpu, "1") == 0) printf("  cpu %.2f ms", cpu_best * 1e3);
  cpu_best = 1e30;
  printf("\n");
}

/* ---- main --------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
  int64_t n = argc > 1 ? strtoll(argv[1], NULL, 10) : 10000000;
  int reps = argc > 2 ? atoi(argv[2]) : 5;
  if (n < 64 || reps < 1) {
    fprintf(stderr, "usage: bench_algo [N >= 64] [reps >= 1]\n");
    return 2;
  }
  int64_t n_cells = n / 64;
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  printf("# bench_algo N=%lld n_cells=%lld threads=%d reps=%d\n", (long long)n,
         (long long)n_cells, threads, reps);

  /* memcpy bandwidth (as /work/shared/bench/membw.c: best of 10, 16 bytes per double) */
  double *a = xmalloc((size_t)n * 8), *b = xmalloc((size_t)n * 8);
  for (int64_t i = 0; i < n; i++) a[i] = (double)i;
  double best = 1e30;
  for (int r = 0; r < 10; r++) {
    double t0 = now();
    memcpy(b, a, (size_t)n * 8);
    double t = now() - t0;
    if (t < best) best = t;
  }
  membw = 16.0 * (double)n / best;
  printf("# memcpy_f64 %.2f ms %.2f GB/s\n", best * 1e3, membw / 1e9);

  run_numpy_peer(n);
  printf("%-34s %12s %12s %15s\n", "# op", "time", "bandwidth", "vs memcpy");

  cnp_workspace *ws, *ws_nohint;
  CHECK(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, n, n_cells, 0));
  CHECK(cnp_workspace_create(&ws_nohint, CNP_BACKEND_HOST, 0, n, 0, 0));

  /* inputs: x, v, w as numpy_peer.py; alive 90%; random cells in [0, n_cells) */
  double *x0 = xmalloc((size_t)n * 8), *v0 = xmalloc((size_t)n * 8), *w0 = xmalloc((size_t)n * 8);
  unsigned char *alive = xmalloc((size_t)n);
  int64_t *cells0 = xmalloc((size_t)n * 8), *near0 = xmalloc((size_t)n * 8);
  for (int64_t i = 0; i < n; i++) {
    x0[i] = unit();
    v0[i] = unit();
    w0[i] = unit();
    alive[i] = unit() < 0.9;
    cells0[i] = (int64_t)(rnd() % (uint64_t)n_cells);
  }
  /* sorted cells (counting), then 10% moved by +-1 cell (clipped): "a timestep later" */
  int64_t *sorted = xmalloc((size_t)n * 8);
  {
    int64_t *cnt = xmalloc((size_t)(n_cells + 1) * 8);
    for (int64_t i = 0; i < n; i++) cnt[cells0[i]]++;
    int64_t j = 0;
    for (int64_t c = 0; c < n_cells; c++)
      for (int64_t k = 0; k < cnt[c]; k++) sorted[j++] = c;
    free(cnt);
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t c = sorted[i];
    if (unit() < 0.1) {
      c += (rnd() & 1) ? 1 : -1;
      c = c < 0 ? 0 : c >= n_cells ? n_cells - 1 : c;
    }
    near0[i] = c;
  }

  double *x = xmalloc((size_t)n * 8), *v = xmalloc((size_t)n * 8), *w = xmalloc((size_t)n * 8);
  int64_t *cells = xmalloc((size_t)n * 8), *order = xmalloc((size_t)n * 8);
  cnp_array ax = wrap(x, CNP_FLOAT64, 1, n, 0), av = wrap(v, CNP_FLOAT64, 1, n, 0);
  cnp_array aw = wrap(w, CNP_FLOAT64, 1, n, 0), amask = wrap(alive, CNP_BOOL, 1, n, 0);
  cnp_array acells = wrap(cells, CNP_INT64, 1, n, 0), aorder = wrap(order, CNP_INT64, 1, n, 0);

  /* compaction of three float64 arrays */
  double t = 1e30;
  cpu_best = 1e30;
  int64_t kept = 0;
  for (int r = 0; r < reps && wanted("compact_3xf64"); r++) {
    memcpy(x, x0, (size_t)n * 8);
    memcpy(v, v0, (size_t)n * 8);
    memcpy(w, w0, (size_t)n * 8);
    cnp_array arrs[3] = {ax, av, aw};
    double t0 = now(), c0 = cpu_now();
    CHECK(cnp_compact_by_mask(&amask, arrs, 3, &kept, ws, NULL));
    double e = now() - t0;
    cpu_note(cpu_now() - c0);
    t = e < t ? e : t;
  }
  if (wanted("compact_3xf64"))
    report("compact_3xf64", t, (double)n * (1 + 3 * 8) + 3 * 8 * 0.9 * (double)n, "compact_3xf64");

  /* sort_by_key: random cells, two float64 values, order out */
  struct { const char *name; const int64_t *src; cnp_workspace *ws; int64_t limit;
           const char *peer; } sorts[4] = {
      {"sort_by_key_i64+2xf64 (counting)", cells0, ws, n_cells, "sort_by_key_i64+2xf64"},
      {"sort_by_key_i64+2xf64 (radix)", cells0, ws_nohint, 0, "sort_by_key_i64+2xf64"},
      {"sort_by_key_nearly_sorted", near0, ws, n_cells, "sort_by_key_nearly_sorted"},
      {"sort_by_key_already_sorted", sorted, ws, n_cells, NULL},
  };
  for (int s = 0; s < 4; s++) {
    if (!wanted(sorts[s].name)) continue;
    t = 1e30;
    cpu_best = 1e30;
    for (int r = 0; r < reps; r++) {
      memcpy(cells, sorts[s].src, (size_t)n * 8);
      memcpy(x, x0, (size_t)n * 8);
      memcpy(v, v0, (size_t)n * 8);
      cnp_array vals[2] = {ax, av};
      double t0 = now(), c0 = cpu_now();
      CHECK(cnp_sort_by_key(&acells, &aorder, vals, 2, sorts[s].limit, sorts[s].ws, NULL));
      double e = now() - t0;
      cpu_note(cpu_now() - c0);
      t = e < t ? e : t;
    }
    for (int64_t i = 1; i < n; i++)
      if (cells[i] < cells[i - 1]) {
        fprintf(stderr, "%s: not sorted at %lld\n", sorts[s].name, (long long)i);
        return 1;
      }
    report(sorts[s].name, t, (double)n * 8 * 4 * 2, sorts[s].peer);
  }

  /* cell_offsets and segment_boundaries on sorted cells */
  int64_t *offs = xmalloc((size_t)(n_cells + 1) * 8);
  cnp_array aoffs = wrap(offs, CNP_INT64, 1, n_cells + 1, 0);
  cnp_array asorted = wrap(sorted, CNP_INT64, 1, n, 0);
  t = 1e30;
  cpu_best = 1e30;
  for (int r = 0; r < reps && wanted("cell_offsets"); r++) {
    double t0 = now(), c0 = cpu_now();
    CHECK(cnp_cell_offsets(&asorted, n_cells, &aoffs, NULL, NULL));
    double e = now() - t0;
    cpu_note(cpu_now() - c0);
    t = e < t ? e : t;
  }
  if (wanted("cell_offsets"))
    report("cell_offsets", t, 8.0 * (double)n, "cell_offsets_bincount");

  int64_t *uk = xmalloc((size_t)n * 8), *st = xmalloc((size_t)n * 8), *sp = xmalloc((size_t)n * 8);
  cnp_array auk = wrap(uk, CNP_INT64, 1, n, 0), ast = wrap(st, CNP_INT64, 1, n, 0);
  cnp_array asp = wrap(sp, CNP_INT64, 1, n, 0);
  int64_t count = 0;
  t = 1e30;
  cpu_best = 1e30;
  for (int r = 0; r < reps && wanted("segment_boundaries"); r++) {
    double t0 = now(), c0 = cpu_now();
    CHECK(cnp_segment_boundaries(&asorted, &auk, &ast, &asp, &count, ws, NULL));
    double e = now() - t0;
    cpu_note(cpu_now() - c0);
    t = e < t ? e : t;
  }
  if (wanted("segment_boundaries"))
    report("segment_boundaries", t, 8.0 * (double)n, "segment_boundaries");

  /* segment plans: build on random and on sorted keys, sums with 1 and 3 components */
  cnp_segment_plan *plan;
  CHECK(cnp_segment_plan_create(&plan, CNP_BACKEND_HOST, 0, n, n_cells));
  cnp_array acells0 = wrap(cells0, CNP_INT64, 1, n, 0);
  double *w3 = xmalloc((size_t)n * 24), *rho = xmalloc((size_t)n_cells * 8);
  double *rho3 = xmalloc((size_t)n_cells * 24);
  for (int64_t i = 0; i < 3 * n; i++) w3[i] = unit();
  cnp_array aw3 = wrap(w3, CNP_FLOAT64, 2, n, 3), aw0 = wrap(w0, CNP_FLOAT64, 1, n, 0);
  cnp_array arho = wrap(rho, CNP_FLOAT64, 1, n_cells, 0);
  cnp_array arho3 = wrap(rho3, CNP_FLOAT64, 2, n_cells, 3);
  const cnp_array *plan_keys[2] = {&acells0, &asorted};
  const char *plan_name[2] = {"random keys", "sorted keys"};
  for (int k = 0; k < 2; k++) {
    char label[80], sum1[80], sum3[80];
    snprintf(label, sizeof label, "segment_plan_build (%s)", plan_name[k]);
    snprintf(sum1, sizeof sum1, "segment_sum_f64 (%s)", plan_name[k]);
    snprintf(sum3, sizeof sum3, "segment_sum_3comp (%s)", plan_name[k]);
    if (!wanted(label) && !wanted(sum1) && !wanted(sum3)) continue;
    t = 1e30;
    cpu_best = 1e30;
    for (int r = 0; r < (wanted(label) ? reps : 1); r++) {
      double t0 = now(), c0 = cpu_now();
      CHECK(cnp_segment_plan_build(plan, plan_keys[k], NULL));
      double e = now() - t0;
      cpu_note(cpu_now() - c0);
      t = e < t ? e : t;
    }
    if (wanted(label)) report(label, t, 8.0 * (double)n, NULL);
    t = 1e30;
    cpu_best = 1e30;
    for (int r = 0; r < reps && wanted(sum1); r++) {
      double t0 = now(), c0 = cpu_now();
      CHECK(cnp_segment_plan_sum(plan, &aw0, &arho, NULL));
      double e = now() - t0;
      cpu_note(cpu_now() - c0);
      t = e < t ? e : t;
    }
    if (wanted(sum1)) report(sum1, t, 16.0 * (double)n, "segment_sum_f64");
    t = 1e30;
    cpu_best = 1e30;
    for (int r = 0; r < reps && wanted(sum3); r++) {
      double t0 = now(), c0 = cpu_now();
      CHECK(cnp_segment_plan_sum(plan, &aw3, &arho3, NULL));
      double e = now() - t0;
      cpu_note(cpu_now() - c0);
      t = e < t ? e : t;
    }
    if (wanted(sum3)) report(sum3, t, 32.0 * (double)n, "segment_sum_3comp_reduceat");
  }

  /* scans and reductions (deterministic: fixed blocks, docs/algorithms.md); the target is
  ** within 1.3 x the memcpy time of their bytes (a scan reads and writes n values, a
  ** reduction reads them) */
  {
    double rsum = 0;
    int64_t *ci = xmalloc((size_t)n * 8);
    cnp_array ared = wrap(&rsum, CNP_FLOAT64, 1, 1, 0), aci = wrap(ci, CNP_INT64, 1, n, 0);
    struct { const char *name; int scan; cnp_reduce_op op; cnp_array *in, *out; double bytes;
             const char *peer; } sr[5] = {
        {"scan_f64 (inclusive)", 1, CNP_REDUCE_SUM, &aw0, &ax, 16.0 * (double)n, NULL},
        {"scan_i64 (exclusive, in place)", 2, CNP_REDUCE_SUM, &aci, &aci, 16.0 * (double)n, NULL},
        {"reduce_sum_f64", 0, CNP_REDUCE_SUM, &aw0, &ared, 8.0 * (double)n, NULL},
        {"reduce_max_f64", 0, CNP_REDUCE_MAX, &aw0, &ared, 8.0 * (double)n, NULL},
        {"reduce_count_bool", 0, CNP_REDUCE_COUNT, &amask, NULL, 1.0 * (double)n, NULL},
    };
    int64_t cnt_out = 0;
    cnp_array acnt = wrap(&cnt_out, CNP_INT64, 1, 1, 0);
    sr[4].out = &acnt;
    for (int64_t i = 0; i < n; i++) ci[i] = (int64_t)(i % 7);
    for (int k = 0; k < 5; k++) {
      if (!wanted(sr[k].name)) continue;
      t = 1e30;
      cpu_best = 1e30;
      for (int r = 0; r < reps; r++) {
        double t0 = now(), c0 = cpu_now();
        if (sr[k].scan)
          CHECK(cnp_scan(sr[k].in, sr[k].out, sr[k].scan == 2 ? CNP_SCAN_EXCLUSIVE
                                                               : CNP_SCAN_INCLUSIVE,
                         NULL, NULL, NULL));
        else
          CHECK(cnp_reduce(sr[k].in, sr[k].op, sr[k].out, NULL, NULL, NULL));
        double e = now() - t0;
        cpu_note(cpu_now() - c0);
        t = e < t ? e : t;
      }
      report(sr[k].name, t, sr[k].bytes, sr[k].peer);
    }
    free(ci);
  }

  cnp_segment_plan_destroy(plan);
  cnp_workspace_destroy(ws);
  cnp_workspace_destroy(ws_nohint);
  free(a); free(b); free(x0); free(v0); free(w0); free(alive); free(cells0); free(near0);
  free(sorted); free(x); free(v); free(w); free(cells); free(order); free(offs); free(uk);
  free(st); free(sp); free(w3); free(rho); free(rho3);
  return 0;
}
