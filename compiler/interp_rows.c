/*
** interp_rows.c -- the reference interpreter's row statements (interp.c): stable sort and
** compaction (rows and their bounds move together), offsets, segments and segment sums in
** row order, copies.
*/
#define _POSIX_C_SOURCE 200809L
#include "interp_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rows of a field over a dim: each row is the elements [c..., i] for all leading c. */
int64_t row_comps(const FieldRT *f) {
  int64_t n = 1;
  for (int r = 0; r + 1 < f->rank; r++) n *= f->cap[r];
  return n;
}

/* Permutes rows [0, n) of an array of comps x cap elements of es bytes. */
static void permute_array(unsigned char *data, size_t es, int64_t comps, int64_t cap, const int64_t *perm, int64_t n) {
  unsigned char *tmp = malloc((size_t)(n ? n : 1) * es);
  for (int64_t c = 0; c < comps; c++) {
    unsigned char *base = data + (size_t)(c * cap) * es;
    for (int64_t j = 0; j < n; j++) memcpy(tmp + (size_t)j * es, base + (size_t)perm[j] * es, es);
    memcpy(base, tmp, (size_t)n * es);
  }
  free(tmp);
}

/* Permutes rows [0, n) of f so that new row j is old row perm[j]; their bounds move with them. */
static void permute_rows(FieldRT *f, const int64_t *perm, int64_t n) {
  int64_t comps = row_comps(f), cap = f->cap[f->rank - 1];
  permute_array(f->data, f->esize, comps, cap, perm, n);
  if (f->tol) permute_array((unsigned char *)f->tol, sizeof(double), comps, cap, perm, n);
  if (f->abssum) {
    permute_array((unsigned char *)f->abssum, sizeof(double), comps, cap, perm, n);
    permute_array((unsigned char *)f->nterms, sizeof(int64_t), comps, cap, perm, n);
  }
}

typedef struct { int64_t key; uint64_t ukey; int64_t row; } SortRec;
static bool sort_unsigned;
static int sort_cmp(const void *a, const void *b) {
  const SortRec *x = a, *y = b;
  if (sort_unsigned) { if (x->ukey != y->ukey) return x->ukey < y->ukey ? -1 : 1; }
  else if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->row < y->row ? -1 : x->row > y->row;   /* stable */
}


void exec_sort(Interp *I, Stmt *s) {
  FieldRT *key = field_of(I, s->a.decl);
  int64_t n = I->dim_live[key->dim->index];
  SortRec *r = malloc((size_t)(n ? n : 1) * sizeof *r);
  for (int64_t i = 0; i < n; i++) {
    Value v = load(key, i);
    r[i] = (SortRec){v.i, v.u, i};
  }
  sort_unsigned = key->d->dtype == DT_U64;
  qsort(r, (size_t)n, sizeof *r, sort_cmp);
  int64_t *perm = malloc((size_t)(n ? n : 1) * sizeof *perm);
  for (int64_t i = 0; i < n; i++) perm[i] = r[i].row;
  permute_rows(key, perm, n);
  for (int j = 0; j < s->list.n; j++) permute_rows(field_of(I, s->list.v[j].decl), perm, n);
  free(perm);
  free(r);
}

void exec_offsets(Interp *I, Stmt *s) {
  FieldRT *key = field_of(I, s->a.decl), *off = field_of(I, s->b.decl);
  int64_t n = I->dim_live[key->dim->index], ncell = off->cap[off->rank - 1] - 1;
  for (int64_t i = 0; i < n; i++) {
    int64_t k = load(key, i).i;
    if (k < 0 || k >= ncell || (i && load(key, i - 1).i > k)) {
      fail(I, s->loc, "offsets: key '%s' unsorted or out of range", key->d->name);
      return;
    }
  }
  int64_t r = 0;
  for (int64_t c = 0; c <= ncell; c++) {
    while (r < n && load(key, r).i < c) r++;
    store(off, c, vint(DT_I64, r));
  }
}

void exec_segments(Interp *I, Stmt *s) {
  Decl *pd = s->a.decl;
  FieldRT *key = field_of(I, s->b.decl);
  PlanRT *p = &I->plans[pd->index];
  int64_t n = I->dim_live[key->dim->index];
  p->n_seg = setup_int(I, s->value);
  p->seg = ia((size_t)(n ? n : 1) * sizeof *p->seg);
  p->n = n;
  for (int64_t i = 0; i < n; i++) {
    int64_t k = load(key, i).i;
    if (k >= p->n_seg) {
      fail(I, s->loc, "segments: a key of '%s' >= the segment count", key->d->name);
      return;
    }
    p->seg[i] = k < 0 ? -1 : k;
  }
}

void exec_sum(Interp *I, Stmt *s) {
  PlanRT *p = &I->plans[s->a.decl->index];
  FieldRT *val = field_of(I, s->list.v[0].decl), *out = field_of(I, s->b.decl);
  if (!p->seg) { fail(I, s->loc, "sum over plan '%s' before it is built", s->a.decl->name); return; }
  DType acc = dtype_sum_acc(val->d->dtype);
  int64_t comps = row_comps(val), vcap = val->cap[val->rank - 1], ocap = out->cap[out->rank - 1];
  int64_t total = comps * ocap;
  if (!out->tol) out->tol = ia(((size_t)total) * sizeof(double));
  for (int64_t c = 0; c < comps; c++)
    for (int64_t g = 0; g < p->n_seg; g++) {
      Value sum = conv(vint(DT_I64, 0), acc);
      double mag = 0, inb = 0;
      int64_t nt = 0;
      for (int64_t i = 0; i < p->n; i++)
        if (p->seg[i] == g) {
          Value x = conv(load(val, c * vcap + i), acc);
          sum = arith(I, s->value ? s->value : NULL, OP_ADD, sum, x);
          mag += magnitude(x);
          inb += elem_tol(val, c * vcap + i);   /* the values' own bounds add up */
          nt++;
        }
      store(out, c * ocap + g, conv(sum, out->d->dtype));
      out->tol[c * ocap + g] = 2.0 * (double)nt * eps_of(acc) * mag +
                               (inb == 0.0 ? 0.0 : inb * (1.0 + 4.0 * (double)(nt + 1) * eps_of(acc)));
    }
}

void exec_copy(Interp *I, Stmt *s) {
  FieldRT *f = field_of(I, s->b.decl);
  Decl *sd = s->a.decl;
  int64_t comps = row_comps(f), cap = f->cap[f->rank - 1];
  int64_t live = f->dim ? I->dim_live[f->dim->index] : cap;
  size_t nb = (size_t)(comps * live) * f->esize;
  I->snap[sd->index] = ia(nb ? nb : 1);
  for (int64_t c = 0; c < comps; c++)
    memcpy(I->snap[sd->index] + (size_t)(c * live) * f->esize, f->data + (size_t)(c * cap) * f->esize,
           (size_t)live * f->esize);
  I->snap_n[sd->index] = (int64_t)nb;
}

void exec_compact(Interp *I, Stmt *s) {
  FieldRT *m = field_of(I, s->a.decl);
  Decl *dim = m->dim;
  int64_t n = I->dim_live[dim->index], k = 0;
  int64_t *perm = malloc((size_t)(n ? n : 1) * sizeof *perm);
  for (int64_t i = 0; i < n; i++)
    if (m->data[i]) perm[k++] = i;
  for (int j = 0; j < s->list.n; j++) permute_rows(field_of(I, s->list.v[j].decl), perm, k);
  free(perm);
  I->dim_live[dim->index] = k;
}
