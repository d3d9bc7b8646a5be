/*
** interp.c -- the reference interpreter (cnpc --interpret): runs a checked program's steps
** on plain arrays with the semantics of docs/language.md, for the differential tests
** (scripts/difftest, docs/robustness.md). Written for clarity, not speed: one tree walk per
** element, every value a tagged Value, every statement executed in program order.
**
** Semantics it states (docs/language.md, Types):
**   - i32/i64 + - * and unary - wrap (two's complement); x / 0 and x % 0 are 0 for every
**     integer type (u64 included); INT_MIN / -1 is INT_MIN and INT_MIN % -1 is 0.
**   - float -> integer casts saturate to the target range, NaN -> 0.
**   - f16 values are computed in f32 and rounded to the nearest f16 (ties to even) where a
**     value becomes f16: stores into f16 fields, f16 lets, f16(x), operands promoted to f16
**     (from f64 in one rounding), f16 literals, constants and params.
**   - complex values are C99 complex numbers (the host unit's <complex.h> arithmetic).
**   - compaction and sort are stable; segment sums add each segment's rows in row order,
**     in the accumulation type (f16 in f32, integers in f64).
** Steps run in program order (the hazard analysis makes stream order equivalent to it);
** records and waits are no-ops; a map runs its body for i = 0, 1, ... in order, so its
** scatter-adds happen in row order (a backend may add in another order: the output file
** says for which elements, with an error bound).
**
** Files (host byte order; layout follows the program's declarations, so the differential
** driver written from the manifest reads and writes the same bytes):
**   input:  "CNPDATA1", int64 K (steps), then per declaration in program order:
**           setup param: a 16-byte slot (the value in its C type: bool 1 byte, f16 its bits,
**           c64 two floats, c128 two doubles); dim: int64 capacity, int64 initial extent;
**           field: its bytes at capacity (C order); then K times, per per-step param in
**           order, a 16-byte slot.
**   output: "CNPOUT1\0", then per declaration in program order:
**           dim: int64 extent; field: int64 n, n bytes (the live view in C order), int64 m,
**           m doubles (0, or one error bound per element: elements that receive scatter-adds
**           or segment sums of floating values, whose order is open); a scalar is a field of
**           one element, a history the latest min(recorded, K) values, oldest first (as
**           NAME_history() gives them); snapshot: int64 n (-1 before any copy), n bytes (the
**           latest copy); then int64 the call whose NAME_step() failed (-1: none; an append
**           past the capacity: the calls after it do not run) and int64 its cnp_status.
** Reductions into scalars and scans follow the host order docs/language.md fixes (lanes and
** chunks: RedRT, exec_scan), so their results are bit-identical; draws are Philox4x32-10
** with the generator's own log and cos, numbered by their calls' places in the source.
** The values and conversions are in interp_value.c, the error bounds in interp_bound.c, the
** row statements (sort, compact, offsets, segments, sum, copy) in interp_rows.c, the grids
** (stencil offsets, coord() and wave(), halo, deposit, gather, fft, ifft) in interp_grid.c;
** the types and helpers they share in interp_internal.h.
*/
#define _POSIX_C_SOURCE 200809L
#include "interp_internal.h"   /* Value, FieldRT, Interp; <complex.h> without its I */

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* ------------------------------------------------------------------ evaluation */

/* The interpreter's memory comes from the compilation's arena (freed with it, on every
** path out of interp_run): zeroed, never freed one by one. */
static Arena *ia_arena;
void *ia(size_t n) { return arena_alloc(ia_arena, n ? n : 1); }

void fail(Interp *I, Loc at, const char *fmt, const char *a) {
  if (I->failed) return;
  I->failed = true;
  char m[256];
  snprintf(m, sizeof m, fmt, a);
  snprintf(I->err, sizeof I->err, "%s:%d:%d: %s", at.file ? at.file->path : "?", at.line, at.col, m);
}

/* Value of a setup-time integer expression (extents, segment counts): capacities of dims. */
int64_t setup_int(Interp *I, Expr *e) {
  switch (e->kind) {
  case EX_INT: return e->ival;
  case EX_NAME: {
    Decl *d = e->ref.decl;
    if (d->kind == DECL_CONST) return d->ival;
    if (d->kind == DECL_DIM) return I->dim_cap[d->index];
    if (d->kind == DECL_PARAM) return conv(I->params[d->index], DT_I64).i;
    if (d->kind == DECL_GRID && d->grid->split)   /* one rank: the split axis whole */
      return setup_int(I, d->grid->axis[d->grid->split_axis].ext);
    return 0;
  }
  case EX_BINARY: {
    int64_t a = setup_int(I, e->args[0]), b = setup_int(I, e->args[1]);
    if (e->op == OP_ADD) return a + b;
    if (e->op == OP_SUB) return a - b;
    if (e->op == OP_MUL) return a * b;
    if (e->op == OP_DIV) return b ? a / b : 0;     /* a spectral grid's n / 2 + 1 */
    return 0;
  }
  case EX_UNARY: return -setup_int(I, e->args[0]);
  case EX_CAST: return setup_int(I, e->args[0]);
  default: return 0;
  }
}

FieldRT *field_of(Interp *I, Decl *d) {
  for (int k = 0; k < I->ndecl; k++)
    if (I->decls[k] == d) return &I->fields[k];
  return NULL;
}

/* Linear element offset of F[args] (C order, capacity extents); -1 if out of range. */
int64_t elem_offset(Interp *I, Expr *e, FieldRT *f) {
  if (f->d->grid_of) return grid_offset(I, e, f);
  int64_t off = 0;
  for (int k = 0; k < e->nargs; k++) {
    int64_t x = conv(eval(I, e->args[k]), DT_I64).i;
    int64_t lim = f->cap[k];
    if (k == f->rank - 1 && f->dim)
      lim = f->dim == I->append_dim ? I->append_end : I->dim_live[f->dim->index];
    if (x < 0 || x >= lim) {
      fail(I, e->loc, "index out of range of field '%s'", f->d->name);
      return -1;
    }
    off = off * f->cap[k] + x;
  }
  return off;
}

/* An untyped literal (possibly negated) as a value of type t, from its exact value. */
static bool literal_as(Expr *e, DType t, Value *out) {
  if (!(e->flags & EXF_UNTYPED)) return false;
  bool neg = false;
  while (e->kind == EX_UNARY && e->op == OP_NEG) neg = !neg, e = e->args[0];
  if (e->kind == EX_INT) {
    Value v = e->type == DT_U64 ? (Value){.t = DT_U64, .u = e->uval} : vint(DT_I64, e->ival);
    if (dtype_is_float(t) || dtype_is_complex(t)) {
      double x = e->type == DT_U64 ? (double)e->uval : (double)e->ival;
      v = (Value){.t = DT_F64, .d = neg ? -x : x};
    } else if (neg) {
      if (v.t == DT_U64) v.u = 0 - v.u; else v.i = (int64_t)(0 - (uint64_t)v.i);
    }
    *out = conv(v, t);
    return true;
  }
  if (e->kind == EX_FLOAT) {
    *out = conv((Value){.t = DT_F64, .d = neg ? -e->fval : e->fval}, t);
    return true;
  }
  return false;
}

/* e as a value of type t: an untyped literal adapts (from its exact value), anything else
** is evaluated in its own type and converted. */
Value eval_as(Interp *I, Expr *e, DType t) {
  Value v;
  if (literal_as(e, t, &v)) return v;
  return conv(eval(I, e), t);
}

Value arith(Interp *I, Expr *e, Op op, Value a, Value b) {
  Value r = {.t = a.t};
  switch (a.t) {
  case DT_I32: case DT_I64: {
    bool w = a.t == DT_I32;
    uint64_t x = (uint64_t)a.i, y = (uint64_t)b.i, z = 0;
    int64_t mn = w ? INT32_MIN : INT64_MIN;
    switch (op) {
    case OP_ADD: z = x + y; break;
    case OP_SUB: z = x - y; break;
    case OP_MUL: z = x * y; break;
    case OP_DIV: z = b.i == 0 ? 0 : (a.i == mn && b.i == -1) ? (uint64_t)mn : (uint64_t)(a.i / b.i); break;
    case OP_MOD: z = b.i == 0 || b.i == -1 ? 0 : (uint64_t)(a.i % b.i); break;
    case OP_BAND: z = x & y; break;
    case OP_BOR: z = x | y; break;
    case OP_BXOR: z = x ^ y; break;
    case OP_SHL: z = (uint64_t)b.i < (w ? 32u : 64u) ? x << b.i : 0; break;   /* wraps below */
    case OP_SHR:                                  /* arithmetic; a count out of range: 0 / -1 */
      z = (uint64_t)b.i < (w ? 32u : 64u) ? (uint64_t)(a.i < 0 ? ~(~a.i >> b.i) : a.i >> b.i)
                                           : (uint64_t)(a.i < 0 ? -1 : 0);
      break;
    default: break;
    }
    r.i = w ? (int32_t)(uint32_t)z : (int64_t)z;
    return r;
  }
  case DT_U64:
    switch (op) {
    case OP_ADD: r.u = a.u + b.u; break;
    case OP_SUB: r.u = a.u - b.u; break;
    case OP_MUL: r.u = a.u * b.u; break;
    case OP_DIV: r.u = b.u == 0 ? 0 : a.u / b.u; break;
    case OP_MOD: r.u = b.u == 0 ? 0 : a.u % b.u; break;
    case OP_BAND: r.u = a.u & b.u; break;
    case OP_BOR: r.u = a.u | b.u; break;
    case OP_BXOR: r.u = a.u ^ b.u; break;
    case OP_SHL: r.u = b.u < 64 ? a.u << b.u : 0; break;
    case OP_SHR: r.u = b.u < 64 ? a.u >> b.u : 0; break;
    default: break;
    }
    return r;
  case DT_F16: case DT_F32:
    switch (op) {
    case OP_ADD: r.f = a.f + b.f; break;
    case OP_SUB: r.f = a.f - b.f; break;
    case OP_MUL: r.f = a.f * b.f; break;
    case OP_DIV: r.f = a.f / b.f; break;
    case OP_MOD: r.f = fmodf(a.f, b.f); break;
    default: break;
    }
    return r;
  case DT_F64:
    switch (op) {
    case OP_ADD: r.d = a.d + b.d; break;
    case OP_SUB: r.d = a.d - b.d; break;
    case OP_MUL: r.d = a.d * b.d; break;
    case OP_DIV: r.d = a.d / b.d; break;
    case OP_MOD: r.d = fmod(a.d, b.d); break;
    default: break;
    }
    return r;
  case DT_C64: {
    volatile float complex x = a.c64, y = b.c64;   /* C99 Annex G, as the host unit */
    switch (op) {
    case OP_ADD: r.c64 = x + y; break;
    case OP_SUB: r.c64 = x - y; break;
    case OP_MUL: r.c64 = x * y; break;
    case OP_DIV: r.c64 = x / y; break;
    default: break;
    }
    return r;
  }
  case DT_C128: {
    volatile double complex x = a.c128, y = b.c128;
    switch (op) {
    case OP_ADD: r.c128 = x + y; break;
    case OP_SUB: r.c128 = x - y; break;
    case OP_MUL: r.c128 = x * y; break;
    case OP_DIV: r.c128 = x / y; break;
    default: break;
    }
    return r;
  }
  default:
    fail(I, e->loc, "arithmetic on %s", dtype_name(a.t));
    return r;
  }
}

int cmp_values(Value a, Value b, Op op) {
  /* a, b of the same type */
  if (dtype_is_complex(a.t)) {
    bool eq = a.t == DT_C64 ? a.c64 == b.c64 : a.c128 == b.c128;
    return op == OP_EQ ? eq : !eq;
  }
  if (dtype_is_float(a.t)) {
    double x = as_double(a), y = as_double(b);
    switch (op) {
    case OP_EQ: return x == y;
    case OP_NE: return x != y;
    case OP_LT: return x < y;
    case OP_LE: return x <= y;
    case OP_GT: return x > y;
    case OP_GE: return x >= y;
    default: return 0;
    }
  }
  if (a.t == DT_U64) {
    switch (op) {
    case OP_EQ: return a.u == b.u;
    case OP_NE: return a.u != b.u;
    case OP_LT: return a.u < b.u;
    case OP_LE: return a.u <= b.u;
    case OP_GT: return a.u > b.u;
    case OP_GE: return a.u >= b.u;
    default: return 0;
    }
  }
  switch (op) {
  case OP_EQ: return a.i == b.i;
  case OP_NE: return a.i != b.i;
  case OP_LT: return a.i < b.i;
  case OP_LE: return a.i <= b.i;
  case OP_GT: return a.i > b.i;
  case OP_GE: return a.i >= b.i;
  default: return 0;
  }
}

/* One-argument real functions, in the precision of t (f16 and f32: the float functions). */
static Value real_fn(Builtin bi, Value x) {
  Value r = {.t = x.t};
  if (x.t == DT_F64) {
    double a = x.d;
    switch (bi) {
    case BI_SQRT: r.d = sqrt(a); break;
    case BI_EXP: r.d = exp(a); break;
    case BI_LOG: r.d = log(a); break;
    case BI_SIN: r.d = sin(a); break;
    case BI_COS: r.d = cos(a); break;
    case BI_FLOOR: r.d = floor(a); break;
    case BI_CEIL: r.d = ceil(a); break;
    case BI_ABS: r.d = fabs(a); break;
    case BI_TANH: r.d = tanh(a); break;
    case BI_SINH: r.d = sinh(a); break;
    case BI_COSH: r.d = cosh(a); break;
    case BI_ERF: r.d = erf(a); break;
    case BI_ROUND: r.d = round(a); break;
    case BI_TRUNC: r.d = trunc(a); break;
    default: break;
    }
  } else {
    float a = x.f;
    switch (bi) {
    case BI_SQRT: r.f = sqrtf(a); break;
    case BI_EXP: r.f = expf(a); break;
    case BI_LOG: r.f = logf(a); break;
    case BI_SIN: r.f = sinf(a); break;
    case BI_COS: r.f = cosf(a); break;
    case BI_FLOOR: r.f = floorf(a); break;
    case BI_CEIL: r.f = ceilf(a); break;
    case BI_ABS: r.f = fabsf(a); break;
    case BI_TANH: r.f = tanhf(a); break;
    case BI_SINH: r.f = sinhf(a); break;
    case BI_COSH: r.f = coshf(a); break;
    case BI_ERF: r.f = erff(a); break;
    case BI_ROUND: r.f = roundf(a); break;
    case BI_TRUNC: r.f = truncf(a); break;
    default: break;
    }
  }
  return r;
}

static Value complex_fn(Builtin bi, Value z, Value w) {
  Value r = {.t = z.t};
  if (z.t == DT_C64) {
    float complex a = z.c64;
    switch (bi) {
    case BI_SQRT: r.c64 = csqrtf(a); break;
    case BI_EXP: r.c64 = cexpf(a); break;
    case BI_LOG: r.c64 = clogf(a); break;
    case BI_SIN: r.c64 = csinf(a); break;
    case BI_COS: r.c64 = ccosf(a); break;
    case BI_CONJ: r.c64 = conjf(a); break;
    case BI_POW: r.c64 = cpowf(a, w.c64); break;
    case BI_ABS: r.t = DT_F32; r.f = cabsf(a); break;
    case BI_REAL: r.t = DT_F32; r.f = crealf(a); break;
    case BI_IMAG: r.t = DT_F32; r.f = cimagf(a); break;
    case BI_ARG: r.t = DT_F32; r.f = cargf(a); break;
    default: break;
    }
  } else {
    double complex a = z.c128;
    switch (bi) {
    case BI_SQRT: r.c128 = csqrt(a); break;
    case BI_EXP: r.c128 = cexp(a); break;
    case BI_LOG: r.c128 = clog(a); break;
    case BI_SIN: r.c128 = csin(a); break;
    case BI_COS: r.c128 = ccos(a); break;
    case BI_CONJ: r.c128 = conj(a); break;
    case BI_POW: r.c128 = cpow(a, w.c128); break;
    case BI_ABS: r.t = DT_F64; r.d = cabs(a); break;
    case BI_REAL: r.t = DT_F64; r.d = creal(a); break;
    case BI_IMAG: r.t = DT_F64; r.d = cimag(a); break;
    case BI_ARG: r.t = DT_F64; r.d = carg(a); break;
    default: break;
    }
  }
  return r;
}

/* ------------------------------------------------------------------ random draws */

/* Philox4x32-10 (Salmon et al., SC'11; Random123's philox4x32_R, R = 10): ten rounds on the
** counter, the key bumped by the Weyl constants before each round after the first. */
static void philox4x32_10(uint32_t c[4], uint32_t k0, uint32_t k1) {
  for (int r = 0; r < 10; r++) {
    if (r) k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    uint64_t p0 = (uint64_t)0xD2511F53u * c[0], p1 = (uint64_t)0xCD9E8D57u * c[2];
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c[1] ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c[3] ^ k1;
    c[1] = (uint32_t)p1, c[3] = (uint32_t)p0, c[0] = n0, c[2] = n2;
  }
}

/* log(x) for x in (0, 1] and cos(2 pi u) for u in [0, 1), as docs/language.md defines the
** generator's own: exact reductions, then series of 2 atanh(s) and of sin/cos by fma
** (Horner), so that every backend gives the same bits. Written out step by step. */
static double draw_log01(double x) {
  int e;
  double m = frexp(x, &e);                       /* x = m 2^e, m in [1/2, 1) */
  if (m < 0.7071067811865476) m += m, e -= 1;    /* m in [sqrt(1/2), sqrt(2)) */
  static const double c[] = {0.08695652173913043, 0.09523809523809523, 0.10526315789473684,
                             0.11764705882352941, 0.13333333333333333, 0.15384615384615385,
                             0.18181818181818182, 0.2222222222222222, 0.2857142857142857, 0.4,
                             0.6666666666666666};   /* 2/(2k+1), k = 11 .. 1 */
  double s = (m - 1.0) / (m + 1.0), z = s * s, q = c[0];
  for (int k = 1; k < 11; k++) q = fma(q, z, c[k]);
  return fma((double)e, 0.6931471805599453, fma(s * z, q, s + s));
}

static double draw_cos2pi(double u) {
  double v = u > 0.5 ? 1.0 - u : u;              /* cos(2 pi u) = cos(2 pi v), v in [0, 1/2] */
  bool neg = v > 0.25;                           /* = -cos(2 pi (1/2 - v)) */
  if (neg) v = 0.5 - v;
  bool sn = v > 0.125;                           /* = sin(2 pi (1/4 - v)) */
  double t = (sn ? 0.25 - v : v) * 6.283185307179586, z = t * t;
  static const double cs[] = {-8.22063524662433e-18, 2.8114572543455206e-15, -7.647163731819816e-13,
                              1.6059043836821613e-10, -2.505210838544172e-08, 2.7557319223985893e-06,
                              -0.0001984126984126984, 0.008333333333333333, -0.16666666666666666};
  static const double cc[] = {-1.5619206968586225e-16, 4.779477332387385e-14, -1.1470745597729725e-11,
                              2.08767569878681e-09, -2.755731922398589e-07, 2.48015873015873e-05,
                              -0.001388888888888889, 0.041666666666666664, -0.5};
  double qs = cs[0], qc = cc[0];
  for (int k = 1; k < 9; k++) qs = fma(qs, z, cs[k]), qc = fma(qc, z, cc[k]);
  double r = sn ? fma(t * z, qs, t) : fma(z, qc, 1.0);
  return neg ? -r : r;
}

/* The draw number of a call: its place among the pipeline's draw calls in source order. */
static uint32_t draw_number(Interp *I, Expr *e) {
  for (int k = 0; k < I->ndraws; k++)
    if (I->draws[k] == e) return (uint32_t)k;
  return 0;
}

/* uniform / normal / uniform_f32 / normal_f32 (docs/language.md, "Random numbers"): key the
** seed, counter (block low, block high, step counter low 32 bits, draw number). The block
** is the row for normals, row / 2 for uniform (row 2b takes w1:w0, 2b + 1 w3:w2) and row / 4
** for uniform_f32 (row 4b + j takes w_j). */
static Value draw(Interp *I, Expr *e, uint64_t seed) {
  uint64_t row = (uint64_t)I->row;
  uint64_t block = e->builtin == BI_UNIFORM ? row >> 1 : e->builtin == BI_UNIFORM_F32 ? row >> 2 : row;
  uint32_t w[4] = {(uint32_t)block, (uint32_t)(block >> 32), (uint32_t)I->step, draw_number(I, e)};
  philox4x32_10(w, (uint32_t)seed, (uint32_t)(seed >> 32));
  double u53a = (double)((((uint64_t)w[1] << 32) | w[0]) >> 11) * 0x1p-53;   /* w1:w0 */
  double u53b = (double)((((uint64_t)w[3] << 32) | w[2]) >> 11) * 0x1p-53;   /* w3:w2 */
  float u24a = (float)(w[0] >> 8) * 0x1p-24f, u24b = (float)(w[1] >> 8) * 0x1p-24f;
  Value r = {.t = e->type};
  switch (e->builtin) {
  case BI_UNIFORM: r.d = row & 1 ? u53b : u53a; break;
  case BI_UNIFORM_F32: r.f = (float)(w[row & 3] >> 8) * 0x1p-24f; break;
  case BI_NORMAL: r.d = sqrt(-2.0 * draw_log01(1.0 - u53a)) * draw_cos2pi(u53b); break;
  default: r.f = (float)(sqrt(-2.0 * draw_log01(1.0 - (double)u24a)) * draw_cos2pi((double)u24b)); break;
  }
  return r;
}

/* The draw calls of a step's statements (then sorted by line and column: source order). */
static void collect_expr_draws(Interp *I, Expr *e, int cap) {
  if (!e) return;
  if (e->kind == EX_CALL && builtin_is_draw(e->builtin) && I->ndraws < cap) I->draws[I->ndraws++] = e;
  for (int k = 0; k < e->nargs; k++) collect_expr_draws(I, e->args[k], cap);
}
static void collect_draws(Interp *I, Stmt *s, int cap) {
  for (; s; s = s->next) {
    collect_expr_draws(I, s->target, cap);
    collect_expr_draws(I, s->value, cap);
    collect_expr_draws(I, s->value2, cap);
    collect_draws(I, s->body, cap);
    collect_draws(I, s->else_body, cap);
  }
}
static int loc_cmp(const void *a, const void *b) {
  const Expr *x = *(Expr *const *)a, *y = *(Expr *const *)b;
  if (x->loc.line != y->loc.line) return x->loc.line < y->loc.line ? -1 : 1;
  return (x->loc.col > y->loc.col) - (x->loc.col < y->loc.col);
}

static Value eval_call(Interp *I, Expr *e) {
  Builtin bi = e->builtin;
  DType t = e->type;
  Expr **a = e->args;
  switch (bi) {
  case BI_STEP_INDEX: return vint(DT_I64, I->step);    /* no arguments */
  case BI_NONE: {
    Value v;
    if (grid_fn_value(I, e, &v)) return v;   /* wave(i), coord(i): interp_grid.c */
    break;
  }
  case BI_UNIFORM: case BI_NORMAL: case BI_UNIFORM_F32: case BI_NORMAL_F32:
    return draw(I, e, eval_as(I, a[0], DT_U64).u);
  case BI_SELECT: {
    bool c = eval(I, a[0]).i != 0;
    return eval_as(I, c ? a[1] : a[2], t);
  }
  case BI_COMPLEX: {
    DType r = t == DT_C64 ? DT_F32 : DT_F64;
    Value re = eval_as(I, a[0], r), im = eval_as(I, a[1], r);
    Value z = {.t = t};
    if (t == DT_C64) z.c64 = CMPLXF(re.f, im.f);
    else z.c128 = CMPLX(re.d, im.d);
    return z;
  }
  default: break;
  }
  if (dtype_is_complex(a[0]->type) && (e->nargs == 1 || dtype_is_complex(t))) {
    DType ct = e->nargs == 1 ? a[0]->type : t;
    Value z = eval_as(I, a[0], ct);
    Value w = e->nargs > 1 ? eval_as(I, a[1], ct) : z;
    return complex_fn(bi, z, w);
  }
  if (dtype_is_complex(t) && bi == BI_POW) {
    Value z = eval_as(I, a[0], t), w = eval_as(I, a[1], t);
    return complex_fn(bi, z, w);
  }
  switch (bi) {
  case BI_REAL: case BI_CONJ: return eval(I, a[0]);      /* of a real value: itself */
  case BI_IMAG: return conv(vint(DT_I64, 0), t);          /* 0 of its type */
  case BI_ARG: {                                          /* atan2(0, x): 0 or pi */
    DType r = t == DT_F64 ? DT_F64 : DT_F32;
    Value x = eval_as(I, a[0], r), v = {.t = t};
    if (r == DT_F64) v.d = atan2(0.0, x.d);
    else v.f = atan2f(0.0f, x.f);
    return v;
  }
  case BI_MIN: case BI_MAX: {
    Value x = eval_as(I, a[0], t), y = eval_as(I, a[1], t), r = {.t = t};
    bool mn = bi == BI_MIN;
    /* a NaN gives the other operand; a tie of zeros -0 for min, +0 for max (docs) */
    if (t == DT_F64)
      r.d = isnan(x.d) ? y.d : isnan(y.d) ? x.d
          : (mn ? x.d < y.d || (x.d == y.d && signbit(x.d)) : x.d > y.d || (x.d == y.d && !signbit(x.d))) ? x.d : y.d;
    else if (dtype_is_float(t))
      r.f = isnan(x.f) ? y.f : isnan(y.f) ? x.f
          : (mn ? x.f < y.f || (x.f == y.f && signbit(x.f)) : x.f > y.f || (x.f == y.f && !signbit(x.f))) ? x.f : y.f;
    else if (t == DT_U64) r.u = mn ? (x.u < y.u ? x.u : y.u) : (x.u > y.u ? x.u : y.u);
    else r.i = mn ? (x.i < y.i ? x.i : y.i) : (x.i > y.i ? x.i : y.i);
    return r;
  }
  case BI_ABS: {
    Value x = eval_as(I, a[0], t);
    if (t == DT_U64) return x;
    if (is_sint(t)) {                                     /* wraps: abs(INT_MIN) = INT_MIN */
      if (x.i < 0) x = arith(I, e, OP_SUB, vint(t, 0), x);
      return x;
    }
    return real_fn(bi, x);
  }
  case BI_ATAN2: {
    Value y = eval_as(I, a[0], t), x = eval_as(I, a[1], t), r = {.t = t};
    if (t == DT_F64) r.d = atan2(y.d, x.d);
    else r.f = atan2f(y.f, x.f);
    return r;
  }
  case BI_ISNAN: case BI_ISFINITE: {
    DType at = a[0]->type;
    if (!dtype_is_float(at)) { (void)eval(I, a[0]); return vint(DT_BOOL, bi == BI_ISFINITE); }
    Value x = eval_as(I, a[0], at == DT_F64 ? DT_F64 : DT_F32);
    double d = at == DT_F64 ? x.d : (double)x.f;
    return vint(DT_BOOL, bi == BI_ISNAN ? isnan(d) : isfinite(d));
  }
  case BI_FMOD: case BI_POW: {
    Value x = eval_as(I, a[0], t), y = eval_as(I, a[1], t), r = {.t = t};
    if (t == DT_F64) r.d = bi == BI_FMOD ? fmod(x.d, y.d) : pow(x.d, y.d);
    else r.f = bi == BI_FMOD ? fmodf(x.f, y.f) : powf(x.f, y.f);
    return r;
  }
  default:
    return real_fn(bi, eval_as(I, a[0], t));
  }
}

Value eval(Interp *I, Expr *e) {
  Value v = {.t = e->type};
  if (I->failed) return v;
  switch (e->kind) {
  case EX_INT: case EX_FLOAT:
    if (literal_as(e, e->type, &v)) return v;
    if (e->kind == EX_INT) return conv(e->type == DT_U64 ? (Value){.t = DT_U64, .u = e->uval} : vint(DT_I64, e->ival), e->type);
    return conv((Value){.t = DT_F64, .d = e->fval}, e->type);
  case EX_BOOL: return vint(DT_BOOL, e->ival != 0);
  case EX_NAME: {
    if (e->ref.local) return conv(I->locals[e->ref.local->id], e->type);
    Decl *d = e->ref.decl;
    if (d->kind == DECL_CONST) {
      Value c;
      if (d->dtype == DT_BOOL) c = vint(DT_BOOL, d->ival != 0);
      else if (dtype_is_float(d->dtype)) c = conv((Value){.t = DT_F64, .d = d->fval}, d->dtype);
      else if (d->dtype == DT_U64) c = (Value){.t = DT_U64, .u = (uint64_t)d->ival};
      else c = conv(vint(DT_I64, d->ival), d->dtype);
      /* an untyped constant adapts like a literal */
      if (dtype_is_float(e->type) && !dtype_is_float(d->dtype) && d->dtype != DT_BOOL)
        return conv((Value){.t = DT_F64, .d = d->dtype == DT_U64 ? (double)(uint64_t)d->ival : (double)d->ival}, e->type);
      if (dtype_is_float(e->type) && dtype_is_float(d->dtype) && d->dtype != DT_F16)
        return conv((Value){.t = DT_F64, .d = d->fval}, e->type);
      return conv(c, e->type);
    }
    if (d->kind == DECL_PARAM) return conv(I->params[d->index], e->type);
    if (d->kind == DECL_DIM)
      return conv(vint(DT_I64, I->dims_as_cap ? I->dim_cap[d->index] : I->dim_live[d->index]), e->type);
    if (d->kind == DECL_FIELD && d->scalar) return conv(load(field_of(I, d), 0), e->type);
    fail(I, e->loc, "name '%s' in an expression", d->name);
    return v;
  }
  case EX_INDEX: {
    FieldRT *f = field_of(I, e->ref.decl);
    int64_t off = elem_offset(I, e, f);
    if (off < 0) return v;
    return load(f, off);
  }
  case EX_UNARY: {
    if (e->op == OP_NOT) return vint(DT_BOOL, !eval(I, e->args[0]).i);
    if (e->op == OP_BNOT) {
      Value x = eval_as(I, e->args[0], e->type);
      if (e->type == DT_U64) x.u = ~x.u;
      else x.i = e->type == DT_I32 ? (int32_t)~(uint32_t)x.i : ~x.i;
      return x;
    }
    Value x = eval_as(I, e->args[0], e->type);
    if (dtype_is_int(e->type)) {
      if (e->type == DT_U64) { x.u = 0 - x.u; return x; }
      return arith(I, e, OP_SUB, vint(e->type, 0), x);
    }
    switch (e->type) {
    case DT_F16: case DT_F32: x.f = -x.f; break;
    case DT_F64: x.d = -x.d; break;
    case DT_C64: x.c64 = -x.c64; break;
    case DT_C128: x.c128 = -x.c128; break;
    default: break;
    }
    return x;
  }
  case EX_BINARY: {
    Op op = e->op;
    if (op == OP_AND) return vint(DT_BOOL, eval(I, e->args[0]).i && eval(I, e->args[1]).i);
    if (op == OP_OR) return vint(DT_BOOL, eval(I, e->args[0]).i || eval(I, e->args[1]).i);
    if (op >= OP_EQ && op <= OP_GE) {
      DType t = e->args[0]->type == DT_BOOL ? DT_BOOL : sema_promote(e->args[0], e->args[1]);
      Value a = eval_as(I, e->args[0], t), b = eval_as(I, e->args[1], t);
      return vint(DT_BOOL, cmp_values(a, b, op));
    }
    int ri = !dtype_is_complex(e->type) || (op != OP_MUL && op != OP_DIV) ? -1
             : !dtype_is_complex(e->args[1]->type)                     ? 1
             : op == OP_MUL && !dtype_is_complex(e->args[0]->type)      ? 0
                                                                        : -1;
    if (ri >= 0) {   /* complex times / over a real value: component-wise, as gen_expr.c */
      DType rt = e->type == DT_C64 ? DT_F32 : DT_F64;
      Value x = eval_as(I, e->args[0], ri == 0 ? rt : e->type), y = eval_as(I, e->args[1], ri == 1 ? rt : e->type);
      Value z = ri ? x : y, r = ri ? y : x, o = {.t = e->type};
      bool d = op == OP_DIV;
      if (e->type == DT_C64)
        o.c64 = CMPLXF(d ? crealf(z.c64) / r.f : crealf(z.c64) * r.f, d ? cimagf(z.c64) / r.f : cimagf(z.c64) * r.f);
      else
        o.c128 = CMPLX(d ? creal(z.c128) / r.d : creal(z.c128) * r.d, d ? cimag(z.c128) / r.d : cimag(z.c128) * r.d);
      return o;
    }
    Value a = eval_as(I, e->args[0], e->type), b = eval_as(I, e->args[1], e->type);
    return arith(I, e, op, a, b);
  }
  case EX_CALL: return eval_call(I, e);
  case EX_CAST:
    if (e->cast_to == DT_F16) {                      /* the nearest f16, rounded once */
      Value x = eval(I, e->args[0]);
      if (x.t == DT_F16) { x.f = hround(x.f); return x; }
      return conv(x, DT_F16);
    }
    return eval_as(I, e->args[0], e->cast_to);
  }
  return v;
}

static void exec_map_stmts(Interp *I, Stmt *s);

/* A branch not taken on an inexact condition: whatever it would write is unbounded (its
** targets' indices evaluated now; one out of range is no error here). */
static void mark_unbounded(Interp *I, Stmt *s) {
  for (; s && !I->failed; s = s->next) {
    if (s->kind == ST_LET) I->lbnd[s->let->id] = INFINITY;
    else if ((s->kind == ST_ASSIGN || s->kind == ST_ADD) && s->target->kind == EX_NAME)
      I->lbnd[s->target->ref.local->id] = INFINITY;
    else if (s->kind == ST_ASSIGN || s->kind == ST_ADD) {
      FieldRT *f = field_of(I, s->target->ref.decl);
      char err[sizeof I->err];
      memcpy(err, I->err, sizeof err);
      int64_t off = elem_offset(I, s->target, f);
      if (I->failed) I->failed = false, memcpy(I->err, err, sizeof err);
      else if (index_inexact(I, s->target)) unbound_all(f);
      else if (off >= 0) set_bound(f, off, INFINITY);
    } else if (s->kind == ST_REDUCE) red_of(I, s->target->ref.decl)->lb[I->lane_row % RED_LANES] = INFINITY;
    mark_unbounded(I, s->body);
    mark_unbounded(I, s->else_body);
  }
}

static void exec_map_stmt(Interp *I, Stmt *s) {
  switch (s->kind) {
  case ST_LET: {
    DType lt = s->let->type;
    Value v;
    if (lt == DT_F16) {
      v = eval(I, s->value);
      v = v.t == DT_F16 ? (Value){.t = DT_F16, .f = hround(v.f)} : conv(v, DT_F16);
    } else v = eval_as(I, s->value, lt);
    double b = I->uncertain ? INFINITY : expr_bound(I, s->value);
    I->lbnd[s->let->id] = b == 0.0 ? 0.0 : rnd_b(lt, b, v);
    I->locals[s->let->id] = v;
    return;
  }
  case ST_ASSIGN: case ST_ADD: {
    Expr *tg = s->target;
    bool add = s->kind == ST_ADD;
    if (tg->kind == EX_NAME) {                       /* a let */
      Local *l = tg->ref.local;
      Value v = eval_as(I, s->value, l->type);
      double b = I->uncertain ? INFINITY : bound_as(I, s->value, l->type);
      if (add) b += I->lbnd[l->id], v = arith(I, s->value, OP_ADD, I->locals[l->id], v);
      if (l->type == DT_F16) v.f = hround(v.f);
      I->lbnd[l->id] = b == 0.0 ? 0.0 : rnd_b(l->type, b, v);
      I->locals[l->id] = v;
      return;
    }
    FieldRT *f = field_of(I, tg->ref.decl);
    DType tt = f->d->dtype;
    int64_t off = elem_offset(I, tg, f);
    if (off < 0) return;
    Value v = eval_as(I, s->value, tt);
    double b = I->uncertain ? INFINITY : bound_as(I, s->value, tt);
    if (I->failed) return;
    if (index_inexact(I, tg)) {   /* the generated code may write another element */
      store(f, off, add ? arith(I, s->value, OP_ADD, load(f, off), v) : v);
      unbound_all(f);
      return;
    }
    if (add) {
      Value old = load(f, off);
      if (s->scatter && (dtype_is_float(tt) || dtype_is_complex(tt))) {
        note_term(f, off, old, v);   /* the order-open sum's bound, plus the term's own */
        v = arith(I, s->value, OP_ADD, old, v);
        if (b > 0.0) {
          double t = f->tol ? f->tol[off] : 0.0, nt = f->nterms[off];
          set_bound(f, off, rnd_b(tt, t + b, v));
          f->nterms[off] = (int64_t)nt;
        }
        store(f, off, v);
        return;
      }
      b += elem_tol(f, off);
      v = arith(I, s->value, OP_ADD, old, v);
    }
    store(f, off, v);
    if (f->tol || f->abssum || b > 0.0) set_bound(f, off, b == 0.0 ? 0.0 : rnd_b(tt, b, v));
    return;
  }
  case ST_IF: {
    bool c = eval(I, s->value).i;
    if (expr_bound(I, s->value) > 0.0) {   /* either branch may run (in an uncertain one too) */
      mark_unbounded(I, c ? s->else_body : s->body);
      I->uncertain++;
      exec_map_stmts(I, c ? s->body : s->else_body);
      I->uncertain--;
    } else if (c) exec_map_stmts(I, s->body);
    else if (s->else_body) exec_map_stmts(I, s->else_body);
    return;
  }
  case ST_REDUCE: {                                 /* into the row's lane */
    RedRT *r = red_of(I, s->target->ref.decl);
    int l = I->cuda_order ? 0 : (int)(I->lane_row % RED_LANES);   /* CUDA: the row's own */
    Value *lane = &r->lane[l];
    DType t = r->scalar->dtype;
    Value v = eval_as(I, s->value, t);
    double b = I->uncertain ? INFINITY : bound_as(I, s->value, t);
    if (!I->failed) {
      Value nv = red_combine(I, r->op, *lane, v);
      r->lb[l] = red_bound(r->op, t, r->lb[l], b, *lane, v, nv);
      *lane = nv;
    }
    return;
  }
  default:
    fail(I, s->loc, "statement %s inside a map", stmt_of(s->kind)->name);
  }
}

static void exec_map_stmts(Interp *I, Stmt *s) {
  for (; s && !I->failed; s = s->next) exec_map_stmt(I, s);
}

/* The call stops at an error of the interpreter or a failed statement (NAME_step() returns). */
static bool halted(const Interp *I) { return I->failed || I->status; }

/* The body of a map (or an append) for its n rows first, first + 1, ... in order (the index
** the row, an append's k its place r); its reductions in the fixed order (RedRT), by r, each
** scalar set to its reduction over the rows after them. */
static void exec_rows(Interp *I, Stmt *s, int64_t first, int64_t n) {
  RedRT reds[64];
  I->reds = reds, I->nreds = 0;
  collect_reds(I, s->body, reds, 64);
  for (int k = 0; k < I->nreds; k++) reds[k].total = red_identity(reds[k].scalar->dtype, reds[k].op), reds[k].tb = 0.0;
  Value *rv = NULL;                                 /* CUDA's order: every row's value */
  double *rb = NULL;
  if (I->cuda_order && I->nreds && n > 0) {
    rv = ia((size_t)n * (size_t)I->nreds * sizeof *rv);
    rb = ia((size_t)n * (size_t)I->nreds * sizeof *rb);
  }
  for (int64_t i = 0; i < n && !I->failed; i++) {
    if (rv)                                         /* CUDA: each row from the identity */
      for (int k = 0; k < I->nreds; k++)
        reds[k].lane[0] = red_identity(reds[k].scalar->dtype, reds[k].op), reds[k].lb[0] = 0.0;
    else if (i % RED_CHUNK == 0)                    /* a new chunk: fresh lanes */
      for (int k = 0; k < I->nreds; k++)
        for (int l = 0; l < RED_LANES; l++)
          reds[k].lane[l] = red_identity(reds[k].scalar->dtype, reds[k].op), reds[k].lb[l] = 0.0;
    I->row = first + i, I->lane_row = i;
    I->locals[s->index->id] = vint(DT_I64, first + i);
    if (s->gndim) {                                 /* a grid point: the last axis fastest */
      int64_t q = first + i;
      for (int a = s->gndim - 1; a >= 0; a--) {
        int64_t n = setup_int(I, s->over.decl->grid->axis[a].ext);
        I->locals[s->gidx[a]->id] = vint(DT_I64, q % n);
        q /= n;
      }
    }
    if (s->kind == ST_APPEND && s->let) I->locals[s->let->id] = vint(DT_I64, i);
    exec_map_stmts(I, s->body);
    if (rv) {
      for (int k = 0; k < I->nreds; k++) rv[(int64_t)k * n + i] = reds[k].lane[0], rb[(int64_t)k * n + i] = reds[k].lb[0];
      continue;
    }
    if (i % RED_CHUNK == RED_CHUNK - 1 || i == n - 1)   /* the chunk's end: lanes, then total */
      for (int k = 0; k < I->nreds; k++) {
        RedRT *r = &reds[k];
        DType t = r->scalar->dtype;
        for (int l = 1; l < RED_LANES; l++) {
          Value nv = red_combine(I, r->op, r->lane[0], r->lane[l]);
          r->lb[0] = red_bound(r->op, t, r->lb[0], r->lb[l], r->lane[0], r->lane[l], nv);
          r->lane[0] = nv;
        }
        Value nt = red_combine(I, r->op, r->total, r->lane[0]);
        r->tb = red_bound(r->op, t, r->tb, r->lb[0], r->total, r->lane[0], nt);
        r->total = nt;
      }
  }
  for (int k = 0; rv && k < I->nreds && !I->failed; k++) red_cuda(I, &reds[k], rv + (int64_t)k * n, rb + (int64_t)k * n, n);
  for (int k = 0; k < I->nreds && !I->failed; k++) {   /* the scalar and its bound */
    FieldRT *sc = field_of(I, reds[k].scalar);
    store(sc, 0, reds[k].total);
    if (sc->tol || sc->abssum || reds[k].tb > 0.0) set_bound(sc, 0, reds[k].tb);
  }
  I->reds = NULL, I->nreds = 0;
}

/* map i in N { body }: the rows of N's live extent (or of a setup extent) from 0. */
static void exec_map(Interp *I, Stmt *s) {
  if (s->gndim) {   /* map (j, i) in G: its points in C order, numbered so (the draws' counter) */
    int64_t n = 1;
    for (int a = 0; a < s->gndim; a++) n *= setup_int(I, s->over.decl->grid->axis[a].ext);
    I->gmap = s;
    exec_rows(I, s, 0, n);
    I->gmap = NULL;
    return;
  }
  Decl *over = s->over.decl;
  exec_rows(I, s, 0, over->kind == DECL_DIM ? I->dim_live[over->index] : setup_int(I, s->over_expr));
}

/* scan inclusive|exclusive X -> Y, each component row along the element axis (over a dim its
** live extent), in the order docs/language.md fixes: chunks of 1024 rows, each chunk's total
** summed in row order, the totals' exclusive prefix in chunk order, then each chunk again in
** row order from its offset. Y may be X: each element is read before it is written. */
enum { SCAN_CHUNK_ROWS = 1024 };
static void exec_scan(Interp *I, Stmt *s) {
  FieldRT *x = field_of(I, s->a.decl), *y = field_of(I, s->b.decl);
  DType t = x->d->dtype;
  int64_t cap = x->cap[x->rank - 1], n = x->dim ? I->dim_live[x->dim->index] : cap;
  int64_t nch = (n + SCAN_CHUNK_ROWS - 1) / SCAN_CHUNK_ROWS;
  Value *off = ia((size_t)(nch + 1) * sizeof *off);
  bool bounded = x->tol || x->abssum || y->tol || y->abssum;
  double *bx = bounded ? ia((size_t)(n + 1) * sizeof(double)) : NULL;
  for (int64_t c = 0; c < row_comps(x); c++) {
    int64_t base = c * cap;
    double mag = 0.0;   /* the inputs' bounds and sum |x|, read before an in-place scan writes */
    for (int64_t i = 0; bx && i < n; i++) {
      Value v = load(x, base + i);
      bx[i] = elem_tol(x, base + i), mag += fin(v) ? magnitude(v) : INFINITY;
    }
    for (int64_t k = 0; k < nch; k++) {             /* each chunk's total */
      off[k] = conv(vint(DT_I64, 0), t);
      for (int64_t i = k * SCAN_CHUNK_ROWS; i < n && i < (k + 1) * SCAN_CHUNK_ROWS; i++)
        off[k] = arith(I, NULL, OP_ADD, off[k], load(x, base + i));
    }
    Value acc = conv(vint(DT_I64, 0), t);
    for (int64_t k = 0; k < nch; k++) {             /* the totals' exclusive prefix */
      Value tot = off[k];
      off[k] = acc;
      acc = arith(I, NULL, OP_ADD, acc, tot);
    }
    for (int64_t k = 0; k < nch; k++) {             /* each chunk from its offset */
      Value a = off[k];
      for (int64_t i = k * SCAN_CHUNK_ROWS; i < n && i < (k + 1) * SCAN_CHUNK_ROWS; i++) {
        Value v = load(x, base + i);
        if (s->inclusive) a = arith(I, NULL, OP_ADD, a, v);
        store(y, base + i, a);
        if (!s->inclusive) a = arith(I, NULL, OP_ADD, a, v);
      }
    }
    /* Y[i]'s bound: the included inputs' bounds, grown by the at most i + 2 nch + 2 additions
    ** that reach it, each rounding within 4 eps of a partial sum (|partial| <= sum |x|). */
    double sb = 0.0;
    for (int64_t i = 0; bx && i < n; i++) {
      if (s->inclusive) sb += bx[i];
      double q = (double)(i + 2 * nch + 2), e = eps_of(t), b = 0.0;
      if (sb > 0.0)
        b = dtype_is_int(t) || !isfinite(mag) ? INFINITY : (sb + q * (4.0 * e * mag + tiny_of(t))) * exp(4.0 * e * q);
      set_bound(y, base + i, b);
      if (!s->inclusive) sb += bx[i];
    }
  }
}

/* record H: the scalar's value into the ring of K values, at recorded % K. */
static void exec_history(Interp *I, Stmt *s) {
  FieldRT *h = field_of(I, s->a.decl), *sc = field_of(I, s->b.decl);
  int64_t k = (int64_t)(h->recorded % (uint64_t)h->cap[0]);
  store(h, k, load(sc, 0));
  if (h->tol || elem_tol(sc, 0) > 0.0) set_bound(h, k, elem_tol(sc, 0));   /* and its bound */
  h->recorded++;
}

/* append N (COUNT) map i, k { body }: COUNT new rows after the live ones (a dim's name in
** COUNT is its capacity), the body run for each, i the row, k 0.. within the new rows. When
** fewer than COUNT rows are free the ones that fit are added, and NAME_step() fails with
** CNP_EOVERFLOW after the statement (the rest of the call does not run). A reduction in the
** block is over the new rows, its lanes and chunks counted by k (as the map's own rows). */
static void exec_append(Interp *I, Stmt *s) {
  Decl *dim = s->over.decl;
  I->dims_as_cap = true;
  Value cv = eval(I, s->value);   /* a u64 count above INT64_MAX: more than any capacity */
  int64_t want = cv.t == DT_U64 && cv.u > (uint64_t)INT64_MAX ? INT64_MAX : conv(cv, DT_I64).i;
  I->dims_as_cap = false;
  int64_t live = I->dim_live[dim->index], room = I->dim_cap[dim->index] - live;
  int64_t add = want < 0 ? 0 : want > room ? room : want;
  I->append_dim = dim, I->append_end = live + add;
  exec_rows(I, s, live, add);                     /* a reduction's lanes and chunks by k */
  I->append_dim = NULL;
  I->dim_live[dim->index] = live + add;
  if (want > room && !I->status) I->status = -18, I->failed_step = I->step;   /* CNP_EOVERFLOW */
}

static void exec_step_stmt(Interp *I, Stmt *s) {
  switch (s->kind) {
  case ST_MAP: exec_map(I, s); return;
  case ST_COMPACT: exec_compact(I, s); return;
  case ST_SORT: exec_sort(I, s); return;
  case ST_OFFSETS: exec_offsets(I, s); return;
  case ST_SEGMENTS: exec_segments(I, s); return;
  case ST_SUM: exec_sum(I, s); return;
  case ST_COPY: exec_copy(I, s); return;
  case ST_RECORD: case ST_WAIT:
    return;
  case ST_ZERO:                                   /* all capacity rows, every component */
    for (int j = 0; j < s->list.n; j++) {
      FieldRT *f = field_of(I, s->list.v[j].decl);
      int64_t total = 1;
      for (int r = 0; r < f->rank; r++) total *= f->cap[r];
      memset(f->data, 0, (size_t)total * f->esize);
    }
    return;
  case ST_SWAP: {                                 /* the buffers exchanged */
    FieldRT *x = field_of(I, s->a.decl), *y = field_of(I, s->b.decl), t = *x;
    x->data = y->data, x->tol = y->tol, x->abssum = y->abssum, x->nterms = y->nterms;
    y->data = t.data, y->tol = t.tol, y->abssum = t.abssum, y->nterms = t.nterms;
    return;
  }
  case ST_REPEAT: {
    int64_t n = setup_int(I, s->value);
    for (int64_t r = 0; r < n && !halted(I); r++)
      for (Stmt *b = s->body; b && !halted(I); b = b->next) exec_step_stmt(I, b);
    return;
  }
  case ST_EVERY: {
    int64_t K = setup_int(I, s->value), J = s->value2 ? setup_int(I, s->value2) : 0;
    if (K >= 1 && I->step % K == J)
      for (Stmt *b = s->body; b && !halted(I); b = b->next) exec_step_stmt(I, b);
    return;
  }
  case ST_SCAN: exec_scan(I, s); return;
  case ST_HISTORY: exec_history(I, s); return;
  case ST_APPEND: exec_append(I, s); return;
  case ST_HALO: exec_halo(I, s); return;
  case ST_MIGRATE_TO: return;                    /* one rank: every row stays */
  case ST_DEPOSIT: exec_deposit(I, s); return;
  case ST_GATHER: exec_gather(I, s); return;
  case ST_FFT: exec_fft(I, s, false); return;
  case ST_IFFT: exec_fft(I, s, true); return;
  case ST_ALLREDUCE: return;   /* one rank: each scalar is its own combination */
  default:
    fail(I, s->loc, "the interpreter does not run %s statements", stmt_of(s->kind)->name);
  }
}

/* ------------------------------------------------------------------ files */

static bool rd(FILE *f, void *p, size_t n) { return fread(p, 1, n, f) == n; }

/* A 16-byte parameter slot -> Value of type t. */
static Value slot_value(const unsigned char *b, DType t) {
  Value v = {.t = t};
  switch (t) {
  case DT_BOOL: v.i = b[0] != 0; break;
  case DT_I32: { int32_t x; memcpy(&x, b, 4); v.i = x; break; }
  case DT_I64: memcpy(&v.i, b, 8); break;
  case DT_U64: memcpy(&v.u, b, 8); break;
  case DT_F16: { uint16_t h; memcpy(&h, b, 2); v.f = h2f(h); break; }
  case DT_F32: memcpy(&v.f, b, 4); break;
  case DT_F64: memcpy(&v.d, b, 8); break;
  case DT_C64: memcpy(&v.c64, b, 8); break;
  case DT_C128: memcpy(&v.c128, b, 16); break;
  default: break;
  }
  return v;
}

/* The output file: every dim's live extent, field (its live view, with the comparison
** tolerances the interpreter noted), history, snapshot, then the failed call and status. */
static int write_outputs(Interp *I, const char *out_path, FILE *diag) {
  FILE *out = fopen(out_path, "wb");
  if (!out) { fprintf(diag, "cnpc: error: cannot write '%s'\n", out_path); return 1; }
  fwrite("CNPOUT1", 1, 8, out);
  for (int k = 0; k < I->ndecl; k++) {
    Decl *d = I->decls[k];
    if (d->kind == DECL_DIM) fwrite(&I->dim_live[d->index], 8, 1, out);
    else if (d->kind == DECL_FIELD && d->history_of.name) {   /* the latest values, oldest first */
      FieldRT *f = &I->fields[k];
      uint64_t K = (uint64_t)f->cap[0], got = f->recorded < K ? f->recorded : K;
      int64_t nb = (int64_t)(got * f->esize), m = 0;
      fwrite(&nb, 8, 1, out);
      for (uint64_t j = 0; j < got; j++)
        fwrite(f->data + (size_t)((f->recorded - got + j) % K) * f->esize, f->esize, 1, out);
      m = f->tol ? (int64_t)got : 0;   /* the recorded scalars' bounds, in the same order */
      fwrite(&m, 8, 1, out);
      for (uint64_t j = 0; j < got && m; j++) fwrite(&f->tol[(f->recorded - got + j) % K], 8, 1, out);
    } else if (d->kind == DECL_FIELD) {
      FieldRT *f = &I->fields[k];
      int64_t comps = row_comps(f), cap = f->cap[f->rank - 1];
      int64_t live = f->dim ? I->dim_live[f->dim->index] : cap;
      int64_t nb = comps * live * (int64_t)f->esize;
      fwrite(&nb, 8, 1, out);
      for (int64_t c = 0; c < comps; c++)
        fwrite(f->data + (size_t)(c * cap) * f->esize, f->esize, (size_t)live, out);
      int64_t m = (f->tol || f->abssum) ? comps * live : 0;
      fwrite(&m, 8, 1, out);
      for (int64_t c = 0; c < comps && m; c++)
        for (int64_t i = 0; i < live; i++) {
          double t = elem_tol(f, c * cap + i);
          fwrite(&t, 8, 1, out);
        }
    } else if (d->kind == DECL_SNAPSHOT) {
      int64_t n = I->snap_n[d->index];
      fwrite(&n, 8, 1, out);
      if (n > 0) fwrite(I->snap[d->index], 1, (size_t)n, out);
    }
  }
  int64_t st = I->status;                           /* a failed call: its number and status */
  fwrite(&I->failed_step, 8, 1, out);
  fwrite(&st, 8, 1, out);
  int rc = fclose(out) == 0 ? 0 : 1;
  return rc;
}

int interp_run(Cnp *cc, const char *in_path, const char *out_path, FILE *diag) {
  Interp I0 = {.cc = cc, .cuda_order = cc->opt && cc->opt->interpret_cuda}, *I = &I0;
  ia_arena = &cc->arena;
  FILE *in = fopen(in_path, "rb");
  if (!in) { fprintf(diag, "cnpc: error: cannot open '%s'\n", in_path); return 1; }
  char magic[8];
  int64_t K = 0;
  if (!rd(in, magic, 8) || memcmp(magic, "CNPDATA1", 8) || !rd(in, &K, 8)) {
    fprintf(diag, "cnpc: error: '%s' is not a cnp data file\n", in_path);
    fclose(in);
    return 1;
  }
  for (Decl *d = cc->decls; d; d = d->next) I->ndecl++;
  I->decls = ia(((size_t)I->ndecl + 1) * sizeof *I->decls);
  I->fields = ia(((size_t)I->ndecl + 1) * sizeof *I->fields);
  I->dim_cap = ia(((size_t)cc->n_decl[DECL_DIM] + 1) * sizeof(int64_t));
  I->dim_live = ia(((size_t)cc->n_decl[DECL_DIM] + 1) * sizeof(int64_t));
  I->params = ia(((size_t)cc->n_decl[DECL_PARAM] + 1) * sizeof(Value));
  I->snap = ia(((size_t)cc->n_decl[DECL_SNAPSHOT] + 1) * sizeof *I->snap);
  I->snap_n = ia(((size_t)cc->n_decl[DECL_SNAPSHOT] + 1) * sizeof(int64_t));
  I->locals = ia(((size_t)cc->n_locals + 1) * sizeof(Value));
  I->lbnd = ia(((size_t)cc->n_locals + 1) * sizeof(double));
  I->plans = ia(((size_t)cc->n_decl[DECL_PLAN] + 1) * sizeof *I->plans);
  for (int k = 0; k < cc->n_decl[DECL_SNAPSHOT]; k++) I->snap_n[k] = -1;
  I->failed_step = -1;
  I->draws = ia(4096 * sizeof *I->draws);
  for (Decl *d = cc->decls; d; d = d->next)      /* steps in program order, each in source order */
    if (d->kind == DECL_STEP) {
      int first = I->ndraws;
      collect_draws(I, d->body, 4096);
      qsort(I->draws + first, (size_t)(I->ndraws - first), sizeof *I->draws, loc_cmp);
    }
  int k = 0;
  bool ok = true;
  unsigned char slot[16];
  for (Decl *d = cc->decls; d && ok; d = d->next, k++) {
    I->decls[k] = d;
    switch (d->kind) {
    case DECL_PARAM:
      if (d->setup) {
        ok = rd(in, slot, 16);
        I->params[d->index] = slot_value(slot, d->dtype);
      }
      break;
    case DECL_DIM:
      ok = rd(in, &I->dim_cap[d->index], 8) && rd(in, &I->dim_live[d->index], 8);
      break;
    case DECL_FIELD: {
      FieldRT *f = &I->fields[k];
      f->d = d;
      f->rank = d->shape.rank;
      f->esize = dtype_size(d->dtype);
      int64_t total = 1;
      for (int r = 0; r < f->rank; r++) total *= (f->cap[r] = setup_int(I, d->shape.ext[r]));
      Expr *last = d->shape.ext[f->rank - 1];
      if (last->kind == EX_NAME && last->ref.decl && last->ref.decl->kind == DECL_DIM) f->dim = last->ref.decl;
      f->data = ia((size_t)total * f->esize + 1);
      ok = rd(in, f->data, (size_t)total * f->esize);
      break;
    }
    case DECL_MPI: case DECL_MIRROR: case DECL_KERNEL:
      fprintf(diag, "cnpc: error: the interpreter does not run %s declarations\n", decl_kind_name(d->kind));
      fclose(in);
      return 1;
    default:
      break;
    }
  }
  if (!ok) {
    fprintf(diag, "cnpc: error: '%s' is too short for this program\n", in_path);
    fclose(in);
    return 1;
  }
  if (!grid_setup_ok(I, diag)) {   /* exit 3, as the difftest driver's failed setup */
    fclose(in);
    return 3;
  }
  for (int64_t step = 0; step < K && !halted(I); step++) {
    for (Decl *d = cc->decls; d; d = d->next)
      if (d->kind == DECL_PARAM && !d->setup) {
        if (!rd(in, slot, 16)) { fprintf(diag, "cnpc: error: '%s': no params for step %lld\n", in_path, (long long)step); fclose(in); return 1; }
        I->params[d->index] = slot_value(slot, d->dtype);
      }
    I->step = step;
    for (Decl *d = cc->decls; d && !halted(I); d = d->next)
      if (d->kind == DECL_STEP) {
        if (d->every) {                           /* runs on the calls c % K == J */
          int64_t ek = setup_int(I, d->every), ej = d->every_offset ? setup_int(I, d->every_offset) : 0;
          if (ek < 1 || step % ek != ej) continue;
        }
        for (Stmt *s = d->body; s && !halted(I); s = s->next) exec_step_stmt(I, s);
      }
  }
  fclose(in);
  if (I->failed) {
    fprintf(diag, "cnpc: interpreter: %s\n", I->err);
    return 1;
  }
  return write_outputs(I, out_path, diag);
}
