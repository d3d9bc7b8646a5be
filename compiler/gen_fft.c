/*
** gen_fft.c -- the FFT statements (docs/codegen.md, "FFTs"): one cnp_fft_plan per (grid,
** real dtype, components) that fft/ifft statements transform, made at setup from the real
** field's storage shape (FFTW_ESTIMATE planning on the host, cuFFT on CUDA), destroyed at
** teardown; the step's cnp_fft_forward / cnp_fft_inverse calls, and ifft's 1/N pass (the
** runtime's inverse is unnormalized; numpy.fft.irfftn's is 1/N) over the real output. Its
** text: templates/fft.tmpl.
*/
#include "gen.h"

#include <string.h>

#define TM "fft"   /* the snippet template: templates/fft.tmpl */

static Decl *real_of(const Stmt *s) { return s->kind == ST_IFFT ? s->b.decl : s->a.decl; }
static Decl *spec_of(const Stmt *s) { return (s->kind == ST_IFFT ? s->a.decl : s->b.decl)->grid_of; }

static bool same_comps(const Decl *a, const Decl *b) {
  if (a->grid_ncomp != b->grid_ncomp) return false;
  for (int i = 0; i < a->grid_ncomp; i++) {
    const Expr *x = a->shape.ext[i], *y = b->shape.ext[i];
    if (x->kind != y->kind) return false;
    if (x->kind == EX_INT && x->ival != y->ival) return false;
    if (x->kind == EX_NAME && x->ref.decl != y->ref.decl) return false;
    if (x->kind != EX_INT && x->kind != EX_NAME) return false;   /* computed: a plan of its own */
  }
  return true;
}

int fft_plan_of(GenUnit *u, Stmt *s) {
  Decl *x = real_of(s), *k = spec_of(s);
  for (int i = 0; i < u->n_fft; i++) {
    struct GenFft *f = &u->fft[i];
    if (f->grid == k && f->dtype == x->dtype && same_comps(f->real, x)) {
      f->inverse = f->inverse || s->kind == ST_IFFT;
      return i;
    }
  }
  u->fft = arena_grow(&u->cc->arena, u->fft, u->n_fft, &u->fft_cap, 8, sizeof *u->fft);
  u->fft[u->n_fft] = (struct GenFft){k, x, x->dtype, s->kind == ST_IFFT, s};
  return u->n_fft++;
}

static const char *comps_text(GenUnit *u, const struct GenFft *f) {
  if (!f->real->grid_ncomp) return "no components";
  return arena_printf(&u->cc->arena, "components of %s as the batch", f->real->name);
}

/* Is plan f of a split grid (cnp_fft_dist over the ranks; a serial plan on one rank without a comm)? */
static bool split_fft(const struct GenFft *f) { return f->grid->grid->split; }

void fft_struct(GenUnit *u, Buf *b) {
  for (int i = 0; i < u->n_fft; i++) {
    const struct GenFft *f = &u->fft[i];
    buf_line(b, "cnp_fft_plan *fft_%d;  /* grid %s = rfft(%s), %s, %s */", i, f->grid->name,
             f->grid->target.name, dtype_name(f->dtype), split_fft(f) ? "one rank without a communicator"
                                                                       : comps_text(u, f));
    if (split_fft(f))
      buf_line(b, "cnp_fft_dist_plan *fftd_%d;  /* ... over the ranks: slabs of %s, blocks of %s along axis 1 */", i,
               f->grid->target.name, f->grid->name);
  }
}

void fft_setup(GenUnit *u, Buf *b) {
  Arena *a = &u->cc->arena;
  for (int i = 0; i < u->n_fft; i++) {
    const struct GenFft *f = &u->fft[i];
    int nd = f->grid->grid->ndim, nc = f->real->grid_ncomp;
    Buf dims = {0};
    buf_puts(&dims, "{");
    for (int k = 0; k < nd; k++)
      if (split_fft(f))   /* the whole grid's extents */
        buf_printf(&dims, "%s%s", k ? ", " : "", setup_str(u, f->grid->target.decl->grid->axis[k].ext, "p->"));
      else
        buf_printf(&dims, "%sp->f_%s.shape[%d]", k ? ", " : "", f->real->name, nc + k);
    buf_puts(&dims, "}");
    const Stmt *s = f->first;
    if (split_fft(f)) {
      EMIT_SNIPPET(b, TM, "plan_split", {"i", gen_int(u, i)}, {"g", f->grid->target.name}, {"K", f->grid->name},
                   {"nd", gen_int(u, nd)}, {"dims", buf_take(u, &dims)}, {"dt", dtype_name(f->dtype)},
                   {"cdt", gen_cnp_dtype(f->dtype)},
                   {"flags", f->grid->fft_measure ? "CNP_FFT_MEASURE" : "CNP_FFT_ESTIMATE"},
                   {"where", arena_printf(a, "%s:%d: %s %s -> %s", base_name(s->loc.file->path), s->loc.line,
                                          stmt_of(s->kind)->name, s->a.name, s->b.name)});
      continue;
    }
    EMIT_SNIPPET(b, TM, "plan", {"i", gen_int(u, i)}, {"g", f->grid->target.name}, {"nd", gen_int(u, nd)},
                 {"dims", buf_take(u, &dims)}, {"dt", dtype_name(f->dtype)}, {"comps", comps_text(u, f)},
                 {"batch", nc ? arena_printf(a, "p->f_%s.shape[0]", f->real->name) : "0"},
                 {"cdt", gen_cnp_dtype(f->dtype)},
                 {"flags", f->grid->fft_measure ? "CNP_FFT_MEASURE" : "CNP_FFT_ESTIMATE"},
                 {"plan", f->grid->fft_measure ? "FFTW_MEASURE" : "FFTW_ESTIMATE"},
                 {"where", arena_printf(a, "%s:%d: %s %s -> %s", base_name(s->loc.file->path), s->loc.line,
                                        stmt_of(s->kind)->name, s->a.name, s->b.name)});
  }
}

void fft_teardown(GenUnit *u, Buf *b) {
  for (int i = 0; i < u->n_fft; i++) {
    buf_line(b, "cnp_fft_plan_destroy(p->fft_%d);", i);
    if (split_fft(&u->fft[i])) buf_line(b, "cnp_fft_dist_plan_destroy(p->fftd_%d);", i);
  }
}

/* ifft's 1/N pass, per real dtype an inverse uses. */
void fft_helpers(GenUnit *u, const GenTarget *t, Buf *b) {
  bool seen[DT__COUNT] = {false};
  fft_wave_helper(u, t, b);
  for (int i = 0; i < u->n_fft; i++) {
    const struct GenFft *f = &u->fft[i];
    if (!f->inverse || seen[f->dtype]) continue;
    seen[f->dtype] = true;
    const char *ct = gen_ctype(f->dtype);
    EMIT_SNIPPET(b, TM, "scale", {"T", ct}, {"SUF", dtype_name(f->dtype)}, {"cuda", t->device ? "1" : ""});
  }
}

/* The statement: its runtime call (and ifft's 1/N pass). Direct: CNP_G_TRY calls and the
** launch count; graph (captured on CUDA): `return st` on a failure. */
/* fft / ifft of a split grid: the real field's interior planes (a contiguous view) through
** the distributed plan, or the serial one on one rank without a communicator; ifft's 1/N
** over the interior. */
static void fft_step_split(GenUnit *u, Buf *b, GenOp *op, bool graph) {
  Stmt *s = op->stmt;
  bool inv = s->kind == ST_IFFT;
  Decl *x = real_of(s), *c = inv ? s->a.decl : s->b.decl;
  int id = op->fft_id, W = x->grid_of->grid->axis[0].ghost;
  const char *dir = inv ? "inverse" : "forward";
  const char *args = inv ? arena_printf(&u->cc->arena, "&p->f_%s, &cnp_x", c->name)
                         : arena_printf(&u->cc->arena, "&cnp_x, &p->f_%s", c->name);
  buf_line(b, "{  /* %s: the interior planes of %s (ghosts excluded) */", stmt_of(s->kind)->name, x->name);
  b->indent += 2;
  buf_line(b, "cnp_array cnp_x = cnp_g_interior(&p->f_%s, %d);", x->name, W);
  const char *calls[2] = {arena_printf(&u->cc->arena, "p->comm ? cnp_fft_dist_%s(p->fftd_%d, %s, S) : "
                                                      "cnp_fft_%s(p->fft_%d, %s, S)", dir, id, args, dir, id, args),
                          arena_printf(&u->cc->arena, "cnp_g_fft_scale_%s(&cnp_x, p->comm ? cnp_fft_dist_norm(p->fftd_%d) "
                                                      ": cnp_fft_norm(p->fft_%d), S)", dtype_name(x->dtype), id, id)};
  for (int k = 0; k < (inv ? 2 : 1); k++) {
    if (k) buf_line(b, "/* 1/N (numpy.fft.irfftn): one pass over the interior of %s */", x->name);
    if (graph) buf_line(b, "if ((st = %s) != CNP_OK) return st;", calls[k]);
    else {
      try_call(u, b, s->loc, "%s", calls[k]);
      buf_line(b, "p->stats.launches++;");
    }
  }
  b->indent -= 2;
  buf_line(b, "}");
}

void fft_step(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, bool graph) {
  Stmt *s = op->stmt;
  bool inv = s->kind == ST_IFFT;
  if (split_fft(&u->fft[op->fft_id])) {
    fft_step_split(u, b, op, graph);
    return;
  }
  const char *call = arena_printf(&u->cc->arena, "cnp_fft_%s(p->fft_%d, &p->f_%s, &p->f_%s, S)",
                                  inv ? "inverse" : "forward", op->fft_id, s->a.decl->name, s->b.decl->name);
  const char *scale = arena_printf(&u->cc->arena, "cnp_g_fft_scale_%s(&p->f_%s, cnp_fft_norm(p->fft_%d), S)",
                                   dtype_name(s->b.decl->dtype), s->b.decl->name, op->fft_id);
  (void)t;
  if (graph) {
    buf_line(b, "if ((st = %s) != CNP_OK) return st;", call);
    if (inv) buf_line(b, "if ((st = %s) != CNP_OK) return st;  /* 1/N */", scale);
    return;
  }
  try_call(u, b, s->loc, "%s", call);
  buf_line(b, "p->stats.launches++;");
  if (!inv) return;
  buf_line(b, "/* 1/N (numpy.fft.irfftn): one pass over %s */", s->b.decl->name);
  try_call(u, b, s->loc, "%s", scale);
  buf_line(b, "p->stats.launches++;");
}

/* ---- wave(i) in a map over a spectral grid */

static bool wave_expr(const Expr *e) {
  if (!e) return false;
  if (e->kind == EX_CALL && e->builtin == BI_NONE && e->ref.name && !strcmp(e->ref.name, "wave")) return true;
  for (int i = 0; i < e->nargs; i++)
    if (wave_expr(e->args[i])) return true;
  return false;
}

static bool wave_stmts(const Stmt *s) {
  for (; s; s = s->next)
    if (wave_expr(s->value) || wave_expr(s->target) || wave_stmts(s->body) || wave_stmts(s->else_body))
      return true;
  return false;
}

static bool any_wave(GenUnit *u) {
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      const GenOp *op = &u->steps[i].ops[o];
      for (int m = 0; op->kind == GOP_MAP && m < op->n_maps; m++)
        if (wave_stmts(op->maps[m]->body)) return true;
    }
  return false;
}

void fft_wave_helper(GenUnit *u, const GenTarget *t, Buf *b) {
  if (any_wave(u)) EMIT_SNIPPET(b, TM, "wave", {"both", t->both});
}

bool fft_wave(KCtx *k, Buf *b, Expr *e) {
  if (!e->ref.name || strcmp(e->ref.name, "wave")) return false;
  int64_t off;
  int a = grid_index_axis(k->map, e->args[0], &off);
  if (a < 0) cnp_ice("wave() of no index");
  const GridInfo *gi = k->map->over.decl->grid;
  buf_printf(b, "cnp_g_wave(l_%s, cnp_%c%d, cnp_d%d, %d)", k->map->gidx[a]->name,
             gi->split && gi->split_axis == a ? 'N' : 'n', a, a, a == k->map->gndim - 1);   /* (split: global) */
  return true;
}
