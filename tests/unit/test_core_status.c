/*
** test_core_status.c — status codes, per-thread error detail, version and ABI checks.
*/
#include <pthread.h>
#include <stdio.h>

#include "test_core_util.h"

Test(core_status, every_code_has_name_and_string)
{
#define CHECK_(name, code, text)                                                          \
  cr_expect_eq((int)CNP_##name, code);                                                     \
  cr_expect_str_eq(cnp_status_name(CNP_##name), "CNP_" #name);                             \
  cr_expect_str_eq(cnp_status_string(CNP_##name), text);
  CNP_STATUS_MAP(CHECK_)
#undef CHECK_
}

Test(core_status, unknown_code)
{
  cr_expect_str_eq(cnp_status_name((cnp_status)-999), "CNP_UNKNOWN");
  cr_expect_str_eq(cnp_status_string((cnp_status)42), "unknown status");
}

Test(core_status, fail_records_op_and_text)
{
  cr_expect_str_eq(cnp_last_error(), "");
  cnp_status st = cnp__fail(CNP_ESHAPE, "cnp_thing", "extent %d vs %d", 3, 4);
  cr_expect_eq(st, CNP_ESHAPE);
  cr_expect_str_eq(cnp_last_error(), "cnp_thing: extent 3 vs 4");
  cnp_clear_error();
  cr_expect_str_eq(cnp_last_error(), "");
}

Test(core_status, long_message_is_truncated_and_terminated)
{
  char big[2000];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  cnp__fail(CNP_EINVAL, "op", "%s", big);
  size_t n = strlen(cnp_last_error());
  cr_expect(n > 100 && n < sizeof big, "length %zu", n);
  cr_expect(strncmp(cnp_last_error(), "op: xxx", 7) == 0);
}

static void *other_thread(void *arg)
{
  (void)arg;
  const char *before = cnp_last_error();
  int clean = before[0] == '\0';
  cnp__fail(CNP_EIO, "thread_op", "in the other thread");
  return (void *)(intptr_t)clean;
}

Test(core_status, detail_is_per_thread)
{
  cnp__fail(CNP_EINVAL, "main_op", "in main");
  pthread_t t;
  void *clean = NULL;
  cr_assert_eq(pthread_create(&t, NULL, other_thread, NULL), 0);
  pthread_join(t, &clean);
  cr_expect(clean != NULL, "the other thread saw main's message");
  cr_expect_str_eq(cnp_last_error(), "main_op: in main");
}

Test(core_status, version_and_abi)
{
  char want[32];
  snprintf(want, sizeof want, "%d.%d.%d", CNP_VERSION_MAJOR, CNP_VERSION_MINOR,
           CNP_VERSION_PATCH);
  cr_expect_str_eq(cnp_version_string(), want);
  cr_expect_eq(cnp_check_abi(CNP_ABI_VERSION), CNP_OK);
  EXPECT_ST(cnp_check_abi(CNP_ABI_VERSION + 1), CNP_EABI, "ABI 2 but libcnp");
  EXPECT_ST(cnp_check_abi(0), CNP_EABI, "cnp_check_abi: code was generated for runtime ABI 0");
}

Test(core_status, check_macro_names_argument)
{
  cnp_stream **out = NULL;
  EXPECT_ST(cnp_stream_create(out), CNP_EINVAL, "cnp_stream_create: out is NULL");
}
