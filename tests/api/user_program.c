/*
** user_program.c — what a user's plain C file looks like: includes only cnp/cnp.h, compiles
** with gcc alone (-std=c11 -pedantic, checked by the api.header_* tests) and, linked against
** libcnp, runs a whole setup/step/teardown on whatever backend the machine offers
** (non-strict CUDA selection: falls back to the host where there is no GPU).
*/
#include <stdio.h>
#include <string.h>

#include "cnp/cnp.h"

#define CHECK(call)                                                                       \
  do {                                                                                    \
    cnp_status st_ = (call);                                                              \
    if (st_ != CNP_OK) {                                                                  \
      fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call,                 \
              cnp_status_name(st_), cnp_last_error());                                    \
      return 1;                                                                           \
    }                                                                                     \
  } while (0)

int main(void)
{
  enum { N = 1000 };
  static double host[N];
  int64_t n = N;
  cnp_array h, dev, out;
  cnp_stream *s;
  cnp_event *done;
  cnp_snapshot *snap;
  cnp_snapshot_handle sh;
  cnp_mirror *m;
  cnp_transfer_scope scope;
  cnp_transfer_counts counts;
  char info[16384];

  CHECK(cnp_check_abi(CNP_ABI_VERSION));
  CHECK(cnp_backend_select(CNP_BACKEND_CUDA, 0));
  CHECK(cnp_backend_info(info, sizeof info, NULL));
  printf("backend %s\n", cnp_backend_name(cnp_backend_current()));

  for (int i = 0; i < N; i++) host[i] = 0.5 * i;
  CHECK(cnp_array_wrap(&h, host, CNP_BACKEND_HOST, 0, CNP_FLOAT64, 1, &n, NULL));
  CHECK(cnp_stream_create(&s));
  CHECK(cnp_event_create(&done, CNP_EVENT_DEFAULT));
  CHECK(cnp_mirror_create(&m, &h));
  CHECK(cnp_mirror_device(m, &dev));
  CHECK(cnp_snapshot_create(&snap, &dev, 2));

  CHECK(cnp_transfers_begin(&scope));
  CHECK(cnp_event_record(done, s));
  CHECK(cnp_snapshot_copy(snap, &dev, NULL, done, &sh));
  CHECK(cnp_snapshot_result(sh, &out));
  CHECK(cnp_transfers_end(&scope, &counts));

  for (int i = 0; i < N; i++) {
    if (((const double *)out.data)[i] != 0.5 * i) {
      fprintf(stderr, "element %d: %g\n", i, ((const double *)out.data)[i]);
      return 1;
    }
  }
  if (counts.d2h_bytes + counts.d2d_bytes != sizeof host) {
    fprintf(stderr, "accounting: %llu + %llu bytes\n", (unsigned long long)counts.d2h_bytes,
            (unsigned long long)counts.d2d_bytes);
    return 1;
  }
  CHECK(cnp_snapshot_destroy(snap));
  CHECK(cnp_mirror_destroy(m));
  CHECK(cnp_event_destroy(done));
  CHECK(cnp_stream_destroy(s));
  printf("ok\n");
  return 0;
}
