/*
** test_core_copy.c — cnp_array_copy between layouts (C, Fortran, strided, 0..4 dims, every
** dtype size), fill_zero, rejections, and what copies report to transfer accounting.
*/
#include <stdlib.h>

#include "test_core_util.h"

/* Byte offset of the element with multi-index idx. */
static int64_t off(const cnp_array *a, const int64_t *idx)
{
  int64_t o = 0;
  for (int d = 0; d < a->ndim; d++) o += idx[d] * a->strides[d];
  return o;
}

/* Advance a multi-index in C order; returns 0 after the last element. */
static int next_idx(const cnp_array *a, int64_t *idx)
{
  for (int d = a->ndim - 1; d >= 0; d--) {
    if (++idx[d] < a->shape[d]) return 1;
    idx[d] = 0;
  }
  return 0;
}

Test(core_copy, c_to_f_and_back)
{
  cnp_array c, f, c2;
  int64_t shp[2] = {3, 4};
  ASSERT_OK(cnp_array_alloc(&c, CNP_INT32, 2, shp, CNP_ORDER_C));
  ASSERT_OK(cnp_array_alloc(&f, CNP_INT32, 2, shp, CNP_ORDER_F));
  ASSERT_OK(cnp_array_alloc(&c2, CNP_INT32, 2, shp, CNP_ORDER_C));
  int32_t *cd = c.data, *fd = f.data, *c2d = c2.data;
  for (int i = 0; i < 12; i++) cd[i] = 100 + i;
  ASSERT_OK(cnp_array_copy(&f, &c, NULL));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) cr_expect_eq(fd[j * 3 + i], 100 + i * 4 + j);
  ASSERT_OK(cnp_array_copy(&c2, &f, NULL));
  for (int i = 0; i < 12; i++) cr_expect_eq(c2d[i], 100 + i);
  cnp_array_free(&c), cnp_array_free(&f), cnp_array_free(&c2);
}

/* Random shapes and layouts (permuted dimension order, padding, sub-slices) for every item
** size; every element is checked against index arithmetic. */
Test(core_copy, random_strided_layouts)
{
  srand(12345);
  static const cnp_dtype types[] = {CNP_BOOL, CNP_FLOAT16, CNP_INT32, CNP_FLOAT64,
                                    CNP_COMPLEX128};
  for (int trial = 0; trial < 300; trial++) {
    cnp_dtype t = types[trial % 5];
    int64_t item = (int64_t)cnp_dtype_size(t);
    int nd = rand() % 5;
    int64_t shape[4];
    for (int d = 0; d < nd; d++) shape[d] = 1 + rand() % 5;
    cnp_array v[2];
    cnp_array store[2];
    for (int k = 0; k < 2; k++) {
      /* storage: each dim padded by 0..2, dims laid out in a random order */
      int64_t pshape[4], perm[4] = {0, 1, 2, 3};
      for (int d = 0; d < nd; d++) pshape[d] = shape[d] + rand() % 3;
      for (int d = nd - 1; d > 0; d--) {
        int j = rand() % (d + 1);
        int64_t tmp = perm[d]; perm[d] = perm[j]; perm[j] = tmp;
      }
      int64_t total = 1;
      for (int d = 0; d < nd; d++) total *= pshape[d];
      ASSERT_OK(cnp_array_alloc(&store[k], t, 1, &total, CNP_ORDER_C));
      int64_t strides[4], s = item;
      for (int i = nd - 1; i >= 0; i--) {
        strides[perm[i]] = s;
        s *= pshape[perm[i]];
      }
      int64_t o = 0;
      for (int d = 0; d < nd; d++) o += (pshape[d] - shape[d]) * strides[d] * (rand() % 2);
      v[k] = store[k];
      v[k].data = (char *)store[k].data + o;
      v[k].ndim = nd;
      for (int d = 0; d < nd; d++) v[k].shape[d] = shape[d], v[k].strides[d] = strides[d];
      v[k].flags = 0;
      ASSERT_OK(cnp_array_validate(&v[k], "view"));
      unsigned char *bytes = store[k].data;
      for (size_t b = 0; b < cnp_array_nbytes(&store[k]); b++)
        bytes[b] = (unsigned char)(k ? 0xEE : rand());
    }
    ASSERT_OK(cnp_array_copy(&v[1], &v[0], NULL));
    int64_t idx[4] = {0, 0, 0, 0};
    do {
      cr_assert(memcmp((char *)v[1].data + off(&v[1], idx), (char *)v[0].data + off(&v[0], idx),
                       (size_t)item) == 0, "trial %d nd %d", trial, nd);
    } while (next_idx(&v[0], idx));
    /* outside the view, the destination storage is untouched */
    size_t touched = 0;
    unsigned char *db = store[1].data;
    for (size_t b = 0; b < cnp_array_nbytes(&store[1]); b++) touched += db[b] != 0xEE;
    size_t differing_allowed = cnp_array_nbytes(&v[1]);
    cr_assert(touched <= differing_allowed, "trial %d wrote outside the view", trial);
    cnp_array_free(&store[0]);
    cnp_array_free(&store[1]);
  }
}

Test(core_copy, fill_zero_strided_only_touches_view)
{
  cnp_array a, s;
  int64_t shp[2] = {4, 6};
  ASSERT_OK(cnp_array_alloc(&a, CNP_FLOAT32, 2, shp, CNP_ORDER_C));
  float *d = a.data;
  for (int i = 0; i < 24; i++) d[i] = 1.0f + (float)i;
  ASSERT_OK(cnp_array_slice(&s, &a, 1, 2, 4));   /* columns 2, 3 */
  ASSERT_OK(cnp_array_fill_zero(&s, NULL));
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 6; j++)
      cr_expect_eq(d[i * 6 + j], (j == 2 || j == 3) ? 0.0f : 1.0f + (float)(i * 6 + j));
  ASSERT_OK(cnp_array_fill_zero(&a, NULL));
  for (int i = 0; i < 24; i++) cr_expect_eq(d[i], 0.0f);
  cnp_array_free(&a);
}

Test(core_copy, fill_zero_column_of_f_order)
{
  cnp_array a, s;
  int64_t shp[3] = {3, 2, 2};
  ASSERT_OK(cnp_array_alloc(&a, CNP_INT64, 3, shp, CNP_ORDER_F));
  int64_t *d = a.data;
  for (int i = 0; i < 12; i++) d[i] = 7;
  ASSERT_OK(cnp_array_slice(&s, &a, 0, 1, 2));
  ASSERT_OK(cnp_array_fill_zero(&s, NULL));
  for (int i = 0; i < 12; i++) cr_expect_eq(d[i], i % 3 == 1 ? 0 : 7, "element %d", i);
  cnp_array_free(&a);
}

Test(core_copy, rejections)
{
  cnp_array a, b, c, d;
  int64_t s34[2] = {3, 4}, s43[2] = {4, 3}, s12 = 12;
  ASSERT_OK(cnp_array_alloc(&a, CNP_FLOAT64, 2, s34, CNP_ORDER_C));
  ASSERT_OK(cnp_array_alloc(&b, CNP_FLOAT32, 2, s34, CNP_ORDER_C));
  ASSERT_OK(cnp_array_alloc(&c, CNP_FLOAT64, 2, s43, CNP_ORDER_C));
  ASSERT_OK(cnp_array_alloc(&d, CNP_FLOAT64, 1, &s12, CNP_ORDER_C));
  EXPECT_ST(cnp_array_copy(&b, &a, NULL), CNP_EDTYPE, "dst is float32, src is float64");
  EXPECT_ST(cnp_array_copy(&c, &a, NULL), CNP_ESHAPE, "dimension 0: dst 4, src 3");
  EXPECT_ST(cnp_array_copy(&d, &a, NULL), CNP_ESHAPE, "dst has 1 dimensions, src has 2");
  EXPECT_ST(cnp_array_copy(NULL, &a, NULL), CNP_EINVAL, "dst is NULL");
  EXPECT_ST(cnp_array_copy(&a, NULL, NULL), CNP_EINVAL, "src is NULL");
  EXPECT_ST(cnp_array_fill_zero(NULL, NULL), CNP_EINVAL, "array is NULL");
  /* a stride-0 destination would write one element many times */
  cnp_array bc = d;
  bc.strides[0] = 0;
  cnp_array d2 = d;
  EXPECT_ST(cnp_array_copy(&bc, &d2, NULL), CNP_ELAYOUT, "destination elements overlap");
  /* overlapping through two dimensions together, though neither stride alone is too small
  ** (found by the runtime fuzzer: the copy "succeeded" and could not match its source) */
  cnp_array sq = d, nine;
  sq.ndim = 2;
  sq.shape[0] = sq.shape[1] = 3;
  sq.strides[0] = sq.strides[1] = 16;
  ASSERT_OK(cnp_array_alloc(&nine, CNP_FLOAT64, 2, (int64_t[2]){3, 3}, CNP_ORDER_C));
  EXPECT_ST(cnp_array_copy(&sq, &nine, NULL), CNP_ELAYOUT, "destination elements overlap");
  EXPECT_ST(cnp_array_fill_zero(&sq, NULL), CNP_ELAYOUT, "destination elements overlap");
  sq.strides[0] = 48;                  /* rows 48 bytes apart, elements 16: distinct */
  sq.shape[0] = 2;
  ASSERT_OK(cnp_array_fill_zero(&sq, NULL));
  cnp_array_free(&nine);
  /* a broadcast (stride-0) source is fine on the host */
  cnp_array src0 = d;
  src0.strides[0] = 0;
  ((double *)d.data)[0] = 2.5;
  ASSERT_OK(cnp_array_copy(&d2, &src0, NULL));
  for (int i = 0; i < 12; i++) cr_expect_eq(((double *)d.data)[i], 2.5);
  /* streams: destroyed, not a stream, another backend */
  cnp_stream *s;
  ASSERT_OK(cnp_stream_create(&s));
  ASSERT_OK(cnp_stream_destroy(s));
  EXPECT_ST(cnp_array_copy(&a, &a, s), CNP_ESTATE, "not live");
  EXPECT_ST(cnp_array_fill_zero(&a, s), CNP_ESTATE, "not live");
  cnp_event *e;
  ASSERT_OK(cnp_event_create(&e, 0));
  EXPECT_ST(cnp_array_copy(&a, &a, (cnp_stream *)e), CNP_EINVAL, "not a stream handle");
  cnp_event_destroy(e);
  cnp_stream fake = fake_cuda_stream();
  ASSERT_OK(cnp__handle_register(&fake, "test"));
  cnp_array dev = fake_cuda_array(12);
  if (!cnp_cuda_available(NULL)) {  /* with a device, the fake address would reach the driver */
    EXPECT_ST(cnp_array_copy(&dev, &d, NULL), CNP_EUNAVAILABLE, "CUDA is unavailable");
    EXPECT_ST(cnp_array_copy(&d, &dev, NULL), CNP_EUNAVAILABLE, "CUDA is unavailable");
    EXPECT_ST(cnp_array_fill_zero(&dev, NULL), CNP_EUNAVAILABLE, "CUDA is unavailable");
  }
  cnp_stream *hs;
  ASSERT_OK(cnp_stream_create(&hs));
  EXPECT_ST(cnp_array_copy(&dev, &d, hs), CNP_EDEVICE, "a host stream cannot order work on cuda");
  cnp_array dev1 = dev;
  dev1.device = 1;
  EXPECT_ST(cnp_array_copy(&dev1, &d, &fake), CNP_EDEVICE,
            "stream is on device 0 but the array on device 1");
  EXPECT_ST(cnp_array_fill_zero(&dev1, &fake), CNP_EDEVICE, "stream is on device 0");
  EXPECT_ST(cnp_array_fill_zero(&d, hs), CNP_OK, "");
  cnp_stream_destroy(hs);
  cnp__handle_unregister(&fake);
  ASSERT_OK(cnp_array_free(&a));
  EXPECT_ST(cnp_array_copy(&a, &c, NULL), CNP_ESTATE, "dst has no storage");
  EXPECT_ST(cnp_array_fill_zero(&a, NULL), CNP_ESTATE, "array has no storage");
  cnp_array_free(&b), cnp_array_free(&c), cnp_array_free(&d);
}

Test(core_copy, host_stream_orders_copy)
{
  cnp_array a, b;
  int64_t n = 1000;
  ASSERT_OK(cnp_array_alloc(&a, CNP_INT64, 1, &n, CNP_ORDER_C));
  ASSERT_OK(cnp_array_alloc(&b, CNP_INT64, 1, &n, CNP_ORDER_C));
  for (int i = 0; i < n; i++) ((int64_t *)a.data)[i] = i * i;
  cnp_stream *s;
  ASSERT_OK(cnp_stream_create(&s));
  ASSERT_OK(cnp_array_copy(&b, &a, s));
  ASSERT_OK(cnp_stream_synchronize(s));
  for (int i = 0; i < n; i++) cr_expect_eq(((int64_t *)b.data)[i], (int64_t)i * i);
  ASSERT_OK(cnp_array_fill_zero(&b, s));
  for (int i = 0; i < n; i++) cr_expect_eq(((int64_t *)b.data)[i], 0);
  cnp_stream_destroy(s);
  cnp_array_free(&a), cnp_array_free(&b);
}

Test(core_copy, accounting_by_direction)
{
  cnp_array a, b, f;
  int64_t shp[2] = {5, 8};
  ASSERT_OK(cnp_array_alloc(&a, CNP_FLOAT64, 2, shp, CNP_ORDER_C));
  ASSERT_OK(cnp_array_alloc(&b, CNP_FLOAT64, 2, shp, CNP_ORDER_C));
  ASSERT_OK(cnp_array_alloc(&f, CNP_FLOAT64, 2, shp, CNP_ORDER_F));
  cnp_transfer_scope sc;
  cnp_transfer_counts c;
  ASSERT_OK(cnp_transfers_begin(&sc));
  ASSERT_OK(cnp_array_copy(&b, &a, NULL));
  ASSERT_OK(cnp_array_copy(&f, &a, NULL));
  ASSERT_OK(cnp_array_fill_zero(&a, NULL));
  ASSERT_OK(cnp_transfers_end(&sc, &c));
  cr_expect_eq(c.d2d_calls, 2);
  cr_expect_eq(c.d2d_bytes, 2 * 320);
  cr_expect_eq(c.h2d_calls + c.d2h_calls + c.h2d_bytes + c.d2h_bytes, 0);
  cr_expect_eq(c.conversions, 1);                /* C -> Fortran */
  cr_expect_eq(c.fallbacks, 0);
  cr_expect_eq(cnp__xfer_kind(CNP_BACKEND_CUDA, CNP_BACKEND_HOST), CNP_XFER_H2D);
  cr_expect_eq(cnp__xfer_kind(CNP_BACKEND_HOST, CNP_BACKEND_CUDA), CNP_XFER_D2H);
  cr_expect_eq(cnp__xfer_kind(CNP_BACKEND_CUDA, CNP_BACKEND_CUDA), CNP_XFER_D2D);
  cr_expect_eq(cnp__xfer_kind(CNP_BACKEND_HOST, CNP_BACKEND_HOST), CNP_XFER_D2D);
  cnp_array_free(&a), cnp_array_free(&b), cnp_array_free(&f);
}
