/*
** gen_body.c -- map bodies and fused group bodies, which every target shares: the statements
** of a map (lets, stores, scatter-adds, reductions, ifs) written through gen_expr.c's
** expression emitter, what a kernel uses (fields, params, dims, reductions, privatized
** scatter-add targets: KUse), and the unswitching of step-invariant conditions in host
** reducing kernels (gen_red.c).
*/
#include "gen.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================== kernel uses */
static void kuse_add(Arena *a, Decl ***v, int *n, int *cap, Decl *d) {
  for (int i = 0; i < *n; i++)
    if ((*v)[i] == d) return;
  *v = arena_grow(a, *v, *n, cap, 16, sizeof **v);
  (*v)[(*n)++] = d;
}

static void kuse_expr(KUse *k, Expr *e) {
  if (!e) return;
  if ((e->kind == EX_NAME || e->kind == EX_INDEX) && e->ref.decl) {
    Decl *d = e->ref.decl;
    if (d->kind == DECL_FIELD) kuse_add(k->arena, &k->fields, &k->n_fields, &k->cap_fields, d);
    else if (d->kind == DECL_PARAM) kuse_add(k->arena, &k->params, &k->n_params, &k->cap_params, d);
    else if (d->kind == DECL_DIM) kuse_add(k->arena, &k->dims, &k->n_dims, &k->cap_dims, d);
  }
  if (e->kind == EX_CALL && builtin_reads_step(e->builtin)) k->step = true;
  for (int i = 0; i < e->nargs; i++) kuse_expr(k, e->args[i]);
}

static void kuse_stmts(KUse *k, Stmt *s) {
  for (; s; s = s->next) {
    if (s->kind == ST_REDUCE) {
      Decl *f = s->target->ref.decl;
      int i = 0;
      while (i < k->n_reds && k->reds[i] != f) i++;
      if (i == k->n_reds) {
        int cap = k->cap_reds;   /* reds and red_op grow together */
        k->reds = arena_grow(k->arena, k->reds, k->n_reds, &cap, 16, sizeof *k->reds);
        k->red_op = arena_grow(k->arena, k->red_op, k->n_reds, &k->cap_reds, 16, sizeof *k->red_op);
        k->reds[k->n_reds] = f;
        k->red_op[k->n_reds++] = s->red;
      }
    }
    kuse_expr(k, s->target);
    kuse_expr(k, s->value);
    kuse_stmts(k, s->body);
    kuse_stmts(k, s->else_body);
  }
}

static bool expr_reads_local(Expr *e, Local *l) {
  if (!e) return false;
  if (e->kind == EX_NAME && e->ref.local == l) return true;
  for (int i = 0; i < e->nargs; i++)
    if (expr_reads_local(e->args[i], l)) return true;
  return false;
}

/* `l = l;` (also `l = T(l)` with T l's type): emitted as nothing (clang -Wself-assign). */
static bool is_self_assign(const Stmt *s) {
  if (s->kind != ST_ASSIGN || s->target->kind != EX_NAME || !s->target->ref.local) return false;
  const Expr *v = s->value;
  while (v->kind == EX_CAST && v->cast_to == s->target->ref.local->type) v = v->args[0];
  return v->kind == EX_NAME && v->ref.local == s->target->ref.local;
}

/* Is l read as a value? (Not by `l = l;`, and `l += e` only sets it: a let set and never
** read is declared unused, for clang -Wunused-but-set-variable and nvcc #550-D.) */
static bool stmts_read_local_until(Stmt *s, const Stmt *until, Local *l) {
  for (; s != until; s = s->next) {
    if (is_self_assign(s)) continue;
    if (expr_reads_local(s->value, l)) return true;
    if (s->target && s->target->kind == EX_INDEX && expr_reads_local(s->target, l)) return true;
    if (stmts_read_local_until(s->body, NULL, l) || stmts_read_local_until(s->else_body, NULL, l)) return true;
  }
  return false;
}

static bool stmts_read_local(Stmt *s, Local *l) { return stmts_read_local_until(s, NULL, l); }

/* Do statements s up to `until` read l or set it (l = ..., l += ...)? */
static bool stmts_mention_local(Stmt *s, const Stmt *until, Local *l) {
  for (; s != until; s = s->next) {
    if (stmts_read_local_until(s, s->next, l)) return true;
    if (s->target && s->target->kind == EX_NAME && s->target->ref.local == l) return true;
    if (stmts_mention_local(s->body, NULL, l) || stmts_mention_local(s->else_body, NULL, l)) return true;
  }
  return false;
}


/* ======================================================================== map bodies */

static void map_stmts(KCtx *k, Buf *b, Stmt *s, Stmt *whole);

/* let NAME = E: a local of the let's C type (f16 lets hold f16 values in f32). */
static void map_let(KCtx *k, Buf *b, Stmt *s, Stmt *whole) {
  Buf t = {0};
  DType lt = s->let->type;
  if (lt == DT_F16) gen_ex_f16(k, &t, s->value);              /* f16 lets hold f16 values */
  else if (dtype_is_complex(lt)) gen_ex_as(k, &t, s->value, lt);
  else gen_ex(k, &t, s->value);
  /* a let nothing reads: `(void)l;` is enough for gcc and clang, not for nvcc (#550-D
  ** set but never used, when its value is a constant): the attribute is, for all three */
  const char *unused = stmts_read_local(whole, s->let) ? "" : " __attribute__((unused))";
  if (gen_converted_type(lt))
    buf_line(b, "%s l_%s%s = %s;", gen_vtype(lt), s->let->name, unused, buf_str(&t));
  else
    buf_line(b, "%s l_%s%s = (%s)%s;", lt == DT_BOOL ? "int" : gen_ctype(lt), s->let->name, unused,
             lt == DT_BOOL ? "int" : gen_ctype(lt), buf_str(&t));
  buf_free(&t);
}

/* T = V or T += V: into a let, an element (f16: rounded once per store), a dry-pass row
** local, a block's private copy (privatized scatter-add) or atomically (a scatter-add). */
static void map_store(KCtx *k, Buf *b, Stmt *s) {
  if (is_self_assign(s)) {                      /* l = l: nothing to do */
    buf_line(b, "/* %s = %s: nothing to do */", s->target->ref.name, s->target->ref.name);
    return;
  }
  Buf t = {0}, v = {0};
  Expr *tg = s->target;
  DType tt = tg->kind == EX_INDEX ? tg->ref.decl->dtype : tg->ref.local->type;
  Expr *val = s->value;
  /* f16(x) stored into f16: the store rounds x itself (rounding twice changes nothing);
  ** not in a `+=`, whose store rounds h + x, not x (found, f16_arg_round) */
  if (tt == DT_F16 && tg->kind == EX_INDEX && s->kind == ST_ASSIGN && val->kind == EX_CAST &&
      val->cast_to == DT_F16 &&
      val->args[0]->type != DT_F64 && !dtype_is_complex(val->args[0]->type)) {
    if (val->args[0]->type != DT_F16) buf_puts(&v, "(float)");
    gen_ex(k, &v, val->args[0]);
  } else if (gen_converted_type(tt)) gen_ex_as(k, &v, val, tt);
  else gen_ex(k, &v, val);
  const char *ct = tt == DT_BOOL ? (tg->kind == EX_INDEX ? "uint8_t" : "int") : gen_ctype(tt);
  if (tg->kind == EX_INDEX && gen_row_local(k, tg)) {   /* dry pass: the row's local */
    buf_puts(&t, gen_row_local(k, tg));
  } else if (tg->kind == EX_INDEX) {        /* the element itself (f16: its bits) */
    buf_printf(&t, "f_%s[", tg->ref.decl->name);
    gen_lin_index(k, &t, tg);
    buf_puts(&t, "]");
  } else {
    gen_ex(k, &t, tg);
  }
  const char *T = buf_str(&t), *V = buf_str(&v);
  bool add = s->kind == ST_ADD;
  if (tt == DT_F16 && tg->kind == EX_INDEX) {   /* rounded to f16 once per store */
    if (add && s->scatter) buf_line(b, "cnp_g_hadd(&%s, %s);", T, V);
    else if (add) buf_line(b, "%s = cnp_g_f2h(cnp_g_h2f(%s) + %s);", T, T, V);
    else buf_line(b, "%s = cnp_g_f2h(%s);", T, V);
  } else if (tt == DT_F16) {                    /* an f16 let */
    if (add) buf_line(b, "%s = cnp_g_hround(%s + %s);", T, T, V);
    else if (s->value->type == DT_F16 && !gen_is_f16_variable(s->value))
      buf_line(b, "%s = cnp_g_hround(%s);", T, V);
    else buf_line(b, "%s = %s;", T, V);
  } else if (dtype_is_complex(tt)) {
    if (add && s->scatter)
      buf_line(b, "cnp_g_cadd%s(&%s, %s);", tt == DT_C64 ? "64" : "128", T, V);
    else
      buf_line(b, "%s %s %s;", T, add ? "+=" : "=", V);
  } else if (add && s->scatter && !k->run->device && kuse_priv(k->priv, tg->ref.decl)) {
    Buf pv = {0};                               /* the block's own copy (gen_red.c) */
    if (k->sab) {                               /* buffered: added after the sub-block */
      gen_lin_index(k, &pv, tg);
      sa_store(k, b, s, buf_str(&pv), ct, V);
    } else {
      buf_printf(&pv, "pv_%s[", tg->ref.decl->name);
      gen_lin_index(k, &pv, tg);
      buf_line(b, "%s] += (%s)%s;", buf_str(&pv), ct, V);
    }
    buf_free(&pv);
  } else if (add && s->scatter) {
    k->run->atomic_add(b, T, ct, V);
  } else if (add && signed_int(tt)) {           /* wraps like + (templates/int.tmpl) */
    buf_line(b, "%s = cnp_g_add_i%s(%s, (%s)%s);", T, gen_signed_int_bits(tt), T, ct, V);
  } else {
    buf_line(b, "%s %s (%s)%s;", T, add ? "+=" : "=", ct, V);
  }
  buf_free(&t);
  buf_free(&v);
}

/* if C { ... } else { ... } */
static void map_if(KCtx *k, Buf *b, Stmt *s, Stmt *whole) {
  Buf c = {0};
  gen_ex(k, &c, s->value);
  const char *cs = buf_str(&c);
  size_t n = strlen(cs);
  int depth = 0;
  bool outer = n >= 2 && cs[0] == '(' && cs[n - 1] == ')';   /* ((a == b)): clang
                                                   ** -Wparentheses-equality; one pair only */
  for (size_t i = 0; outer && i + 1 < n; i++) {
    depth += cs[i] == '(' ? 1 : cs[i] == ')' ? -1 : 0;
    if (depth == 0) outer = false;              /* (a) && (b): not one pair */
  }
  if (outer) buf_line(b, "if %.*s {", (int)n, cs);
  else buf_line(b, "if (%s) {", cs);
  buf_free(&c);
  b->indent += 2;
  map_stmts(k, b, s->body, whole);
  b->indent -= 2;
  if (s->else_body) {
    buf_line(b, "} else {");
    b->indent += 2;
    map_stmts(k, b, s->else_body, whole);
    b->indent -= 2;
  }
  buf_line(b, "}");
}

static void map_stmt(KCtx *k, Buf *b, Stmt *s, Stmt *whole) {
  GenUnit *u = k->u;
  line_dir(u, b, s->loc);
  switch (s->kind) {
  case ST_LET: map_let(k, b, s, whole); return;
  case ST_ASSIGN:
  case ST_ADD: map_store(k, b, s); return;
  case ST_REDUCE: {
    Buf v = {0};
    DType tt = s->target->ref.decl->dtype;
    gen_ex_as(k, &v, s->value, tt);
    const char *val = arena_printf(&u->cc->arena, "(%s)(%s)", gen_ctype(tt), buf_str(&v));
    if (k->red_buf)   /* the lanes take it after the sub-block (gen_red.c, red_buffered) */
      red_store(b, arena_printf(&u->cc->arena, "cnp_t_%s[cnp_i - cnp_s]", s->target->ref.decl->name), val);
    else
      red_line(b, tt, s->red, arena_printf(&u->cc->arena, k->lanes ? "r_%s[cnp_l]" : "r_%s",
                                           s->target->ref.decl->name), val);
    buf_free(&v);
    return;
  }
  case ST_IF: map_if(k, b, s, whole); return;
  default: cnp_ice("statement kind %d inside a map", (int)s->kind);
  }
}

static void map_stmts_until(KCtx *k, Buf *b, Stmt *s, const Stmt *until, Stmt *whole) {
  for (; s != until; s = s->next) map_stmt(k, b, s, whole);
}

static void map_stmts(KCtx *k, Buf *b, Stmt *s, Stmt *whole) { map_stmts_until(k, b, s, NULL, whole); }

/* Does the emitted code of the dry pass read the map index? (Not in the elements held in
** locals: their last index is the map index.) */
static bool rows_expr_read_index(KCtx *k, Expr *e, Local *l) {
  if (!e) return false;
  if (e->kind == EX_NAME && e->ref.local == l) return true;
  if (e->kind == EX_INDEX && gen_row_local(k, e)) return false;
  for (int i = 0; i < e->nargs; i++)
    if (rows_expr_read_index(k, e->args[i], l)) return true;
  return false;
}

static bool rows_read_index(KCtx *k, Stmt *s, Local *l) {
  for (; s; s = s->next) {
    if (rows_expr_read_index(k, s->value, l) || rows_expr_read_index(k, s->target, l)) return true;
    if (rows_read_index(k, s->body, l) || rows_read_index(k, s->else_body, l)) return true;
  }
  return false;
}

void gen_map_body(KCtx *k, Buf *b, Stmt *map) {
  k->map = map;
  map_stmts(k, b, map->body, map->body);
  line_back(k->u, b);
}

/* ---- loop unswitching (host reducing kernels, gen_red.c) ---- */

/* Is field f written (assigned, added into or reduced into) by statements s? */
static bool stmts_write(const Stmt *s, const Decl *f) {
  for (; s; s = s->next) {
    if ((s->kind == ST_ASSIGN || s->kind == ST_ADD || s->kind == ST_REDUCE) && s->target &&
        s->target->ref.decl == f)
      return true;
    if (stmts_write(s->body, f) || stmts_write(s->else_body, f)) return true;
  }
  return false;
}

/* The value of an integer literal or integer const, else -1. */
static int64_t small_const(const Expr *e) {
  if (e->kind == EX_INT) return e->ival;
  if (e->kind == EX_NAME && !e->ref.local && e->ref.decl && e->ref.decl->kind == DECL_CONST &&
      dtype_is_int(e->ref.decl->dtype))
    return e->ref.decl->ival;
  return -1;
}

/* Is e the same for every row of the kernel: literals, consts, params, step_index() and
** elements of fields the group never writes, read at constant indices inside constant
** extents (so reading them once, before the loop, is always in bounds)? */
bool kernel_invariant(GenOp *op, const Expr *e) {
  switch (e->kind) {
  case EX_INT: case EX_FLOAT: case EX_BOOL: return true;
  case EX_NAME:
    return !e->ref.local && e->ref.decl &&
           (e->ref.decl->kind == DECL_CONST || e->ref.decl->kind == DECL_PARAM);
  case EX_INDEX: {
    Decl *f = e->ref.decl;
    if (!op || e->ref.local || !f || f->kind != DECL_FIELD || f->scalar || f->history_of.name ||
        e->nargs != f->shape.rank)
      return false;
    for (int i = 0; i < e->nargs; i++) {
      int64_t ix = small_const(e->args[i]), n = small_const(f->shape.ext[i]);
      if (ix < 0 || n < 0 || ix >= n) return false;
    }
    for (int m = 0; m < op->n_maps; m++)
      if (stmts_write(op->maps[m]->body, f)) return false;
    return true;
  }
  case EX_CALL:
    if (e->builtin == BI_STEP_INDEX) return true;
    if (builtin_is_draw(e->builtin) || e->builtin == BI_NONE) return false;
    /* fall through */
  case EX_UNARY: case EX_BINARY: case EX_CAST:
    for (int i = 0; i < e->nargs; i++)
      if (!kernel_invariant(op, e->args[i])) return false;
    return true;
  }
  return false;
}

/* The first select(c, a, b) or `if c` of the group's maps whose condition c is kernel-invariant
** and not a constant, else NULL. */
static const Expr *expr_invariant_cond(GenOp *op, const Expr *e) {
  if (!e) return NULL;
  if (e->kind == EX_CALL && e->builtin == BI_SELECT && !(e->args[0]->flags & EXF_CONST) &&
      kernel_invariant(op, e->args[0]))
    return e->args[0];
  for (int i = 0; i < e->nargs; i++) {
    const Expr *c = expr_invariant_cond(op, e->args[i]);
    if (c) return c;
  }
  return NULL;
}

static const Expr *stmts_invariant_cond(GenOp *op, const Stmt *s) {
  for (; s; s = s->next) {
    if (s->kind == ST_IF && s->value && !(s->value->flags & EXF_CONST) && kernel_invariant(op, s->value))
      return s->value;
    const Expr *c = expr_invariant_cond(op, s->value);
    if (!c && s->target) c = expr_invariant_cond(op, s->target);
    if (!c) c = stmts_invariant_cond(op, s->body);
    if (!c) c = stmts_invariant_cond(op, s->else_body);
    if (c) return c;
  }
  return NULL;
}

const Expr *group_invariant_cond(GenOp *op) {
  if (op->kind != GOP_MAP || op->fused_sort || op->stmt->kind == ST_APPEND) return NULL;
  for (int m = 0; m < op->n_maps; m++) {
    if (op->maps[m]->kind != ST_MAP || op->maps[m]->gndim) return NULL;
  }
  for (int m = 0; m < op->n_maps; m++) {
    const Expr *c = stmts_invariant_cond(op, op->maps[m]->body);
    if (c) return c;
  }
  return NULL;
}

/* The per-element code of a fused group: each map in its own block. */
void group_body(KCtx *k, Buf *b, GenOp *op) {
  for (int m = 0; m < op->n_maps; m++) {
    Stmt *map = op->maps[m];
    k->map = map;
    buf_line(b, "{ /* %s:%d: %s */", base_name(map->loc.file->path), map->loc.line,
             src_line(k->u, map->loc));
    b->indent += 2;
    if (map->kind == ST_APPEND) {   /* the new rows: global row, and row within them */
      buf_line(b, "const int64_t l_%s = %s + cnp_i;", map->index->name,
               k->run->device ? "cnp_first" : "A.first");   /* CUDA: first read on the device */
      if (map->let) buf_line(b, "const int64_t l_%s = cnp_i;", map->let->name);
      if (map->let && !stmts_read_local(map->body, map->let)) buf_line(b, "(void)l_%s;", map->let->name);
    } else if (map->gndim) {   /* a reducing grid map: its point from cnp_i (gen_grid.c) */
      grid_prologue(k, b, map);
    } else {
      buf_line(b, "const int64_t l_%s = cnp_i;", map->index->name);
    }
    if (map->gndim) {
    } else if (!stmts_read_local(map->body, map->index) || (k->rows && !rows_read_index(k, map->body, map->index)))
      buf_line(b, "(void)l_%s;", map->index->name);
    map_stmts(k, b, map->body, map->body);
    line_back(k->u, b);
    b->indent -= 2;
    buf_line(b, "} /* map %s */", map->index->name);
  }
}

/* ---- the rows' loop in two (host kernels whose scatter-adds are buffered, gen_red.c) ---- */

/* Statements counted with the statements of their bodies: the work of a part. */
static int stmts_weight(const Stmt *s, const Stmt *until) {
  int w = 0;
  for (; s != until; s = s->next) w += 1 + stmts_weight(s->body, NULL) + stmts_weight(s->else_body, NULL);
  return w;
}

/* A local the first loop can hand to the second through a buffer: a plain C scalar (f16
** and complex lets are held in other forms, gen_converted_type()). */
static bool carry_type(DType t) { return !gen_converted_type(t) && t != DT_F16 && !dtype_is_complex(t); }

/* The carries of a cut before statement c of body: the top-level lets before c that the
** statements from c on read or set; false if there are more than SPLIT_CARRY_MAX or one is
** not carry_type(). */
static bool split_carry(Stmt *body, Stmt *c, RowSplit *rs) {
  rs->cut = c, rs->n = 0;
  for (Stmt *s = body; s != c; s = s->next) {
    if (s->kind != ST_LET || !stmts_mention_local(c, NULL, s->let)) continue;
    if (rs->n == SPLIT_CARRY_MAX || !carry_type(s->let->type)) return false;
    rs->carry[rs->n++] = s->let;
  }
  return true;
}

/* Where to cut the rows' loop of a one-map host kernel whose scatter-adds are buffered:
** one row's chain of dependent operations (a gather's index from a load, the push from the
** gather, the new index from the push) is longer than the core's window of instructions
** in flight holds for several rows, so two loops over the sub-block, each with half the
** chain, overlap more rows. The cut is at a top-level statement: the one that leaves the
** two parts the most even (the smaller part the largest), then the fewest carries; none
** when the smaller part would have fewer than SPLIT_MIN statements. Each part runs for
** every row in row order, a row's second part after its first, and the scatter-adds and
** reductions keep their buffers: the same operations in the same order per row, the same
** bits. (A map never gathers a field it writes, sema_stmt.c, so no row's second part reads
** what another row's first part wrote.) docs/codegen.md, "The rows' loop in two". */
bool row_split(const GenOp *op, RowSplit *rs) {
  if (op->kind != GOP_MAP || op->n_maps != 1 || op->maps[0]->kind != ST_MAP || op->maps[0]->gndim) return false;
  Stmt *body = op->maps[0]->body;
  const int total = stmts_weight(body, NULL);
  int best = SPLIT_MIN - 1, best_n = 0;
  Stmt *best_cut = NULL;
  for (Stmt *c = body ? body->next : NULL; c; c = c->next) {
    RowSplit t;
    if (!split_carry(body, c, &t)) continue;
    const int w1 = stmts_weight(body, c), w = w1 < total - w1 ? w1 : total - w1;
    if (w > best || (w == best && best_cut && t.n < best_n)) best = w, best_n = t.n, best_cut = c;
  }
  return best_cut && split_carry(body, best_cut, rs);
}

/* The map's block of one part: the row's index (cast to void when the part does not read
** it), the carries' loads (second part), statements [from, until), the carries' stores
** (first part). */
static void split_part(KCtx *k, Buf *b, Stmt *map, Stmt *from, const Stmt *until, const RowSplit *rs, bool first) {
  GenUnit *u = k->u;
  buf_line(b, "{ /* %s:%d: %s%s */", base_name(map->loc.file->path), map->loc.line, src_line(u, map->loc),
           first ? ": the rows' first part" : ": the rows' second part");
  b->indent += 2;
  buf_line(b, "const int64_t l_%s = cnp_i;", map->index->name);
  if (!stmts_read_local_until(from, until, map->index)) buf_line(b, "(void)l_%s;", map->index->name);
  for (int i = 0; !first && i < rs->n; i++) {
    Local *l = rs->carry[i];
    EMIT_SNIPPET(b, "reduce", "carry_load", {"T", l->type == DT_BOOL ? "int" : gen_ctype(l->type)}, {"name", l->name},
                 {"n", gen_int(u, i)}, {"unused", stmts_read_local(from, l) ? "" : " __attribute__((unused))"});
  }
  map_stmts_until(k, b, from, until, map->body);
  line_back(u, b);
  for (int i = 0; first && i < rs->n; i++)
    EMIT_SNIPPET(b, "reduce", "carry_store", {"name", rs->carry[i]->name}, {"n", gen_int(u, i)});
  b->indent -= 2;
  buf_line(b, "} /* map %s */", map->index->name);
}

void group_body_split(KCtx *k, Buf *b1, Buf *b2, GenOp *op, const RowSplit *rs) {
  Stmt *map = op->maps[0];
  k->map = map;
  split_part(k, b1, map, map->body, rs->cut, rs, true);
  split_part(k, b2, map, rs->cut, NULL, rs, false);
}

/* The f32/f64 fields scatter-added into (F[K[i]] += v), each once: on the host each block of
** rows adds into its own zeroed copy, so the sums do not depend on the threads. Integer
** additions are exact in any order (they stay atomic), f16 rounds at each addition and
** complex adds stay atomic too. */
static void priv_stmts(KUse *k, Stmt *s) {
  for (; s; s = s->next) {
    if (s->kind == ST_ADD && s->scatter && s->target->kind == EX_INDEX &&
        (s->target->ref.decl->dtype == DT_F32 || s->target->ref.decl->dtype == DT_F64)) {
      kuse_add(k->arena, &k->privs, &k->n_privs, &k->cap_privs, s->target->ref.decl);
    }
    priv_stmts(k, s->body);
    priv_stmts(k, s->else_body);
  }
}

/* Is f one of the group's privatized scatter-add targets? */
bool kuse_priv(const KUse *use, const Decl *f) {
  for (int i = 0; use && i < use->n_privs; i++)
    if (use->privs[i] == f) return true;
  return false;
}

void group_use(GenUnit *u, GenOp *op, KUse *use) {
  memset(use, 0, sizeof *use);
  use->arena = &u->cc->arena;
  use->kernel = op->kernel;
  for (int m = 0; m < op->n_maps; m++) kuse_stmts(use, op->maps[m]->body);
  if (op->kind == GOP_MAP && !op->fused_sort && op->stmt->kind != ST_APPEND)
    for (int m = 0; m < op->n_maps; m++) priv_stmts(use, op->maps[m]->body);
}
