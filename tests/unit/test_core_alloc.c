/*
** test_core_alloc.c — the allocation-failure switch (cnp__fail_alloc_after, CNP_FAIL_ALLOC)
** and ENOMEM from every create call, without leaks or half-made handles.
*/
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "test_core_util.h"

Test(core_alloc, countdown_fails_exactly_the_kth)
{
  cnp__fail_alloc_after(3);
  void *a = cnp__malloc(8), *b = cnp__calloc(2, 8), *c = cnp__malloc(8), *d = cnp__malloc(8);
  cr_expect_not_null(a);
  cr_expect_not_null(b);
  cr_expect_null(c);
  cr_expect_not_null(d, "the switch disarms after firing");
  cnp__free(a), cnp__free(b), cnp__free(d);
  cnp__fail_alloc_after(1);
  cnp__fail_alloc_after(0);                      /* 0 disables */
  void *e = cnp__malloc(1);
  cr_expect_not_null(e);
  cnp__free(e);
  cr_expect(cnp__next_alloc_id() < cnp__next_alloc_id());
}

Test(core_alloc, env_switch)
{
  setenv("CNP_FAIL_ALLOC", "2", 1);              /* read at the first allocation */
  void *a = cnp__malloc(4), *b = cnp__malloc(4);
  cr_expect_not_null(a);
  cr_expect_null(b);
  cnp__free(a);
}

Test(core_alloc, env_switch_malformed_is_ignored)
{
  setenv("CNP_FAIL_ALLOC", "2x", 1);
  void *a = cnp__malloc(4), *b = cnp__malloc(4);
  cr_expect(a && b);
  cnp__free(a), cnp__free(b);
}

Test(core_alloc, enomem_from_each_create)
{
  cnp_array a;
  int64_t shp[1] = {10};
  cnp__fail_alloc_after(1);
  EXPECT_ST(cnp_array_alloc(&a, CNP_FLOAT64, 1, shp, CNP_ORDER_C), CNP_ENOMEM,
            "registry entry");
  cnp__fail_alloc_after(2);
  EXPECT_ST(cnp_array_alloc(&a, CNP_FLOAT64, 1, shp, CNP_ORDER_C), CNP_ENOMEM,
            "cnp_array_alloc: cannot allocate 80 bytes on host:0");
  cnp_stream *s = NULL;
  cnp_event *e = NULL;
  cnp__fail_alloc_after(1);
  EXPECT_ST(cnp_stream_create(&s), CNP_ENOMEM, "cannot allocate a stream");
  cr_expect_null(s);
  cnp__fail_alloc_after(1);
  EXPECT_ST(cnp_event_create(&e, 0), CNP_ENOMEM, "cannot allocate an event");
  cnp__fail_alloc_after(2);
  EXPECT_ST(cnp_event_create(&e, 0), CNP_ENOMEM, "cannot allocate a host event");
  cr_expect_null(e);
  cnp__fail_alloc_after(0);
  ASSERT_OK(cnp_array_alloc(&a, CNP_FLOAT64, 1, shp, CNP_ORDER_C));
  ASSERT_OK(cnp_array_free(&a));
}

/* The first handle registration grows the registry: that allocation can fail too. */
Test(core_alloc, enomem_from_handle_registry)
{
  cnp_stream *s = NULL;
  cnp__fail_alloc_after(2);                      /* 1: the stream, 2: the registry table */
  EXPECT_ST(cnp_stream_create(&s), CNP_ENOMEM, "cannot grow the handle registry");
  cr_expect_null(s);
  ASSERT_OK(cnp_stream_create(&s));
  ASSERT_OK(cnp_stream_destroy(s));
}

Test(core_alloc, registry_grows_and_shrinks)
{
  enum { N = 1000 };
  static cnp_event *e[N];
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < N; i++) ASSERT_OK(cnp_event_create(&e[i], 0));
    for (int i = 0; i < N; i++) cr_assert(cnp__handle_live(e[i]));
    for (int i = 0; i < N; i++) ASSERT_OK(cnp_event_destroy(e[i]));
  }
  cr_expect(!cnp__handle_live(NULL));
}

#include <pthread.h>

static void *churn(void *arg)
{
  (void)arg;
  for (int i = 0; i < 300; i++) {
    cnp_stream *s;
    cnp_event *e;
    cnp_array a;
    int64_t n = 1 + i % 7;
    if (cnp_stream_create(&s) != CNP_OK || cnp_event_create(&e, 0) != CNP_OK ||
        cnp_array_alloc(&a, CNP_INT32, 1, &n, CNP_ORDER_C) != CNP_OK)
      return (void *)1;
    if (cnp_event_record(e, s) != CNP_OK || cnp_array_validate(&a, "a") != CNP_OK)
      return (void *)2;
    if (cnp_array_free(&a) != CNP_OK || cnp_event_destroy(e) != CNP_OK ||
        cnp_stream_destroy(s) != CNP_OK)
      return (void *)3;
  }
  return NULL;
}

Test(core_alloc, registries_are_thread_safe)
{
  pthread_t t[4];
  for (int i = 0; i < 4; i++) cr_assert_eq(pthread_create(&t[i], NULL, churn, NULL), 0);
  for (int i = 0; i < 4; i++) {
    void *r = (void *)99;
    pthread_join(t[i], &r);
    cr_expect_null(r, "thread %d failed at stage %ld: %s", i, (long)(intptr_t)r,
                   cnp_last_error());
  }
}
