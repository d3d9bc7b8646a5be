/*
** emit.c -- text buffers, the template expander and write-if-changed output.
**
** Templates (templates/NAME.tmpl, embedded into cnpc at build time by templates/embed.cmake)
** are plain text with {{name}} placeholders. emit_template() fills them from a (name, value)
** table; a placeholder without a value or a value that no placeholder uses is an internal
** compiler error, so templates and generators cannot drift apart silently. Snippet templates
** hold named sections (emit_snippet(): line conditions {{?x}} / {{!x}}, block placeholders);
** emit_unit() pastes a target's part sections into the unit skeleton first.
*/
#define _POSIX_C_SOURCE 200809L
#include "gen.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
** Buffers.
*/
static void buf_grow(Buf *b, size_t extra) {
  if (b->n + extra + 1 <= b->cap) return;
  size_t cap = b->cap ? b->cap : 1024;
  while (cap < b->n + extra + 1) cap *= 2;
  char *s = realloc(b->s, cap);
  if (!s) cnp_ice("out of memory (%zu bytes of output)", cap);
  b->s = s;
  b->cap = cap;
}

void buf_free(Buf *b) {
  free(b->s);
  b->s = NULL;
  b->n = b->cap = 0;
}

void buf_put(Buf *b, const char *s, size_t n) {
  buf_grow(b, n);
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = '\0';
}

void buf_puts(Buf *b, const char *s) { buf_put(b, s, strlen(s)); }

static void buf_vprintf(Buf *b, const char *fmt, va_list ap) {
  va_list aq;
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, aq);
  va_end(aq);
  if (n < 0) cnp_ice("bad format '%s'", fmt);
  buf_grow(b, (size_t)n);
  vsnprintf(b->s + b->n, (size_t)n + 1, fmt, ap);
  b->n += (size_t)n;
}

void buf_printf(Buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(b, fmt, ap);
  va_end(ap);
}

void buf_line(Buf *b, const char *fmt, ...) {
  va_list ap;
  for (int i = 0; i < b->indent; i++) buf_put(b, " ", 1);
  va_start(ap, fmt);
  buf_vprintf(b, fmt, ap);
  va_end(ap);
  buf_put(b, "\n", 1);
}

const char *buf_str(Buf *b) { return b->s ? b->s : ""; }

/*
** Templates.
*/
static const char *find_template(const char *name) {
  for (int i = 0; i < cnp_n_templates; i++)
    if (strcmp(cnp_templates[i].name, name) == 0) return cnp_templates[i].text;
  cnp_ice("no embedded template '%s'", name);
}

/* The value of placeholder {{name}} (len bytes), marked used; an internal error if none. */
static const char *tmpl_value(const char *where, const char *name, size_t len, const TmplVar *vars,
                              int n_vars, bool *used) {
  for (int i = 0; i < n_vars; i++)
    if (strlen(vars[i].name) == len && memcmp(vars[i].name, name, len) == 0) {
      used[i] = true;
      return vars[i].value;
    }
  cnp_ice("template %s: unknown placeholder {{%.*s}}", where, (int)len, name);
}

/* text[0, n) with its {{placeholders}} filled in. */
static void expand(Buf *out, const char *where, const char *t, size_t n, const TmplVar *vars,
                   int n_vars, bool *used) {
  const char *end = t + n;
  while (t < end) {
    const char *open = strstr(t, "{{");
    if (!open || open >= end) {
      buf_put(out, t, (size_t)(end - t));
      break;
    }
    buf_put(out, t, (size_t)(open - t));
    const char *close = strstr(open + 2, "}}");
    if (!close || close >= end) cnp_ice("template %s: unclosed '{{'", where);
    buf_puts(out, tmpl_value(where, open + 2, (size_t)(close - open - 2), vars, n_vars, used));
    t = close + 2;
  }
}

static void check_used(const char *where, const TmplVar *vars, int n_vars, const bool *used) {
  for (int i = 0; i < n_vars; i++)
    if (!used[i]) cnp_ice("template %s: placeholder {{%s}} is never used", where, vars[i].name);
}

void emit_template(Buf *out, const char *tmpl_name, const TmplVar *vars, int n_vars) {
  const char *t = find_template(tmpl_name);
  bool used[64] = {false};
  if (n_vars > 64) cnp_ice("too many template variables");
  expand(out, tmpl_name, t, strlen(t), vars, n_vars, used);
  check_used(tmpl_name, vars, n_vars, used);
}

/* One line of a snippet (without its newline): see emit_snippet() in gen.h. */
static void snippet_line(Buf *b, const char *where, const char *l, size_t n, const TmplVar *vars,
                         int n_vars, bool *used) {
  bool keep = true;
  while (n > 4 && l[0] == '{' && l[1] == '{' && (l[2] == '?' || l[2] == '!')) {   /* conditions */
    const char *close = memchr(l, '}', n);
    if (!close || close[1] != '}') cnp_ice("template %s: unclosed condition", where);
    const char *v = tmpl_value(where, l + 3, (size_t)(close - l - 3), vars, n_vars, used);
    keep = keep && (*v != '\0') == (l[2] == '?');
    n -= (size_t)(close + 2 - l);
    l = close + 2;
  }
  if (!keep) {   /* dropped: its placeholders still count as used */
    Buf scratch = {0};
    expand(&scratch, where, l, n, vars, n_vars, used);
    buf_free(&scratch);
    return;
  }
  if (n > 4 && l[0] == '{' && l[1] == '{' && l[n - 2] == '}' && l[n - 1] == '}' &&
      !memchr(l + 2, '{', n - 4)) {   /* a line that is one placeholder: a block, verbatim */
    buf_puts(b, tmpl_value(where, l + 2, n - 4, vars, n_vars, used));
    return;
  }
  if (n) for (int i = 0; i < b->indent; i++) buf_put(b, " ", 1);
  expand(b, where, l, n, vars, n_vars, used);
  buf_put(b, "\n", 1);
}

/* The text of section `section` of template t (after its "%% section" line, up to the next
** "%% " line), its length in *len; NULL if t has no such section. */
static const char *section_text(const char *t, const char *section, size_t len_name, size_t *len) {
  const char *s = NULL;
  for (const char *l = t; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
    if (l[0] == '%' && l[1] == '%' && l[2] == ' ' && !strncmp(l + 3, section, len_name) &&
        l[3 + len_name] == '\n') {
      s = l + 4 + len_name;
      break;
    }
  if (!s) return NULL;
  const char *e = s;
  while (*e && !(e[0] == '%' && e[1] == '%' && e[2] == ' ')) e = strchr(e, '\n') ? strchr(e, '\n') + 1 : e + strlen(e);
  *len = (size_t)(e - s);
  return s;
}

void emit_snippet(Buf *b, const char *tmpl_name, const char *section, const TmplVar *vars,
                  int n_vars) {
  size_t n;
  const char *s = section_text(find_template(tmpl_name), section, strlen(section), &n), *end = s + n;
  char where[128];
  snprintf(where, sizeof where, "%s, section %s", tmpl_name, section);
  if (!s) cnp_ice("template %s: no section '%s'", tmpl_name, section);
  bool used[64] = {false};
  if (n_vars > 64) cnp_ice("too many template variables");
  while (s < end) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    size_t l = nl ? (size_t)(nl - s) : (size_t)(end - s);
    if (!(l >= 3 && s[0] == '%' && s[1] == '%' && s[2] == '#'))   /* %%# a template comment */
      snippet_line(b, where, s, l, vars, n_vars, used);
    s += l + (nl != NULL);
  }
  check_used(where, vars, n_vars, used);
}

void emit_unit(Buf *out, const char *skeleton, const char *part, const TmplVar *vars, int n_vars) {
  const char *t = find_template(skeleton), *pt = find_template(part);
  Buf mid = {0};
  int n_sections = 0, pasted = 0;
  for (const char *l = pt; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
    n_sections += l[0] == '%' && l[1] == '%' && l[2] == ' ';
  while (*t) {   /* the part's sections pasted in: the placeholders named after them */
    const char *open = strstr(t, "{{"), *close = open ? strstr(open + 2, "}}") : NULL;
    size_t n;
    const char *s = close ? section_text(pt, open + 2, (size_t)(close - open - 2), &n) : NULL;
    if (!close) {
      buf_puts(&mid, t);
      break;
    }
    buf_put(&mid, t, (size_t)(open - t));
    if (s) {   /* without its last newline */
      buf_put(&mid, s, n && s[n - 1] == '\n' ? n - 1 : n);
      pasted++;
    } else {
      buf_put(&mid, open, (size_t)(close + 2 - open));
    }
    t = close + 2;
  }
  if (pasted < n_sections) cnp_ice("template %s: a section of %s is never used", skeleton, part);
  bool used[64] = {false};
  if (n_vars > 64) cnp_ice("too many template variables");
  expand(out, skeleton, buf_str(&mid), mid.n, vars, n_vars, used);
  check_used(skeleton, vars, n_vars, used);
  buf_free(&mid);
}

/*
** Output files: written only when the content changes, so build systems do not rebuild
** what depends on an unchanged header.
*/
int emit_write(Cnp *cc, const char *path, Buf *b) {
  const char *text = buf_str(b);
  size_t n = b->n;
  FILE *f = fopen(path, "rb");
  if (f) {
    bool same = true;
    char chunk[8192];
    size_t off = 0, got;
    while (same && (got = fread(chunk, 1, sizeof chunk, f)) > 0) {
      if (off + got > n || memcmp(chunk, text + off, got) != 0) same = false;
      off += got;
    }
    if (off != n) same = false;
    fclose(f);
    if (same) return 0;
  }
  /* Never a partial file: write a temporary in the same directory, then rename it over
  ** the target (atomic on POSIX), so a full disk or a crash leaves the old output intact. */
  size_t plen = strlen(path);
  char *tmp = malloc(plen + sizeof ".tmp.XXXXXX");
  if (!tmp) cnp_ice("out of memory");
  memcpy(tmp, path, plen);
  memcpy(tmp + plen, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
  int fd = mkstemp(tmp);
  if (fd < 0) {
    diag_plain(cc, "cannot write '%s': %s", path, strerror(errno));
    free(tmp);
    return 1;
  }
  mode_t mask = umask(0);              /* the mode fopen() would have given: 0666 & ~umask */
  umask(mask);
  bool ok = fchmod(fd, 0666 & ~mask) == 0;
  f = fdopen(fd, "wb");
  if (!f) {
    close(fd);
    ok = false;
  } else {
    ok = fwrite(text, 1, n, f) == n && ok;
    ok = (fclose(f) == 0) && ok;
  }
  int err = errno;
  if (ok && rename(tmp, path) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    unlink(tmp);
    diag_plain(cc, "error writing '%s': %s", path, strerror(err));
  }
  free(tmp);
  return ok ? 0 : 1;
}

/* The file name of a path (after its last '/'). */
const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}
