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

void kernel_cuda(GenUnit *u, Buf *b, GenOp *op, KUse *use) {
  KCtx k = {u, true, NULL, DT_VOID, NULL};
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

/* Are all fields of the list over dim `dim` (a live extent)? */
static bool list_over(RefList *l, Decl *dim) {
  Decl *fd = NULL;
  for (int k = 0; k < l->n; k++)
    if (!gen_decl_is_dim_extent(l->v[k].decl, &fd) || fd != dim) return false;
  return true;
}

/* The dim whose live extent a graph-captured statement works over (NULL: none). */
static Decl *graph_stmt_dim(Stmt *s) {
  Decl *dim = NULL;
  switch (s->kind) {
  case ST_COMPACT: case ST_SORT:
    if (s->a.decl && gen_decl_is_dim_extent(s->a.decl, &dim)) return dim;
    return NULL;
  case ST_SEGMENTS:
    if (s->b.decl && gen_decl_is_dim_extent(s->b.decl, &dim)) return dim;
    return NULL;
  case ST_SUM:
    if (s->list.n > 0 && gen_decl_is_dim_extent(s->list.v[0].decl, &dim)) return dim;
    return NULL;
  default: return NULL;
  }
}

/* Is every `sum` over plan `plan` in the unit inside ops (o, e) of step gs? (A plan built
** with a device count describes the capacity's rows, which only the graph's sums expect.) */
static bool plan_sums_inside(GenUnit *u, Decl *plan, GenStep *gs, int o, int e) {
  for (int i = 0; i < u->n_steps; i++)
    for (int k = 0; k < u->steps[i].n_ops; k++) {
      GenOp *op = &u->steps[i].ops[k];
      if (op->kind != GOP_STMT || op->stmt->kind != ST_SUM || op->stmt->a.decl != plan) continue;
      if (&u->steps[i] != gs || k <= o || k >= e) return false;
    }
  return true;
}

/* A step is replayed as a CUDA graph, captured once at setup, when its work needs no host
** decision: ops [0, *end) are fused kernels (no hand-written ones, none reading a dim's
** extent as a value, extents that are dims or setup params), compactions whose mask the
** kernel just before writes, sorts, segment plan builds and sums over a dim's live extent
** (their row counts stay on the device: the *_device_count runtime calls); the ops from
** *end on may only be `record`s, run directly after the graph launch. A plan built in a
** graph must be summed only by sums after it in the same graph. Anything else (offsets,
** copy, refresh, wait, call, exchange, migrate, host steps) runs as direct launches. On the
** host backend none of this exists: `.c` units have no graphs. */
bool graph_step(GenUnit *u, GenStep *gs, int *end) {
  if (!gs->decl->stream.decl) return false;
  int n_dims = 0;   /* GDims holds 32: a program with more dims runs its steps without graphs */
  for (Decl *d = u->cc->decls; d; d = d->next) n_dims += d->kind == DECL_DIM;
  if (n_dims > 32) return false;
  int e = gs->n_ops;
  while (e > 0 && gs->ops[e - 1].kind == GOP_STMT && gs->ops[e - 1].stmt->kind == ST_RECORD) e--;
  if (e == 0) return false;
  for (int o = 0; o < e; o++) {
    GenOp *op = &gs->ops[o];
    if (op->kind == GOP_MAP) {
      /* a host fast-path kernel (fused_sort) is a plain map kernel on CUDA */
      Decl *over = op->stmt->over.decl;
      KUse use;
      if (!over) return false;
      if (over->kind == DECL_PARAM && !over->setup) return false;
      if (over->kind != DECL_DIM && over->kind != DECL_PARAM && over->kind != DECL_CONST) return false;
      group_use(u, op, &use);
      if (use.n_dims) return false;
      continue;
    }
    Stmt *s = op->stmt;
    Decl *dim = graph_stmt_dim(s);
    if (!dim) return false;
    switch (s->kind) {
    case ST_COMPACT:
      if (o == 0 || gs->ops[o - 1].kind != GOP_MAP || gs->ops[o - 1].mask_of != s ||
          gs->ops[o - 1].stmt->over.decl != dim)
        return false;
      if (!list_over(&s->list, dim)) return false;
      break;
    case ST_SORT:
      if (!list_over(&s->list, dim)) return false;
      break;
    case ST_SEGMENTS:
      if (!plan_sums_inside(u, s->a.decl, gs, o, e)) return false;
      break;
    case ST_SUM: {
      bool built = false;
      if (!list_over(&s->list, dim)) return false;
      for (int k = 0; k < o; k++)
        if (gs->ops[k].kind == GOP_STMT && gs->ops[k].stmt->kind == ST_SEGMENTS &&
            gs->ops[k].stmt->a.decl == s->a.decl && graph_stmt_dim(gs->ops[k].stmt) == dim)
          built = true;
      if (!built) return false;
      break;
    }
    default: return false;
    }
  }
  *end = e;
  return true;
}

/* Dims a graph reads (kernel extents) or compacts; compacted[] marks the latter. */
typedef struct GDims {
  Decl *d[32];
  bool compacted[32];
  int n;
} GDims;

static void gdims_add(GDims *g, Decl *d, bool compacted) {
  for (int i = 0; i < g->n; i++)
    if (g->d[i] == d) {
      g->compacted[i] = g->compacted[i] || compacted;
      return;
    }
  if (g->n == 32) cnp_ice("too many dims in CUDA graphs");   /* graph_step() rules it out */
  g->d[g->n] = d;
  g->compacted[g->n++] = compacted;
}

static void graph_dims(GenStep *gs, int end, GDims *g) {
  for (int o = 0; o < end; o++) {
    GenOp *op = &gs->ops[o];
    Decl *dim = NULL;
    if (op->kind == GOP_MAP && op->stmt->over.decl->kind == DECL_DIM)
      gdims_add(g, op->stmt->over.decl, false);
    else if (op->kind == GOP_STMT && (dim = graph_stmt_dim(op->stmt)) != NULL)
      gdims_add(g, dim, op->stmt->kind == ST_COMPACT);
  }
}

/* Dims of all graphs of the unit. */
static void unit_graph_dims(GenUnit *u, GDims *g) {
  memset(g, 0, sizeof *g);
  for (int i = 0; i < u->n_steps; i++) {
    int end;
    if (graph_step(u, &u->steps[i], &end)) graph_dims(&u->steps[i], end, g);
  }
}

/* Does some graph compact a dim (whose live extent then lives on the device)? */
bool unit_graph_pulls(GenUnit *u) {
  GDims g;
  unit_graph_dims(u, &g);
  for (int k = 0; k < g.n; k++)
    if (g.compacted[k]) return true;
  return false;
}

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

/* The graph functions of step i: enqueue (under capture), capture (setup), replay (step). */
static void graph_funcs(GenUnit *u, Buf *b, int i, int end) {
  GenStep *gs = &u->steps[i];
  const char *N = u->name;
  GDims g;
  memset(&g, 0, sizeof g);
  graph_dims(gs, end, &g);
  for (int o = 0; o < end; o++)
    if (gs->ops[o].kind == GOP_MAP) graph_kernel(u, b, &gs->ops[o]);
  buf_line(b, "/* %s:%d: %s -- its work, enqueued while the stream is captured. */",
           base_name(gs->decl->loc.file->path), gs->decl->kw_loc.line, src_line(u, gs->decl->kw_loc));
  buf_line(b, "static int %s_g%d_enqueue(%s_h *p, cnp_stream *S)", N, i, N);
  buf_line(b, "{");
  b->indent = 2;
  buf_line(b, "int st;");
  for (int o = 0; o < end; o++) {
    GenOp *op = &gs->ops[o];
    Stmt *s = op->stmt;
    comment_loc(u, b, s->loc);
    if (op->kind == GOP_MAP) {
      buf_line(b, "if ((st = %s_k%d_capture(p, S)) != CNP_OK) return st;", N, op->kernel);
      continue;
    }
    Decl *dim = graph_stmt_dim(s);
    const char *D = dim->name;
    switch (s->kind) {
    case ST_COMPACT:
      buf_line(b, "{  /* over the capacity: the kernel cleared the mask past the live extent */");
      b->indent += 2;
      buf_line(b, "cnp_array mask = cnp_g_row(&p->f_%s, 0, p->cap_%s);", s->a.decl->name, D);
      buf_line(b, "int nv = 0;");
      for (int k = 0; k < s->list.n; k++)
        buf_line(b, "nv = cnp_g_rows(p->views, nv, &p->f_%s, p->cap_%s);", s->list.v[k].decl->name, D);
      buf_line(b, "st = cnp_compact_by_mask_device_count(&mask, p->views, nv, &p->dn_%s, p->ws, S);", D);
      break;
    case ST_SORT:
      buf_line(b, "{  /* over the capacity: rows past the live extent dn_%s sort last, untouched */", D);
      b->indent += 2;
      buf_line(b, "cnp_array key = cnp_g_row(&p->f_%s, 0, p->cap_%s);", s->a.decl->name, D);
      buf_line(b, "int nv = 0;");
      for (int k = 0; k < s->list.n; k++)
        buf_line(b, "nv = cnp_g_rows(p->views, nv, &p->f_%s, p->cap_%s);", s->list.v[k].decl->name, D);
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
      break;
    case ST_SEGMENTS:
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
      break;
    default: {  /* ST_SUM */
      Decl *out = s->b.decl;
      buf_line(b, "{  /* values of capacity rows, as the plan's device-count build expects */");
      b->indent += 2;
      buf_line(b, "int64_t j = 0;");
      buf_line(b, "int nv = 0;");
      for (int k = 0; k < s->list.n; k++)
        buf_line(b, "nv = cnp_g_rows(p->views, nv, &p->f_%s, p->cap_%s);", s->list.v[k].decl->name, D);
      buf_line(b, "st = CNP_OK;");
      buf_line(b, "for (int k = 0; k < nv && st == CNP_OK; k++, j++) {");
      buf_line(b, "  cnp_array out = cnp_g_row(&p->f_%s, j, p->f_%s.shape[%d]);", out->name, out->name,
               out->shape.rank - 1);
      buf_line(b, "  st = cnp_segment_plan_sum(p->plan_%s, &p->views[k], &out, S);", s->a.decl->name);
      buf_line(b, "}");
      break;
    }
    }
    buf_line(b, "if (st != CNP_OK) return st;");
    b->indent -= 2;
    buf_line(b, "}");
  }
  buf_line(b, "return CNP_OK;");
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
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
  for (int k = 0; k < g.n; k++) {
    const char *d = g.d[k]->name;
    buf_line(b, "if (!p->dev_%s && p->n_%s != p->dk_%s) {  /* set on the host since the last upload */",
             d, d, d);
    buf_line(b, "  if (cudaMemcpyAsync(p->dn_%s.data, &p->n_%s, sizeof(int64_t), cudaMemcpyHostToDevice, cs) !=",
             d, d);
    buf_line(b, "      cudaSuccess)");
    buf_line(b, "    return CNP_EBACKEND;");
    buf_line(b, "  p->dk_%s = p->n_%s;", d, d);
    buf_line(b, "}");
  }
  for (int o = 0; o < end; o++)
    if (gs->ops[o].kind == GOP_MAP) {
      buf_line(b, "{");
      buf_line(b, "  int st = %s_k%d_update(p, p->gx_%d);", N, gs->ops[o].kernel, i);
      buf_line(b, "  if (st != CNP_OK) return st;");
      buf_line(b, "}");
    }
  buf_line(b, "if (cudaGraphLaunch(p->gx_%d, cs) != cudaSuccess) return CNP_EBACKEND;", i);
  for (int k = 0; k < g.n; k++)
    if (g.compacted[k]) {
      buf_line(b, "p->dev_%s = 1;  /* the live extent is now on the device only */", g.d[k]->name);
      buf_line(b, "p->ds_%s = cs;", g.d[k]->name);
    }
  buf_line(b, "p->stats.launches++;");
  buf_line(b, "p->stats.graph_replays++;");
  buf_line(b, "return CNP_OK;");
  b->indent = 0;
  buf_line(b, "}");
  buf_puts(b, "\n");
}

/* Struct members, functions, setup and teardown lines of the CUDA graphs. */
void gen_graphs(GenUnit *u, Buf *fields, Buf *funcs, Buf *setup, Buf *teardown) {
  GDims g;
  const char *N = u->name;
  unit_graph_dims(u, &g);
  for (int k = 0; k < g.n; k++) {
    const char *d = g.d[k]->name;
    buf_line(fields, "  cnp_array dn_%s;  /* int64[1]: live extent of dim %s for CUDA graphs */", d, d);
    buf_line(fields, "  int64_t dk_%s;  /* the value dn_%s holds, as last uploaded */", d, d);
    buf_line(fields, "  int dev_%s;  /* 1: the live extent is only in dn_%s (a graph compacted it) */", d, d);
    buf_line(fields, "  cudaStream_t ds_%s;  /* stream of that graph */", d);
  }
  for (int i = 0; i < u->n_steps; i++) {
    GenStep *gs = &u->steps[i];
    int end;
    if (!graph_step(u, gs, &end)) continue;
    buf_line(fields, "  cudaGraph_t gg_%d;  /* step %d captured at setup (NULL: direct launches) */", i, i);
    buf_line(fields, "  cudaGraphExec_t gx_%d;", i);
    for (int o = 0; o < end; o++)
      if (gs->ops[o].kind == GOP_MAP) {
        buf_line(fields, "  cudaGraphNode_t gnode_k%d;  /* kernel %d in the graph */", gs->ops[o].kernel,
                 gs->ops[o].kernel);
        buf_line(fields, "  cudaKernelNodeParams gkp_k%d;", gs->ops[o].kernel);
      }
    graph_funcs(u, funcs, i, end);
  }
  /* Live extents back to the host (a synchronization) before the host reads them. */
  buf_line(funcs, "/* Live extents that only the device holds (after graph replays) back to the host:");
  buf_line(funcs, "** one synchronization each; counted in the last step's host_syncs when in_step. */");
  buf_line(funcs, "static int %s_pull(%s_h *p, int in_step)", N, N);
  buf_line(funcs, "{");
  for (int k = 0; k < g.n; k++) {
    const char *d = g.d[k]->name;
    if (!g.compacted[k]) continue;
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
  bool any = false;
  for (int i = 0; i < u->n_steps; i++) {
    int end;
    if (graph_step(u, &u->steps[i], &end)) any = true;
  }
  if (g.n || any) {
    buf_line(setup, "if (B == CNP_BACKEND_CUDA) {  /* CUDA graphs: steps without host decisions */");
    for (int k = 0; k < g.n; k++) {
      const char *d = g.d[k]->name;
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
      int end;
      if (!graph_step(u, &u->steps[i], &end)) continue;
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
    int end;
    if (!graph_step(u, &u->steps[i], &end)) continue;
    buf_line(teardown, "if (p->gx_%d) cudaGraphExecDestroy(p->gx_%d);", i, i);
    buf_line(teardown, "if (p->gg_%d) cudaGraphDestroy(p->gg_%d);", i, i);
  }
  for (int k = 0; k < g.n; k++)
    buf_line(teardown, "if (p->dn_%s.data) cnp_array_free(&p->dn_%s);", g.d[k]->name, g.d[k]->name);
}
