/*
** algo_nocuda.c — CUDA entry points of the algorithms in a build without CUDA.
**
** The front ends only dispatch here for arrays whose backend is CNP_BACKEND_CUDA, which a
** build without CUDA never allocates; a hand-made view claiming CUDA ends up here.
*/
#include "algo_internal.h"

static cnp_status no_cuda(const char *op)
{
  return cnp__fail(CNP_EUNSUPPORTED, op, "this libcnp was built without CUDA");
}

cnp_status cnp__cuda_workspace_create(cnp_workspace *ws)
{
  (void)ws;
  return no_cuda("cnp_workspace_create");
}

cnp_status cnp__cuda_workspace_destroy(cnp_workspace *ws)
{
  (void)ws;
  return CNP_OK;                       /* nothing was created */
}

cnp_status cnp__cuda_compact_by_mask(const cnp_array *mask, const cnp_array *arrays,
                                     int n_arrays, int64_t *n_out, cnp_workspace *ws,
                                     cnp_stream *s)
{
  (void)mask; (void)arrays; (void)n_arrays; (void)n_out; (void)ws; (void)s;
  return no_cuda("cnp_compact_by_mask");
}

cnp_status cnp__cuda_compact_by_mask_device_count(const cnp_array *mask,
                                                  const cnp_array *arrays, int n_arrays,
                                                  cnp_array *count, cnp_workspace *ws,
                                                  cnp_stream *s)
{
  (void)mask; (void)arrays; (void)n_arrays; (void)count; (void)ws; (void)s;
  return no_cuda("cnp_compact_by_mask_device_count");
}

cnp_status cnp__cuda_sort_by_key(cnp_array *keys, cnp_array *order, const cnp_array *values,
                                 int n_values, int64_t key_limit, cnp_workspace *ws,
                                 cnp_stream *s)
{
  (void)keys; (void)order; (void)values; (void)n_values; (void)key_limit; (void)ws;
  (void)s;
  return no_cuda("cnp_sort_by_key");
}

cnp_status cnp__cuda_cell_offsets(const cnp_array *sorted_cells, int64_t n_cells,
                                  cnp_array *offsets, cnp_workspace *ws, cnp_stream *s)
{
  (void)sorted_cells; (void)n_cells; (void)offsets; (void)ws; (void)s;
  return no_cuda("cnp_cell_offsets");
}

cnp_status cnp__cuda_segment_boundaries(const cnp_array *sorted_keys,
                                        cnp_array *unique_keys, cnp_array *starts,
                                        cnp_array *stops, int64_t *count,
                                        cnp_workspace *ws, cnp_stream *s)
{
  (void)sorted_keys; (void)unique_keys; (void)starts; (void)stops; (void)count; (void)ws;
  (void)s;
  return no_cuda("cnp_segment_boundaries");
}

cnp_status cnp__cuda_segment_plan_create(cnp_segment_plan *plan)
{
  (void)plan;
  return no_cuda("cnp_segment_plan_create");
}

cnp_status cnp__cuda_segment_plan_destroy(cnp_segment_plan *plan)
{
  (void)plan;
  return CNP_OK;
}

cnp_status cnp__cuda_segment_plan_build(cnp_segment_plan *plan, const cnp_array *keys,
                                        cnp_stream *s)
{
  (void)plan; (void)keys; (void)s;
  return no_cuda("cnp_segment_plan_build");
}

cnp_status cnp__cuda_segment_plan_sum(cnp_segment_plan *plan, const cnp_array *values,
                                      cnp_array *out, cnp_stream *s)
{
  (void)plan; (void)values; (void)out; (void)s;
  return no_cuda("cnp_segment_plan_sum");
}

cnp_status cnp__cuda_sort_by_key_device_count(cnp_array *keys, cnp_array *order,
                                              const cnp_array *values, int n_values,
                                              int64_t key_limit, const cnp_array *count,
                                              cnp_workspace *ws, cnp_stream *s)
{
  (void)keys; (void)order; (void)values; (void)n_values; (void)key_limit; (void)count;
  (void)ws; (void)s;
  return no_cuda("cnp_sort_by_key_device_count");
}

cnp_status cnp__cuda_segment_plan_build_device_count(cnp_segment_plan *plan,
                                                     const cnp_array *keys,
                                                     const cnp_array *count, cnp_stream *s)
{
  (void)plan; (void)keys; (void)count; (void)s;
  return no_cuda("cnp_segment_plan_build_device_count");
}

cnp_status cnp__cuda_segment_plan_build_sorted_device_count(cnp_segment_plan *plan,
                                                            const cnp_array *keys,
                                                            const cnp_array *count,
                                                            cnp_stream *s)
{
  (void)plan; (void)keys; (void)count; (void)s;
  return no_cuda("cnp_segment_plan_build_sorted_device_count");
}
