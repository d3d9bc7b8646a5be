/*
** lexer.re -- the .cnp lexer (re2c) and the parse driver: it feeds tokens to the Lemon
** parser, loads files and follows imports (search path, cycle detection).
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

typedef struct Lexer {
  const char *cur, *mar, *lim, *line_start;
  int line;
  const CnpFile *file;
  Cnp *cc;
} Lexer;

static const char *const token_names[] = {
  [0] = "end of file",
  [TK_PIPELINE] = "'pipeline'", [TK_IMPORT] = "'import'", [TK_PARAM] = "'param'",
  [TK_SETUP] = "'setup'", [TK_CONST] = "'const'", [TK_DIM] = "'dim'", [TK_FIELD] = "'field'",
  [TK_STREAM] = "'stream'", [TK_EVENT] = "'event'", [TK_SNAPSHOT] = "'snapshot'",
  [TK_MPI] = "'mpi'", [TK_MIRROR] = "'mirror'", [TK_PLAN] = "'plan'", [TK_KERNEL] = "'kernel'",
  [TK_FROM] = "'from'", [TK_HOST] = "'host'", [TK_STEP] = "'step'", [TK_ON] = "'on'",
  [TK_AFTER] = "'after'", [TK_MAP] = "'map'", [TK_IN] = "'in'", [TK_LET] = "'let'",
  [TK_IF] = "'if'", [TK_ELSE] = "'else'", [TK_COMPACT] = "'compact'", [TK_SORT] = "'sort'",
  [TK_OFFSETS] = "'offsets'", [TK_SUM] = "'sum'", [TK_RECORD] = "'record'",
  [TK_WAIT] = "'wait'", [TK_COPY] = "'copy'", [TK_REFRESH] = "'refresh'",
  [TK_EXCHANGE] = "'exchange'", [TK_WITH] = "'with'", [TK_MIGRATE] = "'migrate'",
  [TK_BY] = "'by'", [TK_OVER] = "'over'", [TK_TRUE] = "'true'", [TK_FALSE] = "'false'",
  [TK_SLOTS] = "'slots'", [TK_CUDA_AWARE] = "'cuda_aware'", [TK_TYPE] = "type name",
  [TK_IDENT] = "identifier", [TK_INT] = "integer", [TK_FLOAT] = "number", [TK_IMAG] = "imaginary number",
  [TK_STRING] = "string", [TK_SCALAR] = "'scalar'", [TK_HISTORY] = "'history'",
  [TK_SCAN] = "'scan'", [TK_MINEQ] = "'min='", [TK_MAXEQ] = "'max='",
  [TK_EVERY] = "'every'", [TK_APPEND] = "'append'", [TK_REPEAT] = "'repeat'", [TK_SWAP] = "'swap'", [TK_SEMI] = "';'", [TK_COMMA] = "','", [TK_COLON] = "':'",
  [TK_LP] = "'('", [TK_RP] = "')'", [TK_LB] = "'['", [TK_RB] = "']'",
  [TK_LBRACE] = "'{'", [TK_RBRACE] = "'}'", [TK_ASSIGN] = "'='", [TK_PLUSEQ] = "'+='",
  [TK_ARROW] = "'->'", [TK_LARROW] = "'<-'", [TK_OROR] = "'||'", [TK_ANDAND] = "'&&'",
  [TK_EQ] = "'=='", [TK_NE] = "'!='", [TK_LT] = "'<'", [TK_LE] = "'<='", [TK_GT] = "'>'",
  [TK_GE] = "'>='", [TK_PLUS] = "'+'", [TK_MINUS] = "'-'", [TK_STAR] = "'*'",
  [TK_SLASH] = "'/'", [TK_PERCENT] = "'%'", [TK_NOT] = "'!'",
};

const char *lex_token_name(int code) {
  int n = (int)(sizeof token_names / sizeof token_names[0]);
  if (code < 0 || code >= n || !token_names[code]) return "token";
  return token_names[code];
}

static Loc here(Lexer *lx, const char *tok, int len) {
  Loc l = {lx->file, lx->line, (int)(tok - lx->line_start) + 1, len};
  return l;
}

/*
** The end of file is reported just after the last character of the last line.
*/
static void eof_position(Lexer *lx, Token *t) {
  const char *src = lx->file->src;
  if (lx->lim == src || lx->lim[-1] != '\n') return;
  const char *end = lx->lim - 1, *p = end;
  while (p > src && p[-1] != '\n') p--;
  t->line = lx->line - 1;
  t->col = (int)(end - p) + 1;
}

/*
** Scan one token into *t; returns its TK_ code, 0 at the end of the input. The cursor
** lives in a local variable while scanning (the DFA then runs in registers).
*/
static inline __attribute__((always_inline)) int lex_scan(Lexer *lx, Token *t) {
  const char *cur = lx->cur, *mar = cur, *tok;
loop:
  tok = cur;
#define RET(code) do { \
    lx->cur = cur; t->z = tok; t->n = (int)(cur - tok); t->line = lx->line; \
    t->col = (int)(tok - lx->line_start) + 1; return (code); } while (0)
  /*!re2c
  re2c:define:YYCTYPE = "unsigned char";
  re2c:define:YYCURSOR = "cur";
  re2c:define:YYMARKER = "mar";
  re2c:yyfill:enable = 0;
  re2c:flags:input = custom;
  re2c:api:style = free-form;
  re2c:define:YYPEEK = "(unsigned char)*cur";
  re2c:define:YYSKIP = "++cur;";
  re2c:define:YYBACKUP = "mar = cur;";
  re2c:define:YYRESTORE = "cur = mar;";

  dig = [0-9];
  id  = [A-Za-z_][A-Za-z0-9_]*;
  exp = [eE] [+-]? dig+;

  "\x00" {
    if (cur - 1 >= lx->lim) {
      lx->cur = lx->lim;
      t->z = tok;
      t->n = 0;
      t->line = lx->line;
      t->col = (int)(tok - lx->line_start) + 1;
      eof_position(lx, t);
      return 0;
    }
    diag_error(lx->cc, here(lx, tok, 1), "stray NUL byte in the source");
    goto loop;
  }
  [ \t\r\v\f]+          { goto loop; }
  "\n"                  { lx->line++; lx->line_start = cur; goto loop; }
  "#" [^\n\x00]*        { goto loop; }

  "pipeline"   { RET(TK_PIPELINE); }   "import"   { RET(TK_IMPORT); }
  "param"      { RET(TK_PARAM); }      "setup"    { RET(TK_SETUP); }
  "const"      { RET(TK_CONST); }      "dim"      { RET(TK_DIM); }
  "field"      { RET(TK_FIELD); }      "stream"   { RET(TK_STREAM); }
  "event"      { RET(TK_EVENT); }      "snapshot" { RET(TK_SNAPSHOT); }
  "mpi"        { RET(TK_MPI); }        "mirror"   { RET(TK_MIRROR); }
  "plan"       { RET(TK_PLAN); }       "kernel"   { RET(TK_KERNEL); }
  "from"       { RET(TK_FROM); }       "host"     { RET(TK_HOST); }
  "step"       { RET(TK_STEP); }       "on"       { RET(TK_ON); }
  "after"      { RET(TK_AFTER); }      "map"      { RET(TK_MAP); }
  "in"         { RET(TK_IN); }         "let"      { RET(TK_LET); }
  "if"         { RET(TK_IF); }         "else"     { RET(TK_ELSE); }
  "compact"    { RET(TK_COMPACT); }    "sort"     { RET(TK_SORT); }
  "offsets"    { RET(TK_OFFSETS); }    "sum"      { RET(TK_SUM); }
  "record"     { RET(TK_RECORD); }     "wait"     { RET(TK_WAIT); }
  "copy"       { RET(TK_COPY); }       "refresh"  { RET(TK_REFRESH); }
  "exchange"   { RET(TK_EXCHANGE); }   "with"     { RET(TK_WITH); }
  "migrate"    { RET(TK_MIGRATE); }    "by"       { RET(TK_BY); }
  "over"       { RET(TK_OVER); }       "true"     { RET(TK_TRUE); }
  "false"      { RET(TK_FALSE); }      "slots"    { RET(TK_SLOTS); }
  "cuda_aware" { RET(TK_CUDA_AWARE); }
  "scalar"     { RET(TK_SCALAR); }     "history"  { RET(TK_HISTORY); }
  "scan"       { RET(TK_SCAN); }       "every"    { RET(TK_EVERY); }
  "repeat"     { RET(TK_REPEAT); }     "swap"     { RET(TK_SWAP); }
  "append"     { RET(TK_APPEND); }
  "min=" | "max=" {   /* reduction operators; "min==" is the name min and '==' */
    if (*cur == '=') { cur--; RET(TK_IDENT); }
    RET(tok[1] == 'i' ? TK_MINEQ : TK_MAXEQ);
  }
  "bool" | "i32" | "i64" | "u64" | "f16" | "f32" | "f64" | "c64" | "c128" { RET(TK_TYPE); }

  id                                    { RET(TK_IDENT); }
  dig+ | "0" [xX] [0-9a-fA-F]+          { RET(TK_INT); }
  dig+ "." dig* exp? | "." dig+ exp? | dig+ exp { RET(TK_FLOAT); }
  (dig+ "." dig* exp? | "." dig+ exp? | dig+ exp? ) "i" { RET(TK_IMAG); }
  (dig | ".") [A-Za-z0-9_.]* {
    char last = cur[-1];
    diag_error(lx->cc, here(lx, tok, (int)(cur - tok)), "malformed number '%.*s'%s",
               (int)(cur - tok), tok,
               last == 'f' || last == 'F' || last == 'L' || last == 'l' || last == 'u' || last == 'U'
                   ? " (literals have no suffix: one takes the other operand's type; a cast such as "
                     "f32(1.0) fixes it)"
                   : "");
    RET(TK_INT);
  }
  ["] [^"\n\x00]* ["]                   { RET(TK_STRING); }
  ["] [^"\n\x00]* {
    diag_error(lx->cc, here(lx, tok, 1), "missing terminating '\"' character");
    RET(TK_STRING);
  }

  ";"  { RET(TK_SEMI); }   ","  { RET(TK_COMMA); }   ":"  { RET(TK_COLON); }
  "("  { RET(TK_LP); }     ")"  { RET(TK_RP); }      "["  { RET(TK_LB); }
  "]"  { RET(TK_RB); }     "{"  { RET(TK_LBRACE); }  "}"  { RET(TK_RBRACE); }
  "="  { RET(TK_ASSIGN); } "+=" { RET(TK_PLUSEQ); }  "->" { RET(TK_ARROW); }
  "<-" { RET(TK_LARROW); } "||" { RET(TK_OROR); }    "&&" { RET(TK_ANDAND); }
  "==" { RET(TK_EQ); }     "!=" { RET(TK_NE); }      "<"  { RET(TK_LT); }
  "<=" { RET(TK_LE); }     ">"  { RET(TK_GT); }      ">=" { RET(TK_GE); }
  "+"  { RET(TK_PLUS); }   "-"  { RET(TK_MINUS); }   "*"  { RET(TK_STAR); }
  "/"  { RET(TK_SLASH); }  "%"  { RET(TK_PERCENT); } "!"  { RET(TK_NOT); }

  * {
    unsigned char c = (unsigned char)*tok;
    /* C and Python habits get the cnp spelling */
    const char *hint = c == '?' ? " (a conditional value is select(COND, A, B))"
                       : c == '^' ? " (a power is pow(A, B))"
                       : c == '&' ? " (logical and is '&&')"
                       : c == '|' ? " (logical or is '||')" : "";
    if (c >= 0x20 && c < 0x7f)
      diag_error(lx->cc, here(lx, tok, 1), "stray '%c' in the program%s", c, hint);
    else
      diag_error(lx->cc, here(lx, tok, 1), "stray byte 0x%02x in the program", c);
    goto loop;
  }
  */
#undef RET
}

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
  while ((code = lex_scan(lx, t)) != 0) {
    if (code == TK_LBRACE) depth++;
    else if (code == TK_RBRACE && --depth == 0) break;
  }
  return code;
}

/*
** Parse one file with a fresh Lemon parser. Tracks open braces so that an unexpected end
** of file names the block it should close. After a syntax error, a block that belongs to
** the broken construct is skipped whole and the parser resynchronizes as if at a ';', so
** one mistake does not cascade through the rest of the block.
*/
void lex_parse_file(Cnp *cc, CnpFile *f) {
  Lexer lx = {f->src, f->src, f->src + f->len, f->src, 1, f, cc};
  const CnpFile *saved = cc->cur_file;
  bool saved_recovery = cc->in_recovery;
  cc->in_recovery = false;
  if (!cc->import_stack) cc->import_stack = arena_alloc(&cc->arena, sizeof *cc->import_stack * (MAX_IMPORT_DEPTH + 1));
  cc->import_stack[cc->import_depth++] = f;
  cc->cur_file = f;
  void *parser = CnpParseAlloc(malloc);
  if (!parser) cnp_ice("out of memory");
  enum { MAXB = 64 };
  Token open[MAXB];
  int depth = 0;
  for (;;) {
    Token t;
    int code = lex_scan(&lx, &t);
    int depth_before = depth;
    if (code == TK_LBRACE) {
      if (cc->in_recovery) {
        code = skip_block(&lx, &t);
        if (code != 0) {
          Token semi = {t.z, 0, t.line, t.col};
          CnpParse(parser, TK_SEMI, semi, cc);
          continue;
        }
      } else {
        if (depth < MAXB) open[depth] = t;
        depth++;
      }
    } else if (code == TK_RBRACE && depth > 0) {
      depth--;
    }
    if (code == 0 && depth > 0 && cc->n_errors == 0) {
      Token o = open[depth <= MAXB ? depth - 1 : MAXB - 1];
      diag_error(cc, (Loc){f, t.line, t.col, 1}, "unexpected end of file (to close '{' at line %d)", o.line);
      break;
    }
    cc->tok_loc = (Loc){f, t.line, t.col, t.n ? t.n : 1};
    bool was_recovering = cc->in_recovery;
    CnpParse(parser, code, t, cc);
    if (code == TK_IDENT) cc->prev_ident = t;
    else cc->prev_ident.z = NULL;   /* only .z is looked at when it is not an identifier */
    if (code == 0 || cc->parse_abort) break;
    if (__builtin_expect(cc->in_recovery && !was_recovering, 0)) {
      if (code == TK_RBRACE && depth_before > 0) {
        /* error at a '}' (typically a missing ';'): resynchronize, then let it close its block */
        Token semi = {t.z, 0, t.line, t.col};
        CnpParse(parser, TK_SEMI, semi, cc);
        CnpParse(parser, TK_RBRACE, t, cc);
        if (cc->in_recovery) CnpParse(parser, TK_SEMI, semi, cc);
      } else if (code == TK_LBRACE) {   /* the error was at this '{' */
        depth--;
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
}
