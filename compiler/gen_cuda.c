/*
** gen_cuda.c -- the CUDA backend: a __global__ kernel per fused group, and the CUDA graphs
** (steps without host decisions captured once at setup and replayed by step()).
*/
#include "gen.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void kernel_cuda(GenUnit *u, Buf *b, GenOp *op, KUse *use) {
  KCtx k = {u, &gen_target_cuda, &gen_target_cuda, NULL, DT_VOID, NULL};
  buf_line(b, "/* Kernel %d on the device: one thread per element. */", op->kernel);
  buf_line(b, "static __global__ void %s_k%d_cuda(const %s_k%d_args A)", u->name, op->kernel,
           u->name, op->kernel);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "const int64_t cnp_i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;");
  buf_line(b, "int bad = 0;");
  buf_line(b, "if (cnp_i >= A.n || (A.d_n && cnp_i >= *A.d_n)) {  /* past the live extent */");
  if (op->mask_of)
    buf_line(b, "  if (cnp_i < A.n) A.f_%s[cnp_i] = 0;  /* graph: rows past it leave the compaction */",
             op->mask_of->a.decl->name);
  buf_line(b, "  return;");
  buf_line(b, "}");
  kernel_locals(b, use);
  group_body(&k, b, op);
  buf_line(b, "if (bad && A.bad) *A.bad = 1;");
  b->indent = 0;
  buf_line(b, "} /* kernel %d (cuda) */", op->kernel);
  buf_puts(b, "\n");
}


/* ======================================================================== CUDA graphs (.cu only) */

/* Kernel K inside a graph: its argument fill, capture and per-replay argument update. */
static void graph_kernel(GenUnit *u, Buf *b, GenOp *op) {
  KUse use;
  group_use(u, op, &use);
  const char *N = u->name;
  int K = op->kernel;
  Decl *over = op->stmt->over.decl;
  buf_line(b, "/* Arguments of kernel %d in the CUDA graph: grid sized by the capacity, the live", K);
  buf_line(b, "** extent read on the device. */");
  buf_line(b, "static void %s_k%d_fill(%s_h *p, %s_k%d_args *ap)", N, K, N, N, K);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "memset(ap, 0, sizeof *ap);");
  if (over->kind == DECL_DIM) {
    buf_line(b, "ap->n = p->cap_%s;", over->name);
    buf_line(b, "ap->d_n = (const int64_t *)p->dn_%s.data;", over->name);
  } else if (over->kind == DECL_PARAM) {
    buf_line(b, "ap->n = (int64_t)p->P_%s;", over->name);
  } else {
    buf_line(b, "ap->n = %" PRId64 ";", over->ival);
  }
  buf_line(b, "ap->bad = (int *)p->bad.data;");
  for (int i = 0; i < use.n_fields; i++) {
    Decl *f = use.fields[i];
    buf_line(b, "ap->f_%s = (%s *)p->f_%s.data;", f->name, gen_ctype(f->dtype), f->name);
    for (int d = 0; d < f->shape.rank; d++)
      buf_line(b, "ap->f_%s_e%d = p->f_%s.shape[%d];", f->name, d, f->name, d);
  }
  for (int i = 0; i < use.n_params; i++)
    buf_line(b, "ap->P_%s = p->P_%s;", use.params[i]->name, use.params[i]->name);
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
  buf_line(b, "/* Kernel %d launched while its step is captured; remembers its graph node. */", K);
  buf_line(b, "static int %s_k%d_capture(%s_h *p, cnp_stream *S)", N, K, N);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "%s_k%d_args A;", N, K);
  buf_line(b, "cudaStream_t cs = (cudaStream_t)cnp_stream_native(S);");
  buf_line(b, "enum cudaStreamCaptureStatus cst = cudaStreamCaptureStatusNone;");
  buf_line(b, "const cudaGraphNode_t *deps = NULL;");
  buf_line(b, "size_t n_deps = 0;");
  buf_line(b, "%s_k%d_fill(p, &A);", N, K);
  buf_line(b, "if (A.n <= 0) return CNP_EINVAL;");
  buf_line(b, "%s_k%d_cuda<<<(unsigned)((A.n + 255) / 256), 256, 0, cs>>>(A);", N, K);
  buf_line(b, "if (cnp_g_launched() != CNP_OK) return CNP_EBACKEND;");
  buf_line(b, "/* right after the launch, the capture's only dependency is the kernel's node */");
  /* CUDA 13 added an edge-data argument (the 12.x form has 6): both toolkits compile it */
  buf_puts(b, "#if CUDART_VERSION >= 13000\n");
  buf_line(b, "if (cudaStreamGetCaptureInfo(cs, &cst, NULL, NULL, &deps, NULL, &n_deps) != cudaSuccess ||");
  buf_puts(b, "#else\n");
  buf_line(b, "if (cudaStreamGetCaptureInfo(cs, &cst, NULL, NULL, &deps, &n_deps) != cudaSuccess ||");
  buf_puts(b, "#endif\n");
  buf_line(b, "    cst != cudaStreamCaptureStatusActive || n_deps != 1 ||");
  buf_line(b, "    cudaGraphKernelNodeGetParams(deps[0], &p->gkp_k%d) != cudaSuccess)", K);
  buf_line(b, "  return CNP_EBACKEND;");
  buf_line(b, "p->gnode_k%d = deps[0];", K);
  buf_line(b, "return CNP_OK;");
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
  buf_line(b, "/* This step's arguments (per-step params) into kernel %d's node of the graph. */", K);
  buf_line(b, "static int %s_k%d_update(%s_h *p, cudaGraphExec_t x)", N, K, N);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "%s_k%d_args A;", N, K);
  buf_line(b, "void *args[1] = {&A};");
  buf_line(b, "cudaKernelNodeParams kp = p->gkp_k%d;", K);
  buf_line(b, "%s_k%d_fill(p, &A);", N, K);
  buf_line(b, "kp.kernelParams = args;  /* copied by the call */");
  buf_line(b, "kp.extra = NULL;");
  buf_line(b, "return cudaGraphExecKernelNodeSetParams(x, p->gnode_k%d, &kp) == cudaSuccess ? CNP_OK",
           K);
  buf_line(b, "                                                                       : CNP_EBACKEND;");
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
}

/* ---- the CUDA-graph form of each statement (StmtInfo.graph): enqueued while its step is
** captured, over the capacity, the live extent dn_D read on the device. Each opens a block
** that graph_enqueue() closes. */

/* The listed arrays' rows over the capacity of dim D into p->views. */
static void graph_views(Buf *b, Stmt *s, const char *D) {
  buf_line(b, "int nv = 0;");
  for (int k = 0; k < s->list.n; k++)
    buf_line(b, "nv = cnp_g_rows(p->views, nv, &p->f_%s, p->cap_%s);", s->list.v[k].decl->name, D);
}

static void graph_compact(GenUnit *u, Buf *b, GenOp *op, const char *D) {
  Stmt *s = op->stmt;
  (void)u;
  buf_line(b, "{  /* over the capacity: the kernel cleared the mask past the live extent */");
  b->indent += 2;
  buf_line(b, "cnp_array mask = cnp_g_row(&p->f_%s, 0, p->cap_%s);", s->a.decl->name, D);
  graph_views(b, s, D);
  buf_line(b, "st = cnp_compact_by_mask_device_count(&mask, p->views, nv, &p->dn_%s, p->ws, S);", D);
}

static void graph_sort(GenUnit *u, Buf *b, GenOp *op, const char *D) {
  Stmt *s = op->stmt;
  buf_line(b, "{  /* over the capacity: rows past the live extent dn_%s sort last, untouched */", D);
  b->indent += 2;
  buf_line(b, "cnp_array key = cnp_g_row(&p->f_%s, 0, p->cap_%s);", s->a.decl->name, D);
  graph_views(b, s, D);
  if (op->sort_bound) {
    buf_line(b, "/* keys bounded by plan %s: the radix sort covers its range's bits */",
             op->sort_bound->name);
    buf_line(b, "st = cnp_sort_by_key_device_count(&key, NULL, p->views, nv, %s,",
             setup_str(u, op->sort_bound->value, "p->"));
    buf_line(b, "                                  &p->dn_%s, p->ws, S);", D);
  } else {
    buf_line(b, "st = cnp_sort_by_key_device_count(&key, NULL, p->views, nv, 0, &p->dn_%s, p->ws, S);",
             D);
  }
}

static void graph_segments(GenUnit *u, Buf *b, GenOp *op, const char *D) {
  Stmt *s = op->stmt;
  (void)u;
  buf_line(b, "{  /* over the capacity: rows past the live extent dn_%s are dropped */", D);
  b->indent += 2;
  buf_line(b, "cnp_array key = cnp_g_row(&p->f_%s, 0, p->cap_%s);", s->b.decl->name, D);
  if (op->seg_sorted) {
    buf_line(b, "/* the sort above ordered the keys: offsets without another sort */");
    buf_line(b, "st = cnp_segment_plan_build_sorted_device_count(p->plan_%s, &key, &p->dn_%s, S);",
             s->a.decl->name, D);
  } else {
    buf_line(b, "st = cnp_segment_plan_build_device_count(p->plan_%s, &key, &p->dn_%s, S);",
             s->a.decl->name, D);
  }
}

static void graph_sum(GenUnit *u, Buf *b, GenOp *op, const char *D) {
  Stmt *s = op->stmt;
  Decl *out = s->b.decl;
  (void)u;
  buf_line(b, "{  /* values of capacity rows, as the plan's device-count build expects */");
  b->indent += 2;
  buf_line(b, "int64_t j = 0;");
  graph_views(b, s, D);
  buf_line(b, "st = CNP_OK;");
  buf_line(b, "for (int k = 0; k < nv && st == CNP_OK; k++, j++) {");
  buf_line(b, "  cnp_array out = cnp_g_row(&p->f_%s, j, p->f_%s.shape[%d]);", out->name, out->name,
           out->shape.rank - 1);
  buf_line(b, "  st = cnp_segment_plan_sum(p->plan_%s, &p->views[k], &out, S);", s->a.decl->name);
  buf_line(b, "}");
}

typedef void GraphForm(GenUnit *u, Buf *b, GenOp *op, const char *D);
static GraphForm *const graph_forms[ST__COUNT] = {
    [ST_COMPACT] = graph_compact,
    [ST_SORT] = graph_sort,
    [ST_SEGMENTS] = graph_segments,
    [ST_SUM] = graph_sum,
};

bool gen_cuda_graph_form(StmtKind k) { return graph_forms[k] != NULL; }

/* Step i's work, enqueued while the stream is captured. */
static void graph_enqueue(GenUnit *u, Buf *b, int i) {
  GenStep *gs = &u->steps[i];
  const char *N = u->name;
  buf_line(b, "/* %s:%d: %s -- its work, enqueued while the stream is captured. */",
           base_name(gs->decl->loc.file->path), gs->decl->kw_loc.line, src_line(u, gs->decl->kw_loc));
  buf_line(b, "static int %s_g%d_enqueue(%s_h *p, cnp_stream *S)", N, i, N);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "int st;");
  for (int o = 0; o < gs->graph_end; o++) {
    GenOp *op = &gs->ops[o];
    Stmt *s = op->stmt;
    comment_loc(u, b, s->loc);
    if (op->kind == GOP_MAP) {
      buf_line(b, "if ((st = %s_k%d_capture(p, S)) != CNP_OK) return st;", N, op->kernel);
      continue;
    }
    Decl *dim = graph_stmt_dim(s);
    if (!graph_forms[s->kind]) cnp_ice("statement '%s' has no CUDA-graph form", stmt_of(s->kind)->name);
    graph_forms[s->kind](u, b, op, dim ? dim->name : NULL);
    buf_line(b, "if (st != CNP_OK) return st;");
    b->indent -= 2;
    buf_line(b, "}");
  }
  buf_line(b, "return CNP_OK;");
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
}

/* The graph functions of step i: enqueue (under capture), capture (setup), replay (step). */
static void graph_funcs(GenUnit *u, Buf *b, int i) {
  GenStep *gs = &u->steps[i];
  const char *N = u->name;
  const GDims *g = &gs->gdims;
  for (int o = 0; o < gs->graph_end; o++)
    if (gs->ops[o].kind == GOP_MAP) graph_kernel(u, b, &gs->ops[o]);
  graph_enqueue(u, b, i);
  buf_line(b, "/* Captures step %d's work into p->gg_%d / p->gx_%d (at setup; nothing runs). */", i, i, i);
  buf_line(b, "static int %s_g%d_capture(%s_h *p, cnp_stream *S)", N, i, N);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "cudaStream_t cs = (cudaStream_t)cnp_stream_native(S);");
  buf_line(b, "cudaGraph_t g = NULL;");
  buf_line(b, "int st;");
  buf_line(b, "if (!cs || cudaStreamBeginCapture(cs, cudaStreamCaptureModeThreadLocal) != cudaSuccess)");
  buf_line(b, "  return CNP_EBACKEND;");
  buf_line(b, "st = %s_g%d_enqueue(p, S);", N, i);
  buf_line(b, "if (cudaStreamEndCapture(cs, &g) != cudaSuccess && st == CNP_OK) st = CNP_EBACKEND;");
  buf_line(b, "if (st == CNP_OK && cudaGraphInstantiate(&p->gx_%d, g, 0ULL) != cudaSuccess) {", i);
  buf_line(b, "  p->gx_%d = NULL;", i);
  buf_line(b, "  st = CNP_EBACKEND;");
  buf_line(b, "}");
  buf_line(b, "if (st != CNP_OK) {");
  buf_line(b, "  if (g) cudaGraphDestroy(g);");
  buf_line(b, "  (void)cudaGetLastError();");
  buf_line(b, "  return st;");
  buf_line(b, "}");
  buf_line(b, "p->gg_%d = g;", i);
  buf_line(b, "return CNP_OK;");
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
  buf_line(b, "/* One timestep of step %d: extents the host changed go up, this step's arguments into", i);
  buf_line(b, "** the kernel nodes, one graph launch; no host synchronization. */");
  buf_line(b, "static int %s_g%d_replay(%s_h *p, cnp_stream *S)", N, i, N);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "cudaStream_t cs = (cudaStream_t)cnp_stream_native(S);");
  for (int k = 0; k < g->n; k++) {
    const char *d = g->d[k]->name;
    buf_line(b, "if (!p->dev_%s && p->n_%s != p->dk_%s) {  /* set on the host since the last upload */",
             d, d, d);
    buf_line(b, "  if (cudaMemcpyAsync(p->dn_%s.data, &p->n_%s, sizeof(int64_t), cudaMemcpyHostToDevice, cs) !=",
             d, d);
    buf_line(b, "      cudaSuccess)");
    buf_line(b, "    return CNP_EBACKEND;");
    buf_line(b, "  p->dk_%s = p->n_%s;", d, d);
    buf_line(b, "}");
  }
  for (int o = 0; o < gs->graph_end; o++)
    if (gs->ops[o].kind == GOP_MAP) {
      buf_line(b, "{");
      buf_line(b, "  int st = %s_k%d_update(p, p->gx_%d);", N, gs->ops[o].kernel, i);
      buf_line(b, "  if (st != CNP_OK) return st;");
      buf_line(b, "}");
    }
  buf_line(b, "if (cudaGraphLaunch(p->gx_%d, cs) != cudaSuccess) return CNP_EBACKEND;", i);
  for (int k = 0; k < g->n; k++)
    if (g->compacted[k]) {
      buf_line(b, "p->dev_%s = 1;  /* the live extent is now on the device only */", g->d[k]->name);
      buf_line(b, "p->ds_%s = cs;", g->d[k]->name);
    }
  buf_line(b, "p->stats.launches++;");
  buf_line(b, "p->stats.graph_replays++;");
  buf_line(b, "return CNP_OK;");
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
}

/* Struct members, functions, setup and teardown lines of the CUDA graphs. */
static void gen_graphs(GenUnit *u, Buf *fields, Buf *funcs, Buf *setup, Buf *teardown) {
  const GDims *g = &u->gdims;
  const char *N = u->name;
  for (int k = 0; k < g->n; k++) {
    const char *d = g->d[k]->name;
    buf_line(fields, "  cnp_array dn_%s;  /* int64[1]: live extent of dim %s for CUDA graphs */", d, d);
    buf_line(fields, "  int64_t dk_%s;  /* the value dn_%s holds, as last uploaded */", d, d);
    buf_line(fields, "  int dev_%s;  /* 1: the live extent is only in dn_%s (a graph compacted it) */", d, d);
    buf_line(fields, "  cudaStream_t ds_%s;  /* stream of that graph */", d);
  }
  for (int i = 0; i < u->n_steps; i++) {
    GenStep *gs = &u->steps[i];
    if (!gs->graph) continue;
    buf_line(fields, "  cudaGraph_t gg_%d;  /* step %d captured at setup (NULL: direct launches) */", i, i);
    buf_line(fields, "  cudaGraphExec_t gx_%d;", i);
    for (int o = 0; o < gs->graph_end; o++)
      if (gs->ops[o].kind == GOP_MAP) {
        buf_line(fields, "  cudaGraphNode_t gnode_k%d;  /* kernel %d in the graph */", gs->ops[o].kernel,
                 gs->ops[o].kernel);
        buf_line(fields, "  cudaKernelNodeParams gkp_k%d;", gs->ops[o].kernel);
      }
    graph_funcs(u, funcs, i);
  }
  /* Live extents back to the host (a synchronization) before the host reads them. */
  buf_line(funcs, "/* Live extents that only the device holds (after graph replays) back to the host:");
  buf_line(funcs, "** one synchronization each; counted in the last step's host_syncs when in_step. */");
  buf_line(funcs, "static int %s_pull(%s_h *p, int in_step)", N, N);
  buf_line(funcs, "{");
  for (int k = 0; k < g->n; k++) {
    const char *d = g->d[k]->name;
    if (!g->compacted[k]) continue;
    buf_line(funcs, "  if (p->dev_%s) {", d);
    buf_line(funcs, "    int64_t n = 0;");
    buf_line(funcs, "    if (cudaMemcpyAsync(&n, p->dn_%s.data, sizeof n, cudaMemcpyDeviceToHost, p->ds_%s) !=",
             d, d);
    buf_line(funcs, "            cudaSuccess ||");
    buf_line(funcs, "        cudaStreamSynchronize(p->ds_%s) != cudaSuccess)", d);
    buf_line(funcs, "      return CNP_EBACKEND;");
    buf_line(funcs, "    p->n_%s = p->dk_%s = n;", d, d);
    buf_line(funcs, "    p->dev_%s = 0;", d);
    buf_line(funcs, "    if (in_step) p->stats.host_syncs++;");
    buf_line(funcs, "    else p->stats.total_host_syncs++;");
    buf_line(funcs, "  }");
  }
  buf_line(funcs, "  (void)p;");
  buf_line(funcs, "  (void)in_step;");
  buf_line(funcs, "  return CNP_OK;");
  buf_line(funcs, "}");
  buf_puts(funcs, "\n");
  setup->indent = 2;
  if (g->n || u->any_graph) {
    buf_line(setup, "if (B == CNP_BACKEND_CUDA) {  /* CUDA graphs: steps without host decisions */");
    for (int k = 0; k < g->n; k++) {
      const char *d = g->d[k]->name;
      buf_line(setup, "  {");
      buf_line(setup, "    const int64_t one = 1;");
      buf_line(setup, "    if ((st = cnp_array_alloc_on(&p->dn_%s, B, p->device, CNP_INT64, 1, &one, CNP_ORDER_C, 0)) != CNP_OK) {", d);
      buf_line(setup, "      where = \"%s_setup: device extent of dim %s\";", N, d);
      buf_line(setup, "      goto fail;");
      buf_line(setup, "    }");
      buf_line(setup, "    p->dk_%s = -1;  /* not uploaded yet */", d);
      buf_line(setup, "  }");
    }
    buf_puts(setup, "#ifndef CNP_DEBUG_BOUNDS  /* index checks read a flag back after each kernel */\n");
    for (int i = 0; i < u->n_steps; i++) {
      if (!u->steps[i].graph) continue;
      buf_line(setup, "  if (%s_g%d_capture(p, p->s_%s) != CNP_OK) {  /* else direct launches */", N, i,
               u->steps[i].decl->stream.decl->name);
      buf_line(setup, "    if (p->gx_%d) cudaGraphExecDestroy(p->gx_%d);", i, i);
      buf_line(setup, "    p->gx_%d = NULL;", i);
      buf_line(setup, "  }");
    }
    buf_puts(setup, "#endif\n");
    buf_line(setup, "}");
  }
  teardown->indent = 2;
  for (int i = 0; i < u->n_steps; i++) {
    if (!u->steps[i].graph) continue;
    buf_line(teardown, "if (p->gx_%d) cudaGraphExecDestroy(p->gx_%d);", i, i);
    buf_line(teardown, "if (p->gg_%d) cudaGraphDestroy(p->gg_%d);", i, i);
  }
  for (int k = 0; k < g->n; k++)
    buf_line(teardown, "if (p->dn_%s.data) cnp_array_free(&p->dn_%s);", g->d[k]->name, g->d[k]->name);
}

/* ======================================================================== the CUDA target */

/* The device branch of kernel K's launcher: one thread per element on the step's stream. */
static void cuda_launch(GenUnit *u, Buf *b, GenOp *op) {
  buf_line(b, "if (p->backend == CNP_BACKEND_CUDA) {");
  if (op->fused_sort) buf_line(b, "  p->fused_k%d = 0;", op->kernel);
  buf_line(b, "  if (A.n > 0) {");
  buf_line(b, "    A.bad = (int *)p->bad.data;");
  buf_line(b, "    %s_k%d_cuda<<<(unsigned)((A.n + 255) / 256), 256, 0,", u->name, op->kernel);
  buf_line(b, "        (cudaStream_t)cnp_stream_native(S)>>>(A);");
  buf_line(b, "    if (cnp_g_launched() != CNP_OK) return CNP_EBACKEND;");
  buf_line(b, "#ifdef CNP_DEBUG_BOUNDS");
  buf_line(b, "    {  /* index checks: read the flag back (one host synchronization) */");
  buf_line(b, "      int flag = 0;");
  buf_line(b, "      cudaStream_t cs = (cudaStream_t)cnp_stream_native(S);");
  buf_line(b, "      if (cudaMemcpyAsync(&flag, A.bad, sizeof flag, cudaMemcpyDeviceToHost, cs) != cudaSuccess ||");
  buf_line(b, "          cudaStreamSynchronize(cs) != cudaSuccess)");
  buf_line(b, "        return CNP_EBACKEND;");
  buf_line(b, "      p->stats.host_syncs++;");
  buf_line(b, "      if (flag) {");
  buf_line(b, "        cudaMemsetAsync(A.bad, 0, sizeof flag, cs);");
  buf_line(b, "        return CNP_ERANGE;");
  buf_line(b, "      }");
  buf_line(b, "    }");
  buf_line(b, "#endif");
  buf_line(b, "  }");
  buf_line(b, "  return CNP_OK;");
  buf_line(b, "}");
}

static void cuda_atomic_add(Buf *b, const char *T, const char *ct, const char *V) {
  buf_line(b, "cnp_g_atomic_add(&%s, (%s)%s);", T, ct, V);
}

/* The runtime's selection decides (strictness, fallback, the env variable). */
static void cuda_backend_select(GenUnit *u, Buf *b) {
  buf_line(b, "st = cnp_backend_select(cfg->backend, cfg->strict);   /* CNP_BACKEND may force it */");
  buf_line(b, "if (st != CNP_OK)   /* a failed selection leaves the previous one */");
  buf_line(b, "  return cnp_g_err(err, errlen, st, \"%s_setup: %%s\", cnp_last_error());", u->name);
  buf_line(b, "B = cnp_backend_current();");
  buf_line(b, "cnp_backend_select(prev, 0);");
}

/* A hand-written kernel's source, embedded for NVRTC. */
static void cuda_kernel_source(GenUnit *u, Buf *b, Decl *d) {
  buf_printf(b, "\n/* Kernel %s: %s, compiled with NVRTC at setup. */\n", d->name, d->path);
  buf_printf(b, "static const char %s_src_%s[] =\n", u->name, d->name);
  const char *src = lower_kernel_source(u, d);
  buf_puts(b, "    \"");
  for (const char *q = src; *q; q++) {
    if (*q == '\n') buf_puts(b, q[1] ? "\\n\"\n    \"" : "\\n");
    else if (*q == '"' || *q == '\\') buf_printf(b, "\\%c", *q);
    else if (*q == '\t') buf_puts(b, "\\t");
    else if ((unsigned char)*q < 32) buf_printf(b, "\\%03o", (unsigned char)*q);
    else buf_put(b, q, 1);
  }
  buf_puts(b, "\";\n");
}

/* Setup: the kernel catalog (at the first kernel) and each kernel's source. */
static void cuda_kernel_setup(GenUnit *u, Buf *b, Decl *d, bool first) {
  const char *file = base_name(d->loc.file->path);
  if (first) {
    buf_line(b, "if (B == CNP_BACKEND_CUDA && (st = cnp_catalog_create(&p->cat, NULL)) != CNP_OK) {");
    buf_line(b, "  where = \"%s_setup: kernel catalog\";", u->name);
    buf_line(b, "  goto fail;");
    buf_line(b, "}");
  }
  buf_line(b, "if (B == CNP_BACKEND_CUDA &&");
  buf_line(b, "    (st = cnp_catalog_add_source(p->cat, \"%s\", %s_src_%s, \"%s\", NULL, 0)) != CNP_OK) {",
           d->name, u->name, d->name, cstr(u, d->path));
  buf_line(b, "  where = \"%s:%d: kernel %s\";", file, d->loc.line, d->name);
  buf_line(b, "  goto fail;");
  buf_line(b, "}");
}

static void cuda_kernel_setup_end(GenUnit *u, Buf *b) {
  buf_line(b, "if (B == CNP_BACKEND_CUDA && (st = cnp_catalog_setup(p->cat)) != CNP_OK) {");
  buf_line(b, "  where = \"%s_setup: compiling the hand-written kernels (NVRTC)\";", u->name);
  buf_line(b, "  goto fail;");
  buf_line(b, "}");
}

/* A hand-written kernel call on CUDA: through the catalog; else (host backend) below. */
static void cuda_call_open(GenUnit *u, Buf *b, Stmt *s, const char *args) {
  buf_line(b, "if (p->backend == CNP_BACKEND_CUDA) {");
  buf_line(b, "  void *args[] = {%s};", args);
  if (s->value2) {
    buf_line(b, "  const cnp_dim3 grid = {(uint32_t)((n + 255) / 256), 1, 1}, block = {256, 1, 1};");
    buf_line(b, "  if (n > 0)");
  } else {
    buf_line(b, "  const cnp_dim3 grid = {1, 1, 1}, block = {1, 1, 1};");
  }
  b->indent += 2;
  try_call(u, b, s->loc, "cnp_catalog_launch(p->cat, \"%s\", grid, block, 0, S, args)", s->a.decl->name);
  b->indent -= 2;
  buf_line(b, "} else {");
  b->indent += 2;
}

static void cuda_call_close(GenUnit *u, Buf *b, Stmt *s) {
  (void)u;
  (void)s;
  b->indent -= 2;
  buf_line(b, "}");
}

/* Step i replayed as its graph when it was captured (else the direct launches below). */
static void cuda_step_graph(GenUnit *u, Buf *b, int i) {
  buf_line(b, "if (p->gx_%d) {  /* the CUDA graph captured at setup */", i);
  b->indent += 2;
  try_call(u, b, u->steps[i].decl->kw_loc, "%s_g%d_replay(p, S)", u->name, i);
  b->indent -= 2;
  buf_line(b, "} else {");
  b->indent += 2;
}

/* Live extents only the device holds back to the host before the step reads them. */
static void cuda_step_pull(GenUnit *u, Buf *b, GenStep *gs) {
  try_call(u, b, gs->decl->kw_loc, "%s_pull(p, 1)", u->name);
}

const GenTarget gen_target_cuda = {
    .name = "cuda",
    .emit = EMIT_CUDA,
    .ext = ".cu",
    .device = true,
    .complex_tmpl = "complex.cu",
    .complex_prefix = "cnp_g_",
    .extern_c = "extern \"C\" ",
    .atomic_add = cuda_atomic_add,
    .kernel = kernel_cuda,
    .launch = cuda_launch,
    .backend_select = cuda_backend_select,
    .kernel_source = cuda_kernel_source,
    .kernel_setup = cuda_kernel_setup,
    .kernel_setup_end = cuda_kernel_setup_end,
    .call_open = cuda_call_open,
    .call_close = cuda_call_close,
    .graphs = gen_graphs,
    .step_graph = cuda_step_graph,
    .step_pull = cuda_step_pull,
    .unit_part = "unit.cu",
};
