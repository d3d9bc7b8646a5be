/*
** ast.c -- AST constructors called from the grammar actions (one call per action),
** plus the small tables (dtypes, operators, builtins, declaration kinds).
*/
#include "cnpc.h"
#include "parser.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ tables */

static inline bool same_bytes(const char *a, const char *b, int n) {   /* names are short */
  for (int i = 0; i < n; i++)
    if (a[i] != b[i]) return false;
  return true;
}

static const char *const dtype_names[DT__COUNT] = {
  "void", "bool", "i32", "i64", "u64", "f16", "f32", "f64", "c64", "c128",
};
static const unsigned char dtype_lens[DT__COUNT] = {4, 4, 3, 3, 3, 3, 3, 3, 3, 4};
static const size_t dtype_sizes[DT__COUNT] = {0, 1, 4, 8, 8, 2, 4, 8, 8, 16};

const char *dtype_name(DType t) { return t < DT__COUNT ? dtype_names[t] : "?"; }
size_t dtype_size(DType t) { return t < DT__COUNT ? dtype_sizes[t] : 0; }

DType dtype_sum_out(DType t) {
  return (t == DT_BOOL || dtype_is_int(t)) ? DT_F64 : t;
}
DType dtype_sum_acc(DType t) {
  return t == DT_F16 ? DT_F32 : dtype_sum_out(t);
}

const char *op_text(Op op) {
  static const char *const t[] = {
    [OP_NONE] = "?", [OP_NEG] = "-", [OP_NOT] = "!", [OP_ADD] = "+", [OP_SUB] = "-",
    [OP_MUL] = "*", [OP_DIV] = "/", [OP_MOD] = "%", [OP_EQ] = "==", [OP_NE] = "!=",
    [OP_LT] = "<", [OP_LE] = "<=", [OP_GT] = ">", [OP_GE] = ">=", [OP_AND] = "&&",
    [OP_OR] = "||", [OP_BNOT] = "~", [OP_BAND] = "&", [OP_BOR] = "|", [OP_BXOR] = "^",
    [OP_SHL] = "<<", [OP_SHR] = ">>",
  };
  return op <= OP_SHR ? t[op] : "?";
}

static const struct { const char *name; int arity; } builtins[BI__COUNT] = {
  [BI_NONE] = {"?", 0},    [BI_SQRT] = {"sqrt", 1}, [BI_EXP] = {"exp", 1},
  [BI_LOG] = {"log", 1},   [BI_SIN] = {"sin", 1},   [BI_COS] = {"cos", 1},
  [BI_FLOOR] = {"floor", 1}, [BI_CEIL] = {"ceil", 1}, [BI_FMOD] = {"fmod", 2},
  [BI_POW] = {"pow", 2},   [BI_MIN] = {"min", 2},   [BI_MAX] = {"max", 2},
  [BI_ABS] = {"abs", 1},   [BI_SELECT] = {"select", 3}, [BI_REAL] = {"real", 1},
  [BI_IMAG] = {"imag", 1}, [BI_CONJ] = {"conj", 1}, [BI_ARG] = {"arg", 1},
  [BI_COMPLEX] = {"complex", 2}, [BI_ATAN2] = {"atan2", 2}, [BI_TANH] = {"tanh", 1},
  [BI_SINH] = {"sinh", 1}, [BI_COSH] = {"cosh", 1}, [BI_ERF] = {"erf", 1},
  [BI_ROUND] = {"round", 1}, [BI_TRUNC] = {"trunc", 1}, [BI_ISNAN] = {"isnan", 1},
  [BI_ISFINITE] = {"isfinite", 1}, [BI_UNIFORM] = {"uniform", 1}, [BI_NORMAL] = {"normal", 1},
  [BI_UNIFORM_F32] = {"uniform_f32", 1}, [BI_NORMAL_F32] = {"normal_f32", 1},
  [BI_STEP_INDEX] = {"step_index", 0},
};

const char *builtin_name(Builtin b) { return b < BI__COUNT ? builtins[b].name : "?"; }
int builtin_arity(Builtin b) { return b < BI__COUNT ? builtins[b].arity : 0; }

Builtin builtin_lookup(const char *z, int n) {
  for (int b = 1; b < BI__COUNT; b++)
    if ((int)strlen(builtins[b].name) == n && same_bytes(builtins[b].name, z, n))
      return (Builtin)b;
  return BI_NONE;
}

const char *decl_kind_name(DeclKind k) {
  static const char *const t[DECL__COUNT] = {
    "pipeline", "import", "param", "const", "dim", "field", "stream", "event",
    "snapshot", "mpi staging", "mirror", "plan", "kernel", "step", "grid",
  };
  return k < DECL__COUNT ? t[k] : "?";
}

/* What a declaration is, for messages: a field declared `scalar` or `history` says so. */
const char *decl_noun(const Decl *d) {
  if (d->kind == DECL_FIELD && d->scalar) return "scalar";
  if (d->kind == DECL_FIELD && d->history_of.name) return "history";
  return decl_kind_name(d->kind);
}

/* ------------------------------------------------------------------ helpers */

/* Inline versions for this file (the parser calls an ast_* function per reduction). */
static inline Loc loc_of(Cnp *cc, Token t) {
  Loc l = {cc->cur_file, t.line, t.col, t.n > 0 ? t.n : 1};
  return l;
}

static inline Loc span_of(Loc a, Loc b) {
  if (a.file == b.file && a.line == b.line && b.col + b.len > a.col) a.len = b.col + b.len - a.col;
  return a;
}

Loc ast_loc(Cnp *cc, Token t) { return loc_of(cc, t); }

/* From the start of a to the end of b when both are on one line, else a. */
Loc ast_span(Loc a, Loc b) { return span_of(a, b); }

static unsigned hash_bytes(const char *z, size_t n) {
  unsigned h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)z[i]) * 16777619u;
  return h;
}

/*
** Intern an identifier: one arena copy per distinct name, so the many references to a
** name share it (and the front end's memory stays proportional to the distinct names).
** Sema relies on it: names are compared and hashed by pointer. Open addressing on
** (hash, length, bytes).
*/
static inline const char *intern(Cnp *cc, Token t) {
  if (cc->intern_n * 2 >= cc->intern_cap) {
    int cap = cc->intern_cap ? 2 * cc->intern_cap : 1024;
    InternEnt *v = arena_alloc(&cc->arena, sizeof *v * (size_t)cap);
    for (int i = 0; i < cc->intern_cap; i++) {
      InternEnt e = cc->intern[i];
      if (!e.s) continue;
      unsigned k = e.hash & (unsigned)(cap - 1);
      while (v[k].s) k = (k + 1) & (unsigned)(cap - 1);
      v[k] = e;
    }
    cc->intern = v;
    cc->intern_cap = cap;
  }
  unsigned h = hash_bytes(t.z, (size_t)t.n);
  unsigned mask = (unsigned)(cc->intern_cap - 1), k = h & mask;
  for (InternEnt *e; (e = &cc->intern[k])->s; k = (k + 1) & mask)
    if (e->hash == h && e->len == t.n && same_bytes(e->s, t.z, t.n)) return e->s;
  char *s = arena_strndup(&cc->arena, t.z, (size_t)t.n);
  cc->intern[k] = (InternEnt){s, h, t.n};
  cc->intern_n++;
  return s;
}

const char *ast_str(Cnp *cc, Token t) { return intern(cc, t); }

const char *ast_intern_find(Cnp *cc, const char *z, size_t n) {
  if (!cc->intern_cap || n > INT32_MAX) return NULL;
  unsigned h = hash_bytes(z, n);
  unsigned mask = (unsigned)(cc->intern_cap - 1), k = h & mask;
  for (InternEnt *e; (e = &cc->intern[k])->s; k = (k + 1) & mask)
    if (e->hash == h && (size_t)e->len == n && memcmp(e->s, z, n) == 0) return e->s;
  return NULL;
}

static inline Ref ref_of(Cnp *cc, Token t) {
  Ref r = {intern(cc, t), loc_of(cc, t), NULL, NULL};
  return r;
}

Ref ast_ref(Cnp *cc, Token t) { return ref_of(cc, t); }

DType ast_dtype(Cnp *cc, Token t) {
  for (int d = DT_BOOL; d < DT__COUNT; d++)
    if (dtype_lens[d] == t.n && same_bytes(dtype_names[d], t.z, t.n))
      return (DType)d;
  diag_error(cc, loc_of(cc, t), "unknown type '%.*s'", t.n, t.z);
  return DT_F64;
}

static bool tok_is(Token t, const char *s) {
  return (int)strlen(s) == t.n && memcmp(s, t.z, (size_t)t.n) == 0;
}

static Expr *new_expr(Cnp *cc, ExprKind k, Loc loc) {
  Expr *e = arena_alloc(&cc->arena, sizeof *e);
  e->kind = k;
  e->loc = loc;
  e->depth = 1;
  return e;
}

/* An operator node with room for its n operands in the same allocation. */
static Expr *new_op_expr(Cnp *cc, ExprKind k, Loc loc, int n) {
  Expr *e = arena_alloc(&cc->arena, sizeof *e + sizeof *e->args * (size_t)n);
  e->kind = k;
  e->loc = loc;
  e->depth = 1;
  e->args = (Expr **)(e + 1);
  e->nargs = n;
  return e;
}

/*
** Give `e` its depth from its operands; past CNP_MAX_EXPR_DEPTH report once and cut the
** tree (so later phases never recurse deeply).
*/
static inline Expr *finish_depth(Cnp *cc, Expr *e) {
  int d = 0;
  for (int i = 0; i < e->nargs; i++)
    if (e->args[i] && e->args[i]->depth > d) d = e->args[i]->depth;
  e->depth = d + 1;
  if (e->depth > CNP_MAX_EXPR_DEPTH) {
    if (!cc->depth_reported)
      diag_error(cc, e->loc, "expression nested too deeply (more than %d levels)", CNP_MAX_EXPR_DEPTH);
    cc->depth_reported = true;
    Expr *z = new_expr(cc, EX_INT, e->loc);
    return z;
  }
  return e;
}

/* ------------------------------------------------------------------ expressions */

Expr *ast_int(Cnp *cc, Token t) {
  Expr *e = new_expr(cc, EX_INT, loc_of(cc, t));
  uint64_t v = 0;
  bool hex = t.n > 2 && t.z[0] == '0' && (t.z[1] == 'x' || t.z[1] == 'X');
  bool over = false;
  for (int i = hex ? 2 : 0; i < t.n; i++) {
    char c = t.z[i];
    unsigned d;
    if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
    else if (hex && c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
    else if (hex && c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
    else break;   /* malformed number: already reported by the lexer */
    unsigned base = hex ? 16 : 10;
    if (v > (UINT64_MAX - d) / base) over = true;
    v = v * base + d;
  }
  if (over) diag_error(cc, e->loc, "integer literal '%.*s' is too large", t.n, t.z);
  e->uval = v;
  e->ival = (int64_t)v;
  return e;
}

/*
** The value of a decimal literal when it is exact and fast to get: at most 2^53 as an
** integer mantissa m and a power of ten 10^k with |k| <= 22 (both exact doubles), so one
** correctly rounded multiply or divide gives the same double as strtod. Else false.
*/
static bool fast_float(const char *z, int n, double *out) {
  static const double pow10[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
  };
  uint64_t m = 0;
  int i = 0, scale = 0;
  for (; i < n && z[i] >= '0' && z[i] <= '9'; i++) {
    if (m > (UINT64_C(1) << 53) / 10) return false;
    m = m * 10 + (uint64_t)(z[i] - '0');
  }
  if (i < n && z[i] == '.')
    for (i++; i < n && z[i] >= '0' && z[i] <= '9'; i++) {
      if (m > (UINT64_C(1) << 53) / 10) return false;
      m = m * 10 + (uint64_t)(z[i] - '0');
      scale--;
    }
  if (i < n && (z[i] == 'e' || z[i] == 'E')) {
    int sign = 1, x = 0;
    i++;
    if (i < n && (z[i] == '+' || z[i] == '-')) sign = z[i++] == '-' ? -1 : 1;
    for (; i < n && z[i] >= '0' && z[i] <= '9'; i++) {
      if (x > 1000) return false;
      x = x * 10 + (z[i] - '0');
    }
    scale += sign * x;
  }
  if (i != n || m > (UINT64_C(1) << 53) || scale < -22 || scale > 22) return false;
  *out = scale < 0 ? (double)m / pow10[-scale] : (double)m * pow10[scale];
  return true;
}

Expr *ast_float(Cnp *cc, Token t) {
  Expr *e = new_expr(cc, EX_FLOAT, loc_of(cc, t));
  if (fast_float(t.z, t.n, &e->fval)) return e;
  char *s = arena_strndup(&cc->arena, t.z, (size_t)t.n);
  errno = 0;
  e->fval = strtod(s, NULL);
  if (errno == ERANGE && (e->fval > 1.0 || e->fval < -1.0))
    diag_error(cc, e->loc, "floating literal '%s' is out of range", s);
  return e;
}

/* `2.5i`: an imaginary literal is the complex literal complex(0.0, 2.5) (docs/language.md,
** Types): it takes the other operand's precision like complex(0.0, 1.0) does. */
Expr *ast_imag(Cnp *cc, Token t) {
  Token digits = t, name = t;
  digits.n = t.n - 1;                          /* without the 'i' */
  name.z = "complex";
  name.n = 7;
  Expr *e = new_op_expr(cc, EX_CALL, loc_of(cc, t), 2);
  e->ref = ref_of(cc, name);
  e->ref.loc = e->loc;
  e->builtin = builtin_lookup(name.z, name.n);
  e->args[0] = new_expr(cc, EX_FLOAT, loc_of(cc, t));
  e->args[0]->fval = 0.0;
  e->args[1] = ast_float(cc, digits);
  e->args[1]->loc = e->loc;
  return finish_depth(cc, e);
}

Expr *ast_bool(Cnp *cc, Token t, bool v) {
  Expr *e = new_expr(cc, EX_BOOL, loc_of(cc, t));
  e->ival = v;
  return e;
}

Expr *ast_name(Cnp *cc, Token t) {
  Expr *e = new_expr(cc, EX_NAME, loc_of(cc, t));
  e->ref = ref_of(cc, t);
  return e;
}

Expr *ast_index(Cnp *cc, Token name, ExprList idx, Token close) {
  Expr *e = new_expr(cc, EX_INDEX, span_of(loc_of(cc, name), loc_of(cc, close)));
  e->ref = ref_of(cc, name);
  e->args = idx.v;
  e->nargs = idx.n;
  return finish_depth(cc, e);
}

Expr *ast_unary(Cnp *cc, Token optok, Op op, Expr *a) {
  Expr *e = new_op_expr(cc, EX_UNARY, span_of(loc_of(cc, optok), a->loc), 1);
  e->op = op;
  e->args[0] = a;
  return finish_depth(cc, e);
}

Expr *ast_binary(Cnp *cc, Op op, Expr *a, Expr *b) {
  Expr *e = new_op_expr(cc, EX_BINARY, span_of(a->loc, b->loc), 2);
  e->op = op;
  e->args[0] = a;
  e->args[1] = b;
  return finish_depth(cc, e);
}

Expr *ast_call(Cnp *cc, Token name, ExprList args, Token close) {
  Expr *e = new_expr(cc, EX_CALL, span_of(loc_of(cc, name), loc_of(cc, close)));
  e->ref = ref_of(cc, name);
  e->builtin = builtin_lookup(name.z, name.n);
  e->args = args.v;
  e->nargs = args.n;
  return finish_depth(cc, e);
}

Expr *ast_cast(Cnp *cc, Token type, Expr *a, Token close) {
  Expr *e = new_op_expr(cc, EX_CAST, span_of(loc_of(cc, type), loc_of(cc, close)), 1);
  e->cast_to = ast_dtype(cc, type);
  e->args[0] = a;
  return finish_depth(cc, e);
}

Expr *ast_paren(Cnp *cc, Token open, Expr *a, Token close) {
  a->loc = span_of(loc_of(cc, open), loc_of(cc, close));
  return a;
}

/* ------------------------------------------------------------------ lists */

ExprList ast_exprs(Cnp *cc, ExprList l, Expr *e) {
  if (!e) return l;
  if (l.n == l.cap) {
    int cap = l.cap ? 2 * l.cap : 4;
    Expr **v = arena_alloc(&cc->arena, sizeof *v * (size_t)cap);
    if (l.n) memcpy(v, l.v, sizeof *v * (size_t)l.n);
    l.v = v;
    l.cap = cap;
  }
  l.v[l.n++] = e;
  return l;
}

RefVec ast_refs(Cnp *cc, RefVec l, Token t) {
  if (!t.z) return l;
  if (l.n == l.cap) {
    int cap = l.cap ? 2 * l.cap : 4;
    Ref *v = arena_alloc(&cc->arena, sizeof *v * (size_t)cap);
    if (l.n) memcpy(v, l.v, sizeof *v * (size_t)l.n);
    l.v = v;
    l.cap = cap;
  }
  l.v[l.n++] = ref_of(cc, t);
  return l;
}

StmtList ast_stmts(Cnp *cc, StmtList l, Stmt *s) {
  (void)cc;
  if (!s) return l;
  if (l.tail) l.tail->next = s;
  else l.head = s;
  l.tail = s;
  return l;
}

RefList ast_reflist(RefVec v) {
  RefList r = {v.v, v.n};
  return r;
}

/* ------------------------------------------------------------------ declarations */

static Decl *new_decl(Cnp *cc, DeclKind k, Token kw, Token *name) {
  Decl *d = arena_alloc(&cc->arena, sizeof *d);
  d->kind = k;
  d->kw_loc = loc_of(cc, kw);
  d->loc = name ? loc_of(cc, *name) : d->kw_loc;
  d->name = name ? intern(cc, *name) : NULL;
  d->file = cc->cur_file;
  d->index = cc->n_decl[k]++;
  *cc->decls_tail = d;
  cc->decls_tail = &d->next;
  return d;
}

void ast_pipeline(Cnp *cc, Token kw, Token name) { new_decl(cc, DECL_PIPELINE, kw, &name); }

void ast_import(Cnp *cc, Token kw, Token path) {
  Decl *d = new_decl(cc, DECL_IMPORT, kw, NULL);
  d->loc = loc_of(cc, path);
  d->path = path.n >= 2 ? arena_strndup(&cc->arena, path.z + 1, (size_t)path.n - 2) : "";
  lex_import(cc, d->loc, d->path);
}

void ast_param(Cnp *cc, Token kw, Token name, Token type, bool setup) {
  Decl *d = new_decl(cc, DECL_PARAM, kw, &name);
  d->dtype = ast_dtype(cc, type);
  d->setup = setup;
}

void ast_const(Cnp *cc, Token kw, Token name, Token *type, Expr *value) {
  Decl *d = new_decl(cc, DECL_CONST, kw, &name);
  d->dtype = type ? ast_dtype(cc, *type) : DT_VOID;
  d->value = value;
}

void ast_dim(Cnp *cc, Token kw, Token name) { new_decl(cc, DECL_DIM, kw, &name); }

void ast_field(Cnp *cc, Token kw, Token name, Token type, ExprList ext) {
  Decl *d = new_decl(cc, DECL_FIELD, kw, &name);
  d->dtype = ast_dtype(cc, type);
  d->shape.ext = ext.v;
  d->shape.rank = ext.n;
}

void ast_grid_rfft(Cnp *cc, Token kw, Token name, Token func, Token of, Token *measure, Token close) {
  Decl *d = new_decl(cc, DECL_GRID, kw, &name);
  d->grid = arena_alloc(&cc->arena, sizeof *d->grid);
  if (!tok_is(func, "rfft"))
    diag_error(cc, loc_of(cc, func), "a grid is '[extents]' or 'rfft(G)', not '%.*s(..)'", func.n, func.z);
  d->target = ref_of(cc, of);
  ExprList args = ast_exprs(cc, (ExprList){0}, ast_name(cc, of));
  if (measure) {
    d->fft_measure = true;
    if (!tok_is(*measure, "measure"))
      diag_error(cc, loc_of(cc, *measure), "expected 'measure' (FFTW_MEASURE planning) or ')', not '%.*s'",
                 measure->n, measure->z);
    args = ast_exprs(cc, args, ast_name(cc, *measure));
  }
  d->value = ast_call(cc, func, args, close);
}

void ast_grid_rfft_word(Cnp *cc, Token kw, Token name, Token func, Token of, Token close, Token word) {
  ast_grid_rfft(cc, kw, name, func, of, NULL, close);
  if (tok_is(word, "split"))
    diag_error(cc, loc_of(cc, word), "a spectral grid is not split by itself: rfft(G) of a split grid G is split "
               "(along axis 1) already");
  else
    diag_error(cc, loc_of(cc, word), "a spectral grid takes no clauses: 'rfft(G);', not '%.*s'", word.n, word.z);
}

void ast_grid(Cnp *cc, Token kw, Token name, ExprList ext, ExprList clauses) {
  Decl *d = new_decl(cc, DECL_GRID, kw, &name);
  d->grid = arena_alloc(&cc->arena, sizeof *d->grid);
  d->shape.ext = ext.v;   /* the extents as written; sema checks them and fills d->grid */
  d->shape.rank = ext.n;
  d->grid->clauses = clauses.v;
  d->grid->n_clauses = clauses.n;
}

void ast_streams(Cnp *cc, Token kw, RefVec names) {
  for (int i = 0; i < names.n; i++) {
    Decl *d = new_decl(cc, DECL_STREAM, kw, NULL);
    d->name = names.v[i].name;
    d->loc = names.v[i].loc;
  }
}

void ast_events(Cnp *cc, Token kw, RefVec names) {
  for (int i = 0; i < names.n; i++) {
    Decl *d = new_decl(cc, DECL_EVENT, kw, NULL);
    d->name = names.v[i].name;
    d->loc = names.v[i].loc;
  }
}

static void expect_func(Cnp *cc, Token func, const char *want) {
  if (!tok_is(func, want))
    diag_error(cc, loc_of(cc, func), "expected '%s' here, not '%.*s'", want, func.n, func.z);
}

void ast_snapshot(Cnp *cc, Token kw, Token name, Token func, Token field, Expr *slots) {
  Decl *d = new_decl(cc, DECL_SNAPSHOT, kw, &name);
  expect_func(cc, func, "host_staging");
  d->target = ref_of(cc, field);
  d->value = slots;
  d->slots = 2;
}

void ast_mpi(Cnp *cc, Token kw, Token name, Token func, Token type, ExprList ext, Token aware) {
  Decl *d = new_decl(cc, DECL_MPI, kw, &name);
  expect_func(cc, func, "mpi_staging");
  d->dtype = ast_dtype(cc, type);
  d->shape.ext = ext.v;
  d->shape.rank = ext.n;
  if (!aware.z || tok_is(aware, "auto")) d->cuda_aware = CUDA_AWARE_AUTO;
  else if (tok_is(aware, "on")) d->cuda_aware = CUDA_AWARE_ON;
  else if (tok_is(aware, "off")) d->cuda_aware = CUDA_AWARE_OFF;
  else diag_error(cc, loc_of(cc, aware), "cuda_aware must be 'auto', 'on' or 'off', not '%.*s'", aware.n, aware.z);
}

void ast_mirror(Cnp *cc, Token kw, Token name, Token func, Token field) {
  Decl *d = new_decl(cc, DECL_MIRROR, kw, &name);
  expect_func(cc, func, "device_mirror");
  d->target = ref_of(cc, field);
}

void ast_plan(Cnp *cc, Token kw, Token name, Token func, Token key, Expr *n) {
  Decl *d = new_decl(cc, DECL_PLAN, kw, &name);
  expect_func(cc, func, "segments");
  d->target = ref_of(cc, key);
  d->value = n;
}

static const char *unquote(Cnp *cc, Token s) {
  return s.n >= 2 ? arena_strndup(&cc->arena, s.z + 1, (size_t)s.n - 2) : "";
}

void ast_kernel(Cnp *cc, Token kw, Token name, Token file, Token *host) {
  Decl *d = new_decl(cc, DECL_KERNEL, kw, &name);
  d->path = unquote(cc, file);
  d->path_loc = loc_of(cc, file);
  d->host_path = host ? unquote(cc, *host) : NULL;
}

/* `scalar NAME : TYPE;` is a field of shape [1] read by name (docs/language.md, Reductions). */
void ast_scalar(Cnp *cc, Token kw, Token name, Token type) {
  Decl *d = new_decl(cc, DECL_FIELD, kw, &name);
  d->dtype = ast_dtype(cc, type);
  d->scalar = true;
  Expr *one = arena_alloc(&cc->arena, sizeof *one);
  one->kind = EX_INT;
  one->ival = 1;
  one->loc = d->loc;
  d->shape.ext = arena_alloc(&cc->arena, sizeof(Expr *));
  d->shape.ext[0] = one;
  d->shape.rank = 1;
}

/* `history NAME = SCALAR[K];`: a field of shape [K], dtype of the scalar (set by sema). */
void ast_history(Cnp *cc, Token kw, Token name, Token scalar, Expr *k) {
  Decl *d = new_decl(cc, DECL_FIELD, kw, &name);
  d->history_of = ref_of(cc, scalar);
  d->shape.ext = arena_alloc(&cc->arena, sizeof(Expr *));
  d->shape.ext[0] = k;
  d->shape.rank = 1;
}

ExprList ast_every(Cnp *cc, Expr *k, Token offset_kw, Expr *j) {
  if (!tok_is(offset_kw, "offset"))
    diag_error(cc, loc_of(cc, offset_kw), "expected 'offset' or '{', not '%.*s'", offset_kw.n, offset_kw.z);
  return ast_exprs(cc, ast_exprs(cc, (ExprList){0}, k), j);
}

void ast_step(Cnp *cc, Token kw, Token *name, Token stream, RefVec after, ExprList every,
              StmtList body) {
  Decl *d = new_decl(cc, DECL_STEP, kw, name);
  d->every = every.n > 0 ? every.v[0] : NULL;
  d->every_offset = every.n > 1 ? every.v[1] : NULL;
  d->stream = ref_of(cc, stream);
  d->after = ast_reflist(after);
  d->body = body.head;
}

void ast_host_step(Cnp *cc, Stmt *s) {
  if (!s) return;
  Decl *d = arena_alloc(&cc->arena, sizeof *d);
  d->kind = DECL_STEP;
  d->kw_loc = d->loc = s->loc;
  d->file = cc->cur_file;
  d->index = cc->n_decl[DECL_STEP]++;
  d->body = s;
  *cc->decls_tail = d;
  cc->decls_tail = &d->next;
}

/* ------------------------------------------------------------------ statements */

static Stmt *new_stmt(Cnp *cc, StmtKind k, Loc loc) {
  Stmt *s = arena_alloc(&cc->arena, sizeof *s);
  s->kind = k;
  s->loc = loc;
  return s;
}

static Local *new_local(Cnp *cc, Token name, DType type, bool is_index) {
  Local *l = arena_alloc(&cc->arena, sizeof *l);
  l->name = intern(cc, name);
  l->loc = loc_of(cc, name);
  l->type = type;
  l->is_index = is_index;
  l->id = cc->n_locals++;
  return l;
}

Stmt *ast_map(Cnp *cc, Token kw, Token index, Token over, StmtList body) {
  Stmt *s = new_stmt(cc, ST_MAP, loc_of(cc, kw));
  s->index = new_local(cc, index, DT_I64, true);
  s->index->map = s;
  s->over = ref_of(cc, over);
  s->body = body.head;
  return s;
}

Stmt *ast_grid_map(Cnp *cc, Token kw, RefVec index, Token over, StmtList body) {
  Stmt *s = new_stmt(cc, ST_MAP, loc_of(cc, kw));
  s->gndim = index.n > 3 ? 3 : index.n;
  if (index.n > 3) diag_error(cc, index.v[3].loc, "a grid has at most 3 axes: a grid map takes 1 to 3 indices");
  for (int a = 0; a < s->gndim; a++) {
    Local *l = arena_alloc(&cc->arena, sizeof *l);
    l->name = index.v[a].name;
    l->loc = index.v[a].loc;
    l->type = DT_I64;
    l->is_index = true;
    l->id = cc->n_locals++;
    l->map = s;
    s->gidx[a] = l;
  }
  s->index = s->gidx[s->gndim - 1];
  s->over = ref_of(cc, over);
  s->body = body.head;
  return s;
}

Stmt *ast_named2(Cnp *cc, StmtKind k, Token kw, Token a, Token *b) {
  Stmt *s = new_stmt(cc, k, loc_of(cc, kw));
  s->a = ref_of(cc, a);
  if (b) s->b = ref_of(cc, *b);
  return s;
}

Stmt *ast_listop(Cnp *cc, StmtKind k, Token kw, Token a, RefVec list) {
  Stmt *s = new_stmt(cc, k, loc_of(cc, kw));
  s->a = ref_of(cc, a);
  s->list = ast_reflist(list);
  return s;
}

Stmt *ast_migrate_to(Cnp *cc, Token kw, RefVec list, Token to, Token grid, Token at, RefVec pos) {
  Stmt *s = new_stmt(cc, ST_MIGRATE_TO, loc_of(cc, kw));
  if (!tok_is(to, "to"))
    diag_error(cc, loc_of(cc, to), "expected 'by DEST' or 'to GRID at (POS...)' after the arrays of "
               "migrate, not '%.*s'", to.n, to.z);
  if (!tok_is(at, "at"))
    diag_error(cc, loc_of(cc, at), "expected 'at' before the positions, not '%.*s'", at.n, at.z);
  s->list = ast_reflist(list);
  s->b = ref_of(cc, grid);
  s->pos = ast_reflist(pos);
  return s;
}

Stmt *ast_allreduce(Cnp *cc, Token kw, RefVec scalars) {
  Stmt *s = new_stmt(cc, ST_ALLREDUCE, loc_of(cc, kw));
  s->list = ast_reflist(scalars);
  return s;
}

Stmt *ast_sum(Cnp *cc, Token kw, Token plan, RefVec values, Token out) {
  Stmt *s = new_stmt(cc, ST_SUM, loc_of(cc, kw));
  s->a = ref_of(cc, plan);
  s->list = ast_reflist(values);
  s->b = ref_of(cc, out);
  return s;
}

Stmt *ast_segments(Cnp *cc, Token plan, Token func, Token key, Expr *n) {
  Stmt *s = new_stmt(cc, ST_SEGMENTS, loc_of(cc, plan));
  expect_func(cc, func, "segments");
  s->a = ref_of(cc, plan);
  s->b = ref_of(cc, key);
  s->value = n;
  return s;
}

Stmt *ast_refresh(Cnp *cc, Token kw, Token mirror, Token dir) {
  Stmt *s = new_stmt(cc, ST_REFRESH, loc_of(cc, kw));
  s->a = ref_of(cc, mirror);
  if (tok_is(dir, "to_device")) s->to_device = true;
  else if (!tok_is(dir, "to_host"))
    diag_error(cc, loc_of(cc, dir), "expected 'to_host' or 'to_device', not '%.*s'", dir.n, dir.z);
  return s;
}

Stmt *ast_exchange(Cnp *cc, Token kw, Token mpi, Token field, Expr *dest, Expr *src) {
  Stmt *s = new_stmt(cc, ST_EXCHANGE, loc_of(cc, kw));
  s->a = ref_of(cc, mpi);
  s->b = ref_of(cc, field);
  s->value = dest;
  s->value2 = src;
  return s;
}

Stmt *ast_exchange_nofield(Cnp *cc, Token kw, Token mpi, Token with, Expr *dest, Expr *src) {
  Stmt *s = ast_exchange(cc, kw, mpi, with, dest, src);
  s->b.name = NULL;
  return s;
}

Stmt *ast_kcall(Cnp *cc, Token name, ExprList args, Expr *over) {
  Stmt *s = new_stmt(cc, ST_CALL, loc_of(cc, name));
  s->a = ref_of(cc, name);
  s->args = args.v;
  s->nargs = args.n;
  s->value2 = over;
  return s;
}

Stmt *ast_append(Cnp *cc, Token kw, Token dim, Expr *count, Token index, Token *local, StmtList body) {
  Stmt *s = new_stmt(cc, ST_APPEND, loc_of(cc, kw));
  s->index = new_local(cc, index, DT_I64, true);
  s->index->map = s;
  if (local) {
    s->let = new_local(cc, *local, DT_I64, true);
    s->let->map = s;
  }
  s->over = ref_of(cc, dim);
  s->a = s->over;
  s->value = count;
  s->body = body.head;
  return s;
}

Stmt *ast_every_block(Cnp *cc, Token kw, Expr *k, Token *offset_kw, Expr *j, StmtList body) {
  Stmt *s = new_stmt(cc, ST_EVERY, loc_of(cc, kw));
  if (offset_kw && !tok_is(*offset_kw, "offset"))
    diag_error(cc, loc_of(cc, *offset_kw), "expected 'offset' or '{', not '%.*s'", offset_kw->n, offset_kw->z);
  s->value = k;
  s->value2 = j;
  s->body = body.head;
  return s;
}

Stmt *ast_repeat(Cnp *cc, Token kw, Expr *count, StmtList body) {
  Stmt *s = new_stmt(cc, ST_REPEAT, loc_of(cc, kw));
  s->value = count;
  s->body = body.head;
  return s;
}

Stmt *ast_scan(Cnp *cc, Token kw, Token mode, Token src, Token dst) {
  Stmt *s = new_stmt(cc, ST_SCAN, loc_of(cc, kw));
  s->a = ref_of(cc, src);
  s->b = ref_of(cc, dst);
  if (tok_is(mode, "inclusive")) s->inclusive = true;
  else if (!tok_is(mode, "exclusive"))
    diag_error(cc, loc_of(cc, mode), "expected 'inclusive' or 'exclusive', not '%.*s'", mode.n, mode.z);
  return s;
}

Stmt *ast_fft(Cnp *cc, Token word, Token src, Token dst) {
  bool inv = tok_is(word, "ifft");   /* the token is TK_FFT or TK_IFFT (parse.c) */
  Stmt *s = new_stmt(cc, inv ? ST_IFFT : ST_FFT, loc_of(cc, word));
  s->a = ref_of(cc, src);
  s->b = ref_of(cc, dst);
  return s;
}

const char *const pshape_names[3] = {"ngp", "cic", "tsc"};

/* deposit W at (POS...) -> GRID with SHAPE [atomic]; / gather GRID at (POS...) -> OUT with
** SHAPE;  `deposit`, `gather`, `at`, the shape and `atomic` are not reserved words (programs
** use them as names): the grammar takes identifiers and they are checked here. */
Stmt *ast_pgrid(Cnp *cc, Token kw, Token w, int w_literal, Token at, RefVec pos, Token out,
                Token shape, Token *mode) {
  bool dep = tok_is(kw, "deposit"), gat = tok_is(kw, "gather");
  Stmt *s = new_stmt(cc, gat ? ST_GATHER : ST_DEPOSIT, loc_of(cc, kw));
  if (!dep && !gat) {
    char word[64];
    snprintf(word, sizeof word, "%.*s", kw.n > 60 ? 60 : kw.n, kw.z);
    const char *near = diag_edit_distance(word, "deposit", 2) <= 2 ? "deposit"
                       : diag_edit_distance(word, "gather", 2) <= 2 ? "gather" : NULL;
    if (near)
      diag_error(cc, loc_of(cc, kw), "unknown statement '%s'; did you mean '%s'?", word, near);
    else
      diag_error(cc, loc_of(cc, kw), "unknown statement '%s': a particle-grid statement is "
                 "'deposit W at (POS...) -> GRID with SHAPE;' or 'gather GRID at (POS...) -> OUT with SHAPE;'",
                 word);
  }
  if (w_literal) {
    s->value = w_literal == 2 ? ast_float(cc, w) : ast_int(cc, w);
    if (gat) diag_error(cc, loc_of(cc, w), "gather reads a grid field, not a number");
  } else {
    s->a = ref_of(cc, w);
  }
  if (!tok_is(at, "at"))
    diag_error(cc, loc_of(cc, at), "expected 'at' before the positions, not '%.*s'", at.n, at.z);
  s->list = ast_reflist(pos);
  s->b = ref_of(cc, out);
  s->pshape_loc = loc_of(cc, shape);
  s->pshape = -1;
  for (int k = 0; k < 3; k++)
    if (tok_is(shape, pshape_names[k])) s->pshape = k;
  if (s->pshape < 0) {
    diag_error(cc, loc_of(cc, shape), "unknown particle shape '%.*s': the shapes are 'ngp', 'cic' and 'tsc'",
               shape.n, shape.z);
    s->pshape = PSHAPE_CIC;
  }
  if (mode) {
    if (!tok_is(*mode, "atomic"))
      diag_error(cc, loc_of(cc, *mode), "expected 'atomic' or ';' after the shape, not '%.*s'",
                 mode->n, mode->z);
    else if (gat)
      diag_error(cc, loc_of(cc, *mode), "'atomic' is a mode of deposit: a gather is deterministic and "
                 "has no atomic form");
    else s->atomic = true;
  }
  return s;
}

Stmt *ast_reduce(Cnp *cc, int red, Token name, Expr *value) {
  Stmt *s = new_stmt(cc, ST_REDUCE, loc_of(cc, name));
  s->target = ast_name(cc, name);
  s->value = value;
  s->red = red;
  return s;
}

Stmt *ast_let(Cnp *cc, Token kw, Token name, Token *type, Expr *value) {
  Stmt *s = new_stmt(cc, ST_LET, loc_of(cc, kw));
  s->let = new_local(cc, name, type ? ast_dtype(cc, *type) : DT_VOID, false);
  s->value = value;
  return s;
}

Stmt *ast_assign(Cnp *cc, StmtKind k, Expr *target, Expr *value) {
  Stmt *s = new_stmt(cc, k, target->loc);
  s->target = target;
  s->value = value;
  return s;
}

Stmt *ast_if(Cnp *cc, Token kw, Expr *cond, StmtList then_body, Stmt *else_stmt) {
  Stmt *s = new_stmt(cc, ST_IF, loc_of(cc, kw));
  s->value = cond;
  s->body = then_body.head;
  s->else_body = else_stmt;
  return s;
}

Stmt *ast_block_stmt(StmtList body) { return body.head; }

/* ------------------------------------------------------------------ parser callbacks */

static bool same_letters(const char *a, const char *b) {
  int count[256] = {0};
  for (; *a; a++) count[(unsigned char)*a]++;
  for (; *b; b++) count[(unsigned char)*b]--;
  for (int i = 0; i < 256; i++)
    if (count[i]) return false;
  return true;
}

/*
** The cnp type for a type name of C, C++, Fortran or Python/NumPy ("double" -> "f64"), or
** NULL. C's 32-bit unsigned types map to u64, the only unsigned type.
*/
const char *ast_foreign_type(const char *z, int n) {
  static const char *const map[][2] = {
    {"double", "f64"}, {"float", "f32"}, {"half", "f16"}, {"int", "i32"}, {"long", "i64"},
    {"short", "i32"}, {"char", "i32"}, {"unsigned", "u64"}, {"signed", "i32"}, {"uint", "u64"},
    {"size_t", "u64"}, {"ssize_t", "i64"}, {"ptrdiff_t", "i64"}, {"_Bool", "bool"},
    {"int32_t", "i32"}, {"int64_t", "i64"}, {"uint32_t", "u64"}, {"uint64_t", "u64"},
    {"real", "f32"}, {"integer", "i32"}, {"logical", "bool"}, {"complex", "c64"},
    {"real32", "f32"}, {"real64", "f64"}, {"int32", "i32"}, {"int64", "i64"},
    {"uint32", "u64"}, {"uint64", "u64"}, {"float16", "f16"}, {"float32", "f32"},
    {"float64", "f64"}, {"complex64", "c64"}, {"complex128", "c128"}, {"bool_", "bool"},
    {"boolean", "bool"}, {"Bool", "bool"}, {"f8", "f64"}, {"f4", "f32"}, {"i8", "i64"},
    {"i4", "i32"}, {"u8", "u64"},
  };
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if ((int)strlen(map[i][0]) == n && !memcmp(map[i][0], z, (size_t)n)) return map[i][1];
  return NULL;
}

/*
** For a misspelt keyword or type name ("feild", "f46") or another language's type name
** ("double"): the closest one, or NULL.
*/
static const char *keyword_hint(Cnp *cc, Token tok) {
  static const char *const types[] = {"bool", "i32", "i64", "u64", "f16", "f32", "f64", "c64", "c128"};
  char name[64];
  if (tok.n <= 1 || tok.n >= (int)sizeof name) return NULL;
  const char *foreign = ast_foreign_type(tok.z, tok.n);
  if (foreign) return foreign;
  memcpy(name, tok.z, (size_t)tok.n);
  name[tok.n] = 0;
  int cap = tok.n <= 3 ? 1 : 2, best_d = cap + 1;
  const char *best = NULL;
  for (int code = 1; code < 128; code++) {
    const char *k = lex_token_name(code);   /* "'field'" for keywords */
    size_t kl = strlen(k);
    if (kl < 3 || k[0] != '\'' || !((k[1] >= 'a' && k[1] <= 'z') || k[1] == '_')) continue;
    char kw[32];
    if (kl - 2 >= sizeof kw) continue;
    memcpy(kw, k + 1, kl - 2);
    kw[kl - 2] = 0;
    int d = diag_edit_distance(name, kw, cap);
    if (d < best_d) best_d = d, best = arena_strndup(&cc->arena, kw, strlen(kw));
  }
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    int d = diag_edit_distance(name, types[i], cap);
    /* on a tie prefer the anagram: "f46" is "f64" with two letters swapped */
    if (d < best_d || (d == best_d && best && !same_letters(name, best) && same_letters(name, types[i])))
      best_d = d, best = types[i];
  }
  return best_d == 0 ? NULL : best;   /* 0: the token is a keyword itself */
}

/* The keyword of a step statement (that no map body may hold), or NULL. */
const char *ast_step_statement(int code) {
  switch (code) {
  case TK_MAP: return "map";           case TK_COMPACT: return "compact";
  case TK_SORT: return "sort";         case TK_OFFSETS: return "offsets";
  case TK_SUM: return "sum";           case TK_RECORD: return "record";
  case TK_WAIT: return "wait";         case TK_COPY: return "copy";
  case TK_REFRESH: return "refresh";   case TK_EXCHANGE: return "exchange";
  case TK_MIGRATE: return "migrate";
  case TK_FFT: return "fft";           case TK_IFFT: return "ifft";
  case TK_ALLREDUCE: return "allreduce";
  default: return NULL;
  }
}

/* Python's and/or/not: the cnp operator, as a hint; else NULL. */
static const char *logic_word(const Token *w) {
  if (!w) return NULL;
  if (tok_is(*w, "and")) return " (logical and is '&&')";
  if (tok_is(*w, "or")) return " (logical or is '||')";
  if (tok_is(*w, "not")) return " (logical not is '!')";
  return NULL;
}

void ast_step_word_in_map(Cnp *cc, Token word) {
  Loc loc = loc_of(cc, word);
  cc->in_recovery = true;
  cc->last_syntax = loc;
  diag_error(cc, loc, "'%.*s' is a step statement and cannot be inside a map: put it after the map's '}'",
             word.n, word.z);
}

void ast_syntax_error(Cnp *cc, Token tok, int major, const int *expected, int n) {
  /* the token before this one, if an identifier (else .z NULL): "mapp i in N" */
  const Token prev_ident = cc->prev_code == TK_IDENT ? cc->prev_tok : (Token){0};
  Loc loc = loc_of(cc, tok);
  cc->in_recovery = true;
  if (loc.file == cc->last_syntax.file && loc.line == cc->last_syntax.line && loc.col == cc->last_syntax.col)
    return;   /* the same token again (re-fed after resynchronizing) */
  cc->last_syntax = loc;
  if (major == TK_ASSIGN && n == 1 && expected[0] == TK_EQ) {
    diag_error(cc, loc, "unexpected '=' (to compare, use '==')");
    return;
  }
  const char *stmt = cc->in_map ? ast_step_statement(major) : NULL;
  if (stmt && major == TK_MAP) {
    diag_error(cc, loc, "maps do not nest: a map's body holds lets, stores, '+=' and ifs; end this "
               "map with '}' before the next one");
    return;
  }
  if (stmt) {
    diag_error(cc, loc, "'%s' is a step statement and cannot be inside a map: put it after the map's '}'", stmt);
    return;
  }
  char what[160];
  if (major == 0) snprintf(what, sizeof what, "end of file");
  else snprintf(what, sizeof what, "'%.*s'", tok.n > 40 ? 40 : tok.n, tok.z);
  const char *hint = major != 0 && tok.n > 0 && (tok.z[0] == '_' || (tok.z[0] | 0x20) >= 'a') &&
                     !logic_word(major == TK_IDENT ? &tok : NULL) ? keyword_hint(cc, tok) : NULL;
  if (hint) snprintf(what + strlen(what), sizeof what - strlen(what), "; did you mean '%s'?", hint);
  /* "mapp i in N": the misspelt keyword is the identifier before the error */
  const char *prev = !hint && prev_ident.z && builtin_lookup(prev_ident.z, prev_ident.n) == BI_NONE
                         ? keyword_hint(cc, prev_ident) : NULL;
  if (prev)
    snprintf(what + strlen(what), sizeof what - strlen(what), " (did you mean '%s' instead of '%.*s'?)", prev,
             prev_ident.n > 40 ? 40 : prev_ident.n, prev_ident.z);
  else if (!hint && prev_ident.z &&
           ((prev_ident.n == 3 && !memcmp(prev_ident.z, "for", 3)) ||
            (prev_ident.n == 5 && !memcmp(prev_ident.z, "while", 5))))
    snprintf(what + strlen(what), sizeof what - strlen(what), " (a loop over a dim is 'map i in N { ... }')");
  else if (!hint) {
    /* Python's and/or/not, C's compound assignments and ++/--, Python's A if C else B */
    const char *habit = logic_word(major == TK_IDENT ? &tok : NULL);
    if (!habit) habit = logic_word(prev_ident.z ? &prev_ident : NULL);
    if (habit) {
    } else if ((major == TK_PLUS || major == TK_MINUS) && tok.z[1] == tok.z[0])
      habit = major == TK_PLUS ? " (there is no '++': write 'X += 1')" : " (there is no '--': write 'X += -1')";
    else if ((major == TK_MINUS || major == TK_STAR || major == TK_SLASH || major == TK_PERCENT) && tok.z[1] == '=')
      habit = major == TK_MINUS ? " (there is no '-=': write 'X += -E' or 'X = X - E')"
                                : " (only '+=' updates in place: write 'X = X OP E')";
    else if (major == TK_IF && n == 1 && expected[0] == TK_SEMI)
      habit = " (a conditional value is select(COND, A, B))";
    else if (major == TK_MINEQ || major == TK_MAXEQ)   /* docs/language.md, Lexical structure */
      habit = major == TK_MINEQ ? " (one token, the reduction 'S min= E' of a scalar S; to assign a let named "
                                  "'min', write 'min = E' with a space)"
                                : " (one token, the reduction 'S max= E' of a scalar S; to assign a let named "
                                  "'max', write 'max = E' with a space)";
    if (habit) snprintf(what + strlen(what), sizeof what - strlen(what), "%s", habit);
  }
  if (n >= 1 && n <= 3) {
    char list[160] = "";
    for (int i = 0; i < n; i++) {
      if (i > 0) strcat(list, i == n - 1 ? " or " : ", ");
      strcat(list, lex_token_name(expected[i]));
    }
    const Token *p = &cc->prev_tok;
    if (p->z && p->n > 0 && (major == 0 || p->line < tok.line)) {
      /* what is missing ends the previous line: point just after its last token, as gcc does */
      Loc after = {cc->cur_file, p->line, p->col + p->n, 1};
      diag_error(cc, after, "expected %s after '%.*s'", list, p->n > 40 ? 40 : p->n, p->z);
    } else {
      diag_error(cc, loc, "expected %s before %s", list, what);
    }
  } else {
    diag_error(cc, loc, "unexpected %s", what);
  }
}

void ast_stack_overflow(Cnp *cc) {
  diag_error(cc, cc->tok_loc, "nesting too deep");
  cc->parse_abort = true;
}

/* ------------------------------------------------------------------ the compilation */

Cnp *cnp_new(const CnpOptions *opt, FILE *diag) {
  Cnp *cc = calloc(1, sizeof *cc);
  if (!cc) cnp_ice("out of memory");
  arena_init(&cc->arena);
  cc->opt = opt;
  cc->diag_out = diag;
  cc->color = false;
  cc->files_tail = &cc->files;
  cc->decls_tail = &cc->decls;
  return cc;
}

void cnp_free(Cnp *cc) {
  if (!cc) return;
  arena_free(&cc->arena);
  free(cc);
}

static int compile(Cnp *cc, CnpFile *f) {
  if (!f) return cc->n_errors;
  lex_parse_file(cc, f);
  if (cc->n_errors == 0) sema_check(cc);
  return cc->n_errors;
}

int cnp_compile_file(Cnp *cc, const char *path) {
  Loc none = {0};
  return compile(cc, lex_load_file(cc, path, none));
}

int cnp_compile_buffer(Cnp *cc, const char *name, const char *src, size_t len) {
  return compile(cc, lex_add_buffer(cc, name, src, len));
}

/* The f16 value nearest to v (round to nearest even; overflow to infinity): f16 constants
** and literals are folded to their f16 value at compile time. */
double half_round(double v) {
  if (isnan(v) || isinf(v) || v == 0.0) return v;
  double a = fabs(v), ulp = 0x1p-24;     /* subnormals: 2^-24 apart */
  if (a >= 65520.0) return v < 0 ? -HUGE_VAL : HUGE_VAL;
  if (a >= 0x1p-14) {                    /* normal: 2^(e-10) apart in [2^e, 2^(e+1)) */
    double p = 0x1p-14;
    while (p * 2.0 <= a) p *= 2.0;
    ulp = p * 0x1p-10;
  }
  double q = a / ulp, r = (double)(int64_t)q, frac = q - r;   /* exact: q < 2^12 */
  if (frac > 0.5 || (frac == 0.5 && ((int64_t)r & 1))) r += 1.0;
  r *= ulp;
  return v < 0 ? -r : r;
}
