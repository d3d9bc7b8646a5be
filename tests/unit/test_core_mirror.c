/*
** test_core_mirror.c — device mirrors on the host backend (the mirror IS the host array: no
** copies) and every rejection.
*/
#include "test_core_util.h"

Test(core_mirror, host_backend_mirror_is_the_host_array)
{
  double host[6] = {1, 2, 3, 4, 5, 6};
  int64_t shp[2] = {2, 3};
  cnp_array h, dv;
  ASSERT_OK(cnp_array_wrap(&h, host, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shp, NULL));
  cnp_mirror *m;
  cnp_transfer_scope sc;
  cnp_transfer_counts c;
  ASSERT_OK(cnp_transfers_forbid_begin(&sc));
  ASSERT_OK(cnp_mirror_create(&m, &h));
  ASSERT_OK(cnp_mirror_device(m, &dv));
  cr_expect_eq(dv.data, (void *)host);
  cr_expect_eq(dv.backend, CNP_BACKEND_HOST);
  cr_expect_eq(dv.shape[1], 3);
  host[4] = 50.0;                               /* CPU work */
  ASSERT_OK(cnp_mirror_to_device(m, NULL));
  cr_expect_eq(((double *)dv.data)[4], 50.0);
  ASSERT_OK(cnp_mirror_to_host(m, NULL, NULL));
  cnp_stream *s;
  cnp_event *e;
  ASSERT_OK(cnp_stream_create(&s));
  ASSERT_OK(cnp_event_create(&e, 0));
  ASSERT_OK(cnp_event_record(e, s));
  ASSERT_OK(cnp_mirror_to_host(m, s, NULL));
  ASSERT_OK(cnp_mirror_to_host(m, NULL, e));
  ASSERT_OK(cnp_mirror_to_device(m, s));
  ASSERT_OK(cnp_transfers_forbid_end(&sc, &c));
  cr_expect_eq(c.d2d_calls + c.h2d_calls + c.d2h_calls, 0, "no copies on the host backend");
  ASSERT_OK(cnp_mirror_destroy(m));
  cnp_stream_destroy(s);
  cnp_event_destroy(e);
}

Test(core_mirror, rejections)
{
  float host[4] = {0};
  int64_t n = 4;
  cnp_array h, dv;
  ASSERT_OK(cnp_array_wrap(&h, host, CNP_BACKEND_HOST, 0, CNP_FLOAT32, 1, &n, NULL));
  cnp_mirror *m;
  EXPECT_ST(cnp_mirror_create(NULL, &h), CNP_EINVAL, "out is NULL");
  EXPECT_ST(cnp_mirror_create(&m, NULL), CNP_EINVAL, "host is NULL");
  cnp_array dev = fake_cuda_array(4);
  EXPECT_ST(cnp_mirror_create(&m, &dev), CNP_EDEVICE, "must be a host array, not cuda");
  cnp_array freed;
  ASSERT_OK(cnp_array_alloc(&freed, CNP_FLOAT32, 1, &n, CNP_ORDER_C));
  cnp_array_free(&freed);
  EXPECT_ST(cnp_mirror_create(&m, &freed), CNP_ESTATE, "host has no storage");
  ASSERT_OK(cnp_mirror_create(&m, &h));
  EXPECT_ST(cnp_mirror_device(m, NULL), CNP_EINVAL, "device_view is NULL");
  EXPECT_ST(cnp_mirror_device(NULL, &dv), CNP_EINVAL, "mirror is NULL");
  cnp_stream *s;
  cnp_event *e;
  ASSERT_OK(cnp_stream_create(&s));
  ASSERT_OK(cnp_event_create(&e, 0));
  EXPECT_ST(cnp_mirror_to_host(m, s, e), CNP_EINVAL, "not both");
  cnp_stream fs = fake_cuda_stream();
  cnp_event fe = fake_cuda_event();
  ASSERT_OK(cnp__handle_register(&fs, "test"));
  ASSERT_OK(cnp__handle_register(&fe, "test"));
  EXPECT_ST(cnp_mirror_to_host(m, &fs, NULL), CNP_EDEVICE,
            "producer stream is on cuda:0 but the mirror on host:0");
  EXPECT_ST(cnp_mirror_to_host(m, NULL, &fe), CNP_EDEVICE, "producer event is on cuda:0");
  EXPECT_ST(cnp_mirror_to_device(m, &fs), CNP_EDEVICE, "stream is on cuda:0");
  cnp__handle_unregister(&fs);
  cnp__handle_unregister(&fe);
  EXPECT_ST(cnp_mirror_to_device(m, (cnp_stream *)e), CNP_EINVAL, "not a stream handle");
  ASSERT_OK(cnp_stream_destroy(s));
  EXPECT_ST(cnp_mirror_to_device(m, s), CNP_ESTATE, "not live");
  EXPECT_ST(cnp_mirror_to_host(m, s, NULL), CNP_ESTATE, "not live");
  ASSERT_OK(cnp_mirror_destroy(m));
  EXPECT_ST(cnp_mirror_destroy(m), CNP_ESTATE, "mirror");
  EXPECT_ST(cnp_mirror_to_host(m, NULL, NULL), CNP_ESTATE, "not live");
  EXPECT_ST(cnp_mirror_to_device(m, NULL), CNP_ESTATE, "not live");
  EXPECT_ST(cnp_mirror_device(m, &dv), CNP_ESTATE, "not live");
  EXPECT_ST(cnp_mirror_destroy(NULL), CNP_EINVAL, "mirror is NULL");
  EXPECT_ST(cnp_mirror_device((cnp_mirror *)e, &dv), CNP_EINVAL, "not a mirror handle");
  cnp_event_destroy(e);
}

Test(core_mirror, allocation_failure)
{
  float host[4] = {0};
  int64_t n = 4;
  cnp_array h;
  ASSERT_OK(cnp_array_wrap(&h, host, CNP_BACKEND_HOST, 0, CNP_FLOAT32, 1, &n, NULL));
  cnp_mirror *m = (cnp_mirror *)host;
  cnp__fail_alloc_after(1);
  EXPECT_ST(cnp_mirror_create(&m, &h), CNP_ENOMEM, "cannot allocate the mirror");
  cr_expect_null(m);
}
