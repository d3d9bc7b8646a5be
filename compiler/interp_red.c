/*
** interp_red.c -- the reference interpreter's reductions into scalars: their identities,
** one step of each (sum, min=, max=) with its error bound, and the CUDA backend's block-tree
** order (--interpret-order=cuda). The host order (lanes and chunks) is run by exec_rows in
** interp.c, which calls these.
*/
#include "interp_internal.h"

#include <math.h>

/* ------------------------------------------------------------------ reductions */

/* A reduction of the running map into a scalar, in the host order docs/language.md fixes:
** rows cut into chunks of 4096; in a chunk, row i into lane i % 8 in row order; the eight
** lanes combined in lane order; the chunks' results in chunk order. */

/* The reduction's start: 0, or the largest (min=) / smallest (max=) value of the type. */
Value red_identity(DType t, int op) {
  Value v = {.t = t};
  bool mn = op == RED_MIN;
  switch (op == RED_SUM ? DT_VOID : t) {
  case DT_VOID: return conv(vint(DT_I64, 0), t);
  case DT_I32: v.i = mn ? INT32_MAX : INT32_MIN; break;
  case DT_I64: v.i = mn ? INT64_MAX : INT64_MIN; break;
  case DT_U64: v.u = mn ? UINT64_MAX : 0; break;
  case DT_F32: v.f = mn ? INFINITY : -INFINITY; break;
  default: v.d = mn ? INFINITY : -INFINITY; break;
  }
  return v;
}

/* acc op v: a sum in the scalar's type (integers wrap), or v if it is smaller (min=) / larger
** (max=) than acc, else acc (so a NaN v is skipped, and of two equal values acc stays). */
Value red_combine(Interp *I, int op, Value acc, Value v) {
  if (op == RED_SUM) return arith(I, NULL, OP_ADD, acc, v);
  return cmp_values(v, acc, op == RED_MIN ? OP_LT : OP_GT) ? v : acc;
}

void collect_reds(Interp *I, Stmt *s, RedRT *r, int cap) {
  for (; s; s = s->next) {
    if (s->kind == ST_REDUCE) {
      Decl *d = s->target->ref.decl;
      int k = 0;
      while (k < I->nreds && r[k].scalar != d) k++;
      if (k == I->nreds && k < cap) r[I->nreds++] = (RedRT){.scalar = d, .op = s->red};
    }
    collect_reds(I, s->body, r, cap);
    collect_reds(I, s->else_body, r, cap);
  }
}

RedRT *red_of(Interp *I, Decl *d) {
  for (int k = 0; k < I->nreds; k++)
    if (I->reds[k].scalar == d) return &I->reds[k];
  return NULL;
}

/* The bound of acc op v (a reduction's step) from theirs. */
double red_bound(int op, DType t, double ba, double bv, Value acc, Value v, Value r) {
  if (ba == 0.0 && bv == 0.0) return 0.0;
  if (!fin(acc) || !fin(v)) return INFINITY;
  return op == RED_SUM ? rnd_b(t, ba + bv, r) : rnd_b(t, fmax(ba, bv), r);
}


/* CUDA's order (docs/language.md, "Reductions"): each row's value from the identity, each
** block of RED_BLOCK rows combined in a fixed tree (pairs at distance RED_BLOCK / 2, ..., 1),
** then one block combines the blocks' partials: thread t the partials t, t + RED_BLOCK, ...
** in order from the identity, then the same tree. v[0..n), b[0..n): the rows' values and
** bounds; the result and its bound in r->total, r->tb. */
static void red_tree(Interp *I, RedRT *r, Value *v, double *b) {
  DType t = r->scalar->dtype;
  for (int s = RED_BLOCK / 2; s > 0; s >>= 1)
    for (int k = 0; k < s; k++) {
      Value nv = red_combine(I, r->op, v[k], v[k + s]);
      b[k] = red_bound(r->op, t, b[k], b[k + s], v[k], v[k + s], nv);
      v[k] = nv;
    }
}

void red_cuda(Interp *I, RedRT *r, const Value *rv, const double *rb, int64_t n) {
  DType t = r->scalar->dtype;
  Value id = red_identity(t, r->op), v[RED_BLOCK], acc[RED_BLOCK];
  double b[RED_BLOCK], ab[RED_BLOCK];
  int64_t nb = (n + RED_BLOCK - 1) / RED_BLOCK;
  for (int k = 0; k < RED_BLOCK; k++) acc[k] = id, ab[k] = 0.0;
  for (int64_t c = 0; c < nb; c++) {               /* block c's partial, into thread c % B */
    for (int k = 0; k < RED_BLOCK; k++) {
      int64_t i = c * RED_BLOCK + k;
      v[k] = i < n ? rv[i] : id, b[k] = i < n ? rb[i] : 0.0;
    }
    red_tree(I, r, v, b);
    int k = (int)(c % RED_BLOCK);
    Value nv = red_combine(I, r->op, acc[k], v[0]);
    ab[k] = red_bound(r->op, t, ab[k], b[0], acc[k], v[0], nv);
    acc[k] = nv;
  }
  red_tree(I, r, acc, ab);
  r->total = acc[0], r->tb = ab[0];
}

