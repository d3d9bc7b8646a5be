/*
** gen_setup.c -- NAME_setup() and NAME_teardown(): configuration checks, allocation of every
** field, stream, event, snapshot, plan, workspace and fast-path buffer, MPI communicator,
** staging and exchange partners, the kernel catalog (through the target); and their
** release. The fixed text is in templates/setup.tmpl.
*/
#include "gen.h"

#include <string.h>

#define TM "setup"   /* the snippet template: templates/setup.tmpl */

static const char *line_of(GenUnit *u, Loc loc) { return gen_int(u, loc.line); }

/* One extent or segment count of a field or plan: overflow (computed) and > 0. */
static void check_extent(GenUnit *u, Buf *b, Decl *d, Expr *e, const char *v) {
  EMIT_SNIPPET(b, TM, "check_extent", {"computed", extent_computed(e) ? "1" : ""}, {"v", v},
               {"file", base_name(d->loc.file->path)}, {"line", line_of(u, d->loc)},
               {"what", arena_printf(&u->cc->arena, "%s %s: %s '%s'",
                                     d->history_of.name ? "history" : decl_kind_name(d->kind), d->name,
                                     d->kind == DECL_PLAN ? "segment count" : d->history_of.name ? "length" : "extent",
                                     expr_src(u, e))});
}

/* `every K [offset J]` with a setup param in K or J: checked at setup, before any step can
** take a call count modulo K (constant cadences are cnpc's: sema's check_cadence). */
static void check_cadence(GenUnit *u, Buf *b, Loc loc, Expr *k, Expr *j, const char *what) {
  if (!k || ((k->flags & EXF_CONST) && (!j || (j->flags & EXF_CONST)))) return;
  EMIT_SNIPPET(b, TM, "check_cadence", {"k", setup_str(u, k, "cfg->")},
               {"j", j ? setup_str(u, j, "cfg->") : ""}, {"file", base_name(loc.file->path)},
               {"line", gen_int(u, loc.line)},
               {"what", arena_printf(&u->cc->arena, "%s '%s'", what, expr_src(u, k))});
}

/* `repeat K` with a setup param in K: K >= 1 at setup, as cnpc checks a constant one. */
static void check_repeat_count(GenUnit *u, Buf *b, Loc loc, Expr *k) {
  if (!k || (k->flags & EXF_CONST)) return;
  EMIT_SNIPPET(b, TM, "check_repeat", {"k", setup_str(u, k, "cfg->")}, {"file", base_name(loc.file->path)},
               {"line", gen_int(u, loc.line)}, {"src", expr_src(u, k)});
}

static void check_cadences(GenUnit *u, Buf *b, Stmt *s) {
  for (; s; s = s->next) {
    if (s->kind == ST_EVERY) check_cadence(u, b, s->loc, s->value, s->value2, "every");
    if (s->kind == ST_REPEAT) check_repeat_count(u, b, s->loc, s->value);
    if (s->kind == ST_EVERY || s->kind == ST_REPEAT) check_cadences(u, b, s->body);
  }
}

void gen_setup_checks(GenUnit *u, Buf *b) {
  const char *seen[256];
  int n_seen = 0;
  b->indent = 2;
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_DIM)
      EMIT_SNIPPET(b, TM, "check_dim", {"d", d->name}, {"file", base_name(d->loc.file->path)},
                   {"line", line_of(u, d->loc)});
    if (d->kind == DECL_STEP) {
      check_cadence(u, b, d->loc, d->every, d->every_offset, "step every");
      check_cadences(u, b, d->body);
    }
    if (d->kind != DECL_FIELD && d->kind != DECL_PLAN && d->kind != DECL_GRID) continue;
    if (d->kind == DECL_GRID && d->target.name) continue;   /* rfft(G): checked as G's (n/2 + 1 > 0) */
    for (int k = 0; d->kind == DECL_GRID && k < d->grid->ndim; k++) {
      int W = d->grid->axis[k].ghost;   /* halo copies the periodic image: n >= W */
      if (W < 2) continue;               /* (n >= 1 is the extent check) */
      const char *v = setup_str(u, d->shape.ext[k], "cfg->");
      buf_line(b, "if (%s > 0 && %s < %d)", v, v, W);
      buf_line(b, "  return cnp_g_err(err, errlen, CNP_EINVAL, \"%s:%s: grid %s: axis %d has %%lld points, fewer than \"",
               base_name(d->loc.file->path), line_of(u, d->loc), d->name, k);
      buf_line(b, "                   \"its ghost width %d (halo copies the periodic image: n >= W)\", (long long)(%s));",
               W, v);
    }
    int n = d->kind == DECL_PLAN ? 1 : d->kind == DECL_GRID ? d->grid->ndim : d->shape.rank;
    for (int k = 0; k < n; k++) {   /* (a grid's extents: also of grid maps over no field) */
      Expr *e = d->kind == DECL_PLAN ? d->value : d->shape.ext[k];
      if (e->kind == EX_INT) continue;
      const char *v = setup_str(u, e, "cfg->");
      if (extent_computed(e)) {
        Buf t = {0};
        setup_expr_checked(u, &t, e);
        v = buf_take(u, &t);
      }
      bool dup = false;
      for (int i = 0; i < n_seen; i++) dup = dup || strcmp(seen[i], v) == 0;
      if (dup || (e->kind == EX_NAME && e->ref.decl && e->ref.decl->kind == DECL_DIM)) continue;
      if (n_seen < 256) seen[n_seen++] = v;
      check_extent(u, b, d, e, v);
    }
  }
  b->indent = 0;
}

/* `call`, failing setup with "file:line: kind name". */
static void setup_try(GenUnit *u, Buf *b, Decl *d, const char *call) {
  EMIT_SNIPPET(b, TM, "try", {"call", call},
               {"where", arena_printf(&u->cc->arena, "%s:%d: %s %s", base_name(d->loc.file->path),
                                      d->loc.line, decl_noun(d), d->name)});
}

/* The shape initializer "{N, 3}" of a field or staging buffer. */
static const char *shape_init(GenUnit *u, Decl *d) {
  Buf shp = {0};
  buf_puts(&shp, "{");
  for (int k = 0; k < d->shape.rank; k++) {
    if (k) buf_puts(&shp, ", ");
    setup_expr(u, &shp, d->shape.ext[k], "p->");
  }
  buf_puts(&shp, "}");
  return buf_take(u, &shp);
}

/* An exchange's partners: checked and found by the runtime from the formula functions
** (gen_setup_funcs), then its staging check. */
static void setup_exchange(GenUnit *u, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  Decl *h = s->a.decl;
  const char *id = gen_int(u, op->mpi_id);
  const char *file = base_name(s->loc.file->path), *line = line_of(u, s->loc);
  EMIT_SNIPPET(b, TM, "exchange_pairing", {"N", u->name}, {"id", id}, {"file", file}, {"line", line},
               {"h", h->name}, {"from", s->value2 ? "1" : ""},
               {"src_fn", s->value2 ? arena_printf(&u->cc->arena, "%s_xsrc_%s", u->name, id) : "NULL"});
  EMIT_SNIPPET(b, TM, "exchange_check", {"file", file}, {"line", line}, {"h", h->name},
               {"arr", exchanged(u, s)}, {"f", s->b.decl ? s->b.decl->name : h->name});
}

/* One formula of an exchange as a function of the rank, for cnp_comm_check_pairing. */
static void exchange_formula(GenUnit *u, Buf *b, GenOp *op, const char *kind, Expr *e) {
  Stmt *s = op->stmt;
  EMIT_SNIPPET(b, TM, "exchange_formula", {"N", u->name}, {"kind", kind}, {"id", gen_int(u, op->mpi_id)},
               {"what", *kind == 'd' ? "destination" : "source"}, {"e", setup_str(u, e, "p->")},
               {"h", s->a.decl->name}, {"file", base_name(s->loc.file->path)}, {"line", line_of(u, s->loc)});
}

void gen_setup_funcs(GenUnit *u, Buf *b) {
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      if (op->stmt->kind != ST_EXCHANGE) continue;
      exchange_formula(u, b, op, "dst", op->stmt->value);
      if (op->stmt->value2) exchange_formula(u, b, op, "src", op->stmt->value2);
    }
}

/* Communicator, staging objects, exchange partners and migration plans. */
static void gen_setup_mpi(GenUnit *u, Buf *b) {
  Arena *a = &u->cc->arena;
  if (!u->split && !u->allreduce)   /* (else before the fields: grid_split_setup) */
    EMIT_SNIPPET(b, TM, "mpi_comm", {"N", u->name});
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind != DECL_MPI) continue;
    static const char *modes[] = {"CNP_CUDA_AWARE_AUTO", "CNP_CUDA_AWARE_ON", "CNP_CUDA_AWARE_OFF"};
    buf_line(b, "{");
    b->indent += 2;
    buf_line(b, "const int64_t shape[%d] = %s;", d->shape.rank, shape_init(u, d));
    setup_try(u, b, d, arena_printf(a, "cnp_mpi_stage_create(&p->mpi_%s, p->comm, %s, %d, shape, %s)",
                                    d->name, gen_cnp_dtype(d->dtype), d->shape.rank,
                                    modes[d->cuda_aware]));
    if (d->own_buffer)
      setup_try(u, b, d, arena_printf(a, "cnp_array_alloc_on(&p->hb_%s, CNP_BACKEND_HOST, 0, %s, %d, "
                                         "shape, CNP_ORDER_C, 0)",
                                      d->name, gen_cnp_dtype(d->dtype), d->shape.rank));
    b->indent -= 2;
    buf_line(b, "}");
  }
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      Stmt *s = op->stmt;
      if (s->kind == ST_EXCHANGE) setup_exchange(u, b, op);
      if (s->kind != ST_MIGRATE) continue;
      Buf fl = {0};
      for (int k = 0; k < s->list.n; k++) buf_printf(&fl, "%sp->f_%s", k ? ", " : "", s->list.v[k].decl->name);
      EMIT_SNIPPET(b, TM, "migrate", {"n", gen_int(u, s->list.n)},
                   {"fields", arena_printf(a, "{%s}", buf_str(&fl))}, {"id", gen_int(u, op->mpi_id)},
                   {"file", base_name(s->loc.file->path)}, {"line", line_of(u, s->loc)});
      buf_free(&fl);
    }
}

/* A field: the user's host array mirrored, or allocated; the largest element count sizes
** the workspace. */
static void setup_field(GenUnit *u, Buf *b, Decl *d) {
  Arena *a = &u->cc->arena;
  Decl *m = mirror_of(u, d);
  Buf alloc = {.indent = b->indent + 2};
  if (m) {   /* the device copy of the user's host array cfg.<mirror>_host */
    EMIT_SNIPPET(&alloc, TM, "mirror", {"m", m->name}, {"f", d->name},
                 {"file", base_name(m->loc.file->path)}, {"line", line_of(u, m->loc)});
    setup_try(u, &alloc, m, arena_printf(a, "cnp_array_wrap(&host, cfg->%s_host, CNP_BACKEND_HOST, 0, %s, "
                                         "%d, shape, NULL)", m->name, gen_cnp_dtype(d->dtype), d->shape.rank));
    setup_try(u, &alloc, m, arena_printf(a, "cnp_mirror_create_on(&p->mir_%s, &host, B, p->device)", m->name));
    setup_try(u, &alloc, m, arena_printf(a, "cnp_mirror_device(p->mir_%s, &p->f_%s)", m->name, d->name));
  } else {
    setup_try(u, &alloc, d, arena_printf(a, "cnp_array_alloc_on(&p->f_%s, B, p->device, %s, %d, shape, "
                                            "CNP_ORDER_C, 0)", d->name, gen_cnp_dtype(d->dtype),
                                         d->shape.rank));
  }
  EMIT_SNIPPET(b, TM, "field", {"rank", gen_int(u, d->shape.rank)}, {"shape", shape_init(u, d)},
               {"alloc", buf_take(u, &alloc)}, {"axis", gen_int(u, d->shape.rank - 1)}, {"f", d->name});
}

/* Streams, events, snapshots and plans. */
static void setup_objects(GenUnit *u, Buf *b) {
  Arena *a = &u->cc->arena;
  int n_streams = 0;
  for (Decl *d = u->cc->decls; d; d = d->next) {
    switch (d->kind) {
    case DECL_STREAM:
      setup_try(u, b, d, arena_printf(a, "(B == CNP_BACKEND_CUDA && cfg->cuda_streams[%d]) ? "
                                         "cnp_stream_wrap_on(&p->s_%s, B, cfg->cuda_streams[%d]) : "
                                         "cnp_stream_create_on(&p->s_%s, B, p->device)", n_streams, d->name,
                                      n_streams, d->name));
      n_streams++;
      if (join_source(u, d->index))
        setup_try(u, b, d, arena_printf(a, "cnp_event_create_on(&p->ej_%s, CNP_EVENT_DEFAULT, B, p->device)", d->name));
      break;
    case DECL_EVENT:
      setup_try(u, b, d, arena_printf(a, "cnp_event_create_on(&p->e_%s, CNP_EVENT_DEFAULT, B, p->device)", d->name));
      break;
    case DECL_SNAPSHOT:
      setup_try(u, b, d, arena_printf(a, "cnp_snapshot_create(&p->snap_%s, &p->f_%s, %d)", d->name,
                                      d->target.decl->name, d->slots));
      break;
    case DECL_PLAN:
      setup_try(u, b, d, arena_printf(a, "cnp_segment_plan_create(&p->plan_%s, B, p->device, "
                                         "p->f_%s.shape[%d], %s)", d->name, d->target.decl->name,
                                      d->target.decl->shape.rank - 1, setup_str(u, d->value, "p->")));
      break;
    default: break;
    }
  }
}

/* Hand-written kernels: the host fallback's absence, the target's catalog. */
static void setup_kernels(GenUnit *u, const GenTarget *t, Buf *b) {
  bool first = true;
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind != DECL_KERNEL || !first_call(u, d)) continue;
    if (!d->host_path)
      EMIT_SNIPPET(b, TM, "no_host_fallback", {"file", base_name(d->loc.file->path)},
                   {"line", line_of(u, d->loc)}, {"k", d->name});
    if (!t->kernel_setup) continue;
    t->kernel_setup(u, b, d, first);
    first = false;
  }
  if (t->kernel_setup_end && !first) t->kernel_setup_end(u, b);
}

/* The host fast path's buffers of kernel op (counts, offsets, keys, double buffers). */
static void setup_fast_path(GenUnit *u, Buf *b, GenOp *op) {
  Arena *a = &u->cc->arena;
  const char *K = gen_int(u, op->kernel);
  Buf bufs = {.indent = b->indent + 2};
  for (int k = 0; k < op->mask_of->list.n; k++) {
    Decl *f = op->mask_of->list.v[k].decl;
    setup_try(u, &bufs, f, arena_printf(a, "cnp_array_alloc_on(&p->g%d_%s, B, p->device, %s, %d, "
                                        "p->f_%s.shape, CNP_ORDER_C, 0)", op->kernel, f->name,
                                        gen_cnp_dtype(f->dtype), f->shape.rank, f->name));
    EMIT_SNIPPET(&bufs, TM, "fast_path_buffer", {"K", K}, {"f", f->name});
  }
  EMIT_SNIPPET(b, TM, "fast_path", {"N", u->name}, {"K", K}, {"R", setup_str(u, op->fused_plan->value, "p->")},
               {"plan", op->fused_plan->name}, {"dry", op->dry ? "1" : ""},
               {"dim", op->stmt->over.decl->name}, {"buffers", buf_take(u, &bufs)});
}

void gen_setup_body(GenUnit *u, const GenTarget *t, Buf *b) {
  b->indent = 2;
  /* dims and setup params */
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_DIM) buf_line(b, "p->cap_%s = p->n_%s = cfg->%s;", d->name, d->name, d->name);
    if (d->kind == DECL_PARAM && d->setup)
      buf_line(b, "p->P_%s = %s;", d->name,
               param_value(u, d, arena_printf(&u->cc->arena, "cfg->%s", d->name)));
  }
  grid_split_setup(u, b);   /* the communicator and the split ranges: the fields' storage extents */
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_FIELD) setup_field(u, b, d);
  grid_split_halo_setup(u, b);
  EMIT_SNIPPET(b, TM, "common", {"N", u->name}, {"ws_ev", u->ws_shared ? "1" : ""});
  setup_objects(u, b);
  fft_setup(u, b);
  red_setup(u, b);
  pgrid_setup(u, b);
  buf_line(b, "p->nthreads = CNP_G_MAXT();");
  if (u->uses_mpi) gen_setup_mpi(u, b);
  pgrid_migrate_setup(u, b);
  red_allreduce_setup(u, b);
  setup_kernels(u, t, b);
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++)
      if (u->steps[i].ops[o].fused_sort) setup_fast_path(u, b, &u->steps[i].ops[o]);
  b->indent = 0;
}

/* "if (p->X) DESTROY(p->X);" */
static void release(Buf *b, const char *test, const char *call, const char *name) {
  buf_line(b, "if (p->%s%s) %s(%sp->%s);", name, test, call, *test ? "&" : "", name);
}

void gen_teardown_body(GenUnit *u, Buf *b) {
  Arena *a = &u->cc->arena;
  b->indent = 2;
  buf_line(b, "if (p->backend == CNP_BACKEND_CUDA) cnp_device_synchronize_on(p->backend, p->device);");
  for (Decl *d = u->cc->decls; d; d = d->next) {
    const char *n = d->name;
    switch (d->kind) {
    case DECL_SNAPSHOT: release(b, "", "cnp_snapshot_destroy", arena_printf(a, "snap_%s", n)); break;
    case DECL_PLAN: buf_line(b, "cnp_segment_plan_destroy(p->plan_%s);", n); break;
    case DECL_EVENT: release(b, "", "cnp_event_destroy", arena_printf(a, "e_%s", n)); break;
    case DECL_STREAM:
      if (join_source(u, d->index)) release(b, "", "cnp_event_destroy", arena_printf(a, "ej_%s", n));
      release(b, "", "cnp_stream_destroy", arena_printf(a, "s_%s", n));
      break;
    case DECL_FIELD:
      if (!mirror_of(u, d)) release(b, ".data", "cnp_array_free", arena_printf(a, "f_%s", n));
      break;
    case DECL_MIRROR: release(b, "", "cnp_mirror_destroy", arena_printf(a, "mir_%s", n)); break;
    default: break;
    }
  }
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      if (!op->fused_sort) continue;
      buf_line(b, "free(p->hist_k%d);", op->kernel);
      if (op->dry) buf_line(b, "free(p->keys_k%d);", op->kernel);
      buf_line(b, "free(p->off_%s);", op->fused_plan->name);
      for (int k = 0; k < op->mask_of->list.n; k++)
        release(b, ".data", "cnp_array_free",
                arena_printf(a, "g%d_%s", op->kernel, op->mask_of->list.v[k].decl->name));
    }
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++)
      if (u->steps[i].ops[o].stmt->kind == ST_MIGRATE)
        release(b, "", "cnp_migrate_plan_destroy", arena_printf(a, "mig_%d", u->steps[i].ops[o].mpi_id));
  pgrid_migrate_teardown(u, b);   /* before the communicator */
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_MPI) {
      release(b, "", "cnp_mpi_stage_destroy", arena_printf(a, "mpi_%s", d->name));
      if (d->own_buffer) release(b, ".data", "cnp_array_free", arena_printf(a, "hb_%s", d->name));
    }
  grid_split_teardown(u, b);
  red_allreduce_teardown(u, b);
  if (u->uses_mpi) release(b, "", "cnp_comm_destroy", "comm");
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_KERNEL) {
      release(b, "", "cnp_catalog_destroy", "cat");
      break;
    }
  fft_teardown(u, b);
  red_teardown(u, b);
  pgrid_teardown(u, b);
  release(b, ".data", "cnp_array_free", "bad");
  buf_line(b, "cnp_workspace_destroy(p->ws);");
  if (u->ws_shared) release(b, "", "cnp_event_destroy", "ws_ev");
  b->indent = 0;
}
