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
  KCtx k = {u, &gen_target_cuda, &gen_target_cuda, NULL, DT_VOID, NULL, false, NULL, NULL, 0, NULL, false, NULL};
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
  bool app = op->stmt->kind == ST_APPEND;   /* new rows (launched directly: lower.c) */
  EMIT_SNIPPET(b, TM, "kernel_red", {"N", u->name}, {"K", gen_int(u, op->kernel)}, {"app", app ? "1" : ""},
               {"M", !app && op->mask_of ? op->mask_of->a.decl->name : ""},
               {"init", buf_take(u, &init)}, {"body", buf_take(u, &body)},
               {"tail", buf_take(u, &tail)});
  red_combine_cuda(u, b, op, use);
}

static void kernel_cuda(GenUnit *u, Buf *b, GenOp *op, KUse *use) {
  KCtx k = {u, &gen_target_cuda, &gen_target_cuda, NULL, DT_VOID, NULL, false, NULL, NULL, 0, NULL, false, NULL};
  if (use->n_reds) {
    kernel_cuda_red(u, b, op, use);
    return;
  }
  if (op->scan_fused) {   /* a block per chunk of the scan; its totals after its rows */
    Decl *x = op->scan_fused->stmt->a.decl;
    Buf locals = {.indent = 2}, rows = {.indent = 4};
    const char *nc, *ut;
    scan_fused_types(u, x, &nc, &ut);
    kernel_locals(&locals, use);
    group_body(&k, &rows, op);
    b->indent = 0;
    EMIT_SNIPPET(b, TM, "kernel_scan", {"N", u->name}, {"K", gen_int(u, op->kernel)},
                 {"locals", buf_take(u, &locals)}, {"body", buf_take(u, &rows)}, {"x", x->name},
                 {"line", gen_int(u, op->scan_fused->stmt->loc.line)}, {"CH", gen_int(u, SCAN_CHUNK)},
                 {"CH1", gen_int(u, SCAN_CHUNK - 1)}, {"ax", gen_int(u, x->shape.rank - 1)}, {"nc", nc},
                 {"T", gen_ctype(x->dtype)}, {"UT", ut});
    return;
  }
  Buf body = {.indent = 2};
  kernel_locals(&body, use);
  group_body(&k, &body, op);
  b->indent = 0;
  if (op->stmt->kind == ST_APPEND) {   /* new rows; in a graph decided on the device */
    EMIT_SNIPPET(b, TM, "kernel_append", {"N", u->name}, {"K", gen_int(u, op->kernel)},
                 {"body", buf_take(u, &body)});
    EMIT_SNIPPET(b, TM, "kernel_append_commit", {"N", u->name}, {"K", gen_int(u, op->kernel)});
    return;
  }
  EMIT_SNIPPET(b, TM, "kernel", {"N", u->name}, {"K", gen_int(u, op->kernel)},
               {"M", op->mask_of ? op->mask_of->a.decl->name : ""}, {"body", buf_take(u, &body)});
}

/* The device branch of kernel K's launcher: one thread per element on the step's stream. */
static void cuda_launch(GenUnit *u, Buf *b, GenOp *op) {
  EMIT_SNIPPET(b, TM, "launch", {"N", u->name}, {"K", gen_int(u, op->kernel)},
               {"fused", op->fused_sort ? "1" : ""}, {"red", red_group(op) ? "1" : ""},
               {"R", gen_int(u, op->scan_fused ? SCAN_CHUNK : 256)},
               {"R1", gen_int(u, op->scan_fused ? SCAN_CHUNK - 1 : 255)});
}

/* ======================================================================== CUDA graphs */

/* Does kernel op take per-step values (params, the step counter, an append's count)? A
** multi graph updates only the nodes of those (the others keep their captured arguments). */
static bool kernel_step_values(GenUnit *u, GenOp *op) {
  KUse use;
  group_use(u, op, &use);
  for (int i = 0; i < use.n_params; i++)
    if (!use.params[i]->setup) return true;
  return use.step || op->stmt->kind == ST_APPEND;
}

/* Kernel K inside a graph: its argument fill, capture and per-replay argument update (of a
** multi graph, gs->graph_multi: each node's captured arguments with this step's values). */
static void graph_kernel(GenUnit *u, Buf *b, GenOp *op, bool multi) {
  KUse use;
  group_use(u, op, &use);
  Decl *over = op->stmt->over.decl;
  bool app = op->stmt->kind == ST_APPEND;
  Buf fill = {.indent = 2}, refresh = {.indent = 4};
  bool grid = gen_grid_map(op->stmt);
  if (grid) {   /* a grid map: its points; its extents and spacings (gen_grid.c) */
    buf_line(&fill, "ap->n = %s;", grid_points(u, op->stmt));
    grid_fill(u, &fill, op, "ap->");
  } else if (over->kind == DECL_DIM) {
    buf_line(&fill, "ap->n = p->cap_%s;", over->name);
    buf_line(&fill, "ap->d_n = (const int64_t *)p->dn_%s.data;", over->name);
  } else if (over->kind == DECL_PARAM) {
    buf_line(&fill, "ap->n = (int64_t)p->P_%s;", over->name);
  } else {
    buf_line(&fill, "ap->n = %" PRId64 ";", over->ival);
  }
  buf_line(&fill, "ap->bad = (int *)p->bad.data;");
  kernel_fill(&fill, &use, "ap->");
  if (op->scan_fused)   /* pass 1 of the scan after it: its chunk totals */
    buf_line(&fill, "ap->sp = (%s *)p->sp_%d.data;", gen_ctype(op->scan_fused->stmt->a.decl->dtype),
             op->scan_fused->scan_id);
  if (app) {   /* the count from this step's params; the rows that fit decided on the device */
    buf_line(&fill, "ap->want = %s;", append_count_str(u, op->stmt->value, "p->"));
    buf_line(&fill, "ap->apw = (int64_t *)p->apd_k%d.data;", op->kernel);
    buf_line(&fill, "ap->ovf = (int *)p->ovf.data;");
  }
  for (int i = 0; i < use.n_params; i++)   /* the per-step values of a node's arguments */
    if (!use.params[i]->setup)
      buf_line(&refresh, "A.P_%s = p->P_%s;", use.params[i]->name, use.params[i]->name);
  if (use.step) buf_line(&refresh, "A.cnp_step = (int64_t)p->stats.steps;");
  if (app) buf_line(&refresh, "A.want = %s;", append_count_str(u, op->stmt->value, "p->"));
  b->indent = 0;
  EMIT_SNIPPET(b, TM, "graph_kernel", {"N", u->name}, {"K", gen_int(u, op->kernel)},
               {"fill", buf_take(u, &fill)}, {"red", use.n_reds ? "1" : ""}, {"multi", multi ? "1" : ""},
               {"mupd", multi && kernel_step_values(u, op) ? "1" : ""}, {"app", app ? "1" : ""}, {"refresh", buf_take(u, &refresh)},
               {"dims", grid && !use.n_reds ? grid_graph_dims(u, op) : ""},
               {"R", gen_int(u, op->scan_fused ? SCAN_CHUNK : 256)},
               {"R1", gen_int(u, op->scan_fused ? SCAN_CHUNK - 1 : 255)});
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

static void graph_halo(GenUnit *u, Buf *b, GenOp *op, const char *D) {
  (void)D;
  grid_graph_halo(u, b, op);
}

static void graph_fft(GenUnit *u, Buf *b, GenOp *op, const char *D) {
  (void)D;
  fft_step(u, &gen_target_cuda, b, op, true);
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
    [ST_FFT] = graph_fft,
    [ST_IFFT] = graph_fft,
    [ST_HALO] = graph_halo,
    [ST_DEPOSIT] = pgrid_graph_deposit,
    [ST_GATHER] = pgrid_graph_gather,
};

bool gen_cuda_graph_form(StmtKind k) { return graph_forms[k] != NULL; }

/* Step i's work, enqueued while the stream is captured. */
static void graph_enqueue(GenUnit *u, Buf *b, int i) {
  GenStep *gs = &u->steps[i];
  Buf ops = {.indent = 2};
  int block = 0;
  for (int o = 0; o < gs->graph_end; o++) {
    GenOp *op = &gs->ops[o];
    Stmt *s = op->stmt;
    comment_loc(u, &ops, s->loc);
    if (s->kind == ST_EVERY) {   /* captured in the graphs of the patterns where it is due */
      buf_line(&ops, "if (p->gpat & %d) {  /* every %s: in this graph when bit %d is set */", 1 << block,
               expr_src(u, s->value), block);
      block++;
      ops.indent += 2;
      continue;
    }
    if (s->kind == ST_EVERY_END) {
      ops.indent -= 2;
      buf_line(&ops, "}");
      continue;
    }
    if (op->kind == GOP_MAP) {
      buf_line(&ops, "if ((st = %s_k%d_capture(p, S)) != CNP_OK) return st;", u->name, op->kernel);
      continue;
    }
    if (s->kind == ST_REPEAT) {   /* K is known at setup: the block enqueued K times (unrolled) */
      const char *r = arena_printf(&u->cc->arena, "cnp_rep_%d_%d", s->loc.line, s->loc.col);
      buf_line(&ops, "for (int64_t %s = 0; %s < (int64_t)(%s); %s++) {  /* repeat %s: unrolled */", r, r,
               setup_str(u, s->value, "p->"), r, expr_src(u, s->value));
      ops.indent += 2;
      continue;
    }
    if (s->kind == ST_REPEAT_END) {
      ops.indent -= 2;
      buf_line(&ops, "}");
      continue;
    }
    if (s->kind == ST_SWAP) {   /* the views swapped on the host: later ops capture the others */
      buf_line(&ops, "{  /* swap %s, %s: what follows is captured with the buffers exchanged */",
               s->a.name, s->b.name);
      buf_line(&ops, "  const cnp_array t = p->f_%s;", s->a.decl->name);
      buf_line(&ops, "  p->f_%s = p->f_%s;", s->a.decl->name, s->b.decl->name);
      buf_line(&ops, "  p->f_%s = t;", s->b.decl->name);
      buf_line(&ops, "}");
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
  const char *I = gen_int(u, i), *swap = u->graph_states > 1 ? "1" : "";
  bool multi = gs->graph_multi;
  for (int o = 0; o < gs->graph_end; o++)
    if (gs->ops[o].kind == GOP_MAP) graph_kernel(u, b, &gs->ops[o], multi);
  graph_enqueue(u, b, i);
  /* the pattern of every blocks due on this call: bit b for block b, as step_every() tests */
  Buf pat = {0};
  int block = 0;
  for (int o = 0; o < gs->graph_end; o++) {
    Stmt *s = gs->ops[o].stmt;
    if (s->kind != ST_EVERY) continue;
    buf_printf(&pat, "%s((uint64_t)p->stats.steps %% (uint64_t)(%s) == (uint64_t)(%s) ? %d : 0)", block ? " | " : "",
               setup_str(u, s->value, "p->"), s->value2 ? setup_str(u, s->value2, "p->") : "0", 1 << block);
    block++;
  }
  const char *P = gs->graph_blocks ? gen_int(u, 1 << gs->graph_blocks) : "", *PAT = buf_take(u, &pat);
  if (multi)
    EMIT_SNIPPET(b, TM, "graph_capture_multi", {"N", u->name}, {"i", I}, {"swap", swap}, {"P", P}, {"pat", PAT});
  else EMIT_SNIPPET(b, TM, "graph_capture", {"N", u->name}, {"i", I});
  Buf up = {.indent = 2}, upd = {.indent = 2}, dev = {.indent = 2};
  for (int k = 0; k < g->n; k++) EMIT_SNIPPET(&up, TM, "replay_upload", {"d", g->d[k]->name});
  for (int o = 0; o < gs->graph_end; o++)
    if (gs->ops[o].kind == GOP_MAP && (!multi || kernel_step_values(u, &gs->ops[o])))
      EMIT_SNIPPET(&upd, TM, multi ? "replay_update_multi" : "replay_update", {"N", u->name},
                   {"K", gen_int(u, gs->ops[o].kernel)}, {"i", I});
  for (int k = 0; k < g->n; k++)
    if (g->compacted[k]) EMIT_SNIPPET(&dev, TM, "replay_device_only", {"d", g->d[k]->name});
  if (multi)
    EMIT_SNIPPET(b, TM, "graph_replay_multi", {"N", u->name}, {"i", I}, {"uploads", buf_take(u, &up)},
                 {"updates", buf_take(u, &upd)}, {"device_only", buf_take(u, &dev)}, {"swap", swap});
  else
    EMIT_SNIPPET(b, TM, "graph_replay", {"N", u->name}, {"i", I}, {"uploads", buf_take(u, &up)},
                 {"updates", buf_take(u, &upd)}, {"device_only", buf_take(u, &dev)});
}

/* Fields that some swap exchanges, each once (the buffer states of a multi graph): an
** arena array in *out, its length returned. */
static int swapped_fields(GenUnit *u, Decl ***out) {
  int n = 0, cap = 0;
  *out = NULL;
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      Stmt *s = u->steps[i].ops[o].stmt;
      if (s->kind != ST_SWAP) continue;
      Decl *ab[2] = {s->a.decl, s->b.decl};
      for (int k = 0; k < 2; k++) {
        int j = 0;
        while (j < n && (*out)[j] != ab[k]) j++;
        if (j < n) continue;
        *out = arena_grow(&u->cc->arena, *out, n, &cap, 8, sizeof **out);
        (*out)[n++] = ab[k];
      }
    }
  return n;
}

/* The buffer-state helpers of a unit with swaps and graphs (templates/cuda.tmpl, states). */
static void graph_states(GenUnit *u, Buf *b, Decl **sw, int m) {
  Buf save = {.indent = 2}, load = {.indent = 2}, same = {.indent = 4}, names = {0};
  for (int j = 0; j < m; j++) {
    EMIT_SNIPPET(&save, TM, "gst_save", {"j", gen_int(u, j)}, {"f", sw[j]->name});
    EMIT_SNIPPET(&load, TM, "gst_load", {"j", gen_int(u, j)}, {"f", sw[j]->name});
    buf_printf(&names, "%s%s", j ? ", " : "", sw[j]->name);
  }
  buf_printf(&same, "    if (");
  for (int j = 0; j < m; j++)
    buf_printf(&same, "%sp->f_%s.data == v[%d].data", j ? " && " : "", sw[j]->name, j);
  buf_printf(&same, ")\n");
  EMIT_SNIPPET(b, TM, "states", {"N", u->name}, {"G", gen_int(u, u->graph_states)}, {"save", buf_take(u, &save)},
               {"load", buf_take(u, &load)}, {"same", buf_take(u, &same)}, {"fields", buf_take(u, &names)});
}

/* Does some graph have a repeat or buffer states (kernel node lists)? */
static bool any_multi_graph(GenUnit *u) {
  for (int i = 0; i < u->n_steps; i++)
    if (u->steps[i].graph && u->steps[i].graph_multi) return true;
  return false;
}

static void cuda_graph_helpers(GenUnit *u, Buf *b) {
  if (any_multi_graph(u)) emit_snippet(b, TM, "gnodes", NULL, 0);
}

/* Struct members, functions, setup and teardown lines of the CUDA graphs. */
static void gen_graphs(GenUnit *u, Buf *fields, Buf *funcs, Buf *setup, Buf *teardown) {
  const GDims *g = &u->gdims;
  Buf pulls = {0}, dims = {0}, caps = {0}, tsteps = {0}, tdims = {0}, mcaps = {0}, ovf = {0};
  Decl **sw;
  int m = swapped_fields(u, &sw);
  const char *G = gen_int(u, u->graph_states), *M = gen_int(u, m ? m : 1), *swap = m ? "1" : "";
  bool any_multi = false, any_pat = false;
  for (int i = 0; i < u->n_steps; i++) {
    any_multi = any_multi || (u->steps[i].graph && u->steps[i].graph_multi);
    any_pat = any_pat || (u->steps[i].graph && u->steps[i].graph_blocks);
  }
  if (any_multi) {
    EMIT_SNIPPET(fields, TM, "fields_multi", {"G", G}, {"M", M}, {"swap", m && u->graph_states > 1 ? "1" : ""},
                 {"pat", any_pat ? "1" : ""});
    if (m) graph_states(u, funcs, sw, m);
  }
  if (u->graph_append) {
    emit_snippet(fields, TM, "fields_ovf", NULL, 0);
    EMIT_SNIPPET(&dims, TM, "setup_ovf", {"N", u->name});
    EMIT_SNIPPET(&tdims, TM, "teardown_array", {"a", "ovf"});
  }
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
    bool multi = gs->graph_multi;
    /* graphs of a multi step: per buffer state, and per pattern of its every blocks */
    const char *GS = gen_int(u, u->graph_states << gs->graph_blocks), *P = gen_int(u, 1 << gs->graph_blocks);
    if (multi) EMIT_SNIPPET(fields, TM, "fields_step_multi", {"i", I}, {"G", GS}, {"M", M}, {"swap", swap});
    else EMIT_SNIPPET(fields, TM, "fields_step", {"i", I});
    for (int o = 0; o < gs->graph_end; o++) {
      GenOp *op = &gs->ops[o];
      if (op->kind != GOP_MAP) continue;
      const char *K = gen_int(u, op->kernel);
      if (multi) {
        EMIT_SNIPPET(fields, TM, "fields_kernel_multi", {"K", K}, {"G", GS});
        EMIT_SNIPPET(&tsteps, TM, "teardown_kernel_multi", {"K", K}, {"G", GS});
      } else {
        EMIT_SNIPPET(fields, TM, "fields_kernel", {"K", K});
      }
      if (op->stmt->kind == ST_APPEND) {
        Stmt *s = op->stmt;
        EMIT_SNIPPET(fields, TM, "fields_append", {"K", K});
        EMIT_SNIPPET(&dims, TM, "setup_append", {"N", u->name}, {"K", K});
        EMIT_SNIPPET(&tdims, TM, "teardown_array", {"a", arena_printf(&u->cc->arena, "apd_k%s", K)});
        const char *msg = arena_printf(&u->cc->arena, "%s:%d: append %s: more rows than its capacity (the "
                                       "rows that fit were added; CUDA graph, reported by %s_sync)",
                                       base_name(s->loc.file->path), s->loc.line, s->over.decl->name, u->name);
        EMIT_SNIPPET(&ovf, TM, "ovf_case", {"K", K}, {"N", u->name}, {"msg", cstr(u, msg)});
      }
    }
    graph_funcs(u, funcs, i);
    if (multi && gs->graph_blocks)
      EMIT_SNIPPET(&mcaps, TM, "setup_capture_pat", {"N", u->name}, {"i", I}, {"S", gs->decl->stream.decl->name},
                   {"swap", swap}, {"P", P});
    else if (multi)
      EMIT_SNIPPET(&mcaps, TM, "setup_capture_multi", {"N", u->name}, {"i", I}, {"S", gs->decl->stream.decl->name},
                   {"swap", swap});
    else
      EMIT_SNIPPET(&caps, TM, "setup_capture", {"N", u->name}, {"i", I}, {"S", gs->decl->stream.decl->name});
    if (multi) EMIT_SNIPPET(&tsteps, TM, "teardown_step_multi", {"i", I}, {"G", GS});
    else EMIT_SNIPPET(&tsteps, TM, "teardown_step", {"i", I});
  }
  if (mcaps.n) {
    Buf mc = {.indent = caps.indent};
    EMIT_SNIPPET(&mc, TM, "setup_multi", {"N", u->name}, {"swap", swap}, {"captures", buf_take(u, &mcaps)});
    buf_puts(&caps, buf_str(&mc));
    buf_free(&mc);
  }
  ovf.indent = 2;
  if (u->graph_append) EMIT_SNIPPET(funcs, TM, "ovf_check", {"N", u->name}, {"cases", buf_take(u, &ovf)});
  buf_free(&ovf);
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
  if (u->steps[i].graph_multi)
    EMIT_SNIPPET(b, TM, "step_graph_multi", {"N", u->name}, {"i", gen_int(u, i)}, {"replay", buf_take(u, &replay)});
  else
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
    .graph_helpers = cuda_graph_helpers,
    .both = "__host__ __device__ ",
    .unit_part = "unit_cuda",
};
