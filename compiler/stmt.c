/*
** stmt.c -- one description per statement kind (cnpc.h, StmtInfo): its name, what it reads
** and writes, whether it uses the workspace, how it synchronizes the host on CUDA and its
** CUDA-graph form. sema (per-row data), lower (graph eligibility, workspace order, launch and
** sync counts), dump, the DOT drawing and the backends read it; no other place lists what a
** statement is. A kind without an entry fails the static assert below or tests/unit's
** test_compiler_ir (every kind has a name).
*/
#include "cnpc.h"

#include <string.h>

#define R SU_READ
#define W SU_WRITE
#define RW (SU_READ | SU_WRITE)

const StmtInfo stmt_info[] = {
    /*                name        step  a       b       list         args */
    [ST_MAP] =      {"map",       true, 0,      0,      0,           0,  .host_extents = true,
                     .launches = 1},
    [ST_COMPACT] =  {"compact",   true, R | SU_ROWS, 0,  RW | SU_ROWS, 0,  .ws = true, .sync = SYNC_CUDA,
                     .host_extents = true, .graph = SG_COMPACT, .launches = 1, .label = "compact $a"},
    [ST_SORT] =     {"sort",      true, RW | SU_ROWS, 0, RW | SU_ROWS, 0, .ws = true,
                     .sync = SYNC_CUDA_ROWS, .sync_note = "key range read back",
                     .host_extents = true, .graph = SG_DIM_A, .launches = 1, .label = "sort $a"},
    [ST_OFFSETS] =  {"offsets",   true, R | SU_ROWS, W,      0,           0,  .ws = true,
                     .sync = SYNC_CUDA_UNIT, .sync_note = "validation read back", .host_extents = true,
                     .launches = 1, .label = "offsets $a -> $b"},
    [ST_SEGMENTS] = {"segments",  true, W,      R | SU_ROWS, 0,           0,  .sync = SYNC_CUDA_ROWS,
                     .sync_note = "key statistics read back", .host_extents = true, .graph = SG_DIM_B,
                     .launches = 1, .label = "$a = segments($b)"},
    [ST_SUM] =      {"sum",       true, R,      W,      R | SU_ROWS, 0,  .host_extents = true,
                     .graph = SG_DIM_LIST, .launches = -1, .label = "sum $a -> $b"},
    [ST_RECORD] =   {"record",    true, W,      0,      0,           0,  .graph = SG_TAIL, .label = "record $a"},
    [ST_WAIT] =     {"wait",      true, R,      0,      0,           0, .label = "wait $a"},
    [ST_COPY] =     {"copy",      true, W,      R | SU_ROWS, 0,      0, .label = "copy $a <- $b"},
    [ST_REFRESH] =  {"refresh",   true, RW,     0,      0,           0, .label = "refresh $a $d"},
    [ST_EXCHANGE] = {"exchange",  true, W,      RW | SU_ROWS, 0,           0,  .sync = SYNC_ALWAYS,
                     .host_extents = true, .label = "exchange $a[ ($b)]"},
    [ST_MIGRATE] =  {"migrate",   true, RW | SU_ROWS, 0, RW | SU_ROWS,          0,  .sync = SYNC_ALWAYS,
                     .host_extents = true, .launches = 1, .label = "migrate by $a"},
    /* migrate (ARRAYS) to G at (POS): the destination of each live row from its position
    ** along G's split axis (a host loop into the statement's int32 buffer), then cnp_migrate;
    ** on an unsplit grid nothing moves (no call, still counted like migrate by DEST) */
    [ST_MIGRATE_TO] = {"migrate", true, 0,     0,      RW | SU_ROWS, 0,  .sync = SYNC_ALWAYS,
                     .host_extents = true, .launches = 1, .label = "migrate ($l) to $b"},
    [ST_CALL] =     {"call",      true, 0,      0,      0,           RW | SU_ROWS, .host_extents = true,
                     .launches = 1, .label = "kernel $a (hand-written)"},
    [ST_ZERO] =     {"zero",      true, .call_form = true, .list = W, .graph = SG_PLAIN,
                     .launches = -2, .label = "zero ($l)"},
    /* record HISTORY: a one-thread kernel appends the scalar (b) to the history (a) */
    [ST_HISTORY] =  {"history",   true, RW,     R,      0,           0,  .graph = SG_PLAIN,
                     .launches = 1, .label = "record history $a <- $b"},
    /* three passes (chunk totals, their prefix, the chunks) over a's live extent */
    [ST_SCAN] =     {"scan",      true, R | SU_ROWS, W, 0,           0,  .host_extents = true,
                     .graph = SG_DIM_A, .launches = 1, .label = "scan $m $a -> $b"},
    /* repeat K { ... }: the block's ops run K times (lower.c brackets them) */
    [ST_REPEAT] =   {"repeat",    true, .label = "repeat {"},
    [ST_REPEAT_END] = {"end repeat", true, .label = "} back to the repeat's start"},
    /* every K [offset J] { ... } inside a step: its ops only on the calls c % K == J */
    [ST_EVERY] =    {"every",     true, .label = "every {"},
    [ST_EVERY_END] = {"end every", true, .label = "} end of every"},
    /* swap A, B: the two fields' buffers exchanged (pointers; no data moves) */
    [ST_SWAP] =     {"swap",      true, RW,     RW, .label = "swap $a, $b"},
    /* append N (COUNT) map i { ... }: a kernel over the new rows; reads N's extent on the host */
    [ST_APPEND] =   {"append",    true, RW,     0,      0,           0,  .host_extents = true,
                     .launches = 1, .label = "append $a"},
    /* deposit W at (POS) -> G with SHAPE [atomic]: cnp_deposit through the statement's
    ** particle-grid plan (p->pg_N, made at setup); run directly it reads N's live extent on
    ** the host (no host synchronization: SORTED sorts with device counts); in a graph
    ** cnp_deposit_device_count over N's capacity, the live count read on the device */
    [ST_DEPOSIT] =  {"deposit",   true, R | SU_ROWS, W, R | SU_ROWS, 0, .host_extents = true,
                     .graph = SG_DIM_LIST, .launches = 1, .label = "deposit $w at ($l) -> $b with $s$x"},
    /* gather G at (POS) -> OUT with SHAPE: one cnp_gather per component of G (in a graph:
    ** cnp_gather_device_count, as deposit) */
    [ST_GATHER] =   {"gather",    true, R,      W,      R | SU_ROWS, 0,  .host_extents = true,
                     .graph = SG_DIM_LIST, .launches = -3, .label = "gather $a at ($l) -> $b with $s"},
    /* halo F: the ghost planes of F's ghost(W) axes from the periodic image (one rank); in a
    ** graph: its strided device copies (memcpy nodes) */
    [ST_HALO] =     {"halo",      true, RW,     0,      0,           0,  .graph = SG_PLAIN, .launches = 1,
                     .label = "halo $a"},
    /* fft REAL -> COMPLEX: one cnp_fft_forward over every grid axis (components: a batch);
    ** ifft COMPLEX -> REAL: cnp_fft_inverse, then the 1/N pass over the real output */
    [ST_FFT] =      {"fft",       true, R,      W,      0,           0,  .graph = SG_PLAIN,
                     .launches = 1, .label = "fft $a -> $b"},
    [ST_IFFT] =     {"ifft",      true, R,      W,      0,           0,  .graph = SG_PLAIN,
                     .launches = 2, .label = "ifft $a -> $b (1/N)"},
    /* allreduce S, ...: each scalar's per-rank values gathered (cnp_comm_allgather, host) and
    ** combined in rank order with its reduction's operator; one rank: nothing to do */
    [ST_ALLREDUCE] = {"allreduce", true, 0,     0,      RW,          0,  .sync = SYNC_ALWAYS,
                     .label = "allreduce $l"},
    [ST_LET] =      {"let",       false},
    [ST_ASSIGN] =   {"assign",    false},
    [ST_ADD] =      {"add",       false},
    [ST_IF] =       {"if",        false},
    [ST_REDUCE] =   {"reduce",    false},
};

#undef R
#undef W
#undef RW

_Static_assert(sizeof stmt_info / sizeof stmt_info[0] == ST__COUNT,
               "every statement kind needs its entry in stmt_info[] (stmt.c)");
const int stmt_info_count = (int)(sizeof stmt_info / sizeof stmt_info[0]);

const StmtInfo *stmt_of(StmtKind k) {
  if ((int)k < 0 || (int)k >= stmt_info_count || !stmt_info[k].name)
    cnp_ice("statement kind %d has no entry in stmt_info[]", (int)k);
  return &stmt_info[k];
}

int stmt_call_form(const char *name) {
  for (int k = 0; k < stmt_info_count; k++)
    if (stmt_info[k].call_form && !strcmp(stmt_info[k].name, name)) return k;
  return -1;
}
