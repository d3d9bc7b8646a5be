/*
** interp_grid.c -- the reference interpreter's grids (docs/language.md, Grids, "Particles and
** grids", FFTs; docs/robustness.md states the orders it follows): element offsets of grid
** fields (stencil reads), coord() and wave(), setup's ghost-width check, halo, deposit and
** gather, fft and ifft (a direct DFT). The rest of the interpreter is interp.c; the types
** and helpers both use are in interp_internal.h.
*/
#define _POSIX_C_SOURCE 200809L
#include "interp_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* F[c.., j, i] of a grid field (docs/language.md, Grids): components as usual; per axis, in a
** map over F's grid an index `j + off` of the map is a stencil read (periodic: wrapped mod n,
** clamp: clamped to [0, n-1], ghost(W): the ghost plane), any other index an explicit
** interior point in [0, n). The storage index of interior point x is x + W. */
int64_t grid_offset(Interp *I, Expr *e, FieldRT *f) {
  const GridInfo *gi = f->d->grid_of->grid;
  int nc = f->d->grid_ncomp;
  bool own = I->gmap && I->gmap->over.decl == f->d->grid_of;
  int64_t off = 0;
  for (int k = 0; k < e->nargs; k++) {
    int64_t x, o = 0;
    if (k < nc) {
      x = conv(eval(I, e->args[k]), DT_I64).i;
      if (x < 0 || x >= f->cap[k]) goto out;
    } else {
      const GridAxis *A = &gi->axis[k - nc];
      int64_t n = f->cap[k] - 2 * (int64_t)A->ghost;
      int ax = own ? grid_index_axis(I->gmap, e->args[k], &o) : -1;
      if (ax == k - nc) {
        x = I->locals[I->gmap->gidx[ax]->id].i + o;
        if (o && A->bound == GB_PERIODIC) x = ((x % n) + n) % n;
        else if (o && A->bound == GB_CLAMP) x = x < 0 ? 0 : x >= n ? n - 1 : x;
      } else {
        x = conv(eval(I, e->args[k]), DT_I64).i;
        if (I->failed) return -1;
        if (x < 0 || x >= n) goto out;
      }
      x += A->ghost;
      if (x < 0 || x >= f->cap[k]) goto out;
    }
    off = off * f->cap[k] + x;
  }
  return I->failed ? -1 : off;
out:
  fail(I, e->loc, "index out of range of field '%s'", f->d->name);
  return -1;
}

/* A grid length (a real setup expression: literals, consts, setup params, + - * /) in f64,
** operation by operation as the generated code computes it. */
static double len_value(Interp *I, Expr *e) {
  switch (e->kind) {
  case EX_INT: return (double)e->ival;
  case EX_FLOAT: return e->fval;
  case EX_NAME: {
    Decl *d = e->ref.decl;
    if (d->kind == DECL_CONST) return d->dtype == DT_F64 || d->dtype == DT_F32 || d->dtype == DT_F16 ? d->fval : (double)d->ival;
    if (d->kind == DECL_PARAM) return as_double(I->params[d->index]);
    if (d->kind == DECL_DIM) return (double)I->dim_cap[d->index];
    return 0.0;
  }
  case EX_UNARY: return -len_value(I, e->args[0]);
  case EX_CAST: return len_value(I, e->args[0]);
  case EX_BINARY: {
    double a = len_value(I, e->args[0]), b = len_value(I, e->args[1]);
    return e->op == OP_ADD ? a + b : e->op == OP_SUB ? a - b : e->op == OP_MUL ? a * b : a / b;
  }
  default: return 0.0;
  }
}

/* wave(i) and coord(i) of the grid map being run: false if e is neither. */
bool grid_fn_value(Interp *I, Expr *e, Value *out) {
  DType t = e->type;
  Expr **a = e->args;
  if (!I->gmap) return false;
  if (e->ref.name && !strcmp(e->ref.name, "wave")) {   /* 2 pi m / (n * (L / n)), as generated */
    int64_t off;
    int wa = grid_index_axis(I->gmap, a[0], &off);
    const GridAxis *A = &I->gmap->over.decl->grid->axis[wa];
    int64_t n = setup_int(I, A->ext), j = I->locals[I->gmap->gidx[wa]->id].i;
    double d = len_value(I, A->length) / (double)n;
    int64_t m = wa == I->gmap->gndim - 1 || 2 * j < n ? j : j - n;
    *out = conv((Value){.t = DT_F64, .d = 6.283185307179586 * (double)m / ((double)n * d)}, t);
    return true;
  }
  int ax = grid_coord_axis(I->gmap, e);            /* coord(i): i * (length / n) */
  if (ax < 0) return false;
  const GridAxis *A = &I->gmap->over.decl->grid->axis[ax];
  double n = (double)setup_int(I, A->ext), d = A->length ? len_value(I, A->length) / n : 1.0;
  *out = conv((Value){.t = DT_F64, .d = (double)I->locals[I->gmap->gidx[ax]->id].i * d}, t);
  return true;
}

/* A deposit or gather over a grid with length(...): its plan's setup (cnp_pgrid_create) fails
** when an axis's scale n / length is not finite and nonzero (docs/language.md, "Particles and
** grids"; found/pgrid_length_setup: a setup param as a length). False, with the message. */
static bool pgrid_scales_ok(Interp *I, Stmt *s, FILE *diag) {
  for (; s; s = s->next) {
    if (!pgrid_scales_ok(I, s->body, diag) || !pgrid_scales_ok(I, s->else_body, diag)) return false;
    if (s->kind != ST_DEPOSIT && s->kind != ST_GATHER) continue;
    Decl *g = (s->kind == ST_DEPOSIT ? s->b.decl : s->a.decl)->grid_of;
    for (int a = 0; g && a < g->grid->ndim; a++) {
      if (!g->grid->axis[a].length) continue;
      double scale = (double)setup_int(I, g->grid->axis[a].ext) / len_value(I, g->grid->axis[a].length);
      if (!isfinite(scale) || scale == 0.0) {
        fprintf(diag, "cnpc: interpreter: %s:%d: %s: grid %s: scale[%d] = %g must be finite and nonzero "
                "(setup fails, docs/language.md)\n", s->loc.file ? s->loc.file->path : "?", s->loc.line,
                s->kind == ST_DEPOSIT ? "deposit" : "gather", g->name, a, scale);
        return false;
      }
    }
  }
  return true;
}

/* Setup fails for a ghost(W) axis with n < W (docs/language.md, Grids) and for a deposit or
** gather over an axis whose n / length is not finite and nonzero, as the generated setup:
** false, with the message. */
bool grid_setup_ok(Interp *I, FILE *diag) {
  for (Decl *d = I->cc->decls; d; d = d->next)
    if (d->kind == DECL_STEP && !pgrid_scales_ok(I, d->body, diag)) return false;
  for (Decl *d = I->cc->decls; d; d = d->next)
    for (int a = 0; d->kind == DECL_GRID && !d->target.name && a < d->grid->ndim; a++) {
      int64_t n = setup_int(I, d->grid->axis[a].ext), W = d->grid->axis[a].ghost;
      if (n > 0 && n < W) {
        fprintf(diag, "cnpc: interpreter: %s:%d: grid %s: axis %d has %lld points, fewer than its ghost width %lld "
                "(setup fails, docs/language.md)\n", d->loc.file ? d->loc.file->path : "?", d->loc.line, d->name, a,
                (long long)n, (long long)W);
        return false;
      }
    }
  return true;
}

/* halo F; -- per ghost axis in order, each block of its planes: [0, W) <- [n, n + W) and
** [n + W, n + 2W) <- [W, 2W) over the whole storage of the other axes (corners included);
** n < W cannot happen here: setup fails first (interp_run), as the generated one. */
void exec_halo(Interp *I, Stmt *s) {
  FieldRT *f = field_of(I, s->a.decl);
  const GridInfo *gi = f->d->grid_of->grid;
  int nc = f->d->grid_ncomp;
  for (int a = 0; a < gi->ndim; a++) {
    int64_t W = gi->axis[a].ghost, d = nc + a;
    if (!W) continue;
    int64_t outer = 1, inner = (int64_t)f->esize, ns = f->cap[d], n = ns - 2 * W;
    for (int r = 0; r < d; r++) outer *= f->cap[r];
    for (int r = d + 1; r < f->rank; r++) inner *= f->cap[r];
    if (n < W) {
      I->status = -11, I->failed_step = I->step;   /* CNP_ERANGE */
      return;
    }
    for (int64_t o = 0; o < outer; o++) {
      unsigned char *b = f->data + o * ns * inner;
      memmove(b, b + n * inner, (size_t)(W * inner));
      memmove(b + (n + W) * inner, b + W * inner, (size_t)(W * inner));
    }
  }
}

/* deposit / gather (docs/language.md, "Particles and grids"): the runtime's shapes
** (runtime/pgrid_shape.h): per axis u = pos * (n / length) (1 without a length), the base
** index and the S weights; a position with !(|u| < 2^52) is skipped. */
typedef struct PgStencil { int64_t base[3]; double W[3][3]; } PgStencil;

/* A ghost(W) axis: the generated code's window positions (templates/pgrid.tmpl,
** cnp_g_pg_wrap): u wrapped into [0, n) by fmod, + W, rounded to the plan's dtype; the
** shape then runs over the storage's n + 2W planes (the caller folds a deposit's ghosts). */
static double pg_window(double u, double n, double shift) {
  if (!(fabs(u) < 4503599627370496.0)) return u;
  double r = fmod(u, n);
  if (r < 0.0) {
    r += n;
    if (r >= n) r = 0.0;
  }
  return r + shift;
}

static bool pg_stencil(Interp *I, Stmt *s, const GridInfo *gi, int64_t p, PgStencil *st) {
  for (int a = 0; a < 3; a++) st->base[a] = 0, st->W[a][0] = 1.0;
  for (int a = 0; a < gi->ndim; a++) {
    FieldRT *pf = field_of(I, s->list.v[a].decl);
    int64_t n = setup_int(I, gi->axis[a].ext), gw = gi->axis[a].ghost;
    double scale = gi->axis[a].length ? (double)n / len_value(I, gi->axis[a].length) : 1.0;
    double u = as_double(load(pf, p)) * scale, i;
    if (gw) {
      u = pg_window(u, (double)n, (double)gw);
      if (pf->d->dtype == DT_F32) u = (double)(float)u;
      n += 2 * gw;
    }
    if (!(fabs(u) < 4503599627370496.0)) return false;
    double *W = st->W[a];
    if (s->pshape == 0) i = floor(u + 0.5), W[0] = 1.0;
    else if (s->pshape == 1) {
      i = floor(u);
      double f = u - i;
      W[0] = 1.0 - f, W[1] = f;
    } else {
      i = floor(u + 0.5);
      double d = u - i;
      W[0] = 0.5 * (0.5 - d) * (0.5 - d), W[1] = 0.75 - d * d, W[2] = 0.5 * (0.5 + d) * (0.5 + d);
      i -= 1.0;
    }
    int64_t b = (int64_t)i % n;
    st->base[a] = b < 0 ? b + n : b;
  }
  return true;
}

/* After a deposit onto ghost(W) axes, as cnp_g_pg_fold (templates/pgrid.tmpl) per ghost axis
** in order: the lower ghost planes [0, W) added into [n, n + W), the upper [n + W, n + 2W)
** into [W, 2W), each zeroed after. */
static void pg_fold(FieldRT *g, const GridInfo *gi, const int64_t dims[3], bool f32) {
  for (int a = 0; a < gi->ndim; a++) {
    int64_t W = gi->axis[a].ghost, ns = dims[a], n = ns - 2 * W, outer = 1, inner = 1;
    if (!W) continue;
    for (int r = 0; r < a; r++) outer *= dims[r];
    for (int r = a + 1; r < 3; r++) inner *= dims[r];
    for (int64_t o = 0; o < outer; o++)
      for (int64_t k = 0; k < 2 * W; k++) {
        int64_t from = k < W ? k : n + k, to = k < W ? n + k : k;
        for (int64_t i = 0; i < inner; i++) {
          int64_t jf = (o * ns + from) * inner + i, jt = (o * ns + to) * inner + i;
          Value vt = load(g, jt), vf = load(g, jf);
          store(g, jt, f32 ? (Value){.t = DT_F32, .f = vt.f + vf.f} : (Value){.t = DT_F64, .d = vt.d + vf.d});
          store(g, jf, f32 ? (Value){.t = DT_F32, .f = 0.0f} : (Value){.t = DT_F64, .d = 0.0});
          if (g->tol) g->tol[jt] += g->tol[jf], g->tol[jf] = 0.0;
          if (g->abssum && g->nterms[jf]) {   /* an open deposit's terms move with the sums */
            if (!g->nterms[jt]) g->abssum[jt] = 0.0;
            g->abssum[jt] += g->abssum[jf], g->nterms[jt] += g->nterms[jf];
            g->abssum[jf] = 0.0, g->nterms[jf] = 0;
          }
        }
      }
  }
}

/* deposit: each particle's S^ndim contributions w * W0 * W1 * W2 (C order of the points,
** rounded to the dtype), summed per base cell in particle order, then per grid point the
** cells' partials that reach it, offsets in C order (the SORTED mode: exact in f64). f32 and
** `atomic` are compared within a tolerance (their order or rounding is the runtime's). */
void exec_deposit(Interp *I, Stmt *s) {
  FieldRT *g = field_of(I, s->b.decl), *w = s->a.name ? field_of(I, s->a.decl) : NULL;
  FieldRT *p0 = field_of(I, s->list.v[0].decl);
  const GridInfo *gi = g->d->grid_of->grid;
  int nd = gi->ndim, S = s->pshape + 1;
  int64_t dims[3] = {1, 1, 1}, np = 1, ncell = 1;
  for (int a = 0; a < nd; a++)   /* the storage window (n + 2W along a ghost axis) */
    dims[a] = setup_int(I, gi->axis[a].ext) + 2 * gi->axis[a].ghost, ncell *= dims[a], np *= S;
  int64_t n = p0->dim ? I->dim_live[p0->dim->index] : p0->cap[p0->rank - 1];
  bool f32 = g->d->dtype == DT_F32, open = f32 || s->atomic;
  double *part = calloc((size_t)(ncell * np) + 1, sizeof(double));
  if (!part) { fail(I, s->loc, "out of memory in %s", "deposit"); return; }
  for (int64_t c = 0; c < ncell; c++) {   /* every point written afresh: its old bounds go */
    store(g, c, conv((Value){.t = DT_F64, .d = 0.0}, g->d->dtype));
    if (g->tol || g->abssum) set_bound(g, c, 0.0);
  }
  int S1 = nd > 1 ? S : 1, S2 = nd > 2 ? S : 1;
  bool pos_inexact = false;   /* an inexact position may reach other points: all unbounded */
  for (int64_t p = 0; p < n; p++) {
    PgStencil st;
    for (int a = 0; a < nd; a++)
      if (elem_tol(field_of(I, s->list.v[a].decl), p) > 0.0) pos_inexact = true;
    if (!pg_stencil(I, s, gi, p, &st)) continue;
    double wi = w ? as_double(load(w, p)) : 1.0, bw = w ? elem_tol(w, p) : 0.0;
    int64_t cell = (st.base[0] * dims[1] + st.base[1]) * dims[2] + st.base[2];
    int k = 0;
    for (int s0 = 0; s0 < S; s0++)
      for (int s1 = 0; s1 < S1; s1++)
        for (int s2 = 0; s2 < S2; s2++, k++) {
          double c = wi * st.W[0][s0] * st.W[1][s1] * st.W[2][s2];
          if (f32) c = (double)(float)c;
          part[cell * np + k] += c;
          if (open || bw > 0.0) {   /* an inexact weight: its terms round differently too */
            int64_t j = ((st.base[0] + s0) % dims[0] * dims[1] + (st.base[1] + s1) % dims[1]) * dims[2] +
                        (st.base[2] + s2) % dims[2];
            note_term(g, j, conv((Value){.t = DT_F64, .d = 0.0}, g->d->dtype), conv((Value){.t = DT_F64, .d = c}, g->d->dtype));
            if (bw > 0.0) {   /* plus |W0 W1 W2| times the weight's bound */
              double nt = (double)g->nterms[j], t = g->tol ? g->tol[j] : 0.0;
              set_bound(g, j, isfinite(bw) ? t + fabs(st.W[0][s0] * st.W[1][s1] * st.W[2][s2]) * bw * (1.0 + 0x1p-40) : INFINITY);
              g->nterms[j] = (int64_t)nt;
            }
          }
        }
  }
  for (int64_t j0 = 0; j0 < dims[0]; j0++)
    for (int64_t j1 = 0; j1 < dims[1]; j1++)
      for (int64_t j2 = 0; j2 < dims[2]; j2++) {
        double acc = 0.0;
        float accf = 0.0f;
        int k = 0;
        for (int s0 = 0; s0 < S; s0++)
          for (int s1 = 0; s1 < S1; s1++)
            for (int s2 = 0; s2 < S2; s2++, k++) {
              int64_t b0 = (j0 - s0 + 3 * dims[0]) % dims[0], b1 = (j1 - s1 + 3 * dims[1]) % dims[1];
              int64_t b2 = (j2 - s2 + 3 * dims[2]) % dims[2];
              double v = part[((b0 * dims[1] + b1) * dims[2] + b2) * np + k];
              if (f32) accf += (float)v;
              else acc += v;
            }
        int64_t j = (j0 * dims[1] + j1) * dims[2] + j2;
        store(g, j, f32 ? (Value){.t = DT_F32, .f = accf} : (Value){.t = DT_F64, .d = acc});
      }
  free(part);
  pg_fold(g, gi, dims, f32);
  if (pos_inexact) unbound_all(g);
}

/* OUT element e was just written by a gather with input bound bnd: its new bound (none when
** exact), the old scatter-add terms forgotten. The rounding of OUT's dtype may flip once. */
static void gather_bound(FieldRT *out, int64_t e, double bnd, double acc) {
  if (out->abssum) out->nterms[e] = 0;
  if (bnd == 0.0 && !out->tol) return;
  if (!out->tol) {
    int64_t total = 1;
    for (int r = 0; r < out->rank; r++) total *= out->cap[r];
    out->tol = ia(((size_t)total) * sizeof(double));
  }
  double ulp = out->d->dtype == DT_F32 ? 0x1p-23 : out->d->dtype == DT_F16 ? 0x1p-10 : 0x1p-52;
  out->tol[e] = bnd == 0.0 ? 0.0 : bnd * (1.0 + 0x1p-50) + ulp * fabs(acc);
}

/* gather: OUT[c, p] = the sum over the shape's points (C order) of W0 W1 * W2 * grid, in f64
** from 0, rounded once (a grid field with components: each component into OUT's). A grid
** point known only within a bound (an f32 or atomic deposit) passes sum |W| * bound on to
** OUT[c, p] (found/gather_inexact); exact inputs keep OUT exact. */
void exec_gather(Interp *I, Stmt *s) {
  FieldRT *g = field_of(I, s->a.decl), *out = field_of(I, s->b.decl);
  FieldRT *p0 = field_of(I, s->list.v[0].decl);
  const GridInfo *gi = g->d->grid_of->grid;
  int nd = gi->ndim, S = s->pshape + 1, S1 = nd > 1 ? S : 1, S2 = nd > 2 ? S : 1;
  int64_t dims[3] = {1, 1, 1}, ncell = 1;
  for (int a = 0; a < nd; a++)   /* the storage window, as deposit */
    dims[a] = setup_int(I, gi->axis[a].ext) + 2 * gi->axis[a].ghost, ncell *= dims[a];
  int64_t n = p0->dim ? I->dim_live[p0->dim->index] : p0->cap[p0->rank - 1];
  int64_t comps = 1;
  for (int r = 0; r < g->d->grid_ncomp; r++) comps *= g->cap[r];
  int64_t ocap = out->cap[out->rank - 1];
  for (int64_t c = 0; c < comps; c++)
    for (int64_t p = 0; p < n; p++) {
      PgStencil st;
      double acc = 0.0, bnd = 0.0;
      bool inexact = false;
      for (int a = 0; a < nd; a++)   /* an inexact position may read other points */
        if (elem_tol(field_of(I, s->list.v[a].decl), p) > 0.0) bnd = INFINITY;
      if (pg_stencil(I, s, gi, p, &st))
        for (int s0 = 0; s0 < S; s0++) {
          int64_t c0 = (st.base[0] + s0) % dims[0] * dims[1];
          for (int s1 = 0; s1 < S1; s1++) {
            int64_t c1 = (c0 + (st.base[1] + s1) % dims[1]) * dims[2];
            double w01 = st.W[0][s0] * st.W[1][s1];
            for (int s2 = 0; s2 < S2; s2++) {
              int64_t e = c * ncell + c1 + (st.base[2] + s2) % dims[2];
              acc += w01 * st.W[2][s2] * as_double(load(g, e));
              double te = elem_tol(g, e);
              bnd += isinf(te) ? INFINITY : fabs(w01 * st.W[2][s2]) * te;   /* (inf * a weight 0: */
              inexact |= te > 0.0;                                             /* not a NaN) */
            }
          }
        }
      if (inexact && !(bnd > 0.0)) bnd = 0x1p-1074;   /* an inexact point's bound times a small W: not 0 */
      store(out, c * ocap + p, conv((Value){.t = DT_F64, .d = acc}, out->d->dtype));
      gather_bound(out, c * ocap + p, bnd, acc);
    }
}

/* fft X -> Y / ifft Y -> X (docs/language.md, FFTs) by a direct DFT in long double (small
** grids only): Y[k] = sum_j x[j] e^{-2 pi i k.j/n} over the r2c half (k_last <= n_last / 2);
** ifft as FFTW's c2r: the complex DFT over the other axes, then the last axis's half with
** the real part of its first (and, n even, last) mode, times 1/N. Compared within a
** tolerance (each term noted: the transform's order is FFTW's), plus what the input's own
** tolerance can change in the output (an fft after an fft, a k-space map and an ifft: the
** spectrum's error is not in the terms): the sum of the input's bounds (for ifft each mode
** once or twice, as it counts, over N), the same for every output element. */
static void fft_dims(const FieldRT *r, int64_t n[3], int *nd, int64_t *comps, int64_t *N) {
  const GridInfo *gi = r->d->grid_of->grid;
  *nd = gi->ndim, *comps = 1, *N = 1;
  for (int c = 0; c < r->d->grid_ncomp; c++) *comps *= r->cap[c];
  for (int a = 0; a < 3; a++) n[a] = a < gi->ndim ? r->cap[r->d->grid_ncomp + a] : 1;
  for (int a = 0; a < gi->ndim; a++) *N *= n[a];
}

/* Output element e's bound: what its input's bounds allow (already in tol[e]) plus the
** transform's own error K eps (S + |y_e|), and at least the least subnormal (its zero's sign
** is FFTW's: found/fft_negzero). Why this is sound (found/ifft_bound asked for it): FFTW's
** codelets for these sizes are straight-line networks of additions and multiplications by
** constants; each output is the sum of its terms x_j w^{kj} (|w| = 1), each term reaching it
** along one path of at most L levels (L = the sum over axes of ceil(log2 n), the butterfly
** levels of a mixed-radix transform). A level rounds a complex multiplication by a rounded
** twiddle (|d| <= sqrt2 gamma_2 + eps, under 4 eps) and an addition (eps per part, 2 eps in
** |re| + |im|), so each term's relative error is at most (1 + 6 eps)^L - 1 < 8 L eps, and the
** output's error at most 8 L eps S, S the sum of the terms' magnitudes: sum |x_j| for fft;
** for ifft (c2r, then the generated 1/N) sum over the modes, each once or twice as it counts,
** of |Y_k| / N, plus the scaling's eps |y_e| (8 eps |y_e| more here). The standard form, the
** 2-norm bound c log2(N) eps ||x||_2 of the whole vector, is the same analysis summed over the
** outputs. K = 2 (T + 1) + 8 (L + 1), T the number of terms (N, or NK for ifft), keeps the old
** order-open term (2 (T + 1) eps S) as margin; the direct DFT here is in long double (its own
** error under T 2^-64 S). The old ifft bound noted each last-axis mode's |Re(y_m w)|, the
** magnitude after the other axes' sums had cancelled, not the terms': 2 ulp short. A
** non-finite input makes S infinite: such a transform is not compared (FFTW's butterflies
** skip multiplications the DFT makes, inf * 0). */
static void fft_bound(FieldRT *out, int64_t e, double K, double eps, double S) {
  Value v = conv(load(out, e), DT_C128);
  double y = (isfinite(creal(v.c128)) ? fabs(creal(v.c128)) : INFINITY) + (isfinite(cimag(v.c128)) ? fabs(cimag(v.c128)) : INFINITY);
  double t = out->tol[e] + K * eps * (S + y);
  out->tol[e] = t > 0.0 ? t : 0x1p-1074;
}

static long double complex twiddle(int64_t k, int64_t j, int64_t n, int sign) {
  long double t = 6.283185307179586476925286766559L * (long double)((k * j) % n) / (long double)n;
  return cosl(t) + sign * sinl(t) * (long double complex)_Complex_I;
}

void exec_fft(Interp *I, Stmt *s, bool inverse) {
  FieldRT *re = field_of(I, inverse ? s->b.decl : s->a.decl), *cx = field_of(I, inverse ? s->a.decl : s->b.decl);
  if (re->d->grid_of->grid->split) {   /* (its ghost planes would be transformed too) */
    fail(I, s->loc, "the interpreter does not run FFTs of split grid %s", re->d->grid_of->name);
    return;
  }
  int64_t n[3], comps, N;
  int nd;
  fft_dims(re, n, &nd, &comps, &N);
  int la = nd - 1;
  int64_t nh = n[la] / 2 + 1, k3[3] = {n[0], n[1], n[2]}, NK = N / n[la] * nh;
  k3[la] = nh;
  DType ct = cx->d->dtype, rt = re->d->dtype;
  FieldRT *in = inverse ? cx : re, *out = inverse ? re : cx;
  bool carried = in->tol || in->abssum;
  int64_t NO = inverse ? N : NK;
  if (!out->tol) out->tol = ia(((size_t)(comps * NO)) * sizeof(double));
  if (!out->tol) return;
  if (out->abssum)
    for (int64_t e = 0; e < comps * NO; e++) out->nterms[e] = 0;
  /* The transform's own error, per output element (see fft_bound): levels L, terms' sum. */
  int L = 0;
  for (int a = 0; a < nd; a++)
    for (int64_t p = 1; p < n[a]; p *= 2) L++;
  double eps = ct == DT_C64 ? 0x1p-24 : 0x1p-53, K = 2.0 * (double)(inverse ? NK : N) + 2.0 + 8.0 * (L + 1);
  for (int64_t c = 0; c < comps; c++) {
    double mag = 0.0;   /* sum of |terms|: the same for every output element (|twiddle| = 1) */
    if (!inverse)
      for (int64_t j = 0; j < N; j++) {
        Value x = load(re, c * N + j);
        mag += isfinite(as_double(x)) ? fabs(as_double(x)) : INFINITY;
      }
    else {
      for (int64_t k = 0; k < NK; k++) {
        int64_t m = k % nh;
        bool self = m == 0 || (n[la] % 2 == 0 && m == n[la] / 2);
        Value z = conv(load(cx, c * NK + k), DT_C128);
        double az = isfinite(creal(z.c128)) && isfinite(cimag(z.c128)) ? fabs(creal(z.c128)) + fabs(cimag(z.c128)) : INFINITY;
        mag += (self ? 1.0 : 2.0) * az;
      }
      mag /= (double)N;
    }
    for (int64_t e = 0; e < NO; e++) out->tol[c * NO + e] = 0.0;
    if (carried) {   /* the input's bounds, before the output is written */
      double t = 0;
      if (!inverse)
        for (int64_t j = 0; j < N; j++) t += elem_tol(in, c * N + j);
      else {
        for (int64_t k = 0; k < NK; k++) {
          int64_t m = k % nh;
          bool self = m == 0 || (n[la] % 2 == 0 && m == n[la] / 2);
          t += (self ? 1.0 : 2.0) * elem_tol(in, c * NK + k);
        }
        t /= (double)N;
      }
      for (int64_t e = 0; e < NO; e++) out->tol[c * NO + e] = t;
    }
    if (!inverse) {
      for (int64_t k = 0; k < NK; k++) {
        int64_t kk[3] = {k / (k3[1] * k3[2]), k / k3[2] % k3[1], k % k3[2]};
        long double complex acc = 0;
        for (int64_t j = 0; j < N; j++) {
          int64_t jj[3] = {j / (n[1] * n[2]), j / n[2] % n[1], j % n[2]};
          long double complex e = 1;
          for (int a = 0; a < nd; a++) e *= twiddle(kk[a], jj[a], n[a], -1);
          Value x = load(re, c * N + j);
          long double complex term = (long double)as_double(x) * e;
          acc += term;
        }
        Value v = {.t = DT_C128, .c128 = (double complex)acc};
        store(cx, c * NK + k, conv(v, ct));
        fft_bound(cx, c * NK + k, K, eps, mag);
      }
    } else {
      for (int64_t j = 0; j < N; j++) {
        int64_t jj[3] = {j / (n[1] * n[2]), j / n[2] % n[1], j % n[2]};
        long double acc = 0;
        for (int64_t m = 0; m < nh; m++) {
          long double complex y = 0;   /* the other axes' complex DFT at this last-axis mode */
          for (int64_t k = 0; k < NK / nh; k++) {
            int64_t kk[3] = {0, 0, 0};
            if (nd == 3) kk[0] = k / n[1], kk[1] = k % n[1];
            else if (nd == 2) kk[0] = k;
            kk[la] = m;
            long double complex e = 1;
            for (int a = 0; a < la; a++) e *= twiddle(kk[a], jj[a], n[a], +1);
            Value z = conv(load(cx, c * NK + (kk[0] * k3[1] + kk[1]) * k3[2] + kk[2]), DT_C128);
            y += (long double complex)z.c128 * e;
          }
          bool self = m == 0 || (n[la] % 2 == 0 && m == n[la] / 2);
          long double t = creall(y * twiddle(m, jj[la], n[la], +1));
          if (self) t = creall(y) * creall(twiddle(m, jj[la], n[la], +1));
          long double term = (self ? 1.0L : 2.0L) * t / (long double)N;
          acc += term;
        }
        store(re, c * N + j, conv((Value){.t = DT_F64, .d = (double)acc}, rt));
        fft_bound(re, c * N + j, K, eps, mag);
      }
    }
  }
}
