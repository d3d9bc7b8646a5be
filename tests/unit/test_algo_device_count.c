/*
** test_algo_device_count.c — cnp_compact_by_mask_device_count on the host backend: the rows
** and the count match cnp_compact_by_mask, the count lands in the int64[1] array, and every
** argument error has its exact status. (The CUDA path needs a GPU: tests/gpu.)
*/
#include "test_algo_util.h"

#include "cnp/algo.h"

Test(algo_device_count, same_as_compact_by_mask)
{
  const int64_t n = 1000;
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, n, 0, 0), CNP_OK);
  int64_t s_2n[2] = {2, n};
  cnp_array mask = host_vec(CNP_BOOL, n), x = host_vec(CNP_FLOAT64, n);
  cnp_array v = host_array(CNP_INT32, 2, s_2n, 'C'), count = host_vec(CNP_INT64, 1);
  double *xd = x.data;
  int32_t *vd = v.data;
  unsigned char *md = mask.data;
  int64_t kept = 0;
  for (int64_t i = 0; i < n; i++) {
    xd[i] = (double)i;
    vd[i] = (int32_t)(2 * i);
    vd[n + i] = (int32_t)(3 * i);
    md[i] = (unsigned char)(i % 3 == 1 ? 7 : 0);
    kept += i % 3 == 1;
  }
  ((int64_t *)count.data)[0] = -5;
  cnp_array arrs[2] = {x, v};
  cr_assert_eq(cnp_compact_by_mask_device_count(&mask, arrs, 2, &count, ws, NULL), CNP_OK, "%s",
               cnp_last_error());
  cr_assert_eq(((int64_t *)count.data)[0], kept);
  for (int64_t j = 0; j < kept; j++) {
    int64_t i = 3 * j + 1;
    cr_assert_eq(xd[j], (double)i);
    cr_assert_eq(vd[j], (int32_t)(2 * i));
    cr_assert_eq(vd[n + j], (int32_t)(3 * i));
  }
  /* count only, and an empty mask */
  cr_assert_eq(cnp_compact_by_mask_device_count(&mask, NULL, 0, &count, ws, NULL), CNP_OK);
  cr_assert_eq(((int64_t *)count.data)[0], kept);
  cnp_array empty = mask;
  empty.shape[0] = 0;
  cr_assert_eq(cnp_compact_by_mask_device_count(&empty, NULL, 0, &count, ws, NULL), CNP_OK);
  cr_assert_eq(((int64_t *)count.data)[0], 0);
  free(mask.data);
  free(x.data);
  free(v.data);
  free(count.data);
  cnp_workspace_destroy(ws);
}

Test(algo_device_count, errors)
{
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 8, 0, 0), CNP_OK);
  cnp_array mask = host_vec(CNP_BOOL, 8), x = host_vec(CNP_FLOAT64, 8);
  cnp_array count = host_vec(CNP_INT64, 1), c32 = host_vec(CNP_INT32, 1);
  cnp_array c2 = host_vec(CNP_INT64, 2), x7 = host_vec(CNP_FLOAT64, 7);
  cnp_array in_x = x;                           /* count inside an array */
  in_x.dtype = CNP_INT64;
  in_x.shape[0] = 1;
  in_x.strides[0] = 8;

  cr_expect_eq(cnp_compact_by_mask_device_count(NULL, &x, 1, &count, ws, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_compact_by_mask_device_count(&mask, &x, 1, NULL, ws, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_compact_by_mask_device_count(&mask, &x, 1, &count, NULL, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_compact_by_mask_device_count(&mask, &x, 1, &c32, ws, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_compact_by_mask_device_count(&mask, &x, 1, &c2, ws, NULL), CNP_ESHAPE);
  expect_msg("count must hold 1 element");
  cr_expect_eq(cnp_compact_by_mask_device_count(&mask, &x7, 1, &count, ws, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_compact_by_mask_device_count(&mask, &x, 1, &in_x, ws, NULL), CNP_EALIAS);
  cnp_array on_cuda = count;
  on_cuda.backend = CNP_BACKEND_CUDA;
  cr_expect_eq(cnp_compact_by_mask_device_count(&mask, &x, 1, &on_cuda, ws, NULL), CNP_EDEVICE);
  free(mask.data);
  free(x.data);
  free(count.data);
  free(c32.data);
  free(c2.data);
  free(x7.data);
  cnp_workspace_destroy(ws);
}
