/*
** interp_internal.h -- private header of the reference interpreter (cnpc --interpret,
** docs/robustness.md): interp.c (values, storage, expressions, maps and the other step
** statements, the files) and interp_grid.c (grids: stencil offsets, coord() and wave(),
** halo, deposit and gather, fft and ifft). The entry point is interp_run in cnpc.h.
*/
#ifndef CNPC_INTERP_INTERNAL_H
#define CNPC_INTERP_INTERNAL_H

#include "cnpc.h"

#include <complex.h>
#undef I                  /* complex.h's imaginary unit: I is the interpreter here */
#include <stdio.h>

typedef struct Value {
  DType t;
  union {
    int64_t i;            /* bool (0/1), i32, i64 */
    uint64_t u;           /* u64 */
    float f;              /* f16 (a float, not rounded yet unless it comes from storage), f32 */
    double d;             /* f64 */
    float complex c64;
    double complex c128;
  };
} Value;

typedef struct FieldRT {
  Decl *d;
  int64_t cap[8];         /* capacity extents */
  int rank;
  Decl *dim;              /* the dim of the last extent (its live count), or NULL */
  size_t esize;
  unsigned char *data;
  double *tol;            /* error bounds (order-open elements), NULL if none */
  double *abssum;         /* sum of |terms| per element (floating scatter-adds) */
  int64_t *nterms;
  uint64_t recorded;      /* a history: values recorded so far (its ring holds the last K) */
} FieldRT;

typedef struct PlanRT { int64_t n_seg; int64_t *seg; int64_t n; } PlanRT;   /* segment of each row, -1 dropped */

/* A reduction of the running map into a scalar (interp_red.c): the eight lanes of the host
** order, the running total, and their error bounds. */
enum { RED_CHUNK = 4096, RED_LANES = 8, RED_BLOCK = 256 };
typedef struct RedRT { Decl *scalar; int op; Value lane[RED_LANES], total; double lb[RED_LANES], tb; } RedRT;

typedef struct Interp {
  Cnp *cc;
  int ndecl;
  Decl **decls;
  FieldRT *fields;        /* per decl index in decls[] (only kind FIELD used) */
  int64_t *dim_cap, *dim_live;
  Value *params;
  unsigned char **snap;   /* latest copy per snapshot decl */
  int64_t *snap_n;
  Value *locals;          /* by Local id */
  double *lbnd;           /* and their error bounds (interp.c, "bounds through maps") */
  int uncertain;          /* inside a branch taken on an inexact condition: all unbounded */
  char err[512];
  bool failed;
  int64_t step;           /* the step counter: NAME_step() calls before this one */
  int64_t row;            /* the row of the map being run (the draws' counter) */
  int64_t lane_row;       /* its place among the map's rows (an append's k): the lane */
  bool dims_as_cap;       /* evaluating an append's COUNT: a dim's name is its capacity */
  Decl *append_dim;       /* running an append's body: its rows up to append_end are valid */
  int64_t append_end;
  struct RedRT *reds;     /* the reductions of the map being run */
  bool cuda_order;        /* --interpret-order=cuda: each row from the identity, then the
                          ** CUDA backend's block tree (interp.c, red_cuda) */
  int nreds;
  Expr **draws;           /* every draw call, in source order: its index is its draw number */
  int ndraws;
  Stmt *gmap;             /* the grid map being run (map (j, i) in G), or NULL */
  int status;             /* a failed NAME_step(): its cnp_status (0: none failed) */
  int64_t failed_step;    /* and its call number */
  PlanRT *plans;          /* per plan decl (interp_rows.c) */
} Interp;

static inline Value vint(DType t, int64_t i) { Value v = {.t = t}; v.i = i; return v; }
static inline bool is_sint(DType t) { return t == DT_I32 || t == DT_I64; }

/* interp_value.c */
float h2f(uint16_t h);                                /* binary16 bits -> float (exact) */
float hround(double x);                               /* x rounded to the nearest f16 */
double as_double(Value v);
Value conv(Value v, DType t);                         /* v converted to t (docs/language.md) */
Value load(const FieldRT *f, int64_t k);              /* element k of f's storage */
void store(FieldRT *f, int64_t k, Value v);           /* (rounded to f's dtype) */

/* interp.c */
void *ia(size_t n);                                   /* zeroed, freed with the interpreter */
void fail(Interp *I, Loc at, const char *fmt, const char *a);   /* the first error stops it */
int64_t setup_int(Interp *I, Expr *e);                /* a setup-time integer expression */
FieldRT *field_of(Interp *I, Decl *d);
Value eval(Interp *I, Expr *e);
Value arith(Interp *I, Expr *e, Op op, Value a, Value b);   /* a op b with the language's rules */
int cmp_values(Value a, Value b, Op op);              /* a op b, a comparison */

/* interp_red.c */
Value red_identity(DType t, int op);                 /* 0, or the type's largest / smallest */
Value red_combine(Interp *I, int op, Value acc, Value v);   /* one step: acc op v */
double red_bound(int op, DType t, double ba, double bv, Value acc, Value v, Value r);
void collect_reds(Interp *I, Stmt *s, RedRT *r, int cap);   /* a map's reductions, once each */
RedRT *red_of(Interp *I, Decl *d);
void red_cuda(Interp *I, RedRT *r, const Value *rv, const double *rb, int64_t n);   /* CUDA's order */
Value eval_as(Interp *I, Expr *e, DType t);           /* e's value converted to t */
int64_t elem_offset(Interp *I, Expr *e, FieldRT *f);  /* the element F[...] reads or writes */

/* interp_bound.c */
void note_term(FieldRT *f, int64_t k, Value before, Value term);   /* an order-open term */
double elem_tol(const FieldRT *f, int64_t e);         /* element e's error bound */
void set_bound(FieldRT *f, int64_t k, double b);      /* element k's bound is b (terms dropped) */
void unbound_all(FieldRT *f);                         /* every element unbounded */
double eps_of(DType t);                               /* unit roundoff of t's arithmetic */
double tiny_of(DType t);                              /* least subnormal of t */
double magnitude(Value v);
bool fin(Value v);                                    /* finite (every part) */
double rnd_b(DType t, double b, Value r);             /* b plus the roundings of a result r */
double expr_bound(Interp *I, Expr *e);                /* the bound carried into e's value */
double bound_as(Interp *I, Expr *e, DType t);
bool index_inexact(Interp *I, Expr *e);               /* an index computed from inexact values */

/* interp_rows.c */
int64_t row_comps(const FieldRT *f);
void exec_sort(Interp *I, Stmt *s);
void exec_offsets(Interp *I, Stmt *s);
void exec_segments(Interp *I, Stmt *s);
void exec_sum(Interp *I, Stmt *s);
void exec_copy(Interp *I, Stmt *s);
void exec_compact(Interp *I, Stmt *s);

/* interp_grid.c */
int64_t grid_offset(Interp *I, Expr *e, FieldRT *f);  /* F[c.., j, i] of a grid field, or -1 */
bool grid_fn_value(Interp *I, Expr *e, Value *out);       /* wave(i), coord(i) in a grid map */
bool grid_setup_ok(Interp *I, FILE *diag);            /* setup's checks of the grids */
void exec_halo(Interp *I, Stmt *s);
void exec_deposit(Interp *I, Stmt *s);
void exec_gather(Interp *I, Stmt *s);
void exec_fft(Interp *I, Stmt *s, bool inverse);

#endif
