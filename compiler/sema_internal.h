/*
** sema_internal.h -- private header of the semantic checks (sema.c: the driver, names,
** hazard ops, declarations; sema_expr.c: expressions, folding, extents; sema_stmt.c: step
** statements; sema_hazard.c: the step graph, stream hazards, -Wcompact-omits). The public
** entry points are in cnpc.h (sema_check, sema_lookup, sema_type_text, sema_promote).
*/
#ifndef CNPC_SEMA_INTERNAL_H
#define CNPC_SEMA_INTERNAL_H

#include "cnpc.h"

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
  struct SemaRed { Decl *f; int op; Loc loc; } *red;   /* the scalars the current map reduces */
  int n_red, cap_red;       /* into, each once (an arena array, grown as needed) */
  /* the grid map being checked: its stencil reads and its writes, compared at its end
  ** (sema_grid.c; arena arrays, grown as needed) */
  struct GAcc { Decl *f; Loc loc; } *gst, *gwr;
  int n_gst, cap_gst, n_gwr, cap_gwr;
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

typedef Sym SymX;

/* How a map touches a field element. */
enum { MA_READ, MA_GATHER, MA_STORE, MA_ADD, MA_SCATTER, MA_REDUCE, MA__COUNT };
typedef struct MapAcc {
  Decl *f;
  int kind;
  Loc loc;
} MapAcc;

/* Scalars: i32 i64 u64 f32 f64 (reductions combine them exactly or in a documented order). */
static inline bool scalar_dtype(DType t) { return dtype_is_int(t) || t == DT_F32 || t == DT_F64; }

/* ======================================================================== sema.c */

SymX *sym_find(Sema *S, const char *name);
/* Resolve a global reference that must be one of the kinds in `mask` (K(DECL_...) bits);
** reports unknown names, uses before the definition and names of the wrong kind. */
Decl *resolve_found(Sema *S, Ref *r, SymX *s, unsigned mask);
Decl *resolve(Sema *S, Ref *r, unsigned mask);
void unknown(Sema *S, Ref *r, unsigned mask, bool locals);   /* "unknown ...; did you mean" */
const char *article(DeclKind k);                            /* "a" / "an" */
Local *find_local(Sema *S, const char *name);
void push_local(Sema *S, Local *l);
/* Record a hazard op (in program order) for sema_hazard.c; obj NULL: nothing. */
void hz_op(Sema *S, HzKind k, Decl *obj, const Loc *loc);
/* One access of field f by the current map: reports races between its accesses. */
void map_access(Sema *S, Decl *f, int kind, Loc loc);
Decl *field_ref(Sema *S, Ref *r);
bool int_field(Sema *S, Decl *f, Loc at, const char *role);
bool signed_field(Sema *S, Decl *f, Loc at, const char *role, bool i64_only);

/* ======================================================================== sema_expr.c */

bool is_num(DType t);
/* Type an expression; sets e->type (DT_VOID after an error, which silences follow-ups). */
DType check_expr(Sema *S, Expr *e);
/* Field element access F[a, ..., k]. `write` 0 read, 1 '=' store, 2 '+=' update. */
DType check_index(Sema *S, Expr *e, int write);
/* Fold a constant expression; false (after reporting) when it is not constant. */
bool fold(Sema *S, const Expr *e, bool *is_float, int64_t *iv, double *fv);
int64_t fold_f2i(double x, DType to);
void check_assign_type(Sema *S, Loc loc, DType to, const Expr *v, const char *what);
bool same_extent(const Expr *a, const Expr *b);
void extent_text(char *buf, size_t n, const Expr *e);
const Expr *last_extent(const Decl *f);
Decl *dim_of(const Decl *f);
bool check_extent_expr(Sema *S, Expr *e, const char *what);
void sema_number_draws(Cnp *cc);   /* the draw numbers in source order (after the checks) */
void check_const_positive(Sema *S, Expr *e, const char *what);
void check_shape(Sema *S, Shape *sh);

/* ======================================================================== sema_stmt.c */

void check_step(Sema *S, Decl *d);
void check_map_body(Sema *S, Stmt *body);     /* a map's statements (the scope is set) */

/* ======================================================================== sema_grid.c */

/* grid NAME = [..] boundary(..) length(..); fills d->grid (cnpc.h GridInfo). */
void check_grid(Sema *S, Decl *d);
/* A field whose last written extent names a grid: checks it and sets its storage shape,
** .grid_of, .grid_ncomp, .written; false (nothing done) for any other field. */
bool grid_field_shape(Sema *S, Decl *f);
/* map (j, i) in G { ... } (check_map hands it over). */
void check_grid_map(Sema *S, Stmt *s);
/* F[...] inside a grid map, after check_index resolved F (same contract as check_index). */
DType grid_check_index(Sema *S, Expr *e, Decl *f, int write);
/* F[...] of a field of a split grid outside a grid map: an error (use deposit / gather). */
DType grid_split_index(Sema *S, Expr *e, Decl *f);
/* allreduce S1, S2; (the scalars, hazard ops) and, after every step, each scalar's operator
** from the maps that reduce it (Stmt.red_ops; errors: never reduced, two operators). */
void check_allreduce(Sema *S, Stmt *s);
void check_allreduce_ops(Cnp *cc);
/* coord(i): true when e is a call of a grid function (checked here), else false. */
bool grid_check_call(Sema *S, Expr *e);
/* halo F; */
void check_halo(Sema *S, Stmt *s);

/* ======================================================================== sema_fft.c */

/* grid K = rfft(G); fills d->grid from G's (periodic axes; the last extent n/2 + 1). */
void check_rfft_grid(Sema *S, Decl *d);
/* fft REAL -> COMPLEX; / ifft COMPLEX -> REAL;  names, grids, dtypes, components, hazards. */
void check_fft(Sema *S, Stmt *s);
/* wave(idx) in a map over a spectral grid (f64); false for a call of another name. */
bool fft_check_wave(Sema *S, Expr *e);

/* ======================================================================== sema_hazard.c */

void check_graph(Sema *S);
void check_plans_built(Cnp *cc);
void check_compact_omits(Sema *S);

#endif /* CNPC_SEMA_INTERNAL_H */
