/*
** gen.h -- private header of the code generator (gen.c, lower.c, fuse.c, emit.c, gen_expr.c,
** gen_header.c, gen_setup.c, gen_unit.c, gen_host.c, gen_cuda.c, gen_dot.c, gen_manifest.c).
** The front end's AST (cnpc.h) is read, never modified.
**
** Flow: gen_emit() -> lower_unit() (steps -> ordered GenOps, maps grouped by fuse_maps())
** -> gen_header()/gen_unit()/gen_dot()/gen_manifest() fill template placeholders
** -> emit_write() (written only when the content changes).
*/
#ifndef CNPC_GEN_H
#define CNPC_GEN_H

#include "cnpc.h"

/* ======================================================================== emit.c */

/* A growing text buffer (malloc'd: output text is not kept in the arena). */
typedef struct Buf {
  char *s;
  size_t n, cap;
  int indent;             /* spaces at the start of lines written by buf_line() */
} Buf;

void buf_free(Buf *b);
void buf_put(Buf *b, const char *s, size_t n);
void buf_puts(Buf *b, const char *s);
void buf_printf(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One line at the current indent, newline added. */
void buf_line(Buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *buf_str(Buf *b);            /* NUL-terminated contents ("" when empty) */

/* Template expansion: every {{name}} of the template must have a value, and every value
** must be used (else an internal error). */
typedef struct TmplVar {
  const char *name;
  const char *value;
} TmplVar;
void emit_template(Buf *out, const char *tmpl_name, const TmplVar *vars, int n_vars);

/* Embedded templates (templates.c, generated at build time from templates/). */
typedef struct CnpTemplate {
  const char *name;       /* "header.h", "unit.c", "unit.cu" */
  const char *text;
} CnpTemplate;
extern const CnpTemplate cnp_templates[];
extern const int cnp_n_templates;

/* Write `b` to path unless the file already has exactly that content. 0 on success. */
int emit_write(Cnp *cc, const char *path, Buf *b);
/* The file name of a path (after its last '/'): the one base_name() of the compiler. */
const char *base_name(const char *path);

/* ======================================================================== lower.c */

typedef enum GenOpKind {
  GOP_MAP,                /* a fused group of maps: one loop / one kernel */
  GOP_STMT,               /* any other step statement */
} GenOpKind;

typedef struct GenOp {
  GenOpKind kind;
  Stmt *stmt;             /* GOP_STMT: the statement; GOP_MAP: the first map */
  Stmt **maps;            /* GOP_MAP: the maps of the group, in order */
  int n_maps;
  int kernel;             /* GOP_MAP: kernel number, 0.. in program order */
  Stmt *mask_of;          /* GOP_MAP: a following compaction whose mask this kernel writes */
  /* GOP_MAP, host fast path "compact + sort by a bounded key" (see lower.c): the sort that
  ** follows mask_of, the plan whose segments(KEY, RANGE) bounds its key. */
  Stmt *fused_sort;
  Decl *fused_plan;
  bool seg_inline;        /* GOP_STMT segments(...) right after such a sort: offsets known */
  /* GOP_MAP with fused_sort: "dry" first pass (lower.c, find_fast_path): the first pass
  ** computes the maps' values only to store the mask, the fields nothing moves and the keys;
  ** the scatter pass computes them again and writes them straight into the double buffers. */
  bool dry;
  /* GOP_MAP with fused_sort: the `sum PLAN (VALUES) -> OUT` right after segments(...), done
  ** while the kernel scatters (lower.c, find_fast_path), or NULL. */
  Stmt *fused_sum;
  int mpi_id;             /* GOP_STMT exchange/migrate: number among those, program order */
  /* CUDA graph hints (lower.c, find_graph_hints). GOP_STMT sort: the plan whose
  ** segments(KEY, RANGE) bounds the key (the radix sort covers RANGE's bits), or NULL.
  ** GOP_STMT segments(...): right after a sort by its key (the plan needs no sort). */
  Decl *sort_bound;
  bool seg_sorted;
} GenOp;

typedef struct GenStep {
  Decl *decl;
  GenOp *ops;
  int n_ops;
} GenStep;

typedef struct GenUnit {
  Cnp *cc;
  const CnpOptions *opt;
  const char *name;       /* pipeline name: prefix of the API */
  const char *upper;      /* NAME in upper case (macros, guard) */
  const char *stem;       /* output base name (file names) */
  const char *src_path;   /* the input path as given (banner, #line) */
  GenStep *steps;
  int n_steps;
  int n_kernels;
  Buf explain;            /* --explain-fusion text */
  bool uses_mpi;          /* mpi staging, exchange or migrate: the pipeline needs a comm */
  Decl *kernel_decl[64];  /* hand-written kernels and their sources (read by lower.c) */
  const char *kernel_src[64];
  int n_kernel_src;
  bool cuda_unit;         /* gen_unit(): emitting the CUDA unit (complex math names differ) */
} GenUnit;

/* Source text of a hand-written kernel (NULL if unknown). */
const char *lower_kernel_source(GenUnit *u, Decl *kernel);
/* Build the ordered step list; 0 on success (else diagnostics were reported). */
int lower_unit(GenUnit *u);
/* The GOP_MAP whose compact + sort fast path computes the offsets of `plan`, or NULL. */
GenOp *lower_plan_producer(GenUnit *u, Decl *plan);
/* Could `b` join the fused group maps[0..n)? NULL if yes, else the reason (arena text). */
const char *fuse_check(GenUnit *u, Stmt **maps, int n, Stmt *b);
/* The elements a fused group holds per row when the fields it writes live in locals: one
** entry per (field written by the group, constant component) it accesses. */
typedef struct RowVal {
  Decl *f;
  int64_t comp;           /* linear component: 0 for rank 1; c for F[c, i] */
  bool written, read;
} RowVal;
typedef struct RowVals {
  RowVal v[64];
  int n;
  int cost;               /* operations per row (a call counts 8): the price of recomputing */
} RowVals;
/* Fills rv; NULL, or why the written fields of the group cannot live in locals per row. */
const char *fuse_row_values(GenUnit *u, GenOp *op, RowVals *rv);
/* The linear component of a field access F[c..., i] with constant components. */
bool fuse_row_comp(const Expr *e, int64_t *comp);
/* Components of f (the product of its leading extents) when those are constants. */
bool fuse_const_ncomp(Decl *f, int64_t *n);
/* Does the expression / statement list read or write field `f`? */
bool gen_stmts_touch(Stmt *s, Decl *f, bool *writes, bool *gathers);

/* ======================================================================== emitters: shared declarations */

/* What one fused kernel uses: fields, params, dims (the argument struct). */
typedef struct KUse {
  Decl **fields;          /* arena arrays, grown as needed (a map may use any number) */
  int n_fields, cap_fields;
  Decl **params;
  int n_params, cap_params;
  Decl **dims;
  int n_dims, cap_dims;
  Arena *arena;
} KUse;

typedef struct KCtx {
  GenUnit *u;
  bool cuda;              /* emitting the body of a __global__ kernel */
  Stmt *map;              /* the map whose body is being emitted */
  DType lit;              /* float type untyped literals here adapt to (0.1f, 2.0), or DT_VOID */
  const RowVals *rows;    /* dry pass: the elements of written fields live in locals r_* */
} KCtx;

/* gen_expr.c: types, literals, locations, setup-time expressions, expressions, map bodies. */
const char *gen_ctype(DType t);                 /* element storage: "double", "uint16_t" (f16), ... */
const char *gen_vtype(DType t);                 /* values (lets, params): "float" for f16 */
const char *gen_apitype(DType t);               /* the C API's params: "cnp_complex128", ... */
const char *gen_cnp_dtype(DType t);             /* "CNP_FLOAT64", ... */
bool gen_decl_is_dim_extent(Decl *f, Decl **dim);
double half_round(double v);
Decl *mirror_of(GenUnit *u, Decl *f);
const char *live_extent(GenUnit *u, Decl *f);
const char *src_line(GenUnit *u, Loc loc);
void comment_loc(GenUnit *u, Buf *b, Loc loc);
void line_dir(GenUnit *u, Buf *b, Loc loc);
void line_back(GenUnit *u, Buf *b);
void fmt_float(Buf *b, double v, DType t);
void fmt_int(Buf *b, int64_t v, DType t);
void setup_expr(GenUnit *u, Buf *b, Expr *e, const char *pfx);
const char *setup_str(GenUnit *u, Expr *e, const char *pfx);
void setup_expr_checked(GenUnit *u, Buf *b, Expr *e);
bool extent_computed(Expr *e);
const char *expr_src(GenUnit *u, Expr *e);
const char *row_name(GenUnit *u, Decl *f, int64_t comp);
bool signed_int(DType t);
void group_body(KCtx *k, Buf *b, GenOp *op);
void group_use(GenUnit *u, GenOp *op, KUse *use);
void kernel_args(GenUnit *u, Buf *b, GenOp *op, KUse *use, bool cuda);
void kernel_locals(Buf *b, KUse *use);
const char *cstr(GenUnit *u, const char *s);
void try_call(GenUnit *u, Buf *b, Loc loc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void list_views(GenUnit *u, Buf *b, RefList *l);

/* gen_host.c: host (OpenMP) kernels, the compact + sort fast path. */
void kernel_host(GenUnit *u, Buf *b, GenOp *op, KUse *use);
void kernel_host_fused(GenUnit *u, Buf *b, GenOp *op, KUse *use);
GenOp *fused_owner(GenUnit *u, Stmt *s);
void inline_sum(GenUnit *u, Buf *b, Stmt *s);

/* gen_cuda.c: CUDA kernels and graphs. */
void kernel_cuda(GenUnit *u, Buf *b, GenOp *op, KUse *use);
bool graph_step(GenUnit *u, GenStep *gs, int *end);
bool unit_graph_pulls(GenUnit *u);
void gen_graphs(GenUnit *u, Buf *fields, Buf *funcs, Buf *setup, Buf *teardown);

/* gen_unit.c: the units NAME.c / NAME.cu. */
void gen_unit(GenUnit *u, Buf *out, bool cuda);
Stmt *first_call(GenUnit *u, Decl *k);
const char *exchanged(GenUnit *u, const Stmt *s);
const char *param_value(GenUnit *u, Decl *d, const char *v);
bool join_source(GenUnit *u, int s);
bool ws_shared(GenUnit *u);
const char *api_types(GenUnit *u);

/* gen_setup.c: setup and teardown bodies. */
void gen_setup_checks(GenUnit *u, Buf *b);
void gen_setup_body(GenUnit *u, Buf *b, bool cuda);
void gen_teardown_body(GenUnit *u, Buf *b);

/* gen_header.c: NAME.h. */
void gen_header(GenUnit *u, Buf *out);
const char *banner(GenUnit *u);
const char *param_cname(GenUnit *u, const Decl *d);
const char *step_params(GenUnit *u, bool internal, bool call);

/* ======================================================================== gen_dot.c */

void gen_dot(GenUnit *u, Buf *out);

/* gen_manifest.c: NAME.json (--emit=manifest). */
void gen_manifest(GenUnit *u, Buf *b);

#endif /* CNPC_GEN_H */
