/*
** gen_c.c -- the C API header and the two backend units (NAME.c, NAME.cu).
**
** Both units share everything but the kernels: the host unit runs each fused group of maps
** as one (OpenMP) loop; the CUDA unit adds a __global__ kernel per group and chooses at
** run time. Algorithms (compact, sort, offsets, segment plans) are libcnp calls on the
** pipeline's workspace and plans, which work on both backends.
**
** Names in generated code: fields f_<name> (cnp_array in the object, element pointer in
** kernels), setup and step params P_<name>, dims cap_<name> (capacity) and n_<name> (live
** extent), streams s_<name>, events e_<name>, snapshots snap_<name>, plans plan_<name>,
** map indices and lets l_<name>. Prefixes keep user names from clashing with C.
*/
#include "gen.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================== small helpers */

const char *gen_ctype(DType t) {
  switch (t) {
  case DT_BOOL: return "uint8_t";
  case DT_I32: return "int32_t";
  case DT_I64: return "int64_t";
  case DT_U64: return "uint64_t";
  case DT_F16: return "uint16_t";      /* binary16 bits; values are floats (gen_vtype) */
  case DT_F32: return "float";
  case DT_F64: return "double";
  case DT_C64: return "cnp_g_c64";     /* float _Complex in C, a {re, im} struct in CUDA */
  case DT_C128: return "cnp_g_c128";
  default: cnp_ice("no C type for %s", dtype_name(t));
  }
}

const char *gen_vtype(DType t) { return t == DT_F16 ? "float" : gen_ctype(t); }

const char *gen_apitype(DType t) {
  switch (t) {
  case DT_F16: return "float";
  case DT_C64: return "cnp_complex64";
  case DT_C128: return "cnp_complex128";
  default: return gen_ctype(t);
  }
}

const char *gen_cnp_dtype(DType t) {
  switch (t) {
  case DT_BOOL: return "CNP_BOOL";
  case DT_I32: return "CNP_INT32";
  case DT_I64: return "CNP_INT64";
  case DT_U64: return "CNP_UINT64";
  case DT_F16: return "CNP_FLOAT16";
  case DT_F32: return "CNP_FLOAT32";
  case DT_F64: return "CNP_FLOAT64";
  case DT_C64: return "CNP_COMPLEX64";
  case DT_C128: return "CNP_COMPLEX128";
  default: cnp_ice("no cnp dtype for %s", dtype_name(t));
  }
}

/* The f16 value nearest to v (round to nearest even; overflow to infinity): f16 constants
** and literals are folded to their f16 value at compile time. */
static double half_round(double v) {
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

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* The dim that is a field's element axis, or NULL for a fixed extent. */
bool gen_decl_is_dim_extent(Decl *f, Decl **dim) {
  Expr *e = f->shape.rank ? f->shape.ext[f->shape.rank - 1] : NULL;
  Decl *d = (e && e->kind == EX_NAME && e->ref.decl && e->ref.decl->kind == DECL_DIM)
                ? e->ref.decl : NULL;
  if (dim) *dim = d;
  return d != NULL;
}

/* The mirror whose device copy field f is, or NULL. */
static Decl *mirror_of(GenUnit *u, Decl *f) {
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_MIRROR && d->target.decl == f) return d;
  return NULL;
}

/* C expression for the live extent of a field's element axis. */
static const char *live_extent(GenUnit *u, Decl *f) {
  Decl *dim;
  if (gen_decl_is_dim_extent(f, &dim)) return arena_printf(&u->cc->arena, "p->n_%s", dim->name);
  return arena_printf(&u->cc->arena, "p->f_%s.shape[%d]", f->name, f->shape.rank - 1);
}

/* Source text of line `line` of a file, trimmed, with a trailing '{' dropped and comment
** closers defused. */
static const char *src_line(GenUnit *u, Loc loc) {
  const char *s = loc.file->src;
  for (int l = 1; l < loc.line && *s; s++)
    if (*s == '\n') l++;
  const char *e = s;
  while (*e && *e != '\n') e++;
  while (s < e && isspace((unsigned char)*s)) s++;
  for (const char *q = s; q < e; q++)
    if (*q == '#') {
      e = q;
      break;
    }
  while (e > s && (isspace((unsigned char)e[-1]) || e[-1] == '{')) e--;
  char *t = arena_strndup(&u->cc->arena, s, (size_t)(e - s));
  for (char *q = t; *q; q++)
    if (q[0] == '*' && q[1] == '/') q[1] = '|';
  return t;
}

/* Comment "/ * pic.cnp:42: compact alive (x, v) * /" followed by a #line directive. */
static void comment_loc(GenUnit *u, Buf *b, Loc loc) {
  buf_line(b, "/* %s:%d: %s */", base_name(loc.file->path), loc.line, src_line(u, loc));
}

static void line_dir(GenUnit *u, Buf *b, Loc loc) {
  if (u->opt->no_line) return;
  buf_printf(b, "#line %d \"%s\"\n", loc.line,
             loc.file->id == 0 ? u->src_path : loc.file->path);
}

/* A marker that gen.c replaces by "#line <next line> "<output file>"". */
static void line_back(GenUnit *u, Buf *b) {
  if (u->opt->no_line) return;
  buf_puts(b, "#line @@CNP_LINE_BACK@@\n");
}

static void fmt_float(Buf *b, double v, DType t) {
  if (isinf(v)) {
    buf_puts(b, v > 0 ? "HUGE_VAL" : "(-HUGE_VAL)");
    return;
  }
  if (isnan(v)) {
    buf_puts(b, "NAN");
    return;
  }
  char s[64];
  snprintf(s, sizeof s, "%.17g", v);
  /* prefer the shortest form that round-trips */
  for (int prec = 1; prec <= 17; prec++) {
    char s2[64];
    snprintf(s2, sizeof s2, "%.*g", prec, v);
    if (strtod(s2, NULL) == v) {
      memcpy(s, s2, sizeof s2);
      break;
    }
  }
  buf_puts(b, s);
  if (!strpbrk(s, ".eEn")) buf_puts(b, ".0");
  if (t == DT_F32 || t == DT_F16) buf_puts(b, "f");   /* f16 values are floats */
}

static void fmt_int(Buf *b, int64_t v, DType t) {
  if (t == DT_U64) buf_printf(b, "UINT64_C(%" PRIu64 ")", (uint64_t)v);
  else if (v >= INT32_MIN + 1 && v <= INT32_MAX) buf_printf(b, "%" PRId64, v);
  else if (v == INT64_MIN) buf_puts(b, "INT64_MIN");
  else buf_printf(b, "INT64_C(%" PRId64 ")", v);
}

/* ======================================================================== setup-time expressions */

/* Extents and plan sizes: literals, consts, dims (capacity), setup params, + - *. `pfx` is
** "p->" or "cfg->" (then dims and params are the config's members). */
static void setup_expr(GenUnit *u, Buf *b, Expr *e, const char *pfx) {
  bool cfg = strcmp(pfx, "cfg->") == 0;
  switch (e->kind) {
  case EX_INT: fmt_int(b, e->ival, DT_I64); return;
  case EX_NAME: {
    Decl *d = e->ref.decl;
    if (!d && !e->ref.local && (!strcmp(e->ref.name, "rank") || !strcmp(e->ref.name, "size"))) {
      buf_printf(b, "(int64_t)p->%s", e->ref.name);   /* exchange ranks: after the comm */
      return;
    }
    if (!d) break;
    if (d->kind == DECL_CONST) {
      fmt_int(b, d->ival, DT_I64);
      return;
    }
    if (d->kind == DECL_DIM) {
      buf_printf(b, cfg ? "cfg->%s" : "p->cap_%s", d->name);
      return;
    }
    if (d->kind == DECL_PARAM) {
      buf_printf(b, cfg ? "(int64_t)cfg->%s" : "(int64_t)p->P_%s", d->name);
      return;
    }
    break;
  }
  case EX_UNARY:
    buf_puts(b, e->op == OP_BNOT ? "(~" : "(-");
    setup_expr(u, b, e->args[0], pfx);
    buf_puts(b, ")");
    return;
  case EX_BINARY:
    if (e->op == OP_DIV || e->op == OP_MOD || e->op == OP_SHL || e->op == OP_SHR) {
      /* exchange ranks: / % by 0 and shifts defined as in maps (templates/int.tmpl) */
      buf_printf(b, "cnp_g_%s_i64(", e->op == OP_DIV ? "div" : e->op == OP_MOD ? "mod"
                                      : e->op == OP_SHL ? "shl" : "shr");
      setup_expr(u, b, e->args[0], pfx);
      buf_puts(b, ", ");
      setup_expr(u, b, e->args[1], pfx);
      buf_puts(b, ")");
      return;
    }
    buf_puts(b, "(");
    setup_expr(u, b, e->args[0], pfx);
    buf_printf(b, " %s ", op_text(e->op));
    setup_expr(u, b, e->args[1], pfx);
    buf_puts(b, ")");
    return;
  default: break;
  }
  cnp_ice("setup expression of kind %d not handled", (int)e->kind);
}

static const char *setup_str(GenUnit *u, Expr *e, const char *pfx) {
  Buf t = {0};
  setup_expr(u, &t, e, pfx);
  char *s = arena_strndup(&u->cc->arena, buf_str(&t), t.n);
  buf_free(&t);
  return s;
}

/* An extent or segment count of the configuration, computed with the overflow-checked
** helpers of templates/extent.tmpl (INT64_MIN on overflow): setup's check of it. */
static void setup_expr_checked(GenUnit *u, Buf *b, Expr *e) {
  if (e->kind == EX_BINARY && (e->op == OP_ADD || e->op == OP_SUB || e->op == OP_MUL)) {
    buf_printf(b, "cnp_g_x%s(", e->op == OP_ADD ? "add" : e->op == OP_SUB ? "sub" : "mul");
    setup_expr_checked(u, b, e->args[0]);
    buf_puts(b, ", ");
    setup_expr_checked(u, b, e->args[1]);
    buf_puts(b, ")");
  } else if (e->kind == EX_UNARY) {
    buf_puts(b, "cnp_g_xsub(0, ");
    setup_expr_checked(u, b, e->args[0]);
    buf_puts(b, ")");
  } else setup_expr(u, b, e, "cfg->");
}

/* Whether a field extent or segment count is computed (then the unit has templates/extent.tmpl). */
static bool extent_computed(Expr *e) { return e && (e->kind == EX_BINARY || e->kind == EX_UNARY); }

/* Source text of an expression (first line only). */
static const char *expr_src(GenUnit *u, Expr *e) {
  const char *s = e->loc.file->src;
  for (int l = 1; l < e->loc.line && *s; s++)
    if (*s == '\n') l++;
  s += e->loc.col - 1;
  char *t = arena_strndup(&u->cc->arena, s, (size_t)e->loc.len);
  for (char *q = t; *q; q++)
    if (*q == '"' || *q == '\\' || *q == '%') *q = '_';
  return t;
}

/* ======================================================================== kernel contexts */

/* What one fused kernel uses: fields, params, dims (the argument struct). */
typedef struct KUse {
  Decl **fields;          /* arena arrays, grown as needed (a map may use any number) */
  int n_fields, cap_fields;
  Decl **params;
  int n_params, cap_params;
  Decl **dims;
  int n_dims, cap_dims;
  bool step;              /* reads the step counter (step_index(), random draws): cnp_step */
  Arena *arena;
} KUse;

static void kuse_add(Arena *a, Decl ***v, int *n, int *cap, Decl *d) {
  for (int i = 0; i < *n; i++)
    if ((*v)[i] == d) return;
  if (*n == *cap) {
    int nc = *cap ? 2 * *cap : 16;
    Decl **nv = arena_alloc(a, sizeof *nv * (size_t)nc);
    if (*n) memcpy(nv, *v, sizeof *nv * (size_t)*n);
    *v = nv;
    *cap = nc;
  }
  (*v)[(*n)++] = d;
}

static void kuse_expr(KUse *k, Expr *e) {
  if (!e) return;
  if ((e->kind == EX_NAME || e->kind == EX_INDEX) && e->ref.decl) {
    Decl *d = e->ref.decl;
    if (d->kind == DECL_FIELD) kuse_add(k->arena, &k->fields, &k->n_fields, &k->cap_fields, d);
    else if (d->kind == DECL_PARAM) kuse_add(k->arena, &k->params, &k->n_params, &k->cap_params, d);
    else if (d->kind == DECL_DIM) kuse_add(k->arena, &k->dims, &k->n_dims, &k->cap_dims, d);
  }
  if (e->kind == EX_CALL && builtin_reads_step(e->builtin)) k->step = true;
  for (int i = 0; i < e->nargs; i++) kuse_expr(k, e->args[i]);
}

static void kuse_stmts(KUse *k, Stmt *s) {
  for (; s; s = s->next) {
    kuse_expr(k, s->target);
    kuse_expr(k, s->value);
    kuse_stmts(k, s->body);
    kuse_stmts(k, s->else_body);
  }
}

static bool expr_reads_local(Expr *e, Local *l) {
  if (!e) return false;
  if (e->kind == EX_NAME && e->ref.local == l) return true;
  for (int i = 0; i < e->nargs; i++)
    if (expr_reads_local(e->args[i], l)) return true;
  return false;
}

static bool stmts_read_local(Stmt *s, Local *l) {
  for (; s; s = s->next) {
    if (expr_reads_local(s->value, l)) return true;
    if (s->target && s->target->kind == EX_INDEX && expr_reads_local(s->target, l)) return true;
    if (s->kind == ST_ADD && s->target && s->target->kind == EX_NAME && s->target->ref.local == l)
      return true;
    if (stmts_read_local(s->body, l) || stmts_read_local(s->else_body, l)) return true;
  }
  return false;
}

typedef struct KCtx {
  GenUnit *u;
  bool cuda;              /* emitting the body of a __global__ kernel */
  Stmt *map;              /* the map whose body is being emitted */
  DType lit;              /* float type untyped literals here adapt to (0.1f, 2.0), or DT_VOID */
  const RowVals *rows;    /* dry pass: the elements of written fields live in locals r_* */
} KCtx;

/* Name of the local that holds element `comp` of f for the row (the dry pass). */
static const char *row_name(GenUnit *u, Decl *f, int64_t comp) {
  if (f->shape.rank == 1) return arena_printf(&u->cc->arena, "r_%s", f->name);
  return arena_printf(&u->cc->arena, "r_%s_%" PRId64, f->name, comp);
}

/* The local holding the field element e (EX_INDEX) in the dry pass, or NULL. */
static const char *row_local(KCtx *k, Expr *e) {
  if (!k->rows) return NULL;
  for (int i = 0; i < k->rows->n; i++)
    if (k->rows->v[i].f == e->ref.decl) {
      int64_t comp;
      if (!fuse_row_comp(e, &comp)) cnp_ice("row value of '%s' without constant components",
                                            e->ref.decl->name);
      return row_name(k->u, e->ref.decl, comp);
    }
  return NULL;
}

/* The type an untyped literal operand of e adapts to: the other operand's (arithmetic,
** comparisons, select and builtins); DT_VOID when e gives literals no type. */
static DType literal_ctx(const Expr *e) {
  if (e->kind == EX_BINARY) {
    if (e->op == OP_AND || e->op == OP_OR) return DT_VOID;
    if (e->op >= OP_EQ && e->op <= OP_GE) {
      const Expr *a = e->args[0], *b = e->args[1];
      bool ua = a->flags & EXF_UNTYPED, ub = b->flags & EXF_UNTYPED;
      if (ua && ub) return DT_VOID;
      if (ua) return b->type;
      if (ub) return a->type;
      return DT_VOID;
    }
    return e->type;
  }
  if (e->kind == EX_CALL) return e->type;
  return DT_VOID;
}

/* ======================================================================== expressions */

static void ex(KCtx *k, Buf *b, Expr *e);

static bool is_map_index(Expr *e) {
  return e->kind == EX_NAME && e->ref.local && e->ref.local->is_index;
}

/* Linear element offset of F[a0, ..., a(r-1)] in a C-order field of capacity extents. */
static void lin_index(KCtx *k, Buf *b, Expr *e) {
  Decl *f = e->ref.decl;
  Buf acc = {0};
  for (int i = 0; i < e->nargs; i++) {
    Buf t = {0};
    Expr *a = e->args[i];
    if (is_map_index(a) || (a->flags & EXF_CONST)) {
      ex(k, &t, a);
    } else {
      buf_puts(&t, "CNP_G_IDX(");
      ex(k, &t, a);
      buf_printf(&t, ", A.f_%s_e%d, bad)", f->name, i);
    }
    if (i == 0 || strcmp(buf_str(&acc), "0") == 0) {   /* component 0: just the index */
      buf_free(&acc);
      acc = t;
      continue;
    }
    Buf n = {0};
    bool paren = strchr(buf_str(&acc), ' ') != NULL;
    buf_printf(&n, "%s%s%s * A.f_%s_e%d + %s", paren ? "(" : "", buf_str(&acc), paren ? ")" : "",
               f->name, i, buf_str(&t));
    buf_free(&acc);
    buf_free(&t);
    acc = n;
  }
  buf_puts(b, buf_str(&acc));
  buf_free(&acc);
}

static const char *float_fn(Builtin bi, DType t) {
  static const char *names[BI__COUNT] = {
      [BI_SQRT] = "sqrt", [BI_EXP] = "exp",     [BI_LOG] = "log",   [BI_SIN] = "sin",
      [BI_COS] = "cos",   [BI_FLOOR] = "floor", [BI_CEIL] = "ceil", [BI_FMOD] = "fmod",
      [BI_POW] = "pow",   [BI_MIN] = "fmin",    [BI_MAX] = "fmax",  [BI_ABS] = "fabs",
      [BI_ATAN2] = "atan2", [BI_TANH] = "tanh", [BI_SINH] = "sinh", [BI_COSH] = "cosh",
      [BI_ERF] = "erf",   [BI_ROUND] = "round", [BI_TRUNC] = "trunc",
  };
  static const char *namesf[BI__COUNT] = {
      [BI_SQRT] = "sqrtf", [BI_EXP] = "expf",     [BI_LOG] = "logf",   [BI_SIN] = "sinf",
      [BI_COS] = "cosf",   [BI_FLOOR] = "floorf", [BI_CEIL] = "ceilf", [BI_FMOD] = "fmodf",
      [BI_POW] = "powf",   [BI_MIN] = "fminf",    [BI_MAX] = "fmaxf",  [BI_ABS] = "fabsf",
      [BI_ATAN2] = "atan2f", [BI_TANH] = "tanhf", [BI_SINH] = "sinhf", [BI_COSH] = "coshf",
      [BI_ERF] = "erff",   [BI_ROUND] = "roundf", [BI_TRUNC] = "truncf",
  };
  return t == DT_F32 || t == DT_F16 ? namesf[bi] : names[bi];
}

/* Complex math: C99 <complex.h> in the host unit, the prelude's overloads in the CUDA unit
** (templates/complex.cu.tmpl). `t` is the complex operand type. */
static const char *complex_fn(GenUnit *u, Builtin bi, DType t) {
  static const char *names[BI__COUNT] = {
      [BI_SQRT] = "csqrt", [BI_EXP] = "cexp", [BI_LOG] = "clog", [BI_SIN] = "csin",
      [BI_COS] = "ccos",   [BI_POW] = "cpow", [BI_ABS] = "cabs",  [BI_REAL] = "creal",
      [BI_IMAG] = "cimag", [BI_CONJ] = "conj", [BI_ARG] = "carg",
  };
  const char *n = names[bi];
  if (!n) cnp_ice("'%s' of a complex value", builtin_name(bi));
  if (u->cuda_unit) return arena_printf(&u->cc->arena, "cnp_g_%s", n);
  return t == DT_C64 ? arena_printf(&u->cc->arena, "%sf", n) : n;
}

/* Types whose operands the generator converts explicitly (f16: rounding of what is not f16
** yet; complex: the CUDA structs have no mixed-type operators). */
static bool converted_type(DType t) { return t == DT_F16 || dtype_is_complex(t); }

/* Value of a literal, possibly negated. */
static bool literal_value(const Expr *e, double *v) {
  if (e->kind == EX_INT) {
    *v = e->type == DT_U64 ? (double)e->uval : (double)e->ival;
    return true;
  }
  if (e->kind == EX_FLOAT) {
    *v = e->fval;
    return true;
  }
  if (e->kind == EX_UNARY && e->op == OP_NEG && literal_value(e->args[0], v)) {
    *v = -*v;
    return true;
  }
  return false;
}

/* Does e read an f16 variable (field element, let, param, const)? Those hold exact f16
** values; any other f16-typed expression is a float result not rounded yet. */
static bool is_f16_variable(const Expr *e) {
  return e->type == DT_F16 && (e->kind == EX_INDEX || e->kind == EX_NAME);
}

static void ex_as(KCtx *k, Buf *b, Expr *e, DType to);

/* complex(re, im) as a value of complex type `to`: both parts converted to its real type. */
static void ex_complex(KCtx *k, Buf *b, Expr *e, DType to) {
  DType r = to == DT_C64 ? DT_F32 : DT_F64;
  buf_puts(b, to == DT_C64 ? "cnp_g_mk64(" : "cnp_g_mk128(");
  ex_as(k, b, e->args[0], r);
  buf_puts(b, ", ");
  ex_as(k, b, e->args[1], r);
  buf_puts(b, ")");
}

/* e as a value of type `to`. To f16: rounded to the nearest f16 unless it is f16 already
** (literals folded at compile time); to complex: the unit's conversion macro; else a cast. */
static void ex_as(KCtx *k, Buf *b, Expr *e, DType to) {
  double v;
  if (e->type == to) {
    ex(k, b, e);
    return;
  }
  if (to == DT_F16) {
    if ((e->flags & EXF_UNTYPED) && literal_value(e, &v)) {
      fmt_float(b, half_round(v), DT_F16);
      return;
    }
    buf_puts(b, e->type == DT_F64 ? "cnp_g_dround(" : "cnp_g_hround((float)");
    ex(k, b, e);
    buf_puts(b, ")");
    return;
  }
  if ((to == DT_F32 || to == DT_F64) && (e->flags & EXF_UNTYPED) && literal_value(e, &v)) {
    fmt_float(b, v, to);
    return;
  }
  if (dtype_is_complex(to) && e->kind == EX_CALL && e->builtin == BI_COMPLEX) {
    ex_complex(k, b, e, to);                  /* c64(complex(a, b)): the parts in f32 */
    return;
  }
  if (dtype_is_complex(to)) {
    buf_puts(b, to == DT_C64 ? "CNP_G_C64(" : "CNP_G_C128(");
    if ((e->flags & EXF_UNTYPED) && literal_value(e, &v))
      fmt_float(b, v, to == DT_C64 ? DT_F32 : DT_F64);
    else
      ex(k, b, e);
    buf_puts(b, ")");
    return;
  }
  buf_printf(b, "((%s)", gen_vtype(to));
  ex(k, b, e);
  buf_puts(b, ")");
}

/* e as an exact f16 value (a float): what f16 lets hold. */
static void ex_f16(KCtx *k, Buf *b, Expr *e) {
  if (e->type == DT_F16 && !is_f16_variable(e)) {
    buf_puts(b, "cnp_g_hround(");
    ex(k, b, e);
    buf_puts(b, ")");
  } else {
    ex_as(k, b, e, DT_F16);
  }
}

/* Operands of u64 arithmetic, comparisons, select, min and max are converted explicitly (by
** ex_as above), so the C code says what cnp's promotion does (docs/language.md, Types) and
** compiles without -Wsign-compare / nvcc "pointless comparison" warnings. */

/* The type both operands of a binary operator are converted to. */
static DType operand_type(const Expr *e) {
  const Expr *a = e->args[0], *c = e->args[1];
  bool ua = a->flags & EXF_UNTYPED, uc = c->flags & EXF_UNTYPED;
  if (ua && !uc) return c->type;
  if (uc && !ua) return a->type;
  return a->type > c->type ? a->type : c->type;
}

static bool is_zero_literal(const Expr *e) {
  return e->kind == EX_INT && (e->flags & EXF_UNTYPED) && e->ival == 0;
}

static void ex_call(KCtx *k, Buf *b, Expr *e) {
  Builtin bi = e->builtin;
  if (bi == BI_SELECT) {
    bool conv = converted_type(e->type);
    buf_puts(b, "(");
    ex(k, b, e->args[0]);
    buf_puts(b, " ? ");
    bool cast = conv || e->type == DT_U64;
    if (cast) ex_as(k, b, e->args[1], e->type);
    else ex(k, b, e->args[1]);
    buf_puts(b, " : ");
    if (cast) ex_as(k, b, e->args[2], e->type);
    else ex(k, b, e->args[2]);
    buf_puts(b, ")");
    return;
  }
  if (bi == BI_COMPLEX) {
    ex_complex(k, b, e, e->type);
    return;
  }
  if (bi == BI_STEP_INDEX) {                  /* the kernel argument (stats.steps) */
    buf_puts(b, "cnp_step");
    return;
  }
  if (builtin_is_draw(bi)) {                  /* Philox draw (templates/philox.tmpl) */
    static const char *fn[] = {"uniform_f64", "normal_f64", "uniform_f32", "normal_f32"};
    buf_printf(b, "cnp_g_%s(", fn[bi - BI_UNIFORM]);
    k->lit = DT_VOID;                         /* an integer seed literal stays an integer */
    ex_as(k, b, e->args[0], DT_U64);
    buf_printf(b, ", cnp_step, cnp_i, %" PRId64 "u)", e->ival);
    return;
  }
  if (bi == BI_ISNAN || bi == BI_ISFINITE) {  /* of an integer: constant (as numpy) */
    if (!dtype_is_float(e->args[0]->type)) {
      buf_puts(b, "((void)(");
      ex(k, b, e->args[0]);
      buf_printf(b, "), %d)", bi == BI_ISFINITE);
      return;
    }
    buf_printf(b, "(%s(", bi == BI_ISNAN ? "isnan" : "isfinite");
    ex(k, b, e->args[0]);
    buf_puts(b, ") != 0)");
    return;
  }
  if ((bi == BI_REAL || bi == BI_CONJ) && !dtype_is_complex(e->args[0]->type)) {
    buf_puts(b, "(");                         /* of a real value: the value itself */
    ex(k, b, e->args[0]);
    buf_puts(b, ")");
    return;
  }
  if (bi == BI_IMAG && !dtype_is_complex(e->args[0]->type)) {
    buf_puts(b, "((void)(");                  /* of a real value: zero of its type */
    ex(k, b, e->args[0]);
    buf_printf(b, "), (%s)0)", gen_vtype(e->type));
    return;
  }
  if (bi == BI_ARG && !dtype_is_complex(e->args[0]->type)) {
    DType r = e->type == DT_F64 ? DT_F64 : DT_F32;   /* of a real value: 0 or pi */
    buf_puts(b, r == DT_F64 ? "atan2(0.0, " : "atan2f(0.0f, ");
    ex_as(k, b, e->args[0], r);
    buf_puts(b, ")");
    return;
  }
  /* the operand type: complex for abs(), real(), imag(), arg() of a complex value, else the
  ** result type */
  DType t = dtype_is_complex(e->args[0]->type) && e->nargs == 1 ? e->args[0]->type : e->type;
  bool flt = dtype_is_float(e->type);
  if (e->type == DT_U64 && bi == BI_ABS) {   /* |u| = u */
    buf_puts(b, "(");
    ex(k, b, e->args[0]);
    buf_puts(b, ")");
    return;
  }
  if (!flt && (bi == BI_MIN || bi == BI_MAX)) {   /* min(k, k) is k (no self-comparison) */
    Buf l = {0}, r = {0};
    ex(k, &l, e->args[0]);
    ex(k, &r, e->args[1]);
    bool same = !strcmp(buf_str(&l), buf_str(&r));
    if (same) buf_printf(b, "(%s)", buf_str(&l));
    buf_free(&l);
    buf_free(&r);
    if (same) return;
  }
  if (dtype_is_complex(t)) {
    buf_printf(b, "%s(", complex_fn(k->u, bi, t));
  } else if (e->type == DT_U64 && (bi == BI_MIN || bi == BI_MAX)) {
    buf_puts(b, bi == BI_MIN ? "cnp_g_umin(" : "cnp_g_umax(");
  } else if (bi == BI_ABS && (e->type == DT_I32 || e->type == DT_I64)) {
    buf_puts(b, e->type == DT_I32 ? "cnp_g_abs_i32(" : "cnp_g_abs_i64(");   /* |INT_MIN| wraps (int.tmpl) */
  } else if (!flt && (bi == BI_MIN || bi == BI_MAX || bi == BI_ABS)) {
    buf_puts(b, bi == BI_MIN ? "CNP_G_MIN(" : bi == BI_MAX ? "CNP_G_MAX(" : "CNP_G_ABS(");
  } else {
    buf_printf(b, "%s(", float_fn(bi, e->type));
  }
  for (int i = 0; i < e->nargs; i++) {
    if (i) buf_puts(b, ", ");
    /* float functions get float arguments (CUDA has no device overloads for integers:
    ** sqrt(k), fmin(k, x)); u64 min/max get u64 ones */
    Expr *x = e->args[i];
    if (converted_type(t) || (flt && x->type != t) || (e->type == DT_U64 && x->type != DT_U64))
      ex_as(k, b, x, t);
    else
      ex(k, b, x);
  }
  buf_puts(b, ")");
}

static void ex_node(KCtx *k, Buf *b, Expr *e);

/* Signed integer arithmetic goes through the wrapping helpers of templates/int.tmpl (u64
** wraps in C already). */
static bool signed_int(DType t) { return t == DT_I32 || t == DT_I64; }
static const char *signed_int_bits(DType t) { return t == DT_I32 ? "32" : "64"; }
static const char *int_op_name(int op) {
  switch (op) {
  case OP_ADD: return "add";
  case OP_SUB: return "sub";
  case OP_MUL: return "mul";
  case OP_DIV: return "div";
  case OP_MOD: return "mod";
  case OP_SHL: return "shl";
  case OP_SHR: return "shr";
  default: cnp_ice("integer operator %d", op);
  }
  return "";
}

/* Emit e; its untyped literals print as the float type they adapt to (docs/language.md,
** Types): 0.1f next to an f32 operand, so f32 arithmetic stays in f32 on the host and the
** GPU, and 2.0 for an integer literal next to a float (no integer `x / 0`). Casts and
** indices start afresh. */
static void ex(KCtx *k, Buf *b, Expr *e) {
  DType saved = k->lit;
  DType c = literal_ctx(e);
  if (e->kind == EX_CAST || e->kind == EX_INDEX) k->lit = DT_VOID;
  else if (c != DT_VOID) k->lit = dtype_is_float(c) ? c : DT_VOID;
  ex_node(k, b, e);
  k->lit = saved;
}

static void ex_node(KCtx *k, Buf *b, Expr *e) {
  switch (e->kind) {
  case EX_INT:
    if (dtype_is_float(e->type)) fmt_float(b, (double)e->ival, k->lit == DT_F32 ? DT_F32 : e->type);
    else if ((e->flags & EXF_UNTYPED) && dtype_is_float(k->lit)) fmt_float(b, (double)e->ival, k->lit);
    else fmt_int(b, e->ival, e->type);
    return;
  case EX_FLOAT: fmt_float(b, e->fval, k->lit == DT_F32 && (e->flags & EXF_UNTYPED) ? DT_F32 : e->type); return;
  case EX_BOOL: buf_puts(b, e->ival ? "1" : "0"); return;
  case EX_NAME: {
    if (e->ref.local) {
      buf_printf(b, "l_%s", e->ref.local->name);
      return;
    }
    Decl *d = e->ref.decl;
    if (!d) cnp_ice("unresolved name '%s'", e->ref.name);
    if (d->kind == DECL_CONST) {
      if (d->dtype == DT_F16) fmt_float(b, half_round(d->fval), DT_F16);
      else if (dtype_is_float(e->type) || dtype_is_float(d->dtype)) fmt_float(b, d->fval, e->type);
      else fmt_int(b, d->ival, e->type);
    } else if (d->kind == DECL_PARAM) {
      buf_printf(b, "P_%s", d->name);
    } else if (d->kind == DECL_DIM) {
      buf_printf(b, "n_%s", d->name);
    } else {
      cnp_ice("name '%s' (%s) in an expression", d->name, decl_kind_name(d->kind));
    }
    return;
  }
  case EX_INDEX: {
    const char *r = row_local(k, e);
    if (e->ref.decl->dtype == DT_F16) buf_puts(b, "cnp_g_h2f(");
    if (r) {
      buf_puts(b, r);
    } else {
      buf_printf(b, "f_%s[", e->ref.decl->name);
      lin_index(k, b, e);
      buf_puts(b, "]");
    }
    buf_puts(b, e->ref.decl->dtype == DT_F16 ? ")" : "");
    return;
  }
  case EX_UNARY:
    if (e->op == OP_NEG && signed_int(e->type) && e->args[0]->kind != EX_INT) {
      buf_printf(b, "cnp_g_neg_i%s(", signed_int_bits(e->type));   /* wraps (templates/int.tmpl) */
      ex(k, b, e->args[0]);
      buf_puts(b, ")");
      return;
    }
    buf_puts(b, e->op == OP_NEG ? "(-" : e->op == OP_BNOT ? "(~" : "(!");
    ex(k, b, e->args[0]);
    buf_puts(b, ")");
    return;
  case EX_BINARY: {
    bool shift = e->op == OP_SHL || e->op == OP_SHR;
    if (e->type == DT_U64 && (e->op == OP_DIV || e->op == OP_MOD || shift)) {
      /* u64 / % (0 for a zero divisor) and shifts: templates/int.tmpl */
      buf_printf(b, "cnp_g_%s_u64(", int_op_name(e->op));
      ex_as(k, b, e->args[0], DT_U64);
      buf_puts(b, ", ");
      ex_as(k, b, e->args[1], DT_U64);
      buf_puts(b, ")");
      return;
    }
    if (((e->op >= OP_ADD && e->op <= OP_MOD) || shift) && signed_int(e->type)) {
      /* i32/i64 + - * / %: defined results (templates/int.tmpl, docs/codegen.md) */
      /* an untyped constant operand may be i64 in an i32 operation: narrowed on purpose */
      buf_printf(b, "cnp_g_%s_i%s(", int_op_name(e->op), signed_int_bits(e->type));
      for (int i = 0; i < 2; i++) {
        if (i) buf_puts(b, ", ");
        double lv;
        if (e->args[i]->type == DT_I64 && e->type == DT_I32 && !literal_value(e->args[i], &lv))
          ex_as(k, b, e->args[i], DT_I32);
        else ex(k, b, e->args[i]);
      }
      buf_puts(b, ")");
      return;
    }
    if (e->op == OP_MOD && dtype_is_float(e->type)) {
      buf_printf(b, "%s(", float_fn(BI_FMOD, e->type));
      ex(k, b, e->args[0]);
      buf_puts(b, ", ");
      ex(k, b, e->args[1]);
      buf_puts(b, ")");
      return;
    }
    if (e->op >= OP_EQ && e->op <= OP_GE && !dtype_is_float(operand_type(e)) &&
        !dtype_is_complex(operand_type(e))) {
      /* x < x, k == k: constant for integers and bools; C compilers warn about the
      ** self-comparison (-Wtautological-compare), so write the constant */
      Buf l = {0}, r = {0};
      ex(k, &l, e->args[0]);
      ex(k, &r, e->args[1]);
      bool same = !strcmp(buf_str(&l), buf_str(&r));
      if (same) buf_printf(b, "((void)%s, %d)", buf_str(&l), e->op == OP_EQ || e->op == OP_LE || e->op == OP_GE);
      buf_free(&l);
      buf_free(&r);
      if (same) return;
    }
    if (e->op != OP_AND && e->op != OP_OR && operand_type(e) == DT_U64) {
      /* u >= 0 is always true and u < 0 always false: say so without the comparison */
      Expr *a = e->args[0], *c = e->args[1];
      int always = -1;
      if (is_zero_literal(c) && (e->op == OP_GE || e->op == OP_LT)) always = e->op == OP_GE;
      if (is_zero_literal(a) && (e->op == OP_LE || e->op == OP_GT)) always = e->op == OP_LE;
      if (always >= 0) {
        buf_puts(b, "((void)");
        ex(k, b, is_zero_literal(c) ? a : c);
        buf_printf(b, ", %d)", always);
        return;
      }
      buf_puts(b, "(");
      ex_as(k, b, a, DT_U64);
      buf_printf(b, " %s ", op_text(e->op));
      ex_as(k, b, c, DT_U64);
      buf_puts(b, ")");
      return;
    }
    /* f16 and complex operations convert both operands to the operation's type */
    DType t = DT_VOID;
    if (e->op >= OP_ADD && e->op <= OP_MOD) t = e->type;
    else if (e->op >= OP_EQ && e->op <= OP_GE && e->args[0]->type != DT_BOOL)
      t = sema_promote(e->args[0], e->args[1]);
    bool conv = converted_type(t);
    buf_puts(b, "(");
    if (conv) ex_as(k, b, e->args[0], t);
    else ex(k, b, e->args[0]);
    buf_printf(b, " %s ", op_text(e->op));
    if (conv) ex_as(k, b, e->args[1], t);
    else ex(k, b, e->args[1]);
    buf_puts(b, ")");
    return;
  }
  case EX_CALL: ex_call(k, b, e); return;
  case EX_CAST:
    if (e->cast_to == DT_BOOL) {
      buf_puts(b, "(");
      ex(k, b, e->args[0]);
      buf_puts(b, " != 0)");
    } else if (e->cast_to == DT_F16) {
      ex_f16(k, b, e->args[0]);               /* f16(x): the nearest f16 value */
    } else if (converted_type(e->cast_to)) {
      ex_as(k, b, e->args[0], e->cast_to);
    } else if (dtype_is_int(e->cast_to) && dtype_is_float(e->args[0]->type)) {
      /* saturating, NaN -> 0 (templates/int.tmpl) */
      buf_printf(b, "cnp_g_%s_%s(", e->args[0]->type == DT_F64 ? "f64" : "f32", dtype_name(e->cast_to));
      ex(k, b, e->args[0]);
      buf_puts(b, ")");
    } else {
      buf_printf(b, "((%s)", gen_ctype(e->cast_to));
      ex(k, b, e->args[0]);
      buf_puts(b, ")");
    }
    return;
  }
  cnp_ice("expression kind %d", (int)e->kind);
}

/* ======================================================================== map bodies */

static void map_stmts(KCtx *k, Buf *b, Stmt *s, Stmt *whole);

static void map_stmt(KCtx *k, Buf *b, Stmt *s, Stmt *whole) {
  GenUnit *u = k->u;
  line_dir(u, b, s->loc);
  switch (s->kind) {
  case ST_LET: {
    Buf t = {0};
    DType lt = s->let->type;
    if (lt == DT_F16) ex_f16(k, &t, s->value);              /* f16 lets hold f16 values */
    else if (dtype_is_complex(lt)) ex_as(k, &t, s->value, lt);
    else ex(k, &t, s->value);
    if (converted_type(lt))
      buf_line(b, "%s l_%s = %s;", gen_vtype(lt), s->let->name, buf_str(&t));
    else
      buf_line(b, "%s l_%s = (%s)%s;", lt == DT_BOOL ? "int" : gen_ctype(lt), s->let->name,
               lt == DT_BOOL ? "int" : gen_ctype(lt), buf_str(&t));
    if (!stmts_read_local(whole, s->let)) buf_line(b, "(void)l_%s;", s->let->name);
    buf_free(&t);
    return;
  }
  case ST_ASSIGN:
  case ST_ADD: {
    Buf t = {0}, v = {0};
    Expr *tg = s->target;
    DType tt = tg->kind == EX_INDEX ? tg->ref.decl->dtype : tg->ref.local->type;
    Expr *val = s->value;
    /* f16(x) stored into f16: the store rounds x itself (rounding twice changes nothing) */
    if (tt == DT_F16 && tg->kind == EX_INDEX && val->kind == EX_CAST && val->cast_to == DT_F16 &&
        val->args[0]->type != DT_F64 && !dtype_is_complex(val->args[0]->type)) {
      if (val->args[0]->type != DT_F16) buf_puts(&v, "(float)");
      ex(k, &v, val->args[0]);
    } else if (converted_type(tt)) ex_as(k, &v, val, tt);
    else ex(k, &v, val);
    const char *ct = tt == DT_BOOL ? (tg->kind == EX_INDEX ? "uint8_t" : "int") : gen_ctype(tt);
    if (tg->kind == EX_INDEX && row_local(k, tg)) {   /* dry pass: the row's local */
      buf_puts(&t, row_local(k, tg));
    } else if (tg->kind == EX_INDEX) {        /* the element itself (f16: its bits) */
      buf_printf(&t, "f_%s[", tg->ref.decl->name);
      lin_index(k, &t, tg);
      buf_puts(&t, "]");
    } else {
      ex(k, &t, tg);
    }
    const char *T = buf_str(&t), *V = buf_str(&v);
    bool add = s->kind == ST_ADD;
    if (tt == DT_F16 && tg->kind == EX_INDEX) {   /* rounded to f16 once per store */
      if (add && s->scatter) buf_line(b, "cnp_g_hadd(&%s, %s);", T, V);
      else if (add) buf_line(b, "%s = cnp_g_f2h(cnp_g_h2f(%s) + %s);", T, T, V);
      else buf_line(b, "%s = cnp_g_f2h(%s);", T, V);
    } else if (tt == DT_F16) {                    /* an f16 let */
      if (add) buf_line(b, "%s = cnp_g_hround(%s + %s);", T, T, V);
      else if (s->value->type == DT_F16 && !is_f16_variable(s->value))
        buf_line(b, "%s = cnp_g_hround(%s);", T, V);
      else buf_line(b, "%s = %s;", T, V);
    } else if (dtype_is_complex(tt)) {
      if (add && s->scatter)
        buf_line(b, "cnp_g_cadd%s(&%s, %s);", tt == DT_C64 ? "64" : "128", T, V);
      else
        buf_line(b, "%s %s %s;", T, add ? "+=" : "=", V);
    } else if (add && s->scatter) {
      if (k->cuda) {
        buf_line(b, "cnp_g_atomic_add(&%s, (%s)%s);", T, ct, V);
      } else {
        buf_line(b, "CNP_G_OMP(\"omp atomic\")");
        buf_line(b, "%s += (%s)%s;", T, ct, V);
      }
    } else if (add && signed_int(tt)) {           /* wraps like + (templates/int.tmpl) */
      buf_line(b, "%s = cnp_g_add_i%s(%s, (%s)%s);", T, signed_int_bits(tt), T, ct, V);
    } else {
      buf_line(b, "%s %s (%s)%s;", T, add ? "+=" : "=", ct, V);
    }
    buf_free(&t);
    buf_free(&v);
    return;
  }
  case ST_IF: {
    Buf c = {0};
    ex(k, &c, s->value);
    buf_line(b, "if (%s) {", buf_str(&c));
    buf_free(&c);
    b->indent += 2;
    map_stmts(k, b, s->body, whole);
    b->indent -= 2;
    if (s->else_body) {
      buf_line(b, "} else {");
      b->indent += 2;
      map_stmts(k, b, s->else_body, whole);
      b->indent -= 2;
    }
    buf_line(b, "}");
    return;
  }
  default: cnp_ice("statement kind %d inside a map", (int)s->kind);
  }
}

static void map_stmts(KCtx *k, Buf *b, Stmt *s, Stmt *whole) {
  for (; s; s = s->next) map_stmt(k, b, s, whole);
}

/* Does the emitted code of the dry pass read the map index? (Not in the elements held in
** locals: their last index is the map index.) */
static bool rows_expr_read_index(KCtx *k, Expr *e, Local *l) {
  if (!e) return false;
  if (e->kind == EX_NAME && e->ref.local == l) return true;
  if (e->kind == EX_INDEX && row_local(k, e)) return false;
  for (int i = 0; i < e->nargs; i++)
    if (rows_expr_read_index(k, e->args[i], l)) return true;
  return false;
}

static bool rows_read_index(KCtx *k, Stmt *s, Local *l) {
  for (; s; s = s->next) {
    if (rows_expr_read_index(k, s->value, l) || rows_expr_read_index(k, s->target, l)) return true;
    if (rows_read_index(k, s->body, l) || rows_read_index(k, s->else_body, l)) return true;
  }
  return false;
}

/* The per-element code of a fused group: each map in its own block. */
static void group_body(KCtx *k, Buf *b, GenOp *op) {
  for (int m = 0; m < op->n_maps; m++) {
    Stmt *map = op->maps[m];
    k->map = map;
    buf_line(b, "{ /* %s:%d: %s */", base_name(map->loc.file->path), map->loc.line,
             src_line(k->u, map->loc));
    b->indent += 2;
    buf_line(b, "const int64_t l_%s = cnp_i;", map->index->name);
    if (!stmts_read_local(map->body, map->index) || (k->rows && !rows_read_index(k, map->body, map->index)))
      buf_line(b, "(void)l_%s;", map->index->name);
    map_stmts(k, b, map->body, map->body);
    line_back(k->u, b);
    b->indent -= 2;
    buf_line(b, "} /* map %s */", map->index->name);
  }
}

static void group_use(GenUnit *u, GenOp *op, KUse *use) {
  memset(use, 0, sizeof *use);
  use->arena = &u->cc->arena;
  for (int m = 0; m < op->n_maps; m++) kuse_stmts(use, op->maps[m]->body);
}

/* typedef struct NAME_kK_args { ... } */
static void kernel_args(GenUnit *u, Buf *b, GenOp *op, KUse *use, bool cuda) {
  buf_line(b, "/* Arguments of kernel %d (%s:%d). */", op->kernel,
           base_name(op->stmt->loc.file->path), op->stmt->loc.line);
  buf_line(b, "typedef struct %s_k%d_args {", u->name, op->kernel);
  buf_line(b, "  int64_t n;                    /* live extent of '%s' */", op->stmt->over.name);
  buf_line(b, "  int *bad;                     /* device flag for index checks (CUDA) */");
  if (cuda)
    buf_line(b, "  const int64_t *d_n;            /* CUDA graph: live extent in device memory, or NULL */");
  for (int i = 0; i < use->n_fields; i++) {
    Decl *f = use->fields[i];
    buf_line(b, "  %s *f_%s;", gen_ctype(f->dtype), f->name);
    for (int d = 0; d < f->shape.rank; d++) buf_line(b, "  int64_t f_%s_e%d;", f->name, d);
  }
  for (int i = 0; i < use->n_params; i++)
    buf_line(b, "  %s P_%s;", gen_vtype(use->params[i]->dtype), use->params[i]->name);
  for (int i = 0; i < use->n_dims; i++) buf_line(b, "  int64_t n_%s;", use->dims[i]->name);
  if (use->step) buf_line(b, "  int64_t cnp_step;             /* step counter: stats.steps before this step */");
  buf_line(b, "} %s_k%d_args;", u->name, op->kernel);
  buf_puts(b, "\n");
}

/* Locals unpacked from A at the top of a kernel. */
static void kernel_locals(Buf *b, KUse *use) {
  for (int i = 0; i < use->n_fields; i++) {
    Decl *f = use->fields[i];
    buf_line(b, "%s *CNP_G_RESTRICT f_%s = A.f_%s;", gen_ctype(f->dtype), f->name, f->name);
  }
  for (int i = 0; i < use->n_params; i++)
    buf_line(b, "const %s P_%s = A.P_%s;", gen_vtype(use->params[i]->dtype),
             use->params[i]->name, use->params[i]->name);
  for (int i = 0; i < use->n_dims; i++)
    buf_line(b, "const int64_t n_%s = A.n_%s;", use->dims[i]->name, use->dims[i]->name);
  if (use->step) buf_line(b, "const int64_t cnp_step = A.cnp_step;");
}

static void kernel_host(GenUnit *u, Buf *b, GenOp *op, KUse *use) {
  KCtx k = {u, false, NULL, DT_VOID, NULL};
  buf_line(b, "/* Kernel %d on the host: %d map%s fused into one loop. */", op->kernel,
           op->n_maps, op->n_maps > 1 ? "s" : "");
  buf_line(b, "static int %s_k%d_host(const %s_k%d_args *ap)", u->name, op->kernel, u->name,
           op->kernel);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "const %s_k%d_args A = *ap;", u->name, op->kernel);
  buf_line(b, "int bad = 0;");
  kernel_locals(b, use);
  buf_line(b, "CNP_G_OMP(\"omp parallel for schedule(static) reduction(|:bad)\")");
  buf_line(b, "for (int64_t cnp_i = 0; cnp_i < A.n; cnp_i++) {");
  b->indent = 4;
  group_body(&k, b, op);
  b->indent = 2;
  buf_line(b, "}");
  buf_line(b, "return bad ? CNP_ERANGE : CNP_OK;");
  b->indent = 0;
  buf_line(b, "} /* kernel %d (host) */", op->kernel);
  buf_puts(b, "\n");
}

/* Number of components of a field: a literal when its leading extents are constants (so
** the C compiler unrolls component loops), else computed from the array. */
static const char *ncomp_str(GenUnit *u, Decl *f) {
  int64_t n = 1;
  for (int d = 0; d + 1 < f->shape.rank; d++) {
    Expr *e = f->shape.ext[d];
    if (e->kind == EX_INT) n *= e->ival;
    else if (e->kind == EX_NAME && e->ref.decl && e->ref.decl->kind == DECL_CONST) n *= e->ref.decl->ival;
    else return arena_printf(&u->cc->arena, "cnp_g_ncomp(&p->f_%s)", f->name);
  }
  return arena_printf(&u->cc->arena, "%" PRId64, n);
}

static bool in_reflist(const RefList *l, const Decl *d) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i].decl == d) return true;
  return false;
}

/* Is element `comp` of f held in a local per row (the dry pass)? */
static bool row_held(const RowVals *rv, Decl *f, int64_t comp) {
  for (int i = 0; i < rv->n; i++)
    if (rv->v[i].f == f && (comp < 0 || rv->v[i].comp == comp)) return true;
  return false;
}

/* The element `comp` of row cnp_i of f, as a C lvalue. */
static const char *row_elem(GenUnit *u, Decl *f, int64_t comp) {
  if (comp == 0) return arena_printf(&u->cc->arena, "f_%s[cnp_i]", f->name);
  return arena_printf(&u->cc->arena, "f_%s[%" PRId64 " * A.f_%s_e%d + cnp_i]", f->name, comp,
                      f->name, f->shape.rank - 1);
}

/* Dry pass: the row's elements of the fields the maps write, loaded into locals. */
static void row_loads(GenUnit *u, Buf *b, const RowVals *rv) {
  for (int i = 0; i < rv->n; i++) {
    Decl *f = rv->v[i].f;
    buf_line(b, "%s %s = %s;", gen_ctype(f->dtype), row_name(u, f, rv->v[i].comp),
             row_elem(u, f, rv->v[i].comp));
  }
}

/* Dry pass: the locals a pass does not use (each pass uses only some of them). `(void)&x`,
** not `(void)x`: nvcc's front end still calls a variable assigned and cast to void "set but
** never used" (#550). */
static void row_unused(GenUnit *u, Buf *b, const RowVals *rv) {
  Buf t = {0};
  for (int i = 0; i < rv->n; i++)
    buf_printf(&t, "%s(void)&%s;", i ? " " : "", row_name(u, rv->v[i].f, rv->v[i].comp));
  buf_line(b, "%s", buf_str(&t));
  buf_free(&t);
}

/* The host kernel of the compact + sort fast path (lower.c, find_fast_path): one parallel
** region; each thread runs the maps over its chunk and counts live keys, one thread turns
** the counts into offsets, each thread scatters its live rows to their sorted places in
** the double buffers, and the buffers are swapped. With a dry first pass (op->dry) pass 1
** keeps the maps' results in locals and stores only the mask, the fields no compaction
** moves and each row's key; pass 2 computes the results again and stores them straight
** into the double buffers; if a key is out of range, the maps then run for real. */
static void kernel_host_fused(GenUnit *u, Buf *b, GenOp *op, KUse *use) {
  KCtx k = {u, false, NULL, DT_VOID, NULL};
  Stmt *c = op->mask_of;
  Decl *mask = c->a.decl, *key = op->fused_sort->a.decl, *plan = op->fused_plan;
  Decl *dim = op->stmt->over.decl;
  int K = op->kernel;
  RowVals rv;
  memset(&rv, 0, sizeof rv);
  if (op->dry && fuse_row_values(u, op, &rv)) cnp_ice("dry kernel %d without row values", K);
  KCtx kd = k;
  kd.rows = &rv;
  Stmt *sum = op->fused_sum;
  Decl *out = sum ? sum->b.decl : NULL;
  int64_t n_sums = 0;     /* components summed: rows of the output */
  for (int i = 0; sum && i < sum->list.n; i++) {
    int64_t nc = 1;
    (void)fuse_const_ncomp(sum->list.v[i].decl, &nc);
    n_sums += nc;
  }
  buf_line(b, "/* Kernel %d on the host: %d map%s, then compact %s + sort %s as one counting "
              "sort%s. */", K, op->n_maps, op->n_maps > 1 ? "s" : "", mask->name, key->name,
           op->dry ? " (dry first pass)" : "");
  buf_line(b, "static int %s_k%d_host(const %s_k%d_args *ap, %s_h *p)", u->name, K, u->name, K,
           u->name);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "const %s_k%d_args A = *ap;", u->name, K);
  buf_line(b, "int bad = 0, oob = 0;");
  kernel_locals(b, use);
  buf_line(b, "const int64_t R = %s;  /* keys in [0, R): plan %s */", setup_str(u, plan->value, "p->"),
           plan->name);
  buf_line(b, "const int64_t cap = p->cap_%s;", dim->name);
  buf_line(b, "int64_t *const hist = p->hist_k%d;", K);
  if (op->dry) buf_line(b, "uint32_t *const keys = p->keys_k%d;  /* pass 1: each row's key, "
                           "UINT32_MAX if not live */", K);
  buf_line(b, "int64_t live = 0;");
  for (int i = 0; i < c->list.n; i++) {
    Decl *f = c->list.v[i].decl;
    int64_t nc = 1;
    bool held = op->dry && row_held(&rv, f, -1), need_src = !(op->dry && f == key);
    if (held) {
      (void)fuse_const_ncomp(f, &nc);
      need_src = false;
      for (int64_t q = 0; q < nc && f != key; q++) need_src = need_src || !row_held(&rv, f, q);
    }
    if (f->shape.rank > 1 && !held) buf_line(b, "const int64_t nc_%s = %s;", f->name, ncomp_str(u, f));
    if (need_src)
      buf_line(b, "const %s *const src_%s = (const %s *)p->f_%s.data;", gen_ctype(f->dtype),
               f->name, gen_ctype(f->dtype), f->name);
    buf_line(b, "%s *const dst_%s = (%s *)p->g%d_%s.data;", gen_ctype(f->dtype), f->name,
             gen_ctype(f->dtype), K, f->name);
  }
  if (sum)
    buf_line(b, "%s *const sum_%s = (%s *)p->f_%s.data;  /* %s:%d: sum %s -> %s, done here */",
             gen_ctype(out->dtype), out->name, gen_ctype(out->dtype), out->name,
             base_name(sum->loc.file->path), sum->loc.line, plan->name, out->name);
  buf_line(b, "memset(hist, 0, sizeof(int64_t) * (size_t)p->nthreads * (size_t)R);");
  if (op->dry) buf_line(b, "if (R >= (int64_t)UINT32_MAX) oob = 1;  /* keys beyond uint32: the "
                           "runtime sorts */");
  buf_line(b, "CNP_G_OMP(\"omp parallel num_threads(p->nthreads) reduction(|:bad)\")");
  buf_line(b, "{");
  b->indent = 4;
  buf_line(b, "const int64_t t = CNP_G_TID(), T = CNP_G_NT();");
  buf_line(b, "const int64_t lo = A.n * t / T, hi = A.n * (t + 1) / T;");
  buf_line(b, "int64_t *const h = hist + t * R;");
  buf_line(b, "for (int64_t cnp_i = lo; cnp_i < hi; cnp_i++) {");
  b->indent = 6;
  if (op->dry) {
    buf_line(b, "/* pass 1 (dry): the maps' results stay in these locals */");
    row_loads(u, b, &rv);
    group_body(&kd, b, op);
    for (int i = 0; i < rv.n; i++) {     /* the mask and the fields no compaction moves */
      Decl *f = rv.v[i].f;
      if (!rv.v[i].written || (f != mask && in_reflist(&c->list, f))) continue;
      buf_line(b, "%s = %s;", row_elem(u, f, rv.v[i].comp), row_name(u, f, rv.v[i].comp));
    }
    buf_line(b, "uint32_t kv = UINT32_MAX;");
    buf_line(b, "if (%s) {  /* live: count its key */", row_name(u, mask, 0));
    buf_line(b, "  const int64_t key = (int64_t)%s;", row_name(u, key, 0));
    buf_line(b, "  if (key >= 0 && key < R) {");
    buf_line(b, "    h[key]++;");
    buf_line(b, "    kv = (uint32_t)key;");
  } else {
    group_body(&k, b, op);
    buf_line(b, "if (f_%s[cnp_i]) {  /* live: count its key */", mask->name);
    buf_line(b, "  const int64_t key = (int64_t)f_%s[cnp_i];", key->name);
    buf_line(b, "  if (key >= 0 && key < R) {");
    buf_line(b, "    h[key]++;");
  }
  buf_line(b, "  } else {");
  buf_line(b, "    CNP_G_OMP(\"omp atomic write\")");
  buf_line(b, "    oob = 1;");
  buf_line(b, "  }");
  buf_line(b, "}");
  if (op->dry) {
    buf_line(b, "keys[cnp_i] = kv;");
    row_unused(u, b, &rv);
  }
  b->indent = 4;
  buf_line(b, "}");
  buf_line(b, "CNP_G_OMP(\"omp barrier\")");
  buf_line(b, "CNP_G_OMP(\"omp single\")");
  buf_line(b, "{");
  buf_line(b, "  int oob_seen;");
  buf_line(b, "  CNP_G_OMP(\"omp atomic read\")");
  buf_line(b, "  oob_seen = oob;");
  buf_line(b, "  if (!oob_seen) {  /* counts -> first position of each (key, thread) */");
  buf_line(b, "    int64_t run = 0;");
  buf_line(b, "    for (int64_t key = 0; key < R; key++) {");
  buf_line(b, "      p->off_%s[key] = run;", plan->name);
  buf_line(b, "      for (int64_t u = 0; u < T; u++) {");
  buf_line(b, "        const int64_t n_u = hist[u * R + key];");
  buf_line(b, "        hist[u * R + key] = run;");
  buf_line(b, "        run += n_u;");
  buf_line(b, "      }");
  buf_line(b, "    }");
  buf_line(b, "    p->off_%s[R] = run;", plan->name);
  buf_line(b, "    live = run;");
  if (sum)
    buf_line(b, "    for (int64_t k = 0; k < %" PRId64 " * R; k++) sum_%s[k] = 0;", n_sums, out->name);
  buf_line(b, "  }");
  buf_line(b, "}");
  buf_line(b, "int oob_all;");
  buf_line(b, "CNP_G_OMP(\"omp atomic read\")");
  buf_line(b, "oob_all = oob;");
  const char *kexpr = op->dry ? "kv" : "key";   /* the row's key in pass 2 */
  if (op->dry) {
    buf_line(b, "if (!oob_all) {  /* pass 2: each live row computed again, stored at its sorted "
                "place */");
    if (sum) buf_line(b, "  const int first = t == 0;  /* its rows come first in every segment */");
    buf_line(b, "  for (int64_t cnp_i = lo; cnp_i < hi; cnp_i++) {");
    buf_line(b, "    const uint32_t kv = keys[cnp_i];");
    buf_line(b, "    if (kv == UINT32_MAX) continue;");
    b->indent = 8;
    row_loads(u, b, &rv);
    group_body(&kd, b, op);
    b->indent = 4;
    buf_line(b, "    const int64_t j = h[kv]++;  /* placed by pass 1's key */");
  } else {
    buf_line(b, "if (!oob_all) {  /* scatter live rows to their sorted places */");
    if (sum) buf_line(b, "  const int first = t == 0;  /* its rows come first in every segment */");
    buf_line(b, "  for (int64_t cnp_i = lo; cnp_i < hi; cnp_i++) {");
    buf_line(b, "    if (!f_%s[cnp_i]) continue;", mask->name);
    if (sum) {
      buf_line(b, "    const int64_t key = (int64_t)f_%s[cnp_i];", key->name);
      buf_line(b, "    const int64_t j = h[key]++;");
    } else {
      buf_line(b, "    const int64_t j = h[(int64_t)f_%s[cnp_i]]++;", key->name);
    }
  }
  for (int i = 0; i < c->list.n; i++) {
    Decl *f = c->list.v[i].decl;
    int64_t nc = 1;
    if (op->dry && f == key) {
      buf_line(b, "    dst_%s[j] = (%s)kv;", f->name, gen_ctype(f->dtype));
    } else if (op->dry && row_held(&rv, f, -1)) {
      (void)fuse_const_ncomp(f, &nc);
      for (int64_t q = 0; q < nc; q++) {
        const char *at = q ? arena_printf(&u->cc->arena, "%" PRId64 " * cap + ", q) : "";
        if (row_held(&rv, f, q))
          buf_line(b, "    dst_%s[%sj] = %s;", f->name, at, row_name(u, f, q));
        else
          buf_line(b, "    dst_%s[%sj] = src_%s[%scnp_i];", f->name, at, f->name, at);
      }
    } else if (f->shape.rank == 1) {
      buf_line(b, "    dst_%s[j] = src_%s[cnp_i];", f->name, f->name);
    } else {
      buf_line(b, "    for (int64_t c = 0; c < nc_%s; c++)", f->name);
      buf_line(b, "      dst_%s[c * cap + j] = src_%s[c * cap + cnp_i];", f->name, f->name);
    }
  }
  /* the fused sum: thread 0 adds the values it just moved (sum_values gives each one) */
  for (int i = 0, J = 0; sum && i < sum->list.n; i++) {
    Decl *f = sum->list.v[i].decl;
    int64_t nc = 1;
    (void)fuse_const_ncomp(f, &nc);
    for (int64_t q = 0; q < nc; q++, J++) {
      const char *at = q ? arena_printf(&u->cc->arena, "%" PRId64 " * cap + ", q) : "";
      const char *v;
      if (op->dry && f == key) v = "kv";
      else if (op->dry && row_held(&rv, f, q)) v = row_name(u, f, q);
      else v = arena_printf(&u->cc->arena, "src_%s[%scnp_i]", f->name, at);
      buf_line(b, "    if (first) sum_%s[%s%s] += (%s)%s;", out->name,
               J ? arena_printf(&u->cc->arena, "%d * R + ", J) : "", kexpr,
               gen_ctype(out->dtype), v);
    }
  }
  if (op->dry) {
    b->indent = 8;
    row_unused(u, b, &rv);
    b->indent = 4;
  }
  if (sum) {
    buf_line(b, "  }");
    buf_line(b, "  CNP_G_OMP(\"omp barrier\")");
    buf_line(b, "  CNP_G_OMP(\"omp for schedule(static) nowait\")  /* the region ends next */");
    buf_line(b, "  for (int64_t k = 0; k < R; k++) {  /* then the other threads' rows, in sorted "
                "order */");
    for (int i = 0, J = 0; i < sum->list.n; i++) {
      Decl *f = sum->list.v[i].decl;
      int64_t nc = 1;
      (void)fuse_const_ncomp(f, &nc);
      for (int64_t q = 0; q < nc; q++, J++) {
        const char *at = q ? arena_printf(&u->cc->arena, "%" PRId64 " * cap + ", q) : "";
        const char *o = J ? arena_printf(&u->cc->arena, "%d * R + k", J) : "k";
        buf_line(b, "    {");
        buf_line(b, "      %s acc = sum_%s[%s];", gen_ctype(out->dtype), out->name, o);
        buf_line(b, "      for (int64_t r = hist[k]; r < p->off_%s[k + 1]; r++) acc += (%s)dst_%s[%sr];",
                 plan->name, gen_ctype(out->dtype), f->name, at);
        buf_line(b, "      sum_%s[%s] = acc;", out->name, o);
        buf_line(b, "    }");
      }
    }
  }
  buf_line(b, "  }");
  if (op->dry) {
    buf_line(b, "} else {  /* a key out of range: the maps run for real (their inputs are "
                "unchanged), then");
    buf_line(b, "          ** compact and sort run as runtime calls */");
    buf_line(b, "  for (int64_t cnp_i = lo; cnp_i < hi; cnp_i++) {");
    b->indent = 8;
    group_body(&k, b, op);
    b->indent = 4;
    buf_line(b, "  }");
  }
  buf_line(b, "}");
  b->indent = 2;
  buf_line(b, "} /* parallel */");
  buf_line(b, "(void)cap;");
  buf_line(b, "if (!oob) {  /* the double buffers become the fields */");
  for (int i = 0; i < c->list.n; i++) {
    Decl *f = c->list.v[i].decl;
    buf_line(b, "  cnp_array t_%s = p->f_%s;", f->name, f->name);
    buf_line(b, "  p->f_%s = p->g%d_%s;", f->name, K, f->name);
    buf_line(b, "  p->g%d_%s = t_%s;", K, f->name, f->name);
  }
  buf_line(b, "  p->n_%s = live;", dim->name);
  buf_line(b, "}");
  buf_line(b, "p->fused_k%d = !oob;  /* else compact and sort run as runtime calls */", K);
  buf_line(b, "return bad ? CNP_ERANGE : CNP_OK;");
  b->indent = 0;
  buf_line(b, "} /* kernel %d (host) */", K);
  buf_puts(b, "\n");
}

static void kernel_cuda(GenUnit *u, Buf *b, GenOp *op, KUse *use) {
  KCtx k = {u, true, NULL, DT_VOID, NULL};
  buf_line(b, "/* Kernel %d on the device: one thread per element. */", op->kernel);
  buf_line(b, "static __global__ void %s_k%d_cuda(const %s_k%d_args A)", u->name, op->kernel,
           u->name, op->kernel);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "const int64_t cnp_i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;");
  buf_line(b, "int bad = 0;");
  buf_line(b, "if (cnp_i >= A.n || (A.d_n && cnp_i >= *A.d_n)) {  /* past the live extent */");
  if (op->mask_of)
    buf_line(b, "  if (cnp_i < A.n) A.f_%s[cnp_i] = 0;  /* graph: rows past it leave the compaction */",
             op->mask_of->a.decl->name);
  buf_line(b, "  return;");
  buf_line(b, "}");
  kernel_locals(b, use);
  group_body(&k, b, op);
  buf_line(b, "if (bad && A.bad) *A.bad = 1;");
  b->indent = 0;
  buf_line(b, "} /* kernel %d (cuda) */", op->kernel);
  buf_puts(b, "\n");
}

/* Fills the argument struct from the pipeline object and runs the kernel. */
static void kernel_launch(GenUnit *u, Buf *b, GenOp *op, KUse *use, bool cuda) {
  buf_line(b, "static int %s_k%d(%s_h *p, cnp_stream *S)", u->name, op->kernel, u->name);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "%s_k%d_args A;", u->name, op->kernel);
  buf_line(b, "memset(&A, 0, sizeof A);");
  Decl *over = op->stmt->over.decl;
  if (over->kind == DECL_DIM) buf_line(b, "A.n = p->n_%s;", over->name);
  else if (over->kind == DECL_PARAM) buf_line(b, "A.n = (int64_t)p->P_%s;", over->name);
  else buf_line(b, "A.n = %" PRId64 ";", over->ival);
  for (int i = 0; i < use->n_fields; i++) {
    Decl *f = use->fields[i];
    buf_line(b, "A.f_%s = (%s *)p->f_%s.data;", f->name, gen_ctype(f->dtype), f->name);
    for (int d = 0; d < f->shape.rank; d++)
      buf_line(b, "A.f_%s_e%d = p->f_%s.shape[%d];", f->name, d, f->name, d);
  }
  for (int i = 0; i < use->n_params; i++)
    buf_line(b, "A.P_%s = p->P_%s;", use->params[i]->name, use->params[i]->name);
  for (int i = 0; i < use->n_dims; i++)
    buf_line(b, "A.n_%s = p->n_%s;", use->dims[i]->name, use->dims[i]->name);
  if (use->step) buf_line(b, "A.cnp_step = (int64_t)p->stats.steps;");
  buf_line(b, "p->stats.launches++;");
  if (cuda) {
    buf_line(b, "if (p->backend == CNP_BACKEND_CUDA) {");
    if (op->fused_sort) buf_line(b, "  p->fused_k%d = 0;", op->kernel);
    buf_line(b, "  if (A.n > 0) {");
    buf_line(b, "    A.bad = (int *)p->bad.data;");
    buf_line(b, "    %s_k%d_cuda<<<(unsigned)((A.n + 255) / 256), 256, 0,", u->name, op->kernel);
    buf_line(b, "        (cudaStream_t)cnp_stream_native(S)>>>(A);");
    buf_line(b, "    if (cnp_g_launched() != CNP_OK) return CNP_EBACKEND;");
    buf_line(b, "#ifdef CNP_DEBUG_BOUNDS");
    buf_line(b, "    {  /* index checks: read the flag back (one host synchronization) */");
    buf_line(b, "      int flag = 0;");
    buf_line(b, "      cudaStream_t cs = (cudaStream_t)cnp_stream_native(S);");
    buf_line(b, "      if (cudaMemcpyAsync(&flag, A.bad, sizeof flag, cudaMemcpyDeviceToHost, cs) != cudaSuccess ||");
    buf_line(b, "          cudaStreamSynchronize(cs) != cudaSuccess)");
    buf_line(b, "        return CNP_EBACKEND;");
    buf_line(b, "      p->stats.host_syncs++;");
    buf_line(b, "      if (flag) {");
    buf_line(b, "        cudaMemsetAsync(A.bad, 0, sizeof flag, cs);");
    buf_line(b, "        return CNP_ERANGE;");
    buf_line(b, "      }");
    buf_line(b, "    }");
    buf_line(b, "#endif");
    buf_line(b, "  }");
    buf_line(b, "  return CNP_OK;");
    buf_line(b, "}");
  }
  buf_line(b, "(void)S;");
  if (op->fused_sort) buf_line(b, "return %s_k%d_host(&A, p);", u->name, op->kernel);
  else buf_line(b, "return %s_k%d_host(&A);", u->name, op->kernel);
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
}

static void gen_kernels(GenUnit *u, Buf *b, bool cuda) {
  for (int s = 0; s < u->n_steps; s++)
    for (int o = 0; o < u->steps[s].n_ops; o++) {
      GenOp *op = &u->steps[s].ops[o];
      if (op->kind != GOP_MAP) continue;
      KUse use;
      group_use(u, op, &use);
      buf_puts(b, "\n");
      kernel_args(u, b, op, &use, cuda);
      if (op->fused_sort) kernel_host_fused(u, b, op, &use);
      else kernel_host(u, b, op, &use);
      if (cuda) kernel_cuda(u, b, op, &use);
      kernel_launch(u, b, op, &use, cuda);
    }
}

/* ======================================================================== step body */

static const char *where(GenUnit *u, Loc loc) {
  return arena_printf(&u->cc->arena, "%s:%d: %s", base_name(loc.file->path), loc.line,
                      src_line(u, loc));
}

/* C string literal body of `s` (quotes and backslashes escaped). */
static const char *cstr(GenUnit *u, const char *s) {
  Buf t = {0};
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') buf_put(&t, "\\", 1);
    buf_put(&t, s, 1);
  }
  char *r = arena_strndup(&u->cc->arena, buf_str(&t), t.n);
  buf_free(&t);
  return r;
}

static void try_call(GenUnit *u, Buf *b, Loc loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void try_call(GenUnit *u, Buf *b, Loc loc, const char *fmt, ...) {
  Buf call = {0};
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *t = arena_alloc(&u->cc->arena, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(t, (size_t)n + 1, fmt, ap);
  va_end(ap);
  buf_line(b, "CNP_G_TRY(%s,", t);
  buf_line(b, "          \"%s\");", cstr(u, where(u, loc)));
  buf_free(&call);
}

/* views = rows of every field in the list (n = live extent). */
static void list_views(GenUnit *u, Buf *b, RefList *l) {
  buf_line(b, "nv = 0;");
  for (int i = 0; i < l->n; i++) {
    Decl *f = l->v[i].decl;
    buf_line(b, "nv = cnp_g_rows(p->views, nv, &p->f_%s, %s);", f->name, live_extent(u, f));
  }
}

/* C type and value of a hand-written kernel's argument (a field's element pointer, a
** param or const by value, a dim's live extent). */
static const char *karg_type(Expr *a) {
  Decl *d = a->ref.decl;
  static char buf[64];
  if (d->kind == DECL_FIELD) {
    snprintf(buf, sizeof buf, "%s *", gen_ctype(d->dtype));
    return buf;
  }
  if (d->kind == DECL_PARAM) return gen_vtype(d->dtype);
  if (d->kind == DECL_CONST) return dtype_is_float(d->dtype) ? "double" : "int64_t";
  return "int64_t";
}

static const char *karg_value(GenUnit *u, Expr *a) {
  Decl *d = a->ref.decl;
  Arena *ar = &u->cc->arena;
  switch (d->kind) {
  case DECL_FIELD: return arena_printf(ar, "(%s *)p->f_%s.data", gen_ctype(d->dtype), d->name);
  case DECL_PARAM: return arena_printf(ar, "p->P_%s", d->name);
  case DECL_DIM: return arena_printf(ar, "p->n_%s", d->name);
  case DECL_CONST: {
    Buf t = {0};
    if (dtype_is_float(d->dtype))   /* an f16 constant: its f16 value */
      fmt_float(&t, d->dtype == DT_F16 ? half_round(d->fval) : d->fval, DT_F64);
    else fmt_int(&t, d->ival, DT_I64);
    char *r = arena_strndup(ar, buf_str(&t), t.n);
    buf_free(&t);
    return r;
  }
  default: cnp_ice("kernel argument '%s'", d->name);
  }
}

/* The first call of a kernel (its arguments define the host fallback's prototype). */
static Stmt *first_call(GenUnit *u, Decl *k) {
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++)
      if (u->steps[i].ops[o].stmt->kind == ST_CALL && u->steps[i].ops[o].stmt->a.decl == k)
        return u->steps[i].ops[o].stmt;
  return NULL;
}

/* Parameter list of a kernel call: "double *x, double f, int64_t n". */
static const char *kparams(GenUnit *u, Stmt *call) {
  Buf t = {0};
  for (int i = 0; i < call->nargs; i++)
    buf_printf(&t, "%s%s a%d", i ? ", " : "", karg_type(call->args[i]), i);
  if (call->value2) buf_printf(&t, "%sint64_t n", call->nargs ? ", " : "");
  if (!t.n) buf_puts(&t, "void");
  char *r = arena_strndup(&u->cc->arena, buf_str(&t), t.n);
  buf_free(&t);
  return r;
}

/* Prototypes of host fallbacks and (CUDA unit) the embedded kernel sources. */
static void gen_kernel_decls(GenUnit *u, Buf *b, bool cuda) {
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind != DECL_KERNEL) continue;
    Stmt *call = first_call(u, d);
    if (call && d->host_path) {
      buf_printf(b, "\n/* Host fallback of kernel %s, defined by the user in %s. */\n", d->name,
                 d->host_path);
      buf_printf(b, "%svoid %s(%s);\n", cuda ? "extern \"C\" " : "", d->name, kparams(u, call));
    }
    if (!cuda || !call) continue;
    buf_printf(b, "\n/* Kernel %s: %s, compiled with NVRTC at setup. */\n", d->name, d->path);
    buf_printf(b, "static const char %s_src_%s[] =\n", u->name, d->name);
    const char *src = lower_kernel_source(u, d);
    buf_puts(b, "    \"");
    for (const char *q = src; *q; q++) {
      if (*q == '\n') buf_puts(b, q[1] ? "\\n\"\n    \"" : "\\n");
      else if (*q == '"' || *q == '\\') buf_printf(b, "\\%c", *q);
      else if (*q == '\t') buf_puts(b, "\\t");
      else if ((unsigned char)*q < 32) buf_printf(b, "\\%03o", (unsigned char)*q);
      else buf_put(b, q, 1);
    }
    buf_puts(b, "\";\n");
  }
}

/* The fast-path kernel that replaces compact/sort statement s, or NULL. */
static GenOp *fused_owner(GenUnit *u, Stmt *s) {
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      if (op->fused_sort && (op->fused_sort == s || op->mask_of == s || op->fused_sum == s))
        return op;
    }
  return NULL;
}

static void inline_sum(GenUnit *u, Buf *b, Stmt *s) {
  Decl *out = s->b.decl, *plan = s->a.decl;
  DType od = out->dtype;
  buf_line(b, "if (p->inl_%s) {  /* offsets from the counting sort of kernel %d */", plan->name,
           lower_plan_producer(u, plan)->kernel);
  b->indent += 2;
  buf_line(b, "const int64_t R = p->f_%s.shape[%d];", out->name, out->shape.rank - 1);
  buf_line(b, "const int64_t *const off = p->off_%s;", plan->name);
  buf_line(b, "int64_t j = 0;");
  for (int i = 0; i < s->list.n; i++) {
    Decl *f = s->list.v[i].decl;
    buf_line(b, "for (int64_t c = 0; c < cnp_g_ncomp(&p->f_%s); c++, j++) {", f->name);
    buf_line(b, "  const %s *const src = (const %s *)p->f_%s.data + c * p->f_%s.shape[%d];",
             gen_ctype(f->dtype), gen_ctype(f->dtype), f->name, f->name, f->shape.rank - 1);
    buf_line(b, "  %s *const dst = (%s *)p->f_%s.data + j * R;", gen_ctype(od), gen_ctype(od),
             out->name);
    buf_line(b, "  CNP_G_OMP(\"omp parallel for schedule(static)\")");
    buf_line(b, "  for (int64_t k = 0; k < R; k++) {");
    if (od == DT_F16) {   /* as the runtime: accumulated in float, rounded once */
      buf_line(b, "    float acc = 0.0f;");
      buf_line(b, "    for (int64_t r = off[k]; r < off[k + 1]; r++) acc += cnp_g_h2f(src[r]);");
      buf_line(b, "    dst[k] = cnp_g_f2h(acc);");
    } else {
      buf_line(b, "    %s acc = 0;", gen_ctype(od));
      buf_line(b, "    for (int64_t r = off[k]; r < off[k + 1]; r++) acc += (%s)src[r];", gen_ctype(od));
      buf_line(b, "    dst[k] = acc;");
    }
    buf_line(b, "  }");
    buf_line(b, "  p->stats.launches++;");
    buf_line(b, "}");
  }
  b->indent -= 2;
  buf_line(b, "} else {");
}

/* The array an exchange sends and receives: its field, or the staging buffer itself
** (`exchange H with ...`, a host array p->hb_H). */
static const char *exchanged(GenUnit *u, const Stmt *s) {
  if (s->b.decl) return arena_printf(&u->cc->arena, "p->f_%s", s->b.decl->name);
  return arena_printf(&u->cc->arena, "p->hb_%s", s->a.decl->name);
}

static void step_stmt(GenUnit *u, Buf *b, GenOp *op, bool cuda_unit) {
  Stmt *s = op->stmt;
  buf_puts(b, "\n");
  comment_loc(u, b, s->loc);
  GenOp *owner = (s->kind == ST_COMPACT || s->kind == ST_SORT || s->kind == ST_SUM)
                     ? fused_owner(u, s) : NULL;
  bool sum_inline = s->kind == ST_SUM && !owner && lower_plan_producer(u, s->a.decl);
  if (owner) {
    buf_line(b, "if (!p->fused_k%d) {  /* else done by kernel %d */", owner->kernel, owner->kernel);
    b->indent += 2;
  }
  if (op->seg_inline) {
    buf_line(b, "p->inl_%s = p->fused_k%d;", s->a.decl->name,
             lower_plan_producer(u, s->a.decl)->kernel);
    buf_line(b, "if (!p->inl_%s) {  /* else the offsets came from kernel %d */", s->a.decl->name,
             lower_plan_producer(u, s->a.decl)->kernel);
    b->indent += 2;
  } else if (s->kind == ST_SEGMENTS && lower_plan_producer(u, s->a.decl)) {
    buf_line(b, "p->inl_%s = 0;", s->a.decl->name);
  }
  if (sum_inline) inline_sum(u, b, s);
  if (owner || op->seg_inline || sum_inline) b->indent += sum_inline ? 2 : 0;
  line_dir(u, b, s->loc);
  switch (s->kind) {
  case ST_MAP:
    try_call(u, b, s->loc, "%s_k%d(p, S)", u->name, op->kernel);
    break;
  case ST_COMPACT: {
    Decl *m = s->a.decl, *dim;
    gen_decl_is_dim_extent(m, &dim);
    buf_line(b, "{");
    b->indent += 2;
    buf_line(b, "cnp_array mask = cnp_g_row(&p->f_%s, 0, %s);", m->name, live_extent(u, m));
    buf_line(b, "int64_t live = 0;");
    buf_line(b, "int nv;");
    list_views(u, b, &s->list);
    try_call(u, b, s->loc, "cnp_compact_by_mask(&mask, p->views, nv, &live, p->ws, S)");
    if (dim) buf_line(b, "p->n_%s = live;", dim->name);
    else buf_line(b, "(void)live;");
    buf_line(b, "p->stats.launches++;");
    buf_line(b, "if (p->backend == CNP_BACKEND_CUDA) p->stats.host_syncs++;");
    b->indent -= 2;
    buf_line(b, "}");
    break;
  }
  case ST_SORT: {
    Decl *kf = s->a.decl;
    buf_line(b, "{");
    b->indent += 2;
    buf_line(b, "cnp_array key = cnp_g_row(&p->f_%s, 0, %s);", kf->name, live_extent(u, kf));
    buf_line(b, "int nv;");
    list_views(u, b, &s->list);
    try_call(u, b, s->loc, "cnp_sort_by_key(&key, NULL, p->views, nv, 0, p->ws, S)");
    buf_line(b, "p->stats.launches++;");
    if (cuda_unit)
      buf_line(b, "if (p->backend == CNP_BACKEND_CUDA && key.shape[0] > 0) p->stats.host_syncs++;  /* key range read back */");
    b->indent -= 2;
    buf_line(b, "}");
    break;
  }
  case ST_OFFSETS: {
    Decl *kf = s->a.decl, *out = s->b.decl;
    buf_line(b, "{");
    b->indent += 2;
    buf_line(b, "cnp_array key = cnp_g_row(&p->f_%s, 0, %s);", kf->name, live_extent(u, kf));
    buf_line(b, "cnp_array off = cnp_g_row(&p->f_%s, 0, %s);", out->name, live_extent(u, out));
    try_call(u, b, s->loc, "cnp_cell_offsets(&key, off.shape[0] - 1, &off, p->ws, S)");
    buf_line(b, "p->stats.launches++;");
    if (cuda_unit)
      buf_line(b, "if (p->backend == CNP_BACKEND_CUDA) p->stats.host_syncs++;  /* validation read back */");
    b->indent -= 2;
    buf_line(b, "}");
    break;
  }
  case ST_SEGMENTS: {
    Decl *kf = s->b.decl;
    buf_line(b, "{");
    b->indent += 2;
    buf_line(b, "cnp_array key = cnp_g_row(&p->f_%s, 0, %s);", kf->name, live_extent(u, kf));
    try_call(u, b, s->loc, "cnp_segment_plan_build(p->plan_%s, &key, S)", s->a.decl->name);
    buf_line(b, "p->stats.launches++;");
    if (cuda_unit)
      buf_line(b, "if (p->backend == CNP_BACKEND_CUDA && key.shape[0] > 0) p->stats.host_syncs++;  /* key statistics read back */");
    b->indent -= 2;
    buf_line(b, "}");
    break;
  }
  case ST_SUM: {
    Decl *out = s->b.decl;
    buf_line(b, "{");
    b->indent += 2;
    buf_line(b, "int64_t j = 0;");
    buf_line(b, "int nv;");
    list_views(u, b, &s->list);
    buf_line(b, "for (int k = 0; k < nv; k++, j++) {");
    buf_line(b, "  cnp_array out = cnp_g_row(&p->f_%s, j, p->f_%s.shape[%d]);", out->name,
             out->name, out->shape.rank - 1);
    b->indent += 2;
    try_call(u, b, s->loc, "cnp_segment_plan_sum(p->plan_%s, &p->views[k], &out, S)",
             s->a.decl->name);
    buf_line(b, "p->stats.launches++;");
    b->indent -= 2;
    buf_line(b, "}");
    b->indent -= 2;
    buf_line(b, "}");
    break;
  }
  case ST_RECORD:
    try_call(u, b, s->loc, "cnp_event_record(p->e_%s, S)", s->a.decl->name);
    break;
  case ST_WAIT:
    try_call(u, b, s->loc, "cnp_stream_wait_event(S, p->e_%s)", s->a.decl->name);
    break;
  case ST_COPY:
    try_call(u, b, s->loc, "cnp_snapshot_copy(p->snap_%s, &p->f_%s, S, NULL, &p->h_%s)",
             s->a.decl->name, s->b.decl->name, s->a.decl->name);
    buf_line(b, "p->has_%s = 1;", s->a.decl->name);
    {
      Decl *dim;
      if (gen_decl_is_dim_extent(s->b.decl, &dim))
        buf_line(b, "p->live_%s = p->n_%s;  /* rows the snapshot shows */", s->a.decl->name, dim->name);
    }
    break;
  case ST_REFRESH:
    if (s->to_device) try_call(u, b, s->loc, "cnp_mirror_to_device(p->mir_%s, S)", s->a.decl->name);
    else try_call(u, b, s->loc, "cnp_mirror_to_host(p->mir_%s, S, NULL)", s->a.decl->name);
    break;
  case ST_CALL: {
    Decl *k = s->a.decl;
    buf_line(b, "{");
    b->indent += 2;
    Buf av = {0}, ap = {0};
    for (int i = 0; i < s->nargs; i++) {
      buf_line(b, "%s a%d = %s;", karg_type(s->args[i]), i, karg_value(u, s->args[i]));
      buf_printf(&av, "%sa%d", i ? ", " : "", i);
      buf_printf(&ap, "%s&a%d", i ? ", " : "", i);
    }
    if (s->value2) {
      Expr *e = s->value2;
      if (e->kind == EX_NAME && e->ref.decl && e->ref.decl->kind == DECL_DIM)
        buf_line(b, "int64_t n = p->n_%s;", e->ref.decl->name);
      else
        buf_line(b, "int64_t n = %s;", setup_str(u, e, "p->"));
      buf_printf(&av, "%sn", s->nargs ? ", " : "");
      buf_printf(&ap, "%s&n", s->nargs ? ", " : "");
    }
    if (cuda_unit) {
      buf_line(b, "if (p->backend == CNP_BACKEND_CUDA) {");
      buf_line(b, "  void *args[] = {%s};", ap.n ? buf_str(&ap) : "NULL");
      if (s->value2) {
        buf_line(b, "  const cnp_dim3 grid = {(uint32_t)((n + 255) / 256), 1, 1}, block = {256, 1, 1};");
        buf_line(b, "  if (n > 0)");
      } else {
        buf_line(b, "  const cnp_dim3 grid = {1, 1, 1}, block = {1, 1, 1};");
      }
      b->indent += 2;
      try_call(u, b, s->loc, "cnp_catalog_launch(p->cat, \"%s\", grid, block, 0, S, args)", k->name);
      b->indent -= 2;
      buf_line(b, "} else {");
      b->indent += 2;
    }
    if (k->host_path) buf_line(b, "%s(%s);", k->name, buf_str(&av));
    else try_call(u, b, s->loc, "CNP_EUNSUPPORTED");
    if (cuda_unit) {
      b->indent -= 2;
      buf_line(b, "}");
    }
    for (int i = 0; i < s->nargs; i++) buf_line(b, "(void)a%d;", i);
    if (s->value2 && !k->host_path && !cuda_unit) buf_line(b, "(void)n;");   /* nothing runs it */
    buf_line(b, "p->stats.launches++;");
    b->indent -= 2;
    buf_line(b, "}");
    buf_free(&av);
    buf_free(&ap);
    break;
  }
  case ST_EXCHANGE:
    try_call(u, b, s->loc, "cnp_mpi_exchange(p->mpi_%s, &%s, p->xdst_%d, p->xsrc_%d, %d, S, NULL)",
             s->a.decl->name, exchanged(u, s), op->mpi_id, op->mpi_id, 100 + op->mpi_id);
    buf_line(b, "p->stats.host_syncs++;");
    break;
  case ST_MIGRATE: {
    Decl *d = s->a.decl, *dim;
    gen_decl_is_dim_extent(s->list.v[0].decl, &dim);
    Buf fl = {0};
    for (int k = 0; k < s->list.n; k++) buf_printf(&fl, "%sp->f_%s", k ? ", " : "", s->list.v[k].decl->name);
    buf_line(b, "{");
    b->indent += 2;
    buf_line(b, "cnp_array fields[%d] = {%s};", s->list.n, buf_str(&fl));
    buf_line(b, "int64_t n_after = 0;");
    try_call(u, b, s->loc, "cnp_migrate(p->mig_%d, fields, %d, %s, &p->f_%s, S, NULL, &n_after)",
             op->mpi_id, s->list.n, live_extent(u, s->list.v[0].decl), d->name);
    if (dim) buf_line(b, "p->n_%s = n_after;", dim->name);
    else buf_line(b, "(void)n_after;");
    buf_line(b, "p->stats.launches++;");
    buf_line(b, "p->stats.host_syncs++;");
    b->indent -= 2;
    buf_line(b, "}");
    buf_free(&fl);
    break;
  }
  default: cnp_ice("step statement kind %d", (int)s->kind);
  }
  line_back(u, b);
  for (int n = (owner != NULL) + op->seg_inline + sum_inline; n > 0; n--) {
    b->indent -= 2;
    buf_line(b, "}");
  }
}

/* A param's value from the C API (`v`, of gen_apitype): f16 rounded to the nearest f16,
** complex structs {re, im} made complex values. */
static const char *param_value(GenUnit *u, Decl *d, const char *v) {
  Arena *a = &u->cc->arena;
  if (d->dtype == DT_F16) return arena_printf(a, "cnp_g_hround(%s)", v);
  if (dtype_is_complex(d->dtype))
    return arena_printf(a, "cnp_g_mk%s(%s.re, %s.im)", d->dtype == DT_C64 ? "64" : "128", v, v);
  return v;
}

static bool graph_step(GenUnit *u, GenStep *gs, int *end);
static bool unit_graph_pulls(GenUnit *u);

/* Does step gs, run directly, read live extents on the host (so that an extent only the
** device holds must come back first)? Records, waits, snapshot copies, mirror refreshes and
** maps over a param or const that do not read a dim's extent do not. */
static bool step_reads_extents(GenUnit *u, GenStep *gs) {
  for (int o = 0; o < gs->n_ops; o++) {
    GenOp *op = &gs->ops[o];
    if (op->kind == GOP_MAP) {
      KUse use;
      Decl *over = op->stmt->over.decl;
      if (!over || over->kind == DECL_DIM) return true;
      group_use(u, op, &use);
      if (use.n_dims) return true;
      continue;
    }
    switch (op->stmt->kind) {
    case ST_RECORD: case ST_WAIT: case ST_COPY: case ST_REFRESH: break;
    default: return true;
    }
  }
  return false;
}

/* Cross-call order (sema's stream_join): stream t waits at its first step of a call for
** the end-of-call event of stream u recorded by the previous call. */
static bool join_needs(GenUnit *u, int t, int s) {
  int n = u->cc->n_decl[DECL_STREAM];
  return u->cc->stream_join && t < n && s < n && u->cc->stream_join[t * n + s];
}

static bool join_source(GenUnit *u, int s) {
  for (int t = 0; t < u->cc->n_decl[DECL_STREAM]; t++)
    if (join_needs(u, t, s)) return true;
  return false;
}

/* The compaction / sort / offsets scratch p->ws is one per pipeline. On CUDA, steps on two
** streams that both use it would run on the same device buffers at once (a graph's or a
** direct call's kernels are asynchronous), so when steps on two or more streams use it, each
** of them waits for the end of the previous one (event ws_ev) and records its own. */
static bool step_uses_ws(const GenStep *gs) {
  for (int o = 0; o < gs->n_ops; o++) {
    const Stmt *s = gs->ops[o].stmt;
    if (gs->ops[o].kind == GOP_STMT && s &&
        (s->kind == ST_COMPACT || s->kind == ST_SORT || s->kind == ST_OFFSETS))
      return true;
  }
  return false;
}

static bool ws_shared(GenUnit *u) {
  Decl *first = NULL;
  for (int i = 0; i < u->n_steps; i++) {
    Decl *st = u->steps[i].decl->stream.decl;
    if (!st || !step_uses_ws(&u->steps[i])) continue;
    if (!first) first = st;
    else if (st != first) return true;
  }
  return false;
}

static const char *param_cname(GenUnit *u, const Decl *d);

static void gen_step_body(GenUnit *u, Buf *b, bool cuda) {
  bool ws_order = ws_shared(u);
  bool pull = cuda && unit_graph_pulls(u);
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_PARAM && !d->setup)
      buf_line(b, "  p->P_%s = %s;", d->name, param_value(u, d, param_cname(u, d)));
  for (int i = 0; i < u->n_steps; i++) {
    GenStep *gs = &u->steps[i];
    Decl *d = gs->decl;
    b->indent = 2;
    buf_puts(b, "\n");
    buf_line(b, "/* ---- %s:%d: %s ---- */", base_name(d->loc.file->path), d->kw_loc.line,
             src_line(u, d->kw_loc));
    if (d->stream.decl) buf_line(b, "S = p->s_%s;", d->stream.decl->name);
    else buf_line(b, "S = NULL;  /* host step: after all earlier work (synchronize_for_mpi) */");
    bool first_on_stream = d->stream.decl != NULL;
    for (int j = 0; j < i && first_on_stream; j++)
      if (u->steps[j].decl->stream.decl == d->stream.decl) first_on_stream = false;
    if (first_on_stream) {
      int t = d->stream.decl->index;
      for (Decl *o = u->cc->decls; o; o = o->next)
        if (o->kind == DECL_STREAM && join_needs(u, t, o->index)) {
          buf_line(b, "if (p->ej_ready)  /* after stream %s's work of the previous call */", o->name);
          b->indent += 2;
          try_call(u, b, d->kw_loc, "cnp_stream_wait_event(S, p->ej_%s)", o->name);
          b->indent -= 2;
        }
    }
    for (int e = 0; e < d->after.n; e++) {
      line_dir(u, b, d->kw_loc);
      try_call(u, b, d->kw_loc, "cnp_stream_wait_event(S, p->e_%s)", d->after.v[e].decl->name);
      line_back(u, b);
    }
    bool ws_step = ws_order && d->stream.decl && step_uses_ws(gs);
    if (ws_step) {
      buf_line(b, "if (p->ws_used)  /* the shared workspace: after the last step that used it */");
      b->indent += 2;
      try_call(u, b, d->kw_loc, "cnp_stream_wait_event(S, p->ws_ev)");
      b->indent -= 2;
    }
    int end = 0;
    bool graph = cuda && graph_step(u, gs, &end);
    if (graph) {
      buf_line(b, "if (p->gx_%d) {  /* the CUDA graph captured at setup */", i);
      b->indent += 2;
      try_call(u, b, d->kw_loc, "%s_g%d_replay(p, S)", u->name, i);
      b->indent -= 2;
      buf_line(b, "} else {");
      b->indent += 2;
    }
    if (cuda && pull && (graph || step_reads_extents(u, gs)))
      try_call(u, b, d->kw_loc, "%s_pull(p, 1)", u->name);
    for (int o = 0; o < gs->n_ops; o++) {
      if (graph && o == end) {
        b->indent -= 2;
        buf_line(b, "}");
      }
      step_stmt(u, b, &gs->ops[o], cuda);
    }
    if (graph && end == gs->n_ops) {
      b->indent -= 2;
      buf_line(b, "}");
    }
    if (ws_step) {
      try_call(u, b, d->kw_loc, "cnp_event_record(p->ws_ev, S)");
      buf_line(b, "p->ws_used = 1;");
    }
  }
  bool any = false;
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_STREAM && join_source(u, d->index)) {
      if (!any) buf_puts(b, "\n  /* the next call orders its work after this call's (see the waits above) */\n");
      any = true;
      buf_line(b, "CNP_G_TRY(cnp_event_record(p->ej_%s, p->s_%s),", d->name, d->name);
      buf_line(b, "          \"%s_step: end of the call on stream %s\");", u->name, d->name);
    }
  if (any) buf_line(b, "p->ej_ready = 1;");
  b->indent = 0;
}

/* In NAME_failed(): a step that fails has enqueued part of its work, which may still run;
** the next call's waits must cover it, not only the previous complete call's. */
static void gen_fail_join(GenUnit *u, Buf *b) {
  bool any = false;
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_STREAM && join_source(u, d->index)) {
      if (!any) buf_puts(b, "  /* the next call waits for the work enqueued before the failure too */\n");
      any = true;
      buf_printf(b, "  (void)cnp_event_record(p->ej_%s, p->s_%s);\n", d->name, d->name);
    }
  if (any) buf_puts(b, "  p->ej_ready = 1;\n");
}

/* ======================================================================== CUDA graphs (.cu only) */

/* Are all fields of the list over dim `dim` (a live extent)? */
static bool list_over(RefList *l, Decl *dim) {
  Decl *fd = NULL;
  for (int k = 0; k < l->n; k++)
    if (!gen_decl_is_dim_extent(l->v[k].decl, &fd) || fd != dim) return false;
  return true;
}

/* The dim whose live extent a graph-captured statement works over (NULL: none). */
static Decl *graph_stmt_dim(Stmt *s) {
  Decl *dim = NULL;
  switch (s->kind) {
  case ST_COMPACT: case ST_SORT:
    if (s->a.decl && gen_decl_is_dim_extent(s->a.decl, &dim)) return dim;
    return NULL;
  case ST_SEGMENTS:
    if (s->b.decl && gen_decl_is_dim_extent(s->b.decl, &dim)) return dim;
    return NULL;
  case ST_SUM:
    if (s->list.n > 0 && gen_decl_is_dim_extent(s->list.v[0].decl, &dim)) return dim;
    return NULL;
  default: return NULL;
  }
}

/* Is every `sum` over plan `plan` in the unit inside ops (o, e) of step gs? (A plan built
** with a device count describes the capacity's rows, which only the graph's sums expect.) */
static bool plan_sums_inside(GenUnit *u, Decl *plan, GenStep *gs, int o, int e) {
  for (int i = 0; i < u->n_steps; i++)
    for (int k = 0; k < u->steps[i].n_ops; k++) {
      GenOp *op = &u->steps[i].ops[k];
      if (op->kind != GOP_STMT || op->stmt->kind != ST_SUM || op->stmt->a.decl != plan) continue;
      if (&u->steps[i] != gs || k <= o || k >= e) return false;
    }
  return true;
}

/* A step is replayed as a CUDA graph, captured once at setup, when its work needs no host
** decision: ops [0, *end) are fused kernels (no hand-written ones, none reading a dim's
** extent as a value, extents that are dims or setup params), compactions whose mask the
** kernel just before writes, sorts, segment plan builds and sums over a dim's live extent
** (their row counts stay on the device: the *_device_count runtime calls); the ops from
** *end on may only be `record`s, run directly after the graph launch. A plan built in a
** graph must be summed only by sums after it in the same graph. Anything else (offsets,
** copy, refresh, wait, call, exchange, migrate, host steps) runs as direct launches. On the
** host backend none of this exists: `.c` units have no graphs. */
static bool graph_step(GenUnit *u, GenStep *gs, int *end) {
  if (!gs->decl->stream.decl) return false;
  int n_dims = 0;   /* GDims holds 32: a program with more dims runs its steps without graphs */
  for (Decl *d = u->cc->decls; d; d = d->next) n_dims += d->kind == DECL_DIM;
  if (n_dims > 32) return false;
  int e = gs->n_ops;
  while (e > 0 && gs->ops[e - 1].kind == GOP_STMT && gs->ops[e - 1].stmt->kind == ST_RECORD) e--;
  if (e == 0) return false;
  for (int o = 0; o < e; o++) {
    GenOp *op = &gs->ops[o];
    if (op->kind == GOP_MAP) {
      /* a host fast-path kernel (fused_sort) is a plain map kernel on CUDA */
      Decl *over = op->stmt->over.decl;
      KUse use;
      if (!over) return false;
      if (over->kind == DECL_PARAM && !over->setup) return false;
      if (over->kind != DECL_DIM && over->kind != DECL_PARAM && over->kind != DECL_CONST) return false;
      group_use(u, op, &use);
      if (use.n_dims) return false;
      continue;
    }
    Stmt *s = op->stmt;
    Decl *dim = graph_stmt_dim(s);
    if (!dim) return false;
    switch (s->kind) {
    case ST_COMPACT:
      if (o == 0 || gs->ops[o - 1].kind != GOP_MAP || gs->ops[o - 1].mask_of != s ||
          gs->ops[o - 1].stmt->over.decl != dim)
        return false;
      if (!list_over(&s->list, dim)) return false;
      break;
    case ST_SORT:
      if (!list_over(&s->list, dim)) return false;
      break;
    case ST_SEGMENTS:
      if (!plan_sums_inside(u, s->a.decl, gs, o, e)) return false;
      break;
    case ST_SUM: {
      bool built = false;
      if (!list_over(&s->list, dim)) return false;
      for (int k = 0; k < o; k++)
        if (gs->ops[k].kind == GOP_STMT && gs->ops[k].stmt->kind == ST_SEGMENTS &&
            gs->ops[k].stmt->a.decl == s->a.decl && graph_stmt_dim(gs->ops[k].stmt) == dim)
          built = true;
      if (!built) return false;
      break;
    }
    default: return false;
    }
  }
  *end = e;
  return true;
}

/* Dims a graph reads (kernel extents) or compacts; compacted[] marks the latter. */
typedef struct GDims {
  Decl *d[32];
  bool compacted[32];
  int n;
} GDims;

static void gdims_add(GDims *g, Decl *d, bool compacted) {
  for (int i = 0; i < g->n; i++)
    if (g->d[i] == d) {
      g->compacted[i] = g->compacted[i] || compacted;
      return;
    }
  if (g->n == 32) cnp_ice("too many dims in CUDA graphs");   /* graph_step() rules it out */
  g->d[g->n] = d;
  g->compacted[g->n++] = compacted;
}

static void graph_dims(GenStep *gs, int end, GDims *g) {
  for (int o = 0; o < end; o++) {
    GenOp *op = &gs->ops[o];
    Decl *dim = NULL;
    if (op->kind == GOP_MAP && op->stmt->over.decl->kind == DECL_DIM)
      gdims_add(g, op->stmt->over.decl, false);
    else if (op->kind == GOP_STMT && (dim = graph_stmt_dim(op->stmt)) != NULL)
      gdims_add(g, dim, op->stmt->kind == ST_COMPACT);
  }
}

/* Dims of all graphs of the unit. */
static void unit_graph_dims(GenUnit *u, GDims *g) {
  memset(g, 0, sizeof *g);
  for (int i = 0; i < u->n_steps; i++) {
    int end;
    if (graph_step(u, &u->steps[i], &end)) graph_dims(&u->steps[i], end, g);
  }
}

/* Does some graph compact a dim (whose live extent then lives on the device)? */
static bool unit_graph_pulls(GenUnit *u) {
  GDims g;
  unit_graph_dims(u, &g);
  for (int k = 0; k < g.n; k++)
    if (g.compacted[k]) return true;
  return false;
}

/* Kernel K inside a graph: its argument fill, capture and per-replay argument update. */
static void graph_kernel(GenUnit *u, Buf *b, GenOp *op) {
  KUse use;
  group_use(u, op, &use);
  const char *N = u->name;
  int K = op->kernel;
  Decl *over = op->stmt->over.decl;
  buf_line(b, "/* Arguments of kernel %d in the CUDA graph: grid sized by the capacity, the live", K);
  buf_line(b, "** extent read on the device. */");
  buf_line(b, "static void %s_k%d_fill(%s_h *p, %s_k%d_args *ap)", N, K, N, N, K);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "memset(ap, 0, sizeof *ap);");
  if (over->kind == DECL_DIM) {
    buf_line(b, "ap->n = p->cap_%s;", over->name);
    buf_line(b, "ap->d_n = (const int64_t *)p->dn_%s.data;", over->name);
  } else if (over->kind == DECL_PARAM) {
    buf_line(b, "ap->n = (int64_t)p->P_%s;", over->name);
  } else {
    buf_line(b, "ap->n = %" PRId64 ";", over->ival);
  }
  buf_line(b, "ap->bad = (int *)p->bad.data;");
  for (int i = 0; i < use.n_fields; i++) {
    Decl *f = use.fields[i];
    buf_line(b, "ap->f_%s = (%s *)p->f_%s.data;", f->name, gen_ctype(f->dtype), f->name);
    for (int d = 0; d < f->shape.rank; d++)
      buf_line(b, "ap->f_%s_e%d = p->f_%s.shape[%d];", f->name, d, f->name, d);
  }
  for (int i = 0; i < use.n_params; i++)
    buf_line(b, "ap->P_%s = p->P_%s;", use.params[i]->name, use.params[i]->name);
  if (use.step) buf_line(b, "ap->cnp_step = (int64_t)p->stats.steps;");
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
  buf_line(b, "/* Kernel %d launched while its step is captured; remembers its graph node. */", K);
  buf_line(b, "static int %s_k%d_capture(%s_h *p, cnp_stream *S)", N, K, N);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "%s_k%d_args A;", N, K);
  buf_line(b, "cudaStream_t cs = (cudaStream_t)cnp_stream_native(S);");
  buf_line(b, "enum cudaStreamCaptureStatus cst = cudaStreamCaptureStatusNone;");
  buf_line(b, "const cudaGraphNode_t *deps = NULL;");
  buf_line(b, "size_t n_deps = 0;");
  buf_line(b, "%s_k%d_fill(p, &A);", N, K);
  buf_line(b, "if (A.n <= 0) return CNP_EINVAL;");
  buf_line(b, "%s_k%d_cuda<<<(unsigned)((A.n + 255) / 256), 256, 0, cs>>>(A);", N, K);
  buf_line(b, "if (cnp_g_launched() != CNP_OK) return CNP_EBACKEND;");
  buf_line(b, "/* right after the launch, the capture's only dependency is the kernel's node */");
  /* CUDA 13 added an edge-data argument (the 12.x form has 6): both toolkits compile it */
  buf_puts(b, "#if CUDART_VERSION >= 13000\n");
  buf_line(b, "if (cudaStreamGetCaptureInfo(cs, &cst, NULL, NULL, &deps, NULL, &n_deps) != cudaSuccess ||");
  buf_puts(b, "#else\n");
  buf_line(b, "if (cudaStreamGetCaptureInfo(cs, &cst, NULL, NULL, &deps, &n_deps) != cudaSuccess ||");
  buf_puts(b, "#endif\n");
  buf_line(b, "    cst != cudaStreamCaptureStatusActive || n_deps != 1 ||");
  buf_line(b, "    cudaGraphKernelNodeGetParams(deps[0], &p->gkp_k%d) != cudaSuccess)", K);
  buf_line(b, "  return CNP_EBACKEND;");
  buf_line(b, "p->gnode_k%d = deps[0];", K);
  buf_line(b, "return CNP_OK;");
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
  buf_line(b, "/* This step's arguments (per-step params) into kernel %d's node of the graph. */", K);
  buf_line(b, "static int %s_k%d_update(%s_h *p, cudaGraphExec_t x)", N, K, N);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "%s_k%d_args A;", N, K);
  buf_line(b, "void *args[1] = {&A};");
  buf_line(b, "cudaKernelNodeParams kp = p->gkp_k%d;", K);
  buf_line(b, "%s_k%d_fill(p, &A);", N, K);
  buf_line(b, "kp.kernelParams = args;  /* copied by the call */");
  buf_line(b, "kp.extra = NULL;");
  buf_line(b, "return cudaGraphExecKernelNodeSetParams(x, p->gnode_k%d, &kp) == cudaSuccess ? CNP_OK",
           K);
  buf_line(b, "                                                                       : CNP_EBACKEND;");
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
}

/* The graph functions of step i: enqueue (under capture), capture (setup), replay (step). */
static void graph_funcs(GenUnit *u, Buf *b, int i, int end) {
  GenStep *gs = &u->steps[i];
  const char *N = u->name;
  GDims g;
  memset(&g, 0, sizeof g);
  graph_dims(gs, end, &g);
  for (int o = 0; o < end; o++)
    if (gs->ops[o].kind == GOP_MAP) graph_kernel(u, b, &gs->ops[o]);
  buf_line(b, "/* %s:%d: %s -- its work, enqueued while the stream is captured. */",
           base_name(gs->decl->loc.file->path), gs->decl->kw_loc.line, src_line(u, gs->decl->kw_loc));
  buf_line(b, "static int %s_g%d_enqueue(%s_h *p, cnp_stream *S)", N, i, N);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "int st;");
  for (int o = 0; o < end; o++) {
    GenOp *op = &gs->ops[o];
    Stmt *s = op->stmt;
    comment_loc(u, b, s->loc);
    if (op->kind == GOP_MAP) {
      buf_line(b, "if ((st = %s_k%d_capture(p, S)) != CNP_OK) return st;", N, op->kernel);
      continue;
    }
    Decl *dim = graph_stmt_dim(s);
    const char *D = dim->name;
    switch (s->kind) {
    case ST_COMPACT:
      buf_line(b, "{  /* over the capacity: the kernel cleared the mask past the live extent */");
      b->indent += 2;
      buf_line(b, "cnp_array mask = cnp_g_row(&p->f_%s, 0, p->cap_%s);", s->a.decl->name, D);
      buf_line(b, "int nv = 0;");
      for (int k = 0; k < s->list.n; k++)
        buf_line(b, "nv = cnp_g_rows(p->views, nv, &p->f_%s, p->cap_%s);", s->list.v[k].decl->name, D);
      buf_line(b, "st = cnp_compact_by_mask_device_count(&mask, p->views, nv, &p->dn_%s, p->ws, S);", D);
      break;
    case ST_SORT:
      buf_line(b, "{  /* over the capacity: rows past the live extent dn_%s sort last, untouched */", D);
      b->indent += 2;
      buf_line(b, "cnp_array key = cnp_g_row(&p->f_%s, 0, p->cap_%s);", s->a.decl->name, D);
      buf_line(b, "int nv = 0;");
      for (int k = 0; k < s->list.n; k++)
        buf_line(b, "nv = cnp_g_rows(p->views, nv, &p->f_%s, p->cap_%s);", s->list.v[k].decl->name, D);
      if (op->sort_bound) {
        buf_line(b, "/* keys bounded by plan %s: the radix sort covers its range's bits */",
                 op->sort_bound->name);
        buf_line(b, "st = cnp_sort_by_key_device_count(&key, NULL, p->views, nv, %s,",
                 setup_str(u, op->sort_bound->value, "p->"));
        buf_line(b, "                                  &p->dn_%s, p->ws, S);", D);
      } else {
        buf_line(b, "st = cnp_sort_by_key_device_count(&key, NULL, p->views, nv, 0, &p->dn_%s, p->ws, S);",
                 D);
      }
      break;
    case ST_SEGMENTS:
      buf_line(b, "{  /* over the capacity: rows past the live extent dn_%s are dropped */", D);
      b->indent += 2;
      buf_line(b, "cnp_array key = cnp_g_row(&p->f_%s, 0, p->cap_%s);", s->b.decl->name, D);
      if (op->seg_sorted) {
        buf_line(b, "/* the sort above ordered the keys: offsets without another sort */");
        buf_line(b, "st = cnp_segment_plan_build_sorted_device_count(p->plan_%s, &key, &p->dn_%s, S);",
                 s->a.decl->name, D);
      } else {
        buf_line(b, "st = cnp_segment_plan_build_device_count(p->plan_%s, &key, &p->dn_%s, S);",
                 s->a.decl->name, D);
      }
      break;
    default: {  /* ST_SUM */
      Decl *out = s->b.decl;
      buf_line(b, "{  /* values of capacity rows, as the plan's device-count build expects */");
      b->indent += 2;
      buf_line(b, "int64_t j = 0;");
      buf_line(b, "int nv = 0;");
      for (int k = 0; k < s->list.n; k++)
        buf_line(b, "nv = cnp_g_rows(p->views, nv, &p->f_%s, p->cap_%s);", s->list.v[k].decl->name, D);
      buf_line(b, "st = CNP_OK;");
      buf_line(b, "for (int k = 0; k < nv && st == CNP_OK; k++, j++) {");
      buf_line(b, "  cnp_array out = cnp_g_row(&p->f_%s, j, p->f_%s.shape[%d]);", out->name, out->name,
               out->shape.rank - 1);
      buf_line(b, "  st = cnp_segment_plan_sum(p->plan_%s, &p->views[k], &out, S);", s->a.decl->name);
      buf_line(b, "}");
      break;
    }
    }
    buf_line(b, "if (st != CNP_OK) return st;");
    b->indent -= 2;
    buf_line(b, "}");
  }
  buf_line(b, "return CNP_OK;");
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
  buf_line(b, "/* Captures step %d's work into p->gg_%d / p->gx_%d (at setup; nothing runs). */", i, i, i);
  buf_line(b, "static int %s_g%d_capture(%s_h *p, cnp_stream *S)", N, i, N);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "cudaStream_t cs = (cudaStream_t)cnp_stream_native(S);");
  buf_line(b, "cudaGraph_t g = NULL;");
  buf_line(b, "int st;");
  buf_line(b, "if (!cs || cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal) != cudaSuccess)");
  buf_line(b, "  return CNP_EBACKEND;");
  buf_line(b, "st = %s_g%d_enqueue(p, S);", N, i);
  buf_line(b, "if (cudaStreamEndCapture(cs, &g) != cudaSuccess && st == CNP_OK) st = CNP_EBACKEND;");
  buf_line(b, "if (st == CNP_OK && cudaGraphInstantiate(&p->gx_%d, g, 0ULL) != cudaSuccess) {", i);
  buf_line(b, "  p->gx_%d = NULL;", i);
  buf_line(b, "  st = CNP_EBACKEND;");
  buf_line(b, "}");
  buf_line(b, "if (st != CNP_OK) {");
  buf_line(b, "  if (g) cudaGraphDestroy(g);");
  buf_line(b, "  (void)cudaGetLastError();");
  buf_line(b, "  return st;");
  buf_line(b, "}");
  buf_line(b, "p->gg_%d = g;", i);
  buf_line(b, "return CNP_OK;");
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
  buf_line(b, "/* One timestep of step %d: extents the host changed go up, this step's arguments into", i);
  buf_line(b, "** the kernel nodes, one graph launch; no host synchronization. */");
  buf_line(b, "static int %s_g%d_replay(%s_h *p, cnp_stream *S)", N, i, N);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "cudaStream_t cs = (cudaStream_t)cnp_stream_native(S);");
  for (int k = 0; k < g.n; k++) {
    const char *d = g.d[k]->name;
    buf_line(b, "if (!p->dev_%s && p->n_%s != p->dk_%s) {  /* set on the host since the last upload */",
             d, d, d);
    buf_line(b, "  if (cudaMemcpyAsync(p->dn_%s.data, &p->n_%s, sizeof(int64_t), cudaMemcpyHostToDevice, cs) !=",
             d, d);
    buf_line(b, "      cudaSuccess)");
    buf_line(b, "    return CNP_EBACKEND;");
    buf_line(b, "  p->dk_%s = p->n_%s;", d, d);
    buf_line(b, "}");
  }
  for (int o = 0; o < end; o++)
    if (gs->ops[o].kind == GOP_MAP) {
      buf_line(b, "{");
      buf_line(b, "  int st = %s_k%d_update(p, p->gx_%d);", N, gs->ops[o].kernel, i);
      buf_line(b, "  if (st != CNP_OK) return st;");
      buf_line(b, "}");
    }
  buf_line(b, "if (cudaGraphLaunch(p->gx_%d, cs) != cudaSuccess) return CNP_EBACKEND;", i);
  for (int k = 0; k < g.n; k++)
    if (g.compacted[k]) {
      buf_line(b, "p->dev_%s = 1;  /* the live extent is now on the device only */", g.d[k]->name);
      buf_line(b, "p->ds_%s = cs;", g.d[k]->name);
    }
  buf_line(b, "p->stats.launches++;");
  buf_line(b, "p->stats.graph_replays++;");
  buf_line(b, "return CNP_OK;");
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
}

/* Struct members, functions, setup and teardown lines of the CUDA graphs. */
static void gen_graphs(GenUnit *u, Buf *fields, Buf *funcs, Buf *setup, Buf *teardown) {
  GDims g;
  const char *N = u->name;
  unit_graph_dims(u, &g);
  for (int k = 0; k < g.n; k++) {
    const char *d = g.d[k]->name;
    buf_line(fields, "  cnp_array dn_%s;  /* int64[1]: live extent of dim %s for CUDA graphs */", d, d);
    buf_line(fields, "  int64_t dk_%s;  /* the value dn_%s holds, as last uploaded */", d, d);
    buf_line(fields, "  int dev_%s;  /* 1: the live extent is only in dn_%s (a graph compacted it) */", d, d);
    buf_line(fields, "  cudaStream_t ds_%s;  /* stream of that graph */", d);
  }
  for (int i = 0; i < u->n_steps; i++) {
    GenStep *gs = &u->steps[i];
    int end;
    if (!graph_step(u, gs, &end)) continue;
    buf_line(fields, "  cudaGraph_t gg_%d;  /* step %d captured at setup (NULL: direct launches) */", i, i);
    buf_line(fields, "  cudaGraphExec_t gx_%d;", i);
    for (int o = 0; o < end; o++)
      if (gs->ops[o].kind == GOP_MAP) {
        buf_line(fields, "  cudaGraphNode_t gnode_k%d;  /* kernel %d in the graph */", gs->ops[o].kernel,
                 gs->ops[o].kernel);
        buf_line(fields, "  cudaKernelNodeParams gkp_k%d;", gs->ops[o].kernel);
      }
    graph_funcs(u, funcs, i, end);
  }
  /* Live extents back to the host (a synchronization) before the host reads them. */
  buf_line(funcs, "/* Live extents that only the device holds (after graph replays) back to the host:");
  buf_line(funcs, "** one synchronization each; counted in the last step's host_syncs when in_step. */");
  buf_line(funcs, "static int %s_pull(%s_h *p, int in_step)", N, N);
  buf_line(funcs, "{");
  for (int k = 0; k < g.n; k++) {
    const char *d = g.d[k]->name;
    if (!g.compacted[k]) continue;
    buf_line(funcs, "  if (p->dev_%s) {", d);
    buf_line(funcs, "    int64_t n = 0;");
    buf_line(funcs, "    if (cudaMemcpyAsync(&n, p->dn_%s.data, sizeof n, cudaMemcpyDeviceToHost, p->ds_%s) !=",
             d, d);
    buf_line(funcs, "            cudaSuccess ||");
    buf_line(funcs, "        cudaStreamSynchronize(p->ds_%s) != cudaSuccess)", d);
    buf_line(funcs, "      return CNP_EBACKEND;");
    buf_line(funcs, "    p->n_%s = p->dk_%s = n;", d, d);
    buf_line(funcs, "    p->dev_%s = 0;", d);
    buf_line(funcs, "    if (in_step) p->stats.host_syncs++;");
    buf_line(funcs, "    else p->stats.total_host_syncs++;");
    buf_line(funcs, "  }");
  }
  buf_line(funcs, "  (void)p;");
  buf_line(funcs, "  (void)in_step;");
  buf_line(funcs, "  return CNP_OK;");
  buf_line(funcs, "}");
  buf_puts(funcs, "\n");
  setup->indent = 2;
  bool any = false;
  for (int i = 0; i < u->n_steps; i++) {
    int end;
    if (graph_step(u, &u->steps[i], &end)) any = true;
  }
  if (g.n || any) {
    buf_line(setup, "if (B == CNP_BACKEND_CUDA) {  /* CUDA graphs: steps without host decisions */");
    for (int k = 0; k < g.n; k++) {
      const char *d = g.d[k]->name;
      buf_line(setup, "  {");
      buf_line(setup, "    const int64_t one = 1;");
      buf_line(setup, "    if ((st = cnp_array_alloc_on(&p->dn_%s, B, p->device, CNP_INT64, 1, &one, CNP_ORDER_C, 0)) != CNP_OK) {", d);
      buf_line(setup, "      where = \"%s_setup: device extent of dim %s\";", N, d);
      buf_line(setup, "      goto fail;");
      buf_line(setup, "    }");
      buf_line(setup, "    p->dk_%s = -1;  /* not uploaded yet */", d);
      buf_line(setup, "  }");
    }
    buf_puts(setup, "#ifndef CNP_DEBUG_BOUNDS  /* index checks read a flag back after each kernel */\n");
    for (int i = 0; i < u->n_steps; i++) {
      int end;
      if (!graph_step(u, &u->steps[i], &end)) continue;
      buf_line(setup, "  if (%s_g%d_capture(p, p->s_%s) != CNP_OK) {  /* else direct launches */", N, i,
               u->steps[i].decl->stream.decl->name);
      buf_line(setup, "    if (p->gx_%d) cudaGraphExecDestroy(p->gx_%d);", i, i);
      buf_line(setup, "    p->gx_%d = NULL;", i);
      buf_line(setup, "  }");
    }
    buf_puts(setup, "#endif\n");
    buf_line(setup, "}");
  }
  teardown->indent = 2;
  for (int i = 0; i < u->n_steps; i++) {
    int end;
    if (!graph_step(u, &u->steps[i], &end)) continue;
    buf_line(teardown, "if (p->gx_%d) cudaGraphExecDestroy(p->gx_%d);", i, i);
    buf_line(teardown, "if (p->gg_%d) cudaGraphDestroy(p->gg_%d);", i, i);
  }
  for (int k = 0; k < g.n; k++)
    buf_line(teardown, "if (p->dn_%s.data) cnp_array_free(&p->dn_%s);", g.d[k]->name, g.d[k]->name);
}

/* ======================================================================== the object, setup, teardown */

static void gen_struct(GenUnit *u, Buf *b) {
  b->indent = 2;
  for (Decl *d = u->cc->decls; d; d = d->next) {
    switch (d->kind) {
    case DECL_DIM:
      buf_line(b, "int64_t cap_%s, n_%s;  /* dim %s: capacity and live extent */", d->name,
               d->name, d->name);
      break;
    case DECL_PARAM:
      buf_line(b, "%s P_%s;  /* param %s%s */", gen_vtype(d->dtype), d->name, d->name,
               d->setup ? " (setup)" : " (per step)");
      break;
    case DECL_FIELD:
      buf_line(b, "cnp_array f_%s;  /* field %s : %s (%s:%d) */", d->name, d->name,
               sema_type_text(u->cc, d), base_name(d->loc.file->path), d->loc.line);
      break;
    case DECL_STREAM:
      buf_line(b, "cnp_stream *s_%s;", d->name);
      if (join_source(u, d->index))
        buf_line(b, "cnp_event *ej_%s;  /* end of the last step() call's work on %s */", d->name, d->name);
      break;
    case DECL_EVENT: buf_line(b, "cnp_event *e_%s;", d->name); break;
    case DECL_SNAPSHOT:
      buf_line(b, "cnp_snapshot *snap_%s;", d->name);
      buf_line(b, "cnp_snapshot_handle h_%s;  /* latest copy */", d->name);
      buf_line(b, "int has_%s;", d->name);
      {
        Decl *dim;
        if (gen_decl_is_dim_extent(d->target.decl, &dim))
          buf_line(b, "int64_t live_%s;  /* live extent of %s at the latest copy */", d->name, dim->name);
      }
      break;
    case DECL_PLAN: buf_line(b, "cnp_segment_plan *plan_%s;", d->name); break;
    case DECL_MIRROR:
      buf_line(b, "cnp_mirror *mir_%s;  /* field %s mirrors cfg.%s_host */", d->name,
               d->target.decl->name, d->name);
      break;
    default: break;
    }
  }
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      if (!op->fused_sort) continue;
      buf_line(b, "int fused_k%d;  /* last step: kernel %d did compact + sort itself */", op->kernel,
               op->kernel);
      buf_line(b, "int64_t *hist_k%d;  /* per-thread key counts of kernel %d */", op->kernel,
               op->kernel);
      if (op->dry)
        buf_line(b, "uint32_t *keys_k%d;  /* each row's key from the dry first pass of kernel %d */",
                 op->kernel, op->kernel);
      for (int k = 0; k < op->mask_of->list.n; k++)
        buf_line(b, "cnp_array g%d_%s;  /* double buffer of %s */", op->kernel,
                 op->mask_of->list.v[k].decl->name, op->mask_of->list.v[k].decl->name);
      buf_line(b, "int64_t *off_%s;  /* segment offsets of plan %s from kernel %d */",
               op->fused_plan->name, op->fused_plan->name, op->kernel);
      buf_line(b, "int inl_%s;  /* plan %s was built from those offsets */", op->fused_plan->name,
               op->fused_plan->name);
    }
  if (u->uses_mpi) {
    buf_line(b, "cnp_comm *comm;                /* cnp's duplicate of cfg.mpi_fcomm */");
    buf_line(b, "int rank, size;");
  }
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_MPI) {
      buf_line(b, "cnp_mpi_stage *mpi_%s;  /* mpi staging %s */", d->name, d->name);
      if (d->own_buffer)
        buf_line(b, "cnp_array hb_%s;  /* its buffer, exchanged by `exchange %s with ...` (host) */",
                 d->name, d->name);
    }
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      if (op->stmt->kind == ST_EXCHANGE)
        buf_line(b, "int xdst_%d, xsrc_%d;  /* ranks of the exchange at line %d */", op->mpi_id,
                 op->mpi_id, op->stmt->loc.line);
      if (op->stmt->kind == ST_MIGRATE)
        buf_line(b, "cnp_migrate_plan *mig_%d;  /* the migration at line %d */", op->mpi_id,
                 op->stmt->loc.line);
    }
  bool any_kernel = false;
  for (Decl *d = u->cc->decls; d; d = d->next) any_kernel = any_kernel || d->kind == DECL_KERNEL;
  if (any_kernel) buf_line(b, "cnp_catalog *cat;              /* hand-written kernels (CUDA) */");
  buf_line(b, "int nthreads;                  /* host threads of the fused kernels */");
  if (u->cc->stream_join)
    buf_line(b, "int ej_ready;                   /* the ej_ events hold the end of a previous call */");
  buf_line(b, "cnp_workspace *ws;             /* compact / sort / offsets */");
  if (ws_shared(u)) {
    buf_line(b, "cnp_event *ws_ev;              /* end of the last step that used ws */");
    buf_line(b, "int ws_used;                   /* ws_ev was recorded */");
  }
  buf_line(b, "cnp_array bad;                 /* int32[1]: index-check flag of CUDA kernels */");
  b->indent = 0;
}

/* Setup checks on the configuration, with messages naming the declaration. */
static void gen_setup_checks(GenUnit *u, Buf *b) {
  const char *seen[256];
  int n_seen = 0;
  b->indent = 2;
  for (Decl *d = u->cc->decls; d; d = d->next) {
    const char *file = base_name(d->loc.file->path);
    if (d->kind == DECL_DIM) {
      buf_line(b, "if (cfg->%s <= 0)", d->name);
      buf_line(b, "  return cnp_g_err(err, errlen, CNP_EINVAL, \"%s:%d: dim %s: capacity cfg.%s "
                  "must be > 0 (got %%lld)\",", file, d->loc.line, d->name, d->name);
      buf_line(b, "                   (long long)cfg->%s);", d->name);
    }
    if (d->kind == DECL_FIELD || d->kind == DECL_PLAN) {
      int n = d->kind == DECL_FIELD ? d->shape.rank : 1;
      for (int k = 0; k < n; k++) {
        Expr *e = d->kind == DECL_FIELD ? d->shape.ext[k] : d->value;
        if (e->kind == EX_INT) continue;
        const char *v = setup_str(u, e, "cfg->");
        if (extent_computed(e)) {
          Buf t = {0};
          setup_expr_checked(u, &t, e);
          v = arena_strndup(&u->cc->arena, buf_str(&t), t.n);
          buf_free(&t);
        }
        bool dup = false;
        for (int i = 0; i < n_seen; i++) dup = dup || strcmp(seen[i], v) == 0;
        if (dup || (e->kind == EX_NAME && e->ref.decl && e->ref.decl->kind == DECL_DIM)) continue;
        if (n_seen < 256) seen[n_seen++] = v;
        if (extent_computed(e)) {
          buf_line(b, "if (%s == INT64_MIN)", v);
          buf_line(b, "  return cnp_g_err(err, errlen, CNP_EINVAL, \"%s:%d: %s %s: %s '%s' overflows "
                      "int64\");", file, d->loc.line, decl_kind_name(d->kind), d->name,
                   d->kind == DECL_FIELD ? "extent" : "segment count", expr_src(u, e));
        }
        buf_line(b, "if (%s <= 0)", v);
        buf_line(b, "  return cnp_g_err(err, errlen, CNP_EINVAL, \"%s:%d: %s %s: %s '%s' must be "
                    "> 0 (got %%lld)\",", file, d->loc.line, decl_kind_name(d->kind), d->name,
                 d->kind == DECL_FIELD ? "extent" : "segment count", expr_src(u, e));
        buf_line(b, "                   (long long)(%s));", v);
      }
    }
  }
  b->indent = 0;
}

static void setup_try(Buf *b, Decl *d, const char *call) {
  buf_line(b, "if ((st = %s) != CNP_OK) {", call);
  buf_line(b, "  where = \"%s:%d: %s %s\";", base_name(d->loc.file->path), d->loc.line,
           decl_kind_name(d->kind), d->name);
  buf_line(b, "  goto fail;");
  buf_line(b, "}");
}

/* Communicator, staging objects, exchange partners and migration plans. */
static void gen_setup_mpi(GenUnit *u, Buf *b) {
  Arena *a = &u->cc->arena;
  buf_line(b, "if (cfg->mpi_fcomm == 0) {");
  buf_line(b, "  st = CNP_EINVAL;");
  buf_line(b, "  where = \"%s_setup: the pipeline uses MPI: set cfg.mpi_fcomm = "
              "MPI_Comm_c2f(comm)\";", u->name);
  buf_line(b, "  goto fail;");
  buf_line(b, "}");
  buf_line(b, "if ((st = cnp_comm_create(&p->comm, cfg->mpi_fcomm)) != CNP_OK) {");
  buf_line(b, "  where = \"%s_setup: communicator\";", u->name);
  buf_line(b, "  goto fail;");
  buf_line(b, "}");
  buf_line(b, "p->rank = cnp_comm_rank(p->comm);");
  buf_line(b, "p->size = cnp_comm_size(p->comm);");
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind != DECL_MPI) continue;
    Buf shp = {0};
    for (int k = 0; k < d->shape.rank; k++) {
      if (k) buf_puts(&shp, ", ");
      setup_expr(u, &shp, d->shape.ext[k], "p->");
    }
    static const char *modes[] = {"CNP_CUDA_AWARE_AUTO", "CNP_CUDA_AWARE_ON", "CNP_CUDA_AWARE_OFF"};
    buf_line(b, "{");
    b->indent += 2;
    buf_line(b, "const int64_t shape[%d] = {%s};", d->shape.rank, buf_str(&shp));
    setup_try(b, d, arena_printf(a, "cnp_mpi_stage_create(&p->mpi_%s, p->comm, %s, %d, shape, %s)",
                                 d->name, gen_cnp_dtype(d->dtype), d->shape.rank,
                                 modes[d->cuda_aware]));
    if (d->own_buffer)
      setup_try(b, d, arena_printf(a, "cnp_array_alloc_on(&p->hb_%s, CNP_BACKEND_HOST, 0, %s, %d, "
                                      "shape, CNP_ORDER_C, 0)",
                                   d->name, gen_cnp_dtype(d->dtype), d->shape.rank));
    b->indent -= 2;
    buf_line(b, "}");
    buf_free(&shp);
  }
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      Stmt *s = op->stmt;
      const char *file = base_name(s->loc.file->path);
      if (s->kind == ST_EXCHANGE) {
        Decl *h = s->a.decl;
        const char *dst = setup_str(u, s->value, "p->");
        buf_line(b, "p->xdst_%d = (int)(%s);", op->mpi_id, dst);
        if (s->value2) {
          const char *src = setup_str(u, s->value2, "p->");
          buf_line(b, "p->xsrc_%d = (int)(%s);", op->mpi_id, src);
          /* every send must meet its receive (else the exchange waits forever): the rank each
          ** rank sends to receives from it. Checked for all ranks, so all fail alike. */
          buf_line(b, "{");
          buf_line(b, "  const int me = p->rank;");
          buf_line(b, "  int bad_r = -1;");
          buf_line(b, "  int64_t bad_d = 0, bad_s = 0;");
          buf_line(b, "  for (int r = 0; r < p->size && bad_r < 0; r++) {");
          buf_line(b, "    p->rank = r;");
          buf_line(b, "    const int64_t d = (int64_t)(%s);", dst);
          buf_line(b, "    if (d < 0 || d >= p->size) continue;   /* reported below, on that rank */");
          buf_line(b, "    p->rank = (int)d;");
          buf_line(b, "    const int64_t sr = (int64_t)(%s);", src);
          buf_line(b, "    if (sr != r) {");
          buf_line(b, "      bad_r = r;");
          buf_line(b, "      bad_d = d;");
          buf_line(b, "      bad_s = sr;");
          buf_line(b, "    }");
          buf_line(b, "  }");
          buf_line(b, "  p->rank = me;");
          buf_line(b, "  if (bad_r >= 0) {");
          buf_line(b, "    st = CNP_EINVAL;");
          buf_line(b, "    snprintf(p->error, sizeof p->error, \"%s:%d: exchange %s: rank %%d sends to rank %%lld, "
                      "which receives from rank %%lld: `from` must give the rank whose destination is this "
                      "one\", bad_r, (long long)bad_d, (long long)bad_s);", file, s->loc.line, h->name);
          buf_line(b, "    where = p->error;");
          buf_line(b, "    cnp_clear_error();   /* the message is all of it */");
          buf_line(b, "    goto fail;");
          buf_line(b, "  }");
          buf_line(b, "}");
        } else {
          /* no `from`: receive from the one rank whose destination is this rank (the ring
          ** (rank + 1) % size receives from rank - 1; a pairwise swap from its partner) */
          /* ... and fail on every rank alike unless every rank has exactly one sender: each
          ** rank evaluates all destinations, so one rank failing alone (and the others
          ** waiting for it in their first exchange) cannot happen */
          buf_line(b, "{");
          buf_line(b, "  const int me = p->rank;");
          buf_line(b, "  int bad = 0;");
          buf_line(b, "  int *senders = (int *)calloc((size_t)p->size, sizeof(int));");
          buf_line(b, "  if (!senders) {");
          buf_line(b, "    st = CNP_ENOMEM;");
          buf_line(b, "    where = \"%s:%d: exchange %s\";", file, s->loc.line, h->name);
          buf_line(b, "    goto fail;");
          buf_line(b, "  }");
          buf_line(b, "  p->xsrc_%d = -1;", op->mpi_id);
          buf_line(b, "  for (int r = 0; r < p->size; r++) {  /* the destination rank r computes */");
          buf_line(b, "    p->rank = r;");
          buf_line(b, "    const int64_t d = (int64_t)(%s);", dst);
          buf_line(b, "    if (d < 0 || d >= p->size) {");
          buf_line(b, "      bad = 1;");
          buf_line(b, "      continue;");
          buf_line(b, "    }");
          buf_line(b, "    senders[d]++;");
          buf_line(b, "    if (d == me) p->xsrc_%d = r;", op->mpi_id);
          buf_line(b, "  }");
          buf_line(b, "  p->rank = me;");
          buf_line(b, "  for (int r = 0; r < p->size; r++) bad |= senders[r] != 1;");
          buf_line(b, "  free(senders);");
          buf_line(b, "  if (bad) {");
          buf_line(b, "    st = CNP_EINVAL;");
          buf_line(b, "    where = \"%s:%d: exchange %s: not exactly one rank sends to each rank (or a "
                      "destination is outside [0, size)); give the source with `from`\";",
                   file, s->loc.line, h->name);
          buf_line(b, "    goto fail;");
          buf_line(b, "  }");
          buf_line(b, "}");
        }
        buf_line(b, "if (p->xdst_%d < 0 || p->xdst_%d >= p->size || p->xsrc_%d < 0 || p->xsrc_%d >= p->size) {",
                 op->mpi_id, op->mpi_id, op->mpi_id, op->mpi_id);
        buf_line(b, "  st = CNP_ERANGE;");
        buf_line(b, "  where = \"%s:%d: exchange %s: a partner rank is outside [0, size)\";", file,
                 s->loc.line, h->name);
        buf_line(b, "  goto fail;");
        buf_line(b, "}");
        buf_line(b, "if ((st = cnp_mpi_stage_reserve(p->mpi_%s, &%s)) != CNP_OK) {", h->name,
                 exchanged(u, s));
        buf_line(b, "  where = \"%s:%d: exchange %s (%s): the field must have the staging shape\";",
                 file, s->loc.line, h->name, s->b.decl ? s->b.decl->name : h->name);
        buf_line(b, "  goto fail;");
        buf_line(b, "}");
      } else if (s->kind == ST_MIGRATE) {
        Buf fl = {0};
        for (int k = 0; k < s->list.n; k++) buf_printf(&fl, "%sp->f_%s", k ? ", " : "", s->list.v[k].decl->name);
        buf_line(b, "{");
        b->indent += 2;
        buf_line(b, "const cnp_array fields[%d] = {%s};", s->list.n, buf_str(&fl));
        buf_line(b, "if ((st = cnp_migrate_plan_create(&p->mig_%d, p->comm, fields, %d, "
                    "CNP_CUDA_AWARE_AUTO)) != CNP_OK) {", op->mpi_id, s->list.n);
        buf_line(b, "  where = \"%s:%d: migrate\";", file, s->loc.line);
        buf_line(b, "  goto fail;");
        buf_line(b, "}");
        b->indent -= 2;
        buf_line(b, "}");
        buf_free(&fl);
      }
    }
}

static void gen_setup_body(GenUnit *u, Buf *b, bool cuda) {
  Arena *a = &u->cc->arena;
  int n_streams = 0;
  b->indent = 2;
  /* dims and setup params */
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_DIM) buf_line(b, "p->cap_%s = p->n_%s = cfg->%s;", d->name, d->name, d->name);
    if (d->kind == DECL_PARAM && d->setup)
      buf_line(b, "p->P_%s = %s;", d->name,
               param_value(u, d, arena_printf(&u->cc->arena, "cfg->%s", d->name)));
  }
  /* fields; the largest element count sizes the workspace */
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind != DECL_FIELD) continue;
    Buf shp = {0};
    for (int k = 0; k < d->shape.rank; k++) {
      if (k) buf_puts(&shp, ", ");
      setup_expr(u, &shp, d->shape.ext[k], "p->");
    }
    buf_line(b, "{");
    b->indent += 2;
    buf_line(b, "const int64_t shape[%d] = {%s};", d->shape.rank, buf_str(&shp));
    Decl *m = mirror_of(u, d);
    if (m) {   /* the device copy of the user's host array cfg.<mirror>_host */
      buf_line(b, "cnp_array host;");
      buf_line(b, "if (!cfg->%s_host) {", m->name);
      buf_line(b, "  st = CNP_EINVAL;");
      buf_line(b, "  where = \"%s:%d: mirror %s: cfg.%s_host must point to the host array of field %s\";",
               base_name(m->loc.file->path), m->loc.line, m->name, m->name, d->name);
      buf_line(b, "  goto fail;");
      buf_line(b, "}");
      setup_try(b, m, arena_printf(a, "cnp_array_wrap(&host, cfg->%s_host, CNP_BACKEND_HOST, 0, %s, "
                                   "%d, shape, NULL)", m->name, gen_cnp_dtype(d->dtype), d->shape.rank));
      setup_try(b, m, arena_printf(a, "cnp_mirror_create(&p->mir_%s, &host)", m->name));
      setup_try(b, m, arena_printf(a, "cnp_mirror_device(p->mir_%s, &p->f_%s)", m->name, d->name));
    } else {
      setup_try(b, d, arena_printf(a, "cnp_array_alloc_on(&p->f_%s, B, p->device, %s, %d, shape, "
                                      "CNP_ORDER_C, 0)", d->name, gen_cnp_dtype(d->dtype),
                                      d->shape.rank));
    }
    buf_line(b, "if (shape[%d] > cap) cap = shape[%d];", d->shape.rank - 1, d->shape.rank - 1);
    buf_line(b, "n_views += cnp_g_ncomp(&p->f_%s);", d->name);
    b->indent -= 2;
    buf_line(b, "}");
    buf_free(&shp);
  }
  buf_line(b, "p->views = (cnp_array *)calloc((size_t)n_views, sizeof(cnp_array));");
  buf_line(b, "if (!p->views) {");
  buf_line(b, "  st = CNP_ENOMEM;");
  buf_line(b, "  where = \"%s_setup: views\";", u->name);
  buf_line(b, "  goto fail;");
  buf_line(b, "}");
  buf_line(b, "{");
  buf_line(b, "  const int64_t one = 1;");
  buf_line(b, "  if ((st = cnp_array_alloc_on(&p->bad, B, p->device, CNP_INT32, 1, &one, CNP_ORDER_C, "
              "0)) != CNP_OK) {");
  buf_line(b, "    where = \"%s_setup: index-check flag\";", u->name);
  buf_line(b, "    goto fail;");
  buf_line(b, "  }");
  buf_line(b, "}");
  buf_line(b, "if ((st = cnp_workspace_create(&p->ws, B, p->device, cap, 0, 16)) != CNP_OK) {");
  buf_line(b, "  where = \"%s_setup: workspace\";", u->name);
  buf_line(b, "  goto fail;");
  buf_line(b, "}");
  if (ws_shared(u)) {
    buf_line(b, "if ((st = cnp_event_create(&p->ws_ev, CNP_EVENT_DEFAULT)) != CNP_OK) {");
    buf_line(b, "  where = \"%s_setup: workspace event\";", u->name);
    buf_line(b, "  goto fail;");
    buf_line(b, "}");
  }
  for (Decl *d = u->cc->decls; d; d = d->next) {
    switch (d->kind) {
    case DECL_STREAM:
      setup_try(b, d, arena_printf(a, "(B == CNP_BACKEND_CUDA && cfg->cuda_streams[%d]) ? "
                                      "cnp_stream_wrap(&p->s_%s, cfg->cuda_streams[%d]) : "
                                      "cnp_stream_create(&p->s_%s)", n_streams, d->name,
                                      n_streams, d->name));
      n_streams++;
      if (join_source(u, d->index))
        setup_try(b, d, arena_printf(a, "cnp_event_create(&p->ej_%s, CNP_EVENT_DEFAULT)", d->name));
      break;
    case DECL_EVENT:
      setup_try(b, d, arena_printf(a, "cnp_event_create(&p->e_%s, CNP_EVENT_DEFAULT)", d->name));
      break;
    case DECL_SNAPSHOT:
      setup_try(b, d, arena_printf(a, "cnp_snapshot_create(&p->snap_%s, &p->f_%s, %d)", d->name,
                                      d->target.decl->name, d->slots));
      break;
    case DECL_PLAN:
      setup_try(b, d, arena_printf(a, "cnp_segment_plan_create(&p->plan_%s, B, p->device, "
                                      "p->f_%s.shape[%d], %s)", d->name, d->target.decl->name,
                                      d->target.decl->shape.rank - 1,
                                      setup_str(u, d->value, "p->")));
      break;
    default: break;
    }
  }
  buf_line(b, "p->nthreads = CNP_G_MAXT();");
  if (u->uses_mpi) gen_setup_mpi(u, b);
  bool first = true;
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind != DECL_KERNEL || !first_call(u, d)) continue;
    const char *file = base_name(d->loc.file->path);
    if (!d->host_path) {
      buf_line(b, "if (B == CNP_BACKEND_HOST) {");
      buf_line(b, "  st = CNP_EUNSUPPORTED;");
      buf_line(b, "  where = \"%s:%d: kernel %s has no host fallback (declare it with host \\\"file.c\\\")\";",
               file, d->loc.line, d->name);
      buf_line(b, "  goto fail;");
      buf_line(b, "}");
    }
    if (!cuda) continue;
    if (first) {
      buf_line(b, "if (B == CNP_BACKEND_CUDA && (st = cnp_catalog_create(&p->cat, NULL)) != CNP_OK) {");
      buf_line(b, "  where = \"%s_setup: kernel catalog\";", u->name);
      buf_line(b, "  goto fail;");
      buf_line(b, "}");
      first = false;
    }
    buf_line(b, "if (B == CNP_BACKEND_CUDA &&");
    buf_line(b, "    (st = cnp_catalog_add_source(p->cat, \"%s\", %s_src_%s, \"%s\", NULL, 0)) != CNP_OK) {",
             d->name, u->name, d->name, cstr(u, d->path));
    buf_line(b, "  where = \"%s:%d: kernel %s\";", file, d->loc.line, d->name);
    buf_line(b, "  goto fail;");
    buf_line(b, "}");
  }
  if (cuda && !first) {
    buf_line(b, "if (B == CNP_BACKEND_CUDA && (st = cnp_catalog_setup(p->cat)) != CNP_OK) {");
    buf_line(b, "  where = \"%s_setup: compiling the hand-written kernels (NVRTC)\";", u->name);
    buf_line(b, "  goto fail;");
    buf_line(b, "}");
  }
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      if (!op->fused_sort) continue;
      Decl *plan = op->fused_plan;
      buf_line(b, "if (B == CNP_BACKEND_HOST) {  /* kernel %d: compact + sort on the host */",
               op->kernel);
      b->indent += 2;
      const char *R = setup_str(u, plan->value, "p->");
      buf_line(b, "p->hist_k%d = (int64_t *)calloc((size_t)p->nthreads * (size_t)%s, sizeof(int64_t));",
               op->kernel, R);
      buf_line(b, "p->off_%s = (int64_t *)calloc((size_t)%s + 1, sizeof(int64_t));", plan->name, R);
      if (op->dry) {
        buf_line(b, "p->keys_k%d = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)p->cap_%s);",
                 op->kernel, op->stmt->over.decl->name);
        buf_line(b, "if (p->keys_k%d)  /* touch the pages now, not in the first step */", op->kernel);
        buf_line(b, "  memset(p->keys_k%d, 0xff, sizeof(uint32_t) * (size_t)p->cap_%s);", op->kernel,
                 op->stmt->over.decl->name);
      }
      buf_line(b, "if (!p->hist_k%d || !p->off_%s%s) {", op->kernel, plan->name,
               op->dry ? arena_printf(a, " || !p->keys_k%d", op->kernel) : "");
      buf_line(b, "  st = CNP_ENOMEM;");
      buf_line(b, "  where = \"%s_setup: counting sort of kernel %d\";", u->name, op->kernel);
      buf_line(b, "  goto fail;");
      buf_line(b, "}");
      for (int k = 0; k < op->mask_of->list.n; k++) {
        Decl *f = op->mask_of->list.v[k].decl;
        setup_try(b, f, arena_printf(a, "cnp_array_alloc_on(&p->g%d_%s, B, p->device, %s, %d, "
                                     "p->f_%s.shape, CNP_ORDER_C, 0)", op->kernel, f->name,
                                     gen_cnp_dtype(f->dtype), f->shape.rank, f->name));
        buf_line(b, "memset(p->g%d_%s.data, 0, cnp_array_nbytes(&p->g%d_%s));  /* touch the pages now, "
                    "not in the first step */", op->kernel, f->name, op->kernel, f->name);
      }
      b->indent -= 2;
      buf_line(b, "}");
    }
  b->indent = 0;
}

static void gen_teardown_body(GenUnit *u, Buf *b) {
  b->indent = 2;
  buf_line(b, "if (p->backend == CNP_BACKEND_CUDA) cnp_device_synchronize();");
  for (Decl *d = u->cc->decls; d; d = d->next) {
    switch (d->kind) {
    case DECL_SNAPSHOT: buf_line(b, "if (p->snap_%s) cnp_snapshot_destroy(p->snap_%s);", d->name, d->name); break;
    case DECL_PLAN: buf_line(b, "cnp_segment_plan_destroy(p->plan_%s);", d->name); break;
    case DECL_EVENT: buf_line(b, "if (p->e_%s) cnp_event_destroy(p->e_%s);", d->name, d->name); break;
    case DECL_STREAM:
      if (join_source(u, d->index)) buf_line(b, "if (p->ej_%s) cnp_event_destroy(p->ej_%s);", d->name, d->name);
      buf_line(b, "if (p->s_%s) cnp_stream_destroy(p->s_%s);", d->name, d->name);
      break;
    case DECL_FIELD:
      if (!mirror_of(u, d)) buf_line(b, "if (p->f_%s.data) cnp_array_free(&p->f_%s);", d->name, d->name);
      break;
    case DECL_MIRROR: buf_line(b, "if (p->mir_%s) cnp_mirror_destroy(p->mir_%s);", d->name, d->name); break;
    default: break;
    }
  }
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      if (!op->fused_sort) continue;
      buf_line(b, "free(p->hist_k%d);", op->kernel);
      if (op->dry) buf_line(b, "free(p->keys_k%d);", op->kernel);
      buf_line(b, "free(p->off_%s);", op->fused_plan->name);
      for (int k = 0; k < op->mask_of->list.n; k++)
        buf_line(b, "if (p->g%d_%s.data) cnp_array_free(&p->g%d_%s);", op->kernel,
                 op->mask_of->list.v[k].decl->name, op->kernel, op->mask_of->list.v[k].decl->name);
    }
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++)
      if (u->steps[i].ops[o].stmt->kind == ST_MIGRATE)
        buf_line(b, "if (p->mig_%d) cnp_migrate_plan_destroy(p->mig_%d);", u->steps[i].ops[o].mpi_id,
                 u->steps[i].ops[o].mpi_id);
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_MPI) {
      buf_line(b, "if (p->mpi_%s) cnp_mpi_stage_destroy(p->mpi_%s);", d->name, d->name);
      if (d->own_buffer) buf_line(b, "if (p->hb_%s.data) cnp_array_free(&p->hb_%s);", d->name, d->name);
    }
  if (u->uses_mpi) buf_line(b, "if (p->comm) cnp_comm_destroy(p->comm);");
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_KERNEL) {
      buf_line(b, "if (p->cat) cnp_catalog_destroy(p->cat);");
      break;
    }
  buf_line(b, "if (p->bad.data) cnp_array_free(&p->bad);");
  buf_line(b, "cnp_workspace_destroy(p->ws);");
  if (ws_shared(u)) buf_line(b, "if (p->ws_ev) cnp_event_destroy(p->ws_ev);");
  b->indent = 0;
}

static void gen_lookups(GenUnit *u, Buf *field, Buf *ext, Buf *set_ext, Buf *snap, Buf *sync) {
  field->indent = ext->indent = set_ext->indent = snap->indent = sync->indent = 2;
  for (Decl *d = u->cc->decls; d; d = d->next) {
    switch (d->kind) {
    case DECL_FIELD:
      buf_line(field, "if (strcmp(name, \"%s\") == 0) return cnp_g_live(&p->f_%s, %s);", d->name,
               d->name, live_extent(u, d));
      break;
    case DECL_MPI:
      if (d->own_buffer)
        buf_line(field, "if (strcmp(name, \"%s\") == 0) return p->hb_%s;", d->name, d->name);
      break;
    case DECL_DIM:
      buf_line(ext, "if (strcmp(dim, \"%s\") == 0) return p->n_%s;", d->name, d->name);
      buf_line(set_ext, "if (strcmp(dim, \"%s\") == 0) {", d->name);
      buf_line(set_ext, "  if (n < 0 || n > p->cap_%s) return CNP_ERANGE;", d->name);
      buf_line(set_ext, "  p->n_%s = n;", d->name);
      buf_line(set_ext, "  return CNP_OK;");
      buf_line(set_ext, "}");
      break;
    case DECL_SNAPSHOT: {
      Decl *dim;
      buf_line(snap, "if (strcmp(name, \"%s\") == 0) {", d->name);
      buf_line(snap, "  if (!p->has_%s) return CNP_ESTATE;", d->name);
      if (gen_decl_is_dim_extent(d->target.decl, &dim)) {
        buf_line(snap, "  int st = (int)cnp_snapshot_result(p->h_%s, view);", d->name);
        buf_line(snap, "  if (st == CNP_OK) view->shape[view->ndim - 1] = p->live_%s;  /* live rows then */",
                 d->name);
        buf_line(snap, "  return st;");
      } else {
        buf_line(snap, "  return (int)cnp_snapshot_result(p->h_%s, view);", d->name);
      }
      buf_line(snap, "}");
      break;
    }
    case DECL_STREAM:
      buf_line(sync, "{");
      buf_line(sync, "  int st = cnp_stream_synchronize(p->s_%s);", d->name);
      buf_line(sync, "  if (st != CNP_OK) return %s_failed(p, st, \"%s_sync: stream %s\");", u->name,
               u->name, d->name);
      buf_line(sync, "}");
      break;
    default: break;
    }
  }
}

static const char *banner(GenUnit *u) {
  return arena_printf(&u->cc->arena, "/* Generated by cnpc from %s. DO NOT EDIT. */", u->src_path);
}

/* Whether a per-step param keeps its own name as a C parameter of step(): not `p` or `S`
** (step() uses them), a keyword, a macro (`errno`, `NULL`, `linux`), a library name or a
** typedef (`int64_t` would hide the type from the parameters after it), a reserved or
** runtime prefix (`_x`, `cnp_`, `CNP_`) or a `_t` name. */
static bool param_name_free(const char *n) {
  size_t len = strlen(n);
  return strcmp(n, "p") && strcmp(n, "S") && cn_clash(n) == CN_FREE && n[0] != '_' &&
         strncmp(n, "cnp_", 4) && strncmp(n, "CNP_", 4) && !(len > 2 && !strcmp(n + len - 2, "_t"));
}

/* C name of a per-step param in the step() functions: its own name, or with '_' appended
** (as often as needed to differ from every other step param's name and C name) when the
** name is not free (`param p : f64;` is `p_`, and then a `param p_` is `p_` and p `p__`). */
static const char *param_cname(GenUnit *u, const Decl *d) {
  if (param_name_free(d->name)) return d->name;
  Arena *a = &u->cc->arena;
  const char *c = arena_printf(a, "%s_", d->name);
  for (;;) {
    bool taken = false;
    for (Decl *o = u->cc->decls; o && !taken; o = o->next)
      if (o != d && o->kind == DECL_PARAM && !o->setup)
        taken = !strcmp(o->name, c) || (o->index < d->index && !strcmp(param_cname(u, o), c));
    if (!taken) return c;
    c = arena_printf(a, "%s_", c);
  }
}

/* Step parameter list: "pic *p, double dt" (public) or with _h (internal). */
static const char *step_params(GenUnit *u, bool internal, bool call) {
  Buf t = {0};
  if (call) buf_printf(&t, "(%s_h *)p", u->name);
  else buf_printf(&t, "%s%s *p", u->name, internal ? "_h" : "");
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_PARAM && !d->setup) {
      if (call) buf_printf(&t, ", %s", param_cname(u, d));
      else buf_printf(&t, ", %s %s", gen_apitype(d->dtype), param_cname(u, d));
    }
  char *s = arena_strndup(&u->cc->arena, buf_str(&t), t.n);
  buf_free(&t);
  return s;
}

/* ======================================================================== f16 and complex helpers */

typedef struct TypeUse {
  bool f16, complex, complex_param;
  bool ints;              /* integer arithmetic, float -> int casts: templates/int.tmpl */
  bool philox;            /* random draws: templates/philox.tmpl */
} TypeUse;

static void type_note(TypeUse *t, DType d) {
  t->f16 = t->f16 || d == DT_F16;
  t->complex = t->complex || dtype_is_complex(d);
}

static void type_expr(TypeUse *t, Expr *e) {
  if (!e) return;
  type_note(t, e->type);
  if (e->kind == EX_CAST) type_note(t, e->cast_to);
  if ((e->kind == EX_UNARY || e->kind == EX_BINARY) && signed_int(e->type)) t->ints = true;
  if (e->kind == EX_BINARY && e->type == DT_U64 &&
      (e->op == OP_DIV || e->op == OP_MOD || e->op == OP_SHL || e->op == OP_SHR))
    t->ints = true;
  if (e->kind == EX_CAST && dtype_is_int(e->cast_to) && dtype_is_float(e->args[0]->type)) t->ints = true;
  if (e->kind == EX_CALL && builtin_is_draw(e->builtin)) t->philox = true;
  if (e->kind == EX_CALL && e->builtin == BI_ABS && signed_int(e->type)) t->ints = true;
  for (int i = 0; i < e->nargs; i++) type_expr(t, e->args[i]);
}

static void type_stmts(TypeUse *t, Stmt *s) {
  for (; s; s = s->next) {
    if (s->kind == ST_LET) type_note(t, s->let->type);
    if (s->kind == ST_ADD && s->target &&
        signed_int(s->target->kind == EX_INDEX ? s->target->ref.decl->dtype : s->target->ref.local->type))
      t->ints = true;
    type_expr(t, s->target);
    type_expr(t, s->value);
    type_expr(t, s->value2);
    type_stmts(t, s->body);
    type_stmts(t, s->else_body);
  }
}

/* Which of the prelude's f16 / complex helpers the pipeline needs (none: no change). */
static TypeUse type_use(GenUnit *u) {
  TypeUse t = {false, false, false, false, false};
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_FIELD || d->kind == DECL_PARAM || d->kind == DECL_CONST || d->kind == DECL_MPI)
      type_note(&t, d->dtype);
    if (d->kind == DECL_PARAM && dtype_is_complex(d->dtype)) t.complex_param = true;
    if (d->kind == DECL_STEP) type_stmts(&t, d->body);
  }
  return t;
}

/* The header's complex types of params (C and C++ alike; layout of C99 _Complex). */
static const char *api_types(GenUnit *u) {
  if (!type_use(u).complex_param) return "";
  return "/* Complex params: (re, im) pairs, laid out as C99 float/double _Complex and\n"
         "** std::complex<float/double>. */\n"
         "#ifndef CNP_COMPLEX_PARAM_TYPES\n"
         "#define CNP_COMPLEX_PARAM_TYPES\n"
         "typedef struct cnp_complex64 {\n"
         "  float re, im;\n"
         "} cnp_complex64;\n"
         "typedef struct cnp_complex128 {\n"
         "  double re, im;\n"
         "} cnp_complex128;\n"
         "#endif\n\n";
}

/* The unit's f16, complex and integer helpers (templates/f16.tmpl, complex.c.tmpl,
** complex.cu.tmpl, int.tmpl). */
static void type_helpers(GenUnit *u, Buf *b, bool cuda) {
  TypeUse t = type_use(u);
  if (t.f16) emit_template(b, "f16", NULL, 0);
  if (t.complex) emit_template(b, cuda ? "complex.cu" : "complex.c", NULL, 0);
  if (t.ints) emit_template(b, "int", NULL, 0);
  if (t.philox) emit_template(b, "philox", NULL, 0);
  bool computed = false;   /* templates/extent.tmpl: setup checks computed extents */
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_FIELD)
      for (int k = 0; k < d->shape.rank; k++) computed = computed || extent_computed(d->shape.ext[k]);
    if (d->kind == DECL_PLAN) computed = computed || extent_computed(d->value);
  }
  if (computed) emit_template(b, "extent", NULL, 0);
}

/* ======================================================================== entry points */

void gen_header(GenUnit *u, Buf *out) {
  Buf cfg = {0}, init = {0}, streams = {0}, doc = {0};
  int n_streams = 0;
  for (Decl *d = u->cc->decls; d; d = d->next) {
    const char *file = base_name(d->loc.file->path);
    if (d->kind == DECL_DIM) {
      buf_printf(&cfg, "  int64_t %s;  /* dim %s (%s:%d): capacity, > 0 */\n", d->name, d->name,
                 file, d->loc.line);
      buf_puts(&init, ", 0");
    } else if (d->kind == DECL_PARAM && d->setup) {
      buf_printf(&cfg, "  %s %s;  /* param %s (%s:%d), known at setup */\n", gen_apitype(d->dtype),
                 d->name, d->name, file, d->loc.line);
      buf_puts(&init, dtype_is_complex(d->dtype) ? ", {0, 0}" : ", 0");
    } else if (d->kind == DECL_PARAM) {
      buf_printf(&doc, ", %s", param_cname(u, d));
    } else if (d->kind == DECL_MIRROR) {
      buf_printf(&cfg, "  void *%s_host;  /* mirror %s (%s:%d): host array of field %s (C order) */\n",
                 d->name, d->name, file, d->loc.line, d->target.decl->name);
      buf_puts(&init, ", NULL");
    } else if (d->kind == DECL_STREAM) {
      buf_printf(&streams, "%s%s", n_streams ? ", " : "", d->name);
      n_streams++;
    }
  }
  TmplVar v[] = {
      {"banner", banner(u)},
      {"file", u->stem},
      {"name", u->name},
      {"NAME", u->upper},
      {"guard", arena_printf(&u->cc->arena, "CNP_GENERATED_%s_H", u->upper)},
      {"step_args_doc", buf_str(&doc)},
      {"stream_list", n_streams ? buf_str(&streams) : "none"},
      {"num_streams", arena_printf(&u->cc->arena, "%d", n_streams)},
      {"config_fields", buf_str(&cfg)},
      {"config_init", buf_str(&init)},
      {"step_params", step_params(u, false, false)},
      {"api_types", api_types(u)},
  };
  emit_template(out, "header.h", v, (int)(sizeof v / sizeof v[0]));
  buf_free(&cfg);
  buf_free(&init);
  buf_free(&streams);
  buf_free(&doc);
}

void gen_unit(GenUnit *u, Buf *out, bool cuda) {
  Buf fields = {0}, kernels = {0}, checks = {0}, setup = {0}, step = {0}, teardown = {0};
  Buf flook = {0}, elook = {0}, eset = {0}, slook = {0}, sync = {0}, bsel = {0}, types = {0};
  u->cuda_unit = cuda;
  type_helpers(u, &types, cuda);
  gen_struct(u, &fields);
  gen_kernel_decls(u, &kernels, cuda);
  gen_kernels(u, &kernels, cuda);
  gen_setup_checks(u, &checks);
  gen_setup_body(u, &setup, cuda);
  gen_step_body(u, &step, cuda);
  gen_teardown_body(u, &teardown);
  gen_lookups(u, &flook, &elook, &eset, &slook, &sync);
  /* a pipeline without streams or dims (only MPI staging, say) leaves these unused */
  if (!sync.n) buf_line(&sync, "(void)p;");
  if (!eset.n) buf_line(&eset, "(void)n;");
  Buf gfields = {0}, gfuncs = {0}, gsetup = {0}, gteardown = {0};
  if (cuda) gen_graphs(u, &gfields, &gfuncs, &gsetup, &gteardown);
  Buf fjoin = {0};
  gen_fail_join(u, &fjoin);
  bsel.indent = 2;
  /* the backend: cfg.backend unless CNP_BACKEND forces one; the runtime's selection decides
  ** (strictness, fallback, the env variable), so the fields, streams and events of the
  ** pipeline all live on the backend it reports */
  buf_line(&bsel, "prev = cnp_backend_current();");
  if (cuda) {
    buf_line(&bsel, "st = cnp_backend_select(cfg->backend, cfg->strict);   /* CNP_BACKEND may force it */");
    buf_line(&bsel, "if (st != CNP_OK)   /* a failed selection leaves the previous one */");
    buf_line(&bsel, "  return cnp_g_err(err, errlen, st, \"%s_setup: %%s\", cnp_last_error());", u->name);
    buf_line(&bsel, "B = cnp_backend_current();");
    buf_line(&bsel, "cnp_backend_select(prev, 0);");
  } else {
    buf_line(&bsel, "st = cnp_backend_select(cfg->backend, 1);   /* CNP_BACKEND may force it */");
    buf_line(&bsel, "if (st != CNP_OK && st != CNP_EUNAVAILABLE)   /* a bad cfg.backend or CNP_BACKEND */");
    buf_line(&bsel, "  return cnp_g_err(err, errlen, st, \"%s_setup: %%s\", cnp_last_error());", u->name);
    buf_line(&bsel, "B = st == CNP_EUNAVAILABLE ? CNP_BACKEND_CUDA : cnp_backend_current();");
    buf_line(&bsel, "cnp_backend_select(prev, 0);");
    buf_line(&bsel, "if (B == CNP_BACKEND_CUDA && cfg->strict)");
    buf_line(&bsel, "  return cnp_g_err(err, errlen, CNP_EUNAVAILABLE, \"%s_setup: CUDA backend "
                    "unavailable: this is the host unit %s.c (build %s.cu for CUDA)\");",
             u->name, u->stem, u->stem);
    buf_line(&bsel, "B = CNP_BACKEND_HOST;");
    buf_line(&bsel, "cnp_clear_error();");
  }
  TmplVar v[] = {
      {"banner", banner(u)},
      {"file", u->stem},
      {"name", u->name},
      {"type_helpers", buf_str(&types)},
      {"struct_fields", buf_str(&fields)},
      {"kernels", buf_str(&kernels)},
      {"setup_checks", buf_str(&checks)},
      {"backend_select", buf_str(&bsel)},
      {"fail_join", buf_str(&fjoin)},
      {"setup_body", buf_str(&setup)},
      {"step_params_h", step_params(u, true, false)},
      {"step_params", step_params(u, false, false)},
      {"step_call", step_params(u, false, true)},
      {"step_body", buf_str(&step)},
      {"teardown_body", buf_str(&teardown)},
      {"sync_body", buf_str(&sync)},
      {"field_lookup", buf_str(&flook)},
      {"extent_lookup", buf_str(&elook)},
      {"set_extent_body", buf_str(&eset)},
      {"snapshot_lookup", buf_str(&slook)},
      {"debug_bounds", u->opt->debug_bounds ? "#ifndef CNP_DEBUG_BOUNDS  /* cnpc --debug-bounds */\n"
                                              "#define CNP_DEBUG_BOUNDS 1\n#endif\n" : ""},
      {"graph_fields", buf_str(&gfields)},
      {"graphs", buf_str(&gfuncs)},
      {"graph_setup", buf_str(&gsetup)},
      {"graph_teardown", buf_str(&gteardown)},
  };
  int n_v = (int)(sizeof v / sizeof v[0]);
  emit_template(out, cuda ? "unit.cu" : "unit.c", v, cuda ? n_v : n_v - 4);
  Buf *gall[] = {&gfields, &gfuncs, &gsetup, &gteardown};
  for (size_t i = 0; i < sizeof gall / sizeof gall[0]; i++) buf_free(gall[i]);
  Buf *all[] = {&fields, &kernels, &checks, &setup, &step, &teardown,
                &flook,  &elook,   &eset,   &slook, &sync, &bsel, &types, &fjoin};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) buf_free(all[i]);
}
