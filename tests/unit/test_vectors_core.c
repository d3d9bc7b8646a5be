/*
** test_vectors_core.c — the brief's "Backends", "Streams and events", "Snapshots and
** mirrors", "Transfer accounting" lines and the status codes, checked as an outside tester
** would from include/cnp/cnp.h and docs/runtime.md alone (host backend; the no-device path
** for CUDA). Complements test_brief.c: environment spellings, snapshot results of strided
** and Fortran-order fields, slot wrap-around, scope nesting across kinds, markers.
*/
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnp/cnp.h"
#include "test_blackbox.h"

static cnp_array alloc_nd(cnp_dtype t, int ndim, const int64_t *shape, cnp_order o)
{
  cnp_array a;
  OK(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, t, ndim, shape, o, 0));
  return a;
}

/* ---- status codes ------------------------------------------------------------------- */

Test(vectors_status, every_failure_leaves_a_message_naming_the_call)
{
  /* Each status a tester can provoke from the host API, with the call named. */
  cnp_array a;
  int64_t n = 3;
  EXPECT_FAIL(cnp_check_abi(CNP_ABI_VERSION + 1), CNP_EABI, "cnp_check_abi");
  OK(cnp_check_abi(CNP_ABI_VERSION));
  EXPECT_FAIL(cnp_array_alloc(&a, (cnp_dtype)99, 1, &n, CNP_ORDER_C), CNP_EDTYPE,
              "cnp_array_alloc");
  EXPECT_FAIL(cnp_set_device(1), CNP_ERANGE, "cnp_set_device");
  cr_expect_eq(cnp_backend_device(), 0);
  OK(cnp_set_device(0));
  /* Every code's string and name are non-empty and stable across calls. */
  for (int c = 0; c >= -22; c--) {
    const char *s = cnp_status_string((cnp_status)c);
    cr_expect(s && *s && strcmp(s, cnp_status_string((cnp_status)c)) == 0);
    cr_expect(strcmp(s, "unknown status") != 0, "code %d", c);
  }
  cr_expect_str_eq(cnp_status_name(CNP_ESTALE), "CNP_ESTALE");
  cr_expect_str_eq(cnp_status_string(CNP_OK), "success");
  /* The detail is per thread and cleared by cnp_clear_error. */
  cnp_clear_error();
  cr_expect_str_eq(cnp_last_error(), "");
}

/* ---- backends ----------------------------------------------------------------------- */

Test(vectors_backend, env_spellings)
{
  OK(cnp_backend_select(CNP_BACKEND_HOST, 1));
  /* The documented values in any letter case force the choice. */
  setenv("CNP_BACKEND", "HOST", 1);
  OK(cnp_backend_select(CNP_BACKEND_CUDA, 1));
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST);
  if (!cnp_cuda_available(NULL)) {
    const char *reason = NULL;
    cnp_cuda_available(&reason);
    setenv("CNP_BACKEND", "Cuda", 1);
    EXPECT_FAIL(cnp_backend_select(CNP_BACKEND_HOST, 1), CNP_EUNAVAILABLE, reason);
    cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST, "previous backend stays");
    /* Forced CUDA, non-strict: falls back to host with a marker. */
    cnp_transfer_scope sc;
    cnp_transfer_counts c;
    OK(cnp_transfers_begin(&sc));
    OK(cnp_backend_select(CNP_BACKEND_HOST, 0));
    OK(cnp_transfers_end(&sc, &c));
    cr_expect_eq(c.fallbacks, 1u);
    cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST);
  }
  setenv("CNP_BACKEND", "gpu", 1);
  EXPECT_FAIL(cnp_backend_select(CNP_BACKEND_HOST, 0), CNP_EINVAL, "CNP_BACKEND");
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST);
  unsetenv("CNP_BACKEND");
  /* An unknown enum value. */
  EXPECT_FAIL(cnp_backend_select((cnp_backend)7, 0), CNP_EINVAL, "cnp_backend_select");
  cr_expect_str_eq(cnp_backend_name(CNP_BACKEND_HOST), "host");
  cr_expect_str_eq(cnp_backend_name(CNP_BACKEND_CUDA), "cuda");
}

/* A small JSON checker: returns the position after one value, or NULL. */
static const char *json_value(const char *p);
static const char *json_ws(const char *p)
{
  while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r') p++;
  return p;
}
static const char *json_string(const char *p)
{
  if (*p != '"') return NULL;
  for (p++; *p != '"'; p++) {
    if ((unsigned char)*p < 0x20) return NULL;
    if (*p == '\\') {
      p++;
      if (*p == 'u') {
        for (int i = 1; i <= 4; i++)
          if (!strchr("0123456789abcdefABCDEF", p[i]) || p[i] == '\0') return NULL;
        p += 4;
      } else if (!strchr("\"\\/bfnrt", *p) || *p == '\0') {
        return NULL;
      }
    }
  }
  return p + 1;
}
static const char *json_value(const char *p)
{
  p = json_ws(p);
  if (*p == '{' || *p == '[') {
    char close = *p == '{' ? '}' : ']';
    p = json_ws(p + 1);
    if (*p == close) return p + 1;
    for (;;) {
      if (close == '}') {
        p = json_string(json_ws(p));
        if (!p) return NULL;
        p = json_ws(p);
        if (*p++ != ':') return NULL;
      }
      p = json_value(p);
      if (!p) return NULL;
      p = json_ws(p);
      if (*p == ',') { p++; continue; }
      if (*p == close) return p + 1;
      return NULL;
    }
  }
  if (*p == '"') return json_string(p);
  if (strncmp(p, "true", 4) == 0) return p + 4;
  if (strncmp(p, "false", 5) == 0) return p + 5;
  if (strncmp(p, "null", 4) == 0) return p + 4;
  const char *s = p;
  if (*p == '-') p++;
  if (*p < '0' || *p > '9') return NULL;
  if (*p == '0' && p[1] >= '0' && p[1] <= '9') return NULL;
  while (*p >= '0' && *p <= '9') p++;
  if (*p == '.') {
    p++;
    if (*p < '0' || *p > '9') return NULL;
    while (*p >= '0' && *p <= '9') p++;
  }
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-') p++;
    if (*p < '0' || *p > '9') return NULL;
    while (*p >= '0' && *p <= '9') p++;
  }
  return p > s ? p : NULL;
}

Test(vectors_backend, info_is_valid_json_on_both_selections)
{
  for (int pass = 0; pass < 2; pass++) {
    OK(cnp_backend_select(pass ? CNP_BACKEND_CUDA : CNP_BACKEND_HOST, 0));
    size_t need = 0;
    cnp_status st = cnp_backend_info(NULL, 0, &need);
    cr_assert(st == CNP_EOVERFLOW && need > 2);
    char *buf = malloc(need);
    cr_assert(buf);
    OK(cnp_backend_info(buf, need, NULL));
    const char *end = json_value(buf);
    cr_assert(end != NULL, "not JSON: %s", buf);
    cr_expect_eq(*json_ws(end), '\0', "trailing text after the JSON value: %s", buf);
    const char *want[] = {"\"cnp\"", "\"cuda\"", "\"nvrtc\"", "\"mpi\"", "\"device\""};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
      cr_expect(strstr(buf, want[i]), "%s missing: %s", want[i], buf);
    /* The backend in use is named. */
    char be[64];
    snprintf(be, sizeof be, "\"backend\":\"%s\"", cnp_backend_name(cnp_backend_current()));
    cr_expect(strstr(buf, be), "%s missing: %s", be, buf);
    /* Exactly-sized and one-too-small buffers. */
    char *small = malloc(need - 1);
    cr_assert(small);
    size_t need2 = 0;
    EXPECT_FAIL(cnp_backend_info(small, need - 1, &need2), CNP_EOVERFLOW, "");
    cr_expect_eq(need2, need);
    cr_expect_eq(small[need - 2], '\0');
    free(small);
    free(buf);
  }
  OK(cnp_backend_select(CNP_BACKEND_HOST, 1));
}

/* ---- streams and events ------------------------------------------------------------- */

Test(vectors_stream, never_recorded_event_and_cross_waits)
{
  cnp_event *e = NULL;
  cnp_stream *s = NULL;
  OK(cnp_event_create(&e, CNP_EVENT_DEFAULT));
  OK(cnp_stream_create(&s));
  int done = -1;
  OK(cnp_event_done(e, &done));
  cr_expect_eq(done, 1, "an event never recorded is complete (as cudaEventQuery)");
  OK(cnp_event_synchronize(e));
  OK(cnp_stream_wait_event(s, e));
  OK(cnp_stream_done(s, &done));
  cr_expect_eq(done, 1);
  cr_expect_eq(cnp_stream_backend(s), CNP_BACKEND_HOST);
  cr_expect_eq(cnp_stream_device(s), 0);
  cr_expect_null(cnp_stream_native(s));
  /* Recording on the default stream (NULL) works; unknown flags are rejected. */
  OK(cnp_event_record(e, NULL));
  OK(cnp_event_done(e, &done));
  cr_expect_eq(done, 1);
  cnp_event *bad = NULL;
  EXPECT_FAIL(cnp_event_create(&bad, 0x80u), CNP_EINVAL, "cnp_event_create");
  cr_expect_null(bad);
  /* Wrapping NULL on the host is allowed; wrapping a pointer is not. */
  cnp_stream *w = NULL;
  OK(cnp_stream_wrap(&w, NULL));
  OK(cnp_stream_synchronize(w));
  OK(cnp_stream_destroy(w));
  int dummy;
  EXPECT_FAIL(cnp_stream_wrap(&w, &dummy), CNP_EDEVICE, "cnp_stream_wrap");
  OK(cnp_event_destroy(e));
  OK(cnp_stream_destroy(s));
}

/* ---- snapshots ---------------------------------------------------------------------- */

Test(vectors_snapshot, fortran_and_strided_fields_give_c_order_results)
{
  int64_t sh[2] = {3, 4};
  cnp_array f = alloc_nd(CNP_INT32, 2, sh, CNP_ORDER_F);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      *(int32_t *)((char *)f.data + i * f.strides[0] + j * f.strides[1]) = 10 * i + j;
  cnp_snapshot *snap = NULL;
  OK(cnp_snapshot_create(&snap, &f, 2));
  cnp_snapshot_handle h;
  OK(cnp_snapshot_copy(snap, &f, NULL, NULL, &h));
  cnp_array r;
  OK(cnp_snapshot_result(h, &r));
  cr_assert_eq(r.ndim, 2);
  cr_assert(r.shape[0] == 3 && r.shape[1] == 4);
  cr_expect(cnp_array_is_c_contiguous(&r), "result is C order");
  cr_expect_eq(r.backend, CNP_BACKEND_HOST);
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      cr_expect_eq(((int32_t *)r.data)[4 * i + j], 10 * i + j, "r[%d,%d]", i, j);
  /* A C-order field of the same shape goes to the same staging object. */
  cnp_array c = alloc_nd(CNP_INT32, 2, sh, CNP_ORDER_C);
  for (int k = 0; k < 12; k++) ((int32_t *)c.data)[k] = -k;
  OK(cnp_snapshot_copy(snap, &c, NULL, NULL, &h));
  OK(cnp_snapshot_result(h, &r));
  for (int k = 0; k < 12; k++) cr_expect_eq(((int32_t *)r.data)[k], -k);
  /* A strided view (every other column of a (3, 8) array). */
  int64_t sh8[2] = {3, 8};
  cnp_array wide = alloc_nd(CNP_INT32, 2, sh8, CNP_ORDER_C), sv = wide;
  for (int k = 0; k < 24; k++) ((int32_t *)wide.data)[k] = k;
  sv.shape[1] = 4;
  sv.strides[1] = 8;
  OK(cnp_snapshot_copy(snap, &sv, NULL, NULL, &h));
  OK(cnp_snapshot_result(h, &r));
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++) cr_expect_eq(((int32_t *)r.data)[4 * i + j], 8 * i + 2 * j);
  OK(cnp_snapshot_destroy(snap));
  cnp_array_free(&f);
  cnp_array_free(&c);
  cnp_array_free(&wide);
}

Test(vectors_snapshot, slots_wrap_around_and_handles_of_other_snapshots)
{
  int64_t n = 3;
  cnp_array x = alloc_nd(CNP_FLOAT64, 1, &n, CNP_ORDER_C);
  cnp_snapshot *one = NULL, *three = NULL;
  OK(cnp_snapshot_create(&one, &x, 1));
  OK(cnp_snapshot_create(&three, &x, 3));
  cr_expect_eq(cnp_snapshot_slots(one), 1);
  cr_expect_eq(cnp_snapshot_slots(three), 3);
  cnp_snapshot_handle h1[2], h3[7];
  ((double *)x.data)[0] = 1.0;
  OK(cnp_snapshot_copy(one, &x, NULL, NULL, &h1[0]));
  ((double *)x.data)[0] = 2.0;
  OK(cnp_snapshot_copy(one, &x, NULL, NULL, &h1[1]));
  cnp_array r;
  EXPECT_FAIL(cnp_snapshot_result(h1[0], &r), CNP_ESTALE, "cnp_snapshot_result");
  OK(cnp_snapshot_result(h1[1], &r));
  cr_expect_eq(((double *)r.data)[0], 2.0);
  for (int k = 0; k < 7; k++) {
    ((double *)x.data)[1] = k;
    OK(cnp_snapshot_copy(three, &x, NULL, NULL, &h3[k]));
  }
  for (int k = 0; k < 7; k++) {
    if (k < 4) {
      EXPECT_FAIL(cnp_snapshot_result(h3[k], &r), CNP_ESTALE, "cnp_snapshot_result");
    } else {
      OK(cnp_snapshot_result(h3[k], &r));
      cr_expect_eq(((double *)r.data)[1], (double)k, "copy %d", k);
    }
  }
  /* A forged handle: right owner and slot, a generation never issued. */
  cnp_snapshot_handle forged = h3[6];
  forged.generation += 100;
  cr_expect_neq(cnp_snapshot_result(forged, &r), CNP_OK);
  forged = h3[6];
  forged.slot = 99;
  cr_expect_neq(cnp_snapshot_result(forged, &r), CNP_OK);
  /* Handles of a destroyed snapshot. */
  OK(cnp_snapshot_destroy(one));
  EXPECT_FAIL(cnp_snapshot_result(h1[1], &r), CNP_ESTATE, "cnp_snapshot_result");
  EXPECT_FAIL(cnp_snapshot_copy(one, &x, NULL, NULL, &h1[0]), CNP_ESTATE, "cnp_snapshot_copy");
  EXPECT_FAIL(cnp_snapshot_destroy(one), CNP_ESTATE, "cnp_snapshot_destroy");
  OK(cnp_snapshot_result(h3[6], &r));
  /* Too many slots (the docs say at most 64). */
  cnp_snapshot *big = NULL;
  cnp_status st = cnp_snapshot_create(&big, &x, 65);
  cr_expect(st == CNP_ERANGE || st == CNP_EINVAL, "65 slots: %s", cnp_status_name(st));
  cr_expect(strstr(cnp_last_error(), "cnp_snapshot_create") != NULL);
  cr_expect_null(big);
  OK(cnp_snapshot_create(&big, &x, 64));
  cr_expect_eq(cnp_snapshot_slots(big), 64);
  OK(cnp_snapshot_destroy(big));
  OK(cnp_snapshot_destroy(three));
  cnp_array_free(&x);
}

Test(vectors_snapshot, producer_from_another_backend_rejected)
{
  int64_t n = 2;
  cnp_array x = alloc_nd(CNP_FLOAT32, 1, &n, CNP_ORDER_C);
  cnp_snapshot *snap = NULL;
  OK(cnp_snapshot_create(&snap, &x, 0));
  cnp_snapshot_handle h;
  /* A wrong-kind producer stream (an event passed as a stream). */
  cnp_event *e = NULL;
  OK(cnp_event_create(&e, 0));
  EXPECT_FAIL(cnp_snapshot_copy(snap, &x, (cnp_stream *)e, NULL, &h), CNP_EINVAL,
              "cnp_snapshot_copy");
  /* A freed field. */
  cnp_array dead = alloc_nd(CNP_FLOAT32, 1, &n, CNP_ORDER_C), copy = dead;
  cnp_array_free(&dead);
  EXPECT_FAIL(cnp_snapshot_copy(snap, &copy, NULL, NULL, &h), CNP_ESTATE, "cnp_snapshot_copy");
  OK(cnp_event_destroy(e));
  OK(cnp_snapshot_destroy(snap));
  cnp_array_free(&x);
}

/* ---- mirrors ------------------------------------------------------------------------ */

Test(vectors_mirror, host_mirror_is_the_host_array)
{
  int32_t mine[2][3] = {{1, 2, 3}, {4, 5, 6}};
  int64_t sh[2] = {2, 3};
  cnp_array h;
  OK(cnp_array_wrap(&h, mine, CNP_BACKEND_HOST, 0, CNP_INT32, 2, sh, NULL));
  cnp_mirror *m = NULL;
  OK(cnp_mirror_create(&m, &h));
  cnp_array d;
  OK(cnp_mirror_device(m, &d));
  cr_expect_eq(d.ndim, 2);
  cr_expect(d.shape[0] == 2 && d.shape[1] == 3);
  cr_expect_eq(d.dtype, CNP_INT32);
  cr_expect_eq(d.backend, CNP_BACKEND_HOST);
  cr_expect_eq(d.data, (void *)mine, "host backend: the mirror is the host array");
  cnp_transfer_scope f;
  OK(cnp_transfers_forbid_begin(&f));
  OK(cnp_mirror_to_device(m, NULL));
  OK(cnp_mirror_to_host(m, NULL, NULL));
  OK(cnp_transfers_forbid_end(&f, NULL));
  EXPECT_FAIL(cnp_mirror_device(m, NULL), CNP_EINVAL, "cnp_mirror_device");
  cnp_mirror *m2 = (cnp_mirror *)(uintptr_t)1;
  EXPECT_FAIL(cnp_mirror_create(&m2, NULL), CNP_EINVAL, "cnp_mirror_create");
  cr_expect_null(m2, "a failed create leaves its output NULL");
  OK(cnp_mirror_destroy(m));
  EXPECT_FAIL(cnp_mirror_destroy(m), CNP_ESTATE, "cnp_mirror_destroy");
}

/* ---- transfer accounting ------------------------------------------------------------ */

Test(vectors_transfer, nested_scopes_of_both_kinds)
{
  cnp_transfer_scope outer, inner, f;
  cnp_transfer_counts co, ci, cf;
  OK(cnp_transfers_begin(&outer));
  cnp_transfers_note(CNP_XFER_H2D, 10, "a");
  OK(cnp_transfers_forbid_begin(&f));
  cnp_transfers_note(CNP_XFER_D2D, 5, "local");
  cnp_transfers_note(CNP_XFER_CONVERSION, 0, "conv");
  cnp_transfers_note(CNP_XFER_FALLBACK, 0, "fb");
  OK(cnp_transfers_begin(&inner));
  cnp_transfers_note(CNP_XFER_D2D, 3, "local2");
  OK(cnp_transfers_end(&inner, &ci));
  OK(cnp_transfers_forbid_end(&f, &cf));      /* markers and local copies are allowed */
  cnp_transfers_note(CNP_XFER_D2H, 20, "b");
  OK(cnp_transfers_end(&outer, &co));
  cr_expect_eq(ci.d2d_bytes, 3u);
  cr_expect_eq(ci.d2d_calls, 1u);
  cr_expect_eq(cf.d2d_bytes, 8u);
  cr_expect_eq(cf.conversions, 1u);
  cr_expect_eq(cf.fallbacks, 1u);
  cr_expect_eq(cf.h2d_bytes + cf.d2h_bytes, 0u);
  cr_expect_eq(co.h2d_bytes, 10u);
  cr_expect_eq(co.d2h_bytes, 20u);
  cr_expect_eq(co.d2d_bytes, 8u);
  cr_expect_eq(co.h2d_calls + co.d2h_calls, 2u);
  /* A forbid scope nested in a counting scope fails on the transfer inside it only; the
  ** outer scope still counts it. */
  OK(cnp_transfers_begin(&outer));
  OK(cnp_transfers_forbid_begin(&f));
  cnp_transfers_note(CNP_XFER_H2D, 4, "upload_in_forbid");
  EXPECT_FAIL(cnp_transfers_forbid_end(&f, &cf), CNP_ETRANSFER, "upload_in_forbid");
  OK(cnp_transfers_end(&outer, &co));
  cr_expect_eq(co.h2d_bytes, 4u);
  /* Ending a scope twice is an error, not a crash. */
  cr_expect_neq(cnp_transfers_end(&outer, &co), CNP_OK);
  /* A transfer before the forbid scope began does not fail it. */
  OK(cnp_transfers_begin(&outer));
  cnp_transfers_note(CNP_XFER_H2D, 4, "before");
  OK(cnp_transfers_forbid_begin(&f));
  OK(cnp_transfers_forbid_end(&f, NULL));
  OK(cnp_transfers_end(&outer, NULL));
}

Test(vectors_transfer, copies_count_their_payload_and_conversions)
{
  int64_t sh[2] = {4, 5};
  cnp_array c = alloc_nd(CNP_COMPLEX64, 2, sh, CNP_ORDER_C);
  cnp_array c2 = alloc_nd(CNP_COMPLEX64, 2, sh, CNP_ORDER_C);
  cnp_array f = alloc_nd(CNP_COMPLEX64, 2, sh, CNP_ORDER_F);
  cnp_transfer_scope sc;
  cnp_transfer_counts got;
  OK(cnp_transfers_begin(&sc));
  OK(cnp_array_copy(&c2, &c, NULL));
  OK(cnp_transfers_end(&sc, &got));
  cr_expect_eq(got.d2d_bytes, 160u);
  cr_expect_eq(got.conversions, 0u, "same layout: no conversion");
  OK(cnp_transfers_begin(&sc));
  OK(cnp_array_copy(&f, &c, NULL));
  OK(cnp_transfers_end(&sc, &got));
  cr_expect_eq(got.d2d_bytes, 160u);
  cr_expect_eq(got.conversions, 1u, "C -> F: one conversion marker");
  OK(cnp_transfers_begin(&sc));
  OK(cnp_array_fill_zero(&c, NULL));
  OK(cnp_transfers_end(&sc, &got));
  cr_expect_eq(got.h2d_bytes + got.d2h_bytes, 0u);
  /* Off any scope the counters do not move. */
  cnp_transfer_counts a, b;
  cnp_transfers_read(&a);
  OK(cnp_array_copy(&f, &c, NULL));
  cnp_transfers_read(&b);
  cr_expect_eq(memcmp(&a, &b, sizeof a), 0);
  cnp_array_free(&c);
  cnp_array_free(&c2);
  cnp_array_free(&f);
}

/* ---- MPI staging: the no-device path -------------------------------------------------- */

Test(vectors_mpi, synchronize_for_mpi_without_cuda)
{
  if (cnp_cuda_available(NULL)) cr_skip_test("a CUDA device is usable here");
  cnp_array d;
  int64_t n = 4;
  OK(cnp_array_wrap(&d, (void *)(uintptr_t)0x100000, CNP_BACKEND_CUDA, 0, CNP_FLOAT64, 1, &n,
                    NULL));
  cnp_clear_error();
  cnp_status st = cnp_synchronize_for_mpi(&d, NULL, NULL);
  /* EUNSUPPORTED in a build without MPI; otherwise CUDA is unavailable, with the reason. */
  cr_expect(st == CNP_EUNAVAILABLE || st == CNP_EUNSUPPORTED, "got %s (%s)", cnp_status_name(st),
            cnp_last_error());
  cr_expect(strstr(cnp_last_error(), "cnp_synchronize_for_mpi") != NULL, "%s", cnp_last_error());
  cnp_array h;
  OK(cnp_array_alloc_on(&h, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &n, CNP_ORDER_C, 0));
  st = cnp_synchronize_for_mpi(&h, NULL, NULL);
  cr_expect(st == CNP_OK || st == CNP_EUNSUPPORTED, "host array: %s", cnp_status_name(st));
  cnp_array_free(&h);
}
