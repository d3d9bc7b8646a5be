/*
** test_brief.c — black-box checks of the design brief's "Reference behaviour" lines
** (/work/shared/design/cnp.md), written as an outside tester would: public headers only
** (cnp/cnp.h), host backend, small hand-checked inputs. Each Test names the brief line it
** covers; edge cases a tester tries (n = 0, n = 1, NULL arguments, wrong dtype/shape
** outputs, aliasing, mixed backends, stale and wrong-kind handles, re-recorded events,
** status strings and the error text after each failure) are here too.
*/
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cnp/cnp.h"
#include "test_blackbox.h"

static cnp_array vec(cnp_dtype t, int64_t n)
{
  cnp_array a;
  OK(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, t, 1, &n, CNP_ORDER_C, 0));
  return a;
}

static cnp_array arr2(cnp_dtype t, int64_t d0, int64_t d1, cnp_order o)
{
  int64_t shape[2] = {d0, d1};
  cnp_array a;
  OK(cnp_array_alloc_on(&a, CNP_BACKEND_HOST, 0, t, 2, shape, o, 0));
  return a;
}

static cnp_workspace *host_ws(int64_t cap, int64_t key_limit)
{
  cnp_workspace *ws = NULL;
  OK(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, cap, key_limit, 0));
  return ws;
}

/* ---- status codes and error detail ----------------------------------------------------- */

Test(brief_status, every_code_has_distinct_text_and_name)
{
  static const cnp_status codes[] = {
#define C_(name, code, text) CNP_##name,
      CNP_STATUS_MAP(C_)
#undef C_
  };
  size_t n = sizeof codes / sizeof codes[0];
  cr_expect_eq(n, 23u);
  for (size_t i = 0; i < n; i++) {
    const char *s = cnp_status_string(codes[i]), *nm = cnp_status_name(codes[i]);
    cr_assert(s != NULL && nm != NULL);
    cr_expect(s[0] != '\0' && strncmp(nm, "CNP_", 4) == 0);
    cr_expect(strcmp(s, "unknown status") != 0, "%s has no text", nm);
    for (size_t j = 0; j < i; j++) {
      cr_expect(strcmp(s, cnp_status_string(codes[j])) != 0, "%s duplicates a text", nm);
      cr_expect(strcmp(nm, cnp_status_name(codes[j])) != 0);
    }
  }
  cr_expect_eq(CNP_OK, 0);
  cr_expect_str_eq(cnp_status_string(CNP_EINVAL), "invalid argument");
  cr_expect(cnp_status_string((cnp_status)-1000) != NULL);
  cr_expect(cnp_status_name((cnp_status)7) != NULL);
}

Test(brief_status, last_error_follows_each_failure)
{
  cnp_clear_error();
  cr_expect_str_eq(cnp_last_error(), "");
  cnp_array a = vec(CNP_FLOAT64, 4), b = vec(CNP_FLOAT64, 3);
  EXPECT_FAIL(cnp_array_copy(&a, &b, NULL), CNP_ESHAPE, "cnp_array_copy");
  cnp_array c = vec(CNP_INT32, 4);
  EXPECT_FAIL(cnp_array_copy(&a, &c, NULL), CNP_EDTYPE, "cnp_array_copy");
  /* A success leaves the earlier detail alone or clears it; never a bogus new error. */
  OK(cnp_array_copy(&a, &a, NULL));
  EXPECT_FAIL(cnp_stream_create(NULL), CNP_EINVAL, "cnp_stream_create");
  cnp_array_free(&a);
  cnp_array_free(&b);
  cnp_array_free(&c);
}

/* ---- Backends --------------------------------------------------------------------------- */

Test(brief_backend, strict_cuda_keeps_previous_nonstrict_falls_back)
{
  unsetenv("CNP_BACKEND");
  const char *reason = NULL;
  if (cnp_cuda_available(&reason)) cr_skip_test("a CUDA device is usable here");
  cr_assert(reason != NULL && reason[0] != '\0');
  const char *again = NULL;
  cnp_cuda_available(&again);
  cr_expect_eq(reason, again, "the reason is cached (same static string)");
  OK(cnp_backend_select(CNP_BACKEND_HOST, 1));
  EXPECT_FAIL(cnp_backend_select(CNP_BACKEND_CUDA, 1), CNP_EUNAVAILABLE, reason);
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST, "previous backend stays");
  cnp_transfer_scope sc;
  cnp_transfer_counts c;
  OK(cnp_transfers_begin(&sc));
  OK(cnp_backend_select(CNP_BACKEND_CUDA, 0));
  OK(cnp_transfers_end(&sc, &c));
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST);
  cr_expect_eq(c.fallbacks, 1u, "fallback marker");
  cr_expect_eq(c.h2d_bytes + c.d2h_bytes + c.d2d_bytes, 0u, "markers carry no bytes");
  /* The same call sites then run on the host backend. */
  cnp_stream *s = NULL;
  OK(cnp_stream_create(&s));
  cr_expect_eq(cnp_stream_backend(s), CNP_BACKEND_HOST);
  OK(cnp_stream_destroy(s));
}

Test(brief_backend, env_forces_choice)
{
  setenv("CNP_BACKEND", "host", 1);
  OK(cnp_backend_select(CNP_BACKEND_CUDA, 1));     /* forced to host: strict succeeds */
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST);
  if (!cnp_cuda_available(NULL)) {
    setenv("CNP_BACKEND", "cuda", 1);
    EXPECT_FAIL(cnp_backend_select(CNP_BACKEND_HOST, 1), CNP_EUNAVAILABLE, "");
    cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST);
  }
  unsetenv("CNP_BACKEND");
}

Test(brief_backend, info_json_versions_device_limits)
{
  size_t needed = 0;
  EXPECT_FAIL(cnp_backend_info(NULL, 0, &needed), CNP_EOVERFLOW, "");
  cr_assert(needed > 10);
  char *buf = malloc(needed);
  cr_assert(buf);
  size_t needed2 = 0;
  OK(cnp_backend_info(buf, needed, &needed2));
  cr_expect_eq(needed2, needed);
  cr_expect_eq(strlen(buf) + 1, needed);
  cr_expect_eq(buf[0], '{');
  cr_expect_eq(buf[strlen(buf) - 1], '}');
  const char *keys[] = {"\"cnp\"", "\"version\"", "\"cuda\"", "\"nvrtc\"", "\"mpi\"",
                        "\"device\"", "\"backend\""};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    cr_expect(strstr(buf, keys[i]) != NULL, "%s missing in %s", keys[i], buf);
  cr_expect(strstr(buf, cnp_version_string()) != NULL);
  /* A too-small buffer is still NUL-terminated. */
  char small[8];
  EXPECT_FAIL(cnp_backend_info(small, sizeof small, NULL), CNP_EOVERFLOW, "");
  cr_expect(memchr(small, '\0', sizeof small) != NULL);
  free(buf);
}

/* ---- Streams and events ----------------------------------------------------------------- */

Test(brief_stream, create_once_reuse_every_step)
{
  cnp_stream *a = NULL, *b = NULL;
  cnp_event *e = NULL;
  OK(cnp_stream_create(&a));
  OK(cnp_stream_create(&b));
  OK(cnp_event_create(&e, CNP_EVENT_DEFAULT));
  cr_expect_eq(cnp_stream_device(a), 0);
  cnp_array x = vec(CNP_FLOAT64, 16), y = vec(CNP_FLOAT64, 16);
  for (int step = 0; step < 200; step++) {
    ((double *)x.data)[step % 16] = step;
    OK(cnp_array_copy(&y, &x, a));
    OK(cnp_event_record(e, a));           /* re-recorded every step */
    OK(cnp_stream_wait_event(b, e));
    int done = 0;
    OK(cnp_event_done(e, &done));
    cr_assert_eq(done, 1, "host events complete when recorded");
    OK(cnp_stream_done(b, &done));
    cr_assert_eq(done, 1);
  }
  OK(cnp_stream_synchronize(a));
  OK(cnp_event_synchronize(e));
  cr_expect_eq(memcmp(x.data, y.data, 16 * sizeof(double)), 0);
  OK(cnp_device_synchronize());
  /* Re-recording on another stream of the same device is fine too. */
  OK(cnp_event_record(e, b));
  OK(cnp_stream_wait_event(a, e));
  cnp_array_free(&x);
  cnp_array_free(&y);
  OK(cnp_event_destroy(e));
  OK(cnp_stream_destroy(a));
  OK(cnp_stream_destroy(b));
}

Test(brief_stream, timing_disabled_by_default)
{
  cnp_stream *s = NULL;
  cnp_event *e0 = NULL, *e1 = NULL, *t0 = NULL, *t1 = NULL;
  OK(cnp_stream_create(&s));
  OK(cnp_event_create(&e0, CNP_EVENT_DEFAULT));
  OK(cnp_event_create(&e1, 0));
  OK(cnp_event_create(&t0, CNP_EVENT_TIMING));
  OK(cnp_event_create(&t1, CNP_EVENT_TIMING));
  float ms = -1;
  EXPECT_FAIL(cnp_event_elapsed_ms(t0, t1, &ms), CNP_ESTATE, "cnp_event_elapsed_ms");
  OK(cnp_event_record(e0, s));
  OK(cnp_event_record(e1, s));
  OK(cnp_event_record(t0, s));
  OK(cnp_event_record(t1, s));
  EXPECT_FAIL(cnp_event_elapsed_ms(e0, e1, &ms), CNP_EINVAL, "cnp_event_elapsed_ms");
  EXPECT_FAIL(cnp_event_elapsed_ms(t0, e1, &ms), CNP_EINVAL, "cnp_event_elapsed_ms");
  OK(cnp_event_elapsed_ms(t0, t1, &ms));
  cr_expect(ms >= 0.0f);
  OK(cnp_event_record(t0, s));          /* re-record: still measurable */
  OK(cnp_event_record(t1, s));
  OK(cnp_event_elapsed_ms(t0, t1, &ms));
  cr_expect(ms >= 0.0f);
  EXPECT_FAIL(cnp_event_elapsed_ms(t0, t1, NULL), CNP_EINVAL, "cnp_event_elapsed_ms");
  cnp_event_destroy(e0);
  cnp_event_destroy(e1);
  cnp_event_destroy(t0);
  cnp_event_destroy(t1);
  cnp_stream_destroy(s);
}

Test(brief_stream, stale_wrong_kind_and_null_handles)
{
  cnp_stream *s = NULL;
  cnp_event *e = NULL;
  OK(cnp_stream_create(&s));
  OK(cnp_event_create(&e, 0));
  EXPECT_FAIL(cnp_event_create(NULL, 0), CNP_EINVAL, "cnp_event_create");
  EXPECT_FAIL(cnp_stream_synchronize(NULL), CNP_EINVAL, "cnp_stream_synchronize");
  EXPECT_FAIL(cnp_event_record(NULL, s), CNP_EINVAL, "cnp_event_record");
  EXPECT_FAIL(cnp_stream_wait_event(s, NULL), CNP_EINVAL, "cnp_stream_wait_event");
  int done;
  EXPECT_FAIL(cnp_stream_done(s, NULL), CNP_EINVAL, "cnp_stream_done");
  EXPECT_FAIL(cnp_event_done(e, NULL), CNP_EINVAL, "cnp_event_done");
  EXPECT_FAIL(cnp_stream_synchronize((cnp_stream *)e), CNP_EINVAL, "not a stream");
  EXPECT_FAIL(cnp_event_synchronize((cnp_event *)s), CNP_EINVAL, "cnp_event_synchronize");
  OK(cnp_event_destroy(e));
  OK(cnp_stream_destroy(s));
  EXPECT_FAIL(cnp_stream_done(s, &done), CNP_ESTATE, "cnp_stream_done");
  EXPECT_FAIL(cnp_event_done(e, &done), CNP_ESTATE, "cnp_event_done");
  EXPECT_FAIL(cnp_stream_destroy(s), CNP_ESTATE, "cnp_stream_destroy");
  EXPECT_FAIL(cnp_event_destroy(e), CNP_ESTATE, "cnp_event_destroy");
}

/* ---- Snapshots and mirrors -------------------------------------------------------------- */

Test(brief_snapshot, default_two_slots_reuse_makes_stale)
{
  cnp_array rho = vec(CNP_FLOAT64, 5);
  cnp_snapshot *snap = NULL;
  OK(cnp_snapshot_create(&snap, &rho, 0));
  cr_expect_eq(cnp_snapshot_slots(snap), 2, "slots <= 0 means 2");
  cnp_stream *s = NULL;
  cnp_event *e = NULL;
  OK(cnp_stream_create(&s));
  OK(cnp_event_create(&e, 0));
  cnp_snapshot_handle h[3];
  double *r = rho.data;
  for (int k = 0; k < 3; k++) {
    for (int i = 0; i < 5; i++) r[i] = 10.0 * k + i;
    if (k == 0) {
      OK(cnp_snapshot_copy(snap, &rho, s, NULL, &h[k]));     /* after a producer stream */
    } else if (k == 1) {
      OK(cnp_event_record(e, s));
      OK(cnp_snapshot_copy(snap, &rho, NULL, e, &h[k]));     /* after a producer event */
    } else {
      OK(cnp_snapshot_copy(snap, &rho, NULL, NULL, &h[k]));  /* default stream */
    }
    r[0] = -1.0;                 /* the producer goes on: the snapshot keeps its copy */
  }
  cnp_array host;
  EXPECT_FAIL(cnp_snapshot_result(h[0], &host), CNP_ESTALE, "cnp_snapshot_result");
  for (int k = 1; k < 3; k++) {
    OK(cnp_snapshot_result(h[k], &host));
    cr_assert_eq(host.backend, CNP_BACKEND_HOST);
    cr_assert_eq(host.dtype, CNP_FLOAT64);
    cr_assert_eq(host.ndim, 1);
    cr_assert_eq(host.shape[0], 5);
    for (int i = 0; i < 5; i++)
      cr_expect_eq(((double *)host.data)[i], 10.0 * k + i, "copy %d [%d]", k, i);
  }
  /* Results can be read again while the slot is not reused. */
  OK(cnp_snapshot_result(h[2], &host));
  EXPECT_FAIL(cnp_snapshot_copy(snap, &rho, s, e, &h[0]), CNP_EINVAL, "cnp_snapshot_copy");
  OK(cnp_snapshot_destroy(snap));
  EXPECT_FAIL(cnp_snapshot_result(h[2], &host), CNP_ESTATE, "cnp_snapshot_result");
  cnp_event_destroy(e);
  cnp_stream_destroy(s);
  cnp_array_free(&rho);
}

Test(brief_snapshot, binds_to_one_device_and_shape)
{
  cnp_array rho = vec(CNP_FLOAT64, 4);
  cnp_snapshot *snap = NULL;
  OK(cnp_snapshot_create(&snap, &rho, 3));
  cr_expect_eq(cnp_snapshot_slots(snap), 3);
  cnp_snapshot_handle h;
  cnp_array dev = cuda_view(CNP_FLOAT64, 4);
  EXPECT_FAIL(cnp_snapshot_copy(snap, &dev, NULL, NULL, &h), CNP_EDEVICE, "cnp_snapshot_copy");
  cnp_array other = vec(CNP_FLOAT64, 5), f32 = vec(CNP_FLOAT32, 4);
  EXPECT_FAIL(cnp_snapshot_copy(snap, &other, NULL, NULL, &h), CNP_ESHAPE, "cnp_snapshot_copy");
  EXPECT_FAIL(cnp_snapshot_copy(snap, &f32, NULL, NULL, &h), CNP_EDTYPE, "cnp_snapshot_copy");
  EXPECT_FAIL(cnp_snapshot_copy(snap, NULL, NULL, NULL, &h), CNP_EINVAL, "cnp_snapshot_copy");
  EXPECT_FAIL(cnp_snapshot_copy(snap, &rho, NULL, NULL, NULL), CNP_EINVAL, "cnp_snapshot_copy");
  EXPECT_FAIL(cnp_snapshot_copy(NULL, &rho, NULL, NULL, &h), CNP_EINVAL, "cnp_snapshot_copy");
  cnp_snapshot_handle never = {0};
  cnp_array v;
  EXPECT_FAIL(cnp_snapshot_result(never, &v), CNP_EINVAL, "cnp_snapshot_result");
  EXPECT_FAIL(cnp_snapshot_create(NULL, &rho, 2), CNP_EINVAL, "cnp_snapshot_create");
  cnp_snapshot *z = NULL;
  EXPECT_FAIL(cnp_snapshot_create(&z, NULL, 2), CNP_EINVAL, "cnp_snapshot_create");
  cr_expect_null(z);
  OK(cnp_snapshot_destroy(snap));
  /* Zero-size fields snapshot fine. */
  cnp_array empty = vec(CNP_INT32, 0);
  OK(cnp_snapshot_create(&z, &empty, 1));
  OK(cnp_snapshot_copy(z, &empty, NULL, NULL, &h));
  OK(cnp_snapshot_result(h, &v));
  cr_expect_eq(v.shape[0], 0);
  OK(cnp_snapshot_destroy(z));
  cnp_array_free(&rho);
  cnp_array_free(&other);
  cnp_array_free(&f32);
  cnp_array_free(&empty);
}

Test(brief_mirror, host_backend_mirror_to_host_to_device)
{
  double mine[6] = {1, 2, 3, 4, 5, 6};
  int64_t n = 6;
  cnp_array h;
  OK(cnp_array_wrap(&h, mine, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &n, NULL));
  cnp_mirror *m = NULL;
  cnp_transfer_scope sc;
  cnp_transfer_counts c;
  OK(cnp_transfers_begin(&sc));
  OK(cnp_mirror_create(&m, &h));
  cnp_array d;
  OK(cnp_mirror_device(m, &d));
  cr_expect_eq(d.shape[0], 6);
  cr_expect_eq(d.dtype, CNP_FLOAT64);
  ((double *)d.data)[2] = 30.0;            /* "device" work */
  cnp_stream *s = NULL;
  OK(cnp_stream_create(&s));
  OK(cnp_mirror_to_host(m, s, NULL));
  cr_expect_eq(mine[2], 30.0);
  mine[4] = 50.0;                          /* CPU work by the other library */
  OK(cnp_mirror_to_device(m, s));
  OK(cnp_mirror_to_host(m, NULL, NULL));
  cr_expect_eq(((double *)d.data)[4], 50.0);
  OK(cnp_transfers_end(&sc, &c));
  cr_expect_eq(c.h2d_bytes + c.d2h_bytes, 0u, "host mirror moves nothing across");
  cnp_event *e = NULL;
  OK(cnp_event_create(&e, 0));
  OK(cnp_event_record(e, s));
  OK(cnp_mirror_to_host(m, NULL, e));
  EXPECT_FAIL(cnp_mirror_to_host(m, s, e), CNP_EINVAL, "cnp_mirror_to_host");
  EXPECT_FAIL(cnp_mirror_to_host(NULL, s, NULL), CNP_EINVAL, "cnp_mirror_to_host");
  EXPECT_FAIL(cnp_mirror_create(NULL, &h), CNP_EINVAL, "cnp_mirror_create");
  OK(cnp_mirror_destroy(m));
  EXPECT_FAIL(cnp_mirror_to_device(m, s), CNP_ESTATE, "cnp_mirror_to_device");
  cnp_event_destroy(e);
  cnp_stream_destroy(s);
}

/* ---- Transfer accounting ---------------------------------------------------------------- */

Test(brief_transfer, counting_and_forbid_scopes)
{
  cnp_array a = arr2(CNP_FLOAT32, 3, 4, CNP_ORDER_C), b = arr2(CNP_FLOAT32, 3, 4, CNP_ORDER_F);
  cnp_array c = arr2(CNP_FLOAT32, 3, 4, CNP_ORDER_C);
  cnp_transfer_counts before, after, got;
  cnp_transfers_read(&before);
  OK(cnp_array_copy(&c, &a, NULL));         /* outside any scope: not counted */
  cnp_transfers_read(&after);
  cr_expect_eq(after.d2d_bytes, before.d2d_bytes);
  cnp_transfer_scope sc;
  OK(cnp_transfers_begin(&sc));
  OK(cnp_array_copy(&c, &a, NULL));         /* host-local copy: 48 B device-local */
  OK(cnp_array_copy(&b, &a, NULL));         /* C -> F: a conversion too */
  cnp_transfers_note(CNP_XFER_H2D, 100, "user upload");
  cnp_transfers_note(CNP_XFER_D2H, 7, "user download");
  OK(cnp_transfers_end(&sc, &got));
  cr_expect_eq(got.d2d_bytes, 96u);
  cr_expect_eq(got.d2d_calls >= 2, 1);
  cr_expect(got.conversions >= 1, "C->F copy is a conversion");
  cr_expect_eq(got.h2d_bytes, 100u);
  cr_expect_eq(got.h2d_calls, 1u);
  cr_expect_eq(got.d2h_bytes, 7u);
  cr_expect_eq(got.d2h_calls, 1u);
  /* Device-local copies are allowed in a forbid scope; a host/device transfer is not. */
  cnp_transfer_scope f;
  OK(cnp_transfers_forbid_begin(&f));
  OK(cnp_array_copy(&c, &a, NULL));
  OK(cnp_transfers_forbid_end(&f, &got));
  cr_expect_eq(got.d2d_bytes, 48u);
  OK(cnp_transfers_forbid_begin(&f));
  cnp_transfers_note(CNP_XFER_D2H, 8, "my_offender");
  EXPECT_FAIL(cnp_transfers_forbid_end(&f, NULL), CNP_ETRANSFER, "my_offender");
  /* Mismatched ends and NULL scopes are errors, not crashes. */
  EXPECT_FAIL(cnp_transfers_end(NULL, &got), CNP_EINVAL, "cnp_transfers_end");
  EXPECT_FAIL(cnp_transfers_begin(NULL), CNP_EINVAL, "cnp_transfers_begin");
  cnp_transfer_scope never;
  memset(&never, 0, sizeof never);
  cr_expect_neq(cnp_transfers_end(&never, &got), CNP_OK);
  cnp_array_free(&a);
  cnp_array_free(&b);
  cnp_array_free(&c);
}

Test(brief_transfer, helpers_report_their_payload)
{
  /* Snapshot copies on the host backend are device-local copies of the field's bytes. */
  cnp_array f = vec(CNP_INT64, 10);
  cnp_snapshot *snap = NULL;
  OK(cnp_snapshot_create(&snap, &f, 2));
  cnp_transfer_scope sc;
  cnp_transfer_counts got;
  cnp_snapshot_handle h;
  OK(cnp_transfers_begin(&sc));
  OK(cnp_snapshot_copy(snap, &f, NULL, NULL, &h));
  OK(cnp_array_fill_zero(&f, NULL));
  OK(cnp_transfers_end(&sc, &got));
  cr_expect_eq(got.d2d_bytes >= 80u, 1, "snapshot payload counted (%llu)",
               (unsigned long long)got.d2d_bytes);
  cr_expect_eq(got.h2d_bytes + got.d2h_bytes, 0u);
  cnp_snapshot_destroy(snap);
  cnp_array_free(&f);
}

/* ---- Algorithms: compaction ------------------------------------------------------------- */

Test(brief_compact, stable_in_place_with_component_major)
{
  enum { N = 7 };
  cnp_array mask = vec(CNP_BOOL, N), x = vec(CNP_FLOAT64, N);
  cnp_array v = arr2(CNP_FLOAT32, 3, N, CNP_ORDER_C);      /* component-major (3, N) */
  cnp_array w = arr2(CNP_INT32, N, 2, CNP_ORDER_C);        /* rows of 2 */
  const unsigned char keep[N] = {0, 1, 7, 0, 1, 0, 255};    /* any nonzero byte is true */
  memcpy(mask.data, keep, N);
  for (int i = 0; i < N; i++) {
    ((double *)x.data)[i] = i;
    for (int c = 0; c < 3; c++) ((float *)v.data)[c * N + i] = (float)(100 * c + i);
    ((int32_t *)w.data)[2 * i] = i;
    ((int32_t *)w.data)[2 * i + 1] = -i;
  }
  cnp_workspace *ws = host_ws(N, 0);
  cnp_array arrs[3] = {x, v, w};
  int64_t n = -1;
  OK(cnp_compact_by_mask(&mask, arrs, 3, &n, ws, NULL));
  cr_assert_eq(n, 4);
  const int live[4] = {1, 2, 4, 6};
  for (int j = 0; j < 4; j++) {
    cr_expect_eq(((double *)x.data)[j], live[j]);
    for (int c = 0; c < 3; c++)
      cr_expect_eq(((float *)v.data)[c * N + j], (float)(100 * c + live[j]), "v[%d,%d]", c, j);
    cr_expect_eq(((int32_t *)w.data)[2 * j], live[j]);
    cr_expect_eq(((int32_t *)w.data)[2 * j + 1], -live[j]);
  }
  /* Count only, all false, all true. */
  OK(cnp_compact_by_mask(&mask, NULL, 0, &n, ws, NULL));
  cr_expect_eq(n, 4);
  memset(mask.data, 0, N);
  OK(cnp_compact_by_mask(&mask, arrs, 3, &n, ws, NULL));
  cr_expect_eq(n, 0);
  cnp_workspace_destroy(ws);
  cnp_array_free(&mask);
  cnp_array_free(&x);
  cnp_array_free(&v);
  cnp_array_free(&w);
}

Test(brief_compact, empty_and_single_row)
{
  cnp_workspace *ws = host_ws(4, 0);
  cnp_array m0 = vec(CNP_BOOL, 0), x0 = vec(CNP_FLOAT64, 0);
  int64_t n = -1;
  OK(cnp_compact_by_mask(&m0, &x0, 1, &n, ws, NULL));
  cr_expect_eq(n, 0);
  cnp_array m1 = vec(CNP_BOOL, 1), x1 = vec(CNP_FLOAT64, 1);
  ((unsigned char *)m1.data)[0] = 1;
  ((double *)x1.data)[0] = 42.0;
  OK(cnp_compact_by_mask(&m1, &x1, 1, &n, ws, NULL));
  cr_expect_eq(n, 1);
  cr_expect_eq(((double *)x1.data)[0], 42.0);
  cnp_workspace_destroy(ws);
  cnp_array_free(&m0);
  cnp_array_free(&x0);
  cnp_array_free(&m1);
  cnp_array_free(&x1);
}

Test(brief_compact, rejections)
{
  cnp_workspace *ws = host_ws(8, 0);
  cnp_array mask = vec(CNP_BOOL, 8), x = vec(CNP_FLOAT64, 8), y = vec(CNP_FLOAT64, 5);
  cnp_array imask = vec(CNP_INT32, 8);
  int64_t n;
  EXPECT_FAIL(cnp_compact_by_mask(NULL, &x, 1, &n, ws, NULL), CNP_EINVAL, "cnp_compact_by_mask");
  EXPECT_FAIL(cnp_compact_by_mask(&mask, &x, 1, NULL, ws, NULL), CNP_EINVAL, "cnp_compact_by_mask");
  EXPECT_FAIL(cnp_compact_by_mask(&mask, NULL, 1, &n, ws, NULL), CNP_EINVAL, "cnp_compact_by_mask");
  EXPECT_FAIL(cnp_compact_by_mask(&mask, &x, -1, &n, ws, NULL), CNP_EINVAL, "cnp_compact_by_mask");
  EXPECT_FAIL(cnp_compact_by_mask(&mask, &x, 1, &n, NULL, NULL), CNP_EINVAL, "cnp_compact_by_mask");
  EXPECT_FAIL(cnp_compact_by_mask(&imask, &x, 1, &n, ws, NULL), CNP_EDTYPE, "cnp_compact_by_mask");
  EXPECT_FAIL(cnp_compact_by_mask(&mask, &y, 1, &n, ws, NULL), CNP_ESHAPE, "cnp_compact_by_mask");
  cnp_array twice[2] = {x, x};
  EXPECT_FAIL(cnp_compact_by_mask(&mask, twice, 2, &n, ws, NULL), CNP_EALIAS, "cnp_compact_by_mask");
  cnp_array dev = cuda_view(CNP_FLOAT64, 8);
  EXPECT_FAIL(cnp_compact_by_mask(&mask, &dev, 1, &n, ws, NULL), CNP_EDEVICE, "cnp_compact_by_mask");
  /* Two slices of one buffer that partly overlap; a mask passed as an array too. */
  cnp_array buf = vec(CNP_FLOAT64, 16), lo, hi;
  OK(cnp_array_slice(&lo, &buf, 0, 0, 8));
  OK(cnp_array_slice(&hi, &buf, 0, 4, 12));
  cnp_array overlap[2] = {lo, hi};
  EXPECT_FAIL(cnp_compact_by_mask(&mask, overlap, 2, &n, ws, NULL), CNP_EALIAS, "overlaps");
  EXPECT_FAIL(cnp_compact_by_mask(&mask, &mask, 1, &n, ws, NULL), CNP_EALIAS, "overlaps");
  /* A strided column of an (N, 3) array is neither C- nor F-contiguous; a 2-D mask. */
  cnp_array wide = arr2(CNP_FLOAT64, 8, 3, CNP_ORDER_C), col, m2 = arr2(CNP_BOOL, 2, 4, CNP_ORDER_C);
  OK(cnp_array_slice(&col, &wide, 1, 0, 1));
  EXPECT_FAIL(cnp_compact_by_mask(&mask, &col, 1, &n, ws, NULL), CNP_ELAYOUT, "contiguous");
  EXPECT_FAIL(cnp_compact_by_mask(&m2, &lo, 1, &n, ws, NULL), CNP_ESHAPE, "1-D");
  cnp_array_free(&buf);
  cnp_array_free(&wide);
  cnp_array_free(&m2);
  cnp_array big_mask = vec(CNP_BOOL, 9), big = vec(CNP_FLOAT64, 9);
  EXPECT_FAIL(cnp_compact_by_mask(&big_mask, &big, 1, &n, ws, NULL), CNP_EOVERFLOW, "capacity");
  cnp_workspace_destroy(ws);
  cnp_array_free(&mask);
  cnp_array_free(&x);
  cnp_array_free(&y);
  cnp_array_free(&imask);
  cnp_array_free(&big_mask);
  cnp_array_free(&big);
}

/* ---- Algorithms: sort by key ------------------------------------------------------------ */

Test(brief_sort, stable_order_and_values)
{
  enum { N = 8 };
  const int64_t k0[N] = {3, -2, 3, 0, -2, 7, 0, 3};
  cnp_array keys = vec(CNP_INT64, N), order = vec(CNP_INT64, N);
  cnp_array v = arr2(CNP_FLOAT64, 2, N, CNP_ORDER_C);       /* component-major */
  memcpy(keys.data, k0, sizeof k0);
  for (int i = 0; i < N; i++) {
    ((double *)v.data)[i] = i;
    ((double *)v.data)[N + i] = 10 * i;
  }
  cnp_workspace *ws = host_ws(N, 0);
  OK(cnp_sort_by_key(&keys, &order, &v, 1, 0, ws, NULL));
  const int64_t want_keys[N] = {-2, -2, 0, 0, 3, 3, 3, 7};
  const int64_t want_order[N] = {1, 4, 3, 6, 0, 2, 7, 5};   /* stable */
  for (int i = 0; i < N; i++) {
    cr_expect_eq(((int64_t *)keys.data)[i], want_keys[i], "keys[%d]", i);
    cr_expect_eq(((int64_t *)order.data)[i], want_order[i], "order[%d]", i);
    cr_expect_eq(((double *)v.data)[i], (double)want_order[i]);
    cr_expect_eq(((double *)v.data)[N + i], 10.0 * want_order[i]);
  }
  /* Already sorted: the identity permutation. */
  OK(cnp_sort_by_key(&keys, &order, NULL, 0, 0, ws, NULL));
  for (int i = 0; i < N; i++) cr_expect_eq(((int64_t *)order.data)[i], i);
  cnp_workspace_destroy(ws);
  cnp_array_free(&keys);
  cnp_array_free(&order);
  cnp_array_free(&v);
}

Test(brief_sort, uint64_morton_and_int32_keys)
{
  enum { N = 5 };
  const uint64_t k0[N] = {UINT64_C(0xffffffffffffffff), 5, UINT64_C(0x8000000000000000), 5, 0};
  cnp_array keys = vec(CNP_UINT64, N), order = vec(CNP_INT64, N);
  memcpy(keys.data, k0, sizeof k0);
  cnp_workspace *ws = host_ws(N, 0);
  OK(cnp_sort_by_key(&keys, &order, NULL, 0, 0, ws, NULL));
  const uint64_t wk[N] = {0, 5, 5, UINT64_C(0x8000000000000000), UINT64_C(0xffffffffffffffff)};
  const int64_t wo[N] = {4, 1, 3, 2, 0};
  for (int i = 0; i < N; i++) {
    cr_expect_eq(((uint64_t *)keys.data)[i], wk[i], "keys[%d]", i);
    cr_expect_eq(((int64_t *)order.data)[i], wo[i], "order[%d]", i);
  }
  cnp_array k32 = vec(CNP_INT32, N);
  const int32_t k1[N] = {2, 1, 2, 0, 1};
  memcpy(k32.data, k1, sizeof k1);
  OK(cnp_sort_by_key(&k32, &order, NULL, 0, 3, ws, NULL));   /* with a key limit */
  const int32_t wk1[N] = {0, 1, 1, 2, 2};
  const int64_t wo1[N] = {3, 1, 4, 0, 2};
  for (int i = 0; i < N; i++) {
    cr_expect_eq(((int32_t *)k32.data)[i], wk1[i]);
    cr_expect_eq(((int64_t *)order.data)[i], wo1[i]);
  }
  cnp_workspace_destroy(ws);
  cnp_array_free(&keys);
  cnp_array_free(&order);
  cnp_array_free(&k32);
}

Test(brief_sort, edges_and_rejections)
{
  cnp_workspace *ws = host_ws(4, 0);
  cnp_array k0 = vec(CNP_INT64, 0), o0 = vec(CNP_INT64, 0);
  OK(cnp_sort_by_key(&k0, &o0, NULL, 0, 0, ws, NULL));
  cnp_array k1 = vec(CNP_INT64, 1), o1 = vec(CNP_INT64, 1);
  ((int64_t *)k1.data)[0] = -9;
  ((int64_t *)o1.data)[0] = 77;
  OK(cnp_sort_by_key(&k1, &o1, NULL, 0, 0, ws, NULL));
  cr_expect_eq(((int64_t *)k1.data)[0], -9);
  cr_expect_eq(((int64_t *)o1.data)[0], 0);
  cnp_array keys = vec(CNP_INT64, 4), order = vec(CNP_INT64, 4), o32 = vec(CNP_INT32, 4);
  cnp_array fk = vec(CNP_FLOAT64, 4), x = vec(CNP_FLOAT64, 4), o3 = vec(CNP_INT64, 3);
  const int64_t kv[4] = {1, 0, 5, 2};
  memcpy(keys.data, kv, sizeof kv);
  EXPECT_FAIL(cnp_sort_by_key(&keys, &order, NULL, 0, 5, ws, NULL), CNP_ERANGE, "5");
  cr_expect_eq(memcmp(keys.data, kv, sizeof kv), 0, "keys unchanged after ERANGE");
  EXPECT_FAIL(cnp_sort_by_key(NULL, &order, NULL, 0, 0, ws, NULL), CNP_EINVAL, "cnp_sort_by_key");
  EXPECT_FAIL(cnp_sort_by_key(&fk, &order, NULL, 0, 0, ws, NULL), CNP_EDTYPE, "cnp_sort_by_key");
  EXPECT_FAIL(cnp_sort_by_key(&keys, &o32, NULL, 0, 0, ws, NULL), CNP_EDTYPE, "cnp_sort_by_key");
  EXPECT_FAIL(cnp_sort_by_key(&keys, &o3, NULL, 0, 0, ws, NULL), CNP_ESHAPE, "cnp_sort_by_key");
  EXPECT_FAIL(cnp_sort_by_key(&keys, &keys, NULL, 0, 0, ws, NULL), CNP_EALIAS, "cnp_sort_by_key");
  EXPECT_FAIL(cnp_sort_by_key(&keys, &order, &keys, 1, 0, ws, NULL), CNP_EALIAS, "cnp_sort_by_key");
  EXPECT_FAIL(cnp_sort_by_key(&keys, &order, NULL, 1, 0, ws, NULL), CNP_EINVAL, "cnp_sort_by_key");
  EXPECT_FAIL(cnp_sort_by_key(&keys, &order, &x, 1, -1, ws, NULL), CNP_EINVAL, "cnp_sort_by_key");
  cnp_array dev = cuda_view(CNP_FLOAT64, 4);
  EXPECT_FAIL(cnp_sort_by_key(&keys, &order, &dev, 1, 0, ws, NULL), CNP_EDEVICE, "cnp_sort_by_key");
  cr_expect_eq(memcmp(keys.data, kv, sizeof kv), 0, "keys unchanged after failures");
  cnp_workspace_destroy(ws);
  cnp_array *all[] = {&k0, &o0, &k1, &o1, &keys, &order, &o32, &fk, &x, &o3};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cnp_array_free(all[i]);
}

/* ---- Algorithms: cell offsets and segment boundaries ------------------------------------ */

Test(brief_offsets, dense_with_empty_cells_and_errors)
{
  const int64_t c0[6] = {0, 0, 2, 2, 2, 4};
  cnp_array cells = vec(CNP_INT64, 6), off = vec(CNP_INT64, 6);
  memcpy(cells.data, c0, sizeof c0);
  OK(cnp_cell_offsets(&cells, 5, &off, NULL, NULL));
  const int64_t want[6] = {0, 2, 2, 5, 5, 6};
  for (int k = 0; k < 6; k++) cr_expect_eq(((int64_t *)off.data)[k], want[k], "offsets[%d]", k);
  /* int32 cells, with a workspace. */
  cnp_array c32 = vec(CNP_INT32, 3);
  const int32_t v32[3] = {1, 1, 3};
  memcpy(c32.data, v32, sizeof v32);
  cnp_workspace *ws = host_ws(8, 0);
  cnp_array off5 = vec(CNP_INT64, 5);
  OK(cnp_cell_offsets(&c32, 4, &off5, ws, NULL));
  const int64_t want5[5] = {0, 0, 2, 2, 3};
  for (int k = 0; k < 5; k++) cr_expect_eq(((int64_t *)off5.data)[k], want5[k]);
  /* No rows: every cell is empty. n_cells = 0: one offset. */
  cnp_array none = vec(CNP_INT64, 0), one = vec(CNP_INT64, 1);
  ((int64_t *)one.data)[0] = 9;
  OK(cnp_cell_offsets(&none, 5, &off, NULL, NULL));
  for (int k = 0; k < 6; k++) cr_expect_eq(((int64_t *)off.data)[k], 0);
  OK(cnp_cell_offsets(&none, 0, &one, NULL, NULL));
  cr_expect_eq(((int64_t *)one.data)[0], 0);
  /* Unsorted, negative, too large, wrong output size or dtype. */
  ((int64_t *)cells.data)[3] = 1;
  EXPECT_FAIL(cnp_cell_offsets(&cells, 5, &off, NULL, NULL), CNP_EORDER, "3");
  memcpy(cells.data, c0, sizeof c0);
  ((int64_t *)cells.data)[0] = -1;
  EXPECT_FAIL(cnp_cell_offsets(&cells, 5, &off, NULL, NULL), CNP_ERANGE, "-1");
  memcpy(cells.data, c0, sizeof c0);
  EXPECT_FAIL(cnp_cell_offsets(&cells, 4, &off5, NULL, NULL), CNP_ERANGE, "4");
  EXPECT_FAIL(cnp_cell_offsets(&cells, 5, &off5, NULL, NULL), CNP_ESHAPE, "cnp_cell_offsets");
  cnp_array offd = vec(CNP_FLOAT64, 6);
  EXPECT_FAIL(cnp_cell_offsets(&cells, 5, &offd, NULL, NULL), CNP_EDTYPE, "cnp_cell_offsets");
  EXPECT_FAIL(cnp_cell_offsets(&cells, -1, &off, NULL, NULL), CNP_EINVAL, "cnp_cell_offsets");
  EXPECT_FAIL(cnp_cell_offsets(NULL, 5, &off, NULL, NULL), CNP_EINVAL, "cnp_cell_offsets");
  EXPECT_FAIL(cnp_cell_offsets(&cells, 5, NULL, NULL, NULL), CNP_EINVAL, "cnp_cell_offsets");
  EXPECT_FAIL(cnp_cell_offsets(&cells, 5, &cells, NULL, NULL), CNP_EALIAS, "cnp_cell_offsets");
  cnp_workspace_destroy(ws);
  cnp_array *all[] = {&cells, &off, &c32, &off5, &none, &one, &offd};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cnp_array_free(all[i]);
}

Test(brief_boundaries, runs_negative_and_morton)
{
  const int64_t k0[7] = {-5, -5, 0, 3, 3, 3, 9};
  cnp_array keys = vec(CNP_INT64, 7), uk = vec(CNP_INT64, 7), st = vec(CNP_INT64, 7),
            sp = vec(CNP_INT64, 7);
  memcpy(keys.data, k0, sizeof k0);
  int64_t count = -1;
  cnp_workspace *ws = host_ws(8, 0);
  OK(cnp_segment_boundaries(&keys, &uk, &st, &sp, &count, ws, NULL));
  cr_assert_eq(count, 4);
  const int64_t wu[4] = {-5, 0, 3, 9}, ws0[4] = {0, 2, 3, 6}, we[4] = {2, 3, 6, 7};
  for (int j = 0; j < 4; j++) {
    cr_expect_eq(((int64_t *)uk.data)[j], wu[j]);
    cr_expect_eq(((int64_t *)st.data)[j], ws0[j]);
    cr_expect_eq(((int64_t *)sp.data)[j], we[j]);
  }
  /* Optional outputs may be NULL. */
  OK(cnp_segment_boundaries(&keys, NULL, NULL, NULL, &count, ws, NULL));
  cr_expect_eq(count, 4);
  /* uint64 Morton keys above 2^63. */
  const uint64_t m0[4] = {UINT64_C(1), UINT64_C(0x8000000000000001), UINT64_C(0x8000000000000001),
                          UINT64_C(0xfffffffffffffff0)};
  cnp_array mk = vec(CNP_UINT64, 4), mu = vec(CNP_UINT64, 4);
  memcpy(mk.data, m0, sizeof m0);
  OK(cnp_segment_boundaries(&mk, &mu, &st, NULL, &count, ws, NULL));
  cr_assert_eq(count, 3);
  cr_expect_eq(((uint64_t *)mu.data)[1], UINT64_C(0x8000000000000001));
  cr_expect_eq(((uint64_t *)mu.data)[2], UINT64_C(0xfffffffffffffff0));
  cr_expect_eq(((int64_t *)st.data)[2], 3);
  /* n = 0 and n = 1. */
  cnp_array e = vec(CNP_INT32, 0), e1 = vec(CNP_INT32, 1), u1 = vec(CNP_INT32, 1);
  OK(cnp_segment_boundaries(&e, NULL, NULL, NULL, &count, ws, NULL));
  cr_expect_eq(count, 0);
  ((int32_t *)e1.data)[0] = -7;
  OK(cnp_segment_boundaries(&e1, &u1, &st, &sp, &count, ws, NULL));
  cr_expect_eq(count, 1);
  cr_expect_eq(((int32_t *)u1.data)[0], -7);
  cr_expect_eq(((int64_t *)st.data)[0], 0);
  cr_expect_eq(((int64_t *)sp.data)[0], 1);
  /* Rejections. */
  EXPECT_FAIL(cnp_segment_boundaries(&keys, &mu, NULL, NULL, &count, ws, NULL), CNP_EDTYPE,
              "cnp_segment_boundaries");
  EXPECT_FAIL(cnp_segment_boundaries(&keys, NULL, NULL, NULL, NULL, ws, NULL), CNP_EINVAL,
              "cnp_segment_boundaries");
  EXPECT_FAIL(cnp_segment_boundaries(&keys, &keys, NULL, NULL, &count, ws, NULL), CNP_EALIAS,
              "cnp_segment_boundaries");
  cnp_array short_st = vec(CNP_INT64, 6);
  EXPECT_FAIL(cnp_segment_boundaries(&keys, NULL, &short_st, NULL, &count, ws, NULL), CNP_ESHAPE,
              "cnp_segment_boundaries");
  cnp_workspace_destroy(ws);
  cnp_array *all[] = {&keys, &uk, &st, &sp, &mk, &mu, &e, &e1, &u1, &short_st};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cnp_array_free(all[i]);
}

/* ---- Algorithms: segment plans and sums ------------------------------------------------- */

Test(brief_plan, drops_negatives_overwrites_out_components)
{
  enum { N = 6, S = 3 };
  const int64_t k0[N] = {2, -1, 0, 2, -7, 0};
  cnp_array keys = vec(CNP_INT64, N);
  memcpy(keys.data, k0, sizeof k0);
  cnp_array v = arr2(CNP_FLOAT64, N, 2, CNP_ORDER_C), out = arr2(CNP_FLOAT64, S, 2, CNP_ORDER_C);
  for (int i = 0; i < N; i++) {
    ((double *)v.data)[2 * i] = i + 1;
    ((double *)v.data)[2 * i + 1] = 100.0 * (i + 1);
  }
  for (int j = 0; j < 2 * S; j++) ((double *)out.data)[j] = 12345.0;   /* overwritten */
  cnp_segment_plan *p = NULL;
  OK(cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, N, S));
  OK(cnp_segment_plan_build(p, &keys, NULL));
  int64_t kept = -1, rows = -1;
  OK(cnp_segment_plan_rows(p, &kept, &rows));
  cr_expect_eq(kept, 4);
  cr_expect_eq(rows, 6);
  /* The plan is a snapshot: changing keys afterwards does not change the sums. */
  ((int64_t *)keys.data)[0] = 1;
  OK(cnp_segment_plan_sum(p, &v, &out, NULL));
  const double want[S][2] = {{3 + 6, 300 + 600}, {0, 0}, {1 + 4, 100 + 400}};
  for (int s = 0; s < S; s++)
    for (int c = 0; c < 2; c++)
      cr_expect_eq(((double *)out.data)[2 * s + c], want[s][c], "out[%d,%d]", s, c);
  /* Summing twice gives the same (overwrite, not accumulate). */
  OK(cnp_segment_plan_sum(p, &v, &out, NULL));
  cr_expect_eq(((double *)out.data)[0], 9.0);
  /* One-off form agrees. */
  memcpy(keys.data, k0, sizeof k0);
  cnp_array out2 = arr2(CNP_FLOAT64, S, 2, CNP_ORDER_C);
  OK(cnp_segment_sum(&v, &keys, S, &out2, NULL));
  cr_expect_eq(memcmp(out.data, out2.data, sizeof(double) * 2 * S), 0);
  OK(cnp_segment_plan_destroy(p));
  cnp_array_free(&keys);
  cnp_array_free(&v);
  cnp_array_free(&out);
  cnp_array_free(&out2);
}

Test(brief_plan, output_dtype_rules)
{
  cr_expect_eq(cnp_segment_sum_dtype(CNP_FLOAT32), CNP_FLOAT32);
  cr_expect_eq(cnp_segment_sum_dtype(CNP_FLOAT64), CNP_FLOAT64);
  cr_expect_eq(cnp_segment_sum_dtype(CNP_COMPLEX64), CNP_COMPLEX64);
  cr_expect_eq(cnp_segment_sum_dtype(CNP_COMPLEX128), CNP_COMPLEX128);
  cr_expect_eq(cnp_segment_sum_dtype(CNP_BOOL), CNP_FLOAT64);
  cr_expect_eq(cnp_segment_sum_dtype(CNP_INT32), CNP_FLOAT64);
  cr_expect_eq(cnp_segment_sum_dtype(CNP_INT64), CNP_FLOAT64);
  cr_expect_eq(cnp_segment_sum_dtype(CNP_UINT64), CNP_FLOAT64);
  cr_expect_eq(cnp_segment_sum_dtype(CNP_FLOAT16), CNP_FLOAT16);

  enum { N = 4096 };
  cnp_array keys = vec(CNP_INT32, N);          /* all in segment 0 */
  cnp_segment_plan *p = NULL;
  OK(cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, N, 1));
  OK(cnp_segment_plan_build(p, &keys, NULL));
  /* float16 accumulates in float32: 4096 ones is 4096 (a float16 sum stalls at 2048). */
  cnp_array h = vec(CNP_FLOAT16, N), hout = vec(CNP_FLOAT16, 1);
  for (int i = 0; i < N; i++) ((uint16_t *)h.data)[i] = cnp_float_to_half(1.0f);
  OK(cnp_segment_plan_sum(p, &h, &hout, NULL));
  cr_expect_eq(cnp_half_to_float(((uint16_t *)hout.data)[0]), 4096.0f);
  /* Integers and bools sum into float64. */
  cnp_array iv = vec(CNP_INT64, N), dout = vec(CNP_FLOAT64, 1), bv = vec(CNP_BOOL, N);
  for (int i = 0; i < N; i++) ((int64_t *)iv.data)[i] = INT64_C(1) << 40;
  OK(cnp_segment_plan_sum(p, &iv, &dout, NULL));
  cr_expect_eq(((double *)dout.data)[0], 4096.0 * 1099511627776.0);
  for (int i = 0; i < N; i += 2) ((unsigned char *)bv.data)[i] = 1;
  OK(cnp_segment_plan_sum(p, &bv, &dout, NULL));
  cr_expect_eq(((double *)dout.data)[0], N / 2);
  /* Complex stays complex. */
  cnp_array cv = vec(CNP_COMPLEX64, N), cout = vec(CNP_COMPLEX64, 1);
  for (int i = 0; i < N; i++) {
    ((float *)cv.data)[2 * i] = 1.0f;
    ((float *)cv.data)[2 * i + 1] = -0.5f;
  }
  OK(cnp_segment_plan_sum(p, &cv, &cout, NULL));
  cr_expect_eq(((float *)cout.data)[0], 4096.0f);
  cr_expect_eq(((float *)cout.data)[1], -2048.0f);
  /* Wrong output dtype for each input kind. */
  EXPECT_FAIL(cnp_segment_plan_sum(p, &iv, &cout, NULL), CNP_EDTYPE, "cnp_segment_plan_sum");
  EXPECT_FAIL(cnp_segment_plan_sum(p, &h, &dout, NULL), CNP_EDTYPE, "cnp_segment_plan_sum");
  EXPECT_FAIL(cnp_segment_plan_sum(p, &cv, &dout, NULL), CNP_EDTYPE, "cnp_segment_plan_sum");
  OK(cnp_segment_plan_destroy(p));
  cnp_array *all[] = {&keys, &h, &hout, &iv, &dout, &bv, &cv, &cout};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cnp_array_free(all[i]);
}

Test(brief_plan, rejections_and_stale_handles)
{
  enum { N = 8, S = 4 };
  cnp_array keys = vec(CNP_INT64, N), v = vec(CNP_FLOAT64, N), out = vec(CNP_FLOAT64, S);
  cnp_segment_plan *p = NULL;
  OK(cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, N, S));
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v, &out, NULL), CNP_ESTATE, "cnp_segment_plan_sum");
  ((int64_t *)keys.data)[5] = S;             /* key >= n_segments */
  EXPECT_FAIL(cnp_segment_plan_build(p, &keys, NULL), CNP_ERANGE, "5");
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v, &out, NULL), CNP_ESTATE, "cnp_segment_plan_sum");
  ((int64_t *)keys.data)[5] = 1;
  OK(cnp_segment_plan_build(p, &keys, NULL));
  cnp_array out3 = vec(CNP_FLOAT64, 3), outf = vec(CNP_FLOAT32, S), v7 = vec(CNP_FLOAT64, 7);
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v, &out3, NULL), CNP_ESHAPE, "cnp_segment_plan_sum");
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v, &outf, NULL), CNP_EDTYPE, "cnp_segment_plan_sum");
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v7, &out, NULL), CNP_ESHAPE, "cnp_segment_plan_sum");
  /* Non-contiguous out: every other element of an (S, 2) array. */
  cnp_array wide = arr2(CNP_FLOAT64, S, 2, CNP_ORDER_C), col;
  OK(cnp_array_slice(&col, &wide, 1, 0, 1));
  cnp_array colv = col;
  colv.ndim = 1;                               /* (S,) with stride 16 */
  colv.strides[0] = col.strides[0];
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v, &colv, NULL), CNP_ELAYOUT, "cnp_segment_plan_sum");
  /* out aliasing values. */
  cnp_array head;
  OK(cnp_array_slice(&head, &v, 0, 0, S));
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v, &head, NULL), CNP_EALIAS, "cnp_segment_plan_sum");
  cnp_array dev = cuda_view(CNP_FLOAT64, S);
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v, &dev, NULL), CNP_EDEVICE, "cnp_segment_plan_sum");
  EXPECT_FAIL(cnp_segment_plan_sum(p, NULL, &out, NULL), CNP_EINVAL, "cnp_segment_plan_sum");
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v, NULL, NULL), CNP_EINVAL, "cnp_segment_plan_sum");
  EXPECT_FAIL(cnp_segment_plan_build(p, NULL, NULL), CNP_EINVAL, "cnp_segment_plan_build");
  cnp_array fk = vec(CNP_FLOAT64, N);
  EXPECT_FAIL(cnp_segment_plan_build(p, &fk, NULL), CNP_EDTYPE, "cnp_segment_plan_build");
  cnp_array k9 = vec(CNP_INT64, N + 1);
  EXPECT_FAIL(cnp_segment_plan_build(p, &k9, NULL), CNP_EOVERFLOW, "cnp_segment_plan_build");
  EXPECT_FAIL(cnp_segment_plan_create(NULL, CNP_BACKEND_HOST, 0, N, S), CNP_EINVAL,
              "cnp_segment_plan_create");
  cnp_segment_plan *bad = (cnp_segment_plan *)(uintptr_t)1;
  EXPECT_FAIL(cnp_segment_plan_create(&bad, CNP_BACKEND_HOST, 0, -1, S), CNP_EINVAL,
              "cnp_segment_plan_create");
  cr_expect_null(bad);
  /* One-off sum: same rules. */
  EXPECT_FAIL(cnp_segment_sum(&v, &keys, S, &outf, NULL), CNP_EDTYPE, "cnp_segment_sum");
  EXPECT_FAIL(cnp_segment_sum(&v, &keys, S, &head, NULL), CNP_EALIAS, "cnp_segment_sum");
  /* Stale and wrong-kind handles: destroyed is ESTATE, another kind is EINVAL. */
  cnp_workspace *ws = host_ws(N, 0);
  EXPECT_FAIL(cnp_segment_plan_sum((cnp_segment_plan *)ws, &v, &out, NULL), CNP_EINVAL,
              "not a segment plan");
  int64_t n;
  cnp_array mask = vec(CNP_BOOL, N);
  EXPECT_FAIL(cnp_compact_by_mask(&mask, &v, 1, &n, (cnp_workspace *)p, NULL), CNP_EINVAL,
              "not a workspace");
  size_t bytes;
  EXPECT_FAIL(cnp_workspace_bytes((cnp_workspace *)p, &bytes), CNP_EINVAL, "not a workspace");
  OK(cnp_workspace_destroy(ws));
  EXPECT_FAIL(cnp_workspace_bytes(ws, &bytes), CNP_ESTATE, "cnp_workspace_bytes");
  EXPECT_FAIL(cnp_workspace_destroy(ws), CNP_ESTATE, "cnp_workspace_destroy");
  OK(cnp_segment_plan_destroy(p));
  EXPECT_FAIL(cnp_segment_plan_sum(p, &v, &out, NULL), CNP_ESTATE, "cnp_segment_plan_sum");
  EXPECT_FAIL(cnp_segment_plan_destroy(p), CNP_ESTATE, "cnp_segment_plan_destroy");
  OK(cnp_segment_plan_destroy(NULL));
  OK(cnp_workspace_destroy(NULL));
  cnp_array *all[] = {&keys, &v, &out, &out3, &outf, &v7, &wide, &fk, &k9, &mask};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cnp_array_free(all[i]);
}

Test(brief_plan, empty_and_single_row)
{
  cnp_segment_plan *p = NULL;
  OK(cnp_segment_plan_create(&p, CNP_BACKEND_HOST, 0, 4, 2));
  cnp_array k0 = vec(CNP_INT64, 0), v0 = vec(CNP_FLOAT32, 0), out = vec(CNP_FLOAT32, 2);
  ((float *)out.data)[0] = 5.0f;
  OK(cnp_segment_plan_build(p, &k0, NULL));
  OK(cnp_segment_plan_sum(p, &v0, &out, NULL));
  cr_expect_eq(((float *)out.data)[0], 0.0f, "no rows: zero sums");
  cr_expect_eq(((float *)out.data)[1], 0.0f);
  cnp_array k1 = vec(CNP_INT64, 1), v1 = vec(CNP_FLOAT32, 1);
  ((int64_t *)k1.data)[0] = 1;
  ((float *)v1.data)[0] = 2.5f;
  OK(cnp_segment_plan_build(p, &k1, NULL));
  OK(cnp_segment_plan_sum(p, &v1, &out, NULL));
  cr_expect_eq(((float *)out.data)[0], 0.0f);
  cr_expect_eq(((float *)out.data)[1], 2.5f);
  /* One-off with zero segments and an empty out. */
  cnp_array out0 = vec(CNP_FLOAT32, 0);
  OK(cnp_segment_sum(&v0, &k0, 0, &out0, NULL));
  OK(cnp_segment_plan_destroy(p));
  cnp_array *all[] = {&k0, &v0, &out, &k1, &v1, &out0};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cnp_array_free(all[i]);
}

/* ---- Arrays: NULL arguments and freed views --------------------------------------------- */

Test(brief_arrays, null_arguments_and_use_after_free)
{
  int64_t n = 4;
  cnp_array a;
  EXPECT_FAIL(cnp_array_alloc(NULL, CNP_FLOAT64, 1, &n, CNP_ORDER_C), CNP_EINVAL, "cnp_array_alloc");
  EXPECT_FAIL(cnp_array_alloc(&a, CNP_FLOAT64, 1, NULL, CNP_ORDER_C), CNP_EINVAL, "cnp_array_alloc");
  EXPECT_FAIL(cnp_array_alloc(&a, CNP_DTYPE_COUNT_, 1, &n, CNP_ORDER_C), CNP_EDTYPE,
              "cnp_array_alloc");
  EXPECT_FAIL(cnp_array_free(NULL), CNP_EINVAL, "cnp_array_free");
  EXPECT_FAIL(cnp_array_validate(NULL, "x"), CNP_EINVAL, "");
  EXPECT_FAIL(cnp_array_copy(NULL, NULL, NULL), CNP_EINVAL, "cnp_array_copy");
  EXPECT_FAIL(cnp_array_fill_zero(NULL, NULL), CNP_EINVAL, "cnp_array_fill_zero");
  a = vec(CNP_FLOAT64, 4);
  cnp_array copy = a, b = vec(CNP_FLOAT64, 4);
  OK(cnp_array_free(&a));
  cr_expect_null(a.data);
  EXPECT_FAIL(cnp_array_free(&copy), CNP_ESTATE, "cnp_array_free");
  EXPECT_FAIL(cnp_array_copy(&b, &copy, NULL), CNP_ESTATE, "cnp_array_copy");
  cnp_workspace *ws = host_ws(4, 0);
  int64_t cnt;
  cnp_array mask = vec(CNP_BOOL, 4);
  EXPECT_FAIL(cnp_compact_by_mask(&mask, &copy, 1, &cnt, ws, NULL), CNP_ESTATE,
              "cnp_compact_by_mask");
  cnp_workspace_destroy(ws);
  cnp_array_free(&b);
  cnp_array_free(&mask);
}
