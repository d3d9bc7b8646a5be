/*
** parser.y -- the .cnp grammar (Lemon). Every action is one call into ast.c; the
** grammar itself carries no logic. Syntax errors recover at ';' (statement or top level).
*/
%name CnpParse
%token_prefix TK_
%token_type {Token}
%extra_argument {Cnp *cc}
%stack_size 2000
%start_symbol program

%include {
#include "cnpc.h"
#include <assert.h>
#include <stdlib.h>
#include <string.h>
static void parse_syntax_error(void *parser, int major, Token tok, Cnp *cc);
static Stmt *parse_recovered(void *parser);
}

%token_destructor { (void)cc; (void)yypminor; }
%syntax_error { parse_syntax_error(yypParser, yymajor, TOKEN, cc); }
%stack_overflow { ast_stack_overflow(cc); }

/* Tokens the grammar does not mention but the lexer produces nothing else: keep order. */
%token PIPELINE IMPORT PARAM SETUP CONST DIM FIELD STREAM EVENT SNAPSHOT MPI MIRROR PLAN
       KERNEL FROM HOST STEP ON AFTER MAP IN LET IF ELSE COMPACT SORT OFFSETS SUM RECORD
       WAIT COPY REFRESH EXCHANGE WITH MIGRATE BY OVER TRUE FALSE SLOTS CUDA_AWARE
       TYPE IDENT INT FLOAT STRING IMAG SCALAR HISTORY SCAN MINEQ MAXEQ EVERY REPEAT SWAP APPEND
       GRID HALO FFT IFFT ALLREDUCE.

%left OROR.
%left ANDAND.
%left PIPE.
%left CARET.
%left AMP.
%left EQ NE.
%left LT LE GT GE.
%left SHL SHR.
%left PLUS MINUS.
%left STAR SLASH PERCENT.
%right NOT TILDE.

%type expr {Expr *}
%type lvalue {Expr *}
%type exprs {ExprList}
%type args {ExprList}
%type names {RefVec}
%type after_opt {RefVec}
%type every_opt {ExprList}
%type stmts {StmtList}
%type mstmts {StmtList}
%type stmt {Stmt *}
%type mstmt {Stmt *}
%type ifstmt {Stmt *}
%type else_opt {Stmt *}
%type exchange_stmt {Stmt *}
%type migrate_stmt {Stmt *}
%type allreduce_stmt {Stmt *}
%type setup_opt {int}
%type aware {Token}
%type gclauses {ExprList}
%type pgmode {Token}

program ::= items.
items ::= .
items ::= items item.

/* ---- declarations ---- */
item ::= PIPELINE(K) IDENT(N) SEMI.                         { ast_pipeline(cc, K, N); }
item ::= IMPORT(K) STRING(S) SEMI.                          { ast_import(cc, K, S); }
item ::= PARAM(K) IDENT(N) COLON TYPE(T) setup_opt(S) SEMI. { ast_param(cc, K, N, T, S); }
setup_opt(A) ::= .                                          { A = 0; }
setup_opt(A) ::= SETUP.                                     { A = 1; }
item ::= CONST(K) IDENT(N) ASSIGN expr(E) SEMI.             { ast_const(cc, K, N, NULL, E); }
item ::= CONST(K) IDENT(N) COLON TYPE(T) ASSIGN expr(E) SEMI. { ast_const(cc, K, N, &T, E); }
item ::= DIM(K) IDENT(N) SEMI.                              { ast_dim(cc, K, N); }
item ::= FIELD(K) IDENT(N) COLON TYPE(T) LB exprs(L) RB SEMI. { ast_field(cc, K, N, T, L); }
/* grid: a contextual word (parse.c makes an identifier `grid` starting a declaration TK_GRID) */
item ::= GRID(K) IDENT(N) ASSIGN LB exprs(L) RB gclauses(C) SEMI. { ast_grid(cc, K, N, L, C); }
/* grid K = rfft(G);  the spectral grid of G (ast_grid_rfft checks the word) */
item ::= GRID(K) IDENT(N) ASSIGN IDENT(F) LP IDENT(G) RP(R) SEMI. { ast_grid_rfft(cc, K, N, F, G, NULL, R); }
item ::= GRID(K) IDENT(N) ASSIGN IDENT(F) LP IDENT(G) RP(R) IDENT(W) SEMI. { ast_grid_rfft_word(cc, K, N, F, G, R, W); }
item ::= GRID(K) IDENT(N) ASSIGN IDENT(F) LP IDENT(G) COMMA IDENT(M) RP(R) SEMI.
                                                            { ast_grid_rfft(cc, K, N, F, G, &M, R); }
gclauses(A) ::= .                                           { A = ast_exprs(cc, (ExprList){0}, NULL); }
gclauses(A) ::= gclauses(L) IDENT(W) LP exprs(E) RP(R).    { A = ast_exprs(cc, L, ast_call(cc, W, E, R)); }
/* a bare clause word: `split` (sema checks the word) */
gclauses(A) ::= gclauses(L) IDENT(W).                       { A = ast_exprs(cc, L, ast_name(cc, W)); }
item ::= STREAM(K) names(L) SEMI.                           { ast_streams(cc, K, L); }
item ::= EVENT(K) names(L) SEMI.                            { ast_events(cc, K, L); }
item ::= SNAPSHOT(K) IDENT(N) ASSIGN IDENT(F) LP IDENT(A) RP SEMI.
                                                            { ast_snapshot(cc, K, N, F, A, NULL); }
item ::= SNAPSHOT(K) IDENT(N) ASSIGN IDENT(F) LP IDENT(A) COMMA SLOTS ASSIGN expr(E) RP SEMI.
                                                            { ast_snapshot(cc, K, N, F, A, E); }
item ::= MPI(K) IDENT(N) ASSIGN IDENT(F) LP TYPE(T) LB exprs(L) RB RP SEMI.
                                                            { ast_mpi(cc, K, N, F, T, L, (Token){0}); }
item ::= MPI(K) IDENT(N) ASSIGN IDENT(F) LP TYPE(T) LB exprs(L) RB COMMA CUDA_AWARE ASSIGN aware(W) RP SEMI.
                                                            { ast_mpi(cc, K, N, F, T, L, W); }
aware(A) ::= IDENT(T).                                      { A = T; }
aware(A) ::= ON(T).                                         { A = T; }
item ::= MIRROR(K) IDENT(N) ASSIGN IDENT(F) LP IDENT(A) RP SEMI. { ast_mirror(cc, K, N, F, A); }
item ::= PLAN(K) IDENT(N) ASSIGN IDENT(F) LP IDENT(A) COMMA expr(E) RP SEMI.
                                                            { ast_plan(cc, K, N, F, A, E); }
item ::= KERNEL(K) IDENT(N) FROM STRING(S) SEMI.            { ast_kernel(cc, K, N, S, NULL); }
item ::= KERNEL(K) IDENT(N) FROM STRING(S) HOST STRING(H) SEMI. { ast_kernel(cc, K, N, S, &H); }
item ::= SCALAR(K) IDENT(N) COLON TYPE(T) SEMI.            { ast_scalar(cc, K, N, T); }
item ::= HISTORY(K) IDENT(N) ASSIGN IDENT(S) LB expr(E) RB SEMI. { ast_history(cc, K, N, S, E); }
item ::= STEP(K) IDENT(N) ON IDENT(S) after_opt(A) every_opt(E) LBRACE stmts(B) RBRACE.
                                                            { ast_step(cc, K, &N, S, A, E, B); }
item ::= STEP(K) ON IDENT(S) after_opt(A) every_opt(E) LBRACE stmts(B) RBRACE.
                                                            { ast_step(cc, K, NULL, S, A, E, B); }
item ::= exchange_stmt(S).                                  { ast_host_step(cc, S); }
item ::= migrate_stmt(S).                                   { ast_host_step(cc, S); }
item ::= allreduce_stmt(S).                                 { ast_host_step(cc, S); }
item ::= error SEMI.                                        { parse_recovered(yypParser); }

after_opt(A) ::= .                                          { A = ast_refs(cc, (RefVec){0}, (Token){0}); }
after_opt(A) ::= AFTER names(L).                            { A = L; }
every_opt(A) ::= .                                          { A = ast_exprs(cc, (ExprList){0}, NULL); }
every_opt(A) ::= EVERY expr(K).                             { A = ast_exprs(cc, (ExprList){0}, K); }
every_opt(A) ::= EVERY expr(K) IDENT(O) expr(J).            { A = ast_every(cc, K, O, J); }
names(A) ::= IDENT(T).                                      { A = ast_refs(cc, (RefVec){0}, T); }
names(A) ::= names(L) COMMA IDENT(T).                       { A = ast_refs(cc, L, T); }

/* ---- step statements ---- */
stmts(A) ::= .                                              { A = ast_stmts(cc, (StmtList){0}, NULL); }
stmts(A) ::= stmts(L) stmt(S).                              { A = ast_stmts(cc, L, S); }
stmt(A) ::= MAP(K) IDENT(I) IN IDENT(N) LBRACE mstmts(B) RBRACE. { A = ast_map(cc, K, I, N, B); }
stmt(A) ::= MAP(K) LP names(I) RP IN IDENT(N) LBRACE mstmts(B) RBRACE. { A = ast_grid_map(cc, K, I, N, B); }
stmt(A) ::= HALO(K) IDENT(F) SEMI.                          { A = ast_named2(cc, ST_HALO, K, F, NULL); }
stmt(A) ::= COMPACT(K) IDENT(M) LP names(L) RP SEMI.        { A = ast_listop(cc, ST_COMPACT, K, M, L); }
stmt(A) ::= SORT(K) IDENT(M) LP names(L) RP SEMI.           { A = ast_listop(cc, ST_SORT, K, M, L); }
stmt(A) ::= OFFSETS(K) IDENT(X) ARROW IDENT(Y) SEMI.        { A = ast_named2(cc, ST_OFFSETS, K, X, &Y); }
stmt(A) ::= IDENT(P) ASSIGN IDENT(F) LP IDENT(X) COMMA expr(E) RP SEMI. { A = ast_segments(cc, P, F, X, E); }
stmt(A) ::= SUM(K) IDENT(P) LP names(L) RP ARROW IDENT(O) SEMI. { A = ast_sum(cc, K, P, L, O); }
stmt(A) ::= RECORD(K) IDENT(E) SEMI.                        { A = ast_named2(cc, ST_RECORD, K, E, NULL); }
stmt(A) ::= WAIT(K) IDENT(E) SEMI.                          { A = ast_named2(cc, ST_WAIT, K, E, NULL); }
stmt(A) ::= COPY(K) IDENT(S) LARROW IDENT(F) SEMI.          { A = ast_named2(cc, ST_COPY, K, S, &F); }
stmt(A) ::= REFRESH(K) IDENT(M) IDENT(D) SEMI.              { A = ast_refresh(cc, K, M, D); }
stmt(A) ::= SCAN(K) IDENT(M) IDENT(X) ARROW IDENT(Y) SEMI.  { A = ast_scan(cc, K, M, X, Y); }
stmt(A) ::= APPEND(K) IDENT(D) LP expr(C) RP MAP IDENT(I) LBRACE mstmts(B) RBRACE.
                                                            { A = ast_append(cc, K, D, C, I, NULL, B); }
stmt(A) ::= APPEND(K) IDENT(D) LP expr(C) RP MAP IDENT(I) COMMA IDENT(J) LBRACE mstmts(B) RBRACE.
                                                            { A = ast_append(cc, K, D, C, I, &J, B); }
stmt(A) ::= EVERY(K) expr(N) LBRACE stmts(B) RBRACE.        { A = ast_every_block(cc, K, N, NULL, NULL, B); }
stmt(A) ::= EVERY(K) expr(N) IDENT(O) expr(J) LBRACE stmts(B) RBRACE.
                                                            { A = ast_every_block(cc, K, N, &O, J, B); }
stmt(A) ::= REPEAT(K) expr(N) LBRACE stmts(B) RBRACE.       { A = ast_repeat(cc, K, N, B); }
stmt(A) ::= SWAP(K) IDENT(X) COMMA IDENT(Y) SEMI.           { A = ast_named2(cc, ST_SWAP, K, X, &Y); }
stmt(A) ::= IDENT(K) IDENT(W) IDENT(T) LP names(L) RP ARROW IDENT(O) WITH IDENT(H) pgmode(M) SEMI.
                                                            { A = ast_pgrid(cc, K, W, 0, T, L, O, H, M.z ? &M : NULL); }
stmt(A) ::= IDENT(K) INT(W) IDENT(T) LP names(L) RP ARROW IDENT(O) WITH IDENT(H) pgmode(M) SEMI.
                                                            { A = ast_pgrid(cc, K, W, 1, T, L, O, H, M.z ? &M : NULL); }
stmt(A) ::= IDENT(K) FLOAT(W) IDENT(T) LP names(L) RP ARROW IDENT(O) WITH IDENT(H) pgmode(M) SEMI.
                                                            { A = ast_pgrid(cc, K, W, 2, T, L, O, H, M.z ? &M : NULL); }
pgmode(A) ::= .                                             { A = (Token){0}; }
pgmode(A) ::= IDENT(T).                                     { A = T; }
stmt(A) ::= exchange_stmt(S).                               { A = S; }
stmt(A) ::= migrate_stmt(S).                                { A = S; }
stmt(A) ::= allreduce_stmt(S).                              { A = S; }
stmt(A) ::= FFT(W) IDENT(X) ARROW IDENT(Y) SEMI.             { A = ast_fft(cc, W, X, Y); }
stmt(A) ::= IFFT(W) IDENT(X) ARROW IDENT(Y) SEMI.            { A = ast_fft(cc, W, X, Y); }
stmt(A) ::= IDENT(N) LP args(L) RP SEMI.                    { A = ast_kcall(cc, N, L, NULL); }
stmt(A) ::= IDENT(N) LP args(L) RP OVER expr(E) SEMI.       { A = ast_kcall(cc, N, L, E); }
stmt(A) ::= error SEMI.                                     { A = parse_recovered(yypParser); }
exchange_stmt(A) ::= EXCHANGE(K) IDENT(H) LP IDENT(F) RP WITH expr(D) SEMI.
                                                            { A = ast_exchange(cc, K, H, F, D, NULL); }
exchange_stmt(A) ::= EXCHANGE(K) IDENT(H) LP IDENT(F) RP WITH expr(D) FROM expr(S) SEMI.
                                                            { A = ast_exchange(cc, K, H, F, D, S); }
exchange_stmt(A) ::= EXCHANGE(K) IDENT(H) WITH(W) expr(D) SEMI.   { A = ast_exchange_nofield(cc, K, H, W, D, NULL); }
exchange_stmt(A) ::= EXCHANGE(K) IDENT(H) WITH(W) expr(D) FROM expr(S) SEMI.
                                                            { A = ast_exchange_nofield(cc, K, H, W, D, S); }
migrate_stmt(A) ::= MIGRATE(K) LP names(L) RP BY IDENT(D) SEMI. { A = ast_listop(cc, ST_MIGRATE, K, D, L); }
migrate_stmt(A) ::= MIGRATE(K) LP names(L) RP IDENT(T) IDENT(G) IDENT(W) LP names(P) RP SEMI.
                                                            { A = ast_migrate_to(cc, K, L, T, G, W, P); }
/* allreduce S1, S2;  a contextual word (parse.c makes it TK_ALLREDUCE) */
allreduce_stmt(A) ::= ALLREDUCE(K) names(L) SEMI.           { A = ast_allreduce(cc, K, L); }
args(A) ::= .                                               { A = ast_exprs(cc, (ExprList){0}, NULL); }
args(A) ::= exprs(L).                                       { A = L; }

/* ---- map statements ---- */
mstmts(A) ::= .                                             { A = ast_stmts(cc, (StmtList){0}, NULL); }
mstmts(A) ::= mstmts(L) mstmt(S).                           { A = ast_stmts(cc, L, S); }
mstmt(A) ::= LET(K) IDENT(N) ASSIGN expr(E) SEMI.           { A = ast_let(cc, K, N, NULL, E); }
mstmt(A) ::= LET(K) IDENT(N) COLON TYPE(T) ASSIGN expr(E) SEMI. { A = ast_let(cc, K, N, &T, E); }
mstmt(A) ::= lvalue(T) ASSIGN expr(E) SEMI.                 { A = ast_assign(cc, ST_ASSIGN, T, E); }
mstmt(A) ::= lvalue(T) PLUSEQ expr(E) SEMI.                 { A = ast_assign(cc, ST_ADD, T, E); }
mstmt(A) ::= IDENT(N) MINEQ expr(E) SEMI.                   { A = ast_reduce(cc, RED_MIN, N, E); }
mstmt(A) ::= IDENT(N) MAXEQ expr(E) SEMI.                   { A = ast_reduce(cc, RED_MAX, N, E); }
mstmt(A) ::= ifstmt(S).                                     { A = S; }
mstmt(A) ::= error SEMI.                                    { A = parse_recovered(yypParser); }
ifstmt(A) ::= IF(K) expr(C) LBRACE mstmts(B) RBRACE else_opt(E). { A = ast_if(cc, K, C, B, E); }
else_opt(A) ::= .                                           { A = NULL; }
else_opt(A) ::= ELSE LBRACE mstmts(B) RBRACE.               { A = ast_block_stmt(B); }
else_opt(A) ::= ELSE ifstmt(S).                             { A = S; }
lvalue(A) ::= IDENT(N).                                     { A = ast_name(cc, N); }
lvalue(A) ::= IDENT(N) LB exprs(L) RB(R).                   { A = ast_index(cc, N, L, R); }

/* ---- expressions ---- */
expr(A) ::= expr(X) OROR expr(Y).                           { A = ast_binary(cc, OP_OR, X, Y); }
expr(A) ::= expr(X) ANDAND expr(Y).                         { A = ast_binary(cc, OP_AND, X, Y); }
expr(A) ::= expr(X) EQ expr(Y).                             { A = ast_binary(cc, OP_EQ, X, Y); }
expr(A) ::= expr(X) NE expr(Y).                             { A = ast_binary(cc, OP_NE, X, Y); }
expr(A) ::= expr(X) LT expr(Y).                             { A = ast_binary(cc, OP_LT, X, Y); }
expr(A) ::= expr(X) LE expr(Y).                             { A = ast_binary(cc, OP_LE, X, Y); }
expr(A) ::= expr(X) GT expr(Y).                             { A = ast_binary(cc, OP_GT, X, Y); }
expr(A) ::= expr(X) GE expr(Y).                             { A = ast_binary(cc, OP_GE, X, Y); }
expr(A) ::= expr(X) PLUS expr(Y).                           { A = ast_binary(cc, OP_ADD, X, Y); }
expr(A) ::= expr(X) MINUS expr(Y).                          { A = ast_binary(cc, OP_SUB, X, Y); }
expr(A) ::= expr(X) STAR expr(Y).                           { A = ast_binary(cc, OP_MUL, X, Y); }
expr(A) ::= expr(X) SLASH expr(Y).                          { A = ast_binary(cc, OP_DIV, X, Y); }
expr(A) ::= expr(X) PERCENT expr(Y).                        { A = ast_binary(cc, OP_MOD, X, Y); }
expr(A) ::= MINUS(T) expr(X). [NOT]                         { A = ast_unary(cc, T, OP_NEG, X); }
expr(A) ::= NOT(T) expr(X).                                 { A = ast_unary(cc, T, OP_NOT, X); }
expr(A) ::= TILDE(T) expr(X).                               { A = ast_unary(cc, T, OP_BNOT, X); }
expr(A) ::= expr(X) AMP expr(Y).                            { A = ast_binary(cc, OP_BAND, X, Y); }
expr(A) ::= expr(X) PIPE expr(Y).                           { A = ast_binary(cc, OP_BOR, X, Y); }
expr(A) ::= expr(X) CARET expr(Y).                          { A = ast_binary(cc, OP_BXOR, X, Y); }
expr(A) ::= expr(X) SHL expr(Y).                            { A = ast_binary(cc, OP_SHL, X, Y); }
expr(A) ::= expr(X) SHR expr(Y).                            { A = ast_binary(cc, OP_SHR, X, Y); }
expr(A) ::= LP(O) expr(X) RP(C).                            { A = ast_paren(cc, O, X, C); }
expr(A) ::= INT(T).                                         { A = ast_int(cc, T); }
expr(A) ::= FLOAT(T).                                       { A = ast_float(cc, T); }
expr(A) ::= IMAG(T).                                        { A = ast_imag(cc, T); }
expr(A) ::= TRUE(T).                                        { A = ast_bool(cc, T, true); }
expr(A) ::= FALSE(T).                                       { A = ast_bool(cc, T, false); }
expr(A) ::= IDENT(T).                                       { A = ast_name(cc, T); }
expr(A) ::= IDENT(N) LB exprs(L) RB(R).                     { A = ast_index(cc, N, L, R); }
expr(A) ::= IDENT(N) LP exprs(L) RP(R).                     { A = ast_call(cc, N, L, R); }
expr(A) ::= IDENT(N) LP RP(R).                              { A = ast_call(cc, N, ast_exprs(cc, (ExprList){0}, NULL), R); }
expr(A) ::= TYPE(T) LP expr(X) RP(R).                       { A = ast_cast(cc, T, X, R); }
exprs(A) ::= expr(E).                                       { A = ast_exprs(cc, (ExprList){0}, E); }
exprs(A) ::= exprs(L) COMMA expr(E).                        { A = ast_exprs(cc, L, E); }

%code {
/*
** Resynchronized at a ';' after a syntax error: report the next error right away (Lemon
** would otherwise stay silent until three more tokens were shifted).
*/
static Stmt *parse_recovered(void *parser) {
  yyParser *p = parser;
  p->yyerrcnt = -1;
  p->cc->in_recovery = false;
  return NULL;
}

/*
** Report a syntax error at `tok`: list the tokens the current state can shift when
** there are few of them (or ';' when it is one of them), otherwise "unexpected X"; a '='
** where '==' could stand is passed as expecting just '=='.
*/
static bool word_is(Token t, const char *w) { return t.n == (int)strlen(w) && !memcmp(t.z, w, (size_t)t.n); }

static void parse_syntax_error(void *parser, int major, Token tok, Cnp *cc) {
  yyParser *p = parser;
  int ok[YYNTOKEN], n = 0, semi = 0;
  /* A statement that starts with an identifier: `deposit W ...` / `gather G ...` (contextual
  ** words) take a second identifier or number, which the other statements never do. After
  ** `mapp i` (not such a word), report the error at `i` as before those statements existed
  ** ("expected '=' or '(' before 'i'"); after the first identifier, list only '=' and '('. */
  yyStackEntry *top = p->yytos;
  if (cc->in_map && cc->prev_code == TK_IDENT && (major == TK_IDENT || major == TK_INT || major == TK_FLOAT) &&
      (word_is(cc->prev_tok, "deposit") || word_is(cc->prev_tok, "gather"))) {
    ast_step_word_in_map(cc, cc->prev_tok);   /* `deposit w ...` inside a map's body */
    return;
  }
  bool lead = top - p->yystack >= 1 && top->major == TK_IDENT && top[-1].major >= YYNTOKEN;
  if (top - p->yystack >= 2 && (top->major == TK_IDENT || top->major == TK_INT || top->major == TK_FLOAT) &&
      top[-1].major == TK_IDENT && top[-2].major >= YYNTOKEN && !word_is(top[-1].minor.yy0, "deposit") &&
      !word_is(top[-1].minor.yy0, "gather")) {
    int exp[2] = {TK_ASSIGN < TK_LP ? TK_ASSIGN : TK_LP, TK_ASSIGN < TK_LP ? TK_LP : TK_ASSIGN};
    cc->prev_tok = top[-1].minor.yy0;
    cc->prev_code = TK_IDENT;
    ast_syntax_error(cc, top->minor.yy0, top->major, exp, 2);
    return;
  }
  for (int t = 1; t < YYNTOKEN; t++) {
    YYACTIONTYPE act = yy_find_shift_action((YYCODETYPE)t, p->yytos->stateno);
    if (lead && (t == TK_IDENT || t == TK_INT || t == TK_FLOAT)) continue;
    if (act != YY_ERROR_ACTION && act != YY_NO_ACTION) {
      ok[n++] = t;
      if (t == TK_SEMI) semi = 1;
    }
  }
  bool eq = false;   /* '=' where '==' could follow: a comparison written as an assignment */
  for (int i = 0; i < n; i++) eq = eq || ok[i] == TK_EQ;
  if (major == TK_ASSIGN && eq) ast_syntax_error(cc, tok, major, &(int){TK_EQ}, 1);
  else ast_syntax_error(cc, tok, major, semi ? &(int){TK_SEMI} : ok, semi ? 1 : n);
}
}
