/*
** test_core_array.c — dtypes, allocation, wrapping, validation (each rejection), slicing.
*/
#include "test_core_util.h"

static const int64_t shp34[2] = {3, 4};

Test(core_array, dtypes)
{
  static const struct { cnp_dtype t; size_t size; const char *name; } want[] = {
    {CNP_BOOL, 1, "bool"},         {CNP_INT32, 4, "int32"},       {CNP_INT64, 8, "int64"},
    {CNP_UINT64, 8, "uint64"},     {CNP_FLOAT16, 2, "float16"},   {CNP_FLOAT32, 4, "float32"},
    {CNP_FLOAT64, 8, "float64"},   {CNP_COMPLEX64, 8, "complex64"},
    {CNP_COMPLEX128, 16, "complex128"},
  };
  cr_assert_eq(sizeof want / sizeof want[0], (size_t)CNP_DTYPE_COUNT_);
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    cr_expect_eq(cnp_dtype_size(want[i].t), want[i].size);
    cr_expect_str_eq(cnp_dtype_name(want[i].t), want[i].name);
  }
  cr_expect_eq(cnp_dtype_size(CNP_DTYPE_COUNT_), 0);
  cr_expect_eq(cnp_dtype_size((cnp_dtype)-1), 0);
  cr_expect_str_eq(cnp_dtype_name((cnp_dtype)99), "?");
}

Test(core_array, alloc_c_order_zeroed)
{
  cnp_array a;
  ASSERT_OK(cnp_array_alloc(&a, CNP_FLOAT64, 2, shp34, CNP_ORDER_C));
  cr_expect_eq(a.backend, CNP_BACKEND_HOST);
  cr_expect_eq(a.device, 0);
  cr_expect_eq(a.ndim, 2);
  cr_expect_eq(a.strides[0], 32);
  cr_expect_eq(a.strides[1], 8);
  cr_expect_eq(cnp_array_numel(&a), 12);
  cr_expect_eq(cnp_array_nbytes(&a), 96);
  cr_expect(cnp_array_is_c_contiguous(&a));
  cr_expect(!cnp_array_is_f_contiguous(&a));
  cr_expect(a.flags & CNP_ARRAY_OWNED);
  cr_expect_neq(a.alloc_id, 0);
  const double *d = a.data;
  for (int i = 0; i < 12; i++) cr_expect_eq(d[i], 0.0);
  ASSERT_OK(cnp_array_validate(&a, "a"));
  ASSERT_OK(cnp_array_free(&a));
  cr_expect_null(a.data);
  cr_expect_eq(a.alloc_id, 0);
}

Test(core_array, alloc_f_order_and_scalar)
{
  cnp_array a, s;
  int64_t shp[3] = {2, 3, 5};
  ASSERT_OK(cnp_array_alloc(&a, CNP_INT32, 3, shp, CNP_ORDER_F));
  cr_expect_eq(a.strides[0], 4);
  cr_expect_eq(a.strides[1], 8);
  cr_expect_eq(a.strides[2], 24);
  cr_expect(cnp_array_is_f_contiguous(&a));
  cr_expect(!cnp_array_is_c_contiguous(&a));
  ASSERT_OK(cnp_array_alloc(&s, CNP_COMPLEX128, 0, NULL, CNP_ORDER_C));
  cr_expect_eq(cnp_array_numel(&s), 1);
  cr_expect_eq(cnp_array_nbytes(&s), 16);
  cr_expect(cnp_array_is_c_contiguous(&s) && cnp_array_is_f_contiguous(&s));
  ASSERT_OK(cnp_array_free(&a));
  ASSERT_OK(cnp_array_free(&s));
}

Test(core_array, alloc_every_dtype_and_empty)
{
  for (int t = 0; t < CNP_DTYPE_COUNT_; t++) {
    cnp_array a;
    int64_t shp[4] = {2, 0, 3, 1};
    ASSERT_OK(cnp_array_alloc(&a, (cnp_dtype)t, 4, shp, CNP_ORDER_C));
    cr_expect_eq(cnp_array_numel(&a), 0);
    cr_expect_eq(cnp_array_nbytes(&a), 0);
    ASSERT_OK(cnp_array_validate(&a, "empty"));
    ASSERT_OK(cnp_array_free(&a));
  }
}

Test(core_array, alloc_rejections)
{
  cnp_array a;
  int64_t neg[1] = {-1};
  int64_t huge[2] = {INT64_MAX / 2, 4};
  EXPECT_ST(cnp_array_alloc(NULL, CNP_INT32, 2, shp34, CNP_ORDER_C), CNP_EINVAL, "out is NULL");
  EXPECT_ST(cnp_array_alloc(&a, (cnp_dtype)42, 2, shp34, CNP_ORDER_C), CNP_EDTYPE, "dtype 42");
  EXPECT_ST(cnp_array_alloc(&a, CNP_INT32, 5, shp34, CNP_ORDER_C), CNP_ESHAPE, "ndim 5");
  EXPECT_ST(cnp_array_alloc(&a, CNP_INT32, -1, shp34, CNP_ORDER_C), CNP_ESHAPE, "ndim -1");
  EXPECT_ST(cnp_array_alloc(&a, CNP_INT32, 2, NULL, CNP_ORDER_C), CNP_EINVAL, "shape is NULL");
  EXPECT_ST(cnp_array_alloc(&a, CNP_INT32, 1, neg, CNP_ORDER_C), CNP_ESHAPE, "negative extent");
  EXPECT_ST(cnp_array_alloc(&a, CNP_INT32, 2, shp34, (cnp_order)7), CNP_EINVAL, "order 7");
  EXPECT_ST(cnp_array_alloc(&a, CNP_FLOAT64, 2, huge, CNP_ORDER_C), CNP_EOVERFLOW, "overflow");
  EXPECT_ST(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 1, CNP_INT32, 2, shp34, CNP_ORDER_C, 0),
            CNP_EDEVICE, "invalid device 1");
  EXPECT_ST(cnp_array_alloc_on(&a, (cnp_backend)5, 0, CNP_INT32, 2, shp34, CNP_ORDER_C, 0),
            CNP_EDEVICE, "invalid backend 5");
  EXPECT_ST(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, CNP_INT32, 2, shp34, CNP_ORDER_C, 0x80),
            CNP_EINVAL, "unknown flags");
  if (!cnp_cuda_available(NULL))
    EXPECT_ST(cnp_array_alloc_on(&a, CNP_BACKEND_CUDA, 0, CNP_INT32, 2, shp34, CNP_ORDER_C, 0),
              CNP_EUNAVAILABLE, "CUDA is unavailable");
}

Test(core_array, pinned_request_without_cuda_is_plain_host)
{
  if (cnp_cuda_available(NULL)) cr_skip_test("a CUDA device is present");
  cnp_array a;
  ASSERT_OK(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, CNP_UINT64, 2, shp34, CNP_ORDER_C,
                               CNP_ARRAY_PINNED));
  cr_expect_eq(a.flags, CNP_ARRAY_OWNED);
  ASSERT_OK(cnp_array_free(&a));
}

Test(core_array, free_rejections_and_use_after_free)
{
  cnp_array a, copy, sl;
  ASSERT_OK(cnp_array_alloc(&a, CNP_FLOAT32, 2, shp34, CNP_ORDER_C));
  copy = a;
  ASSERT_OK(cnp_array_slice(&sl, &a, 0, 1, 2));
  EXPECT_ST(cnp_array_free(&sl), CNP_EINVAL, "does not own");
  EXPECT_ST(cnp_array_free(NULL), CNP_EINVAL, "a is NULL");
  ASSERT_OK(cnp_array_free(&a));
  EXPECT_ST(cnp_array_free(&a), CNP_ESTATE, "already freed or never allocated");
  EXPECT_ST(cnp_array_free(&copy), CNP_ESTATE, "already freed");
  EXPECT_ST(cnp_array_validate(&copy, "old"), CNP_ESTATE, "old uses storage");
  EXPECT_ST(cnp_array_validate(&sl, "slice"), CNP_ESTATE, "was freed");
  EXPECT_ST(cnp_array_validate(&a, "cleared"), CNP_ESTATE, "cleared has no storage");
  float buf[4];
  int64_t n = 4;
  cnp_array w;
  ASSERT_OK(cnp_array_wrap(&w, buf, CNP_BACKEND_HOST, 0, CNP_FLOAT32, 1, &n, NULL));
  EXPECT_ST(cnp_array_free(&w), CNP_EINVAL, "wraps caller memory");
}

Test(core_array, wrap_strided_and_rejections)
{
  double buf[24];
  int64_t shp[2] = {3, 4}, st[2] = {8 * 8, 2 * 8};
  cnp_array w;
  ASSERT_OK(cnp_array_wrap(&w, buf, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shp, st));
  cr_expect_eq(w.alloc_id, 0);
  cr_expect_eq(w.flags, 0);
  cr_expect_eq(w.strides[0], 64);
  cr_expect(!cnp_array_is_c_contiguous(&w) && !cnp_array_is_f_contiguous(&w));
  int64_t bad[2] = {8, 12};
  EXPECT_ST(cnp_array_wrap(&w, buf, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shp, bad),
            CNP_ELAYOUT, "stride 12 in dimension 1");
  EXPECT_ST(cnp_array_wrap(&w, NULL, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shp, NULL),
            CNP_ESTATE, "no storage");
  EXPECT_ST(cnp_array_wrap(&w, buf, CNP_BACKEND_HOST, 3, CNP_FLOAT64, 2, shp, NULL),
            CNP_EDEVICE, "invalid device 3");
  EXPECT_ST(cnp_array_wrap(NULL, buf, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shp, NULL),
            CNP_EINVAL, "out is NULL");
  EXPECT_ST(cnp_array_wrap(&w, (char *)buf + 1, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shp, NULL),
            CNP_ELAYOUT, "misaligned");
  /* a 0-d view has one element, so it needs storage */
  EXPECT_ST(cnp_array_wrap(&w, NULL, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 0, NULL, NULL),
            CNP_ESTATE, "wrapped array has no storage");
  int64_t zero = 0;
  ASSERT_OK(cnp_array_wrap(&w, NULL, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &zero, NULL));
}

/* Each rejection of cnp_array_validate, on a corrupted copy of a good view. */
Test(core_array, validate_each_rejection)
{
  cnp_array a, b;
  ASSERT_OK(cnp_array_alloc(&a, CNP_FLOAT64, 2, shp34, CNP_ORDER_C));
  EXPECT_ST(cnp_array_validate(NULL, "x"), CNP_EINVAL, "x is NULL");
  b = a; b.dtype = (cnp_dtype)17;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_EDTYPE, "x has invalid dtype 17");
  b = a; b.ndim = 5;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_ESHAPE, "ndim 5");
  b = a; b.backend = (cnp_backend)9;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_EDEVICE, "invalid backend 9");
  b = a; b.device = 2;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_EDEVICE, "invalid device 2");
  b = a; b.device = -1;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_EDEVICE, "invalid device -1");
  b = a; b.shape[1] = -4;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_ESHAPE, "negative extent -4");
  b = a; b.strides[0] = -32;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_ELAYOUT, "stride -32");
  b = a; b.strides[1] = 4;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_ELAYOUT, "multiple of the 8-byte item");
  b = a; b.shape[0] = INT64_MAX / 2;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_EOVERFLOW, "overflows");
  b = a; b.shape[0] = 4; b.strides[0] = INT64_MAX / 2 - 7;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_EOVERFLOW, "overflows");
  b = a; b.data = NULL;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_ESTATE, "x has no storage");
  b = a; b.data = (char *)a.data + 4;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_ELAYOUT, "misaligned");
  b = a; b.shape[0] = 4;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_ERANGE, "outside its storage");
  b = a; b.data = (char *)a.data - 64;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_ERANGE, "outside its storage");
  b = a; b.backend = CNP_BACKEND_CUDA;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_EDEVICE, "storage is on host:0");
  b = a; b.alloc_id = a.alloc_id + 1000;
  EXPECT_ST(cnp_array_validate(&b, "x"), CNP_ESTATE, "was freed");
  EXPECT_ST(cnp_array_validate(&a, NULL), CNP_OK, "");
  ASSERT_OK(cnp_array_free(&a));
}

Test(core_array, numel_and_nbytes_of_bad_views)
{
  cnp_array b;
  memset(&b, 0, sizeof b);
  b.dtype = CNP_FLOAT64;
  b.ndim = 2;
  b.shape[0] = INT64_MAX / 2;
  b.shape[1] = 3;
  cr_expect_eq(cnp_array_numel(&b), -1);
  cr_expect_eq(cnp_array_nbytes(&b), 0);
  b.ndim = 7;
  cr_expect_eq(cnp_array_numel(&b), -1);
  cr_expect_eq(cnp_array_numel(NULL), -1);
  cr_expect_eq(cnp_array_is_c_contiguous(NULL), 0);
}

Test(core_array, slice)
{
  cnp_array a, s, s2;
  int64_t shp[2] = {4, 5};
  ASSERT_OK(cnp_array_alloc(&a, CNP_INT64, 2, shp, CNP_ORDER_C));
  int64_t *d = a.data;
  for (int i = 0; i < 20; i++) d[i] = i;
  ASSERT_OK(cnp_array_slice(&s, &a, 1, 1, 4));        /* columns 1..3 */
  cr_expect_eq(s.shape[0], 4);
  cr_expect_eq(s.shape[1], 3);
  cr_expect_eq(s.strides[0], 40);
  cr_expect_eq(*(int64_t *)s.data, 1);
  cr_expect(!(s.flags & CNP_ARRAY_OWNED));
  cr_expect_eq(s.alloc_id, a.alloc_id);
  cr_expect(!cnp_array_is_c_contiguous(&s));
  ASSERT_OK(cnp_array_validate(&s, "s"));
  ASSERT_OK(cnp_array_slice(&s2, &s, 0, 2, 4));       /* rows 2..3 of it */
  cr_expect_eq(*(int64_t *)s2.data, 11);
  ASSERT_OK(cnp_array_slice(&s2, &a, 0, 1, 3));       /* rows: stays C-contiguous */
  cr_expect(cnp_array_is_c_contiguous(&s2));
  cr_expect_eq(*(int64_t *)s2.data, 5);
  ASSERT_OK(cnp_array_slice(&s2, &a, 0, 4, 4));       /* empty */
  cr_expect_eq(cnp_array_numel(&s2), 0);
  /* an empty array may carry any stride: slicing it must not compute start * stride (the
  ** runtime fuzzer's signed overflow, UBSan) */
  int64_t e_shape[2] = {0, 10}, e_strides[2] = {8, (INT64_MAX / 8 / 2) * 8};
  cnp_array e, es;
  ASSERT_OK(cnp_array_wrap(&e, a.data, CNP_BACKEND_HOST, 0, CNP_INT64, 2, e_shape, e_strides));
  ASSERT_OK(cnp_array_slice(&es, &e, 1, 7, 9));
  cr_expect_eq(es.shape[1], 2);
  cr_expect_eq(cnp_array_numel(&es), 0);
  ASSERT_OK(cnp_array_validate(&es, "empty slice"));
  ASSERT_OK(cnp_array_slice(&s, &s, 0, 1, 2));        /* in place */
  cr_expect_eq(*(int64_t *)s.data, 6);
  EXPECT_ST(cnp_array_slice(&s2, &a, 2, 0, 1), CNP_ERANGE, "axis 2 out of range");
  EXPECT_ST(cnp_array_slice(&s2, &a, -1, 0, 1), CNP_ERANGE, "axis -1");
  EXPECT_ST(cnp_array_slice(&s2, &a, 0, 3, 2), CNP_ERANGE, "[3, 2) out of range");
  EXPECT_ST(cnp_array_slice(&s2, &a, 0, 0, 5), CNP_ERANGE, "extent 4");
  EXPECT_ST(cnp_array_slice(&s2, &a, 0, -1, 2), CNP_ERANGE, "[-1, 2)");
  EXPECT_ST(cnp_array_slice(NULL, &a, 0, 0, 1), CNP_EINVAL, "out is NULL");
  EXPECT_ST(cnp_array_slice(&s2, NULL, 0, 0, 1), CNP_EINVAL, "source is NULL");
  ASSERT_OK(cnp_array_free(&a));
  EXPECT_ST(cnp_array_slice(&s2, &a, 0, 0, 1), CNP_ESTATE, "source has no storage");
}

Test(core_array, contiguity_with_unit_dims)
{
  double buf[8];
  int64_t shp[3] = {1, 8, 1}, st[3] = {999 * 8, 8, 5 * 8};
  cnp_array w;
  ASSERT_OK(cnp_array_wrap(&w, buf, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 3, shp, st));
  cr_expect(cnp_array_is_c_contiguous(&w));
  cr_expect(cnp_array_is_f_contiguous(&w));
}

Test(core_array, wrap_overflow_with_explicit_strides)
{
  double buf[1];
  int64_t shp[1] = {INT64_MAX / 4}, st[1] = {8};
  cnp_array w;
  EXPECT_ST(cnp_array_wrap(&w, buf, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, shp, st), CNP_EOVERFLOW,
            "overflows");
  int64_t shp2[2] = {INT64_MAX / 2, 3}, st2[2] = {0, 8};
  EXPECT_ST(cnp_array_wrap(&w, buf, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 2, shp2, st2),
            CNP_EOVERFLOW, "overflows");
}
