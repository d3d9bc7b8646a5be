/*
** test_grid_deposit.c — particle–grid interaction of cnp/grid.h on the host: deposition
** (SORTED and ATOMIC) and gather for NGP, CIC and TSC in 1D, 2D and 3D against a plain-C
** reference written independently (kernel of the periodic distance to every grid point
** nearby), periodic wrap at the edges and beyond, charge conservation, partition of unity,
** determinism (1 vs 2 threads bit-identical for SORTED), skipped particles, physical units
** through scale, and bad arguments (status, grid unchanged).
*/
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "cnp/cnp.h"

static uint64_t rng_state = 777;
static double urand(void)
{
  uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return (double)((z ^ (z >> 31)) >> 11) * 0x1p-53;
}

static void set_threads(int n)
{
#ifdef _OPENMP
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

static cnp_array alloc(cnp_dtype t, int ndim, const int64_t *shape)
{
  cnp_array a;
  cr_assert_eq(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, t, ndim, shape, CNP_ORDER_C, 0),
               CNP_OK, "%s", cnp_last_error());
  return a;
}

static double rd(const cnp_array *a, int64_t i)
{
  return a->dtype == CNP_FLOAT32 ? ((float *)a->data)[i] : ((double *)a->data)[i];
}
static void wr(cnp_array *a, int64_t i, double v)
{
  if (a->dtype == CNP_FLOAT32) ((float *)a->data)[i] = (float)v;
  else ((double *)a->data)[i] = v;
}

/* The shape as a function of the distance d between a particle and a grid point. */
static double kernel(int shape, double d)
{
  double a = fabs(d);
  switch (shape) {
  case 0: return a < 0.5 ? 1.0 : 0.0;
  case 1: return a < 1.0 ? 1.0 - a : 0.0;
  default: return a < 0.5 ? 0.75 - a * a : a < 1.5 ? 0.5 * (1.5 - a) * (1.5 - a) : 0.0;
  }
}

/* Reference weight of grid point j (per axis) for position u: the sum over periodic
** images of the kernel (an image within reach: j + m n for the m nearest). */
static double axis_weight(int shape, double u, int64_t j, int64_t n)
{
  double s = 0;
  double base = floor(u / (double)n) * (double)n;   /* the image of j near u */
  for (int m = -2; m <= 2; m++) s += kernel(shape, u - (base + (double)j + (double)m * (double)n));
  return s;
}

typedef struct parts {
  int64_t n;
  cnp_array pos[3], w;
} parts;

/* N random particles spread over [-n, 2n) per axis, plus edge cases at the start. */
static parts make_parts(int ndim, const int64_t *dims, int64_t n, cnp_dtype t)
{
  parts p;
  p.n = n;
  for (int a = 0; a < ndim; a++) p.pos[a] = alloc(t, 1, &n);
  p.w = alloc(t, 1, &n);
  static const double edge[] = {0.0, 1e-9, 0.999, -0.001, -0.3, 0.49, 0.51, 2.5001};
  for (int64_t i = 0; i < n; i++) {
    for (int a = 0; a < ndim; a++) {
      double L = (double)dims[a], u;
      if (i < 8) u = edge[(i + a) % 8] + (i % 2 ? L - 1.0 : 0.0);
      else if (i < 16) u = L - edge[(i + a) % 8] * 0.5;
      else u = urand() * 3 * L - L;
      wr(&p.pos[a], i, u);
    }
    wr(&p.w, i, 0.5 + urand());
  }
  return p;
}

static void free_parts(parts *p, int ndim)
{
  for (int a = 0; a < ndim; a++) cnp_array_free(&p->pos[a]);
  cnp_array_free(&p->w);
}

/* The reference stencil of particle i: f(ctx, cell, a0, a1, a2) for every cell whose
** weights on axes 0 and 1 are nonzero (the axes past ndim weigh 1). */
typedef void (*stencil_fn)(void *ctx, int64_t cell, double a0, double a1, double a2);

static void ref_stencil(int ndim, const int64_t *dims, int shape, const parts *p, int64_t i,
                        stencil_fn f, void *ctx)
{
  int64_t d1 = ndim > 1 ? dims[1] : 1, d2 = ndim > 2 ? dims[2] : 1;
  double u[3] = {rd(&p->pos[0], i), ndim > 1 ? rd(&p->pos[1], i) : 0,
                 ndim > 2 ? rd(&p->pos[2], i) : 0};
  for (int64_t j0 = 0; j0 < dims[0]; j0++) {
    double a0 = axis_weight(shape, u[0], j0, dims[0]);
    if (a0 == 0) continue;
    for (int64_t j1 = 0; j1 < d1; j1++) {
      double a1 = ndim > 1 ? axis_weight(shape, u[1], j1, d1) : 1;
      if (a1 == 0) continue;
      for (int64_t j2 = 0; j2 < d2; j2++) {
        double a2 = ndim > 2 ? axis_weight(shape, u[2], j2, d2) : 1;
        f(ctx, (j0 * d1 + j1) * d2 + j2, a0, a1, a2);
      }
    }
  }
}

typedef struct deposit_ctx { double *g, w; } deposit_ctx;

static void deposit_one(void *ctx, int64_t cell, double a0, double a1, double a2)
{
  deposit_ctx *c = ctx;
  c->g[cell] += c->w * a0 * a1 * a2;
}

static void ref_deposit(int ndim, const int64_t *dims, int shape, const parts *p, double *g)
{
  int64_t d1 = ndim > 1 ? dims[1] : 1, d2 = ndim > 2 ? dims[2] : 1;
  int64_t cells = dims[0] * d1 * d2;
  memset(g, 0, (size_t)cells * sizeof *g);
  for (int64_t i = 0; i < p->n; i++) {
    deposit_ctx c = {g, rd(&p->w, i)};
    ref_stencil(ndim, dims, shape, p, i, deposit_one, &c);
  }
}

typedef struct gather_ctx { const cnp_array *grid; double s; } gather_ctx;

static void gather_one(void *ctx, int64_t cell, double a0, double a1, double a2)
{
  gather_ctx *c = ctx;
  c->s += a0 * a1 * a2 * rd(c->grid, cell);
}

static const char *SHAPES[3] = {"NGP", "CIC", "TSC"};

static void check_shape_dim(int ndim, const int64_t *dims, int shape, cnp_dtype t, int64_t n)
{
  parts p = make_parts(ndim, dims, n, t);
  cnp_pgrid *pg;
  cr_assert_eq(cnp_pgrid_create(&pg, CNP_BACKEND_HOST, 0, ndim, dims, (cnp_shape)shape, t, n,
                                NULL), CNP_OK, "%s", cnp_last_error());
  int64_t cells = 1;
  for (int a = 0; a < ndim; a++) cells *= dims[a];
  double *ref = malloc((size_t)cells * sizeof *ref);
  ref_deposit(ndim, dims, shape, &p, ref);
  double wsum = 0, rmax = 0;
  for (int64_t i = 0; i < n; i++) wsum += rd(&p.w, i);
  for (int64_t c = 0; c < cells; c++) rmax = fmax(rmax, fabs(ref[c]));
  double tol = t == CNP_FLOAT32 ? 1e-5 : 1e-13;
  cnp_array grid = alloc(t, ndim, dims);
  for (int mode = 0; mode < 2; mode++) {
    for (int64_t c = 0; c < cells; c++) wr(&grid, c, 1234.5);  /* overwritten, not added */
    cr_assert_eq(cnp_deposit(pg, p.pos, &p.w, &grid, (cnp_deposit_mode)mode, NULL), CNP_OK,
                 "%s", cnp_last_error());
    double err = 0, gsum = 0;
    for (int64_t c = 0; c < cells; c++) {
      err = fmax(err, fabs(rd(&grid, c) - ref[c]));
      gsum += rd(&grid, c);
    }
    cr_expect(err <= tol * (rmax + 1), "%s %dD %s %s: max error %.3g (max %.3g)",
              SHAPES[shape], ndim, mode ? "atomic" : "sorted", cnp_dtype_name(t), err, rmax);
    cr_expect(fabs(gsum - wsum) <= tol * wsum, "%s %dD %s: charge %.17g vs weights %.17g",
              SHAPES[shape], ndim, mode ? "atomic" : "sorted", gsum, wsum);
  }
  /* gather of the reference grid: sum_j W_j(u) g[j], by the same reference weights */
  for (int64_t c = 0; c < cells; c++) wr(&grid, c, sin((double)c * 0.37) + 2);
  cnp_array out = alloc(t, 1, &n);
  cr_assert_eq(cnp_gather(pg, p.pos, &grid, &out, NULL), CNP_OK, "%s", cnp_last_error());
  double gerr = 0;
  for (int64_t i = 0; i < n; i += (n > 2000 ? 7 : 1)) {
    gather_ctx c = {&grid, 0};
    ref_stencil(ndim, dims, shape, &p, i, gather_one, &c);
    gerr = fmax(gerr, fabs(rd(&out, i) - c.s));
  }
  cr_expect(gerr <= tol * 4, "%s %dD gather %s: max error %.3g", SHAPES[shape], ndim,
            cnp_dtype_name(t), gerr);
  /* partition of unity: a constant field gathers to itself */
  for (int64_t c = 0; c < cells; c++) wr(&grid, c, 2.5);
  cr_assert_eq(cnp_gather(pg, p.pos, &grid, &out, NULL), CNP_OK);
  double perr = 0;
  for (int64_t i = 0; i < n; i++) perr = fmax(perr, fabs(rd(&out, i) - 2.5));
  cr_expect(perr <= tol * 2.5, "%s %dD constant gather: error %.3g", SHAPES[shape], ndim, perr);
  cnp_array_free(&out);
  cnp_array_free(&grid);
  free(ref);
  free_parts(&p, ndim);
  cnp_pgrid_destroy(pg);
}

/* check_shape_dim for every shape on a 1-D, a 2-D and a 3-D grid (n1, n2, n3 particles). */
static void every_shape(const int64_t *d1, const int64_t *d2, const int64_t *d3, cnp_dtype t,
                        int64_t n1, int64_t n2, int64_t n3)
{
  for (int s = 0; s < 3; s++) {
    check_shape_dim(1, d1, s, t, n1);
    check_shape_dim(2, d2, s, t, n2);
    check_shape_dim(3, d3, s, t, n3);
  }
}

Test(grid_deposit, every_shape_and_dim_f64)
{
  int64_t d1[1] = {17}, d2[2] = {9, 12}, d3[3] = {5, 6, 7};
  every_shape(d1, d2, d3, CNP_FLOAT64, 3000, 2000, 1000);
}

Test(grid_deposit, every_shape_and_dim_f32)
{
  int64_t d1[1] = {16}, d2[2] = {8, 5}, d3[3] = {4, 4, 6};
  every_shape(d1, d2, d3, CNP_FLOAT32, 500, 500, 300);
}

/* Tiny grids: a TSC stencil wider than the axis wraps onto itself. */
Test(grid_deposit, tiny_axes)
{
  int64_t a[1] = {1}, b[2] = {2, 1}, c[3] = {1, 2, 3};
  every_shape(a, b, c, CNP_FLOAT64, 50, 50, 50);
}

/* Large enough for the threaded paths (n > 4096, > 16384 cells): SORTED is bit-identical
** with 1 and 2 threads; ATOMIC agrees to rounding. */
Test(grid_deposit, determinism_threads)
{
  int64_t dims[2] = {160, 130}, n = 200000;
  parts p = make_parts(2, dims, n, CNP_FLOAT64);
  for (int s = 0; s < 3; s++) {
    cnp_pgrid *pg;
    cr_assert_eq(cnp_pgrid_create(&pg, CNP_BACKEND_HOST, 0, 2, dims, (cnp_shape)s,
                                  CNP_FLOAT64, n, NULL), CNP_OK);
    cnp_array g1 = alloc(CNP_FLOAT64, 2, dims), g2 = alloc(CNP_FLOAT64, 2, dims);
    cnp_array ga = alloc(CNP_FLOAT64, 2, dims);
    set_threads(1);
    cr_assert_eq(cnp_deposit(pg, p.pos, &p.w, &g1, CNP_DEPOSIT_SORTED, NULL), CNP_OK);
    set_threads(2);
    cr_assert_eq(cnp_deposit(pg, p.pos, &p.w, &g2, CNP_DEPOSIT_SORTED, NULL), CNP_OK);
    cr_expect(memcmp(g1.data, g2.data, cnp_array_nbytes(&g1)) == 0,
              "%s: SORTED differs between 1 and 2 threads", SHAPES[s]);
    cr_assert_eq(cnp_deposit(pg, p.pos, &p.w, &g2, CNP_DEPOSIT_SORTED, NULL), CNP_OK);
    cr_expect(memcmp(g1.data, g2.data, cnp_array_nbytes(&g1)) == 0,
              "%s: SORTED differs run to run", SHAPES[s]);
    cr_assert_eq(cnp_deposit(pg, p.pos, &p.w, &ga, CNP_DEPOSIT_ATOMIC, NULL), CNP_OK);
    double err = 0;
    for (int64_t c = 0; c < dims[0] * dims[1]; c++) err = fmax(err, fabs(rd(&ga, c) - rd(&g1, c)));
    cr_expect(err < 1e-10, "%s: atomic vs sorted %.3g", SHAPES[s], err);
    set_threads(1);
    cnp_array_free(&g1); cnp_array_free(&g2); cnp_array_free(&ga);
    cnp_pgrid_destroy(pg);
  }
  free_parts(&p, 2);
}

/* Physical positions with scale = n / L give the cell-unit result; w NULL is weight 1;
** non-finite positions are skipped. */
Test(grid_deposit, scale_unit_weights_skips)
{
  int64_t dims[2] = {8, 10}, n = 5;
  double L[2] = {2.0, 5.0}, scale[2] = {8 / 2.0, 10 / 5.0};
  cnp_array x = alloc(CNP_FLOAT64, 1, &n), y = alloc(CNP_FLOAT64, 1, &n);
  cnp_array xu = alloc(CNP_FLOAT64, 1, &n), yu = alloc(CNP_FLOAT64, 1, &n);
  static const double px[5] = {0.1, 1.9, 0.77, NAN, 1.0}, py[5] = {4.9, 0.3, 2.5, 1.0, INFINITY};
  for (int i = 0; i < 5; i++) {
    wr(&y, i, px[i]); wr(&x, i, py[i]);
    wr(&yu, i, px[i] * scale[0]); wr(&xu, i, py[i] * scale[1]);
  }
  (void)L;
  cnp_pgrid *ps, *pu;
  cr_assert_eq(cnp_pgrid_create(&ps, CNP_BACKEND_HOST, 0, 2, dims, CNP_SHAPE_CIC, CNP_FLOAT64,
                                n, scale), CNP_OK);
  cr_assert_eq(cnp_pgrid_create(&pu, CNP_BACKEND_HOST, 0, 2, dims, CNP_SHAPE_CIC, CNP_FLOAT64,
                                n, NULL), CNP_OK);
  cnp_array g1 = alloc(CNP_FLOAT64, 2, dims), g2 = alloc(CNP_FLOAT64, 2, dims);
  cnp_array pos[2] = {y, x}, posu[2] = {yu, xu};
  for (int mode = 0; mode < 2; mode++) {
    cr_assert_eq(cnp_deposit(ps, pos, NULL, &g1, (cnp_deposit_mode)mode, NULL), CNP_OK);
    cr_assert_eq(cnp_deposit(pu, posu, NULL, &g2, (cnp_deposit_mode)mode, NULL), CNP_OK);
    double s = 0, err = 0;
    for (int c = 0; c < 80; c++) {
      s += rd(&g1, c);
      err = fmax(err, fabs(rd(&g1, c) - rd(&g2, c)));
    }
    cr_expect(err < 1e-14, "scale: %.3g", err);
    cr_expect(fabs(s - 3.0) < 1e-14, "3 finite particles of weight 1, got %.17g", s);
  }
  cnp_array out = alloc(CNP_FLOAT64, 1, &n);
  for (int c = 0; c < 80; c++) wr(&g1, c, 1.0);
  cr_assert_eq(cnp_gather(ps, pos, &g1, &out, NULL), CNP_OK);
  cr_expect_eq(rd(&out, 3), 0.0);
  cr_expect_eq(rd(&out, 4), 0.0);
  cr_expect(fabs(rd(&out, 0) - 1.0) < 1e-15);
  /* zero particles: the grid is zeroed */
  cnp_array none = x;
  none.shape[0] = 0;
  cnp_array pos0[2] = {none, none};
  cr_assert_eq(cnp_deposit(ps, pos0, NULL, &g1, CNP_DEPOSIT_SORTED, NULL), CNP_OK);
  for (int c = 0; c < 80; c++) cr_expect_eq(rd(&g1, c), 0.0);
  cnp_array_free(&x); cnp_array_free(&y); cnp_array_free(&xu); cnp_array_free(&yu);
  cnp_array_free(&g1); cnp_array_free(&g2); cnp_array_free(&out);
  cnp_pgrid_destroy(ps); cnp_pgrid_destroy(pu);
}

Test(grid_deposit, bad_arguments)
{
  int64_t dims[2] = {4, 6}, n = 10, more = 11;
  cnp_pgrid *pg = NULL;
  double bad_scale[2] = {1.0, 0.0};
  cr_expect_eq(cnp_pgrid_create(NULL, CNP_BACKEND_HOST, 0, 2, dims, CNP_SHAPE_CIC, CNP_FLOAT64, n, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_pgrid_create(&pg, CNP_BACKEND_HOST, 0, 4, dims, CNP_SHAPE_CIC, CNP_FLOAT64, n, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_pgrid_create(&pg, CNP_BACKEND_HOST, 0, 2, dims, (cnp_shape)5, CNP_FLOAT64, n, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_pgrid_create(&pg, CNP_BACKEND_HOST, 0, 2, dims, CNP_SHAPE_CIC, CNP_INT64, n, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_pgrid_create(&pg, CNP_BACKEND_HOST, 0, 2, dims, CNP_SHAPE_CIC, CNP_FLOAT64, -1, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_pgrid_create(&pg, CNP_BACKEND_HOST, 0, 2, dims, CNP_SHAPE_CIC, CNP_FLOAT64, n, bad_scale), CNP_EINVAL);
  cr_expect_eq(cnp_pgrid_create(&pg, CNP_BACKEND_HOST, 2, 2, dims, CNP_SHAPE_CIC, CNP_FLOAT64, n, NULL), CNP_EDEVICE);
  cr_expect(pg == NULL);
#ifndef CNP_HAVE_CUDA
  cr_expect_eq(cnp_pgrid_create(&pg, CNP_BACKEND_CUDA, 0, 2, dims, CNP_SHAPE_CIC, CNP_FLOAT64, n, NULL),
               CNP_EUNSUPPORTED);
#endif
  cr_expect_eq(cnp_pgrid_destroy(NULL), CNP_OK);
  cr_assert_eq(cnp_pgrid_create(&pg, CNP_BACKEND_HOST, 0, 2, dims, CNP_SHAPE_TSC, CNP_FLOAT64, n, NULL), CNP_OK);
  cnp_array x = alloc(CNP_FLOAT64, 1, &n), y = alloc(CNP_FLOAT64, 1, &n), w = alloc(CNP_FLOAT64, 1, &n);
  cnp_array x11 = alloc(CNP_FLOAT64, 1, &more), y11 = alloc(CNP_FLOAT64, 1, &more);
  cnp_array xf = alloc(CNP_FLOAT32, 1, &n), w11 = alloc(CNP_FLOAT64, 1, &more);
  int64_t wrong[2] = {6, 4};
  cnp_array grid = alloc(CNP_FLOAT64, 2, dims), gw = alloc(CNP_FLOAT64, 2, wrong);
  cnp_array gf = alloc(CNP_FLOAT32, 2, dims);
  for (int c = 0; c < 24; c++) wr(&grid, c, 7.0);
  cnp_array pos[2] = {y, x}, pos11[2] = {y11, x11}, posf[2] = {y, xf}, mixed[2] = {y, x11};
  cr_expect_eq(cnp_deposit(NULL, pos, &w, &grid, CNP_DEPOSIT_SORTED, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_deposit(pg, NULL, &w, &grid, CNP_DEPOSIT_SORTED, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_deposit(pg, pos, &w, NULL, CNP_DEPOSIT_SORTED, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_deposit(pg, pos, &w, &grid, (cnp_deposit_mode)9, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_deposit(pg, pos11, NULL, &grid, CNP_DEPOSIT_SORTED, NULL), CNP_EOVERFLOW);
  cr_expect_eq(cnp_deposit(pg, posf, &w, &grid, CNP_DEPOSIT_SORTED, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_deposit(pg, mixed, &w, &grid, CNP_DEPOSIT_SORTED, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_deposit(pg, pos, &w11, &grid, CNP_DEPOSIT_SORTED, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_deposit(pg, pos, &w, &gw, CNP_DEPOSIT_ATOMIC, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_deposit(pg, pos, &w, &gf, CNP_DEPOSIT_ATOMIC, NULL), CNP_EDTYPE);
  cnp_array galias;
  cr_assert_eq(cnp_array_wrap(&galias, w.data, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2,
                              (int64_t[2]){2, 5}, NULL), CNP_OK);
  cnp_pgrid *small;
  int64_t sd[2] = {2, 5};
  cr_assert_eq(cnp_pgrid_create(&small, CNP_BACKEND_HOST, 0, 2, sd, CNP_SHAPE_CIC, CNP_FLOAT64, n, NULL), CNP_OK);
  cr_expect_eq(cnp_deposit(small, pos, &w, &galias, CNP_DEPOSIT_SORTED, NULL), CNP_EALIAS);
  cnp_pgrid_destroy(small);
  for (int c = 0; c < 24; c++) cr_expect_eq(rd(&grid, c), 7.0, "failed calls changed the grid");
  cnp_array out = alloc(CNP_FLOAT64, 1, &n), out11 = alloc(CNP_FLOAT64, 1, &more);
  cr_expect_eq(cnp_gather(pg, pos, &grid, &out11, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_gather(pg, pos, &grid, &x, NULL), CNP_EALIAS);
  cr_expect_eq(cnp_gather(pg, pos, &gw, &out, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_shape_points(CNP_SHAPE_TSC), 3);
  cr_expect_eq(cnp_shape_points((cnp_shape)9), 0);
  cnp_array_free(&x); cnp_array_free(&y); cnp_array_free(&w); cnp_array_free(&x11);
  cnp_array_free(&y11); cnp_array_free(&xf); cnp_array_free(&w11); cnp_array_free(&grid);
  cnp_array_free(&gw); cnp_array_free(&gf); cnp_array_free(&out); cnp_array_free(&out11);
  cr_expect_eq(cnp_pgrid_destroy(pg), CNP_OK);
  cr_expect_neq(cnp_pgrid_destroy(pg), CNP_OK);
}

/* Every allocation of cnp_pgrid_create fails cleanly: CNP_ENOMEM, *out NULL, no crash,
** and a later create succeeds. */
void cnp__fail_alloc_after(long k);
Test(grid_deposit, allocation_failures)
{
  int64_t dims[3] = {4, 5, 6};
  int done = 0;
  for (long k = 1; k < 100 && !done; k++) {
    cnp_pgrid *pg = (cnp_pgrid *)&pg;
    cnp__fail_alloc_after(k);
    cnp_status st = cnp_pgrid_create(&pg, CNP_BACKEND_HOST, 0, 3, dims, CNP_SHAPE_TSC,
                                     CNP_FLOAT64, 100, NULL);
    cnp__fail_alloc_after(0);
    if (st == CNP_OK) {
      cr_expect_eq(cnp_pgrid_destroy(pg), CNP_OK);
      done = 1;
    } else {
      cr_expect_eq(st, CNP_ENOMEM, "k %ld: %s", k, cnp_last_error());
      cr_expect(pg == NULL);
    }
  }
  cr_expect(done, "create never succeeded");
}

/* The device-count forms on the host: the count read from host memory (its checks), and
** the result over the leading rows equal to the plain call over views of those rows
** (rows past the count of gather's out left as they were). */
Test(grid_deposit, device_count_forms)
{
  int64_t dims[2] = {4, 6}, n = 10, one = 1, two = 2, live = 7;
  cnp_pgrid *pg = NULL;
  cr_assert_eq(cnp_pgrid_create(&pg, CNP_BACKEND_HOST, 0, 2, dims, CNP_SHAPE_CIC, CNP_FLOAT64, n, NULL), CNP_OK);
  cnp_array x = alloc(CNP_FLOAT64, 1, &n), y = alloc(CNP_FLOAT64, 1, &n), w = alloc(CNP_FLOAT64, 1, &n);
  for (int64_t i = 0; i < n; i++) {
    wr(&x, i, 6.0 * urand());
    wr(&y, i, 4.0 * urand());
    wr(&w, i, urand());
  }
  cnp_array count = alloc(CNP_INT64, 1, &one), c2 = alloc(CNP_INT64, 1, &two), cf = alloc(CNP_FLOAT64, 1, &one);
  cnp_array grid = alloc(CNP_FLOAT64, 2, dims), ref = alloc(CNP_FLOAT64, 2, dims);
  cnp_array pos[2] = {y, x};
  /* argument checks: NULL, shape, dtype, range, alias; the grid unchanged */
  for (int c = 0; c < 24; c++) wr(&grid, c, 7.0);
  cr_expect_eq(cnp_deposit_device_count(pg, pos, &w, NULL, &grid, CNP_DEPOSIT_SORTED, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_deposit_device_count(pg, pos, &w, &c2, &grid, CNP_DEPOSIT_SORTED, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_deposit_device_count(pg, pos, &w, &cf, &grid, CNP_DEPOSIT_SORTED, NULL), CNP_EDTYPE);
  ((int64_t *)count.data)[0] = n + 1;
  cr_expect_eq(cnp_deposit_device_count(pg, pos, &w, &count, &grid, CNP_DEPOSIT_SORTED, NULL), CNP_ERANGE);
  ((int64_t *)count.data)[0] = -1;
  cr_expect_eq(cnp_deposit_device_count(pg, pos, &w, &count, &grid, CNP_DEPOSIT_ATOMIC, NULL), CNP_ERANGE);
  cnp_array calias;
  cr_assert_eq(cnp_array_wrap(&calias, grid.data, CNP_BACKEND_HOST, 0, CNP_INT64, 1, &one, NULL), CNP_OK);
  ((int64_t *)count.data)[0] = live;
  for (int c = 0; c < 24; c++) cr_expect_eq(rd(&grid, c), 7.0, "failed calls changed the grid");
  cr_expect_eq(cnp_deposit_device_count(NULL, pos, &w, &count, &grid, CNP_DEPOSIT_SORTED, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_deposit_device_count(pg, pos, &w, &count, &grid, (cnp_deposit_mode)9, NULL), CNP_EINVAL);
  /* the leading `live` rows, as the plain call over slices of them */
  cnp_array xs, ys, ws;
  cr_assert_eq(cnp_array_slice(&xs, &x, 0, 0, live), CNP_OK);
  cr_assert_eq(cnp_array_slice(&ys, &y, 0, 0, live), CNP_OK);
  cr_assert_eq(cnp_array_slice(&ws, &w, 0, 0, live), CNP_OK);
  cnp_array spos[2] = {ys, xs};
  for (int m = 0; m < 2; m++) {
    cnp_deposit_mode mode = m ? CNP_DEPOSIT_ATOMIC : CNP_DEPOSIT_SORTED;
    set_threads(1);
    cr_assert_eq(cnp_deposit(pg, spos, &ws, &ref, mode, NULL), CNP_OK, "%s", cnp_last_error());
    cr_assert_eq(cnp_deposit_device_count(pg, pos, &w, &count, &grid, mode, NULL), CNP_OK, "%s", cnp_last_error());
    for (int c = 0; c < 24; c++) cr_expect_eq(rd(&grid, c), rd(&ref, c), "mode %d point %d", m, c);
  }
  cnp_array out = alloc(CNP_FLOAT64, 1, &n), oref = alloc(CNP_FLOAT64, 1, &live);
  for (int64_t i = 0; i < n; i++) wr(&out, i, -3.0);
  cr_expect_eq(cnp_gather_device_count(pg, pos, &grid, NULL, &out, NULL), CNP_EINVAL);
  cnp_array oalias;
  cr_assert_eq(cnp_array_wrap(&oalias, out.data, CNP_BACKEND_HOST, 0, CNP_INT64, 1, &one, NULL), CNP_OK);
  cr_expect_eq(cnp_gather_device_count(pg, pos, &grid, &oalias, &out, NULL), CNP_EALIAS);
  cr_expect_eq(cnp_deposit_device_count(pg, pos, &w, &calias, &grid, CNP_DEPOSIT_SORTED, NULL), CNP_EALIAS);
  cr_assert_eq(cnp_gather(pg, spos, &grid, &oref, NULL), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_gather_device_count(pg, pos, &grid, &count, &out, NULL), CNP_OK, "%s", cnp_last_error());
  for (int64_t i = 0; i < n; i++) cr_expect_eq(rd(&out, i), i < live ? rd(&oref, i) : -3.0, "row %d", (int)i);
  ((int64_t *)count.data)[0] = 0;   /* no particles: a zero grid */
  cr_assert_eq(cnp_deposit_device_count(pg, pos, &w, &count, &grid, CNP_DEPOSIT_SORTED, NULL), CNP_OK);
  for (int c = 0; c < 24; c++) cr_expect_eq(rd(&grid, c), 0.0);
  cnp_array_free(&x); cnp_array_free(&y); cnp_array_free(&w); cnp_array_free(&count);
  cnp_array_free(&c2); cnp_array_free(&cf); cnp_array_free(&grid); cnp_array_free(&ref);
  cnp_array_free(&out); cnp_array_free(&oref);
  cr_expect_eq(cnp_pgrid_destroy(pg), CNP_OK);
}
