/*
** cnpc.h -- the one internal header of the cnp compiler, sectioned per source file
** (chibicc style). Everything the front end builds lives in one Arena per compilation
** (struct Cnp); nothing here is freed node by node.
**
** Pipeline: main.c (CLI) -> parse.c (files, imports) feeding lexer.re's tokens to parser.y
** (tokens -> AST through ast_*() calls)
** -> sema.c (names, types, shapes, stream hazards; fills the "sema" fields below; with
**    sema_expr.c, sema_stmt.c, sema_hazard.c and their private header sema_internal.h)
** -> gen_emit() (gen.c and friends, owned by the code generator).
**
** Codegen contract: after cnp_compile_*() returns 0 errors, every Ref has .decl (or .local)
** set -- except the names `rank` and `size` (i32) in exchange expressions, which have
** neither -- every Expr has .type, every map has .over/.over_expr and .index, every field
** has its shape, and cc->decls lists all top-level declarations in program order (an
** imported file's declarations right after its DECL_IMPORT). Steps are Decls of kind
** DECL_STEP, in program order; a top-level exchange/migrate is a step without a stream.
*/
#ifndef CNPC_H
#define CNPC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CNPC_VERSION "0.1.0"

typedef struct Cnp Cnp;
typedef struct CnpFile CnpFile;
typedef struct Decl Decl;
typedef struct Stmt Stmt;
typedef struct Expr Expr;
typedef struct Local Local;
typedef struct GridInfo GridInfo;

/* ======================================================================== arena.c */

typedef struct ArenaBlock ArenaBlock;
typedef struct Arena {
  ArenaBlock *head;       /* current block (blocks are chained backwards) */
  size_t used_total;      /* bytes handed out, for statistics */
  unsigned char *cur, *end;   /* free space of the current block */
  size_t next_size;       /* size of the next block (grows; arena_reserve() sets it) */
} Arena;

void  arena_init(Arena *a);
void  arena_free(Arena *a);                       /* frees every block at once */
void *arena_alloc_slow(Arena *a, size_t n);       /* arena_alloc() when a new block is needed */
/* Expect about n more bytes to be allocated soon (sizes the next block; a hint only). */
void  arena_reserve(Arena *a, size_t n);
char *arena_strndup(Arena *a, const char *s, size_t n);
/* Room for one more element in the arena array v of n elements of `size` bytes and capacity
** *cap: v when n < *cap, else a copy twice as large (at least `first`), *cap updated. The old
** copy stays in the arena until it is freed. */
void *arena_grow(Arena *a, void *v, int n, int *cap, int first, size_t size);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Zeroed, 16-byte aligned memory (blocks come zeroed from the OS and are never reused);
** aborts on OOM. Inline: the parser allocates a node or two per token. */
static inline void *arena_alloc(Arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  if ((size_t)(a->end - a->cur) < n) return arena_alloc_slow(a, n);
  void *p = a->cur;
  a->cur += n;
  a->used_total += n;
  return p;
}

/* ======================================================================== source locations */

/* A span in a source file: 1-based line and column (bytes), length in bytes on that line. */
typedef struct Loc {
  const CnpFile *file;
  int line, col, len;
} Loc;

/* Lexer token: a slice of the NUL-terminated source (not NUL-terminated itself). */
typedef struct Token {
  const char *z;
  int n;
  int line, col;
} Token;

/* A loaded source file. Its text is NUL-terminated and lives in the arena. */
struct CnpFile {
  const char *path;       /* as given on the command line / resolved import path */
  const char *src;        /* text, NUL-terminated */
  size_t len;             /* bytes, without the NUL */
  int id;                 /* 0 = main file, then in load order */
  bool imported;          /* loaded through `import` */
  Loc import_loc;         /* the (first) import that loaded it */
  CnpFile *next;          /* load order */
};

/* ======================================================================== types */

/* Element types. Order matters: promotion picks the larger of two numeric kinds. */
typedef enum DType {
  DT_VOID = 0,            /* no value / not yet known (sema leaves none of these in exprs) */
  DT_BOOL,
  DT_I32,
  DT_I64,
  DT_U64,
  DT_F16,
  DT_F32,
  DT_F64,
  DT_C64,                 /* complex of two f32 */
  DT_C128,                /* complex of two f64 */
  DT__COUNT
} DType;

const char *dtype_name(DType t);                  /* "f64", ... ("void" for DT_VOID) */
double half_round(double v);                        /* the f16 value nearest v (ast.c) */
size_t dtype_size(DType t);                       /* bytes per element; 0 for DT_VOID */
static inline bool dtype_is_int(DType t) { return t == DT_I32 || t == DT_I64 || t == DT_U64; }
static inline bool dtype_is_float(DType t) { return t == DT_F16 || t == DT_F32 || t == DT_F64; }
static inline bool dtype_is_complex(DType t) { return t == DT_C64 || t == DT_C128; }
/* Output dtype of `sum` (segment sum): float/complex as the input, int/bool -> f64.
** f16 keeps f16 as output but accumulates in f32 (dtype_sum_acc). */
DType dtype_sum_out(DType t);
DType dtype_sum_acc(DType t);

/* A named reference in the source, resolved by sema to a Decl (or a Local inside a map). */
typedef struct Ref {
  const char *name;       /* arena string */
  Loc loc;
  Decl *decl;             /* sema: the declaration, NULL for locals */
  Local *local;           /* sema: map index or let, NULL otherwise */
} Ref;

/* A list of refs, e.g. the arrays of `compact alive (x, v, w)`. */
typedef struct RefList {
  Ref *v;
  int n;
} RefList;

/* Shape of a field or staging buffer: extents, outermost first. The LAST extent is the
** element axis (component-major fields are [ncomp, N]). Each extent is an Expr that sema
** checks to be setup-time (int literal, const, dim, setup param, and + - * of those). */
typedef struct Shape {
  Expr **ext;
  int rank;
} Shape;

/* ======================================================================== AST: expressions */

typedef enum ExprKind {
  EX_INT,                 /* .ival (literal; .u64 for literals > INT64_MAX) */
  EX_FLOAT,               /* .fval */
  EX_BOOL,                /* .ival 0/1 */
  EX_NAME,                /* .ref: param, const, dim (its current extent), map index, let */
  EX_INDEX,               /* .ref[.args[0..nargs)] : field element; gather if not by index */
  EX_UNARY,               /* .op (OP_NEG, OP_NOT, OP_BNOT) .args[0] */
  EX_BINARY,              /* .op .args[0], .args[1] */
  EX_CALL,                /* .builtin(.args) : math functions and select */
  EX_CAST,                /* .cast_to(.args[0]) : f64(x), i64(x), ... */
} ExprKind;

typedef enum Op {
  OP_NONE = 0,
  OP_NEG, OP_NOT,
  OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD,
  OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
  OP_AND, OP_OR,
  OP_BNOT,                /* ~ (unary) */
  OP_BAND, OP_BOR, OP_BXOR, OP_SHL, OP_SHR,   /* & | ^ << >>: integers */
} Op;
const char *op_text(Op op);                       /* "+", "&&", ... */
static inline bool op_is_bitwise(int op) { return op >= OP_BAND && op <= OP_SHR; }

/* Builtin functions (name table in ast.c). */
typedef enum Builtin {
  BI_NONE = 0,
  BI_SQRT, BI_EXP, BI_LOG, BI_SIN, BI_COS, BI_FLOOR, BI_CEIL,   /* 1 arg, float */
  BI_FMOD, BI_POW,                                              /* 2 args, float */
  BI_MIN, BI_MAX,                                               /* 2 args, numeric */
  BI_ABS,                                                       /* 1 arg, numeric */
  BI_SELECT,                                                    /* select(cond, a, b) */
  BI_REAL, BI_IMAG, BI_CONJ, BI_ARG,                            /* 1 arg, complex or real */
  BI_COMPLEX,                                                   /* complex(re, im) */
  BI_ATAN2,                                                     /* 2 args, float */
  BI_TANH, BI_SINH, BI_COSH, BI_ERF, BI_ROUND, BI_TRUNC,        /* 1 arg, float */
  BI_ISNAN, BI_ISFINITE,                                        /* 1 arg, real -> bool */
  BI_UNIFORM, BI_NORMAL, BI_UNIFORM_F32, BI_NORMAL_F32,         /* (seed): Philox draws */
  BI_STEP_INDEX,                                                /* step_index(): i64 */
  BI__COUNT
} Builtin;
const char *builtin_name(Builtin b);
Builtin builtin_lookup(const char *z, int n);     /* BI_NONE if not a builtin */
int builtin_arity(Builtin b);
static inline bool builtin_is_draw(Builtin b) { return b >= BI_UNIFORM && b <= BI_NORMAL_F32; }
static inline bool builtin_reads_step(Builtin b) { return b >= BI_UNIFORM && b <= BI_STEP_INDEX; }

/* Expression flags set by sema. */
#define EXF_CONST     0x01  /* compile-time constant (literals, consts and folds of them) */
#define EXF_SETUP     0x02  /* known at setup (consts, dims' capacity, setup params) */
#define EXF_GATHER    0x04  /* EX_INDEX whose element index is not the map index itself */
#define EXF_UNTYPED   0x08  /* literal whose type adapts to the other operand */

struct Expr {
  ExprKind kind;
  DType type;             /* sema: result type */
  unsigned flags;         /* sema: EXF_* */
  int depth;              /* tree depth, capped by the parser (CNP_MAX_EXPR_DEPTH) */
  Op op;
  Builtin builtin;
  DType cast_to;
  int nargs;
  Loc loc;                /* whole expression span (first line) */
  Ref ref;                /* EX_NAME, EX_INDEX, EX_CALL (the function name) */
  Expr **args;            /* operands / indices / call arguments */
  union {
    int64_t ival;         /* EX_INT, EX_BOOL (0/1) */
    uint64_t uval;        /* EX_INT: the literal's value as written (same bits as ival) */
    double fval;          /* EX_FLOAT */
  };
};

#define CNP_MAX_EXPR_DEPTH 200

/* ======================================================================== AST: statements */

typedef enum StmtKind {
  /* inside a step */
  ST_MAP,                 /* map INDEX in OVER { body }                              */
  ST_COMPACT,             /* compact MASK (ARRAYS);                                 */
  ST_SORT,                /* sort KEY (ARRAYS);                                     */
  ST_OFFSETS,             /* offsets KEY -> OUT;          OUT has n_segments+1 rows */
  ST_SEGMENTS,            /* PLAN = segments(KEY, N);     rebuild a segment plan    */
  ST_SUM,                 /* sum PLAN (VALUES) -> OUT;                              */
  ST_RECORD,              /* record EVENT;                                          */
  ST_WAIT,                /* wait EVENT;                                            */
  ST_COPY,                /* copy SNAPSHOT <- FIELD;      host staging snapshot     */
  ST_REFRESH,             /* refresh MIRROR to_host|to_device;                      */
  ST_EXCHANGE,            /* exchange MPI (FIELD) with DEST [from SOURCE];          */
  ST_MIGRATE,             /* migrate (ARRAYS) by DEST;                              */
  ST_MIGRATE_TO,          /* migrate (ARRAYS) to GRID at (POS...);  .list the arrays, .b the
                          ** grid, .pos the positions (one per grid axis, outermost first) */
  ST_CALL,                /* KERNEL(ARGS) [over EXTENT];  hand-written kernel       */
  ST_ZERO,                /* zero(FIELDS);                every element set to 0    */
  ST_HISTORY,             /* record HISTORY;   append its scalar's value (sema: from ST_RECORD) */
  ST_SCAN,                /* scan inclusive|exclusive SRC -> DST;                   */
  ST_REPEAT,              /* repeat K { body }   K a setup-time integer (.value)    */
  ST_REPEAT_END,          /* (lower.c) the end of a repeat block in the step IR     */
  ST_SWAP,                /* swap A, B;          the two fields' buffers exchanged  */
  ST_EVERY,               /* every K [offset J] { body }  (.value K, .value2 J or NULL) */
  ST_EVERY_END,           /* (lower.c) the end of an every block in the step IR     */
  ST_APPEND,              /* append DIM (COUNT) map I[, J] { body }: new rows; .over = DIM,
                          ** .index = I (the global row), .let = J (0.. in the new rows) */
  ST_DEPOSIT,             /* deposit W at (POS...) -> GRIDF with SHAPE [atomic];  .a = W (a field;
                          ** .a.name NULL and .value the literal 1 for unit weights), .list the
                          ** positions (outermost axis first), .b the grid field, .pshape, .atomic */
  ST_GATHER,              /* gather GRIDF at (POS...) -> OUT with SHAPE;  .a the grid field,
                          ** .list the positions, .b the particle field, .pshape */
  ST_HALO,                /* halo F;   F's ghost planes from the periodic image (.a = F) */
  ST_FFT,                 /* fft REAL -> COMPLEX;   r2c over the real field's grid axes (.a, .b) */
  ST_IFFT,                /* ifft COMPLEX -> REAL;  c2r, normalized by 1/N (.a, .b)          */
  ST_ALLREDUCE,           /* allreduce S1, S2, ...;  each scalar (.list) combined over the ranks
                          ** with its reduction's operator (sema: .red_ops, RED_* per scalar) */
  /* inside a map */
  ST_LET,                 /* let NAME [: TYPE] = VALUE;                             */
  ST_ASSIGN,              /* TARGET = VALUE;   TARGET is a field element or a let    */
  ST_ADD,                 /* TARGET += VALUE;  scatter-add when .scatter             */
  ST_IF,                  /* if COND { then } [else { else_ }]                      */
  ST_REDUCE,              /* SCALAR += VALUE; / SCALAR min= VALUE; / max=  (.red)   */
  ST__COUNT               /* every kind has its entry in stmt_info[] (stmt.c) */
} StmtKind;

struct Stmt {
  StmtKind kind;
  Loc loc;                /* the statement's keyword / first token */
  Stmt *next;             /* next statement in the block */

  /* ST_MAP */
  Local *index;           /* the index variable (type i64) */
  Ref over;               /* the extent mapped over: a dim, or an integer setup param/const */
  Expr *over_expr;        /* sema: `over` as an EX_NAME expression (typed i64) */
  Stmt *body;             /* ST_MAP body, ST_IF then-branch */
  Stmt *else_body;        /* ST_IF else-branch (NULL if none; an `else if` is one ST_IF) */

  /* named operands */
  Ref a;                  /* MASK, KEY, PLAN, EVENT, SNAPSHOT, MIRROR, MPI, KERNEL, migrate DEST */
  Ref b;                  /* OFFSETS/SUM/SEGMENTS: OUT or KEY; COPY/EXCHANGE: FIELD */
  RefList list;           /* COMPACT/SORT/MIGRATE arrays, SUM values */
  bool to_device;         /* ST_REFRESH: true = to_device, false = to_host */

  /* expressions */
  Expr *target;           /* ST_ASSIGN/ST_ADD: EX_INDEX or EX_NAME (a let) */
  Expr *value;            /* LET/ASSIGN/ADD value, IF condition, SEGMENTS n, EXCHANGE dest */
  Expr *value2;           /* EXCHANGE source (NULL = same as dest), CALL over (may be NULL) */
  Expr **args;            /* ST_CALL arguments (names of fields/params/consts/dims) */
  int nargs;
  Local *let;             /* ST_LET: the new local */
  bool scatter;           /* sema, ST_ADD: target indexed by something other than the index */
  int red;                /* ST_REDUCE: RED_SUM, RED_MIN, RED_MAX */
  int *red_ops;           /* sema, ST_ALLREDUCE: the RED_* of each scalar of .list */
  bool inclusive;         /* ST_SCAN: inclusive (else exclusive) */
  int pshape;             /* ST_DEPOSIT/ST_GATHER: PSHAPE_NGP, _CIC, _TSC (cnp_shape's values) */
  bool atomic;            /* ST_DEPOSIT: CNP_DEPOSIT_ATOMIC (else SORTED, deterministic) */
  Loc pshape_loc;         /* ST_DEPOSIT/ST_GATHER: the shape word */
  RefList pos;            /* ST_MIGRATE_TO: the positions */

  /* ST_MAP over a grid, `map (j, i) in G { body }` (sema_grid.c): .gidx the index of each
  ** axis, outermost first, .gndim their number (0: a map over a dim or extent); .over is
  ** the grid (.decl a DECL_GRID), .index is gidx[gndim - 1] (the unit-stride axis). */
  Local *gidx[3];
  int gndim;
  bool grid_reads_offset; /* sema: some field is read at a nonzero offset (a stencil) */
};

/* Particle shapes of deposit/gather (the values of the runtime's cnp_shape). */
enum { PSHAPE_NGP, PSHAPE_CIC, PSHAPE_TSC };
extern const char *const pshape_names[3];   /* "ngp", "cic", "tsc" (ast.c) */

/* Reductions of a map into a scalar (ST_REDUCE). */
enum { RED_SUM, RED_MIN, RED_MAX };

/* Map-local variables: the map index and lets. */
struct Local {
  const char *name;
  Loc loc;
  DType type;             /* index: DT_I64; let: declared or inferred */
  bool is_index;
  int id;                 /* unique per compilation, in source order (for temporaries) */
  Stmt *map;              /* the enclosing map */
};

/* ======================================================================== stmt.c: what each statement is */

/* One description per statement kind, read by sema (per-row data), lower (graphs, workspace,
** host syncs), the DOT drawing, --dump-ast and the backends (docs/architecture.md, "A new
** step statement"). */
enum {                    /* how a statement uses an operand (Stmt a, b, list; a call's args) */
  SU_READ = 1,
  SU_WRITE = 2,
  SU_ROWS = 4,            /* reads its rows as per-row data (-Wcompact-omits, -Wsort-omits) */
};

typedef enum StmtSync {   /* host synchronizations of one run of the statement */
  SYNC_NONE,
  SYNC_ALWAYS,            /* one on every backend (MPI): both units count it */
  SYNC_CUDA,              /* one on CUDA: both units count it */
  SYNC_CUDA_UNIT,         /* one on CUDA: the CUDA unit counts it */
  SYNC_CUDA_ROWS,         /* one on CUDA when it has rows: the CUDA unit counts it */
} StmtSync;

typedef enum StmtGraph {  /* the statement's form in a CUDA graph (docs/codegen.md) */
  SG_NONE,                /* never captured: its step runs as direct launches */
  SG_COMPACT,             /* captured, over operand a's dim, a mask the kernel right before
                          ** writes (cleared past the live extent); the extent changes on the
                          ** device */
  SG_DIM_A,               /* captured, over the live extent of operand a's dim (device count) */
  SG_DIM_B,               /* ... operand b's dim */
  SG_DIM_LIST,            /* ... the first listed array's dim */
  SG_PLAIN,               /* captured as is: reads no extent */
  SG_TAIL,                /* may end a graphed step, run directly after the graph (record) */
} StmtGraph;

typedef struct StmtInfo {
  const char *name;       /* the keyword (or call-form name) as written */
  bool step;              /* a step statement (else one of a map body) */
  unsigned char a, b, list, args;   /* SU_* uses of the operands */
  bool ws;                /* uses the pipeline's workspace (compaction / sort / offsets scratch) */
  StmtSync sync;
  const char *sync_note;  /* why it synchronizes: the comment beside the count, or NULL */
  bool host_extents;      /* run directly, it reads live extents on the host */
  StmtGraph graph;
  signed char launches;   /* p->stats.launches of one direct run; -1: one per component of the
                          ** listed arrays, -2: one per listed array, -3: one per component of
                          ** operand a */
  bool call_form;         /* written like a kernel call, `zero(x, v);` (parsed as ST_CALL, made
                          ** this kind by sema unless a kernel has the name) */
  const char *label;      /* its DOT node label: $a, $b the operands' names, $d the direction,
                          ** $l the list; [...] only when operand b is given */
} StmtInfo;

extern const StmtInfo stmt_info[];
extern const int stmt_info_count;           /* ST__COUNT (checked at compile time) */
/* The entry of kind k; an internal error for a kind without one. */
const StmtInfo *stmt_of(StmtKind k);
/* The step statement written like a kernel call (`zero(x, v);`) named `name`, or -1. */
int stmt_call_form(const char *name);

/* ======================================================================== grids (sema_grid.c)

** `grid G = [n0, n1[, n2]] [boundary(B, ...)] [length(L, ...)];` (docs/language.md, Grids).
** Axis 0 is the outermost, the last axis unit-stride (C order). After sema, for a DECL_GRID d:
** d->grid->ndim (1..3), d->grid->axis[a] for a < ndim. A field of the grid has .grid_of (see
** struct Decl). Storage index of interior point j on axis a: j + axis[a].ghost. */
typedef enum GridBound {
  GB_PERIODIC = 0,        /* periodic (the default): an offset wraps mod n */
  GB_CLAMP,               /* clamp: an offset read clamps to [0, n-1] */
  GB_GHOST,               /* ghost(W): W ghost planes each side, filled by `halo F;` */
} GridBound;

typedef struct GridAxis {
  Expr *ext;              /* the interior extent n (setup-time integer expression, as written) */
  GridBound bound;        /* sema: the axis's boundary */
  int ghost;              /* sema: GB_GHOST: the width W (>= 1); 0 otherwise */
  Expr *length;           /* the physical length (f64 setup expression), NULL: the extent */
  Loc bound_loc;          /* the boundary word (the grid's name when defaulted) */
} GridAxis;

typedef struct GridInfo {
  int ndim;               /* 1, 2 or 3 */
  GridAxis axis[3];       /* outermost first */
  Expr **clauses;         /* as written: boundary(..) / length(..) as EX_CALL nodes (.ref.name
                          ** the clause word, .args its arguments: `ghost(1)` an EX_CALL too);
                          ** the bare word `split` an EX_NAME */
  int n_clauses;
  /* MPI split (docs/language.md, "Split grids"): `split` on G splits axis 0 over the ranks in
  ** slabs (split_axis 0); rfft(G) of a split G is split along axis 1 (split_axis 1), as
  ** cnp_fft_dist lays it out. The split axis's local count and first global index are the
  ** setup values p->gsn_NAME / p->gso_NAME; a field's storage extent along it is an EX_NAME
  ** naming the grid (its local count). */
  bool split;
  int split_axis;
  Loc split_loc;          /* the word `split` (rfft(G): G's) */
} GridInfo;

const char *grid_bound_name(GridBound b);         /* "periodic", "clamp", "ghost" */
/* An index argument of a field access in a grid map: `j`, `j + 2`, `j - 1` (sema checked).
** Returns the axis of the map index it names (0..gndim-1), and its constant offset in *off;
** -1 when it is no such expression. */
int grid_index_axis(const Stmt *map, const Expr *e, int64_t *off);
/* `coord(i)` in a grid map (EX_CALL, builtin BI_NONE, checked by sema): its axis, else -1. */
int grid_coord_axis(const Stmt *map, const Expr *e);

/* ======================================================================== AST: declarations */

typedef enum DeclKind {
  DECL_PIPELINE,          /* pipeline NAME;                                          */
  DECL_IMPORT,            /* import "file.cnp";   (.path)                            */
  DECL_PARAM,             /* param NAME : TYPE [setup];                              */
  DECL_CONST,             /* const NAME [: TYPE] = EXPR;                             */
  DECL_DIM,               /* dim NAME;            capacity given at setup            */
  DECL_FIELD,             /* field NAME : TYPE[EXTENTS];                             */
  DECL_STREAM,            /* stream A, B;         one Decl per name                  */
  DECL_EVENT,             /* event E, F;          one Decl per name                  */
  DECL_SNAPSHOT,          /* snapshot NAME = host_staging(FIELD, slots = K);         */
  DECL_MPI,               /* mpi NAME = mpi_staging(TYPE[EXTENTS], cuda_aware = M);  */
  DECL_MIRROR,            /* mirror NAME = device_mirror(FIELD);                     */
  DECL_PLAN,              /* plan NAME = segments(KEY, N);                           */
  DECL_KERNEL,            /* kernel NAME from "f.cu" [host "f.c"];                   */
  DECL_STEP,              /* step [NAME] on STREAM [after E, ...] { stmts }          */
                          /* also: a top-level exchange/migrate is a step with       */
                          /* .stream.name == NULL (a host step: synchronizes first)  */
  DECL_GRID,              /* grid NAME = [EXTENTS] [boundary(..)] [length(..)];  (.grid) */
  DECL__COUNT
} DeclKind;

const char *decl_kind_name(DeclKind k);           /* "field", "stream", ... */
const char *decl_noun(const Decl *d);             /* the same, "scalar" / "history" for those */

typedef enum CudaAware { CUDA_AWARE_AUTO = 0, CUDA_AWARE_ON, CUDA_AWARE_OFF } CudaAware;

struct Decl {
  DeclKind kind;
  const char *name;       /* NULL for imports and unnamed steps */
  Loc loc;                /* the name (or keyword when unnamed) */
  Loc kw_loc;             /* the leading keyword */
  Decl *next;             /* all top-level declarations in program order */
  int index;              /* 0-based position among decls of the same kind */
  const CnpFile *file;    /* file the declaration is in */

  DType dtype;            /* PARAM, CONST, FIELD, MPI */
  bool setup;             /* PARAM: known at setup (specializes kernels) */
  Shape shape;            /* FIELD, MPI */
  Expr *value;            /* CONST value; PLAN n_segments; SNAPSHOT slots as written (or NULL) */
  int64_t ival;           /* sema: CONST value when integer */
  double fval;            /* sema: CONST value when floating (also set for integers) */

  Ref target;             /* SNAPSHOT/MIRROR: the field; PLAN: the key field; GRID: G of
                          ** `grid K = rfft(G);` (.name NULL for a grid of extents) */
  bool fft_measure;       /* GRID `rfft(G, measure)`: its FFT plans planned with FFTW_MEASURE */
  int slots;              /* SNAPSHOT: number of host slots (default 2) */
  CudaAware cuda_aware;   /* MPI */
  bool scalar;            /* FIELD: declared `scalar NAME : TYPE;` (shape [1], read as NAME) */
  Ref history_of;         /* FIELD declared `history NAME = SCALAR[K];`: the scalar (.decl by
                          ** sema); shape [K]; its append counter is the unit's hc_NAME */
  bool own_buffer;        /* MPI (sema): `exchange H with ...` names no field: the staging
                          ** buffer itself, a host array NAME_field(p, "H"), is exchanged */

  const char *path;       /* IMPORT: as written; KERNEL: the .cu file (as written) */
  const char *host_path;  /* KERNEL: host fallback .c file, NULL if none */
  Loc path_loc;           /* KERNEL: the string of the .cu file (for messages about it) */

  /* DECL_GRID: its axes (GridInfo, "grids" section above). DECL_FIELD of a grid
  ** (`f64[G]`, `f64[c, G]`): .grid_of the grid, .shape the STORAGE shape (components, then
  ** per axis its extent, or `extent + 2W` for a ghost(W) axis), .written the shape as
  ** written (for --print / --dump-ast), .grid_ncomp the number of leading component extents. */
  GridInfo *grid;
  Decl *grid_of;
  int grid_ncomp;
  Shape written;

  /* DECL_STEP */
  Ref stream;             /* .decl = the stream; .name NULL for a host step */
  RefList after;          /* events waited on before the body */
  Expr *every, *every_offset;   /* `every K [offset J]`: runs when the call number % K == J */
  Stmt *body;             /* ordered statements */
};

/* ======================================================================== main.c: options */

enum {
  EMIT_HEADER   = 1 << 0,
  EMIT_C        = 1 << 1,
  EMIT_CUDA     = 1 << 2,
  EMIT_DOT      = 1 << 3,
  EMIT_MANIFEST = 1 << 4,  /* NAME.json: what was generated, for build tools */
  EMIT_FORTRAN  = 1 << 5,  /* NAME_cnp.f90 + NAME_cnp_layout.c: the Fortran module (gen_fortran.c) */
  EMIT_CXX      = 1 << 6,  /* NAME.hpp: the C++17 wrapper (gen_cxx.c) */
  EMIT_DEFAULT  = EMIT_HEADER | EMIT_C | EMIT_CUDA,
};

typedef enum ColorMode { COLOR_NEVER = 0, COLOR_ALWAYS, COLOR_AUTO } ColorMode;

/* The compiler's own warnings, each with a gcc-style flag name (-W<name>, -Wno-<name>,
** -Werror=<name>). Add a kind here and its name in diag.c's warn_names[]. */
typedef enum WarnKind {
  WARN_UNUSED_EVENT,        /* -Wunused-event: an event recorded but never waited for */
  WARN_COMPACT_OMITS,       /* -Wcompact-omits: a field over the compacted dim left out of it */
  WARN_SORT_OMITS,          /* -Wsort-omits: a field over the sorted dim left out of the sort */
  WARN_COUNT_
} WarnKind;

const char *diag_warn_name(WarnKind w);           /* "unused-event" */
int         diag_warn_lookup(const char *name);   /* WarnKind, or -1 */

typedef struct CnpOptions {
  const char *input;        /* the .cnp file ("-" is not supported) */
  const char *output;       /* -o FILE: base path of outputs (NULL = from the input name) */
  const char *out_dir;      /* --out-dir DIR (NULL = current directory) */
  unsigned emit;            /* --emit=header,c,cuda,dot (EMIT_* bits) */
  bool no_line;             /* --no-line: no #line directives */
  bool debug_bounds;        /* --debug-bounds: the units define CNP_DEBUG_BOUNDS (index checks) */
  bool explain_fusion;      /* --explain-fusion */
  FILE *report;             /* where the fusion report goes (main: stdout; NULL = nowhere) */
  bool dump_ast;            /* --dump-ast: print the checked AST to stdout */
  bool print;               /* --print: print the checked AST back as .cnp source */
  bool check_only;          /* --check: front end only */
  bool werror;              /* -Werror: every warning is an error */
  bool no_warnings;         /* -w: no warnings at all */
  unsigned warn_off;        /* -Wno-<name>: bits (1u << WarnKind) turned off */
  unsigned warn_error;      /* -Werror=<name>: bits made errors (-Wno-error=<name> clears) */
  unsigned warn_not_error;  /* -Wno-error=<name>: bits kept warnings under -Werror */
  const char **include_dirs;/* -I DIR, in order */
  int n_include_dirs;
  bool md;                  /* -MD: write a depfile */
  const char *mf;           /* -MF FILE */
  const char *mt;           /* -MT TARGET */
  bool mp;                  /* -MP: phony targets for dependencies */
  ColorMode color;          /* --color=never|always|auto (default never) */
  const char *interpret;    /* --interpret IN: run the reference interpreter on data file IN */
  const char *interpret_out;/* --interpret-out OUT: where it writes the fields */
  bool interpret_cuda;      /* --interpret-order=cuda: reductions in the CUDA backend's order */
} CnpOptions;

/* ======================================================================== the compilation */

/* Global symbol table entry (sema.c: open addressing keyed by the interned name pointer). */
typedef struct Sym {
  const char *name;         /* interned (ast_str) */
  Decl *decl;
  int pos;                  /* position of the declaration in program order */
} Sym;

/* Interned identifier (ast_str). */
typedef struct InternEnt {
  const char *s;
  unsigned hash;
  int len;
} InternEnt;

struct Cnp {
  Arena arena;
  const CnpOptions *opt;
  FILE *diag_out;           /* diagnostics sink */
  bool color;               /* colorize diagnostics */
  int n_errors, n_warnings;

  CnpFile *files;           /* all loaded files, main first */
  CnpFile **files_tail;
  const char **deps;        /* imported files (resolved paths, load order) for depfiles */
  int n_deps, cap_deps;

  Decl *decls;              /* top-level declarations in program order */
  Decl **decls_tail;
  Decl *pipeline;           /* the `pipeline NAME;` declaration */
  int n_decl[DECL__COUNT];  /* counts per kind (Decl.index is assigned from these) */
  int n_locals;

  /* sema: n x n (n = streams), [t * n + u] true when stream t must wait, at the start of a
  ** step() call, for the work stream u enqueued in the previous call: an object (field,
  ** plan, snapshot, mirror, staging) is written on one of them and used on the other.
  ** NULL: no such pair. */
  bool *stream_join;

  Sym *symtab;              /* global scope, filled by sema (symtab_cap entries) */
  int symtab_cap;

  /* parser state (parse.c / parser.y) */
  const CnpFile *cur_file;
  int import_depth;
  const CnpFile **import_stack;  /* files being parsed, to detect cycles */
  bool parse_abort;         /* stack overflow / nesting too deep: stop feeding tokens */
  bool depth_reported;      /* 'expression nested too deeply' given once */
  Loc tok_loc;              /* token being fed to the parser */
  bool muted;               /* CNP_MAX_ERRORS reached: further diagnostics are not shown */
  Token prev_tok;           /* the token before the current one (.z NULL at the start of a file) */
  int prev_code;            /* its TK_ code (0 at the start of a file) */
  bool in_map;              /* the token being fed is inside a map's body */
  bool in_recovery;         /* after a syntax error, until the parser resynchronizes at ';' */
  Loc last_syntax;          /* where the last syntax error was reported (no duplicates) */
  struct InternEnt *intern; /* interned identifiers (open addressing) */
  int intern_cap, intern_n;
};

/* Create / destroy a compilation. `diag` receives diagnostics (stderr in the CLI). */
Cnp *cnp_new(const CnpOptions *opt, FILE *diag);
void cnp_free(Cnp *cc);
/* Front end on a file or an in-memory buffer (used by the fuzzer): parse, imports, sema.
** Returns the number of errors (0 = the AST is complete and checked). */
int cnp_compile_file(Cnp *cc, const char *path);
int cnp_compile_buffer(Cnp *cc, const char *name, const char *src, size_t len);

/* ======================================================================== diag.c */

#define CNP_MAX_ERRORS 100   /* errors shown; later ones are counted, not shown */
void diag_error(Cnp *cc, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void diag_warning(Cnp *cc, WarnKind w, Loc loc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void diag_note(Cnp *cc, Loc loc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Stop showing diagnostics (prints one note the first time). */
void diag_too_many(Cnp *cc);
/* An error without a source location ("cnpc: error: ..."). */
void diag_plain(Cnp *cc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Internal compiler error: prints and aborts (compiler bugs only). */
_Noreturn void cnp_ice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Levenshtein distance, capped (for "did you mean"). */
int diag_edit_distance(const char *a, const char *b, int cap);

/* ======================================================================== lexer.re */

/* The scanner's state over one loaded file. */
typedef struct Lexer {
  const char *cur, *mar, *lim, *line_start;
  int line;
  const CnpFile *file;
  Cnp *cc;
} Lexer;
void lex_init(Lexer *lx, Cnp *cc, const CnpFile *f);
/* Scan one token into *t; returns its TK_ code (parser.h), 0 at the end of the input. */
int lex_next(Lexer *lx, Token *t);
/* Human name of a token code for messages ("';'", "identifier", "end of file"). */
const char *lex_token_name(int code);

/* ======================================================================== parse.c */

/* Parse one source file (already loaded into cc->files) and its imports, appending
** declarations to cc->decls. */
void lex_parse_file(Cnp *cc, CnpFile *f);
/* Load a file into the arena (NUL-terminated). NULL + diagnostic on failure. */
CnpFile *lex_load_file(Cnp *cc, const char *path, Loc from);
CnpFile *lex_add_buffer(Cnp *cc, const char *name, const char *src, size_t len);
/* `import "name";` at `at` in cc->cur_file: resolve, detect cycles, parse. */
void lex_import(Cnp *cc, Loc at, const char *name);

/* ======================================================================== ast.c */

/* Growing lists used while parsing (arena-backed). */
typedef struct ExprList { Expr **v; int n, cap; } ExprList;
typedef struct RefVec { Ref *v; int n, cap; } RefVec;
typedef struct StmtList { Stmt *head, *tail; } StmtList;

/* Constructors called from the grammar actions (one call per action). */
Loc   ast_loc(Cnp *cc, Token t);
Loc   ast_span(Loc a, Loc b);                     /* from a to the end of b (same line) */
const char *ast_str(Cnp *cc, Token t);   /* interned: equal names share one pointer */
const char *ast_intern_find(Cnp *cc, const char *z, size_t n);   /* the interned copy, or NULL */
Ref   ast_ref(Cnp *cc, Token t);
DType ast_dtype(Cnp *cc, Token t);

Expr *ast_int(Cnp *cc, Token t);
Expr *ast_float(Cnp *cc, Token t);
Expr *ast_imag(Cnp *cc, Token t);    /* 2.5i: complex(0.0, 2.5) */
Expr *ast_bool(Cnp *cc, Token t, bool v);
Expr *ast_name(Cnp *cc, Token t);
Expr *ast_index(Cnp *cc, Token name, ExprList idx, Token close);
Expr *ast_unary(Cnp *cc, Token optok, Op op, Expr *a);
Expr *ast_binary(Cnp *cc, Op op, Expr *a, Expr *b);
Expr *ast_call(Cnp *cc, Token name, ExprList args, Token close);
Expr *ast_cast(Cnp *cc, Token type, Expr *a, Token close);
Expr *ast_paren(Cnp *cc, Token open, Expr *a, Token close);

ExprList ast_exprs(Cnp *cc, ExprList l, Expr *e);   /* append (l may be empty {0}) */
RefVec   ast_refs(Cnp *cc, RefVec l, Token t);
StmtList ast_stmts(Cnp *cc, StmtList l, Stmt *s);  /* append (s may be NULL: error recovery) */
RefList  ast_reflist(RefVec v);

/* Declarations (each appends to cc->decls). */
void ast_pipeline(Cnp *cc, Token kw, Token name);
void ast_import(Cnp *cc, Token kw, Token path);
void ast_param(Cnp *cc, Token kw, Token name, Token type, bool setup);
void ast_const(Cnp *cc, Token kw, Token name, Token *type, Expr *value);
void ast_dim(Cnp *cc, Token kw, Token name);
void ast_field(Cnp *cc, Token kw, Token name, Token type, ExprList ext);
void ast_streams(Cnp *cc, Token kw, RefVec names);
void ast_events(Cnp *cc, Token kw, RefVec names);
void ast_snapshot(Cnp *cc, Token kw, Token name, Token func, Token field, Expr *slots);
void ast_mpi(Cnp *cc, Token kw, Token name, Token func, Token type, ExprList ext, Token aware);
void ast_mirror(Cnp *cc, Token kw, Token name, Token func, Token field);
void ast_plan(Cnp *cc, Token kw, Token name, Token func, Token key, Expr *n);
void ast_kernel(Cnp *cc, Token kw, Token name, Token file, Token *host);
void ast_scalar(Cnp *cc, Token kw, Token name, Token type);
void ast_history(Cnp *cc, Token kw, Token name, Token scalar, Expr *k);
/* grid NAME = [EXTENTS] CLAUSES;  (`kw` the contextual word, TK_GRID; clauses EX_CALL each) */
void ast_grid(Cnp *cc, Token kw, Token name, ExprList ext, ExprList clauses);
/* grid NAME = rfft(G [, measure]);  the spectral grid of G (.target = G, .value the call as
** written, .fft_measure; sema_fft.c fills .grid) */
void ast_grid_rfft(Cnp *cc, Token kw, Token name, Token func, Token of, Token *measure, Token close);
/* grid K = rfft(G) WORD;  the same, and an error at WORD (`split`: a spectral grid is split as G is) */
void ast_grid_rfft_word(Cnp *cc, Token kw, Token name, Token func, Token of, Token close, Token word);
void ast_step(Cnp *cc, Token kw, Token *name, Token stream, RefVec after, ExprList every,
              StmtList body);
ExprList ast_every(Cnp *cc, Expr *k, Token offset_kw, Expr *j);   /* every K offset J */
void ast_host_step(Cnp *cc, Stmt *s);              /* top-level exchange / migrate */

/* Statements. */
Stmt *ast_map(Cnp *cc, Token kw, Token index, Token over, StmtList body);
Stmt *ast_grid_map(Cnp *cc, Token kw, RefVec index, Token over, StmtList body);   /* map (j, i) in G */
Stmt *ast_named2(Cnp *cc, StmtKind k, Token kw, Token a, Token *b);   /* record/wait/offsets/copy */
Stmt *ast_listop(Cnp *cc, StmtKind k, Token kw, Token a, RefVec list); /* compact/sort/migrate */
/* migrate (ARRAYS) to GRID at (POS...);  `to` and `at` contextual words */
Stmt *ast_migrate_to(Cnp *cc, Token kw, RefVec list, Token to, Token grid, Token at, RefVec pos);
Stmt *ast_allreduce(Cnp *cc, Token kw, RefVec scalars);   /* allreduce S1, S2; (kw TK_ALLREDUCE, parse.c) */
Stmt *ast_sum(Cnp *cc, Token kw, Token plan, RefVec values, Token out);
Stmt *ast_segments(Cnp *cc, Token plan, Token func, Token key, Expr *n);
Stmt *ast_refresh(Cnp *cc, Token kw, Token mirror, Token dir);
Stmt *ast_exchange(Cnp *cc, Token kw, Token mpi, Token field, Expr *dest, Expr *src);
/* `exchange H with ...` without the field (the brief's sketch): sema reports it, with the
** fields that fit H as the fix. The ref of the field has name NULL, loc at `with`. */
Stmt *ast_exchange_nofield(Cnp *cc, Token kw, Token mpi, Token with, Expr *dest, Expr *src);
Stmt *ast_kcall(Cnp *cc, Token name, ExprList args, Expr *over);
Stmt *ast_repeat(Cnp *cc, Token kw, Expr *count, StmtList body);
Stmt *ast_every_block(Cnp *cc, Token kw, Expr *k, Token *offset_kw, Expr *j, StmtList body);
Stmt *ast_append(Cnp *cc, Token kw, Token dim, Expr *count, Token index, Token *local, StmtList body);
Stmt *ast_scan(Cnp *cc, Token kw, Token mode, Token src, Token dst);
/* `fft X -> Y;` / `ifft X -> Y;` (`word` the contextual word: parse.c makes it TK_FFT/TK_IFFT) */
Stmt *ast_fft(Cnp *cc, Token word, Token src, Token dst);
/* deposit W at (POS...) -> GRID with SHAPE [atomic]; / gather GRID at (POS...) -> OUT with
** SHAPE;  kw, at, shape and mode are identifiers checked here (contextual words); w_literal:
** 0 W is a name, 1 an integer literal, 2 a floating one. */
/* A syntax error at `deposit W` / `gather G` inside a map's body (contextual words). */
void ast_step_word_in_map(Cnp *cc, Token word);
Stmt *ast_pgrid(Cnp *cc, Token kw, Token w, int w_literal, Token at, RefVec pos, Token out,
                Token shape, Token *mode);
Stmt *ast_reduce(Cnp *cc, int red, Token name, Expr *value);
Stmt *ast_let(Cnp *cc, Token kw, Token name, Token *type, Expr *value);
Stmt *ast_assign(Cnp *cc, StmtKind k, Expr *target, Expr *value);
Stmt *ast_if(Cnp *cc, Token kw, Expr *cond, StmtList then_body, Stmt *else_stmt);
Stmt *ast_block_stmt(StmtList body);              /* else { ... } as a statement list head */
/* Parser callbacks: a syntax error at `tok` (expected: token codes the state accepts),
** and a parser stack overflow (nesting too deep). */
void  ast_syntax_error(Cnp *cc, Token tok, int major, const int *expected, int n_expected);
/* The keyword of a step statement, which no map body may hold ("sort" for TK_SORT), or NULL. */
const char *ast_step_statement(int code);
/* The cnp type for another language's type name ("double" -> "f64", "int64" -> "i64"), or NULL. */
const char *ast_foreign_type(const char *z, int n);
void  ast_stack_overflow(Cnp *cc);

/* ======================================================================== cnames.c */

/* Whether a user name can become a generated C identifier as it is: CN_KEYWORD (C/C++),
** CN_MACRO (an object-like macro: breaks any use), CN_LIBRARY (a function, type or
** function-like macro of the C library, OpenMP or CUDA, or (cn_clash_function) a CUDA device
** function: breaks a file-scope name), CN_RESERVED (cn_clash_function: __x, _X). */
typedef enum { CN_FREE, CN_KEYWORD, CN_MACRO, CN_LIBRARY, CN_RESERVED } CnClash;
CnClash cn_clash(const char *name);
CnClash cn_clash_function(const char *name);   /* + CUDA device functions, __x and _X (C11 7.1.3) */
const char *cn_clash_text(CnClash c);   /* "is reserved in C or C++", ... */

/* ======================================================================== sema.c (sema_*.c) */

/* Resolve names, check types/shapes, stream hazards. Returns the number of errors. */
int sema_check(Cnp *cc);
/* Global lookup (after sema). */
Decl *sema_lookup(Cnp *cc, const char *name);
/* "f64[3, N]": dtype and extents of a field or staging buffer (arena string). */
const char *sema_type_text(Cnp *cc, const Decl *f);
/* The type two operands of an arithmetic or comparison promote to (docs/language.md, Types). */
DType sema_promote(const Expr *a, const Expr *b);

/* ======================================================================== dump.c */

/* Stable text form of the (checked) AST, for --dump-ast and tests/parse. */
void dump_ast(Cnp *cc, FILE *out);
void dump_expr(FILE *out, const Expr *e);

/* ======================================================================== print.c */

/* The checked AST as .cnp source (--print): parses back to the same --dump-ast. */
void print_program(Cnp *cc, FILE *out);

/* ======================================================================== interp.c */

/* The reference interpreter (--interpret IN --interpret-out OUT): runs the checked program's
** steps on the fields of data file IN and writes them to OUT (file formats in interp.c and
** docs/robustness.md). Returns 0, or 1 after a message on diag. */
int interp_run(Cnp *cc, const char *in_path, const char *out_path, FILE *diag);

/* ======================================================================== gen.c (owned by "gen") */

/* Emit code for a checked compilation. Returns 0 on success, else reports through diag_*()
** and returns non-zero. */
int gen_emit(Cnp *cc, const CnpOptions *opt);

#endif /* CNPC_H */
