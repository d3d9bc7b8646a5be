/*
** test_threads.c -- two threads set up, step and tear down pipelines (fuse.cnp) at once, one
** asking for the host backend and one for CUDA non-strict (the host here, without a GPU):
** generated setup resolves its backend (cnp_backend_resolve) and creates everything on it
** explicitly, so it never selects a process-wide backend. Linked with
** -Wl,--wrap=cnp_backend_select: any call of it from the generated code is counted and fails
** the test, and the selected backend and device are the same before and after.
*/
#define _POSIX_C_SOURCE 200809L   /* pthread barriers */
#include "fuse.h"
#include "e2e.h"

#include <pthread.h>
#include <stdatomic.h>

cnp_status __real_cnp_backend_select(cnp_backend want, int strict);
static atomic_int n_selects;

cnp_status __wrap_cnp_backend_select(cnp_backend want, int strict)
{
  atomic_fetch_add(&n_selects, 1);
  return __real_cnp_backend_select(want, strict);
}

#define ROUNDS 200
static pthread_barrier_t start;

static void *run(void *arg)
{
  const cnp_backend want = *(const cnp_backend *)arg;
  pthread_barrier_wait(&start);
  for (int r = 0; r < ROUNDS; r++) {
    fuse *p = NULL;
    char err[256];
    fuse_config cfg = FUSE_CONFIG_INIT;
    cfg.N = 64;
    cfg.M = 8;
    cfg.n_cells = 4;
    cfg.backend = want;
    cfg.strict = 0;
    CHECK(fuse_setup(&p, &cfg, err, sizeof err) == CNP_OK, "setup (%s): %s", cnp_backend_name(want), err);
    CHECK(fuse_backend(p) == CNP_BACKEND_HOST, "the host unit runs on the host");
    CHECK(fuse_step(p, 1.0f, 0) == CNP_OK, "step: %s", fuse_error(p));
    fuse_teardown(p);
  }
  return NULL;
}

int main(void)
{
  const cnp_backend before = cnp_backend_current();
  const int device = cnp_backend_device();
  cnp_backend wants[2] = {CNP_BACKEND_HOST, CNP_BACKEND_CUDA};
  pthread_t t[2];
  CHECK(pthread_barrier_init(&start, NULL, 2) == 0, "barrier");
  for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, run, &wants[i]) == 0, "thread %d", i);
  for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&start);
  CHECK(atomic_load(&n_selects) == 0, "generated setup called cnp_backend_select %d times",
        atomic_load(&n_selects));
  CHECK(cnp_backend_current() == before && cnp_backend_device() == device,
        "the selected backend changed: %s device %d", cnp_backend_name(cnp_backend_current()),
        cnp_backend_device());
  printf("threads: %d concurrent setups, the selected backend untouched\n", 2 * ROUNDS);
  return 0;
}
