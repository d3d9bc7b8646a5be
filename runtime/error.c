/*
** error.c — status strings, the per-thread last-error detail, version and ABI checks.
*/
#include "internal.h"

#include <stdio.h>
#include <string.h>

#ifndef CNP_VERSION_STRING
#define CNP_VERSION_STRING "0.1.0"
#endif

#define CNP__ERRBUF 512

/* Per-thread detail of the last failing call ("" if none). */
static _Thread_local char tls_error[CNP__ERRBUF];

/*
** cnp_status_string: the fixed text of a status (libuv uv_strerror).
*/
const char *cnp_status_string(cnp_status st)
{
  switch (st) {
#define CNP__STR_(name, code, text) case CNP_##name: return text;
    CNP_STATUS_MAP(CNP__STR_)
#undef CNP__STR_
  }
  return "unknown status";
}

/*
** cnp_status_name: "CNP_EINVAL" for CNP_EINVAL (libuv uv_err_name).
*/
const char *cnp_status_name(cnp_status st)
{
  switch (st) {
#define CNP__NAME_(name, code, text) case CNP_##name: return "CNP_" #name;
    CNP_STATUS_MAP(CNP__NAME_)
#undef CNP__NAME_
  }
  return "CNP_UNKNOWN";
}

const char *cnp_last_error(void) { return tls_error; }

void cnp_clear_error(void) { tls_error[0] = '\0'; }

/*
** cnp__failv: record "<op>: <text>" as this thread's detail and return st.
*/
cnp_status cnp__failv(cnp_status st, const char *op, const char *fmt, va_list ap)
{
  int n = snprintf(tls_error, sizeof tls_error, "%s: ", op ? op : "cnp");
  if (n < 0 || (size_t)n >= sizeof tls_error) return st;
  vsnprintf(tls_error + n, sizeof tls_error - (size_t)n, fmt, ap);
  return st;
}

cnp_status cnp__fail(cnp_status st, const char *op, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  cnp__failv(st, op, fmt, ap);
  va_end(ap);
  return st;
}

const char *cnp_version_string(void) { return CNP_VERSION_STRING; }

/*
** cnp_check_abi: generated code passes the CNP_ABI_VERSION it was compiled against.
*/
cnp_status cnp_check_abi(int abi_version)
{
  if (abi_version != CNP_ABI_VERSION)
    return cnp__fail(CNP_EABI, "cnp_check_abi",
                     "code was generated for runtime ABI %d but libcnp %s has ABI %d; "
                     "regenerate it with a matching cnpc",
                     abi_version, CNP_VERSION_STRING, CNP_ABI_VERSION);
  return CNP_OK;
}
