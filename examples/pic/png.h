/*
** png.h -- a tiny PNG writer (8-bit RGB, stored deflate blocks, no zlib), enough for the
** demo's pictures. png_write(path, w, h, rgb) returns 0 on success.
*/
#ifndef CNP_EXAMPLE_PNG_H
#define CNP_EXAMPLE_PNG_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t png_crc(uint32_t crc, const uint8_t *p, size_t n)
{
  crc = ~crc;
  for (size_t i = 0; i < n; i++) {
    crc ^= p[i];
    for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

static void png_be32(uint8_t *p, uint32_t v)
{
  p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static int png_chunk(FILE *f, const char *type, const uint8_t *data, uint32_t n)
{
  uint8_t hdr[8];
  png_be32(hdr, n);
  memcpy(hdr + 4, type, 4);
  uint32_t crc = png_crc(png_crc(0, hdr + 4, 4), data, n);
  uint8_t tail[4];
  png_be32(tail, crc);
  return fwrite(hdr, 1, 8, f) == 8 && (n == 0 || fwrite(data, 1, n, f) == n) &&
                 fwrite(tail, 1, 4, f) == 4 ? 0 : -1;
}

static int png_write(const char *path, int w, int h, const uint8_t *rgb)
{
  size_t raw_n = (size_t)h * (size_t)(3 * w + 1);
  size_t blocks = (raw_n + 65534) / 65535;
  size_t z_n = 2 + raw_n + 5 * blocks + 4;
  uint8_t *raw = malloc(raw_n), *z = malloc(z_n);
  FILE *f = fopen(path, "wb");
  int rc = -1;
  if (!raw || !z || !f) goto done;
  for (int y = 0; y < h; y++) {                    /* filter type 0 per row */
    raw[(size_t)y * (size_t)(3 * w + 1)] = 0;
    memcpy(raw + (size_t)y * (size_t)(3 * w + 1) + 1, rgb + (size_t)y * (size_t)(3 * w), (size_t)(3 * w));
  }
  size_t o = 0;
  z[o++] = 0x78; z[o++] = 0x01;                    /* zlib header, no compression */
  uint32_t a = 1, b = 0;
  for (size_t off = 0; off < raw_n; off += 65535) {
    size_t n = raw_n - off < 65535 ? raw_n - off : 65535;
    z[o++] = off + n == raw_n ? 1 : 0;             /* BFINAL, stored */
    z[o++] = (uint8_t)n; z[o++] = (uint8_t)(n >> 8);
    z[o++] = (uint8_t)~n; z[o++] = (uint8_t)(~n >> 8);
    memcpy(z + o, raw + off, n);
    o += n;
  }
  for (size_t i = 0; i < raw_n; i++) {             /* adler-32 */
    a = (a + raw[i]) % 65521u;
    b = (b + a) % 65521u;
  }
  png_be32(z + o, (b << 16) | a);
  o += 4;
  static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  uint8_t ihdr[13];
  png_be32(ihdr, (uint32_t)w);
  png_be32(ihdr + 4, (uint32_t)h);
  ihdr[8] = 8; ihdr[9] = 2; ihdr[10] = 0; ihdr[11] = 0; ihdr[12] = 0;
  if (fwrite(sig, 1, 8, f) != 8 || png_chunk(f, "IHDR", ihdr, 13) ||
      png_chunk(f, "IDAT", z, (uint32_t)o) || png_chunk(f, "IEND", NULL, 0))
    goto done;
  rc = 0;
done:
  if (f && fclose(f) != 0) rc = -1;
  free(raw);
  free(z);
  return rc;
}

#endif /* CNP_EXAMPLE_PNG_H */
