/*
** parse.c -- the parse driver: loads files into the arena, follows imports (search path,
** cycle detection) and feeds the lexer's tokens (lexer.re) to the Lemon parser
** (parser.y), resynchronizing after syntax errors.
*/
#define _DEFAULT_SOURCE 1
#include "cnpc.h"
#include "parser.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Lemon's entry points (parser.c). */
void *CnpParseAlloc(void *(*alloc)(size_t));
void CnpParseFree(void *p, void (*release)(void *));
void CnpParse(void *p, int code, Token tok, Cnp *cc);

#define MAX_FILE_SIZE (256u << 20)
#define MAX_IMPORT_DEPTH 64

/* ------------------------------------------------------------------ files */

/*
** Register a loaded file whose text (NUL-terminated) already lives in the arena. The AST
** takes a few tens of bytes per source byte: size the arena's next block for it.
*/
static CnpFile *add_file(Cnp *cc, const char *name, const char *src, size_t len) {
  CnpFile *f = arena_alloc(&cc->arena, sizeof *f);
  f->path = arena_strndup(&cc->arena, name, strlen(name));
  f->src = src;
  f->len = len;
  f->id = 0;
  for (CnpFile *g = cc->files; g; g = g->next) f->id++;
  *cc->files_tail = f;
  cc->files_tail = &f->next;
  arena_reserve(&cc->arena, 48 * len);
  return f;
}

CnpFile *lex_add_buffer(Cnp *cc, const char *name, const char *src, size_t len) {
  return add_file(cc, name, arena_strndup(&cc->arena, src, len), len);
}

/*
** Read a regular file into the arena (one read for the whole file). Reports (at `from`,
** or without a location) and returns NULL when it cannot.
*/
CnpFile *lex_load_file(Cnp *cc, const char *path, Loc from) {
  struct stat st;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)   /* a FIFO must not block */;
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > MAX_FILE_SIZE) {
    if (fd >= 0) close(fd);
    if (from.file) diag_error(cc, from, "cannot read '%s'", path);
    else diag_plain(cc, "cannot read '%s'", path);
    return NULL;
  }
  size_t cap = (size_t)st.st_size, n = 0;
  char *buf = arena_alloc(&cc->arena, cap + 1);   /* zeroed: NUL-terminated */
  while (n < cap) {
    ssize_t k = read(fd, buf + n, cap - n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    n += (size_t)k;
  }
  close(fd);
  buf[n] = 0;
  return add_file(cc, path, buf, n);
}

/* ------------------------------------------------------------------ imports */

static bool file_exists(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/*
** Find an imported file: relative to the importing file's directory, then each -I dir.
*/
static char *resolve_import(Cnp *cc, const char *from, const char *name) {
  if (name[0] == '/') return file_exists(name) ? arena_strndup(&cc->arena, name, strlen(name)) : NULL;
  const char *slash = strrchr(from, '/');
  char *p = slash ? arena_printf(&cc->arena, "%.*s/%s", (int)(slash - from), from, name)
                  : arena_strndup(&cc->arena, name, strlen(name));
  if (file_exists(p)) return p;
  for (int i = 0; cc->opt && i < cc->opt->n_include_dirs; i++) {
    p = arena_printf(&cc->arena, "%s/%s", cc->opt->include_dirs[i], name);
    if (file_exists(p)) return p;
  }
  return NULL;
}

static const char *canonical(Cnp *cc, const char *path) {
  char buf[PATH_MAX];
  if (realpath(path, buf)) return arena_strndup(&cc->arena, buf, strlen(buf));
  return path;
}

/*
** `import "name";` -- load and parse the file now, so its declarations come first.
** A file already imported is skipped; one still being parsed is an import cycle.
*/
void lex_import(Cnp *cc, Loc at, const char *name) {
  const CnpFile *from = cc->cur_file;
  char *path = resolve_import(cc, from->path, name);
  if (!path) {
    diag_error(cc, at, "cannot find imported file '%s'", name);
    return;
  }
  const char *canon = canonical(cc, path);
  for (int i = 0; i < cc->import_depth; i++) {
    const CnpFile *g = cc->import_stack[i];
    if (strcmp(canonical(cc, g->path), canon) == 0) {
      diag_error(cc, at, "import cycle: '%s' imports itself", name);
      for (int j = i + 1; j < cc->import_depth; j++)
        diag_note(cc, cc->import_stack[j]->import_loc, "through the import here");
      return;
    }
  }
  for (int i = 0; i < cc->n_deps; i++)
    if (strcmp(canonical(cc, cc->deps[i]), canon) == 0) return;   /* already imported */
  if (cc->import_depth >= MAX_IMPORT_DEPTH) {
    diag_error(cc, at, "imports nested too deeply");
    return;
  }
  if (cc->n_deps == cc->cap_deps) {
    int cap = cc->cap_deps ? 2 * cc->cap_deps : 8;
    const char **v = arena_alloc(&cc->arena, sizeof *v * (size_t)cap);
    if (cc->n_deps) memcpy(v, cc->deps, sizeof *v * (size_t)cc->n_deps);
    cc->deps = v;
    cc->cap_deps = cap;
  }
  cc->deps[cc->n_deps++] = path;
  CnpFile *f = lex_load_file(cc, path, at);
  if (!f) return;
  f->imported = true;
  f->import_loc = at;
  lex_parse_file(cc, f);
}

/* ------------------------------------------------------------------ driver */

/*
** Skip the rest of a block whose '{' was just read: up to and including the matching '}'.
** Returns TK_RBRACE, or 0 at the end of the file (t is then the end-of-file token).
*/
static int skip_block(Lexer *lx, Token *t) {
  int depth = 1, code;
  while ((code = lex_next(lx, t)) != 0) {
    if (code == TK_LBRACE) depth++;
    else if (code == TK_RBRACE && --depth == 0) break;
  }
  return code;
}

/* Tokens that only begin a top-level declaration: met inside a '{' block, they mean that
** a '}' is missing. (exchange and migrate are also step statements.) */
#define BIT(t) (1ull << (t))
#define TOP_LEVEL_ONLY (BIT(TK_PIPELINE) | BIT(TK_IMPORT) | BIT(TK_PARAM) | BIT(TK_CONST) | \
                        BIT(TK_DIM) | BIT(TK_FIELD) | BIT(TK_STREAM) | BIT(TK_EVENT) |        \
                        BIT(TK_SNAPSHOT) | BIT(TK_MPI) | BIT(TK_MIRROR) | BIT(TK_PLAN) |      \
                        BIT(TK_KERNEL) | BIT(TK_STEP))
/* Step statements, which no map body holds (ast_step_statement names them). */
#define STEP_ONLY (BIT(TK_MAP) | BIT(TK_COMPACT) | BIT(TK_SORT) | BIT(TK_OFFSETS) | BIT(TK_SUM) | \
                   BIT(TK_RECORD) | BIT(TK_WAIT) | BIT(TK_COPY) | BIT(TK_REFRESH) |              \
                   BIT(TK_EXCHANGE) | BIT(TK_MIGRATE))
_Static_assert(TK_CUDA_AWARE < 64, "keyword token codes fit the masks");

static inline bool in_mask(unsigned long long mask, int code) { return code < 64 && (mask >> code & 1); }

/* Column of the first non-blank character of the line that starts at `line` and holds `z`
** (1-based). */
static int indent_of(const char *line, const char *z) {
  const char *p = line;
  while (p < z && (*p == ' ' || *p == '\t')) p++;
  return (int)(p - line) + 1;
}

/* An open '{': the token, and the indentation of its line. */
typedef struct Brace {
  Token tok;
  int indent;
  bool map;                 /* a map's body */
} Brace;

/* `allreduce` followed by an identifier (`allreduce e, m;`), at a statement's start. */
static bool allreduce_word(Token t, const char *next) {
  if (t.n != 9 || memcmp(t.z, "allreduce", 9)) return false;
  while (*next == ' ' || *next == '\t') next++;
  return *next == '_' || ((unsigned)*next | 0x20u) - 'a' < 26u;
}

/*
** Contextual words (no reserved words: programs use them as names): an identifier `grid`
** starting a top-level declaration (after ';', '}' or at the start of a file) is TK_GRID.
*/
static int contextual_top(const Cnp *cc, Token t) {
  bool start = cc->prev_code == 0 || cc->prev_code == TK_SEMI || cc->prev_code == TK_RBRACE;
  if (start && t.n == 4 && !memcmp(t.z, "grid", 4)) return TK_GRID;
  if (start && allreduce_word(t, t.z + t.n)) return TK_ALLREDUCE;
  return TK_IDENT;
}

/* ... and in a step, `halo` starting a statement and followed by an identifier (`halo F;`)
** is TK_HALO: `halo(x);` stays a kernel call, `halo = segments(..)` a plan. */
static int contextual_step(Cnp *cc, const Lexer *lx, Token t) {
  bool start = cc->prev_code == TK_LBRACE || cc->prev_code == TK_SEMI || cc->prev_code == TK_RBRACE;
  if (!start || t.n != 4 || memcmp(t.z, "halo", 4)) return TK_IDENT;
  Lexer peek = *lx;   /* one token ahead, silently (the real scan reports a bad token) */
  Token next;
  bool muted = cc->muted;
  int errors = cc->n_errors;
  cc->muted = true;
  int code = lex_next(&peek, &next);
  cc->muted = muted;
  cc->n_errors = errors;
  return code == TK_IDENT ? TK_HALO : TK_IDENT;
}

/*
** In a block, an identifier `fft` or `ifft` starting a statement (after ';', '{' or '}') and
** followed by an identifier (`fft rho -> rho_hat;`, not a kernel call `fft(..)`) is TK_FFT /
** TK_IFFT, and `allreduce` followed by an identifier TK_ALLREDUCE (at top level too:
** contextual_top). `next` is the source right after the token.
*/
static int contextual_stmt(const Cnp *cc, Token t, const char *next) {
  bool start = cc->prev_code == TK_SEMI || cc->prev_code == TK_LBRACE || cc->prev_code == TK_RBRACE;
  if (start && allreduce_word(t, next)) return TK_ALLREDUCE;
  if (!start || !((t.n == 3 && !memcmp(t.z, "fft", 3)) || (t.n == 4 && !memcmp(t.z, "ifft", 4))))
    return TK_IDENT;
  while (*next == ' ' || *next == '\t') next++;
  if (!(*next == '_' || ((unsigned)*next | 0x20u) - 'a' < 26u)) return TK_IDENT;
  return t.n == 3 ? TK_FFT : TK_IFFT;
}

/*
** The brace tracking of one file. A '}' whose column lines up with the enclosing block's
** indentation rather than its own block's marks that own block as the likely unclosed one
** (`suspect`): an unclosed block is then reported with a note at its '{', not at the
** outer one that the counting alone would blame.
*/
enum { MAXB = 64 };
typedef struct Braces {
  Brace open[MAXB];
  int depth;
  Brace suspect;
  int suspect_depth;        /* depth of the block holding the suspect; 0: none */
  bool pending_map;         /* 'map' seen, its '{' not yet */
  int maps_open;            /* open map bodies (cc->in_map) */
} Braces;

static void brace_open(Braces *b, const char *line, Token t) {
  if (b->depth < MAXB) {
    b->open[b->depth] = (Brace){t, indent_of(line, t.z), b->pending_map};
    b->maps_open += b->pending_map;
  }
  b->pending_map = false;
  b->depth++;
}

/* Pop the innermost open brace (no indentation check). */
static void brace_pop(Braces *b) {
  b->depth--;
  if (b->depth < MAXB && b->open[b->depth].map) b->maps_open--;
}

static void brace_close(Braces *b, const char *line, Token t) {
  brace_pop(b);
  if (b->suspect_depth > b->depth) b->suspect_depth = 0;   /* its enclosing block closed */
  if (b->depth < 1 || b->depth >= MAXB || b->suspect_depth) return;
  const Brace *own = &b->open[b->depth], *outer = &b->open[b->depth - 1];
  if (indent_of(line, t.z) == t.col && t.col != own->indent && t.col == outer->indent) {
    b->suspect = *own;
    b->suspect_depth = b->depth;
  }
}

/* The '{' an unclosed-block error points its note at. */
static Token brace_unclosed(const Braces *b) {
  if (b->suspect_depth && b->suspect_depth <= b->depth) return b->suspect.tok;
  return b->open[b->depth <= MAXB ? b->depth - 1 : MAXB - 1].tok;
}

/* "expected '}'" at `t` (a top-level keyword, or the end of the file), with a note at the
** '{' it would close. */
static void report_unclosed(Cnp *cc, const CnpFile *f, const Braces *b, Token t, int code) {
  Loc at = {f, t.line, t.col, t.n ? t.n : 1};
  if (at.line == cc->last_syntax.line && at.col == cc->last_syntax.col && cc->last_syntax.file == f) return;
  cc->last_syntax = at;
  Token o = brace_unclosed(b);
  if (code == 0) diag_error(cc, at, "expected '}' before end of file");
  else diag_error(cc, at, "expected '}' before '%.*s' (a declaration cannot be inside a block)", t.n, t.z);
  diag_note(cc, (Loc){f, o.line, o.col, 1}, "to match this '{'");
}

/*
** A step statement (`sort`, `compact`, ...) that begins a line inside a map body, indented no
** deeper than the map's line: the map's '}' is missing. Reports it, and feeds the parser a
** '}' for each block open inside the map and for the map itself, so that the statement
** parses as the next one of the step. Returns whether it did.
*/
static bool close_map_before(Cnp *cc, void *parser, Braces *b, const CnpFile *f, const char *line, Token t) {
  int m = (b->depth < MAXB ? b->depth : MAXB) - 1;
  while (m >= 0 && !b->open[m].map) m--;
  if (m < 0 || b->depth > MAXB || cc->in_recovery || indent_of(line, t.z) != t.col || t.col > b->open[m].indent)
    return false;
  Loc at = {f, t.line, t.col, t.n};
  cc->last_syntax = at;
  diag_error(cc, at, "expected '}' before '%.*s' (a map's body holds no step statements)", t.n, t.z);
  diag_note(cc, (Loc){f, b->open[m].tok.line, b->open[m].tok.col, 1}, "to match this '{'");
  Token close = {t.z, 0, t.line, t.col};
  while (b->depth > m) {
    brace_pop(b);
    bool was = cc->in_recovery;
    CnpParse(parser, TK_RBRACE, close, cc);
    if (cc->in_recovery && !was) {   /* an unfinished statement before it: as at a real '}' */
      Token semi = close;
      CnpParse(parser, TK_SEMI, semi, cc);
      CnpParse(parser, TK_RBRACE, close, cc);
      if (cc->in_recovery) CnpParse(parser, TK_SEMI, semi, cc);
    }
  }
  if (b->suspect_depth > b->depth) b->suspect_depth = 0;
  return true;
}

/*
** Parse one file with a fresh Lemon parser. Tracks open braces so that an unclosed block
** is reported as "expected '}'" with a note at its '{': at the end of the file, at the first
** declaration keyword inside it (parsing then resumes at that declaration), or at a step
** statement beginning a line of a map body (close_map_before). After a syntax error, a
** block that belongs to the broken construct is skipped whole and the parser
** resynchronizes as if at a ';', so one mistake does not cascade through the rest of the
** block.
*/
void lex_parse_file(Cnp *cc, CnpFile *f) {
  Lexer lx;
  lex_init(&lx, cc, f);
  const CnpFile *saved = cc->cur_file;
  bool saved_recovery = cc->in_recovery;
  Token saved_prev = cc->prev_tok;
  int saved_code = cc->prev_code;
  cc->in_recovery = false;
  cc->prev_tok.z = NULL;
  cc->prev_code = 0;
  if (!cc->import_stack) cc->import_stack = arena_alloc(&cc->arena, sizeof *cc->import_stack * (MAX_IMPORT_DEPTH + 1));
  cc->import_stack[cc->import_depth++] = f;
  cc->cur_file = f;
  void *parser = CnpParseAlloc(malloc);
  if (!parser) cnp_ice("out of memory");
  Braces br = {0};
  for (;;) {
    Token t;
    int code = lex_next(&lx, &t);
    int depth_before = br.depth;
    switch (code) {
    case TK_LBRACE:
      if (cc->in_recovery) {
        br.pending_map = false;
        code = skip_block(&lx, &t);
        if (code != 0) {
          Token semi = {t.z, 0, t.line, t.col};
          CnpParse(parser, TK_SEMI, semi, cc);
          continue;
        }
      } else {
        brace_open(&br, lx.line_start, t);   /* the line of the token just scanned */
      }
      break;
    case TK_RBRACE:
      if (br.depth > 0) brace_close(&br, lx.line_start, t);
      br.pending_map = false;
      break;
    case TK_SEMI:
      br.pending_map = false;
      break;
    default:
      break;
    }
    if (__builtin_expect(br.depth > 0 && (code == 0 || in_mask(TOP_LEVEL_ONLY, code)), 0)) {
      report_unclosed(cc, f, &br, t, code);
      if (code == 0) break;
      /* resume at this declaration with a fresh parser: the open blocks are abandoned */
      CnpParseFree(parser, free);
      parser = CnpParseAlloc(malloc);
      if (!parser) cnp_ice("out of memory");
      br.depth = br.suspect_depth = br.maps_open = 0;
      cc->in_recovery = false;
    }
    if (in_mask(STEP_ONLY, code)) {
      if (br.maps_open > 0) close_map_before(cc, parser, &br, f, lx.line_start, t);
      if (code == TK_MAP) br.pending_map = true;
    }
    if (code == TK_IDENT && br.depth == 0) code = contextual_top(cc, t);
    else if (code == TK_IDENT) {
      code = br.maps_open == 0 ? contextual_step(cc, &lx, t) : TK_IDENT;
      if (code == TK_IDENT) code = contextual_stmt(cc, t, t.z + t.n);   /* fft, ifft */
    }
    cc->in_map = br.maps_open > 0;
    cc->tok_loc = (Loc){f, t.line, t.col, t.n ? t.n : 1};
    bool was_recovering = cc->in_recovery;
    CnpParse(parser, code, t, cc);
    cc->prev_tok = t;
    cc->prev_code = code;
    if (code == 0 || cc->parse_abort) break;
    if (__builtin_expect(cc->in_recovery && !was_recovering, 0)) {
      if (code == TK_RBRACE && depth_before > 0) {
        /* error at a '}' (typically a missing ';'): resynchronize, then let it close its block */
        Token semi = {t.z, 0, t.line, t.col};
        CnpParse(parser, TK_SEMI, semi, cc);
        CnpParse(parser, TK_RBRACE, t, cc);
        if (cc->in_recovery) CnpParse(parser, TK_SEMI, semi, cc);
      } else if (code == TK_LBRACE) {   /* the error was at this '{' */
        brace_pop(&br);
        code = skip_block(&lx, &t);
        Token semi = {t.z, 0, t.line, t.col};
        CnpParse(parser, code ? TK_SEMI : 0, semi, cc);
        if (code == 0) break;
      }
    }
    if (cc->n_errors >= CNP_MAX_ERRORS) {   /* no point parsing on */
      diag_too_many(cc);
      cc->parse_abort = true;
      break;
    }
  }
  CnpParseFree(parser, free);
  cc->import_depth--;
  cc->cur_file = saved;
  cc->in_recovery = saved_recovery;
  cc->prev_tok = saved_prev;
  cc->prev_code = saved_code;
}
