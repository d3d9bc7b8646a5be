/*
** gen_host.c -- the host target (gen_target_host) and the host kernels: each fused group of
** maps as one (OpenMP) loop, the compact + sort fast path (one counting sort in the kernel,
** its dry first pass and the segment sum done while it scatters) and the inline segment sum
** of a plan it built. Both units carry the host kernels (the CUDA unit runs them on the host
** backend). The fixed text is in templates/host.tmpl.
*/
#include "gen.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TM "host"   /* the snippet template: templates/host.tmpl */

/* "2 maps" */
static const char *n_maps(GenUnit *u, GenOp *op) {
  return arena_printf(&u->cc->arena, "%d map%s", op->n_maps, op->n_maps > 1 ? "s" : "");
}

/* A fused scan's field x (host and CUDA kernels): its number of components from the
** kernel's arguments, and the type its sums wrap in. */
void scan_fused_types(GenUnit *u, Decl *x, const char **nc, const char **ut) {
  *nc = "1";
  *ut = x->dtype == DT_I32 ? "uint32_t" : x->dtype == DT_I64 ? "uint64_t" : gen_ctype(x->dtype);
  for (int d = 0; d + 1 < x->shape.rank; d++)
    *nc = d ? arena_printf(&u->cc->arena, "%s * A.f_%s_e%d", *nc, x->name, d)
            : arena_printf(&u->cc->arena, "A.f_%s_e%d", x->name, d);
}

static void draws_expr(GenOp *op, DrawBufs *d, const Expr *e) {
  if (!e) return;
  if (e->kind == EX_CALL && (e->builtin == BI_UNIFORM || e->builtin == BI_UNIFORM_F32) &&
      kernel_invariant(op, e->args[0]) && d->n < DRAWBUF_MAX) {   /* its seed the same for every row */
    d->e[d->n++] = e;
    return;
  }
  for (int i = 0; i < e->nargs; i++) draws_expr(op, d, e->args[i]);
}

static void draws_stmts(GenOp *op, DrawBufs *d, const Stmt *s) {
  for (; s; s = s->next) {
    draws_expr(op, d, s->target);
    draws_expr(op, d, s->value);
    draws_stmts(op, d, s->body);
    draws_stmts(op, d, s->else_body);
  }
}

/* The chunk's buffers and their fills: `double cnp_d0[512];` and the fill of rows cnp_i0
** .. cnp_e - 1 (templates/philox.tmpl). */
static const char *draw_fills(GenUnit *u, KCtx *k, const DrawBufs *d) {
  Buf b = {.indent = 4};
  for (int i = 0; i < d->n; i++) {
    const Expr *e = d->e[i];
    bool f32 = e->builtin == BI_UNIFORM_F32;
    Buf sd = {0};
    k->lit = DT_VOID;                        /* an integer seed literal stays an integer */
    gen_ex_as(k, &sd, e->args[0], DT_U64);
    buf_line(&b, "%s cnp_d%d[%d];", f32 ? "float" : "double", i, DRAWBUF_ROWS);
    buf_line(&b, "cnp_g_fill_uniform_%s(cnp_d%d, %s, cnp_step, cnp_i0, cnp_e - cnp_i0, %" PRId64 "u);",
             f32 ? "f32" : "f64", i, buf_str(&sd), e->ival);
    buf_free(&sd);
  }
  return buf_take(u, &b);
}

void kernel_host(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, KUse *use) {
  KCtx k = {u, t, &gen_target_host, NULL, DT_VOID, NULL, false, NULL, NULL, 0, NULL, false, NULL};
  Buf locals = {.indent = 2}, body = {.indent = 4};
  kernel_locals(&locals, use);
  DrawBufs draws = {0};   /* plain maps over rows: uniform draws a chunk at a time */
  bool plain = !op->scan_fused;
  for (int m = 0; m < op->n_maps; m++) plain = plain && op->maps[m]->kind == ST_MAP && !op->maps[m]->gndim;
  for (int m = 0; plain && m < op->n_maps; m++) draws_stmts(op, &draws, op->maps[m]->body);
  if (draws.n) {
    Buf body6 = {.indent = 6};
    const char *fills = draw_fills(u, &k, &draws);
    k.dbuf = &draws;
    group_body(&k, &body6, op);
    b->indent = 0;
    EMIT_SNIPPET(b, TM, "kernel_draws", {"N", u->name}, {"K", gen_int(u, op->kernel)},
                 {"n_maps", arena_printf(&u->cc->arena, "%s fused", n_maps(u, op))},
                 {"locals", buf_take(u, &locals)}, {"fills", fills}, {"body", buf_take(u, &body6)},
                 {"CH", gen_int(u, DRAWBUF_ROWS)}, {"CH1", gen_int(u, DRAWBUF_ROWS - 1)});
    return;
  }
  group_body(&k, &body, op);
  b->indent = 0;
  if (op->scan_fused) {   /* chunks of SCAN_CHUNK rows, each followed by its scan totals */
    Decl *x = op->scan_fused->stmt->a.decl;
    Buf body6 = {.indent = 6};
    const char *nc, *ut;
    scan_fused_types(u, x, &nc, &ut);
    group_body(&k, &body6, op);
    buf_free(&body);
    EMIT_SNIPPET(b, TM, "kernel_scan", {"N", u->name}, {"K", gen_int(u, op->kernel)},
                 {"n_maps", arena_printf(&u->cc->arena, "%s fused", n_maps(u, op))},
                 {"locals", buf_take(u, &locals)}, {"body", buf_take(u, &body6)}, {"x", x->name},
                 {"line", gen_int(u, op->scan_fused->stmt->loc.line)}, {"CH", gen_int(u, SCAN_CHUNK)},
                 {"CH1", gen_int(u, SCAN_CHUNK - 1)}, {"ax", gen_int(u, x->shape.rank - 1)}, {"nc", nc},
                 {"T", gen_ctype(x->dtype)}, {"UT", ut});
    return;
  }
  EMIT_SNIPPET(b, TM, "kernel", {"N", u->name}, {"K", gen_int(u, op->kernel)},
               {"n_maps", arena_printf(&u->cc->arena, "%s fused", n_maps(u, op))},
               {"locals", buf_take(u, &locals)}, {"body", buf_take(u, &body)});
}

/* Number of components of a field: a literal when its leading extents are constants (so
** the C compiler unrolls component loops), else computed from the array. */
static const char *ncomp_str(GenUnit *u, Decl *f) {
  int64_t n = 1;
  for (int d = 0; d + 1 < f->shape.rank; d++) {
    Expr *e = f->shape.ext[d];
    if (e->kind == EX_INT) n *= e->ival;
    else if (e->kind == EX_NAME && e->ref.decl && e->ref.decl->kind == DECL_CONST) n *= e->ref.decl->ival;
    else return arena_printf(&u->cc->arena, "cnp_g_ncomp(&p->f_%s)", f->name);
  }
  return arena_printf(&u->cc->arena, "%" PRId64, n);
}

static bool in_reflist(const RefList *l, const Decl *d) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i].decl == d) return true;
  return false;
}

/* Is element `comp` of f held in a local per row (the dry pass)? */
static bool row_held(const RowVals *rv, Decl *f, int64_t comp) {
  for (int i = 0; i < rv->n; i++)
    if (rv->v[i].f == f && (comp < 0 || rv->v[i].comp == comp)) return true;
  return false;
}

/* The element `comp` of row cnp_i of f, as a C lvalue. */
static const char *row_elem(GenUnit *u, Decl *f, int64_t comp) {
  if (comp == 0) return arena_printf(&u->cc->arena, "f_%s[cnp_i]", f->name);
  return arena_printf(&u->cc->arena, "f_%s[%" PRId64 " * A.f_%s_e%d + cnp_i]", f->name, comp,
                      f->name, f->shape.rank - 1);
}

/* Dry pass: the row's elements of the fields the maps write, loaded into locals. */
static void row_loads(GenUnit *u, Buf *b, const RowVals *rv) {
  for (int i = 0; i < rv->n; i++) {
    Decl *f = rv->v[i].f;
    buf_line(b, "%s %s = %s;", gen_ctype(f->dtype), row_name(u, f, rv->v[i].comp),
             row_elem(u, f, rv->v[i].comp));
  }
}

/* Dry pass: the locals a pass does not use (each pass uses only some of them). `(void)&x`,
** not `(void)x`: nvcc's front end still calls a variable assigned and cast to void "set but
** never used" (#550). */
static void row_unused(GenUnit *u, Buf *b, const RowVals *rv) {
  Buf t = {0};
  for (int i = 0; i < rv->n; i++)
    buf_printf(&t, "%s(void)&%s;", i ? " " : "", row_name(u, rv->v[i].f, rv->v[i].comp));
  buf_line(b, "%s", buf_str(&t));
  buf_free(&t);
}

/* The fast path's per-field pointers: components, the source rows, the double buffers (and
** the sum's output). */
static const char *fused_bufs(GenUnit *u, GenOp *op, const RowVals *rv) {
  Stmt *c = op->mask_of, *sum = op->fused_sum;
  Decl *key = op->fused_sort->a.decl;
  Buf b = {.indent = 2};
  for (int i = 0; i < c->list.n; i++) {
    Decl *f = c->list.v[i].decl;
    int64_t nc = 1;
    bool held = op->dry && row_held(rv, f, -1), need_src = !(op->dry && f == key);
    if (held) {
      (void)fuse_const_ncomp(f, &nc);
      need_src = false;
      for (int64_t q = 0; q < nc && f != key; q++) need_src = need_src || !row_held(rv, f, q);
    }
    if (f->shape.rank > 1 && !held) buf_line(&b, "const int64_t nc_%s = %s;", f->name, ncomp_str(u, f));
    if (need_src)
      buf_line(&b, "const %s *const src_%s = (const %s *)p->f_%s.data;", gen_ctype(f->dtype),
               f->name, gen_ctype(f->dtype), f->name);
    buf_line(&b, "%s *const dst_%s = (%s *)p->g%d_%s.data;", gen_ctype(f->dtype), f->name,
             gen_ctype(f->dtype), op->kernel, f->name);
  }
  if (sum) {
    Decl *out = sum->b.decl;
    buf_line(&b, "%s *const sum_%s = (%s *)p->f_%s.data;  /* %s:%d: sum %s -> %s, done here */",
             gen_ctype(out->dtype), out->name, gen_ctype(out->dtype), out->name,
             base_name(sum->loc.file->path), sum->loc.line, op->fused_plan->name, out->name);
  }
  return buf_take(u, &b);
}

/* Dry pass 1: the row's locals, the maps, then the mask and the fields no compaction moves
** stored. */
static const char *fused_pass1(GenUnit *u, GenOp *op, KCtx *k, KCtx *kd, const RowVals *rv) {
  Buf b = {.indent = 6};
  if (!op->dry) {
    group_body(k, &b, op);
    return buf_take(u, &b);
  }
  row_loads(u, &b, rv);
  group_body(kd, &b, op);
  for (int i = 0; i < rv->n; i++) {
    Decl *f = rv->v[i].f;
    if (!rv->v[i].written || (f != op->mask_of->a.decl && in_reflist(&op->mask_of->list, f))) continue;
    buf_line(&b, "%s = %s;", row_elem(u, f, rv->v[i].comp), row_name(u, f, rv->v[i].comp));
  }
  return buf_take(u, &b);
}

/* Pass 2: each moved field's row (or held local) into its sorted place j. */
static const char *fused_moves(GenUnit *u, GenOp *op, const RowVals *rv) {
  Stmt *c = op->mask_of;
  Decl *key = op->fused_sort->a.decl;
  Buf b = {.indent = 4};
  for (int i = 0; i < c->list.n; i++) {
    Decl *f = c->list.v[i].decl;
    int64_t nc = 1;
    if (op->dry && f == key) {
      buf_line(&b, "    dst_%s[j] = (%s)kv;", f->name, gen_ctype(f->dtype));
    } else if (op->dry && row_held(rv, f, -1)) {
      (void)fuse_const_ncomp(f, &nc);
      for (int64_t q = 0; q < nc; q++) {
        const char *at = q ? arena_printf(&u->cc->arena, "%" PRId64 " * cap + ", q) : "";
        if (row_held(rv, f, q))
          buf_line(&b, "    dst_%s[%sj] = %s;", f->name, at, row_name(u, f, q));
        else
          buf_line(&b, "    dst_%s[%sj] = src_%s[%scnp_i];", f->name, at, f->name, at);
      }
    } else if (f->shape.rank == 1) {
      buf_line(&b, "    dst_%s[j] = src_%s[cnp_i];", f->name, f->name);
    } else {
      buf_line(&b, "    for (int64_t c = 0; c < nc_%s; c++)", f->name);
      buf_line(&b, "      dst_%s[c * cap + j] = src_%s[c * cap + cnp_i];", f->name, f->name);
    }
  }
  return buf_take(u, &b);
}

/* The fused sum: thread 0 adds the values it just moved (sum_values gives each one); with
** `acc`, the other threads' rows in sorted order afterwards. */
static const char *fused_sums(GenUnit *u, GenOp *op, const RowVals *rv, bool acc) {
  Stmt *sum = op->fused_sum;
  Buf b = {.indent = acc ? 8 : 4};
  for (int i = 0, J = 0; sum && i < sum->list.n; i++) {
    Decl *f = sum->list.v[i].decl, *out = sum->b.decl;
    int64_t nc = 1;
    (void)fuse_const_ncomp(f, &nc);
    for (int64_t q = 0; q < nc; q++, J++) {
      const char *at = q ? arena_printf(&u->cc->arena, "%" PRId64 " * cap + ", q) : "";
      const char *v;
      if (acc) {
        EMIT_SNIPPET(&b, TM, "fused_acc", {"ctype", gen_ctype(out->dtype)}, {"out", out->name},
                     {"o", J ? arena_printf(&u->cc->arena, "%d * R + k", J) : "k"},
                     {"plan", op->fused_plan->name}, {"f", f->name}, {"at", at});
        continue;
      }
      if (op->dry && f == op->fused_sort->a.decl) v = "kv";
      else if (op->dry && row_held(rv, f, q)) v = row_name(u, f, q);
      else v = arena_printf(&u->cc->arena, "src_%s[%scnp_i]", f->name, at);
      buf_line(&b, "    if (first) sum_%s[%s%s] += (%s)%s;", out->name,
               J ? arena_printf(&u->cc->arena, "%d * R + ", J) : "", op->dry ? "kv" : "key",
               gen_ctype(out->dtype), v);
    }
  }
  return buf_take(u, &b);
}

/* The host kernel of the compact + sort fast path (lower.c, find_fast_path): one parallel
** region; each thread runs the maps over its chunk and counts live keys, one thread turns
** the counts into offsets, each thread scatters its live rows to their sorted places in
** the double buffers, and the buffers are swapped. With a dry first pass (op->dry) pass 1
** keeps the maps' results in locals and stores only the mask, the fields no compaction
** moves and each row's key; pass 2 computes the results again and stores them straight
** into the double buffers; if a key is out of range, the maps then run for real. The text
** is templates/host.tmpl, section fused. */
void kernel_host_fused(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, KUse *use) {
  KCtx k = {u, t, &gen_target_host, NULL, DT_VOID, NULL, false, NULL, NULL, 0, NULL, false, NULL};
  Stmt *c = op->mask_of, *sum = op->fused_sum;
  Decl *mask = c->a.decl, *key = op->fused_sort->a.decl, *plan = op->fused_plan;
  RowVals rv;
  memset(&rv, 0, sizeof rv);
  if (op->dry && fuse_row_values(u, op, &rv)) cnp_ice("dry kernel %d without row values", op->kernel);
  KCtx kd = k;
  kd.rows = &rv;
  int64_t n_sums = 0;     /* components summed: rows of the output */
  for (int i = 0; sum && i < sum->list.n; i++) {
    int64_t nc = 1;
    (void)fuse_const_ncomp(sum->list.v[i].decl, &nc);
    n_sums += nc;
  }
  Buf locals = {.indent = 2}, un1 = {.indent = 6}, pass2 = {.indent = 8}, un2 = {.indent = 8},
      again = {.indent = 8}, swaps = {.indent = 4};
  kernel_locals(&locals, use);
  if (op->dry) {
    row_unused(u, &un1, &rv);
    row_loads(u, &pass2, &rv);
    group_body(&kd, &pass2, op);
    row_unused(u, &un2, &rv);
    group_body(&k, &again, op);
  }
  for (int i = 0; i < c->list.n; i++)
    EMIT_SNIPPET(&swaps, TM, "fused_swap", {"f", c->list.v[i].decl->name}, {"K", gen_int(u, op->kernel)});
  const char *pass1 = fused_pass1(u, op, &k, &kd, &rv);
  b->indent = 0;
  EMIT_SNIPPET(b, TM, "fused", {"N", u->name}, {"K", gen_int(u, op->kernel)}, {"n_maps", n_maps(u, op)},
               {"mask", mask->name}, {"key", key->name}, {"dry_note", op->dry ? " (dry first pass)" : ""},
               {"dry", op->dry ? "1" : ""}, {"sum", sum ? "1" : ""}, {"locals", buf_take(u, &locals)},
               {"R", setup_str(u, plan->value, "p->")}, {"plan", plan->name},
               {"dim", op->stmt->over.decl->name}, {"bufs", fused_bufs(u, op, &rv)}, {"pass1", pass1},
               {"mask_row", op->dry ? row_name(u, mask, 0) : ""}, {"key_row", op->dry ? row_name(u, key, 0) : ""},
               {"unused1", buf_take(u, &un1)}, {"n_sums", gen_int(u, n_sums)},
               {"out", sum ? sum->b.decl->name : ""}, {"pass2", buf_take(u, &pass2)},
               {"moves", fused_moves(u, op, &rv)}, {"sums", fused_sums(u, op, &rv, false)},
               {"unused2", buf_take(u, &un2)}, {"acc", fused_sums(u, op, &rv, true)},
               {"again", buf_take(u, &again)}, {"swaps", buf_take(u, &swaps)});
}

/* The fast-path kernel that replaces compact/sort statement s, or NULL. */
GenOp *fused_owner(GenUnit *u, Stmt *s) {
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      if (op->fused_sort && (op->fused_sort == s || op->mask_of == s || op->fused_sum == s))
        return op;
    }
  return NULL;
}

void inline_sum(GenUnit *u, Buf *b, Stmt *s) {
  Decl *out = s->b.decl, *plan = s->a.decl;
  const char *ot = gen_ctype(out->dtype);
  Buf fields = {.indent = b->indent + 2};
  for (int i = 0; i < s->list.n; i++) {   /* f16: accumulated in float, rounded once, as the runtime */
    Decl *f = s->list.v[i].decl;
    EMIT_SNIPPET(&fields, TM, "inline_sum_field", {"f", f->name}, {"ft", gen_ctype(f->dtype)},
                 {"faxis", gen_int(u, f->shape.rank - 1)}, {"ot", ot}, {"out", out->name},
                 {"f16", out->dtype == DT_F16 ? "1" : ""});
  }
  EMIT_SNIPPET(b, TM, "inline_sum", {"plan", plan->name},
               {"K", gen_int(u, lower_plan_producer(u, plan)->kernel)}, {"out", out->name},
               {"axis", gen_int(u, out->shape.rank - 1)}, {"fields", buf_take(u, &fields)});
}

/* ======================================================================== the host target */

static void host_atomic_add(Buf *b, const char *target, const char *ctype, const char *value) {
  buf_line(b, "CNP_G_OMP(\"omp atomic\")");
  buf_line(b, "%s += (%s)%s;", target, ctype, value);
}

/* The host unit runs on the host backend only: a CUDA request falls back (or fails, strict). */
static void host_backend_select(GenUnit *u, Buf *b) {
  EMIT_SNIPPET(b, TM, "backend_select", {"N", u->name}, {"file", u->stem});
}

const GenTarget gen_target_host = {
    .name = "host",
    .emit = EMIT_C,
    .ext = ".c",
    .device = false,
    .complex_tmpl = "complex.c",
    .complex_prefix = NULL,
    .extern_c = "",
    .atomic_add = host_atomic_add,
    .backend_select = host_backend_select,
    .both = "",
    .unit_part = "unit_host",
};
