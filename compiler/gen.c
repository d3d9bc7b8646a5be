/*
** gen.c -- code generation entry point: gen_emit() lowers the checked AST, prints the
** fusion report when asked, fills the templates and writes NAME.h / NAME.c / NAME.cu /
** NAME.dot (each only when its content changed).
*/
#define _POSIX_C_SOURCE 200809L
#include "gen.h"

#include <errno.h>
#include <sys/stat.h>

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Replaces each "#line @@CNP_LINE_BACK@@" marker with "#line <its next line> "<file>"". */
static void fix_line_markers(Buf *b, const char *file) {
  static const char marker[] = "#line @@CNP_LINE_BACK@@\n";
  if (!strstr(buf_str(b), marker)) return;
  Buf out = {0};
  const char *s = buf_str(b);
  int line = 1;
  while (*s) {
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s + 1) : strlen(s);
    if (n == sizeof marker - 1 && memcmp(s, marker, n) == 0) buf_printf(&out, "#line %d \"%s\"\n", line + 1, file);
    else buf_put(&out, s, n);
    line++;
    s += n;
  }
  buf_free(b);
  *b = out;
}

/* mkdir -p for --out-dir and the directory of -o. */
static int make_dirs(Cnp *cc, const char *dir) {
  char *d = arena_strndup(&cc->arena, dir, strlen(dir));
  for (char *q = d + 1; ; q++) {
    if (*q == '/' || *q == '\0') {
      char c = *q;
      *q = '\0';
      if (mkdir(d, 0777) != 0 && errno != EEXIST) {
        diag_plain(cc, "cannot create directory '%s'", d);
        return 1;
      }
      *q = c;
      if (c == '\0') break;
    }
  }
  return 0;
}

static int write_out(GenUnit *u, const char *base, const char *ext, Buf *b) {
  char *path = arena_printf(&u->cc->arena, "%s%s", base, ext);
  fix_line_markers(b, base_name(path));
  return emit_write(u->cc, path, b);
}

/* Make-style path: spaces and '#' escaped with a backslash, '$' doubled. */
static void dep_path(Buf *b, const char *p) {
  for (; *p; p++) {
    if (*p == ' ' || *p == '#') buf_put(b, "\\", 1);
    if (*p == '$') buf_put(b, "$", 1);
    buf_put(b, p, 1);
  }
}

/* -MD: "target: input imports... kernel files..." (kernel files relative to the .cnp file
** that declares them, as lower.c reads them), with -MP a phony rule per dependency. */
static int write_depfile(GenUnit *u, const char *base, unsigned emit) {
  Cnp *cc = u->cc;
  const CnpOptions *opt = u->opt;
  const char *first = (emit & EMIT_C) ? ".c" : (emit & EMIT_CUDA) ? ".cu" : ".h";
  const char *target = opt->mt ? opt->mt : arena_printf(&cc->arena, "%s%s", base, first);
  const char *mf = opt->mf ? opt->mf : arena_printf(&cc->arena, "%s.d", base);
  const char *deps[512];
  int n = 0;
  deps[n++] = u->src_path;
  for (int i = 0; i < cc->n_deps && n < 511; i++) deps[n++] = cc->deps[i];
  for (Decl *d = cc->decls; d && n < 510; d = d->next)
    if (d->kind == DECL_KERNEL) {
      const char *from = d->file ? d->file->path : u->src_path;
      const char *slash = strrchr(from, '/');
      const char *paths[2] = {d->path, d->host_path};
      for (int k = 0; k < 2; k++)
        if (paths[k])
          deps[n++] = (slash && paths[k][0] != '/')
                          ? arena_printf(&cc->arena, "%.*s/%s", (int)(slash - from), from, paths[k])
                          : paths[k];
    }
  Buf b = {0};
  dep_path(&b, target);
  buf_puts(&b, ":");
  for (int i = 0; i < n; i++) {
    buf_puts(&b, " \\\n  ");
    dep_path(&b, deps[i]);
  }
  buf_puts(&b, "\n");
  if (opt->mp)
    for (int i = 1; i < n; i++) {
      buf_puts(&b, "\n");
      dep_path(&b, deps[i]);
      buf_puts(&b, ":\n");
    }
  int rc = emit_write(cc, mf, &b);
  buf_free(&b);
  return rc;
}

const GenTarget *const gen_targets[] = {&gen_target_host, &gen_target_cuda};
const int gen_n_targets = (int)(sizeof gen_targets / sizeof gen_targets[0]);

static void out_header(GenUnit *u, const GenTarget *t, Buf *b) {
  (void)t;
  gen_header(u, b);
}

static void out_dot(GenUnit *u, const GenTarget *t, Buf *b) {
  (void)t;
  gen_dot(u, b);
}

static void out_manifest(GenUnit *u, const GenTarget *t, Buf *b) {
  (void)t;
  gen_manifest(u, b);
}

/* The outputs, in the order they are written: the header, one unit per target (its --emit
** bit and file extension), the DOT drawing and the manifest. */
typedef struct GenOutput {
  unsigned emit;
  const char *ext;
  void (*fn)(GenUnit *u, const GenTarget *t, Buf *b);
  const GenTarget *t;
} GenOutput;

static const GenOutput outputs[] = {
    {EMIT_HEADER, ".h", out_header, NULL},
    {0, NULL, gen_unit, &gen_target_host},
    {0, NULL, gen_unit, &gen_target_cuda},
    {EMIT_DOT, ".dot", out_dot, NULL},
    {EMIT_MANIFEST, ".json", out_manifest, NULL},
};

int gen_emit(Cnp *cc, const CnpOptions *opt) {
  if (cc->n_errors) return 1;
  if (!cc->pipeline) {
    diag_plain(cc, "no 'pipeline NAME;' declaration: nothing to generate");
    return 1;
  }
  /* Source paths go verbatim into #line "...", comments and message strings of the
  ** generated code: a '"', '\\', a newline or a comment end there would not compile. */
  const char *paths[512];
  int np = 0;
  for (CnpFile *f = cc->files; f && np < 510; f = f->next) paths[np++] = f->path;
  for (Decl *d = cc->decls; d && np < 510; d = d->next)
    if (d->kind == DECL_KERNEL) {
      if (d->path) paths[np++] = d->path;
      if (d->host_path) paths[np++] = d->host_path;
    }
  for (int i = 0; i < np; i++) {
    const char *bad = strpbrk(paths[i], "\"\\\n");
    if (bad || strstr(paths[i], "*/")) {
      diag_plain(cc, "cannot generate code from '%s': its path contains %s, which the generated "
                 "#line directives, comments and messages cannot carry (rename it)", paths[i],
                 bad ? (*bad == '"' ? "'\"'" : *bad == '\\' ? "'\\'" : "a newline") : "'*/'");
      return 1;
    }
  }
  GenUnit u;
  memset(&u, 0, sizeof u);
  u.cc = cc;
  u.opt = opt;
  u.name = cc->pipeline->name;
  char *up = arena_strndup(&cc->arena, u.name, strlen(u.name));
  for (char *q = up; *q; q++) *q = (char)toupper((unsigned char)*q);
  u.upper = up;
  u.src_path = opt->input ? opt->input : cc->files->path;
  const char *base;
  if (opt->output) {
    base = opt->output;
    /* `-o pic.c` (as with a C compiler) means base `pic`, not pic.c.c, pic.c.h, ... */
    static const char *const ext[] = {".c", ".h", ".cu", ".dot", ".json", ".d", ".hpp", ".f90"};
    size_t n = strlen(base);
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
      size_t e = strlen(ext[i]);
      if (n > e && !strcmp(base + n - e, ext[i]) && base[n - e - 1] != '/') {
        base = arena_strndup(&cc->arena, base, n - e);
        break;
      }
    }
    u.stem = base_name(base);
  } else {
    /* The pipeline names the generated API and, by default, its files: `pipeline pic_step;`
    ** in foo.cnp writes pic_step.h, pic_step.c, ... (-o overrides). */
    u.stem = u.name;
    base = opt->out_dir ? arena_printf(&cc->arena, "%s/%s", opt->out_dir, u.stem) : u.stem;
  }
  if (!opt->output && opt->out_dir && make_dirs(cc, opt->out_dir)) return 1;
  const char *slash = opt->output ? strrchr(base, '/') : NULL;   /* -o dir/x: dir as --out-dir */
  if (slash && slash > base && make_dirs(cc, arena_strndup(&cc->arena, base, (size_t)(slash - base)))) return 1;
  if (lower_unit(&u)) {
    buf_free(&u.explain);
    return 1;
  }
  /* The generator never prints by itself: the caller chooses the sink (main.c: stdout). */
  if (opt->explain_fusion && opt->report) fputs(buf_str(&u.explain), opt->report);
  buf_free(&u.explain);
  int rc = 0;
  unsigned emit = opt->emit ? opt->emit : EMIT_DEFAULT;
  for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; i++) {
    const GenOutput *o = &outputs[i];
    if (!(emit & (o->t ? o->t->emit : o->emit))) continue;
    Buf b = {0};
    o->fn(&u, o->t, &b);
    rc |= write_out(&u, base, o->t ? o->t->ext : o->ext, &b);
    buf_free(&b);
  }
  if (emit & EMIT_FORTRAN) {
    Buf b = {0}, c = {0};
    gen_fortran(&u, &b);
    gen_fortran_c(&u, &c);
    if (cc->n_errors) rc = 1;
    else rc |= write_out(&u, base, "_cnp.f90", &b) | write_out(&u, base, "_cnp_layout.c", &c);
    buf_free(&b);
    buf_free(&c);
  }
  if (emit & EMIT_CXX) {
    Buf b = {0};
    gen_cxx(&u, &b);
    if (cc->n_errors) rc = 1;
    else rc |= write_out(&u, base, ".hpp", &b);
    buf_free(&b);
  }
  if (opt->md) rc |= write_depfile(&u, base, emit);
  return rc;
}
