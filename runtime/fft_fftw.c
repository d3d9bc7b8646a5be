/*
** fft_fftw.c — host FFTs of cnp/grid.h with FFTW3 (double: fftw3, float: fftw3f, both
** threaded through fftw3_threads). Built only when FFTW was found (CNP_HAVE_FFTW); else
** fft_nofftw.c supplies cnp__fft_host.
**
** At create, under one process-wide mutex (the FFTW planner and fftw_plan_with_nthreads
** are global state): fftw_init_threads once, fftw_plan_with_nthreads(omp_get_max_threads()
** from 2^18 points per plan up, else 1), and one forward (r2c) and one inverse (c2r) fftw_plan_many_dft over the plan's own
** buffers (fftw_malloc: SIMD-aligned, one transform batch each), FFTW_ESTIMATE or
** FFTW_MEASURE. Each call applies the plans to the caller's arrays with the new-array
** execute functions (thread-safe); an array whose fftw_alignment_of differs from the
** buffers' goes through the buffers by memcpy. The inverse copies its input into the
** complex buffer first (FFTW's c2r overwrites its input) unless CNP_FFT_DESTROY_INPUT.
** The mutex is shared with the distributed FFT of libcnp_mpi (mpi_fft.c) through
** cnp__fftw_planner_enter / _leave (grid_internal.h).
*/
#include "grid_internal.h"

#include <fftw3.h>
#include <pthread.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef struct fftw_impl {
  int    f32;
  void  *rbuf;                         /* real, n_real * howmany */
  void  *cbuf;                         /* complex, n_complex * howmany */
  size_t rbytes, cbytes;
  fftw_plan  fwd, inv;                 /* double */
  fftwf_plan fwdf, invf;               /* float */
} fftw_impl;

static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;
static int threads_ready = 0;

/* Threads for a plan of `points` real points in all: omp_get_max_threads() from 2^18 points
** up (below, FFTW's threads cost more than they save, and much more on a busy machine). */
#define FFTW_THREADS_MIN (INT64_C(1) << 18)

static int n_threads(int64_t points)
{
#ifdef _OPENMP
  int t = omp_get_max_threads();
  return t < 1 || points < FFTW_THREADS_MIN ? 1 : t;
#else
  (void)points;
  return 1;
#endif
}

cnp_status cnp__fftw_planner_enter(int64_t points, const char *op)
{
  pthread_mutex_lock(&planner_lock);
  if (!threads_ready) {
    if (fftw_init_threads() == 0 || fftwf_init_threads() == 0) {
      pthread_mutex_unlock(&planner_lock);
      return cnp__fail(CNP_EBACKEND, op, "fftw_init_threads failed");
    }
    threads_ready = 1;
  }
  fftw_plan_with_nthreads(n_threads(points));
  fftwf_plan_with_nthreads(n_threads(points));
  return CNP_OK;
}

void cnp__fftw_planner_leave(void)
{
  pthread_mutex_unlock(&planner_lock);
}

static cnp_status h_destroy(cnp_fft_plan *p)
{
  fftw_impl *im = p->impl;
  if (im == NULL) return CNP_OK;
  pthread_mutex_lock(&planner_lock);
  if (im->fwd) fftw_destroy_plan(im->fwd);
  if (im->inv) fftw_destroy_plan(im->inv);
  if (im->fwdf) fftwf_destroy_plan(im->fwdf);
  if (im->invf) fftwf_destroy_plan(im->invf);
  pthread_mutex_unlock(&planner_lock);
  if (im->f32) {
    fftwf_free(im->rbuf);
    fftwf_free(im->cbuf);
  } else {
    fftw_free(im->rbuf);
    fftw_free(im->cbuf);
  }
  cnp__free(im);
  p->impl = NULL;
  return CNP_OK;
}

static cnp_status h_create(cnp_fft_plan *p)
{
  static const char op[] = "cnp_fft_plan_create";
  if (p->n_real * p->howmany > 2147483647 || p->n_complex * p->howmany > 2147483647)
    return cnp__fail(CNP_EOVERFLOW, op, "FFTW takes int sizes: more than 2^31 - 1 points");
  if (cnp__alloc_should_fail()) return cnp__fail(CNP_ENOMEM, op, "no memory for the FFT");
  fftw_impl *im = cnp__calloc(1, sizeof *im);
  if (im == NULL) return cnp__fail(CNP_ENOMEM, op, "no memory for the FFT");
  p->impl = im;
  im->f32 = p->dtype == CNP_FLOAT32;
  size_t isz = im->f32 ? sizeof(float) : sizeof(double);
  im->rbytes = (size_t)(p->n_real * p->howmany) * isz;
  im->cbytes = (size_t)(p->n_complex * p->howmany) * 2 * isz;
  im->rbuf = im->f32 ? fftwf_malloc(im->rbytes) : fftw_malloc(im->rbytes);
  im->cbuf = im->f32 ? fftwf_malloc(im->cbytes) : fftw_malloc(im->cbytes);
  if (im->rbuf == NULL || im->cbuf == NULL) {
    h_destroy(p);
    return cnp__fail(CNP_ENOMEM, op, "cannot allocate %zu + %zu bytes of FFT buffers",
                     im->rbytes, im->cbytes);
  }
  int n[3];
  for (int d = 0; d < p->ndim; d++) n[d] = (int)p->dims[d];
  int howmany = (int)p->howmany;
  int idist = (int)p->n_real, odist = (int)p->n_complex;
  unsigned fl = (p->flags & CNP_FFT_MEASURE) ? FFTW_MEASURE : FFTW_ESTIMATE;
  cnp_status st = cnp__fftw_planner_enter(p->n_real * p->howmany, op);
  if (st != CNP_OK) {
    h_destroy(p);
    return st;
  }
  if (im->f32) {
    im->fwdf = fftwf_plan_many_dft_r2c(p->ndim, n, howmany, im->rbuf, NULL, 1, idist,
                                       im->cbuf, NULL, 1, odist, fl);
    im->invf = fftwf_plan_many_dft_c2r(p->ndim, n, howmany, im->cbuf, NULL, 1, odist,
                                       im->rbuf, NULL, 1, idist, fl);
  } else {
    im->fwd = fftw_plan_many_dft_r2c(p->ndim, n, howmany, im->rbuf, NULL, 1, idist,
                                     im->cbuf, NULL, 1, odist, fl);
    im->inv = fftw_plan_many_dft_c2r(p->ndim, n, howmany, im->cbuf, NULL, 1, odist,
                                     im->rbuf, NULL, 1, idist, fl);
  }
  cnp__fftw_planner_leave();
  if (im->f32 ? (im->fwdf == NULL || im->invf == NULL) : (im->fwd == NULL || im->inv == NULL)) {
    h_destroy(p);
    return cnp__fail(CNP_EBACKEND, op, "FFTW could not make a plan");
  }
  return CNP_OK;
}

static int aligned_like(const fftw_impl *im, const void *a, const void *ref)
{
  if (im->f32)
    return fftwf_alignment_of((float *)(uintptr_t)a) == fftwf_alignment_of((float *)ref);
  return fftw_alignment_of((double *)(uintptr_t)a) == fftw_alignment_of((double *)ref);
}

static cnp_status h_forward(cnp_fft_plan *p, const cnp_array *in, cnp_array *out,
                            cnp_stream *s)
{
  (void)s;
  fftw_impl *im = p->impl;
  void *src = in->data, *dst = out->data;
  int copy_in = !aligned_like(im, src, im->rbuf);
  int copy_out = !aligned_like(im, dst, im->cbuf);
  if (copy_in) {
    memcpy(im->rbuf, src, im->rbytes);
    src = im->rbuf;
  }
  void *target = copy_out ? im->cbuf : dst;
  if (im->f32) fftwf_execute_dft_r2c(im->fwdf, src, target);
  else fftw_execute_dft_r2c(im->fwd, src, target);
  if (copy_out) memcpy(dst, im->cbuf, im->cbytes);
  return CNP_OK;
}

static cnp_status h_inverse(cnp_fft_plan *p, const cnp_array *in, cnp_array *out,
                            cnp_stream *s)
{
  (void)s;
  fftw_impl *im = p->impl;
  void *src = in->data, *dst = out->data;
  if (!(p->flags & CNP_FFT_DESTROY_INPUT) || !aligned_like(im, src, im->cbuf)) {
    memcpy(im->cbuf, src, im->cbytes);
    src = im->cbuf;
  }
  int copy_out = !aligned_like(im, dst, im->rbuf);
  void *target = copy_out ? im->rbuf : dst;
  if (im->f32) fftwf_execute_dft_c2r(im->invf, src, target);
  else fftw_execute_dft_c2r(im->inv, src, target);
  if (copy_out) memcpy(dst, im->rbuf, im->rbytes);
  return CNP_OK;
}

const cnp__fft_backend cnp__fft_host = {
  .name = "fftw3",
  .create = h_create,
  .destroy = h_destroy,
  .forward = h_forward,
  .inverse = h_inverse,
};
