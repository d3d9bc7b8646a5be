/*
** interp_value.c -- the reference interpreter's values (interp.c): f16 bits and rounding,
** conversions between dtypes with the language's rules (saturating float -> integer casts,
** NaN -> 0; f16 rounded to nearest even), and loads and stores of field elements.
*/
#define _POSIX_C_SOURCE 200809L
#include "interp_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
/* ------------------------------------------------------------------ f16 */

/* binary16 bits -> float (exact). */
float h2f(uint16_t h) {
  int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
  float v;
  if (e == 31) {
    if (m == 0) v = INFINITY;
    else {                              /* NaN with its payload, as the hardware keeps it */
      uint32_t b = 0x7f800000u | ((uint32_t)m << 13);
      memcpy(&v, &b, sizeof v);
    }
  } else if (e == 0) v = ldexpf((float)m, -24);
  else v = ldexpf((float)(m | 1024), e - 25);
  return s ? -v : v;
}

/* The nearest binary16 (ties to even) of a double, rounded once. */
static uint16_t d2h(double x) {
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  if (isnan(x)) {
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return (uint16_t)(sign | 0x7e00 | ((b >> 42) & 0x3ff));
  }
  x = fabs(x);
  if (x >= 65520.0) return sign | 0x7c00;      /* rounds to infinity */
  /* quantum: 2^-24 below 2^-14 (subnormals), else 2^(e-10) for x in [2^e, 2^(e+1)) */
  int e;
  frexp(x, &e);                                 /* x = f * 2^e, f in [0.5, 1) */
  int q = e - 1 - 10;
  if (q < -24) q = -24;
  double scaled = ldexp(x, -q);                 /* exact */
  double r = nearbyint(scaled);                 /* ties to even in the default mode */
  double v = ldexp(r, q);
  if (v >= 65520.0) return sign | 0x7c00;
  /* encode v (an exact f16 value) */
  if (v == 0.0) return sign;
  int ve;
  frexp(v, &ve);
  if (ve - 1 < -14) return (uint16_t)(sign | (uint16_t)ldexp(v, 24));   /* subnormal */
  int E = ve - 1 + 15;
  uint16_t m = (uint16_t)(ldexp(v, -(ve - 1) + 10) - 1024.0);
  return (uint16_t)(sign | (E << 10) | m);
}

float hround(double x) { return h2f(d2h(x)); }

/* ------------------------------------------------------------------ values */



/* Real part as a double (for conversions from real types). */
double as_double(Value v) {
  switch (v.t) {
  case DT_BOOL: case DT_I32: case DT_I64: return (double)v.i;
  case DT_U64: return (double)v.u;
  case DT_F16: case DT_F32: return v.f;
  case DT_F64: return v.d;
  default: return 0;
  }
}

/* float -> integer: saturating, NaN -> 0 (docs/language.md, Types). */
static int64_t sat_i64(double x, double lo, double hi_excl, int64_t ilo, int64_t ihi) {
  if (isnan(x)) return 0;
  if (x < lo) return ilo;
  if (x >= hi_excl) return ihi;
  return (int64_t)x;
}

/* Conversion of v to type t (casts, promotions, stores): C's conversions between integer
** types, integer <-> float as C (float -> integer saturating), f16 rounded once. */
Value conv(Value v, DType t) {
  if (v.t == t) return v;
  Value r = {.t = t};
  bool vfloat = dtype_is_float(v.t);
  switch (t) {
  case DT_BOOL:
    if (dtype_is_complex(v.t)) r.i = v.t == DT_C64 ? v.c64 != 0 : v.c128 != 0;
    else if (v.t == DT_U64) r.i = v.u != 0;
    else if (vfloat) r.i = as_double(v) != 0;
    else r.i = v.i != 0;
    return r;
  case DT_I32:
    if (vfloat) r.i = sat_i64(as_double(v), -2147483648.0, 2147483648.0, INT32_MIN, INT32_MAX);
    else r.i = (int32_t)(uint32_t)(v.t == DT_U64 ? v.u : (uint64_t)v.i);
    return r;
  case DT_I64:
    if (vfloat) r.i = sat_i64(as_double(v), -9223372036854775808.0, 9223372036854775808.0, INT64_MIN, INT64_MAX);
    else r.i = v.t == DT_U64 ? (int64_t)v.u : v.i;
    return r;
  case DT_U64:
    if (vfloat) {
      double x = as_double(v);
      r.u = isnan(x) || x <= 0 ? 0 : x >= 18446744073709551616.0 ? UINT64_MAX : (uint64_t)x;
    } else r.u = v.t == DT_U64 ? v.u : (uint64_t)v.i;
    return r;
  case DT_F16:
    if (v.t == DT_F64) r.f = hround(v.d);
    else if (v.t == DT_F32) r.f = hround(v.f);
    else if (v.t == DT_U64) r.f = hround((float)v.u);       /* integers: through f32 (exact below 2^24) */
    else r.f = hround((float)v.i);
    return r;
  case DT_F32:
    if (v.t == DT_U64) r.f = (float)v.u;
    else if (v.t == DT_F64) r.f = (float)v.d;
    else if (v.t == DT_F16) r.f = v.f;
    else r.f = (float)v.i;
    return r;
  case DT_F64:
    if (v.t == DT_U64) r.d = (double)v.u;
    else if (vfloat) r.d = as_double(v);
    else r.d = (double)v.i;
    return r;
  case DT_C64:
    if (v.t == DT_C128) r.c64 = (float complex)v.c128;
    else r.c64 = conv(v, DT_F32).f;
    return r;
  case DT_C128:
    if (v.t == DT_C64) r.c128 = v.c64;
    else r.c128 = conv(v, DT_F64).d;
    return r;
  default:
    return r;
  }
}

/* ------------------------------------------------------------------ storage */

Value load(const FieldRT *f, int64_t k) {
  const unsigned char *p = f->data + (size_t)k * f->esize;
  Value v = {.t = f->d->dtype};
  switch (v.t) {
  case DT_BOOL: v.i = *p != 0; break;
  case DT_I32: { int32_t x; memcpy(&x, p, 4); v.i = x; break; }
  case DT_I64: memcpy(&v.i, p, 8); break;
  case DT_U64: memcpy(&v.u, p, 8); break;
  case DT_F16: { uint16_t h; memcpy(&h, p, 2); v.f = h2f(h); break; }
  case DT_F32: memcpy(&v.f, p, 4); break;
  case DT_F64: memcpy(&v.d, p, 8); break;
  case DT_C64: memcpy(&v.c64, p, 8); break;
  case DT_C128: memcpy(&v.c128, p, 16); break;
  default: break;
  }
  return v;
}

/* Stores v (already of the field's type; f16: any float, rounded here). */
void store(FieldRT *f, int64_t k, Value v) {
  unsigned char *p = f->data + (size_t)k * f->esize;
  switch (f->d->dtype) {
  case DT_BOOL: *p = (unsigned char)(v.i != 0); break;
  case DT_I32: { int32_t x = (int32_t)v.i; memcpy(p, &x, 4); break; }
  case DT_I64: memcpy(p, &v.i, 8); break;
  case DT_U64: memcpy(p, &v.u, 8); break;
  case DT_F16: { uint16_t h = d2h(v.f); memcpy(p, &h, 2); break; }
  case DT_F32: memcpy(p, &v.f, 4); break;
  case DT_F64: memcpy(p, &v.d, 8); break;
  case DT_C64: memcpy(p, &v.c64, 8); break;
  case DT_C128: memcpy(p, &v.c128, 16); break;
  default: break;
  }
}
