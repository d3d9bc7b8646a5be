/*
** gen_setup.c -- NAME_setup() and NAME_teardown(): configuration checks, allocation of every
** field, stream, event, snapshot, plan, workspace and fast-path buffer, MPI communicator,
** staging and exchange partners, the kernel catalog; and their release.
*/
#include "gen.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void gen_setup_checks(GenUnit *u, Buf *b) {
  const char *seen[256];
  int n_seen = 0;
  b->indent = 2;
  for (Decl *d = u->cc->decls; d; d = d->next) {
    const char *file = base_name(d->loc.file->path);
    if (d->kind == DECL_DIM) {
      buf_line(b, "if (cfg->%s <= 0)", d->name);
      buf_line(b, "  return cnp_g_err(err, errlen, CNP_EINVAL, \"%s:%d: dim %s: capacity cfg.%s "
                  "must be > 0 (got %%lld)\",", file, d->loc.line, d->name, d->name);
      buf_line(b, "                   (long long)cfg->%s);", d->name);
    }
    if (d->kind == DECL_FIELD || d->kind == DECL_PLAN) {
      int n = d->kind == DECL_FIELD ? d->shape.rank : 1;
      for (int k = 0; k < n; k++) {
        Expr *e = d->kind == DECL_FIELD ? d->shape.ext[k] : d->value;
        if (e->kind == EX_INT) continue;
        const char *v = setup_str(u, e, "cfg->");
        if (extent_computed(e)) {
          Buf t = {0};
          setup_expr_checked(u, &t, e);
          v = arena_strndup(&u->cc->arena, buf_str(&t), t.n);
          buf_free(&t);
        }
        bool dup = false;
        for (int i = 0; i < n_seen; i++) dup = dup || strcmp(seen[i], v) == 0;
        if (dup || (e->kind == EX_NAME && e->ref.decl && e->ref.decl->kind == DECL_DIM)) continue;
        if (n_seen < 256) seen[n_seen++] = v;
        if (extent_computed(e)) {
          buf_line(b, "if (%s == INT64_MIN)", v);
          buf_line(b, "  return cnp_g_err(err, errlen, CNP_EINVAL, \"%s:%d: %s %s: %s '%s' overflows "
                      "int64\");", file, d->loc.line, decl_kind_name(d->kind), d->name,
                   d->kind == DECL_FIELD ? "extent" : "segment count", expr_src(u, e));
        }
        buf_line(b, "if (%s <= 0)", v);
        buf_line(b, "  return cnp_g_err(err, errlen, CNP_EINVAL, \"%s:%d: %s %s: %s '%s' must be "
                    "> 0 (got %%lld)\",", file, d->loc.line, decl_kind_name(d->kind), d->name,
                 d->kind == DECL_FIELD ? "extent" : "segment count", expr_src(u, e));
        buf_line(b, "                   (long long)(%s));", v);
      }
    }
  }
  b->indent = 0;
}

static void setup_try(Buf *b, Decl *d, const char *call) {
  buf_line(b, "if ((st = %s) != CNP_OK) {", call);
  buf_line(b, "  where = \"%s:%d: %s %s\";", base_name(d->loc.file->path), d->loc.line,
           decl_kind_name(d->kind), d->name);
  buf_line(b, "  goto fail;");
  buf_line(b, "}");
}

/* Communicator, staging objects, exchange partners and migration plans. */
static void gen_setup_mpi(GenUnit *u, Buf *b) {
  Arena *a = &u->cc->arena;
  buf_line(b, "if (cfg->mpi_fcomm == 0) {");
  buf_line(b, "  st = CNP_EINVAL;");
  buf_line(b, "  where = \"%s_setup: the pipeline uses MPI: set cfg.mpi_fcomm = "
              "MPI_Comm_c2f(comm)\";", u->name);
  buf_line(b, "  goto fail;");
  buf_line(b, "}");
  buf_line(b, "if ((st = cnp_comm_create(&p->comm, cfg->mpi_fcomm)) != CNP_OK) {");
  buf_line(b, "  where = \"%s_setup: communicator\";", u->name);
  buf_line(b, "  goto fail;");
  buf_line(b, "}");
  buf_line(b, "p->rank = cnp_comm_rank(p->comm);");
  buf_line(b, "p->size = cnp_comm_size(p->comm);");
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind != DECL_MPI) continue;
    Buf shp = {0};
    for (int k = 0; k < d->shape.rank; k++) {
      if (k) buf_puts(&shp, ", ");
      setup_expr(u, &shp, d->shape.ext[k], "p->");
    }
    static const char *modes[] = {"CNP_CUDA_AWARE_AUTO", "CNP_CUDA_AWARE_ON", "CNP_CUDA_AWARE_OFF"};
    buf_line(b, "{");
    b->indent += 2;
    buf_line(b, "const int64_t shape[%d] = {%s};", d->shape.rank, buf_str(&shp));
    setup_try(b, d, arena_printf(a, "cnp_mpi_stage_create(&p->mpi_%s, p->comm, %s, %d, shape, %s)",
                                 d->name, gen_cnp_dtype(d->dtype), d->shape.rank,
                                 modes[d->cuda_aware]));
    if (d->own_buffer)
      setup_try(b, d, arena_printf(a, "cnp_array_alloc_on(&p->hb_%s, CNP_BACKEND_HOST, 0, %s, %d, "
                                      "shape, CNP_ORDER_C, 0)",
                                   d->name, gen_cnp_dtype(d->dtype), d->shape.rank));
    b->indent -= 2;
    buf_line(b, "}");
    buf_free(&shp);
  }
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      Stmt *s = op->stmt;
      const char *file = base_name(s->loc.file->path);
      if (s->kind == ST_EXCHANGE) {
        Decl *h = s->a.decl;
        const char *dst = setup_str(u, s->value, "p->");
        buf_line(b, "p->xdst_%d = (int)(%s);", op->mpi_id, dst);
        if (s->value2) {
          const char *src = setup_str(u, s->value2, "p->");
          buf_line(b, "p->xsrc_%d = (int)(%s);", op->mpi_id, src);
          /* every send must meet its receive (else the exchange waits forever): the rank each
          ** rank sends to receives from it. Checked for all ranks, so all fail alike. */
          buf_line(b, "{");
          buf_line(b, "  const int me = p->rank;");
          buf_line(b, "  int bad_r = -1;");
          buf_line(b, "  int64_t bad_d = 0, bad_s = 0;");
          buf_line(b, "  for (int r = 0; r < p->size && bad_r < 0; r++) {");
          buf_line(b, "    p->rank = r;");
          buf_line(b, "    const int64_t d = (int64_t)(%s);", dst);
          buf_line(b, "    if (d < 0 || d >= p->size) continue;   /* reported below, on that rank */");
          buf_line(b, "    p->rank = (int)d;");
          buf_line(b, "    const int64_t sr = (int64_t)(%s);", src);
          buf_line(b, "    if (sr != r) {");
          buf_line(b, "      bad_r = r;");
          buf_line(b, "      bad_d = d;");
          buf_line(b, "      bad_s = sr;");
          buf_line(b, "    }");
          buf_line(b, "  }");
          buf_line(b, "  p->rank = me;");
          buf_line(b, "  if (bad_r >= 0) {");
          buf_line(b, "    st = CNP_EINVAL;");
          buf_line(b, "    snprintf(p->error, sizeof p->error, \"%s:%d: exchange %s: rank %%d sends to rank %%lld, "
                      "which receives from rank %%lld: `from` must give the rank whose destination is this "
                      "one\", bad_r, (long long)bad_d, (long long)bad_s);", file, s->loc.line, h->name);
          buf_line(b, "    where = p->error;");
          buf_line(b, "    cnp_clear_error();   /* the message is all of it */");
          buf_line(b, "    goto fail;");
          buf_line(b, "  }");
          buf_line(b, "}");
        } else {
          /* no `from`: receive from the one rank whose destination is this rank (the ring
          ** (rank + 1) % size receives from rank - 1; a pairwise swap from its partner) */
          /* ... and fail on every rank alike unless every rank has exactly one sender: each
          ** rank evaluates all destinations, so one rank failing alone (and the others
          ** waiting for it in their first exchange) cannot happen */
          buf_line(b, "{");
          buf_line(b, "  const int me = p->rank;");
          buf_line(b, "  int bad = 0;");
          buf_line(b, "  int *senders = (int *)calloc((size_t)p->size, sizeof(int));");
          buf_line(b, "  if (!senders) {");
          buf_line(b, "    st = CNP_ENOMEM;");
          buf_line(b, "    where = \"%s:%d: exchange %s\";", file, s->loc.line, h->name);
          buf_line(b, "    goto fail;");
          buf_line(b, "  }");
          buf_line(b, "  p->xsrc_%d = -1;", op->mpi_id);
          buf_line(b, "  for (int r = 0; r < p->size; r++) {  /* the destination rank r computes */");
          buf_line(b, "    p->rank = r;");
          buf_line(b, "    const int64_t d = (int64_t)(%s);", dst);
          buf_line(b, "    if (d < 0 || d >= p->size) {");
          buf_line(b, "      bad = 1;");
          buf_line(b, "      continue;");
          buf_line(b, "    }");
          buf_line(b, "    senders[d]++;");
          buf_line(b, "    if (d == me) p->xsrc_%d = r;", op->mpi_id);
          buf_line(b, "  }");
          buf_line(b, "  p->rank = me;");
          buf_line(b, "  for (int r = 0; r < p->size; r++) bad |= senders[r] != 1;");
          buf_line(b, "  free(senders);");
          buf_line(b, "  if (bad) {");
          buf_line(b, "    st = CNP_EINVAL;");
          buf_line(b, "    where = \"%s:%d: exchange %s: not exactly one rank sends to each rank (or a "
                      "destination is outside [0, size)); give the source with `from`\";",
                   file, s->loc.line, h->name);
          buf_line(b, "    goto fail;");
          buf_line(b, "  }");
          buf_line(b, "}");
        }
        buf_line(b, "if (p->xdst_%d < 0 || p->xdst_%d >= p->size || p->xsrc_%d < 0 || p->xsrc_%d >= p->size) {",
                 op->mpi_id, op->mpi_id, op->mpi_id, op->mpi_id);
        buf_line(b, "  st = CNP_ERANGE;");
        buf_line(b, "  where = \"%s:%d: exchange %s: a partner rank is outside [0, size)\";", file,
                 s->loc.line, h->name);
        buf_line(b, "  goto fail;");
        buf_line(b, "}");
        buf_line(b, "if ((st = cnp_mpi_stage_reserve(p->mpi_%s, &%s)) != CNP_OK) {", h->name,
                 exchanged(u, s));
        buf_line(b, "  where = \"%s:%d: exchange %s (%s): the field must have the staging shape\";",
                 file, s->loc.line, h->name, s->b.decl ? s->b.decl->name : h->name);
        buf_line(b, "  goto fail;");
        buf_line(b, "}");
      } else if (s->kind == ST_MIGRATE) {
        Buf fl = {0};
        for (int k = 0; k < s->list.n; k++) buf_printf(&fl, "%sp->f_%s", k ? ", " : "", s->list.v[k].decl->name);
        buf_line(b, "{");
        b->indent += 2;
        buf_line(b, "const cnp_array fields[%d] = {%s};", s->list.n, buf_str(&fl));
        buf_line(b, "if ((st = cnp_migrate_plan_create(&p->mig_%d, p->comm, fields, %d, "
                    "CNP_CUDA_AWARE_AUTO)) != CNP_OK) {", op->mpi_id, s->list.n);
        buf_line(b, "  where = \"%s:%d: migrate\";", file, s->loc.line);
        buf_line(b, "  goto fail;");
        buf_line(b, "}");
        b->indent -= 2;
        buf_line(b, "}");
        buf_free(&fl);
      }
    }
}

void gen_setup_body(GenUnit *u, const GenTarget *t, Buf *b) {
  Arena *a = &u->cc->arena;
  int n_streams = 0;
  b->indent = 2;
  /* dims and setup params */
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_DIM) buf_line(b, "p->cap_%s = p->n_%s = cfg->%s;", d->name, d->name, d->name);
    if (d->kind == DECL_PARAM && d->setup)
      buf_line(b, "p->P_%s = %s;", d->name,
               param_value(u, d, arena_printf(&u->cc->arena, "cfg->%s", d->name)));
  }
  /* fields; the largest element count sizes the workspace */
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind != DECL_FIELD) continue;
    Buf shp = {0};
    for (int k = 0; k < d->shape.rank; k++) {
      if (k) buf_puts(&shp, ", ");
      setup_expr(u, &shp, d->shape.ext[k], "p->");
    }
    buf_line(b, "{");
    b->indent += 2;
    buf_line(b, "const int64_t shape[%d] = {%s};", d->shape.rank, buf_str(&shp));
    Decl *m = mirror_of(u, d);
    if (m) {   /* the device copy of the user's host array cfg.<mirror>_host */
      buf_line(b, "cnp_array host;");
      buf_line(b, "if (!cfg->%s_host) {", m->name);
      buf_line(b, "  st = CNP_EINVAL;");
      buf_line(b, "  where = \"%s:%d: mirror %s: cfg.%s_host must point to the host array of field %s\";",
               base_name(m->loc.file->path), m->loc.line, m->name, m->name, d->name);
      buf_line(b, "  goto fail;");
      buf_line(b, "}");
      setup_try(b, m, arena_printf(a, "cnp_array_wrap(&host, cfg->%s_host, CNP_BACKEND_HOST, 0, %s, "
                                   "%d, shape, NULL)", m->name, gen_cnp_dtype(d->dtype), d->shape.rank));
      setup_try(b, m, arena_printf(a, "cnp_mirror_create(&p->mir_%s, &host)", m->name));
      setup_try(b, m, arena_printf(a, "cnp_mirror_device(p->mir_%s, &p->f_%s)", m->name, d->name));
    } else {
      setup_try(b, d, arena_printf(a, "cnp_array_alloc_on(&p->f_%s, B, p->device, %s, %d, shape, "
                                      "CNP_ORDER_C, 0)", d->name, gen_cnp_dtype(d->dtype),
                                      d->shape.rank));
    }
    buf_line(b, "if (shape[%d] > cap) cap = shape[%d];", d->shape.rank - 1, d->shape.rank - 1);
    buf_line(b, "n_views += cnp_g_ncomp(&p->f_%s);", d->name);
    b->indent -= 2;
    buf_line(b, "}");
    buf_free(&shp);
  }
  buf_line(b, "p->views = (cnp_array *)calloc((size_t)n_views, sizeof(cnp_array));");
  buf_line(b, "if (!p->views) {");
  buf_line(b, "  st = CNP_ENOMEM;");
  buf_line(b, "  where = \"%s_setup: views\";", u->name);
  buf_line(b, "  goto fail;");
  buf_line(b, "}");
  buf_line(b, "{");
  buf_line(b, "  const int64_t one = 1;");
  buf_line(b, "  if ((st = cnp_array_alloc_on(&p->bad, B, p->device, CNP_INT32, 1, &one, CNP_ORDER_C, "
              "0)) != CNP_OK) {");
  buf_line(b, "    where = \"%s_setup: index-check flag\";", u->name);
  buf_line(b, "    goto fail;");
  buf_line(b, "  }");
  buf_line(b, "}");
  buf_line(b, "if ((st = cnp_workspace_create(&p->ws, B, p->device, cap, 0, 16)) != CNP_OK) {");
  buf_line(b, "  where = \"%s_setup: workspace\";", u->name);
  buf_line(b, "  goto fail;");
  buf_line(b, "}");
  if (u->ws_shared) {
    buf_line(b, "if ((st = cnp_event_create(&p->ws_ev, CNP_EVENT_DEFAULT)) != CNP_OK) {");
    buf_line(b, "  where = \"%s_setup: workspace event\";", u->name);
    buf_line(b, "  goto fail;");
    buf_line(b, "}");
  }
  for (Decl *d = u->cc->decls; d; d = d->next) {
    switch (d->kind) {
    case DECL_STREAM:
      setup_try(b, d, arena_printf(a, "(B == CNP_BACKEND_CUDA && cfg->cuda_streams[%d]) ? "
                                      "cnp_stream_wrap(&p->s_%s, cfg->cuda_streams[%d]) : "
                                      "cnp_stream_create(&p->s_%s)", n_streams, d->name,
                                      n_streams, d->name));
      n_streams++;
      if (join_source(u, d->index))
        setup_try(b, d, arena_printf(a, "cnp_event_create(&p->ej_%s, CNP_EVENT_DEFAULT)", d->name));
      break;
    case DECL_EVENT:
      setup_try(b, d, arena_printf(a, "cnp_event_create(&p->e_%s, CNP_EVENT_DEFAULT)", d->name));
      break;
    case DECL_SNAPSHOT:
      setup_try(b, d, arena_printf(a, "cnp_snapshot_create(&p->snap_%s, &p->f_%s, %d)", d->name,
                                      d->target.decl->name, d->slots));
      break;
    case DECL_PLAN:
      setup_try(b, d, arena_printf(a, "cnp_segment_plan_create(&p->plan_%s, B, p->device, "
                                      "p->f_%s.shape[%d], %s)", d->name, d->target.decl->name,
                                      d->target.decl->shape.rank - 1,
                                      setup_str(u, d->value, "p->")));
      break;
    default: break;
    }
  }
  buf_line(b, "p->nthreads = CNP_G_MAXT();");
  if (u->uses_mpi) gen_setup_mpi(u, b);
  bool first = true;
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind != DECL_KERNEL || !first_call(u, d)) continue;
    const char *file = base_name(d->loc.file->path);
    if (!d->host_path) {
      buf_line(b, "if (B == CNP_BACKEND_HOST) {");
      buf_line(b, "  st = CNP_EUNSUPPORTED;");
      buf_line(b, "  where = \"%s:%d: kernel %s has no host fallback (declare it with host \\\"file.c\\\")\";",
               file, d->loc.line, d->name);
      buf_line(b, "  goto fail;");
      buf_line(b, "}");
    }
    if (!t->kernel_setup) continue;
    t->kernel_setup(u, b, d, first);
    first = false;
  }
  if (t->kernel_setup_end && !first) t->kernel_setup_end(u, b);
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      if (!op->fused_sort) continue;
      Decl *plan = op->fused_plan;
      buf_line(b, "if (B == CNP_BACKEND_HOST) {  /* kernel %d: compact + sort on the host */",
               op->kernel);
      b->indent += 2;
      const char *R = setup_str(u, plan->value, "p->");
      buf_line(b, "p->hist_k%d = (int64_t *)calloc((size_t)p->nthreads * (size_t)%s, sizeof(int64_t));",
               op->kernel, R);
      buf_line(b, "p->off_%s = (int64_t *)calloc((size_t)%s + 1, sizeof(int64_t));", plan->name, R);
      if (op->dry) {
        buf_line(b, "p->keys_k%d = (uint32_t *)malloc(sizeof(uint32_t) * (size_t)p->cap_%s);",
                 op->kernel, op->stmt->over.decl->name);
        buf_line(b, "if (p->keys_k%d)  /* touch the pages now, not in the first step */", op->kernel);
        buf_line(b, "  memset(p->keys_k%d, 0xff, sizeof(uint32_t) * (size_t)p->cap_%s);", op->kernel,
                 op->stmt->over.decl->name);
      }
      buf_line(b, "if (!p->hist_k%d || !p->off_%s%s) {", op->kernel, plan->name,
               op->dry ? arena_printf(a, " || !p->keys_k%d", op->kernel) : "");
      buf_line(b, "  st = CNP_ENOMEM;");
      buf_line(b, "  where = \"%s_setup: counting sort of kernel %d\";", u->name, op->kernel);
      buf_line(b, "  goto fail;");
      buf_line(b, "}");
      for (int k = 0; k < op->mask_of->list.n; k++) {
        Decl *f = op->mask_of->list.v[k].decl;
        setup_try(b, f, arena_printf(a, "cnp_array_alloc_on(&p->g%d_%s, B, p->device, %s, %d, "
                                     "p->f_%s.shape, CNP_ORDER_C, 0)", op->kernel, f->name,
                                     gen_cnp_dtype(f->dtype), f->shape.rank, f->name));
        buf_line(b, "memset(p->g%d_%s.data, 0, cnp_array_nbytes(&p->g%d_%s));  /* touch the pages now, "
                    "not in the first step */", op->kernel, f->name, op->kernel, f->name);
      }
      b->indent -= 2;
      buf_line(b, "}");
    }
  b->indent = 0;
}

void gen_teardown_body(GenUnit *u, Buf *b) {
  b->indent = 2;
  buf_line(b, "if (p->backend == CNP_BACKEND_CUDA) cnp_device_synchronize();");
  for (Decl *d = u->cc->decls; d; d = d->next) {
    switch (d->kind) {
    case DECL_SNAPSHOT: buf_line(b, "if (p->snap_%s) cnp_snapshot_destroy(p->snap_%s);", d->name, d->name); break;
    case DECL_PLAN: buf_line(b, "cnp_segment_plan_destroy(p->plan_%s);", d->name); break;
    case DECL_EVENT: buf_line(b, "if (p->e_%s) cnp_event_destroy(p->e_%s);", d->name, d->name); break;
    case DECL_STREAM:
      if (join_source(u, d->index)) buf_line(b, "if (p->ej_%s) cnp_event_destroy(p->ej_%s);", d->name, d->name);
      buf_line(b, "if (p->s_%s) cnp_stream_destroy(p->s_%s);", d->name, d->name);
      break;
    case DECL_FIELD:
      if (!mirror_of(u, d)) buf_line(b, "if (p->f_%s.data) cnp_array_free(&p->f_%s);", d->name, d->name);
      break;
    case DECL_MIRROR: buf_line(b, "if (p->mir_%s) cnp_mirror_destroy(p->mir_%s);", d->name, d->name); break;
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
        buf_line(b, "if (p->g%d_%s.data) cnp_array_free(&p->g%d_%s);", op->kernel,
                 op->mask_of->list.v[k].decl->name, op->kernel, op->mask_of->list.v[k].decl->name);
    }
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++)
      if (u->steps[i].ops[o].stmt->kind == ST_MIGRATE)
        buf_line(b, "if (p->mig_%d) cnp_migrate_plan_destroy(p->mig_%d);", u->steps[i].ops[o].mpi_id,
                 u->steps[i].ops[o].mpi_id);
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_MPI) {
      buf_line(b, "if (p->mpi_%s) cnp_mpi_stage_destroy(p->mpi_%s);", d->name, d->name);
      if (d->own_buffer) buf_line(b, "if (p->hb_%s.data) cnp_array_free(&p->hb_%s);", d->name, d->name);
    }
  if (u->uses_mpi) buf_line(b, "if (p->comm) cnp_comm_destroy(p->comm);");
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_KERNEL) {
      buf_line(b, "if (p->cat) cnp_catalog_destroy(p->cat);");
      break;
    }
  buf_line(b, "if (p->bad.data) cnp_array_free(&p->bad);");
  buf_line(b, "cnp_workspace_destroy(p->ws);");
  if (u->ws_shared) buf_line(b, "if (p->ws_ev) cnp_event_destroy(p->ws_ev);");
  b->indent = 0;
}
