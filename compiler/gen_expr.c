/*
** gen_expr.c -- the expression emitter every target shares: C types of dtypes, literals,
** the dry pass's row locals, the expression emitter (ex, ex_node, ex_call, ex_as, float_fn,
** ...). Map bodies and fused group bodies are gen_body.c's; gen_common.c has the other
** shared helpers.
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

/* ======================================================================== types and literals */

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

void fmt_float(Buf *b, double v, DType t) {
  if (isinf(v) && t != DT_F32 && t != DT_F16) {
    buf_puts(b, v > 0 ? "HUGE_VAL" : "(-HUGE_VAL)");
    return;
  }
  if (isnan(v)) {
    buf_puts(b, "NAN");
    return;
  }
  if ((t == DT_F32 || t == DT_F16) && isinf((float)v)) {   /* 1e300 as f32: +-inf (rounded to
    ** nearest, docs/language.md), not `1e300f` (gcc -Woverflow); an f32 or f16 infinity (1e30
    ** as f16) a float, not HUGE_VAL, which would make `fabsf(inf + h)` a double (found,
    ** f16_inf_literal) */
    buf_puts(b, v > 0 ? "((float)HUGE_VAL)" : "(-(float)HUGE_VAL)");
    return;
  }
  if ((t == DT_F32 || t == DT_F16) && v != 0 && (float)v == 0) {   /* 1e-300 as f32: +-0 */
    buf_puts(b, v > 0 ? "0.0f" : "-0.0f");
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

void fmt_int(Buf *b, int64_t v, DType t) {
  if (t == DT_U64) buf_printf(b, "UINT64_C(%" PRIu64 ")", (uint64_t)v);
  else if (v >= INT32_MIN + 1 && v <= INT32_MAX) buf_printf(b, "%" PRId64, v);
  else if (v == INT64_MIN) buf_puts(b, "INT64_MIN");
  else buf_printf(b, "INT64_C(%" PRId64 ")", v);
}

/* ======================================================================== kernel contexts */

/* Name of the local that holds element `comp` of f for the row (the dry pass). */
const char *row_name(GenUnit *u, Decl *f, int64_t comp) {
  if (f->shape.rank == 1) return arena_printf(&u->cc->arena, "r_%s", f->name);
  return arena_printf(&u->cc->arena, "r_%s_%" PRId64, f->name, comp);
}

/* The local holding the field element e (EX_INDEX) in the dry pass, or NULL. */
const char *gen_row_local(KCtx *k, Expr *e) {
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
void gen_lin_index(KCtx *k, Buf *b, Expr *e) {
  Decl *f = e->ref.decl;
  if (f->grid_of && k->map && k->map->gndim && f->grid_of == k->map->over.decl) {
    grid_lin_index(k, b, e);   /* a grid map's point and its stencil (gen_grid.c) */
    return;
  }
  Buf acc = {0};
  for (int i = 0; i < e->nargs; i++) {
    Buf t = {0};
    Expr *a = e->args[i];
    int ghost = f->grid_of && i >= f->grid_ncomp ? f->grid_of->grid->axis[i - f->grid_ncomp].ghost : 0;
    if (ghost) {   /* a grid field's ghost axis: interior index j is stored at j + W */
      buf_puts(&t, "CNP_G_IDX(");
      ex(k, &t, a);
      buf_printf(&t, " + %d, A.f_%s_e%d, bad)", ghost, f->name, i);
    } else if ((is_map_index(a) && !(k->map && k->map->gndim)) || (a->flags & EXF_CONST)) {
      ex(k, &t, a);   /* (a field indexed by a grid map's indices, not of its grid: checked) */
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

/* (min and max of floats: templates/int.tmpl's cnp_g_fmin/fmax, which fix the sign of a
** zero tie that C's fmin/fmax leave open: found/fmax_signed_zero) */
static const char *float_fn(Builtin bi, DType t) {
  static const char *names[BI__COUNT] = {
      [BI_SQRT] = "sqrt", [BI_EXP] = "exp",     [BI_LOG] = "log",   [BI_SIN] = "sin",
      [BI_COS] = "cos",   [BI_FLOOR] = "floor", [BI_CEIL] = "ceil", [BI_FMOD] = "fmod",
      [BI_POW] = "pow",   [BI_MIN] = "cnp_g_fmin64", [BI_MAX] = "cnp_g_fmax64", [BI_ABS] = "fabs",
      [BI_ATAN2] = "atan2", [BI_TANH] = "tanh", [BI_SINH] = "sinh", [BI_COSH] = "cosh",
      [BI_ERF] = "erf",   [BI_ROUND] = "round", [BI_TRUNC] = "trunc",
  };
  static const char *namesf[BI__COUNT] = {
      [BI_SQRT] = "sqrtf", [BI_EXP] = "expf",     [BI_LOG] = "logf",   [BI_SIN] = "sinf",
      [BI_COS] = "cosf",   [BI_FLOOR] = "floorf", [BI_CEIL] = "ceilf", [BI_FMOD] = "fmodf",
      [BI_POW] = "powf",   [BI_MIN] = "cnp_g_fmin32", [BI_MAX] = "cnp_g_fmax32", [BI_ABS] = "fabsf",
      [BI_ATAN2] = "atan2f", [BI_TANH] = "tanhf", [BI_SINH] = "sinhf", [BI_COSH] = "coshf",
      [BI_ERF] = "erff",   [BI_ROUND] = "roundf", [BI_TRUNC] = "truncf",
  };
  return t == DT_F32 || t == DT_F16 ? namesf[bi] : names[bi];
}

/* Complex math: C99 <complex.h> in the host unit, the prelude's overloads in the CUDA unit
** (templates/complex.cu.tmpl). `t` is the complex operand type. */
static const char *complex_fn(KCtx *k, Builtin bi, DType t) {
  GenUnit *u = k->u;
  static const char *names[BI__COUNT] = {
      [BI_SQRT] = "csqrt", [BI_EXP] = "cexp", [BI_LOG] = "clog", [BI_SIN] = "csin",
      [BI_COS] = "ccos",   [BI_POW] = "cpow", [BI_ABS] = "cabs",  [BI_REAL] = "creal",
      [BI_IMAG] = "cimag", [BI_CONJ] = "conj", [BI_ARG] = "carg",
  };
  const char *n = names[bi];
  if (!n) cnp_ice("'%s' of a complex value", builtin_name(bi));
  if (k->t->complex_prefix) return arena_printf(&u->cc->arena, "%s%s", k->t->complex_prefix, n);
  return t == DT_C64 ? arena_printf(&u->cc->arena, "%sf", n) : n;
}

/* Made of constants and literals only, through any operation or call but the draws and
** step_index() (which sema does not flag constant: EXF_CONST is set on leaves and operators). */
static bool const_tree(const Expr *e) {
  if (e->flags & EXF_CONST) return true;
  if (e->kind == EX_CALL && (builtin_reads_step(e->builtin) || e->builtin == BI_NONE)) return false;
  if (e->kind != EX_CALL && e->kind != EX_UNARY && e->kind != EX_BINARY && e->kind != EX_CAST) return false;
  for (int i = 0; i < e->nargs; i++)
    if (!const_tree(e->args[i])) return false;
  return true;
}

/* Types whose operands the generator converts explicitly (f16: rounding of what is not f16
** yet; complex: the CUDA structs have no mixed-type operators). */
bool gen_converted_type(DType t) { return t == DT_F16 || dtype_is_complex(t); }

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
bool gen_is_f16_variable(const Expr *e) {
  return e->type == DT_F16 && (e->kind == EX_INDEX || e->kind == EX_NAME);
}

/* complex(re, im) as a value of complex type `to`: both parts converted to its real type. */
static void ex_complex(KCtx *k, Buf *b, Expr *e, DType to) {
  DType r = to == DT_C64 ? DT_F32 : DT_F64;
  buf_puts(b, to == DT_C64 ? "cnp_g_mk64(" : "cnp_g_mk128(");
  gen_ex_as(k, b, e->args[0], r);
  buf_puts(b, ", ");
  gen_ex_as(k, b, e->args[1], r);
  buf_puts(b, ")");
}

/* e as a value of type `to`. To f16: rounded to the nearest f16 unless it is f16 already
** (literals folded at compile time); to complex: the unit's conversion macro; else a cast. */
void gen_ex_as(KCtx *k, Buf *b, Expr *e, DType to) {
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
void gen_ex_f16(KCtx *k, Buf *b, Expr *e) {
  if (e->type == DT_F16 && !gen_is_f16_variable(e)) {
    buf_puts(b, "cnp_g_hround(");
    ex(k, b, e);
    buf_puts(b, ")");
  } else {
    gen_ex_as(k, b, e, DT_F16);
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

/* select(c, a, b): a C conditional; an integer arm of a float select converted explicitly. */
static void ex_select(KCtx *k, Buf *b, Expr *e) {
  bool conv = gen_converted_type(e->type);
  buf_puts(b, "(");
  ex(k, b, e->args[0]);
  buf_puts(b, " ? ");
  /* an integer arm of a float select is converted explicitly: a constant one is clang
  ** -Wimplicit-const-int-float-conversion where it is not exact (found, int_const_float_select) */
  bool cast = conv || e->type == DT_U64;
  bool flt = e->type == DT_F32 || e->type == DT_F64;
  if (cast || (flt && dtype_is_int(e->args[1]->type))) gen_ex_as(k, b, e->args[1], e->type);
  else ex(k, b, e->args[1]);
  buf_puts(b, " : ");
  if (cast || (flt && dtype_is_int(e->args[2]->type))) gen_ex_as(k, b, e->args[2], e->type);
  else ex(k, b, e->args[2]);
  buf_puts(b, ")");
}

/* A Philox draw (templates/philox.tmpl), keyed by its seed, the step counter, the row and
** its draw number. */
static void ex_draw(KCtx *k, Buf *b, Expr *e) {
  Builtin bi = e->builtin;
  static const char *fn[] = {"uniform_f64", "normal_f64", "uniform_f32", "normal_f32"};
  k->lit = DT_VOID;                         /* an integer seed literal stays an integer */
  for (int i = 0; k->dbuf && i < k->dbuf->n; i++)
    if (k->dbuf->e[i] == e) {               /* filled for the chunk (gen_host.c) */
      buf_printf(b, "cnp_d%d[cnp_i - cnp_i0]", i);
      return;
    }
  buf_printf(b, "cnp_g_%s(", fn[bi - BI_UNIFORM]);
  gen_ex_as(k, b, e->args[0], DT_U64);
  /* the row: the map index (in an append, the global row l_I = first + cnp_i, not k) */
  if (k->map && k->map->kind == ST_APPEND) buf_printf(b, ", cnp_step, l_%s", k->map->index->name);
  else if (k->map && k->map->gndim && k->map->over.decl->grid->split)
    buf_puts(b, ", cnp_step, cnp_pt");   /* a split grid: the global point number (gen_grid.c) */
  else buf_puts(b, ", cnp_step, cnp_i");
  buf_printf(b, ", %" PRId64 "u)", e->ival);
}

/* A float-to-integer cast, or an index clamp of one (below). */
static bool clamp_of_cast(const Expr *e) {
  if (e->kind == EX_CAST) return dtype_is_float(e->args[0]->type);
  if (e->kind != EX_CALL || (e->builtin != BI_MIN && e->builtin != BI_MAX)) return false;
  return (clamp_of_cast(e->args[0]) && kernel_invariant(NULL, e->args[1])) ||
         (clamp_of_cast(e->args[1]) && kernel_invariant(NULL, e->args[0]));
}

/* An integer min/max to write as a branch (int.tmpl, cnp_g_min_br_i64): in a host kernel
** that scatter-adds into privatized copies (its body does not vectorize: nothing to lose),
** a clamp of a float-to-integer cast by a bound the same for every row, which the rows
** rarely reach (a cell index: min(i64(x * scale), n - 1)). es1d's push: about 3%. Not where
** the scatter-adds are buffered (gen_red.c, sa_buffered): there the body vectorizes. */
static bool clamp_branch(KCtx *k, const Expr *e) {
  return k->run == &gen_target_host && k->priv && k->priv->n_privs > 0 && !k->sab && clamp_of_cast(e);
}

/* isnan/isfinite, and real/conj/imag/arg of a value that is not complex: true if written. */
static bool ex_real_special(KCtx *k, Buf *b, Expr *e) {
  Builtin bi = e->builtin;
  if (bi == BI_ISNAN || bi == BI_ISFINITE) {  /* of an integer: constant (as numpy) */
    if (!dtype_is_float(e->args[0]->type)) {
      buf_puts(b, "((void)(");
      ex(k, b, e->args[0]);
      buf_printf(b, "), %d)", bi == BI_ISFINITE);
      return true;
    }
    buf_printf(b, "(%s(", bi == BI_ISNAN ? "isnan" : "isfinite");
    ex(k, b, e->args[0]);
    buf_puts(b, ") != 0)");
    return true;
  }
  if ((bi == BI_REAL || bi == BI_CONJ) && !dtype_is_complex(e->args[0]->type)) {
    buf_puts(b, "(");                         /* of a real value: the value itself */
    ex(k, b, e->args[0]);
    buf_puts(b, ")");
    return true;
  }
  if (bi == BI_IMAG && !dtype_is_complex(e->args[0]->type)) {
    buf_puts(b, "((void)(");                  /* of a real value: zero of its type */
    ex(k, b, e->args[0]);
    buf_printf(b, "), (%s)0)", gen_vtype(e->type));
    return true;
  }
  if (bi == BI_ARG && !dtype_is_complex(e->args[0]->type)) {
    DType r = e->type == DT_F64 ? DT_F64 : DT_F32;   /* of a real value: 0 or pi */
    buf_puts(b, r == DT_F64 ? "atan2(0.0, " : "atan2f(0.0f, ");
    gen_ex_as(k, b, e->args[0], r);
    buf_puts(b, ")");
    return true;
  }
  return false;
}

static void ex_call(KCtx *k, Buf *b, Expr *e) {
  Builtin bi = e->builtin;
  if (bi == BI_SELECT) {
    ex_select(k, b, e);
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
  if (builtin_is_draw(bi)) {
    ex_draw(k, b, e);
    return;
  }
  if (ex_real_special(k, b, e)) return;
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
    buf_printf(b, "%s(", complex_fn(k, bi, t));
  } else if (e->type == DT_U64 && (bi == BI_MIN || bi == BI_MAX)) {
    buf_puts(b, bi == BI_MIN ? "cnp_g_umin(" : "cnp_g_umax(");
  } else if (bi == BI_ABS && (e->type == DT_I32 || e->type == DT_I64)) {
    buf_puts(b, e->type == DT_I32 ? "cnp_g_abs_i32(" : "cnp_g_abs_i64(");   /* |INT_MIN| wraps (int.tmpl) */
  } else if ((bi == BI_MIN || bi == BI_MAX) && (e->type == DT_I32 || e->type == DT_I64)) {
    /* functions, not CNP_G_MIN: max(C, k) with C at a type's limit is gcc -Wtype-limits */
    buf_printf(b, "cnp_g_%s%s_i%s(", bi == BI_MIN ? "min" : "max", clamp_branch(k, e) ? "_br" : "",
               e->type == DT_I32 ? "32" : "64");
  } else if (!flt && (bi == BI_MIN || bi == BI_MAX || bi == BI_ABS)) {
    buf_puts(b, bi == BI_MIN ? "CNP_G_MIN(" : bi == BI_MAX ? "CNP_G_MAX(" : "CNP_G_ABS(");
  } else {
    buf_printf(b, "%s(", float_fn(bi, e->type));
  }
  bool all_const = true;   /* every argument constant: the call itself may be folded */
  for (int i = 0; i < e->nargs; i++) all_const = all_const && const_tree(e->args[i]);
  for (int i = 0; i < e->nargs; i++) {
    if (i) buf_puts(b, ", ");
    /* float functions get float arguments (CUDA has no device overloads for integers:
    ** sqrt(k), fmin(k, x)); u64 min/max get u64 ones */
    Expr *x = e->args[i];
    /* On the host, every argument of an inexact library function is opaque to the
    ** optimizer, so the call gets the C library's result that docs/language.md names. gcc
    ** folds tanh(constant) correctly rounded (MPFR, MPC), even at -O0, where the C
    ** library may differ by an ulp; and at -O2 an argument that is constant only on some
    ** paths is enough: the phi of `x = 1.0` on one branch, of a comparison's two values,
    ** or of `x == 1.0` in the enclosing condition (found: complex_const_fold,
    ** tanh_const_fold, tanh_range_fold). Exact functions (sqrt floor ceil round trunc fmod
    ** abs min max conj real imag) fold to the same bits and stay plain. On the device only
    ** arguments constant in the source are (nvcc folds those, not phis). */
    bool host = !k->run->device;
    bool opaque = dtype_is_complex(t) && !k->t->complex_prefix && bi != BI_CONJ && bi != BI_REAL &&
                  bi != BI_IMAG && (host || const_tree(x));
    bool ropaque = !dtype_is_complex(t) && flt && (host || all_const) && bi != BI_SQRT &&
                   bi != BI_FLOOR && bi != BI_CEIL && bi != BI_ROUND && bi != BI_TRUNC &&
                   bi != BI_FMOD && bi != BI_ABS && bi != BI_MIN && bi != BI_MAX;
    if (opaque) buf_printf(b, "cnp_g_opaque%s(", t == DT_C64 ? "64" : "128");
    if (ropaque) buf_printf(b, "cnp_g_opaque_f%s(", t == DT_F64 ? "64" : "32");
    if (gen_converted_type(t) || (flt && x->type != t) || (e->type == DT_U64 && x->type != DT_U64))
      gen_ex_as(k, b, x, t);
    else
      ex(k, b, x);
    if (opaque || ropaque) buf_puts(b, ")");
  }
  buf_puts(b, ")");
}

static void ex_node(KCtx *k, Buf *b, Expr *e);

/* The discard of a value written in place of a constant comparison: `(void)&l_x` when the
** text is a variable's name, since nvcc still calls a variable only cast to void "set but
** never used" (#550-D; found, nvcc_self_compare_let); `(void)` else. */
static const char *void_of(const char *text) {
  bool name = isalpha((unsigned char)text[0]) || text[0] == '_';
  for (const char *p = text; *p && name; p++) name = isalnum((unsigned char)*p) || *p == '_';
  return name ? "(void)&" : "(void)";
}

/* Signed integer arithmetic goes through the wrapping helpers of templates/int.tmpl (u64
** wraps in C already). */
bool signed_int(DType t) { return t == DT_I32 || t == DT_I64; }
const char *gen_signed_int_bits(DType t) { return t == DT_I32 ? "32" : "64"; }
const char *int_op_name(int op) {
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
  if (k->unsw && e == k->unsw) {   /* this copy of an unswitched loop (gen_red.c) */
    buf_puts(b, k->unsw_val ? "1" : "0");
    return;
  }
  DType saved = k->lit;
  DType c = literal_ctx(e);
  if (e->kind == EX_CAST || e->kind == EX_INDEX) k->lit = DT_VOID;
  else if (c != DT_VOID) k->lit = dtype_is_float(c) ? c : DT_VOID;
  ex_node(k, b, e);
  k->lit = saved;
}

/* A name: a let or the map index (l_), a constant (its value), a param (P_), a dim
** (n_: its live extent), a scalar (f_S[0]). */
static void ex_name(Buf *b, Expr *e) {
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
  } else if (d->kind == DECL_FIELD && d->scalar) {
    buf_printf(b, "f_%s[0]", d->name);
  } else {
    cnp_ice("name '%s' (%s) in an expression", d->name, decl_kind_name(d->kind));
  }
}

/* A field element: the row local of a fused group, or f_F[linear index] (f16 widened). */
static void ex_index(KCtx *k, Buf *b, Expr *e) {
  const char *r = gen_row_local(k, e);
  if (e->ref.decl->dtype == DT_F16) buf_puts(b, "cnp_g_h2f(");
  if (r) {
    buf_puts(b, r);
  } else {
    buf_printf(b, "f_%s[", e->ref.decl->name);
    gen_lin_index(k, b, e);
    buf_puts(b, "]");
  }
  buf_puts(b, e->ref.decl->dtype == DT_F16 ? ")" : "");
}

/* A binary operation: integer operations through the templates/int.tmpl helpers, float
** %, constant self-comparisons and u64 comparisons with 0 written as constants, f16 and
** complex operands converted to the operation's type. */
/* An integer constant operand of an f32/f64 operation: its value converted (once, to
** nearest) to t, written as a float literal (an integer one that is not exact in t is
** clang -Wimplicit-const-int-float-conversion). */
static bool int_const_as(const Expr *x, DType t, double *out) {
  if (!(x->flags & EXF_CONST) || !dtype_is_int(x->type)) return false;
  uint64_t u;
  if (x->kind == EX_INT) u = x->uval;
  else if (x->kind == EX_UNARY && x->op == OP_NEG && x->args[0]->kind == EX_INT) u = 0 - x->args[0]->uval;
  else if (x->kind == EX_NAME && x->ref.decl && x->ref.decl->kind == DECL_CONST) u = (uint64_t)x->ref.decl->ival;
  else return false;
  if (x->type == DT_U64) *out = t == DT_F32 ? (double)(float)u : (double)u;
  else *out = t == DT_F32 ? (double)(float)(int64_t)u : (double)(int64_t)u;
  return true;
}

/* An integer comparison of a constant with a value whose range the constant reaches or
** passes (i32's limits, or the value is a cast of a narrower type): the constant operand's
** index (0 or 1), which is written cnp_g_i64(C) (templates/int.tmpl), so that gcc sees no
** comparison with a constant at a type's limit (-Wtype-limits); else -1. */
/* A constant, or min/max/abs of constants (sema does not flag those calls constant, and
** max(C, C) is written as C: found, minmax_const_compare). */
static bool const_like(const Expr *e) {
  if (e->flags & EXF_CONST) return true;
  /* select(q, C, C'): gcc folds a constant condition, or equal arms, to one constant (found,
  ** select_intmin_compare) */
  if (e->kind == EX_CALL && e->builtin == BI_SELECT) return const_like(e->args[1]) && const_like(e->args[2]);
  if (e->kind != EX_CALL || (e->builtin != BI_MIN && e->builtin != BI_MAX && e->builtin != BI_ABS)) return false;
  for (int i = 0; i < e->nargs; i++)
    if (!const_like(e->args[i])) return false;
  return true;
}

/* A u64 comparison of a constant expression (not a 0 literal, which the caller writes as
** always true or false) with a value: the constant's index, written cnp_g_u64(C), so that
** gcc sees neither a constant at the type's limit nor one that folds to 0 (`x >= C - C`:
** -Wtype-limits; found, u64_const_compare); 2: both sides are constant expressions, both
** hidden (`u64(C_S + C_S) >= u64(C_U) * (C_U - C_U)`; found, u64_const_both); else -1. */
/* An integer & or | (with a constant operand gcc sees through, it can tell that `(C | x) != 0`
** or `(x & 8) == 4` is always true or false: -Wtautological-compare, "bitwise comparison
** always evaluates to ..."; found, bool_or_const): compared for equality with a constant,
** that constant is hidden. */
static bool bit_op(const Expr *e) {
  return e->kind == EX_BINARY && (e->op == OP_BAND || e->op == OP_BOR) && dtype_is_int(e->type);
}

static int hidden_bitop_cmp(const Expr *e, bool (*cst)(const Expr *)) {
  if (e->op != OP_EQ && e->op != OP_NE) return -1;
  for (int i = 0; i < 2; i++)
    if (bit_op(e->args[1 - i]) && cst(e->args[i])) return i;
  return -1;
}

/* bool(x) of an integer & or |: written x != cnp_g_u64(0) (cnp_g_i64(0)), for the same reason */
bool gen_hidden_bool(const Expr *e) {
  return e->kind == EX_CAST && e->cast_to == DT_BOOL && bit_op(e->args[0]);
}

int gen_hidden_u64(const Expr *e) {
  if (e->kind != EX_BINARY || e->op < OP_EQ || e->op > OP_GE || operand_type(e) != DT_U64) return -1;
  int hb = hidden_bitop_cmp(e, const_tree);
  if (hb >= 0) return const_tree(e->args[1 - hb]) ? 2 : hb;
  for (int i = 0; i < 2; i++)
    if (const_tree(e->args[i]) && !const_tree(e->args[1 - i]) && !is_zero_literal(e->args[i])) return i;
  if (const_tree(e->args[0]) && const_tree(e->args[1]) && !is_zero_literal(e->args[0]) && !is_zero_literal(e->args[1]))
    return 2;
  return -1;
}

/* A literal, a negated literal or a const's name: written as a C constant. */
static bool plain_const(const Expr *e) {
  return e->kind == EX_INT || (e->kind == EX_UNARY && e->op == OP_NEG && e->args[0]->kind == EX_INT) ||
         (e->kind == EX_NAME && e->ref.decl && e->ref.decl->kind == DECL_CONST);
}

int gen_hidden_const(const Expr *e) {
  if (e->kind != EX_BINARY || e->op < OP_EQ || e->op > OP_GE) return -1;
  DType ot = operand_type(e);
  if (!dtype_is_int(ot) || ot == DT_U64) return -1;
  int c = hidden_bitop_cmp(e, const_like);
  if (c >= 0) return c;
  for (int i = 0; i < 2; i++)
    if (const_like(e->args[i]) && !const_like(e->args[1 - i])) c = i;
  /* both constant, one through a call sema does not fold (min(C, -1) >= C): hide the other */
  if (c < 0 && const_like(e->args[0]) && const_like(e->args[1]) &&
      !(e->args[0]->flags & e->args[1]->flags & EXF_CONST))
    c = (e->args[1]->flags & EXF_CONST) ? 1 : 0;
  /* both constant, one written as a call (`C_N <= C_N - C_N`: cnp_g_sub_i32(...), a value of
  ** the type to gcc): the plain constant, which the limit check below looks at (found,
  ** intmin_const_compare) */
  if (c < 0 && const_like(e->args[0]) && const_like(e->args[1]))
    c = plain_const(e->args[0]) ? 0 : 1;
  if (c < 0) return -1;
  const Expr *ce = e->args[c], *o = e->args[1 - c];
  int64_t v = 0;
  bool known = true;
  if (ce->kind == EX_INT) v = ce->ival;
  else if (ce->kind == EX_UNARY && ce->op == OP_NEG && ce->args[0]->kind == EX_INT)
    v = (int64_t)(0 - (uint64_t)ce->args[0]->ival);
  else if (ce->kind == EX_NAME && ce->ref.decl && ce->ref.decl->kind == DECL_CONST) v = ce->ref.decl->ival;
  else known = false;
  return !known || o->kind == EX_CAST || v <= INT32_MIN || v >= INT32_MAX ? c : -1;
}

/* a and b written alike, up to the order of the operands of commutative integer operators:
** gcc's -Wtautological-compare takes `x * y < y * x` for a self-comparison (found,
** commuted_self_compare). */
/* s without the pairs of parentheses around all of it: its length, from *s advanced */
static size_t unparen(const char **s) {
  size_t n = strlen(*s);
  while (n >= 2 && (*s)[0] == '(' && (*s)[n - 1] == ')') {
    int depth = 0;
    size_t i = 0;
    for (; i + 1 < n; i++) {
      depth += (*s)[i] == '(' ? 1 : (*s)[i] == ')' ? -1 : 0;
      if (depth == 0) break;                      /* (a) < (b): not one pair */
    }
    if (i + 1 < n) break;
    (*s)++, n -= 2;
  }
  return n;
}

static bool same_text_comm(KCtx *k, Expr *a, Expr *b) {
  Buf l = {0}, r = {0};
  ex(k, &l, a);
  ex(k, &r, b);
  const char *x = buf_str(&l), *y = buf_str(&r);   /* `x >= (x)` (abs of a u64) is one too */
  size_t nx = unparen(&x), ny = unparen(&y);
  bool same = nx == ny && !strncmp(x, y, nx);
  buf_free(&l);
  buf_free(&r);
  if (same) return true;
  Op op = a->op;
  if (a->kind != EX_BINARY || b->kind != EX_BINARY || b->op != op || a->type != b->type ||
      !dtype_is_int(a->type) || !(op == OP_ADD || op == OP_MUL || op == OP_BAND || op == OP_BOR || op == OP_BXOR))
    return false;
  return (same_text_comm(k, a->args[0], b->args[0]) && same_text_comm(k, a->args[1], b->args[1])) ||
         (same_text_comm(k, a->args[0], b->args[1]) && same_text_comm(k, a->args[1], b->args[0]));
}

static void ex_binary(KCtx *k, Buf *b, Expr *e) {
  bool shift = e->op == OP_SHL || e->op == OP_SHR;
  if (e->type == DT_U64 && (e->op == OP_DIV || e->op == OP_MOD || shift)) {
    /* u64 / % (0 for a zero divisor) and shifts: templates/int.tmpl */
    buf_printf(b, "cnp_g_%s_u64(", int_op_name(e->op));
    gen_ex_as(k, b, e->args[0], DT_U64);
    buf_puts(b, ", ");
    gen_ex_as(k, b, e->args[1], DT_U64);
    buf_puts(b, ")");
    return;
  }
  if (((e->op >= OP_ADD && e->op <= OP_MOD) || shift) && signed_int(e->type)) {
    /* i32/i64 + - * / %: defined results (templates/int.tmpl, docs/codegen.md) */
    /* an untyped constant operand may be i64 in an i32 operation: narrowed on purpose */
    buf_printf(b, "cnp_g_%s_i%s(", int_op_name(e->op), gen_signed_int_bits(e->type));
    for (int i = 0; i < 2; i++) {
      if (i) buf_puts(b, ", ");
      double lv;
      if (e->args[i]->type == DT_I64 && e->type == DT_I32 && !literal_value(e->args[i], &lv))
        gen_ex_as(k, b, e->args[i], DT_I32);
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
    Buf l = {0};
    ex(k, &l, e->args[0]);
    bool same = same_text_comm(k, e->args[0], e->args[1]);
    if (same) buf_printf(b, "(%s%s, %d)", void_of(buf_str(&l)), buf_str(&l), e->op == OP_EQ || e->op == OP_LE || e->op == OP_GE);
    buf_free(&l);
    if (same) return;
  }
  if (e->op != OP_AND && e->op != OP_OR && operand_type(e) == DT_U64) {
    /* u >= 0 is always true and u < 0 always false: say so without the comparison */
    Expr *a = e->args[0], *c = e->args[1];
    int always = -1;
    if (is_zero_literal(c) && (e->op == OP_GE || e->op == OP_LT)) always = e->op == OP_GE;
    if (is_zero_literal(a) && (e->op == OP_LE || e->op == OP_GT)) always = e->op == OP_LE;
    if (always >= 0) {
      Buf x = {0};
      ex(k, &x, is_zero_literal(c) ? a : c);
      buf_printf(b, "(%s%s, %d)", void_of(buf_str(&x)), buf_str(&x), always);
      buf_free(&x);
      return;
    }
    int h = gen_hidden_u64(e);
    bool h0 = h == 0 || h == 2, h1 = h == 1 || h == 2;
    buf_puts(b, h0 ? "(cnp_g_u64(" : "(");
    gen_ex_as(k, b, a, DT_U64);
    buf_printf(b, "%s %s %s", h0 ? ")" : "", op_text(e->op), h1 ? "cnp_g_u64(" : "");
    gen_ex_as(k, b, c, DT_U64);
    buf_puts(b, h1 ? "))" : ")");
    return;
  }
  int c = gen_hidden_const(e);
  if (c >= 0) {                                   /* C hidden from -Wtype-limits */
    buf_puts(b, "(");
    for (int i = 0; i < 2; i++) {
      if (i) buf_printf(b, " %s ", op_text(e->op));
      if (i == c) buf_puts(b, "cnp_g_i64(");
      ex(k, b, e->args[i]);
      if (i == c) buf_puts(b, ")");
    }
    buf_puts(b, ")");
    return;
  }
  /* complex * real, real * complex and complex / real: component-wise (C99 Annex G's rule,
  ** exact and cheaper than a complex operation on (r, 0)): templates/complex.*.tmpl */
  if (dtype_is_complex(e->type) && (e->op == OP_MUL || e->op == OP_DIV)) {
    int ri = !dtype_is_complex(e->args[1]->type)                      ? 1
             : e->op == OP_MUL && !dtype_is_complex(e->args[0]->type) ? 0
                                                                      : -1;
    if (ri >= 0) {
      buf_printf(b, "cnp_g_c%sr%s(", e->op == OP_MUL ? "mul" : "div", e->type == DT_C64 ? "64" : "128");
      gen_ex_as(k, b, e->args[1 - ri], e->type);
      buf_puts(b, ", ");
      gen_ex_as(k, b, e->args[ri], e->type == DT_C64 ? DT_F32 : DT_F64);
      buf_puts(b, ")");
      return;
    }
  }
  /* f16 and complex operations convert both operands to the operation's type */
  DType t = DT_VOID;
  if (e->op >= OP_ADD && e->op <= OP_MOD) t = e->type;
  else if (e->op >= OP_EQ && e->op <= OP_GE && e->args[0]->type != DT_BOOL)
    t = sema_promote(e->args[0], e->args[1]);
  bool conv = gen_converted_type(t);
  buf_puts(b, "(");
  for (int i = 0; i < 2; i++) {
    if (i) buf_printf(b, " %s ", op_text(e->op));
    double fv;
    bool flt = t == DT_F32 || t == DT_F64;
    if (conv) gen_ex_as(k, b, e->args[i], t);
    else if (flt && int_const_as(e->args[i], t, &fv)) fmt_float(b, fv, t);
    else if (flt && dtype_is_int(e->args[i]->type))
      gen_ex_as(k, b, e->args[i], t);   /* any other integer operand is converted explicitly: clang
                                    ** folds constant expressions, select arms (found,
                                    ** int_const_float_select) and u64 abs() of them (found,
                                    ** u64_select_float) and warns on an inexact implicit one */
    else ex(k, b, e->args[i]);
  }
  buf_puts(b, ")");
}

/* A cast: bool (!= 0), f16 (the nearest value), f16/complex conversions, saturating
** float-to-integer (templates/int.tmpl), else a C cast. */
static void ex_cast(KCtx *k, Buf *b, Expr *e) {
  if (e->cast_to == DT_BOOL) {
    buf_puts(b, "(");
    ex(k, b, e->args[0]);
    buf_puts(b, !gen_hidden_bool(e) ? " != 0)" : e->args[0]->type == DT_U64 ? " != cnp_g_u64(0))" : " != cnp_g_i64(0))");
  } else if (e->cast_to == DT_F16) {
    gen_ex_f16(k, b, e->args[0]);               /* f16(x): the nearest f16 value */
  } else if (gen_converted_type(e->cast_to)) {
    gen_ex_as(k, b, e->args[0], e->cast_to);
  } else if (dtype_is_int(e->cast_to) && dtype_is_float(e->args[0]->type)) {
    /* saturating, NaN -> 0 (templates/int.tmpl); the _v forms in a body that vectorizes */
    buf_printf(b, "cnp_g_%s_%s%s(", e->args[0]->type == DT_F64 ? "f64" : "f32", dtype_name(e->cast_to),
               k->sab && e->cast_to != DT_U64 ? "_v" : "");
    ex(k, b, e->args[0]);
    buf_puts(b, ")");
  } else {
    buf_printf(b, "((%s)", gen_ctype(e->cast_to));
    ex(k, b, e->args[0]);
    buf_puts(b, ")");
  }
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
  case EX_NAME: ex_name(b, e); return;
  case EX_INDEX: ex_index(k, b, e); return;
  case EX_UNARY:
    if (e->op == OP_NEG && signed_int(e->type) && e->args[0]->kind != EX_INT) {
      buf_printf(b, "cnp_g_neg_i%s(", gen_signed_int_bits(e->type));   /* wraps (templates/int.tmpl) */
      ex(k, b, e->args[0]);
      buf_puts(b, ")");
      return;
    }
    if (e->op == OP_NEG && dtype_is_complex(e->type)) {
      /* not C's unary -: gcc rewrites x / -y as -x / y and -(x * y) as -x * y, which Annex G's
      ** division and multiplication do not give bit for bit (signed zeros, infinities) */
      buf_printf(b, "cnp_g_cneg%s(", e->type == DT_C64 ? "64" : "128");
      ex(k, b, e->args[0]);
      buf_puts(b, ")");
      return;
    }
    if (e->op == OP_BNOT && e->args[0]->kind == EX_CAST && e->args[0]->args[0]->type == DT_BOOL) {
      /* ~i32(a < b): gcc's -Wbool-operation sees through the cast to the comparison; "+ 0"
      ** (the same value and type after the promotion) hides it (difftest found/bnot_bool) */
      buf_puts(b, "(~(");
      ex(k, b, e->args[0]);
      buf_puts(b, " + 0))");
      return;
    }
    buf_puts(b, e->op == OP_NEG ? "(-" : e->op == OP_BNOT ? "(~" : "(!");
    ex(k, b, e->args[0]);
    buf_puts(b, ")");
    return;
  case EX_BINARY: ex_binary(k, b, e); return;
  case EX_CALL:
    if (e->builtin != BI_NONE) ex_call(k, b, e);
    else if (!fft_wave(k, b, e)) grid_call(k, b, e);   /* wave(i) (gen_fft.c), coord(i) (gen_grid.c) */
    return;
  case EX_CAST: ex_cast(k, b, e); return;
  }
  cnp_ice("expression kind %d", (int)e->kind);
}

void gen_ex(KCtx *k, Buf *b, Expr *e) { ex(k, b, e); }
