/*
** gen_red.c -- reductions into scalars, histories of scalars and scans (docs/language.md,
** "Reductions, histories and scans"; docs/codegen.md, "Reductions and scans").
**
** A map that reduces (`s += v`, `s min= v`, `s max= v`) keeps one accumulator per scalar:
** on the host per chunk of RED_CHUNK rows (a fixed partition, whatever the thread count),
** the chunks' partials combined in chunk order after the loop; on CUDA per thread, then per
** block in a fixed tree (RED_BLOCK threads), the blocks' partials combined by a second
** one-block kernel (each thread a fixed stride of partials, then the same tree). No atomics.
** The partials live in p->rp_S, allocated at setup. `record H` appends the scalar to the
** ring p->f_H (counter p->hc_H, on the device), one thread on CUDA. A scan is three passes
** over chunks of SCAN_CHUNK rows in the same order on both backends (templates/reduce.tmpl).
*/
#include "gen.h"

#include <inttypes.h>
#include <string.h>

#define TM "reduce"   /* templates/reduce.tmpl */

bool red_stmts(const Stmt *s) {
  for (; s; s = s->next) {
    if (s->kind == ST_REDUCE) return true;
    if (red_stmts(s->body) || red_stmts(s->else_body)) return true;
  }
  return false;
}

bool red_group(const GenOp *op) {
  for (int m = 0; op->kind == GOP_MAP && m < op->n_maps; m++)
    if (red_stmts(op->maps[m]->body)) return true;
  return false;
}

const char *red_ident(DType t, int op) {
  if (op == RED_SUM) return t == DT_F32 ? "0.0f" : dtype_is_float(t) ? "0.0" : "0";
  bool mn = op == RED_MIN;
  switch (t) {
  case DT_I32: return mn ? "INT32_MAX" : "INT32_MIN";
  case DT_I64: return mn ? "INT64_MAX" : "INT64_MIN";
  case DT_U64: return mn ? "UINT64_MAX" : "0";
  case DT_F32: return mn ? "INFINITY" : "-INFINITY";
  default: return mn ? "(double)INFINITY" : "-(double)INFINITY";
  }
}

/* Sums of signed integers wrap: added as unsigned (docs/language.md, Types). */
static const char *wrap_type(DType t) {
  return t == DT_I32 ? "uint32_t" : t == DT_I64 ? "uint64_t" : NULL;
}

void red_line(Buf *b, DType t, int op, const char *acc, const char *v) {
  const char *ct = gen_ctype(t), *ut = wrap_type(t);
  if (op == RED_SUM && ut) buf_line(b, "%s = (%s)((%s)%s + (%s)%s);", acc, ct, ut, acc, ut, v);
  else if (op == RED_SUM) buf_line(b, "%s += %s;", acc, v);
  else
    buf_line(b, "{ const %s cnp_v = %s; %s = cnp_v %s %s ? cnp_v : %s; }", ct, v, acc,
             op == RED_MIN ? "<" : ">", acc, acc);
}

static const char *red_name(int op) { return op == RED_SUM ? "+=" : op == RED_MIN ? "min=" : "max="; }

/* ======================================================================== host loop */

void red_kernel_host(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, KUse *use) {
  KCtx k = {u, t, &gen_target_host, NULL, DT_VOID, NULL, true};
  buf_line(b, "/* Kernel %d on the host: %d map%s fused into one loop over chunks of %d rows; in a "
              "chunk, row i", op->kernel, op->n_maps, op->n_maps > 1 ? "s" : "", RED_CHUNK);
  buf_line(b, "** reduces into lane i %% %d in row order, the lanes are combined in lane order, "
              "the chunks'", RED_LANES);
  buf_line(b, "** partials in chunk order (independent of the threads). */");
  buf_line(b, "static int %s_k%d_host(const %s_k%d_args *ap)", u->name, op->kernel, u->name,
           op->kernel);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "const %s_k%d_args A = *ap;", u->name, op->kernel);
  buf_line(b, "int bad = 0;");
  kernel_locals(b, use);
  buf_line(b, "const int64_t cnp_nc = (A.n + %d) / %d;", RED_CHUNK - 1, RED_CHUNK);
  buf_line(b, "CNP_G_OMP(\"omp parallel for schedule(static) reduction(|:bad)\")");
  buf_line(b, "for (int64_t cnp_c = 0; cnp_c < cnp_nc; cnp_c++) {");
  b->indent = 4;
  for (int i = 0; i < use->n_reds; i++) {
    const char *id = red_ident(use->reds[i]->dtype, use->red_op[i]);
    buf_printf(b, "%*s%s r_%s[%d] = {", b->indent, "", gen_ctype(use->reds[i]->dtype),
               use->reds[i]->name, RED_LANES);
    for (int l = 0; l < RED_LANES; l++) buf_printf(b, "%s%s", l ? ", " : "", id);
    buf_puts(b, "};\n");
  }
  buf_line(b, "const int64_t cnp_e = cnp_c * %d + %d < A.n ? cnp_c * %d + %d : A.n;", RED_CHUNK,
           RED_CHUNK, RED_CHUNK, RED_CHUNK);
  buf_line(b, "int64_t cnp_b = cnp_c * %d;", RED_CHUNK);
  buf_line(b, "for (; cnp_b + %d <= cnp_e; cnp_b += %d) {  /* whole groups of %d rows */", RED_LANES,
           RED_LANES, RED_LANES);
  buf_line(b, "  for (int cnp_l = 0; cnp_l < %d; cnp_l++) {", RED_LANES);
  buf_line(b, "    const int64_t cnp_i = cnp_b + cnp_l;");
  b->indent = 8;
  group_body(&k, b, op);
  b->indent = 4;
  buf_line(b, "  }");
  buf_line(b, "}");
  buf_line(b, "for (int cnp_l = 0; cnp_b + cnp_l < cnp_e; cnp_l++) {  /* the rest of the last chunk */");
  buf_line(b, "  const int64_t cnp_i = cnp_b + cnp_l;");
  b->indent = 6;
  group_body(&k, b, op);
  b->indent = 4;
  buf_line(b, "}");
  for (int i = 0; i < use->n_reds; i++) {
    Decl *f = use->reds[i];
    buf_line(b, "for (int cnp_l = 1; cnp_l < %d; cnp_l++)", RED_LANES);
    b->indent = 6;
    red_line(b, f->dtype, use->red_op[i], arena_printf(&u->cc->arena, "r_%s[0]", f->name),
             arena_printf(&u->cc->arena, "r_%s[cnp_l]", f->name));
    b->indent = 4;
    buf_line(b, "A.rp_%s[cnp_c] = r_%s[0];", f->name, f->name);
  }
  b->indent = 2;
  buf_line(b, "}");
  for (int i = 0; i < use->n_reds; i++) {
    Decl *f = use->reds[i];
    buf_line(b, "{  /* scalar %s %s ...: the partials in chunk order */", f->name, red_name(use->red_op[i]));
    b->indent = 4;
    buf_line(b, "%s r_%s = %s;", gen_ctype(f->dtype), f->name, red_ident(f->dtype, use->red_op[i]));
    buf_line(b, "for (int64_t cnp_c = 0; cnp_c < cnp_nc; cnp_c++)");
    b->indent = 6;
    red_line(b, f->dtype, use->red_op[i], arena_printf(&u->cc->arena, "r_%s", f->name),
             arena_printf(&u->cc->arena, "A.rp_%s[cnp_c]", f->name));
    b->indent = 4;
    buf_line(b, "f_%s[0] = r_%s;", f->name, f->name);
    b->indent = 2;
    buf_line(b, "}");
  }
  buf_line(b, "return bad ? CNP_ERANGE : CNP_OK;");
  b->indent = 0;
  buf_line(b, "} /* kernel %d (host) */", op->kernel);
  buf_puts(b, "\n");
}

/* ======================================================================== CUDA */

/* The block tree of scalar f: sh_f[0] ends with the block's value. */
static void block_tree(GenUnit *u, Buf *b, Decl *f, int op) {
  const char *ct = gen_ctype(f->dtype);
  buf_line(b, "sh_%s[threadIdx.x] = r_%s;", f->name, f->name);
  buf_line(b, "__syncthreads();");
  buf_line(b, "for (unsigned cnp_s = %d; cnp_s > 0; cnp_s >>= 1) {  /* a fixed tree */", RED_BLOCK / 2);
  buf_line(b, "  if (threadIdx.x < cnp_s) {");
  buf_line(b, "    %s a = sh_%s[threadIdx.x];", ct, f->name);
  b->indent += 4;
  red_line(b, f->dtype, op, "a", arena_printf(&u->cc->arena, "sh_%s[threadIdx.x + cnp_s]", f->name));
  b->indent -= 4;
  buf_line(b, "    sh_%s[threadIdx.x] = a;", f->name);
  buf_line(b, "  }");
  buf_line(b, "  __syncthreads();");
  buf_line(b, "}");
}

/* The end of a reducing kernel: each block's partial of every scalar. */
void red_kernel_cuda_tail(GenUnit *u, Buf *b, GenOp *op, KUse *use) {
  (void)op;
  for (int i = 0; i < use->n_reds; i++) {
    Decl *f = use->reds[i];
    buf_line(b, "{  /* scalar %s: this block's partial */", f->name);
    b->indent += 2;
    buf_line(b, "__shared__ %s sh_%s[%d];", gen_ctype(f->dtype), f->name, RED_BLOCK);
    block_tree(u, b, f, use->red_op[i]);
    buf_line(b, "if (threadIdx.x == 0) A.rp_%s[blockIdx.x] = sh_%s[0];", f->name, f->name);
    b->indent -= 2;
    buf_line(b, "}");
  }
}

/* The second pass of a reducing kernel: one block combines the nb block partials (thread t
** the partials t, t + RED_BLOCK, ... in order, then the tree) into the scalar. */
void red_combine_cuda(GenUnit *u, Buf *b, GenOp *op, KUse *use) {
  buf_line(b, "/* Kernel %d, second pass: the blocks' partials into the scalars (one block). */",
           op->kernel);
  buf_line(b, "static __global__ void %s_k%d_comb_cuda(const %s_k%d_args A, int64_t nb)", u->name,
           op->kernel, u->name, op->kernel);
  buf_line(b, "{");
  b->indent = 2;
  for (int i = 0; i < use->n_reds; i++) {
    Decl *f = use->reds[i];
    buf_line(b, "{  /* scalar %s */", f->name);
    b->indent += 2;
    buf_line(b, "__shared__ %s sh_%s[%d];", gen_ctype(f->dtype), f->name, RED_BLOCK);
    buf_line(b, "%s r_%s = %s;", gen_ctype(f->dtype), f->name, red_ident(f->dtype, use->red_op[i]));
    buf_line(b, "for (int64_t c = threadIdx.x; c < nb; c += %d)", RED_BLOCK);
    b->indent += 2;
    red_line(b, f->dtype, use->red_op[i], arena_printf(&u->cc->arena, "r_%s", f->name),
             arena_printf(&u->cc->arena, "A.rp_%s[c]", f->name));
    b->indent -= 2;
    block_tree(u, b, f, use->red_op[i]);
    buf_line(b, "if (threadIdx.x == 0) A.f_%s[0] = sh_%s[0];", f->name, f->name);
    b->indent -= 2;
    buf_line(b, "}");
  }
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
}

/* ======================================================================== object, setup, lookups */

/* Scalars some map reduces into, each once. */
static int reduced_scalars(GenUnit *u, Decl **out, int max) {
  int n = 0;
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      if (op->kind != GOP_MAP || !red_group(op)) continue;
      KUse use;
      group_use(u, op, &use);
      for (int r = 0; r < use.n_reds; r++) {
        int k = 0;
        while (k < n && out[k] != use.reds[r]) k++;
        if (k == n && n < max) out[n++] = use.reds[r];
      }
    }
  return n;
}

static GenOp *scan_op(GenUnit *u, int id) {
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++)
      if (u->steps[i].ops[o].kind == GOP_STMT && u->steps[i].ops[o].stmt->kind == ST_SCAN &&
          u->steps[i].ops[o].scan_id == id)
        return &u->steps[i].ops[o];
  return NULL;
}

void red_struct(GenUnit *u, Buf *b) {
  Decl *rs[256];
  int n = reduced_scalars(u, rs, 256);
  for (int i = 0; i < n; i++)
    buf_line(b, "cnp_array rp_%s;  /* partial results of the reductions into scalar %s */",
             rs[i]->name, rs[i]->name);
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_FIELD && d->history_of.name)
      buf_line(b, "cnp_array hc_%s;  /* u64[1]: values recorded into history %s (device) */",
               d->name, d->name);
  for (int id = 0; scan_op(u, id); id++)
    buf_line(b, "cnp_array sp_%d;  /* chunk totals of the scan at line %d */", id,
             scan_op(u, id)->stmt->loc.line);
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++)
      if (u->steps[i].ops[o].stmt->kind == ST_APPEND)
        buf_line(b, "int64_t apf_k%d, apn_k%d;  /* append at line %d: first new row, rows added */",
                 u->steps[i].ops[o].kernel, u->steps[i].ops[o].kernel, u->steps[i].ops[o].stmt->loc.line);
}

/* append N (COUNT) map i { ... }: the rows [n, n + COUNT) clamped to the capacity, their
** kernel, the new extent; more rows than the capacity is CNP_EOVERFLOW from step() after the
** rows that fit (none past the capacity is written). */
void red_step_append(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  Decl *d = s->over.decl;
  int K = op->kernel;
  (void)t;
  buf_line(b, "{  /* append %s: kernel %d over the new rows */", d->name, K);
  b->indent += 2;
  Buf c = {0};
  setup_expr(u, &c, s->value, "p->");
  buf_line(b, "const int64_t want = (int64_t)(%s), room = p->cap_%s - p->n_%s;", buf_str(&c), d->name,
           d->name);
  buf_free(&c);
  buf_line(b, "p->apf_k%d = p->n_%s;", K, d->name);
  buf_line(b, "p->apn_k%d = want < 0 ? 0 : want > room ? room : want;", K);
  try_call(u, b, s->loc, "%s_k%d(p, S)", u->name, K);
  buf_line(b, "p->n_%s += p->apn_k%d;", d->name, K);
  buf_line(b, "if (want > room)");
  buf_line(b, "  return %s_failed(p, CNP_EOVERFLOW, \"%s\");", u->name,
           cstr(u, arena_printf(&u->cc->arena, "%s:%d: append %s: more rows than its capacity (the rows "
                                "that fit were added)", base_name(s->loc.file->path), s->loc.line, d->name)));
  b->indent -= 2;
  buf_line(b, "}");
}

static void alloc_line(GenUnit *u, Buf *b, const char *arr, const char *dt, const char *n,
                       const char *what) {
  buf_line(b, "{");
  buf_line(b, "  const int64_t n = %s;", n);
  buf_line(b, "  if ((st = cnp_array_alloc_on(&p->%s, B, p->device, %s, 1, &n, CNP_ORDER_C, 0)) != "
              "CNP_OK) {", arr, dt);
  buf_line(b, "    where = \"%s_setup: %s\";", u->name, what);
  buf_line(b, "    goto fail;");
  buf_line(b, "  }");
  buf_line(b, "}");
}

/* Rows a map runs over at most: a dim's capacity, a setup param, a constant. */
static const char *map_rows(GenUnit *u, Stmt *map) {
  Decl *over = map->over.decl;
  if (over->kind == DECL_DIM) return arena_printf(&u->cc->arena, "p->cap_%s", over->name);
  if (over->kind == DECL_PARAM) return arena_printf(&u->cc->arena, "(int64_t)p->P_%s", over->name);
  return gen_int(u, over->ival);
}

void red_setup(GenUnit *u, Buf *b) {
  Arena *a = &u->cc->arena;
  Decl *rs[256];
  int n = reduced_scalars(u, rs, 256);
  for (int i = 0; i < n; i++) {
    Buf rows = {0};
    buf_puts(&rows, "1");
    for (int s = 0; s < u->n_steps; s++)
      for (int o = 0; o < u->steps[s].n_ops; o++) {
        GenOp *op = &u->steps[s].ops[o];
        if (op->kind != GOP_MAP || !red_group(op)) continue;
        KUse use;
        group_use(u, op, &use);
        for (int r = 0; r < use.n_reds; r++)
          if (use.reds[r] == rs[i]) {
            const char *m = map_rows(u, op->stmt);
            char *prev = arena_strndup(a, buf_str(&rows), rows.n);
            rows.n = 0;
            buf_printf(&rows, "(%s > %s ? %s : %s)", m, prev, m, prev);
          }
      }
    /* RED_BLOCK-row blocks on CUDA, RED_CHUNK-row chunks on the host: the former are more */
    alloc_line(u, b, arena_printf(a, "rp_%s", rs[i]->name), gen_cnp_dtype(rs[i]->dtype),
               arena_printf(a, "%s / %d + 1", buf_str(&rows), RED_BLOCK),
               arena_printf(a, "partials of scalar %s", rs[i]->name));
    buf_free(&rows);
  }
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_FIELD && d->history_of.name)
      alloc_line(u, b, arena_printf(a, "hc_%s", d->name), "CNP_UINT64", "1",
                 arena_printf(a, "counter of history %s", d->name));
  for (int id = 0; scan_op(u, id); id++) {
    Decl *x = scan_op(u, id)->stmt->a.decl;
    alloc_line(u, b, arena_printf(a, "sp_%d", id), gen_cnp_dtype(x->dtype),
               arena_printf(a, "cnp_g_ncomp(&p->f_%s) * ((p->f_%s.shape[%d] + %d) / %d + 1)", x->name,
                            x->name, x->shape.rank - 1, SCAN_CHUNK - 1, SCAN_CHUNK),
               arena_printf(a, "scan at line %d", scan_op(u, id)->stmt->loc.line));
  }
}

void red_teardown(GenUnit *u, Buf *b) {
  Decl *rs[256];
  int n = reduced_scalars(u, rs, 256);
  for (int i = 0; i < n; i++)
    buf_line(b, "if (p->rp_%s.data) cnp_array_free(&p->rp_%s);", rs[i]->name, rs[i]->name);
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_FIELD && d->history_of.name)
      buf_line(b, "if (p->hc_%s.data) cnp_array_free(&p->hc_%s);", d->name, d->name);
  for (int id = 0; scan_op(u, id); id++)
    buf_line(b, "if (p->sp_%d.data) cnp_array_free(&p->sp_%d);", id, id);
}

void red_lookup(GenUnit *u, Buf *b) {
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_FIELD && d->history_of.name)
      buf_line(b, "if (strcmp(name, \"%s.count\") == 0) return p->hc_%s;  /* history %s */", d->name,
               d->name, d->name);
}

/* ======================================================================== helpers */

static const char *suffix(DType t) { return dtype_name(t); }

void red_helpers(GenUnit *u, const GenTarget *t, Buf *b) {
  bool seen[DT__COUNT] = {false}, any_scan = false, any_hist = false;
  for (int id = 0; scan_op(u, id); id++) {
    DType dt = scan_op(u, id)->stmt->a.decl->dtype;
    any_scan = true;
    if (seen[dt]) continue;
    seen[dt] = true;
    const char *ct = gen_ctype(dt), *ut = wrap_type(dt);
    EMIT_SNIPPET(b, TM, "scan_host", {"T", ct}, {"UT", ut ? ut : ct}, {"SUF", suffix(dt)},
                 {"CH", gen_int(u, SCAN_CHUNK)});
  }
  for (Decl *d = u->cc->decls; d; d = d->next) any_hist = any_hist || (d->kind == DECL_FIELD && d->history_of.name);
  if (!t->device) return;
  if (any_scan) EMIT_SNIPPET(b, TM, "scan_cuda", {"CH", gen_int(u, SCAN_CHUNK)});
  if (any_hist) emit_snippet(b, TM, "history_cuda", NULL, 0);
}

/* ======================================================================== step statements */

void red_step_history(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, bool graph) {
  Stmt *s = op->stmt;
  Decl *h = s->a.decl, *sc = s->b.decl;
  const char *ct = gen_ctype(h->dtype);
  buf_line(b, "{  /* record %s: append scalar %s (a ring of %s values) */", h->name, sc->name,
           expr_src(u, h->shape.ext[0]));
  b->indent += 2;
  if (t->device) {
    if (!graph) buf_line(b, "if (p->backend == CNP_BACKEND_CUDA) {");
    if (!graph) b->indent += 2;
    buf_line(b, "cnp_g_history_push<%s><<<1, 1, 0, (cudaStream_t)cnp_stream_native(S)>>>(", ct);
    buf_line(b, "    (const %s *)p->f_%s.data, (%s *)p->f_%s.data, (unsigned long long *)p->hc_%s.data,",
             ct, sc->name, ct, h->name, h->name);
    buf_line(b, "    p->f_%s.shape[0]);", h->name);
    if (graph) buf_line(b, "if (cnp_g_launched() != CNP_OK) return CNP_EBACKEND;");
    else try_call(u, b, s->loc, "cnp_g_launched()");
    if (!graph) {
      b->indent -= 2;
      buf_line(b, "} else {");
      b->indent += 2;
    }
  }
  if (!graph) {
    buf_line(b, "uint64_t *const c = (uint64_t *)p->hc_%s.data;", h->name);
    buf_line(b, "((%s *)p->f_%s.data)[*c %% (uint64_t)p->f_%s.shape[0]] = ((const %s *)p->f_%s.data)[0];",
             ct, h->name, h->name, ct, sc->name);
    buf_line(b, "*c += 1;");
  }
  if (t->device && !graph) {
    b->indent -= 2;
    buf_line(b, "}");
  }
  if (!graph) buf_line(b, "p->stats.launches++;");
  b->indent -= 2;
  buf_line(b, "}");
}

void red_step_scan(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, bool graph) {
  Stmt *s = op->stmt;
  Decl *x = s->a.decl, *y = s->b.decl, *dim = NULL;
  const char *ct = gen_ctype(x->dtype), *ut = wrap_type(x->dtype);
  int ax = x->shape.rank - 1;
  gen_decl_is_dim_extent(x, &dim);
  buf_line(b, "{  /* scan %s %s -> %s */", s->inclusive ? "inclusive" : "exclusive", x->name, y->name);
  b->indent += 2;
  buf_line(b, "const %s *const x = (const %s *)p->f_%s.data;", ct, ct, x->name);
  buf_line(b, "%s *const y = (%s *)p->f_%s.data;", ct, ct, y->name);
  buf_line(b, "const int64_t nc = cnp_g_ncomp(&p->f_%s), stride = p->f_%s.shape[%d];", x->name,
           x->name, ax);
  buf_line(b, "%s *const part = (%s *)p->sp_%d.data;", ct, ct, op->scan_id);
  if (graph) {   /* over the capacity, the live extent read on the device */
    buf_line(b, "const int64_t pstride = (stride + %d) / %d + 1;", SCAN_CHUNK - 1, SCAN_CHUNK);
    buf_line(b, "if ((st = cnp_g_scan_cuda<%s, %s>(x, y, stride, %s, nc, stride, %d, part, pstride,",
             ct, ut ? ut : ct, dim ? arena_printf(&u->cc->arena, "(const int64_t *)p->dn_%s.data", dim->name)
                                   : "NULL", s->inclusive);
    buf_line(b, "                                  (cudaStream_t)cnp_stream_native(S))) != CNP_OK)");
    buf_line(b, "  return st;");
    b->indent -= 2;
    buf_line(b, "}");
    return;
  }
  buf_line(b, "const int64_t n = %s;", live_extent(u, x));
  if (t->device) {
    buf_line(b, "if (p->backend == CNP_BACKEND_CUDA) {");
    b->indent += 2;
    buf_line(b, "const int64_t pstride = (stride + %d) / %d + 1;", SCAN_CHUNK - 1, SCAN_CHUNK);
    buf_line(b, "const int sst = cnp_g_scan_cuda<%s, %s>(x, y, n, NULL, nc, stride, %d, part, pstride,",
             ct, ut ? ut : ct, s->inclusive);
    buf_line(b, "                                  (cudaStream_t)cnp_stream_native(S));");
    try_call(u, b, s->loc, "sst");
    b->indent -= 2;
    buf_line(b, "} else {");
    b->indent += 2;
  }
  buf_line(b, "cnp_g_scan_%s(x, y, n, nc, stride, %d, part);", suffix(x->dtype), s->inclusive);
  if (t->device) {
    b->indent -= 2;
    buf_line(b, "}");
  }
  buf_line(b, "p->stats.launches++;");
  b->indent -= 2;
  buf_line(b, "}");
}

/* ======================================================================== the header */

void red_header(GenUnit *u, Buf *b) {
  bool scalars = false, hist = false;
  for (Decl *d = u->cc->decls; d; d = d->next) {
    scalars = scalars || (d->kind == DECL_FIELD && d->scalar);
    hist = hist || (d->kind == DECL_FIELD && d->history_of.name);
  }
  if (!scalars) return;
  const char *N = u->name;
  buf_printf(b, "/* Scalars and histories (docs/language.md, Reductions): read them after %s_sync(). */\n", N);
  buf_printf(b, "cnp_array %s_field(%s *p, const char *name);\n\n", N, N);
  buf_printf(b, "/* The value of scalar `name` into *out (the bytes of its dtype). CNP_EINVAL if "
                "`name` is not\n** a scalar. */\n");
  buf_printf(b, "static inline int %s_scalar(%s *p, const char *name, void *out)\n{\n", N, N);
  buf_printf(b, "  cnp_array s = %s_field(p, name), h;\n", N);
  buf_printf(b, "  const int64_t one = 1;\n");
  buf_printf(b, "  if (!s.data || !out || s.ndim != 1 || s.shape[0] != 1) return CNP_EINVAL;\n");
  buf_printf(b, "  if (cnp_array_wrap(&h, out, CNP_BACKEND_HOST, 0, s.dtype, 1, &one, NULL) != CNP_OK) "
                "return CNP_EINVAL;\n");
  buf_printf(b, "  return (int)cnp_array_copy(&h, &s, NULL);\n}\n\n");
  if (!hist) return;
  buf_printf(b, "/* The latest min(n, recorded, K) values of history `name` (K entries, a ring: "
                "older values are\n** overwritten), oldest first, into buf (its dtype); returns "
                "how many, or a negative\n** cnp_status (CNP_EINVAL: not a history). */\n");
  buf_printf(b, "static inline int64_t %s_history(%s *p, const char *name, void *buf, int64_t n)\n{\n", N, N);
  buf_printf(b, "  char cn[128];\n");
  buf_printf(b, "  size_t len = 0;\n");
  buf_printf(b, "  unsigned long long count = 0;\n");
  buf_printf(b, "  const int64_t one = 1;\n");
  buf_printf(b, "  cnp_array h = %s_field(p, name), c, hv, dv;\n", N);
  buf_printf(b, "  int64_t k, got, first, seg;\n");
  buf_printf(b, "  int st;\n");
  buf_printf(b, "  while (name && name[len] && len < sizeof cn) len++;\n");
  buf_printf(b, "  if (!h.data || !buf || n < 0 || len + 7 > sizeof cn) return CNP_EINVAL;\n");
  buf_printf(b, "  for (size_t i = 0; i < len; i++) cn[i] = name[i];\n");
  buf_printf(b, "  for (size_t i = 0; i < 7; i++) cn[len + i] = \".count\"[i];\n");
  buf_printf(b, "  c = %s_field(p, cn);\n", N);
  buf_printf(b, "  if (!c.data) return CNP_EINVAL;\n");
  buf_printf(b, "  if ((st = (int)cnp_array_wrap(&hv, &count, CNP_BACKEND_HOST, 0, CNP_UINT64, 1, &one, "
                "NULL)) != CNP_OK ||\n      (st = (int)cnp_array_copy(&hv, &c, NULL)) != CNP_OK)\n");
  buf_printf(b, "    return st;\n");
  buf_printf(b, "  k = h.shape[0];\n");
  buf_printf(b, "  got = count < (unsigned long long)k ? (int64_t)count : k;\n");
  buf_printf(b, "  if (got > n) got = n;\n");
  buf_printf(b, "  first = (int64_t)((count - (unsigned long long)got) %% (unsigned long long)k);\n");
  buf_printf(b, "  for (int64_t done = 0; done < got; done += seg, first = 0) {  /* at most two pieces */\n");
  buf_printf(b, "    seg = got - done < k - first ? got - done : k - first;\n");
  buf_printf(b, "    if ((st = (int)cnp_array_slice(&dv, &h, 0, first, first + seg)) != CNP_OK ||\n");
  buf_printf(b, "        (st = (int)cnp_array_wrap(&hv, (char *)buf + (size_t)done * cnp_dtype_size(h.dtype),\n");
  buf_printf(b, "                                  CNP_BACKEND_HOST, 0, h.dtype, 1, &seg, NULL)) != CNP_OK ||\n");
  buf_printf(b, "        (st = (int)cnp_array_copy(&hv, &dv, NULL)) != CNP_OK)\n");
  buf_printf(b, "      return st;\n");
  buf_printf(b, "  }\n");
  buf_printf(b, "  return got;\n}\n\n");
}
