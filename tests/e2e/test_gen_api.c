/*
** test_gen_api.c -- the code generator as a library (cnpc_core): template expansion and
** its internal-error checks, fusion decisions and their reasons, the fast-path detection,
** and the emission of f16 and complex values.
*/
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

/* Compile a program from a string and lower it (fails the test on front-end errors). */
static GenUnit lower_src(Cnp **ccp, const char *src, FILE *diag)
{
  static CnpOptions opt;
  memset(&opt, 0, sizeof opt);
  Cnp *cc = cnp_new(&opt, diag);
  cr_assert_eq(cnp_compile_buffer(cc, "t.cnp", src, strlen(src)), 0, "front end errors");
  GenUnit u;
  memset(&u, 0, sizeof u);
  u.cc = cc;
  u.opt = &opt;
  *ccp = cc;
  return u;
}

static const char *HEAD =
    "pipeline t; param dt : f64; dim N; dim M; param nb : i64 setup;\n"
    "field a : f64[N]; field b : f64[N]; field k : i64[N]; field g : f64[nb];\n"
    "field m : f64[M]; field live : bool[N];\n"
    "stream s; plan pl = segments(k, nb);\n";

static int count_maps(GenUnit *u)
{
  int n = 0;
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) n += u->steps[i].ops[o].kind == GOP_MAP;
  return n;
}

static GenUnit lower_body(Cnp **cc, const char *body)
{
  char src[4096];
  snprintf(src, sizeof src, "%sstep on s {\n%s\n}\n", HEAD, body);
  GenUnit u = lower_src(cc, src, stderr);
  cr_assert_eq(lower_unit(&u), 0);
  return u;
}

Test(gen, elementwise_maps_fuse)
{
  Cnp *cc;
  GenUnit u = lower_body(&cc, "map i in N { a[i] = a[i] * dt; }\nmap j in N { b[j] = a[j] + 1.0; }");
  cr_assert_eq(count_maps(&u), 1);
  cr_assert_eq(u.steps[0].ops[0].n_maps, 2);
  cr_assert(strstr(buf_str(&u.explain), "t.cnp:7: map j in N: fused into the kernel of the map above"),
            "%s", buf_str(&u.explain));
  buf_free(&u.explain);
  cnp_free(cc);
}

Test(gen, other_extent_does_not_fuse)
{
  Cnp *cc;
  GenUnit u = lower_body(&cc, "map i in N { a[i] = 1.0; }\nmap j in M { m[j] = 2.0; }");
  cr_assert_eq(count_maps(&u), 2);
  cr_assert(strstr(buf_str(&u.explain), "not fused: it maps over 'M', the kernel over 'N'"),
            "%s", buf_str(&u.explain));
  buf_free(&u.explain);
  cnp_free(cc);
}

Test(gen, gather_of_written_field_does_not_fuse)
{
  Cnp *cc;
  GenUnit u = lower_body(&cc, "map i in N { k[i] = i % 3; a[i] = 1.0; }\n"
                              "map j in N { b[j] = a[k[j]]; }");
  cr_assert_eq(count_maps(&u), 2);
  cr_assert(strstr(buf_str(&u.explain), "reads 'a' at other elements, written by the kernel"),
            "%s", buf_str(&u.explain));
  buf_free(&u.explain);
  cnp_free(cc);
}

Test(gen, scatter_then_read_does_not_fuse)
{
  Cnp *cc;
  GenUnit u = lower_body(&cc, "map i in N { g[k[i]] += a[i]; }\nmap j in N { b[j] = g[k[j]]; }");
  cr_assert_eq(count_maps(&u), 2);
  cr_assert(strstr(buf_str(&u.explain), "which the kernel scatter-adds into"), "%s",
            buf_str(&u.explain));
  buf_free(&u.explain);
  cnp_free(cc);
}

Test(gen, compact_sort_fast_path)
{
  Cnp *cc;
  GenUnit u = lower_body(&cc, "map i in N { live[i] = a[i] > 0.0; k[i] = i64(a[i]); }\n"
                              "compact live (a, b, k);\nsort k (a, b);\npl = segments(k, nb);\n"
                              "sum pl (b) -> g;");
  GenOp *op = &u.steps[0].ops[0];
  cr_assert_eq(op->kind, GOP_MAP);
  cr_assert_not_null(op->mask_of);
  cr_assert_not_null(op->fused_sort);
  cr_assert_eq(lower_plan_producer(&u, op->fused_plan), op);
  cr_assert(u.steps[0].ops[3].seg_inline);
  buf_free(&u.explain);
  cnp_free(cc);
}

Test(gen, fast_path_needs_the_whole_list)
{
  Cnp *cc;   /* b is compacted but not sorted: the runtime calls are kept */
  GenUnit u = lower_body(&cc, "map i in N { live[i] = a[i] > 0.0; k[i] = i64(a[i]); }\n"
                              "compact live (a, b, k);\nsort k (a);");
  cr_assert_not_null(u.steps[0].ops[0].mask_of);
  cr_assert_null(u.steps[0].ops[0].fused_sort);
  cr_assert(strstr(buf_str(&u.explain), "sort k: runtime compact + sort, not done by kernel k0: the "
                   "compacted arrays are not exactly the sorted arrays plus the key"),
            "%s", buf_str(&u.explain));
  buf_free(&u.explain);
  cnp_free(cc);
}

Test(gen, template_expands_every_placeholder)
{
  const TmplVar v[] = {
      {"banner", "/* B */"}, {"file", "f"}, {"name", "nm"}, {"NAME", "NM"}, {"guard", "G_H"},
      {"step_args_doc", ""}, {"stream_list", "s"}, {"num_streams", "1"},
      {"config_fields", "  int64_t N;\n"}, {"config_init", ", 0"}, {"step_params", "nm *p"},
      {"api_types", ""},
  };
  Buf b = {0};
  emit_template(&b, "header.h", v, (int)(sizeof v / sizeof v[0]));
  cr_assert(strstr(buf_str(&b), "typedef struct nm nm;"));
  cr_assert(strstr(buf_str(&b), "#define NM_CONFIG_INIT {CNP_BACKEND_HOST, 0, 0, {NULL}, 0}"));
  cr_assert_null(strstr(buf_str(&b), "{{"));
  buf_free(&b);
}

Test(gen, template_missing_value_is_an_internal_error, .signal = SIGABRT)
{
  const TmplVar v[] = {{"banner", ""}};
  Buf b = {0};
  emit_template(&b, "header.h", v, 1);
}

Test(gen, template_unused_value_is_an_internal_error, .signal = SIGABRT)
{
  const TmplVar v[] = {
      {"banner", "/* B */"}, {"file", "f"}, {"name", "nm"}, {"NAME", "NM"}, {"guard", "G_H"},
      {"step_args_doc", ""}, {"stream_list", "s"}, {"num_streams", "1"},
      {"config_fields", ""}, {"config_init", ""}, {"step_params", "nm *p"}, {"api_types", ""},
      {"nope", "x"},
  };
  Buf b = {0};
  emit_template(&b, "header.h", v, (int)(sizeof v / sizeof v[0]));
}

Test(gen, f16_and_complex_are_generated)
{
  Cnp *cc;
  GenUnit u = lower_src(&cc, "pipeline h; param w : c128; dim N; field x : f16[N];\n"
                             "field z : c128[N]; field y : c64[N]; stream s;\n"
                             "step on s { map i in N { x[i] = x[i] * 0.1; z[i] = z[i] * w + y[i]; } }\n",
                        stderr);
  cr_assert_eq(lower_unit(&u), 0);
  u.name = u.upper = u.stem = u.src_path = "h";
  Buf h = {0}, c = {0}, cu = {0};
  gen_header(&u, &h);
  gen_unit(&u, &gen_target_host, &c);
  gen_unit(&u, &gen_target_cuda, &cu);
  /* the C API passes complex params as {re, im} structs */
  cr_assert(strstr(buf_str(&h), "int       h_step(h *p, cnp_complex128 w);"), "%s", buf_str(&h));
  /* f16: bits in storage, float arithmetic, the literal folded to its f16 value */
  cr_assert(strstr(buf_str(&c), "f_x[l_i] = cnp_g_f2h((cnp_g_h2f(f_x[l_i]) * 0.0999755859375f));"),
            "%s", buf_str(&c));
  /* complex: operands converted to the operation's type; C99 _Complex in C, structs in CUDA */
  cr_assert(strstr(buf_str(&c), "f_z[l_i] = ((f_z[l_i] * P_w) + CNP_G_C128(f_y[l_i]));"));
  cr_assert(strstr(buf_str(&c), "typedef double _Complex cnp_g_c128;"));
  cr_assert(strstr(buf_str(&cu), "struct cnp_g_c128 {"));
  cr_assert(strstr(buf_str(&c), "p->P_w = cnp_g_mk128(w.re, w.im);"));
  buf_free(&h);
  buf_free(&c);
  buf_free(&cu);
  buf_free(&u.explain);
  cnp_free(cc);
}

Test(gen, f16_constants_fold_to_their_f16_value)
{
  Cnp *cc;
  GenUnit u = lower_src(&cc, "pipeline h; const A : f16 = 65519.0; const B : f16 = 65520.0;\n"
                             "const C : f16 = 1e-6; const D : f16 = 1e-8; const E : f16 = -2049.0;\n"
                             "dim N; field x : f32[N]; stream s;\n"
                             "step on s { map i in N { x[i] = A + B + C + D + E; } }\n",
                        stderr);
  cr_assert_eq(lower_unit(&u), 0);
  u.name = u.upper = u.stem = u.src_path = "h";
  Buf c = {0};
  gen_unit(&u, &gen_target_host, &c);
  /* largest finite; overflow; a subnormal (17 * 2^-24); zero; a tie to even (-2048) */
  cr_assert(strstr(buf_str(&c), "f_x[l_i] = (float)((((65504.0f + ((float)HUGE_VAL)) + "
                                "1.0132789611816406e-06f) + 0.0f) + -2048.0f);"),
            "%s", strstr(buf_str(&c), "f_x[l_i] ="));
  buf_free(&c);
  buf_free(&u.explain);
  cnp_free(cc);
}

/* Successive step() calls: streams sharing a field one of them writes wait for each other's
** previous call (sema's stream_join); a stream with nothing in common does not. */
Test(gen, cross_call_order_of_streams)
{
  Cnp *cc;
  (void)lower_src(&cc,
                  "pipeline t; dim N; field x : f64[N]; field y : f64[N]; field z : f64[N];\n"
                  "stream a, b, c; event e;\n"
                  "step on a { map i in N { x[i] = x[i] + 1.0; } record e; }\n"
                  "step on b after e { map i in N { y[i] = x[i] * 2.0; } }\n"
                  "step on c { map i in N { z[i] = z[i] + 1.0; } }\n",
                  stderr);
  cr_assert_not_null(cc->stream_join);
  cr_assert(cc->stream_join[0 * 3 + 1] && cc->stream_join[1 * 3 + 0], "a and b share x");
  cr_assert(!cc->stream_join[0 * 3 + 2] && !cc->stream_join[2 * 3 + 0], "c shares nothing");
  cr_assert(!cc->stream_join[1 * 3 + 2] && !cc->stream_join[2 * 3 + 1], "c shares nothing");
  cnp_free(cc);
}
