/*
** bench_deposit.c -- why the complete 1D step's particle loop is one fused scalar loop.
**
** The es1d step's particle pass (docs/physics.md: CIC gather of E at x, leapfrog push, move,
** periodic wrap, CIC deposit of the new x into a per-chunk charge grid) written six ways,
** timed on one thread (CPU time of the thread, fastest of R runs, each variant in turn):
**   fused       one scalar loop, as examples/pic/ref/es1d.c and the generated unit do it
**   lanes       the same loop under `omp simd` with 8 private grids per chunk (row i adds into
**               grid i % 8, so a vector of 8 rows never adds twice to one element): the whole
**               body vectorizes, the deposit with AVX-512 gathers and scatters where the
**               target has them
**   two-phase   per 512 rows, a vectorizable pass (gather, push, wrap, the new cell and
**               fraction into two buffers), then a scalar deposit from the buffers: the
**               additions of the fused loop in its order (the generated unit's "buffered
**               scatter-adds", docs/codegen.md)
**   two-phase 4 the same with the deposit into 4 grids (row k into grid k % 4): another
**               order of the additions, four independent chains where rows in cell order
**               hit one cell in turn
**   fused 4     the fused loop into 4 grids (row i into grid i % 4)
**   no deposit  the fused loop without the deposit: what the deposit's scattered
**               read-modify-writes cost (a bound, not a variant: it deposits nothing)
** and memcpy of the 32 bytes per particle the pass must move (x and v read and written).
** Every variant pushes the same particles to the same bits; the deposited grids agree to
** rounding (the additions run in other orders). Particles in order (the quiet start's
** layout) and shuffled (random cells: the gathers and scatters jump).
**
**   bench_deposit [N] [R]      (default 1000000 particles, 20 runs)
** Build: cmake --build build --target bench_deposit (compiled with -O3 -march=native
** -fno-trapping-math, which lets gcc vectorize floor(); results are unchanged by it).
*/
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NC 64            /* cells (the Landau set-up) */
#define W (NC + 1)       /* a chunk grid: the nodes and node 0's periodic image */
#define CHUNK 4096       /* rows per chunk grid, as the reference and the generated unit */
#define SUB 512          /* two-phase: rows per sub-block */

typedef struct {
  int64_t n;
  double L, dt, idx;
  const double *E;     /* W values: E[NC] = E[0] */
} pass;

static double cpu_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int64_t cell(double u)
{
  int64_t j = (int64_t)u;
  return j < NC - 1 ? j : NC - 1;
}

static inline double wrap(double xa, double L)
{
  if (xa < 0.0 || xa >= L) {
    xa = xa - L * floor(xa / L);
    xa = xa >= L ? 0.0 : xa;
  }
  return xa;
}

/* The wrap as selects (the same value): a loop with it has no branch to vectorize around. */
static inline double wrap_sel(double xa, double L)
{
  double w = xa - L * floor(xa / L);
  w = w >= L ? 0.0 : w;
  return (xa < 0.0) | (xa >= L) ? w : xa;
}

static double fused(const pass *p, double *restrict x, double *restrict v, double *restrict g)
{
  double v2 = 0.0;
  for (int64_t c = 0; c * CHUNK < p->n; c++) {
    double *restrict r = g + c * W;
    memset(r, 0, sizeof(double) * W);
    const int64_t lo = c * CHUNK, hi = lo + CHUNK < p->n ? lo + CHUNK : p->n;
    for (int64_t i = lo; i < hi; i++) {
      const double u = x[i] * p->idx;
      const int64_t j = cell(u);
      const double f = u - (double)j;
      const double e = p->E[j] + f * (p->E[j + 1] - p->E[j]);
      const double vo = v[i], vn = vo - p->dt * e;
      v2 += vo * vo + vn * vn;
      const double xa = wrap(x[i] + p->dt * vn, p->L);
      x[i] = xa;
      v[i] = vn;
      const double un = xa * p->idx;
      const int64_t jn = cell(un);
      const double fn = un - (double)jn;
      r[jn] += 1.0 - fn;
      r[jn + 1] += fn;
    }
  }
  return v2;
}

static double nodep(const pass *p, double *restrict x, double *restrict v, double *restrict g)
{
  double v2 = 0.0;
  (void)g;
  for (int64_t i = 0; i < p->n; i++) {
    const double u = x[i] * p->idx;
    const int64_t j = cell(u);
    const double f = u - (double)j;
    const double e = p->E[j] + f * (p->E[j + 1] - p->E[j]);
    const double vo = v[i], vn = vo - p->dt * e;
    v2 += vo * vo + vn * vn;
    const double xa = wrap_sel(x[i] + p->dt * vn, p->L);
    x[i] = xa;
    v[i] = vn;
  }
  return v2;
}

/* g holds 8 grids per chunk here (lane l of chunk c at g + (8 c + l) W), summed into the
** first afterwards so that the caller compares one grid per chunk. */
static double lanes(const pass *p, double *restrict x, double *restrict v, double *restrict g)
{
  double v2 = 0.0;
  for (int64_t c = 0; c * CHUNK < p->n; c++) {
    double *restrict r = g + c * 8 * W;
    memset(r, 0, sizeof(double) * 8 * W);
    const int64_t lo = c * CHUNK, hi = lo + CHUNK < p->n ? lo + CHUNK : p->n;
#pragma omp simd safelen(8) simdlen(8) reduction(+ : v2)
    for (int64_t i = lo; i < hi; i++) {
      const double u = x[i] * p->idx;
      const int64_t j = cell(u);
      const double f = u - (double)j;
      const double e = p->E[j] + f * (p->E[j + 1] - p->E[j]);
      const double vo = v[i], vn = vo - p->dt * e;
      v2 += vo * vo + vn * vn;
      const double xa = wrap_sel(x[i] + p->dt * vn, p->L);
      x[i] = xa;
      v[i] = vn;
      const double un = xa * p->idx;
      const int64_t jn = cell(un);
      const double fn = un - (double)jn;
      const int64_t o = (i & 7) * W;   /* lo is a multiple of 8: the 8 rows of a vector, 8 grids */
      r[o + jn] += 1.0 - fn;
      r[o + jn + 1] += fn;
    }
  }
  return v2;
}

static double twophase(const pass *p, double *restrict x, double *restrict v, double *restrict g)
{
  double v2 = 0.0;
  int64_t jb[SUB];
  double fb[SUB];
  for (int64_t c = 0; c * CHUNK < p->n; c++) {
    double *restrict r = g + c * W;
    memset(r, 0, sizeof(double) * W);
    const int64_t lo = c * CHUNK, hi = lo + CHUNK < p->n ? lo + CHUNK : p->n;
    for (int64_t s = lo; s < hi; s += SUB) {
      const int64_t m = s + SUB < hi ? SUB : hi - s;
#pragma omp simd reduction(+ : v2)
      for (int64_t k = 0; k < m; k++) {
        const int64_t i = s + k;
        const double u = x[i] * p->idx;
        const int64_t j = cell(u);
        const double f = u - (double)j;
        const double e = p->E[j] + f * (p->E[j + 1] - p->E[j]);
        const double vo = v[i], vn = vo - p->dt * e;
        v2 += vo * vo + vn * vn;
        const double xa = wrap_sel(x[i] + p->dt * vn, p->L);
        x[i] = xa;
        v[i] = vn;
        const double un = xa * p->idx;
        jb[k] = cell(un);
        fb[k] = un - (double)jb[k];
      }
      for (int64_t k = 0; k < m; k++) {
        r[jb[k]] += 1.0 - fb[k];
        r[jb[k] + 1] += fb[k];
      }
    }
  }
  return v2;
}

/* two-phase with the deposit into 4 grids per chunk (row k of a sub-block into grid k % 4):
** four independent chains of read-modify-writes where rows in order hit one cell in turn */
static double twophase4(const pass *p, double *restrict x, double *restrict v, double *restrict g)
{
  double v2 = 0.0;
  int64_t jb[SUB];
  double fb[SUB];
  for (int64_t c = 0; c * CHUNK < p->n; c++) {
    double *restrict r = g + c * 4 * W;
    memset(r, 0, sizeof(double) * 4 * W);
    const int64_t lo = c * CHUNK, hi = lo + CHUNK < p->n ? lo + CHUNK : p->n;
    for (int64_t s = lo; s < hi; s += SUB) {
      const int64_t m = s + SUB < hi ? SUB : hi - s;
#pragma omp simd reduction(+ : v2)
      for (int64_t k = 0; k < m; k++) {
        const int64_t i = s + k;
        const double u = x[i] * p->idx;
        const int64_t j = cell(u);
        const double f = u - (double)j;
        const double e = p->E[j] + f * (p->E[j + 1] - p->E[j]);
        const double vo = v[i], vn = vo - p->dt * e;
        v2 += vo * vo + vn * vn;
        const double xa = wrap_sel(x[i] + p->dt * vn, p->L);
        x[i] = xa;
        v[i] = vn;
        const double un = xa * p->idx;
        jb[k] = cell(un);
        fb[k] = un - (double)jb[k];
      }
      int64_t k = 0;
      for (; k + 4 <= m; k += 4)
        for (int l = 0; l < 4; l++) {
          r[l * W + jb[k + l]] += 1.0 - fb[k + l];
          r[l * W + jb[k + l] + 1] += fb[k + l];
        }
      for (int l = 0; k < m; k++, l++) {
        r[l * W + jb[k]] += 1.0 - fb[k];
        r[l * W + jb[k] + 1] += fb[k];
      }
    }
  }
  return v2;
}

/* the fused loop with 4 grids per chunk (row i into grid i % 4) */
static double fused4(const pass *p, double *restrict x, double *restrict v, double *restrict g)
{
  double v2 = 0.0;
  for (int64_t c = 0; c * CHUNK < p->n; c++) {
    double *restrict r = g + c * 4 * W;
    memset(r, 0, sizeof(double) * 4 * W);
    const int64_t lo = c * CHUNK, hi = lo + CHUNK < p->n ? lo + CHUNK : p->n;
    for (int64_t i = lo; i < hi; i++) {
      const double u = x[i] * p->idx;
      const int64_t j = cell(u);
      const double f = u - (double)j;
      const double e = p->E[j] + f * (p->E[j + 1] - p->E[j]);
      const double vo = v[i], vn = vo - p->dt * e;
      v2 += vo * vo + vn * vn;
      const double xa = wrap(x[i] + p->dt * vn, p->L);
      x[i] = xa;
      v[i] = vn;
      const double un = xa * p->idx;
      const int64_t jn = cell(un);
      const double fn = un - (double)jn;
      const int64_t o = (i & 3) * W;
      r[o + jn] += 1.0 - fn;
      r[o + jn + 1] += fn;
    }
  }
  return v2;
}

typedef double (*pass_fn)(const pass *, double *restrict, double *restrict, double *restrict);
static const struct {
  const char *name;
  pass_fn fn;
  int grids;   /* chunk grids per chunk it writes (0: none) */
} variants[] = {
    {"fused", fused, 1},
    {"lanes", lanes, 8},
    {"two-phase", twophase, 1},
    {"two-phase 4", twophase4, 4},
    {"fused 4", fused4, 4},
    {"no deposit", nodep, 0},
};
#define NV (int)(sizeof variants / sizeof variants[0])

static int run(int64_t n, int runs, int shuffled)
{
  const double L = 4.0 * 3.14159265358979323846, dt = 0.1;
  const int64_t nch = (n + CHUNK - 1) / CHUNK;
  double *x0 = malloc(sizeof(double) * (size_t)n), *v0 = malloc(sizeof(double) * (size_t)n);
  double *x = malloc(sizeof(double) * (size_t)n), *v = malloc(sizeof(double) * (size_t)n);
  double *g = malloc(sizeof(double) * (size_t)(nch * 8 * W));
  double *ref = malloc(sizeof(double) * (size_t)(nch * W));
  double *xr = malloc(sizeof(double) * (size_t)n);
  double E[W];
  if (!x0 || !v0 || !x || !v || !g || !ref || !xr) {
    fprintf(stderr, "bench_deposit: out of memory\n");
    return 1;
  }
  uint64_t s = 88172645463325252u;   /* xorshift64: the shuffle and the velocities */
  for (int64_t i = 0; i < n; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    x0[i] = ((double)i + 0.5) * L / (double)n;
    v0[i] = 0.5 * ((double)(s >> 11) * 0x1p-53 - 0.5);
  }
  if (shuffled)
    for (int64_t i = n - 1; i > 0; i--) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      int64_t k = (int64_t)(s % (uint64_t)(i + 1));
      double t = x0[i];
      x0[i] = x0[k];
      x0[k] = t;
    }
  for (int k = 0; k < W; k++) E[k] = 0.05 * sin(2.0 * 3.14159265358979323846 * (k % NC) / NC);
  pass p = {n, L, dt, NC / L, E};

  /* memcpy of the pass's bytes: 16 n read and 16 n written */
  double mc = 1e30;
  for (int r = 0; r < runs; r++) {
    double t = cpu_s();
    memcpy(x, x0, sizeof(double) * (size_t)n);
    memcpy(v, v0, sizeof(double) * (size_t)n);
    t = cpu_s() - t;
    if (t < mc) mc = t;
  }

  double best[NV];
  int bad = 0;
  for (int k = 0; k < NV; k++) best[k] = 1e30;
  for (int r = 0; r < runs; r++)
    for (int k = 0; k < NV; k++) {
      memcpy(x, x0, sizeof(double) * (size_t)n);
      memcpy(v, v0, sizeof(double) * (size_t)n);
      double t = cpu_s();
      volatile double v2 = variants[k].fn(&p, x, v, g);
      t = cpu_s() - t;
      (void)v2;
      if (t < best[k]) best[k] = t;
      if (r) continue;
      /* check once: the same particles as the fused loop, and the same grids to rounding */
      if (k == 0) {
        memcpy(ref, g, sizeof(double) * (size_t)(nch * W));
        memcpy(xr, x, sizeof(double) * (size_t)n);
        continue;
      }
      if (memcmp(xr, x, sizeof(double) * (size_t)n)) {
        printf("  %s: x differs from the fused loop's\n", variants[k].name);
        bad = 1;
      }
      if (!variants[k].grids) continue;
      double worst = 0.0;
      for (int64_t c = 0; c < nch; c++)
        for (int j = 0; j < W; j++) {
          double a = 0.0;
          for (int l = 0; l < variants[k].grids; l++) a += g[(c * variants[k].grids + l) * W + j];
          double d = fabs(a - ref[c * W + j]);
          if (d > worst) worst = d;
        }
      if (worst > 1e-9) {
        printf("  %s: the grids differ from the fused loop's by %.3g\n", variants[k].name, worst);
        bad = 1;
      }
    }
  printf("\n== %lld particles, %s, 1 thread, CPU time, fastest of %d runs\n", (long long)n,
         shuffled ? "shuffled (random cells)" : "in order (quiet start)", runs);
  printf("%-12s %10s %12s %10s %10s\n", "variant", "ms/pass", "ns/particle", "t/fused", "t/memcpy");
  for (int k = 0; k < NV; k++)
    printf("%-12s %10.3f %12.2f %9.2fx %9.2fx\n", variants[k].name, 1e3 * best[k],
           1e9 * best[k] / (double)n, best[k] / best[0], best[k] / mc);
  printf("%-12s %10.3f %12.2f %9.2fx %9.2fx   (32 B/p: x and v, read + write)\n", "memcpy", 1e3 * mc,
         1e9 * mc / (double)n, mc / best[0], 1.0);
  free(x0), free(v0), free(x), free(v), free(g), free(ref), free(xr);
  return bad;
}

int main(int argc, char **argv)
{
  int64_t n = argc > 1 ? atoll(argv[1]) : 1000000;
  int runs = argc > 2 ? atoi(argv[2]) : 20;
  if (n < 1 || runs < 1) {
    fprintf(stderr, "usage: bench_deposit [N >= 1] [R >= 1]\n");
    return 2;
  }
  printf("the es1d particle pass (gather, push, wrap, CIC deposit into %d-row chunk grids, %d cells)\n",
         CHUNK, NC);
  int bad = run(n, runs, 0);
  bad |= run(n, runs, 1);
  return bad;
}
