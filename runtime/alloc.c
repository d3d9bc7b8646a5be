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

/* ---- live-handle registry ------------------------------------------------------------------
** Open addressing over pointer values; grows only in create calls. Lookups never allocate. */

#include <string.h>

#define TOMB ((const void *)1)

static pthread_mutex_t h_lock = PTHREAD_MUTEX_INITIALIZER;
static const void    **h_tab;
static size_t          h_cap, h_used;  /* h_used counts live entries and tombstones */

static size_t h_hash(const void *p, size_t cap)
{
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static void h_insert(const void **tab, size_t cap, const void *p)
{
  size_t i = h_hash(p, cap);
  while (tab[i] && tab[i] != TOMB) i = (i + 1) & (cap - 1);
  tab[i] = p;
}

cnp_status cnp__handle_register(const void *h, const char *op)
{
  cnp_status st = CNP_OK;
  pthread_mutex_lock(&h_lock);
  if ((h_used + 1) * 2 > h_cap) {
    size_t ncap = h_cap ? h_cap * 2 : 64;
    size_t live = 0;
    for (size_t i = 0; i < h_cap; i++) live += h_tab[i] && h_tab[i] != TOMB;
    while ((live + 1) * 4 < ncap && ncap > 64) ncap /= 2;  /* shrink if mostly tombstones */
    const void **nt = cnp__calloc(ncap, sizeof *nt);
    if (!nt) {
      st = cnp__fail(CNP_ENOMEM, op, "cannot grow the handle registry");
    } else {
      for (size_t i = 0; i < h_cap; i++)
        if (h_tab[i] && h_tab[i] != TOMB) h_insert(nt, ncap, h_tab[i]);
      cnp__free((void *)h_tab);
      h_tab = nt;
      h_cap = ncap;
      h_used = live;
    }
  }
  if (st == CNP_OK) {
    h_insert(h_tab, h_cap, h);
    h_used++;
  }
  pthread_mutex_unlock(&h_lock);
  return st;
}

static size_t h_find(const void *h)    /* index of h, or h_cap; caller holds h_lock */
{
  if (!h_cap) return 0;
  size_t i = h_hash(h, h_cap);
  for (size_t n = 0; n < h_cap && h_tab[i]; n++, i = (i + 1) & (h_cap - 1))
    if (h_tab[i] == h) return i;
  return h_cap;
}

void cnp__handle_unregister(const void *h)
{
  pthread_mutex_lock(&h_lock);
  size_t i = h_find(h);
  if (i < h_cap) h_tab[i] = TOMB;
  pthread_mutex_unlock(&h_lock);
}

bool cnp__handle_live(const void *h)
{
  if (!h || h == TOMB) return false;
  pthread_mutex_lock(&h_lock);
  bool live = h_cap && h_find(h) < h_cap;
  pthread_mutex_unlock(&h_lock);
  return live;
}

cnp_status cnp__check_handle(const void *h, uint32_t magic, const char *kind, const char *op)
{
  if (!h) return cnp__fail(CNP_EINVAL, op, "%s is NULL", kind);
  if (!cnp__handle_live(h))
    return cnp__fail(CNP_ESTATE, op, "%s %p is not live (destroyed, or never created)", kind, h);
  uint32_t m;
  memcpy(&m, h, sizeof m);             /* every handle struct starts with its magic */
  if (m != magic)
    return cnp__fail(CNP_EINVAL, op, "%p is not a %s handle (magic 0x%08x)", h, kind, m);
  return CNP_OK;
}

cnp_status cnp__handle_open(void *h, uint32_t *magic, const cnp__handle_kind *k, void **out,
                            const char *op)
{
  cnp_status st = k->make(h);
  if (st == CNP_OK && (st = cnp__handle_register(h, op)) != CNP_OK) k->unmake(h);
  if (st != CNP_OK) {
    *magic = CNP__MAGIC_DEAD;
    cnp__free(h);
    return st;
  }
  *out = h;
  return CNP_OK;
}

cnp_status cnp__handle_close(void *h, uint32_t *magic, const cnp__handle_kind *k)
{
  cnp_status st = k->unmake(h);
  cnp__handle_unregister(h);
  *magic = CNP__MAGIC_DEAD;
  cnp__free(h);
  return st;
}
