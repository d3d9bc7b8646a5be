/*
** algo_nocuda.c — the CUDA algorithm table (cnp__algo_cuda) in a build without CUDA.
**
** The front ends only call it for arrays whose backend is CNP_BACKEND_CUDA, which a build
** without CUDA never allocates; a hand-made view claiming CUDA ends up here. Every entry
** answers CNP_EUNSUPPORTED naming the public call, except the destroys (nothing was made).
*/
#include "algo_internal.h"

static cnp_status no_cuda(const char *op)
{
  return cnp__fail(CNP_EUNSUPPORTED, op, "this libcnp was built without CUDA");
}

static cnp_status nc_workspace_create(cnp_workspace *ws)
{
  (void)ws;
  return no_cuda("cnp_workspace_create");
}

static cnp_status nc_workspace_destroy(cnp_workspace *ws)
{
  (void)ws;
  return CNP_OK;                       /* nothing was created */
}

static cnp_status nc_compact(const cnp_array *mask, const cnp_array *arrays, int n_arrays,
                             int64_t *n_out, cnp_workspace *ws, cnp_stream *s)
{
  (void)mask; (void)arrays; (void)n_arrays; (void)n_out; (void)ws; (void)s;
  return no_cuda("cnp_compact_by_mask");
}

static cnp_status nc_compact_dc(const cnp_array *mask, const cnp_array *arrays, int n_arrays,
                                cnp_array *count, cnp_workspace *ws, cnp_stream *s)
{
  (void)mask; (void)arrays; (void)n_arrays; (void)count; (void)ws; (void)s;
  return no_cuda("cnp_compact_by_mask_device_count");
}

static cnp_status nc_sort(cnp_array *keys, cnp_array *order, const cnp_array *values,
                          int n_values, int64_t key_limit, cnp_workspace *ws, cnp_stream *s)
{
  (void)keys; (void)order; (void)values; (void)n_values; (void)key_limit; (void)ws;
  (void)s;
  return no_cuda("cnp_sort_by_key");
}

static cnp_status nc_sort_dc(cnp_array *keys, cnp_array *order, const cnp_array *values,
                             int n_values, int64_t key_limit, const cnp_array *count,
                             cnp_workspace *ws, cnp_stream *s)
{
  (void)keys; (void)order; (void)values; (void)n_values; (void)key_limit; (void)count;
  (void)ws; (void)s;
  return no_cuda("cnp_sort_by_key_device_count");
}

static cnp_status nc_cell_offsets(const cnp_array *sorted_cells, int64_t n_cells,
                                  cnp_array *offsets, cnp_workspace *ws, cnp_stream *s)
{
  (void)sorted_cells; (void)n_cells; (void)offsets; (void)ws; (void)s;
  return no_cuda("cnp_cell_offsets");
}

static cnp_status nc_segment_boundaries(const cnp_array *sorted_keys, cnp_array *unique_keys,
                                        cnp_array *starts, cnp_array *stops, int64_t *count,
                                        cnp_workspace *ws, cnp_stream *s)
{
  (void)sorted_keys; (void)unique_keys; (void)starts; (void)stops; (void)count; (void)ws;
  (void)s;
  return no_cuda("cnp_segment_boundaries");
}

static cnp_status nc_plan_create(cnp_segment_plan *plan)
{
  (void)plan;
  return no_cuda("cnp_segment_plan_create");
}

static cnp_status nc_plan_destroy(cnp_segment_plan *plan)
{
  (void)plan;
  return CNP_OK;
}

static cnp_status nc_plan_build(cnp_segment_plan *plan, const cnp_array *keys, cnp_stream *s)
{
  (void)plan; (void)keys; (void)s;
  return no_cuda("cnp_segment_plan_build");
}

static cnp_status nc_plan_build_dc(cnp_segment_plan *plan, const cnp_array *keys,
                                   const cnp_array *count, int sorted, cnp_stream *s)
{
  (void)plan; (void)keys; (void)count; (void)s;
  return no_cuda(sorted ? "cnp_segment_plan_build_sorted_device_count"
                        : "cnp_segment_plan_build_device_count");
}

static cnp_status nc_plan_sum(cnp_segment_plan *plan, const cnp_array *values,
                              cnp_array *out, cnp_stream *s)
{
  (void)plan; (void)values; (void)out; (void)s;
  return no_cuda("cnp_segment_plan_sum");
}

static cnp_status nc_scan(const cnp_array *in, cnp_array *out, cnp_scan_kind kind,
                          const cnp__rows *rows, int64_t n_axis, const cnp_array *count,
                          cnp_workspace *ws, cnp_stream *s)
{
  (void)in; (void)out; (void)kind; (void)rows; (void)n_axis; (void)count; (void)ws; (void)s;
  return no_cuda("cnp_scan");
}

static cnp_status nc_reduce(const cnp_array *in, cnp_reduce_op op, cnp_array *out,
                            const cnp_array *count, cnp_workspace *ws, cnp_stream *s)
{
  (void)in; (void)op; (void)out; (void)count; (void)ws; (void)s;
  return no_cuda("cnp_reduce");
}

const cnp__algo_backend cnp__algo_cuda = {
    .name = "cuda",
    .workspace_create = nc_workspace_create,
    .workspace_destroy = nc_workspace_destroy,
    .compact = nc_compact,
    .compact_dc = nc_compact_dc,
    .sort = nc_sort,
    .sort_dc = nc_sort_dc,
    .cell_offsets = nc_cell_offsets,
    .segment_boundaries = nc_segment_boundaries,
    .plan_create = nc_plan_create,
    .plan_destroy = nc_plan_destroy,
    .plan_build = nc_plan_build,
    .plan_build_dc = nc_plan_build_dc,
    .plan_sum = nc_plan_sum,
    .scan = nc_scan,
    .reduce = nc_reduce,
};
