/*
** gen_pgrid.c -- particle-grid statements (docs/language.md, "Particles and grids";
** docs/codegen.md, "Deposit and gather"): `deposit W at (POS) -> G with SHAPE [atomic];` and
** `gather G at (POS) -> OUT with SHAPE;` call the runtime's cnp_deposit / cnp_gather
** (include/cnp/grid.h) through particle-grid plans made at setup (cnp_pgrid_create) and
** destroyed at teardown. Statements with the same grid, shape, dtype and particle dim share
** one plan (p->pg_N, N in program order of their first use). Text: templates/pgrid.tmpl.
**
** A grid with ghost(W) axes: the plan covers the field's whole storage window (n + 2W
** planes along such an axis, periodic in the window). Each statement first writes the
** positions along a ghost axis into the plan's window buffer (p->pgw_N_A, cell units:
** u = pos * n / length wrapped into [0, n), plus W), the plan's scale is 1 there; after a
** deposit the ghost planes are folded back (cnp_g_pg_fold: each ghost plane's sums added
** into the periodic image's interior plane, then zeroed), axes in order. Host backend
** only: on CUDA setup fails with CNP_EUNSUPPORTED (the .cu compiles, the graph forms
** call the plan unchanged, never reached).
**
** `migrate (ARRAYS) to G at (POS...);` (docs/language.md, "Particles and grids"): on a split
** G, a host loop writes each live row's destination (the owner of its plane along the split
** axis, cnp_slab_range's split) into the statement's int32 buffer p->migd_K, then
** cnp_migrate through the plan p->migt_K (both made at setup, after the communicator); on
** an unsplit G nothing moves and nothing is called.
*/
#include "gen.h"

#include <string.h>

#define TM "pgrid"

static const char *const shape_enum[3] = {"CNP_SHAPE_NGP", "CNP_SHAPE_CIC", "CNP_SHAPE_TSC"};

/* The grid field of a deposit (its output) or a gather (its input). */
static Decl *pg_field(const Stmt *s) { return s->kind == ST_DEPOSIT ? s->b.decl : s->a.decl; }

static Decl *pg_dim(const Stmt *s) {
  Decl *dim = NULL;
  gen_decl_is_dim_extent(s->list.v[0].decl, &dim);
  return dim;
}

static bool same_plan(const Stmt *x, const Stmt *y) {
  Decl *fx = pg_field(x), *fy = pg_field(y);
  return fx->grid_of == fy->grid_of && fx->dtype == fy->dtype && x->pshape == y->pshape &&
         pg_dim(x) == pg_dim(y);
}

/* Whether grid g is split over the ranks (docs/mpi.md, "Split grids"). */
static bool grid_split(const Decl *g) { return g->grid->split; }

/* Is axis a of the statement's grid split over the ranks (p->gso_G / p->gsn_G at setup)? */
static bool split_axis(const Decl *g, int a) { return g->grid->split && g->grid->split_axis == a; }

/* Does plan p fold a deposit over the ranks (a deposit onto a split grid uses it)? Such a
** plan has a cnp_halo p->pgh_P for cnp_halo_accumulate (NULL without a communicator). */
static bool plan_accumulates(const GenUnit *u, int p) {
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      const GenOp *op = &u->steps[i].ops[o];
      if (op->stmt->kind == ST_DEPOSIT && op->pg_id == p && grid_split(op->stmt->b.decl->grid_of)) return true;
    }
  return false;
}

void pgrid_lower(GenUnit *u) {
  int cap = 0, nmig = 0;
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++)
      if (u->steps[i].ops[o].stmt->kind == ST_MIGRATE_TO) u->steps[i].ops[o].pg_id = nmig++;
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      StmtKind k = u->steps[i].ops[o].stmt->kind;
      cap += k == ST_DEPOSIT || k == ST_GATHER;
    }
  u->n_pg = 0;
  u->pg_ops = arena_alloc(&u->cc->arena, sizeof *u->pg_ops * (size_t)(cap ? cap : 1));
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      if (op->stmt->kind != ST_DEPOSIT && op->stmt->kind != ST_GATHER) continue;
      op->pg_id = -1;
      for (int p = 0; p < u->n_pg && op->pg_id < 0; p++)
        if (same_plan(u->pg_ops[p]->stmt, op->stmt)) op->pg_id = p;
      if (op->pg_id < 0) {
        op->pg_id = u->n_pg;
        u->pg_ops[u->n_pg++] = op;
      }
    }
}

static const char *plan_what(GenUnit *u, const Stmt *s) {
  Decl *f = pg_field(s);
  return arena_printf(&u->cc->arena, "grid %s, %s, %s, particles of %s (line %d)", f->grid_of->name,
                      pshape_names[s->pshape], dtype_name(f->dtype), pg_dim(s)->name, s->loc.line);
}

/* The ghost width of axis a of the statement's grid (0: periodic). */
static int win_ghost(const Stmt *s, int a) { return pg_field(s)->grid_of->grid->axis[a].ghost; }

static bool has_window(const Stmt *s) {
  const GridInfo *gi = pg_field(s)->grid_of->grid;
  for (int a = 0; a < gi->ndim; a++)
    if (gi->axis[a].ghost) return true;
  return false;
}

/* Whether some plan has a ghost axis (the unit then needs templates/pgrid.tmpl's
** window_helpers). */
bool pgrid_windows(const GenUnit *u) {
  for (int p = 0; p < u->n_pg; p++)
    if (has_window(u->pg_ops[p]->stmt)) return true;
  for (int i = 0; i < u->n_steps; i++)   /* cnp_g_slab_dest (with it) */
    for (int o = 0; o < u->steps[i].n_ops; o++)
      if (u->steps[i].ops[o].stmt->kind == ST_MIGRATE_TO && grid_split(u->steps[i].ops[o].stmt->b.decl)) return true;
  return false;
}

void pgrid_struct(GenUnit *u, Buf *b) {
  pgrid_migrate_struct(u, b);
  for (int p = 0; p < u->n_pg; p++) {
    Stmt *s = u->pg_ops[p]->stmt;
    EMIT_SNIPPET(b, TM, "struct", {"id", gen_int(u, p)}, {"what", plan_what(u, s)});
    if (plan_accumulates(u, p)) EMIT_SNIPPET(b, TM, "struct_fold", {"id", gen_int(u, p)});
    for (int a = 0; a < pg_field(s)->grid_of->grid->ndim; a++)
      if (win_ghost(s, a))
        EMIT_SNIPPET(b, TM, "struct_win", {"id", gen_int(u, p)}, {"axis", gen_int(u, a)},
                     {"W", gen_int(u, win_ghost(s, a))});
  }
}

/* A grid length (an f64 setup expression: literals, consts, setup params, + - * / and casts)
** as C, in double. */
static void length_expr(GenUnit *u, Buf *b, Expr *e) {
  switch (e->kind) {
  case EX_INT: fmt_float(b, (double)e->ival, DT_F64); return;
  case EX_FLOAT: fmt_float(b, e->fval, DT_F64); return;
  case EX_NAME: {
    Decl *d = e->ref.decl;
    if (d && d->kind == DECL_CONST) fmt_float(b, d->fval, DT_F64);
    else if (d && d->kind == DECL_PARAM) buf_printf(b, "(double)p->P_%s", d->name);
    else if (d && d->kind == DECL_DIM) buf_printf(b, "(double)p->cap_%s", d->name);
    else cnp_ice("grid length: name '%s'", e->ref.name);
    return;
  }
  case EX_UNARY:
    buf_puts(b, "(-");
    length_expr(u, b, e->args[0]);
    buf_puts(b, ")");
    return;
  case EX_BINARY: {
    static const char ops[] = {[OP_ADD] = '+', [OP_SUB] = '-', [OP_MUL] = '*', [OP_DIV] = '/'};
    if (e->op > OP_DIV || !ops[e->op]) break;
    buf_puts(b, "(");
    length_expr(u, b, e->args[0]);
    buf_printf(b, " %c ", ops[e->op]);
    length_expr(u, b, e->args[1]);
    buf_puts(b, ")");
    return;
  }
  case EX_CAST: length_expr(u, b, e->args[0]); return;
  default: break;
  }
  cnp_ice("grid length: expression kind %d", (int)e->kind);
}

/* The plan: grid extents from the field's array (axes after its components), scale n / L
** per axis when the grid declares lengths (else NULL: positions in cell units). */
void pgrid_setup(GenUnit *u, Buf *b) {
  Arena *a = &u->cc->arena;
  for (int p = 0; p < u->n_pg; p++) {
    Stmt *s = u->pg_ops[p]->stmt;
    Decl *f = pg_field(s), *g = f->grid_of;
    int nd = g->grid->ndim, lead = f->shape.rank - nd;
    bool lengths = false;
    Buf dims = {0}, scale = {0};
    Buf win = {.indent = b->indent + 2};
    for (int k = 0; k < nd; k++) {
      Expr *len = g->grid->axis[k].length;
      int W = win_ghost(s, k);
      buf_printf(&dims, "%sp->f_%s.shape[%d]", k ? ", " : "", f->name, lead + k);
      if (W) {   /* window positions: in cell units already */
        lengths = true;
        buf_printf(&scale, "%s1.0", k ? ", " : "");
        Buf sc = {0}, call = {.indent = win.indent};
        buf_printf(&sc, "(double)p->pgw_%d_%d.n / ", p, k);
        if (len) length_expr(u, &sc, len);
        else buf_printf(&sc, "(double)p->pgw_%d_%d.n", p, k);
        EMIT_SNIPPET(&call, "setup", "try",
                     {"call", arena_printf(a, "cnp_array_alloc_on(&p->pgw_%d_%d.buf, B, p->device, %s, 1, &p->cap_%s, "
                                              "CNP_ORDER_C, 0)", p, k, gen_cnp_dtype(f->dtype), pg_dim(s)->name)},
                     {"where", arena_printf(a, "%s:%d: %s: window positions", base_name(s->loc.file->path),
                                            s->loc.line, stmt_of(s->kind)->name)});
        bool sp = split_axis(g, k);   /* split: all the planes, shifted by W - this rank's first */
        EMIT_SNIPPET(&win, TM, "setup_win", {"id", gen_int(u, p)}, {"axis", gen_int(u, k)},
                     {"n", sp ? arena_printf(a, "(int64_t)(%s)", setup_str(u, g->grid->axis[k].ext, "p->"))
                              : arena_printf(a, "p->f_%s.shape[%d] - %d", f->name, lead + k, 2 * W)},
                     {"shift", sp ? arena_printf(a, "(double)(%d - p->gso_%s)", W, g->name) : arena_printf(a, "%d.0", W)},
                     {"scale", buf_str(&sc)}, {"W", gen_int(u, W)}, {"call", buf_take(u, &call)});
        buf_free(&sc);
        continue;
      }
      lengths = lengths || len;
      buf_printf(&scale, "%s(double)dims[%d] / ", k ? ", " : "", k);
      if (len) length_expr(u, &scale, len);
      else buf_printf(&scale, "(double)dims[%d]", k);
    }
    Buf call = {.indent = b->indent + 2};
    EMIT_SNIPPET(&call, "setup", "try",
                 {"call", arena_printf(a, "cnp_pgrid_create(&p->pg_%d, B, p->device, %d, dims, %s, %s, p->cap_%s, %s)",
                                       p, nd, shape_enum[s->pshape], gen_cnp_dtype(f->dtype), pg_dim(s)->name,
                                       lengths ? "scale" : "NULL")},
                 {"where", arena_printf(a, "%s:%d: %s", base_name(s->loc.file->path), s->loc.line,
                                        stmt_of(s->kind)->name)});
    if (plan_accumulates(u, p)) {
      Buf hc = {.indent = win.indent + 2};
      EMIT_SNIPPET(&hc, "setup", "try",
                   {"call", arena_printf(a, "cnp_halo_create(&p->pgh_%d, p->comm, &like, %d, 1)", p, g->grid->axis[0].ghost)},
                   {"where", arena_printf(a, "%s:%d: %s: the ghost fold over the ranks", base_name(s->loc.file->path),
                                          s->loc.line, stmt_of(s->kind)->name)});
      EMIT_SNIPPET(&win, TM, "setup_fold", {"f", f->name}, {"nd", gen_int(u, nd)}, {"call", buf_take(u, &hc)});
    }
    EMIT_SNIPPET(b, TM, "setup", {"id", gen_int(u, p)}, {"what", plan_what(u, s)}, {"nd", gen_int(u, nd)},
                 {"dims", arena_printf(a, "{%s}", buf_str(&dims))},
                 {"scale", lengths ? arena_printf(a, "{%s}", buf_str(&scale)) : ""},
                 {"win", win.n ? buf_take(u, &win) : ""}, {"grid", g->name},
                 {"where", arena_printf(a, "%s:%d: %s", base_name(s->loc.file->path), s->loc.line,
                                        stmt_of(s->kind)->name)},
                 {"call", buf_take(u, &call)});
    buf_free(&win);
    buf_free(&dims);
    buf_free(&scale);
  }
}

void pgrid_teardown(GenUnit *u, Buf *b) {
  for (int p = 0; p < u->n_pg; p++) {
    Stmt *s = u->pg_ops[p]->stmt;
    EMIT_SNIPPET(b, TM, "teardown", {"id", gen_int(u, p)});
    for (int a = 0; a < pg_field(s)->grid_of->grid->ndim; a++)
      if (win_ghost(s, a)) EMIT_SNIPPET(b, TM, "teardown_win", {"id", gen_int(u, p)}, {"axis", gen_int(u, a)});
  }
}

/* Direct (host) form on a grid with ghost axes: the positions of each ghost axis replaced by
** the plan's window positions. */
static const char *window_lines(GenUnit *u, Buf *b, const GenOp *op, const char *D) {
  const Stmt *s = op->stmt;
  if (D || !has_window(s)) return "";
  Buf w = {.indent = b->indent + 2};
  for (int a = 0; a < s->list.n; a++)
    if (win_ghost(s, a))
      EMIT_SNIPPET(&w, TM, "window", {"id", gen_int(u, op->pg_id)}, {"axis", gen_int(u, a)},
                   {"W", gen_int(u, win_ghost(s, a))});
  return buf_take(u, &w);
}

/* After a direct deposit onto a grid with ghost axes: each ghost axis folded, in order. */
static const char *fold_lines(GenUnit *u, Buf *b, const GenOp *op, const char *D) {
  const Stmt *s = op->stmt;
  if (D || !has_window(s)) return "";
  Decl *f = s->b.decl;
  const GridInfo *gi = f->grid_of->grid;
  int nc = f->grid_ncomp, r = f->shape.rank;
  Buf w = {.indent = b->indent + 2};
  for (int a = 0; a < gi->ndim; a++) {
    int W = gi->axis[a].ghost, d = nc + a;
    if (!W) continue;
    Buf outer = {0}, inner = {0};
    buf_puts(&outer, "(int64_t)1");
    for (int i = 0; i < d; i++) buf_printf(&outer, " * p->f_%s.shape[%d]", f->name, i);
    buf_puts(&inner, "(int64_t)1");
    for (int i = d + 1; i < r; i++) buf_printf(&inner, " * p->f_%s.shape[%d]", f->name, i);
    if (split_axis(f->grid_of, a)) {   /* over the ranks: the ghosts into the neighbours', then 0 */
      buf_line(&w, "if (p->comm) {");
      w.indent += 2;
      buf_line(&w, "cnp_array cnp_v = cnp_g_gview(&p->f_%s, 0, %d);", f->name, gi->ndim);
      try_call(u, &w, s->loc, "cnp_halo_accumulate(p->pgh_%d, &cnp_v, S)", op->pg_id);
      w.indent -= 2;
      buf_line(&w, "}");
    }
    try_call(u, &w, s->loc, "cnp_g_pg_fold(&p->f_%s, %s, p->f_%s.shape[%d], %s, %d, %s)", f->name, buf_str(&outer),
             f->name, d, buf_str(&inner), W, split_axis(f->grid_of, a) ? "!p->comm" : "1");
    buf_free(&outer);
    buf_free(&inner);
  }
  return buf_take(u, &w);
}

/* The positions' live rows: {cnp_g_live(&p->f_y, p->n_N), ...}; in a CUDA graph (rows
** "p->cap_N") the capacity's. */
static const char *positions(GenUnit *u, const Stmt *s, const char *rows) {
  Buf v = {0};
  for (int i = 0; i < s->list.n; i++)
    buf_printf(&v, "%scnp_g_live(&p->f_%s, %s)", i ? ", " : "", s->list.v[i].decl->name,
               rows ? rows : live_extent(u, s->list.v[i].decl));
  const char *r = arena_printf(&u->cc->arena, "{%s}", buf_str(&v));
  buf_free(&v);
  return r;
}

static const char *call_text(GenUnit *u, Buf *b, int extra, Loc loc, const char *text) {
  Buf call = {.indent = b->indent + 2 + extra};
  try_call(u, &call, loc, "%s", text);
  return buf_take(u, &call);
}

/* In a CUDA graph (graph_step() in lower.c: every particle operand over dim D): the views
** over D's capacity, the live count dn_D read on the device (the _device_count forms), a
** failure returned. */
static const char *graph_call(GenUnit *u, Buf *b, int extra, const char *text) {
  Buf call = {.indent = b->indent + 2 + extra};
  buf_line(&call, "if ((st = %s) != CNP_OK) return st;", text);
  return buf_take(u, &call);
}

static void deposit_step(GenUnit *u, Buf *b, GenOp *op, const char *D) {
  Stmt *s = op->stmt;
  Arena *a = &u->cc->arena;
  const char *w = s->a.decl ? s->a.decl->name : "", *cap = D ? arena_printf(a, "p->cap_%s", D) : NULL;
  const char *mode = s->atomic ? "CNP_DEPOSIT_ATOMIC" : "CNP_DEPOSIT_SORTED";
  const char *call =
      D ? graph_call(u, b, 0,
                     arena_printf(a, "cnp_deposit_device_count(p->pg_%d, pos, %s, &p->dn_%s, &p->f_%s, %s, S)",
                                  op->pg_id, *w ? "&w" : "NULL", D, s->b.decl->name, mode))
        : call_text(u, b, 0, s->loc,
                    arena_printf(a, "cnp_deposit(p->pg_%d, pos, %s, &p->f_%s, %s, S)", op->pg_id,
                                 *w ? "&w" : "NULL", s->b.decl->name, mode));
  EMIT_SNIPPET(b, TM, "deposit", {"nd", gen_int(u, s->list.n)}, {"pos", positions(u, s, cap)}, {"w", w},
               {"live", s->a.decl ? (cap ? cap : live_extent(u, s->a.decl)) : ""}, {"call", call},
               {"direct", D ? "" : "1"}, {"const", !D && has_window(s) ? "" : "const "},
               {"win", window_lines(u, b, op, D)}, {"fold", fold_lines(u, b, op, D)});
}

void pgrid_step_deposit(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  (void)t;
  deposit_step(u, b, op, NULL);
}

void pgrid_graph_deposit(GenUnit *u, Buf *b, GenOp *op, const char *D) { deposit_step(u, b, op, D); }

/* One cnp_gather per component c: the grid's component c (a view of its last ndim axes)
** into row c of the output. */
static void gather_step(GenUnit *u, Buf *b, GenOp *op, const char *D) {
  Stmt *s = op->stmt;
  Arena *a = &u->cc->arena;
  Decl *g = s->a.decl, *out = s->b.decl;
  const char *cap = D ? arena_printf(a, "p->cap_%s", D) : NULL;
  const char *call =
      D ? graph_call(u, b, 2, arena_printf(a, "cnp_gather_device_count(p->pg_%d, pos, &grid, &p->dn_%s, &row, S)",
                                          op->pg_id, D))
        : call_text(u, b, 2, s->loc, arena_printf(a, "cnp_gather(p->pg_%d, pos, &grid, &row, S)", op->pg_id));
  EMIT_SNIPPET(b, TM, "gather", {"nd", gen_int(u, s->list.n)}, {"pos", positions(u, s, cap)}, {"g", g->name},
               {"out", out->name}, {"live", cap ? cap : live_extent(u, out)}, {"call", call},
               {"direct", D ? "" : "1"}, {"const", !D && has_window(s) ? "" : "const "},
               {"win", window_lines(u, b, op, D)});
}

void pgrid_step_gather(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  (void)t;
  gather_step(u, b, op, NULL);
}

void pgrid_graph_gather(GenUnit *u, Buf *b, GenOp *op, const char *D) { gather_step(u, b, op, D); }

/* ---- migrate (ARRAYS) to G at (POS) ---- */

static const char *mig_fields(GenUnit *u, const Stmt *s) {
  Buf fl = {0};
  for (int k = 0; k < s->list.n; k++) buf_printf(&fl, "%sp->f_%s", k ? ", " : "", s->list.v[k].decl->name);
  const char *r = arena_printf(&u->cc->arena, "{%s}", buf_str(&fl));
  buf_free(&fl);
  return r;
}

#define EACH_MIGRATE_TO(u, op)                                                                  \
  for (int i_ = 0; i_ < (u)->n_steps; i_++)                                                      \
    for (int o_ = 0; o_ < (u)->steps[i_].n_ops; o_++)                                            \
      for (GenOp *op = &(u)->steps[i_].ops[o_]; op; op = NULL)                                   \
        if (op->stmt->kind == ST_MIGRATE_TO && grid_split(op->stmt->b.decl))

void pgrid_migrate_struct(GenUnit *u, Buf *b) {
  EACH_MIGRATE_TO(u, op)
  EMIT_SNIPPET(b, TM, "migrate_struct", {"id", gen_int(u, op->pg_id)}, {"line", gen_int(u, op->stmt->loc.line)});
}

/* After the communicator: the plans and destination buffers. */
void pgrid_migrate_setup(GenUnit *u, Buf *b) {
  Arena *a = &u->cc->arena;
  EACH_MIGRATE_TO(u, op) {
    Stmt *s = op->stmt;
    Decl *dim = NULL;
    gen_decl_is_dim_extent(s->list.v[0].decl, &dim);
    EMIT_SNIPPET(b, TM, "migrate_setup", {"id", gen_int(u, op->pg_id)}, {"n", gen_int(u, s->list.n)},
                 {"fields", mig_fields(u, s)}, {"dim", dim->name},
                 {"where", arena_printf(a, "%s:%d: migrate", base_name(s->loc.file->path), s->loc.line)});
  }
}

void pgrid_migrate_teardown(GenUnit *u, Buf *b) {
  EACH_MIGRATE_TO(u, op) EMIT_SNIPPET(b, TM, "migrate_teardown", {"id", gen_int(u, op->pg_id)});
  for (int p = 0; p < u->n_pg; p++)   /* the deposits' fold plans */
    if (plan_accumulates(u, p)) buf_line(b, "cnp_halo_destroy(p->pgh_%d);", p);
}

void pgrid_step_migrate(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op) {
  Stmt *s = op->stmt;
  Decl *g = s->b.decl, *dim = NULL;
  Arena *a = &u->cc->arena;
  (void)t;
  gen_decl_is_dim_extent(s->list.v[0].decl, &dim);
  if (!grid_split(g)) {
    EMIT_SNIPPET(b, TM, "migrate_none", {"grid", g->name});
    return;
  }
  const GridInfo *gi = g->grid;
  int ax = 0;
  Buf sc = {0};
  buf_printf(&sc, "(double)%s / ", setup_str(u, gi->axis[ax].ext, "p->"));
  if (gi->axis[ax].length) length_expr(u, &sc, gi->axis[ax].length);
  else buf_printf(&sc, "(double)%s", setup_str(u, gi->axis[ax].ext, "p->"));
  const char *live = live_extent(u, s->list.v[0].decl);
  EMIT_SNIPPET(b, TM, "migrate", {"id", gen_int(u, op->pg_id)}, {"n", gen_int(u, s->list.n)},
               {"fields", mig_fields(u, s)}, {"dim", dim->name}, {"grid", g->name},
               {"dest", call_text(u, b, 2, s->loc,
                                  arena_printf(a, "cnp_g_slab_dest(&p->migd_%d, &p->f_%s, %s, %s, %s, %s)", op->pg_id,
                                               s->pos.v[ax].decl->name, live, buf_str(&sc),
                                               setup_str(u, gi->axis[ax].ext, "p->"),
                                               "p->size, p->rank"))},
               {"call", call_text(u, b, 2, s->loc,
                                  arena_printf(a, "cnp_migrate(p->migt_%d, fields, %d, %s, &p->migd_%d, S, NULL, &n_after)",
                                               op->pg_id, s->list.n, live, op->pg_id))});
  buf_free(&sc);
}
