/*
** sema_fft.c -- spectral grids and FFTs (issue #19, docs/language.md "FFTs"): the declaration
** `grid K = rfft(G);` (its GridInfo: G's axes, the last one n/2 + 1), the step statements
** `fft REAL -> COMPLEX;` and `ifft COMPLEX -> REAL;`, and `wave(idx)` in a map over a
** spectral grid.
*/
#include "sema_internal.h"

#include <stdio.h>
#include <string.h>

/* An EX_INT node of value v at `at`, typed i64, constant. */
static Expr *fft_int(Sema *S, Loc at, int64_t v) {
  Expr *e = arena_alloc(&S->cc->arena, sizeof *e);
  e->kind = EX_INT;
  e->ival = v;
  e->loc = at;
  e->depth = 1;
  e->type = DT_I64;
  e->flags = EXF_CONST | EXF_SETUP;
  return e;
}

static Expr *fft_binary(Sema *S, Op op, Expr *a, Expr *b, Loc at) {
  Expr *e = arena_alloc(&S->cc->arena, sizeof *e);
  e->kind = EX_BINARY;
  e->op = op;
  e->nargs = 2;
  e->args = arena_alloc(&S->cc->arena, sizeof *e->args * 2);
  e->args[0] = a;
  e->args[1] = b;
  e->loc = at;
  e->depth = (a->depth > b->depth ? a->depth : b->depth) + 1;
  e->type = DT_I64;
  e->flags = a->flags & b->flags & (EXF_CONST | EXF_SETUP);
  return e;
}

/* The extent n / 2 + 1 of the halved last axis (folded when n is a constant). */
static Expr *half_extent(Sema *S, Expr *n, Loc at) {
  bool f;
  int64_t v;
  double fv;
  if ((n->flags & EXF_CONST) && fold(S, n, &f, &v, &fv) && !f) return fft_int(S, at, v / 2 + 1);
  return fft_binary(S, OP_ADD, fft_binary(S, OP_DIV, n, fft_int(S, at, 2), at), fft_int(S, at, 1), at);
}

/* "f64[2, G]": a field's type as written (a grid field by its grid's name). */
static const char *type_text(Sema *S, const Decl *f) {
  if (!f->grid_of) return sema_type_text(S->cc, f);
  char buf[256] = "", e[96];
  for (int i = 0; i < f->grid_ncomp; i++) {
    extent_text(e, sizeof e, f->shape.ext[i]);
    snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s, ", e);
  }
  return arena_printf(&S->cc->arena, "%s[%s%s]", dtype_name(f->dtype), buf, f->grid_of->name);
}

static const char *bound_text(Sema *S, const GridAxis *ax) {
  if (ax->bound == GB_GHOST) return arena_printf(&S->cc->arena, "ghost(%d)", ax->ghost);
  return grid_bound_name(ax->bound);
}

void check_rfft_grid(Sema *S, Decl *d) {
  Decl *g = resolve(S, &d->target, K(DECL_GRID));
  d->grid->ndim = 0;   /* (a field of it after an error: reported, no shape) */
  if (!g || !g->grid || g->grid->ndim < 1) return;
  if (g->target.name) {
    diag_error(S->cc, d->target.loc, "rfft of '%s', itself a spectral grid: rfft takes a grid of extents",
               g->name);
    return;
  }
  const GridInfo *gi = g->grid;
  if (gi->split && gi->ndim < 2) {
    diag_error(S->cc, d->target.loc, "rfft of the split 1D grid '%s': the distributed FFT takes 2D and 3D grids",
               g->name);
    diag_note(S->cc, gi->split_loc, "'%s' is split here", g->name);
    return;
  }
  for (int a = gi->split ? 1 : 0; a < gi->ndim; a++)   /* (a split axis 0 is ghost(W), periodic globally) */
    if (gi->axis[a].bound != GB_PERIODIC) {
      diag_error(S->cc, d->target.loc, "rfft needs a periodic grid, but axis %d of '%s' is %s", a, g->name,
                 bound_text(S, &gi->axis[a]));
      diag_note(S->cc, gi->axis[a].bound_loc, "declared %s here", bound_text(S, &gi->axis[a]));
      return;
    }
  *d->grid = *gi;
  d->grid->clauses = NULL;
  d->grid->n_clauses = 0;
  for (int a = 0; a < gi->ndim; a++)   /* the box of G (by default its extents): wave() */
    if (!d->grid->axis[a].length) d->grid->axis[a].length = gi->axis[a].ext;
  GridAxis *last = &d->grid->axis[gi->ndim - 1];
  last->ext = half_extent(S, gi->axis[gi->ndim - 1].ext, d->value->loc);
  if (gi->split) {   /* the spectral block of cnp_fft_dist: all of axis 0, axis 1 split; no ghosts */
    d->grid->axis[0].bound = GB_PERIODIC;
    d->grid->axis[0].ghost = 0;
    d->grid->split_axis = 1;
  }
}

/* The real field of grid G for fft/ifft (a grid field of a grid of extents, f32 or f64). */
static Decl *real_side(Sema *S, const char *w, Ref *r) {
  Decl *f = field_ref(S, r);
  if (!f) return NULL;
  if (!f->grid_of) {
    diag_error(S->cc, r->loc, "%s needs a field of a grid, but '%s' is %s", w, f->name, type_text(S, f));
    return NULL;
  }
  if (f->grid_of->target.name) {
    diag_error(S->cc, r->loc, "%s: '%s' is a field of the spectral grid '%s'; the real side is a field of "
               "'%s'", w, f->name, f->grid_of->name, f->grid_of->target.name);
    return NULL;
  }
  if (f->dtype != DT_F64 && f->dtype != DT_F32) {
    diag_error(S->cc, r->loc, "%s: the real field is f64 or f32, but '%s' is %s", w, f->name,
               type_text(S, f));
    return NULL;
  }
  if (f->grid_of->grid->split && f->grid_ncomp) {
    diag_error(S->cc, r->loc, "%s of a split grid takes fields without components, but '%s' is %s", w, f->name,
               type_text(S, f));
    return NULL;
  }
  if (f->grid_ncomp > 1) {
    diag_error(S->cc, r->loc, "%s carries one component axis at most, but '%s' (%s) has %d", w, f->name,
               type_text(S, f), f->grid_ncomp);
    return NULL;
  }
  return f;
}

/* The spectral field paired with real field x (NULL after an error). */
static Decl *complex_side(Sema *S, const char *w, Ref *r, Decl *x) {
  Decl *f = field_ref(S, r);
  if (!f || !x) return NULL;
  Decl *g = x->grid_of;
  DType want = x->dtype == DT_F64 ? DT_C128 : DT_C64;
  if (!f->grid_of || !f->grid_of->target.name || f->grid_of->target.decl != g) {
    diag_error(S->cc, r->loc, "%s of '%s' (a field of grid '%s'): '%s' must be a field of a grid rfft(%s), "
               "but it is %s", w, x->name, g->name, f->name, g->name, type_text(S, f));
    return NULL;
  }
  if (f->dtype != want) {
    diag_error(S->cc, r->loc, "%s of '%s' (%s) pairs with %s, but '%s' is %s", w, x->name,
               dtype_name(x->dtype), dtype_name(want), f->name, dtype_name(f->dtype));
    return NULL;
  }
  bool same = f->grid_ncomp == x->grid_ncomp;
  for (int i = 0; same && i < f->grid_ncomp; i++) same = same_extent(f->shape.ext[i], x->shape.ext[i]);
  if (!same) {
    diag_error(S->cc, r->loc, "%s of '%s' (%s) into '%s' (%s): the component counts differ", w, x->name,
               type_text(S, x), f->name, type_text(S, f));
    return NULL;
  }
  return f;
}

/* fft REAL -> COMPLEX;  ifft COMPLEX -> REAL; */
void check_fft(Sema *S, Stmt *s) {
  bool inv = s->kind == ST_IFFT;
  const char *w = inv ? "ifft" : "fft";
  if (s->a.name && s->a.name == s->b.name) {
    diag_error(S->cc, s->b.loc, "%s does not run in place: '%s' is its input and its output (a real and a "
               "complex field of the grids G and rfft(G))", w, s->a.name);
    return;
  }
  Ref *rr = inv ? &s->b : &s->a, *rc = inv ? &s->a : &s->b;
  Decl *x = real_side(S, w, rr);
  Decl *c = x ? complex_side(S, w, rc, x) : field_ref(S, rc);
  if (!x || !c) return;
  hz_op(S, HZ_READ, s->a.decl, &s->a.loc);
  hz_op(S, HZ_WRITE, s->b.decl, &s->b.loc);
}

/* wave(idx) in a map over a spectral grid: the angular wave number of that index along its
** axis (f64). Returns false for a call of another name. */
bool fft_check_wave(Sema *S, Expr *e) {
  if (!e->ref.name || strcmp(e->ref.name, "wave")) return false;
  e->type = DT_VOID;
  const Stmt *m = S->map;
  const Decl *g = m && m->gndim ? m->over.decl : NULL;
  if (!g || !g->target.name) {
    if (g)
      diag_error(S->cc, e->ref.loc, "'wave' is a wave number of a spectral grid: it is only in a map over a "
                 "grid rfft(G), and this map is over '%s'", g->name);
    else
      diag_error(S->cc, e->ref.loc, "'wave' is a wave number of a spectral grid: it is only in a map over a "
                 "grid rfft(G)");
    return true;
  }
  int64_t off = 0;
  if (e->nargs != 1 || grid_index_axis(m, e->args[0], &off) < 0 || off) {
    char names[160] = "";
    for (int i = 0; i < m->gndim; i++)
      snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", m->gidx[i]->name);
    diag_error(S->cc, e->nargs == 1 ? e->args[0]->loc : e->loc,
               "'wave' takes one index of the map (%s), as it is: wave(%s)", names, m->gidx[m->gndim - 1]->name);
    return true;
  }
  e->type = DT_F64;
  return true;
}
