/*
** gen_unit.c -- a backend unit (NAME.c, NAME.cu) for one target (GenTarget): kernel
** launchers, the pipeline object, lookups, end-of-call events, the f16 / complex / integer
** helpers, and gen_unit(), which fills templates/unit.tmpl with the target's part
** (unit_host.tmpl, unit_cuda.tmpl); the fixed text of these parts is unit_parts.tmpl. The
** step body is gen_step.c, setup and teardown gen_setup.c. Algorithms (compact, sort,
** offsets, segment plans) are libcnp calls on the pipeline's workspace and plans, which work
** on both backends.
*/
#include "gen.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TM "unit_parts"   /* the snippet template: templates/unit_parts.tmpl */

/* Kernel K's launcher: fills the argument struct from the pipeline object and runs the
** kernel (the target's device branch, else the host loop). */
static void kernel_launch(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, KUse *use) {
  Decl *over = op->stmt->over.decl;
  Buf fill = {.indent = 2}, dev = {.indent = 2};
  kernel_fill(&fill, use, "A.");
  if (op->stmt->kind == ST_APPEND) buf_line(&fill, "A.first = p->apf_k%d;", op->kernel);
  if (gen_grid_map(op->stmt)) grid_fill(u, &fill, op, "A.");
  if (op->scan_fused)
    buf_line(&fill, "A.sp = (%s *)p->sp_%d.data;", gen_ctype(op->scan_fused->stmt->a.decl->dtype),
             op->scan_fused->scan_id);
  if (t->launch && gen_grid_map(op->stmt) && !red_group(op)) grid_launch_cuda(u, &dev, op);
  else if (t->launch) t->launch(u, &dev, op);
  const char *n = gen_grid_map(op->stmt) ? grid_points(u, op->stmt)
                  : op->stmt->kind == ST_APPEND ? arena_printf(&u->cc->arena, "p->apn_k%d", op->kernel)
                  : over->kind == DECL_DIM     ? arena_printf(&u->cc->arena, "p->n_%s", over->name)
                  : over->kind == DECL_PARAM ? arena_printf(&u->cc->arena, "(int64_t)p->P_%s", over->name)
                                             : gen_int(u, over->ival);
  b->indent = 0;
  EMIT_SNIPPET(b, TM, "launcher", {"N", u->name}, {"K", gen_int(u, op->kernel)}, {"n", n},
               {"fill", buf_take(u, &fill)}, {"device", buf_take(u, &dev)},
               {"fused", op->fused_sort ? "1" : ""});
}

static void gen_kernels(GenUnit *u, const GenTarget *t, Buf *b) {
  grid_helpers(u, t, b);
  for (int s = 0; s < u->n_steps; s++)
    for (int o = 0; o < u->steps[s].n_ops; o++) {
      GenOp *op = &u->steps[s].ops[o];
      if (op->kind != GOP_MAP) continue;
      KUse use;
      group_use(u, op, &use);
      buf_puts(b, "\n");
      kernel_args(u, b, op, &use, t);
      if (gen_grid_map(op->stmt) && !use.n_reds) {   /* gen_grid.c (a reducing one: below) */
        kernel_grid_host(u, t, b, op, &use);
        if (t->kernel) kernel_grid_cuda(u, b, op, &use);
        kernel_launch(u, t, b, op, &use);
        continue;
      }
      if (op->fused_sort) kernel_host_fused(u, t, b, op, &use);
      else if (use.n_reds || use.n_privs) red_kernel_host(u, t, b, op, &use);
      else kernel_host(u, t, b, op, &use);
      if (t->kernel) t->kernel(u, b, op, &use);
      kernel_launch(u, t, b, op, &use);
    }
}

/* C type and value of a hand-written kernel's argument (a field's element pointer, a
** param or const by value, a dim's live extent). */
const char *karg_type(Expr *a) {
  Decl *d = a->ref.decl;
  static char buf[64];
  if (d->kind == DECL_FIELD) {
    snprintf(buf, sizeof buf, "%s *", gen_ctype(d->dtype));
    return buf;
  }
  if (d->kind == DECL_PARAM) return gen_vtype(d->dtype);
  if (d->kind == DECL_CONST) return dtype_is_float(d->dtype) ? "double" : "int64_t";
  return "int64_t";
}

const char *karg_value(GenUnit *u, Expr *a) {
  Decl *d = a->ref.decl;
  Arena *ar = &u->cc->arena;
  switch (d->kind) {
  case DECL_FIELD: return arena_printf(ar, "(%s *)p->f_%s.data", gen_ctype(d->dtype), d->name);
  case DECL_PARAM: return arena_printf(ar, "p->P_%s", d->name);
  case DECL_DIM: return arena_printf(ar, "p->n_%s", d->name);
  case DECL_CONST: {
    Buf t = {0};
    if (dtype_is_float(d->dtype))   /* an f16 constant: its f16 value */
      fmt_float(&t, d->dtype == DT_F16 ? half_round(d->fval) : d->fval, DT_F64);
    else fmt_int(&t, d->ival, DT_I64);
    char *r = arena_strndup(ar, buf_str(&t), t.n);
    buf_free(&t);
    return r;
  }
  default: cnp_ice("kernel argument '%s'", d->name);
  }
}

/* The first call of a kernel (its arguments define the host fallback's prototype). */
Stmt *first_call(GenUnit *u, Decl *k) {
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++)
      if (u->steps[i].ops[o].stmt->kind == ST_CALL && u->steps[i].ops[o].stmt->a.decl == k)
        return u->steps[i].ops[o].stmt;
  return NULL;
}

/* Parameter list of a kernel call: "double *x, double f, int64_t n". */
static const char *kparams(GenUnit *u, Stmt *call) {
  Buf t = {0};
  for (int i = 0; i < call->nargs; i++)
    buf_printf(&t, "%s%s a%d", i ? ", " : "", karg_type(call->args[i]), i);
  if (call->value2) buf_printf(&t, "%sint64_t n", call->nargs ? ", " : "");
  if (!t.n) buf_puts(&t, "void");
  char *r = arena_strndup(&u->cc->arena, buf_str(&t), t.n);
  buf_free(&t);
  return r;
}

/* Prototypes of host fallbacks and (CUDA unit) the embedded kernel sources. */
static void gen_kernel_decls(GenUnit *u, const GenTarget *t, Buf *b) {
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind != DECL_KERNEL) continue;
    Stmt *call = first_call(u, d);
    if (call && d->host_path) {
      buf_printf(b, "\n/* Host fallback of kernel %s, defined by the user in %s. */\n", d->name,
                 d->host_path);
      buf_printf(b, "%svoid %s(%s);\n", t->extern_c, d->name, kparams(u, call));
    }
    if (t->kernel_source && call) t->kernel_source(u, b, d);
  }
}


/* The array an exchange sends and receives: its field, or the staging buffer itself
** (`exchange H with ...`, a host array p->hb_H). */
const char *exchanged(GenUnit *u, const Stmt *s) {
  if (s->b.decl) return arena_printf(&u->cc->arena, "p->f_%s", s->b.decl->name);
  return arena_printf(&u->cc->arena, "p->hb_%s", s->a.decl->name);
}

/* A param's value from the C API (`v`, of gen_apitype): f16 rounded to the nearest f16,
** complex structs {re, im} made complex values. */
const char *param_value(GenUnit *u, Decl *d, const char *v) {
  Arena *a = &u->cc->arena;
  if (d->dtype == DT_F16) return arena_printf(a, "cnp_g_hround(%s)", v);
  if (dtype_is_complex(d->dtype))
    return arena_printf(a, "cnp_g_mk%s(%s.re, %s.im)", d->dtype == DT_C64 ? "64" : "128", v, v);
  return v;
}

/* Cross-call order (sema's stream_join): stream t waits at its first step of a call for
** the end-of-call event of stream u recorded by the previous call. */
bool join_needs(GenUnit *u, int t, int s) {
  int n = u->cc->n_decl[DECL_STREAM];
  return u->cc->stream_join && t < n && s < n && u->cc->stream_join[t * n + s];
}

bool join_source(GenUnit *u, int s) {
  for (int t = 0; t < u->cc->n_decl[DECL_STREAM]; t++)
    if (join_needs(u, t, s)) return true;
  return false;
}

/* The end-of-call events the next call's first steps wait for (sema's stream_join): at the
** end of step(), or (`failed`) in NAME_failed(): a step that fails has enqueued part of its
** work, which may still run, so the next call's waits must cover it too. */
void gen_joins(GenUnit *u, Buf *b, bool failed) {
  Buf ev = {0};
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_STREAM && join_source(u, d->index)) {
      if (failed) EMIT_SNIPPET(&ev, TM, "join_fail", {"s", d->name});
      else EMIT_SNIPPET(&ev, TM, "join_end", {"N", u->name}, {"s", d->name});
    }
  if (ev.n) EMIT_SNIPPET(b, TM, failed ? "joins_fail" : "joins_end", {"events", buf_take(u, &ev)});
}

/* ======================================================================== the object, setup, teardown */

static void gen_struct(GenUnit *u, Buf *b) {
  b->indent = 2;
  for (Decl *d = u->cc->decls; d; d = d->next) {
    switch (d->kind) {
    case DECL_DIM:
      buf_line(b, "int64_t cap_%s, n_%s;  /* dim %s: capacity and live extent */", d->name,
               d->name, d->name);
      break;
    case DECL_PARAM:
      buf_line(b, "%s P_%s;  /* param %s%s */", gen_vtype(d->dtype), d->name, d->name,
               d->setup ? " (setup)" : " (per step)");
      break;
    case DECL_FIELD:
      buf_line(b, "cnp_array f_%s;  /* field %s : %s (%s:%d) */", d->name, d->name,
               sema_type_text(u->cc, d), base_name(d->loc.file->path), d->loc.line);
      break;
    case DECL_STREAM:
      buf_line(b, "cnp_stream *s_%s;", d->name);
      if (join_source(u, d->index))
        buf_line(b, "cnp_event *ej_%s;  /* end of the last step() call's work on %s */", d->name, d->name);
      break;
    case DECL_EVENT: buf_line(b, "cnp_event *e_%s;", d->name); break;
    case DECL_SNAPSHOT:
      buf_line(b, "cnp_snapshot *snap_%s;", d->name);
      buf_line(b, "cnp_snapshot_handle h_%s;  /* latest copy */", d->name);
      buf_line(b, "int has_%s;", d->name);
      {
        Decl *dim;
        if (gen_decl_is_dim_extent(d->target.decl, &dim))
          buf_line(b, "int64_t live_%s;  /* live extent of %s at the latest copy */", d->name, dim->name);
      }
      break;
    case DECL_PLAN: buf_line(b, "cnp_segment_plan *plan_%s;", d->name); break;
    case DECL_MIRROR:
      buf_line(b, "cnp_mirror *mir_%s;  /* field %s mirrors cfg.%s_host */", d->name,
               d->target.decl->name, d->name);
      break;
    default: break;
    }
  }
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      if (!op->fused_sort) continue;
      Buf bufs = {.indent = b->indent};
      for (int k = 0; k < op->mask_of->list.n; k++)
        buf_line(&bufs, "cnp_array g%d_%s;  /* double buffer of %s */", op->kernel,
                 op->mask_of->list.v[k].decl->name, op->mask_of->list.v[k].decl->name);
      EMIT_SNIPPET(b, TM, "struct_fast", {"K", gen_int(u, op->kernel)}, {"dry", op->dry ? "1" : ""},
                   {"buffers", buf_take(u, &bufs)}, {"plan", op->fused_plan->name});
    }
  if (u->uses_mpi) emit_snippet(b, TM, "struct_mpi", NULL, 0);
  grid_split_struct(u, b);
  red_allreduce_struct(u, b);
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_MPI) {
      buf_line(b, "cnp_mpi_stage *mpi_%s;  /* mpi staging %s */", d->name, d->name);
      if (d->own_buffer)
        buf_line(b, "cnp_array hb_%s;  /* its buffer, exchanged by `exchange %s with ...` (host) */",
                 d->name, d->name);
    }
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      if (op->stmt->kind == ST_EXCHANGE)
        buf_line(b, "int xdst_%d, xsrc_%d;  /* ranks of the exchange at line %d */", op->mpi_id,
                 op->mpi_id, op->stmt->loc.line);
      if (op->stmt->kind == ST_MIGRATE)
        buf_line(b, "cnp_migrate_plan *mig_%d;  /* the migration at line %d */", op->mpi_id,
                 op->stmt->loc.line);
    }
  bool any_kernel = false;
  for (Decl *d = u->cc->decls; d; d = d->next) any_kernel = any_kernel || d->kind == DECL_KERNEL;
  fft_struct(u, b);
  red_struct(u, b);
  pgrid_struct(u, b);
  EMIT_SNIPPET(b, TM, "struct_tail", {"kernels", any_kernel ? "1" : ""},
               {"join", u->cc->stream_join ? "1" : ""}, {"ws_ev", u->ws_shared ? "1" : ""});
  b->indent = 0;
}

/* Setup checks on the configuration, with messages naming the declaration. */

static void gen_lookups(GenUnit *u, Buf *field, Buf *ext, Buf *set_ext, Buf *snap, Buf *sync) {
  field->indent = ext->indent = set_ext->indent = snap->indent = sync->indent = 2;
  for (Decl *d = u->cc->decls; d; d = d->next) {
    switch (d->kind) {
    case DECL_FIELD:
      buf_line(field, "if (strcmp(name, \"%s\") == 0) return cnp_g_live(&p->f_%s, %s);", d->name,
               d->name, live_extent(u, d));
      break;
    case DECL_MPI:
      if (d->own_buffer)
        buf_line(field, "if (strcmp(name, \"%s\") == 0) return p->hb_%s;", d->name, d->name);
      break;
    case DECL_DIM:
      buf_line(ext, "if (strcmp(dim, \"%s\") == 0) return p->n_%s;", d->name, d->name);
      EMIT_SNIPPET(set_ext, TM, "set_extent", {"d", d->name});
      break;
    case DECL_SNAPSHOT: {
      Decl *dim;
      EMIT_SNIPPET(snap, TM, "snapshot", {"s", d->name},
                   {"live", gen_decl_is_dim_extent(d->target.decl, &dim) ? "1" : ""});
      break;
    }
    case DECL_STREAM:
      EMIT_SNIPPET(sync, TM, "sync", {"N", u->name}, {"s", d->name});
      break;
    default: break;
    }
  }
}

/* ======================================================================== f16 and complex helpers */

typedef struct TypeUse {
  bool f16, complex, complex_param;
  bool ints;              /* integer arithmetic, float -> int casts: templates/int.tmpl */
  bool philox;            /* random draws: templates/philox.tmpl */
} TypeUse;

static void type_note(TypeUse *t, DType d) {
  t->f16 = t->f16 || d == DT_F16;
  t->complex = t->complex || dtype_is_complex(d);
}

static void type_expr(TypeUse *t, Expr *e) {
  if (!e) return;
  type_note(t, e->type);
  if (e->kind == EX_CAST) type_note(t, e->cast_to);
  if ((e->kind == EX_UNARY || e->kind == EX_BINARY) && signed_int(e->type)) t->ints = true;
  if (e->kind == EX_BINARY && e->type == DT_U64 &&
      (e->op == OP_DIV || e->op == OP_MOD || e->op == OP_SHL || e->op == OP_SHR))
    t->ints = true;
  if (e->kind == EX_CAST && dtype_is_int(e->cast_to) && dtype_is_float(e->args[0]->type)) t->ints = true;
  if (e->kind == EX_CALL && builtin_is_draw(e->builtin)) t->philox = true;
  if (e->kind == EX_CALL && (e->builtin == BI_ABS || e->builtin == BI_MIN || e->builtin == BI_MAX) &&
      signed_int(e->type))
    t->ints = true;
  if (e->kind == EX_CALL && (e->builtin == BI_MIN || e->builtin == BI_MAX) && dtype_is_float(e->type))
    t->ints = true;   /* cnp_g_fmin/fmax are in int.tmpl too */
  if (gen_hidden_const(e) >= 0 || gen_hidden_u64(e) >= 0 || gen_hidden_bool(e)) t->ints = true;
  for (int i = 0; i < e->nargs; i++) type_expr(t, e->args[i]);
}

static void type_stmts(TypeUse *t, Stmt *s) {
  for (; s; s = s->next) {
    if (s->kind == ST_LET) type_note(t, s->let->type);
    if (s->kind == ST_ADD && s->target &&
        signed_int(s->target->kind == EX_INDEX ? s->target->ref.decl->dtype : s->target->ref.local->type))
      t->ints = true;
    type_expr(t, s->target);
    type_expr(t, s->value);
    type_expr(t, s->value2);
    type_stmts(t, s->body);
    type_stmts(t, s->else_body);
  }
}

/* Which of the prelude's f16 / complex helpers the pipeline needs (none: no change). */
/* An extent computed with a division (cnp_g_div_i64, templates/int.tmpl). */
static bool extent_divides(const Expr *e) {
  if (!e) return false;
  if (e->kind == EX_BINARY && e->op == OP_DIV) return true;
  for (int i = 0; i < e->nargs; i++)
    if (extent_divides(e->args[i])) return true;
  return false;
}

static TypeUse type_use(GenUnit *u) {
  TypeUse t = {false, false, false, false, false};
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_FIELD || d->kind == DECL_PARAM || d->kind == DECL_CONST || d->kind == DECL_MPI)
      type_note(&t, d->dtype);
    if (d->kind == DECL_PARAM && dtype_is_complex(d->dtype)) t.complex_param = true;
    if (d->kind == DECL_STEP) type_stmts(&t, d->body);
    for (int k = 0; d->kind == DECL_FIELD && k < d->shape.rank; k++)
      t.ints = t.ints || extent_divides(d->shape.ext[k]);   /* rfft(G)'s n / 2 + 1 */
  }
  return t;
}

/* The header's complex types of params (C and C++ alike; layout of C99 _Complex). */
const char *api_types(GenUnit *u) {
  if (!type_use(u).complex_param) return "";
  return "/* Complex params: (re, im) pairs, laid out as C99 float/double _Complex and\n"
         "** std::complex<float/double>. */\n"
         "#ifndef CNP_COMPLEX_PARAM_TYPES\n"
         "#define CNP_COMPLEX_PARAM_TYPES\n"
         "typedef struct cnp_complex64 {\n"
         "  float re, im;\n"
         "} cnp_complex64;\n"
         "typedef struct cnp_complex128 {\n"
         "  double re, im;\n"
         "} cnp_complex128;\n"
         "#endif\n\n";
}

/* The unit's f16, complex, integer and random-draw helpers (templates/f16.tmpl,
** complex.c.tmpl, complex.cu.tmpl, int.tmpl, philox.tmpl). */
static void type_helpers(GenUnit *u, const GenTarget *tg, Buf *b) {
  TypeUse t = type_use(u);
  if (t.f16) emit_template(b, "f16", NULL, 0);
  if (t.complex) emit_template(b, tg->complex_tmpl, NULL, 0);
  if (t.ints) emit_template(b, "int", NULL, 0);
  if (t.philox) emit_template(b, "philox", NULL, 0);
  bool computed = false;   /* templates/extent.tmpl: setup checks computed extents */
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_FIELD)
      for (int k = 0; k < d->shape.rank; k++) computed = computed || extent_computed(d->shape.ext[k]);
    if (d->kind == DECL_PLAN) computed = computed || extent_computed(d->value);
  }
  if (computed) emit_template(b, "extent", NULL, 0);
  red_helpers(u, tg, b);
  if (tg->graph_helpers) tg->graph_helpers(u, b);
  fft_helpers(u, tg, b);
  bool gather = false;   /* templates/pgrid.tmpl: component views of grid fields */
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) gather = gather || u->steps[i].ops[o].stmt->kind == ST_GATHER;
  if (gather) emit_snippet(b, "pgrid", "helpers", NULL, 0);
  if (pgrid_windows(u)) emit_snippet(b, "pgrid", "window_helpers", NULL, 0);
}

void gen_unit(GenUnit *u, const GenTarget *t, Buf *out) {
  Buf fields = {0}, kernels = {0}, checks = {0}, setup = {0}, step = {0}, teardown = {0};
  Buf flook = {0}, elook = {0}, eset = {0}, slook = {0}, sync = {0}, bsel = {0}, types = {0},
      sfuncs = {0};
  type_helpers(u, t, &types);
  gen_struct(u, &fields);
  gen_kernel_decls(u, t, &kernels);
  gen_kernels(u, t, &kernels);
  gen_setup_checks(u, &checks);
  gen_setup_body(u, t, &setup);
  gen_setup_funcs(u, &sfuncs);
  gen_step_body(u, t, &step);
  gen_teardown_body(u, &teardown);
  gen_lookups(u, &flook, &elook, &eset, &slook, &sync);
  red_lookup(u, &flook);
  if (t->device && u->graph_append) {   /* an append in a CUDA graph overflowed: reported here */
    buf_line(&sync, "{");
    buf_line(&sync, "  int st = %s_ovf_check(p);", u->name);
    buf_line(&sync, "  if (st != CNP_OK) return st;");
    buf_line(&sync, "}");
  }
  /* a pipeline without streams or dims (only MPI staging, say) leaves these unused */
  if (!sync.n) buf_line(&sync, "(void)p;");
  if (!eset.n) buf_line(&eset, "(void)n;");
  Buf gfields = {0}, gfuncs = {0}, gsetup = {0}, gteardown = {0};
  if (t->graphs) t->graphs(u, &gfields, &gfuncs, &gsetup, &gteardown);
  Buf fjoin = {0};
  gen_joins(u, &fjoin, true);
  bsel.indent = 2;
  /* the backend: cfg.backend unless CNP_BACKEND forces one; the runtime's resolve decides
  ** (strictness, fallback, the env variable) without selecting anything process-wide, and
  ** the fields, streams and events of the pipeline are created on the backend it reports */
  t->backend_select(u, &bsel);
  TmplVar v[] = {
      {"banner", banner(u)},
      {"file", u->stem},
      {"name", u->name},
      {"type_helpers", buf_str(&types)},
      {"struct_fields", buf_str(&fields)},
      {"kernels", buf_str(&kernels)},
      {"setup_checks", buf_str(&checks)},
      {"backend_select", buf_str(&bsel)},
      {"fail_join", buf_str(&fjoin)},
      {"setup_body", buf_str(&setup)},
      {"setup_funcs", buf_str(&sfuncs)},
      {"step_params_h", step_params(u, true, false)},
      {"step_params", step_params(u, false, false)},
      {"step_call", step_params(u, false, true)},
      {"step_body", buf_str(&step)},
      {"teardown_body", buf_str(&teardown)},
      {"sync_body", buf_str(&sync)},
      {"field_lookup", buf_str(&flook)},
      {"extent_lookup", buf_str(&elook)},
      {"set_extent_body", buf_str(&eset)},
      {"snapshot_lookup", buf_str(&slook)},
      {"debug_bounds", u->opt->debug_bounds ? "#ifndef CNP_DEBUG_BOUNDS  /* cnpc --debug-bounds */\n"
                                              "#define CNP_DEBUG_BOUNDS 1\n#endif\n" : ""},
      {"hd", t->both},
      {"graph_fields", buf_str(&gfields)},
      {"graphs", buf_str(&gfuncs)},
      {"graph_setup", buf_str(&gsetup)},
      {"graph_teardown", buf_str(&gteardown)},
  };
  emit_unit(out, "unit", t->unit_part, v, (int)(sizeof v / sizeof v[0]));
  Buf *gall[] = {&gfields, &gfuncs, &gsetup, &gteardown};
  for (size_t i = 0; i < sizeof gall / sizeof gall[0]; i++) buf_free(gall[i]);
  Buf *all[] = {&fields, &kernels, &checks, &setup, &step, &teardown,
                &flook,  &elook,   &eset,   &slook, &sync, &bsel, &types, &fjoin, &sfuncs};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) buf_free(all[i]);
}
