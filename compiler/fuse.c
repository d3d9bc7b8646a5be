/*
** fuse.c -- which consecutive maps may become one loop / one kernel.
**
** Two maps over the same extent fuse when running them element by element gives the same
** result as running them one after the other. With element-wise accesses (F[i], F[c, i])
** that always holds. It fails when one map reads or writes, at OTHER elements (a gather or
** a scatter-add), a field that the other map writes: then every element of the first map
** must be finished before the second starts.
*/
#include "gen.h"

#include <string.h>

#define ACC_READ    0x1u    /* element-wise read F[i] */
#define ACC_GATHER  0x2u    /* read at another element F[k[i]] */
#define ACC_WRITE   0x4u    /* element-wise write or update F[i] = / += */
#define ACC_SCATTER 0x8u    /* scatter-add F[k[i]] += */

typedef struct Acc {
  Decl *f;
  unsigned how;
  int line;               /* first access of that kind (for messages) */
} Acc;

typedef struct AccSet {
  Acc *v;                 /* grows in the arena `a` (a map may touch any number of fields) */
  int n, cap;
  Arena *a;
  Decl *only;             /* when set: record that field only (v has room for it) */
} AccSet;

static void acc_add(AccSet *s, Decl *f, unsigned how, int line) {
  if (s->only && f != s->only) return;
  for (int i = 0; i < s->n; i++)
    if (s->v[i].f == f) {
      s->v[i].how |= how;
      return;
    }
  if (s->n == s->cap) {
    int nc = s->cap ? 2 * s->cap : 32;
    Acc *nv = arena_alloc(s->a, sizeof *nv * (size_t)nc);
    if (s->n) memcpy(nv, s->v, sizeof *nv * (size_t)s->n);
    s->v = nv;
    s->cap = nc;
  }
  s->v[s->n++] = (Acc){f, how, line};
}

static unsigned acc_get(const AccSet *s, Decl *f) {
  for (int i = 0; i < s->n; i++)
    if (s->v[i].f == f) return s->v[i].how;
  return 0;
}

/* Field reads of an expression. */
static void acc_expr(AccSet *s, Expr *e) {
  if (!e) return;
  if (e->kind == EX_INDEX && e->ref.decl && e->ref.decl->kind == DECL_FIELD)
    acc_add(s, e->ref.decl, (e->flags & EXF_GATHER) ? ACC_GATHER : ACC_READ, e->loc.line);
  for (int i = 0; i < e->nargs; i++) acc_expr(s, e->args[i]);
}

static void acc_stmts(AccSet *s, Stmt *st) {
  for (; st; st = st->next) {
    switch (st->kind) {
    case ST_LET:
      acc_expr(s, st->value);
      break;
    case ST_ASSIGN:
    case ST_ADD:
      acc_expr(s, st->value);
      if (st->target && st->target->kind == EX_INDEX) {
        Expr *t = st->target;
        for (int i = 0; i < t->nargs; i++) acc_expr(s, t->args[i]);
        if (t->ref.decl && t->ref.decl->kind == DECL_FIELD)
          acc_add(s, t->ref.decl, st->scatter ? ACC_SCATTER : ACC_WRITE, st->loc.line);
      }
      break;
    case ST_IF:
      acc_expr(s, st->value);
      acc_stmts(s, st->body);
      acc_stmts(s, st->else_body);
      break;
    default:
      break;
    }
  }
}

bool gen_stmts_touch(Stmt *s, Decl *f, bool *writes, bool *gathers) {
  Acc one[1];
  AccSet set = {one, 0, 1, NULL, f};
  acc_stmts(&set, s);
  unsigned how = acc_get(&set, f);
  if (writes) *writes = (how & (ACC_WRITE | ACC_SCATTER)) != 0;
  if (gathers) *gathers = (how & (ACC_GATHER | ACC_SCATTER)) != 0;
  return how != 0;
}

/* Reason why `b` cannot join the maps group[0..n), or NULL. */
const char *fuse_check(GenUnit *u, Stmt **group, int n, Stmt *b) {
  Arena *a = &u->cc->arena;
  if (group[0]->over.decl != b->over.decl)
    return arena_printf(a, "it maps over '%s', the kernel over '%s'", b->over.name,
                        group[0]->over.name);
  AccSet g = {NULL, 0, 0, a, NULL}, m = {NULL, 0, 0, a, NULL};
  for (int i = 0; i < n; i++) acc_stmts(&g, group[i]->body);
  acc_stmts(&m, b->body);
  for (int i = 0; i < g.n; i++) {
    unsigned hg = g.v[i].how, hm = acc_get(&m, g.v[i].f);
    const char *f = g.v[i].f->name;
    if (!hm) continue;
    if ((hg & ACC_SCATTER))
      return arena_printf(a, "it accesses '%s', which the kernel scatter-adds into (line %d)",
                          f, g.v[i].line);
    if ((hg & ACC_WRITE) && (hm & (ACC_GATHER | ACC_SCATTER)))
      return arena_printf(a, "it reads '%s' at other elements, written by the kernel (line %d)",
                          f, g.v[i].line);
    if ((hg & ACC_GATHER) && (hm & (ACC_WRITE | ACC_SCATTER)))
      return arena_printf(a, "it writes '%s', which the kernel reads at other elements (line %d)",
                          f, g.v[i].line);
    if ((hm & ACC_SCATTER))
      return arena_printf(a, "it scatter-adds into '%s', which the kernel accesses (line %d)",
                          f, g.v[i].line);
  }
  return NULL;
}
