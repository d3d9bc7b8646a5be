/*
** test_blackbox.h — the two checks every black-box suite uses (test_brief.c,
** test_vectors_*.c, and through test_core_util.h the test_core_*.c suites): a call's status
** and the text of cnp_last_error(). Public headers only.
*/
#ifndef CNP_TEST_BLACKBOX_H
#define CNP_TEST_BLACKBOX_H

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "cnp/cnp.h"

/* Expect status `st` and an error text that names `part` (the operation or the reason). */
#define EXPECT_FAIL(call, st, part)                                                       \
  do {                                                                                    \
    cnp_clear_error();                                                                    \
    cnp_status got_ = (call);                                                             \
    cr_expect_eq(got_, (st), "%s: got %s, want %s (%s)", #call, cnp_status_name(got_),    \
                 cnp_status_name(st), cnp_last_error());                                  \
    cr_expect(strstr(cnp_last_error(), (part)) != NULL, "%s: '%s' not in '%s'", #call,    \
              (part), cnp_last_error());                                                  \
  } while (0)

/* Assert success; on failure print the status and the detail. */
#define OK(call)                                                                          \
  do {                                                                                    \
    cnp_status got_ = (call);                                                             \
    cr_assert_eq(got_, CNP_OK, "%s: %s (%s)", #call, cnp_status_name(got_),                \
                 cnp_last_error());                                                       \
  } while (0)

/* A view that claims to live on CUDA device 0 (never dereferenced: it must be rejected
** before any data is touched). */
static inline cnp_array cuda_view(cnp_dtype t, int64_t n)
{
  cnp_array a;
  memset(&a, 0, sizeof a);
  a.data = (void *)(uintptr_t)0x100000;
  a.dtype = t;
  a.ndim = 1;
  a.shape[0] = n;
  a.strides[0] = (int64_t)cnp_dtype_size(t);
  a.backend = CNP_BACKEND_CUDA;
  return a;
}

#endif
