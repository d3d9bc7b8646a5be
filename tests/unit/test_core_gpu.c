/*
** test_core_gpu.c — the runtime core on a real CUDA device: arrays, strided copies in every
** direction, streams/events/timing, wrap, snapshots and mirrors, accounting, CUDA error
** detail. Each test skips without a device, and fails instead under CNP_REQUIRE_CUDA=1.
*/
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>

#include "test_core_util.h"

static void need_cuda(void)
{
  const char *why = NULL;
  if (!cnp_cuda_available(&why)) {
    const char *req = getenv("CNP_REQUIRE_CUDA");
    if (req && strcmp(req, "1") == 0) cr_assert_fail("CNP_REQUIRE_CUDA=1 but CUDA is unavailable: %s", why);
    cr_skip_test("no CUDA device: %s", why);
  }
  cr_assert_eq(cnp_backend_select(CNP_BACKEND_CUDA, 1), CNP_OK, "%s", cnp_last_error());
}

/* Host copy of a device array (C order), through the public API. */
static void download(void *dst, const cnp_array *dev)
{
  cnp_array h;
  cr_assert_eq(cnp_array_wrap(&h, dst, CNP_BACKEND_HOST, 0, dev->dtype, dev->ndim, dev->shape,
                              NULL), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_array_copy(&h, dev, NULL), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_device_synchronize(), CNP_OK);
}

Test(core_gpu, select_and_info)
{
  need_cuda();
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_CUDA);
  char buf[16384];
  ASSERT_OK(cnp_backend_info(buf, sizeof buf, NULL));
  cr_expect(strstr(buf, "\"backend\":\"cuda\"") != NULL, "%s", buf);
  cr_expect(strstr(buf, "\"available\":true") != NULL);
  cr_expect(strstr(buf, "\"max_threads_per_block\":") != NULL);
  cr_expect(strstr(buf, "\"shared_mem_per_block_optin\":") != NULL);
  EXPECT_ST(cnp_set_device(1 << 20), CNP_ERANGE, "out of range");
  ASSERT_OK(cnp_set_device(0));
}

Test(core_gpu, alloc_zeroed_and_cuda_error_detail)
{
  need_cuda();
  cnp_array d;
  int64_t n = 4096;
  ASSERT_OK(cnp_array_alloc(&d, CNP_INT64, 1, &n, CNP_ORDER_C));
  cr_expect_eq(d.backend, CNP_BACKEND_CUDA);
  static int64_t h[4096];
  memset(h, 0xff, sizeof h);
  download(h, &d);
  for (int i = 0; i < n; i++) cr_assert_eq(h[i], 0);
  ASSERT_OK(cnp_array_free(&d));
  int64_t huge = (int64_t)1 << 47;              /* 1 PiB: cudaMalloc must fail */
  EXPECT_ST(cnp_array_alloc(&d, CNP_FLOAT64, 1, &huge, CNP_ORDER_C), CNP_ENOMEM,
            "cudaErrorMemoryAllocation");
  cr_expect(strstr(cnp_last_error(), "out of memory") != NULL, "%s", cnp_last_error());
  cnp__fail_alloc_after(2);                     /* 1: registry entry, 2: cudaMalloc */
  EXPECT_ST(cnp_array_alloc(&d, CNP_FLOAT64, 1, &n, CNP_ORDER_C), CNP_ENOMEM, "fault injection");
}

Test(core_gpu, strided_copies_every_direction)
{
  need_cuda();
  int64_t shp[3] = {5, 7, 3}, big[3] = {6, 9, 4};
  cnp_array hsrc, hdst, dc, df, dbig, dsl;
  ASSERT_OK(cnp_array_alloc_on(&hsrc, CNP_BACKEND_HOST, 0, CNP_FLOAT32, 3, shp, CNP_ORDER_C, 0));
  ASSERT_OK(cnp_array_alloc_on(&hdst, CNP_BACKEND_HOST, 0, CNP_FLOAT32, 3, shp, CNP_ORDER_F, 0));
  ASSERT_OK(cnp_array_alloc(&dc, CNP_FLOAT32, 3, shp, CNP_ORDER_C));
  ASSERT_OK(cnp_array_alloc(&df, CNP_FLOAT32, 3, shp, CNP_ORDER_F));
  ASSERT_OK(cnp_array_alloc(&dbig, CNP_FLOAT32, 3, big, CNP_ORDER_F));
  dsl = dbig;                                   /* a strided device sub-block */
  ASSERT_OK(cnp_array_slice(&dsl, &dsl, 0, 1, 6));
  ASSERT_OK(cnp_array_slice(&dsl, &dsl, 1, 2, 9));
  ASSERT_OK(cnp_array_slice(&dsl, &dsl, 2, 0, 3));
  float *s = hsrc.data;
  for (int i = 0; i < 105; i++) s[i] = (float)i * 1.5f;
  cnp_transfer_scope sc;
  cnp_transfer_counts c;
  ASSERT_OK(cnp_transfers_begin(&sc));
  ASSERT_OK(cnp_array_copy(&dc, &hsrc, NULL));  /* H2D contiguous */
  ASSERT_OK(cnp_array_copy(&df, &dc, NULL));    /* D2D C -> F */
  ASSERT_OK(cnp_array_copy(&dsl, &df, NULL));   /* D2D into a strided block */
  ASSERT_OK(cnp_array_copy(&hdst, &dsl, NULL)); /* D2H strided -> host F */
  ASSERT_OK(cnp_device_synchronize());
  ASSERT_OK(cnp_transfers_end(&sc, &c));
  cr_expect_eq(c.h2d_bytes, 420);
  cr_expect_eq(c.d2h_bytes, 420);
  cr_expect_eq(c.d2d_bytes, 840);
  cr_expect_eq(c.h2d_calls, 1);
  cr_expect_eq(c.d2h_calls, 1);
  cr_expect_eq(c.d2d_calls, 2);
  const float *d = hdst.data;
  for (int i = 0; i < 5; i++)
    for (int j = 0; j < 7; j++)
      for (int k = 0; k < 3; k++)
        cr_assert_eq(d[i + 5 * (j + 7 * k)], (float)((i * 7 + j) * 3 + k) * 1.5f);
  ASSERT_OK(cnp_array_fill_zero(&dsl, NULL));
  ASSERT_OK(cnp_array_copy(&hdst, &dsl, NULL));
  ASSERT_OK(cnp_device_synchronize());
  for (int i = 0; i < 105; i++) cr_assert_eq(d[i], 0.0f);
  cnp_array_free(&hsrc), cnp_array_free(&hdst), cnp_array_free(&dc), cnp_array_free(&df);
  cnp_array_free(&dbig);
}

Test(core_gpu, streams_events_timing_wrap)
{
  need_cuda();
  cnp_stream *a, *b, *w;
  cnp_event *t0, *t1;
  ASSERT_OK(cnp_stream_create(&a));
  ASSERT_OK(cnp_stream_create(&b));
  cr_expect_not_null(cnp_stream_native(a));
  cr_expect_eq(cnp_stream_backend(a), CNP_BACKEND_CUDA);
  ASSERT_OK(cnp_event_create(&t0, CNP_EVENT_TIMING));
  ASSERT_OK(cnp_event_create(&t1, CNP_EVENT_TIMING));
  cnp_array x, y;
  int64_t n = 1 << 20;
  ASSERT_OK(cnp_array_alloc(&x, CNP_FLOAT64, 1, &n, CNP_ORDER_C));
  ASSERT_OK(cnp_array_alloc(&y, CNP_FLOAT64, 1, &n, CNP_ORDER_C));
  ASSERT_OK(cnp_event_record(t0, a));
  ASSERT_OK(cnp_array_copy(&y, &x, a));
  ASSERT_OK(cnp_event_record(t1, a));
  ASSERT_OK(cnp_stream_wait_event(b, t1));      /* GPU-side: b waits for a's copy */
  ASSERT_OK(cnp_array_fill_zero(&x, b));
  ASSERT_OK(cnp_stream_synchronize(b));
  int done = 0;
  ASSERT_OK(cnp_event_done(t1, &done));
  cr_expect_eq(done, 1);
  ASSERT_OK(cnp_stream_done(a, &done));
  cr_expect_eq(done, 1);
  float ms = -1.0f;
  ASSERT_OK(cnp_event_elapsed_ms(t0, t1, &ms));
  cr_expect(ms >= 0.0f);
  ASSERT_OK(cnp_stream_wrap(&w, cnp_stream_native(a)));
  cr_expect_eq(cnp_stream_native(w), cnp_stream_native(a));
  ASSERT_OK(cnp_array_copy(&x, &y, w));
  ASSERT_OK(cnp_stream_destroy(w));             /* does not destroy a's native stream */
  ASSERT_OK(cnp_stream_synchronize(a));
  /* host objects cannot mix with device ones */
  ASSERT_OK(cnp_backend_select(CNP_BACKEND_HOST, 1));
  cnp_event *he;
  ASSERT_OK(cnp_event_create(&he, 0));
  EXPECT_ST(cnp_stream_wait_event(a, he), CNP_EDEVICE, "the event on host");
  EXPECT_ST(cnp_event_record(he, a), CNP_EDEVICE, "event is on host:0");
  cnp_event_destroy(he);
  cnp_array_free(&x), cnp_array_free(&y);
  cnp_event_destroy(t0), cnp_event_destroy(t1);
  cnp_stream_destroy(a), cnp_stream_destroy(b);
}

Test(core_gpu, snapshot_on_device)
{
  need_cuda();
  enum { N = 10000 };
  static double h[N];
  int64_t n = N;
  cnp_array hv, d, v;
  for (int i = 0; i < N; i++) h[i] = i;
  ASSERT_OK(cnp_array_wrap(&hv, h, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &n, NULL));
  ASSERT_OK(cnp_array_alloc(&d, CNP_FLOAT64, 1, &n, CNP_ORDER_C));
  cnp_stream *s;
  cnp_event *e;
  cnp_snapshot *snap;
  cnp_snapshot_handle h1, h2, h3;
  ASSERT_OK(cnp_stream_create(&s));
  ASSERT_OK(cnp_event_create(&e, 0));
  ASSERT_OK(cnp_snapshot_create(&snap, &d, 2));
  ASSERT_OK(cnp_array_copy(&d, &hv, s));
  ASSERT_OK(cnp_snapshot_copy(snap, &d, s, NULL, &h1));        /* after the producer stream */
  ASSERT_OK(cnp_array_fill_zero(&d, s));
  ASSERT_OK(cnp_event_record(e, s));
  ASSERT_OK(cnp_snapshot_copy(snap, &d, NULL, e, &h2));        /* after the producer event */
  ASSERT_OK(cnp_snapshot_result(h1, &v));
  cr_expect(v.flags & CNP_ARRAY_PINNED);
  for (int i = 0; i < N; i++) cr_assert_eq(((double *)v.data)[i], (double)i);
  ASSERT_OK(cnp_snapshot_result(h2, &v));
  for (int i = 0; i < N; i++) cr_assert_eq(((double *)v.data)[i], 0.0);
  cnp_transfer_scope f;
  ASSERT_OK(cnp_transfers_forbid_begin(&f));
  ASSERT_OK(cnp_snapshot_copy(snap, &d, NULL, NULL, &h3));
  EXPECT_ST(cnp_transfers_forbid_end(&f, NULL), CNP_ETRANSFER, "first: cnp_snapshot_copy");
  EXPECT_ST(cnp_snapshot_result(h1, &v), CNP_ESTALE, "reused");
  cnp_array other;
  ASSERT_OK(cnp_array_alloc_on(&other, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &n, CNP_ORDER_C, 0));
  EXPECT_ST(cnp_snapshot_copy(snap, &other, NULL, NULL, &h3), CNP_EDEVICE, "bound to cuda:0");
  ASSERT_OK(cnp_snapshot_destroy(snap));
  cnp_array_free(&other), cnp_array_free(&d);
  cnp_event_destroy(e);
  cnp_stream_destroy(s);
}

Test(core_gpu, mirror_round_trip)
{
  need_cuda();
  enum { R = 3, C = 100 };
  static float h[R * C];
  int64_t shp[2] = {R, C};
  for (int i = 0; i < R * C; i++) h[i] = (float)i;
  cnp_array hv, dv;
  ASSERT_OK(cnp_array_wrap(&hv, h, CNP_BACKEND_HOST, 0, CNP_FLOAT32, 2, shp, NULL));
  cnp_mirror *m;
  cnp_transfer_scope sc;
  cnp_transfer_counts c;
  ASSERT_OK(cnp_transfers_begin(&sc));
  ASSERT_OK(cnp_mirror_create(&m, &hv));
  ASSERT_OK(cnp_transfers_end(&sc, &c));
  cr_expect_eq(c.h2d_bytes, sizeof h);
  ASSERT_OK(cnp_mirror_device(m, &dv));
  cr_expect_eq(dv.backend, CNP_BACKEND_CUDA);
  ASSERT_OK(cnp_array_fill_zero(&dv, NULL));     /* "GPU work" */
  cnp_stream *s;
  ASSERT_OK(cnp_stream_create(&s));
  ASSERT_OK(cnp_mirror_to_host(m, s, NULL));
  for (int i = 0; i < R * C; i++) cr_assert_eq(h[i], 0.0f);
  for (int i = 0; i < R * C; i++) h[i] = 2.0f;   /* CPU work */
  ASSERT_OK(cnp_mirror_to_device(m, s));
  ASSERT_OK(cnp_stream_synchronize(s));
  static float back[R * C];
  download(back, &dv);
  for (int i = 0; i < R * C; i++) cr_assert_eq(back[i], 2.0f);
  ASSERT_OK(cnp_mirror_destroy(m));
  cnp_stream_destroy(s);
}
