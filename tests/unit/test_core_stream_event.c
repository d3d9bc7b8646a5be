/*
** test_core_stream_event.c — host streams and events (HostStream/HostEvent), timing, and
** every rejection: NULL, destroyed, wrong kind of handle, another backend.
*/
#include "test_core_util.h"

Test(core_stream, host_stream_lifecycle)
{
  cnp_stream *s = NULL;
  ASSERT_OK(cnp_stream_create(&s));
  cr_assert_not_null(s);
  cr_expect_eq(cnp_stream_backend(s), CNP_BACKEND_HOST);
  cr_expect_eq(cnp_stream_device(s), 0);
  cr_expect_null(cnp_stream_native(s));
  int done = -1;
  ASSERT_OK(cnp_stream_done(s, &done));
  cr_expect_eq(done, 1);
  ASSERT_OK(cnp_stream_synchronize(s));
  ASSERT_OK(cnp_stream_destroy(s));
}

Test(core_stream, many_streams_and_events)
{
  enum { N = 200 };
  cnp_stream *s[N];
  cnp_event *e[N];
  for (int i = 0; i < N; i++) {
    ASSERT_OK(cnp_stream_create(&s[i]));
    ASSERT_OK(cnp_event_create(&e[i], i % 2 ? CNP_EVENT_TIMING : CNP_EVENT_DEFAULT));
  }
  for (int i = 0; i < N; i++) {
    ASSERT_OK(cnp_event_record(e[i], s[(i + 1) % N]));
    ASSERT_OK(cnp_stream_wait_event(s[i], e[i]));
  }
  for (int i = 0; i < N; i += 2) ASSERT_OK(cnp_stream_destroy(s[i]));
  for (int i = 1; i < N; i += 2) ASSERT_OK(cnp_stream_synchronize(s[i]));
  for (int i = 1; i < N; i += 2) ASSERT_OK(cnp_stream_destroy(s[i]));
  for (int i = 0; i < N; i++) ASSERT_OK(cnp_event_destroy(e[i]));
}

Test(core_stream, rejections)
{
  cnp_stream *s;
  cnp_event *e;
  int done;
  EXPECT_ST(cnp_stream_create(NULL), CNP_EINVAL, "out is NULL");
  EXPECT_ST(cnp_stream_wrap(NULL, NULL), CNP_EINVAL, "out is NULL");
  EXPECT_ST(cnp_stream_destroy(NULL), CNP_EINVAL, "cnp_stream_destroy: stream is NULL");
  EXPECT_ST(cnp_stream_synchronize(NULL), CNP_EINVAL, "stream is NULL");
  EXPECT_ST(cnp_stream_done(NULL, &done), CNP_EINVAL, "stream is NULL");
  ASSERT_OK(cnp_stream_create(&s));
  ASSERT_OK(cnp_event_create(&e, 0));
  EXPECT_ST(cnp_stream_done(s, NULL), CNP_EINVAL, "done is NULL");
  EXPECT_ST(cnp_stream_wait_event(s, NULL), CNP_EINVAL, "event is NULL");
  EXPECT_ST(cnp_stream_wait_event(NULL, e), CNP_EINVAL, "stream is NULL");
  /* the wrong kind of handle */
  EXPECT_ST(cnp_stream_synchronize((cnp_stream *)e), CNP_EINVAL, "is not a stream handle");
  EXPECT_ST(cnp_stream_wait_event(s, (cnp_event *)s), CNP_EINVAL, "is not a event handle");
  cr_expect_eq(cnp_stream_device((cnp_stream *)e), -1);
  /* use after destroy */
  ASSERT_OK(cnp_stream_destroy(s));
  EXPECT_ST(cnp_stream_destroy(s), CNP_ESTATE, "not live (destroyed, or never created)");
  EXPECT_ST(cnp_stream_synchronize(s), CNP_ESTATE, "cnp_stream_synchronize: stream");
  EXPECT_ST(cnp_stream_done(s, &done), CNP_ESTATE, "not live");
  EXPECT_ST(cnp_stream_wait_event(s, e), CNP_ESTATE, "not live");
  EXPECT_ST(cnp_event_record(e, s), CNP_ESTATE, "not live");
  cr_expect_eq(cnp_stream_device(s), -1);
  cr_expect_null(cnp_stream_native(s));
  cr_expect_eq(cnp_stream_backend(s), CNP_BACKEND_HOST);
  ASSERT_OK(cnp_event_destroy(e));
}

Test(core_stream, wrap)
{
  cnp_stream *s;
  int dummy;
  EXPECT_ST(cnp_stream_wrap(&s, &dummy), CNP_EDEVICE, "the current backend is host");
  ASSERT_OK(cnp_stream_wrap(&s, NULL));        /* the host "default stream" */
  cr_expect_eq(cnp_stream_backend(s), CNP_BACKEND_HOST);
  ASSERT_OK(cnp_stream_synchronize(s));
  ASSERT_OK(cnp_stream_destroy(s));
}

Test(core_stream, cross_backend_is_rejected)
{
  cnp_stream *s;
  cnp_event *e;
  ASSERT_OK(cnp_stream_create(&s));
  ASSERT_OK(cnp_event_create(&e, 0));
  cnp_stream fs = fake_cuda_stream();
  cnp_event fe = fake_cuda_event();
  ASSERT_OK(cnp__handle_register(&fs, "test"));
  ASSERT_OK(cnp__handle_register(&fe, "test"));
  EXPECT_ST(cnp_stream_wait_event(s, &fe), CNP_EDEVICE,
            "stream is on the host backend but the event on cuda");
  EXPECT_ST(cnp_stream_wait_event(&fs, e), CNP_EDEVICE,
            "stream is on the cuda backend but the event on host");
  EXPECT_ST(cnp_event_record(e, &fs), CNP_EDEVICE, "event is on host:0 but the stream on cuda:0");
  EXPECT_ST(cnp_event_record(&fe, s), CNP_EDEVICE, "event is on cuda:0 but the stream on host:0");
  cnp__handle_unregister(&fs);
  cnp__handle_unregister(&fe);
  cnp_stream_destroy(s);
  cnp_event_destroy(e);
}

Test(core_event, host_event_completion)
{
  cnp_stream *s;
  cnp_event *e;
  int done = -1;
  ASSERT_OK(cnp_stream_create(&s));
  ASSERT_OK(cnp_event_create(&e, CNP_EVENT_DEFAULT));
  ASSERT_OK(cnp_event_done(e, &done));         /* never recorded: complete, as in CUDA */
  cr_expect_eq(done, 1);
  ASSERT_OK(cnp_event_record(e, s));
  done = -1;
  ASSERT_OK(cnp_event_done(e, &done));
  cr_expect_eq(done, 1);
  ASSERT_OK(cnp_event_synchronize(e));
  ASSERT_OK(cnp_event_record(e, NULL));        /* default stream */
  ASSERT_OK(cnp_stream_wait_event(s, e));
  ASSERT_OK(cnp_event_destroy(e));
  ASSERT_OK(cnp_stream_destroy(s));
}

Test(core_event, timing)
{
  cnp_event *a, *b, *plain;
  float ms = -1.0f;
  ASSERT_OK(cnp_event_create(&a, CNP_EVENT_TIMING));
  ASSERT_OK(cnp_event_create(&b, CNP_EVENT_TIMING));
  ASSERT_OK(cnp_event_create(&plain, CNP_EVENT_DEFAULT));
  EXPECT_ST(cnp_event_elapsed_ms(a, b, &ms), CNP_ESTATE, "the start event was never recorded");
  ASSERT_OK(cnp_event_record(a, NULL));
  EXPECT_ST(cnp_event_elapsed_ms(a, b, &ms), CNP_ESTATE, "the stop event was never recorded");
  volatile double x = 0;
  for (int i = 0; i < 100000; i++) x += i;
  ASSERT_OK(cnp_event_record(b, NULL));
  ASSERT_OK(cnp_event_elapsed_ms(a, b, &ms));
  cr_expect(ms >= 0.0f, "elapsed %f", (double)ms);
  ASSERT_OK(cnp_event_record(plain, NULL));
  EXPECT_ST(cnp_event_elapsed_ms(plain, b, &ms), CNP_EINVAL,
            "both events need CNP_EVENT_TIMING (the start event lacks it)");
  EXPECT_ST(cnp_event_elapsed_ms(a, plain, &ms), CNP_EINVAL, "the stop event lacks it");
  EXPECT_ST(cnp_event_elapsed_ms(a, b, NULL), CNP_EINVAL, "ms is NULL");
  EXPECT_ST(cnp_event_elapsed_ms(NULL, b, &ms), CNP_EINVAL, "event is NULL");
  cnp_event fe = fake_cuda_event();
  fe.flags = CNP_EVENT_TIMING;
  ASSERT_OK(cnp__handle_register(&fe, "test"));
  EXPECT_ST(cnp_event_elapsed_ms(a, &fe, &ms), CNP_EDEVICE, "different backends");
  cnp__handle_unregister(&fe);
  cnp_event_destroy(a), cnp_event_destroy(b), cnp_event_destroy(plain);
}

Test(core_event, rejections)
{
  cnp_event *e;
  int done;
  EXPECT_ST(cnp_event_create(NULL, 0), CNP_EINVAL, "out is NULL");
  EXPECT_ST(cnp_event_create(&e, 0x10), CNP_EINVAL, "unknown flags 0x10");
  EXPECT_ST(cnp_event_destroy(NULL), CNP_EINVAL, "event is NULL");
  EXPECT_ST(cnp_event_record(NULL, NULL), CNP_EINVAL, "event is NULL");
  EXPECT_ST(cnp_event_done(NULL, &done), CNP_EINVAL, "event is NULL");
  EXPECT_ST(cnp_event_synchronize(NULL), CNP_EINVAL, "event is NULL");
  ASSERT_OK(cnp_event_create(&e, 0));
  EXPECT_ST(cnp_event_done(e, NULL), CNP_EINVAL, "done is NULL");
  cnp_stream *s;
  ASSERT_OK(cnp_stream_create(&s));
  EXPECT_ST(cnp_event_synchronize((cnp_event *)s), CNP_EINVAL, "is not a event handle");
  EXPECT_ST(cnp_event_record(e, (cnp_stream *)e), CNP_EINVAL, "is not a stream handle");
  cnp_stream_destroy(s);
  ASSERT_OK(cnp_event_destroy(e));
  EXPECT_ST(cnp_event_destroy(e), CNP_ESTATE, "event");
  EXPECT_ST(cnp_event_record(e, NULL), CNP_ESTATE, "not live");
  EXPECT_ST(cnp_event_done(e, &done), CNP_ESTATE, "not live");
  EXPECT_ST(cnp_event_synchronize(e), CNP_ESTATE, "not live");
  int stack_junk[8] = {0};
  EXPECT_ST(cnp_event_synchronize((cnp_event *)stack_junk), CNP_ESTATE, "never created");
}
