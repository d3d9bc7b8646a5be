/*
** gen_cuda.c -- the CUDA target (gen_target_cuda): a __global__ kernel per fused group and
** its launch, the NVRTC embedding of hand-written kernels, and the CUDA graphs (steps
** without host decisions, as lower_decide() found them, captured once at setup and replayed
** by step(); the graph form of each statement kind in graph_forms[]). The fixed text is in
** templates/cuda.tmpl.
*/
#include "gen.h"

#include <inttypes.h>
#include <string.h>

#define TM "cuda"   /* the snippet template: templates/cuda.tmpl */

/* A kernel that reduces into scalars (gen_red.c): rows past the live extent keep the
** identity, each block writes its partials, the second pass combines them. */
static void kernel_cuda_red(GenUnit *u, Buf *b, GenOp *op, KUse *use) {
  KCtx k = {u, &gen_target_cuda, &gen_target_cuda, NULL, DT_VOID, NULL, false, NULL};
  Buf init = {.indent = 2}, body = {.indent = 4}, tail = {.indent = 2};
  for (int i = 0; i < use->n_reds; i++)
    buf_line(&init, "%s r_%s = %s;", gen_ctype(use->reds[i]->dtype), use->reds[i]->name,
             red_ident(use->reds[i]->dtype, use->red_op[i]));
  kernel_locals(&body, use);
  for (int i = 0; i < use->n_reds; i++)   /* written by the second pass, not here */
    buf_line(&body, "(void)&f_%s;", use->reds[i]->name);
  group_body(&k, &body, op);
  red_kernel_cuda_tail(u, &tail, op, use);
  b->indent = 0;
  EMIT_SNIPPET(b, TM, "kernel_red", {"N", u->name}, {"K", gen_int(u, op->kernel)},
               {"M", op->mask_of ? op->mask_of->a.decl->name : ""},
               {"init", buf_take(u, &init)}, {"body", buf_take(u, &body)},
               {"tail", buf_take(u, &tail)});
  red_combine_cuda(u, b, op, use);
}

static void kernel_cuda(GenUnit *u, Buf *b, GenOp *op, KUse *use) {
  KCtx k = {u, &gen_target_cuda, &gen_target_cuda, NULL, DT_VOID, NULL, false, NULL};
  if (use->n_reds) {
    kernel_cuda_red(u, b, op, use);
    return;
  }
  Buf body = {.indent = 2};
  kernel_locals(&body, use);
  group_body(&k, &body, op);
  b->indent = 0;
  EMIT_SNIPPET(b, TM, "kernel", {"N", u->name}, {"K", gen_int(u, op->kernel)},
               {"M", op->mask_of ? op->mask_of->a.decl->name : ""}, {"body", buf_take(u, &body)});
}

/* The device branch of kernel K's launcher: one thread per element on the step's stream. */
static void cuda_launch(GenUnit *u, Buf *b, GenOp *op) {
  EMIT_SNIPPET(b, TM, "launch", {"N", u->name}, {"K", gen_int(u, op->kernel)},
               {"fused", op->fused_sort ? "1" : ""}, {"red", red_group(op) ? "1" : ""});
}

/* ======================================================================== CUDA graphs */

/* Kernel K inside a graph: its argument fill, capture and per-replay argument update. */
static void graph_kernel(GenUnit *u, Buf *b, GenOp *op) {
  KUse use;
  group_use(u, op, &use);
  Decl *over = op->stmt->over.decl;
  Buf fill = {.indent = 2};
  if (over->kind == DECL_DIM) {
    buf_line(&fill, "ap->n = p->cap_%s;", over->name);
    buf_line(&fill, "ap->d_n = (const int64_t *)p->dn_%s.data;", over->name);
  } else if (over->kind == DECL_PARAM) {
    buf_line(&fill, "ap->n = (int64_t)p->P_%s;", over->name);
  } else {
    buf_line(&fill, "ap->n = %" PRId64 ";", over->ival);
  }
  buf_line(&fill, "ap->bad = (int *)p->bad.data;");
  kernel_fill(&fill, &use, "ap->");
  b->indent = 0;
  EMIT_SNIPPET(b, TM, "graph_kernel", {"N", u->name}, {"K", gen_int(u, op->kernel)},
               {"fill", buf_take(u, &fill)}, {"red", use.n_reds ? "1" : ""});
}

/* ---- the CUDA-graph form of each statement (StmtInfo.graph): enqueued while its step is
** captured, over the capacity, the live extent dn_D read on the device. */

/* The listed arrays' rows over the capacity of dim D, for p->views. */
static const char *graph_views(GenUnit *u, Stmt *s, const char *D, int indent) {
  Buf v = {.indent = indent};
  for (int k = 0; k < s->list.n; k++)
    EMIT_SNIPPET(&v, TM, "graph_view", {"f", s->list.v[k].decl->name}, {"D", D});
  return buf_take(u, &v);
}

static void graph_compact(GenUnit *u, Buf *b, GenOp *op, const char *D) {
  Stmt *s = op->stmt;
  EMIT_SNIPPET(b, TM, "graph_compact", {"a", s->a.decl->name}, {"D", D},
               {"views", graph_views(u, s, D, b->indent + 2)});
}

static void graph_sort(GenUnit *u, Buf *b, GenOp *op, const char *D) {
  Stmt *s = op->stmt;
  Decl *bound = op->sort_bound;
  EMIT_SNIPPET(b, TM, "graph_sort", {"a", s->a.decl->name}, {"D", D},
               {"views", graph_views(u, s, D, b->indent + 2)}, {"bound", bound ? bound->name : ""},
               {"range", bound ? setup_str(u, bound->value, "p->") : ""});
}

static void graph_segments(GenUnit *u, Buf *b, GenOp *op, const char *D) {
  Stmt *s = op->stmt;
  (void)u;
  EMIT_SNIPPET(b, TM, "graph_segments", {"a", s->a.decl->name}, {"b", s->b.decl->name}, {"D", D},
               {"sorted", op->seg_sorted ? "1" : ""});
}

static void graph_sum(GenUnit *u, Buf *b, GenOp *op, const char *D) {
  Stmt *s = op->stmt;
  EMIT_SNIPPET(b, TM, "graph_sum", {"a", s->a.decl->name}, {"b", s->b.decl->name},
               {"axis", gen_int(u, s->b.decl->shape.rank - 1)},
               {"views", graph_views(u, s, D, b->indent + 2)});
}

static void graph_zero(GenUnit *u, Buf *b, GenOp *op, const char *D) {
  Buf fills = {.indent = b->indent + 2};
  (void)D;
  for (int i = 0; i < op->stmt->list.n; i++)
    EMIT_SNIPPET(&fills, TM, "graph_zero_field", {"f", op->stmt->list.v[i].decl->name});
  EMIT_SNIPPET(b, TM, "graph_zero", {"fills", buf_take(u, &fills)});
}

static void graph_history(GenUnit *u, Buf *b, GenOp *op, const char *D) {
  (void)D;
  red_step_history(u, &gen_target_cuda, b, op, true);
}

static void graph_scan(GenUnit *u, Buf *b, GenOp *op, const char *D) {
  (void)D;
  red_step_scan(u, &gen_target_cuda, b, op, true);
}

typedef void GraphForm(GenUnit *u, Buf *b, GenOp *op, const char *D);
static GraphForm *const graph_forms[ST__COUNT] = {
    [ST_COMPACT] = graph_compact,
    [ST_SORT] = graph_sort,
    [ST_SEGMENTS] = graph_segments,
    [ST_SUM] = graph_sum,
    [ST_ZERO] = graph_zero,
    [ST_HISTORY] = graph_history,
    [ST_SCAN] = graph_scan,
};

bool gen_cuda_graph_form(StmtKind k) { return graph_forms[k] != NULL; }

/* Step i's work, enqueued while the stream is captured. */
static void graph_enqueue(GenUnit *u, Buf *b, int i) {
  GenStep *gs = &u->steps[i];
  Buf ops = {.indent = 2};
  for (int o = 0; o < gs->graph_end; o++) {
    GenOp *op = &gs->ops[o];
    Stmt *s = op->stmt;
    comment_loc(u, &ops, s->loc);
    if (op->kind == GOP_MAP) {
      buf_line(&ops, "if ((st = %s_k%d_capture(p, S)) != CNP_OK) return st;", u->name, op->kernel);
      continue;
    }
    Decl *dim = graph_stmt_dim(s);
    if (!graph_forms[s->kind]) cnp_ice("statement '%s' has no CUDA-graph form", stmt_of(s->kind)->name);
    graph_forms[s->kind](u, &ops, op, dim ? dim->name : NULL);
  }
  b->indent = 0;
  EMIT_SNIPPET(b, TM, "graph_enqueue", {"N", u->name}, {"i", gen_int(u, i)},
               {"where", arena_printf(&u->cc->arena, "%s:%d: %s", base_name(gs->decl->loc.file->path),
                                      gs->decl->kw_loc.line, src_line(u, gs->decl->kw_loc))},
               {"ops", buf_take(u, &ops)});
}

/* The graph functions of step i: enqueue (under capture), capture (setup), replay (step). */
static void graph_funcs(GenUnit *u, Buf *b, int i) {
  GenStep *gs = &u->steps[i];
  const GDims *g = &gs->gdims;
  const char *I = gen_int(u, i);
  for (int o = 0; o < gs->graph_end; o++)
    if (gs->ops[o].kind == GOP_MAP) graph_kernel(u, b, &gs->ops[o]);
  graph_enqueue(u, b, i);
  EMIT_SNIPPET(b, TM, "graph_capture", {"N", u->name}, {"i", I});
  Buf up = {.indent = 2}, upd = {.indent = 2}, dev = {.indent = 2};
  for (int k = 0; k < g->n; k++) EMIT_SNIPPET(&up, TM, "replay_upload", {"d", g->d[k]->name});
  for (int o = 0; o < gs->graph_end; o++)
    if (gs->ops[o].kind == GOP_MAP)
      EMIT_SNIPPET(&upd, TM, "replay_update", {"N", u->name}, {"K", gen_int(u, gs->ops[o].kernel)},
                   {"i", I});
  for (int k = 0; k < g->n; k++)
    if (g->compacted[k]) EMIT_SNIPPET(&dev, TM, "replay_device_only", {"d", g->d[k]->name});
  EMIT_SNIPPET(b, TM, "graph_replay", {"N", u->name}, {"i", I}, {"uploads", buf_take(u, &up)},
               {"updates", buf_take(u, &upd)}, {"device_only", buf_take(u, &dev)});
}

/* Struct members, functions, setup and teardown lines of the CUDA graphs. */
static void gen_graphs(GenUnit *u, Buf *fields, Buf *funcs, Buf *setup, Buf *teardown) {
  const GDims *g = &u->gdims;
  Buf pulls = {0}, dims = {0}, caps = {0}, tsteps = {0}, tdims = {0};
  for (int k = 0; k < g->n; k++) {
    const char *d = g->d[k]->name;
    EMIT_SNIPPET(fields, TM, "fields_dim", {"d", d});
    if (g->compacted[k]) EMIT_SNIPPET(&pulls, TM, "pull_dim", {"d", d});
    EMIT_SNIPPET(&dims, TM, "setup_dim", {"N", u->name}, {"d", d});
    EMIT_SNIPPET(&tdims, TM, "teardown_dim", {"d", d});
  }
  for (int i = 0; i < u->n_steps; i++) {
    GenStep *gs = &u->steps[i];
    if (!gs->graph) continue;
    const char *I = gen_int(u, i);
    EMIT_SNIPPET(fields, TM, "fields_step", {"i", I});
    for (int o = 0; o < gs->graph_end; o++)
      if (gs->ops[o].kind == GOP_MAP) EMIT_SNIPPET(fields, TM, "fields_kernel", {"K", gen_int(u, gs->ops[o].kernel)});
    graph_funcs(u, funcs, i);
    EMIT_SNIPPET(&caps, TM, "setup_capture", {"N", u->name}, {"i", I}, {"S", gs->decl->stream.decl->name});
    EMIT_SNIPPET(&tsteps, TM, "teardown_step", {"i", I});
  }
  /* live extents back to the host (a synchronization) before the host reads them */
  EMIT_SNIPPET(funcs, TM, "pull", {"N", u->name}, {"dims", buf_take(u, &pulls)});
  if (g->n || u->any_graph)
    EMIT_SNIPPET(setup, TM, "setup", {"dims", buf_take(u, &dims)}, {"captures", buf_take(u, &caps)});
  buf_free(&dims);
  buf_free(&caps);
  buf_puts(teardown, buf_str(&tsteps));   /* the graphs, then the device extents */
  buf_puts(teardown, buf_str(&tdims));
  buf_free(&tsteps);
  buf_free(&tdims);
}

/* ======================================================================== the CUDA target */

static void cuda_atomic_add(Buf *b, const char *target, const char *ctype, const char *value) {
  buf_line(b, "cnp_g_atomic_add(&%s, (%s)%s);", target, ctype, value);
}

/* The runtime's selection decides (strictness, fallback, the env variable). */
static void cuda_backend_select(GenUnit *u, Buf *b) {
  EMIT_SNIPPET(b, TM, "backend_select", {"N", u->name});
}

/* A hand-written kernel's source, embedded for NVRTC. */
static void cuda_kernel_source(GenUnit *u, Buf *b, Decl *d) {
  buf_printf(b, "\n/* Kernel %s: %s, compiled with NVRTC at setup. */\n", d->name, d->path);
  buf_printf(b, "static const char %s_src_%s[] =\n", u->name, d->name);
  const char *src = lower_kernel_source(u, d);
  buf_puts(b, "    \"");
  for (const char *q = src; *q; q++) {
    if (*q == '\n') buf_puts(b, q[1] ? "\\n\"\n    \"" : "\\n");
    else if (*q == '"' || *q == '\\') buf_printf(b, "\\%c", *q);
    else if (*q == '\t') buf_puts(b, "\\t");
    else if ((unsigned char)*q < 32) buf_printf(b, "\\%03o", (unsigned char)*q);
    else buf_put(b, q, 1);
  }
  buf_puts(b, "\";\n");
}

/* Setup: the kernel catalog (at the first kernel) and each kernel's source. */
static void cuda_kernel_setup(GenUnit *u, Buf *b, Decl *d, bool first) {
  if (first) EMIT_SNIPPET(b, TM, "catalog_create", {"N", u->name});
  EMIT_SNIPPET(b, TM, "catalog_add", {"N", u->name}, {"k", d->name}, {"path", cstr(u, d->path)},
               {"file", base_name(d->loc.file->path)}, {"line", gen_int(u, d->loc.line)});
}

static void cuda_kernel_setup_end(GenUnit *u, Buf *b) {
  EMIT_SNIPPET(b, TM, "catalog_setup", {"N", u->name});
}

/* A hand-written kernel call on CUDA: through the catalog; else (host backend) below. */
static void cuda_call_open(GenUnit *u, Buf *b, Stmt *s, const char *args) {
  Buf launch = {.indent = b->indent + 2};
  try_call(u, &launch, s->loc, "cnp_catalog_launch(p->cat, \"%s\", grid, block, 0, S, args)",
           s->a.decl->name);
  EMIT_SNIPPET(b, TM, "call_open", {"args", arena_printf(&u->cc->arena, "{%s}", args)},
               {"over", s->value2 ? "1" : ""}, {"launch", buf_take(u, &launch)});
  b->indent += 2;
}

static void cuda_call_close(GenUnit *u, Buf *b, Stmt *s) {
  (void)u;
  (void)s;
  b->indent -= 2;
  buf_line(b, "}");
}

/* Step i replayed as its graph when it was captured (else the direct launches below). */
static void cuda_step_graph(GenUnit *u, Buf *b, int i) {
  Buf replay = {.indent = b->indent + 2};
  try_call(u, &replay, u->steps[i].decl->kw_loc, "%s_g%d_replay(p, S)", u->name, i);
  EMIT_SNIPPET(b, TM, "step_graph", {"i", gen_int(u, i)}, {"replay", buf_take(u, &replay)});
  b->indent += 2;
}

/* Live extents only the device holds back to the host before the step reads them. */
static void cuda_step_pull(GenUnit *u, Buf *b, GenStep *gs) {
  try_call(u, b, gs->decl->kw_loc, "%s_pull(p, 1)", u->name);
}

const GenTarget gen_target_cuda = {
    .name = "cuda",
    .emit = EMIT_CUDA,
    .ext = ".cu",
    .device = true,
    .complex_tmpl = "complex.cu",
    .complex_prefix = "cnp_g_",
    .extern_c = "extern \"C\" ",
    .atomic_add = cuda_atomic_add,
    .kernel = kernel_cuda,
    .launch = cuda_launch,
    .backend_select = cuda_backend_select,
    .kernel_source = cuda_kernel_source,
    .kernel_setup = cuda_kernel_setup,
    .kernel_setup_end = cuda_kernel_setup_end,
    .call_open = cuda_call_open,
    .call_close = cuda_call_close,
    .graphs = gen_graphs,
    .step_graph = cuda_step_graph,
    .step_pull = cuda_step_pull,
    .both = "__host__ __device__ ",
    .unit_part = "unit_cuda",
};
