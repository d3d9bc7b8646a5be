/*
** sema_stmt.c -- step statements: map bodies (lets, stores, updates, reductions, if),
** maps and appends, compaction, sort, offsets, segments, sums, scans, swap, repeat,
** every, records and waits, copies, refreshes, exchanges, migration, zero and kernel
** calls; each records its hazard ops for sema_hazard.c.
*/
#include "sema_internal.h"

#include <stdlib.h>
#include <ctype.h>
#include <string.h>

/* ------------------------------------------------------------------ statements */

static void check_mstmts(Sema *S, Stmt *s);

/* A field fits staging h for exchange: same dtype and rank, equal constant extents. */
static bool const_extent(Sema *S, const Expr *e, int64_t *v) {
  bool fl;
  double fv;
  return (e->flags & EXF_CONST) && fold(S, e, &fl, v, &fv) && !fl;
}

/* Index of the first constant extent of f that differs from staging h's, or -1. */
static int staging_mismatch(Sema *S, const Decl *f, const Decl *h, int64_t *fe, int64_t *he) {
  for (int i = 0; i < f->shape.rank && i < h->shape.rank; i++)
    if (const_extent(S, f->shape.ext[i], fe) && const_extent(S, h->shape.ext[i], he) && *fe != *he)
      return i;
  return -1;
}

static void check_target(Sema *S, Stmt *s) {
  Expr *t = s->target;
  int mode = s->kind == ST_ASSIGN ? 1 : 2;
  if (t->kind == EX_NAME) {
    Local *l = find_local(S, t->ref.name);
    if (l && !l->is_index) {
      t->ref.local = l;
      t->type = l->type;
      return;
    }
    if (l) {
      diag_error(S->cc, t->loc, "cannot assign to the map index '%s'", l->name);
      return;
    }
    SymX *g = sym_find(S, t->ref.name);
    if (!g) {
      unknown(S, &t->ref, K(DECL_FIELD), true);
      return;
    }
    if (g->decl->kind == DECL_FIELD && g->decl->scalar)
      diag_error(S->cc, t->loc, "scalar '%s' is set by a reduction: write '%s += ...', '%s min= ...' "
                 "or '%s max= ...'", t->ref.name, t->ref.name, t->ref.name, t->ref.name);
    else if (g->decl->kind == DECL_FIELD)
      diag_error(S->cc, t->loc, "field '%s' must be indexed (for example '%s[i]')", t->ref.name, t->ref.name);
    else
      diag_error(S->cc, t->loc, "cannot assign to %s %s '%s': only fields and lets can be assigned",
                 article(g->decl->kind), decl_kind_name(g->decl->kind), t->ref.name);
    return;
  }
  check_index(S, t, mode);
  if (mode == 2 && (t->flags & EXF_GATHER)) s->scatter = true;
  if (mode == 2 && t->type == DT_BOOL) {
    diag_error(S->cc, s->loc, "'+=' needs a numeric field, not bool");
    t->type = DT_VOID;
  }
}

static const char *const red_text[] = {"+=", "min=", "max="};


/* SCALAR += V / SCALAR min= V / SCALAR max= V inside a map. */
static void check_reduce(Sema *S, Stmt *s) {
  Expr *t = s->target;
  DType v = check_expr(S, s->value);
  if (find_local(S, t->ref.name)) {
    diag_error(S->cc, t->loc, "'%s' reduces into a scalar, but '%s' is a local value",
               red_text[s->red], t->ref.name);
    return;
  }
  SymX *g = sym_find(S, t->ref.name);
  if (!g) {
    unknown(S, &t->ref, K(DECL_FIELD), true);
    return;
  }
  Decl *f = g->decl;
  if (f->kind != DECL_FIELD || !f->scalar) {
    diag_error(S->cc, t->loc, "'%s' reduces into a scalar, but '%s' is %s %s (declare 'scalar %s : "
               "f64;')", red_text[s->red], t->ref.name, article(f->kind),
               f->kind == DECL_FIELD ? "field" : decl_kind_name(f->kind), t->ref.name);
    return;
  }
  t->ref.decl = f;
  t->type = f->dtype;
  if (v == DT_VOID) return;
  if (v == DT_BOOL || dtype_is_complex(v)) {
    if (s->red == RED_SUM && v == DT_BOOL)
      diag_error(S->cc, s->value->loc, "cannot sum a bool value into scalar '%s': count with "
                 "'if COND { %s += 1; }'", f->name, f->name);
    else
      diag_error(S->cc, s->value->loc, "cannot reduce a %s value with '%s'", dtype_name(v),
                 red_text[s->red]);
    return;
  }
  check_assign_type(S, s->value->loc, f->dtype, s->value, "a scalar");
  int i = 0;
  while (i < S->n_red && S->red[i].f != f) i++;
  if (i < S->n_red && S->red[i].op != s->red) {
    diag_error(S->cc, t->loc, "scalar '%s' is reduced with '%s' here and with '%s' elsewhere in the "
               "same map", f->name, red_text[s->red], red_text[S->red[i].op]);
    diag_note(S->cc, S->red[i].loc, "reduced with '%s' here", red_text[S->red[i].op]);
    return;
  }
  if (i == S->n_red) {
    S->red = arena_grow(&S->cc->arena, S->red, S->n_red, &S->cap_red, 16, sizeof *S->red);
    S->red[S->n_red++] = (struct SemaRed){f, s->red, t->loc};
  }
  if (S->step) hz_op(S, HZ_WRITE, f, &t->loc);
  map_access(S, f, MA_REDUCE, t->loc);
}

static void check_mstmt(Sema *S, Stmt *s) {
  switch (s->kind) {
  case ST_LET: {
    DType t = check_expr(S, s->value);
    Local *l = s->let;
    if (l->type == DT_VOID) {
      l->type = t;
      if ((s->value->flags & EXF_UNTYPED) && t == DT_U64) l->type = DT_U64;
    } else {
      check_assign_type(S, s->value->loc, l->type, s->value, "a let");
    }
    l->map = S->map;
    push_local(S, l);
    break;
  }
  case ST_ADD:
    if (s->target->kind == EX_NAME && !find_local(S, s->target->ref.name)) {
      SymX *g = sym_find(S, s->target->ref.name);
      if (g && g->decl->kind == DECL_FIELD && g->decl->scalar) {
        s->kind = ST_REDUCE;
        s->red = RED_SUM;
        check_reduce(S, s);
        break;
      }
    }
    /* fall through */
  case ST_ASSIGN: {
    DType v = check_expr(S, s->value);
    check_target(S, s);
    if (v == DT_VOID || s->target->type == DT_VOID) break;
    if (s->kind == ST_ADD && !is_num(s->target->type)) {
      diag_error(S->cc, s->loc, "'+=' needs a numeric target, not '%s'", dtype_name(s->target->type));
      break;
    }
    check_assign_type(S, s->value->loc, s->target->type, s->value,
                      s->target->kind == EX_NAME ? "a let" : "a field");
    break;
  }
  case ST_IF: {
    DType c = check_expr(S, s->value);
    if (c != DT_VOID && c != DT_BOOL)
      diag_error(S->cc, s->value->loc, "the condition of 'if' must be bool, not '%s'", dtype_name(c));
    int mark = S->n_scope;
    check_mstmts(S, s->body);
    S->n_scope = mark;
    check_mstmts(S, s->else_body);
    S->n_scope = mark;
    break;
  }
  case ST_REDUCE:
    check_reduce(S, s);
    break;
  default:
    cnp_ice("unexpected statement in a map");
  }
}

static void check_mstmts(Sema *S, Stmt *s) {
  for (; s; s = s->next) check_mstmt(S, s);
}

/* The extent a map or an append runs over, as a name expression (Stmt.over_expr). */
static void over_expr(Sema *S, Stmt *s) {
  Expr *x = arena_alloc(&S->cc->arena, sizeof *x);
  x->kind = EX_NAME;
  x->loc = s->over.loc;
  x->ref = s->over;
  x->type = DT_I64;
  s->over_expr = x;
}

void check_map_body(Sema *S, Stmt *body) { check_mstmts(S, body); }

static void check_map(Sema *S, Stmt *s) {
  if (s->gndim) {   /* map (j, i) in G (sema_grid.c) */
    check_grid_map(S, s);
    return;
  }
  /* any declared name (a map-specific message below); an unknown one suggests values */
  Decl *d = resolve(S, &s->over, s->over.name && sym_find(S, s->over.name) ? ~0u : K_VALUE);
  if (d && d->kind != DECL_FIELD && !(K(d->kind) & K_VALUE)) {   /* a stream, an event, a plan, ... */
    diag_error(S->cc, s->over.loc, "a map runs over a dim or an integer setup param or constant; "
               "'%s' is %s %s", d->name, article(d->kind), decl_kind_name(d->kind));
    diag_note(S->cc, d->loc, "'%s' is declared here", d->name);
    d = NULL;
  }
  if (d && d->kind == DECL_FIELD) {   /* "map i in x": the elements of a field */
    const Expr *ext = last_extent(d);
    if (ext && ext->kind == EX_NAME)
      diag_error(S->cc, s->over.loc, "a map runs over a dim or an integer setup param or constant; "
                 "'%s' is a field (to visit its elements, map over its extent: 'map %s in %s')",
                 d->name, s->index->name, ext->ref.name);
    else
      diag_error(S->cc, s->over.loc, "a map runs over a dim or an integer setup param or constant; "
                 "'%s' is a %s", d->name, decl_noun(d));
    diag_note(S->cc, d->loc, "'%s' is declared here", d->name);
    d = NULL;
  }
  if (d && d->kind != DECL_DIM) {
    if (!dtype_is_int(d->dtype) || (d->kind == DECL_PARAM && !d->setup)) {
      diag_error(S->cc, s->over.loc, "a map runs over a dim or an integer setup param or constant; "
                 "'%s' is not one", d->name);
      d = NULL;
    }
  }
  if (d) over_expr(S, s);
  /* the loop runs over the live extent, which compaction and migration change */
  if (d && d->kind == DECL_DIM && S->step) hz_op(S, HZ_READ, d, &s->over.loc);
  S->map = s;
  S->n_macc = 0;
  S->n_red = 0;
  int mark = S->n_scope;
  s->index->map = s;
  push_local(S, s->index);
  if (d) check_mstmts(S, s->body);
  S->n_scope = mark;
  S->map = NULL;
}

/* Every array must share the extent of `ref` (the mask, key or destination). */
static void same_extents(Sema *S, Decl *ref, RefList *list, const char *role) {
  for (int i = 0; i < list->n; i++) {
    Decl *f = field_ref(S, &list->v[i]);
    if (!f || !ref) continue;
    if (!same_extent(last_extent(f), last_extent(ref))) {
      char a[128], b[128];
      extent_text(a, sizeof a, last_extent(f));
      extent_text(b, sizeof b, last_extent(ref));
      diag_error(S->cc, list->v[i].loc, "array '%s' has extent '%s', but the %s '%s' has extent '%s'",
                 f->name, a, role, ref->name, b);
      bool leading = false;   /* f64[N, 3]: the element axis is the last one */
      for (int k = 0; k + 1 < f->shape.rank; k++) leading = leading || same_extent(f->shape.ext[k], last_extent(ref));
      if (leading)
        diag_note(S->cc, f->loc, "'%s' is declared here; the element axis is its last extent: "
                  "declare it component-major, '%s'-last (f64[3, N], not f64[N, 3])", f->name, b);
      else diag_note(S->cc, f->loc, "'%s' is declared here", f->name);
    }
    for (int j = 0; j < i; j++)
      if (list->v[j].decl == f) {
        diag_error(S->cc, list->v[i].loc, "'%s' is listed twice", f->name);
        break;
      }
    if (f == ref) diag_error(S->cc, list->v[i].loc, "the %s '%s' cannot also be one of the arrays", role, f->name);
  }
}

static void rw_list(Sema *S, RefList *l, Loc at) {
  for (int i = 0; i < l->n; i++) {
    hz_op(S, HZ_READ, l->v[i].decl, &l->v[i].loc);
    hz_op(S, HZ_WRITE, l->v[i].decl, &l->v[i].loc);
  }
  (void)at;
}

static void check_setup_int(Sema *S, Expr *e, const char *what) {
  DType t = check_expr(S, e);
  if (t != DT_VOID && !dtype_is_int(t)) diag_error(S->cc, e->loc, "%s must be an integer, not '%s'", what, dtype_name(t));
}

static void check_sum(Sema *S, Stmt *s) {
  Decl *p = resolve(S, &s->a, K(DECL_PLAN));
  Decl *out = field_ref(S, &s->b);
  if (s->list.n != 1) {
    diag_error(S->cc, s->list.v[s->list.n > 1 ? 1 : 0].loc, "'sum' takes exactly one value array");
    return;
  }
  Decl *v = field_ref(S, &s->list.v[0]);
  if (!p || !out || !v) return;
  Decl *key = p->target.decl;
  if (key && !same_extent(last_extent(v), last_extent(key))) {
    char a[128], b[128];
    extent_text(a, sizeof a, last_extent(v));
    extent_text(b, sizeof b, last_extent(key));
    diag_error(S->cc, s->list.v[0].loc, "values '%s' have extent '%s', but the plan's keys '%s' have extent '%s'",
               v->name, a, key->name, b);
  }
  if (out == v) diag_error(S->cc, s->b.loc, "the output of 'sum' must not alias the values");
  DType want = dtype_sum_out(v->dtype);
  if (out->dtype != want) {
    diag_error(S->cc, s->b.loc, "the output of 'sum' over %s values must be %s, but '%s' is %s",
               dtype_name(v->dtype), dtype_name(want), out->name, dtype_name(out->dtype));
    diag_note(S->cc, out->loc, "'%s' is declared here", out->name);
  }
  bool ok = out->shape.rank == v->shape.rank && p->value &&
            same_extent(last_extent(out), p->value);
  for (int i = 0; ok && i + 1 < v->shape.rank; i++)
    ok = same_extent(out->shape.ext[i], v->shape.ext[i]);
  if (!ok && p->value) {
    char want_s[256] = "[";
    for (int i = 0; i + 1 < v->shape.rank; i++) {
      extent_text(want_s + strlen(want_s), sizeof want_s - strlen(want_s), v->shape.ext[i]);
      if (strlen(want_s) + 3 < sizeof want_s) strcat(want_s, ", ");
    }
    extent_text(want_s + strlen(want_s), sizeof want_s - strlen(want_s), p->value);
    if (strlen(want_s) + 2 < sizeof want_s) strcat(want_s, "]");
    diag_error(S->cc, s->b.loc, "the output of 'sum' must have shape %s (the values' components, "
               "then the plan's segments), but '%s' is %s", want_s, out->name, sema_type_text(S->cc, out));
    diag_note(S->cc, out->loc, "'%s' is declared here", out->name);
  }
  hz_op(S, HZ_READ, p, &s->a.loc);
  hz_op(S, HZ_READ, v, &s->list.v[0].loc);
  hz_op(S, HZ_WRITE, out, &s->b.loc);
}

/* The C type a kernel argument is passed as (gen_c.c, karg_type): fields as element pointers,
** params by value (f16 as float), constants as double or int64_t, dims as int64_t. */
static int karg_code(const Expr *a, const char **what) {   /* -1: not a resolved name */
  Decl *d = a->kind == EX_NAME ? a->ref.decl : NULL;
  if (!d) return -1;
  if (d->kind == DECL_FIELD) {
    *what = "field";
    return 100 + (int)d->dtype;
  }
  DType t = d->kind == DECL_PARAM ? d->dtype
            : d->kind == DECL_CONST && dtype_is_float(d->dtype) ? DT_F64 : DT_I64;
  *what = "value";
  return t == DT_F16 ? (int)DT_F32 : (int)t;
}

static const char *karg_text(Sema *S, const Decl *d) {
  if (d->kind == DECL_FIELD) return sema_type_text(S->cc, d);
  if (d->kind == DECL_DIM) return "its live extent, i64";
  return dtype_name(d->dtype);
}

/* Every call of a kernel must match its first: the kernel and its host fallback are one C
** function each, whose parameters the first call fixes. */
static void same_signature(Sema *S, Decl *k, Stmt *s) {
  if (!S->kcall) S->kcall = arena_alloc(&S->cc->arena, sizeof *S->kcall * (size_t)(S->cc->n_decl[DECL_KERNEL] + 1));
  Stmt *f = S->kcall[k->index];
  if (!f) {
    for (int i = 0; i < s->nargs; i++) {
      const char *w;
      if (karg_code(s->args[i], &w) < 0) return;   /* reported above */
    }
    S->kcall[k->index] = s;
    return;
  }
  if (f->nargs != s->nargs) {
    diag_error(S->cc, s->a.loc, "kernel '%s' is called with %d argument%s here and %d at its first call: "
               "every call passes the same arguments (one C function and its host fallback)",
               k->name, s->nargs, s->nargs == 1 ? "" : "s", f->nargs);
    diag_note(S->cc, f->a.loc, "first call of '%s'", k->name);
    return;
  }
  if (!f->value2 != !s->value2) {
    diag_error(S->cc, s->a.loc, "kernel '%s' is called %s 'over' here and %s it at its first call: "
               "'over' adds the extent as the last argument", k->name, s->value2 ? "with" : "without",
               f->value2 ? "with" : "without");
    diag_note(S->cc, f->a.loc, "first call of '%s'", k->name);
    return;
  }
  for (int i = 0; i < s->nargs; i++) {
    const char *wa = "", *wb = "";
    int a = karg_code(s->args[i], &wa), b = karg_code(f->args[i], &wb);
    if (a < 0 || a == b) continue;
    Decl *da = s->args[i]->ref.decl, *db = f->args[i]->ref.decl;
    diag_error(S->cc, s->args[i]->loc, "argument %d of kernel '%s' is %s '%s' (%s) here and %s '%s' (%s) "
               "at its first call: every call passes the same types", i + 1, k->name,
               decl_kind_name(da->kind), da->name, karg_text(S, da), decl_kind_name(db->kind), db->name,
               karg_text(S, db));
    diag_note(S->cc, f->args[i]->loc, "first call of '%s'", k->name);
    return;
  }
}

/* scan inclusive|exclusive SRC -> DST: same dtype and shape, integer or floating. */
static void check_scan(Sema *S, Stmt *s) {
  Decl *x = field_ref(S, &s->a), *y = field_ref(S, &s->b);
  Decl *fs[2] = {x, y};
  Ref *rs[2] = {&s->a, &s->b};
  for (int i = 0; i < 2; i++) {
    Decl *f = fs[i];
    if (!f) continue;
    if (f->scalar || f->history_of.name) {
      diag_error(S->cc, rs[i]->loc, "scan runs along the element axis of a field, but '%s' is a %s",
                 f->name, f->scalar ? "scalar" : "history");
      fs[i] = NULL;
    } else if (!scalar_dtype(f->dtype)) {
      diag_error(S->cc, rs[i]->loc, "scan needs an integer or floating field (i32, i64, u64, f32, "
                 "f64), not '%s' ('%s')", dtype_name(f->dtype), f->name);
      fs[i] = NULL;
    }
  }
  x = fs[0];
  y = fs[1];
  if (x && y && x->dtype != y->dtype) {
    diag_error(S->cc, s->b.loc, "scan from '%s' (%s) into '%s' (%s): the fields must have the same "
               "dtype", x->name, dtype_name(x->dtype), y->name, dtype_name(y->dtype));
  } else if (x && y) {
    bool same = x->shape.rank == y->shape.rank;
    for (int i = 0; same && i < x->shape.rank; i++) same = same_extent(x->shape.ext[i], y->shape.ext[i]);
    if (!same)
      diag_error(S->cc, s->b.loc, "scan from '%s' (%s) into '%s' (%s): the fields must have the same "
                 "shape", x->name, sema_type_text(S->cc, x), y->name, sema_type_text(S->cc, y));
  }
  hz_op(S, HZ_READ, x, &s->a.loc);
  hz_op(S, HZ_READ, dim_of(x), &s->a.loc);
  hz_op(S, HZ_WRITE, y, &s->b.loc);
}

/* ---- deposit / gather (docs/language.md, "Particles and grids") */

static Decl *grid_of_field(const Decl *f) { return f ? f->grid_of : NULL; }
static int grid_ndim(const Decl *g) { return g->grid->ndim; }
static bool grid_axis_periodic(const Decl *g, int a) { return g->grid->axis[a].bound == GB_PERIODIC; }
static const char *grid_axis_boundary_text(Sema *S, const Decl *g, int a) {
  const GridAxis *ax = &g->grid->axis[a];
  if (ax->bound == GB_GHOST) return arena_printf(&S->cc->arena, "ghost(%d)", ax->ghost);
  return grid_bound_name(ax->bound);
}
/* Components of a grid field (product of its leading extents), -1 when not constants. */
static int64_t grid_field_ncomp(Sema *S, const Decl *f) {
  int64_t n = 1, v;
  bool fl;
  double fv;
  for (int d = 0; d < f->grid_ncomp; d++) {
    Expr *e = f->shape.ext[d];
    if (!(e->flags & EXF_CONST) || !fold(S, e, &fl, &v, &fv) || fl) return -1;
    n *= v;
  }
  return n;
}

/* A particle field of a deposit/gather (a position, weight or gathered output): a field over
** a dim, f32 or f64 like the grid; `ncomp` leading components (0: a plain [N] field). */
static bool pg_particle(Sema *S, Stmt *s, Ref *r, Decl *f, const char *role, int ncomp, Decl *g,
                        Decl **dim) {
  const char *w = stmt_of(s->kind)->name;
  if (!f) return false;
  Decl *d = dim_of(f);
  int64_t nc = 1;
  bool comps_ok = f->shape.rank == (ncomp ? 2 : 1);
  if (comps_ok && ncomp) {
    bool fl;
    double fv;
    comps_ok = (f->shape.ext[0]->flags & EXF_CONST) && fold(S, f->shape.ext[0], &fl, &nc, &fv) && !fl &&
               nc == ncomp;
  }
  if (!d || f->scalar || f->history_of.name || grid_of_field(f)) {
    diag_error(S->cc, r->loc, "%s '%s' of %s must be a particle field over a dim (%s[N]), not %s", role,
               f->name, w, g ? dtype_name(g->dtype) : "f64", sema_type_text(S->cc, f));
    diag_note(S->cc, f->loc, "'%s' is declared here", f->name);
    return false;
  }
  if (!comps_ok) {
    if (ncomp > 1)
      diag_error(S->cc, r->loc, "gather from '%s' (%d components) needs an output with %d components "
                 "(%s[%d, %s]), not '%s' (%s)", g->name, ncomp, ncomp, dtype_name(g->dtype), ncomp, d->name,
                 f->name, sema_type_text(S->cc, f));
    else
      diag_error(S->cc, r->loc, "%s '%s' of %s must be a particle field with one component (%s[%s]), not %s",
                 role, f->name, w, g ? dtype_name(g->dtype) : dtype_name(f->dtype), d->name,
                 sema_type_text(S->cc, f));
    diag_note(S->cc, f->loc, "'%s' is declared here", f->name);
    return false;
  }
  if (g && f->dtype != g->dtype) {
    diag_error(S->cc, r->loc, "%s '%s' is %s but grid field '%s' is %s: positions, weights and the grid of "
               "%s must all be f32 or all f64", role, f->name, dtype_name(f->dtype), g->name,
               dtype_name(g->dtype), w);
    return false;
  }
  if (*dim && d != *dim) {
    diag_error(S->cc, r->loc, "%s '%s' is over dim '%s' but the positions are over '%s': one %s reads "
               "the particles of one dim", role, f->name, d->name, (*dim)->name, w);
    return false;
  }
  *dim = d;
  return true;
}

/* deposit W at (POS...) -> G with SHAPE [atomic]; / gather G at (POS...) -> OUT with SHAPE;
** G a field over a grid whose axes are all periodic or ghost(W) (W >= the shape's reach:
** 1, tsc 2); one position per grid axis, outermost
** first, all over one dim N; positions, weights, grid and output all f32 or all f64. */
static void check_pgrid(Sema *S, Stmt *s) {
  bool dep = s->kind == ST_DEPOSIT;
  const char *w = dep ? "deposit" : "gather";
  Ref *gr = dep ? &s->b : &s->a;
  Decl *g = field_ref(S, gr), *grid = g ? grid_of_field(g) : NULL, *dim = NULL;
  int ncomp = g && grid ? (int)grid_field_ncomp(S, g) : 0;
  if (g && !grid) {
    diag_error(S->cc, gr->loc, "%s with a particle shape needs a grid field, but '%s' is %s (a field "
               "over a grid is declared 'field %s : %s[G];' after 'grid G = [...];')", w, g->name,
               sema_type_text(S->cc, g), g->name, dtype_name(g->dtype));
    diag_note(S->cc, g->loc, "'%s' is declared here", g->name);
    g = NULL;
  } else if (g && g->dtype != DT_F32 && g->dtype != DT_F64) {
    diag_error(S->cc, gr->loc, "%s needs an f32 or f64 grid field, not '%s' (%s)", w, g->name,
               sema_type_text(S->cc, g));
    g = NULL;
  } else if (g && ncomp < 1) {
    diag_error(S->cc, gr->loc, "%s needs the components of grid field '%s' (%s) to be constants", w, g->name,
               sema_type_text(S->cc, g));
    g = NULL;
  } else if (g && dep && ncomp != 1) {
    diag_error(S->cc, gr->loc, "deposit writes a grid field of one component, but '%s' is %s", g->name,
               sema_type_text(S->cc, g));
    g = NULL;
  }
  if (g) {
    /* ghost(W) axes: the shape's points beyond the owned planes land in the ghosts (then
    ** folded back), so W covers the shape's reach: 1 plane for ngp and cic, 2 for tsc. */
    int reach = s->pshape == 2 ? 2 : 1;
    for (int a = 0; a < grid_ndim(grid); a++)
      if (!grid_axis_periodic(grid, a) && grid->grid->axis[a].bound != GB_GHOST) {
        diag_error(S->cc, gr->loc, "%s %s grid field '%s': axis %d of grid '%s' is %s, but particle "
                   "shapes wrap periodically: every axis of the grid must be periodic or ghost(W)", w,
                   dep ? "onto" : "from", g->name, a, grid->name, grid_axis_boundary_text(S, grid, a));
        diag_note(S->cc, grid->loc, "grid '%s' is declared here", grid->name);
        g = NULL;
        break;
      } else if (grid->grid->axis[a].bound == GB_GHOST && grid->grid->axis[a].ghost < reach) {
        diag_error(S->cc, gr->loc, "%s %s grid field '%s' with %s: axis %d of grid '%s' is %s, but "
                   "the %s shape reaches %d planes past a particle's own: it needs ghost(%d) or wider",
                   w, dep ? "onto" : "from", g->name, pshape_names[s->pshape], a, grid->name,
                   grid_axis_boundary_text(S, grid, a), pshape_names[s->pshape], reach, reach);
        diag_note(S->cc, grid->loc, "grid '%s' is declared here", grid->name);
        g = NULL;
        break;
      }
  }
  if (g && s->list.n != grid_ndim(grid)) {
    diag_error(S->cc, s->list.n ? s->list.v[0].loc : s->loc, "%s %s grid field '%s' needs %d position%s, "
               "one per axis of grid '%s' (outermost first), not %d", w, dep ? "onto" : "from", g->name,
               grid_ndim(grid), grid_ndim(grid) == 1 ? "" : "s", grid->name, s->list.n);
  }
  bool pos_ok = true;
  for (int i = 0; i < s->list.n; i++) {
    Decl *f = field_ref(S, &s->list.v[i]);
    pos_ok = pg_particle(S, s, &s->list.v[i], f, "position", 0, g, &dim) && pos_ok;
    hz_op(S, HZ_READ, f, &s->list.v[i].loc);
  }
  if (dep && s->a.name) {
    Decl *f = field_ref(S, &s->a);
    if (pos_ok) pg_particle(S, s, &s->a, f, "weight", 0, g, &dim);
    hz_op(S, HZ_READ, f, &s->a.loc);
  } else if (dep) {
    check_expr(S, s->value);
    bool one = (s->value->kind == EX_INT && s->value->ival == 1) ||
               (s->value->kind == EX_FLOAT && s->value->fval == 1.0);
    if (!one)
      diag_error(S->cc, s->value->loc, "a deposit's weight is a particle field or the number 1 (unit "
                 "weights): deposit a field of weights for other values");
  }
  if (!dep) {
    Decl *f = field_ref(S, &s->b);
    bool alias = false;
    for (int i = 0; f && i < s->list.n && !alias; i++)
      if (s->list.v[i].decl == f) {
        diag_error(S->cc, s->b.loc, "gather into '%s', one of its positions: the output must be another field",
                   f->name);
        alias = true;
      }
    if (pos_ok && g && !alias) pg_particle(S, s, &s->b, f, "output", ncomp > 1 ? ncomp : 0, g, &dim);
    hz_op(S, HZ_WRITE, f, &s->b.loc);
    hz_op(S, HZ_READ, g ? g : s->a.decl, &s->a.loc);
  } else {
    hz_op(S, HZ_WRITE, g ? g : s->b.decl, &s->b.loc);
  }
  hz_op(S, HZ_READ, dim, &s->loc);
}

/* zero(FIELDS): every element of each field set to 0 (written like a kernel call: its
** arguments become the statement's list). */
static void check_zero(Sema *S, Stmt *s) {
  if (!s->nargs) diag_error(S->cc, s->loc, "'zero' needs at least one field");
  s->list.n = s->nargs;
  s->list.v = arena_alloc(&S->cc->arena, sizeof *s->list.v * (size_t)(s->nargs ? s->nargs : 1));
  for (int i = 0; i < s->nargs; i++) {
    Expr *a = s->args[i];
    s->list.v[i] = (Ref){a->kind == EX_NAME ? a->ref.name : "", a->loc, NULL, NULL};
    if (a->kind != EX_NAME) {
      diag_error(S->cc, a->loc, "'zero' takes names of fields");
      continue;
    }
    Decl *f = field_ref(S, &s->list.v[i]);
    if (f && (f->scalar || f->history_of.name)) {   /* stored as fields, set only otherwise */
      diag_error(S->cc, a->loc, "'zero' clears fields, but '%s' is a %s (%s)", f->name, decl_noun(f),
                 f->scalar ? "a map's reduction sets it" : "'record' appends to it");
      continue;
    }
    hz_op(S, HZ_WRITE, f, &s->list.v[i].loc);
  }
}

/* A kernel call that names a statement written like one (StmtInfo.call_form: `zero(x, v);`)
** is that statement, unless a kernel has the name. */
static void call_form(Sema *S, Stmt *s) {
  int form = s->kind == ST_CALL ? stmt_call_form(s->a.name) : -1;
  SymX *kernel = form >= 0 ? sym_find(S, s->a.name) : NULL;
  if (form >= 0 && !(kernel && kernel->decl->kind == DECL_KERNEL)) s->kind = (StmtKind)form;
}

static void check_repeat(Sema *S, Stmt *s);
static void check_swap(Sema *S, Stmt *s);
static void check_append(Sema *S, Stmt *s);
static void check_every_block(Sema *S, Stmt *s);

/* compact MASK (ARRAYS): the mask is a one-dimensional bool field over a dim, whose live
** extent it sets. */
static void check_compact(Sema *S, Stmt *s) {
  Decl *m = field_ref(S, &s->a);
  if (m && (m->dtype != DT_BOOL || m->shape.rank != 1)) {
    diag_error(S->cc, s->a.loc, "the mask '%s' must be a one-dimensional bool field", m->name);
    m = NULL;
  }
  if (m && !(last_extent(m)->kind == EX_NAME && last_extent(m)->ref.decl && last_extent(m)->ref.decl->kind == DECL_DIM))
    diag_error(S->cc, s->a.loc, "compaction changes the extent of a dim, but '%s' is not over a dim", m->name);
  same_extents(S, m, &s->list, "mask");
  hz_op(S, HZ_READ, m, &s->a.loc);
  rw_list(S, &s->list, s->loc);
  hz_op(S, HZ_READ, dim_of(m), &s->a.loc);    /* the live extent: read, then set */
  hz_op(S, HZ_WRITE, dim_of(m), &s->a.loc);
}

/* sort KEY (ARRAYS): an integer key and arrays of its extent, reordered together. */
static void check_sort(Sema *S, Stmt *s) {
  Decl *k = field_ref(S, &s->a);
  if (!int_field(S, k, s->a.loc, "the key")) k = NULL;
  same_extents(S, k, &s->list, "key");
  hz_op(S, HZ_READ, k, &s->a.loc);
  hz_op(S, HZ_WRITE, k, &s->a.loc);
  rw_list(S, &s->list, s->loc);
  hz_op(S, HZ_READ, dim_of(k), &s->a.loc);
}

/* offsets KEY -> OFF: i64 offsets of a signed key (not the key itself). */
static void check_offsets(Sema *S, Stmt *s) {
  Decl *k = field_ref(S, &s->a), *o = field_ref(S, &s->b);
  signed_field(S, k, s->a.loc, "the key", false);
  signed_field(S, o, s->b.loc, "the offsets", true);
  if (k && o && k == o) diag_error(S->cc, s->b.loc, "the offsets must not alias the keys");
  hz_op(S, HZ_READ, k, &s->a.loc);
  hz_op(S, HZ_READ, dim_of(k), &s->a.loc);
  hz_op(S, HZ_WRITE, o, &s->b.loc);
}

/* PLAN = segments(KEY, N): builds the plan over the key and with the number of segments it
** was declared with (setup sizes the plan for that key's rows, and sum checks its values
** against that key). */
static void check_segments(Sema *S, Stmt *s) {
  Decl *p = resolve(S, &s->a, K(DECL_PLAN));
  Decl *k = field_ref(S, &s->b);
  if (signed_field(S, k, s->b.loc, "the key", false) && p && p->target.decl && p->target.decl != k) {
    diag_error(S->cc, s->b.loc, "plan '%s' is over the key '%s', not '%s'", p->name, p->target.name, k->name);
    diag_note(S->cc, p->loc, "'%s' is declared here", p->name);
  }
  check_extent_expr(S, s->value, "the number of segments");
  if (p && p->value && !same_extent(p->value, s->value)) {
    diag_error(S->cc, s->value->loc, "plan '%s' was declared with a different number of segments", p->name);
    diag_note(S->cc, p->value->loc, "declared here");
  }
  hz_op(S, HZ_READ, k, &s->b.loc);
  hz_op(S, HZ_READ, dim_of(k), &s->b.loc);
  hz_op(S, HZ_WRITE, p, &s->a.loc);
}

/* record E / wait E, and record HISTORY (appends its scalar's value). */
static void check_record_wait(Sema *S, Stmt *s) {
  SymX *h = s->kind == ST_RECORD ? sym_find(S, s->a.name) : NULL;
  if (h && h->decl->kind == DECL_FIELD && h->decl->history_of.name && h->pos < S->pos) {
    Decl *hd = h->decl;   /* record HISTORY: append its scalar's value */
    s->kind = ST_HISTORY;
    s->a.decl = hd;
    s->b = hd->history_of;
    s->b.loc = s->a.loc;
    hz_op(S, HZ_READ, s->b.decl, &s->a.loc);
    hz_op(S, HZ_READ, hd, &s->a.loc);
    hz_op(S, HZ_WRITE, hd, &s->a.loc);
    return;
  }
  Decl *e = resolve(S, &s->a, K(DECL_EVENT));
  if (e && s->kind == ST_RECORD && S->repeat) {
    diag_error(S->cc, s->a.loc, "event '%s' is recorded inside 'repeat': each pass would record it "
               "again before anyone waits for it (record it after the block)", e->name);
    diag_note(S->cc, S->repeat->loc, "the block repeats here");
  }
  hz_op(S, s->kind == ST_RECORD ? HZ_RECORD : HZ_WAIT, e, &s->a.loc);
}

/* copy SNAPSHOT <- F: the snapshot must stage F. */
static void check_copy(Sema *S, Stmt *s) {
  Decl *sn = resolve(S, &s->a, K(DECL_SNAPSHOT));
  Decl *f = field_ref(S, &s->b);
  if (sn && f && sn->target.decl && sn->target.decl != f) {
    diag_error(S->cc, s->b.loc, "snapshot '%s' stages '%s', not '%s'", sn->name, sn->target.name, f->name);
    diag_note(S->cc, sn->loc, "'%s' is declared here", sn->name);
  }
  hz_op(S, HZ_READ, f, &s->b.loc);
  hz_op(S, HZ_WRITE, sn, &s->a.loc);
  hz_op(S, HZ_READ, dim_of(f), &s->b.loc);   /* the snapshot keeps the live rows */
}

/* refresh MIRROR to_device; / to_host;: the mirror stands for the host array. */
static void check_refresh(Sema *S, Stmt *s) {
  Decl *m = resolve(S, &s->a, K(DECL_MIRROR));
  if (m && m->target.decl) {
    /* the mirror object stands for the host array: to_device reads it into the field,
    ** to_host writes it from the field */
    hz_op(S, s->to_device ? HZ_WRITE : HZ_READ, m->target.decl, &s->a.loc);
    hz_op(S, s->to_device ? HZ_READ : HZ_WRITE, m, &s->a.loc);
  }
}

/* exchange H [(F)] with DEST [from SRC]: F must have the staging shape. */
static void check_exchange(Sema *S, Stmt *s) {
  Decl *h = resolve(S, &s->a, K(DECL_MPI));
  /* `exchange H with ...` (the brief's sketch) exchanges the staging buffer itself: a host
  ** array of H's dtype and shape that the program reads and writes as NAME_field("H") */
  if (!s->b.name && h) h->own_buffer = true;
  Decl *f = s->b.name ? field_ref(S, &s->b) : NULL;
  if (h && f) {
    if (h->dtype != f->dtype || h->shape.rank != f->shape.rank) {
      diag_error(S->cc, s->b.loc, "field '%s' (%s) does not match the staging buffer '%s' (%s)",
                 f->name, sema_type_text(S->cc, f), h->name, sema_type_text(S->cc, h));
      diag_note(S->cc, h->loc, "'%s' is declared here", h->name);
    } else {
      int64_t a, b;   /* setup requires the staging shape: check the constant extents now */
      if (staging_mismatch(S, f, h, &a, &b) >= 0)
        diag_error(S->cc, s->b.loc, "field '%s' has extent %lld where staging '%s' has %lld: "
                   "an exchanged field must have the staging shape",
                   f->name, (long long)a, h->name, (long long)b);
    }
  }
  S->mpi_names = true;
  check_setup_int(S, s->value, "the destination rank");
  if (s->value2) check_setup_int(S, s->value2, "the source rank");
  S->mpi_names = false;
  hz_op(S, HZ_READ, f, &s->b.loc);
  hz_op(S, HZ_WRITE, f, &s->b.loc);
  hz_op(S, HZ_WRITE, h, &s->a.loc);
}

/* migrate (ARRAYS) by DEST: a signed destination rank per row; the live extent changes. */
static void check_migrate(Sema *S, Stmt *s) {
  Decl *d = field_ref(S, &s->a);
  if (!signed_field(S, d, s->a.loc, "the destination", false)) d = NULL;
  same_extents(S, d, &s->list, "destination");
  hz_op(S, HZ_READ, d, &s->a.loc);
  hz_op(S, HZ_WRITE, d, &s->a.loc);
  rw_list(S, &s->list, s->loc);
  hz_op(S, HZ_READ, dim_of(d), &s->a.loc);
  hz_op(S, HZ_WRITE, dim_of(d), &s->a.loc);
}

/* migrate (ARRAYS) to G at (POS...): G a grid of extents (not a spectral one), one position
** per axis of G (outermost first), f32 or f64 particle fields over one dim N, each one of
** the arrays; the arrays are fields over N (each listed once). The rows and N's extent
** change. */
static void check_migrate_to(Sema *S, Stmt *s) {
  Decl *g = resolve(S, &s->b, K(DECL_GRID)), *dim = NULL;
  if (g && g->target.name) {
    diag_error(S->cc, s->b.loc, "migrate to '%s', a spectral grid: name the grid of the particles' "
               "positions ('%s')", g->name, g->target.name);
    g = NULL;
  }
  if (g && s->pos.n != g->grid->ndim)
    diag_error(S->cc, s->pos.n ? s->pos.v[0].loc : s->b.loc, "migrate to grid '%s' needs %d position%s, one "
               "per axis of the grid (outermost first), not %d", g->name, g->grid->ndim,
               g->grid->ndim == 1 ? "" : "s", s->pos.n);
  for (int i = 0; i < s->pos.n; i++) {
    Ref *r = &s->pos.v[i];
    Decl *f = field_ref(S, r), *d = f ? dim_of(f) : NULL;
    hz_op(S, HZ_READ, f, &r->loc);
    if (!f) continue;
    if (!d || f->scalar || f->history_of.name || f->grid_of || f->shape.rank != 1 ||
        (f->dtype != DT_F32 && f->dtype != DT_F64)) {
      diag_error(S->cc, r->loc, "position '%s' of migrate must be an f32 or f64 particle field over a dim "
                 "(f64[N]), not %s", f->name, sema_type_text(S->cc, f));
      diag_note(S->cc, f->loc, "'%s' is declared here", f->name);
      continue;
    }
    if (dim && d != dim) {
      diag_error(S->cc, r->loc, "position '%s' is over dim '%s' but '%s' is over '%s': the positions of one "
                 "migrate are over one dim", f->name, d->name, s->pos.v[0].name, dim->name);
      continue;
    }
    dim = d;
    bool listed = false;
    for (int k = 0; k < s->list.n; k++) listed = listed || s->list.v[k].name == r->name;
    if (!listed)
      diag_error(S->cc, r->loc, "position '%s' must be one of the migrated arrays: its rows move with "
                 "the others", f->name);
  }
  for (int i = 0; i < s->list.n; i++) {
    Decl *f = field_ref(S, &s->list.v[i]);
    if (!f) continue;
    Decl *fd = dim_of(f);
    if (!fd || f->grid_of || f->scalar || f->history_of.name)
      diag_error(S->cc, s->list.v[i].loc, "array '%s' of migrate must be a particle field over a dim, not %s",
                 f->name, sema_type_text(S->cc, f));
    else if (dim && fd != dim)
      diag_error(S->cc, s->list.v[i].loc, "array '%s' is over dim '%s' but the positions are over '%s'", f->name,
                 fd->name, dim->name);
    for (int j = 0; j < i; j++)
      if (s->list.v[j].decl == f) {
        diag_error(S->cc, s->list.v[i].loc, "'%s' is listed twice", f->name);
        break;
      }
  }
  rw_list(S, &s->list, s->loc);
  hz_op(S, HZ_READ, dim, &s->loc);
  hz_op(S, HZ_WRITE, dim, &s->loc);
}

/* KERNEL(ARGS) [over N]: names as arguments; every call matches the first. */
static void check_kernel_call(Sema *S, Stmt *s) {
  Decl *kd = resolve(S, &s->a, K(DECL_KERNEL));
  for (int i = 0; i < s->nargs; i++) {
    Expr *a = s->args[i];
    if (a->kind != EX_NAME) {
      diag_error(S->cc, a->loc, "kernel arguments are names of fields, params, constants or dims");
      continue;
    }
    SymX *g = sym_find(S, a->ref.name);
    if (g && g->decl->kind == DECL_FIELD && g->pos < S->pos) {
      a->ref.decl = g->decl;
      a->type = g->decl->dtype;
      hz_op(S, HZ_READ, g->decl, &a->loc);
      hz_op(S, HZ_WRITE, g->decl, &a->loc);
    } else {
      check_expr(S, a);
      if (a->ref.decl && a->ref.decl->kind == DECL_DIM) hz_op(S, HZ_READ, a->ref.decl, &a->loc);
    }
  }
  if (s->value2) {
    check_extent_expr(S, s->value2, "the extent of a kernel call");
    if (s->value2->kind == EX_NAME && s->value2->ref.decl && s->value2->ref.decl->kind == DECL_DIM)
      hz_op(S, HZ_READ, s->value2->ref.decl, &s->value2->loc);
  }
  if (kd) same_signature(S, kd, s);
}

static void check_stmt(Sema *S, Stmt *s) {
  call_form(S, s);
  switch (s->kind) {
  case ST_MAP: check_map(S, s); break;
  case ST_COMPACT: check_compact(S, s); break;
  case ST_SORT: check_sort(S, s); break;
  case ST_OFFSETS: check_offsets(S, s); break;
  case ST_SEGMENTS: check_segments(S, s); break;
  case ST_SCAN: check_scan(S, s); break;
  case ST_FFT: case ST_IFFT: check_fft(S, s); break;
  case ST_DEPOSIT: case ST_GATHER: check_pgrid(S, s); break;
  case ST_REPEAT: check_repeat(S, s); break;
  case ST_SWAP: check_swap(S, s); break;
  case ST_HALO: check_halo(S, s); break;   /* sema_grid.c */
  case ST_APPEND: check_append(S, s); break;
  case ST_EVERY: check_every_block(S, s); break;
  case ST_SUM:
    check_sum(S, s);
    if (s->list.n) hz_op(S, HZ_READ, dim_of(s->list.v[0].decl), &s->list.v[0].loc);
    break;
  case ST_RECORD: case ST_WAIT: check_record_wait(S, s); break;
  case ST_COPY: check_copy(S, s); break;
  case ST_REFRESH: check_refresh(S, s); break;
  case ST_EXCHANGE: check_exchange(S, s); break;
  case ST_MIGRATE: check_migrate(S, s); break;
  case ST_MIGRATE_TO: check_migrate_to(S, s); break;
  case ST_ALLREDUCE: check_allreduce(S, s); break;
  case ST_ZERO: check_zero(S, s); break;
  case ST_CALL: check_kernel_call(S, s); break;
  default:
    diag_error(S->cc, s->loc, "this statement belongs inside a map");
    break;
  }
}

/* every K [offset J]: K a positive setup-time integer, 0 <= J < K. */
static void check_cadence(Sema *S, Expr *every, Expr *o, const char *what, const char *owhat) {
  bool kf, jf;
  int64_t k = 0, j = 0;
  double fv;
  bool kok = check_extent_expr(S, every, what);
  bool kc = kok && (every->flags & EXF_CONST) && fold(S, every, &kf, &k, &fv) && !kf;
  if (kc && k < 1 && every->kind != EX_INT) {   /* a literal 0 is check_extent_expr's */
    diag_error(S->cc, every->loc, "%s must be positive (it is %lld)", what, (long long)k);
    kc = false;
  }
  if (!o) return;
  bool jok = o->kind == EX_INT ? (check_expr(S, o), true) : check_extent_expr(S, o, owhat);
  bool jc = jok && (o->flags & EXF_CONST) && fold(S, o, &jf, &j, &fv) && !jf;
  if (jc && j < 0) diag_error(S->cc, o->loc, "%s must not be negative", owhat);
  else if (jc && kc && j >= k)
    diag_error(S->cc, o->loc, "offset %lld of 'every %lld' never matches: it must be below %lld",
               (long long)j, (long long)k, (long long)k);
}

static void check_every(Sema *S, Decl *d) {
  check_cadence(S, d->every, d->every_offset, "the cadence of a step ('every')", "the offset of a step's cadence");
}

/* every K [offset J] { ... } inside a step: the block's statements only on the due calls. */
static void check_every_block(Sema *S, Stmt *s) {
  check_cadence(S, s->value, s->value2, "the cadence of a block ('every')", "the offset of a block's cadence");
  for (Stmt *t = s->body; t; t = t->next) check_stmt(S, t);
}

/* repeat K { ... }: K a positive setup-time integer; the block's statements run K times in
** order. An event recorded inside would be re-recorded before anyone waits for it. */
static void check_repeat(Sema *S, Stmt *s) {
  if (check_extent_expr(S, s->value, "the count of 'repeat'"))
    check_const_positive(S, s->value, "the count of 'repeat'");
  Stmt *outer = S->repeat;
  S->repeat = s;
  for (Stmt *t = s->body; t; t = t->next) check_stmt(S, t);
  S->repeat = outer;
}

/* swap A, B: two fields of the same dtype and shape exchange their buffers. */
static void check_swap(Sema *S, Stmt *s) {
  Decl *x = field_ref(S, &s->a), *y = field_ref(S, &s->b);
  Decl *fs[2] = {x, y};
  Ref *rs[2] = {&s->a, &s->b};
  for (int i = 0; i < 2; i++) {
    if (!fs[i]) continue;
    if (fs[i]->scalar || fs[i]->history_of.name) {
      diag_error(S->cc, rs[i]->loc, "swap exchanges two fields' buffers, but '%s' is a %s", fs[i]->name,
                 fs[i]->scalar ? "scalar" : "history");
      fs[i] = NULL;
    }
    for (Decl *d = S->cc->decls; fs[i] && d; d = d->next)
      if (d->kind == DECL_MIRROR && d->target.decl == fs[i]) {
        diag_error(S->cc, rs[i]->loc, "field '%s' is the device side of mirror '%s' and cannot be swapped",
                   fs[i]->name, d->name);
        fs[i] = NULL;
      }
  }
  x = fs[0];
  y = fs[1];
  if (x && y && x == y) {
    diag_error(S->cc, s->b.loc, "swap of '%s' with itself", x->name);
  } else if (x && y) {
    bool same = x->dtype == y->dtype && x->shape.rank == y->shape.rank;
    for (int i = 0; same && i < x->shape.rank; i++) same = same_extent(x->shape.ext[i], y->shape.ext[i]);
    if (!same)
      diag_error(S->cc, s->b.loc, "swap of '%s' (%s) and '%s' (%s): the fields must have the same dtype "
                 "and shape", x->name, sema_type_text(S->cc, x), y->name, sema_type_text(S->cc, y));
  }
  hz_op(S, HZ_READ, x, &s->a.loc);
  hz_op(S, HZ_WRITE, x, &s->a.loc);
  hz_op(S, HZ_READ, y, &s->b.loc);
  hz_op(S, HZ_WRITE, y, &s->b.loc);
}

/* append N (COUNT) map i[, k] { ... }: COUNT an integer known on the host before the rows
** are written (params, consts, dims); the body is a map over the new rows, i the global row
** (the element index of N's fields), k the row within the new ones. */
static void check_append(Sema *S, Stmt *s) {
  Decl *d = resolve(S, &s->over, K(DECL_DIM));
  DType t = check_expr(S, s->value);
  if (t != DT_VOID && !dtype_is_int(t))
    diag_error(S->cc, s->value->loc, "the number of appended rows must be an integer, not '%s'", dtype_name(t));
  if (!d) return;
  over_expr(S, s);
  s->a.decl = d;
  hz_op(S, HZ_READ, d, &s->over.loc);    /* the live extent: read, then set */
  hz_op(S, HZ_WRITE, d, &s->over.loc);
  S->map = s;
  S->n_macc = 0;
  S->n_red = 0;
  int mark = S->n_scope;
  push_local(S, s->index);
  if (s->let) push_local(S, s->let);
  check_mstmts(S, s->body);
  S->n_scope = mark;
  S->map = NULL;
}

void check_step(Sema *S, Decl *d) {
  S->step = d;
  if (d->stream.name) resolve(S, &d->stream, K(DECL_STREAM));
  hz_op(S, HZ_STEP, d, &d->loc);
  for (int i = 0; i < d->after.n; i++) {
    Decl *e = resolve(S, &d->after.v[i], K(DECL_EVENT));
    hz_op(S, HZ_WAIT, e, &d->after.v[i].loc);
  }
  if (d->every) check_every(S, d);
  for (Stmt *s = d->body; s; s = s->next) check_stmt(S, s);
  S->step = NULL;
}
