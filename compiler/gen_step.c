/*
** gen_step.c -- the body of NAME_step(): per step its stream, waits and workspace order, the
** replay of its CUDA graph where lower decided one, and per op one CNP_G_TRY runtime call
** (or kernel launch). Each step statement kind has one emitter function here (step_emit[]),
** shared by both units; what a target prints differently comes from its GenTarget.
*/
#include "gen.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The count of the host synchronization a statement makes on CUDA (StmtInfo.sync). `key` is
** the statement's key row (SYNC_CUDA_ROWS: none without rows). */
static void step_sync(GenUnit *u, Buf *b, const GenTarget *t, const Stmt *s) {
  const StmtInfo *si = stmt_of(s->kind);
  const char *note = si->sync_note ? arena_printf(&u->cc->arena, "  /* %s */", si->sync_note) : "";
  switch (si->sync) {
  case SYNC_NONE: return;
  case SYNC_ALWAYS: buf_line(b, "p->stats.host_syncs++;"); return;
  case SYNC_CUDA: buf_line(b, "if (p->backend == CNP_BACKEND_CUDA) p->stats.host_syncs++;%s", note); return;
  case SYNC_CUDA_UNIT:
    if (t->device) buf_line(b, "if (p->backend == CNP_BACKEND_CUDA) p->stats.host_syncs++;%s", note);
    return;
  case SYNC_CUDA_ROWS:
    if (t->device)
      buf_line(b, "if (p->backend == CNP_BACKEND_CUDA && key.shape[0] > 0) p->stats.host_syncs++;%s", note);
    return;
  }
}

/* ---- one emitter per step statement kind (their text: templates/step.tmpl) */

#define TM "step"

/* Blocks at the statement's indent + 2: the listed arrays' live rows into p->views; the
** CNP_G_TRY call (`extra` more spaces); the host-sync count. */
static const char *views_block(GenUnit *u, Buf *b, RefList *l) {
  Buf v = {.indent = b->indent + 2};
  emit_snippet(&v, TM, "views", NULL, 0);
  for (int i = 0; i < l->n; i++)
    EMIT_SNIPPET(&v, TM, "view", {"f", l->v[i].decl->name}, {"live", live_extent(u, l->v[i].decl)});
  return buf_take(u, &v);
}

static const char *call_block(GenUnit *u, Buf *b, int extra, Loc loc, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static const char *call_block(GenUnit *u, Buf *b, int extra, Loc loc, const char *fmt, ...) {
  Buf call = {.indent = b->indent + 2 + extra};
  va_list ap;
  va_start(ap, fmt);
  try_vcall(u, &call, loc, fmt, ap);
  va_end(ap);
  return buf_take(u, &call);
}

static const char *sync_block(GenUnit *u, Buf *b, const GenTarget *t, const Stmt *s) {
  Buf y = {.indent = b->indent + 2};
  step_sync(u, &y, t, s);
  return buf_take(u, &y);
}

static void step_map(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  (void)t;
  try_call(u, b, op->stmt->loc, "%s_k%d(p, S)", u->name, op->kernel);
}

static void step_compact(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  Decl *m = s->a.decl, *dim;
  gen_decl_is_dim_extent(m, &dim);
  EMIT_SNIPPET(b, TM, "compact", {"a", m->name}, {"live", live_extent(u, m)},
               {"views", views_block(u, b, &s->list)},
               {"call", call_block(u, b, 0, s->loc, "cnp_compact_by_mask(&mask, p->views, nv, &live, p->ws, S)")},
               {"dim", dim ? dim->name : ""}, {"sync", sync_block(u, b, t, s)});
}

static void step_sort(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  EMIT_SNIPPET(b, TM, "sort", {"a", s->a.decl->name}, {"live", live_extent(u, s->a.decl)},
               {"views", views_block(u, b, &s->list)},
               {"call", call_block(u, b, 0, s->loc, "cnp_sort_by_key(&key, NULL, p->views, nv, 0, p->ws, S)")},
               {"sync", sync_block(u, b, t, s)});
}

static void step_offsets(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  EMIT_SNIPPET(b, TM, "offsets", {"a", s->a.decl->name}, {"live", live_extent(u, s->a.decl)},
               {"b", s->b.decl->name}, {"live_b", live_extent(u, s->b.decl)},
               {"call", call_block(u, b, 0, s->loc, "cnp_cell_offsets(&key, off.shape[0] - 1, &off, p->ws, S)")},
               {"sync", sync_block(u, b, t, s)});
}

static void step_segments(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  EMIT_SNIPPET(b, TM, "segments", {"b", s->b.decl->name}, {"live_b", live_extent(u, s->b.decl)},
               {"call", call_block(u, b, 0, s->loc, "cnp_segment_plan_build(p->plan_%s, &key, S)",
                                   s->a.decl->name)},
               {"sync", sync_block(u, b, t, s)});
}

static void step_sum(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  (void)t;
  EMIT_SNIPPET(b, TM, "sum", {"views", views_block(u, b, &s->list)}, {"b", s->b.decl->name},
               {"axis", gen_int(u, s->b.decl->shape.rank - 1)},
               {"call", call_block(u, b, 2, s->loc, "cnp_segment_plan_sum(p->plan_%s, &p->views[k], &out, S)",
                                   s->a.decl->name)});
}

static void step_record(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  (void)t;
  try_call(u, b, op->stmt->loc, "cnp_event_record(p->e_%s, S)", op->stmt->a.decl->name);
}

static void step_wait(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  (void)t;
  try_call(u, b, op->stmt->loc, "cnp_stream_wait_event(S, p->e_%s)", op->stmt->a.decl->name);
}

static void step_copy(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  Decl *dim;
  (void)t;
  try_call(u, b, s->loc, "cnp_snapshot_copy(p->snap_%s, &p->f_%s, S, NULL, &p->h_%s)",
           s->a.decl->name, s->b.decl->name, s->a.decl->name);
  buf_line(b, "p->has_%s = 1;", s->a.decl->name);
  if (gen_decl_is_dim_extent(s->b.decl, &dim))
    buf_line(b, "p->live_%s = p->n_%s;  /* rows the snapshot shows */", s->a.decl->name, dim->name);
}

static void step_refresh(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  (void)t;
  if (s->to_device) try_call(u, b, s->loc, "cnp_mirror_to_device(p->mir_%s, S)", s->a.decl->name);
  else try_call(u, b, s->loc, "cnp_mirror_to_host(p->mir_%s, S, NULL)", s->a.decl->name);
}

static void step_call(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  Decl *k = s->a.decl;
  buf_line(b, "{");
  b->indent += 2;
  Buf av = {0}, ap = {0};
  for (int i = 0; i < s->nargs; i++) {
    buf_line(b, "%s a%d = %s;", karg_type(s->args[i]), i, karg_value(u, s->args[i]));
    buf_printf(&av, "%sa%d", i ? ", " : "", i);
    buf_printf(&ap, "%s&a%d", i ? ", " : "", i);
  }
  if (s->value2) {
    Expr *e = s->value2;
    if (e->kind == EX_NAME && e->ref.decl && e->ref.decl->kind == DECL_DIM)
      buf_line(b, "int64_t n = p->n_%s;", e->ref.decl->name);
    else
      buf_line(b, "int64_t n = %s;", setup_str(u, e, "p->"));
    buf_printf(&av, "%sn", s->nargs ? ", " : "");
    buf_printf(&ap, "%s&n", s->nargs ? ", " : "");
  }
  if (t->call_open) t->call_open(u, b, s, ap.n ? buf_str(&ap) : "NULL");
  if (k->host_path) buf_line(b, "%s(%s);", k->name, buf_str(&av));
  else try_call(u, b, s->loc, "CNP_EUNSUPPORTED");
  if (t->call_close) t->call_close(u, b, s);
  for (int i = 0; i < s->nargs; i++) buf_line(b, "(void)a%d;", i);
  if (s->value2 && !k->host_path && !t->call_open) buf_line(b, "(void)n;");   /* nothing runs it */
  buf_line(b, "p->stats.launches++;");
  b->indent -= 2;
  buf_line(b, "}");
  buf_free(&av);
  buf_free(&ap);
}

static void step_exchange(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  try_call(u, b, s->loc, "cnp_mpi_exchange(p->mpi_%s, &%s, p->xdst_%d, p->xsrc_%d, %d, S, NULL)",
           s->a.decl->name, exchanged(u, s), op->mpi_id, op->mpi_id, 100 + op->mpi_id);
  step_sync(u, b, t, s);
}

static void step_migrate(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  Decl *d = s->a.decl, *dim;
  gen_decl_is_dim_extent(s->list.v[0].decl, &dim);
  Buf fl = {0};
  for (int k = 0; k < s->list.n; k++) buf_printf(&fl, "%sp->f_%s", k ? ", " : "", s->list.v[k].decl->name);
  EMIT_SNIPPET(b, TM, "migrate", {"n", gen_int(u, s->list.n)},
               {"fields", arena_printf(&u->cc->arena, "{%s}", buf_str(&fl))},
               {"call", call_block(u, b, 0, s->loc, "cnp_migrate(p->mig_%d, fields, %d, %s, &p->f_%s, S, NULL, &n_after)",
                                   op->mpi_id, s->list.n, live_extent(u, s->list.v[0].decl), d->name)},
               {"dim", dim ? dim->name : ""}, {"sync", sync_block(u, b, t, s)});
  buf_free(&fl);
}

static void step_zero(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  (void)t;
  for (int i = 0; i < s->list.n; i++) {
    try_call(u, b, s->loc, "cnp_array_fill_zero(&p->f_%s, S)", s->list.v[i].decl->name);
    buf_line(b, "p->stats.launches++;");
  }
}

static void step_history(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  red_step_history(u, t, b, op, false);
}

static void step_scan(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  red_step_scan(u, t, b, op, false);
}

static void step_fft(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) { fft_step(u, t, b, op, false); }

/* repeat K { ... }: a loop around the block's ops (a step with one runs without a graph). */
static const char *repeat_var(GenUnit *u, const Stmt *s) {
  return arena_printf(&u->cc->arena, "cnp_rep_%d_%d", s->loc.line, s->loc.col);
}

static void step_repeat(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  const char *r = repeat_var(u, op->stmt);
  (void)t;
  buf_line(b, "for (int64_t %s = 0; %s < (int64_t)(%s); %s++) {", r, r,
           setup_str(u, op->stmt->value, "p->"), r);
  b->indent += 2;
}

static void step_repeat_end(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  (void)t;
  b->indent -= 2;
  buf_line(b, "} /* repeat (%s) */", repeat_var(u, op->stmt));
}

/* every K [offset J] { ... } inside a step: a test of the call count around the block. */
static void step_every(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  (void)t;
  buf_line(b, "if ((uint64_t)p->stats.steps %% (uint64_t)(%s) == (uint64_t)(%s)) {  /* every %s%s%s */",
           setup_str(u, s->value, "p->"), s->value2 ? setup_str(u, s->value2, "p->") : "0",
           expr_src(u, s->value), s->value2 ? " offset " : "", s->value2 ? expr_src(u, s->value2) : "");
  b->indent += 2;
}

static void step_every_end(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  (void)t;
  b->indent -= 2;
  buf_line(b, "} /* every %s */", expr_src(u, op->stmt->value));
}

/* swap A, B: the views exchanged; every later launch reads the pointers from p. */
static void step_swap(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  (void)u;
  (void)t;
  buf_line(b, "{  /* swap %s, %s: the buffers change names, no data moves */", s->a.name, s->b.name);
  buf_line(b, "  const cnp_array t = p->f_%s;", s->a.decl->name);
  buf_line(b, "  p->f_%s = p->f_%s;", s->a.decl->name, s->b.decl->name);
  buf_line(b, "  p->f_%s = t;", s->b.decl->name);
  buf_line(b, "}");
}

typedef void StepEmit(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op);
static StepEmit *const step_emit[ST__COUNT] = {
    [ST_MAP] = step_map,           [ST_COMPACT] = step_compact, [ST_SORT] = step_sort,
    [ST_OFFSETS] = step_offsets,   [ST_SEGMENTS] = step_segments, [ST_SUM] = step_sum,
    [ST_RECORD] = step_record,     [ST_WAIT] = step_wait,       [ST_COPY] = step_copy,
    [ST_REFRESH] = step_refresh,   [ST_EXCHANGE] = step_exchange, [ST_MIGRATE] = step_migrate,
    [ST_MIGRATE_TO] = pgrid_step_migrate,
    [ST_CALL] = step_call,         [ST_ZERO] = step_zero,
    [ST_HISTORY] = step_history,   [ST_SCAN] = step_scan,
    [ST_REPEAT] = step_repeat,     [ST_REPEAT_END] = step_repeat_end, [ST_SWAP] = step_swap,
    [ST_APPEND] = red_step_append, [ST_DEPOSIT] = pgrid_step_deposit, [ST_GATHER] = pgrid_step_gather,
    [ST_EVERY] = step_every,     [ST_EVERY_END] = step_every_end, [ST_HALO] = grid_step_halo,
    [ST_FFT] = step_fft,           [ST_IFFT] = step_fft,        [ST_ALLREDUCE] = red_step_allreduce,
};

bool gen_step_emitter(StmtKind k) { return step_emit[k] != NULL; }

/* ---- the host fast path around a statement (gen_host.c does the work inside a kernel) */

/* Opens the blocks that skip op when kernel work already did it; returns how many. */
static int fast_path_open(GenUnit *u, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  GenOp *owner = (s->kind == ST_COMPACT || s->kind == ST_SORT || s->kind == ST_SUM)
                     ? fused_owner(u, s) : NULL;
  bool sum_inline = s->kind == ST_SUM && !owner && lower_plan_producer(u, s->a.decl);
  if (owner) {
    buf_line(b, "if (!p->fused_k%d) {  /* else done by kernel %d */", owner->kernel, owner->kernel);
    b->indent += 2;
  }
  if (op->seg_inline) {
    buf_line(b, "p->inl_%s = p->fused_k%d;", s->a.decl->name,
             lower_plan_producer(u, s->a.decl)->kernel);
    buf_line(b, "if (!p->inl_%s) {  /* else the offsets came from kernel %d */", s->a.decl->name,
             lower_plan_producer(u, s->a.decl)->kernel);
    b->indent += 2;
  } else if (s->kind == ST_SEGMENTS && lower_plan_producer(u, s->a.decl)) {
    buf_line(b, "p->inl_%s = 0;", s->a.decl->name);
  }
  if (sum_inline) {
    inline_sum(u, b, s);
    b->indent += 2;
  }
  return (owner != NULL) + op->seg_inline + sum_inline;
}

static void step_op(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  buf_puts(b, "\n");
  comment_loc(u, b, s->loc);
  int open = fast_path_open(u, b, op);
  line_dir(u, b, s->loc);
  if (!step_emit[s->kind]) cnp_ice("step statement '%s' has no emitter", stmt_of(s->kind)->name);
  step_emit[s->kind](u, t, b, op);
  line_back(u, b);
  for (; open > 0; open--) {
    b->indent -= 2;
    buf_line(b, "}");
  }
}

/* ---- the steps */

/* Stream, cross-call joins, `after` waits and the workspace order before a step's work. */
static void step_prologue(GenUnit *u, Buf *b, GenStep *gs) {
  Decl *d = gs->decl;
  buf_puts(b, "\n");
  buf_line(b, "/* ---- %s:%d: %s ---- */", base_name(d->loc.file->path), d->kw_loc.line,
           src_line(u, d->kw_loc));
  if (d->stream.decl) buf_line(b, "S = p->s_%s;", d->stream.decl->name);
  else buf_line(b, "S = NULL;  /* host step: after all earlier work (synchronize_for_mpi) */");
  if (gs->first_on_stream) {
    int t = d->stream.decl->index;
    for (Decl *o = u->cc->decls; o; o = o->next)
      if (o->kind == DECL_STREAM && join_needs(u, t, o->index)) {
        buf_line(b, "if (p->ej_ready)  /* after stream %s's work of the previous call */", o->name);
        b->indent += 2;
        try_call(u, b, d->kw_loc, "cnp_stream_wait_event(S, p->ej_%s)", o->name);
        b->indent -= 2;
      }
  }
  for (int e = 0; e < d->after.n; e++) {
    line_dir(u, b, d->kw_loc);
    try_call(u, b, d->kw_loc, "cnp_stream_wait_event(S, p->e_%s)", d->after.v[e].decl->name);
    line_back(u, b);
  }
  if (gs->ws_order) {
    buf_line(b, "if (p->ws_used)  /* the shared workspace: after the last step that used it */");
    b->indent += 2;
    try_call(u, b, d->kw_loc, "cnp_stream_wait_event(S, p->ws_ev)");
    b->indent -= 2;
  }
}

void gen_step_body(GenUnit *u, const GenTarget *t, Buf *b) {
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_PARAM && !d->setup)
      buf_line(b, "  p->P_%s = %s;", d->name, param_value(u, d, param_cname(u, d)));
  for (int i = 0; i < u->n_steps; i++) {
    GenStep *gs = &u->steps[i];
    b->indent = 2;
    step_prologue(u, b, gs);
    Decl *d = gs->decl;
    if (d->every) {   /* cadence: decided on the host from the call count, no synchronization */
      buf_line(b, "if ((uint64_t)p->stats.steps %% (uint64_t)(%s) == (uint64_t)(%s)) {  /* every %s%s%s */",
               setup_str(u, d->every, "p->"), d->every_offset ? setup_str(u, d->every_offset, "p->") : "0",
               expr_src(u, d->every), d->every_offset ? " offset " : "",
               d->every_offset ? expr_src(u, d->every_offset) : "");
      b->indent += 2;
    }
    bool graph = t->step_graph && gs->graph;
    if (graph) t->step_graph(u, b, i);
    if (t->step_pull && u->graph_pulls && (graph || gs->reads_extents)) t->step_pull(u, b, gs);
    for (int o = 0; o < gs->n_ops; o++) {
      if (graph && o == gs->graph_end) {
        b->indent -= 2;
        buf_line(b, "}");
      }
      step_op(u, t, b, &gs->ops[o]);
    }
    if (graph && gs->graph_end == gs->n_ops) {
      b->indent -= 2;
      buf_line(b, "}");
    }
    if (gs->ws_order) {
      try_call(u, b, gs->decl->kw_loc, "cnp_event_record(p->ws_ev, S)");
      buf_line(b, "p->ws_used = 1;");
    }
    if (d->every) {
      b->indent -= 2;
      buf_line(b, "}");
    }
  }
  b->indent = 0;
  gen_joins(u, b, false);
}
