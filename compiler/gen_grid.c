/*
** gen_grid.c -- grid maps `map (j, i) in G { ... }` (docs/codegen.md, "Grid maps"): one
** kernel each (never fused), nested host loops (OpenMP over axis 0, the last axis
** unit-stride, its boundary points peeled so the interior is branch-free) and a CUDA kernel
** with 1D/2D/3D blocks; the storage index of every stencil offset computed once per point
** (periodic: wrapped, clamp: clamped, ghost(W): the ghost planes). The fixed text is in
** templates/grid.tmpl.
*/
#include "gen.h"

#include <inttypes.h>
#include <string.h>

#define TM "grid"   /* the snippet template: templates/grid.tmpl */
#define MAXOFF 16   /* |offset| <= 16 (a ghost width is at most 16; others are checked here) */

bool gen_any_grid_map(GenUnit *u) {
  for (int s = 0; s < u->n_steps; s++)
    for (int o = 0; o < u->steps[s].n_ops; o++)
      if (u->steps[s].ops[o].kind == GOP_MAP && gen_grid_map(u->steps[s].ops[o].stmt)) return true;
  return false;
}

/* Is axis a of grid gi split over the ranks (a local count and offset at setup)? */
static bool split_ax(const GridInfo *gi, int a) { return gi->split && gi->split_axis == a; }

static bool any_halo(GenUnit *u) {
  for (int s = 0; s < u->n_steps; s++)
    for (int o = 0; o < u->steps[s].n_ops; o++)
      if (u->steps[s].ops[o].kind == GOP_STMT && u->steps[s].ops[o].stmt->kind == ST_HALO) return true;
  return false;
}

/* The offsets a map's stencil reads use, per axis: used[a][off + MAXOFF]. */
typedef struct Offs {
  bool used[3][2 * MAXOFF + 1];
  int lo[3], hi[3];   /* the most negative / positive offset per axis (0 if none) */
} Offs;

static void offs_expr(const Stmt *m, const Expr *e, Offs *o) {
  if (!e) return;
  if (e->kind == EX_INDEX && e->ref.decl && e->ref.decl->grid_of == m->over.decl) {
    int nc = e->ref.decl->grid_ncomp;
    for (int a = 0; a < m->gndim && nc + a < e->nargs; a++) {
      int64_t off;
      if (grid_index_axis(m, e->args[nc + a], &off) != a || off < -MAXOFF || off > MAXOFF) continue;
      o->used[a][off + MAXOFF] = true;
      if (off < o->lo[a]) o->lo[a] = (int)off;
      if (off > o->hi[a]) o->hi[a] = (int)off;
    }
  }
  for (int i = 0; i < e->nargs; i++) offs_expr(m, e->args[i], o);
}

static void offs_stmts(const Stmt *m, const Stmt *s, Offs *o) {
  for (; s; s = s->next) {
    offs_expr(m, s->target, o);
    offs_expr(m, s->value, o);
    offs_stmts(m, s->body, o);
    offs_stmts(m, s->else_body, o);
  }
}

/* The C name of the storage index of axis a at offset off: cnp_x1, cnp_x1m1, cnp_x1p2. */
static const char *xname(GenUnit *u, int a, int64_t off) {
  if (off == 0) return arena_printf(&u->cc->arena, "cnp_x%d", a);
  return arena_printf(&u->cc->arena, "cnp_x%d%c%" PRId64, a, off < 0 ? 'm' : 'p', off < 0 ? -off : off);
}

void grid_lin_index(KCtx *k, Buf *b, Expr *e) {
  GenUnit *u = k->u;
  Decl *f = e->ref.decl;
  const Stmt *m = k->map;
  int nc = f->grid_ncomp;
  Buf acc = {0};
  for (int c = 0; c < nc; c++) {   /* components: c0 * e1 + c1 ... (constants or setup values) */
    Buf t = {0};
    gen_ex(k, &t, e->args[c]);
    if (c == 0) {
      buf_free(&acc);
      acc = t;
      continue;
    }
    Buf n = {0};
    buf_printf(&n, "(%s) * A.f_%s_e%d + %s", buf_str(&acc), f->name, c, buf_str(&t));
    buf_free(&acc);
    buf_free(&t);
    acc = n;
  }
  for (int a = 0; a < m->gndim; a++) {
    int64_t off;
    (void)grid_index_axis(m, e->args[nc + a], &off);
    const char *x = xname(u, a, off);
    Buf n = {0};
    if (acc.n == 0) buf_puts(&n, x);
    else buf_printf(&n, "(%s) * cnp_s%d + %s", buf_str(&acc), a, x);
    buf_free(&acc);
    acc = n;
  }
  buf_puts(b, buf_str(&acc));
  buf_free(&acc);
}

void grid_call(KCtx *k, Buf *b, Expr *e) {
  int a = grid_coord_axis(k->map, e);
  if (a < 0) cnp_ice("call of '%s' in a grid map", e->ref.name ? e->ref.name : "?");
  buf_printf(b, "((double)l_%s * cnp_d%d)", k->map->gidx[a]->name, a);
}

const char *grid_points(GenUnit *u, const Stmt *map) {
  const GridInfo *gi = map->over.decl->grid;
  Buf t = {0};
  for (int a = 0; a < gi->ndim; a++)
    if (split_ax(gi, a)) buf_printf(&t, "%sp->gsn_%s", a ? " * " : "", map->over.decl->name);
    else buf_printf(&t, "%s(int64_t)(%s)", a ? " * " : "", setup_str(u, gi->axis[a].ext, "p->"));
  return buf_take(u, &t);
}

void grid_args(GenUnit *u, Buf *b, GenOp *op) {
  Decl *g = op->stmt->over.decl;
  (void)u;
  for (int a = 0; a < g->grid->ndim; a++)
    buf_line(b, "  int64_t g_n%d;                 /* grid %s: points along axis %d */", a, g->name, a);
  for (int a = 0; a < g->grid->ndim; a++)
    buf_line(b, "  double g_d%d;                  /* ... their spacing (length / points) */", a);
  for (int a = 0; a < g->grid->ndim; a++)
    if (split_ax(g->grid, a))
      buf_line(b, "  int64_t g_o%d, g_N%d;          /* split axis %d: this rank's first index, all points */", a,
               a, a);
}

/* A grid length (a real setup expression: literals, consts, setup params, + - * /) as C. */
static void len_expr(GenUnit *u, Buf *b, const Expr *e) {
  const Decl *d = e->kind == EX_NAME ? e->ref.decl : NULL;
  switch (e->kind) {
  case EX_INT: buf_printf(b, "%" PRId64 ".0", e->ival); return;
  case EX_FLOAT: fmt_float(b, e->fval, DT_F64); return;
  case EX_NAME:
    if (d && d->kind == DECL_CONST) fmt_float(b, d->fval, DT_F64);
    else if (d && d->kind == DECL_PARAM) buf_printf(b, "(double)p->P_%s", d->name);
    else if (d && d->kind == DECL_DIM) buf_printf(b, "(double)p->cap_%s", d->name);
    else cnp_ice("grid length '%s'", e->ref.name);
    return;
  case EX_UNARY:
    buf_puts(b, "(-");
    len_expr(u, b, e->args[0]);
    buf_puts(b, ")");
    return;
  case EX_BINARY:
    buf_puts(b, "(");
    len_expr(u, b, e->args[0]);
    buf_printf(b, " %s ", op_text(e->op));
    len_expr(u, b, e->args[1]);
    buf_puts(b, ")");
    return;
  case EX_CAST:
    len_expr(u, b, e->args[0]);
    return;
  default: cnp_ice("grid length of kind %d", (int)e->kind);
  }
}

void grid_fill(GenUnit *u, Buf *b, GenOp *op, const char *pfx) {
  Decl *g = op->stmt->over.decl;
  const GridInfo *gi = g->grid;
  for (int a = 0; a < gi->ndim; a++)
    if (split_ax(gi, a)) {
      buf_line(b, "%sg_n%d = p->gsn_%s;", pfx, a, g->name);
      buf_line(b, "%sg_o%d = p->gso_%s;", pfx, a, g->name);
      buf_line(b, "%sg_N%d = (int64_t)(%s);", pfx, a, setup_str(u, gi->axis[a].ext, "p->"));
    } else
      buf_line(b, "%sg_n%d = (int64_t)(%s);", pfx, a, setup_str(u, gi->axis[a].ext, "p->"));
  for (int a = 0; a < gi->ndim; a++) {
    if (gi->axis[a].length) {
      Buf t = {0};
      len_expr(u, &t, gi->axis[a].length);
      buf_line(b, "%sg_d%d = %s / (double)%sg_%c%d;", pfx, a, buf_str(&t), pfx, split_ax(gi, a) ? 'N' : 'n', a);
      buf_free(&t);
    }
    else
      buf_line(b, "%sg_d%d = 1.0;", pfx, a);
  }
}

void grid_helpers(GenUnit *u, const GenTarget *t, Buf *b) {
  b->indent = 0;
  if (gen_any_grid_map(u)) {
    buf_puts(b, "\n");
    EMIT_SNIPPET(b, TM, "helpers", {"both", t->both});
  }
  if (any_halo(u)) {
    buf_puts(b, "\n");
    emit_snippet(b, TM, "halo", NULL, 0);
    if (t->device) emit_snippet(b, TM, "halo_cuda", NULL, 0);
  }
  if (u->split) {
    buf_puts(b, "\n");
    emit_snippet(b, TM, "split", NULL, 0);
  }
}

/* halo F; -- per ghost axis (outermost first, so the corners of later axes are filled from
** planes already filled), the periodic image copied into the ghost planes. Direct: the
** target's branch per backend, CNP_G_TRY calls and the launch count; graph (captured on
** CUDA): the device copies only, `return st` on a failure. */
static void halo_step(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, bool graph) {
  Stmt *s = op->stmt;
  Decl *f = s->a.decl;
  const GridInfo *gi = f->grid_of->grid;
  int nc = f->grid_ncomp, r = f->shape.rank;
  buf_line(b, "{  /* halo %s: its ghost planes from the %s */", f->name,
           gi->split ? "neighbour ranks along axis 0, the other axes' from the periodic image" : "periodic image");
  b->indent += 2;
  buf_line(b, "const int64_t *cnp_sh = p->f_%s.shape;", f->name);
  buf_line(b, "(void)cnp_sh;");
  for (int a = 0; a < gi->ndim; a++) {
    int W = gi->axis[a].ghost, d = nc + a;
    if (!W) continue;
    Buf outer = {0}, inner = {0};
    buf_puts(&outer, "(int64_t)1");
    for (int i = 0; i < d; i++) buf_printf(&outer, " * cnp_sh[%d]", i);
    buf_printf(&inner, "(int64_t)sizeof(%s)", gen_ctype(f->dtype));
    for (int i = d + 1; i < r; i++) buf_printf(&inner, " * cnp_sh[%d]", i);
    const char *args = arena_printf(&u->cc->arena, "(char *)p->f_%s.data, %s, cnp_sh[%d], %s, cnp_sh[%d] - %d, %d",
                                    f->name, buf_str(&outer), d, buf_str(&inner), d, 2 * W, W);
    if (graph) {
      buf_line(b, "if ((st = cnp_g_halo_axis_cuda(%s, S)) != CNP_OK) return st;", args);
      buf_free(&outer);
      buf_free(&inner);
      continue;
    }
    bool ranks = a == 0 && gi->split;   /* over the ranks: cnp_halo (one rank without a comm: the image) */
    if (ranks) {
      buf_line(b, "if (p->comm) {  /* the ghost planes of axis 0 from the neighbour ranks */");
      buf_line(b, "  for (int64_t cnp_c = 0; cnp_c < %s; cnp_c++) {", buf_str(&outer));
      buf_line(b, "    cnp_array cnp_v = cnp_g_gview(&p->f_%s, cnp_c, %d);", f->name, gi->ndim);
      b->indent += 4;
      try_call(u, b, s->loc, "cnp_halo_exchange(p->halo_%s, &cnp_v, S)", f->name);
      b->indent -= 4;
      buf_line(b, "  }");
      buf_line(b, "} else {");
      b->indent += 2;
    }
    if (t->device) {
      buf_line(b, "if (p->backend == CNP_BACKEND_CUDA)");
      b->indent += 2;
      try_call(u, b, s->loc, "cnp_g_halo_axis_cuda(%s, S)", args);
      b->indent -= 2;
      buf_line(b, "else");
      b->indent += 2;
    }
    try_call(u, b, s->loc, "cnp_g_halo_axis(%s)", args);
    if (t->device) b->indent -= 2;
    if (ranks) {
      b->indent -= 2;
      buf_line(b, "}");
    }
    buf_free(&outer);
    buf_free(&inner);
  }
  if (!graph) buf_line(b, "p->stats.launches++;");
  b->indent -= 2;
  buf_line(b, "}");
}

void grid_step_halo(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) { halo_step(u, t, b, op, false); }

void grid_graph_halo(GenUnit *u, Buf *b, GenOp *op) { halo_step(u, &gen_target_cuda, b, op, true); }

/* The extents, strides and spacings every grid kernel starts with. */
static void extents(GenUnit *u, Buf *b, const Stmt *m) {
  const GridInfo *gi = m->over.decl->grid;
  for (int a = 0; a < gi->ndim; a++) {
    int W = gi->axis[a].ghost;
    buf_line(b, "const int64_t cnp_n%d = A.g_n%d, cnp_s%d = A.g_n%d%s;  /* points, storage planes */", a, a, a,
             a, W ? arena_printf(&u->cc->arena, " + %d", 2 * W) : "");
    buf_line(b, "const double cnp_d%d = A.g_d%d;", a, a);
    buf_line(b, "(void)cnp_n%d; (void)cnp_s%d; (void)cnp_d%d;", a, a, a);
    if (split_ax(gi, a)) {
      buf_line(b, "const int64_t cnp_o%d = A.g_o%d, cnp_N%d = A.g_N%d;  /* split: first global index, all points */",
               a, a, a, a);
      buf_line(b, "(void)cnp_o%d; (void)cnp_N%d;", a, a);
    }
  }
}

/* The storage index of offset off along axis a for loop index l: `wrap` true for the
** general (boundary) form, false where l + off is known to be inside (the interior). */
static const char *xvalue(GenUnit *u, const GridAxis *A, int a, const char *l, int64_t off, bool wrap) {
  Arena *ar = &u->cc->arena;
  if (off == 0 || A->bound == GB_GHOST || !wrap) {
    int64_t s = off + A->ghost;
    if (s == 0) return l;
    return arena_printf(ar, "%s %c %" PRId64, l, s < 0 ? '-' : '+', s < 0 ? -s : s);
  }
  return arena_printf(ar, "cnp_g_%s(%s %c %" PRId64 ", cnp_n%d)", A->bound == GB_CLAMP ? "clamp" : "wrap", l,
                      off < 0 ? '-' : '+', off < 0 ? -off : off, a);
}

/* The index lines of axis a (all its offsets). */
static void xlines(GenUnit *u, Buf *b, const Stmt *m, const Offs *o, int a, bool wrap) {
  const GridAxis *A = &m->over.decl->grid->axis[a];
  const char *l = arena_printf(&u->cc->arena, split_ax(m->over.decl->grid, a) ? "l_%s - cnp_o%d" : "l_%s",
                               m->gidx[a]->name, a);   /* (split: global index - first local one) */
  for (int off = -MAXOFF; off <= MAXOFF; off++)
    if (off == 0 || o->used[a][off + MAXOFF])
      buf_line(b, "const int64_t %s = %s;", xname(u, a, off), xvalue(u, A, a, l, off, wrap));
  Buf v = {0};
  for (int off = -MAXOFF; off <= MAXOFF; off++)
    if (off == 0 || o->used[a][off + MAXOFF]) buf_printf(&v, "%s(void)%s;", v.n ? " " : "", xname(u, a, off));
  buf_line(b, "%s", buf_str(&v));
  buf_free(&v);
}

/* The point's number (the last axis fastest) from the map's indices: the counter of its
** random draws, the same on both backends and in a reducing grid map; global indices and
** extents on a split grid, so the same number whatever the rank count. */
static const char *point_expr(GenUnit *u, const Stmt *m) {
  const char *e = arena_printf(&u->cc->arena, "l_%s", m->gidx[0]->name);
  for (int a = 1; a < m->gndim; a++)
    e = arena_printf(&u->cc->arena, "%s%s%s * cnp_%c%d + l_%s", a > 1 ? "(" : "", e, a > 1 ? ")" : "",
                     split_ax(m->over.decl->grid, a) ? 'N' : 'n', a, m->gidx[a]->name);
  return e;
}

/* cnp_i, the point's number, in the loops (split grid: also cnp_pt, its draws' counter). */
static void point_line(GenUnit *u, Buf *b, const Stmt *m) {
  buf_line(b, "const int64_t cnp_i = %s;  /* the point's number */", point_expr(u, m));
  buf_line(b, "(void)cnp_i;");
  if (m->over.decl->grid->split) {
    buf_line(b, "const int64_t cnp_pt = cnp_i;  /* the counter of its random draws */");
    buf_line(b, "(void)cnp_pt;");
  }
}

/* A reducing map over a split grid: cnp_i counts this rank's points; its draws count the
** global point number cnp_pt, as in the loops. */
static void global_point_line(GenUnit *u, Buf *b, const Stmt *m) {
  buf_line(b, "const int64_t cnp_pt = %s;  /* the point's global number: its draws' counter */", point_expr(u, m));
  buf_line(b, "(void)cnp_pt;");
}

static const char *what(GenUnit *u, const Stmt *m) {
  Buf t = {0};
  buf_printf(&t, "map (");
  for (int a = 0; a < m->gndim; a++) buf_printf(&t, "%s%s", a ? ", " : "", m->gidx[a]->name);
  buf_printf(&t, ") in %s (%s:%d)", m->over.name, base_name(m->loc.file->path), m->loc.line);
  return buf_take(u, &t);
}

void grid_prologue(KCtx *k, Buf *b, Stmt *m) {
  GenUnit *u = k->u;
  Offs o;
  memset(&o, 0, sizeof o);
  offs_stmts(m, m->body, &o);
  extents(u, b, m);
  buf_line(b, "int64_t cnp_q = cnp_i;  /* the point's indices, the last axis fastest */");
  for (int a = m->gndim - 1; a >= 0; a--) {
    if (split_ax(m->over.decl->grid, a))   /* split: the global index */
      buf_line(b, "const int64_t l_%s = cnp_o%d + cnp_q %% cnp_n%d;", m->gidx[a]->name, a, a);
    else
      buf_line(b, "const int64_t l_%s = cnp_q %% cnp_n%d;", m->gidx[a]->name, a);
    buf_line(b, "cnp_q /= cnp_n%d;", a);
  }
  buf_line(b, "(void)cnp_q;");
  for (int a = 0; a < m->gndim; a++) {
    buf_line(b, "(void)l_%s;", m->gidx[a]->name);
    xlines(u, b, m, &o, a, true);
  }
  if (m->over.decl->grid->split) global_point_line(u, b, m);
}

void kernel_grid_host(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, KUse *use) {
  Stmt *m = op->stmt;
  const GridInfo *gi = m->over.decl->grid;
  int last = m->gndim - 1;
  KCtx k = {u, t, &gen_target_host, m, DT_VOID, NULL, false, NULL, NULL, 0, NULL, false, NULL};
  Offs o;
  memset(&o, 0, sizeof o);
  offs_stmts(m, m->body, &o);
  Buf locals = {.indent = 2}, ext = {.indent = 2}, loops = {.indent = 2};
  const char *omp = "CNP_G_OMP(\"omp parallel for schedule(static) reduction(|:bad)\")";
  kernel_locals(&locals, use);
  extents(u, &ext, m);
  if (last > 0) buf_line(&loops, "%s", omp);
  for (int a = 0; a < last; a++) {   /* the outer axes: one index line set per row / plane */
    if (split_ax(gi, a))   /* split: this rank's global indices */
      buf_line(&loops, "for (int64_t l_%s = cnp_o%d; l_%s < cnp_o%d + cnp_n%d; l_%s++) {", m->gidx[a]->name, a,
               m->gidx[a]->name, a, a, m->gidx[a]->name);
    else
      buf_line(&loops, "for (int64_t l_%s = 0; l_%s < cnp_n%d; l_%s++) {", m->gidx[a]->name, m->gidx[a]->name, a,
               m->gidx[a]->name);
    loops.indent += 2;
    xlines(u, &loops, m, &o, a, true);
  }
  const GridAxis *L = &gi->axis[last];
  const char *li = m->gidx[last]->name;
  bool peel = L->bound != GB_GHOST && (o.lo[last] < 0 || o.hi[last] > 0);
  int lo = -o.lo[last], hi = o.hi[last];
  /* segments of the unit-stride axis: [0, lo) and [hi0, n) wrapped, [lo, hi0) plain */
  const char *seg_lo[3], *seg_hi[3];
  bool seg_wrap[3];
  int nseg = 0;
  if (peel) {
    const char *a_lo = arena_printf(&u->cc->arena, "cnp_lo");
    const char *a_hi = arena_printf(&u->cc->arena, "cnp_hi");
    buf_line(&ext, "const int64_t cnp_lo = cnp_n%d < %d ? cnp_n%d : %d;  /* points whose stencil wraps: [0, lo) */",
             last, lo, last, lo);
    buf_line(&ext, "const int64_t cnp_hi = cnp_n%d - %d > cnp_lo ? cnp_n%d - %d : cnp_lo;  /* ... and [hi, n) */",
             last, hi, last, hi);
    seg_lo[0] = "0", seg_hi[0] = a_lo, seg_wrap[0] = true;
    seg_lo[1] = a_lo, seg_hi[1] = a_hi, seg_wrap[1] = false;
    seg_lo[2] = a_hi, seg_hi[2] = arena_printf(&u->cc->arena, "cnp_n%d", last), seg_wrap[2] = true;
    nseg = 3;
  } else if (split_ax(gi, last)) {   /* (no stencil along a split axis without ghosts) */
    seg_lo[0] = arena_printf(&u->cc->arena, "cnp_o%d", last);
    seg_hi[0] = arena_printf(&u->cc->arena, "cnp_o%d + cnp_n%d", last, last), seg_wrap[0] = false;
    nseg = 1;
  } else {
    seg_lo[0] = "0", seg_hi[0] = arena_printf(&u->cc->arena, "cnp_n%d", last), seg_wrap[0] = false;
    nseg = 1;
  }
  for (int sg = 0; sg < nseg; sg++) {
    if (peel)
      buf_line(&loops, "/* %s */", sg == 1 ? "the interior: no stencil point wraps (branch-free)"
                                   : sg == 0 ? "the first points: their stencil wraps or clamps"
                                             : "the last points");
    if (last == 0) buf_line(&loops, "%s", omp);   /* 1D: each segment's loop in parallel */
    buf_line(&loops, "for (int64_t l_%s = %s; l_%s < %s; l_%s++) {", li, seg_lo[sg], li, seg_hi[sg], li);
    loops.indent += 2;
    xlines(u, &loops, m, &o, last, seg_wrap[sg]);
    point_line(u, &loops, m);
    gen_map_body(&k, &loops, m);
    loops.indent -= 2;
    buf_line(&loops, "}");
  }
  for (int a = last - 1; a >= 0; a--) {
    loops.indent -= 2;
    buf_line(&loops, "}");
  }
  b->indent = 0;
  EMIT_SNIPPET(b, TM, "host", {"N", u->name}, {"K", gen_int(u, op->kernel)}, {"what", what(u, m)},
               {"peel", peel ? "the unit-stride axis's boundary points peeled" : "no boundary peeled (no offset wraps)"},
               {"locals", buf_take(u, &locals)}, {"extents", buf_take(u, &ext)}, {"loops", buf_take(u, &loops)});
}

static const int blk[3][3] = {{256, 1, 1}, {32, 8, 1}, {32, 4, 4}};

void kernel_grid_cuda(GenUnit *u, Buf *b, GenOp *op, KUse *use) {
  Stmt *m = op->stmt;
  int nd = m->gndim;
  KCtx k = {u, &gen_target_cuda, &gen_target_cuda, m, DT_VOID, NULL, false, NULL, NULL, 0, NULL, false, NULL};
  Offs o;
  memset(&o, 0, sizeof o);
  offs_stmts(m, m->body, &o);
  Buf index = {.indent = 2}, ext = {.indent = 2}, body = {.indent = 2}, out = {0};
  static const char xyz[] = "xyz";
  for (int a = nd - 1; a >= 0; a--) {   /* x: the last axis */
    char c = xyz[nd - 1 - a];
    bool sp = split_ax(m->over.decl->grid, a);
    buf_line(&index, "const int64_t l_%s = %s(int64_t)blockIdx.%c * blockDim.%c + threadIdx.%c;", m->gidx[a]->name,
             sp ? arena_printf(&u->cc->arena, "A.g_o%d + ", a) : "", c, c, c);
    buf_printf(&out, "%sl_%s%s >= A.g_n%d", a == nd - 1 ? "" : " || ", m->gidx[a]->name,
               sp ? arena_printf(&u->cc->arena, " - A.g_o%d", a) : "", a);
  }
  extents(u, &ext, m);
  kernel_locals(&body, use);
  for (int a = 0; a < nd; a++) xlines(u, &body, m, &o, a, true);
  point_line(u, &body, m);
  gen_map_body(&k, &body, m);
  b->indent = 0;
  EMIT_SNIPPET(b, TM, "cuda", {"N", u->name}, {"K", gen_int(u, op->kernel)}, {"what", what(u, m)},
               {"blocks", arena_printf(&u->cc->arena, "%dx%dx%d", blk[nd - 1][0], blk[nd - 1][1], blk[nd - 1][2])},
               {"index", buf_take(u, &index)}, {"outside", buf_take(u, &out)}, {"extents", buf_take(u, &ext)},
               {"body", buf_take(u, &body)});
}

void grid_launch_cuda(GenUnit *u, Buf *b, GenOp *op) {
  int nd = op->stmt->gndim;
  const char *g[3];
  for (int c = 0; c < 3; c++) {
    int a = nd - 1 - c;   /* x: the last axis */
    g[c] = a < 0 ? "1"
                 : arena_printf(&u->cc->arena, "(unsigned)((A.g_n%d + %d) / %d)", a, blk[nd - 1][c] - 1, blk[nd - 1][c]);
  }
  EMIT_SNIPPET(b, TM, "launch", {"N", u->name}, {"K", gen_int(u, op->kernel)}, {"bx", gen_int(u, blk[nd - 1][0])},
               {"by", gen_int(u, blk[nd - 1][1])}, {"bz", gen_int(u, blk[nd - 1][2])}, {"gx", g[0]}, {"gy", g[1]},
               {"gz", g[2]});
}

/* The launch configuration of non-reducing grid map op in a CUDA graph's capture (A: its
** filled arguments): "dim3(grid), dim3(block)", as grid_launch_cuda launches it. */
const char *grid_graph_dims(GenUnit *u, GenOp *op) {
  int nd = op->stmt->gndim;
  Buf t = {0};
  buf_puts(&t, "dim3(");
  for (int c = 0; c < 3; c++) {
    int a = nd - 1 - c;   /* x: the last axis */
    if (a < 0) buf_printf(&t, "%s1", c ? ", " : "");
    else buf_printf(&t, "%s(unsigned)((A.g_n%d + %d) / %d)", c ? ", " : "", a, blk[nd - 1][c] - 1, blk[nd - 1][c]);
  }
  buf_printf(&t, "), dim3(%d, %d, %d)", blk[nd - 1][0], blk[nd - 1][1], blk[nd - 1][2]);
  return buf_take(u, &t);
}

/* ------------------------------------------------------------------ split grids */

/* Is field f halo'd over the ranks (a field of a split grid in a `halo f;`)? */
static bool split_halo_of(GenUnit *u, const Decl *f) {
  if (!f->grid_of || !f->grid_of->grid->split) return false;
  for (int s = 0; s < u->n_steps; s++)
    for (int o = 0; o < u->steps[s].n_ops; o++) {
      const GenOp *op = &u->steps[s].ops[o];
      if (op->kind == GOP_STMT && op->stmt->kind == ST_HALO && op->stmt->a.decl == f) return true;
    }
  return false;
}

void grid_split_struct(GenUnit *u, Buf *b) {
  if (!u->split) return;
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_GRID && d->grid->split)
      buf_line(b, "int64_t gso_%s, gsn_%s;  /* grid %s split along axis %d: this rank's first index, its count */",
               d->name, d->name, d->name, d->grid->split_axis);
    if (d->kind == DECL_FIELD && split_halo_of(u, d))
      buf_line(b, "cnp_halo *halo_%s;  /* halo %s over the ranks (NULL without a communicator) */", d->name, d->name);
  }
}

/* The first allreduce statement of the unit (NULL if none). */
static Stmt *first_allreduce(GenUnit *u) {
  for (int s = 0; s < u->n_steps; s++)
    for (int o = 0; o < u->steps[s].n_ops; o++)
      if (u->steps[s].ops[o].stmt->kind == ST_ALLREDUCE) return u->steps[s].ops[o].stmt;
  return NULL;
}

void grid_split_setup(GenUnit *u, Buf *b) {
  if (!u->split && !u->allreduce) return;
  Decl *g = NULL;
  for (Decl *d = u->cc->decls; d && !g; d = d->next)
    if (d->kind == DECL_GRID && d->grid->split) g = d;
  Loc at = g ? g->loc : first_allreduce(u)->loc;
  EMIT_SNIPPET(b, "setup", "split_cuda", {"file", base_name(at.file->path)}, {"line", gen_int(u, at.line)},
               {"what", g ? arena_printf(&u->cc->arena, "grid %s is split over MPI ranks: split grids", g->name)
                          : "allreduce"});
  EMIT_SNIPPET(b, "setup", u->mpi_required ? "mpi_comm" : "mpi_comm_split", {"N", u->name});
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind != DECL_GRID || !d->grid->split) continue;
    const char *file = base_name(d->loc.file->path), *line = gen_int(u, d->loc.line);
    int a = d->grid->split_axis;
    const char *n = setup_str(u, d->grid->axis[a].ext, "p->");
    int W = d->grid->axis[a].ghost;
    EMIT_SNIPPET(b, "setup", "split_range", {"n", n}, {"a", gen_int(u, a)}, {"g", d->name}, {"file", file},
                 {"line", line}, {"W", W ? gen_int(u, W) : ""});
  }
}

void grid_split_halo_setup(GenUnit *u, Buf *b) {
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind != DECL_FIELD || !split_halo_of(u, d)) continue;
    const GridInfo *gi = d->grid_of->grid;
    EMIT_SNIPPET(b, "setup", "split_halo", {"f", d->name}, {"nd", gen_int(u, gi->ndim)},
                 {"W", gen_int(u, gi->axis[0].ghost)}, {"file", base_name(d->loc.file->path)},
                 {"line", gen_int(u, d->loc.line)});
  }
}

void grid_split_teardown(GenUnit *u, Buf *b) {
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_FIELD && split_halo_of(u, d)) buf_line(b, "cnp_halo_destroy(p->halo_%s);", d->name);
}
