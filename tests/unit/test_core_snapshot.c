/*
** test_core_snapshot.c — host staging snapshots on the host backend: slot rotation, stable
** copies, stale handles (CNP_ESTALE), binding (CNP_EDEVICE), producers, accounting, and
** allocation failures during create.
*/
#include "test_core_util.h"

static cnp_array field35(void)
{
  cnp_array a;
  int64_t shp[2] = {3, 5};
  cr_assert_eq(cnp_array_alloc(&a, CNP_FLOAT64, 2, shp, CNP_ORDER_C), CNP_OK);
  for (int i = 0; i < 15; i++) ((double *)a.data)[i] = i + 0.5;
  return a;
}

Test(core_snapshot, copy_and_result)
{
  cnp_array f = field35();
  cnp_snapshot *s;
  cnp_snapshot_handle h;
  cnp_array v;
  ASSERT_OK(cnp_snapshot_create(&s, &f, 0));
  cr_expect_eq(cnp_snapshot_slots(s), 2);
  ASSERT_OK(cnp_snapshot_copy(s, &f, NULL, NULL, &h));
  cr_expect_eq(h.owner, s);
  cr_expect_eq(h.slot, 0);
  cr_expect_eq(h.generation, 1);
  ((double *)f.data)[0] = -1.0;                 /* later changes do not reach the copy */
  ASSERT_OK(cnp_snapshot_result(h, &v));
  cr_expect_eq(v.backend, CNP_BACKEND_HOST);
  cr_expect_eq(v.dtype, CNP_FLOAT64);
  cr_expect_eq(v.ndim, 2);
  cr_expect_eq(v.shape[0], 3);
  cr_expect_eq(v.shape[1], 5);
  cr_expect(cnp_array_is_c_contiguous(&v));
  cr_expect_neq(v.data, f.data);
  const double *d = v.data;
  cr_expect_eq(d[0], 0.5);
  for (int i = 1; i < 15; i++) cr_expect_eq(d[i], i + 0.5);
  ASSERT_OK(cnp_snapshot_destroy(s));
  cnp_array_free(&f);
}

Test(core_snapshot, slot_reuse_makes_handles_stale)
{
  cnp_array f = field35();
  cnp_snapshot *s;
  cnp_snapshot_handle h[5];
  cnp_array v;
  ASSERT_OK(cnp_snapshot_create(&s, &f, 3));
  cr_expect_eq(cnp_snapshot_slots(s), 3);
  for (int k = 0; k < 5; k++) {
    ((double *)f.data)[0] = 100.0 + k;
    ASSERT_OK(cnp_snapshot_copy(s, &f, NULL, NULL, &h[k]));
    cr_expect_eq(h[k].slot, k % 3);
  }
  EXPECT_ST(cnp_snapshot_result(h[0], &v), CNP_ESTALE,
            "slot 0 was reused (handle generation 1, slot generation 2)");
  EXPECT_ST(cnp_snapshot_result(h[1], &v), CNP_ESTALE, "slot 1 was reused");
  for (int k = 2; k < 5; k++) {
    ASSERT_OK(cnp_snapshot_result(h[k], &v));
    cr_expect_eq(((double *)v.data)[0], 100.0 + k);
  }
  ASSERT_OK(cnp_snapshot_result(h[4], &v));     /* a valid handle may be read again */
  ASSERT_OK(cnp_snapshot_destroy(s));
  cnp_array_free(&f);
}

Test(core_snapshot, strided_field_and_producers)
{
  cnp_array f;
  int64_t shp[2] = {4, 3};
  ASSERT_OK(cnp_array_alloc(&f, CNP_INT32, 2, shp, CNP_ORDER_F));
  for (int i = 0; i < 12; i++) ((int32_t *)f.data)[i] = i;   /* f[r, c] = r + 4c */
  cnp_snapshot *s;
  cnp_snapshot_handle h;
  cnp_array v;
  cnp_stream *st;
  cnp_event *ev;
  ASSERT_OK(cnp_stream_create(&st));
  ASSERT_OK(cnp_event_create(&ev, 0));
  ASSERT_OK(cnp_event_record(ev, st));
  ASSERT_OK(cnp_snapshot_create(&s, &f, 2));
  ASSERT_OK(cnp_snapshot_copy(s, &f, st, NULL, &h));
  ASSERT_OK(cnp_snapshot_result(h, &v));
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 3; c++) cr_expect_eq(((int32_t *)v.data)[r * 3 + c], r + 4 * c);
  ASSERT_OK(cnp_snapshot_copy(s, &f, NULL, ev, &h));
  ASSERT_OK(cnp_snapshot_result(h, &v));
  cr_expect_eq(((int32_t *)v.data)[1], 4);
  EXPECT_ST(cnp_snapshot_copy(s, &f, st, ev, &h), CNP_EINVAL, "not both");
  cnp_snapshot_destroy(s);
  cnp_stream_destroy(st);
  cnp_event_destroy(ev);
  cnp_array_free(&f);
}

Test(core_snapshot, host_copy_counts_as_device_local)
{
  cnp_array f = field35();
  cnp_snapshot *s;
  cnp_snapshot_handle h;
  cnp_transfer_scope sc;
  cnp_transfer_counts c;
  ASSERT_OK(cnp_snapshot_create(&s, &f, 2));
  ASSERT_OK(cnp_transfers_forbid_begin(&sc));
  ASSERT_OK(cnp_snapshot_copy(s, &f, NULL, NULL, &h));
  ASSERT_OK(cnp_transfers_forbid_end(&sc, &c));
  cr_expect_eq(c.d2d_calls, 1);
  cr_expect_eq(c.d2d_bytes, 120);
  cnp_snapshot_destroy(s);
  cnp_array_free(&f);
}

Test(core_snapshot, binding_and_argument_rejections)
{
  cnp_array f = field35(), g, i32;
  int64_t s53[2] = {5, 3};
  int64_t s35[2] = {3, 5};
  ASSERT_OK(cnp_array_alloc(&g, CNP_FLOAT64, 2, s53, CNP_ORDER_C));
  ASSERT_OK(cnp_array_alloc(&i32, CNP_INT32, 2, s35, CNP_ORDER_C));
  cnp_snapshot *s;
  cnp_snapshot_handle h;
  EXPECT_ST(cnp_snapshot_create(NULL, &f, 2), CNP_EINVAL, "out is NULL");
  EXPECT_ST(cnp_snapshot_create(&s, NULL, 2), CNP_EINVAL, "like is NULL");
  EXPECT_ST(cnp_snapshot_create(&s, &f, 65), CNP_ERANGE, "65 slots requested");
  ASSERT_OK(cnp_snapshot_create(&s, &f, 2));
  EXPECT_ST(cnp_snapshot_copy(s, &g, NULL, NULL, &h), CNP_ESHAPE, "shape differs");
  EXPECT_ST(cnp_snapshot_copy(s, &i32, NULL, NULL, &h), CNP_EDTYPE,
            "field is int32 but the snapshot holds float64");
  EXPECT_ST(cnp_snapshot_copy(s, &f, NULL, NULL, NULL), CNP_EINVAL, "out is NULL");
  EXPECT_ST(cnp_snapshot_copy(s, NULL, NULL, NULL, &h), CNP_EINVAL, "field is NULL");
  EXPECT_ST(cnp_snapshot_copy(NULL, &f, NULL, NULL, &h), CNP_EINVAL, "snapshot is NULL");
  /* another backend: a device field, a device stream or event */
  cnp_array dev = fake_cuda_array(15);
  dev.ndim = 2, dev.shape[0] = 3, dev.shape[1] = 5, dev.strides[0] = 40, dev.strides[1] = 8;
  EXPECT_ST(cnp_snapshot_copy(s, &dev, NULL, NULL, &h), CNP_EDEVICE,
            "field is on cuda:0 but the snapshot is bound to host:0");
  cnp_stream fs = fake_cuda_stream();
  cnp_event fe = fake_cuda_event();
  ASSERT_OK(cnp__handle_register(&fs, "test"));
  ASSERT_OK(cnp__handle_register(&fe, "test"));
  EXPECT_ST(cnp_snapshot_copy(s, &f, &fs, NULL, &h), CNP_EDEVICE,
            "producer stream is on cuda:0 but the binding is host:0");
  EXPECT_ST(cnp_snapshot_copy(s, &f, NULL, &fe, &h), CNP_EDEVICE,
            "producer event is on cuda:0 but the binding is host:0");
  cnp__handle_unregister(&fs);
  cnp__handle_unregister(&fe);
  /* handles that were not made by copy */
  cnp_array v;
  cnp_snapshot_handle bad = {s, 0, 0};
  EXPECT_ST(cnp_snapshot_result(bad, &v), CNP_EINVAL, "not made by cnp_snapshot_copy");
  bad.slot = 2;
  EXPECT_ST(cnp_snapshot_result(bad, &v), CNP_EINVAL, "handle names slot 2 of 2");
  bad.owner = NULL;
  EXPECT_ST(cnp_snapshot_result(bad, &v), CNP_EINVAL, "snapshot is NULL");
  ASSERT_OK(cnp_snapshot_copy(s, &f, NULL, NULL, &h));
  EXPECT_ST(cnp_snapshot_result(h, NULL), CNP_EINVAL, "host_view is NULL");
  /* use after destroy */
  ASSERT_OK(cnp_snapshot_destroy(s));
  EXPECT_ST(cnp_snapshot_result(h, &v), CNP_ESTATE, "not live");
  EXPECT_ST(cnp_snapshot_copy(s, &f, NULL, NULL, &h), CNP_ESTATE, "not live");
  EXPECT_ST(cnp_snapshot_destroy(s), CNP_ESTATE, "not live");
  EXPECT_ST(cnp_snapshot_destroy(NULL), CNP_EINVAL, "snapshot is NULL");
  cr_expect_eq(cnp_snapshot_slots(s), -1);
  cr_expect_eq(cnp_snapshot_slots(NULL), -1);
  if (!cnp_cuda_available(NULL))
    EXPECT_ST(cnp_snapshot_create(&s, &dev, 2), CNP_EUNAVAILABLE, "field is on cuda, which is unavailable");
  /* a freed template */
  cnp_array_free(&g);
  EXPECT_ST(cnp_snapshot_create(&s, &g, 2), CNP_ESTATE, "like has no storage");
  cnp_array_free(&f), cnp_array_free(&i32);
}

Test(core_snapshot, allocation_failures_in_create)
{
  cnp_array f = field35();
  int failed = 0, ok = 0;
  for (long k = 1; k <= 12; k++) {
    cnp_snapshot *s = (cnp_snapshot *)&f;       /* must be reset to NULL on failure */
    cnp__fail_alloc_after(k);
    cnp_status st = cnp_snapshot_create(&s, &f, 3);
    cnp__fail_alloc_after(0);
    if (st == CNP_OK) {
      ok++;
      cnp_snapshot_handle h;
      ASSERT_OK(cnp_snapshot_copy(s, &f, NULL, NULL, &h));
      ASSERT_OK(cnp_snapshot_destroy(s));
    } else {
      failed++;
      cr_expect_eq(st, CNP_ENOMEM, "k=%ld: %s", k, cnp_last_error());
      cr_expect_null(s);
    }
  }
  cr_expect(failed >= 7, "failed %d", failed);   /* struct + 3 buffers + 3 events */
  cr_expect(ok >= 1);
  cnp_array_free(&f);
}
