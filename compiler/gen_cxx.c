/*
** gen_cxx.c -- the C++17 wrapper (--emit=cxx): NAME.hpp, namespace NAME_cnp with
** default_config() and the class pipeline: RAII ownership of the C handle (setup in the
** constructor, teardown in the destructor; movable, not copyable), cnp::error exceptions
** carrying the status and message (include/cnp/cnp.hpp), and typed views of the fields and
** snapshots (cnp::view<T, R>, indexed as in the .cnp program). docs/interfaces.md. The text:
** templates/cxx.tmpl.
*/
#define _DEFAULT_SOURCE 1
#include "gen.h"

#include <string.h>

/* C++ type of a field's elements (the storage of the generated code). */
static const char *cxx_elem(DType t) {
  switch (t) {
  case DT_BOOL: return "std::uint8_t";
  case DT_I32: return "std::int32_t";
  case DT_I64: return "std::int64_t";
  case DT_U64: return "std::uint64_t";
  case DT_F16: return "std::uint16_t";
  case DT_F32: return "float";
  case DT_F64: return "double";
  case DT_C64: return "std::complex<float>";
  case DT_C128: return "std::complex<double>";
  default: cnp_ice("no C++ type for %s", dtype_name(t));
  }
}

/* The step params' C++ names: their own where free; a reserved prefix (`_x`, `cnp_`) gets
** `v_` in front, a keyword or macro (`NULL`, `errno`) '_' appended, until the name is free
** and differs from the other params'. */
static bool cxx_name_taken(GenUnit *u, const Decl *d, const char *c, const char **done, int n_done) {
  if (cn_clash(c) != CN_FREE) return true;
  for (int i = 0; i < n_done; i++)
    if (!strcmp(done[i], c)) return true;
  for (Decl *o = u->cc->decls; o; o = o->next)
    if (o != d && o->kind == DECL_PARAM && !o->setup && o->index > d->index && !strcmp(o->name, c)) return true;
  return false;
}

static const char *cxx_param_name(GenUnit *u, const Decl *d, const char **done, int n_done) {
  const char *c = d->name;
  if (c[0] == '_' || !strncmp(c, "cnp_", 4) || !strncmp(c, "CNP_", 4)) c = arena_printf(&u->cc->arena, "v_%s", c);
  while (cxx_name_taken(u, d, c, done, n_done)) c = arena_printf(&u->cc->arena, "%s_", c);
  return c;
}

#define TM "cxx"   /* templates/cxx.tmpl */

static void accessor(GenUnit *u, Buf *b, Decl *d, Decl *f, bool snap) {
  const char *cs = "";
  for (int k = 0; k < f->shape.rank; k++) {
    const Expr *e = f->shape.ext[k];
    const char *x = e->kind == EX_INT ? gen_int(u, e->ival) : e->kind == EX_NAME && e->ref.name ? e->ref.name : "...";
    cs = arena_printf(&u->cc->arena, "%s%s%s", cs, k ? ", " : "", x);
  }
  const char *vt = arena_printf(&u->cc->arena, "cnp::view<%s, %d>", cxx_elem(f->dtype), f->shape.rank);
  if (snap)
    EMIT_SNIPPET(b, TM, "snapshot", {"n", u->name}, {"d", d->name}, {"f", f->name}, {"dt", dtype_name(f->dtype)},
                 {"cs", cs}, {"vt", vt});
  else
    EMIT_SNIPPET(b, TM, "field", {"n", u->name}, {"f", f->name}, {"dt", dtype_name(f->dtype)}, {"cs", cs},
                 {"vt", vt});
}

void gen_cxx(GenUnit *u, Buf *b) {
  const char *n = u->name;
  const char *pn[512];
  int np = 0;
  for (Decl *d = u->cc->decls; d && np < 512; d = d->next)
    if (d->kind == DECL_PARAM && !d->setup) {
      pn[np] = cxx_param_name(u, d, pn, np);
      np++;
    }
  EMIT_SNIPPET(b, TM, "head", {"src", u->src_path}, {"stem", u->stem}, {"n", n}, {"N", u->upper});
  const char *params = "", *args = "";
  int k = 0;
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_PARAM && !d->setup) {
      params = arena_printf(&u->cc->arena, "%s%s%s %s", params, k ? ", " : "", gen_apitype(d->dtype), pn[k]);
      args = arena_printf(&u->cc->arena, "%s, %s", args, pn[k]);
      k++;
    }
  EMIT_SNIPPET(b, TM, "methods", {"n", n}, {"params", params}, {"args", args});
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_FIELD) accessor(u, b, d, d, false);
    if (d->kind == DECL_SNAPSHOT && d->target.decl) accessor(u, b, d, d->target.decl, true);
  }
  EMIT_SNIPPET(b, TM, "tail", {"n", n}, {"N", u->upper});
}
