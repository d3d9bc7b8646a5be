/*
** e2e.h -- shared helpers of the end-to-end tests: self-checking executables in the
** chibicc style (CHECK prints the failing condition and exits 1), and a deterministic
** random generator so the hand-written reference and the generated code see the same data.
*/
#ifndef CNP_E2E_H
#define CNP_E2E_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond, ...)                                                                \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);          \
      fprintf(stderr, __VA_ARGS__);                                                     \
      fputc('\n', stderr);                                                              \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

/* xorshift64*: uniform doubles in [0, 1). */
static inline double e2e_rand(uint64_t *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return (double)((*s * 0x2545F4914F6CDD1DULL) >> 11) * (1.0 / 9007199254740992.0);
}

/* |a - b| <= tol * max(1, |a|, |b|) */
static inline int e2e_close(double a, double b, double tol)
{
  double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
  return fabs(a - b) <= tol * (m > 1.0 ? m : 1.0);
}

/* Element (c, i) of a component-major host view (strides in bytes). */
static inline double *e2e_at(void *data, const int64_t *strides, int64_t c, int64_t i)
{
  return (double *)((char *)data + c * strides[0] + i * strides[1]);
}

#endif /* CNP_E2E_H */
