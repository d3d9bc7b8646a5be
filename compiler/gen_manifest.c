/*
** gen_manifest.c -- NAME.json (--emit=manifest): a machine-readable description of what
** cnpc generated, for build tools and I/O layers that do not want to parse C: the pipeline,
** its source and imports, the generated API's per-step params and setup-time config, and
** every dim, field, stream, event, snapshot, plan and kernel with its .cnp location.
** Declarations are listed in program order, so the file is deterministic.
*/
#define _DEFAULT_SOURCE 1
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A JSON string (names and paths are plain; escape the few characters JSON forbids). */
static void jstr(Buf *b, const char *s) {
  buf_puts(b, "\"");
  for (; s && *s; s++) {
    if (*s == '"' || *s == '\\') buf_printf(b, "\\%c", *s);
    else if ((unsigned char)*s < 0x20) buf_printf(b, "\\u%04x", (unsigned char)*s);
    else buf_put(b, s, 1);
  }
  buf_puts(b, "\"");
}

/* An extent: a number, or the text of the expression naming it ("N", "n_cells"). */
static void jextent(Buf *b, const Expr *e) {
  if (e->kind == EX_INT) {
    buf_printf(b, "%lld", (long long)e->ival);
    return;
  }
  char *text = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&text, &n);
  if (f) {
    dump_expr(f, e);
    fclose(f);
  }
  jstr(b, text ? text : "?");
  free(text);
}

static void jloc(Buf *b, const Decl *d) {
  buf_puts(b, ", \"file\": ");
  jstr(b, d->file ? d->file->path : "");
  buf_printf(b, ", \"line\": %d", d->loc.line);
}

static void decl_entry(Buf *b, const Decl *d) {
  buf_puts(b, "    {\"kind\": ");
  jstr(b, decl_kind_name(d->kind));
  buf_puts(b, ", \"name\": ");
  if (d->name) jstr(b, d->name); else buf_puts(b, "null");
  switch (d->kind) {
  case DECL_PARAM:
    buf_printf(b, ", \"type\": \"%s\", \"setup\": %s", dtype_name(d->dtype),
               d->setup ? "true" : "false");
    break;
  case DECL_CONST:
    buf_printf(b, ", \"type\": \"%s\"", dtype_name(d->dtype));
    break;
  case DECL_FIELD: case DECL_MPI:
    buf_printf(b, ", \"type\": \"%s\", \"shape\": [", dtype_name(d->dtype));
    for (int i = 0; i < d->shape.rank; i++) {
      if (i) buf_puts(b, ", ");
      jextent(b, d->shape.ext[i]);
    }
    buf_puts(b, "]");
    if (d->scalar) buf_puts(b, ", \"scalar\": true");      /* `scalar NAME : T;` */
    if (d->history_of.name) {                                /* `history NAME = S[K];` */
      buf_puts(b, ", \"history_of\": ");
      jstr(b, d->history_of.name);
    }
    break;
  case DECL_SNAPSHOT: case DECL_MIRROR: case DECL_PLAN:
    buf_puts(b, ", \"of\": ");
    if (d->target.name) jstr(b, d->target.name); else buf_puts(b, "null");
    if (d->kind == DECL_SNAPSHOT) buf_printf(b, ", \"slots\": %d", d->slots);
    break;
  case DECL_IMPORT: case DECL_KERNEL:
    buf_puts(b, ", \"path\": ");
    jstr(b, d->path);
    if (d->kind == DECL_KERNEL && d->host_path) {
      buf_puts(b, ", \"host\": ");
      jstr(b, d->host_path);
    }
    break;
  case DECL_STEP:
    buf_puts(b, ", \"stream\": ");
    if (d->stream.name) jstr(b, d->stream.name); else buf_puts(b, "null");
    break;
  default:
    break;
  }
  jloc(b, d);
  buf_puts(b, "}");
}

void gen_manifest(GenUnit *u, Buf *b) {
  Cnp *cc = u->cc;
  buf_puts(b, "{\n  \"generator\": \"cnpc\",\n  \"pipeline\": ");
  jstr(b, u->name);
  buf_puts(b, ",\n  \"source\": ");
  jstr(b, u->src_path);
  buf_puts(b, ",\n  \"imports\": [");
  for (int i = 0; i < cc->n_deps; i++) {
    if (i) buf_puts(b, ", ");
    jstr(b, cc->deps[i]);
  }
  buf_printf(b, "],\n  \"outputs\": {\"header\": \"%s.h\", \"host\": \"%s.c\", \"cuda\": \"%s.cu\"},\n",
             u->stem, u->stem, u->stem);
  buf_printf(b, "  \"api\": {\"setup\": \"%s_setup\", \"step\": \"%s_step\", \"sync\": \"%s_sync\", "
                "\"field\": \"%s_field\", \"teardown\": \"%s_teardown\", \"step_params\": [",
             u->name, u->name, u->name, u->name, u->name);
  int k = 0;
  for (Decl *d = cc->decls; d; d = d->next)
    if (d->kind == DECL_PARAM && !d->setup) {
      if (k++) buf_puts(b, ", ");
      jstr(b, d->name);
    }
  buf_puts(b, "]},\n  \"declarations\": [\n");
  k = 0;
  for (Decl *d = cc->decls; d; d = d->next) {
    if (d->kind == DECL_PIPELINE) continue;
    if (k++) buf_puts(b, ",\n");
    decl_entry(b, d);
  }
  buf_puts(b, "\n  ]\n}\n");
}
