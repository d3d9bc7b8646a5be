/*
** e2e_backend.h -- for e2e tests whose pipeline may also run on the CUDA backend (the CUDA
** unit built with E2E_CUDA_UNIT, run with E2E_BACKEND=cuda): the backend choice, and copies
** of field views between the host and the pipeline's backend. Include after e2e.h.
*/
#ifndef CNP_E2E_BACKEND_H
#define CNP_E2E_BACKEND_H

#include "cnp/cnp.h"

static int e2e_cuda;              /* the pipeline runs on the CUDA backend */

/* E2E_BACKEND=cuda selects the CUDA backend (strictly). Returns the exit status of a test that
** cannot run it (77: skipped; 1 under CNP_REQUIRE_CUDA=1), else 0. */
static inline int e2e_choose_backend(const char *test, cnp_backend *backend, int *strict)
{
  const char *be = getenv("E2E_BACKEND");
  if (!be || strcmp(be, "cuda") != 0) return 0;
#ifdef E2E_CUDA_UNIT
  const char *why = "";
  const char *req = getenv("CNP_REQUIRE_CUDA");
  if (!cnp_cuda_available(&why)) {
    printf("%s: no CUDA device (%s)\n", test, why);
    return req && req[0] == '1' ? 1 : 77;
  }
  e2e_cuda = 1;
  *backend = CNP_BACKEND_CUDA;
  *strict = 1;
  return 0;
#else
  (void)test, (void)backend, (void)strict;
  CHECK(0, "E2E_BACKEND=cuda needs the CUDA unit");
  return 1;
#endif
}

/* Copies field view a (named `name` in messages) into host memory `out` as a C-ordered
** array, on either backend; a strided view (a live view of a component-major field keeps
** the capacity between its rows) is gathered by cnp_array_copy. */
static inline void e2e_fetch(cnp_array a, const char *name, void *out)
{
  cnp_array h;
  CHECK(a.data, "no field %s", name);
  CHECK(cnp_array_wrap(&h, out, CNP_BACKEND_HOST, 0, a.dtype, a.ndim, a.shape, NULL) == CNP_OK &&
            cnp_array_copy(&h, &a, NULL) == CNP_OK &&
            (!e2e_cuda || cnp_device_synchronize() == CNP_OK),
        "copy of %s: %s", name, cnp_last_error());
}

/* Copies field view v (named `name` in messages) into host memory `data`. */
static inline void e2e_get_into(cnp_array v, const char *name, void *data)
{
  cnp_array h;
  CHECK(v.data, "no field %s", name);
  if (!e2e_cuda) {
    memcpy(data, v.data, cnp_array_nbytes(&v));
    return;
  }
  CHECK(cnp_array_wrap(&h, data, CNP_BACKEND_HOST, 0, v.dtype, v.ndim, v.shape, NULL) == CNP_OK &&
            cnp_array_copy(&h, &v, NULL) == CNP_OK && cnp_device_synchronize() == CNP_OK,
        "copy of %s to the host: %s", name, cnp_last_error());
}

/* Sets field view v's elements from host data. */
static inline void e2e_put(cnp_array v, const char *name, const void *data)
{
  cnp_array h;
  CHECK(v.data, "no field %s", name);
  if (!e2e_cuda) {
    memcpy(v.data, data, cnp_array_nbytes(&v));
    return;
  }
  CHECK(cnp_array_wrap(&h, (void *)data, CNP_BACKEND_HOST, 0, v.dtype, v.ndim, v.shape, NULL) ==
                CNP_OK &&
            cnp_array_copy(&v, &h, NULL) == CNP_OK && cnp_device_synchronize() == CNP_OK,
        "copy of %s to the device: %s", name, cnp_last_error());
}

/* Host copies handed out by e2e_get (freed by e2e_release). */
static void *e2e_copies[64];
static int e2e_n_copies;

/* Field view v's data on the host: the view itself on the host backend, else a copy. */
static inline const void *e2e_get(cnp_array v, const char *name)
{
  CHECK(v.data, "no field %s", name);
  if (!e2e_cuda) return v.data;
  CHECK(e2e_n_copies < 64, "too many copies");
  void *buf = malloc(cnp_array_nbytes(&v) + 1);
  CHECK(buf, "out of memory");
  e2e_copies[e2e_n_copies++] = buf;
  e2e_get_into(v, name, buf);
  return buf;
}

static inline void e2e_release(void)
{
  while (e2e_n_copies > 0) free(e2e_copies[--e2e_n_copies]);
}

#endif /* CNP_E2E_BACKEND_H */
