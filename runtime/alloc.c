/*
** alloc.c — host allocations of the runtime and the fault-injection switch.
**
** CNP_FAIL_ALLOC=k (read once) or cnp__fail_alloc_after(k) makes the k-th allocation from
** then on fail; backends consult the same countdown for device and pinned memory.
*/
#include "internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <pthread.h>

static atomic_long fail_countdown;        /* 0: disabled; k: the k-th next alloc fails */
static atomic_uint_fast64_t alloc_ids;    /* last alloc_id handed out */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static void read_env(void)
{
  const char *v = getenv("CNP_FAIL_ALLOC");
  if (v && *v) {
    char *end = NULL;
    long k = strtol(v, &end, 10);
    if (end && *end == '\0' && k > 0) atomic_store(&fail_countdown, k);
  }
}

void cnp__fail_alloc_after(long k)
{
  pthread_once(&env_once, read_env);      /* so a later first use does not override k */
  atomic_store(&fail_countdown, k > 0 ? k : 0);
}

bool cnp__alloc_should_fail(void)
{
  pthread_once(&env_once, read_env);
  long cur = atomic_load(&fail_countdown);
  while (cur > 0) {
    if (atomic_compare_exchange_weak(&fail_countdown, &cur, cur - 1)) return cur == 1;
  }
  return false;
}

void *cnp__malloc(size_t n)
{
  if (cnp__alloc_should_fail()) return NULL;
  return malloc(n ? n : 1);
}

void *cnp__calloc(size_t n, size_t size)
{
  if (cnp__alloc_should_fail()) return NULL;
  if (n == 0 || size == 0) n = size = 1;
  return calloc(n, size);
}

void cnp__free(void *p) { free(p); }

uint64_t cnp__next_alloc_id(void) { return atomic_fetch_add(&alloc_ids, 1) + 1; }
