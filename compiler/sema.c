/*
** sema.c -- semantic checks, the driver: the symbol table, names (defined once, before
** use, "did you mean"), hazard ops, races inside a map, and declarations. Expressions
** are typed in sema_expr.c, step statements checked in sema_stmt.c, the step graph and
** its stream hazards analysed in sema_hazard.c (one private header: sema_internal.h).
** Fills Ref.decl/.local, Expr.type/.flags, Decl.ival/.fval/.slots and Stmt.scatter.
*/
#include "sema_internal.h"

#include <stdlib.h>
#include <ctype.h>
#include <string.h>

/* ------------------------------------------------------------------ symbol table */

/*
** Names are interned (ast_str), so the tables are keyed by the name's pointer: open
** addressing, no string hashing or comparison. Lookups never depend on table order.
*/
typedef struct SymTab {
  Sym *v;
  unsigned mask;            /* capacity - 1 (a power of two) */
} SymTab;

static unsigned hash_ptr(const char *p) {
  uint64_t x = (uint64_t)(uintptr_t)p >> 4;   /* arena strings are 16-byte aligned */
  return (unsigned)((x * UINT64_C(0x9E3779B97F4A7C15)) >> 32);
}

static SymX *tab_find(const SymTab *t, const char *name) {
  if (!t->v || !name) return NULL;
  for (unsigned k = hash_ptr(name) & t->mask;; k = (k + 1) & t->mask) {
    Sym *s = &t->v[k];
    if (s->name == name) return s;
    if (!s->name) return NULL;
  }
}

static void tab_add(SymTab *t, Decl *d, int pos) {
  unsigned k = hash_ptr(d->name) & t->mask;
  while (t->v[k].name) k = (k + 1) & t->mask;
  t->v[k] = (Sym){d->name, d, pos};
}

SymX *sym_find(Sema *S, const char *name) { return tab_find(S->tab, name); }

Decl *sema_lookup(Cnp *cc, const char *name) {
  SymTab t = {cc->symtab, (unsigned)cc->symtab_cap - 1};
  SymX *s = cc->symtab ? tab_find(&t, ast_intern_find(cc, name, strlen(name))) : NULL;
  return s ? s->decl : NULL;
}

/* ------------------------------------------------------------------ name resolution */

static const char *kind_list(unsigned mask) {
  if (mask == K(DECL_FIELD)) return "field";
  if (mask == K(DECL_STREAM)) return "stream";
  if (mask == K(DECL_EVENT)) return "event";
  if (mask == K(DECL_SNAPSHOT)) return "snapshot";
  if (mask == K(DECL_MPI)) return "mpi staging";
  if (mask == K(DECL_MIRROR)) return "mirror";
  if (mask == K(DECL_PLAN)) return "plan";
  if (mask == K(DECL_KERNEL)) return "kernel";
  if (mask == K(DECL_DIM)) return "dim";
  if (mask == K(DECL_GRID)) return "grid";
  return "name";
}

/*
** The closest declared name (of the wanted kinds, and map locals in scope) within a
** small edit distance, or NULL.
*/
static const char *suggest(Sema *S, const char *name, unsigned mask, bool locals) {
  int len = (int)strlen(name);
  int cap = (len + 2) / 3;
  if (cap >= len) cap = len - 1;     /* never suggest replacing the whole name */
  if (cap > 3) cap = 3;
  if (cap < 1) return NULL;
  const char *best = NULL;
  int best_d = cap + 1;
  if (locals)
    for (int i = S->n_scope - 1; i >= 0; i--) {
      int d = diag_edit_distance(name, S->scope[i]->name, cap);
      if (d < best_d) best_d = d, best = S->scope[i]->name;
    }
  for (Decl *d = S->cc->decls; d; d = d->next) {
    if (!d->name || !(mask & K(d->kind))) continue;
    int dist = diag_edit_distance(name, d->name, cap);
    if (dist < best_d) best_d = dist, best = d->name;
  }
  if (S->mpi_names) {
    static const char *const mpi[] = {"rank", "size"};
    for (int i = 0; i < 2; i++) {
      int d = diag_edit_distance(name, mpi[i], cap);
      if (d < best_d) best_d = d, best = mpi[i];
    }
  }
  return best;
}

void unknown(Sema *S, Ref *r, unsigned mask, bool locals) {
  const char *s = suggest(S, r->name, mask, locals);
  if (s) diag_error(S->cc, r->loc, "unknown %s '%s'; did you mean '%s'?", kind_list(mask), r->name, s);
  else diag_error(S->cc, r->loc, "unknown %s '%s'", kind_list(mask), r->name);
}

const char *article(DeclKind k) {
  return (k == DECL_EVENT || k == DECL_IMPORT || k == DECL_MPI) ? "an" : "a";
}

/* The article of kind_list(mask): "not an event", "not an mpi staging" (the kind wanted,
** not the kind found, decides it). */
static const char *kind_article(unsigned mask) {
  for (int k = 0; k < DECL__COUNT; k++)
    if (mask == K(k)) return article((DeclKind)k);
  return "a";
}

/*
** Resolve a global reference that must be one of the kinds in `mask`. Reports unknown
** names, names used before their definition, and names of the wrong kind.
*/
Decl *resolve_found(Sema *S, Ref *r, SymX *s, unsigned mask) {
  if (!s) {
    unknown(S, r, mask, false);
    return NULL;
  }
  if (s->pos >= S->pos) {
    diag_error(S->cc, r->loc, "'%s' is used before its definition", r->name);
    diag_note(S->cc, s->decl->loc, "'%s' is defined here", r->name);
    return NULL;
  }
  if (!(mask & K(s->decl->kind))) {
    diag_error(S->cc, r->loc, "'%s' is %s %s, not %s %s", r->name, article(s->decl->kind),
               decl_noun(s->decl), mask == K_VALUE ? "a" : kind_article(mask),
               mask == K_VALUE ? "value" : kind_list(mask));
    diag_note(S->cc, s->decl->loc, "'%s' is declared here", r->name);
    return NULL;
  }
  r->decl = s->decl;
  return s->decl;
}

Decl *resolve(Sema *S, Ref *r, unsigned mask) {
  if (!r->name) return NULL;
  return resolve_found(S, r, sym_find(S, r->name), mask);
}

Local *find_local(Sema *S, const char *name) {   /* names are interned */
  for (int i = S->n_scope - 1; i >= 0; i--)
    if (S->scope[i]->name == name) return S->scope[i];
  return NULL;
}

void push_local(Sema *S, Local *l) {
  Local *prev = find_local(S, l->name);
  SymX *g0;
  if (prev) {
    diag_error(S->cc, l->loc, "redefinition of '%s'", l->name);
    diag_note(S->cc, prev->loc, "previous definition is here");
  } else if ((g0 = sym_find(S, l->name)) && g0->pos < S->pos) {
    Decl *g = g0->decl;
    diag_error(S->cc, l->loc, "'%s' shadows %s %s", l->name, article(g->kind), decl_noun(g));
    diag_note(S->cc, g->loc, "'%s' is declared here", l->name);
  }
  if (S->n_scope == S->cap_scope) {
    S->cap_scope = S->cap_scope ? 2 * S->cap_scope : 16;
    Local **v = arena_alloc(&S->cc->arena, sizeof *v * (size_t)S->cap_scope);
    if (S->n_scope) memcpy(v, S->scope, sizeof *v * (size_t)S->n_scope);
    S->scope = v;
  }
  S->scope[S->n_scope++] = l;
}

/* ------------------------------------------------------------------ hazard ops */

void hz_op(Sema *S, HzKind k, Decl *obj, const Loc *loc) {
  if (!obj) return;
  HzChunk *c = S->ops_tail;
  if (!c || c->n == HZ_CHUNK) {
    c = arena_alloc(&S->cc->arena, sizeof *c);
    if (S->ops_tail) S->ops_tail->next = c;
    else S->ops = c;
    S->ops_tail = c;
  }
  c->v[c->n++] = (HzOp){obj, loc, k};
}

/* ------------------------------------------------------------------ races inside a map */


static const char *const macc_what[MA__COUNT] = {
  "read", "gathered", "written", "updated", "scatter-added", "reduced",
};

/*
** Two accesses of one field in one map race when one touches other elements than its own
** (a gather or a scatter-add) while the other writes, or reads while scatter-adds happen.
*/
static bool macc_conflict(int a, int b) {
  if (a > b) { int t = a; a = b; b = t; }
  if (b == MA_REDUCE) return a == MA_READ;
  if (b == MA_SCATTER) return a != MA_SCATTER;
  return a == MA_GATHER && (b == MA_STORE || b == MA_ADD);
}

void map_access(Sema *S, Decl *f, int kind, Loc loc) {
  for (int i = 0; i < S->n_macc; i++) {
    MapAcc *m = &S->macc[i];
    if (m->f != f) continue;
    if (m->kind == kind) return;
    if (macc_conflict(m->kind, kind) && f->scalar) {
      diag_error(S->cc, loc, "scalar '%s' is %s here and %s elsewhere in the same map: a map cannot "
                 "read the scalar it reduces into (read it in a later map)", f->name, macc_what[kind],
                 macc_what[m->kind]);
      diag_note(S->cc, m->loc, "'%s' is %s here", f->name, macc_what[m->kind]);
      return;
    }
    if (macc_conflict(m->kind, kind)) {
      diag_error(S->cc, loc, "field '%s' is %s here and %s elsewhere in the same map: the result "
                 "would depend on the order of elements", f->name, macc_what[kind], macc_what[m->kind]);
      diag_note(S->cc, m->loc, "'%s' is %s here", f->name, macc_what[m->kind]);
      return;
    }
  }
  if (S->n_macc == S->cap_macc) {
    S->cap_macc = S->cap_macc ? 2 * S->cap_macc : 16;
    MapAcc *v = arena_alloc(&S->cc->arena, sizeof *v * (size_t)S->cap_macc);
    if (S->n_macc) memcpy(v, S->macc, sizeof *v * (size_t)S->n_macc);
    S->macc = v;
  }
  S->macc[S->n_macc++] = (MapAcc){f, kind, loc};
}

/* ------------------------------------------------------------------ declarations */

static void check_const(Sema *S, Decl *d) {
  DType t = check_expr(S, d->value);
  if (t == DT_VOID) return;
  if (t == DT_BOOL || d->dtype == DT_BOOL) {   /* const FLAG = true; */
    if (d->value->kind != EX_BOOL || (d->dtype != DT_VOID && d->dtype != DT_BOOL)) {
      diag_error(S->cc, d->value->loc, "a bool constant is 'true' or 'false'");
      return;
    }
    d->dtype = DT_BOOL;
    d->ival = d->value->ival;
    d->fval = (double)d->ival;
    return;
  }
  bool f;
  int64_t iv;
  double fv;
  if (!fold(S, d->value, &f, &iv, &fv)) return;
  if (d->dtype == DT_VOID) d->dtype = f ? DT_F64 : t == DT_U64 ? DT_U64 : DT_I64;
  else if (!dtype_is_int(d->dtype) && !dtype_is_float(d->dtype)) {   /* c64: before its value */
    diag_error(S->cc, d->loc, "constants must be bool, integers or floats, not '%s'", dtype_name(d->dtype));
    return;
  } else if (f && !dtype_is_float(d->dtype)) {
    diag_error(S->cc, d->value->loc, "constant '%s' of type '%s' has a floating value", d->name, dtype_name(d->dtype));
    return;
  }
  if (dtype_is_int(d->dtype) && f) iv = fold_f2i(fv, d->dtype);
  if (dtype_is_int(d->dtype) && !f) {           /* the value must fit the declared type */
    bool big = t == DT_U64 && iv < 0;          /* above INT64_MAX */
    if ((d->dtype == DT_I32 && (big || iv < INT32_MIN || iv > INT32_MAX)) ||
        (d->dtype == DT_I64 && big) || (d->dtype == DT_U64 && t != DT_U64 && iv < 0)) {
      if (big)
        diag_error(S->cc, d->value->loc, "constant '%s' (%llu) does not fit in '%s'", d->name,
                   (unsigned long long)iv, dtype_name(d->dtype));
      else
        diag_error(S->cc, d->value->loc, "constant '%s' (%lld) does not fit in '%s'", d->name,
                   (long long)iv, dtype_name(d->dtype));
      return;
    }
  }
  d->ival = iv;
  /* a typed f32 / f16 constant holds its f32 / f16 value (as its uses compute with it) */
  d->fval = dtype_is_int(d->dtype) ? (double)iv : d->dtype == DT_F32 ? (double)(float)fv
          : d->dtype == DT_F16 ? half_round(fv) : fv;
}

Decl *field_ref(Sema *S, Ref *r) { return resolve(S, r, K(DECL_FIELD)); }


/* Cell ids, plan keys and migration destinations: the runtime takes int32 or int64 (u64
** keys are for sort only); offsets are int64. */
bool signed_field(Sema *S, Decl *f, Loc at, const char *role, bool i64_only) {
  if (!int_field(S, f, at, role)) return false;
  if (f->dtype == DT_I64 || (!i64_only && f->dtype == DT_I32)) return true;
  diag_error(S->cc, at, "%s '%s' must be %s, not %s", role, f->name, i64_only ? "i64" : "i32 or i64",
             sema_type_text(S->cc, f));
  diag_note(S->cc, f->loc, "'%s' is declared here", f->name);
  return false;
}

bool int_field(Sema *S, Decl *f, Loc at, const char *role) {
  if (!f) return false;
  if (!dtype_is_int(f->dtype) || f->shape.rank != 1) {
    diag_error(S->cc, at, "%s '%s' must be a one-dimensional integer field, not %s",
               role, f->name, sema_type_text(S->cc, f));
    diag_note(S->cc, f->loc, "'%s' is declared here", f->name);
    return false;
  }
  return true;
}

/* The pipeline name becomes C identifiers at file scope (the typedef NAME, NAME_setup,
** NAME_config, NAME_CONFIG_INIT): it cannot be a C or C++ keyword (the header is used from
** both), a macro, a name of the C library / OpenMP / CUDA (`pipeline exp;` would redeclare
** exp() for any program including <math.h>), `main`, or take the runtime's prefix `cnp_`. */
static void check_pipeline_name(Sema *S, Decl *d) {
  if (!d->name) return;
  CnClash c = cn_clash_function(d->name);
  if (c != CN_FREE || !strcmp(d->name, "main")) {
    diag_error(S->cc, d->loc, "pipeline name '%s' %s (it names the generated C API)", d->name,
               c == CN_FREE ? cn_clash_text(CN_KEYWORD) : cn_clash_text(c));
    return;
  }
  char low[5] = {0};
  for (int i = 0; i < 4 && d->name[i]; i++) low[i] = (char)tolower((unsigned char)d->name[i]);
  if (!strcmp(low, "cnp") || !strcmp(low, "cnp_"))
    diag_error(S->cc, d->loc, "pipeline name '%s' takes the runtime's prefix 'cnp_' (it names the generated C API)",
               d->name);
}

/* Dims and setup params are members of the generated NAME_config (cfg.N, cfg.n_cells), and
** so is cfg.<mirror>_host: a C or C++ keyword, a macro (`dim EOF;` in any program that
** includes <stdio.h>), or a member the config already has would not compile. */
static void check_config_member(Sema *S, Decl *d) {
  static const char *const own[] = {"backend", "strict", "mpi_fcomm", "cuda_streams"};
  if (!d->name || (d->kind == DECL_PARAM && !d->setup)) return;
  const char *what = d->kind == DECL_DIM ? "dim" : "setup param";
  CnClash c = cn_clash(d->name);
  if (c == CN_KEYWORD || c == CN_MACRO) {
    diag_error(S->cc, d->loc, "%s '%s' %s (it names the config member cfg.%s)", what, d->name,
               cn_clash_text(c), d->name);
    return;
  }
  for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
    if (!strcmp(d->name, own[i]))
      diag_error(S->cc, d->loc, "%s '%s' would be a second config member cfg.%s (the configuration's own)",
                 what, d->name, d->name);
}

/* The main file's pipeline declaration, wherever it stands among the declarations. */
static const Decl *main_pipeline(const Cnp *cc) {
  for (const Decl *d = cc->decls; d; d = d->next)
    if (d->kind == DECL_PIPELINE && d->name && !d->file->imported) return d;
  return NULL;
}

/* Does kernel name n take the generated code's own names: the pipeline's name P, its
** symbols P_... and its header's macros P'_... (P in upper case: P_NUM_STREAMS)? */
static bool takes_pipeline_prefix(const char *n, const char *pipe) {
  size_t len = strlen(pipe);
  if (!strcmp(n, pipe)) return true;
  if (strlen(n) <= len || n[len] != '_') return false;
  bool lower = true, upper = true;
  for (size_t i = 0; i < len; i++) {
    lower = lower && n[i] == pipe[i];
    upper = upper && n[i] == (char)toupper((unsigned char)pipe[i]);
  }
  return lower || upper;
}

/* A hand-written kernel is called by its own name (the CUDA kernel, its host fallback): it
** must be a C function name the generated unit can declare and call, so not a keyword, a
** macro or a name of the C library / OpenMP / CUDA (`exp` would redeclare exp()), `main`, the
** runtime's prefix, the pipeline's own names (pic_step), or a variable of the generated
** step() around the call (p, S, n, a0...). */
static void check_kernel_name(Sema *S, Decl *d) {
  if (!d->name) return;
  CnClash c = cn_clash_function(d->name);
  const char *n = d->name;
  const Decl *pipe = main_pipeline(S->cc);
  bool arg = n[0] == 'a' && n[1];
  for (const char *q = n + 1; arg && *q; q++) arg = *q >= '0' && *q <= '9';
  if (c != CN_FREE || !strcmp(n, "main"))
    diag_error(S->cc, d->loc, "kernel name '%s' %s (the kernel and its host fallback are C functions of "
               "that name)", n, c == CN_FREE ? cn_clash_text(CN_KEYWORD) : cn_clash_text(c));
  else if (!strncmp(n, "cnp_", 4) || !strncmp(n, "CNP_", 4))
    diag_error(S->cc, d->loc, "kernel name '%s' takes the runtime's prefix 'cnp_'", n);
  else if (!strcmp(n, "p") || !strcmp(n, "S") || !strcmp(n, "n") || arg)
    diag_error(S->cc, d->loc, "kernel name '%s' is a variable of the generated step() where the kernel "
               "is called (p, S, n, a0, a1, ...)", n);
  else if (pipe && takes_pipeline_prefix(n, pipe->name))
    diag_error(S->cc, d->loc, "kernel name '%s' takes the prefix of pipeline '%s', which names the "
               "generated code's own functions, types and macros (%s_step, %s_config, ...)", n, pipe->name,
               pipe->name, pipe->name);
}

/* A field is the device copy of one host array: a second mirror of it would ask setup for
** a host array that the field could not be (gen_setup.c wires the first mirror only). */
static void check_mirror_unique(Sema *S, Decl *d) {
  Decl *f = d->target.decl;
  if (!f) return;
  for (Decl *o = S->cc->decls; o && o != d; o = o->next)
    if (o->kind == DECL_MIRROR && o->target.decl == f) {
      diag_error(S->cc, d->target.loc, "field '%s' is already the device copy of mirror '%s': a field "
                 "mirrors one host array", f->name, o->name);
      diag_note(S->cc, o->loc, "'%s' is declared here", o->name);
      return;
    }
}

/* mirror M is the config member cfg.M_host: no dim or setup param may have that name. */
static void check_mirror_member(Sema *S, Decl *d) {
  if (!d->name) return;
  const char *member = arena_printf(&S->cc->arena, "%s_host", d->name);
  for (Decl *o = S->cc->decls; o; o = o->next)
    if (o->name && !strcmp(o->name, member) &&
        (o->kind == DECL_DIM || (o->kind == DECL_PARAM && o->setup))) {
      Decl *first = d;   /* the one declared first (program order) gets the note */
      for (Decl *e = S->cc->decls; e && e != d; e = e->next)
        if (e == o) first = o;
      Decl *second = first == o ? d : o;
      diag_error(S->cc, second->loc, "%s '%s' and mirror '%s' would both be the config member cfg.%s",
                 o->kind == DECL_DIM ? "dim" : "setup param", o->name, d->name, member);
      diag_note(S->cc, first->loc, "'%s' is declared here", first->name);
    }
}

static void check_decl(Sema *S, Decl *d) {
  switch (d->kind) {
  case DECL_PARAM: case DECL_DIM:
    check_config_member(S, d);
    break;
  case DECL_KERNEL:
    check_kernel_name(S, d);
    break;
  case DECL_STREAM: case DECL_EVENT: case DECL_IMPORT:
    break;
  case DECL_PIPELINE:
    if (d->file->imported) diag_error(S->cc, d->kw_loc, "'pipeline' in an imported file");
    else if (S->cc->pipeline) {
      diag_error(S->cc, d->kw_loc, "second 'pipeline' declaration");
      diag_note(S->cc, S->cc->pipeline->kw_loc, "the pipeline is named here");
    } else S->cc->pipeline = d;
    check_pipeline_name(S, d);
    break;
  case DECL_CONST:
    check_const(S, d);
    break;
  case DECL_FIELD:
    if (d->scalar && !scalar_dtype(d->dtype))
      diag_error(S->cc, d->loc, "a scalar is i32, i64, u64, f32 or f64, not '%s'", dtype_name(d->dtype));
    if (d->history_of.name) {
      Decl *sc = field_ref(S, &d->history_of);
      if (sc && !sc->scalar) {
        diag_error(S->cc, d->history_of.loc, "a history records a scalar, but '%s' is a field",
                   sc->name);
        sc = NULL;
      }
      d->dtype = sc ? sc->dtype : DT_F64;
      if (check_extent_expr(S, d->shape.ext[0], "the length of a history"))
        check_const_positive(S, d->shape.ext[0], "the length of a history");
      break;
    }
    if (!grid_field_shape(S, d)) check_shape(S, &d->shape);
    break;
  case DECL_GRID:
    if (d->target.name) check_rfft_grid(S, d);   /* grid K = rfft(G); (sema_fft.c) */
    else check_grid(S, d);
    break;
  case DECL_MPI:
    check_shape(S, &d->shape);
    break;
  case DECL_SNAPSHOT:
    field_ref(S, &d->target);
    if (d->value) {
      bool f;
      int64_t iv;
      double fv;
      check_expr(S, d->value);
      if (fold(S, d->value, &f, &iv, &fv)) {
        if (f || iv < 1 || iv > 1024) diag_error(S->cc, d->value->loc, "slots must be an integer from 1 to 1024");
        else d->slots = (int)iv;
      }
    }
    break;
  case DECL_MIRROR:
    field_ref(S, &d->target);
    check_mirror_unique(S, d);
    check_mirror_member(S, d);
    break;
  case DECL_PLAN:
    signed_field(S, field_ref(S, &d->target), d->target.loc, "the key", false);
    if (check_extent_expr(S, d->value, "the number of segments"))
      check_const_positive(S, d->value, "the number of segments");
    break;
  case DECL_STEP:
  case DECL__COUNT:
    break;
  }
}

/* ------------------------------------------------------------------ driver */

int sema_check(Cnp *cc) {
  Sema S = {0};
  S.cc = cc;
  int n = 0;
  for (Decl *d = cc->decls; d; d = d->next) n++;
  unsigned cap = 64;
  while (cap < 2u * (unsigned)n) cap *= 2;
  SymTab gtab = {arena_alloc(&cc->arena, sizeof(Sym) * cap), cap - 1};
  SymTab stab = {arena_alloc(&cc->arena, sizeof(Sym) * cap), cap - 1};
  cc->symtab = gtab.v;
  cc->symtab_cap = (int)cap;
  S.tab = &gtab;
  /* pass 1: every name, so that uses before definitions can be told apart */
  int pos = 0;
  for (Decl *d = cc->decls; d; d = d->next, pos++) {
    if (!d->name || d->kind == DECL_STEP || d->kind == DECL_PIPELINE) continue;
    SymX *prev = tab_find(&gtab, d->name);
    if (prev) {
      diag_error(cc, d->loc, "redefinition of '%s'", d->name);
      diag_note(cc, prev->decl->loc, "previous definition is here");
      continue;
    }
    tab_add(&gtab, d, pos);
  }
  /* steps with the same name (a separate table: step names are not values) */
  for (Decl *d = cc->decls; d; d = d->next) {
    if (d->kind != DECL_STEP || !d->name) continue;
    SymX *prev = tab_find(&stab, d->name);
    if (prev) {
      diag_error(cc, d->loc, "redefinition of step '%s'", d->name);
      diag_note(cc, prev->decl->loc, "previous definition is here");
    } else {
      tab_add(&stab, d, 0);
    }
    SymX *g = tab_find(&gtab, d->name);
    if (g) {
      diag_error(cc, d->loc, "step name '%s' is already %s %s", d->name, article(g->decl->kind), decl_kind_name(g->decl->kind));
      diag_note(cc, g->decl->loc, "'%s' is declared here", d->name);
    }
  }
  /* pass 2: check each declaration in order */
  pos = 0;
  for (Decl *d = cc->decls; d; d = d->next, pos++) {
    S.pos = pos;
    if (d->kind == DECL_STEP) check_step(&S, d);
    else check_decl(&S, d);
  }
  if (!cc->pipeline && cc->n_errors == 0 && cc->files) {
    Loc at = {cc->files, 1, 1, 1};
    diag_error(cc, at, "missing 'pipeline NAME;' declaration");
  }
  if (cc->n_errors == 0) check_allreduce_ops(cc);
  if (cc->n_errors == 0) sema_number_draws(cc);
  if (cc->n_errors == 0) check_graph(&S);
  if (cc->n_errors == 0) check_plans_built(cc);
  if (cc->n_errors == 0) check_compact_omits(&S);
  return cc->n_errors;
}
