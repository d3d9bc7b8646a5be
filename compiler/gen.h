/*
** gen.h -- private header of the code generator (gen.c, lower.c, fuse.c, emit.c, gen_expr.c,
** gen_common.c, gen_header.c, gen_setup.c, gen_unit.c, gen_step.c, gen_host.c, gen_cuda.c, gen_dot.c,
** gen_manifest.c). The front end's AST (cnpc.h) is read, never modified.
**
** Flow: gen_emit() -> lower_unit() (steps -> ordered GenOps, maps grouped by fuse_maps();
** lower_decide() stores graph eligibility, workspace order and counts in the IR) -> for each
** output: gen_header() / gen_unit(u, target) / gen_dot() / gen_manifest() fill templates
** -> emit_write() (written only when the content changes). docs/architecture.md, "The code
** generator".
*/
#ifndef CNPC_GEN_H
#define CNPC_GEN_H

#include "cnpc.h"

#include <stdarg.h>

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
/* Section `section` of a snippet template (templates/NAME.tmpl: a line "%% section" opens each
** section, up to the next; "%%#" lines are comments). Line by line: a line that is exactly
** {{name}} inserts that value verbatim (a block the caller built, "" or ending in a newline);
** a line that starts with {{?name}} is kept only when the value of name is not "", one that
** starts with {{!name}} only when it is ""; any other line gets b->indent spaces (unless
** empty), its {{placeholders}} filled in, and a newline. Same checks as emit_template(). */
void emit_snippet(Buf *b, const char *tmpl_name, const char *section, const TmplVar *vars,
                  int n_vars);
/* The skeleton template with each placeholder named after a section of template `part`
** replaced by that section's text without its last newline (every section used once or
** more), then expanded as
** emit_template() does: templates/unit.tmpl with unit_host.tmpl or unit_cuda.tmpl. */
void emit_unit(Buf *out, const char *skeleton, const char *part, const TmplVar *vars, int n_vars);
#define EMIT_SNIPPET(b, tmpl, section, ...)                                                        \
  do {                                                                                           \
    const TmplVar snippet_vars_[] = {__VA_ARGS__};                                               \
    emit_snippet((b), (tmpl), (section), snippet_vars_,                                          \
                 (int)(sizeof snippet_vars_ / sizeof snippet_vars_[0]));                         \
  } while (0)

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
/* The helper-name stem of an integer operator (templates/int.tmpl: cnp_g_div_i64, ...). */
const char *int_op_name(int op);

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
  int scan_id;            /* GOP_STMT scan: number among the scans, program order (p->sp_N) */
  /* Host scan fusion (lower.c, find_scan_fusion): GOP_MAP: the scan right after it whose
  ** chunk totals (pass 1) its host loop computes as it writes the scanned field; GOP_STMT
  ** scan: the kernel that did so (the host then runs passes 2 and 3 only), or NULL. */
  struct GenOp *scan_fused;
  struct GenOp *scan_by;
  int fft_id;             /* GOP_STMT fft/ifft: its plan p->fft_N (GenUnit.fft) */
  int pg_id;              /* GOP_STMT deposit/gather: its particle-grid plan (p->pg_N, gen_pgrid.c) */
  /* CUDA graph hints (lower.c, find_graph_hints). GOP_STMT sort: the plan whose
  ** segments(KEY, RANGE) bounds the key (the radix sort covers RANGE's bits), or NULL.
  ** GOP_STMT segments(...): right after a sort by its key (the plan needs no sort). */
  Decl *sort_bound;
  bool seg_sorted;
  /* lower.c (lower_decide): what one direct run of the op counts in p->stats: launches
  ** (-1: one per component of data-dependent count) and host synchronizations on CUDA. */
  int launches;
  int syncs;
} GenOp;

/* Dims the CUDA graphs read (kernel extents) or compact; compacted[] marks the latter. */
typedef struct GDims {
  Decl *d[32];
  bool compacted[32];
  int n;
} GDims;

typedef struct GenStep {
  Decl *decl;
  GenOp *ops;
  int n_ops;
  /* lower.c (lower_decide): the decisions the emitters print. */
  bool graph;             /* CUDA units replay ops [0, graph_end) as one CUDA graph; the ops
                          ** after it (records) run directly after the graph launch */
  int graph_end;
  GDims gdims;            /* dims its graph reads or compacts */
  bool uses_ws;           /* a statement uses the workspace p->ws (StmtInfo.ws) */
  bool ws_order;          /* ... and waits for / records ws_ev (steps on two streams use it) */
  bool reads_extents;     /* run directly, it reads live extents on the host */
  bool first_on_stream;   /* the first step on its stream (cross-call joins wait here) */
  int launches;           /* p->stats.launches of one run (-1: data-dependent) */
  int syncs;              /* host synchronizations of one run on CUDA, direct */
  int graph_launches;     /* ... when replayed as a graph (one graph launch + its tail) */
  bool graph_multi;       /* its graph holds a repeat (unrolled) or the unit swaps: one graph
                          ** per buffer state, kernel nodes kept in lists (gen_cuda.c) */
  bool graph_append;      /* its graph appends rows: the count clamped on the device */
  int graph_blocks;       /* `every` blocks in its graph (at most 3): one graph per pattern
                          ** of the blocks due, 1 << graph_blocks per buffer state */
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
  bool uses_mpi;          /* mpi staging, exchange or migrate, split grids: the pipeline has a comm */
  bool mpi_required;      /* mpi staging, exchange or migrate: setup fails without cfg.mpi_fcomm
                          ** (split grids alone run on one rank without it: p->comm NULL) */
  bool split;             /* some grid is split over the ranks (gen_grid.c: grid_split_*) */
  bool allreduce;         /* some `allreduce` (host only; without cfg.mpi_fcomm: one rank) */
  const char **kernel_src; /* hand-written kernels' sources by Decl.index (read by lower.c) */
  /* lower.c (lower_decide): unit-wide decisions. */
  GDims gdims;            /* dims of all CUDA graphs */
  bool any_graph;         /* some step is replayed as a CUDA graph */
  bool graph_pulls;       /* some graph compacts a dim: its live extent then lives on the device */
  bool ws_shared;         /* steps on two or more streams use the workspace */
  int graph_states;       /* buffer states a graphed step is captured in at most (swap: 4, else 1) */
  bool graph_append;      /* some graph appends: the device's overflow flag, read by sync */
  /* gen_fft.c: the FFT plans, one per (spectral grid, real dtype, components) the fft/ifft
  ** statements transform; real: the first real field seen (its storage shape gives the
  ** plan's), first its statement (named by a setup failure), inverse: some ifft uses it. */
  struct GenFft { Decl *grid, *real; DType dtype; bool inverse; Stmt *first; } *fft;
  int n_fft, fft_cap;     /* fft grows in the arena: a program may declare any number */
  GenOp **pg_ops;         /* particle-grid plans: the first deposit/gather of each (gen_pgrid.c) */
  int n_pg;
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
/* The product of the first n_lead extents of f when those are constants. */
bool fuse_const_lead(Decl *f, int n_lead, int64_t *n);
/* Graph eligibility, workspace order, launch and sync counts of every step and op, stored
** in the IR (called by lower_unit; the emitters only print them). */
void lower_decide(GenUnit *u);
/* The dim whose live extent a graph-captured statement works over (StmtInfo.graph), or NULL. */
Decl *graph_stmt_dim(const Stmt *s);

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
  bool step;              /* reads the step counter (step_index(), random draws): cnp_step */
  Decl **reds;            /* scalars the group reduces into (ST_REDUCE), and how (RED_*): */
  int *red_op;            /* arena arrays, grown as needed */
  int n_reds, cap_reds;
  Decl **privs;           /* host: f32/f64 fields the group scatter-adds into, each block of
                          ** rows into its own zeroed copy (gen_red.c); none in a fast-path
                          ** kernel or an append (an arena array, grown as needed) */
  int n_privs, cap_privs;
  int kernel;             /* the group's kernel number */
  Arena *arena;
} KUse;

/* ======================================================================== targets */

/* One backend of the code generator, after QBE's Target: what its unit prints differently.
** gen_target_host (gen_host.c) writes NAME.c, gen_target_cuda (gen_cuda.c) NAME.cu;
** gen_targets[] lists them in output order (gen.c loops over them). A third backend (HIP,
** OpenMP offload) is one more instance in its own file. */
typedef struct GenTarget {
  const char *name;       /* "host", "cuda" */
  unsigned emit;          /* its --emit bit (EMIT_C, EMIT_CUDA) */
  const char *ext;        /* output file: ".c", ".cu" */
  bool device;            /* device kernels beside the host loops, chosen at run time */
  const char *complex_tmpl;   /* complex helpers: "complex.c", "complex.cu" */
  const char *complex_prefix; /* complex math: NULL (C99 csqrt, csqrtf) or "cnp_g_" (overloads) */
  const char *extern_c;   /* linkage of the users' host fallbacks: "" or "extern \"C\" " */
  /* `T += (ct)V` scattered by a kernel that runs on this target */
  void (*atomic_add)(Buf *b, const char *T, const char *ct, const char *V);
  /* the device kernel of a fused group and the device branch of its launcher (NULL: none) */
  void (*kernel)(GenUnit *u, Buf *b, GenOp *op, KUse *use);
  void (*launch)(GenUnit *u, Buf *b, GenOp *op);
  /* setup: the backend choice; hand-written kernels (sources, catalog; NULL: none) */
  void (*backend_select)(GenUnit *u, Buf *b);
  void (*kernel_source)(GenUnit *u, Buf *b, Decl *k);
  void (*kernel_setup)(GenUnit *u, Buf *b, Decl *k, bool first);
  void (*kernel_setup_end)(GenUnit *u, Buf *b);
  /* a hand-written kernel call: open / close the device branch (NULL: host only) */
  void (*call_open)(GenUnit *u, Buf *b, Stmt *s, const char *args);
  void (*call_close)(GenUnit *u, Buf *b, Stmt *s);
  /* graphs of the unit: struct members, functions, setup, teardown (NULL: none) */
  void (*graphs)(GenUnit *u, Buf *fields, Buf *funcs, Buf *setup, Buf *teardown);
  /* a step: the replay of its graph and the extents the host reads back (NULL: none) */
  void (*step_graph)(GenUnit *u, Buf *b, int i);
  /* helpers the graphs' struct members need, before the pipeline object (NULL: none) */
  void (*graph_helpers)(GenUnit *u, Buf *b);
  void (*step_pull)(GenUnit *u, Buf *b, GenStep *gs);
  /* the qualifier of the unit's helpers that run on host and device ("__host__ __device__ ") */
  const char *both;
  /* unit.tmpl's target part: templates/unit_host.tmpl, unit_cuda.tmpl */
  const char *unit_part;
} GenTarget;

extern const GenTarget gen_target_host, gen_target_cuda;
extern const GenTarget *const gen_targets[];
extern const int gen_n_targets;

typedef struct KCtx {
  GenUnit *u;
  const GenTarget *t;     /* the unit being emitted (complex math names) */
  const GenTarget *run;   /* the target whose kernel this body is: host loop or device kernel */
  Stmt *map;              /* the map whose body is being emitted */
  DType lit;              /* float type untyped literals here adapt to (0.1f, 2.0), or DT_VOID */
  const RowVals *rows;    /* dry pass: the elements of written fields live in locals r_* */
  bool lanes;             /* host reduction: accumulators r_S[cnp_l], 8 lanes (gen_red.c) */
  const KUse *priv;       /* host: scatter-adds into use->privs go to the block's copy pv_F */
  const Expr *unsw;       /* host reducing kernel: the step-invariant condition the loop is
                          ** unswitched on (gen_red.c), written as unsw_val in this copy */
  int unsw_val;
  const struct DrawBufs *dbuf;   /* host plain kernel: uniform draws read from the chunk's
                                 ** buffers cnp_dN (gen_host.c, kernel_draws), or NULL */
  bool red_buf;           /* host reduction: the row's value into cnp_t_S[cnp_i - cnp_s] */
  const struct SaBufs *sab;   /* host: the buffered scatter-adds (gen_red.c, sa_buffered), or
                              ** NULL; the body then uses helpers gcc can vectorize */
} KCtx;

/* The privatized scatter-adds of a host kernel that buffers them (gen_red.c, sa_buffered):
** statement N's index and value go into cnp_siN / cnp_svN[cnp_i - cnp_s], and after each
** sub-block of RED_SUB rows one loop adds them into the block's copies in row order. */
enum { SABUF_MAX = 8 };
typedef struct SaBufs {
  int n;
  const Stmt *s[SABUF_MAX];
} SaBufs;

/* The uniform()/uniform_f32() calls of a plain host kernel whose seed is the same for every
** row: each chunk of rows fills its buffer cnp_dN first, a Philox block per 2 (4) rows. */
enum { DRAWBUF_MAX = 8, DRAWBUF_ROWS = 128 };
typedef struct DrawBufs {
  int n;
  const Expr *e[DRAWBUF_MAX];
} DrawBufs;

/* gen_expr.c (types, literals, expressions, map bodies) and gen_common.c (locations,
** setup-time expressions, kernel arguments, the CNP_G_TRY wrapper, text helpers). */
const char *gen_ctype(DType t);                 /* element storage: "double", "uint16_t" (f16), ... */
const char *gen_vtype(DType t);                 /* values (lets, params): "float" for f16 */
int gen_hidden_const(const Expr *e);             /* gen_expr.c: a comparison's constant written
                                                 ** cnp_g_i64(C) (-Wtype-limits), or -1 */
bool gen_hidden_bool(const Expr *e);             /* bool(x & y), bool(x | y): x != cnp_g_u64(0) */
int gen_hidden_u64(const Expr *e);               /* the same for u64: cnp_g_u64(C) (2: both sides), or -1 */
const char *gen_apitype(DType t);               /* the C API's params: "cnp_complex128", ... */
const char *gen_cnp_dtype(DType t);             /* "CNP_FLOAT64", ... */
bool gen_decl_is_dim_extent(Decl *f, Decl **dim);
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
const char *append_count_str(GenUnit *u, Expr *e, const char *pfx);   /* int64_t, u64 clamped */
void setup_expr_checked(GenUnit *u, Buf *b, Expr *e);
bool extent_computed(Expr *e);
const char *expr_src(GenUnit *u, Expr *e);
const char *row_name(GenUnit *u, Decl *f, int64_t comp);
bool signed_int(DType t);
void group_body(KCtx *k, Buf *b, GenOp *op);
/* The rows' loop of a host kernel with buffered scatter-adds in two (gen_body.c, row_split):
** the first loop runs the statements before `cut` and stores each row's carries (lets the
** rest reads or sets) into sub-block buffers cnp_lvN, the second loads them and runs the rest. */
enum { SPLIT_CARRY_MAX = 2, SPLIT_MIN = 4 };
typedef struct RowSplit {
  Stmt *cut;
  int n;
  Local *carry[SPLIT_CARRY_MAX];
} RowSplit;
bool row_split(const GenOp *op, RowSplit *rs);
void group_body_split(KCtx *k, Buf *b1, Buf *b2, GenOp *op, const RowSplit *rs);
const Expr *group_invariant_cond(GenOp *op);   /* gen_expr.c: a condition to unswitch on, or NULL */
bool kernel_invariant(GenOp *op, const Expr *e);   /* gen_body.c: the same for every row of the group
                                                    ** (op NULL: no field element counts) */
void group_use(GenUnit *u, GenOp *op, KUse *use);
bool kuse_priv(const KUse *use, const Decl *f);   /* a privatized scatter-add target */
void kernel_args(GenUnit *u, Buf *b, GenOp *op, KUse *use, const GenTarget *t);
void kernel_locals(Buf *b, KUse *use);
const char *cstr(GenUnit *u, const char *s);
void try_call(GenUnit *u, Buf *b, Loc loc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void try_vcall(GenUnit *u, Buf *b, Loc loc, const char *fmt, va_list ap);
const char *gen_int(GenUnit *u, int64_t v);
void kernel_fill(Buf *b, KUse *use, const char *pfx);
const char *buf_take(GenUnit *u, Buf *t);

/* gen_host.c: host (OpenMP) kernels, the compact + sort fast path. */
void kernel_host(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, KUse *use);
void scan_fused_types(GenUnit *u, Decl *x, const char **nc, const char **ut);
void kernel_host_fused(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, KUse *use);
GenOp *fused_owner(GenUnit *u, Stmt *s);
void inline_sum(GenUnit *u, Buf *b, Stmt *s);

/* gen_pgrid.c: deposit and gather (docs/codegen.md, Deposit and gather): plan numbering
** (called by lower_unit), the pipeline struct's plans, their setup and teardown, the steps. */
void pgrid_lower(GenUnit *u);
bool pgrid_windows(const GenUnit *u);   /* a plan has a ghost axis: window_helpers */
void pgrid_struct(GenUnit *u, Buf *b);
void pgrid_setup(GenUnit *u, Buf *b);
void pgrid_teardown(GenUnit *u, Buf *b);
void pgrid_step_deposit(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op);
void pgrid_step_gather(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op);
/* migrate (ARRAYS) to G at (POS): its plans on a split grid (struct, setup after the
** communicator, teardown) and the step (nothing moves on an unsplit grid). */
void pgrid_migrate_struct(GenUnit *u, Buf *b);
void pgrid_migrate_setup(GenUnit *u, Buf *b);
void pgrid_migrate_teardown(GenUnit *u, Buf *b);
void pgrid_step_migrate(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op);
/* ... their forms in a CUDA graph: over dim D's capacity, the _device_count runtime calls */
void pgrid_graph_deposit(GenUnit *u, Buf *b, GenOp *op, const char *D);
void pgrid_graph_gather(GenUnit *u, Buf *b, GenOp *op, const char *D);

/* gen_red.c: reductions into scalars, histories and scans (docs/codegen.md, Reductions). */
#define RED_BLOCK 256     /* CUDA: threads per block of a reducing kernel, and of the combine */
#define RED_CHUNK 4096    /* host: rows per chunk of a reducing loop */
#define RED_LANES 8       /* host: accumulators per chunk (row i into lane i % RED_LANES) */
#define RED_SUB 512       /* host, a kernel that scatter-adds: rows per sub-block of row values */
#define PRIV_ROWS 16      /* host: rows per element of the scatter-add targets in a block, at least */
#define SCAN_CHUNK 1024   /* both: rows per chunk of a scan */
#define SCAN_TILE 16      /* host, one thread: work items (4 chunks) per tile of a scan */
bool red_stmts(const Stmt *s);                  /* a map body reduces into a scalar */
bool red_group(const GenOp *op);                /* ... some map of a fused group does */
const char *red_ident(DType t, int op);         /* the identity of a reduction, as C text */
/* "acc = acc OP v;" for a reduction of dtype t (signed sums wrap). */
void red_line(Buf *b, DType t, int op, const char *acc, const char *v);
void red_store(Buf *b, const char *acc, const char *v);   /* acc = v; */
void red_kernel_host(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, KUse *use);
void sa_store(KCtx *k, Buf *b, const Stmt *s, const char *idx, const char *ct, const char *v);
void red_kernel_cuda_tail(GenUnit *u, Buf *b, GenOp *op, KUse *use);   /* block partials */
void red_combine_cuda(GenUnit *u, Buf *b, GenOp *op, KUse *use);       /* the second pass */
void red_struct(GenUnit *u, Buf *b);
void red_setup(GenUnit *u, Buf *b);
void red_teardown(GenUnit *u, Buf *b);
void red_lookup(GenUnit *u, Buf *b);            /* NAME_field(p, "H.count") */
void red_helpers(GenUnit *u, const GenTarget *t, Buf *b);   /* scan and history helpers */
void red_header(GenUnit *u, Buf *b);            /* NAME_scalar(), NAME_history() */
void red_step_history(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, bool graph);
void red_step_scan(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, bool graph);
void red_step_append(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op);

/* gen_expr.c: one expression, and the pieces of it that gen_body.c's statements write. */
void gen_ex(KCtx *k, Buf *b, Expr *e);
void gen_ex_as(KCtx *k, Buf *b, Expr *e, DType to);   /* e converted to `to` */
void gen_ex_f16(KCtx *k, Buf *b, Expr *e);            /* e rounded to f16 (in f32) */
void gen_lin_index(KCtx *k, Buf *b, Expr *e);         /* a field element's linear index */
const char *gen_row_local(KCtx *k, Expr *e);          /* its dry-pass local, or NULL */
bool gen_converted_type(DType t);                     /* f16 and complex: computed converted */
bool gen_is_f16_variable(const Expr *e);
const char *gen_signed_int_bits(DType t);             /* "32" or "64" */
/* gen_body.c: a map's statements (k->map set to it), for gen_grid.c. */
void gen_map_body(KCtx *k, Buf *b, Stmt *map);

/* gen_grid.c: grid maps `map (j, i) in G` (docs/codegen.md, Grid maps): never fused, their own
** host loops and CUDA kernels; the extents and spacings travel in the args (A.g_n0.., A.g_d0..). */
static inline bool gen_grid_map(const Stmt *s) { return s->kind == ST_MAP && s->gndim > 0; }
bool gen_any_grid_map(GenUnit *u);
void grid_lin_index(KCtx *k, Buf *b, Expr *e);   /* F[c, j + 1, i] of the map's grid */
void grid_call(KCtx *k, Buf *b, Expr *e);        /* coord(i) */
void grid_args(GenUnit *u, Buf *b, GenOp *op);   /* the args struct's grid members */
void grid_fill(GenUnit *u, Buf *b, GenOp *op, const char *pfx);   /* ... filled by a launcher */
const char *grid_points(GenUnit *u, const Stmt *map);  /* A.n: the grid's points, n0 * n1 * n2 */
/* A reducing grid map runs as a 1D loop over its points (gen_red.c's kernels): the point's
** indices from cnp_i and the stencil's storage indices (the prologue of group_body). */
void grid_prologue(KCtx *k, Buf *b, Stmt *map);
void grid_helpers(GenUnit *u, const GenTarget *t, Buf *b);
void kernel_grid_host(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, KUse *use);
void kernel_grid_cuda(GenUnit *u, Buf *b, GenOp *op, KUse *use);
void grid_launch_cuda(GenUnit *u, Buf *b, GenOp *op);
const char *grid_graph_dims(GenUnit *u, GenOp *op);   /* its <<<grid, block>>> in a CUDA graph */
void grid_step_halo(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op);   /* halo F; */
void grid_graph_halo(GenUnit *u, Buf *b, GenOp *op);   /* ... its form in a CUDA graph */
/* Split grids (docs/codegen.md, "MPI"): the struct members (p->gso_G, p->gsn_G, halo
** plans), the setup of the ranges (before the fields: their storage extents), the halo plans
** (after them), their teardown. */
void grid_split_struct(GenUnit *u, Buf *b);
void grid_split_setup(GenUnit *u, Buf *b);
void grid_split_halo_setup(GenUnit *u, Buf *b);
void grid_split_teardown(GenUnit *u, Buf *b);
/* allreduce S, ...; (gen_red.c): its gather buffer (setup, teardown) and its step form. */
void red_allreduce_struct(GenUnit *u, Buf *b);
void red_allreduce_setup(GenUnit *u, Buf *b);
void red_allreduce_teardown(GenUnit *u, Buf *b);
void red_step_allreduce(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op);

/* gen_fft.c: FFT plans (setup, teardown, struct members), ifft's 1/N pass, the statements. */
int  fft_plan_of(GenUnit *u, Stmt *s);           /* its plan number (adds one when new) */
void fft_struct(GenUnit *u, Buf *b);
void fft_setup(GenUnit *u, Buf *b);
void fft_teardown(GenUnit *u, Buf *b);
void fft_helpers(GenUnit *u, const GenTarget *t, Buf *b);
void fft_step(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, bool graph);
void fft_wave_helper(GenUnit *u, const GenTarget *t, Buf *b);   /* cnp_g_wave() when used */
bool fft_wave(KCtx *k, Buf *b, Expr *e);         /* wave(i) in a grid map; false: another call */

/* gen_cuda.c: whether a statement kind has its CUDA-graph form (tests/unit). */
bool gen_cuda_graph_form(StmtKind k);

/* gen_step.c: the step body, one emitter function per step statement kind. */
void gen_step_body(GenUnit *u, const GenTarget *t, Buf *b);
bool gen_step_emitter(StmtKind k);     /* has its emitter (tests/unit) */

/* gen_unit.c: the units NAME.c / NAME.cu. */
void gen_unit(GenUnit *u, const GenTarget *t, Buf *out);
Stmt *first_call(GenUnit *u, Decl *k);
const char *exchanged(GenUnit *u, const Stmt *s);
const char *param_value(GenUnit *u, Decl *d, const char *v);
bool join_needs(GenUnit *u, int t, int s);
bool join_source(GenUnit *u, int s);
void gen_joins(GenUnit *u, Buf *b, bool failed);
const char *api_types(GenUnit *u);
const char *karg_type(Expr *a);
const char *karg_value(GenUnit *u, Expr *a);

/* gen_setup.c: setup and teardown bodies. */
void gen_setup_checks(GenUnit *u, Buf *b);
void gen_setup_body(GenUnit *u, const GenTarget *t, Buf *b);
void gen_setup_funcs(GenUnit *u, Buf *b);   /* static helpers of setup (exchange formulas) */
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

/* gen_fortran.c: NAME_cnp.f90 and NAME_cnp_layout.c (--emit=fortran); gen_cxx.c: NAME.hpp
** (--emit=cxx). docs/interfaces.md. */
void gen_fortran(GenUnit *u, Buf *b);
void gen_fortran_c(GenUnit *u, Buf *b);
void gen_cxx(GenUnit *u, Buf *b);

#endif /* CNPC_GEN_H */
