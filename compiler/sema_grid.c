/*
** sema_grid.c -- grids (issue #19, docs/language.md "Grids"): the `grid` declaration (axes,
** boundaries, lengths: cnpc.h GridInfo), fields of a grid (`f64[G]`, `f64[c, G]`: their
** storage shape, ghost planes included).
*/
#include "sema_internal.h"

#include <string.h>

const char *grid_bound_name(GridBound b) {
  switch (b) {
  case GB_PERIODIC: return "periodic";
  case GB_CLAMP: return "clamp";
  case GB_GHOST: return "ghost";
  }
  return "?";
}

static bool word_is(const Ref *r, const char *w) { return r->name && !strcmp(r->name, w); }

/* One boundary word: periodic, clamp, ghost(W). */
static bool boundary_word(Sema *S, Expr *e, GridAxis *ax) {
  static const char *const words[] = {"periodic", "clamp", "ghost"};
  const Ref *r = &e->ref;
  if (e->kind == EX_NAME && word_is(r, "periodic")) ax->bound = GB_PERIODIC;
  else if (e->kind == EX_NAME && word_is(r, "clamp")) ax->bound = GB_CLAMP;
  else if (e->kind == EX_CALL && word_is(r, "ghost")) {
    bool f;
    int64_t v;
    double fv;
    if (e->nargs != 1) {
      diag_error(S->cc, e->loc, "'ghost' takes one width: ghost(W)");
      return false;
    }
    check_expr(S, e->args[0]);
    if (!(e->args[0]->flags & EXF_CONST) || !fold(S, e->args[0], &f, &v, &fv) || f || v < 1 || v > 16) {
      diag_error(S->cc, e->args[0]->loc, "a ghost width is an integer constant from 1 to 16");
      return false;
    }
    ax->bound = GB_GHOST;
    ax->ghost = (int)v;
  } else if (e->kind == EX_NAME && word_is(r, "ghost")) {
    diag_error(S->cc, e->loc, "'ghost' needs its width: ghost(W)");
    return false;
  } else {
    const char *best = NULL;
    int best_d = 3;
    if (r->name)
      for (int i = 0; i < 3; i++) {
        int d = diag_edit_distance(r->name, words[i], 2);
        if (d < best_d) best_d = d, best = words[i];
      }
    if (best)
      diag_error(S->cc, e->loc, "unknown boundary '%s'; did you mean '%s'?", r->name ? r->name : "?", best);
    else
      diag_error(S->cc, e->loc, "unknown boundary%s%s%s: a boundary is periodic, clamp or ghost(W)",
                 r->name ? " '" : "", r->name ? r->name : "", r->name ? "'" : "");
    return false;
  }
  ax->bound_loc = e->loc;
  return true;
}

void check_grid(Sema *S, Decl *d) {
  GridInfo *g = d->grid;
  int n = d->shape.rank;
  if (n < 1 || n > 3) {
    diag_error(S->cc, n > 3 ? d->shape.ext[3]->loc : d->loc, "a grid has 1, 2 or 3 axes, not %d", n);
    if (n > 3) n = 3;
  }
  g->ndim = n;
  for (int a = 0; a < n; a++) {
    GridAxis *ax = &g->axis[a];
    ax->ext = d->shape.ext[a];
    ax->bound = GB_PERIODIC;
    ax->bound_loc = d->loc;
    if (check_extent_expr(S, ax->ext, "a grid extent")) check_const_positive(S, ax->ext, "a grid extent");
  }
  int seen_b = 0, seen_l = 0;
  for (int c = 0; c < g->n_clauses; c++) {
    Expr *cl = g->clauses[c];
    if (word_is(&cl->ref, "boundary")) {
      if (seen_b++ || seen_l) {
        diag_error(S->cc, cl->ref.loc, seen_l ? "'boundary(..)' comes before 'length(..)'"
                                              : "a second 'boundary(..)'");
        continue;
      }
      if (cl->nargs != 1 && cl->nargs != n) {
        diag_error(S->cc, cl->loc, "'boundary' takes one word (for every axis) or %d (one per axis), not %d",
                   n, cl->nargs);
        continue;
      }
      for (int a = 0; a < n; a++) {
        GridAxis tmp = {0};
        if (!boundary_word(S, cl->args[cl->nargs == 1 ? 0 : a], &tmp)) {
          if (cl->nargs == 1) break;
          continue;
        }
        g->axis[a].bound = tmp.bound;
        g->axis[a].ghost = tmp.ghost;
        g->axis[a].bound_loc = tmp.bound_loc;
      }
    } else if (word_is(&cl->ref, "length")) {
      if (seen_l++) {
        diag_error(S->cc, cl->ref.loc, "a second 'length(..)'");
        continue;
      }
      if (cl->nargs != n) {
        diag_error(S->cc, cl->loc, "'length' takes one length per axis (%d), not %d", n, cl->nargs);
        continue;
      }
      for (int a = 0; a < n; a++) {
        Expr *L = cl->args[a];
        DType t = check_expr(S, L);
        if (t == DT_VOID) continue;
        if (!dtype_is_int(t) && !dtype_is_float(t)) {
          diag_error(S->cc, L->loc, "a grid length is a real number, not '%s'", dtype_name(t));
          continue;
        }
        if (!(L->flags & EXF_SETUP)) {
          diag_error(S->cc, L->loc, "a grid length must be known at setup (constants and setup params)");
          continue;
        }
        g->axis[a].length = L;
      }
    } else {
      const char *w = cl->ref.name ? cl->ref.name : "?";
      int db = diag_edit_distance(w, "boundary", 3), dl = diag_edit_distance(w, "length", 2);
      if (db <= 3 || dl <= 2)
        diag_error(S->cc, cl->ref.loc, "unknown grid clause '%s'; did you mean '%s'?", w,
                   db <= 3 ? "boundary" : "length");
      else
        diag_error(S->cc, cl->ref.loc, "unknown grid clause '%s': a grid takes boundary(..) and length(..)", w);
    }
  }
}

/* An EX_INT node at `at` (for the storage extents of ghost axes). */
static Expr *int_node(Sema *S, Loc at, int64_t v) {
  Expr *e = arena_alloc(&S->cc->arena, sizeof *e);
  e->kind = EX_INT;
  e->ival = v;
  e->loc = at;
  e->depth = 1;
  return e;
}

bool grid_field_shape(Sema *S, Decl *f) {
  if (f->shape.rank < 1) return false;
  Expr *last = f->shape.ext[f->shape.rank - 1];
  if (last->kind != EX_NAME) return false;
  SymX *s = sym_find(S, last->ref.name);
  if (!s || s->decl->kind != DECL_GRID) return false;
  f->written = f->shape;
  Decl *g = resolve_found(S, &last->ref, s, K(DECL_GRID));
  int nc = f->shape.rank - 1;
  for (int i = 0; i < nc; i++)
    if (check_extent_expr(S, f->shape.ext[i], "a component extent"))
      check_const_positive(S, f->shape.ext[i], "a component extent");
  if (!g || g->grid->ndim < 1) {   /* (reported) */
    f->shape.rank = nc > 0 ? nc : 1;
    if (nc == 0) {
      f->shape.ext = arena_alloc(&S->cc->arena, sizeof *f->shape.ext);
      f->shape.ext[0] = int_node(S, last->loc, 1);
      f->shape.ext[0]->type = DT_I64;
      f->shape.ext[0]->flags = EXF_CONST | EXF_SETUP;
    }
    return true;
  }
  last->type = DT_I64;
  GridInfo *gi = g->grid;
  Expr **ext = arena_alloc(&S->cc->arena, sizeof *ext * (size_t)(nc + gi->ndim));
  for (int i = 0; i < nc; i++) ext[i] = f->shape.ext[i];
  for (int a = 0; a < gi->ndim; a++) {
    Expr *e = gi->axis[a].ext;
    if (gi->axis[a].ghost) {
      Expr *b = arena_alloc(&S->cc->arena, sizeof *b);
      b->kind = EX_BINARY;
      b->op = OP_ADD;
      b->nargs = 2;
      b->args = arena_alloc(&S->cc->arena, sizeof *b->args * 2);
      b->args[0] = e;
      b->args[1] = int_node(S, e->loc, 2 * (int64_t)gi->axis[a].ghost);
      b->loc = e->loc;
      b->depth = e->depth + 1;
      b->type = DT_I64;
      b->args[1]->type = DT_I64;
      b->args[1]->flags = EXF_CONST | EXF_SETUP;
      b->flags = (e->flags & (EXF_CONST | EXF_SETUP));
      e = b;
    }
    ext[nc + a] = e;
  }
  f->shape.ext = ext;
  f->shape.rank = nc + gi->ndim;
  f->grid_of = g;
  f->grid_ncomp = nc;
  return true;
}
