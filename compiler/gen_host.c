/*
** gen_host.c -- the host backend's kernels: each fused group of maps as one (OpenMP) loop,
** the compact + sort fast path (one counting sort in the kernel, its dry first pass and the
** segment sum done while it scatters) and the inline segment sum of a plan it built.
** Both units carry them (the CUDA unit runs them on the host backend).
*/
#include "gen.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void kernel_host(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, KUse *use) {
  KCtx k = {u, t, &gen_target_host, NULL, DT_VOID, NULL};
  buf_line(b, "/* Kernel %d on the host: %d map%s fused into one loop. */", op->kernel,
           op->n_maps, op->n_maps > 1 ? "s" : "");
  buf_line(b, "static int %s_k%d_host(const %s_k%d_args *ap)", u->name, op->kernel, u->name,
           op->kernel);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "const %s_k%d_args A = *ap;", u->name, op->kernel);
  buf_line(b, "int bad = 0;");
  kernel_locals(b, use);
  buf_line(b, "CNP_G_OMP(\"omp parallel for schedule(static) reduction(|:bad)\")");
  buf_line(b, "for (int64_t cnp_i = 0; cnp_i < A.n; cnp_i++) {");
  b->indent = 4;
  group_body(&k, b, op);
  b->indent = 2;
  buf_line(b, "}");
  buf_line(b, "return bad ? CNP_ERANGE : CNP_OK;");
  b->indent = 0;
  buf_line(b, "} /* kernel %d (host) */", op->kernel);
  buf_puts(b, "\n");
}

/* Number of components of a field: a literal when its leading extents are constants (so
** the C compiler unrolls component loops), else computed from the array. */
static const char *ncomp_str(GenUnit *u, Decl *f) {
  int64_t n = 1;
  for (int d = 0; d + 1 < f->shape.rank; d++) {
    Expr *e = f->shape.ext[d];
    if (e->kind == EX_INT) n *= e->ival;
    else if (e->kind == EX_NAME && e->ref.decl && e->ref.decl->kind == DECL_CONST) n *= e->ref.decl->ival;
    else return arena_printf(&u->cc->arena, "cnp_g_ncomp(&p->f_%s)", f->name);
  }
  return arena_printf(&u->cc->arena, "%" PRId64, n);
}

static bool in_reflist(const RefList *l, const Decl *d) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i].decl == d) return true;
  return false;
}

/* Is element `comp` of f held in a local per row (the dry pass)? */
static bool row_held(const RowVals *rv, Decl *f, int64_t comp) {
  for (int i = 0; i < rv->n; i++)
    if (rv->v[i].f == f && (comp < 0 || rv->v[i].comp == comp)) return true;
  return false;
}

/* The element `comp` of row cnp_i of f, as a C lvalue. */
static const char *row_elem(GenUnit *u, Decl *f, int64_t comp) {
  if (comp == 0) return arena_printf(&u->cc->arena, "f_%s[cnp_i]", f->name);
  return arena_printf(&u->cc->arena, "f_%s[%" PRId64 " * A.f_%s_e%d + cnp_i]", f->name, comp,
                      f->name, f->shape.rank - 1);
}

/* Dry pass: the row's elements of the fields the maps write, loaded into locals. */
static void row_loads(GenUnit *u, Buf *b, const RowVals *rv) {
  for (int i = 0; i < rv->n; i++) {
    Decl *f = rv->v[i].f;
    buf_line(b, "%s %s = %s;", gen_ctype(f->dtype), row_name(u, f, rv->v[i].comp),
             row_elem(u, f, rv->v[i].comp));
  }
}

/* Dry pass: the locals a pass does not use (each pass uses only some of them). `(void)&x`,
** not `(void)x`: nvcc's front end still calls a variable assigned and cast to void "set but
** never used" (#550). */
static void row_unused(GenUnit *u, Buf *b, const RowVals *rv) {
  Buf t = {0};
  for (int i = 0; i < rv->n; i++)
    buf_printf(&t, "%s(void)&%s;", i ? " " : "", row_name(u, rv->v[i].f, rv->v[i].comp));
  buf_line(b, "%s", buf_str(&t));
  buf_free(&t);
}

/* The host kernel of the compact + sort fast path (lower.c, find_fast_path): one parallel
** region; each thread runs the maps over its chunk and counts live keys, one thread turns
** the counts into offsets, each thread scatters its live rows to their sorted places in
** the double buffers, and the buffers are swapped. With a dry first pass (op->dry) pass 1
** keeps the maps' results in locals and stores only the mask, the fields no compaction
** moves and each row's key; pass 2 computes the results again and stores them straight
** into the double buffers; if a key is out of range, the maps then run for real. */
void kernel_host_fused(GenUnit *u, const GenTarget *t, Buf *b, GenOp *op, KUse *use) {
  KCtx k = {u, t, &gen_target_host, NULL, DT_VOID, NULL};
  Stmt *c = op->mask_of;
  Decl *mask = c->a.decl, *key = op->fused_sort->a.decl, *plan = op->fused_plan;
  Decl *dim = op->stmt->over.decl;
  int K = op->kernel;
  RowVals rv;
  memset(&rv, 0, sizeof rv);
  if (op->dry && fuse_row_values(u, op, &rv)) cnp_ice("dry kernel %d without row values", K);
  KCtx kd = k;
  kd.rows = &rv;
  Stmt *sum = op->fused_sum;
  Decl *out = sum ? sum->b.decl : NULL;
  int64_t n_sums = 0;     /* components summed: rows of the output */
  for (int i = 0; sum && i < sum->list.n; i++) {
    int64_t nc = 1;
    (void)fuse_const_ncomp(sum->list.v[i].decl, &nc);
    n_sums += nc;
  }
  buf_line(b, "/* Kernel %d on the host: %d map%s, then compact %s + sort %s as one counting "
              "sort%s. */", K, op->n_maps, op->n_maps > 1 ? "s" : "", mask->name, key->name,
           op->dry ? " (dry first pass)" : "");
  buf_line(b, "static int %s_k%d_host(const %s_k%d_args *ap, %s_h *p)", u->name, K, u->name, K,
           u->name);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "const %s_k%d_args A = *ap;", u->name, K);
  buf_line(b, "int bad = 0, oob = 0;");
  kernel_locals(b, use);
  buf_line(b, "const int64_t R = %s;  /* keys in [0, R): plan %s */", setup_str(u, plan->value, "p->"),
           plan->name);
  buf_line(b, "const int64_t cap = p->cap_%s;", dim->name);
  buf_line(b, "int64_t *const hist = p->hist_k%d;", K);
  if (op->dry) buf_line(b, "uint32_t *const keys = p->keys_k%d;  /* pass 1: each row's key, "
                           "UINT32_MAX if not live */", K);
  buf_line(b, "int64_t live = 0;");
  for (int i = 0; i < c->list.n; i++) {
    Decl *f = c->list.v[i].decl;
    int64_t nc = 1;
    bool held = op->dry && row_held(&rv, f, -1), need_src = !(op->dry && f == key);
    if (held) {
      (void)fuse_const_ncomp(f, &nc);
      need_src = false;
      for (int64_t q = 0; q < nc && f != key; q++) need_src = need_src || !row_held(&rv, f, q);
    }
    if (f->shape.rank > 1 && !held) buf_line(b, "const int64_t nc_%s = %s;", f->name, ncomp_str(u, f));
    if (need_src)
      buf_line(b, "const %s *const src_%s = (const %s *)p->f_%s.data;", gen_ctype(f->dtype),
               f->name, gen_ctype(f->dtype), f->name);
    buf_line(b, "%s *const dst_%s = (%s *)p->g%d_%s.data;", gen_ctype(f->dtype), f->name,
             gen_ctype(f->dtype), K, f->name);
  }
  if (sum)
    buf_line(b, "%s *const sum_%s = (%s *)p->f_%s.data;  /* %s:%d: sum %s -> %s, done here */",
             gen_ctype(out->dtype), out->name, gen_ctype(out->dtype), out->name,
             base_name(sum->loc.file->path), sum->loc.line, plan->name, out->name);
  buf_line(b, "memset(hist, 0, sizeof(int64_t) * (size_t)p->nthreads * (size_t)R);");
  if (op->dry) buf_line(b, "if (R >= (int64_t)UINT32_MAX) oob = 1;  /* keys beyond uint32: the "
                           "runtime sorts */");
  buf_line(b, "CNP_G_OMP(\"omp parallel num_threads(p->nthreads) reduction(|:bad)\")");
  buf_line(b, "{");
  b->indent = 4;
  buf_line(b, "const int64_t t = CNP_G_TID(), T = CNP_G_NT();");
  buf_line(b, "const int64_t lo = A.n * t / T, hi = A.n * (t + 1) / T;");
  buf_line(b, "int64_t *const h = hist + t * R;");
  buf_line(b, "for (int64_t cnp_i = lo; cnp_i < hi; cnp_i++) {");
  b->indent = 6;
  if (op->dry) {
    buf_line(b, "/* pass 1 (dry): the maps' results stay in these locals */");
    row_loads(u, b, &rv);
    group_body(&kd, b, op);
    for (int i = 0; i < rv.n; i++) {     /* the mask and the fields no compaction moves */
      Decl *f = rv.v[i].f;
      if (!rv.v[i].written || (f != mask && in_reflist(&c->list, f))) continue;
      buf_line(b, "%s = %s;", row_elem(u, f, rv.v[i].comp), row_name(u, f, rv.v[i].comp));
    }
    buf_line(b, "uint32_t kv = UINT32_MAX;");
    buf_line(b, "if (%s) {  /* live: count its key */", row_name(u, mask, 0));
    buf_line(b, "  const int64_t key = (int64_t)%s;", row_name(u, key, 0));
    buf_line(b, "  if (key >= 0 && key < R) {");
    buf_line(b, "    h[key]++;");
    buf_line(b, "    kv = (uint32_t)key;");
  } else {
    group_body(&k, b, op);
    buf_line(b, "if (f_%s[cnp_i]) {  /* live: count its key */", mask->name);
    buf_line(b, "  const int64_t key = (int64_t)f_%s[cnp_i];", key->name);
    buf_line(b, "  if (key >= 0 && key < R) {");
    buf_line(b, "    h[key]++;");
  }
  buf_line(b, "  } else {");
  buf_line(b, "    CNP_G_OMP(\"omp atomic write\")");
  buf_line(b, "    oob = 1;");
  buf_line(b, "  }");
  buf_line(b, "}");
  if (op->dry) {
    buf_line(b, "keys[cnp_i] = kv;");
    row_unused(u, b, &rv);
  }
  b->indent = 4;
  buf_line(b, "}");
  buf_line(b, "CNP_G_OMP(\"omp barrier\")");
  buf_line(b, "CNP_G_OMP(\"omp single\")");
  buf_line(b, "{");
  buf_line(b, "  int oob_seen;");
  buf_line(b, "  CNP_G_OMP(\"omp atomic read\")");
  buf_line(b, "  oob_seen = oob;");
  buf_line(b, "  if (!oob_seen) {  /* counts -> first position of each (key, thread) */");
  buf_line(b, "    int64_t run = 0;");
  buf_line(b, "    for (int64_t key = 0; key < R; key++) {");
  buf_line(b, "      p->off_%s[key] = run;", plan->name);
  buf_line(b, "      for (int64_t u = 0; u < T; u++) {");
  buf_line(b, "        const int64_t n_u = hist[u * R + key];");
  buf_line(b, "        hist[u * R + key] = run;");
  buf_line(b, "        run += n_u;");
  buf_line(b, "      }");
  buf_line(b, "    }");
  buf_line(b, "    p->off_%s[R] = run;", plan->name);
  buf_line(b, "    live = run;");
  if (sum)
    buf_line(b, "    for (int64_t k = 0; k < %" PRId64 " * R; k++) sum_%s[k] = 0;", n_sums, out->name);
  buf_line(b, "  }");
  buf_line(b, "}");
  buf_line(b, "int oob_all;");
  buf_line(b, "CNP_G_OMP(\"omp atomic read\")");
  buf_line(b, "oob_all = oob;");
  const char *kexpr = op->dry ? "kv" : "key";   /* the row's key in pass 2 */
  if (op->dry) {
    buf_line(b, "if (!oob_all) {  /* pass 2: each live row computed again, stored at its sorted "
                "place */");
    if (sum) buf_line(b, "  const int first = t == 0;  /* its rows come first in every segment */");
    buf_line(b, "  for (int64_t cnp_i = lo; cnp_i < hi; cnp_i++) {");
    buf_line(b, "    const uint32_t kv = keys[cnp_i];");
    buf_line(b, "    if (kv == UINT32_MAX) continue;");
    b->indent = 8;
    row_loads(u, b, &rv);
    group_body(&kd, b, op);
    b->indent = 4;
    buf_line(b, "    const int64_t j = h[kv]++;  /* placed by pass 1's key */");
  } else {
    buf_line(b, "if (!oob_all) {  /* scatter live rows to their sorted places */");
    if (sum) buf_line(b, "  const int first = t == 0;  /* its rows come first in every segment */");
    buf_line(b, "  for (int64_t cnp_i = lo; cnp_i < hi; cnp_i++) {");
    buf_line(b, "    if (!f_%s[cnp_i]) continue;", mask->name);
    if (sum) {
      buf_line(b, "    const int64_t key = (int64_t)f_%s[cnp_i];", key->name);
      buf_line(b, "    const int64_t j = h[key]++;");
    } else {
      buf_line(b, "    const int64_t j = h[(int64_t)f_%s[cnp_i]]++;", key->name);
    }
  }
  for (int i = 0; i < c->list.n; i++) {
    Decl *f = c->list.v[i].decl;
    int64_t nc = 1;
    if (op->dry && f == key) {
      buf_line(b, "    dst_%s[j] = (%s)kv;", f->name, gen_ctype(f->dtype));
    } else if (op->dry && row_held(&rv, f, -1)) {
      (void)fuse_const_ncomp(f, &nc);
      for (int64_t q = 0; q < nc; q++) {
        const char *at = q ? arena_printf(&u->cc->arena, "%" PRId64 " * cap + ", q) : "";
        if (row_held(&rv, f, q))
          buf_line(b, "    dst_%s[%sj] = %s;", f->name, at, row_name(u, f, q));
        else
          buf_line(b, "    dst_%s[%sj] = src_%s[%scnp_i];", f->name, at, f->name, at);
      }
    } else if (f->shape.rank == 1) {
      buf_line(b, "    dst_%s[j] = src_%s[cnp_i];", f->name, f->name);
    } else {
      buf_line(b, "    for (int64_t c = 0; c < nc_%s; c++)", f->name);
      buf_line(b, "      dst_%s[c * cap + j] = src_%s[c * cap + cnp_i];", f->name, f->name);
    }
  }
  /* the fused sum: thread 0 adds the values it just moved (sum_values gives each one) */
  for (int i = 0, J = 0; sum && i < sum->list.n; i++) {
    Decl *f = sum->list.v[i].decl;
    int64_t nc = 1;
    (void)fuse_const_ncomp(f, &nc);
    for (int64_t q = 0; q < nc; q++, J++) {
      const char *at = q ? arena_printf(&u->cc->arena, "%" PRId64 " * cap + ", q) : "";
      const char *v;
      if (op->dry && f == key) v = "kv";
      else if (op->dry && row_held(&rv, f, q)) v = row_name(u, f, q);
      else v = arena_printf(&u->cc->arena, "src_%s[%scnp_i]", f->name, at);
      buf_line(b, "    if (first) sum_%s[%s%s] += (%s)%s;", out->name,
               J ? arena_printf(&u->cc->arena, "%d * R + ", J) : "", kexpr,
               gen_ctype(out->dtype), v);
    }
  }
  if (op->dry) {
    b->indent = 8;
    row_unused(u, b, &rv);
    b->indent = 4;
  }
  if (sum) {
    buf_line(b, "  }");
    buf_line(b, "  CNP_G_OMP(\"omp barrier\")");
    buf_line(b, "  CNP_G_OMP(\"omp for schedule(static) nowait\")  /* the region ends next */");
    buf_line(b, "  for (int64_t k = 0; k < R; k++) {  /* then the other threads' rows, in sorted "
                "order */");
    for (int i = 0, J = 0; i < sum->list.n; i++) {
      Decl *f = sum->list.v[i].decl;
      int64_t nc = 1;
      (void)fuse_const_ncomp(f, &nc);
      for (int64_t q = 0; q < nc; q++, J++) {
        const char *at = q ? arena_printf(&u->cc->arena, "%" PRId64 " * cap + ", q) : "";
        const char *o = J ? arena_printf(&u->cc->arena, "%d * R + k", J) : "k";
        buf_line(b, "    {");
        buf_line(b, "      %s acc = sum_%s[%s];", gen_ctype(out->dtype), out->name, o);
        buf_line(b, "      for (int64_t r = hist[k]; r < p->off_%s[k + 1]; r++) acc += (%s)dst_%s[%sr];",
                 plan->name, gen_ctype(out->dtype), f->name, at);
        buf_line(b, "      sum_%s[%s] = acc;", out->name, o);
        buf_line(b, "    }");
      }
    }
  }
  buf_line(b, "  }");
  if (op->dry) {
    buf_line(b, "} else {  /* a key out of range: the maps run for real (their inputs are "
                "unchanged), then");
    buf_line(b, "          ** compact and sort run as runtime calls */");
    buf_line(b, "  for (int64_t cnp_i = lo; cnp_i < hi; cnp_i++) {");
    b->indent = 8;
    group_body(&k, b, op);
    b->indent = 4;
    buf_line(b, "  }");
  }
  buf_line(b, "}");
  b->indent = 2;
  buf_line(b, "} /* parallel */");
  buf_line(b, "(void)cap;");
  buf_line(b, "if (!oob) {  /* the double buffers become the fields */");
  for (int i = 0; i < c->list.n; i++) {
    Decl *f = c->list.v[i].decl;
    buf_line(b, "  cnp_array t_%s = p->f_%s;", f->name, f->name);
    buf_line(b, "  p->f_%s = p->g%d_%s;", f->name, K, f->name);
    buf_line(b, "  p->g%d_%s = t_%s;", K, f->name, f->name);
  }
  buf_line(b, "  p->n_%s = live;", dim->name);
  buf_line(b, "}");
  buf_line(b, "p->fused_k%d = !oob;  /* else compact and sort run as runtime calls */", K);
  buf_line(b, "return bad ? CNP_ERANGE : CNP_OK;");
  b->indent = 0;
  buf_line(b, "} /* kernel %d (host) */", K);
  buf_puts(b, "\n");
}

/* The fast-path kernel that replaces compact/sort statement s, or NULL. */
GenOp *fused_owner(GenUnit *u, Stmt *s) {
  for (int i = 0; i < u->n_steps; i++)
    for (int o = 0; o < u->steps[i].n_ops; o++) {
      GenOp *op = &u->steps[i].ops[o];
      if (op->fused_sort && (op->fused_sort == s || op->mask_of == s || op->fused_sum == s))
        return op;
    }
  return NULL;
}

void inline_sum(GenUnit *u, Buf *b, Stmt *s) {
  Decl *out = s->b.decl, *plan = s->a.decl;
  DType od = out->dtype;
  buf_line(b, "if (p->inl_%s) {  /* offsets from the counting sort of kernel %d */", plan->name,
           lower_plan_producer(u, plan)->kernel);
  b->indent += 2;
  buf_line(b, "const int64_t R = p->f_%s.shape[%d];", out->name, out->shape.rank - 1);
  buf_line(b, "const int64_t *const off = p->off_%s;", plan->name);
  buf_line(b, "int64_t j = 0;");
  for (int i = 0; i < s->list.n; i++) {
    Decl *f = s->list.v[i].decl;
    buf_line(b, "for (int64_t c = 0; c < cnp_g_ncomp(&p->f_%s); c++, j++) {", f->name);
    buf_line(b, "  const %s *const src = (const %s *)p->f_%s.data + c * p->f_%s.shape[%d];",
             gen_ctype(f->dtype), gen_ctype(f->dtype), f->name, f->name, f->shape.rank - 1);
    buf_line(b, "  %s *const dst = (%s *)p->f_%s.data + j * R;", gen_ctype(od), gen_ctype(od),
             out->name);
    buf_line(b, "  CNP_G_OMP(\"omp parallel for schedule(static)\")");
    buf_line(b, "  for (int64_t k = 0; k < R; k++) {");
    if (od == DT_F16) {   /* as the runtime: accumulated in float, rounded once */
      buf_line(b, "    float acc = 0.0f;");
      buf_line(b, "    for (int64_t r = off[k]; r < off[k + 1]; r++) acc += cnp_g_h2f(src[r]);");
      buf_line(b, "    dst[k] = cnp_g_f2h(acc);");
    } else {
      buf_line(b, "    %s acc = 0;", gen_ctype(od));
      buf_line(b, "    for (int64_t r = off[k]; r < off[k + 1]; r++) acc += (%s)src[r];", gen_ctype(od));
      buf_line(b, "    dst[k] = acc;");
    }
    buf_line(b, "  }");
    buf_line(b, "  p->stats.launches++;");
    buf_line(b, "}");
  }
  b->indent -= 2;
  buf_line(b, "} else {");
}

/* ======================================================================== the host target */

static void host_atomic_add(Buf *b, const char *T, const char *ct, const char *V) {
  buf_line(b, "CNP_G_OMP(\"omp atomic\")");
  buf_line(b, "%s += (%s)%s;", T, ct, V);
}

/* The host unit runs on the host backend only: a CUDA request falls back (or fails, strict). */
static void host_backend_select(GenUnit *u, Buf *b) {
  buf_line(b, "st = cnp_backend_select(cfg->backend, 1);   /* CNP_BACKEND may force it */");
  buf_line(b, "if (st != CNP_OK && st != CNP_EUNAVAILABLE)   /* a bad cfg.backend or CNP_BACKEND */");
  buf_line(b, "  return cnp_g_err(err, errlen, st, \"%s_setup: %%s\", cnp_last_error());", u->name);
  buf_line(b, "B = st == CNP_EUNAVAILABLE ? CNP_BACKEND_CUDA : cnp_backend_current();");
  buf_line(b, "cnp_backend_select(prev, 0);");
  buf_line(b, "if (B == CNP_BACKEND_CUDA && cfg->strict)");
  buf_line(b, "  return cnp_g_err(err, errlen, CNP_EUNAVAILABLE, \"%s_setup: CUDA backend "
                  "unavailable: this is the host unit %s.c (build %s.cu for CUDA)\");",
           u->name, u->stem, u->stem);
  buf_line(b, "B = CNP_BACKEND_HOST;");
  buf_line(b, "cnp_clear_error();");
}

const GenTarget gen_target_host = {
    .name = "host",
    .emit = EMIT_C,
    .ext = ".c",
    .device = false,
    .complex_tmpl = "complex.c",
    .complex_prefix = NULL,
    .extern_c = "",
    .atomic_add = host_atomic_add,
    .backend_select = host_backend_select,
    .unit_part = "unit.c",
};
