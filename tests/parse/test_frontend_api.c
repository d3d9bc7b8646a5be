/*
** test_frontend_api.c -- the front end as a library: cnp_compile_buffer() with a FILE*
** diagnostics sink, and the checked AST that the code generator reads.
*/
#define _POSIX_C_SOURCE 200809L
#include "cnpc.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

typedef struct Run {
  Cnp *cc;
  char *text;
  size_t len;
  FILE *sink;
  CnpOptions opt;
} Run;

static int run(Run *r, const char *src) {
  memset(r, 0, sizeof *r);
  r->sink = open_memstream(&r->text, &r->len);
  cr_assert(r->sink);
  r->cc = cnp_new(&r->opt, r->sink);
  int n = cnp_compile_buffer(r->cc, "t.cnp", src, strlen(src));
  fflush(r->sink);
  return n;
}

static void done(Run *r) {
  cnp_free(r->cc);
  fclose(r->sink);
  free(r->text);
}

Test(frontend, diagnostics_go_to_the_sink) {
  Run r;
  int n = run(&r, "pipeline p;\nstream s;\nstep on q { }\nstep on s { record nope; }\n");
  cr_assert_eq(n, 2);
  cr_assert_eq(r.cc->n_errors, 2);
  cr_assert_str_eq(r.text,
                   "t.cnp:3:9: error: unknown stream 'q'\n"
                   "step on q { }\n"
                   "        ^\n"
                   "t.cnp:4:20: error: unknown event 'nope'\n"
                   "step on s { record nope; }\n"
                   "                   ^~~~\n");
  done(&r);
}

Test(frontend, syntax_errors_recover_at_semicolons) {
  Run r;
  int n = run(&r, "pipeline p;\ndim N\nfield x : f64[N];\nfield y f64[N];\nfield z : f64[N];\n");
  cr_assert_eq(n, 2, "got %d errors:\n%s", n, r.text);
  cr_assert(strstr(r.text, "t.cnp:2:6: error: expected ';' after 'N'"), "%s", r.text);
  cr_assert(strstr(r.text, "t.cnp:4:9: error: expected ':' before 'f64'"), "%s", r.text);
  done(&r);
}

Test(frontend, checked_ast_for_codegen) {
  Run r;
  int n = run(&r,
              "pipeline demo;\n"
              "param dt : f64;\n"
              "param n_cells : i64 setup;\n"
              "dim N;\n"
              "field x : f64[N];\n"
              "field cell : i64[N];\n"
              "field rho : f64[n_cells];\n"
              "stream s, io;\n"
              "event e;\n"
              "step push on s {\n"
              "  map i in N { x[i] = x[i] + dt; rho[cell[i]] += x[i]; }\n"
              "  record e;\n"
              "}\n"
              "step on io after e { map c in n_cells { rho[c] = rho[c] * 0.5; } }\n");
  cr_assert_eq(n, 0, "%s", r.text);
  cr_assert_eq(r.len, 0);
  Cnp *cc = r.cc;
  cr_assert_str_eq(cc->pipeline->name, "demo");
  cr_assert_eq(cc->n_decl[DECL_FIELD], 3);
  cr_assert_eq(cc->n_decl[DECL_STREAM], 2);
  cr_assert_eq(cc->n_decl[DECL_STEP], 2);
  Decl *dim = sema_lookup(cc, "N"), *x = sema_lookup(cc, "x"), *rho = sema_lookup(cc, "rho");
  Decl *n_cells = sema_lookup(cc, "n_cells"), *push = NULL, *io_step = NULL;
  cr_assert(dim && x && rho && n_cells);
  cr_assert(n_cells->setup);
  cr_assert_eq(x->dtype, DT_F64);
  cr_assert_eq(x->shape.rank, 1);
  cr_assert_eq(x->shape.ext[0]->ref.decl, dim);
  cr_assert_eq(rho->shape.ext[0]->ref.decl, n_cells);
  for (Decl *d = cc->decls; d; d = d->next)
    if (d->kind == DECL_STEP) {
      if (!push) push = d;
      else io_step = d;
    }
  cr_assert_str_eq(push->name, "push");
  cr_assert_eq(push->stream.decl, sema_lookup(cc, "s"));
  cr_assert_eq(io_step->after.n, 1);
  cr_assert_eq(io_step->after.v[0].decl, sema_lookup(cc, "e"));
  Stmt *map = push->body;
  cr_assert_eq(map->kind, ST_MAP);
  cr_assert_eq(map->over.decl, dim);
  cr_assert_str_eq(map->index->name, "i");
  Stmt *store = map->body, *add = store->next;
  cr_assert_eq(store->kind, ST_ASSIGN);
  cr_assert_eq(store->target->ref.decl, x);
  cr_assert_eq(store->value->type, DT_F64);
  cr_assert_eq(store->value->args[1]->ref.decl, sema_lookup(cc, "dt"));
  cr_assert_eq(add->kind, ST_ADD);
  cr_assert(add->scatter);
  cr_assert(add->target->flags & EXF_GATHER);
  cr_assert_eq(add->target->args[0]->args[0]->ref.local, map->index);
  cr_assert_eq(map->next->kind, ST_RECORD);
  Stmt *m2 = io_step->body;
  cr_assert_eq(m2->over.decl, n_cells);
  cr_assert_not(m2->body->next);
  done(&r);
}

Test(frontend, deep_nesting_is_an_error_not_a_crash) {
  size_t depth = 100000;
  char *src = malloc(3 * depth + 64);
  cr_assert(src);
  strcpy(src, "pipeline p;\nconst A = ");
  size_t k = strlen(src);
  for (size_t i = 0; i < depth; i++) src[k++] = '(';
  src[k++] = '1';
  for (size_t i = 0; i < depth; i++) src[k++] = ')';
  strcpy(src + k, ";\n");
  Run r;
  int n = run(&r, src);
  cr_assert_geq(n, 1);
  cr_assert(strstr(r.text, "error: nesting too deep"), "%.200s", r.text);
  done(&r);
  /* a long flat chain builds a deep tree: capped too */
  k = 0;
  k += (size_t)sprintf(src, "pipeline p;\nconst A = 1");
  for (size_t i = 0; i < 1000; i++) k += (size_t)sprintf(src + k, " + 1");
  strcpy(src + k, ";\n");
  n = run(&r, src);
  cr_assert_eq(n, 1, "%.300s", r.text);
  cr_assert(strstr(r.text, "expression nested too deeply"));
  done(&r);
  free(src);
}

Test(frontend, nul_bytes_and_binary_input) {
  static const char src[] = "pipeline p;\0\xff\x01;";
  Run r;
  memset(&r, 0, sizeof r);
  r.sink = open_memstream(&r.text, &r.len);
  r.cc = cnp_new(&r.opt, r.sink);
  int n = cnp_compile_buffer(r.cc, "b.cnp", src, sizeof src - 1);
  fflush(r.sink);
  cr_assert_eq(n, 4, "%s", r.text);
  cr_assert(strstr(r.text, "b.cnp:1:15: error: unexpected ';'"), "%s", r.text);
  cr_assert(strstr(r.text, "b.cnp:1:12: error: stray NUL byte in the source"), "%s", r.text);
  cr_assert(strstr(r.text, "stray byte 0xff"), "%s", r.text);
  done(&r);
}
