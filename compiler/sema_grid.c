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
      v = 16;   /* still a ghost axis (the widest): no follow-on errors at its halo or reads */
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

/* The clause `split` (a bare word: an EX_NAME; true when cl is it or another bare word). */
static bool split_clause(Sema *S, GridInfo *g, Expr *cl, int *seen_s) {
  if (word_is(&cl->ref, "split")) {
    if (cl->kind != EX_NAME)
      diag_error(S->cc, cl->ref.loc, "'split' takes no arguments: it splits axis 0 over the ranks");
    else if ((*seen_s)++)
      diag_error(S->cc, cl->ref.loc, "a second 'split'");
    else
      g->split = true, g->split_axis = 0, g->split_loc = cl->loc;
    return true;
  }
  if (cl->kind != EX_NAME) return false;
  const char *w = cl->ref.name ? cl->ref.name : "?";
  if (diag_edit_distance(w, "split", 2) <= 2)
    diag_error(S->cc, cl->ref.loc, "unknown grid clause '%s'; did you mean 'split'?", w);
  else
    diag_error(S->cc, cl->ref.loc, "unknown grid clause '%s': a grid takes boundary(..), length(..) and split", w);
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
  int seen_b = 0, seen_l = 0, seen_s = 0;
  for (int c = 0; c < g->n_clauses; c++) {
    Expr *cl = g->clauses[c];
    if (split_clause(S, g, cl, &seen_s)) continue;
    if (seen_s == 1) {   /* (once; the clause still counts) */
      diag_error(S->cc, cl->ref.loc, "'split' is the last clause of a grid");
      seen_s++;
    }
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
  if (g->split && n >= 1 && g->axis[0].bound != GB_GHOST) {
    diag_error(S->cc, g->split_loc, "a split grid's axis 0 is ghost(W): its ghost planes hold the neighbour "
               "ranks' planes, but axis 0 of '%s' is %s", d->name, grid_bound_name(g->axis[0].bound));
    diag_note(S->cc, g->axis[0].bound_loc, "declare it boundary(ghost(1), ...)");
    g->split = false;
  }
}

/* A grid's split axis's local count: the EX_NAME of the grid (setup: p->gsn_NAME). */
static Expr *split_count(Sema *S, Decl *g, Loc at) {
  Expr *e = arena_alloc(&S->cc->arena, sizeof *e);
  e->kind = EX_NAME;
  e->ref.name = g->name;
  e->ref.decl = g;
  e->ref.loc = at;
  e->loc = at;
  e->depth = 1;
  e->type = DT_I64;
  e->flags = EXF_SETUP;
  return e;
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
    if (gi->split && gi->split_axis == a) e = split_count(S, g, e->loc);
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

/* ------------------------------------------------------------------ grid maps */

int grid_index_axis(const Stmt *map, const Expr *e, int64_t *off) {
  *off = 0;
  if (!map || !map->gndim || !e) return -1;
  const Expr *name = e;
  if (e->kind == EX_BINARY && (e->op == OP_ADD || e->op == OP_SUB) && e->args[1]->kind == EX_INT &&
      e->args[0]->kind == EX_NAME) {
    name = e->args[0];
    *off = e->op == OP_ADD ? e->args[1]->ival : -e->args[1]->ival;
  } else if (e->kind == EX_BINARY && e->op == OP_ADD && e->args[0]->kind == EX_INT &&
             e->args[1]->kind == EX_NAME) {   /* 1 + i */
    name = e->args[1];
    *off = e->args[0]->ival;
  } else if (e->kind != EX_NAME) {
    return -1;
  }
  for (int a = 0; a < map->gndim; a++)
    if (name->ref.local == map->gidx[a]) return a;
  *off = 0;
  return -1;
}

int grid_coord_axis(const Stmt *map, const Expr *e) {
  int64_t off;
  if (!map || e->kind != EX_CALL || e->builtin != BI_NONE || !e->ref.name || strcmp(e->ref.name, "coord") ||
      e->nargs != 1)
    return -1;
  int a = grid_index_axis(map, e->args[0], &off);
  return off == 0 ? a : -1;
}

/* Appends an access of the grid map being checked (S->gst or S->gwr). */
static void gacc_add(Sema *S, struct GAcc **v, int *n, int *cap, Decl *f, Loc loc) {
  *v = arena_grow(&S->cc->arena, *v, *n, cap, 16, sizeof **v);
  (*v)[(*n)++] = (struct GAcc){f, loc};
}

static const char *idx_list(Sema *S, const Stmt *m) {
  char buf[128] = "";
  for (int a = 0; a < m->gndim; a++) {
    if (a) strcat(buf, ", ");
    strncat(buf, m->gidx[a]->name, 30);
  }
  return arena_strndup(&S->cc->arena, buf, strlen(buf));
}

/* F[..] of a field of a split grid outside a map over that grid: an error (each rank holds
** only its planes; deposit / gather move values between particles and a split grid). */
DType grid_split_index(Sema *S, Expr *e, Decl *f) {
  Decl *g = f->grid_of;
  e->type = f->dtype;
  diag_error(S->cc, e->loc, "'%s' is a field of the split grid '%s': each rank holds only its own planes, so only "
             "a map over '%s' indexes it (from particles: use deposit / gather)", f->name, g->name, g->name);
  diag_note(S->cc, g->grid->split_loc, "'%s' is split here", g->name);
  return e->type;
}

/* F[..] in a grid map (check_index's part for grid maps): the map's point plus constant
** offsets on a field of its grid; an explicit gather or scatter-add on any other field. */
DType grid_check_index(Sema *S, Expr *e, Decl *f, int write) {
  Stmt *m = S->map;
  Decl *g = m->over.decl;
  e->type = f->dtype;
  if ((f->grid_of != g || !g) && f->grid_of && f->grid_of->grid->split) return grid_split_index(S, e, f);
  if (f->grid_of != g || !g) {
    if (write == 1 || (write == 2 && f->grid_of)) {
      if (f->grid_of)
        diag_error(S->cc, e->loc, "a map over grid '%s' writes only fields of '%s', but '%s' is a field of grid '%s'",
                   g ? g->name : "?", g ? g->name : "?", f->name, f->grid_of->name);
      else
        diag_error(S->cc, e->loc, "a map over grid '%s' stores only into fields of '%s' (use '+=' for a "
                   "scatter-add into '%s')", g ? g->name : "?", g ? g->name : "?", f->name);
      diag_note(S->cc, f->loc, "'%s' is declared here", f->name);
      return e->type;
    }
    if (e->nargs != f->shape.rank) {
      diag_error(S->cc, e->loc, "field '%s' has %d dimension%s but is indexed with %d", f->name, f->shape.rank,
                 f->shape.rank == 1 ? "" : "s", e->nargs);
      diag_note(S->cc, f->loc, "'%s' is declared here", f->name);
      return e->type;
    }
    e->flags |= EXF_GATHER;
    if (S->step) hz_op(S, write ? HZ_WRITE : HZ_READ, f, &e->loc);
    map_access(S, f, write ? MA_SCATTER : MA_GATHER, e->loc);
    if (write == 2) hz_op(S, HZ_READ, f, &e->loc);
    return e->type;
  }
  const GridInfo *gi = g->grid;
  int nc = f->grid_ncomp;
  if (e->nargs != nc + gi->ndim) {
    diag_error(S->cc, e->loc, "field '%s' of grid '%s' is indexed with %s[%s%s] in this map, not with %d "
               "index%s", f->name, g->name, f->name, nc ? "c, " : "", idx_list(S, m), e->nargs,
               e->nargs == 1 ? "" : "es");
    diag_note(S->cc, f->loc, "'%s' is declared here", f->name);
    return e->type;
  }
  for (int c = 0; c < nc; c++) {
    Expr *x = e->args[c];
    if (x->type != DT_VOID && !(x->flags & EXF_SETUP))
      diag_error(S->cc, x->loc, "a component index of a grid field is known at setup (a constant or a setup param)");
    bool xf, ef;
    int64_t xv, ev;
    double xd, ed;
    Expr *ext = f->shape.ext[c];
    if ((x->flags & EXF_CONST) && dtype_is_int(x->type) && fold(S, x, &xf, &xv, &xd) && !xf &&
        (ext->flags & EXF_CONST) && fold(S, ext, &ef, &ev, &ed) && !ef && (xv < 0 || xv >= ev))
      diag_error(S->cc, x->loc, "component index %lld is out of range for extent %lld of '%s'",
                 (long long)xv, (long long)ev, f->name);
  }
  bool stencil = false;
  for (int a = 0; a < gi->ndim; a++) {
    Expr *x = e->args[nc + a];
    if (x->type == DT_VOID) continue;
    int64_t off;
    int ax = grid_index_axis(m, x, &off);
    if (ax != a) {
      diag_error(S->cc, x->loc, "index %d of '%s' must be '%s' (the map's index of axis %d)%s",
                 nc + a, f->name, m->gidx[a]->name, a,
                 write ? "" : ", with a constant offset for a stencil read ('+ 1', '- 2')");
      if (ax >= 0) diag_note(S->cc, m->gidx[a]->loc, "the indices name the grid's axes in order, outermost first: (%s)",
                             idx_list(S, m));
      continue;
    }
    if (!off) continue;
    if (write) {
      diag_error(S->cc, x->loc, "a grid map writes only at its own point: '%s[%s%s]', not at an offset",
                 f->name, nc ? "c, " : "", idx_list(S, m));
      continue;
    }
    const GridAxis *A = &gi->axis[a];
    if (gi->split && gi->split_axis == a && A->bound != GB_GHOST) {
      diag_error(S->cc, x->loc, "a stencil read along axis %d of '%s', which is split over the ranks without ghost "
                 "planes: read the map's own point", a, g->name);
      continue;
    }
    if (A->bound == GB_GHOST && (off > A->ghost || off < -A->ghost)) {
      diag_error(S->cc, x->loc, "offset %lld is beyond the ghost width %d of axis %d of grid '%s'",
                 (long long)off, A->ghost, a, g->name);
      diag_note(S->cc, A->bound_loc, "the axis is declared with ghost(%d) here", A->ghost);
      continue;
    }
    stencil = true;
  }
  bool seen = false;   /* (a value may be checked twice) */
  for (int i = 0; i < S->n_gst; i++) seen = seen || !memcmp(&S->gst[i].loc, &e->loc, sizeof e->loc);
  if (stencil) m->grid_reads_offset = true;
  if (stencil && !seen) gacc_add(S, &S->gst, &S->n_gst, &S->cap_gst, f, e->loc);
  if (write) gacc_add(S, &S->gwr, &S->n_gwr, &S->cap_gwr, f, e->loc);
  if (S->step) hz_op(S, write ? HZ_WRITE : HZ_READ, f, &e->loc);
  map_access(S, f, write == 0 ? MA_READ : write == 1 ? MA_STORE : MA_ADD, e->loc);
  if (write == 2) hz_op(S, HZ_READ, f, &e->loc);
  return e->type;
}

bool grid_check_call(Sema *S, Expr *e) {
  if (!e->ref.name || strcmp(e->ref.name, "coord")) return false;
  e->type = DT_F64;
  if (!S->map || !S->map->gndim) {
    diag_error(S->cc, e->ref.loc, "'coord' is the position of a grid map's index: it is only in a map over a grid");
    return true;
  }
  const Decl *g = S->map->over.decl;
  if (g && g->target.name) {   /* i * L / n would mix G's length with K's halved extent */
    diag_error(S->cc, e->ref.loc, "'coord' is a position on a grid of points, but '%s' is a spectral grid: use wave(%s), "
               "the wave number of the index", g->name, e->nargs == 1 && e->args[0]->kind == EX_NAME && e->args[0]->ref.name
               ? e->args[0]->ref.name : S->map->index->name);
    return true;
  }
  int64_t off;
  if (e->nargs != 1 || grid_index_axis(S->map, e->args[0], &off) < 0 || off) {
    diag_error(S->cc, e->loc, "'coord' takes one index of the map: coord(%s)", S->map->index->name);
    e->type = DT_VOID;
  }
  return true;
}

void check_grid_map(Sema *S, Stmt *s) {
  Decl *g = resolve(S, &s->over, K(DECL_GRID));
  if (g && g->grid->ndim != s->gndim) {
    diag_error(S->cc, s->loc, "grid '%s' has %d ax%s: its map takes %d ind%s, not %d", g->name, g->grid->ndim,
               g->grid->ndim == 1 ? "is" : "es", g->grid->ndim, g->grid->ndim == 1 ? "ex" : "ices", s->gndim);
    diag_note(S->cc, g->loc, "'%s' is declared here", g->name);
    g = NULL;
  }
  if (!g) {
    s->over.decl = NULL;
    return;
  }
  S->map = s;
  S->n_macc = 0;
  S->n_red = 0;
  S->n_gst = S->n_gwr = 0;
  int mark = S->n_scope;
  for (int a = 0; a < s->gndim; a++) {
    for (int b = 0; b < a; b++)
      if (s->gidx[b]->name == s->gidx[a]->name)
        diag_error(S->cc, s->gidx[a]->loc, "index '%s' is named twice", s->gidx[a]->name);
    push_local(S, s->gidx[a]);
  }
  check_map_body(S, s->body);
  for (int i = 0; i < S->n_gst; i++)
    for (int k = 0; k < S->n_gwr; k++)
      if (S->gst[i].f == S->gwr[k].f) {
        Decl *f = S->gst[i].f;
        diag_error(S->cc, S->gst[i].loc, "stencil read of '%s', which this map writes: the result would depend "
                   "on the order of points (write another field and 'swap' them)", f->name);
        diag_note(S->cc, S->gwr[k].loc, "'%s' is written here", f->name);
        k = S->n_gwr;
      }
  S->n_scope = mark;
  S->map = NULL;
}

/* ------------------------------------------------------------------ halo F; */

void check_halo(Sema *S, Stmt *s) {
  Decl *f = field_ref(S, &s->a);
  if (!f) return;
  bool ghost = false;
  for (int a = 0; f->grid_of && a < f->grid_of->grid->ndim; a++) ghost = ghost || f->grid_of->grid->axis[a].ghost;
  if (!ghost) {
    if (f->grid_of)
      diag_error(S->cc, s->a.loc, "'halo' fills ghost planes, but no axis of grid '%s' has them (declare one "
                 "with boundary(ghost(W)))", f->grid_of->name);
    else
      diag_error(S->cc, s->a.loc, "'halo' fills the ghost planes of a grid field, but '%s' is not a field of a grid",
                 f->name);
    diag_note(S->cc, f->grid_of ? f->grid_of->loc : f->loc, "'%s' is declared here",
              f->grid_of ? f->grid_of->name : f->name);
    return;
  }
  hz_op(S, HZ_READ, f, &s->a.loc);
  hz_op(S, HZ_WRITE, f, &s->a.loc);
}

/* ------------------------------------------------------------------ allreduce S, ...; */

void check_allreduce(Sema *S, Stmt *s) {
  for (int i = 0; i < s->list.n; i++) {
    Ref *r = &s->list.v[i];
    Decl *f = resolve(S, r, K(DECL_FIELD));
    if (!f) continue;
    for (int k = 0; k < i; k++)
      if (s->list.v[k].name == r->name) diag_error(S->cc, r->loc, "'%s' is listed twice", r->name);
    if (!f->scalar) {
      diag_error(S->cc, r->loc, "allreduce combines scalars reduced in maps over the ranks, but '%s' is a field",
                 f->name);
      diag_note(S->cc, f->loc, "'%s' is declared here", f->name);
      r->decl = NULL;
      continue;
    }
    hz_op(S, HZ_READ, f, &r->loc);
    hz_op(S, HZ_WRITE, f, &r->loc);
  }
}

/* The reductions of the program, per scalar: its first operator and where; a second one. */
typedef struct RedSeen { Decl *f; int op, other_op; Loc loc; Loc other; bool mixed; } RedSeen;
typedef struct RedTab { RedSeen v[256]; int n; } RedTab;

static void red_walk(RedTab *t, Stmt *s, Stmt **ar, int *n_ar) {
  for (; s; s = s->next) {
    if (s->kind == ST_REDUCE && s->target && s->target->ref.decl) {
      Decl *f = s->target->ref.decl;
      int i = 0;
      while (i < t->n && t->v[i].f != f) i++;
      if (i == t->n && t->n < 256) {
        t->v[t->n++] = (RedSeen){f, s->red, s->red, s->loc, s->loc, false};
      } else if (i < t->n && t->v[i].op != s->red && !t->v[i].mixed) {
        t->v[i].mixed = true;
        t->v[i].other = s->loc;
        t->v[i].other_op = s->red;
      }
    }
    if (s->kind == ST_ALLREDUCE && *n_ar < 256) ar[(*n_ar)++] = s;
    red_walk(t, s->body, ar, n_ar);
    red_walk(t, s->else_body, ar, n_ar);
  }
}

static const char *const red_names[] = {"+=", "min=", "max="};

void check_allreduce_ops(Cnp *cc) {
  static RedTab t;
  Stmt *ar[256];
  int n_ar = 0;
  t.n = 0;
  for (Decl *d = cc->decls; d; d = d->next)
    if (d->kind == DECL_STEP) red_walk(&t, d->body, ar, &n_ar);
  for (int k = 0; k < n_ar; k++) {
    Stmt *s = ar[k];
    s->red_ops = arena_alloc(&cc->arena, sizeof *s->red_ops * (size_t)(s->list.n ? s->list.n : 1));
    for (int i = 0; i < s->list.n; i++) {
      Decl *f = s->list.v[i].decl;
      if (!f) continue;
      int j = 0;
      while (j < t.n && t.v[j].f != f) j++;
      if (j == t.n) {
        diag_error(cc, s->list.v[i].loc, "allreduce of '%s', which no map reduces (with '%s += ...', min= or max=): "
                   "nothing tells how to combine it", f->name, f->name);
        continue;
      }
      if (t.v[j].mixed) {
        diag_error(cc, s->list.v[i].loc, "allreduce of '%s', which maps reduce with two operators ('%s' and '%s'): "
                   "which one combines the ranks?", f->name, red_names[t.v[j].op],
                   red_names[t.v[j].other_op]);
        diag_note(cc, t.v[j].loc, "reduced here");
        diag_note(cc, t.v[j].other, "and here");
        continue;
      }
      s->red_ops[i] = t.v[j].op;
    }
  }
}
