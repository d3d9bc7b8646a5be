/*
** test_core_transfer.c — transfer accounting: counting scopes (nesting), assert-no-transfer
** scopes naming the first offender, markers, thread safety.
*/
#include <pthread.h>

#include "test_core_util.h"

Test(core_transfer, nothing_counts_outside_scopes)
{
  cnp_transfer_counts before, after;
  cnp_transfers_read(&before);
  cnp_transfers_note(CNP_XFER_H2D, 100, "outside");
  cnp_transfers_note(CNP_XFER_FALLBACK, 0, "outside");
  cnp_transfers_read(&after);
  cr_expect(memcmp(&before, &after, sizeof before) == 0);
  cnp_transfers_read(NULL);                     /* tolerated */
}

Test(core_transfer, counting_scope_by_kind)
{
  cnp_transfer_scope sc;
  cnp_transfer_counts c;
  ASSERT_OK(cnp_transfers_begin(&sc));
  cr_expect_eq(sc.active, 1);
  cr_expect_eq(sc.forbid, 0);
  cnp_transfers_note(CNP_XFER_H2D, 100, "up");
  cnp_transfers_note(CNP_XFER_H2D, 28, "up");
  cnp_transfers_note(CNP_XFER_D2H, 50, "down");
  cnp_transfers_note(CNP_XFER_D2D, 30, "local");
  cnp_transfers_note(CNP_XFER_CONVERSION, 0, "conv");
  cnp_transfers_note(CNP_XFER_FALLBACK, 0, "fb");
  cnp_transfers_note(CNP_XFER_FALLBACK, 0, "fb");
  ASSERT_OK(cnp_transfers_end(&sc, &c));
  cr_expect_eq(c.h2d_bytes, 128);
  cr_expect_eq(c.h2d_calls, 2);
  cr_expect_eq(c.d2h_bytes, 50);
  cr_expect_eq(c.d2h_calls, 1);
  cr_expect_eq(c.d2d_bytes, 30);
  cr_expect_eq(c.d2d_calls, 1);
  cr_expect_eq(c.conversions, 1);
  cr_expect_eq(c.fallbacks, 2);
  cr_expect_eq(sc.active, 0);
  ASSERT_OK(cnp_transfers_begin(&sc));
  ASSERT_OK(cnp_transfers_end(&sc, NULL));     /* out is optional */
}

Test(core_transfer, scopes_nest)
{
  cnp_transfer_scope outer, inner;
  cnp_transfer_counts co, ci;
  ASSERT_OK(cnp_transfers_begin(&outer));
  cnp_transfers_note(CNP_XFER_D2H, 10, "a");
  ASSERT_OK(cnp_transfers_begin(&inner));
  cnp_transfers_note(CNP_XFER_D2H, 5, "b");
  ASSERT_OK(cnp_transfers_end(&inner, &ci));
  cnp_transfers_note(CNP_XFER_D2H, 1, "c");
  ASSERT_OK(cnp_transfers_end(&outer, &co));
  cr_expect_eq(ci.d2h_bytes, 5);
  cr_expect_eq(ci.d2h_calls, 1);
  cr_expect_eq(co.d2h_bytes, 16);
  cr_expect_eq(co.d2h_calls, 3);
  /* after the last scope ended, counting stops again */
  cnp_transfer_counts r1, r2;
  cnp_transfers_read(&r1);
  cnp_transfers_note(CNP_XFER_D2H, 1000, "off");
  cnp_transfers_read(&r2);
  cr_expect_eq(r1.d2h_bytes, r2.d2h_bytes);
}

Test(core_transfer, scope_rejections)
{
  cnp_transfer_scope sc, f;
  EXPECT_ST(cnp_transfers_begin(NULL), CNP_EINVAL, "scope is NULL");
  EXPECT_ST(cnp_transfers_end(NULL, NULL), CNP_EINVAL, "scope is NULL");
  EXPECT_ST(cnp_transfers_forbid_begin(NULL), CNP_EINVAL, "scope is NULL");
  EXPECT_ST(cnp_transfers_forbid_end(NULL, NULL), CNP_EINVAL, "scope is NULL");
  ASSERT_OK(cnp_transfers_begin(&sc));
  ASSERT_OK(cnp_transfers_forbid_begin(&f));
  EXPECT_ST(cnp_transfers_end(&f, NULL), CNP_EINVAL, "begun with cnp_transfers_forbid_begin");
  EXPECT_ST(cnp_transfers_forbid_end(&sc, NULL), CNP_EINVAL, "begun with cnp_transfers_begin");
  ASSERT_OK(cnp_transfers_forbid_end(&f, NULL));
  ASSERT_OK(cnp_transfers_end(&sc, NULL));
  EXPECT_ST(cnp_transfers_end(&sc, NULL), CNP_ESTATE, "not active (ended twice or never begun)");
  cnp_transfer_scope never;
  memset(&never, 0, sizeof never);
  EXPECT_ST(cnp_transfers_end(&never, NULL), CNP_ESTATE, "not active");
}

Test(core_transfer, forbid_allows_device_local)
{
  cnp_transfer_scope f;
  cnp_transfer_counts c;
  ASSERT_OK(cnp_transfers_forbid_begin(&f));
  cnp_transfers_note(CNP_XFER_D2D, 4096, "local_copy");
  cnp_transfers_note(CNP_XFER_CONVERSION, 0, "conv");
  ASSERT_OK(cnp_transfers_forbid_end(&f, &c));
  cr_expect_eq(c.d2d_bytes, 4096);
  cr_expect_eq(c.conversions, 1);
  /* real host copies are device-local on the host backend */
  cnp_array a, b;
  int64_t n = 64;
  ASSERT_OK(cnp_array_alloc(&a, CNP_FLOAT64, 1, &n, CNP_ORDER_C));
  ASSERT_OK(cnp_array_alloc(&b, CNP_FLOAT64, 1, &n, CNP_ORDER_C));
  ASSERT_OK(cnp_transfers_forbid_begin(&f));
  ASSERT_OK(cnp_array_copy(&b, &a, NULL));
  ASSERT_OK(cnp_transfers_forbid_end(&f, &c));
  cr_expect_eq(c.d2d_bytes, 512);
  cnp_array_free(&a), cnp_array_free(&b);
}

Test(core_transfer, forbid_names_first_offender)
{
  cnp_transfer_scope f;
  cnp_transfer_counts c;
  ASSERT_OK(cnp_transfers_forbid_begin(&f));
  cnp_transfers_note(CNP_XFER_D2D, 8, "fine");
  cnp_transfers_note(CNP_XFER_D2H, 24, "first_download");
  cnp_transfers_note(CNP_XFER_H2D, 16, "later_upload");
  EXPECT_ST(cnp_transfers_forbid_end(&f, &c), CNP_ETRANSFER,
            "cnp_transfers_forbid_end: 2 host/device transfers (16 B host->device, 24 B "
            "device->host) inside a no-transfer scope; first: first_download (device->host)");
  cr_expect_eq(c.h2d_bytes, 16);
  cr_expect_eq(c.d2h_bytes, 24);
  cr_expect_eq(f.active, 0, "the scope ends even when it reports");
  /* a transfer before the scope is not blamed */
  cnp_transfer_scope outer;
  ASSERT_OK(cnp_transfers_begin(&outer));
  cnp_transfers_note(CNP_XFER_H2D, 1, "before");
  ASSERT_OK(cnp_transfers_forbid_begin(&f));
  cnp_transfers_note(CNP_XFER_H2D, 2, "inside");
  EXPECT_ST(cnp_transfers_forbid_end(&f, NULL), CNP_ETRANSFER, "first: inside (host->device)");
  ASSERT_OK(cnp_transfers_end(&outer, &c));
  cr_expect_eq(c.h2d_calls, 2);
}

Test(core_transfer, forbid_after_many_transfers)
{
  cnp_transfer_scope f;
  ASSERT_OK(cnp_transfers_forbid_begin(&f));
  cnp_transfers_note(CNP_XFER_H2D, 1, "the_first");
  for (int i = 0; i < 1000; i++) cnp_transfers_note(CNP_XFER_D2H, 1, "noise");
  EXPECT_ST(cnp_transfers_forbid_end(&f, NULL), CNP_ETRANSFER,
            "1001 host/device transfers");
  cr_expect(strstr(cnp_last_error(), "no longer remembered") != NULL, "%s", cnp_last_error());
  ASSERT_OK(cnp_transfers_forbid_begin(&f));
  cnp_transfers_note(CNP_XFER_H2D, 1, NULL);
  EXPECT_ST(cnp_transfers_forbid_end(&f, NULL), CNP_ETRANSFER, "first: (unnamed)");
}

static void *noter(void *arg)
{
  cnp_transfer_kind k = (cnp_transfer_kind)(intptr_t)arg;
  for (int i = 0; i < 20000; i++) cnp_transfers_note(k, 3, "thread");
  return NULL;
}

Test(core_transfer, counters_are_thread_safe)
{
  cnp_transfer_scope sc;
  cnp_transfer_counts c;
  pthread_t t[6];
  ASSERT_OK(cnp_transfers_begin(&sc));
  for (int i = 0; i < 6; i++)
    pthread_create(&t[i], NULL, noter, (void *)(intptr_t)(i % 3));
  for (int i = 0; i < 6; i++) pthread_join(t[i], NULL);
  ASSERT_OK(cnp_transfers_end(&sc, &c));
  cr_expect_eq(c.h2d_calls, 40000);
  cr_expect_eq(c.h2d_bytes, 120000);
  cr_expect_eq(c.d2h_calls, 40000);
  cr_expect_eq(c.d2d_calls, 40000);
  cr_expect_eq(c.d2d_bytes, 120000);
}
