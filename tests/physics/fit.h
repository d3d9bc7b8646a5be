/*
** fit.h -- the fits the physics tests and the demo driver use (docs/physics.md, "Fits").
** Plain C, no dependencies: the tests need no Python.
*/
#ifndef PHYS_FIT_H
#define PHYS_FIT_H

#include <stdint.h>

/* Least squares y = slope * x + intercept over n >= 2 points; 0, or -1 when degenerate. */
int fit_line(const double *x, const double *y, int64_t n, double *slope, double *intercept);

/* The local maxima of W (W[k-1] < W[k] >= W[k+1], W > 0) with t[k] in [t0, t1], each refined
** by a parabola through ln W at k-1, k, k+1: tp[] the peak times, lp[] ln W at them. Returns
** how many (at most max). t must be evenly spaced. */
int64_t fit_peaks(const double *t, const double *W, int64_t n, double t0, double t1, double *tp,
                  double *lp, int64_t max);

/* A damped oscillation seen in the field energy W ~ cos^2(omega t) exp(2 gamma t): the peaks
** in [t0, t1]; gamma = (slope of ln W at the peaks) / 2, omega = pi / (slope of the peak times
** against their index). Needs 3 peaks; returns their count, or -1. */
int64_t fit_damped(const double *t, const double *W, int64_t n, double t0, double t1,
                   double *gamma, double *omega);

/* An exponential growth W ~ exp(2 gamma t): W_sat is W's first maximum that is at least
** 100 W[0] (the saturation); the window runs from the first time W exceeds lo * W_sat to the
** first time it exceeds hi * W_sat (lo < hi < 1); gamma = (slope of ln W there) / 2.
** Returns the number of points fitted (ta, tb: the window, tsat: the saturation time), or -1. */
int64_t fit_growth(const double *t, const double *W, int64_t n, double lo, double hi,
                   double *gamma, double *ta, double *tb, double *tsat);

#endif
