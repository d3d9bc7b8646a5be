/*
** test_core_util.h — helpers shared by the tests/unit/test_core_*.c suites.
*/
#ifndef CNP_TEST_CORE_UTIL_H
#define CNP_TEST_CORE_UTIL_H

#include <criterion/criterion.h>
#include <string.h>

#include "cnp/cnp.h"
#include "internal.h"
#include "test_blackbox.h"

/* The black-box checks under the names these suites use (EXPECT_ST clears the error first). */
#define EXPECT_ST(call, st, part) EXPECT_FAIL(call, st, part)
#define ASSERT_OK(call) OK(call)

/* A live handle that claims to be on the CUDA backend, device 0 (nothing native behind it):
** lets host-only machines test the "wrong backend" rejections. Unregister after use. */
static inline cnp_stream fake_cuda_stream(void)
{
  cnp_stream s = {CNP__MAGIC_STREAM, CNP_BACKEND_CUDA, 0, true, NULL};
  return s;
}

static inline cnp_event fake_cuda_event(void)
{
  cnp_event e = {CNP__MAGIC_EVENT, CNP_BACKEND_CUDA, 0, 0, true, NULL};
  return e;
}

/* A CUDA-backend view of a fake device address (never dereferenced by the rejections). */
static inline cnp_array fake_cuda_array(int64_t n)
{
  cnp_array a;
  memset(&a, 0, sizeof a);
  a.data = (void *)(uintptr_t)0x10000;
  a.dtype = CNP_FLOAT64;
  a.ndim = 1;
  a.shape[0] = n;
  a.strides[0] = 8;
  a.backend = CNP_BACKEND_CUDA;
  return a;
}

#endif
