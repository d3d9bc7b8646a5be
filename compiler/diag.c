/*
** diag.c -- diagnostics: "file:line:col: error: message", the source line and a caret
** (with ~~~ under the rest of the span), written to the compilation's FILE* sink.
*/
#include "cnpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define C_BOLD  "\033[1m"
#define C_RED   "\033[1;31m"
#define C_MAG   "\033[1;35m"
#define C_CYAN  "\033[1;36m"
#define C_GREEN "\033[1;32m"
#define C_OFF   "\033[0m"

/*
** Print the source line of `loc` and a caret line under it. Tabs in the source are
** repeated in the caret line so the caret stays aligned.
*/
static void show_source(Cnp *cc, Loc loc) {
  const CnpFile *f = loc.file;
  if (!f || loc.line <= 0) return;
  const char *p = f->src, *end = f->src + f->len;
  for (int ln = 1; ln < loc.line && p < end; p++)
    if (*p == '\n') ln++;
  const char *q = p;
  while (q < end && *q != '\n') q++;
  if (q > p && q[-1] == '\r') q--;
  FILE *o = cc->diag_out;
  for (const char *c = p; c < q; c++)   /* control bytes would garble the terminal */
    fputc((unsigned char)*c < 0x20 && *c != '\t' ? '?' : *c == 0x7f ? '?' : *c, o);
  fputc('\n', o);
  int width = (int)(q - p);
  int col = loc.col < 1 ? 1 : loc.col;
  for (int i = 1; i < col && i <= width; i++) fputc(p[i - 1] == '\t' ? '\t' : ' ', o);
  if (cc->color) fputs(C_GREEN, o);
  fputc('^', o);
  for (int i = 1; i < loc.len && col + i <= width; i++) fputc('~', o);
  if (cc->color) fputs(C_OFF, o);
  fputc('\n', o);
}

static void emit(Cnp *cc, Loc loc, const char *kind, const char *color, const char *fmt, va_list ap) {
  FILE *o = cc->diag_out;
  if (!o) return;
  if (cc->color) fputs(C_BOLD, o);
  if (loc.file)
    fprintf(o, "%s:%d:%d: ", loc.file->path, loc.line, loc.col);
  else
    fputs("cnpc: ", o);
  if (cc->color) fprintf(o, "%s%s:" C_OFF C_BOLD " ", color, kind);
  else fprintf(o, "%s: ", kind);
  vfprintf(o, fmt, ap);
  if (cc->color) fputs(C_OFF, o);
  fputc('\n', o);
  if (loc.file) show_source(cc, loc);
}

static void emitf(Cnp *cc, Loc loc, const char *kind, const char *color, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void emitf(Cnp *cc, Loc loc, const char *kind, const char *color, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emit(cc, loc, kind, color, fmt, ap);
  va_end(ap);
}

void diag_too_many(Cnp *cc) {
  if (cc->muted) return;
  cc->muted = true;
  if (cc->diag_out) fprintf(cc->diag_out, "cnpc: note: too many errors (%d); the rest are not shown\n", CNP_MAX_ERRORS);
}

void diag_error(Cnp *cc, Loc loc, const char *fmt, ...) {
  va_list ap;
  if (cc->n_errors++ >= CNP_MAX_ERRORS) diag_too_many(cc);
  if (cc->muted) return;
  va_start(ap, fmt);
  emit(cc, loc, "error", C_RED, fmt, ap);
  va_end(ap);
}

static const char *const warn_names[WARN_COUNT_] = {
  [WARN_UNUSED_EVENT] = "unused-event",
  [WARN_COMPACT_OMITS] = "compact-omits",
  [WARN_SORT_OMITS] = "sort-omits",
};

const char *diag_warn_name(WarnKind w) {
  return (unsigned)w < WARN_COUNT_ ? warn_names[w] : "?";
}

int diag_warn_lookup(const char *name) {
  for (int w = 0; w < WARN_COUNT_; w++)
    if (!strcmp(name, warn_names[w])) return w;
  return -1;
}

/* A warning honours -w, -Wno-<name>, -Werror, -Werror=<name> and -Wno-error=<name>, and
** names its flag at the end of the message as gcc does: "... [-Wunused-event]". */
void diag_warning(Cnp *cc, WarnKind w, Loc loc, const char *fmt, ...) {
  const CnpOptions *o = cc->opt;
  unsigned bit = 1u << w;
  if (o && (o->no_warnings || (o->warn_off & bit))) return;
  bool as_error = o && ((o->warn_error & bit) || (o->werror && !(o->warn_not_error & bit)));
  if (as_error && cc->n_errors++ >= CNP_MAX_ERRORS) diag_too_many(cc);
  if (!as_error) cc->n_warnings++;
  if (cc->muted) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  emitf(cc, loc, as_error ? "error" : "warning", as_error ? C_RED : C_MAG,
             "%s [-W%s%s]", msg, as_error ? "error=" : "", warn_names[w]);
}

void diag_note(Cnp *cc, Loc loc, const char *fmt, ...) {
  va_list ap;
  if (cc->muted) return;
  va_start(ap, fmt);
  emit(cc, loc, "note", C_CYAN, fmt, ap);
  va_end(ap);
}

void diag_plain(Cnp *cc, const char *fmt, ...) {
  va_list ap;
  if (cc->n_errors++ >= CNP_MAX_ERRORS) diag_too_many(cc);
  if (cc->muted) return;
  va_start(ap, fmt);
  Loc none = {0};
  emit(cc, none, "error", C_RED, fmt, ap);
  va_end(ap);
}

_Noreturn void cnp_ice(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("cnpc: internal error: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  abort();
}

/*
** Edit distance between a and b (insertions, deletions, substitutions and transpositions of
** neighbours: "f46" is one edit from "f64"); returns cap+1 as soon as it must exceed cap.
*/
int diag_edit_distance(const char *a, const char *b, int cap) {
  int la = (int)strlen(a), lb = (int)strlen(b);
  if (la - lb > cap || lb - la > cap || lb > 63 || la > 63) return cap + 1;
  int r0[64], r1[64], r2[64];     /* rows i-2, i-1, i */
  int *pp = r0, *p = r1, *c = r2;
  for (int j = 0; j <= lb; j++) p[j] = j;
  for (int i = 1; i <= la; i++) {
    int best = c[0] = i;
    for (int j = 1; j <= lb; j++) {
      int v = p[j - 1] + (a[i - 1] != b[j - 1]);
      if (p[j] + 1 < v) v = p[j] + 1;
      if (c[j - 1] + 1 < v) v = c[j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && pp[j - 2] + 1 < v)
        v = pp[j - 2] + 1;
      c[j] = v;
      if (v < best) best = v;
    }
    if (best > cap) return cap + 1;
    int *t = pp;
    pp = p;
    p = c;
    c = t;
  }
  return p[lb];
}
