/*
** npy.h — C-order float64 arrays as NumPy .npy files (format 1.0, little-endian hosts) for
** the PIC demos (physics_demo.c, pic_demo.c) and bench/pic/bench_es1d.c. Header only.
*/
#ifndef CNP_EXAMPLES_NPY_H
#define CNP_EXAMPLES_NPY_H

#include <stdint.h>
#include <stdio.h>

/* The .npy header of a rows x cols float64 array, padded so the data start at a multiple of
** 64 bytes. */
static inline void npy_header(FILE *f, int64_t rows, int64_t cols)
{
  char hdr[128];
  int len = snprintf(hdr, sizeof hdr, "{'descr': '<f8', 'fortran_order': False, 'shape': (%lld, %lld), }",
                     (long long)rows, (long long)cols);
  int pad = (64 - (10 + len + 1) % 64) % 64;
  unsigned short hl = (unsigned short)(len + pad + 1);
  unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 0xff),
                           (unsigned char)(hl >> 8)};
  fwrite(pre, 1, 10, f);
  fwrite(hdr, 1, (size_t)len, f);
  for (int i = 0; i < pad; i++) fputc(' ', f);
  fputc('\n', f);
}

/* Writes data (rows x cols) to path: 0, -1 when the file cannot be opened (errno says why),
** -2 when writing it fails. */
static inline int npy_write(const char *path, const double *data, int64_t rows, int64_t cols)
{
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  npy_header(f, rows, cols);
  size_t n = (size_t)(rows * cols);
  int ok = fwrite(data, sizeof(double), n, f) == n;
  ok = (fclose(f) == 0) && ok;
  return ok ? 0 : -2;
}

#endif
