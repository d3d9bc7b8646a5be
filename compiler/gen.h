/*
** gen.h -- private header of the code generator (gen.c, lower.c, fuse.c, emit.c,
** gen_c.c, gen_dot.c). The front end's AST (cnpc.h) is read, never modified.
**
** Flow: gen_emit() -> lower_unit() (steps -> ordered GenOps, maps grouped by fuse_maps())
** -> gen_header()/gen_unit_c()/gen_unit_cuda()/gen_dot() fill template placeholders
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

/* ======================================================================== gen_c.c */

void gen_header(GenUnit *u, Buf *out);
void gen_unit(GenUnit *u, Buf *out, bool cuda);

/* ======================================================================== gen_dot.c */

void gen_dot(GenUnit *u, Buf *out);

/* Helpers shared by the emitters (gen_c.c). */
const char *gen_ctype(DType t);                 /* element storage: "double", "uint16_t" (f16), ... */
const char *gen_vtype(DType t);                 /* values (lets, params): "float" for f16 */
const char *gen_apitype(DType t);               /* the C API's params: "cnp_complex128", ... */
const char *gen_cnp_dtype(DType t);             /* "CNP_FLOAT64", ... */
bool gen_decl_is_dim_extent(Decl *f, Decl **dim);

/* gen_manifest.c: NAME.json (--emit=manifest). */
void gen_manifest(GenUnit *u, Buf *b);

/* gen_fortran.c: NAME_cnp.f90 and NAME_cnp_layout.c (--emit=fortran); gen_cxx.c: NAME.hpp
** (--emit=cxx). docs/interfaces.md. */
void gen_fortran(GenUnit *u, Buf *b);
void gen_fortran_c(GenUnit *u, Buf *b);
void gen_cxx(GenUnit *u, Buf *b);

#endif /* CNPC_GEN_H */
