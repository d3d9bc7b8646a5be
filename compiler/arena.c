/*
** arena.c -- one bump allocator per compilation: the AST, strings and sema data all live
** here and are freed at once by arena_free().
*/
#include "cnpc.h"

#include <stdlib.h>
#include <string.h>

struct ArenaBlock {
  ArenaBlock *prev;
  size_t size, used;
  _Alignas(16) unsigned char data[];
};

#define ARENA_BLOCK (1u << 20)

void arena_init(Arena *a) { memset(a, 0, sizeof *a); }

void arena_free(Arena *a) {
  ArenaBlock *b = a->head;
  while (b) {
    ArenaBlock *p = b->prev;
    free(b);
    b = p;
  }
  a->head = NULL;
}

/*
** Zeroed memory (blocks are calloc'd and never reused), 16-byte aligned. Out of memory is fatal (an internal error).
*/
void *arena_alloc(Arena *a, size_t n) {
  n = (n + 15) & ~(size_t)15;
  ArenaBlock *b = a->head;
  if (!b || b->size - b->used < n) {
    /* blocks grow from 64 KiB to ARENA_BLOCK: small inputs stay cheap */
    size_t sz = b ? 2 * b->size : 65536;
    if (sz > ARENA_BLOCK) sz = ARENA_BLOCK;
    if (sz < n) sz = n;
    b = calloc(1, sizeof *b + sz);   /* zeroed once (fresh pages from the OS are free) */
    if (!b) cnp_ice("out of memory");
    b->prev = a->head;
    b->size = sz;
    b->used = 0;
    a->head = b;
  }
  void *p = b->data + b->used;
  b->used += n;
  a->used_total += n;
  return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  if (n) memcpy(p, s, n);
  p[n] = 0;
  return p;
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
