/*
** sema.c -- semantic checks: names (defined once, before use, "did you mean"), types and
** promotions, shapes and extents, map indexing rules, and the stream-hazard analysis of
** the step graph. Fills Ref.decl/.local, Expr.type/.flags, Decl.ival/.fval/.slots and
** Stmt.scatter.
*/
#include "cnpc.h"

#include <stdlib.h>
#include <ctype.h>
#include <string.h>

#define K(k) (1u << (k))
#define K_VALUE (K(DECL_PARAM) | K(DECL_CONST) | K(DECL_DIM))

/* Order of each declaration in the program (by Decl pointer, via a side table). */
typedef struct Sema {
  Cnp *cc;
  struct SymTab *tab;       /* the global names */
  int pos;                  /* position of the declaration being checked */
  Decl *step;               /* step being checked */
  Stmt *map;                /* map being checked (NULL outside) */
  int n_draws;              /* random draws (uniform, normal) numbered so far, source order */
  Stmt *repeat;             /* innermost repeat block being checked (NULL outside) */
  Local **scope;            /* map locals in scope (index + lets), innermost last */
  int n_scope, cap_scope;
  bool mpi_names;           /* `rank` and `size` are visible (exchange expressions) */
  struct MapAcc *macc;      /* field accesses of the current map, one per (field, kind) */
  int n_macc, cap_macc;
  /* hazard ops, in program order: a list of arena chunks (no copying as it grows) */
  struct HzChunk *ops, *ops_tail;
  Stmt **kcall;             /* first call of each kernel (by index): it fixes the C prototype */
  struct SemaRed { Decl *f; int op; Loc loc; } red[64];   /* reductions of the current map */
  int n_red;
} Sema;

typedef enum { HZ_READ, HZ_WRITE, HZ_RECORD, HZ_WAIT, HZ_STEP } HzKind;
typedef struct HzOp {
  Decl *obj;                /* field/plan/snapshot/mirror, or the event; the step for HZ_STEP */
  const Loc *loc;           /* in the AST (arena) */
  HzKind kind;
} HzOp;

enum { HZ_CHUNK = 4096 };
typedef struct HzChunk {
  struct HzChunk *next;
  int n;
  HzOp v[HZ_CHUNK];
} HzChunk;

/* for (each op o in program order) -- `continue` works, `break` only leaves a chunk */
#define FOR_OPS(S, o) \
  for (HzChunk *c_ = (S)->ops; c_; c_ = c_->next) \
    for (HzOp *o = c_->v, *o##_end = c_->v + c_->n; o < o##_end; o++)

/* ------------------------------------------------------------------ symbol table */

/*
** Names are interned (ast_str), so the tables are keyed by the name's pointer: open
** addressing, no string hashing or comparison. Lookups never depend on table order.
*/
typedef Sym SymX;
typedef struct SymTab {
  Sym *v;
  unsigned mask;            /* capacity - 1 (a power of two) */
} SymTab;

static unsigned hash_ptr(const char *p) {
  uint64_t x = (uint64_t)(uintptr_t)p >> 4;   /* arena strings are 16-byte aligned */
  return (unsigned)((x * UINT64_C(0x9E3779B97F4A7C15)) >> 32);
}

static SymX *tab_find(const SymTab *t, const char *name) {
  if (!t->v || !name) return NULL;
  for (unsigned k = hash_ptr(name) & t->mask;; k = (k + 1) & t->mask) {
    Sym *s = &t->v[k];
    if (s->name == name) return s;
    if (!s->name) return NULL;
  }
}

static void tab_add(SymTab *t, Decl *d, int pos) {
  unsigned k = hash_ptr(d->name) & t->mask;
  while (t->v[k].name) k = (k + 1) & t->mask;
  t->v[k] = (Sym){d->name, d, pos};
}

static SymX *sym_find(Sema *S, const char *name) { return tab_find(S->tab, name); }

Decl *sema_lookup(Cnp *cc, const char *name) {
  SymTab t = {cc->symtab, (unsigned)cc->symtab_cap - 1};
  SymX *s = cc->symtab ? tab_find(&t, ast_intern_find(cc, name, strlen(name))) : NULL;
  return s ? s->decl : NULL;
}

/* ------------------------------------------------------------------ name resolution */

static const char *kind_list(unsigned mask) {
  if (mask == K(DECL_FIELD)) return "field";
  if (mask == K(DECL_STREAM)) return "stream";
  if (mask == K(DECL_EVENT)) return "event";
  if (mask == K(DECL_SNAPSHOT)) return "snapshot";
  if (mask == K(DECL_MPI)) return "mpi staging";
  if (mask == K(DECL_MIRROR)) return "mirror";
  if (mask == K(DECL_PLAN)) return "plan";
  if (mask == K(DECL_KERNEL)) return "kernel";
  if (mask == K(DECL_DIM)) return "dim";
  return "name";
}

/*
** The closest declared name (of the wanted kinds, and map locals in scope) within a
** small edit distance, or NULL.
*/
static const char *suggest(Sema *S, const char *name, unsigned mask, bool locals) {
  int len = (int)strlen(name);
  int cap = (len + 2) / 3;
  if (cap >= len) cap = len - 1;     /* never suggest replacing the whole name */
  if (cap > 3) cap = 3;
  if (cap < 1) return NULL;
  const char *best = NULL;
  int best_d = cap + 1;
  if (locals)
    for (int i = S->n_scope - 1; i >= 0; i--) {
      int d = diag_edit_distance(name, S->scope[i]->name, cap);
      if (d < best_d) best_d = d, best = S->scope[i]->name;
    }
  for (Decl *d = S->cc->decls; d; d = d->next) {
    if (!d->name || !(mask & K(d->kind))) continue;
    int dist = diag_edit_distance(name, d->name, cap);
    if (dist < best_d) best_d = dist, best = d->name;
  }
  if (S->mpi_names) {
    static const char *const mpi[] = {"rank", "size"};
    for (int i = 0; i < 2; i++) {
      int d = diag_edit_distance(name, mpi[i], cap);
      if (d < best_d) best_d = d, best = mpi[i];
    }
  }
  return best;
}

static void unknown(Sema *S, Ref *r, unsigned mask, bool locals) {
  const char *s = suggest(S, r->name, mask, locals);
  if (s) diag_error(S->cc, r->loc, "unknown %s '%s'; did you mean '%s'?", kind_list(mask), r->name, s);
  else diag_error(S->cc, r->loc, "unknown %s '%s'", kind_list(mask), r->name);
}

static const char *article(DeclKind k) {
  return (k == DECL_EVENT || k == DECL_IMPORT || k == DECL_MPI) ? "an" : "a";
}

/*
** Resolve a global reference that must be one of the kinds in `mask`. Reports unknown
** names, names used before their definition, and names of the wrong kind.
*/
static Decl *resolve_found(Sema *S, Ref *r, SymX *s, unsigned mask) {
  if (!s) {
    unknown(S, r, mask, false);
    return NULL;
  }
  if (s->pos >= S->pos) {
    diag_error(S->cc, r->loc, "'%s' is used before its definition", r->name);
    diag_note(S->cc, s->decl->loc, "'%s' is defined here", r->name);
    return NULL;
  }
  if (!(mask & K(s->decl->kind))) {
    diag_error(S->cc, r->loc, "'%s' is %s %s, not %s %s", r->name, article(s->decl->kind),
               decl_kind_name(s->decl->kind), mask == K_VALUE ? "a" : article(DECL_FIELD),
               mask == K_VALUE ? "value" : kind_list(mask));
    diag_note(S->cc, s->decl->loc, "'%s' is declared here", r->name);
    return NULL;
  }
  r->decl = s->decl;
  return s->decl;
}

static Decl *resolve(Sema *S, Ref *r, unsigned mask) {
  if (!r->name) return NULL;
  return resolve_found(S, r, sym_find(S, r->name), mask);
}

static Local *find_local(Sema *S, const char *name) {   /* names are interned */
  for (int i = S->n_scope - 1; i >= 0; i--)
    if (S->scope[i]->name == name) return S->scope[i];
  return NULL;
}

static void push_local(Sema *S, Local *l) {
  Local *prev = find_local(S, l->name);
  SymX *g0;
  if (prev) {
    diag_error(S->cc, l->loc, "redefinition of '%s'", l->name);
    diag_note(S->cc, prev->loc, "previous definition is here");
  } else if ((g0 = sym_find(S, l->name)) && g0->pos < S->pos) {
    Decl *g = g0->decl;
    diag_error(S->cc, l->loc, "'%s' shadows %s %s", l->name, article(g->kind), decl_kind_name(g->kind));
    diag_note(S->cc, g->loc, "'%s' is declared here", l->name);
  }
  if (S->n_scope == S->cap_scope) {
    S->cap_scope = S->cap_scope ? 2 * S->cap_scope : 16;
    Local **v = arena_alloc(&S->cc->arena, sizeof *v * (size_t)S->cap_scope);
    if (S->n_scope) memcpy(v, S->scope, sizeof *v * (size_t)S->n_scope);
    S->scope = v;
  }
  S->scope[S->n_scope++] = l;
}

/* ------------------------------------------------------------------ hazard ops */

static void op(Sema *S, HzKind k, Decl *obj, const Loc *loc) {
  if (!obj) return;
  HzChunk *c = S->ops_tail;
  if (!c || c->n == HZ_CHUNK) {
    c = arena_alloc(&S->cc->arena, sizeof *c);
    if (S->ops_tail) S->ops_tail->next = c;
    else S->ops = c;
    S->ops_tail = c;
  }
  c->v[c->n++] = (HzOp){obj, loc, k};
}

/* ------------------------------------------------------------------ races inside a map */

/* How a map touches a field element. */
enum { MA_READ, MA_GATHER, MA_STORE, MA_ADD, MA_SCATTER, MA_REDUCE, MA__COUNT };
typedef struct MapAcc {
  Decl *f;
  int kind;
  Loc loc;
} MapAcc;

static const char *const macc_what[MA__COUNT] = {
  "read", "gathered", "written", "updated", "scatter-added", "reduced",
};

/*
** Two accesses of one field in one map race when one touches other elements than its own
** (a gather or a scatter-add) while the other writes, or reads while scatter-adds happen.
*/
static bool macc_conflict(int a, int b) {
  if (a > b) { int t = a; a = b; b = t; }
  if (b == MA_REDUCE) return a == MA_READ;
  if (b == MA_SCATTER) return a != MA_SCATTER;
  return a == MA_GATHER && (b == MA_STORE || b == MA_ADD);
}

static void map_access(Sema *S, Decl *f, int kind, Loc loc) {
  for (int i = 0; i < S->n_macc; i++) {
    MapAcc *m = &S->macc[i];
    if (m->f != f) continue;
    if (m->kind == kind) return;
    if (macc_conflict(m->kind, kind) && f->scalar) {
      diag_error(S->cc, loc, "scalar '%s' is %s here and %s elsewhere in the same map: a map cannot "
                 "read the scalar it reduces into (read it in a later map)", f->name, macc_what[kind],
                 macc_what[m->kind]);
      diag_note(S->cc, m->loc, "'%s' is %s here", f->name, macc_what[m->kind]);
      return;
    }
    if (macc_conflict(m->kind, kind)) {
      diag_error(S->cc, loc, "field '%s' is %s here and %s elsewhere in the same map: the result "
                 "would depend on the order of elements", f->name, macc_what[kind], macc_what[m->kind]);
      diag_note(S->cc, m->loc, "'%s' is %s here", f->name, macc_what[m->kind]);
      return;
    }
  }
  if (S->n_macc == S->cap_macc) {
    S->cap_macc = S->cap_macc ? 2 * S->cap_macc : 16;
    MapAcc *v = arena_alloc(&S->cc->arena, sizeof *v * (size_t)S->cap_macc);
    if (S->n_macc) memcpy(v, S->macc, sizeof *v * (size_t)S->n_macc);
    S->macc = v;
  }
  S->macc[S->n_macc++] = (MapAcc){f, kind, loc};
}

/* ------------------------------------------------------------------ types */

static bool is_num(DType t) { return dtype_is_int(t) || dtype_is_float(t) || dtype_is_complex(t); }

/* The complex type holding values of type t: c64 for f16, f32 and c64, else c128. */
static DType complex_of(DType t) { return t == DT_F16 || t == DT_F32 || t == DT_C64 ? DT_C64 : DT_C128; }

/* Promote two numeric operand types (literals adapt to the other side); the generator
** converts operands with the same rule (cnpc.h). */
DType sema_promote(const Expr *a, const Expr *b) {
  DType x = a->type, y = b->type;
  bool ua = a->flags & EXF_UNTYPED, ub = b->flags & EXF_UNTYPED;
  if (ua && !ub && dtype_is_complex(x)) return complex_of(y);   /* complex(1.0, 2.0) * y */
  if (ub && !ua && dtype_is_complex(y)) return complex_of(x);
  if (ua && !ub) {
    if (x == DT_F64 && dtype_is_int(y)) return DT_F64;
    return y;
  }
  if (ub && !ua) {
    if (y == DT_F64 && dtype_is_int(x)) return DT_F64;
    return x;
  }
  if ((x == DT_C64 && y == DT_F64) || (y == DT_C64 && x == DT_F64)) return DT_C128;
  return x > y ? x : y;
}

/* May a value of type `from` (with flags) be stored into `to` without a cast? */
static bool assignable(DType to, DType from, unsigned flags) {
  if (to == from) return true;
  if (to == DT_BOOL || from == DT_BOOL) return false;
  if (flags & EXF_UNTYPED) {
    if (dtype_is_complex(from)) return dtype_is_complex(to);
    if (dtype_is_int(from)) return true;
    return !dtype_is_int(to);
  }
  if (dtype_is_int(from)) {
    if (dtype_is_int(to)) return (from == DT_I32 && to == DT_I64);
    return true;
  }
  if (dtype_is_float(from)) {
    if (dtype_is_float(to)) return to > from;
    if (dtype_is_complex(to)) return to == DT_C128 || from != DT_F64;
    return false;
  }
  return from == DT_C64 && to == DT_C128;
}

static DType real_of(DType t) { return t == DT_C64 ? DT_F32 : t == DT_C128 ? DT_F64 : t; }

/* An integer literal, possibly negated or combined with + - * of literals (no division). */
static bool int_literal_tree(const Expr *e) {
  switch (e->kind) {
  case EX_INT: return true;
  case EX_UNARY: return e->op == OP_NEG && int_literal_tree(e->args[0]);
  case EX_BINARY:
    return (e->op == OP_ADD || e->op == OP_SUB || e->op == OP_MUL) && int_literal_tree(e->args[0]) &&
           int_literal_tree(e->args[1]);
  default: return false;
  }
}

static bool fold(Sema *S, const Expr *e, bool *is_float, int64_t *iv, double *fv);

/* A literal adapts to the integer type it is stored into; its value must fit there
** (`k[i] = 3000000000;` into i32, or `u[i] = -1;`, would silently change the value). */
static void check_literal_fits(Sema *S, Loc loc, DType to, const Expr *v) {
  if (!dtype_is_int(to) || !(v->flags & EXF_UNTYPED) || !dtype_is_int(v->type) || !int_literal_tree(v))
    return;
  bool fl;
  int64_t iv;
  double fv;
  if (v->type == DT_U64 && v->kind == EX_INT) {   /* above INT64_MAX: only u64 holds it */
    if (to != DT_U64)
      diag_error(S->cc, loc, "integer constant %llu does not fit in '%s' (write %s(...) to convert it)",
                 (unsigned long long)v->uval, dtype_name(to), dtype_name(to));
    return;
  }
  if (v->type == DT_U64 || !fold(S, v, &fl, &iv, &fv) || fl) return;
  if ((to == DT_I32 && (iv < INT32_MIN || iv > INT32_MAX)) || (to == DT_U64 && iv < 0))
    diag_error(S->cc, loc, "integer constant %lld does not fit in '%s' (write %s(...) to convert it)",
               (long long)iv, dtype_name(to), dtype_name(to));
}

/* The untyped integer literal of a binary operation adapts to the other operand's integer
** type t and must fit it (`u < -3` with u : u64 would compare with 2^64 - 3). */
static void operand_literals_fit(Sema *S, const Expr *a, const Expr *b, DType t) {
  if (!dtype_is_int(t)) return;
  bool ua = a->flags & EXF_UNTYPED, ub = b->flags & EXF_UNTYPED;
  if (ua && !ub) check_literal_fits(S, a->loc, t, a);
  if (ub && !ua) check_literal_fits(S, b->loc, t, b);
}

static void check_assign_type(Sema *S, Loc loc, DType to, const Expr *v, const char *what) {
  if (v->type == DT_VOID || to == DT_VOID) return;
  if (!assignable(to, v->type, v->flags) && dtype_is_complex(v->type) && !dtype_is_complex(to))
    diag_error(S->cc, loc, "cannot store '%s' into %s of type '%s': a complex value becomes real "
               "only through real(...), imag(...) or abs(...)", dtype_name(v->type), what, dtype_name(to));
  else if (!assignable(to, v->type, v->flags))
    diag_error(S->cc, loc, "cannot store '%s' into %s of type '%s' without a cast (write %s(...))",
               dtype_name(v->type), what, dtype_name(to), dtype_name(to));
  else
    check_literal_fits(S, v->loc, to, v);
}

static DType check_expr(Sema *S, Expr *e);

static bool is_index_of_map(Sema *S, const Expr *e) {
  return S->map && e->kind == EX_NAME && e->ref.local == S->map->index;
}

/* Two extents are the same when they name the same declaration or are equal constants. */
static bool same_extent(const Expr *a, const Expr *b) {
  if (!a || !b) return false;
  if (a->kind == EX_NAME && b->kind == EX_NAME) {
    if (a->ref.decl && a->ref.decl == b->ref.decl) return true;
    if (a->ref.decl && b->ref.decl && a->ref.decl->kind == DECL_CONST && b->ref.decl->kind == DECL_CONST)
      return a->ref.decl->ival == b->ref.decl->ival;
  }
  if (a->kind != b->kind || a->nargs != b->nargs || a->op != b->op) {
    bool ca = a->kind == EX_INT || (a->kind == EX_NAME && a->ref.decl && a->ref.decl->kind == DECL_CONST);
    bool cb = b->kind == EX_INT || (b->kind == EX_NAME && b->ref.decl && b->ref.decl->kind == DECL_CONST);
    if (ca && cb) {
      int64_t x = a->kind == EX_INT ? a->ival : a->ref.decl->ival;
      int64_t y = b->kind == EX_INT ? b->ival : b->ref.decl->ival;
      return x == y;
    }
    return false;
  }
  if (a->kind == EX_INT) return a->ival == b->ival;
  if (a->kind == EX_BINARY) return same_extent(a->args[0], b->args[0]) && same_extent(a->args[1], b->args[1]);
  return false;
}

/* When extent `ext` is `over + c` (or `c + over`, or both are constants), c a non-negative
** integer constant: c (0 when they are the same); otherwise -1. The map index k < over is
** then in bounds. */
static int64_t extent_margin(Sema *S, const Expr *ext, const Expr *over) {
  if (same_extent(ext, over)) return 0;
  if (!ext || !over) return -1;
  bool ef, of;
  int64_t ev, ov;
  double ed, od;
  bool over_const = (over->flags & EXF_CONST) ||
                    (over->kind == EX_NAME && over->ref.decl && over->ref.decl->kind == DECL_CONST);
  if ((ext->flags & EXF_CONST) && over_const && fold(S, ext, &ef, &ev, &ed) &&
      fold(S, over, &of, &ov, &od) && !ef && !of)
    return ev >= ov ? ev - ov : -1;   /* two constants: 9 over 8 */
  if (ext->kind != EX_BINARY || ext->op != OP_ADD) return -1;
  for (int side = 0; side < 2; side++) {
    const Expr *c = ext->args[1 - side];
    bool isf;
    int64_t v;
    double d;
    if (same_extent(ext->args[side], over) && (c->flags & EXF_CONST) && fold(S, c, &isf, &v, &d) && !isf && v >= 0)
      return v;
  }
  return -1;
}

/* Text of an extent for messages ("N", "n_cells + 1", "3"). */
static void extent_text(char *buf, size_t n, const Expr *e) {
  if (e->kind == EX_INT) snprintf(buf, n, "%lld", (long long)e->ival);
  else if (e->kind == EX_NAME) snprintf(buf, n, "%s", e->ref.name);
  else if (e->kind == EX_BINARY) {
    size_t k;
    extent_text(buf, n, e->args[0]);
    k = strlen(buf);
    if (k + 4 < n) {
      snprintf(buf + k, n - k, " %s ", op_text(e->op));
      k = strlen(buf);
      extent_text(buf + k, n - k, e->args[1]);
    }
  } else snprintf(buf, n, "?");
}

static const Expr *last_extent(const Decl *f) {
  return f && f->shape.rank > 0 ? f->shape.ext[f->shape.rank - 1] : NULL;
}

/* The dim whose live extent f's rows follow (its last extent), or NULL. */
static Decl *dim_of(const Decl *f) {
  if (!f) return NULL;
  const Expr *e = last_extent(f);
  return e->kind == EX_NAME && e->ref.decl && e->ref.decl->kind == DECL_DIM ? e->ref.decl : NULL;
}

/* "f64[3, N]" for messages. */
const char *sema_type_text(Cnp *cc, const Decl *f) {
  char buf[256];
  size_t k = (size_t)snprintf(buf, sizeof buf, "%s[", dtype_name(f->dtype));
  for (int i = 0; i < f->shape.rank && k + 8 < sizeof buf; i++) {
    if (i) k += (size_t)snprintf(buf + k, sizeof buf - k, ", ");
    extent_text(buf + k, sizeof buf - k, f->shape.ext[i]);
    k = strlen(buf);
  }
  if (k + 2 < sizeof buf) strcat(buf, "]");
  return arena_strndup(&cc->arena, buf, strlen(buf));
}

/*
** Field element access F[a, ..., k]. `write` 0 read, 1 '=' store, 2 '+=' update.
*/
static DType check_index(Sema *S, Expr *e, int write) {
  for (int i = 0; i < e->nargs; i++) {
    DType t = check_expr(S, e->args[i]);
    if (t != DT_VOID && !dtype_is_int(t))
      diag_error(S->cc, e->args[i]->loc, "index must be an integer, not '%s'", dtype_name(t));
  }
  if (find_local(S, e->ref.name)) {
    diag_error(S->cc, e->ref.loc, "'%s' is a local value and cannot be indexed", e->ref.name);
    return DT_VOID;
  }
  Decl *f = resolve(S, &e->ref, K(DECL_FIELD));
  if (!f) return DT_VOID;
  e->type = f->dtype;
  if (f->scalar) {
    diag_error(S->cc, e->loc, "scalar '%s' is not indexed: read it as '%s', set it in a map with "
               "'%s += ...', '%s min= ...' or '%s max= ...'", f->name, f->name, f->name, f->name, f->name);
    return DT_VOID;
  }
  if (f->history_of.name) {
    diag_error(S->cc, e->loc, "history '%s' is read after the steps through %s_history(), not in a map",
               f->name, S->cc->pipeline ? S->cc->pipeline->name : "NAME");
    return DT_VOID;
  }
  if (e->nargs != f->shape.rank) {
    diag_error(S->cc, e->loc, "field '%s' has %d dimension%s but is indexed with %d",
               f->name, f->shape.rank, f->shape.rank == 1 ? "" : "s", e->nargs);
    diag_note(S->cc, f->loc, "'%s' is declared here", f->name);
    return e->type;
  }
  Expr *last = e->args[e->nargs - 1];
  if (is_index_of_map(S, last)) {
    const Expr *over = S->map->over.decl ? S->map->over_expr : NULL;
    int64_t margin = same_extent(last_extent(f), over) ? 0 : extent_margin(S, last_extent(f), over);
    if (margin > 0 && write == 0) {
      e->flags |= EXF_GATHER;   /* off[k] of off : i64[n + 1] in a map over n: k < n < n + 1 */
    } else if (margin != 0) {
      char a[128];
      extent_text(a, sizeof a, last_extent(f));
      diag_error(S->cc, last->loc, "field '%s' has extent '%s', but '%s' runs over '%s'%s",
                 f->name, a, last->ref.name, S->map->over.name,
                 margin > 0 ? " (a read may index a larger extent with the map index; a store may not)" : "");
      diag_note(S->cc, f->loc, "'%s' is declared here", f->name);
    }
  } else {
    e->flags |= EXF_GATHER;
    if (write == 1 && last->type != DT_VOID) {   /* (an index already reported stays quiet) */
      diag_error(S->cc, last->loc, "a store must use the map index as the element index "
                 "(use '+=' for a scatter-add)");
      for (int i = 0; i + 1 < e->nargs; i++)
        if (is_index_of_map(S, e->args[i])) {   /* r[i, 1] of a row-major r : f64[N, 3] */
          diag_note(S->cc, f->loc, "the element index is the last one: declare '%s' with '%s' as its "
                    "last extent (component-major, f64[3, N]) and write %s[c, %s]", f->name,
                    S->map->over.name, f->name, e->args[i]->ref.name);
          break;
        }
    }
  }
  for (int i = 0; i + 1 < e->nargs; i++) {
    Expr *x = e->args[i], *ext = f->shape.ext[i];
    bool xf, ef;
    int64_t xv, ev;
    double xd, ed;
    if (!(x->flags & EXF_CONST) || !dtype_is_int(x->type) || !fold(S, x, &xf, &xv, &xd) || xf) continue;
    bool ext_known = (ext->flags & EXF_CONST) && fold(S, ext, &ef, &ev, &ed) && !ef;
    if (xv < 0 && !ext_known)
      diag_error(S->cc, x->loc, "component index %lld is out of range for '%s'", (long long)xv, f->name);
    else if (ext_known && (xv < 0 || xv >= ev))
      diag_error(S->cc, x->loc, "component index %lld is out of range for extent %lld of '%s'",
                 (long long)xv, (long long)ev, f->name);
  }
  if (S->step) op(S, write ? HZ_WRITE : HZ_READ, f, &e->loc);
  bool gather = e->flags & EXF_GATHER;
  map_access(S, f, write == 0 ? (gather ? MA_GATHER : MA_READ)
                   : write == 1 ? MA_STORE : (gather ? MA_SCATTER : MA_ADD), e->loc);
  if (write == 2) op(S, HZ_READ, f, &e->loc);
  return e->type;
}

static DType check_name(Sema *S, Expr *e) {
  Local *l = find_local(S, e->ref.name);
  if (l) {
    e->ref.local = l;
    e->type = l->type;
    return e->type;
  }
  if (S->mpi_names && (!strcmp(e->ref.name, "rank") || !strcmp(e->ref.name, "size")) && !sym_find(S, e->ref.name)) {
    e->type = DT_I32;
    return e->type;
  }
  SymX *s = sym_find(S, e->ref.name);
  if (!s) {
    unknown(S, &e->ref, K_VALUE | K(DECL_FIELD), S->map != NULL);
    return DT_VOID;
  }
  if (s->decl->kind == DECL_FIELD && s->decl->scalar && s->pos < S->pos) {
    Decl *f = s->decl;
    e->ref.decl = f;
    e->type = f->dtype;
    if (!S->map) {
      diag_error(S->cc, e->loc, "scalar '%s' can be read only inside a map", f->name);
      return DT_VOID;
    }
    if (S->step) op(S, HZ_READ, f, &e->loc);
    map_access(S, f, MA_READ, e->loc);
    return e->type;
  }
  if (s->decl->kind == DECL_FIELD && s->pos < S->pos) {
    diag_error(S->cc, e->loc, "field '%s' must be indexed (for example '%s[i]')", e->ref.name, e->ref.name);
    return DT_VOID;
  }
  Decl *d = resolve_found(S, &e->ref, s, K_VALUE);
  if (!d) return DT_VOID;
  switch (d->kind) {
  case DECL_PARAM:
    e->type = d->dtype;
    if (d->setup) e->flags |= EXF_SETUP;
    break;
  case DECL_CONST:
    e->type = d->dtype;
    e->flags |= EXF_CONST | EXF_SETUP;
    break;
  default: /* DECL_DIM: its extent */
    e->type = DT_I64;
    e->flags |= EXF_SETUP;
    break;
  }
  return e->type;
}

static DType check_call(Sema *S, Expr *e) {
  for (int i = 0; i < e->nargs; i++) check_expr(S, e->args[i]);
  if (e->builtin == BI_NONE) {
    static const unsigned none = 0;
    int cap = (int)strlen(e->ref.name) / 3 + 1;
    const char *best = NULL;
    int best_d = cap + 1;
    for (int b = 1; b < BI__COUNT; b++) {
      int d = diag_edit_distance(e->ref.name, builtin_name((Builtin)b), cap);
      if (d < best_d) best_d = d, best = builtin_name((Builtin)b);
    }
    (void)none;
    const char *cast = ast_foreign_type(e->ref.name, (int)strlen(e->ref.name));
    if (cast) diag_error(S->cc, e->ref.loc, "unknown function '%s'; a conversion is a cast to a cnp type: "
                         "'%s(...)'", e->ref.name, cast);
    else if (best) diag_error(S->cc, e->ref.loc, "unknown function '%s'; did you mean '%s'?", e->ref.name, best);
    else diag_error(S->cc, e->ref.loc, "unknown function '%s'", e->ref.name);
    return DT_VOID;
  }
  int want = builtin_arity(e->builtin);
  if (e->nargs != want) {
    diag_error(S->cc, e->loc, "'%s' takes %d argument%s, not %d", builtin_name(e->builtin), want,
               want == 1 ? "" : "s", e->nargs);
    return DT_VOID;
  }
  for (int i = 0; i < e->nargs; i++)
    if (e->args[i]->type == DT_VOID) return DT_VOID;
  switch (e->builtin) {
  case BI_STEP_INDEX:   /* the step counter: a kernel argument */
    if (!S->map) {
      diag_error(S->cc, e->loc, "'step_index()' can only be used inside a map");
      return DT_VOID;
    }
    e->type = DT_I64;
    return e->type;
  case BI_UNIFORM: case BI_NORMAL: case BI_UNIFORM_F32: case BI_NORMAL_F32:
    /* Philox draws keyed by (seed, step counter, row, draw number): docs/language.md */
    if (!S->map) {
      diag_error(S->cc, e->loc, "'%s' can only be drawn inside a map (a draw is keyed by the row)",
                 builtin_name(e->builtin));
      return DT_VOID;
    }
    if (!dtype_is_int(e->args[0]->type)) {
      diag_error(S->cc, e->args[0]->loc, "the seed of '%s' must be an integer, not '%s'",
                 builtin_name(e->builtin), dtype_name(e->args[0]->type));
      return DT_VOID;
    }
    e->ival = S->n_draws++;   /* the draw number: this call's place in the pipeline */
    e->type = e->builtin == BI_UNIFORM || e->builtin == BI_NORMAL ? DT_F64 : DT_F32;
    return e->type;
  default:
    break;
  }
  unsigned cf = EXF_CONST;
  for (int i = 0; i < e->nargs; i++) cf &= e->args[i]->flags;
  Expr *a = e->args[0];
  switch (e->builtin) {
  case BI_SELECT: {
    Expr *x = e->args[1], *y = e->args[2];
    if (a->type != DT_BOOL)
      diag_error(S->cc, a->loc, "the condition of 'select' must be bool, not '%s'", dtype_name(a->type));
    if ((x->type == DT_BOOL) != (y->type == DT_BOOL)) {
      diag_error(S->cc, e->loc, "'select' mixes '%s' and '%s'", dtype_name(x->type), dtype_name(y->type));
      return DT_VOID;
    }
    e->type = x->type == DT_BOOL ? DT_BOOL : sema_promote(x, y);
    if (e->type != DT_BOOL) operand_literals_fit(S, x, y, e->type);
    if ((x->flags & EXF_UNTYPED) && (y->flags & EXF_UNTYPED)) e->flags |= EXF_UNTYPED;
    return e->type;
  }
  default:
    break;
  }
  for (int i = 0; i < e->nargs; i++)
    if (!is_num(e->args[i]->type)) {
      diag_error(S->cc, e->args[i]->loc, "'%s' needs a number, not '%s'", builtin_name(e->builtin),
                 dtype_name(e->args[i]->type));
      return DT_VOID;
    }
  if (e->builtin == BI_COMPLEX) {
    /* complex(re, im): c64 when the parts promote to f16/f32, else c128; two literals make
    ** an untyped complex value that adapts to the other operand like a literal */
    for (int i = 0; i < 2; i++)
      if (dtype_is_complex(e->args[i]->type)) {
        diag_error(S->cc, e->args[i]->loc, "the %s part given to 'complex' must be real, not '%s'",
                   i ? "imaginary" : "real", dtype_name(e->args[i]->type));
        return DT_VOID;
      }
    e->type = complex_of(sema_promote(a, e->args[1]));
    if ((a->flags & EXF_UNTYPED) && (e->args[1]->flags & EXF_UNTYPED)) e->flags |= EXF_UNTYPED;
    return e->type;
  }
  DType t = e->nargs == 2 ? sema_promote(a, e->args[1]) : a->type;
  if (e->nargs == 2) operand_literals_fit(S, a, e->args[1], t);
  if (e->nargs == 1 && (a->flags & EXF_UNTYPED)) e->flags |= EXF_UNTYPED;
  switch (e->builtin) {
  case BI_MIN: case BI_MAX: case BI_FLOOR: case BI_CEIL: case BI_FMOD: case BI_ATAN2:
  case BI_TANH: case BI_SINH: case BI_COSH: case BI_ERF: case BI_ROUND: case BI_TRUNC:
  case BI_ISNAN: case BI_ISFINITE:
    if (dtype_is_complex(t)) {
      diag_error(S->cc, e->loc, "'%s' is not defined for complex values", builtin_name(e->builtin));
      return DT_VOID;
    }
    break;
  default: break;
  }
  switch (e->builtin) {
  case BI_MIN: case BI_MAX: e->type = t; break;
  case BI_ABS: case BI_REAL: case BI_IMAG: e->type = real_of(t); break;   /* real x: x's type */
  case BI_CONJ: e->type = t; break;
  case BI_ISNAN: case BI_ISFINITE: e->type = DT_BOOL; e->flags &= ~(unsigned)EXF_UNTYPED; break;
  case BI_ARG: e->type = real_of(t) == DT_F16 || real_of(t) == DT_F32 ? real_of(t) : DT_F64; break;
  default: e->type = dtype_is_int(t) ? DT_F64 : t; break;
  }
  (void)cf;
  return e->type;
}

/*
** Type an expression; sets e->type (DT_VOID after an error, which silences follow-ups).
*/
static DType check_expr(Sema *S, Expr *e) {
  switch (e->kind) {
  case EX_INT:
    e->type = e->uval > (uint64_t)INT64_MAX ? DT_U64 : DT_I64;
    e->flags |= EXF_CONST | EXF_SETUP | EXF_UNTYPED;
    return e->type;
  case EX_FLOAT:
    e->type = DT_F64;
    e->flags |= EXF_CONST | EXF_SETUP | EXF_UNTYPED;
    return e->type;
  case EX_BOOL:
    e->type = DT_BOOL;
    e->flags |= EXF_CONST | EXF_SETUP;
    return e->type;
  case EX_NAME:
    return check_name(S, e);
  case EX_INDEX:
    if (!S->map) {
      diag_error(S->cc, e->loc, "field elements can only be used inside a map");
      return DT_VOID;
    }
    return check_index(S, e, 0);
  case EX_CALL:
    return check_call(S, e);
  case EX_CAST: {
    DType t = check_expr(S, e->args[0]);
    e->flags |= e->args[0]->flags & (EXF_CONST | EXF_SETUP);
    if (t != DT_VOID && dtype_is_complex(t) && !dtype_is_complex(e->cast_to)) {
      diag_error(S->cc, e->loc, "cannot cast complex '%s' to '%s' (use real(), imag() or abs())", dtype_name(t), dtype_name(e->cast_to));
      return DT_VOID;
    }
    e->type = e->cast_to;
    return e->type;
  }
  case EX_UNARY: {
    Expr *a = e->args[0];
    DType t = check_expr(S, a);
    if (t == DT_VOID) return DT_VOID;
    e->flags |= a->flags & (EXF_CONST | EXF_SETUP | EXF_UNTYPED);
    if (e->op == OP_NOT) {
      if (t != DT_BOOL) {
        diag_error(S->cc, e->loc, "'!' needs a bool operand, not '%s'", dtype_name(t));
        return DT_VOID;
      }
    } else if (e->op == OP_BNOT) {
      if (!dtype_is_int(t)) {
        diag_error(S->cc, e->loc, "'~' needs an integer operand, not '%s'%s", dtype_name(t),
                   t == DT_BOOL ? " (logical not is '!')" : "");
        return DT_VOID;
      }
    } else if (!is_num(t)) {
      diag_error(S->cc, e->loc, "'-' needs a number, not '%s'", dtype_name(t));
      return DT_VOID;
    } else if (t == DT_U64) {
      diag_error(S->cc, e->loc, "cannot negate an unsigned value");
      return DT_VOID;
    }
    e->type = t;
    return t;
  }
  case EX_BINARY: {
    Expr *a = e->args[0], *b = e->args[1];
    DType x = check_expr(S, a), y = check_expr(S, b);
    if (x == DT_VOID || y == DT_VOID) return DT_VOID;
    e->flags |= a->flags & b->flags & (EXF_CONST | EXF_SETUP | EXF_UNTYPED);
    switch (e->op) {
    case OP_AND: case OP_OR:
      if (x != DT_BOOL || y != DT_BOOL) {
        diag_error(S->cc, e->loc, "'%s' needs bool operands, not '%s' and '%s'", op_text(e->op),
                   dtype_name(x), dtype_name(y));
        return DT_VOID;
      }
      e->type = DT_BOOL;
      return e->type;
    case OP_EQ: case OP_NE:
      if ((x == DT_BOOL) != (y == DT_BOOL)) {
        diag_error(S->cc, e->loc, "cannot compare '%s' with '%s'", dtype_name(x), dtype_name(y));
        return DT_VOID;
      }
      if (x != DT_BOOL) operand_literals_fit(S, a, b, sema_promote(a, b));
      e->flags &= ~(unsigned)EXF_UNTYPED;
      e->type = DT_BOOL;
      return e->type;
    default:
      break;
    }
    if (op_is_bitwise(e->op) && (!dtype_is_int(x) || !dtype_is_int(y))) {
      /* & | ^ << >> are for integers: C habits (^ for a power, & for &&) get a hint */
      const char *hint = "";
      if (e->op == OP_BXOR && !dtype_is_int(x)) hint = " (a power is pow(A, B))";
      else if (e->op == OP_BAND && x == DT_BOOL && y == DT_BOOL) hint = " (logical and is '&&')";
      else if (e->op == OP_BOR && x == DT_BOOL && y == DT_BOOL) hint = " (logical or is '||')";
      else if ((x == DT_BOOL) != (y == DT_BOOL) && (dtype_is_int(x) || dtype_is_int(y))) {
        const Expr *c = x == DT_BOOL ? a : b;   /* k & 1 == 0 is k & (1 == 0), as in C */
        if (c->kind == EX_BINARY && c->op >= OP_EQ && c->op <= OP_GE)
          hint = " (comparisons bind tighter than '&', '|' and '^': parenthesize, as in (A & B) == C)";
      }
      diag_error(S->cc, e->loc, "'%s' needs integer operands, not '%s' and '%s'%s", op_text(e->op),
                 dtype_name(x), dtype_name(y), hint);
      return DT_VOID;
    }
    if (!is_num(x) || !is_num(y)) {
      diag_error(S->cc, e->loc, "arithmetic on 'bool' ('%s' %s '%s'); use select() or a cast",
                 dtype_name(x), op_text(e->op), dtype_name(y));
      return DT_VOID;
    }
    DType t = sema_promote(a, b);
    operand_literals_fit(S, a, b, t);
    if (S->map && (e->op == OP_DIV || e->op == OP_MOD) && (b->flags & EXF_CONST) &&
        (dtype_is_int(b->type) || dtype_is_float(b->type))) {
      /* integers: undefined (a crash on the host); floats: nvcc rejects the constant
      ** division under -Werror, and inf/nan are better written on purpose */
      bool fl;
      int64_t iv;
      double fv;
      if (fold(S, b, &fl, &iv, &fv) && (fl ? fv == 0.0 : iv == 0)) {
        diag_error(S->cc, b->loc, "division by a constant zero");
        return DT_VOID;
      }
    }
    if (e->op >= OP_LT && e->op <= OP_GE) {
      if (dtype_is_complex(t)) {
        diag_error(S->cc, e->loc, "complex values cannot be ordered with '%s'", op_text(e->op));
        return DT_VOID;
      }
      e->flags &= ~(unsigned)EXF_UNTYPED;
      e->type = DT_BOOL;
      return e->type;
    }
    if (e->op == OP_MOD && !dtype_is_int(t)) {
      diag_error(S->cc, e->loc, "'%%' needs integers, not '%s'; use fmod() for floating values", dtype_name(t));
      return DT_VOID;
    }
    e->type = t;
    return t;
  }
  }
  return DT_VOID;
}

/* ------------------------------------------------------------------ constants and extents */

/* A float converted to an integer type as the generated code does (templates/int.tmpl,
** cnp_g_f64_*): NaN is 0, out-of-range values saturate, others truncate toward zero. u64
** values are returned as their bit pattern. */
static int64_t fold_f2i(double x, DType to) {
  if (x != x) return 0;
  if (to == DT_I32) return x >= 2147483648.0 ? INT32_MAX : x <= -2147483649.0 ? INT32_MIN : (int32_t)x;
  if (to == DT_U64)
    return x <= -1.0 ? 0 : x >= 18446744073709551616.0 ? (int64_t)UINT64_MAX : (int64_t)(uint64_t)x;
  return x >= 9223372036854775808.0 ? INT64_MAX : x < -9223372036854775808.0 ? INT64_MIN : (int64_t)x;
}

/* Integer << and >> of a constant in `bits` (32 or 64) as templates/int.tmpl computes them. */
static int64_t fold_shift(int op, int64_t a, int64_t s, int bits, bool uns) {
  uint64_t mask = bits == 32 ? 0xffffffffu : UINT64_MAX;
  if (bits == 32) a = (int32_t)(uint32_t)a, s = (int32_t)(uint32_t)s;
  if ((uint64_t)s & ~(uint64_t)(bits - 1) & mask)   /* outside [0, bits) */
    return op == OP_SHL || uns || a >= 0 ? 0 : -1;
  if (op == OP_SHL) {
    uint64_t r = ((uint64_t)a << s) & mask;
    return bits == 32 ? (int32_t)(uint32_t)r : (int64_t)r;
  }
  if (uns) return (int64_t)((uint64_t)a >> s);
  return a < 0 ? ~(~a >> s) : a >> s;
}

/*
** Fold a constant expression (literals, consts, + - * / %, bit operators, unary - and ~,
** casts).
** Returns false (after reporting) when it is not constant.
*/
static bool fold(Sema *S, const Expr *e, bool *is_float, int64_t *iv, double *fv) {
  switch (e->kind) {
  case EX_INT: *is_float = false; *iv = e->ival; *fv = (double)e->ival; return true;
  case EX_FLOAT: *is_float = true; *fv = e->fval; *iv = fold_f2i(e->fval, DT_I64); return true;
  case EX_NAME:
    if (e->ref.decl && e->ref.decl->kind == DECL_CONST) {
      *is_float = dtype_is_float(e->ref.decl->dtype);
      *iv = e->ref.decl->ival;
      *fv = e->ref.decl->fval;
      return true;
    }
    diag_error(S->cc, e->loc, "'%s' is not a constant", e->ref.name);
    return false;
  case EX_CAST: {
    if (!fold(S, e->args[0], is_float, iv, fv)) return false;
    if (dtype_is_int(e->cast_to)) {
      *iv = *is_float ? fold_f2i(*fv, e->cast_to) : e->cast_to == DT_I32 ? (int32_t)(uint32_t)*iv : *iv;
      *fv = e->cast_to == DT_U64 ? (double)(uint64_t)*iv : (double)*iv;
      *is_float = false;
    }
    else if (dtype_is_float(e->cast_to)) { *is_float = true; }
    return true;
  }
  case EX_UNARY:
    if (e->op != OP_NEG && e->op != OP_BNOT) break;
    if (!fold(S, e->args[0], is_float, iv, fv)) return false;
    if (e->op == OP_BNOT) {
      *iv = ~*iv;
      *fv = (double)*iv;
      return true;
    }
    *iv = (int64_t)(0 - (uint64_t)*iv);
    *fv = -*fv;
    return true;
  case EX_BINARY: {
    bool fa, fb;
    int64_t ia, ib;
    double da, db;
    if (e->op > OP_MOD && !op_is_bitwise(e->op)) break;
    if (!fold(S, e->args[0], &fa, &ia, &da) || !fold(S, e->args[1], &fb, &ib, &db)) return false;
    *is_float = fa || fb;
    if (*is_float) {
      switch (e->op) {
      case OP_ADD: *fv = da + db; break;
      case OP_SUB: *fv = da - db; break;
      case OP_MUL: *fv = da * db; break;
      case OP_DIV:
        if (db == 0.0) { diag_error(S->cc, e->loc, "division by zero in a constant"); return false; }
        *fv = da / db;
        break;
      default: diag_error(S->cc, e->loc, "'%%' needs integers; use fmod() for floating values"); return false;
      }
      *iv = fold_f2i(*fv, DT_I64);
      return true;
    }
    uint64_t ua = (uint64_t)ia, ub = (uint64_t)ib;
    switch (e->op) {
    case OP_ADD: *iv = (int64_t)(ua + ub); break;
    case OP_SUB: *iv = (int64_t)(ua - ub); break;
    case OP_MUL: *iv = (int64_t)(ua * ub); break;
    case OP_BAND: *iv = (int64_t)(ua & ub); break;
    case OP_BOR: *iv = (int64_t)(ua | ub); break;
    case OP_BXOR: *iv = (int64_t)(ua ^ ub); break;
    case OP_SHL: case OP_SHR:
      *iv = fold_shift(e->op, ia, ib, e->type == DT_I32 ? 32 : 64, e->type == DT_U64);
      break;
    default:
      if (ib == 0) { diag_error(S->cc, e->loc, "division by zero in a constant"); return false; }
      if (e->type == DT_U64) *iv = (int64_t)(e->op == OP_DIV ? ua / ub : ua % ub);
      else if (ia == INT64_MIN && ib == -1) *iv = e->op == OP_DIV ? INT64_MIN : 0;
      else *iv = e->op == OP_DIV ? ia / ib : ia % ib;
      break;
    }
    *fv = (double)*iv;
    return true;
  }
  default:
    break;
  }
  if (e->kind == EX_CALL && e->builtin == BI_COMPLEX)   /* 1i, complex(0.0, 1.0) */
    diag_error(S->cc, e->loc, "not a constant expression: constants are integer, floating or bool; "
               "write complex values (1i, complex(re, im)) where they are used");
  else if (e->kind != EX_NAME) diag_error(S->cc, e->loc, "not a constant expression");
  return false;
}

/*
** An extent (of a field, staging buffer, plan or map): a setup-time integer built from
** literals, consts, dims and integer setup params with + - *.
*/
static bool check_extent_expr(Sema *S, Expr *e, const char *what) {
  switch (e->kind) {
  case EX_INT:
    e->type = DT_I64;
    e->flags |= EXF_CONST | EXF_SETUP;
    if (e->ival <= 0) {
      diag_error(S->cc, e->loc, "%s must be positive", what);
      return false;
    }
    return true;
  case EX_NAME: {
    Decl *d = resolve(S, &e->ref, K_VALUE);
    if (!d) return false;
    if ((d->kind == DECL_PARAM || d->kind == DECL_CONST) && !dtype_is_int(d->dtype)) {
      diag_error(S->cc, e->loc, "%s must be an integer, but '%s' is '%s'", what, d->name, dtype_name(d->dtype));
      return false;
    }
    if (d->kind == DECL_PARAM && !d->setup) {
      diag_error(S->cc, e->loc, "%s must be known at setup, but '%s' is a per-step param", what, d->name);
      diag_note(S->cc, d->loc, "declare it 'param %s : %s setup;'", d->name, dtype_name(d->dtype));
      return false;
    }
    e->type = DT_I64;
    e->flags |= EXF_SETUP | (d->kind == DECL_CONST ? EXF_CONST : 0);
    return true;
  }
  case EX_BINARY:
    if (e->op == OP_ADD || e->op == OP_SUB || e->op == OP_MUL) {
      bool ok = true;
      for (int k = 0; k < 2; k++) {   /* a literal 0 may be a term (nc + 0); the whole must be > 0 */
        Expr *a = e->args[k];
        if (a->kind == EX_INT && a->ival == 0) {
          a->type = DT_I64;
          a->flags |= EXF_CONST | EXF_SETUP;
        } else {
          ok = check_extent_expr(S, a, what) && ok;
        }
      }
      e->type = DT_I64;
      e->flags |= EXF_SETUP | (e->args[0]->flags & e->args[1]->flags & EXF_CONST);
      if (ok && (e->flags & EXF_CONST)) {   /* constants fold at compile time: no overflow */
        bool f0, f1;
        int64_t a, b, r;
        double fv;
        if (fold(S, e->args[0], &f0, &a, &fv) && fold(S, e->args[1], &f1, &b, &fv) && !f0 && !f1 &&
            (e->op == OP_ADD ? __builtin_add_overflow(a, b, &r)
             : e->op == OP_SUB ? __builtin_sub_overflow(a, b, &r) : __builtin_mul_overflow(a, b, &r))) {
          diag_error(S->cc, e->loc, "%s overflows int64 (%lld %s %lld)", what, (long long)a,
                     e->op == OP_ADD ? "+" : e->op == OP_SUB ? "-" : "*", (long long)b);
          return false;
        }
      }
      return ok;
    }
    break;
  default:
    break;
  }
  diag_error(S->cc, e->loc, "%s must be a dim, an integer setup param, a constant or a literal "
             "(combined with + - *)", what);
  return false;
}

/* An extent that is a constant (`const Z = 0;`, `A - A`) must be positive too. */
static void check_const_positive(Sema *S, Expr *e, const char *what) {
  bool f;
  int64_t v;
  double fv;
  if (e->kind != EX_INT && (e->flags & EXF_CONST) && fold(S, e, &f, &v, &fv) && !f && v <= 0)
    diag_error(S->cc, e->loc, "%s must be positive (it is %lld)", what, (long long)v);
}

static void check_shape(Sema *S, Shape *sh) {
  for (int i = 0; i < sh->rank; i++)
    if (check_extent_expr(S, sh->ext[i], "an extent")) check_const_positive(S, sh->ext[i], "an extent");
}

/* ------------------------------------------------------------------ declarations */

static void check_const(Sema *S, Decl *d) {
  DType t = check_expr(S, d->value);
  if (t == DT_VOID) return;
  if (t == DT_BOOL || d->dtype == DT_BOOL) {   /* const FLAG = true; */
    if (d->value->kind != EX_BOOL || (d->dtype != DT_VOID && d->dtype != DT_BOOL)) {
      diag_error(S->cc, d->value->loc, "a bool constant is 'true' or 'false'");
      return;
    }
    d->dtype = DT_BOOL;
    d->ival = d->value->ival;
    d->fval = (double)d->ival;
    return;
  }
  bool f;
  int64_t iv;
  double fv;
  if (!fold(S, d->value, &f, &iv, &fv)) return;
  if (d->dtype == DT_VOID) d->dtype = f ? DT_F64 : t == DT_U64 ? DT_U64 : DT_I64;
  else if (f && !dtype_is_float(d->dtype)) {
    diag_error(S->cc, d->value->loc, "constant '%s' of type '%s' has a floating value", d->name, dtype_name(d->dtype));
    return;
  } else if (!dtype_is_int(d->dtype) && !dtype_is_float(d->dtype)) {
    diag_error(S->cc, d->loc, "constants must be bool, integers or floats, not '%s'", dtype_name(d->dtype));
    return;
  }
  if (dtype_is_int(d->dtype) && f) iv = fold_f2i(fv, d->dtype);
  if (dtype_is_int(d->dtype) && !f) {           /* the value must fit the declared type */
    bool big = t == DT_U64 && iv < 0;          /* above INT64_MAX */
    if ((d->dtype == DT_I32 && (big || iv < INT32_MIN || iv > INT32_MAX)) ||
        (d->dtype == DT_I64 && big) || (d->dtype == DT_U64 && t != DT_U64 && iv < 0)) {
      if (big)
        diag_error(S->cc, d->value->loc, "constant '%s' (%llu) does not fit in '%s'", d->name,
                   (unsigned long long)iv, dtype_name(d->dtype));
      else
        diag_error(S->cc, d->value->loc, "constant '%s' (%lld) does not fit in '%s'", d->name,
                   (long long)iv, dtype_name(d->dtype));
      return;
    }
  }
  d->ival = iv;
  d->fval = dtype_is_int(d->dtype) ? (double)iv : fv;
}

static Decl *field_ref(Sema *S, Ref *r) { return resolve(S, r, K(DECL_FIELD)); }

static bool int_field(Sema *S, Decl *f, Loc at, const char *role);

/* Cell ids, plan keys and migration destinations: the runtime takes int32 or int64 (u64
** keys are for sort only); offsets are int64. */
static bool signed_field(Sema *S, Decl *f, Loc at, const char *role, bool i64_only) {
  if (!int_field(S, f, at, role)) return false;
  if (f->dtype == DT_I64 || (!i64_only && f->dtype == DT_I32)) return true;
  diag_error(S->cc, at, "%s '%s' must be %s, not %s", role, f->name, i64_only ? "i64" : "i32 or i64",
             sema_type_text(S->cc, f));
  diag_note(S->cc, f->loc, "'%s' is declared here", f->name);
  return false;
}

static bool int_field(Sema *S, Decl *f, Loc at, const char *role) {
  if (!f) return false;
  if (!dtype_is_int(f->dtype) || f->shape.rank != 1) {
    diag_error(S->cc, at, "%s '%s' must be a one-dimensional integer field, not %s",
               role, f->name, sema_type_text(S->cc, f));
    diag_note(S->cc, f->loc, "'%s' is declared here", f->name);
    return false;
  }
  return true;
}

/* The pipeline name becomes C identifiers at file scope (the typedef NAME, NAME_setup,
** NAME_config, NAME_CONFIG_INIT): it cannot be a C or C++ keyword (the header is used from
** both), a macro, a name of the C library / OpenMP / CUDA (`pipeline exp;` would redeclare
** exp() for any program including <math.h>), `main`, or take the runtime's prefix `cnp_`. */
static void check_pipeline_name(Sema *S, Decl *d) {
  if (!d->name) return;
  CnClash c = cn_clash(d->name);
  if (c != CN_FREE || !strcmp(d->name, "main")) {
    diag_error(S->cc, d->loc, "pipeline name '%s' %s (it names the generated C API)", d->name,
               c == CN_FREE ? cn_clash_text(CN_KEYWORD) : cn_clash_text(c));
    return;
  }
  char low[5] = {0};
  for (int i = 0; i < 4 && d->name[i]; i++) low[i] = (char)tolower((unsigned char)d->name[i]);
  if (!strcmp(low, "cnp") || !strcmp(low, "cnp_"))
    diag_error(S->cc, d->loc, "pipeline name '%s' takes the runtime's prefix 'cnp_' (it names the generated C API)",
               d->name);
}

/* Dims and setup params are members of the generated NAME_config (cfg.N, cfg.n_cells), and
** so is cfg.<mirror>_host: a C or C++ keyword, a macro (`dim EOF;` in any program that
** includes <stdio.h>), or a member the config already has would not compile. */
static void check_config_member(Sema *S, Decl *d) {
  static const char *const own[] = {"backend", "strict", "mpi_fcomm", "cuda_streams"};
  if (!d->name || (d->kind == DECL_PARAM && !d->setup)) return;
  const char *what = d->kind == DECL_DIM ? "dim" : "setup param";
  CnClash c = cn_clash(d->name);
  if (c == CN_KEYWORD || c == CN_MACRO) {
    diag_error(S->cc, d->loc, "%s '%s' %s (it names the config member cfg.%s)", what, d->name,
               cn_clash_text(c), d->name);
    return;
  }
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
    if (!strcmp(d->name, own[i]))
      diag_error(S->cc, d->loc, "%s '%s' would be a second config member cfg.%s (the configuration's own)",
                 what, d->name, d->name);
}

/* A hand-written kernel is called by its own name (the CUDA kernel, its host fallback): it
** must be a C function name the generated unit can declare and call, so not a keyword, a
** macro or a name of the C library / OpenMP / CUDA (`exp` would redeclare exp()), `main`, the
** runtime's prefix, or a variable of the generated step() around the call (p, S, n, a0...). */
static void check_kernel_name(Sema *S, Decl *d) {
  if (!d->name) return;
  CnClash c = cn_clash(d->name);
  const char *n = d->name;
  bool arg = n[0] == 'a' && n[1];
  for (const char *q = n + 1; arg && *q; q++) arg = *q >= '0' && *q <= '9';
  if (c != CN_FREE || !strcmp(n, "main"))
    diag_error(S->cc, d->loc, "kernel name '%s' %s (the kernel and its host fallback are C functions of "
               "that name)", n, c == CN_FREE ? cn_clash_text(CN_KEYWORD) : cn_clash_text(c));
  else if (!strncmp(n, "cnp_", 4) || !strncmp(n, "CNP_", 4))
    diag_error(S->cc, d->loc, "kernel name '%s' takes the runtime's prefix 'cnp_'", n);
  else if (!strcmp(n, "p") || !strcmp(n, "S") || !strcmp(n, "n") || arg)
    diag_error(S->cc, d->loc, "kernel name '%s' is a variable of the generated step() where the kernel "
               "is called (p, S, n, a0, a1, ...)", n);
}

/* mirror M is the config member cfg.M_host: no dim or setup param may have that name. */
static void check_mirror_member(Sema *S, Decl *d) {
  if (!d->name) return;
  const char *member = arena_printf(&S->cc->arena, "%s_host", d->name);
  for (Decl *o = S->cc->decls; o; o = o->next)
    if (o->name && !strcmp(o->name, member) &&
        (o->kind == DECL_DIM || (o->kind == DECL_PARAM && o->setup))) {
      Decl *first = d;   /* the one declared first (program order) gets the note */
      for (Decl *e = S->cc->decls; e && e != d; e = e->next)
        if (e == o) first = o;
      Decl *second = first == o ? d : o;
      diag_error(S->cc, second->loc, "%s '%s' and mirror '%s' would both be the config member cfg.%s",
                 o->kind == DECL_DIM ? "dim" : "setup param", o->name, d->name, member);
      diag_note(S->cc, first->loc, "'%s' is declared here", first->name);
    }
}

/* Scalars: i32 i64 u64 f32 f64 (reductions combine them exactly or in a documented order). */
static bool scalar_dtype(DType t) { return dtype_is_int(t) || t == DT_F32 || t == DT_F64; }

static void check_decl(Sema *S, Decl *d) {
  switch (d->kind) {
  case DECL_PARAM: case DECL_DIM:
    check_config_member(S, d);
    break;
  case DECL_KERNEL:
    check_kernel_name(S, d);
    break;
  case DECL_STREAM: case DECL_EVENT: case DECL_IMPORT:
    break;
  case DECL_PIPELINE:
    if (d->file->imported) diag_error(S->cc, d->kw_loc, "'pipeline' in an imported file");
    else if (S->cc->pipeline) {
      diag_error(S->cc, d->kw_loc, "second 'pipeline' declaration");
      diag_note(S->cc, S->cc->pipeline->kw_loc, "the pipeline is named here");
    } else S->cc->pipeline = d;
    check_pipeline_name(S, d);
    break;
  case DECL_CONST:
    check_const(S, d);
    break;
  case DECL_FIELD:
    if (d->scalar && !scalar_dtype(d->dtype))
      diag_error(S->cc, d->loc, "a scalar is i32, i64, u64, f32 or f64, not '%s'", dtype_name(d->dtype));
    if (d->history_of.name) {
      Decl *sc = field_ref(S, &d->history_of);
      if (sc && !sc->scalar) {
        diag_error(S->cc, d->history_of.loc, "a history records a scalar, but '%s' is a field",
                   sc->name);
        sc = NULL;
      }
      d->dtype = sc ? sc->dtype : DT_F64;
      if (check_extent_expr(S, d->shape.ext[0], "the length of a history"))
        check_const_positive(S, d->shape.ext[0], "the length of a history");
      break;
    }
    check_shape(S, &d->shape);
    break;
  case DECL_MPI:
    check_shape(S, &d->shape);
    break;
  case DECL_SNAPSHOT:
    field_ref(S, &d->target);
    if (d->value) {
      bool f;
      int64_t iv;
      double fv;
      check_expr(S, d->value);
      if (fold(S, d->value, &f, &iv, &fv)) {
        if (f || iv < 1 || iv > 1024) diag_error(S->cc, d->value->loc, "slots must be an integer from 1 to 1024");
        else d->slots = (int)iv;
      }
    }
    break;
  case DECL_MIRROR:
    field_ref(S, &d->target);
    check_mirror_member(S, d);
    break;
  case DECL_PLAN:
    signed_field(S, field_ref(S, &d->target), d->target.loc, "the key", false);
    if (check_extent_expr(S, d->value, "the number of segments"))
      check_const_positive(S, d->value, "the number of segments");
    break;
  case DECL_STEP:
  case DECL__COUNT:
    break;
  }
}

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
  for (int i = 0; i < S->n_red; i++)
    if (S->red[i].f == f && S->red[i].op != s->red) {
      diag_error(S->cc, t->loc, "scalar '%s' is reduced with '%s' here and with '%s' elsewhere in the "
                 "same map", f->name, red_text[s->red], red_text[S->red[i].op]);
      diag_note(S->cc, S->red[i].loc, "reduced with '%s' here", red_text[S->red[i].op]);
      return;
    }
  if (S->n_red < (int)(sizeof S->red / sizeof S->red[0]))
    S->red[S->n_red++] = (struct SemaRed){f, s->red, t->loc};
  if (S->step) op(S, HZ_WRITE, f, &t->loc);
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

static void check_map(Sema *S, Stmt *s) {
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
                 "'%s' is a field", d->name);
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
  if (d) {
    Expr *x = arena_alloc(&S->cc->arena, sizeof *x);
    x->kind = EX_NAME;
    x->loc = s->over.loc;
    x->ref = s->over;
    x->type = DT_I64;
    s->over_expr = x;
  }
  /* the loop runs over the live extent, which compaction and migration change */
  if (d && d->kind == DECL_DIM && S->step) op(S, HZ_READ, d, &s->over.loc);
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
    op(S, HZ_READ, l->v[i].decl, &l->v[i].loc);
    op(S, HZ_WRITE, l->v[i].decl, &l->v[i].loc);
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
  op(S, HZ_READ, p, &s->a.loc);
  op(S, HZ_READ, v, &s->list.v[0].loc);
  op(S, HZ_WRITE, out, &s->b.loc);
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
  op(S, HZ_READ, x, &s->a.loc);
  op(S, HZ_READ, dim_of(x), &s->a.loc);
  op(S, HZ_WRITE, y, &s->b.loc);
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
    if (a->kind != EX_NAME) diag_error(S->cc, a->loc, "'zero' takes names of fields");
    else op(S, HZ_WRITE, field_ref(S, &s->list.v[i]), &s->list.v[i].loc);
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

static void check_stmt(Sema *S, Stmt *s) {
  call_form(S, s);
  switch (s->kind) {
  case ST_MAP:
    check_map(S, s);
    break;
  case ST_COMPACT: {
    Decl *m = field_ref(S, &s->a);
    if (m && (m->dtype != DT_BOOL || m->shape.rank != 1)) {
      diag_error(S->cc, s->a.loc, "the mask '%s' must be a one-dimensional bool field", m->name);
      m = NULL;
    }
    if (m && !(last_extent(m)->kind == EX_NAME && last_extent(m)->ref.decl && last_extent(m)->ref.decl->kind == DECL_DIM))
      diag_error(S->cc, s->a.loc, "compaction changes the extent of a dim, but '%s' is not over a dim", m->name);
    same_extents(S, m, &s->list, "mask");
    op(S, HZ_READ, m, &s->a.loc);
    rw_list(S, &s->list, s->loc);
    op(S, HZ_READ, dim_of(m), &s->a.loc);    /* the live extent: read, then set */
    op(S, HZ_WRITE, dim_of(m), &s->a.loc);
    break;
  }
  case ST_SORT: {
    Decl *k = field_ref(S, &s->a);
    if (!int_field(S, k, s->a.loc, "the key")) k = NULL;
    same_extents(S, k, &s->list, "key");
    op(S, HZ_READ, k, &s->a.loc);
    op(S, HZ_WRITE, k, &s->a.loc);
    rw_list(S, &s->list, s->loc);
    op(S, HZ_READ, dim_of(k), &s->a.loc);
    break;
  }
  case ST_OFFSETS: {
    Decl *k = field_ref(S, &s->a), *o = field_ref(S, &s->b);
    signed_field(S, k, s->a.loc, "the key", false);
    signed_field(S, o, s->b.loc, "the offsets", true);
    if (k && o && k == o) diag_error(S->cc, s->b.loc, "the offsets must not alias the keys");
    op(S, HZ_READ, k, &s->a.loc);
    op(S, HZ_READ, dim_of(k), &s->a.loc);
    op(S, HZ_WRITE, o, &s->b.loc);
    break;
  }
  case ST_SEGMENTS: {
    Decl *p = resolve(S, &s->a, K(DECL_PLAN));
    Decl *k = field_ref(S, &s->b);
    signed_field(S, k, s->b.loc, "the key", false);
    check_extent_expr(S, s->value, "the number of segments");
    if (p && p->value && !same_extent(p->value, s->value)) {
      diag_error(S->cc, s->value->loc, "plan '%s' was declared with a different number of segments", p->name);
      diag_note(S->cc, p->value->loc, "declared here");
    }
    op(S, HZ_READ, k, &s->b.loc);
    op(S, HZ_READ, dim_of(k), &s->b.loc);
    op(S, HZ_WRITE, p, &s->a.loc);
    break;
  }
  case ST_SCAN:
    check_scan(S, s);
    break;
  case ST_REPEAT:
    check_repeat(S, s);
    break;
  case ST_SWAP:
    check_swap(S, s);
    break;
  case ST_APPEND:
    check_append(S, s);
    break;
  case ST_EVERY:
    check_every_block(S, s);
    break;
  case ST_SUM:
    check_sum(S, s);
    if (s->list.n) op(S, HZ_READ, dim_of(s->list.v[0].decl), &s->list.v[0].loc);
    break;
  case ST_RECORD: case ST_WAIT: {
    SymX *h = s->kind == ST_RECORD ? sym_find(S, s->a.name) : NULL;
    if (h && h->decl->kind == DECL_FIELD && h->decl->history_of.name && h->pos < S->pos) {
      Decl *hd = h->decl;   /* record HISTORY: append its scalar's value */
      s->kind = ST_HISTORY;
      s->a.decl = hd;
      s->b = hd->history_of;
      s->b.loc = s->a.loc;
      op(S, HZ_READ, s->b.decl, &s->a.loc);
      op(S, HZ_READ, hd, &s->a.loc);
      op(S, HZ_WRITE, hd, &s->a.loc);
      break;
    }
    Decl *e = resolve(S, &s->a, K(DECL_EVENT));
    if (e && s->kind == ST_RECORD && S->repeat) {
      diag_error(S->cc, s->a.loc, "event '%s' is recorded inside 'repeat': each pass would record it "
                 "again before anyone waits for it (record it after the block)", e->name);
      diag_note(S->cc, S->repeat->loc, "the block repeats here");
    }
    op(S, s->kind == ST_RECORD ? HZ_RECORD : HZ_WAIT, e, &s->a.loc);
    break;
  }
  case ST_COPY: {
    Decl *sn = resolve(S, &s->a, K(DECL_SNAPSHOT));
    Decl *f = field_ref(S, &s->b);
    if (sn && f && sn->target.decl && sn->target.decl != f) {
      diag_error(S->cc, s->b.loc, "snapshot '%s' stages '%s', not '%s'", sn->name, sn->target.name, f->name);
      diag_note(S->cc, sn->loc, "'%s' is declared here", sn->name);
    }
    op(S, HZ_READ, f, &s->b.loc);
    op(S, HZ_WRITE, sn, &s->a.loc);
    op(S, HZ_READ, dim_of(f), &s->b.loc);   /* the snapshot keeps the live rows */
    break;
  }
  case ST_REFRESH: {
    Decl *m = resolve(S, &s->a, K(DECL_MIRROR));
    if (m && m->target.decl) {
      /* the mirror object stands for the host array: to_device reads it into the field,
      ** to_host writes it from the field */
      op(S, s->to_device ? HZ_WRITE : HZ_READ, m->target.decl, &s->a.loc);
      op(S, s->to_device ? HZ_READ : HZ_WRITE, m, &s->a.loc);
    }
    break;
  }
  case ST_EXCHANGE: {
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
    op(S, HZ_READ, f, &s->b.loc);
    op(S, HZ_WRITE, f, &s->b.loc);
    op(S, HZ_WRITE, h, &s->a.loc);
    break;
  }
  case ST_MIGRATE: {
    Decl *d = field_ref(S, &s->a);
    if (!signed_field(S, d, s->a.loc, "the destination", false)) d = NULL;
    same_extents(S, d, &s->list, "destination");
    op(S, HZ_READ, d, &s->a.loc);
    op(S, HZ_WRITE, d, &s->a.loc);
    rw_list(S, &s->list, s->loc);
    op(S, HZ_READ, dim_of(d), &s->a.loc);
    op(S, HZ_WRITE, dim_of(d), &s->a.loc);
    break;
  }
  case ST_ZERO: check_zero(S, s); break;
  case ST_CALL: {
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
        op(S, HZ_READ, g->decl, &a->loc);
        op(S, HZ_WRITE, g->decl, &a->loc);
      } else {
        check_expr(S, a);
        if (a->ref.decl && a->ref.decl->kind == DECL_DIM) op(S, HZ_READ, a->ref.decl, &a->loc);
      }
    }
    if (s->value2) {
      check_extent_expr(S, s->value2, "the extent of a kernel call");
      if (s->value2->kind == EX_NAME && s->value2->ref.decl && s->value2->ref.decl->kind == DECL_DIM)
        op(S, HZ_READ, s->value2->ref.decl, &s->value2->loc);
    }
    if (kd) same_signature(S, kd, s);
    break;
  }
  default:
    diag_error(S->cc, s->loc, "this statement belongs inside a map");
    break;
  }
}

/* every K [offset J]: K a positive setup-time integer, 0 <= J < K. */
static void check_cadence(Sema *S, Expr *every, Expr *o, const char *what) {
  bool kf, jf;
  int64_t k = 0, j = 0;
  double fv;
  bool kok = check_extent_expr(S, every, what);
  bool kc = kok && (every->flags & EXF_CONST) && fold(S, every, &kf, &k, &fv) && !kf;
  if (!o) return;
  bool jok = o->kind == EX_INT ? (check_expr(S, o), true) : check_extent_expr(S, o, "the offset of a step's cadence");
  bool jc = jok && (o->flags & EXF_CONST) && fold(S, o, &jf, &j, &fv) && !jf;
  if (jc && j < 0) diag_error(S->cc, o->loc, "the offset of a step's cadence must not be negative");
  else if (jc && kc && j >= k)
    diag_error(S->cc, o->loc, "offset %lld of 'every %lld' never matches: it must be below %lld",
               (long long)j, (long long)k, (long long)k);
}

static void check_every(Sema *S, Decl *d) {
  check_cadence(S, d->every, d->every_offset, "the cadence of a step ('every')");
}

/* every K [offset J] { ... } inside a step: the block's statements only on the due calls. */
static void check_every_block(Sema *S, Stmt *s) {
  check_cadence(S, s->value, s->value2, "the cadence of a block ('every')");
  for (Stmt *t = s->body; t; t = t->next) check_stmt(S, t);
}

/* repeat K { ... }: K a positive setup-time integer; the block's statements run K times in
** order. An event recorded inside would be re-recorded before anyone waits for it. */
static void check_repeat(Sema *S, Stmt *s) {
  check_extent_expr(S, s->value, "the count of 'repeat'");
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
  op(S, HZ_READ, x, &s->a.loc);
  op(S, HZ_WRITE, x, &s->a.loc);
  op(S, HZ_READ, y, &s->b.loc);
  op(S, HZ_WRITE, y, &s->b.loc);
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
  Expr *x = arena_alloc(&S->cc->arena, sizeof *x);
  x->kind = EX_NAME;
  x->loc = s->over.loc;
  x->ref = s->over;
  x->type = DT_I64;
  s->over_expr = x;
  s->a.decl = d;
  op(S, HZ_READ, d, &s->over.loc);    /* the live extent: read, then set */
  op(S, HZ_WRITE, d, &s->over.loc);
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

static void check_step(Sema *S, Decl *d) {
  S->step = d;
  if (d->stream.name) resolve(S, &d->stream, K(DECL_STREAM));
  op(S, HZ_STEP, d, &d->loc);
  for (int i = 0; i < d->after.n; i++) {
    Decl *e = resolve(S, &d->after.v[i], K(DECL_EVENT));
    op(S, HZ_WAIT, e, &d->after.v[i].loc);
  }
  if (d->every) check_every(S, d);
  for (Stmt *s = d->body; s; s = s->next) check_stmt(S, s);
  S->step = NULL;
}

/* ------------------------------------------------------------------ stream hazards */

typedef struct StepInfo {
  Decl *d;
  int stream;               /* stream index; n_streams for a host step */
  int *succ, n_succ, cap_succ;
  Loc *succ_loc;            /* where the successor waits */
  int color;                /* DFS: 0 new, 1 on stack, 2 done */
  int parent;
  Loc parent_loc;
} StepInfo;

static void add_edge(Arena *ar, StepInfo *a, int to, Loc at) {
  if (a->n_succ == a->cap_succ) {   /* arena arrays: most steps have one or two edges */
    int cap = a->cap_succ ? 2 * a->cap_succ : 4;
    int *succ = arena_alloc(ar, sizeof *succ * (size_t)cap);
    Loc *succ_loc = arena_alloc(ar, sizeof *succ_loc * (size_t)cap);
    if (a->n_succ) {
      memcpy(succ, a->succ, sizeof *succ * (size_t)a->n_succ);
      memcpy(succ_loc, a->succ_loc, sizeof *succ_loc * (size_t)a->n_succ);
    }
    a->succ = succ;
    a->succ_loc = succ_loc;
    a->cap_succ = cap;
  }
  a->succ[a->n_succ] = to;
  a->succ_loc[a->n_succ++] = at;
}

static const char *step_desc(Cnp *cc, const Decl *d) {
  if (d->name) return arena_printf(&cc->arena, "step '%s'", d->name);
  if (d->stream.name) return arena_printf(&cc->arena, "the step on '%s'", d->stream.name);
  return "the host step";
}

/*
** Cycles through `after`/`wait`: an edge goes from every step recording E to every step
** waiting for E, and along each stream in program order. Returns true if one was found.
*/
static bool find_cycles(Sema *S, StepInfo *st, int n) {
  int n_ev = S->cc->n_decl[DECL_EVENT];
  int **rec = calloc((size_t)n_ev + 1, sizeof *rec);
  int *n_rec = calloc((size_t)n_ev + 1, sizeof *n_rec);
  if (!rec || !n_rec) cnp_ice("out of memory");
  int cur = -1;
  FOR_OPS(S, o) {
    if (o->kind == HZ_STEP) { cur = o->obj->index; continue; }
    if (o->kind != HZ_RECORD) continue;
    int e = o->obj->index;
    if ((n_rec[e] & (n_rec[e] - 1)) == 0) {   /* 0, 1, 2, 4, ...: grow by doubling */
      rec[e] = realloc(rec[e], sizeof **rec * (size_t)(n_rec[e] ? 2 * n_rec[e] : 1));
      if (!rec[e]) cnp_ice("out of memory");
    }
    rec[e][n_rec[e]++] = cur;
  }
  int *last_on = malloc(sizeof *last_on * (size_t)(S->cc->n_decl[DECL_STREAM] + 1));
  if (!last_on) cnp_ice("out of memory");
  for (int s = 0; s <= S->cc->n_decl[DECL_STREAM]; s++) last_on[s] = -1;
  for (int i = 0; i < n; i++) {
    int s = st[i].stream;
    if (last_on[s] >= 0) add_edge(&S->cc->arena, &st[last_on[s]], i, st[i].d->loc);
    last_on[s] = i;
  }
  /* a wait consumes the latest recording before it; with none before, it waits for the
  ** recordings that come later (the only edges that can close a cycle) */
  int *latest = malloc(sizeof *latest * (size_t)(n_ev + 1));
  if (!latest) cnp_ice("out of memory");
  for (int e = 0; e <= n_ev; e++) latest[e] = -1;
  cur = -1;
  FOR_OPS(S, o) {
    if (o->kind == HZ_STEP) { cur = o->obj->index; continue; }
    int e = o->obj->index;
    if (o->kind == HZ_RECORD) latest[e] = cur;
    if (o->kind != HZ_WAIT) continue;
    if (latest[e] >= 0) {
      if (latest[e] != cur) add_edge(&S->cc->arena, &st[latest[e]], cur, *o->loc);
      continue;
    }
    for (int k = 0; k < n_rec[e]; k++)
      if (rec[e][k] != cur) add_edge(&S->cc->arena, &st[rec[e][k]], cur, *o->loc);
  }
  free(latest);
  bool found = false;
  /* iterative DFS */
  int *stack = malloc(sizeof *stack * (size_t)(n + 1)), *it = calloc((size_t)n + 1, sizeof *it);
  if (!stack || !it) cnp_ice("out of memory");
  for (int root = 0; root < n && !found; root++) {
    if (st[root].color) continue;
    int sp = 0;
    stack[sp++] = root;
    st[root].color = 1;
    while (sp > 0 && !found) {
      int v = stack[sp - 1];
      if (it[v] < st[v].n_succ) {
        int k = it[v]++, w = st[v].succ[k];
        if (st[w].color == 0) {
          st[w].color = 1;
          st[w].parent = v;
          st[w].parent_loc = st[v].succ_loc[k];
          stack[sp++] = w;
        } else if (st[w].color == 1) {
          found = true;
          diag_error(S->cc, st[v].succ_loc[k], "cycle in the step graph: %s waits for %s",
                     step_desc(S->cc, st[w].d), step_desc(S->cc, st[v].d));
          for (int x = v; x != w; x = st[x].parent)
            diag_note(S->cc, st[x].parent_loc, "%s waits for %s here", step_desc(S->cc, st[x].d),
                      step_desc(S->cc, st[st[x].parent].d));
        }
      } else {
        st[v].color = 2;
        sp--;
      }
    }
  }
  free(stack);
  free(it);
  free(last_on);
  for (int e = 0; e <= n_ev; e++) free(rec[e]);
  free(rec);
  free(n_rec);
  return found;
}

typedef struct Acc { int seq; bool valid; const Loc *loc; } Acc;

/*
** Vector clocks over the streams: an access b on stream t is ordered after an earlier
** access a on stream s when a's position on s is covered by t's clock at b. A host step
** joins every stream first (synchronize_for_mpi).
*/
static void check_hazards(Sema *S) {
  Cnp *cc = S->cc;
  int ns = cc->n_decl[DECL_STREAM] + 1;          /* + the host */
  int nobj = 0;
  for (Decl *d = cc->decls; d; d = d->next) nobj++;
  int *objid = NULL;
  (void)objid;
  /* object ids: Decl.index is per kind; build a dense id per (kind, index) */
  int base[DECL__COUNT + 1] = {0};
  for (int k = 0; k < DECL__COUNT; k++) base[k + 1] = base[k] + cc->n_decl[k];
  nobj = base[DECL__COUNT];
  int *clock = calloc((size_t)ns * (size_t)ns, sizeof *clock);
  int n_ev = cc->n_decl[DECL_EVENT];
  int *evclk = calloc((size_t)(n_ev + 1) * (size_t)ns, sizeof *evclk);
  bool *ev_rec = calloc((size_t)n_ev + 1, sizeof *ev_rec), *ev_waited = calloc((size_t)n_ev + 1, sizeof *ev_waited);
  Loc *ev_loc = calloc((size_t)n_ev + 1, sizeof *ev_loc);
  /* per (object, stream): the last write and read (arena: zeroed, huge pages when large) */
  Acc *lw = arena_alloc(&cc->arena, sizeof *lw * (size_t)nobj * (size_t)ns);
  Acc *lr = arena_alloc(&cc->arena, sizeof *lr * (size_t)nobj * (size_t)ns);
  bool *reported = calloc((size_t)nobj + 1, sizeof *reported);
  if (!clock || !evclk || !ev_rec || !ev_waited || !ev_loc || !reported) cnp_ice("out of memory");
  /* where each event is first recorded, for "recorded later" notes */
  Loc *first_rec = calloc((size_t)n_ev + 1, sizeof *first_rec);
  bool *any_rec = calloc((size_t)n_ev + 1, sizeof *any_rec);
  if (!first_rec || !any_rec) cnp_ice("out of memory");
  FOR_OPS(S, o)
    if (o->kind == HZ_RECORD && !any_rec[o->obj->index]) {
      any_rec[o->obj->index] = true;
      first_rec[o->obj->index] = *o->loc;
    }
  int t = ns - 1;
  const Decl *step = NULL;
  FOR_OPS(S, o) {
    int *ct = &clock[(size_t)t * (size_t)ns];
    switch (o->kind) {
    case HZ_STEP:
      step = o->obj;
      t = o->obj->stream.decl ? o->obj->stream.decl->index : ns - 1;
      /* work enqueued after a host step is ordered after it (the CPU waited for it) */
      ct = &clock[(size_t)t * (size_t)ns];
      if (ct[ns - 1] < clock[(size_t)(ns - 1) * (size_t)ns + (size_t)(ns - 1)])
        ct[ns - 1] = clock[(size_t)(ns - 1) * (size_t)ns + (size_t)(ns - 1)];
      if (!o->obj->stream.name) {          /* host step: join all streams */
        for (int s = 0; s < ns; s++)
          for (int u = 0; u < ns; u++) {
            int v = clock[(size_t)u * (size_t)ns + (size_t)s];
            for (int w = 0; w < ns; w++)
              if (clock[(size_t)w * (size_t)ns + (size_t)s] < v) clock[(size_t)w * (size_t)ns + (size_t)s] = v;
          }
      }
      break;
    case HZ_RECORD: {
      int e = o->obj->index;
      if (ev_rec[e] && !ev_waited[e]) {
        diag_error(cc, *o->loc, "event '%s' is recorded again before anything waited for its previous recording",
                   o->obj->name);
        diag_note(cc, ev_loc[e], "previously recorded here");
      }
      ct[t]++;
      memcpy(&evclk[(size_t)e * (size_t)ns], ct, sizeof *ct * (size_t)ns);
      ev_rec[e] = true;
      ev_waited[e] = false;
      ev_loc[e] = *o->loc;
      break;
    }
    case HZ_WAIT: {
      int e = o->obj->index;
      if (!ev_rec[e]) {
        if (any_rec[e]) {
          diag_error(cc, *o->loc, "event '%s' is waited for before it is recorded", o->obj->name);
          diag_note(cc, first_rec[e], "'%s' is recorded here", o->obj->name);
        } else {
          diag_error(cc, *o->loc, "event '%s' is never recorded", o->obj->name);
        }
        ev_rec[e] = true;   /* report once */
        ev_waited[e] = true;
        break;
      }
      ev_waited[e] = true;
      for (int s = 0; s < ns; s++)
        if (ct[s] < evclk[(size_t)e * (size_t)ns + (size_t)s]) ct[s] = evclk[(size_t)e * (size_t)ns + (size_t)s];
      break;
    }
    case HZ_READ: case HZ_WRITE: {
      int id = base[o->obj->kind] + o->obj->index;
      ct[t]++;
      bool w = o->kind == HZ_WRITE;
      for (int s = 0; s < ns && !reported[id]; s++) {
        if (s == t) continue;
        Acc *a = &lw[(size_t)id * (size_t)ns + (size_t)s];
        const char *what = "written";
        if (!(a->valid && a->seq > ct[s]) && w) {
          a = &lr[(size_t)id * (size_t)ns + (size_t)s];
          what = "read";
        }
        if (a->valid && a->seq > ct[s]) {
          Decl *sd = s < ns - 1 ? NULL : NULL;
          for (Decl *d = cc->decls; d; d = d->next)
            if (d->kind == DECL_STREAM && d->index == s) sd = d;
          const char *here_s = step->stream.name
                                   ? arena_printf(&cc->arena, "stream '%s'", step->stream.name) : "the host";
          diag_error(cc, *o->loc, "%s '%s' is %s on %s%s%s and %s on %s with no event ordering them",
                     o->obj->kind == DECL_DIM ? "the live extent of dim"
                     : o->obj->kind == DECL_FIELD && o->obj->scalar ? "scalar"
                     : o->obj->kind == DECL_FIELD && o->obj->history_of.name ? "history"
                     : decl_kind_name(o->obj->kind),
                     o->obj->name, what,
                     sd ? "stream '" : "the host", sd ? sd->name : "", sd ? "'" : "",
                     w ? "written" : "read", here_s);
          diag_note(cc, *a->loc, "%s here on %s%s%s", what, sd ? "stream '" : "the host", sd ? sd->name : "",
                    sd ? "'" : "");
          reported[id] = true;
        }
      }
      Acc *mine = w ? &lw[(size_t)id * (size_t)ns + (size_t)t] : &lr[(size_t)id * (size_t)ns + (size_t)t];
      mine->valid = true;
      mine->seq = ct[t];
      mine->loc = o->loc;
      break;
    }
    }
  }
  /* successive step() calls: the next call's work on t may run while u still works on the
  ** previous call's data (the analysis above covers one call). Any object written on one of
  ** two streams and used on the other makes t wait for u's previous call (generated code:
  ** an end-of-call event per stream). Host steps synchronize and need nothing. */
  int nst = ns - 1;
  for (int id = 0; id < nobj; id++)
    for (int a = 0; a < nst; a++) {
      if (!lw[(size_t)id * (size_t)ns + (size_t)a].valid) continue;
      for (int b2 = 0; b2 < nst; b2++) {
        if (b2 == a || !(lw[(size_t)id * (size_t)ns + (size_t)b2].valid || lr[(size_t)id * (size_t)ns + (size_t)b2].valid))
          continue;
        if (!cc->stream_join) cc->stream_join = arena_alloc(&cc->arena, sizeof(bool) * (size_t)nst * (size_t)nst);
        cc->stream_join[a * nst + b2] = cc->stream_join[b2 * nst + a] = true;
      }
    }
  /* an event nobody waits for orders nothing: probably a missing `after` */
  bool *any_wait = calloc((size_t)n_ev + 1, sizeof *any_wait);
  if (!any_wait) cnp_ice("out of memory");
  FOR_OPS(S, o)
    if (o->kind == HZ_WAIT) any_wait[o->obj->index] = true;
  for (Decl *d = cc->decls; d; d = d->next)
    if (d->kind == DECL_EVENT && any_rec[d->index] && !any_wait[d->index])
      diag_warning(cc, WARN_UNUSED_EVENT, first_rec[d->index], "event '%s' is recorded but nothing waits for it", d->name);
  free(any_wait);
  free(clock); free(evclk); free(ev_rec); free(ev_waited); free(ev_loc);
  free(reported); free(first_rec); free(any_rec);
}

static void check_graph(Sema *S) {
  Cnp *cc = S->cc;
  int n = cc->n_decl[DECL_STEP];
  StepInfo *st = calloc((size_t)n + 1, sizeof *st);
  if (!st) cnp_ice("out of memory");
  for (Decl *d = cc->decls; d; d = d->next)
    if (d->kind == DECL_STEP) {
      st[d->index].d = d;
      st[d->index].stream = d->stream.decl ? d->stream.decl->index : cc->n_decl[DECL_STREAM];
    }
  bool cyc = find_cycles(S, st, n);
  free(st);
  if (!cyc) check_hazards(S);
}

/* ------------------------------------------------------------------ driver */

/* -Wcompact-omits, -Wsort-omits: a compaction or sort moves the rows of the arrays it lists;
** a field over the same dim that is left out keeps its rows where they were, so it no longer
** lines up. Warn for such a field when its rows are live after the statement: some later
** use reads them row by row -- a map over the dim reading f[i] or f[c, i] (or f[i] +=), or
** a sum, sort, compaction, migration, segments, offsets, copy, exchange or kernel call
** using f -- before anything writes every row of f again (a map over the dim storing f[i],
** or f[c, i] for every component c, outside any if, before reading it). "Later" runs to the
** end of the step, through the later steps in program order, and on into the next call of
** NAME_step() (steps repeat): up to the statement itself. A field only gathered (a table
** indexed by the dim) or only written is left alone. */
typedef enum RowUse { ROW_NONE, ROW_READ, ROW_KILL } RowUse;

static const Expr *expr_reads_row(const Expr *e, const Decl *f) {
  if (!e) return NULL;
  if (e->kind == EX_INDEX && e->ref.decl == f && !(e->flags & EXF_GATHER)) return e;
  for (int i = 0; i < e->nargs; i++) {
    const Expr *r = expr_reads_row(e->args[i], f);
    if (r) return r;
  }
  return NULL;
}

/* The first read of f's rows by one map statement (the target's indices, a row '+=', the
** value, the branches of an if), or NULL. */
static const Expr *mstmt_reads_row(const Stmt *s, const Decl *f) {
  const Expr *r = expr_reads_row(s->value, f);
  if (r) return r;
  if (s->target && s->target->kind == EX_INDEX) {
    for (int i = 0; i < s->target->nargs; i++)
      if ((r = expr_reads_row(s->target->args[i], f))) return r;
    if (s->kind == ST_ADD && !s->scatter && s->target->ref.decl == f) return s->target;
  }
  for (const Stmt *t = s->body; t; t = t->next)
    if ((r = mstmt_reads_row(t, f))) return r;
  for (const Stmt *t = s->else_body; t; t = t->next)
    if ((r = mstmt_reads_row(t, f))) return r;
  return NULL;
}

/* A map over f's dim: does it read f's old rows (*at: where), or overwrite all of them first? */
static RowUse map_row_use(Sema *S, const Stmt *m, const Decl *f, Loc *at) {
  int ncomp = 1;   /* components per row: 1, or the constant first extent of f : T[C, N] */
  if (f->shape.rank == 2) {
    bool isf;
    int64_t v;
    double d;
    const Expr *c = f->shape.ext[0];
    ncomp = (c->flags & EXF_CONST) && fold(S, c, &isf, &v, &d) && !isf && v > 0 && v <= 64 ? (int)v : 0;
  } else if (f->shape.rank != 1) {
    ncomp = 0;     /* rank 3 and up: never counted as rewritten */
  }
  uint64_t written = 0;
  for (const Stmt *s = m->body; s; s = s->next) {
    const Expr *r = mstmt_reads_row(s, f);
    if (r) {
      *at = r->loc;
      return ROW_READ;
    }
    const Expr *t = s->target;
    if (s->kind != ST_ASSIGN || !t || t->kind != EX_INDEX || t->ref.decl != f || (t->flags & EXF_GATHER) || !ncomp)
      continue;
    if (f->shape.rank == 1) return ROW_KILL;
    bool isf;
    int64_t v;
    double d;
    if ((t->args[0]->flags & EXF_CONST) && fold(S, t->args[0], &isf, &v, &d) && !isf && v >= 0 && v < ncomp)
      written |= 1ull << v;
    if (written == (ncomp == 64 ? ~0ull : (1ull << ncomp) - 1)) return ROW_KILL;
  }
  return ROW_NONE;
}

static bool refs_has(const RefList *l, const Decl *f) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i].decl == f) return true;
  return false;
}

/* How one step statement uses the rows of f (a field over `dim`); *at: where it reads them. */
static RowUse stmt_row_use(Sema *S, const Stmt *s, const Decl *f, const Decl *dim, Loc *at) {
  *at = s->loc;
  if (s->kind == ST_MAP) return s->over.decl == dim ? map_row_use(S, s, f, at) : ROW_NONE;
  const StmtInfo *si = stmt_of(s->kind);   /* the SU_ROWS operands (stmt.c) */
  if (((si->a & SU_ROWS) && s->a.decl == f) || ((si->b & SU_ROWS) && s->b.decl == f)) return ROW_READ;
  if ((si->list & SU_ROWS) && refs_has(&s->list, f)) return ROW_READ;
  for (int i = 0; (si->args & SU_ROWS) && i < s->nargs; i++)
    if (s->args[i]->ref.decl == f) return ROW_READ;
  return ROW_NONE;
}

/* Are f's rows live after statement `at` (see above)? Walks the steps in program order
** from the statement after `at`, wrapping around into the next call (*wrapped), until `at`.
** *read: where they are read. */
static bool rows_live_after(Sema *S, const Stmt *at, const Decl *f, const Decl *dim, Loc *read, bool *wrapped) {
  bool past = false;
  *wrapped = false;
  for (int round = 0; round < 2; round++, *wrapped = past)
    for (const Decl *d = S->cc->decls; d; d = d->next) {
      if (d->kind != DECL_STEP) continue;
      for (const Stmt *s = d->body; s; s = s->next) {
        if (s == at) {
          if (past) return false;   /* all the way round: nothing reads them */
          past = true;
          continue;
        }
        if (!past) continue;
        RowUse u = stmt_row_use(S, s, f, dim, read);
        if (u != ROW_NONE) return u == ROW_READ;
      }
    }
  return false;
}

static void check_compact_omits(Sema *S) {
  Cnp *cc = S->cc;
  for (Decl *d = cc->decls; d; d = d->next) {
    if (d->kind != DECL_STEP) continue;
    for (const Stmt *s = d->body; s; s = s->next) {
      Decl *m = s->kind == ST_COMPACT || s->kind == ST_SORT ? s->a.decl : NULL;
      Decl *dim = dim_of(m);
      if (!dim) continue;
      bool sort = s->kind == ST_SORT;
      for (Decl *f = cc->decls; f; f = f->next) {
        if (f->kind != DECL_FIELD || f == m || dim_of(f) != dim || refs_has(&s->list, f)) continue;
        Loc read;
        bool wrapped;
        if (!rows_live_after(S, s, f, dim, &read, &wrapped)) continue;
        int shown = cc->n_errors + cc->n_warnings;   /* unchanged: the warning is off */
        diag_warning(cc, sort ? WARN_SORT_OMITS : WARN_COMPACT_OMITS, s->a.loc, "field '%s' is over "
                     "dim '%s' but not in this %s: its rows stay where they are while the listed "
                     "arrays move", f->name, dim->name, sort ? "sort" : "compaction");
        if (cc->n_errors + cc->n_warnings != shown)
          diag_note(cc, read, "'%s' is read here%s%s%s, before anything rewrites it", f->name,
                    wrapped ? " in the next call of " : "", wrapped && cc->pipeline ? cc->pipeline->name : "",
                    wrapped ? "_step()" : "");
      }
    }
  }
}

/* A plan is built only by `PLAN = segments(KEY, N);` in a step: a sum over a plan that no
** step builds fails at run time ("the plan has not been built"), so it is an error here. */
static void check_plans_built(Cnp *cc) {
  for (Decl *d = cc->decls; d; d = d->next) {
    if (d->kind != DECL_STEP) continue;
    for (const Stmt *s = d->body; s; s = s->next) {
      if (s->kind != ST_SUM || !s->a.decl || s->a.decl->kind != DECL_PLAN) continue;
      bool built = false;
      for (Decl *e = cc->decls; e && !built; e = e->next)
        if (e->kind == DECL_STEP)
          for (const Stmt *t = e->body; t && !built; t = t->next)
            built = t->kind == ST_SEGMENTS && t->a.decl == s->a.decl;
      if (built) continue;
      Decl *pl = s->a.decl;
      diag_error(cc, s->a.loc, "plan '%s' is summed over but no step builds it: add '%s = segments(...);' "
                 "(after the key is final) before the sum", pl->name, pl->name);
      diag_note(cc, pl->loc, "'%s' is declared here", pl->name);
    }
  }
}

int sema_check(Cnp *cc) {
  Sema S = {0};
  S.cc = cc;
  int n = 0;
  for (Decl *d = cc->decls; d; d = d->next) n++;
  unsigned cap = 64;
  while (cap < 2u * (unsigned)n) cap *= 2;
  SymTab gtab = {arena_alloc(&cc->arena, sizeof(Sym) * cap), cap - 1};
  SymTab stab = {arena_alloc(&cc->arena, sizeof(Sym) * cap), cap - 1};
  cc->symtab = gtab.v;
  cc->symtab_cap = (int)cap;
  S.tab = &gtab;
  /* pass 1: every name, so that uses before definitions can be told apart */
  int pos = 0;
  for (Decl *d = cc->decls; d; d = d->next, pos++) {
    if (!d->name || d->kind == DECL_STEP || d->kind == DECL_PIPELINE) continue;
    SymX *prev = tab_find(&gtab, d->name);
    if (prev) {
      diag_error(cc, d->loc, "redefinition of '%s'", d->name);
      diag_note(cc, prev->decl->loc, "previous definition is here");
      continue;
    }
    tab_add(&gtab, d, pos);
  }
  /* steps with the same name (a separate table: step names are not values) */
  for (Decl *d = cc->decls; d; d = d->next) {
    if (d->kind != DECL_STEP || !d->name) continue;
    SymX *prev = tab_find(&stab, d->name);
    if (prev) {
      diag_error(cc, d->loc, "redefinition of step '%s'", d->name);
      diag_note(cc, prev->decl->loc, "previous definition is here");
    } else {
      tab_add(&stab, d, 0);
    }
    SymX *g = tab_find(&gtab, d->name);
    if (g) {
      diag_error(cc, d->loc, "step name '%s' is already %s %s", d->name, article(g->decl->kind), decl_kind_name(g->decl->kind));
      diag_note(cc, g->decl->loc, "'%s' is declared here", d->name);
    }
  }
  /* pass 2: check each declaration in order */
  pos = 0;
  for (Decl *d = cc->decls; d; d = d->next, pos++) {
    S.pos = pos;
    if (d->kind == DECL_STEP) check_step(&S, d);
    else check_decl(&S, d);
  }
  if (!cc->pipeline && cc->n_errors == 0 && cc->files) {
    Loc at = {cc->files, 1, 1, 1};
    diag_error(cc, at, "missing 'pipeline NAME;' declaration");
  }
  if (cc->n_errors == 0) check_graph(&S);
  if (cc->n_errors == 0) check_plans_built(cc);
  if (cc->n_errors == 0) check_compact_omits(&S);
  return cc->n_errors;
}
