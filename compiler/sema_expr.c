/*
** sema_expr.c -- expression typing: promotions, assignability, literals that must fit,
** field element access (map indexing rules), names, builtin calls, operators; constant
** folding (as the generated code computes), extents and shapes.
*/
#include "sema_internal.h"

#include <stdlib.h>
#include <ctype.h>
#include <string.h>

/* ------------------------------------------------------------------ types */

bool is_num(DType t) { return dtype_is_int(t) || dtype_is_float(t) || dtype_is_complex(t); }

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

static int64_t fold_shift(int op, int64_t a, int64_t s, int bits, bool uns);

/*
** The value of an integer literal, possibly negated or complemented, or combined with
** + - * / % & | ^ << >> of literals (`1 << 40`, `~0`), computed in i64 as the generated code
** computes such an untyped tree. False when it is not one, or for a division by zero (an
** error of its own).
*/
static bool int_literal_value(const Expr *e, int64_t *v) {
  int64_t a, b;
  switch (e->kind) {
  case EX_INT: *v = e->ival; return true;
  case EX_UNARY:
    if ((e->op != OP_NEG && e->op != OP_BNOT) || !int_literal_value(e->args[0], &a)) return false;
    *v = e->op == OP_NEG ? (int64_t)(0 - (uint64_t)a) : ~a;
    return true;
  case EX_BINARY:
    if (!int_literal_value(e->args[0], &a) || !int_literal_value(e->args[1], &b)) return false;
    switch (e->op) {
    case OP_ADD: *v = (int64_t)((uint64_t)a + (uint64_t)b); return true;
    case OP_SUB: *v = (int64_t)((uint64_t)a - (uint64_t)b); return true;
    case OP_MUL: *v = (int64_t)((uint64_t)a * (uint64_t)b); return true;
    case OP_BAND: *v = a & b; return true;
    case OP_BOR: *v = a | b; return true;
    case OP_BXOR: *v = a ^ b; return true;
    case OP_SHL: case OP_SHR: *v = fold_shift(e->op, a, b, 64, false); return true;
    case OP_DIV: case OP_MOD:
      if (b == 0) return false;
      if (a == INT64_MIN && b == -1) *v = e->op == OP_DIV ? INT64_MIN : 0;
      else *v = e->op == OP_DIV ? a / b : a % b;
      return true;
    default: return false;
    }
  default: return false;
  }
}


/* A literal adapts to the integer type it is stored into; its value must fit there
** (`k[i] = 3000000000;` into i32, or `u[i] = -1;`, would silently change the value). */
static void check_literal_fits(Sema *S, Loc loc, DType to, const Expr *v) {
  if (v->kind == EX_CALL && v->builtin == BI_SELECT && (v->flags & EXF_UNTYPED) && v->nargs == 3) {
    /* select(c, 3000000000, 1) adapts like its two literals: each must fit */
    check_literal_fits(S, v->args[1]->loc, to, v->args[1]);
    check_literal_fits(S, v->args[2]->loc, to, v->args[2]);
    return;
  }
  int64_t iv;
  if (!dtype_is_int(to) || !(v->flags & EXF_UNTYPED) || !dtype_is_int(v->type) || !int_literal_value(v, &iv))
    return;
  if (v->type == DT_U64 && v->kind == EX_INT) {   /* above INT64_MAX: only u64 holds it */
    if (to != DT_U64)
      diag_error(S->cc, loc, "integer constant %llu does not fit in '%s' (write %s(...) to convert it)",
                 (unsigned long long)v->uval, dtype_name(to), dtype_name(to));
    return;
  }
  if (v->type == DT_U64) return;
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

void check_assign_type(Sema *S, Loc loc, DType to, const Expr *v, const char *what) {
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


static bool is_index_of_map(Sema *S, const Expr *e) {
  return S->map && e->kind == EX_NAME && e->ref.local == S->map->index;
}

/* Two extents are the same when they name the same declaration or are equal constants. */
bool same_extent(const Expr *a, const Expr *b) {
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

/* The value of `c` when it is an integer constant, else false. */
static bool const_int(Sema *S, const Expr *c, int64_t *v) {
  bool isf;
  double d;
  return (c->flags & EXF_CONST) && fold(S, c, &isf, v, &d) && !isf;
}

/* When extent `ext` is `over + c` (or `c + over`, or both are constants), c a non-negative
** integer constant: c (0 when they are the same); otherwise -1. The map index k < over is
** then in bounds. The constant may come in several terms, as written: `n + 1 + 1` and
** `n + 3 - 1` are `n + 2` (the margin of the inner extent, plus or minus the outer term). */
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
  if (ext->kind != EX_BINARY) return -1;
  int64_t v, m, r;
  if (ext->op == OP_SUB) {   /* n + 3 - 1: the inner margin less the constant, if still >= 0 */
    if (!const_int(S, ext->args[1], &v)) return -1;
    m = extent_margin(S, ext->args[0], over);
    return m >= 0 && !__builtin_sub_overflow(m, v, &r) && r >= 0 ? r : -1;
  }
  if (ext->op != OP_ADD) return -1;
  for (int side = 0; side < 2; side++) {
    if (!const_int(S, ext->args[1 - side], &v) || v < 0) continue;
    m = extent_margin(S, ext->args[side], over);
    if (m >= 0 && !__builtin_add_overflow(m, v, &r)) return r;
  }
  return -1;
}

/* Text of an extent for messages ("N", "n_cells + 1", "3"). */
void extent_text(char *buf, size_t n, const Expr *e) {
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

const Expr *last_extent(const Decl *f) {
  return f && f->shape.rank > 0 ? f->shape.ext[f->shape.rank - 1] : NULL;
}

/* The dim whose live extent f's rows follow (its last extent), or NULL. */
Decl *dim_of(const Decl *f) {
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
DType check_index(Sema *S, Expr *e, int write) {
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
  if (S->map && S->map->gndim) return grid_check_index(S, e, f, write);   /* sema_grid.c */
  if (f->grid_of && f->grid_of->grid->split) return grid_split_index(S, e, f);
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
  if (S->step) hz_op(S, write ? HZ_WRITE : HZ_READ, f, &e->loc);
  bool gather = e->flags & EXF_GATHER;
  map_access(S, f, write == 0 ? (gather ? MA_GATHER : MA_READ)
                   : write == 1 ? MA_STORE : (gather ? MA_SCATTER : MA_ADD), e->loc);
  if (write == 2) hz_op(S, HZ_READ, f, &e->loc);
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
    if (S->step) hz_op(S, HZ_READ, f, &e->loc);
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
  if (e->builtin == BI_NONE && grid_check_call(S, e)) return e->type;   /* coord() (sema_grid.c) */
  if (e->builtin == BI_NONE && fft_check_wave(S, e)) return e->type;    /* wave() (sema_fft.c) */
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

/* A cast T(x): complex values become real only through real(), imag() or abs(). */
static DType check_cast(Sema *S, Expr *e) {
  DType t = check_expr(S, e->args[0]);
  e->flags |= e->args[0]->flags & (EXF_CONST | EXF_SETUP);
  if (t != DT_VOID && dtype_is_complex(t) && !dtype_is_complex(e->cast_to)) {
    diag_error(S->cc, e->loc, "cannot cast complex '%s' to '%s' (use real(), imag() or abs())", dtype_name(t), dtype_name(e->cast_to));
    return DT_VOID;
  }
  e->type = e->cast_to;
  return e->type;
}

/* Unary '!' (bool), '~' (integers) and '-' (signed numbers). */
static DType check_unary(Sema *S, Expr *e) {
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

/* Binary operators: logical, comparisons, bitwise (integers, with hints for C habits),
** arithmetic (promoted operands, constant division by zero, % on integers). */
static DType check_binary(Sema *S, Expr *e) {
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

/*
** Type an expression; sets e->type (DT_VOID after an error, which silences follow-ups).
*/
DType check_expr(Sema *S, Expr *e) {
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
  case EX_CAST:
    return check_cast(S, e);
  case EX_UNARY:
    return check_unary(S, e);
  case EX_BINARY:
    return check_binary(S, e);
  }
  return DT_VOID;
}

/* ------------------------------------------------------------------ constants and extents */

/* A float converted to an integer type as the generated code does (templates/int.tmpl,
** cnp_g_f64_*): NaN is 0, out-of-range values saturate, others truncate toward zero. u64
** values are returned as their bit pattern. */
int64_t fold_f2i(double x, DType to) {
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

/* The integer value v (a u64 one as its bit pattern) as a double. */
static double int_double(int64_t v, DType t) { return t == DT_U64 ? (double)(uint64_t)v : (double)v; }

/* A typed integer result of node e in e's type: an i32 operation wraps modulo 2^32 as the
** generated code computes it (an untyped literal tree keeps its exact value, which must fit
** where it is used: check_literal_fits). */
static void fold_int_result(const Expr *e, int64_t *iv, double *fv) {
  if (e->type == DT_I32 && !(e->flags & EXF_UNTYPED)) *iv = (int32_t)(uint32_t)*iv;
  *fv = int_double(*iv, e->type);
}

/* An operand (value isf/iv/fv of node a) of a floating operation of type t: in f32 / f16
** operations it is the f32 value the generated code computes with (an integer or a literal
** converted to f32, to the nearest f16 for f16); in f64 ones the double. */
static double fold_float_operand(const Expr *a, bool isf, int64_t iv, double fv, DType t) {
  double v = isf ? fv : int_double(iv, a->type);
  if (t != DT_F32 && t != DT_F16) return v;
  if (!isf) v = a->type == DT_U64 ? (double)(float)(uint64_t)iv : (double)(float)iv;
  if (t == DT_F16 && (!isf || (a->flags & EXF_UNTYPED))) return half_round(isf ? fv : v);
  return (double)(float)v;
}

/*
** Fold a constant expression (literals, consts, + - * / %, bit operators, unary - and ~,
** casts) with the rules of the generated code (docs/language.md, Types): i32 operations wrap
** in 32 bits, f32 and f16 ones are computed in f32, casts round (f32, f16) or saturate.
** Returns false (after reporting) when it is not constant.
*/
bool fold(Sema *S, const Expr *e, bool *is_float, int64_t *iv, double *fv) {
  switch (e->kind) {
  case EX_INT: *is_float = false; *iv = e->ival; *fv = int_double(e->ival, e->type); return true;
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
      *fv = int_double(*iv, e->cast_to);
      *is_float = false;
    }
    else if (dtype_is_float(e->cast_to)) {   /* f32(0.1) is the float nearest 0.1 */
      const Expr *a = e->args[0];
      if (e->cast_to == DT_F16)
        *fv = half_round(*is_float ? *fv : a->type == DT_U64 ? (double)(float)(uint64_t)*iv : (double)(float)*iv);
      else if (e->cast_to == DT_F32)
        *fv = *is_float ? (double)(float)*fv : a->type == DT_U64 ? (double)(float)(uint64_t)*iv : (double)(float)*iv;
      else if (!*is_float)
        *fv = int_double(*iv, a->type);
      *is_float = true;
    }
    return true;
  }
  case EX_UNARY:
    if (e->op != OP_NEG && e->op != OP_BNOT) break;
    if (!fold(S, e->args[0], is_float, iv, fv)) return false;
    if (e->op == OP_BNOT) {
      *iv = ~*iv;
      fold_int_result(e, iv, fv);
      return true;
    }
    if (*is_float) {
      *fv = -*fv;
      return true;
    }
    *iv = (int64_t)(0 - (uint64_t)*iv);
    fold_int_result(e, iv, fv);
    return true;
  case EX_BINARY: {
    bool fa, fb;
    int64_t ia, ib;
    double da, db;
    if (e->op > OP_MOD && !op_is_bitwise(e->op)) break;
    if (!fold(S, e->args[0], &fa, &ia, &da) || !fold(S, e->args[1], &fb, &ib, &db)) return false;
    *is_float = fa || fb;
    if (*is_float) {
      DType ft = e->flags & EXF_UNTYPED ? DT_F64 : e->type;   /* untyped literals: exact */
      da = fold_float_operand(e->args[0], fa, ia, da, ft);
      db = fold_float_operand(e->args[1], fb, ib, db, ft);
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
      if (ft == DT_F32 || ft == DT_F16) *fv = (double)(float)*fv;   /* computed in f32 */
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
    fold_int_result(e, iv, fv);
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
bool check_extent_expr(Sema *S, Expr *e, const char *what) {
  switch (e->kind) {
  case EX_INT:
    e->type = DT_I64;
    e->flags |= EXF_CONST | EXF_SETUP;
    if (e->ival < 0) {   /* a literal above INT64_MAX (a u64 one) */
      diag_error(S->cc, e->loc, "%s overflows int64 (it is %llu)", what, (unsigned long long)e->ival);
      return false;
    }
    if (e->ival == 0) {
      diag_error(S->cc, e->loc, "%s must be positive (it is 0)", what);
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
    if (d->kind == DECL_CONST && d->dtype == DT_U64 && d->ival < 0) {   /* extents are int64 */
      diag_error(S->cc, e->loc, "%s overflows int64 ('%s' is %llu)", what, d->name,
                 (unsigned long long)d->ival);
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
void check_const_positive(Sema *S, Expr *e, const char *what) {
  bool f;
  int64_t v;
  double fv;
  if (e->kind != EX_INT && (e->flags & EXF_CONST) && fold(S, e, &f, &v, &fv) && !f && v <= 0)
    diag_error(S->cc, e->loc, "%s must be positive (it is %lld)", what, (long long)v);
}

void check_shape(Sema *S, Shape *sh) {
  for (int i = 0; i < sh->rank; i++)
    if (check_extent_expr(S, sh->ext[i], "an extent")) check_const_positive(S, sh->ext[i], "an extent");
}

/* ---- draw numbers in source order */

/* check_call numbers the draws in the order it checks them: arguments before their call,
** a statement's value before its target. docs/language.md numbers them in source order (the
** first call written is 0), so once the program is checked they are renumbered by their
** places: steps in program order, in a step by line and column (found by the differential
** tests: uniform(u64(normal(s))), a draw in a scatter-add's index; draw_source_order). */
typedef struct DrawList { Expr **v; int n, cap; Arena *a; } DrawList;

static void draws_of_expr(DrawList *l, Expr *e) {
  if (!e) return;
  if (e->kind == EX_CALL && builtin_is_draw(e->builtin)) {
    if (l->n == l->cap) {
      int cap = l->cap ? 2 * l->cap : 16;
      Expr **v = arena_alloc(l->a, (size_t)cap * sizeof *v);
      if (l->n) memcpy(v, l->v, (size_t)l->n * sizeof *v);
      l->v = v, l->cap = cap;
    }
    l->v[l->n++] = e;
  }
  for (int i = 0; i < e->nargs; i++) draws_of_expr(l, e->args[i]);
}

static void draws_of_stmts(DrawList *l, Stmt *s) {
  for (; s; s = s->next) {
    draws_of_expr(l, s->target);
    draws_of_expr(l, s->value);
    draws_of_expr(l, s->value2);
    draws_of_stmts(l, s->body);
    draws_of_stmts(l, s->else_body);
  }
}

static int draw_loc_cmp(const void *a, const void *b) {
  const Expr *x = *(Expr *const *)a, *y = *(Expr *const *)b;
  if (x->loc.line != y->loc.line) return x->loc.line < y->loc.line ? -1 : 1;
  return (x->loc.col > y->loc.col) - (x->loc.col < y->loc.col);
}

void sema_number_draws(Cnp *cc) {
  int64_t next = 0;
  for (Decl *d = cc->decls; d; d = d->next) {
    if (d->kind != DECL_STEP) continue;
    DrawList l = {.a = &cc->arena};
    draws_of_stmts(&l, d->body);
    if (l.n) qsort(l.v, (size_t)l.n, sizeof *l.v, draw_loc_cmp);
    for (int i = 0; i < l.n; i++) l.v[i]->ival = next++;
  }
}
