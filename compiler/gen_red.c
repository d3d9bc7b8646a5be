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
** over chunks of SCAN_CHUNK rows in the same order on both backends. `allreduce S, ...;`
** gathers every rank's scalars (cnp_comm_allgather into p->ar_N, allocated at setup) and
** combines them in rank order. The text: templates/reduce.tmpl.
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
  if (op == RED_SUM && ut) EMIT_SNIPPET(b, TM, "red_wrap", {"acc", acc}, {"v", v}, {"T", ct}, {"UT", ut});
  else if (op == RED_SUM) EMIT_SNIPPET(b, TM, "red_sum", {"acc", acc}, {"v", v});
  else if (t == DT_U64) EMIT_SNIPPET(b, TM, "red_uminmax", {"acc", acc}, {"v", v}, {"fn", op == RED_MIN ? "min" : "max"});
  else EMIT_SNIPPET(b, TM, "red_minmax", {"acc", acc}, {"v", v}, {"T", ct}, {"op", op == RED_MIN ? "<" : ">"});
}

void red_store(Buf *b, const char *acc, const char *v) {
  EMIT_SNIPPET(b, TM, "red_store", {"acc", acc}, {"v", v});
}

/* The reductions into f in statements s: *n counts them, *cond is set when one sits in an
** if (a row may skip it). */
static void red_uses(const Stmt *s, const Decl *f, bool nested, int *n, bool *cond) {
  for (; s; s = s->next) {
    if (s->kind == ST_REDUCE && s->target->ref.decl == f) {
      (*n)++;
      *cond |= nested;
    }
    red_uses(s->body, f, nested || s->kind == ST_IF, n, cond);
    red_uses(s->else_body, f, true, n, cond);
  }
}

/* A kernel that scatter-adds (its body cannot vectorize anyway) keeps each row's value of a
** scalar in a buffer and reduces the buffer into the lanes after each sub-block of RED_SUB
** rows, instead of a lane loop around the body: the same operations in the same order, so the
** same bits, as long as a row reduces into each scalar at most once (a row that does not adds
** the identity: x + 0 is x, as a lane, which starts at +0, is never -0) and the scalar is a
** plain integer or float. */
static bool red_buffered(const GenOp *op, const KUse *use, bool *cond) {
  if (use->n_privs == 0 || use->n_reds == 0) return false;
  for (int i = 0; i < use->n_reds; i++) {
    DType t = use->reds[i]->dtype;
    if (t != DT_I32 && t != DT_I64 && t != DT_U64 && t != DT_F32 && t != DT_F64) return false;
    int n = 0;
    cond[i] = false;
    for (int m = 0; m < op->n_maps; m++) red_uses(op->maps[m]->body, use->reds[i], false, &n, &cond[i]);
    if (n != 1) return false;
  }
  return true;
}

/* The privatized scatter-adds of statements s into use (in the order a row runs them); false
** if one sits in an if (a row may skip it), there are more than SABUF_MAX, or a scatter-add
** is atomic (integer, f16, complex: no atomic in the rows' simd loop). */
static bool sa_stmts(const Stmt *s, const KUse *use, bool nested, SaBufs *sab) {
  for (; s; s = s->next) {
    if (s->kind == ST_ADD && s->scatter) {   /* an atomic one (not privatized): no simd loop */
      if (s->target->kind != EX_INDEX || !kuse_priv(use, s->target->ref.decl)) return false;
      if (nested || sab->n == SABUF_MAX) return false;
      sab->s[sab->n++] = s;
    }
    if (!sa_stmts(s->body, use, true, sab) || !sa_stmts(s->else_body, use, true, sab)) return false;
  }
  return true;
}

/* A host kernel (of the .c unit) that scatter-adds into privatized copies buffers its
** scatter-adds when each runs once per row: each row writes the index and the value of each
** into a sub-block buffer (cnp_siN, cnp_svN), and after the sub-block one loop adds them into
** the copies, row by row in row order: the additions of the fused loop in its order, so the
** same bits. The body, without its scattered read-modify-writes, then vectorizes (the
** unit is compiled with no-trapping-math under gcc, unit_host.tmpl, so floor() does too):
** es1d's push ran 15-25% faster (docs/codegen.md, "Buffered scatter-adds"). Only with
** reductions that are buffered too (rb), or none. */
static bool sa_buffered(const GenTarget *t, const GenOp *op, const KUse *use, bool rb, SaBufs *sab) {
  sab->n = 0;
  if (t != &gen_target_host || use->n_privs == 0 || (use->n_reds && !rb)) return false;
  for (int m = 0; m < op->n_maps; m++)
    if (!sa_stmts(op->maps[m]->body, use, false, sab)) return false;
  return sab->n > 0;
}

void sa_store(KCtx *k, Buf *b, const Stmt *s, const char *idx, const char *ct, const char *v) {
  int n = 0;
  while (n < k->sab->n && k->sab->s[n] != s) n++;
  if (n == k->sab->n) cnp_ice("a scatter-add the kernel did not buffer");
  EMIT_SNIPPET(b, TM, "sa_store", {"n", gen_int(k->u, n)}, {"idx", idx}, {"T", ct}, {"v", v});
}

/* The buffers of sab (their declarations, at `indent`) and the loop that adds them. */
static void sa_text(GenUnit *u, const SaBufs *sab, Buf *decls, Buf *pass) {
  Buf adds = {.indent = pass->indent + 2};
  for (int i = 0; i < sab->n; i++) {
    const Stmt *s = sab->s[i];
    Decl *f = s->target->ref.decl;
    const char *what = arena_printf(&u->cc->arena, "%s:%d: %s", base_name(s->loc.file->path), s->loc.line,
                                    src_line(u, s->loc));
    EMIT_SNIPPET(decls, TM, "sa_decl", {"n", gen_int(u, i)}, {"SB", gen_int(u, RED_SUB)},
                 {"T", gen_ctype(f->dtype)}, {"what", what});
    EMIT_SNIPPET(&adds, TM, "sa_add", {"f", f->name}, {"n", gen_int(u, i)});
  }
  EMIT_SNIPPET(pass, TM, "sa_pass", {"adds", buf_take(u, &adds)});
}

/* red_line() as a block at `indent`. */
static const char *red_block(GenUnit *u, int indent, DType t, int op, const char *acc, const char *v) {
  Buf c = {.indent = indent};
  red_line(&c, t, op, acc, v);
  return buf_take(u, &c);
}

static const char *red_name(int op) { return op == RED_SUM ? "+=" : op == RED_MIN ? "min=" : "max="; }

/* ======================================================================== host loop */

/* Elements of field f (every component): C text at setup (`kern` false, from p->f_F) or in
** a kernel (from its arguments A.f_F_eD). */
static const char *priv_elems(GenUnit *u, Decl *f, bool kern) {
  const char *t = "";
  for (int d = 0; d < f->shape.rank; d++)
    t = arena_printf(&u->cc->arena, kern ? "%s%sA.f_%s_e%d" : "%s%sp->f_%s.shape[%d]", t, d ? " * " : "",
                     f->name, d);
  return f->shape.rank > 1 ? arena_printf(&u->cc->arena, "(%s)", t) : t;
}

/* Chunks per block of a kernel that scatter-adds into privatized fields: at least
** PRIV_ROWS rows per element of the copies, so zeroing and combining them stays small. */
static const char *priv_chunks(GenUnit *u, const KUse *use, bool kern) {
  const char *t = "";
  for (int i = 0; i < use->n_privs; i++)
    t = arena_printf(&u->cc->arena, "%s%s%s", t, i ? " + " : "", priv_elems(u, use->privs[i], kern));
  return arena_printf(&u->cc->arena, "((%d * (%s) + %d) / %d)", PRIV_ROWS, t, RED_CHUNK - 1, RED_CHUNK);
}

void red_kernel_host(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, KUse *use) {
  KCtx k = {u, t, &gen_target_host, NULL, DT_VOID, NULL, true, use, NULL, 0, NULL, false, NULL};
  Arena *a = &u->cc->arena;
  const char *L = gen_int(u, RED_LANES);
  bool pv = use->n_privs > 0;
  int in = pv ? 2 : 0;    /* the chunk loop sits in the block loop */
  Buf locals = {.indent = 2}, lanes = {.indent = 4 + in}, body8 = {.indent = 8 + in}, body6 = {.indent = 6 + in};
  Buf lanes_end = {.indent = 4 + in}, partials = {.indent = 2}, pvinit = {.indent = 4}, pvsum = {.indent = 2};
  /* A condition the same for every row (a step counter read at a constant index, a param):
  ** the chunk's loops in two versions, one with it 1 and one with it 0 (loop unswitching). */
  const Expr *uc = group_invariant_cond(op);
  int up = uc ? 2 : 0;    /* the two versions sit in if (cnp_u) { } else { } */
  body8.indent += up, body6.indent += up, lanes.indent += up, lanes_end.indent += up;
  kernel_locals(&locals, use);
  for (int i = 0; i < use->n_privs; i++) {
    Decl *f = use->privs[i];
    const char *ct = gen_ctype(f->dtype);
    EMIT_SNIPPET(&pvinit, TM, "priv_init", {"T", ct}, {"f", f->name}, {"S", priv_elems(u, f, true)});
    EMIT_SNIPPET(&pvsum, TM, "priv_sum", {"T", ct}, {"f", f->name}, {"S", priv_elems(u, f, true)});
  }
  for (int i = 0; i < use->n_reds; i++) {
    const char *id = red_ident(use->reds[i]->dtype, use->red_op[i]), *init = "{";
    for (int l = 0; l < RED_LANES; l++) init = arena_printf(a, "%s%s%s", init, l ? ", " : "", id);
    EMIT_SNIPPET(&lanes, TM, "lane_init", {"T", gen_ctype(use->reds[i]->dtype)}, {"f", use->reds[i]->name},
                 {"L", L}, {"init", arena_printf(a, "%s}", init)});
  }
  Buf body1 = {.indent = 6 + in + up};
  Buf body8b = {.indent = body8.indent}, body6b = {.indent = body6.indent}, body1b = {.indent = body1.indent};
  bool *cond = arena_alloc(a, sizeof *cond * (size_t)(use->n_reds ? use->n_reds : 1));
  const bool rb = red_buffered(op, use, cond);
  SaBufs sab;
  const bool sb = sa_buffered(t, op, use, rb, &sab);
  if (sb) k.sab = &sab;
  if (rb || sb) body1.indent = body1b.indent = 8 + in + up;
  RowSplit rs;
  const bool split = sb && row_split(op, &rs);
  Buf body2 = {.indent = body1.indent}, body2b = {.indent = body1.indent};
  for (int v = uc ? 1 : 0; v >= 0; v--) {
    k.unsw = uc, k.unsw_val = v;
    const bool first = v == 1 || !uc;
    if (rb || !use->n_reds) {
      k.lanes = false, k.red_buf = rb;
      if (split) group_body_split(&k, first ? &body1 : &body1b, first ? &body2 : &body2b, op, &rs);
      else group_body(&k, first ? &body1 : &body1b, op);
    } else {
      group_body(&k, first ? &body8 : &body8b, op);
      group_body(&k, first ? &body6 : &body6b, op);
    }
  }
  k.unsw = NULL;
  Buf tbufs = {.indent = lanes.indent}, rowinit = {.indent = 8 + in + up}, pass = {.indent = 6 + in + up};
  Buf sapass = {.indent = 6 + in + up};
  if (sb) sa_text(u, &sab, &tbufs, &sapass);
  for (int i = 0; split && i < rs.n; i++) {
    Local *l = rs.carry[i];
    EMIT_SNIPPET(&tbufs, TM, "carry_decl", {"T", l->type == DT_BOOL ? "int" : gen_ctype(l->type)},
                 {"n", gen_int(u, i)}, {"SB", gen_int(u, RED_SUB)}, {"name", l->name});
  }
  for (int i = 0; i < use->n_reds; i++) {
    Decl *f = use->reds[i];
    EMIT_SNIPPET(&lanes_end, TM, "lane_end", {"L", L}, {"f", f->name},
                 {"combine", red_block(u, lanes_end.indent + 2, f->dtype, use->red_op[i],
                                       arena_printf(a, "r_%s[0]", f->name), arena_printf(a, "r_%s[cnp_l]", f->name))});
    if (!rb) continue;
    const char *ct = gen_ctype(f->dtype), *lane = arena_printf(a, "r_%s[cnp_l]", f->name),
               *slot = arena_printf(a, "cnp_t_%s[cnp_g + cnp_l]", f->name);
    EMIT_SNIPPET(&tbufs, TM, "tbuf_decl", {"T", ct}, {"f", f->name}, {"SB", gen_int(u, RED_SUB)});
    if (cond[i]) EMIT_SNIPPET(&rowinit, TM, "tbuf_init", {"f", f->name}, {"id", red_ident(f->dtype, use->red_op[i])});
    EMIT_SNIPPET(&pass, TM, "lane_pass", {"f", f->name}, {"L", L},
                 {"combine8", red_block(u, pass.indent + 6, f->dtype, use->red_op[i], lane, slot)},
                 {"combine1", red_block(u, pass.indent + 4, f->dtype, use->red_op[i], lane, slot)});
  }
  for (int i = 0; i < use->n_reds; i++) {
    Decl *f = use->reds[i];
    EMIT_SNIPPET(&partials, TM, "partial_host", {"f", f->name}, {"op", red_name(use->red_op[i])},
                 {"T", gen_ctype(f->dtype)}, {"id", red_ident(f->dtype, use->red_op[i])},
                 {"combine", red_block(u, 6, f->dtype, use->red_op[i], arena_printf(a, "r_%s", f->name),
                                       arena_printf(a, "A.rp_%s[cnp_c]", f->name))});
  }
  Buf chunk = {.indent = 4 + in};
  const char *lanes_s = buf_take(u, &lanes), *lanes_end_s = buf_take(u, &lanes_end);
  const char *tbufs_s = buf_take(u, &tbufs), *rowinit_s = buf_take(u, &rowinit), *pass_s = buf_take(u, &pass);
  const char *sapass_s = buf_take(u, &sapass);
  Buf simd = {.indent = 6 + in + up};   /* the rows' loop: independent rows (unit_host.tmpl) */
  if (sb) buf_line(&simd, "CNP_G_SIMD");
  const char *simd_s = buf_take(u, &simd);
  if (uc) {
    Buf c = {0};
    gen_ex(&k, &c, (Expr *)uc);
    buf_line(&chunk, "const int cnp_u = %s;  /* the same for every row: the loops in two versions */",
             buf_str(&c));
    buf_free(&c);
    buf_line(&chunk, "if (cnp_u) {");
    chunk.indent += 2;
  }
  for (int v = uc ? 1 : 0; v >= 0; v--) {
    if (v == 0 && uc) {
      chunk.indent -= 2;
      buf_line(&chunk, "} else {");
      chunk.indent += 2;
    }
    bool first = v == 1 || !uc;
    Buf second = {.indent = 6 + in + up};   /* the rows' second loop, when split */
    if (split) EMIT_SNIPPET(&second, TM, "split_loop", {"body", buf_take(u, first ? &body2 : &body2b)});
    if (rb || sb)
      EMIT_SNIPPET(&chunk, TM, "chunk_buf", {"CH", gen_int(u, RED_CHUNK)}, {"SB", gen_int(u, RED_SUB)},
                   {"lanes", lanes_s}, {"tbufs", tbufs_s}, {"rowinit", rowinit_s},
                   {"body", buf_take(u, first ? &body1 : &body1b)}, {"split", buf_take(u, &second)},
                   {"sapass", sapass_s}, {"simd", simd_s}, {"pass", pass_s}, {"lanes_end", lanes_end_s});
    else
      EMIT_SNIPPET(&chunk, TM, "chunk", {"CH", gen_int(u, RED_CHUNK)}, {"L", L}, {"lanes", lanes_s},
                   {"body8", buf_take(u, first ? &body8 : &body8b)}, {"body6", buf_take(u, first ? &body6 : &body6b)},
                   {"body", buf_take(u, first ? &body1 : &body1b)}, {"red", use->n_reds ? "1" : ""},
                   {"lanes_end", lanes_end_s});
  }
  if (uc) {
    chunk.indent -= 2;
    buf_line(&chunk, "}");
  }
  EMIT_SNIPPET(b, TM, "kernel_host", {"k", gen_int(u, op->kernel)}, {"nm", gen_int(u, op->n_maps)},
               {"s", op->n_maps > 1 ? "s" : ""}, {"CH", gen_int(u, RED_CHUNK)}, {"CH1", gen_int(u, RED_CHUNK - 1)},
               {"L", L}, {"n", u->name}, {"locals", buf_take(u, &locals)}, {"chunk", buf_take(u, &chunk)},
               {"partials", buf_take(u, &partials)},
               {"priv", pv ? "1" : ""}, {"pc", pv ? priv_chunks(u, use, true) : ""},
               {"pvinit", buf_take(u, &pvinit)}, {"pvsum", buf_take(u, &pvsum)},
               {"red", use->n_reds ? "1" : ""});
}

/* ======================================================================== CUDA */

/* The block tree of scalar f (a block at `indent`): sh_f[0] ends with the block's value. */
static const char *block_tree(GenUnit *u, int indent, Decl *f, int op) {
  Buf b = {.indent = indent};
  EMIT_SNIPPET(&b, TM, "block_tree", {"f", f->name}, {"half", gen_int(u, RED_BLOCK / 2)}, {"T", gen_ctype(f->dtype)},
               {"combine", red_block(u, indent + 4, f->dtype, op, "a",
                                     arena_printf(&u->cc->arena, "sh_%s[threadIdx.x + cnp_s]", f->name))});
  return buf_take(u, &b);
}

/* The end of a reducing kernel: each block's partial of every scalar. */
void red_kernel_cuda_tail(GenUnit *u, Buf *b, GenOp *op, KUse *use) {
  (void)op;
  if (use->n_reds) EMIT_SNIPPET(b, TM, "shared_cuda", {"B", gen_int(u, RED_BLOCK)});
  for (int i = 0; i < use->n_reds; i++) {
    Decl *f = use->reds[i];
    EMIT_SNIPPET(b, TM, "tail_cuda", {"f", f->name}, {"T", gen_ctype(f->dtype)}, {"m", dtype_name(f->dtype)},
                 {"next", i + 1 < use->n_reds ? "1" : ""}, {"tree", block_tree(u, b->indent + 2, f, use->red_op[i])});
  }
}

/* The second pass of a reducing kernel: one block combines the nb block partials (thread t
** the partials t, t + RED_BLOCK, ... in order, then the tree) into the scalar. */
void red_combine_cuda(GenUnit *u, Buf *b, GenOp *op, KUse *use) {
  Buf sc = {.indent = 2};
  for (int i = 0; i < use->n_reds; i++) {
    Decl *f = use->reds[i];
    EMIT_SNIPPET(&sc, TM, "combine_scalar", {"f", f->name}, {"T", gen_ctype(f->dtype)},
                 {"B", gen_int(u, RED_BLOCK)}, {"m", dtype_name(f->dtype)}, {"next", i + 1 < use->n_reds ? "1" : ""}, {"id", red_ident(f->dtype, use->red_op[i])},
                 {"combine", red_block(u, 6, f->dtype, use->red_op[i], arena_printf(&u->cc->arena, "r_%s", f->name),
                                       arena_printf(&u->cc->arena, "A.rp_%s[c]", f->name))},
                 {"tree", block_tree(u, 4, f, use->red_op[i])});
  }
  Buf sh = {.indent = 2};
  EMIT_SNIPPET(&sh, TM, "shared_cuda", {"B", gen_int(u, RED_BLOCK)});
  EMIT_SNIPPET(b, TM, "combine_cuda", {"k", gen_int(u, op->kernel)}, {"n", u->name}, {"shared", buf_take(u, &sh)},
               {"scalars", buf_take(u, &sc)});
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
  for (int i = 0; i < n; i++) EMIT_SNIPPET(b, TM, "struct_rp", {"f", rs[i]->name});
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_FIELD && d->history_of.name) EMIT_SNIPPET(b, TM, "struct_hc", {"f", d->name});
  for (int id = 0; scan_op(u, id); id++)
    EMIT_SNIPPET(b, TM, "struct_sp", {"id", gen_int(u, id)}, {"line", gen_int(u, scan_op(u, id)->stmt->loc.line)});
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      KUse use;
      if (op->kind != GOP_MAP) continue;
      group_use(u, op, &use);
      for (int f = 0; f < use.n_privs; f++)
        EMIT_SNIPPET(b, TM, "struct_pv", {"k", gen_int(u, op->kernel)}, {"f", use.privs[f]->name});
    }
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++)
      if (u->steps[i].ops[o].stmt->kind == ST_APPEND)
        EMIT_SNIPPET(b, TM, "struct_ap", {"k", gen_int(u, u->steps[i].ops[o].kernel)},
                     {"line", gen_int(u, u->steps[i].ops[o].stmt->loc.line)});
}

/* append N (COUNT) map i { ... }: the rows [n, n + COUNT) clamped to the capacity, their
** kernel, the new extent; more rows than the capacity is CNP_EOVERFLOW from step() after the
** rows that fit (none past the capacity is written). */
void red_step_append(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  Decl *d = s->over.decl;
  (void)t;
  Buf call = {.indent = b->indent + 2};
  try_call(u, &call, s->loc, "%s_k%d(p, S)", u->name, op->kernel);
  const char *msg = arena_printf(&u->cc->arena, "%s:%d: append %s: more rows than its capacity (the rows "
                                 "that fit were added)", base_name(s->loc.file->path), s->loc.line, d->name);
  EMIT_SNIPPET(b, TM, "append", {"d", d->name}, {"k", gen_int(u, op->kernel)}, {"count", append_count_str(u, s->value, "p->")},
               {"call", buf_take(u, &call)}, {"n", u->name}, {"msg", cstr(u, msg)});
}

static void alloc_line(GenUnit *u, Buf *b, const char *arr, const char *dt, const char *n,
                       const char *what) {
  EMIT_SNIPPET(b, TM, "alloc", {"arr", arr}, {"dt", dt}, {"len", n}, {"n", u->name}, {"what", what});
}

/* Rows a map runs over at most: a dim's capacity, a setup param, a constant. */
static const char *map_rows(GenUnit *u, Stmt *map) {
  Decl *over = map->over.decl;
  if (map->gndim) return grid_points(u, map);   /* a grid map: its points */
  if (over->kind == DECL_DIM) return arena_printf(&u->cc->arena, "p->cap_%s", over->name);
  if (over->kind == DECL_PARAM) return arena_printf(&u->cc->arena, "(int64_t)p->P_%s", over->name);
  return gen_int(u, over->ival);
}

void red_setup(GenUnit *u, Buf *b) {
  Arena *a = &u->cc->arena;
  Decl *rs[256];
  int n = reduced_scalars(u, rs, 256);
  for (int i = 0; i < n; i++) {
    const char *rows = "1";
    for (int s = 0; s < u->n_steps; s++)
      for (int o = 0; o < u->steps[s].n_ops; o++) {
        GenOp *op = &u->steps[s].ops[o];
        if (op->kind != GOP_MAP || !red_group(op)) continue;
        KUse use;
        group_use(u, op, &use);
        for (int r = 0; r < use.n_reds; r++)
          if (use.reds[r] == rs[i]) {
            const char *m = map_rows(u, op->stmt);
            rows = arena_printf(a, "(%s > %s ? %s : %s)", m, rows, m, rows);
          }
      }
    /* RED_BLOCK-row blocks on CUDA, RED_CHUNK-row chunks on the host: the former are more */
    alloc_line(u, b, arena_printf(a, "rp_%s", rs[i]->name), gen_cnp_dtype(rs[i]->dtype),
               arena_printf(a, "%s / %d + 1", rows, RED_BLOCK),
               arena_printf(a, "partials of scalar %s", rs[i]->name));
  }
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_FIELD && d->history_of.name)
      alloc_line(u, b, arena_printf(a, "hc_%s", d->name), "CNP_UINT64", "1",
                 arena_printf(a, "counter of history %s", d->name));
  for (int s = 0; s < u->n_steps; s++)
    for (int o = 0; o < u->steps[s].n_ops; o++) {
      GenOp *op = &u->steps[s].ops[o];
      KUse use;
      if (op->kind != GOP_MAP) continue;
      group_use(u, op, &use);
      const char *pc = priv_chunks(u, &use, false);
      for (int f = 0; f < use.n_privs; f++) {
        Decl *d = use.privs[f];
        alloc_line(u, b, arena_printf(a, "pv_k%d_%s", op->kernel, d->name), gen_cnp_dtype(d->dtype),
                   arena_printf(a, "((%s + %d) / %d + %s - 1) / %s * %s", map_rows(u, op->stmt), RED_CHUNK - 1,
                                RED_CHUNK, pc, pc, priv_elems(u, d, false)),
                   arena_printf(a, "the blocks' copies of %s (kernel %d)", d->name, op->kernel));
      }
    }
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
  for (int i = 0; i < n; i++) EMIT_SNIPPET(b, TM, "free", {"arr", arena_printf(&u->cc->arena, "rp_%s", rs[i]->name)});
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_FIELD && d->history_of.name)
      EMIT_SNIPPET(b, TM, "free", {"arr", arena_printf(&u->cc->arena, "hc_%s", d->name)});
  for (int id = 0; scan_op(u, id); id++) EMIT_SNIPPET(b, TM, "free", {"arr", arena_printf(&u->cc->arena, "sp_%d", id)});
  for (int s = 0; s < u->n_steps; s++)
    for (int o = 0; o < u->steps[s].n_ops; o++) {
      GenOp *op = &u->steps[s].ops[o];
      KUse use;
      if (op->kind != GOP_MAP) continue;
      group_use(u, op, &use);
      for (int f = 0; f < use.n_privs; f++)
        EMIT_SNIPPET(b, TM, "free", {"arr", arena_printf(&u->cc->arena, "pv_k%d_%s", op->kernel, use.privs[f]->name)});
    }
}

void red_lookup(GenUnit *u, Buf *b) {
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_FIELD && d->history_of.name) EMIT_SNIPPET(b, TM, "lookup_history", {"d", d->name});
}

/* ======================================================================== helpers */

static const char *suffix(DType t) { return dtype_name(t); }

void red_helpers(GenUnit *u, const GenTarget *t, Buf *b) {
  bool seen[DT__COUNT] = {false}, any_scan = false, any_hist = false, any_red = false;
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) any_red = any_red || red_group(&u->steps[i].ops[o]);
  if (any_red) emit_snippet(b, TM, "lanes", NULL, 0);
  for (int id = 0; scan_op(u, id); id++) {
    DType dt = scan_op(u, id)->stmt->a.decl->dtype;
    any_scan = true;
    if (seen[dt]) continue;
    seen[dt] = true;
    const char *ct = gen_ctype(dt), *ut = wrap_type(dt);
    EMIT_SNIPPET(b, TM, "scan_host", {"T", ct}, {"UT", ut ? ut : ct}, {"SUF", suffix(dt)},
                 {"CH", gen_int(u, SCAN_CHUNK)}, {"TW", gen_int(u, SCAN_TILE)});
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
  bool both = t->device && !graph;   /* chosen by the backend at run time */
  Buf push = {.indent = b->indent + (both ? 4 : 2)}, host = {.indent = b->indent + (t->device ? 4 : 2)};
  if (t->device) {
    Buf call = {.indent = push.indent};
    if (!graph) try_call(u, &call, s->loc, "cnp_g_launched()");
    EMIT_SNIPPET(&push, TM, "history_push", {"T", ct}, {"s", sc->name}, {"h", h->name},
                 {"graph", graph ? "1" : ""}, {"call", buf_take(u, &call)});
  }
  if (!graph) EMIT_SNIPPET(&host, TM, "history_host", {"T", ct}, {"s", sc->name}, {"h", h->name});
  EMIT_SNIPPET(b, TM, "history", {"h", h->name}, {"s", sc->name}, {"K", expr_src(u, h->shape.ext[0])},
               {"cuda", both ? "1" : ""}, {"push", buf_take(u, &push)}, {"host", buf_take(u, &host)},
               {"launch", graph ? "" : "1"});
}

void red_step_scan(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, bool graph) {
  Stmt *s = op->stmt;
  Decl *x = s->a.decl, *y = s->b.decl, *dim = NULL;
  const char *ct = gen_ctype(x->dtype), *ut = wrap_type(x->dtype);
  gen_decl_is_dim_extent(x, &dim);
  bool both = t->device && !graph;
  Buf call = {.indent = b->indent + 2};
  if (both) try_call(u, &call, s->loc, "sst");
  EMIT_SNIPPET(b, TM, "scan", {"kind", s->inclusive ? "inclusive" : "exclusive"}, {"x", x->name}, {"y", y->name},
               {"T", ct}, {"UT", ut ? ut : ct}, {"ax", gen_int(u, x->shape.rank - 1)}, {"id", gen_int(u, op->scan_id)},
               {"CH", gen_int(u, SCAN_CHUNK)}, {"CH1", gen_int(u, SCAN_CHUNK - 1)},
               {"dn", dim ? arena_printf(&u->cc->arena, "(const int64_t *)p->dn_%s.data", dim->name) : "NULL"},
               {"incl", gen_int(u, s->inclusive)}, {"live", live_extent(u, x)}, {"graph", graph ? "1" : ""},
               {"cuda", both ? "1" : ""}, {"host", !t->device && !graph ? "1" : ""}, {"call", buf_take(u, &call)},
               {"suf", suffix(x->dtype)}, {"pre", op->scan_by ? gen_int(u, op->scan_by->kernel) : ""},
               {"rest", op->scan_by ? "rest_" : ""});
}

/* ======================================================================== the header */

void red_header(GenUnit *u, Buf *b) {
  bool scalars = false, hist = false;
  for (Decl *d = u->cc->decls; d; d = d->next) {
    scalars = scalars || (d->kind == DECL_FIELD && d->scalar);
    hist = hist || (d->kind == DECL_FIELD && d->history_of.name);
  }
  if (!scalars) return;
  /* NAME_scalar() accepts only the scalars' names (a one-element field is not a scalar). */
  Buf names = {0};
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_FIELD && d->scalar) buf_printf(&names, "%s\"%s\"", names.n ? ", " : "", d->name);
  EMIT_SNIPPET(b, TM, "header_scalar", {"n", u->name}, {"names", buf_take(u, &names)});
  if (hist) EMIT_SNIPPET(b, TM, "header_history", {"n", u->name});
}

/* ------------------------------------------------------------------ allreduce S, ...; */

/* The bytes of an allreduce's scalars, one after the other. */
static int allreduce_bytes(const Stmt *s) {
  int nb = 0;
  for (int i = 0; i < s->list.n; i++) nb += (int)dtype_size(s->list.v[i].decl->dtype);
  return nb;
}

#define FOR_ALLREDUCE(u, op)                                  \
  for (int s_ = 0; s_ < (u)->n_steps; s_++)                   \
    for (int o_ = 0; o_ < (u)->steps[s_].n_ops; o_++)         \
      for (GenOp *op = &(u)->steps[s_].ops[o_]; op; op = NULL) \
        if (op->stmt->kind == ST_ALLREDUCE)

void red_allreduce_struct(GenUnit *u, Buf *b) {
  FOR_ALLREDUCE(u, op)
    buf_line(b, "unsigned char *ar_%d;  /* allreduce (%s:%d): every rank's %d bytes of scalars */", op->mpi_id,
             base_name(op->stmt->loc.file->path), op->stmt->loc.line, allreduce_bytes(op->stmt));
}

void red_allreduce_setup(GenUnit *u, Buf *b) {
  FOR_ALLREDUCE(u, op)
    EMIT_SNIPPET(b, TM, "allreduce_setup", {"id", gen_int(u, op->mpi_id)}, {"nb", gen_int(u, allreduce_bytes(op->stmt))},
                 {"file", base_name(op->stmt->loc.file->path)}, {"line", gen_int(u, op->stmt->loc.line)});
}

void red_allreduce_teardown(GenUnit *u, Buf *b) {
  FOR_ALLREDUCE(u, op) buf_line(b, "free(p->ar_%d);", op->mpi_id);
}

void red_step_allreduce(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  int nb = allreduce_bytes(s), id = op->mpi_id;
  Buf pack = {.indent = b->indent + 2}, comb = {.indent = b->indent + 2};
  (void)t;
  for (int i = 0, at = 0; i < s->list.n; i++) {
    Decl *f = s->list.v[i].decl;
    const char *T = gen_ctype(f->dtype);
    int op_ = s->red_ops[i];
    buf_line(&pack, "memcpy(cnp_mine + %d, p->f_%s.data, sizeof(%s));", at, f->name, T);
    const char *v;
    if (op_ == RED_SUM && dtype_is_int(f->dtype))   /* wrapping, as the maps' sums */
      v = arena_printf(&u->cc->arena, "(%s)((uint64_t)cnp_v + (uint64_t)cnp_w)", T);
    else if (op_ == RED_SUM) v = "cnp_v + cnp_w";
    else v = op_ == RED_MIN ? "cnp_w < cnp_v ? cnp_w : cnp_v" : "cnp_w > cnp_v ? cnp_w : cnp_v";
    EMIT_SNIPPET(&comb, TM, "allreduce_combine", {"T", T}, {"f", f->name}, {"id", gen_int(u, id)},
                 {"at", gen_int(u, at)}, {"nb", gen_int(u, nb)}, {"v", v},
                 {"op", op_ == RED_SUM ? "+" : op_ == RED_MIN ? "min" : "max"});
    at += (int)dtype_size(f->dtype);
  }
  Buf names = {0};
  for (int i = 0; i < s->list.n; i++) buf_printf(&names, "%s%s", i ? ", " : "", s->list.v[i].decl->name);
  Buf call = {.indent = b->indent + 2};
  try_call(u, &call, s->loc, "cnp_comm_allgather(p->comm, cnp_mine, %d, p->ar_%d)", nb, id);
  EMIT_SNIPPET(b, TM, "allreduce", {"names", buf_take(u, &names)}, {"nb", gen_int(u, nb)},
               {"pack", buf_take(u, &pack)}, {"call", buf_take(u, &call)}, {"combine", buf_take(u, &comb)});
}
