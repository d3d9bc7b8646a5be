/*
** sema_hazard.c -- the analyses of the whole program after the declarations: cycles in
** the step graph, stream hazards (vector clocks), unused events, the stream joins of
** successive step() calls, -Wcompact-omits / -Wsort-omits and plans never built.
*/
#include "sema_internal.h"

#include <stdlib.h>
#include <ctype.h>
#include <string.h>

/* ------------------------------------------------------------------ stream hazards */

typedef struct StepInfo {
  Decl *d;
  int stream;               /* stream index; n_streams for a host step */
  int *succ, n_succ, cap_succ;
  Loc *succ_loc;            /* where the successor waits */
  int color;                /* DFS: 0 new, 1 on stack, 2 done */
  int parent;
  Loc parent_loc;
} StepInfo;

static void add_edge(Arena *ar, StepInfo *a, int to, Loc at) {
  if (a->n_succ == a->cap_succ) {   /* arena arrays: most steps have one or two edges */
    int cap = a->cap_succ ? 2 * a->cap_succ : 4;
    int *succ = arena_alloc(ar, sizeof *succ * (size_t)cap);
    Loc *succ_loc = arena_alloc(ar, sizeof *succ_loc * (size_t)cap);
    if (a->n_succ) {
      memcpy(succ, a->succ, sizeof *succ * (size_t)a->n_succ);
      memcpy(succ_loc, a->succ_loc, sizeof *succ_loc * (size_t)a->n_succ);
    }
    a->succ = succ;
    a->succ_loc = succ_loc;
    a->cap_succ = cap;
  }
  a->succ[a->n_succ] = to;
  a->succ_loc[a->n_succ++] = at;
}

static const char *step_desc(Cnp *cc, const Decl *d) {
  if (d->name) return arena_printf(&cc->arena, "step '%s'", d->name);
  if (d->stream.name) return arena_printf(&cc->arena, "the step on '%s'", d->stream.name);
  return "the host step";
}

/*
** Cycles through `after`/`wait`: an edge goes from every step recording E to every step
** waiting for E, and along each stream in program order. Returns true if one was found.
*/
static bool find_cycles(Sema *S, StepInfo *st, int n) {
  int n_ev = S->cc->n_decl[DECL_EVENT];
  int **rec = calloc((size_t)n_ev + 1, sizeof *rec);
  int *n_rec = calloc((size_t)n_ev + 1, sizeof *n_rec);
  if (!rec || !n_rec) cnp_ice("out of memory");
  int cur = -1;
  FOR_OPS(S, o) {
    if (o->kind == HZ_STEP) { cur = o->obj->index; continue; }
    if (o->kind != HZ_RECORD) continue;
    int e = o->obj->index;
    if ((n_rec[e] & (n_rec[e] - 1)) == 0) {   /* 0, 1, 2, 4, ...: grow by doubling */
      rec[e] = realloc(rec[e], sizeof **rec * (size_t)(n_rec[e] ? 2 * n_rec[e] : 1));
      if (!rec[e]) cnp_ice("out of memory");
    }
    rec[e][n_rec[e]++] = cur;
  }
  int *last_on = malloc(sizeof *last_on * (size_t)(S->cc->n_decl[DECL_STREAM] + 1));
  if (!last_on) cnp_ice("out of memory");
  for (int s = 0; s <= S->cc->n_decl[DECL_STREAM]; s++) last_on[s] = -1;
  for (int i = 0; i < n; i++) {
    int s = st[i].stream;
    if (last_on[s] >= 0) add_edge(&S->cc->arena, &st[last_on[s]], i, st[i].d->loc);
    last_on[s] = i;
  }
  /* a wait consumes the latest recording before it; with none before, it waits for the
  ** recordings that come later (the only edges that can close a cycle) */
  int *latest = malloc(sizeof *latest * (size_t)(n_ev + 1));
  if (!latest) cnp_ice("out of memory");
  for (int e = 0; e <= n_ev; e++) latest[e] = -1;
  cur = -1;
  FOR_OPS(S, o) {
    if (o->kind == HZ_STEP) { cur = o->obj->index; continue; }
    int e = o->obj->index;
    if (o->kind == HZ_RECORD) latest[e] = cur;
    if (o->kind != HZ_WAIT) continue;
    if (latest[e] >= 0) {
      if (latest[e] != cur) add_edge(&S->cc->arena, &st[latest[e]], cur, *o->loc);
      continue;
    }
    for (int k = 0; k < n_rec[e]; k++)
      if (rec[e][k] != cur) add_edge(&S->cc->arena, &st[rec[e][k]], cur, *o->loc);
  }
  free(latest);
  bool found = false;
  /* iterative DFS */
  int *stack = malloc(sizeof *stack * (size_t)(n + 1)), *it = calloc((size_t)n + 1, sizeof *it);
  if (!stack || !it) cnp_ice("out of memory");
  for (int root = 0; root < n && !found; root++) {
    if (st[root].color) continue;
    int sp = 0;
    stack[sp++] = root;
    st[root].color = 1;
    while (sp > 0 && !found) {
      int v = stack[sp - 1];
      if (it[v] < st[v].n_succ) {
        int k = it[v]++, w = st[v].succ[k];
        if (st[w].color == 0) {
          st[w].color = 1;
          st[w].parent = v;
          st[w].parent_loc = st[v].succ_loc[k];
          stack[sp++] = w;
        } else if (st[w].color == 1) {
          found = true;
          diag_error(S->cc, st[v].succ_loc[k], "cycle in the step graph: %s waits for %s",
                     step_desc(S->cc, st[w].d), step_desc(S->cc, st[v].d));
          for (int x = v; x != w; x = st[x].parent)
            diag_note(S->cc, st[x].parent_loc, "%s waits for %s here", step_desc(S->cc, st[x].d),
                      step_desc(S->cc, st[st[x].parent].d));
        }
      } else {
        st[v].color = 2;
        sp--;
      }
    }
  }
  free(stack);
  free(it);
  free(last_on);
  for (int e = 0; e <= n_ev; e++) free(rec[e]);
  free(rec);
  free(n_rec);
  return found;
}

typedef struct Acc { int seq; bool valid; const Loc *loc; } Acc;

/* A step starts on stream t (ns - 1: the host): work enqueued after a host step is ordered
** after it (the CPU waited for it); a host step joins all streams. */
static void step_clocks(int *clock, int ns, int t, bool host) {
  int *ct = &clock[(size_t)t * (size_t)ns];
  if (ct[ns - 1] < clock[(size_t)(ns - 1) * (size_t)ns + (size_t)(ns - 1)])
    ct[ns - 1] = clock[(size_t)(ns - 1) * (size_t)ns + (size_t)(ns - 1)];
  if (host) {
    for (int s = 0; s < ns; s++)
      for (int u = 0; u < ns; u++) {
        int v = clock[(size_t)u * (size_t)ns + (size_t)s];
        for (int w = 0; w < ns; w++)
          if (clock[(size_t)w * (size_t)ns + (size_t)s] < v) clock[(size_t)w * (size_t)ns + (size_t)s] = v;
      }
  }
}

/* Access o (in `step`) races with the earlier access a, `what` ("written", "read"), on stream
** s (the host when no stream has index s). */
static void report_race(Cnp *cc, const HzOp *o, const Decl *step, int s, const char *what, const Acc *a) {
  bool w = o->kind == HZ_WRITE;
  Decl *sd = NULL;
  for (Decl *d = cc->decls; d; d = d->next)
    if (d->kind == DECL_STREAM && d->index == s) sd = d;
  const char *here_s = step->stream.name
                           ? arena_printf(&cc->arena, "stream '%s'", step->stream.name) : "the host";
  diag_error(cc, *o->loc, "%s '%s' is %s on %s%s%s and %s on %s with no event ordering them",
             o->obj->kind == DECL_DIM ? "the live extent of dim"
             : o->obj->kind == DECL_FIELD && o->obj->scalar ? "scalar"
             : o->obj->kind == DECL_FIELD && o->obj->history_of.name ? "history"
             : decl_kind_name(o->obj->kind),
             o->obj->name, what,
             sd ? "stream '" : "the host", sd ? sd->name : "", sd ? "'" : "",
             w ? "written" : "read", here_s);
  diag_note(cc, *a->loc, "%s here on %s%s%s", what, sd ? "stream '" : "the host", sd ? sd->name : "",
            sd ? "'" : "");
}

/* Fills cc->stream_join from the last accesses per (object, stream) (see check_hazards). */
static void stream_joins(Cnp *cc, const Acc *lw, const Acc *lr, int nobj, int ns) {
  int nst = ns - 1;
  for (int id = 0; id < nobj; id++)
    for (int a = 0; a < nst; a++) {
      if (!lw[(size_t)id * (size_t)ns + (size_t)a].valid) continue;
      for (int b2 = 0; b2 < nst; b2++) {
        if (b2 == a || !(lw[(size_t)id * (size_t)ns + (size_t)b2].valid || lr[(size_t)id * (size_t)ns + (size_t)b2].valid))
          continue;
        if (!cc->stream_join) cc->stream_join = arena_alloc(&cc->arena, sizeof(bool) * (size_t)nst * (size_t)nst);
        cc->stream_join[a * nst + b2] = cc->stream_join[b2 * nst + a] = true;
      }
    }
}

/* -Wunused-event: an event recorded (any_rec; first at first_rec) that nothing waits for. */
static void unused_events(Sema *S, const bool *any_rec, const Loc *first_rec) {
  Cnp *cc = S->cc;
  int n_ev = cc->n_decl[DECL_EVENT];
  bool *any_wait = calloc((size_t)n_ev + 1, sizeof *any_wait);
  if (!any_wait) cnp_ice("out of memory");
  FOR_OPS(S, o)
    if (o->kind == HZ_WAIT) any_wait[o->obj->index] = true;
  for (Decl *d = cc->decls; d; d = d->next)
    if (d->kind == DECL_EVENT && any_rec[d->index] && !any_wait[d->index])
      diag_warning(cc, WARN_UNUSED_EVENT, first_rec[d->index], "event '%s' is recorded but nothing waits for it", d->name);
  free(any_wait);
}

/*
** Vector clocks over the streams: an access b on stream t is ordered after an earlier
** access a on stream s when a's position on s is covered by t's clock at b. A host step
** joins every stream first (synchronize_for_mpi).
*/
static void check_hazards(Sema *S) {
  Cnp *cc = S->cc;
  int ns = cc->n_decl[DECL_STREAM] + 1;          /* + the host */
  int nobj = 0;
  for (Decl *d = cc->decls; d; d = d->next) nobj++;
  int *objid = NULL;
  (void)objid;
  /* object ids: Decl.index is per kind; build a dense id per (kind, index) */
  int base[DECL__COUNT + 1] = {0};
  for (int k = 0; k < DECL__COUNT; k++) base[k + 1] = base[k] + cc->n_decl[k];
  nobj = base[DECL__COUNT];
  int *clock = calloc((size_t)ns * (size_t)ns, sizeof *clock);
  int n_ev = cc->n_decl[DECL_EVENT];
  int *evclk = calloc((size_t)(n_ev + 1) * (size_t)ns, sizeof *evclk);
  bool *ev_rec = calloc((size_t)n_ev + 1, sizeof *ev_rec), *ev_waited = calloc((size_t)n_ev + 1, sizeof *ev_waited);
  Loc *ev_loc = calloc((size_t)n_ev + 1, sizeof *ev_loc);
  /* per (object, stream): the last write and read (arena: zeroed, huge pages when large) */
  Acc *lw = arena_alloc(&cc->arena, sizeof *lw * (size_t)nobj * (size_t)ns);
  Acc *lr = arena_alloc(&cc->arena, sizeof *lr * (size_t)nobj * (size_t)ns);
  bool *reported = calloc((size_t)nobj + 1, sizeof *reported);
  if (!clock || !evclk || !ev_rec || !ev_waited || !ev_loc || !reported) cnp_ice("out of memory");
  /* where each event is first recorded, for "recorded later" notes */
  Loc *first_rec = calloc((size_t)n_ev + 1, sizeof *first_rec);
  bool *any_rec = calloc((size_t)n_ev + 1, sizeof *any_rec);
  if (!first_rec || !any_rec) cnp_ice("out of memory");
  FOR_OPS(S, o)
    if (o->kind == HZ_RECORD && !any_rec[o->obj->index]) {
      any_rec[o->obj->index] = true;
      first_rec[o->obj->index] = *o->loc;
    }
  int t = ns - 1;
  const Decl *step = NULL;
  FOR_OPS(S, o) {
    int *ct = &clock[(size_t)t * (size_t)ns];
    switch (o->kind) {
    case HZ_STEP:
      step = o->obj;
      t = o->obj->stream.decl ? o->obj->stream.decl->index : ns - 1;
      step_clocks(clock, ns, t, !o->obj->stream.name);
      break;
    case HZ_RECORD: {
      int e = o->obj->index;
      if (ev_rec[e] && !ev_waited[e]) {
        diag_error(cc, *o->loc, "event '%s' is recorded again before anything waited for its previous recording",
                   o->obj->name);
        diag_note(cc, ev_loc[e], "previously recorded here");
      }
      ct[t]++;
      memcpy(&evclk[(size_t)e * (size_t)ns], ct, sizeof *ct * (size_t)ns);
      ev_rec[e] = true;
      ev_waited[e] = false;
      ev_loc[e] = *o->loc;
      break;
    }
    case HZ_WAIT: {
      int e = o->obj->index;
      if (!ev_rec[e]) {
        if (any_rec[e]) {
          diag_error(cc, *o->loc, "event '%s' is waited for before it is recorded", o->obj->name);
          diag_note(cc, first_rec[e], "'%s' is recorded here", o->obj->name);
        } else {
          diag_error(cc, *o->loc, "event '%s' is never recorded", o->obj->name);
        }
        ev_rec[e] = true;   /* report once */
        ev_waited[e] = true;
        break;
      }
      ev_waited[e] = true;
      for (int s = 0; s < ns; s++)
        if (ct[s] < evclk[(size_t)e * (size_t)ns + (size_t)s]) ct[s] = evclk[(size_t)e * (size_t)ns + (size_t)s];
      break;
    }
    case HZ_READ: case HZ_WRITE: {
      int id = base[o->obj->kind] + o->obj->index;
      ct[t]++;
      bool w = o->kind == HZ_WRITE;
      for (int s = 0; s < ns && !reported[id]; s++) {
        if (s == t) continue;
        Acc *a = &lw[(size_t)id * (size_t)ns + (size_t)s];
        const char *what = "written";
        if (!(a->valid && a->seq > ct[s]) && w) {
          a = &lr[(size_t)id * (size_t)ns + (size_t)s];
          what = "read";
        }
        if (a->valid && a->seq > ct[s]) {
          report_race(cc, o, step, s, what, a);
          reported[id] = true;
        }
      }
      Acc *mine = w ? &lw[(size_t)id * (size_t)ns + (size_t)t] : &lr[(size_t)id * (size_t)ns + (size_t)t];
      mine->valid = true;
      mine->seq = ct[t];
      mine->loc = o->loc;
      break;
    }
    }
  }
  /* successive step() calls: the next call's work on t may run while u still works on the
  ** previous call's data (the analysis above covers one call). Any object written on one of
  ** two streams and used on the other makes t wait for u's previous call (generated code:
  ** an end-of-call event per stream). Host steps synchronize and need nothing. */
  stream_joins(cc, lw, lr, nobj, ns);
  /* an event nobody waits for orders nothing: probably a missing `after` */
  unused_events(S, any_rec, first_rec);
  free(clock); free(evclk); free(ev_rec); free(ev_waited); free(ev_loc);
  free(reported); free(first_rec); free(any_rec);
}

void check_graph(Sema *S) {
  Cnp *cc = S->cc;
  int n = cc->n_decl[DECL_STEP];
  StepInfo *st = calloc((size_t)n + 1, sizeof *st);
  if (!st) cnp_ice("out of memory");
  for (Decl *d = cc->decls; d; d = d->next)
    if (d->kind == DECL_STEP) {
      st[d->index].d = d;
      st[d->index].stream = d->stream.decl ? d->stream.decl->index : cc->n_decl[DECL_STREAM];
    }
  bool cyc = find_cycles(S, st, n);
  free(st);
  if (!cyc) check_hazards(S);
}
/* ------------------------------------------------------------------ compact and sort omissions, plans */


/* -Wcompact-omits, -Wsort-omits: a compaction or sort moves the rows of the arrays it lists;
** a field over the same dim that is left out keeps its rows where they were, so it no longer
** lines up. Warn for such a field when its rows are live after the statement: some later
** use reads them row by row -- a map over the dim reading f[i] or f[c, i] (or f[i] +=), or
** a sum, sort, compaction, migration, segments, offsets, copy, exchange or kernel call
** using f -- before anything writes every row of f again (a map over the dim storing f[i],
** or f[c, i] for every component c, outside any if, before reading it). "Later" runs to the
** end of the step, through the later steps in program order, and on into the next call of
** NAME_step() (steps repeat): up to the statement itself. A field only gathered (a table
** indexed by the dim) or only written is left alone. */
typedef enum RowUse { ROW_NONE, ROW_READ, ROW_KILL } RowUse;

static const Expr *expr_reads_row(const Expr *e, const Decl *f) {
  if (!e) return NULL;
  if (e->kind == EX_INDEX && e->ref.decl == f && !(e->flags & EXF_GATHER)) return e;
  for (int i = 0; i < e->nargs; i++) {
    const Expr *r = expr_reads_row(e->args[i], f);
    if (r) return r;
  }
  return NULL;
}

/* The first read of f's rows by one map statement (the target's indices, a row '+=', the
** value, the branches of an if), or NULL. */
static const Expr *mstmt_reads_row(const Stmt *s, const Decl *f) {
  const Expr *r = expr_reads_row(s->value, f);
  if (r) return r;
  if (s->target && s->target->kind == EX_INDEX) {
    for (int i = 0; i < s->target->nargs; i++)
      if ((r = expr_reads_row(s->target->args[i], f))) return r;
    if (s->kind == ST_ADD && !s->scatter && s->target->ref.decl == f) return s->target;
  }
  for (const Stmt *t = s->body; t; t = t->next)
    if ((r = mstmt_reads_row(t, f))) return r;
  for (const Stmt *t = s->else_body; t; t = t->next)
    if ((r = mstmt_reads_row(t, f))) return r;
  return NULL;
}

/* A map over f's dim: does it read f's old rows (*at: where), or overwrite all of them first? */
static RowUse map_row_use(Sema *S, const Stmt *m, const Decl *f, Loc *at) {
  int ncomp = 1;   /* components per row: 1, or the constant first extent of f : T[C, N] */
  if (f->shape.rank == 2) {
    bool isf;
    int64_t v;
    double d;
    const Expr *c = f->shape.ext[0];
    ncomp = (c->flags & EXF_CONST) && fold(S, c, &isf, &v, &d) && !isf && v > 0 && v <= 64 ? (int)v : 0;
  } else if (f->shape.rank != 1) {
    ncomp = 0;     /* rank 3 and up: never counted as rewritten */
  }
  uint64_t written = 0;
  for (const Stmt *s = m->body; s; s = s->next) {
    const Expr *r = mstmt_reads_row(s, f);
    if (r) {
      *at = r->loc;
      return ROW_READ;
    }
    const Expr *t = s->target;
    if (s->kind != ST_ASSIGN || !t || t->kind != EX_INDEX || t->ref.decl != f || (t->flags & EXF_GATHER) || !ncomp)
      continue;
    if (f->shape.rank == 1) return ROW_KILL;
    bool isf;
    int64_t v;
    double d;
    if ((t->args[0]->flags & EXF_CONST) && fold(S, t->args[0], &isf, &v, &d) && !isf && v >= 0 && v < ncomp)
      written |= 1ull << v;
    if (written == (ncomp == 64 ? ~0ull : (1ull << ncomp) - 1)) return ROW_KILL;
  }
  return ROW_NONE;
}

static bool refs_has(const RefList *l, const Decl *f) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i].decl == f) return true;
  return false;
}

/* How one step statement uses the rows of f (a field over `dim`); *at: where it reads them. */
static RowUse stmt_row_use(Sema *S, const Stmt *s, const Decl *f, const Decl *dim, Loc *at) {
  *at = s->loc;
  if (s->kind == ST_MAP) return s->over.decl == dim ? map_row_use(S, s, f, at) : ROW_NONE;
  const StmtInfo *si = stmt_of(s->kind);   /* the SU_ROWS operands (stmt.c) */
  if (((si->a & SU_ROWS) && s->a.decl == f) || ((si->b & SU_ROWS) && s->b.decl == f)) return ROW_READ;
  if ((si->list & SU_ROWS) && refs_has(&s->list, f)) return ROW_READ;
  for (int i = 0; (si->args & SU_ROWS) && i < s->nargs; i++)
    if (s->args[i]->ref.decl == f) return ROW_READ;
  return ROW_NONE;
}

/* Are f's rows live after statement `at` (see above)? Walks the steps in program order
** from the statement after `at`, wrapping around into the next call (*wrapped), until `at`.
** *read: where they are read. */
static bool rows_live_after(Sema *S, const Stmt *at, const Decl *f, const Decl *dim, Loc *read, bool *wrapped) {
  bool past = false;
  *wrapped = false;
  for (int round = 0; round < 2; round++, *wrapped = past)
    for (const Decl *d = S->cc->decls; d; d = d->next) {
      if (d->kind != DECL_STEP) continue;
      for (const Stmt *s = d->body; s; s = s->next) {
        if (s == at) {
          if (past) return false;   /* all the way round: nothing reads them */
          past = true;
          continue;
        }
        if (!past) continue;
        RowUse u = stmt_row_use(S, s, f, dim, read);
        if (u != ROW_NONE) return u == ROW_READ;
      }
    }
  return false;
}

void check_compact_omits(Sema *S) {
  Cnp *cc = S->cc;
  for (Decl *d = cc->decls; d; d = d->next) {
    if (d->kind != DECL_STEP) continue;
    for (const Stmt *s = d->body; s; s = s->next) {
      Decl *m = s->kind == ST_COMPACT || s->kind == ST_SORT ? s->a.decl : NULL;
      Decl *dim = dim_of(m);
      if (!dim) continue;
      bool sort = s->kind == ST_SORT;
      for (Decl *f = cc->decls; f; f = f->next) {
        if (f->kind != DECL_FIELD || f == m || dim_of(f) != dim || refs_has(&s->list, f)) continue;
        Loc read;
        bool wrapped;
        if (!rows_live_after(S, s, f, dim, &read, &wrapped)) continue;
        int shown = cc->n_errors + cc->n_warnings;   /* unchanged: the warning is off */
        diag_warning(cc, sort ? WARN_SORT_OMITS : WARN_COMPACT_OMITS, s->a.loc, "field '%s' is over "
                     "dim '%s' but not in this %s: its rows stay where they are while the listed "
                     "arrays move", f->name, dim->name, sort ? "sort" : "compaction");
        if (cc->n_errors + cc->n_warnings != shown)
          diag_note(cc, read, "'%s' is read here%s%s%s, before anything rewrites it", f->name,
                    wrapped ? " in the next call of " : "", wrapped && cc->pipeline ? cc->pipeline->name : "",
                    wrapped ? "_step()" : "");
      }
    }
  }
}

/* A plan is built only by `PLAN = segments(KEY, N);` in a step: a sum over a plan that no
** step builds fails at run time ("the plan has not been built"), so it is an error here. */
void check_plans_built(Cnp *cc) {
  for (Decl *d = cc->decls; d; d = d->next) {
    if (d->kind != DECL_STEP) continue;
    for (const Stmt *s = d->body; s; s = s->next) {
      if (s->kind != ST_SUM || !s->a.decl || s->a.decl->kind != DECL_PLAN) continue;
      bool built = false;
      for (Decl *e = cc->decls; e && !built; e = e->next)
        if (e->kind == DECL_STEP)
          for (const Stmt *t = e->body; t && !built; t = t->next)
            built = t->kind == ST_SEGMENTS && t->a.decl == s->a.decl;
      if (built) continue;
      Decl *pl = s->a.decl;
      diag_error(cc, s->a.loc, "plan '%s' is summed over but no step builds it: add '%s = segments(...);' "
                 "(after the key is final) before the sum", pl->name, pl->name);
      diag_note(cc, pl->loc, "'%s' is declared here", pl->name);
    }
  }
}
