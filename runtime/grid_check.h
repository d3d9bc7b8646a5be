/*
** grid_check.h — argument checks shared by the grid front ends (fft.c, pgrid.c). Static
** inline helpers; the messages name the public call (`op`) and the argument (`what`).
*/
#ifndef CNP_GRID_CHECK_H
#define CNP_GRID_CHECK_H

#include "grid_internal.h"

#include <stdio.h>

static inline int cnp__g_c_contig(const cnp_array *a)
{
  return cnp_array_is_c_contiguous(a);
}

/* (backend, device) of a new plan: unknown backend EINVAL, host device != 0 EDEVICE, CUDA
** unusable EUNAVAILABLE / EUNSUPPORTED (the backend tables answer the last two). */
static inline cnp_status cnp__g_binding(cnp_backend b, int device, const char *op)
{
  if (b != CNP_BACKEND_HOST && b != CNP_BACKEND_CUDA)
    return cnp__fail(CNP_EINVAL, op, "unknown backend %d", (int)b);
  if (b == CNP_BACKEND_HOST && device != 0)
    return cnp__fail(CNP_EDEVICE, op, "host backend has only device 0 (got %d)", device);
  if (b == CNP_BACKEND_CUDA && device < 0)
    return cnp__fail(CNP_EDEVICE, op, "negative CUDA device %d", device);
  return CNP_OK;
}

/* The first checks of a plan's create call (after *out = NULL): dims not NULL, (backend,
** device) as cnp__g_binding, ndim 1, 2 or 3. */
static inline cnp_status cnp__g_plan_args(const int64_t *dims, cnp_backend backend, int device,
                                          int ndim, const char *op)
{
  CNP__CHECK_NOTNULL(op, dims);
  cnp_status st = cnp__g_binding(backend, device, op);
  if (st != CNP_OK) return st;
  if (ndim < 1 || ndim > 3)
    return cnp__fail(CNP_EINVAL, op, "ndim must be 1, 2 or 3 (got %d)", ndim);
  return CNP_OK;
}

/* A plan's real dtype: float32 or float64, else CNP_EDTYPE. */
static inline cnp_status cnp__g_real_dtype(cnp_dtype dtype, const char *op)
{
  if (dtype != CNP_FLOAT32 && dtype != CNP_FLOAT64)
    return cnp__fail(CNP_EDTYPE, op, "dtype must be float32 or float64 (got %s)",
                     cnp_dtype_name(dtype));
  return CNP_OK;
}

static inline cnp_status cnp__g_stream(cnp_stream *s, cnp_backend b, int device,
                                       const char *op)
{
  if (s == NULL) return CNP_OK;
  cnp_status st = cnp__check_stream(s, op);
  if (st != CNP_OK) return st;
  if (s->backend != b || (b == CNP_BACKEND_CUDA && s->device != device))
    return cnp__fail(CNP_EDEVICE, op, "stream is on %s:%d but the plan is on %s:%d",
                     cnp_backend_name(s->backend), s->device, cnp_backend_name(b), device);
  return CNP_OK;
}

/* a: valid view, on (b, device), of dtype t, C-contiguous, of shape (ndim, shape). */
static inline cnp_status cnp__g_array(const cnp_array *a, cnp_backend b, int device,
                                      cnp_dtype t, int ndim, const int64_t *shape,
                                      const char *op, const char *what)
{
  if (a == NULL) return cnp__fail(CNP_EINVAL, op, "%s is NULL", what);
  cnp_status st = cnp__check_array(a, op, what);
  if (st != CNP_OK) return st;
  if (a->backend != b || (b == CNP_BACKEND_CUDA && a->device != device))
    return cnp__fail(CNP_EDEVICE, op, "%s is on %s:%d but the plan is on %s:%d", what,
                     cnp_backend_name(a->backend), a->device, cnp_backend_name(b), device);
  if (a->dtype != t)
    return cnp__fail(CNP_EDTYPE, op, "%s is %s, expected %s", what,
                     cnp_dtype_name(a->dtype), cnp_dtype_name(t));
  int same = a->ndim == ndim;
  for (int d = 0; same && d < ndim; d++) same = a->shape[d] == shape[d];
  if (!same) {
    char want[96], got[96];
    int w = 0, g = 0;
    want[0] = got[0] = 0;
    for (int d = 0; d < ndim && w < 80; d++)
      w += snprintf(want + w, sizeof want - (size_t)w, "%s%lld", d ? ", " : "",
                    (long long)shape[d]);
    for (int d = 0; d < a->ndim && g < 80; d++)
      g += snprintf(got + g, sizeof got - (size_t)g, "%s%lld", d ? ", " : "",
                    (long long)a->shape[d]);
    return cnp__fail(CNP_ESHAPE, op, "%s has shape (%s), expected (%s)", what, got, want);
  }
  if (!cnp__g_c_contig(a))
    return cnp__fail(CNP_ELAYOUT, op, "%s is not C-contiguous", what);
  return CNP_OK;
}

static inline int cnp__g_overlap(const cnp_array *a, const cnp_array *b)
{
  uintptr_t alo, ahi, blo, bhi;
  cnp__array_span(a, &alo, &ahi);
  cnp__array_span(b, &blo, &bhi);
  return alo < bhi && blo < ahi;
}

#endif /* CNP_GRID_CHECK_H */
