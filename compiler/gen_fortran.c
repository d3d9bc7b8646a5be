/*
** gen_fortran.c -- the Fortran 2008 interface (--emit=fortran): STEM_cnp.f90, a module
** NAME_cnp with bind(C) interfaces to the C API of STEM.h, a bind(C) mirror of NAME_config
** and NAME_stats, the status codes as named constants, the error texts as Fortran strings
** and typed accessors that hand back Fortran pointers to the fields and snapshots; and
** STEM_cnp_layout.c, the C side of the layout check NAME_setup() does before it calls the C setup
** (offsets and sizes of NAME_config, NAME_stats and cnp_array as the C compiler lays them
** out). docs/interfaces.md describes the result; gen_cxx.c is the C++ sibling. The text:
** templates/fortran.tmpl.
**
** Index mapping: a field F : T[e0, ..., e(r-1)] (C order, the last extent varies fastest)
** is the Fortran array F(e(r-1), ..., e0): C F[i0, ..., i(r-1)] is Fortran
** F(i(r-1) + 1, ..., i0 + 1), the same memory without a copy.
**
** Fortran names are case-insensitive, start with a letter and have at most 63 characters:
** a name that clashes (case-insensitively) with an earlier one in the same scope gets '_'
** appended until it is free; a leading '_' gets 'u' put in front.
*/
#define _DEFAULT_SOURCE 1
#include "gen.h"
#include <cnp/cnp.h>     /* CNP_STATUS_MAP: the status codes as the runtime defines them */

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fortran lines have at most 132 characters (gfortran -Wall makes longer ones an error):
** fold_lines() breaks longer ones, code after a ", " outside quotes with a continuation '&',
** comments into a second comment line. */
static void fold_line(Buf *out, const char *s, size_t n) {
  const size_t max = 110;
  size_t ind = 0;
  while (ind < n && s[ind] == ' ') ind++;
  bool comment = ind < n && s[ind] == '!';
  while (n > max) {
    size_t cut = 0;
    bool quote = false;
    char q = 0;
    for (size_t i = ind + 1; i + 1 < n && i < max; i++) {
      if (quote) {
        if (s[i] == q) quote = false;
      } else if (!comment && (s[i] == '\'' || s[i] == '"')) {
        quote = true, q = s[i];
      } else if (s[i] == ',' && s[i + 1] == ' ') {
        cut = i + 1;
      } else if (comment && s[i] == ' ') {
        cut = i;
      }
    }
    size_t rest = cut + 1;
    while (rest < n && s[rest] == ' ') rest++;
    if (!cut || (rest + 1 == n && s[rest] == '&')) break;
    buf_put(out, s, cut);
    if (comment) buf_printf(out, "\n%*s!  ", (int)ind, "");
    else buf_printf(out, " &\n%*s", (int)ind + 6, "");
    s += cut + 1;
    n -= cut + 1;
  }
  buf_put(out, s, n);
}

static void fold_lines(Buf *b) {
  Buf out = {0};
  const char *s = buf_str(b);
  while (*s) {
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : strlen(s);
    fold_line(&out, s, n);
    if (nl) buf_put(&out, "\n", 1);
    s += n + (nl ? 1 : 0);
  }
  buf_free(b);
  *b = out;
}

typedef struct FNames {
  const char *v[1024];
  int n;
} FNames;

static bool fn_taken(const FNames *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (!strcasecmp(s->v[i], name)) return true;
  return false;
}

/* A Fortran name for `want`, unique (case-insensitively) in scope s, recorded there. */
static const char *fn_unique(GenUnit *u, FNames *s, const char *want) {
  Arena *a = &u->cc->arena;
  const char *name = want[0] == '_' ? arena_printf(a, "u%s", want) : want;
  while (fn_taken(s, name)) name = arena_printf(a, "%s_", name);
  if (strlen(name) > 63) {
    diag_plain(u->cc, "cannot generate the Fortran module: the name '%s' has more than 63 characters", name);
    name = "too_long_name";
  }
  if (s->n < (int)(sizeof s->v / sizeof s->v[0])) s->v[s->n++] = name;
  return name;
}

static void fn_reserve(FNames *s, const char *name) {
  if (s->n < (int)(sizeof s->v / sizeof s->v[0])) s->v[s->n++] = name;
}

/* Fortran type of an element (fields) or of a C API value (params, config). */
static const char *f_type(DType t, bool api) {
  switch (t) {
  case DT_BOOL: return "logical(c_bool)";       /* one byte, 0 or 1 (uint8_t in C) */
  case DT_I32: return "integer(c_int32_t)";
  case DT_I64: return "integer(c_int64_t)";
  case DT_U64: return "integer(c_int64_t)";     /* Fortran has no unsigned: the same bits */
  case DT_F16: return api ? "real(c_float)" : "integer(c_int16_t)";   /* binary16 bits */
  case DT_F32: return "real(c_float)";
  case DT_F64: return "real(c_double)";
  case DT_C64: return "complex(c_float_complex)";
  case DT_C128: return "complex(c_double_complex)";
  default: cnp_ice("no Fortran type for %s", dtype_name(t));
  }
}

static int elem_size(DType t) {
  switch (t) {
  case DT_BOOL: return 1;
  case DT_F16: return 2;
  case DT_I32: case DT_F32: return 4;
  case DT_C128: return 16;
  default: return 8;
  }
}

static const char *f_zero(DType t) {
  switch (t) {
  case DT_BOOL: return ".false._c_bool";
  case DT_I32: return "0_c_int32_t";
  case DT_I64: case DT_U64: return "0_c_int64_t";
  case DT_F16: case DT_F32: return "0.0_c_float";
  case DT_F64: return "0.0_c_double";
  case DT_C64: return "(0.0_c_float, 0.0_c_float)";
  case DT_C128: return "(0.0_c_double, 0.0_c_double)";
  default: return "0";
  }
}

/* One config component: its C name, its Fortran name. */
typedef struct FComp {
  const char *c, *f;
} FComp;

typedef struct FMod {
  GenUnit *u;
  FNames mod;             /* module-scope names */
  FComp comp[512];        /* NAME_config's components, in C order */
  int n_comp;
  int n_streams;
  int accessors;          /* typed accessors (fields and snapshots) */
  int reds;               /* scalars and histories (their accessors copy) */
} FMod;

#define TM "fortran"   /* templates/fortran.tmpl */

/* The components of NAME_config after the fixed ones, recorded in m->comp. */
static void config_type(FMod *m, Buf *b) {
  GenUnit *u = m->u;
  FNames cs = {0};
  static const char *const fixed[] = {"backend", "strict", "mpi_fcomm", "cuda_streams"};
  for (int i = 0; i < 4; i++) {
    fn_reserve(&cs, fixed[i]);
    m->comp[m->n_comp++] = (FComp){fixed[i], fixed[i]};
  }
  for (Decl *d = u->cc->decls; d; d = d->next) {
    const char *at = arena_printf(&u->cc->arena, "%s:%d", base_name(d->loc.file->path), d->loc.line);
    const char *f;
    if (d->kind == DECL_DIM) {
      f = fn_unique(u, &cs, d->name);
      EMIT_SNIPPET(b, TM, "cfg_dim", {"f", f}, {"d", d->name}, {"at", at});
      m->comp[m->n_comp++] = (FComp){d->name, f};
    } else if (d->kind == DECL_PARAM && d->setup) {
      f = fn_unique(u, &cs, d->name);
      EMIT_SNIPPET(b, TM, "cfg_param", {"T", f_type(d->dtype, true)}, {"f", f}, {"zero", f_zero(d->dtype)},
                   {"d", d->name}, {"at", at});
      m->comp[m->n_comp++] = (FComp){d->name, f};
    } else if (d->kind == DECL_MIRROR) {
      const char *c = arena_printf(&u->cc->arena, "%s_host", d->name);
      f = fn_unique(u, &cs, c);
      EMIT_SNIPPET(b, TM, "cfg_mirror", {"f", f}, {"d", d->name}, {"at", at}, {"of", d->target.decl->name});
      m->comp[m->n_comp++] = (FComp){c, f};
    }
    if (m->n_comp >= 510) break;
  }
}

/* The dummy arguments of step(): p, then the per-step params (Fortran names). */
static void step_dummies(FMod *m, const char **names) {
  FNames s = {0};
  /* the handle, the result and the names the interface imports */
  static const char *const taken[] = {"p", "st", "c_ptr", "c_int", "c_int8_t", "c_int32_t", "c_int64_t",
                                      "c_float", "c_double", "c_float_complex", "c_double_complex"};
  for (size_t i = 0; i < sizeof taken / sizeof taken[0]; i++) fn_reserve(&s, taken[i]);
  int k = 0;
  for (Decl *d = m->u->cc->decls; d; d = d->next)
    if (d->kind == DECL_PARAM && !d->setup) names[k++] = fn_unique(m->u, &s, d->name);
}

/* The interface block (the C API; the step's dummy arguments vary) and the private names. */
static void interfaces(FMod *m, Buf *b) {
  GenUnit *u = m->u;
  const char *dn[512];
  step_dummies(m, dn);
  const char *dummies = "";
  Buf values = {0};
  int k = 0;
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_PARAM && !d->setup) {
      const char *t = d->dtype == DT_BOOL ? "integer(c_int8_t)" : f_type(d->dtype, true);
      dummies = arena_printf(&u->cc->arena, "%s, %s", dummies, dn[k]);
      EMIT_SNIPPET(&values, TM, "step_value", {"T", t}, {"f", dn[k++]}, {"d", d->name});
    }
  Buf copy = {0};
  if (m->reds) EMIT_SNIPPET(&copy, TM, "copy_iface", {"n", u->name});
  EMIT_SNIPPET(b, TM, "interfaces", {"n", u->name}, {"stem", u->stem}, {"dummies", dummies},
               {"values", buf_take(u, &values)}, {"acc", m->accessors ? "1" : ""},
               {"red", m->reds ? "1" : ""}, {"copy_iface", buf_take(u, &copy)});
}

/* NAME_check_layout: the offsets of NAME_config's components in Fortran, NAME_cnp_comp_name. */
static void layout_check(FMod *m, Buf *b) {
  GenUnit *u = m->u;
  Buf foff = {0}, names = {0};
  for (int i = 0; i < m->n_comp; i++) {
    const char *k = gen_int(u, i + 1);
    EMIT_SNIPPET(&foff, TM, "foff", {"k", k}, {"f", m->comp[i].f});
    EMIT_SNIPPET(&names, TM, "comp_name", {"k", k}, {"c", m->comp[i].c});
  }
  EMIT_SNIPPET(b, TM, "layout", {"n", u->name}, {"stem", u->stem}, {"nc", gen_int(u, m->n_comp)},
               {"foff", buf_take(u, &foff)}, {"names", buf_take(u, &names)});
}

/* The generic helpers: strings, the setup with its layout check, the lookups by name, the
** shape helper of the accessors. */
static void procedures(FMod *m, Buf *b) {
  GenUnit *u = m->u;
  EMIT_SNIPPET(b, TM, "strings", {"n", u->name}, {"srcbase", base_name(u->src_path)});
  layout_check(m, b);
  EMIT_SNIPPET(b, TM, "setup", {"n", u->name});
  if (m->accessors) EMIT_SNIPPET(b, TM, "extents", {"n", u->name});
  if (m->reds) EMIT_SNIPPET(b, TM, "copy_out", {"n", u->name});
}

/* NAME_scalar_S(p[, stat]) of a scalar, NAME_history_H(p, buf) of a history: copies, so
** that they work on both backends (the header's NAME_scalar/NAME_history are static inline:
** Fortran cannot bind them). */
static void red_accessor(FMod *m, Buf *b, Decl *d) {
  GenUnit *u = m->u;
  bool h = d->history_of.name != NULL;
  const char *fn = fn_unique(u, &m->mod, arena_printf(&u->cc->arena, "%s_%s_%s", u->name, h ? "history" : "scalar", d->name));
  if (h)
    EMIT_SNIPPET(b, TM, "history_acc", {"n", u->name}, {"fn", fn}, {"s", d->history_of.name}, {"h", d->name},
                 {"T", f_type(d->dtype, false)}, {"cdt", gen_cnp_dtype(d->dtype)});
  else
    EMIT_SNIPPET(b, TM, "scalar_acc", {"n", u->name}, {"fn", fn}, {"s", d->name}, {"dt", dtype_name(d->dtype)},
                 {"T", f_type(d->dtype, false)}, {"cdt", gen_cnp_dtype(d->dtype)});
}

/* An extent as written: "N", "3", "n_cells + 1" (arena text). */
static const char *ext_text(GenUnit *u, const Expr *e) {
  if (e->kind == EX_INT) return arena_printf(&u->cc->arena, "%lld", (long long)e->ival);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (f) {
    dump_expr(f, e);
    fclose(f);
  }
  const char *r = arena_printf(&u->cc->arena, "%s", text ? text : "?");
  free(text);
  return r;
}

/* ", " between the parts of a list: "" before the first. */
static const char *sep(int k) { return k ? ", " : ""; }

/* A typed accessor: NAME_field_F(p[, stat]) or NAME_snapshot_S(p[, stat]). */
static void accessor(FMod *m, Buf *b, Decl *d, Decl *f, bool snap) {
  GenUnit *u = m->u;
  Arena *a = &u->cc->arena;
  int r = f->shape.rank;
  const char *fn = fn_unique(u, &m->mod, arena_printf(a, "%s_%s_%s", u->name, snap ? "snapshot" : "field", d->name));
  const char *dims = "", *sect = "", *cs = "", *fs = "";
  for (int k = 0; k < r; k++) dims = arena_printf(a, "%s%s:", dims, sep(k));
  for (int k = 1; k <= r; k++) sect = arena_printf(a, "%s%s1:view%%shape(%d)", sect, sep(k - 1), r - k + 1);
  /* the C shape as written, and its Fortran reading */
  for (int k = 0; k < r; k++) cs = arena_printf(a, "%s%s%s", cs, sep(k), ext_text(u, f->shape.ext[k]));
  for (int k = r - 1; k >= 0; k--) fs = arena_printf(a, "%s%s%s", fs, sep(r - 1 - k), ext_text(u, f->shape.ext[k]));
  EMIT_SNIPPET(b, TM, "accessor", {"snap", snap ? "1" : ""}, {"n", u->name}, {"fn", fn}, {"d", d->name},
               {"f", f->name}, {"dt", dtype_name(f->dtype)}, {"cs", cs}, {"fs", fs}, {"dims", dims},
               {"sect", sect}, {"T", f_type(f->dtype, false)}, {"r", gen_int(u, r)},
               {"cdt", gen_cnp_dtype(f->dtype)}, {"es", gen_int(u, elem_size(f->dtype))});
}

void gen_fortran(GenUnit *u, Buf *b) {
  FMod m;
  memset(&m, 0, sizeof m);
  m.u = u;
  const char *n = u->name;
  if (!isalpha((unsigned char)n[0])) {
    diag_plain(u->cc, "cannot generate the Fortran module: the pipeline name '%s' does not start with a letter", n);
    return;
  }
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_STREAM) m.n_streams++;
    if (d->kind == DECL_FIELD || (d->kind == DECL_SNAPSHOT && d->target.decl)) m.accessors++;
    if (d->kind == DECL_FIELD && (d->scalar || d->history_of.name)) m.reds++;
  }
  /* module-scope names the emitter writes itself */
  static const char *const fixed[] = {"cnp_array", "CNP_BACKEND_HOST", "CNP_BACKEND_CUDA"};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) fn_reserve(&m.mod, fixed[i]);
  static const char *const procs[] = {
      "config", "stats", "step", "sync", "teardown", "stats_get", "backend", "setup_c", "field_c",
      "extent_c", "set_extent_c", "snapshot_c", "error_c", "cnp_layout", "cnp_status_name_c",
      "cnp_last_error_c", "cnp_strlen", "cnp_string", "status_name", "last_error", "error_message",
      "check_layout", "cnp_comp_name", "setup", "field", "extent", "set_extent", "snapshot",
      "cnp_extents", "cnp_stats_probe", "cnp_array_probe", "cnp_wrap_c", "cnp_copy_c", "cnp_copy_out"};
  for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++)
    fn_reserve(&m.mod, arena_printf(&u->cc->arena, "%s_%s", n, procs[i]));
  fn_reserve(&m.mod, arena_printf(&u->cc->arena, "%s_NUM_STREAMS", u->upper));
  fn_reserve(&m.mod, arena_printf(&u->cc->arena, "%s_cnp", n));

  EMIT_SNIPPET(b, TM, "head", {"src", u->src_path}, {"stem", u->stem}, {"n", n}, {"N", u->upper});
#define F_STATUS(name, code, text)                                                                 \
  EMIT_SNIPPET(b, TM, "status", {"name", arena_printf(&u->cc->arena, "%-12s", #name)},           \
               {"code", arena_printf(&u->cc->arena, "%4d", code)}, {"text", text});
  CNP_STATUS_MAP(F_STATUS)
#undef F_STATUS
  EMIT_SNIPPET(b, TM, "consts", {"n", n}, {"N", u->upper}, {"stem", u->stem}, {"ns", gen_int(u, m.n_streams)});
  config_type(&m, b);
  EMIT_SNIPPET(b, TM, "types_end", {"n", n});
  interfaces(&m, b);
  procedures(&m, b);
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_FIELD) accessor(&m, b, d, d, false);
    if (d->kind == DECL_SNAPSHOT && d->target.decl) accessor(&m, b, d, d->target.decl, true);
  }
  for (Decl *d = u->cc->decls; d; d = d->next)
    if (d->kind == DECL_FIELD && (d->scalar || d->history_of.name)) red_accessor(&m, b, d);
  EMIT_SNIPPET(b, TM, "end", {"n", n});
  fold_lines(b);
}

/* STEM_cnp_layout.c: the C side of the layout check. */
void gen_fortran_c(GenUnit *u, Buf *b) {
  const char *n = u->name;
  Buf offs = {0};
  for (Decl *d = u->cc->decls; d; d = d->next) {
    if (d->kind == DECL_DIM || (d->kind == DECL_PARAM && d->setup))
      EMIT_SNIPPET(&offs, TM, "offset", {"n", n}, {"c", d->name});
    else if (d->kind == DECL_MIRROR)
      EMIT_SNIPPET(&offs, TM, "offset", {"n", n}, {"c", arena_printf(&u->cc->arena, "%s_host", d->name)});
  }
  EMIT_SNIPPET(b, TM, "layout_c", {"src", u->src_path}, {"stem", u->stem}, {"n", n}, {"offs", buf_take(u, &offs)});
}
