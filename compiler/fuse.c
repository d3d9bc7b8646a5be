/*
** fuse.c -- which consecutive maps may become one loop / one kernel.
**
** Two maps over the same extent fuse when running them element by element gives the same
** result as running them one after the other. With element-wise accesses (F[i], F[c, i])
** that always holds. It fails when one map reads or writes, at OTHER elements (a gather or
** a scatter-add), a field that the other map writes: then every element of the first map
** must be finished before the second starts.
*/
#include "gen.h"

#include <string.h>

#define ACC_READ    0x1u    /* element-wise read F[i] */
#define ACC_GATHER  0x2u    /* read at another element F[k[i]] */
#define ACC_WRITE   0x4u    /* element-wise write or update F[i] = / += */
#define ACC_SCATTER 0x8u    /* scatter-add F[k[i]] += */

typedef struct Acc {
  Decl *f;
  unsigned how;
  int line;               /* first access of that kind (for messages) */
} Acc;

typedef struct AccSet {
  Acc *v;                 /* grows in the arena `a` (a map may touch any number of fields) */
  int n, cap;
  Arena *a;
  Decl *only;             /* when set: record that field only (v has room for it) */
} AccSet;

static void acc_add(AccSet *s, Decl *f, unsigned how, int line) {
  if (s->only && f != s->only) return;
  for (int i = 0; i < s->n; i++)
    if (s->v[i].f == f) {
      s->v[i].how |= how;
      return;
    }
  if (s->n == s->cap) {
    int nc = s->cap ? 2 * s->cap : 32;
    Acc *nv = arena_alloc(s->a, sizeof *nv * (size_t)nc);
    if (s->n) memcpy(nv, s->v, sizeof *nv * (size_t)s->n);
    s->v = nv;
    s->cap = nc;
  }
  s->v[s->n++] = (Acc){f, how, line};
}

static unsigned acc_get(const AccSet *s, Decl *f) {
  for (int i = 0; i < s->n; i++)
    if (s->v[i].f == f) return s->v[i].how;
  return 0;
}

/* Field reads of an expression. */
static void acc_expr(AccSet *s, Expr *e) {
  if (!e) return;
  if (e->kind == EX_INDEX && e->ref.decl && e->ref.decl->kind == DECL_FIELD)
    acc_add(s, e->ref.decl, (e->flags & EXF_GATHER) ? ACC_GATHER : ACC_READ, e->loc.line);
  for (int i = 0; i < e->nargs; i++) acc_expr(s, e->args[i]);
}

static void acc_stmts(AccSet *s, Stmt *st) {
  for (; st; st = st->next) {
    switch (st->kind) {
    case ST_LET:
      acc_expr(s, st->value);
      break;
    case ST_ASSIGN:
    case ST_ADD:
      acc_expr(s, st->value);
      if (st->target && st->target->kind == EX_INDEX) {
        Expr *t = st->target;
        for (int i = 0; i < t->nargs; i++) acc_expr(s, t->args[i]);
        if (t->ref.decl && t->ref.decl->kind == DECL_FIELD)
          acc_add(s, t->ref.decl, st->scatter ? ACC_SCATTER : ACC_WRITE, st->loc.line);
      }
      break;
    case ST_REDUCE:
      acc_expr(s, st->value);
      break;
    case ST_IF:
      acc_expr(s, st->value);
      acc_stmts(s, st->body);
      acc_stmts(s, st->else_body);
      break;
    default:
      break;
    }
  }
}

bool gen_stmts_touch(Stmt *s, Decl *f, bool *writes, bool *gathers) {
  Acc one[1];
  AccSet set = {one, 0, 1, NULL, f};
  acc_stmts(&set, s);
  unsigned how = acc_get(&set, f);
  if (writes) *writes = (how & (ACC_WRITE | ACC_SCATTER)) != 0;
  if (gathers) *gathers = (how & (ACC_GATHER | ACC_SCATTER)) != 0;
  return how != 0;
}

/* Reason why `b` cannot join the maps group[0..n), or NULL. */
const char *fuse_check(GenUnit *u, Stmt **group, int n, Stmt *b) {
  Arena *a = &u->cc->arena;
  if (group[0]->over.decl != b->over.decl)
    return arena_printf(a, "it maps over '%s', the kernel over '%s'", b->over.name,
                        group[0]->over.name);
  for (int i = 0; i < n; i++)   /* its partials are combined after the loop (gen_red.c) */
    if (red_stmts(group[i]->body))
      return arena_printf(a, "the kernel reduces into a scalar (line %d): a reduction ends its kernel",
                          group[i]->loc.line);
  AccSet g = {NULL, 0, 0, a, NULL}, m = {NULL, 0, 0, a, NULL};
  for (int i = 0; i < n; i++) acc_stmts(&g, group[i]->body);
  acc_stmts(&m, b->body);
  for (int i = 0; i < g.n; i++) {
    unsigned hg = g.v[i].how, hm = acc_get(&m, g.v[i].f);
    const char *f = g.v[i].f->name;
    if (!hm) continue;
    if ((hg & ACC_SCATTER))
      return arena_printf(a, "it accesses '%s', which the kernel scatter-adds into (line %d)",
                          f, g.v[i].line);
    if ((hg & ACC_WRITE) && (hm & (ACC_GATHER | ACC_SCATTER)))
      return arena_printf(a, "it reads '%s' at other elements, written by the kernel (line %d)",
                          f, g.v[i].line);
    if ((hg & ACC_GATHER) && (hm & (ACC_WRITE | ACC_SCATTER)))
      return arena_printf(a, "it writes '%s', which the kernel reads at other elements (line %d)",
                          f, g.v[i].line);
    if ((hm & ACC_SCATTER))
      return arena_printf(a, "it scatter-adds into '%s', which the kernel accesses (line %d)",
                          f, g.v[i].line);
  }
  return NULL;
}

/*
** Row values of a fused group (the dry first pass of the compact + sort fast path, lower.c):
** every field the group writes is accessed only as F[c..., i] with constant components c and
** the map index i, so that each such element can live in a local for the whole row.
*/
static bool const_int(const Expr *e, int64_t *v) {
  if (e->kind == EX_INT && !dtype_is_float(e->type)) {
    *v = e->ival;
    return true;
  }
  if (e->kind == EX_NAME && e->ref.decl && e->ref.decl->kind == DECL_CONST &&
      dtype_is_int(e->ref.decl->dtype)) {
    *v = e->ref.decl->ival;
    return true;
  }
  return false;
}

/* Number of components of f (product of its leading extents) if they are constants. */
bool fuse_const_ncomp(Decl *f, int64_t *n) { return fuse_const_lead(f, f->shape.rank - 1, n); }

bool fuse_const_lead(Decl *f, int n_lead, int64_t *n) {
  *n = 1;
  for (int d = 0; d < n_lead; d++) {
    int64_t e;
    if (!const_int(f->shape.ext[d], &e)) return false;
    *n *= e;
  }
  return true;
}

bool fuse_row_comp(const Expr *e, int64_t *comp) {
  Decl *f = e->ref.decl;
  *comp = 0;
  for (int d = 0; d + 1 < e->nargs; d++) {
    int64_t c, ext;
    if (!const_int(e->args[d], &c) || !const_int(f->shape.ext[d], &ext)) return false;
    *comp = *comp * ext + c;
  }
  return true;
}

typedef struct RowWalk {
  GenUnit *u;
  RowVals *rv;
  Decl **w;               /* the fields the group writes */
  int nw;
  const char *why;        /* first reason the group's rows cannot be held in locals */
} RowWalk;

static bool row_written(RowWalk *r, Decl *f) {
  for (int i = 0; i < r->nw; i++)
    if (r->w[i] == f) return true;
  return false;
}

/* One access F[args] of a written field: constant components, the map index last. */
static void row_access(RowWalk *r, Expr *e, bool written) {
  Decl *f = e->ref.decl;
  Arena *a = &r->u->cc->arena;
  if (r->why) return;
  int64_t nc, comp = 0;
  if (!fuse_const_ncomp(f, &nc)) {
    r->why = arena_printf(a, "the leading extents of '%s' are not constants", f->name);
    return;
  }
  for (int d = 0; d < e->nargs; d++) {
    Expr *x = e->args[d];
    int64_t c;
    if (d + 1 == e->nargs) {
      if (!(x->kind == EX_NAME && x->ref.local && x->ref.local->is_index)) {
        r->why = arena_printf(a, "'%s' is accessed at another element (line %d)", f->name,
                              e->loc.line);
        return;
      }
    } else if (!const_int(x, &c)) {
      r->why = arena_printf(a, "a component of '%s' is not a constant (line %d)", f->name,
                            e->loc.line);
      return;
    } else {
      int64_t ext = 0;
      (void)const_int(f->shape.ext[d], &ext);
      if (c < 0 || c >= ext) {
        r->why = arena_printf(a, "a component of '%s' is out of range (line %d)", f->name,
                              e->loc.line);
        return;
      }
      comp = comp * ext + c;
    }
  }
  RowVals *rv = r->rv;
  for (int i = 0; i < rv->n; i++)
    if (rv->v[i].f == f && rv->v[i].comp == comp) {
      rv->v[i].written = rv->v[i].written || written;
      rv->v[i].read = rv->v[i].read || !written;
      return;
    }
  if (rv->n == (int)(sizeof rv->v / sizeof rv->v[0])) {
    r->why = "it holds too many field elements per row";
    return;
  }
  rv->v[rv->n++] = (RowVal){f, comp, written, !written};
}

static void row_expr(RowWalk *r, Expr *e) {
  if (!e) return;
  if (e->kind == EX_INDEX && e->ref.decl && e->ref.decl->kind == DECL_FIELD &&
      row_written(r, e->ref.decl))
    row_access(r, e, false);
  for (int i = 0; i < e->nargs; i++) row_expr(r, e->args[i]);
  r->rv->cost += e->kind == EX_CALL ? 8 : 1;
}

static void row_stmts(RowWalk *r, Stmt *s) {
  for (; s; s = s->next) {
    r->rv->cost++;
    row_expr(r, s->value);
    if ((s->kind == ST_ASSIGN || s->kind == ST_ADD) && s->target->kind == EX_INDEX) {
      Expr *t = s->target;
      for (int i = 0; i < t->nargs; i++) row_expr(r, t->args[i]);
      if (s->scatter && !r->why)
        r->why = arena_printf(&r->u->cc->arena, "it scatter-adds into '%s' (line %d)",
                              t->ref.decl->name, s->loc.line);
      row_access(r, t, true);
      if (s->kind == ST_ADD) row_access(r, t, false);       /* F[i] += v reads F[i] */
    }
    row_stmts(r, s->body);
    row_stmts(r, s->else_body);
  }
}

const char *fuse_row_values(GenUnit *u, GenOp *op, RowVals *rv) {
  Decl *w[128];
  int nw = 0;
  memset(rv, 0, sizeof *rv);
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind != DECL_FIELD) continue;
    bool writes = false;
    for (int m = 0; m < op->n_maps; m++) {
      bool wr = false;
      gen_stmts_touch(op->maps[m]->body, d, &wr, NULL);
      writes = writes || wr;
    }
    if (writes) {
      if (nw == (int)(sizeof w / sizeof w[0])) return "it writes too many fields";
      w[nw++] = d;
    }
  }
  RowWalk r = {u, rv, w, nw, NULL};
  for (int m = 0; m < op->n_maps; m++) row_stmts(&r, op->maps[m]->body);
  return r.why;
}
