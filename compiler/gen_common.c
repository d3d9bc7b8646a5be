/*
** gen_common.c -- what the emitters share apart from the expressions: source locations
** (#line directives, source comments), setup-time expressions (extents, plan sizes, their
** overflow-checked form), kernel argument structs and their filling from the object, the
** CNP_G_TRY wrapper of runtime calls, and small text helpers.
*/
#include "gen.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ======================================================================== locations */

/* The dim that is a field's element axis, or NULL for a fixed extent. */
bool gen_decl_is_dim_extent(Decl *f, Decl **dim) {
  Expr *e = f->shape.rank ? f->shape.ext[f->shape.rank - 1] : NULL;
  Decl *d = (e && e->kind == EX_NAME && e->ref.decl && e->ref.decl->kind == DECL_DIM)
                ? e->ref.decl : NULL;
  if (dim) *dim = d;
  return d != NULL;
}

/* The mirror whose device copy field f is, or NULL. */
Decl *mirror_of(GenUnit *u, Decl *f) {
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_MIRROR && d->target.decl == f) return d;
  return NULL;
}

/* C expression for the live extent of a field's element axis. */
const char *live_extent(GenUnit *u, Decl *f) {
  Decl *dim;
  if (gen_decl_is_dim_extent(f, &dim)) return arena_printf(&u->cc->arena, "p->n_%s", dim->name);
  return arena_printf(&u->cc->arena, "p->f_%s.shape[%d]", f->name, f->shape.rank - 1);
}

/* Source text of line `line` of a file, trimmed, with a trailing '{' dropped and comment
** closers defused. */
const char *src_line(GenUnit *u, Loc loc) {
  const char *s = loc.file->src;
  for (int l = 1; l < loc.line && *s; s++)
    if (*s == '\n') l++;
  const char *e = s;
  while (*e && *e != '\n') e++;
  while (s < e && isspace((unsigned char)*s)) s++;
  for (const char *q = s; q < e; q++)
    if (*q == '#') {
      e = q;
      break;
    }
  while (e > s && (isspace((unsigned char)e[-1]) || e[-1] == '{')) e--;
  char *t = arena_strndup(&u->cc->arena, s, (size_t)(e - s));
  for (char *q = t; *q; q++)
    if (q[0] == '*' && q[1] == '/') q[1] = '|';
  return t;
}

/* Comment "/ * pic.cnp:42: compact alive (x, v) * /" followed by a #line directive. */
void comment_loc(GenUnit *u, Buf *b, Loc loc) {
  buf_line(b, "/* %s:%d: %s */", base_name(loc.file->path), loc.line, src_line(u, loc));
}

void line_dir(GenUnit *u, Buf *b, Loc loc) {
  if (u->opt->no_line) return;
  buf_printf(b, "#line %d \"%s\"\n", loc.line,
             loc.file->id == 0 ? u->src_path : loc.file->path);
}

/* A marker that gen.c replaces by "#line <next line> "<output file>"". */
void line_back(GenUnit *u, Buf *b) {
  if (u->opt->no_line) return;
  buf_puts(b, "#line @@CNP_LINE_BACK@@\n");
}
/* ======================================================================== setup-time expressions */

/* Extents and plan sizes: literals, consts, dims (capacity), setup params, + - *, and (an
** append's count) per-step params, min max abs and integer casts. `pfx` is
** "p->" or "cfg->" (then dims and params are the config's members). */
static void setup_node(GenUnit *u, Buf *b, Expr *e, const char *pfx);

void setup_expr(GenUnit *u, Buf *b, Expr *e, const char *pfx) {
  if ((e->kind == EX_BINARY || e->kind == EX_UNARY) && e->type == DT_I32) {
    /* an i32 operation (an append's count of i32 params) wraps in i32, as in maps */
    buf_puts(b, "((int64_t)(int32_t)");
    setup_node(u, b, e, pfx);
    buf_puts(b, ")");
    return;
  }
  setup_node(u, b, e, pfx);
}

static void setup_node(GenUnit *u, Buf *b, Expr *e, const char *pfx) {
  bool cfg = strcmp(pfx, "cfg->") == 0;
  switch (e->kind) {
  case EX_INT: fmt_int(b, e->ival, DT_I64); return;
  case EX_NAME: {
    Decl *d = e->ref.decl;
    if (!d && !e->ref.local && (!strcmp(e->ref.name, "rank") || !strcmp(e->ref.name, "size"))) {
      buf_printf(b, "(int64_t)p->%s", e->ref.name);   /* exchange ranks: after the comm */
      return;
    }
    if (!d) break;
    if (d->kind == DECL_CONST) {
      fmt_int(b, d->ival, DT_I64);
      return;
    }
    if (d->kind == DECL_DIM) {
      buf_printf(b, cfg ? "cfg->%s" : "p->cap_%s", d->name);
      return;
    }
    if (d->kind == DECL_PARAM) {
      buf_printf(b, cfg ? "(int64_t)cfg->%s" : "(int64_t)p->P_%s", d->name);
      return;
    }
    if (d->kind == DECL_GRID && d->grid->split) {   /* a split axis's local count (sema_grid.c) */
      if (cfg) setup_expr(u, b, d->grid->axis[d->grid->split_axis].ext, pfx);   /* (checks: the whole) */
      else buf_printf(b, "p->gsn_%s", d->name);
      return;
    }
    break;
  }
  case EX_UNARY:
    buf_puts(b, e->op == OP_BNOT ? "(~" : "(-");
    setup_expr(u, b, e->args[0], pfx);
    buf_puts(b, ")");
    return;
  case EX_BINARY: {
    /* exchange ranks: / % by 0 and shifts defined as in maps (templates/int.tmpl) */
    bool helper = e->op == OP_DIV || e->op == OP_MOD || e->op == OP_SHL || e->op == OP_SHR;
    if (helper && e->type == DT_U64) {   /* u64 (an append's count): the u64 operation */
      buf_printf(b, "(int64_t)cnp_g_%s_u64((uint64_t)", int_op_name(e->op));
      setup_expr(u, b, e->args[0], pfx);
      buf_puts(b, ", (uint64_t)");
      setup_expr(u, b, e->args[1], pfx);
      buf_puts(b, ")");
      return;
    }
    if (helper) buf_printf(b, "cnp_g_%s_i64(", int_op_name(e->op));
    else buf_puts(b, "(");
    setup_expr(u, b, e->args[0], pfx);
    if (helper) buf_puts(b, ", ");
    else buf_printf(b, " %s ", op_text(e->op));
    setup_expr(u, b, e->args[1], pfx);
    buf_puts(b, ")");
    return;
  }
  case EX_CALL:   /* min, max, abs of integers (an append's count): templates/int.tmpl */
    if (e->builtin != BI_MIN && e->builtin != BI_MAX && e->builtin != BI_ABS) break;
    buf_printf(b, "cnp_g_%s_i64(", builtin_name(e->builtin));
    for (int k = 0; k < e->nargs; k++) {
      if (k) buf_puts(b, ", ");
      setup_expr(u, b, e->args[k], pfx);
    }
    buf_puts(b, ")");
    return;
  case EX_CAST:   /* between integer types: i32 truncates, i64 and u64 keep the 64 bits */
    if (!dtype_is_int(e->cast_to) || !dtype_is_int(e->args[0]->type)) break;
    buf_puts(b, e->cast_to == DT_I32 ? "((int64_t)(int32_t)" : "(");
    setup_expr(u, b, e->args[0], pfx);
    buf_puts(b, ")");
    return;
  default: break;
  }
  cnp_ice("setup expression of kind %d not handled", (int)e->kind);
}

/* An append's count as an int64_t: a u64 count above INT64_MAX is INT64_MAX (more rows than
** any capacity: the rows that fit, then CNP_EOVERFLOW), not a negative number (no rows). */
const char *append_count_str(GenUnit *u, Expr *e, const char *pfx) {
  const char *x = setup_str(u, e, pfx);
  if (e->type != DT_U64) return arena_printf(&u->cc->arena, "(int64_t)(%s)", x);
  return arena_printf(&u->cc->arena, "((uint64_t)(%s) > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)(%s))", x, x);
}

const char *setup_str(GenUnit *u, Expr *e, const char *pfx) {
  Buf t = {0};
  setup_expr(u, &t, e, pfx);
  char *s = arena_strndup(&u->cc->arena, buf_str(&t), t.n);
  buf_free(&t);
  return s;
}

/* An extent or segment count of the configuration, computed with the overflow-checked
** helpers of templates/extent.tmpl (INT64_MIN on overflow): setup's check of it. */
/* A u64 setup param in an extent: its value may not fit in int64_t. */
static bool u64_param(const Expr *e) {
  return e && e->kind == EX_NAME && e->ref.decl && e->ref.decl->kind == DECL_PARAM && e->ref.decl->dtype == DT_U64;
}

void setup_expr_checked(GenUnit *u, Buf *b, Expr *e) {
  if (u64_param(e)) {   /* above INT64_MAX: INT64_MIN, an overflow (not a wrapped negative size) */
    buf_puts(b, "cnp_g_xu64(");
    setup_expr(u, b, e, "cfg->");
    buf_puts(b, ")");
  } else if (e->kind == EX_BINARY && (e->op == OP_ADD || e->op == OP_SUB || e->op == OP_MUL)) {
    buf_printf(b, "cnp_g_x%s(", e->op == OP_ADD ? "add" : e->op == OP_SUB ? "sub" : "mul");
    setup_expr_checked(u, b, e->args[0]);
    buf_puts(b, ", ");
    setup_expr_checked(u, b, e->args[1]);
    buf_puts(b, ")");
  } else if (e->kind == EX_UNARY) {
    buf_puts(b, "cnp_g_xsub(0, ");
    setup_expr_checked(u, b, e->args[0]);
    buf_puts(b, ")");
  } else setup_expr(u, b, e, "cfg->");
}

/* Whether a field extent or segment count is computed (then the unit has templates/extent.tmpl). */
bool extent_computed(Expr *e) {
  return e && (e->kind == EX_BINARY || e->kind == EX_UNARY || u64_param(e));
}

/* Source text of an expression (first line only). */
const char *expr_src(GenUnit *u, Expr *e) {
  const char *s = e->loc.file->src;
  for (int l = 1; l < e->loc.line && *s; s++)
    if (*s == '\n') l++;
  s += e->loc.col - 1;
  char *t = arena_strndup(&u->cc->arena, s, (size_t)e->loc.len);
  for (char *q = t; *q; q++)
    if (*q == '"' || *q == '\\' || *q == '%') *q = '_';
  return t;
}

/* typedef struct NAME_kK_args { ... } */
void kernel_args(GenUnit *u, Buf *b, GenOp *op, KUse *use, const GenTarget *t) {
  buf_line(b, "/* Arguments of kernel %d (%s:%d). */", op->kernel,
           base_name(op->stmt->loc.file->path), op->stmt->loc.line);
  buf_line(b, "typedef struct %s_k%d_args {", u->name, op->kernel);
  buf_line(b, "  int64_t n;                    /* live extent of '%s' */", op->stmt->over.name);
  buf_line(b, "  int *bad;                     /* device flag for index checks (CUDA) */");
  if (t->device)
    buf_line(b, "  const int64_t *d_n;            /* CUDA graph: live extent in device memory, or NULL */");
  for (int i = 0; i < use->n_fields; i++) {
    Decl *f = use->fields[i];
    buf_line(b, "  %s *f_%s;", gen_ctype(f->dtype), f->name);
    for (int d = 0; d < f->shape.rank; d++) buf_line(b, "  int64_t f_%s_e%d;", f->name, d);
  }
  for (int i = 0; i < use->n_params; i++)
    buf_line(b, "  %s P_%s;", gen_vtype(use->params[i]->dtype), use->params[i]->name);
  for (int i = 0; i < use->n_dims; i++) buf_line(b, "  int64_t n_%s;", use->dims[i]->name);
  if (use->step) buf_line(b, "  int64_t cnp_step;             /* step counter: stats.steps before this step */");
  if (op->stmt->kind == ST_APPEND)
    buf_line(b, "  int64_t first;                /* append: the first new row */");
  if (gen_grid_map(op->stmt)) grid_args(u, b, op);
  if (op->stmt->kind == ST_APPEND && t->device) {   /* CUDA graph: decided on the device */
    buf_line(b, "  int64_t want;                 /* CUDA graph: the rows asked for */");
    buf_line(b, "  int64_t *apw;                 /* CUDA graph: device copy of want, for the commit */");
    buf_line(b, "  int *ovf;                     /* CUDA graph: overflow flag, read by sync */");
  }
  if (op->scan_fused)
    buf_line(b, "  %s *sp;  /* host: chunk totals of the scan at line %d (its pass 1, done here) */",
             gen_ctype(op->scan_fused->stmt->a.decl->dtype), op->scan_fused->stmt->loc.line);
  for (int i = 0; i < use->n_reds; i++)
    buf_line(b, "  %s *rp_%s;  /* partial results of the reduction into %s */",
             gen_ctype(use->reds[i]->dtype), use->reds[i]->name, use->reds[i]->name);
  for (int i = 0; i < use->n_privs; i++)
    buf_line(b, "  %s *pv_%s;  /* host: each block's copy of %s, scatter-added into */",
             gen_ctype(use->privs[i]->dtype), use->privs[i]->name, use->privs[i]->name);
  buf_line(b, "} %s_k%d_args;", u->name, op->kernel);
  buf_puts(b, "\n");
}

/* Locals unpacked from A at the top of a kernel. */
void kernel_locals(Buf *b, KUse *use) {
  for (int i = 0; i < use->n_fields; i++) {
    Decl *f = use->fields[i];
    buf_line(b, "%s *CNP_G_RESTRICT f_%s = A.f_%s;", gen_ctype(f->dtype), f->name, f->name);
  }
  for (int i = 0; i < use->n_params; i++)
    buf_line(b, "const %s P_%s = A.P_%s;", gen_vtype(use->params[i]->dtype),
             use->params[i]->name, use->params[i]->name);
  for (int i = 0; i < use->n_dims; i++)
    buf_line(b, "const int64_t n_%s = A.n_%s;", use->dims[i]->name, use->dims[i]->name);
  if (use->step) buf_line(b, "const int64_t cnp_step = A.cnp_step;");
}


/* ======================================================================== kernel arguments, runtime calls, text */

/* "pic.cnp:42: compact alive (x, v)" for runtime errors, which append ": detail": the
** line's final ';' (or ',' of a statement continued on the next line) is dropped so the
** message does not read "...;: detail". */
static const char *where(GenUnit *u, Loc loc) {
  const char *t = src_line(u, loc);
  int n = (int)strlen(t);
  while (n > 0 && (t[n - 1] == ';' || t[n - 1] == ',' || t[n - 1] == ' ' || t[n - 1] == '\t')) n--;
  return arena_printf(&u->cc->arena, "%s:%d: %.*s", base_name(loc.file->path), loc.line, n, t);
}

/* C string literal body of `s` (quotes and backslashes escaped). */
const char *cstr(GenUnit *u, const char *s) {
  Buf t = {0};
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') buf_put(&t, "\\", 1);
    buf_put(&t, s, 1);
  }
  char *r = arena_strndup(&u->cc->arena, buf_str(&t), t.n);
  buf_free(&t);
  return r;
}

void try_vcall(GenUnit *u, Buf *b, Loc loc, const char *fmt, va_list ap) {
  va_list aq;
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  char *t = arena_alloc(&u->cc->arena, (size_t)n + 1);
  vsnprintf(t, (size_t)n + 1, fmt, ap);
  buf_line(b, "CNP_G_TRY(%s,", t);
  buf_line(b, "          \"%s\");", cstr(u, where(u, loc)));
}

void try_call(GenUnit *u, Buf *b, Loc loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  try_vcall(u, b, loc, fmt, ap);
  va_end(ap);
}

/* `v` as C text in the arena (template values). */
const char *gen_int(GenUnit *u, int64_t v) { return arena_printf(&u->cc->arena, "%" PRId64, v); }

/* Kernel arguments from the pipeline object: `pfx` is "A." or "ap->". */
void kernel_fill(Buf *b, KUse *use, const char *pfx) {
  for (int i = 0; i < use->n_fields; i++) {
    Decl *f = use->fields[i];
    buf_line(b, "%sf_%s = (%s *)p->f_%s.data;", pfx, f->name, gen_ctype(f->dtype), f->name);
    for (int d = 0; d < f->shape.rank; d++)
      buf_line(b, "%sf_%s_e%d = p->f_%s.shape[%d];", pfx, f->name, d, f->name, d);
  }
  for (int i = 0; i < use->n_params; i++)
    buf_line(b, "%sP_%s = p->P_%s;", pfx, use->params[i]->name, use->params[i]->name);
  for (int i = 0; i < use->n_dims; i++)
    buf_line(b, "%sn_%s = p->n_%s;", pfx, use->dims[i]->name, use->dims[i]->name);
  if (use->step) buf_line(b, "%scnp_step = (int64_t)p->stats.steps;", pfx);
  for (int i = 0; i < use->n_reds; i++)
    buf_line(b, "%srp_%s = (%s *)p->rp_%s.data;", pfx, use->reds[i]->name,
             gen_ctype(use->reds[i]->dtype), use->reds[i]->name);
  for (int i = 0; i < use->n_privs; i++)
    buf_line(b, "%spv_%s = (%s *)p->pv_k%d_%s.data;", pfx, use->privs[i]->name,
             gen_ctype(use->privs[i]->dtype), use->kernel, use->privs[i]->name);
}

/* The text a block of emitted lines holds, in the arena (the buffer is freed). */
const char *buf_take(GenUnit *u, Buf *t) {
  char *s = arena_strndup(&u->cc->arena, buf_str(t), t->n);
  buf_free(t);
  return s;
}
