/*
** test_core_backend.c — backend selection (strict / non-strict / CNP_BACKEND), the no-device
** path of the CUDA build for real, devices, and cnp_backend_info() checked by PARSING its
** JSON with the small strict parser below.
*/
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "test_core_util.h"

#ifdef CNP_HAVE_MPI
#include <mpi.h>
#endif

/* ---- a strict JSON parser (RFC 8259) that can fetch the value at a dotted path ---------- */

typedef struct jp {
  const char *s;
  int         err;
} jp;

static void ws(jp *p)
{
  while (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r') p->s++;
}

/* Parse a string; if out != NULL decode it (ASCII \u escapes only) into out[cap]. */
static void jstring(jp *p, char *out, size_t cap)
{
  size_t n = 0;
  if (*p->s != '"') { p->err = 1; return; }
  p->s++;
  while (*p->s != '"') {
    unsigned char c = (unsigned char)*p->s;
    if (c == '\0' || c < 0x20) { p->err = 1; return; }
    if (c == '\\') {
      p->s++;
      switch (*p->s) {
      case '"': case '\\': case '/': c = (unsigned char)*p->s; break;
      case 'b': c = '\b'; break;
      case 'f': c = '\f'; break;
      case 'n': c = '\n'; break;
      case 'r': c = '\r'; break;
      case 't': c = '\t'; break;
      case 'u': {
        unsigned v = 0;
        for (int i = 1; i <= 4; i++) {
          if (!isxdigit((unsigned char)p->s[i])) { p->err = 1; return; }
          v = v * 16 + (unsigned)(isdigit((unsigned char)p->s[i]) ? p->s[i] - '0'
                                                                : (tolower(p->s[i]) - 'a' + 10));
        }
        p->s += 4;
        c = v < 0x80 ? (unsigned char)v : '?';
        break;
      }
      default: p->err = 1; return;
      }
    }
    if (out && n + 1 < cap) out[n++] = (char)c;
    p->s++;
  }
  p->s++;
  if (out) out[n] = '\0';
}

static void jnumber(jp *p)
{
  const char *s = p->s;
  if (*s == '-') s++;
  if (*s == '0') s++;
  else if (isdigit((unsigned char)*s)) while (isdigit((unsigned char)*s)) s++;
  else { p->err = 1; return; }
  if (*s == '.') {
    s++;
    if (!isdigit((unsigned char)*s)) { p->err = 1; return; }
    while (isdigit((unsigned char)*s)) s++;
  }
  if (*s == 'e' || *s == 'E') {
    s++;
    if (*s == '+' || *s == '-') s++;
    if (!isdigit((unsigned char)*s)) { p->err = 1; return; }
    while (isdigit((unsigned char)*s)) s++;
  }
  p->s = s;
}

/* Parse one value. path: "" selects this value, "a.b" descends, NULL matches nothing. */
static void jvalue(jp *p, const char *path, const char **vs, const char **ve)
{
  ws(p);
  const char *start = p->s;
  if (*p->s == '{') {
    p->s++;
    ws(p);
    if (*p->s == '}') p->s++;
    else for (;;) {
      char key[128];
      ws(p);
      jstring(p, key, sizeof key);
      if (p->err) return;
      ws(p);
      if (*p->s != ':') { p->err = 1; return; }
      p->s++;
      const char *sub = NULL;
      if (path && *path) {
        size_t kl = strcspn(path, ".");
        if (strlen(key) == kl && strncmp(key, path, kl) == 0) sub = path[kl] ? path + kl + 1 : "";
      }
      jvalue(p, sub, vs, ve);
      if (p->err) return;
      ws(p);
      if (*p->s == ',') { p->s++; continue; }
      if (*p->s == '}') { p->s++; break; }
      p->err = 1;
      return;
    }
  } else if (*p->s == '[') {
    p->s++;
    ws(p);
    if (*p->s == ']') p->s++;
    else for (;;) {
      jvalue(p, NULL, vs, ve);
      if (p->err) return;
      ws(p);
      if (*p->s == ',') { p->s++; continue; }
      if (*p->s == ']') { p->s++; break; }
      p->err = 1;
      return;
    }
  } else if (*p->s == '"') {
    jstring(p, NULL, 0);
  } else if (strncmp(p->s, "true", 4) == 0) {
    p->s += 4;
  } else if (strncmp(p->s, "false", 5) == 0) {
    p->s += 5;
  } else if (strncmp(p->s, "null", 4) == 0) {
    p->s += 4;
  } else {
    jnumber(p);
  }
  if (!p->err && path && *path == '\0') *vs = start, *ve = p->s;
}

/* 1 if text is one valid JSON value; then *raw receives the raw text at path (or ""). */
static int json_get(const char *text, const char *path, char *raw, size_t cap)
{
  jp p = {text, 0};
  const char *vs = NULL, *ve = NULL;
  jvalue(&p, path, &vs, &ve);
  ws(&p);
  if (p.err || *p.s) return 0;
  raw[0] = '\0';
  if (vs) {
    size_t n = (size_t)(ve - vs) < cap - 1 ? (size_t)(ve - vs) : cap - 1;
    memcpy(raw, vs, n);
    raw[n] = '\0';
  }
  return 1;
}

/* Decoded string at path ("" if absent or not a string). */
static void json_str(const char *text, const char *path, char *out, size_t cap)
{
  char raw[4096];
  out[0] = '\0';
  if (!json_get(text, path, raw, sizeof raw) || raw[0] != '"') return;
  jp p = {raw, 0};
  jstring(&p, out, cap);
}

Test(core_backend, json_parser_self_check)
{
  char raw[64];
  cr_expect(json_get("{\"a\":{\"b\":[1,2.5e3,-0.5]},\"c\":\"x\\u0041\"}", "a.b", raw, 64));
  cr_expect_str_eq(raw, "[1,2.5e3,-0.5]");
  cr_expect(!json_get("{\"a\":1,}", "", raw, 64));
  cr_expect(!json_get("{\"a\":01}", "", raw, 64));
  cr_expect(!json_get("{\"a\":\"tab\there\"}", "", raw, 64));
  cr_expect(!json_get("{\"a\":1} x", "", raw, 64));
  cr_expect(!json_get("{a:1}", "", raw, 64));
  char s[16];
  json_str("{\"c\":\"x\\u0041\\n\"}", "c", s, sizeof s);
  cr_expect_str_eq(s, "xA\n");
}

/* ---- selection -------------------------------------------------------------------------- */

Test(core_backend, defaults_and_names)
{
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST);
  cr_expect_eq(cnp_backend_device(), 0);
  cr_expect_str_eq(cnp_backend_name(CNP_BACKEND_HOST), "host");
  cr_expect_str_eq(cnp_backend_name(CNP_BACKEND_CUDA), "cuda");
  cr_expect_str_eq(cnp_backend_name((cnp_backend)3), "?");
  ASSERT_OK(cnp_backend_select(CNP_BACKEND_HOST, 1));
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST);
}

Test(core_backend, strict_cuda_fails_with_cached_reason)
{
  const char *why = NULL;
  if (cnp_cuda_available(&why)) cr_skip_test("a CUDA device is present");
  cr_assert_not_null(why);
#ifdef CNP_HAVE_CUDA
  /* the no-device path for real: the driver is missing, error 35 */
  cr_expect(strstr(why, "cudaGetDeviceCount failed: cudaErrorInsufficientDriver (35): CUDA "
                       "driver version is insufficient for CUDA runtime version") ||
                strstr(why, "cudaGetDeviceCount failed: cudaErrorNoDevice") ||
                strstr(why, "no CUDA device"),
            "reason: %s", why);
#else
  cr_expect_str_eq(why, "built without CUDA");
#endif
  const char *why2 = NULL;
  cnp_cuda_available(&why2);
  cr_expect_eq(why, why2, "the reason is cached");
  EXPECT_ST(cnp_backend_select(CNP_BACKEND_CUDA, 1), CNP_EUNAVAILABLE, why);
  EXPECT_ST(cnp_backend_select(CNP_BACKEND_CUDA, 1), CNP_EUNAVAILABLE,
            "cnp_backend_select: CUDA backend unavailable: ");
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST, "previous backend kept");
}

Test(core_backend, non_strict_falls_back_and_counts)
{
  if (cnp_cuda_available(NULL)) cr_skip_test("a CUDA device is present");
  cnp_transfer_scope sc;
  cnp_transfer_counts c;
  ASSERT_OK(cnp_transfers_begin(&sc));
  ASSERT_OK(cnp_backend_select(CNP_BACKEND_CUDA, 0));
  ASSERT_OK(cnp_transfers_end(&sc, &c));
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST);
  cr_expect_eq(c.fallbacks, 1);
  cr_expect_eq(c.h2d_calls + c.d2h_calls + c.d2d_calls + c.conversions, 0);
  /* work then runs on the host */
  cnp_stream *s;
  ASSERT_OK(cnp_stream_create(&s));
  cr_expect_eq(cnp_stream_backend(s), CNP_BACKEND_HOST);
  cnp_stream_destroy(s);
}

Test(core_backend, env_forces_host)
{
  setenv("CNP_BACKEND", "host", 1);
  ASSERT_OK(cnp_backend_select(CNP_BACKEND_CUDA, 1));
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST);
}

Test(core_backend, env_forces_cuda)
{
  if (cnp_cuda_available(NULL)) cr_skip_test("a CUDA device is present");
  setenv("CNP_BACKEND", "cuda", 1);
  EXPECT_ST(cnp_backend_select(CNP_BACKEND_HOST, 1), CNP_EUNAVAILABLE,
            "(forced by CNP_BACKEND=cuda)");
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST);
  ASSERT_OK(cnp_backend_select(CNP_BACKEND_HOST, 0));   /* non-strict: falls back */
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST);
}

Test(core_backend, env_malformed_and_bad_want)
{
  setenv("CNP_BACKEND", "gpu", 1);
  EXPECT_ST(cnp_backend_select(CNP_BACKEND_HOST, 1), CNP_EINVAL,
            "CNP_BACKEND='gpu' is neither 'host' nor 'cuda'");
  unsetenv("CNP_BACKEND");
  EXPECT_ST(cnp_backend_select((cnp_backend)7, 1), CNP_EINVAL, "unknown backend 7");
  setenv("CNP_BACKEND", "", 1);                          /* empty: not forced */
  ASSERT_OK(cnp_backend_select(CNP_BACKEND_HOST, 1));
}

/* ---- pure resolution ------------------------------------------------------------------- */

Test(core_backend, resolve_host_and_bad_arguments)
{
  unsetenv("CNP_BACKEND");
  cnp_backend b = CNP_BACKEND_CUDA;
  ASSERT_OK(cnp_backend_resolve(CNP_BACKEND_HOST, 1, &b));
  cr_expect_eq(b, CNP_BACKEND_HOST);
  EXPECT_ST(cnp_backend_resolve(CNP_BACKEND_HOST, 1, NULL), CNP_EINVAL,
            "cnp_backend_resolve: out is NULL");
  b = CNP_BACKEND_CUDA;
  EXPECT_ST(cnp_backend_resolve((cnp_backend)7, 0, &b), CNP_EINVAL,
            "cnp_backend_resolve: unknown backend 7");
  cr_expect_eq(b, CNP_BACKEND_CUDA, "out untouched on failure");
}

Test(core_backend, resolve_strict_no_device_fails_with_reason)
{
  const char *why = NULL;
  if (cnp_cuda_available(&why)) cr_skip_test("a CUDA device is present");
  unsetenv("CNP_BACKEND");
  cnp_backend b = (cnp_backend)5;
  EXPECT_ST(cnp_backend_resolve(CNP_BACKEND_CUDA, 1, &b), CNP_EUNAVAILABLE,
            "cnp_backend_resolve: CUDA backend unavailable: ");
  EXPECT_ST(cnp_backend_resolve(CNP_BACKEND_CUDA, 1, &b), CNP_EUNAVAILABLE, why);
  cr_expect_eq((int)b, 5, "out untouched on failure");
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST);
}

Test(core_backend, resolve_non_strict_falls_back_without_selecting)
{
  if (cnp_cuda_available(NULL)) cr_skip_test("a CUDA device is present");
  unsetenv("CNP_BACKEND");
  cnp_transfer_scope sc;
  cnp_transfer_counts c;
  cnp_backend b = CNP_BACKEND_CUDA;
  ASSERT_OK(cnp_transfers_begin(&sc));
  ASSERT_OK(cnp_backend_resolve(CNP_BACKEND_CUDA, 0, &b));
  ASSERT_OK(cnp_transfers_end(&sc, &c));
  cr_expect_eq(b, CNP_BACKEND_HOST);
  cr_expect_eq(c.fallbacks, 1, "the fallback marker, as cnp_backend_select records it");
}

Test(core_backend, resolve_env_override)
{
  cnp_backend b = CNP_BACKEND_CUDA;
  setenv("CNP_BACKEND", "HoSt", 1);
  ASSERT_OK(cnp_backend_resolve(CNP_BACKEND_CUDA, 1, &b));
  cr_expect_eq(b, CNP_BACKEND_HOST, "CNP_BACKEND=host overrides the request");
  setenv("CNP_BACKEND", "gpu", 1);
  EXPECT_ST(cnp_backend_resolve(CNP_BACKEND_HOST, 1, &b), CNP_EINVAL,
            "cnp_backend_resolve: CNP_BACKEND='gpu' is neither 'host' nor 'cuda'");
  setenv("CNP_BACKEND", "cuda", 1);
  if (cnp_cuda_available(NULL)) {
    ASSERT_OK(cnp_backend_resolve(CNP_BACKEND_HOST, 1, &b));
    cr_expect_eq(b, CNP_BACKEND_CUDA);
  } else {
    EXPECT_ST(cnp_backend_resolve(CNP_BACKEND_HOST, 1, &b), CNP_EUNAVAILABLE,
              "CUDA backend unavailable (forced by CNP_BACKEND=cuda): ");
    ASSERT_OK(cnp_backend_resolve(CNP_BACKEND_HOST, 0, &b));
    cr_expect_eq(b, CNP_BACKEND_HOST);
  }
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST, "nothing was selected");
  unsetenv("CNP_BACKEND");
}

Test(core_backend, explicit_backend_forms)
{
  cnp_stream *s = NULL;
  cnp_event *e = NULL;
  ASSERT_OK(cnp_stream_create_on(&s, CNP_BACKEND_HOST, 0));
  cr_expect_eq(cnp_stream_backend(s), CNP_BACKEND_HOST);
  ASSERT_OK(cnp_event_create_on(&e, CNP_EVENT_TIMING, CNP_BACKEND_HOST, 0));
  ASSERT_OK(cnp_event_record(e, s));
  ASSERT_OK(cnp_event_destroy(e));
  ASSERT_OK(cnp_stream_destroy(s));
  ASSERT_OK(cnp_stream_wrap_on(&s, CNP_BACKEND_HOST, NULL));
  ASSERT_OK(cnp_stream_destroy(s));
  int dummy = 0;
  EXPECT_ST(cnp_stream_wrap_on(&s, CNP_BACKEND_HOST, &dummy), CNP_EDEVICE,
            "a native stream was given but the backend is host");
  EXPECT_ST(cnp_stream_create_on(&s, CNP_BACKEND_HOST, 1), CNP_EDEVICE,
            "cnp_stream_create_on: invalid device 1 for the host backend");
  EXPECT_ST(cnp_event_create_on(&e, 0, (cnp_backend)9, 0), CNP_EINVAL,
            "cnp_event_create_on: unknown backend 9");
  ASSERT_OK(cnp_device_synchronize_on(CNP_BACKEND_HOST, 0));
  if (!cnp_cuda_available(NULL)) {
    EXPECT_ST(cnp_stream_create_on(&s, CNP_BACKEND_CUDA, 0), CNP_EUNAVAILABLE,
              "cnp_stream_create_on: CUDA backend unavailable: ");
    EXPECT_ST(cnp_device_synchronize_on(CNP_BACKEND_CUDA, 0), CNP_EUNAVAILABLE,
              "CUDA backend unavailable");
  }
  double x[4] = {1, 2, 3, 4};
  cnp_array h;
  int64_t shape[1] = {4};
  ASSERT_OK(cnp_array_wrap(&h, x, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, shape, NULL));
  cnp_mirror *m = NULL;
  ASSERT_OK(cnp_mirror_create_on(&m, &h, CNP_BACKEND_HOST, 0));
  ASSERT_OK(cnp_mirror_destroy(m));
  cr_expect_eq(cnp_backend_current(), CNP_BACKEND_HOST);
}

Test(core_backend, devices)
{
  ASSERT_OK(cnp_set_device(0));
  EXPECT_ST(cnp_set_device(1), CNP_ERANGE, "device 1 out of range: the host backend has 1 device");
  EXPECT_ST(cnp_set_device(-1), CNP_ERANGE, "device -1 out of range");
  cr_expect_eq(cnp_backend_device(), 0);
  ASSERT_OK(cnp_device_synchronize());
}

/* ---- backend info ------------------------------------------------------------------------ */

Test(core_backend, info_is_valid_json_with_versions)
{
  char buf[16384], raw[4096], s[4096];
  size_t needed = 0;
  ASSERT_OK(cnp_backend_info(buf, sizeof buf, &needed));
  cr_expect_eq(needed, strlen(buf) + 1);
  cr_assert(json_get(buf, "", raw, sizeof raw), "not valid JSON: %s", buf);
  json_str(buf, "cnp.version", s, sizeof s);
  cr_expect_str_eq(s, cnp_version_string());
  cr_assert(json_get(buf, "cnp.abi", raw, sizeof raw));
  cr_expect_eq(atoi(raw), CNP_ABI_VERSION);
  json_str(buf, "backend", s, sizeof s);
  cr_expect_str_eq(s, "host");
  json_get(buf, "cuda.built", raw, sizeof raw);
#ifdef CNP_HAVE_CUDA
  cr_expect_str_eq(raw, "true");
  json_get(buf, "cuda.runtime_version", raw, sizeof raw);
  cr_expect(atoi(raw) >= 12000, "runtime_version %s", raw);
  json_str(buf, "nvrtc.version", s, sizeof s);
  cr_expect(strchr(s, '.') && atoi(s) >= 12, "nvrtc version '%s'", s);
#else
  cr_expect_str_eq(raw, "false");
  json_get(buf, "nvrtc.version", raw, sizeof raw);
  cr_expect_str_eq(raw, "null");
#endif
  json_get(buf, "cuda.available", raw, sizeof raw);
  cr_expect_str_eq(raw, cnp_cuda_available(NULL) ? "true" : "false");
  if (!cnp_cuda_available(NULL)) {
    const char *why = NULL;
    cnp_cuda_available(&why);
    json_str(buf, "cuda.reason", s, sizeof s);
    cr_expect_str_eq(s, why);
  }
  json_get(buf, "mpi.built", raw, sizeof raw);
#ifdef CNP_HAVE_MPI
  cr_expect_str_eq(raw, "true");
  json_str(buf, "mpi.library_version", s, sizeof s);
  char lib[MPI_MAX_LIBRARY_VERSION_STRING];
  int n = 0;
  MPI_Get_library_version(lib, &n);
  cr_expect(n > 0 && strncmp(s, lib, 20) == 0, "'%s' vs '%s'", s, lib);
  /* libcnp reaches the MPI module through a weak reference: this call links it in. */
  char mine[512];
  cnp_status vst = cnp_mpi_library_version(mine, sizeof mine);
  cr_expect(vst == CNP_OK || vst == CNP_EOVERFLOW, "%s", cnp_status_string(vst));
  cr_expect(strncmp(s, mine, 20) == 0, "'%s' vs '%s'", s, mine);
  int inited = 1;
  MPI_Initialized(&inited);
  cr_expect_eq(inited, 0, "cnp_backend_info initialized MPI");
#else
  cr_expect_str_eq(raw, "false");
#endif
  json_str(buf, "device.name", s, sizeof s);
  cr_expect_str_eq(s, "host CPU");
  json_get(buf, "device.logical_cpus", raw, sizeof raw);
  cr_expect(atoi(raw) >= 1);
}

Test(core_backend, info_small_buffer)
{
  char full[16384], small[40];
  size_t needed = 0, needed2 = 0;
  ASSERT_OK(cnp_backend_info(full, sizeof full, &needed));
  EXPECT_ST(cnp_backend_info(small, sizeof small, &needed2), CNP_EOVERFLOW, "too small");
  cr_expect_eq(needed2, needed);
  cr_expect_eq(strlen(small), sizeof small - 1);
  cr_expect(strncmp(small, full, sizeof small - 1) == 0);
  EXPECT_ST(cnp_backend_info(NULL, 0, &needed2), CNP_EOVERFLOW, "0 bytes too small");
  cr_expect_eq(needed2, needed);
  EXPECT_ST(cnp_backend_info(NULL, 5, NULL), CNP_EINVAL, "buf is NULL");
}
