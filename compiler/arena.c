/*
** arena.c -- one bump allocator per compilation: the AST, strings and sema data all live
** here and are freed at once by arena_free().
**
** Blocks are mapped straight from the OS: they arrive zeroed (no memset) and large ones
** are backed by huge pages where the kernel allows it, so a big input costs few page
** faults. The fast path of arena_alloc() is inline in cnpc.h.
*/
#define _DEFAULT_SOURCE 1
#include "cnpc.h"

#include <string.h>
#include <sys/mman.h>

struct ArenaBlock {
  ArenaBlock *prev;
  size_t size;            /* bytes mapped, header included */
  _Alignas(16) unsigned char data[];
};

#define ARENA_FIRST (64u << 10)         /* small inputs stay cheap */
#define ARENA_MAX   (64u << 20)         /* growth stops doubling here */
#define HUGE_PAGE   (2u << 20)

void arena_init(Arena *a) {
  memset(a, 0, sizeof *a);
  a->next_size = ARENA_FIRST;
}

void arena_free(Arena *a) {
  ArenaBlock *b = a->head;
  while (b) {
    ArenaBlock *p = b->prev;
    munmap(b, b->size);
    b = p;
  }
  a->head = NULL;
  a->cur = a->end = NULL;
}

void arena_reserve(Arena *a, size_t n) {
  if (n > ARENA_MAX) n = ARENA_MAX;
  if ((size_t)(a->end - a->cur) < n && a->next_size < n) a->next_size = n;
}

/*
** The current block is full: map a new one (the rest of the old block is abandoned).
*/
void *arena_alloc_slow(Arena *a, size_t n) {
  size_t sz = a->next_size ? a->next_size : ARENA_FIRST;
  if (sz < n + sizeof(ArenaBlock)) sz = n + sizeof(ArenaBlock);
  size_t page = sz >= HUGE_PAGE ? HUGE_PAGE : 4096;
  sz = (sz + page - 1) & ~(page - 1);
  ArenaBlock *b = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (b == MAP_FAILED) cnp_ice("out of memory");
#ifdef MADV_HUGEPAGE
  if (sz >= HUGE_PAGE) madvise(b, sz, MADV_HUGEPAGE);   /* a hint: failure is harmless */
#endif
  b->prev = a->head;
  b->size = sz;
  a->head = b;
  a->cur = b->data;
  a->end = (unsigned char *)b + sz;
  a->next_size = 2 * sz < ARENA_MAX ? 2 * sz : ARENA_MAX;
  void *p = a->cur;
  a->cur += n;
  a->used_total += n;
  return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  if (n) memcpy(p, s, n);
  p[n] = 0;
  return p;
}

void *arena_grow(Arena *a, void *v, int n, int *cap, int first, size_t size) {
  if (n < *cap) return v;
  int nc = *cap ? 2 * *cap : first;
  void *nv = arena_alloc(a, size * (size_t)nc);
  if (n) memcpy(nv, v, size * (size_t)n);
  *cap = nc;
  return nv;
}

char *arena_printf(Arena *a, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = arena_alloc(a, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(p, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return p;
}
