/*
** lower.c -- steps of the checked AST -> ordered GenOps: maps grouped into fused kernels,
** every other statement kept as one op. Also writes the --explain-fusion report and
** loads the sources of hand-written kernels.
*/
#include "gen.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Reads a kernel's .cu file (relative to the .cnp file that declares it) into the arena:
** the generated code embeds the source, so the program needs no file at run time. A
** directory opens but reads nothing: only a regular file is a source. The source is embedded
** as a C string and handed to NVRTC as one, so a NUL byte would cut it short: an error. */
static bool load_kernel_source(GenUnit *u, Decl *d) {
  const char *path = d->path, *slash = strrchr(d->file->path, '/');
  if (path[0] != '/' && slash)
    path = arena_printf(&u->cc->arena, "%.*s/%s", (int)(slash - d->file->path), d->file->path, path);
  struct stat st;
  FILE *f = stat(path, &st) == 0 && S_ISREG(st.st_mode) ? fopen(path, "rb") : NULL;
  if (!f) {
    diag_error(u->cc, d->path_loc, "cannot read kernel file '%s'", path);
    return false;
  }
  Buf b = {0};
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) buf_put(&b, chunk, n);
  fclose(f);
  const char *nul = b.n ? memchr(buf_str(&b), '\0', b.n) : NULL;
  if (nul) {
    diag_error(u->cc, d->path_loc, "kernel file '%s' has a NUL byte at offset %zu (its source is embedded "
               "as a C string)", path, (size_t)(nul - buf_str(&b)));
    buf_free(&b);
    return false;
  }
  u->kernel_src[d->index] = arena_strndup(&u->cc->arena, buf_str(&b), b.n);
  buf_free(&b);
  return true;
}

static bool check_decls(GenUnit *u) {
  bool ok = true;
  u->kernel_src = arena_alloc(&u->cc->arena, sizeof *u->kernel_src * (size_t)(u->cc->n_decl[DECL_KERNEL] + 1));
  for (Decl *d = u->cc->decls; d; d = d->next) {
    switch (d->kind) {
    case DECL_KERNEL: ok = load_kernel_source(u, d) && ok; break;
    default: break;
    }
  }
  return ok;
}

static void explain(GenUnit *u, Loc loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void explain(GenUnit *u, Loc loc, const char *fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  buf_printf(&u->explain, "%s:%d: %s\n", base_name(loc.file->path), loc.line, line);
}

/* Statements of a step, a repeat block counted with its end marker. */
static int count_stmts(const Stmt *s) {
  int n = 0;
  for (; s; s = s->next)
    n += s->kind == ST_REPEAT || s->kind == ST_EVERY ? 2 + count_stmts(s->body) : 1;
  return n;
}

static void lower_stmts(GenUnit *u, GenStep *gs, Stmt *first, int n);

static void lower_step(GenUnit *u, GenStep *gs) {
  Arena *a = &u->cc->arena;
  int n = count_stmts(gs->decl->body);
  gs->ops = arena_alloc(a, sizeof(GenOp) * (size_t)(n ? n : 1));
  gs->n_ops = 0;
  lower_stmts(u, gs, gs->decl->body, n);
}

/* A repeat block is its ST_REPEAT op, the block's ops, and an ST_REPEAT_END op: maps fuse
** inside the block, never across its ends. */
static void lower_stmts(GenUnit *u, GenStep *gs, Stmt *first, int n) {
  Arena *a = &u->cc->arena;
  GenOp *cur = NULL;
  for (Stmt *s = first; s; s = s->next) {
    if (s->kind == ST_APPEND) {   /* its own kernel over the new rows (gen_red.c) */
      cur = NULL;
      GenOp *op = &gs->ops[gs->n_ops++];
      op->kind = GOP_MAP;
      op->stmt = s;
      op->maps = arena_alloc(a, sizeof(Stmt *));
      op->maps[op->n_maps++] = s;
      op->kernel = u->n_kernels++;
      explain(u, s->loc, "append %s: kernel %s over the new rows", s->over.name,
              arena_printf(a, "k%d", op->kernel));
      continue;
    }
    if (s->kind == ST_REPEAT || s->kind == ST_EVERY) {   /* bracketed: begin, ops, end */
      cur = NULL;
      GenOp *op = &gs->ops[gs->n_ops++];
      op->kind = GOP_STMT;
      op->stmt = s;
      lower_stmts(u, gs, s->body, n);
      Stmt *end = arena_alloc(a, sizeof *end);
      end->kind = s->kind == ST_REPEAT ? ST_REPEAT_END : ST_EVERY_END;
      end->loc = s->loc;
      end->value = s->value;
      end->value2 = s->value2;
      op = &gs->ops[gs->n_ops++];
      op->kind = GOP_STMT;
      op->stmt = end;
      continue;
    }
    if (s->kind == ST_MAP && s->gndim) {   /* a grid map: its own kernel (gen_grid.c), never fused */
      GenOp *op = &gs->ops[gs->n_ops++];
      op->kind = GOP_MAP;
      op->stmt = s;
      op->maps = arena_alloc(a, sizeof(Stmt *));
      op->maps[op->n_maps++] = s;
      op->kernel = u->n_kernels++;
      if (cur) explain(u, s->loc, "map over grid %s: not fused: grid maps are never fused", s->over.name);
      explain(u, s->loc, "map over grid %s: kernel %s", s->over.name, arena_printf(a, "k%d", op->kernel));
      cur = NULL;
      continue;
    }
    if (s->kind == ST_MAP) {
      if (cur) {
        const char *why = fuse_check(u, cur->maps, cur->n_maps, s);
        if (!why) {
          cur->maps[cur->n_maps++] = s;
          explain(u, s->loc, "map %s in %s: fused into the kernel of the map above", s->index->name,
                  s->over.name);
          continue;
        }
        explain(u, s->loc, "map %s in %s: not fused: %s", s->index->name, s->over.name, why);
      }
      GenOp *op = &gs->ops[gs->n_ops++];
      op->kind = GOP_MAP;
      op->stmt = s;
      op->maps = arena_alloc(a, sizeof(Stmt *) * (size_t)n);
      op->maps[op->n_maps++] = s;
      op->kernel = u->n_kernels++;
      cur = op;
      explain(u, s->loc, "map %s in %s: starts kernel %s", s->index->name, s->over.name,
              arena_printf(a, "k%d", op->kernel));
      continue;
    }
    if (cur && s->kind == ST_COMPACT && s->a.decl) {
      bool writes = false;
      for (int i = 0; i < cur->n_maps; i++) {
        bool w = false;
        gen_stmts_touch(cur->maps[i]->body, s->a.decl, &w, NULL);
        writes = writes || w;
      }
      if (writes) {
        cur->mask_of = s;
        explain(u, s->loc, "compact %s: mask produced inside kernel %s", s->a.name,
                arena_printf(a, "k%d", cur->kernel));
      }
    }
    cur = NULL;   /* any other statement ends the run of maps */
    GenOp *op = &gs->ops[gs->n_ops++];
    op->kind = GOP_STMT;
    op->stmt = s;
  }
}

static bool in_list(RefList *l, Decl *d) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i].decl == d) return true;
  return false;
}

/*
** Host fast path: "map ...; compact M (L); sort K (L - K);" where the kernel writes M and
** K, a plan `segments(K, R)` bounds K, and the kernel does not gather or scatter any array
** of L. The kernel then counts live keys per thread while it runs, and one scatter pass
** moves each live row straight to its sorted place (compaction and counting sort in one,
** into double buffers); the plan's offsets fall out of the counts. Keys outside [0, R)
** make the generated code fall back to the runtime's compact and sort.
*/
/* Why compact c + sort srt after kernel op cannot take the fast path (NULL: it can). */
static const char *fast_path_blocker(GenUnit *u, GenOp *op, Stmt *c, Stmt *srt, Decl **plan_out) {
  Arena *a = &u->cc->arena;
  Decl *key = srt->a.decl, *dim = op->stmt->over.decl, *plan = NULL;
  if (dim->kind != DECL_DIM) return "the kernel does not map over a dim";
  if (red_group(op)) return "the kernel reduces into a scalar (its loop is chunked)";
  if (key->dtype != DT_I64 && key->dtype != DT_I32) return "the key is not i32/i64";
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_PLAN && d->target.decl == key) plan = d;
  if (!plan) return arena_printf(a, "no plan segments(%s, ...) bounds the key", key->name);
  if (lower_plan_producer(u, plan)) return "the plan's offsets already come from another kernel";
  bool ok = in_list(&c->list, key) && c->list.n == srt->list.n + 1;
  for (int i = 0; ok && i < srt->list.n; i++) ok = in_list(&c->list, srt->list.v[i].decl);
  if (!ok) return "the compacted arrays are not exactly the sorted arrays plus the key";
  bool writes_key = false;
  for (int i = 0; i < c->list.n; i++) {
    Decl *f = c->list.v[i].decl, *fd;
    bool w = false, g = false;
    if (!gen_decl_is_dim_extent(f, &fd) || fd != dim)
      return arena_printf(a, "'%s' is not indexed by '%s'", f->name, dim->name);
    for (Decl *m = u->cc->decls; m; m = m->next)
      if (m->kind == DECL_MIRROR && m->target.decl == f)
        return arena_printf(a, "'%s' is a device mirror (its storage is not the pipeline's)", f->name);
    for (int m = 0; m < op->n_maps; m++) {
      gen_stmts_touch(op->maps[m]->body, f, &w, &g);
      if (g) return arena_printf(a, "the kernel reads or adds '%s' at other elements", f->name);
      if (f == key && w) writes_key = true;
    }
  }
  if (!writes_key) return arena_printf(a, "the kernel does not write the key '%s'", key->name);
  *plan_out = plan;
  return NULL;
}

/*
** The dry first pass of the fast path. Pass 1 of the fused kernel computes the maps' values
** for a row in locals and stores only the mask, the fields no compaction moves and the row's
** key (a uint32 per row); pass 2 computes the same values again from the same inputs and
** writes the compacted fields straight into the double buffers, so the fields the scatter
** moves are neither written by pass 1 nor read back by pass 2. Valid when recomputing reads
** exactly what pass 1 read: every field the kernel writes is held in locals per row
** (element-wise accesses with constant components, no scatter-add), and the fields pass 1
** does store (the mask, written fields outside the compaction) are never read by the maps.
** Pass 2 places rows by the keys pass 1 stored, never by recomputed ones.
*/
#define DRY_MAX_COST 256    /* operations per row beyond which recomputing costs more than the
                            ** memory traffic it saves (calls count 8) */
static const char *dry_blocker(GenUnit *u, GenOp *op, const char **stores) {
  Arena *a = &u->cc->arena;
  Stmt *c = op->mask_of;
  Decl *mask = c->a.decl, *key = op->fused_sort->a.decl;
  RowVals rv;
  const char *why = fuse_row_values(u, op, &rv);
  if (why) return why;
  if (mask->shape.rank != 1 || key->shape.rank != 1)
    return "the mask or the key has components";
  *stores = mask->name;
  for (int i = 0; i < rv.n; i++) {
    Decl *f = rv.v[i].f;
    bool stored = f == mask || !in_list(&c->list, f);
    if (stored && rv.v[i].read)
      return arena_printf(a, "the maps read '%s', which the first pass stores", f->name);
    bool listed = f == mask;
    for (int j = 0; j < i; j++) listed = listed || rv.v[j].f == f;
    if (stored && !listed) *stores = arena_printf(a, "%s, %s", *stores, f->name);
  }
  if (rv.cost > DRY_MAX_COST)
    return arena_printf(a, "recomputing the maps (%d operations per row) costs more than it saves",
                        rv.cost);
  return NULL;
}

/*
** The sum over the fast path's plan, fused into the scatter pass: `sum PLAN (VALUES) -> OUT`
** right after `PLAN = segments(KEY, R)`. Thread 0 adds each value as it moves its row (its
** rows come first in every segment, in order); after the scatter, the rows of the other
** threads are added in sorted order. The additions are the same, in the same order, as a
** sequential pass over each segment, so the sums are bit for bit those of that pass.
*/
static const char *sum_blocker(GenUnit *u, GenOp *op, Stmt *sum) {
  Arena *a = &u->cc->arena;
  Decl *out = sum->b.decl;
  if (dtype_is_complex(out->dtype) || out->dtype == DT_F16)
    return arena_printf(a, "'%s' is %s", out->name, dtype_name(out->dtype));
  if (in_list(&op->mask_of->list, out)) return arena_printf(a, "'%s' is compacted", out->name);
  for (int m = 0; m < op->n_maps; m++)
    if (gen_stmts_touch(op->maps[m]->body, out, NULL, NULL))
      return arena_printf(a, "the kernel accesses '%s'", out->name);
  for (int i = 0; i < sum->list.n; i++) {
    Decl *f = sum->list.v[i].decl;
    int64_t nc;
    if (!in_list(&op->mask_of->list, f))
      return arena_printf(a, "'%s' is not moved by the kernel", f->name);
    if (dtype_is_complex(f->dtype) || f->dtype == DT_F16)
      return arena_printf(a, "'%s' is %s", f->name, dtype_name(f->dtype));
    if (!fuse_const_ncomp(f, &nc))
      return arena_printf(a, "the leading extents of '%s' are not constants", f->name);
  }
  return NULL;
}

static void find_fast_path(GenUnit *u, GenStep *gs) {
  for (int o = 0; o + 2 < gs->n_ops; o++) {
    GenOp *op = &gs->ops[o];
    Stmt *c = gs->ops[o + 1].stmt, *srt = gs->ops[o + 2].stmt;
    if (op->kind != GOP_MAP || op->mask_of != c || srt->kind != ST_SORT) continue;
    Decl *plan = NULL, *key = srt->a.decl;
    const char *why = fast_path_blocker(u, op, c, srt, &plan);
    if (why) {
      explain(u, srt->loc, "sort %s: runtime compact + sort, not done by kernel k%d: %s", key->name,
              op->kernel, why);
      continue;
    }
    op->fused_sort = srt;
    op->fused_plan = plan;
    explain(u, srt->loc, "sort %s: compaction and counting sort done by kernel k%d and one "
            "scatter pass on the host (keys bounded by plan %s)", key->name, op->kernel,
            plan->name);
    const char *stores = "", *dry = dry_blocker(u, op, &stores);
    op->dry = dry == NULL;
    if (dry)
      explain(u, op->stmt->loc, "kernel k%d: not dry: the first pass writes every field the maps "
              "write: %s", op->kernel, dry);
    else
      explain(u, op->stmt->loc, "kernel k%d: dry first pass: it stores only %s and the keys; the "
              "scatter pass computes the maps again and writes the moved fields straight into "
              "the double buffers", op->kernel, stores);
    if (o + 3 < gs->n_ops && gs->ops[o + 3].stmt->kind == ST_SEGMENTS &&
        gs->ops[o + 3].stmt->a.decl == plan && gs->ops[o + 3].stmt->b.decl == key) {
      gs->ops[o + 3].seg_inline = true;
      Stmt *sum = o + 4 < gs->n_ops ? gs->ops[o + 4].stmt : NULL;
      if (sum && sum->kind == ST_SUM && sum->a.decl == plan) {
        const char *swhy = sum_blocker(u, op, sum);
        if (swhy) {
          explain(u, sum->loc, "sum %s -> %s: a pass over the segments after kernel k%d: %s",
                  plan->name, sum->b.name, op->kernel, swhy);
        } else {
          op->fused_sum = sum;
          explain(u, sum->loc, "sum %s -> %s: done by kernel k%d while it scatters (the same "
                  "additions in the same order as a pass over each segment)", plan->name,
                  sum->b.name, op->kernel);
        }
      }
    }
  }
}

const char *lower_kernel_source(GenUnit *u, Decl *kernel) { return u->kernel_src[kernel->index]; }

GenOp *lower_plan_producer(GenUnit *u, Decl *plan) {
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++)
      if (u->steps[i].ops[o].fused_plan == plan) return &u->steps[i].ops[o];
  return NULL;
}

/*
** Hints for a step captured as a CUDA graph, where the live row count stays on the device and
** the runtime cannot look at the keys. A sort by a key that a plan's segments(KEY, RANGE)
** bounds sorts only RANGE's bits (the runtime still sorts keys outside exactly, more slowly),
** and a segments(...) right after a sort by its key builds its offsets without sorting again.
*/
static void find_graph_hints(GenUnit *u, GenStep *gs) {
  for (int o = 0; o < gs->n_ops; o++) {
    GenOp *op = &gs->ops[o];
    Stmt *s = op->stmt;
    if (op->kind != GOP_STMT) continue;
    if (s->kind == ST_SORT && (s->a.decl->dtype == DT_I64 || s->a.decl->dtype == DT_I32)) {
      for (Decl *d = u->cc->decls; d; d = d->next)
        if (d->kind == DECL_PLAN && d->target.decl == s->a.decl) op->sort_bound = d;
    }
    if (s->kind == ST_SEGMENTS && o > 0 && gs->ops[o - 1].kind == GOP_STMT) {
      Stmt *prev = gs->ops[o - 1].stmt;
      op->seg_sorted = prev->kind == ST_SORT && prev->a.decl == s->b.decl;
    }
  }
}

/*
** Scan fusion (host and CUDA): a kernel that writes X, right before `scan X -> Y`, adds up each chunk of
** SCAN_CHUNK rows of X after computing those rows (the scan's pass 1, while they are in
** cache); the scan then runs passes 2 and 3 only. The sums are the same, in the same order, so
** the results are bit for bit those of the unfused scan. Legal when every access to X in the
** kernel is X[c..., i] (no row reads or writes another row's X, no scatter-add into X) and the
** kernel runs over X's last extent, which is then the scan's live extent.
*/
static bool scan_access_ok(const Expr *e, const Decl *x) {
  if (!e) return true;
  if (e->kind == EX_INDEX && e->ref.decl == x) {
    const Expr *last = e->args[e->nargs - 1];
    if (!(last->kind == EX_NAME && last->ref.local && last->ref.local->is_index)) return false;
  }
  for (int i = 0; i < e->nargs; i++)
    if (!scan_access_ok(e->args[i], x)) return false;
  return true;
}

static bool scan_stmts_ok(const Stmt *s, const Decl *x) {
  for (; s; s = s->next) {
    if (!scan_access_ok(s->value, x) || !scan_access_ok(s->target, x)) return false;
    if (s->scatter && s->target && s->target->ref.decl == x) return false;
    if (!scan_stmts_ok(s->body, x) || !scan_stmts_ok(s->else_body, x)) return false;
  }
  return true;
}

static const char *scan_fuse_blocker(GenUnit *u, GenOp *op, Stmt *scan) {
  Decl *x = scan->a.decl, *over = op->stmt->over.decl;
  Expr *last = x->shape.ext[x->shape.rank - 1];
  bool writes = false;
  if (op->stmt->kind == ST_APPEND) return "the kernel appends rows";
  if (gen_grid_map(op->stmt)) return "grid maps keep their own loop nest";
  if (op->fused_sort || op->mask_of || red_group(op)) return "the kernel ends in a compaction or reduces";
  for (int m = 0; m < op->n_maps; m++) {
    bool w = false;
    gen_stmts_touch(op->maps[m]->body, x, &w, NULL);
    writes = writes || w;
  }
  if (!writes) return arena_printf(&u->cc->arena, "the kernel does not write '%s'", x->name);
  if (x->dtype != DT_I32 && x->dtype != DT_I64 && x->dtype != DT_U64 && x->dtype != DT_F32 && x->dtype != DT_F64)
    return "its dtype";
  if (!over || last->kind != EX_NAME || last->ref.decl != over)
    return arena_printf(&u->cc->arena, "the kernel does not run over the extent of '%s'", x->name);
  for (int m = 0; m < op->n_maps; m++)
    if (!scan_stmts_ok(op->maps[m]->body, x))
      return arena_printf(&u->cc->arena, "'%s' is accessed at another row or scatter-added", x->name);
  return NULL;
}

static void find_scan_fusion(GenUnit *u, GenStep *gs) {
  for (int o = 0; o + 1 < gs->n_ops; o++) {
    GenOp *op = &gs->ops[o], *sc = &gs->ops[o + 1];
    if (op->kind != GOP_MAP || sc->kind != GOP_STMT || sc->stmt->kind != ST_SCAN) continue;
    const char *why = scan_fuse_blocker(u, op, sc->stmt);
    if (why) {
      explain(u, sc->stmt->loc, "scan %s: not fused with kernel k%d: %s", sc->stmt->a.decl->name, op->kernel, why);
      continue;
    }
    op->scan_fused = sc;
    sc->scan_by = op;
    explain(u, sc->stmt->loc, "scan %s: chunk totals (pass 1) computed by kernel k%d as it writes them (host and CUDA)",
            sc->stmt->a.decl->name, op->kernel);
  }
}

int lower_unit(GenUnit *u) {
  Cnp *cc = u->cc;
  bool ok = check_decls(u);
  int n = 0;
  for (Decl *d = cc->decls; d; d = d->next)
    if (d->kind == DECL_STEP) {
      n++;
    }
  if (!ok) return 1;
  u->steps = arena_alloc(&cc->arena, sizeof(GenStep) * (size_t)(n ? n : 1));
  int n_mpi = 0, n_scan = 0;
  for (Decl *d = cc->decls; d; d = d->next)
    if (d->kind == DECL_STEP) {
      GenStep *gs = &u->steps[u->n_steps++];
      gs->decl = d;
      lower_step(u, gs);
      find_fast_path(u, gs);
      find_graph_hints(u, gs);
      find_scan_fusion(u, gs);
      for (int o = 0; o < gs->n_ops; o++) {
        StmtKind k = gs->ops[o].stmt->kind;
        if (k == ST_SCAN) gs->ops[o].scan_id = n_scan++;
        if (k == ST_FFT || k == ST_IFFT) gs->ops[o].fft_id = fft_plan_of(u, gs->ops[o].stmt);
        if (k == ST_EXCHANGE || k == ST_MIGRATE) {
          gs->ops[o].mpi_id = n_mpi++;
          u->uses_mpi = u->mpi_required = true;
        }
        if (k == ST_ALLREDUCE) {
          gs->ops[o].mpi_id = n_mpi++;
          u->uses_mpi = u->allreduce = true;
        }
      }
    }
  for (Decl *d = cc->decls; d; d = d->next) {
    if (d->kind == DECL_MPI) u->uses_mpi = u->mpi_required = true;
    if (d->kind == DECL_GRID && d->grid->split) u->uses_mpi = u->split = true;
  }
  pgrid_lower(u);
  lower_decide(u);
  return 0;
}

/* ======================================================================== decisions (the IR) */

/* Are all fields of the list over dim `dim` (a live extent)? */
static bool list_over(RefList *l, Decl *dim) {
  Decl *fd = NULL;
  for (int k = 0; k < l->n; k++)
    if (!gen_decl_is_dim_extent(l->v[k].decl, &fd) || fd != dim) return false;
  return true;
}

Decl *graph_stmt_dim(const Stmt *s) {
  Decl *dim = NULL, *f;
  switch (stmt_of(s->kind)->graph) {
  case SG_COMPACT: case SG_DIM_A: f = s->a.decl; break;
  case SG_DIM_B: f = s->b.decl; break;
  case SG_DIM_LIST: f = s->list.n > 0 ? s->list.v[0].decl : NULL; break;
  default: return NULL;
  }
  return f && gen_decl_is_dim_extent(f, &dim) ? dim : NULL;
}

/* The plan a statement reads (use SU_READ) or builds (SU_WRITE) as operand a, or NULL. */
static Decl *plan_use(const Stmt *s, unsigned use) {
  Decl *p = s->a.decl;
  return (stmt_of(s->kind)->a & use) && p && p->kind == DECL_PLAN ? p : NULL;
}

/* Is every statement that reads plan `plan` in the unit inside ops (o, e) of step gs? (A
** plan built with a device count describes the capacity's rows, which only the graph's
** sums expect.) */
static bool plan_reads_inside(GenUnit *u, Decl *plan, GenStep *gs, int o, int e) {
  for (int i = 0; i < u->n_steps; i++)
    for (int k = 0; k < u->steps[i].n_ops; k++) {
      GenOp *op = &u->steps[i].ops[k];
      if (op->kind != GOP_STMT || plan_use(op->stmt, SU_READ) != plan) continue;
      if (&u->steps[i] != gs || k <= o || k >= e) return false;
    }
  return true;
}

/* Can a fused kernel be captured: its extent a dim or setup param/const, no dim read as a
** value (a host fast-path kernel, fused_sort, is a plain map kernel on CUDA). */
static bool graph_kernel_ok(GenUnit *u, GenOp *op) {
  Decl *over = op->stmt->over.decl;
  KUse use;
  if (!over) return false;
  if (gen_grid_map(op->stmt)) {   /* a grid map: its points a setup-time product (gen_grid.c) */
    group_use(u, op, &use);
    return use.n_dims == 0;
  }
  if (over->kind == DECL_PARAM && !over->setup) return false;
  if (over->kind != DECL_DIM && over->kind != DECL_PARAM && over->kind != DECL_CONST) return false;
  group_use(u, op, &use);
  /* an append in a graph: its rows and the new extent decided on the device (gen_cuda.c) */
  if (op->stmt->kind == ST_APPEND && (over->kind != DECL_DIM || use.n_reds)) return false;
  return use.n_dims == 0;
}

/* Can statement op o of gs (ops [0, e) captured) be in the graph (StmtInfo.graph)? */
static bool graph_stmt_ok(GenUnit *u, GenStep *gs, int o, int e) {
  Stmt *s = gs->ops[o].stmt;
  StmtGraph form = stmt_of(s->kind)->graph;
  Decl *dim = graph_stmt_dim(s), *plan;
  if (form == SG_PLAIN) return true;
  if (!dim && s->kind == ST_SCAN) return true;   /* over a setup extent: captured as it is */
  if (!dim) return false;
  if (form == SG_COMPACT && (o == 0 || gs->ops[o - 1].kind != GOP_MAP || gs->ops[o - 1].mask_of != s ||
                             gs->ops[o - 1].stmt->over.decl != dim))
    return false;
  if (!list_over(&s->list, dim)) return false;
  Decl *fd = NULL, *rows = s->kind == ST_DEPOSIT ? s->a.decl : s->kind == ST_GATHER ? s->b.decl : NULL;
  if (rows && (!gen_decl_is_dim_extent(rows, &fd) || fd != dim))   /* weights, output: over dim too */
    return false;
  if ((plan = plan_use(s, SU_WRITE)) != NULL && !plan_reads_inside(u, plan, gs, o, e)) return false;
  if ((plan = plan_use(s, SU_READ)) != NULL) {   /* built before, in this graph, over dim */
    bool built = false;
    for (int k = 0; k < o; k++)
      if (gs->ops[k].kind == GOP_STMT && plan_use(gs->ops[k].stmt, SU_WRITE) == plan &&
          graph_stmt_dim(gs->ops[k].stmt) == dim)
        built = true;
    if (!built) return false;
  }
  return true;
}

/* A step is replayed as a CUDA graph, captured once at setup, when its work needs no host
** decision: ops [0, *end) are fused kernels (no hand-written ones, none reading a dim's
** extent as a value, extents that are dims or setup params) and statements with a graph
** form (StmtInfo.graph: compactions whose mask the kernel just before writes, sorts, segment
** plan builds, sums, deposits and gathers over a dim's live extent, whose row counts stay on
** the device: the *_device_count runtime calls; grid maps, halos and FFTs read no live
** extent); the ops from *end on may only be SG_TAIL ones (`record`s),
** run directly after the graph launch. A plan built in a graph must be read only by
** statements after it in the same graph. Anything else (offsets, copy, refresh, wait, call,
** exchange, migrate, host steps) runs as direct launches. On the host backend none of this
** exists: `.c` units have no graphs. */
static bool graph_step(GenUnit *u, GenStep *gs, int *end) {
  if (!gs->decl->stream.decl) return false;
  int blocks = 0;   /* every blocks: one graph per pattern of those due (gen_cuda.c), at most 8 */
  for (int o = 0; o < gs->n_ops; o++) blocks += gs->ops[o].stmt->kind == ST_EVERY;
  if (blocks > 3) return false;
  int n_dims = 0;   /* GDims holds 32: a program with more dims runs its steps without graphs */
  for (Decl *d = u->cc->decls; d; d = d->next) n_dims += d->kind == DECL_DIM;
  if (n_dims > 32) return false;
  int e = gs->n_ops;
  while (e > 0 && gs->ops[e - 1].kind == GOP_STMT && stmt_of(gs->ops[e - 1].stmt->kind)->graph == SG_TAIL)
    e--;
  if (e == 0) return false;
  for (int o = 0; o < e; o++) {
    GenOp *op = &gs->ops[o];
    StmtKind k = op->stmt->kind;
    /* repeat (K setup-time: unrolled into the graph at capture) and swap (the host swaps the
    ** views while capturing: one graph per buffer state) have no graph form of their own */
    if (op->kind == GOP_STMT && (k == ST_REPEAT || k == ST_REPEAT_END || k == ST_SWAP || k == ST_EVERY ||
                                 k == ST_EVERY_END))
      continue;   /* every: its ops in the graphs of the calls it is due */
    if (op->kind == GOP_MAP ? !graph_kernel_ok(u, op) : !graph_stmt_ok(u, gs, o, e)) return false;
  }
  *end = e;
  return true;
}

static void gdims_add(GDims *g, Decl *d, bool compacted) {
  for (int i = 0; i < g->n; i++)
    if (g->d[i] == d) {
      g->compacted[i] = g->compacted[i] || compacted;
      return;
    }
  if (g->n == 32) cnp_ice("too many dims in CUDA graphs");   /* graph_step() rules it out */
  g->d[g->n] = d;
  g->compacted[g->n++] = compacted;
}

static void graph_dims(GenStep *gs, int end, GDims *g) {
  for (int o = 0; o < end; o++) {
    GenOp *op = &gs->ops[o];
    Decl *dim = NULL;
    if (op->kind == GOP_MAP && op->stmt->over.decl->kind == DECL_DIM)   /* append: grows it there */
      gdims_add(g, op->stmt->over.decl, op->stmt->kind == ST_APPEND);
    else if (op->kind == GOP_STMT && (dim = graph_stmt_dim(op->stmt)) != NULL)
      gdims_add(g, dim, stmt_of(op->stmt->kind)->graph == SG_COMPACT);
  }
}

/* Does step gs, run directly, read live extents on the host (so that an extent only the
** device holds must come back first)? Statements without StmtInfo.host_extents (records,
** waits, snapshot copies, mirror refreshes) and maps over a param or const that do not read
** a dim's extent do not. */
static bool step_reads_extents(GenUnit *u, GenStep *gs) {
  for (int o = 0; o < gs->n_ops; o++) {
    GenOp *op = &gs->ops[o];
    if (op->kind == GOP_MAP) {
      KUse use;
      Decl *over = op->stmt->over.decl;
      if (!over || over->kind == DECL_DIM) return true;
      group_use(u, op, &use);
      if (use.n_dims) return true;
      continue;
    }
    if (stmt_of(op->stmt->kind)->host_extents) return true;
  }
  return false;
}

/* Launches and CUDA host synchronizations of one direct run of op (StmtInfo). */
static void op_counts(GenOp *op) {
  const StmtInfo *si = stmt_of(op->stmt->kind);
  Stmt *s = op->stmt;
  op->launches = si->launches;
  if (si->launches == -2) op->launches = s->list.n;
  if (si->launches == -3) {   /* the components of a grid field (its leading extents) */
    int64_t nc = 1;
    Decl *f = s->a.decl;
    op->launches = fuse_const_lead(f, f->shape.rank - f->grid_of->grid->ndim, &nc) ? (int)nc : -1;
  }
  for (int i = 0; si->launches == -1 && i < s->list.n; i++) {
    int64_t nc = 1;
    if (!fuse_const_ncomp(s->list.v[i].decl, &nc)) {
      op->launches = -1;
      break;
    }
    op->launches = (i ? op->launches : 0) + (int)nc;
  }
  op->syncs = op->kind == GOP_STMT && si->sync != SYNC_NONE;
}

void lower_decide(GenUnit *u) {
  Decl *ws_stream = NULL;
  bool swaps = false;
  memset(&u->gdims, 0, sizeof u->gdims);
  for (int i = 0; i < u->n_steps; i++)   /* swap: graphs hold the pointers they were captured with */
    for (int o = 0; o < u->steps[i].n_ops; o++) swaps = swaps || u->steps[i].ops[o].stmt->kind == ST_SWAP;
  u->graph_states = swaps ? 4 : 1;
  u->graph_append = false;
  for (int i = 0; i < u->n_steps; i++) {
    GenStep *gs = &u->steps[i];
    Decl *st = gs->decl->stream.decl;
    gs->first_on_stream = st != NULL;
    for (int j = 0; j < i && gs->first_on_stream; j++)
      if (u->steps[j].decl->stream.decl == st) gs->first_on_stream = false;
    gs->reads_extents = step_reads_extents(u, gs);
    gs->launches = gs->syncs = 0;
    for (int o = 0; o < gs->n_ops; o++) {
      GenOp *op = &gs->ops[o];
      op_counts(op);
      gs->uses_ws = gs->uses_ws || (op->kind == GOP_STMT && stmt_of(op->stmt->kind)->ws);
      gs->launches = gs->launches < 0 || op->launches < 0 ? -1 : gs->launches + op->launches;
      gs->syncs += op->syncs;
    }
    if (st && gs->uses_ws) {
      if (!ws_stream) ws_stream = st;
      else if (st != ws_stream) u->ws_shared = true;
    }
    memset(&gs->gdims, 0, sizeof gs->gdims);
    gs->graph = graph_step(u, gs, &gs->graph_end);
    if (!gs->graph) continue;
    u->any_graph = true;
    graph_dims(gs, gs->graph_end, &gs->gdims);
    graph_dims(gs, gs->graph_end, &u->gdims);
    gs->graph_launches = 1;
    for (int o = gs->graph_end; o < gs->n_ops; o++) gs->graph_launches += gs->ops[o].launches;
    gs->graph_multi = swaps;
    gs->graph_append = false;
    gs->graph_blocks = 0;
    for (int o = 0; o < gs->graph_end; o++) {
      gs->graph_blocks += gs->ops[o].stmt->kind == ST_EVERY;
      gs->graph_multi = gs->graph_multi || gs->ops[o].stmt->kind == ST_REPEAT || gs->ops[o].stmt->kind == ST_EVERY;
      gs->graph_append = gs->graph_append || gs->ops[o].stmt->kind == ST_APPEND;
    }
    u->graph_append = u->graph_append || gs->graph_append;
  }
  for (int k = 0; k < u->gdims.n; k++) u->graph_pulls = u->graph_pulls || u->gdims.compacted[k];
  for (int i = 0; i < u->n_steps; i++)
    u->steps[i].ws_order = u->ws_shared && u->steps[i].decl->stream.decl && u->steps[i].uses_ws;
}
