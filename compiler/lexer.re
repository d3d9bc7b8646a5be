/*
** lexer.re -- the .cnp lexer (re2c): token codes, their names for messages, and the
** scanner lex_next(). The parse driver that feeds its tokens to the Lemon parser, loads
** files and follows imports is parse.c.
*/
#include "cnpc.h"
#include "parser.h"

#include <string.h>

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
  [TK_EVERY] = "'every'", [TK_APPEND] = "'append'", [TK_REPEAT] = "'repeat'", [TK_SWAP] = "'swap'", [TK_GRID] = "'grid'", [TK_HALO] = "'halo'", [TK_FFT] = "'fft'", [TK_IFFT] = "'ifft'", [TK_ALLREDUCE] = "'allreduce'", [TK_SEMI] = "';'", [TK_COMMA] = "','", [TK_COLON] = "':'",
  [TK_LP] = "'('", [TK_RP] = "')'", [TK_LB] = "'['", [TK_RB] = "']'",
  [TK_LBRACE] = "'{'", [TK_RBRACE] = "'}'", [TK_ASSIGN] = "'='", [TK_PLUSEQ] = "'+='",
  [TK_ARROW] = "'->'", [TK_LARROW] = "'<-'", [TK_OROR] = "'||'", [TK_ANDAND] = "'&&'",
  [TK_EQ] = "'=='", [TK_NE] = "'!='", [TK_LT] = "'<'", [TK_LE] = "'<='", [TK_GT] = "'>'",
  [TK_GE] = "'>='", [TK_PLUS] = "'+'", [TK_MINUS] = "'-'", [TK_STAR] = "'*'",
  [TK_SLASH] = "'/'", [TK_PERCENT] = "'%'", [TK_NOT] = "'!'", [TK_AMP] = "'&'",
  [TK_PIPE] = "'|'", [TK_CARET] = "'^'", [TK_TILDE] = "'~'", [TK_SHL] = "'<<'", [TK_SHR] = "'>>'",
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

void lex_init(Lexer *lx, Cnp *cc, const CnpFile *f) {
  *lx = (Lexer){f->src, f->src, f->src + f->len, f->src, 1, f, cc};
}

/*
** Scan one token into *t; returns its TK_ code, 0 at the end of the input. The cursor
** lives in a local variable while scanning (the DFA then runs in registers).
*/
int lex_next(Lexer *lx, Token *t) {
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
  "&"  { RET(TK_AMP); }    "|"  { RET(TK_PIPE); }    "^"  { RET(TK_CARET); }
  "~"  { RET(TK_TILDE); }  "<<" { RET(TK_SHL); }     ">>" { RET(TK_SHR); }

  * {
    unsigned char c = (unsigned char)*tok;
    /* C and Python habits get the cnp spelling */
    const char *hint = c == '?' ? " (a conditional value is select(COND, A, B))" : "";
    if (c >= 0x20 && c < 0x7f)
      diag_error(lx->cc, here(lx, tok, 1), "stray '%c' in the program%s", c, hint);
    else
      diag_error(lx->cc, here(lx, tok, 1), "stray byte 0x%02x in the program", c);
    goto loop;
  }
  */
#undef RET
}
