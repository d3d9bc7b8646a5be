/*
** interp_bound.c -- the reference interpreter's error bounds (interp.c; docs/robustness.md,
** "The semantics the interpreter states"): the bound each order-open element (floating
** scatter-adds, segment sums, atomic deposits, transforms) states, and the forward error
** analysis that carries bounds through maps into what they write, reduce and record.
*/
#define _POSIX_C_SOURCE 200809L
#include "interp_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ statements */

double eps_of(DType t) {
  switch (t) {
  case DT_F16: return 0x1p-11;
  case DT_F32: case DT_C64: return 0x1p-24;
  default: return 0x1p-53;
  }
}

/* |x| for the error bound; a NaN part counts 0 (it equals any NaN in the comparison, and
** must not make the bound of the other part NaN: a c64 scatter-add with a NaN real part) */
static double nn(double x) { return isnan(x) ? 0.0 : fabs(x); }
double magnitude(Value v) {
  switch (v.t) {
  case DT_C64: return nn(crealf(v.c64)) + nn(cimagf(v.c64));
  case DT_C128: return nn(creal(v.c128)) + nn(cimag(v.c128));
  default: return nn(as_double(v));
  }
}

/* Notes an order-open addition (scatter-add of floating values) for the error bound. */
void note_term(FieldRT *f, int64_t k, Value before, Value term) {
  if (!f->abssum) {
    int64_t total = 1;
    for (int r = 0; r < f->rank; r++) total *= f->cap[r];
    f->abssum = ia(((size_t)total) * sizeof(double));
    f->nterms = ia(((size_t)total) * sizeof(int64_t));
    if (!f->abssum || !f->nterms) return;
  }
  if (f->nterms[k] == 0) f->abssum[k] = magnitude(before);
  f->abssum[k] += magnitude(term);
  f->nterms[k]++;
}

/* The error bound of element e as the output file states it: its own (f->tol) plus that of
** its noted terms. An order-open element (noted terms) is inexact even when its bound is 0
** (all its terms zero): the sign of a zero sum is the order's (FFTW's -0 where the DFT gives
** +0, found/fft_negzero), so it states at least the least subnormal, a bound > 0, and the
** comparison of a bounded element is by value (-0 == +0), only exact ones bit for bit. */
double elem_tol(const FieldRT *f, int64_t e) {
  double t = f->tol ? f->tol[e] : 0;
  if (f->abssum && f->nterms[e]) {
    t += 2.0 * (double)(f->nterms[e] + 1) * eps_of(f->d->dtype) * f->abssum[e];
    if (!(t > 0.0)) t = 0x1p-1074;
  }
  return t;
}

/* ------------------------------------------------------------------ bounds through maps */

/* A map reading an inexact element (an f32 or atomic deposit's grid point, a gather's output,
** an fft's, a scatter-add's...) passes a bound on to what it writes and reduces
** (found/deposit_map_bound, found/ifft_bound): a first-order-free forward error analysis,
** each value's bound B an upper bound of |generated - interpreter's| given its inputs' bounds.
** Exact inputs give B = 0 (the operation is then bit for bit, as before). Sound rules only:
** -x, abs, real, imag, conj keep B; min / max give max(Ba, Bb) (1-Lipschitz); a + b gives
** Ba + Bb; a * b |a| Bb + |b| Ba + Ba Bb; a / b with b exact Ba / |b|; complex(x, y) Bx + By;
** select with an exact condition its arm's; each result then adds two roundings of its type
** (the two sides round different exact values: |fl(x') - fl(x)| <= |x' - x| + eps |x| +
** eps |x'|; taken as 4 eps (8 for complex) of the result, plus the least subnormal, with the
** carried B grown by 4 eps, margin over the exact 2 eps + eps^2). Anything else of an inexact
** value (a comparison, an integer, a cast to one, a call but those above, a non-finite value)
** is unbounded: INFINITY, which the comparison takes as "any value". The bound of a local is
** kept by its id; a branch on an inexact condition makes everything either branch writes
** unbounded. A reduction's lanes carry theirs the same way into the scalar. */
double tiny_of(DType t) {
  return t == DT_F16 ? 0x1p-24 : (t == DT_F32 || t == DT_C64) ? 0x1p-149 : 0x1p-1074;
}
bool fin(Value v) {
  switch (v.t) {
  case DT_C64: return isfinite(crealf(v.c64)) && isfinite(cimagf(v.c64));
  case DT_C128: return isfinite(creal(v.c128)) && isfinite(cimag(v.c128));
  default: return dtype_is_float(v.t) ? isfinite(as_double(v)) : true;
  }
}
/* b carried into a result r of type t (one more rounding to t). */
double rnd_b(DType t, double b, Value r) {
  if (b == 0.0) return 0.0;
  if ((!dtype_is_float(t) && !dtype_is_complex(t)) || !isfinite(b) || !fin(r)) return INFINITY;
  double k = dtype_is_complex(t) ? 8.0 : 4.0, e = eps_of(t);
  return b * (1.0 + k * e) + k * e * magnitude(r) + tiny_of(t);
}
/* The bound of e converted to t (eval_as(I, e, t)). */
double bound_as(Interp *I, Expr *e, DType t) {
  double b = expr_bound(I, e);
  if (b == 0.0 || t == e->type) return b;
  return rnd_b(t, b, eval_as(I, e, t));
}
static double call_bound(Interp *I, Expr *e) {
  Expr **a = e->args;
  DType t = e->type;
  switch (e->builtin) {
  case BI_SELECT: {
    if (expr_bound(I, a[0]) > 0.0) return INFINITY;
    return bound_as(I, eval(I, a[0]).i ? a[1] : a[2], t);
  }
  case BI_COMPLEX: {
    DType r = t == DT_C64 ? DT_F32 : DT_F64;
    double b = bound_as(I, a[0], r) + bound_as(I, a[1], r);
    return b == 0.0 ? 0.0 : rnd_b(t, b, eval(I, e));
  }
  case BI_REAL: case BI_IMAG: case BI_CONJ: case BI_ABS: {
    if (dtype_is_int(t)) return expr_bound(I, a[0]) > 0.0 ? INFINITY : 0.0;
    double b = expr_bound(I, a[0]);   /* |re z - re z'| <= |z - z'| (as |.|: |re| + |im|) */
    return b == 0.0 ? 0.0 : rnd_b(t, b, eval(I, e));
  }
  case BI_MIN: case BI_MAX: {
    double b = fmax(bound_as(I, a[0], t), bound_as(I, a[1], t));
    if (b == 0.0) return 0.0;
    if (!fin(eval_as(I, a[0], t)) || !fin(eval_as(I, a[1], t))) return INFINITY;
    return rnd_b(t, b, eval(I, e));
  }
  default: {
    for (int k = 0; k < e->nargs; k++)
      if (expr_bound(I, a[k]) > 0.0) return INFINITY;
    return 0.0;
  }
  }
}
double expr_bound(Interp *I, Expr *e) {
  if (I->failed) return 0.0;
  switch (e->kind) {
  case EX_NAME: {
    if (e->ref.local) {
      double b = I->lbnd ? I->lbnd[e->ref.local->id] : 0.0;
      return b == 0.0 || e->type == e->ref.local->type ? b : rnd_b(e->type, b, eval(I, e));
    }
    Decl *d = e->ref.decl;
    if (d->kind == DECL_FIELD && d->scalar) {
      double b = elem_tol(field_of(I, d), 0);
      return b == 0.0 || e->type == d->dtype ? b : rnd_b(e->type, b, eval(I, e));
    }
    return 0.0;
  }
  case EX_INDEX: {
    for (int k = 0; k < e->nargs; k++)
      if (expr_bound(I, e->args[k]) > 0.0) return INFINITY;
    FieldRT *f = field_of(I, e->ref.decl);
    if (!f->tol && !f->abssum) return 0.0;
    int64_t off = elem_offset(I, e, f);
    if (off < 0) return 0.0;
    double b = elem_tol(f, off);
    return b == 0.0 || e->type == f->d->dtype ? b : rnd_b(e->type, b, eval(I, e));
  }
  case EX_UNARY: {
    double b = e->op == OP_NOT || e->op == OP_BNOT ? expr_bound(I, e->args[0]) : bound_as(I, e->args[0], e->type);
    if (b == 0.0) return 0.0;
    if (e->op == OP_NOT || e->op == OP_BNOT || dtype_is_int(e->type)) return INFINITY;
    return rnd_b(e->type, b, eval(I, e));
  }
  case EX_BINARY: {
    Op op = e->op;
    if (op == OP_AND || op == OP_OR || (op >= OP_EQ && op <= OP_GE))
      return expr_bound(I, e->args[0]) > 0.0 || expr_bound(I, e->args[1]) > 0.0 ? INFINITY : 0.0;
    int ri = !dtype_is_complex(e->type) || (op != OP_MUL && op != OP_DIV) ? -1
             : !dtype_is_complex(e->args[1]->type)                     ? 1
             : op == OP_MUL && !dtype_is_complex(e->args[0]->type)      ? 0
                                                                        : -1;
    DType rt = e->type == DT_C64 ? DT_F32 : DT_F64;
    DType ta = ri == 0 ? rt : e->type, tb = ri == 1 ? rt : e->type;
    double ba = bound_as(I, e->args[0], ta), bb = bound_as(I, e->args[1], tb);
    if (ba == 0.0 && bb == 0.0) return 0.0;
    /* an unbounded operand: the result too (inf * 0 in the product rule would be a NaN,
    ** which fmax() below drops: found, fft_unbounded_scaled) */
    if (isinf(ba) || isinf(bb) || dtype_is_int(e->type) || e->type == DT_BOOL) return INFINITY;
    Value a = eval_as(I, e->args[0], ta), b = eval_as(I, e->args[1], tb), r = eval(I, e);
    if (!fin(a) || !fin(b) || !fin(r)) return INFINITY;
    double ma = magnitude(a), mb = magnitude(b);
    switch (op) {
    case OP_ADD: case OP_SUB: return rnd_b(e->type, ba + bb, r);
    /* (a carried bound that underflows to 0 stays inexact: found, an fft's -0 times 0.25) */
    case OP_MUL: return rnd_b(e->type, fmax(ma * bb + mb * ba + ba * bb, tiny_of(e->type)), r);
    case OP_DIV:
      if (bb == 0.0 && !dtype_is_complex(tb) && mb > 0.0) return rnd_b(e->type, fmax(ba / mb, tiny_of(e->type)), r);
      return INFINITY;
    default: return INFINITY;
    }
  }
  case EX_CALL: return call_bound(I, e);
  case EX_CAST: {
    double b = expr_bound(I, e->args[0]);
    return b == 0.0 ? 0.0 : rnd_b(e->cast_to, b, eval(I, e));
  }
  default: return 0.0;
  }
}

/* Element k of f's bound set to b (its noted terms folded into b by the caller). */
void set_bound(FieldRT *f, int64_t k, double b) {
  if (f->abssum) f->nterms[k] = 0;
  if (b == 0.0 && !f->tol) return;
  if (!f->tol) {
    int64_t total = 1;
    for (int r = 0; r < f->rank; r++) total *= f->cap[r];
    f->tol = ia(((size_t)total) * sizeof(double));
  }
  f->tol[k] = b;
}

/* Every element of f unbounded (a write whose index is inexact may be to any of them). */
void unbound_all(FieldRT *f) {
  int64_t total = 1;
  for (int r = 0; r < f->rank; r++) total *= f->cap[r];
  for (int64_t k = 0; k < total; k++) set_bound(f, k, INFINITY);
}

/* Whether an index of the element e names is inexact. */
bool index_inexact(Interp *I, Expr *e) {
  for (int k = 0; k < e->nargs; k++)
    if (expr_bound(I, e->args[k]) > 0.0) return true;
  return false;
}
