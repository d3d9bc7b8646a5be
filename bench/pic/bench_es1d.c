/*
** bench_es1d.c -- the complete 1D electrostatic PIC step (examples/pic/ref/es1d.h: deposit,
** field solve, gather, push, energies) at 10^6 and 10^7 particles, 1 and 2 threads, in one run:
**   hand-written C   examples/pic/ref/es1d.c, the reference (one fused particle loop)
**   generated        the pipeline cnpc makes of the complete-step .cnp       (slot, below)
**   runtime calls    the same step as separate libcnp calls                   (slot, below)
**   NumPy            bench/pic/es1d_numpy.py on the same initial state (run from here)
** and the memory floor: the bytes a step must move per particle (x and v, read and written)
** and how long memcpy takes to move that many bytes on this machine, measured in the same run.
** Every variant starts from the same particles (the Landau set-up of docs/physics.md with N
** particles); the last field and kinetic energies are compared.
**
**   bench_es1d [--no-numpy] [--rounds R] [particles...]   (default 3 rounds, 1000000 10000000)
*/
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "es1d_impl.h"
#include "npy.h"

#ifndef ES1D_NUMPY_SCRIPT
#define ES1D_NUMPY_SCRIPT "bench/pic/es1d_numpy.py"
#endif

/* The variants. A generated or runtime-call implementation of the complete step plugs in as an
** es1d_impl (examples/pic/ref/es1d_impl.h); until then its row says why it is missing. */
/* bytes: the bytes each moves per particle per step, read off its code (each array read or
** written counted once: the minimum traffic of its passes, not a measurement). */
static const struct variant {
  const char *name;
  const es1d_impl *impl;
  const char *missing;
  double bytes;
} variants[] = {
    /* one pass: x, v read and written */
    {"hand-written C", &es1d_ref_impl, NULL, 32},
    /* one pass (es1d.cnp's push map, the deposit privatized per block): x, v read and written,
    ** plus the blocks' copies of dep (3 * 64 * 8 B per 4096 particles) */
#ifdef ES1D_HAVE_CNP
    {"generated (cnpc)", &es1d_cnp_impl, NULL, 32.4},
#else
    {"generated (cnpc)", NULL, "not built: needs cnpc", 32.4},
#endif
    /* push: x, v read, x, v, node, w0, w1, kp written (64); kinetic energy: kp (8); sort by
    ** node with x, v, w0, w1: counts (8), scatter (40 + 40), copy back (40 + 40); plan: node
    ** (8); segment sums: w0, w1 (16) */
#ifdef ES1D_HAVE_CNP
    {"runtime calls", &es1d_rt_impl, NULL, 264},
#else
    {"runtime calls", NULL, "not built: needs libcnp (with cnpc)", 264},
#endif
};
enum { NVAR = sizeof variants / sizeof variants[0] };

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the calling thread: with one thread the whole step runs on it, and this time
** leaves out the waits for a core on a machine shared with other jobs. */
static double cpu_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void set_threads(int t)
{
#ifdef _OPENMP
  omp_set_num_threads(t);
#else
  (void)t;
#endif
}

/* Best of 5 memcpys of `bytes` (each reads and writes `bytes`), split over t threads. */
static double memcpy_s(char *dst, const char *src, size_t bytes, int t)
{
  set_threads(t);
  double best = 1e30;
  for (int rep = 0; rep < 5; rep++) {
    double a = now();
#pragma omp parallel
    {
      int k = 0, m = 1;
#ifdef _OPENMP
      k = omp_get_thread_num();
      m = omp_get_num_threads();
#endif
      size_t lo = bytes / (size_t)m * (size_t)k, hi = k == m - 1 ? bytes : bytes / (size_t)m * (size_t)(k + 1);
      memcpy(dst + lo, src + lo, hi - lo);
    }
    double d = now() - a;
    if (d < best) best = d;
  }
  return best;
}

static es1d_params bench_params(int64_t n, int64_t steps)
{
  es1d_params p = ES1D_PARAMS_INIT; /* the Landau set-up */
  p.n_particles = n;
  p.max_steps = steps + 1;
  return p;
}

typedef struct result {
  double ms;       /* per step, wall: the fastest step (of every round) */
  double ms_mean;  /* per step, wall: the mean of the round with the fastest step */
  double ms_cpu;   /* per step, the calling thread's CPU time: the fastest step */
  double W, K;     /* the last history entry */
  int ok;
} result;

/* Set up, one warm-up step (not timed), then `steps` steps timed one at a time: ms is the
** fastest step (on a machine shared with other jobs the fastest is the one least disturbed),
** ms_mean the mean. */
static result time_impl(const es1d_impl *impl, int64_t n, int64_t steps, int threads)
{
  result r = {0, 0, 0, 0, 0, 0};
  char err[256];
  set_threads(threads);
  es1d_params p = bench_params(n, steps);
  void *st;
  if (impl->setup(&st, &p, err, sizeof err)) {
    fprintf(stderr, "bench_es1d: %s: %s\n", impl->name, err);
    return r;
  }
  if (impl->step(st, 1, err, sizeof err)) { /* warm-up, not timed */
    fprintf(stderr, "bench_es1d: %s: %s\n", impl->name, err);
    impl->teardown(st);
    return r;
  }
  int bad = 0;
  double total = 0.0, best = 1e30, best_cpu = 1e30;
  for (int64_t k = 0; k < steps && !bad; k++) {
    double a = now(), ac = cpu_now();
    bad = impl->step(st, 1, err, sizeof err);
    double d = now() - a, dc = cpu_now() - ac;
    total += d;
    if (d < best) best = d;
    if (dc < best_cpu) best_cpu = dc;
  }
  r.ms = 1e3 * best;
  r.ms_cpu = 1e3 * best_cpu;
  r.ms_mean = 1e3 * total / (double)steps;
  es1d_history h;
  if (!bad && !impl->histories(st, &h, err, sizeof err)) {
    r.W = h.field_energy[h.n_steps - 1];
    r.K = h.kinetic_energy[h.n_steps - 1];
    r.ok = 1;
  } else {
    fprintf(stderr, "bench_es1d: %s: %s\n", impl->name, err);
  }
  impl->teardown(st);
  return r;
}

/* x^0 and v^{-1/2} of the reference set-up as a (2, N) .npy for the NumPy run. */
static int write_state(const char *path, int64_t n, int64_t steps)
{
  es1d_params p = bench_params(n, steps);
  es1d *s;
  char err[256];
  if (es1d_setup(&s, &p, err, sizeof err)) {
    fprintf(stderr, "bench_es1d: %s\n", err);
    return -1;
  }
  const double *x, *v;
  int64_t m;
  es1d_particles(s, &x, &v, &m);
  FILE *f = fopen(path, "wb");
  int ok = f != NULL;
  if (ok) {
    npy_header(f, 2, m);
    ok = fwrite(x, sizeof(double), (size_t)m, f) == (size_t)m &&
         fwrite(v, sizeof(double), (size_t)m, f) == (size_t)m;
    ok = (fclose(f) == 0) && ok;
  }
  es1d_teardown(s);
  if (!ok) fprintf(stderr, "bench_es1d: cannot write %s\n", path);
  return ok ? 0 : -1;
}

static result run_numpy(int64_t n, int64_t steps)
{
  result r = {0, 0, 0, 0, 0, 0};
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char path[512], cmd[1024], line[512];
  snprintf(path, sizeof path, "%s/bench_es1d_%ld.npy", tmp, (long)getpid());
  if (write_state(path, n, steps)) return r;
  es1d_params p = bench_params(n, steps);
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 %s %s %lld %.17g %lld %.17g", ES1D_NUMPY_SCRIPT,
           path, (long long)steps, p.length, (long long)p.n_cells, p.dt);
  FILE *f = popen(cmd, "r");
  if (f) {
    double cpu;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "numpy ms/step %lf mean %lf cpu %lf W_last %lf K_last %lf", &r.ms, &r.ms_mean,
                 &cpu, &r.W, &r.K) == 5)
        r.ok = 1;
    if (pclose(f) != 0) r.ok = 0;
  }
  remove(path);
  if (!r.ok) fprintf(stderr, "bench_es1d: the NumPy run failed: %s\n", cmd);
  return r;
}

static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(b), 1e-300); }

int main(int argc, char **argv)
{
  int numpy = 1, nn = 0, rounds = 3;
  int64_t sizes[8];
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--no-numpy")) numpy = 0;
    else if (!strcmp(argv[a], "--rounds") && a + 1 < argc) rounds = atoi(argv[++a]) > 0 ? atoi(argv[a]) : 1;
    else if (nn < 8) sizes[nn++] = atoll(argv[a]);
  }
  if (!nn) {
    sizes[nn++] = 1000000;
    sizes[nn++] = 10000000;
  }
  const double bpp = es1d_bytes_per_particle();
  int bad = 0;
  printf("complete 1D electrostatic PIC step (deposit + field solve + gather + push + energies),\n"
         "Landau set-up (64 cells, quiet start), wall time per step after one warm-up step\n");
  for (int s = 0; s < nn; s++) {
    int64_t n = sizes[s], steps = n > 1000000 ? 5 : 10;
    size_t bytes = (size_t)(bpp * (double)n) / 2; /* memcpy reads and writes this many */
    char *src = malloc(bytes), *dst = malloc(bytes);
    double mc[3] = {0, 0, 0};
    if (src && dst) {
      memset(src, 1, bytes);
      memset(dst, 0, bytes);
      mc[1] = memcpy_s(dst, src, bytes, 1);
      mc[2] = memcpy_s(dst, src, bytes, 2);
    }
    free(src);
    free(dst);
    printf("\n== %lld particles, %lld steps\n", (long long)n, (long long)steps);
    printf("bytes moved per particle per step: %.0f (x and v, f64, read once and written once;\n"
           "  the per-chunk charge grids and E stay in cache) = %.1f MB per step\n",
           bpp, bpp * (double)n / 1e6);
    printf("memcpy of those bytes (%.1f MB copied: read + write): %.3f ms (1 thread, %.1f GB/s), "
           "%.3f ms (2 threads, %.1f GB/s)\n",
           (double)bytes / 1e6, 1e3 * mc[1], 2e-9 * (double)bytes / mc[1], 1e3 * mc[2],
           2e-9 * (double)bytes / mc[2]);
    result res[NVAR][3];
    memset(res, 0, sizeof res);
    int failed[NVAR][3];
    memset(failed, 0, sizeof failed);
    /* rounds: every variant once per round, in turn, so a burst of load on the shared machine
    ** hits them alike; each keeps its fastest step over all rounds */
    for (int round = 0; round < rounds; round++)
      for (int t = 1; t <= 2; t++)
        for (int v = 0; v < NVAR; v++) {
          if (!variants[v].impl) continue;
          result r = time_impl(variants[v].impl, n, steps, t);
          if (!r.ok) failed[v][t] = 1;
          if (failed[v][t]) res[v][t].ok = 0;
          else {
            double cpu = res[v][t].ok && res[v][t].ms_cpu < r.ms_cpu ? res[v][t].ms_cpu : r.ms_cpu;
            if (!res[v][t].ok || r.ms < res[v][t].ms) res[v][t] = r;
            res[v][t].ms_cpu = cpu;
          }
        }
    result np = {0, 0, 0, 0, 0, 0};
    if (numpy) np = run_numpy(n, steps);
    /* t/memcpy: this time over the memcpy time of the same bytes (same threads); t/C: over the
    ** hand-written C's (same threads); NumPy/t: NumPy's time over this one (the speed-up) */
    printf("ms/step: the fastest of %lld steps x %d rounds (mean: of that round; NumPy: the fastest\n"
           "of %lld steps, one round, and their mean); B/p: bytes moved per particle per step (read\n"
           "off the code), at the memcpy rate above: 'at memcpy'\n",
           (long long)steps, rounds, (long long)steps);
    printf("%-18s %7s %10s %10s %11s %12s %10s %10s %6s %10s\n", "variant", "threads", "ms/step", "mean",
           "ns/particle", "t/memcpy", "t/C", "NumPy/t", "B/p", "at memcpy");
    for (int v = 0; v < NVAR; v++) {
      if (!variants[v].impl) {
        printf("%-18s %7s %s\n", variants[v].name, "-", variants[v].missing);
        continue;
      }
      for (int t = 1; t <= 2; t++) {
        result *r = &res[v][t];
        if (!r->ok) {
          printf("%-18s %7d failed\n", variants[v].name, t);
          bad = 1;
          continue;
        }
        char vsnp[32] = "-";
        if (np.ok) snprintf(vsnp, sizeof vsnp, "%.1fx", np.ms / r->ms);
        printf("%-18s %7d %10.3f %10.3f %11.2f %11.2fx %9.2fx %10s %6.1f %7.3f ms\n", variants[v].name, t,
               r->ms, r->ms_mean, 1e6 * r->ms / (double)n, r->ms / (1e3 * mc[t]), r->ms / res[0][t].ms,
               vsnp, variants[v].bytes, 1e3 * mc[t] * variants[v].bytes / bpp);
        /* the same physics: every variant ends with the reference's energies */
        if (v > 0 && (rel(r->W, res[0][1].W) > 1e-9 || rel(r->K, res[0][1].K) > 1e-12)) {
          printf("  ^ disagrees with the hand-written C: W %.17g vs %.17g, K %.17g vs %.17g\n",
                 r->W, res[0][1].W, r->K, res[0][1].K);
          bad = 1;
        }
      }
    }
    /* one thread: the CPU time of the calling thread, which a loaded machine disturbs less */
    printf("1 thread, CPU time of the step's thread (fastest step):");
    for (int v = 0; v < NVAR; v++)
      if (variants[v].impl && res[v][1].ok)
        printf(" %s %.3f ms (%.2fx)%s", variants[v].name, res[v][1].ms_cpu,
               res[v][1].ms_cpu / res[0][1].ms_cpu, v + 1 < NVAR ? "," : "");
    printf("\n");
    if (res[0][1].ok && res[0][2].ok &&
        (res[0][1].W != res[0][2].W || res[0][1].K != res[0][2].K)) {
      printf("  ^ the hand-written C differs between 1 and 2 threads\n");
      bad = 1;
    }
    if (numpy && np.ok) {
      /* NumPy's fastest of its `steps` steps (one round), against the others' fastest */
      printf("%-18s %7d %10.3f %10.3f %11.2f %11.2fx %9.2fx %10s %6s %10s\n", "NumPy", 1, np.ms, np.ms_mean,
             1e6 * np.ms / (double)n, np.ms / (1e3 * mc[1]), np.ms / res[0][1].ms, "1.0x", "-", "-");
      /* the sums run in another order: agreement to rounding, not bit for bit */
      double dW = rel(np.W, res[0][1].W), dK = rel(np.K, res[0][1].K);
      printf("NumPy vs C after %lld steps: field energy rel. diff %.1e, kinetic %.1e%s\n",
             (long long)steps + 1, dW, dK, dW > 1e-6 || dK > 1e-9 ? "  DISAGREE" : "");
      if (dW > 1e-6 || dK > 1e-9) bad = 1;
    } else if (numpy) {
      bad = 1;
    }
  }
  return bad;
}
