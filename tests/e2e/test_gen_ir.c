/*
** test_gen_ir.c -- the code generator's decisions, read from the step IR (GenStep / GenOp,
** lower_decide), not from emitted text: fusion, CUDA-graph eligibility and extent, the
** workspace order, launch and host-sync counts; and the statement table (stmt.c): every
** statement kind has its entry, every step statement its emitter, every graph form its
** CUDA emitter.
*/
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

typedef struct Lowered {
  Cnp *cc;
  GenUnit u;
  CnpOptions opt;
} Lowered;

/* Compile and lower a program (fails the test on front-end or lowering errors). */
static Lowered *lower(const char *src)
{
  Lowered *l = calloc(1, sizeof *l);
  cr_assert(l);
  l->cc = cnp_new(&l->opt, stderr);
  cr_assert_eq(cnp_compile_buffer(l->cc, "t.cnp", src, strlen(src)), 0, "front end errors");
  l->u.cc = l->cc;
  l->u.opt = &l->opt;
  cr_assert_eq(lower_unit(&l->u), 0);
  return l;
}

static void done(Lowered *l)
{
  buf_free(&l->u.explain);
  cnp_free(l->cc);
  free(l);
}

static const char *HEAD = "pipeline t; param dt : f64; dim N; dim M;\n"
                          "field x : f64[N]; field v : f64[N]; field live : bool[N]; field k : i64[N];\n"
                          "field y : f64[M]; field ky : i64[M]; field ly : bool[M];\n"
                          "field off : i64[M];\n"
                          "stream s, io; event e;\n";

static Lowered *lower_steps(const char *steps)
{
  char src[4096];
  snprintf(src, sizeof src, "%s%s", HEAD, steps);
  return lower(src);
}

Test(stmt_table, every_kind_has_an_entry_and_its_emitters)
{
  cr_assert_eq(stmt_info_count, ST__COUNT);
  for (int k = 0; k < ST__COUNT; k++) {
    const StmtInfo *si = stmt_of((StmtKind)k);
    cr_assert(si->name && si->name[0], "kind %d has no name", k);
    if (!si->step) continue;
    cr_assert(gen_step_emitter((StmtKind)k), "step statement '%s' has no emitter", si->name);
    cr_assert(k == ST_MAP || si->label, "step statement '%s' has no DOT label", si->name);
    bool graphed = si->graph != SG_NONE && si->graph != SG_TAIL;
    cr_assert_eq(gen_cuda_graph_form((StmtKind)k), graphed,
                 "statement '%s': CUDA-graph form and table disagree", si->name);
  }
}

Test(stmt_table, call_form_names)
{
  cr_assert_eq(stmt_call_form("no_such_statement"), -1);
}

Test(ir, elementwise_maps_fuse_into_one_launch)
{
  Lowered *l = lower_steps("step on s { map i in N { x[i] = x[i] * dt; }\n"
                           "  map j in N { v[j] = x[j] + 1.0; } }\n");
  GenStep *gs = &l->u.steps[0];
  cr_assert_eq(gs->n_ops, 1);
  cr_assert_eq(gs->ops[0].kind, GOP_MAP);
  cr_assert_eq(gs->ops[0].n_maps, 2);
  cr_assert_eq(gs->launches, 1);
  cr_assert_eq(gs->syncs, 0);
  cr_assert(gs->graph, "a kernel over a dim is captured");
  cr_assert_eq(gs->graph_end, 1);
  cr_assert_eq(gs->graph_launches, 1);
  cr_assert_not(l->u.graph_pulls, "no graph compacts");
  done(l);
}

Test(ir, a_compacting_graph_keeps_its_extent_on_the_device)
{
  Lowered *l = lower_steps("step on s {\n"
                           "  map i in N { x[i] = x[i] + dt * v[i]; live[i] = x[i] < 1.0; }\n"
                           "  compact live (x, v, k);\n"
                           "  map i in N { v[i] = v[i] * 0.5; }\n"
                           "  record e;\n"
                           "}\n"
                           "step on io after e { map i in M { y[i] = 1.0; } }\n");
  GenStep *gs = &l->u.steps[0];
  cr_assert_eq(gs->n_ops, 4);
  cr_assert_eq(gs->ops[0].mask_of, gs->ops[1].stmt, "the kernel writes the compaction's mask");
  cr_assert(gs->graph);
  cr_assert_eq(gs->graph_end, 3, "the record runs after the graph launch");
  cr_assert(gs->uses_ws);
  cr_assert_not(gs->ws_order, "one stream uses the workspace");
  cr_assert_eq(gs->launches, 3);                      /* two kernels, one compaction */
  cr_assert_eq(gs->syncs, 1);                         /* the compaction's count, direct */
  cr_assert_eq(gs->graph_launches, 1);                /* replayed: one graph launch */
  cr_assert(l->u.graph_pulls);
  cr_assert_eq(gs->gdims.n, 1);
  cr_assert(gs->gdims.compacted[0]);
  cr_assert(l->u.steps[1].graph, "the second step is its own graph");
  cr_assert(l->u.steps[1].first_on_stream);
  done(l);
}

Test(ir, offsets_run_as_direct_launches)
{
  Lowered *l = lower_steps("step on s { map i in M { ky[i] = i; } offsets ky -> off; }\n");
  GenStep *gs = &l->u.steps[0];
  cr_assert_not(gs->graph, "offsets has no graph form");
  cr_assert_eq(gs->launches, 2);
  cr_assert_eq(gs->syncs, 1);                         /* the offsets' validation on CUDA */
  cr_assert(gs->reads_extents);
  cr_assert_not(l->u.any_graph);
  done(l);
}

Test(ir, two_streams_sharing_the_workspace_are_ordered)
{
  Lowered *l = lower_steps("step on s { map i in N { live[i] = x[i] > 0.5; } compact live (x, v, k); }\n"
                           "step on io { map i in M { ly[i] = y[i] > 0.5; ky[i] = i; } sort ky (y, ly); }\n");
  cr_assert(l->u.ws_shared);
  cr_assert(l->u.steps[0].ws_order);
  cr_assert(l->u.steps[1].ws_order);
  cr_assert_eq(l->u.steps[1].syncs, 1);               /* the sort's key range on CUDA */
  done(l);
}

Test(ir, records_waits_and_copies_read_no_extent)
{
  Lowered *l = lower_steps("step on s { record e; }\nstep on io { wait e; }\n");
  cr_assert_not(l->u.steps[0].reads_extents);
  cr_assert_not(l->u.steps[1].reads_extents);
  cr_assert_not(l->u.steps[0].graph, "a step of only records has nothing to capture");
  cr_assert_eq(l->u.steps[0].launches, 0);
  done(l);
}

Test(ir, zero_is_captured_and_counts_one_launch_per_field)
{
  Lowered *l = lower_steps("step on s { zero(x, v); map i in N { x[i] += dt; } }\n");
  GenStep *gs = &l->u.steps[0];
  cr_assert_eq(gs->n_ops, 2);
  cr_assert_eq(gs->ops[0].stmt->kind, ST_ZERO, "zero(...) is the statement, not a kernel call");
  cr_assert_eq(gs->ops[0].launches, 2);
  cr_assert_eq(gs->launches, 3);
  cr_assert_eq(gs->syncs, 0);
  cr_assert(gs->graph, "zero has a CUDA-graph form (memsets)");
  cr_assert_eq(gs->graph_end, 2);
  cr_assert_not(gs->uses_ws);
  done(l);
}

Test(stmt_table, a_kernel_named_zero_is_called)
{
  static const char src[] =
      "pipeline t; dim N; field x : f64[N]; stream s; kernel zero from \"z.cu\" host \"z.c\";\n"
      "step on s { zero(x) over N; }\n";
  CnpOptions opt;
  memset(&opt, 0, sizeof opt);
  Cnp *cc = cnp_new(&opt, stderr);
  cr_assert_eq(cnp_compile_buffer(cc, "t.cnp", src, strlen(src)), 0);
  Decl *step = cc->decls;
  while (step && step->kind != DECL_STEP) step = step->next;
  cr_assert(step && step->body);
  cr_assert_eq(step->body->kind, ST_CALL, "a declared kernel keeps its name");
  cnp_free(cc);
}

/* Issue 17's statements (gen_red.c): what a step of them costs on CUDA. */
Test(ir, reductions_scans_and_histories_stay_one_graph_launch)
{
  Lowered *l = lower("pipeline t; param dt : f64; dim N;\n"
                     "field x : f64[N]; field v : f64[N]; field c : f64[N];\n"
                     "scalar ke : f64; scalar vmax : f64; history h = ke[16];\n"
                     "stream s;\n"
                     "step on s {\n"
                     "  map i in N { x[i] = x[i] + dt * v[i]; ke += v[i] * v[i]; vmax max= v[i]; }\n"
                     "  map i in N { v[i] = v[i] - ke * 1e-3; }\n"
                     "  scan inclusive x -> c;\n"
                     "  record h;\n"
                     "}\n");
  GenStep *gs = &l->u.steps[0];
  cr_assert_eq(gs->n_ops, 4, "a reducing map ends its kernel: the next map is another one");
  cr_assert_eq(gs->ops[0].kind, GOP_MAP);
  cr_assert_eq(gs->ops[1].kind, GOP_MAP);
  cr_assert(red_group(&gs->ops[0]) && !red_group(&gs->ops[1]));
  cr_assert_eq(gs->ops[2].stmt->kind, ST_SCAN);
  cr_assert_eq(gs->ops[3].stmt->kind, ST_HISTORY, "record of a history is its own kind");
  cr_assert_eq(gs->launches, 4);
  cr_assert_eq(gs->syncs, 0, "no host synchronization");
  cr_assert(gs->graph, "captured");
  cr_assert_eq(gs->graph_end, 4, "the scan and the record are inside the graph");
  cr_assert_eq(gs->graph_launches, 1, "one graph launch per call");
  done(l);
}

Test(ir, cadence_repeat_swap_and_append)
{
  Lowered *l = lower_steps("step a on s every 3 offset 1 { map i in N { x[i] = x[i] * dt; } }\n"
                           "step b on io { repeat 4 { map i in M { y[i] = y[i] * 0.5; }\n"
                           "  map i in M { off[i] = ky[i]; } } }\n"
                           "step c on io { append M (2) map i { y[i] = 0.0; } }\n");
  GenStep *a = &l->u.steps[0], *b = &l->u.steps[1], *c = &l->u.steps[2];
  cr_assert(a->graph && a->graph_launches == 1, "a cadenced step is its own graph, one launch when due");
  cr_assert_eq(b->n_ops, 3, "repeat, one fused kernel, end");
  cr_assert_eq(b->ops[0].stmt->kind, ST_REPEAT);
  cr_assert_eq(b->ops[1].n_maps, 2, "maps fuse inside the block");
  cr_assert_eq(b->ops[2].stmt->kind, ST_REPEAT_END);
  cr_assert(b->graph, "a repeat is unrolled into the step's graph");
  cr_assert(b->graph_multi, "its kernel nodes are kept per pass");
  cr_assert_eq(b->graph_end, 3);
  cr_assert_eq(b->graph_launches, 1, "one graph launch per call");
  cr_assert_eq(b->syncs, 0);
  cr_assert_eq(l->u.graph_states, 1, "no swap: one graph per step");
  cr_assert_eq(c->ops[0].kind, GOP_MAP);
  cr_assert_eq(c->ops[0].stmt->kind, ST_APPEND);
  cr_assert(c->graph && c->graph_append, "an append's rows are clamped on the device, in the graph");
  cr_assert_not(c->graph_multi);
  cr_assert_eq(c->graph_launches, 1);
  cr_assert(l->u.graph_append, "sync reads the overflow flag");
  bool grown = false;   /* the append's dim: its extent is then on the device only */
  for (int k = 0; k < c->gdims.n; k++)
    grown = grown || (c->gdims.compacted[k] && strcmp(c->gdims.d[k]->name, "M") == 0);
  cr_assert(grown);
  cr_assert(l->u.graph_pulls);
  done(l);
}

Test(ir, a_swap_ping_pong_in_a_repeat_is_one_graph_launch_per_buffer_state)
{
  Lowered *l = lower("pipeline t; param n_sweeps : i64 setup; param dt : f64; param m : i64 setup;\n"
                     "dim N; field u : f64[m]; field w : f64[m]; field x : f64[N]; field c : f64[m];\n"
                     "scalar res : f64; stream s, io;\n"
                     "step relax on s {\n"
                     "  repeat n_sweeps { map i in m { w[i] = 0.5 * u[i] + dt; } swap u, w; }\n"
                     "  map i in m { res max= abs(u[i] - w[i]); }\n"
                     "  scan inclusive u -> c;\n"
                     "}\n"
                     "step other on io { map i in N { x[i] = x[i] * dt; } }\n"
                     "step grow on io { append N (3) map i, k { x[i] = f64(k); } }\n");
  GenStep *gs = &l->u.steps[0], *o = &l->u.steps[1], *g = &l->u.steps[2];
  cr_assert_eq(gs->n_ops, 6, "repeat, kernel, swap, end, reducing kernel, scan");
  cr_assert_eq(gs->ops[2].stmt->kind, ST_SWAP);
  cr_assert(gs->graph, "swap inside the graph: the views swap while capturing");
  cr_assert_eq(gs->graph_end, 6);
  cr_assert_eq(gs->graph_launches, 1, "one graph launch per call, whatever the parity");
  cr_assert_eq(gs->syncs, 0);
  cr_assert(gs->graph_multi);
  cr_assert_eq(l->u.graph_states, 4, "at most 4 instantiated graphs per graphed step (buffer states)");
  cr_assert(o->graph && o->graph_multi, "a unit with swaps captures every graph per buffer state");
  cr_assert(g->graph && g->graph_append && g->graph_launches == 1);
  done(l);
}

Test(ir, a_reducing_kernel_writes_the_mask_and_the_step_stays_a_graph)
{
  Lowered *l = lower("pipeline t; param nc : i64 setup; dim N;\n"
                     "field x : f64[N]; field live : bool[N]; field r : f64[nc]; field e : f64[nc];\n"
                     "scalar n : i64; stream s;\n"
                     "step on s { map i in N { live[i] = x[i] < 1.0; if live[i] { n += 1; } }\n"
                     "  compact live (x); scan inclusive r -> e; }\n");
  GenStep *gs = &l->u.steps[0];
  cr_assert_eq(gs->ops[0].mask_of, gs->ops[1].stmt, "the reducing kernel writes the mask");
  cr_assert_null(gs->ops[0].fused_sort, "no host fast path for a reducing kernel");
  cr_assert(gs->graph, "compaction after a reducing kernel, a scan over a setup extent: one graph");
  cr_assert_eq(gs->graph_launches, 1);
  done(l);
}

Test(ir, a_scan_right_after_the_map_that_writes_it_is_fused_on_both_backends)
{
  Lowered *l = lower("pipeline t; param a : f64; dim N;\n"
                     "field x : f64[2, N]; field cx : f64[2, N]; field y : f64[N]; field cy : f64[N];\n"
                     "stream s;\n"
                     "step on s { map i in N { x[0, i] = x[0, i] * a; x[1, i] = a; }\n"
                     "  scan inclusive x -> cx;\n"
                     "  map i in N { y[i] = cx[1, i] + a; }\n"
                     "  scan exclusive cx -> cx;\n"
                     "  scan exclusive y -> cy; }\n");
  GenStep *gs = &l->u.steps[0];
  cr_assert_eq(gs->n_ops, 5);
  cr_assert_eq(gs->ops[0].scan_fused, &gs->ops[1], "the kernel does the scan's pass 1");
  cr_assert_eq(gs->ops[1].scan_by, &gs->ops[0]);
  cr_assert_null(gs->ops[2].scan_fused, "the kernel before does not write cx");
  cr_assert_null(gs->ops[3].scan_by);
  cr_assert_null(gs->ops[4].scan_by, "no kernel right before");
  cr_assert(gs->graph && gs->graph_launches == 1, "on CUDA still one graph launch per call");
  cr_assert_eq(gs->syncs, 0, "no host synchronization: the totals stay on the device");
  cr_assert_eq(gs->launches, 5, "launch counts unchanged (a fused scan's two kernels count as one)");
  done(l);
}

Test(ir, every_blocks_inside_a_step_are_one_graph_per_pattern_of_those_due)
{
  Lowered *l = lower_steps("step a on s { map i in N { x[i] = x[i] * dt; }\n"
                           "  every 4 offset 2 { map i in N { v[i] = x[i]; } }\n"
                           "  every 3 { map i in N { x[i] = v[i] + 1.0; } } }\n"
                           "step b on io { every 2 { map i in M { y[i] = 0.5; } } every 2 { map i in M { y[i] = 1.0; } }\n"
                           "  every 2 { map i in M { y[i] = 2.0; } } every 2 { map i in M { y[i] = 3.0; } } }\n");
  GenStep *a = &l->u.steps[0], *b = &l->u.steps[1];
  cr_assert_eq(a->n_ops, 7, "kernel, every, kernel, end, every, kernel, end");
  cr_assert(a->graph, "the blocks' ops are in the graphs of the calls they are due");
  cr_assert(a->graph_multi);
  cr_assert_eq(a->graph_blocks, 2, "4 patterns: 4 instantiated graphs");
  cr_assert_eq(a->graph_end, 7);
  cr_assert_eq(a->graph_launches, 1, "one graph launch per call, whichever blocks are due");
  cr_assert_eq(a->syncs, 0);
  cr_assert_eq(l->u.graph_states, 1);
  cr_assert_not(b->graph, "more than 3 blocks: direct launches");
  done(l);
}

/* ---- grids in CUDA graphs: grid maps (reducing ones too), fft / ifft, halo, and deposit /
** gather over a dim's live extent read on the device (cnp_*_device_count). */

static const char *GRID_HEAD =
    "pipeline t; param nx : i64 setup; param ny : i64 setup; param dt : f64; dim N;\n"
    "grid G = [ny, nx] length(1.0, 2.0); grid K = rfft(G);\n"
    "grid H = [ny, nx] boundary(ghost(1), periodic);\n"
    "field x : f64[N]; field y : f64[N]; field q : f64[N]; field live : bool[N];\n"
    "field Ep : f64[2, N];\n"
    "field rho : f64[G]; field phi : f64[G]; field E : f64[2, G]; field rho_hat : c128[K];\n"
    "field h : f64[H]; field g : f64[H];\n"
    "scalar fe : f64; stream s;\n";

static Lowered *lower_grid(const char *steps)
{
  char src[4096];
  snprintf(src, sizeof src, "%s%s", GRID_HEAD, steps);
  return lower(src);
}

Test(ir, a_pic_step_with_grids_is_one_graph_launch)
{
  Lowered *l = lower_grid("step on s {\n"
                          "  deposit q at (y, x) -> rho with cic;\n"
                          "  map (j, i) in G { rho[j, i] = 1.0 - rho[j, i]; }\n"
                          "  fft rho -> rho_hat;\n"
                          "  map (j, i) in K {\n"
                          "    let k2 = wave(j) * wave(j) + wave(i) * wave(i);\n"
                          "    rho_hat[j, i] = select(k2 > 0.0, rho_hat[j, i] / k2, complex(0.0, 0.0));\n"
                          "  }\n"
                          "  ifft rho_hat -> phi;\n"
                          "  map (j, i) in G {\n"
                          "    E[0, j, i] = phi[j, i - 1] - phi[j, i + 1];\n"
                          "    E[1, j, i] = phi[j - 1, i] - phi[j + 1, i];\n"
                          "    fe += phi[j, i] * phi[j, i];\n"
                          "  }\n"
                          "  gather E at (y, x) -> Ep with cic;\n"
                          "  map p in N { x[p] = x[p] + dt * Ep[0, p]; y[p] = y[p] + dt * Ep[1, p]; }\n"
                          "}\n");
  GenStep *gs = &l->u.steps[0];
  cr_assert(gs->graph, "grid maps, fft, ifft, deposit and gather are captured");
  cr_assert_eq(gs->graph_end, gs->n_ops, "nothing runs after the graph launch");
  cr_assert_eq(gs->graph_launches, 1, "one graph launch per call");
  cr_assert_eq(gs->syncs, 0, "no host synchronization");
  cr_assert_not(l->u.graph_pulls, "no extent comes back to the host");
  cr_assert_eq(gs->gdims.n, 1, "the particles' dim: its live extent read on the device");
  cr_assert_not(gs->gdims.compacted[0]);
  done(l);
}

Test(ir, halo_and_a_compaction_before_a_deposit_stay_in_the_graph)
{
  Lowered *l = lower_grid("step on s {\n"
                          "  halo h;\n"
                          "  map (j, i) in H { g[j, i] = h[j - 1, i] + h[j + 1, i] - 2.0 * h[j, i]; }\n"
                          "  map p in N { x[p] = x[p] + dt; live[p] = x[p] < 1.0; }\n"
                          "  compact live (x, y, q, Ep);\n"
                          "  deposit q at (y, x) -> rho with cic atomic;\n"
                          "  gather E at (y, x) -> Ep with cic;\n"
                          "}\n");
  GenStep *gs = &l->u.steps[0];
  cr_assert(gs->graph, "halo, a grid map, compact, deposit and gather are captured");
  cr_assert_eq(gs->graph_end, gs->n_ops);
  cr_assert_eq(gs->graph_launches, 1);
  cr_assert(l->u.graph_pulls, "the compaction's extent stays on the device");
  cr_assert_eq(gs->gdims.n, 1);
  cr_assert(gs->gdims.compacted[0]);
  done(l);
}

/* The 2D PIC example itself (examples/pic2d/es2d.cnp): its step is one graph launch, no host
** synchronization, the particles' extent read on the device. */
Test(ir, the_es2d_step_is_one_graph_launch)
{
  FILE *f = fopen(CNP_ES2D_CNP, "rb");
  cr_assert(f, "cannot open %s", CNP_ES2D_CNP);
  static char src[65536];
  size_t n = fread(src, 1, sizeof src - 1, f);
  fclose(f);
  cr_assert(n > 0 && n < sizeof src - 1);
  src[n] = 0;
  Lowered *l = lower(src);
  cr_assert_eq(l->u.n_steps, 1);
  GenStep *gs = &l->u.steps[0];
  cr_assert(gs->graph, "deposit, grid maps, fft, ifft, gather and the push are captured");
  cr_assert_eq(gs->graph_end, gs->n_ops);
  cr_assert_eq(gs->graph_launches, 1, "one graph launch per call");
  cr_assert_eq(gs->syncs, 0, "no host synchronization");
  cr_assert_not(l->u.graph_pulls);
  done(l);
}
