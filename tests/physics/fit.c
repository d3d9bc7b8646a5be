/* fit.c -- see fit.h. */
#include "fit.h"

#include <math.h>

#define FIT_PI 3.14159265358979323846

int fit_line(const double *x, const double *y, int64_t n, double *slope, double *intercept)
{
  if (n < 2) return -1;
  double mx = 0, my = 0;
  for (int64_t i = 0; i < n; i++) {
    mx += x[i];
    my += y[i];
  }
  mx /= (double)n;
  my /= (double)n;
  double sxx = 0, sxy = 0;
  for (int64_t i = 0; i < n; i++) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  if (!(sxx > 0)) return -1;
  *slope = sxy / sxx;
  *intercept = my - *slope * mx;
  return 0;
}

int64_t fit_peaks(const double *t, const double *W, int64_t n, double t0, double t1, double *tp,
                  double *lp, int64_t max)
{
  int64_t m = 0;
  for (int64_t k = 1; k + 1 < n && m < max; k++) {
    if (t[k] < t0 || t[k] > t1) continue;
    if (!(W[k] > W[k - 1] && W[k] >= W[k + 1] && W[k - 1] > 0 && W[k + 1] > 0)) continue;
    double a = log(W[k - 1]), b = log(W[k]), c = log(W[k + 1]);
    double den = a - 2 * b + c, d = den < 0 ? 0.5 * (a - c) / den : 0.0; /* in [-1/2, 1/2] */
    tp[m] = t[k] + d * (t[k + 1] - t[k]);
    lp[m] = b - 0.25 * (a - c) * d;
    m++;
  }
  return m;
}

int64_t fit_damped(const double *t, const double *W, int64_t n, double t0, double t1,
                   double *gamma, double *omega)
{
  enum { MAXP = 256 };
  double tp[MAXP], lp[MAXP], idx[MAXP], s, c;
  int64_t m = fit_peaks(t, W, n, t0, t1, tp, lp, MAXP);
  if (m < 3) return -1;
  for (int64_t i = 0; i < m; i++) idx[i] = (double)i;
  if (fit_line(tp, lp, m, &s, &c)) return -1;
  *gamma = 0.5 * s;
  if (fit_line(idx, tp, m, &s, &c) || !(s > 0)) return -1;
  *omega = FIT_PI / s;
  return m;
}

int64_t fit_growth(const double *t, const double *W, int64_t n, double lo, double hi,
                   double *gamma, double *ta, double *tb, double *tsat)
{
  if (n < 3 || !(W[0] > 0) || !(lo > 0 && lo < hi && hi < 1)) return -1;
  int64_t ks = -1;
  for (int64_t k = 1; k + 1 < n; k++)
    if (W[k] >= 100 * W[0] && W[k] > W[k - 1] && W[k] >= W[k + 1]) {
      ks = k;
      break;
    }
  if (ks < 0) return -1;
  int64_t i0 = -1, i1 = -1;
  for (int64_t k = 0; k <= ks; k++) {
    if (i0 < 0 && W[k] > lo * W[ks]) i0 = k;
    if (i1 < 0 && W[k] > hi * W[ks]) i1 = k;
  }
  if (i0 < 0 || i1 < 0 || i1 - i0 < 3) return -1;
  double y[8192], s, c;
  int64_t m = i1 - i0 + 1;
  if (m > 8192) return -1;
  for (int64_t k = 0; k < m; k++) y[k] = log(W[i0 + k]);
  if (fit_line(t + i0, y, m, &s, &c)) return -1;
  *gamma = 0.5 * s;
  *ta = t[i0];
  *tb = t[i1];
  *tsat = t[ks];
  return m;
}
