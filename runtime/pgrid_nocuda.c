/*
** pgrid_nocuda.c — the CUDA particle–grid table (cnp__pgrid_cuda) in a build without CUDA.
** A plan on CUDA cannot be made there (its arrays cannot be allocated), so these answer
** CNP_EUNSUPPORTED for completeness.
*/
#include "grid_internal.h"

static cnp_status no_cuda(const char *op)
{
  return cnp__fail(CNP_EUNSUPPORTED, op, "this libcnp was built without CUDA");
}

static cnp_status nc_sorted(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w,
                            int64_t n, cnp_array *grid, cnp_stream *s)
{
  (void)pg; (void)pos; (void)w; (void)n; (void)grid; (void)s;
  return no_cuda("cnp_deposit");
}

static cnp_status nc_atomic(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *w,
                            int64_t n, cnp_array *grid, cnp_stream *s)
{
  (void)pg; (void)pos; (void)w; (void)n; (void)grid; (void)s;
  return no_cuda("cnp_deposit");
}

static cnp_status nc_gather(cnp_pgrid *pg, const cnp_array *pos, const cnp_array *grid,
                            int64_t n, cnp_array *out, cnp_stream *s)
{
  (void)pg; (void)pos; (void)grid; (void)n; (void)out; (void)s;
  return no_cuda("cnp_gather");
}

const cnp__pgrid_backend cnp__pgrid_cuda = {
  .name = "none",
  .deposit_sorted = nc_sorted,
  .deposit_atomic = nc_atomic,
  .gather = nc_gather,
};
