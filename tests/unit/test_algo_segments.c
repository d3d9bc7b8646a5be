/*
** test_algo_segments.c — cnp_cell_offsets, cnp_segment_boundaries, segment plans and the
** one-off cnp_segment_sum on the host backend, against brute-force references, plus the
** float16 conversions and every error path with its exact status.
*/
#include "test_algo_util.h"

#include <math.h>

#include "cnp/algo.h"

/* ---- float16 --------------------------------------------------------------------------- */

Test(algo_half, known_values)
{
  cr_expect_eq(cnp_float_to_half(1.0f), 0x3c00);
  cr_expect_eq(cnp_float_to_half(-2.0f), 0xc000);
  cr_expect_eq(cnp_float_to_half(65504.0f), 0x7bff);
  cr_expect_eq(cnp_float_to_half(65519.0f), 0x7bff);
  cr_expect_eq(cnp_float_to_half(65520.0f), 0x7c00);            /* rounds to inf */
  cr_expect_eq(cnp_float_to_half(INFINITY), 0x7c00);
  cr_expect_eq(cnp_float_to_half(-INFINITY), 0xfc00);
  cr_expect_eq(cnp_float_to_half(-0.0f), 0x8000);
  cr_expect_eq(cnp_float_to_half(0x1p-24f), 0x0001);            /* smallest subnormal */
  cr_expect_eq(cnp_float_to_half(0x1p-25f), 0x0000);            /* tie to even: 0 */
  cr_expect_eq(cnp_float_to_half(0x3p-25f), 0x0002);            /* tie to even: 2 */
  cr_expect_eq(cnp_float_to_half(0x1p-14f), 0x0400);            /* smallest normal */
  cr_expect_eq(cnp_float_to_half(1.0f + 0x1p-11f), 0x3c00);     /* tie to even */
  cr_expect_eq(cnp_float_to_half(1.0f + 0x3p-11f), 0x3c02);
  cr_expect(isnan(cnp_half_to_float(cnp_float_to_half(NAN))));
  cr_expect_eq(cnp_half_to_float(0x3555), 0x1.554p-2f);
  cr_expect_eq(cnp_half_to_float(0x0001), 0x1p-24f);
  cr_expect_eq(cnp_half_to_float(0x03ff), 0x1.ff8p-15f);
  cr_expect(isinf(cnp_half_to_float(0x7c00)));
}

/* Every non-NaN half survives half -> float -> half; NaNs stay NaN. */
Test(algo_half, round_trip_all)
{
  for (uint32_t h = 0; h < 0x10000u; h++) {
    float f = cnp_half_to_float((uint16_t)h);
    int nan = (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu);
    if (nan) cr_assert(isnan(f));
    else cr_assert_eq(cnp_float_to_half(f), h, "0x%04x", h);
  }
}

#if defined(__FLT16_MAX__)
/* The compiler's own conversion agrees on random floats across the half range. */
Test(algo_half, matches_compiler_float16)
{
  uint64_t s = 7;
  for (int i = 0; i < 200000; i++) {
    uint32_t bits = (uint32_t)rng_next(&s);
    bits = (bits & 0x80000000u) | (0x30000000u + bits % 0x18000000u);  /* ~2^-31..2^17 */
    float f;
    memcpy(&f, &bits, 4);
    _Float16 h = (_Float16)f;
    uint16_t hb;
    memcpy(&hb, &h, 2);
    cr_assert_eq(cnp_float_to_half(f), hb, "float 0x%08x", bits);
    cr_assert_eq(cnp_half_to_float(hb), (float)h);
  }
}
#endif

/* ---- cell offsets ---------------------------------------------------------------------- */

/* p_next: probability that a row starts a later cell (0.3: short runs; 1/64: runs of about
** 64 rows as in a particle sort, taking the 8-row skips and their prefetch) */
static void run_offsets_p(cnp_dtype dt, int64_t n, int64_t n_cells, uint64_t seed,
                          double p_next)
{
  cnp_array cells = host_vec(dt, n), off = host_vec(CNP_INT64, n_cells + 1);
  int64_t *cnt = calloc((size_t)n_cells + 1, sizeof *cnt);
  /* sorted ids: random counts per cell, some cells empty (also at both ends) */
  int64_t c = n_cells > 2 ? 1 : 0;
  for (int64_t i = 0; i < n; i++) {
    if (rng_unit(&seed) < p_next && c < n_cells - 1) c += 1 + (int64_t)(rng_next(&seed) % 2);
    if (c >= n_cells) c = n_cells - 1;
    if (dt == CNP_INT32) ((int32_t *)cells.data)[i] = (int32_t)c;
    else ((int64_t *)cells.data)[i] = c;
    cnt[c]++;
  }
  cr_assert_eq(cnp_cell_offsets(&cells, n_cells, &off, NULL, NULL), CNP_OK, "%s",
               cnp_last_error());
  const int64_t *o = off.data;
  int64_t sum = 0;
  for (int64_t k = 0; k <= n_cells; k++) {
    cr_assert_eq(o[k], sum, "n=%lld n_cells=%lld: offsets[%lld] = %lld, expected %lld",
                 (long long)n, (long long)n_cells, (long long)k, (long long)o[k],
                 (long long)sum);
    if (k < n_cells) sum += cnt[k];
  }
  free(cnt);
  free(cells.data);
  free(off.data);
}

static void run_offsets(cnp_dtype dt, int64_t n, int64_t n_cells, uint64_t seed)
{
  run_offsets_p(dt, n, n_cells, seed, 0.3);
}

/* Long runs over many 2048-row blocks, on 1 and 2 threads (the 8-row skips, the prefetch
** ahead and its stop near the end of each thread's rows), and an error deep inside. */
Test(algo_segments, cell_offsets_long_runs)
{
  static const int64_t ns[] = {2047, 2048, 2049, 40000, 300001};
  for (int th = 1; th <= 2; th++) {
    set_threads(th);
    for (int j = 0; j < 5; j++) {
      run_offsets_p(CNP_INT64, ns[j], ns[j] / 64 + 3, (uint64_t)(100 + j), 1.0 / 64);
      run_offsets_p(CNP_INT32, ns[j], ns[j] / 64 + 3, (uint64_t)(200 + j), 1.0 / 64);
    }
  }
  int64_t n = 300001;
  cnp_array cells = host_vec(CNP_INT64, n), off = host_vec(CNP_INT64, n / 64 + 2);
  int64_t *cv = cells.data;
  for (int64_t i = 0; i < n; i++) cv[i] = i / 64;
  cv[250001] = cv[250000] - 1;                 /* a descent in the second thread's rows */
  cr_expect_eq(cnp_cell_offsets(&cells, n / 64 + 1, &off, NULL, NULL), CNP_EORDER);
  expect_msg("cnp_cell_offsets: sorted_cells not sorted at index 250001 (3905 after 3906)");
  cv[250001] = cv[250000];
  cv[n - 1] = n / 64 + 1;                      /* out of range in the very last row */
  cr_expect_eq(cnp_cell_offsets(&cells, n / 64 + 1, &off, NULL, NULL), CNP_ERANGE);
  expect_msg("cnp_cell_offsets: sorted_cells[300000] = 4688 outside [0, 4688)");
  free(cells.data);
  free(off.data);
}

Test(algo_segments, cell_offsets_property)
{
  for (int s = 0; s < ALGO_NSIZES; s++) {
    int64_t n = ALGO_SIZES[s];
    int64_t ncs[4] = {1, 7, n / 3 + 2, 1000};
    for (int j = 0; j < 4; j++) {
      if (n > 0 && ncs[j] == 1 && n > 1000) continue;
      run_offsets(CNP_INT64, n, ncs[j], (uint64_t)(s * 10 + j));
      run_offsets(CNP_INT32, n, ncs[j], (uint64_t)(s * 10 + j + 5));
    }
  }
  /* workspace accepted but optional */
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 0, 0, 0), CNP_OK);
  cnp_array cells = host_vec(CNP_INT64, 3), off = host_vec(CNP_INT64, 5);
  int64_t cv[3] = {1, 1, 3}, want[5] = {0, 0, 2, 2, 3};
  memcpy(cells.data, cv, sizeof cv);
  cr_assert_eq(cnp_cell_offsets(&cells, 4, &off, ws, NULL), CNP_OK, "%s", cnp_last_error());
  cr_expect_arr_eq(off.data, want, sizeof want);
  free(cells.data);
  free(off.data);
  cnp_workspace_destroy(ws);
}

Test(algo_segments, cell_offsets_errors)
{
  cnp_array cells = host_vec(CNP_INT64, 6), off = host_vec(CNP_INT64, 5);
  int64_t *c = cells.data;
  int64_t v1[6] = {0, 1, 3, 2, 3, 3};
  memcpy(c, v1, sizeof v1);
  cr_expect_eq(cnp_cell_offsets(&cells, 4, &off, NULL, NULL), CNP_EORDER);
  expect_msg("cnp_cell_offsets: sorted_cells not sorted at index 3 (2 after 3)");
  int64_t v2[6] = {0, 1, 2, 4, 4, 4};
  memcpy(c, v2, sizeof v2);
  cr_expect_eq(cnp_cell_offsets(&cells, 4, &off, NULL, NULL), CNP_ERANGE);
  expect_msg("cnp_cell_offsets: sorted_cells[3] = 4 outside [0, 4)");
  int64_t v3[6] = {-1, 0, 0, 0, 0, 0};
  memcpy(c, v3, sizeof v3);
  cr_expect_eq(cnp_cell_offsets(&cells, 4, &off, NULL, NULL), CNP_ERANGE);
  expect_msg("sorted_cells[0] = -1 outside [0, 4)");

  cnp_array off4 = host_vec(CNP_INT64, 4), off32 = host_vec(CNP_INT32, 5);
  cnp_array fcells = host_vec(CNP_FLOAT64, 6), u64 = host_vec(CNP_UINT64, 6);
  cr_expect_eq(cnp_cell_offsets(&cells, 4, &off4, NULL, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_cell_offsets(&cells, 4, &off32, NULL, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_cell_offsets(&fcells, 4, &off, NULL, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_cell_offsets(&u64, 4, &off, NULL, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_cell_offsets(&cells, -1, &off, NULL, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_cell_offsets(NULL, 4, &off, NULL, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_cell_offsets(&cells, 4, NULL, NULL, NULL), CNP_EINVAL);
  cnp_array alias = cells;
  alias.shape[0] = 5;
  cr_expect_eq(cnp_cell_offsets(&cells, 4, &alias, NULL, NULL), CNP_EALIAS);
  cnp_array fake = off;
  fake.backend = CNP_BACKEND_CUDA;
  cr_expect_eq(cnp_cell_offsets(&cells, 4, &fake, NULL, NULL), CNP_EDEVICE);
  /* a host stream with CUDA arrays */
  cnp_stream *s;
  cr_assert_eq(cnp_stream_create(&s), CNP_OK);
  cnp_array fc = cells;
  fc.backend = CNP_BACKEND_CUDA;
  cr_expect_eq(cnp_cell_offsets(&fc, 4, &fake, NULL, s), CNP_EDEVICE);
  expect_msg("stream is on host");
#ifndef CNP_HAVE_CUDA
  /* a faked CUDA array in a build without CUDA */
  cr_expect_eq(cnp_cell_offsets(&fc, 4, &fake, NULL, NULL), CNP_EUNSUPPORTED);
#endif
  cnp_stream_destroy(s);
  free(cells.data); free(off.data); free(off4.data); free(off32.data); free(fcells.data);
  free(u64.data);
}

/* The first error in index order wins, across thread chunks. */
Test(algo_segments, cell_offsets_first_error_wins)
{
  int64_t n = 100000;
  cnp_array cells = host_vec(CNP_INT32, n), off = host_vec(CNP_INT64, 1001);
  int32_t *c = cells.data;
  for (int64_t i = 0; i < n; i++) c[i] = (int32_t)(i / 100);
  c[90000] = 5000;                                   /* range error, later */
  c[60000] = 3;                                      /* order error, earlier */
  cr_expect_eq(cnp_cell_offsets(&cells, 1000, &off, NULL, NULL), CNP_EORDER);
  expect_msg("not sorted at index 60000 (3 after 599)");
  c[60000] = 600;
  cr_expect_eq(cnp_cell_offsets(&cells, 1000, &off, NULL, NULL), CNP_ERANGE);
  expect_msg("sorted_cells[90000] = 5000 outside [0, 1000)");
  free(cells.data);
  free(off.data);
}

/* One bad row anywhere (block edges of the 2048-row checks, thread chunk edges, first and
** last row), of every kind, with 1, 2 and 3 threads: the status and index are exact, and a
** clean input afterwards is right (the offsets equal a direct count). */
Test(algo_segments, cell_offsets_error_positions)
{
  int64_t n = 100000, nc = 1000;
  int64_t pos[] = {0, 1, 2047, 2048, 2049, 4095, 33333, 33334, 49999, 50000, 50001,
                   66666, 66667, 99999};
  int64_t bad[][2] = {{-1, CNP_ERANGE}, {1000, CNP_ERANGE}, {INT32_MIN, CNP_ERANGE},
                      {INT32_MAX, CNP_ERANGE}, {INT64_MIN, CNP_ERANGE},
                      {INT64_MAX, CNP_ERANGE}, {-7, CNP_EORDER}};  /* -7: one below */
  for (int T = 1; T <= 3; T++) {
    set_threads(T);
    for (int wide = 0; wide < 2; wide++) {
      cnp_dtype dt = wide ? CNP_INT64 : CNP_INT32;
      cnp_array cells = host_vec(dt, n), off = host_vec(CNP_INT64, nc + 1);
      for (size_t p = 0; p < sizeof pos / sizeof pos[0]; p++)
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
          int64_t at = pos[p], v = bad[b][0];
          if (!wide && (v < INT32_MIN || v > INT32_MAX)) continue;
          for (int64_t i = 0; i < n; i++) {
            int64_t x = i / 100;                   /* sorted, cells 0..999 */
            if (i == at) x = v == -7 ? (i / 100) - 1 : v;
            if (wide) ((int64_t *)cells.data)[i] = x;
            else ((int32_t *)cells.data)[i] = (int32_t)x;
          }
          int64_t x = v == -7 ? (at / 100) - 1 : v;
          cnp_status want = (cnp_status)bad[b][1];
          if (v == -7) {                           /* one cell below its row's */
            if (x < 0) want = CNP_ERANGE;          /* rows 0..99: -1 */
            else if (at % 100 == 0) want = CNP_OK; /* first row of its cell: still sorted */
            else want = CNP_EORDER;
          }
          cnp_status st = cnp_cell_offsets(&cells, nc, &off, NULL, NULL);
          cr_assert_eq(st, want, "T=%d %s at %lld value %lld: status %d, expected %d (%s)", T,
                       cnp_dtype_name(dt), (long long)at, (long long)x, st, want,
                       cnp_last_error());
          if (want == CNP_OK) continue;
          char msg[160];
          if (want == CNP_ERANGE)
            snprintf(msg, sizeof msg, "sorted_cells[%lld] = %lld outside [0, %lld)",
                     (long long)at, (long long)x, (long long)nc);
          else
            snprintf(msg, sizeof msg, "not sorted at index %lld (%lld after %lld)",
                     (long long)at, (long long)x, (long long)((at - 1) / 100));
          cr_assert(strstr(cnp_last_error(), msg) != NULL, "T=%d: '%s' lacks '%s'", T,
                    cnp_last_error(), msg);
        }
      for (int64_t i = 0; i < n; i++) {           /* clean: cells 0, 3, 6, ... with gaps */
        int64_t x = (i / 300) * 3;
        if (wide) ((int64_t *)cells.data)[i] = x;
        else ((int32_t *)cells.data)[i] = (int32_t)x;
      }
      cr_assert_eq(cnp_cell_offsets(&cells, nc, &off, NULL, NULL), CNP_OK);
      const int64_t *o = off.data;
      for (int64_t k = 0; k <= nc; k++) {
        int64_t want = k % 3 == 0 ? (k / 3) * 300 : (k / 3 + 1) * 300;
        want = want > n ? n : want;
        cr_assert_eq(o[k], want, "T=%d offsets[%lld] = %lld, expected %lld", T, (long long)k,
                     (long long)o[k], (long long)want);
      }
      free(cells.data);
      free(off.data);
    }
  }
  set_threads(1);
}

/* ---- segment boundaries ---------------------------------------------------------------- */

static void run_bounds(cnp_dtype dt, int64_t n, int kind, uint64_t seed, cnp_workspace *ws)
{
  cnp_array keys = host_vec(dt, n), uk = host_vec(dt, n + 3);
  cnp_array st = host_vec(CNP_INT64, n), sp = host_vec(CNP_INT64, n);
  size_t isz = cnp_dtype_size(dt);
  unsigned char *k = keys.data;
  uint64_t cur = dt == CNP_UINT64 ? UINT64_MAX - 1000 : (uint64_t)(int64_t)-50;
  if (kind == 2) cur = UINT64_C(0x8000000000000000) + 12345;   /* Morton-like */
  for (int64_t i = 0; i < n; i++) {
    if (kind == 1 && rng_unit(&seed) < 0.5) cur = rng_next(&seed) % 4;   /* unsorted runs */
    else if (kind == 3) cur += rng_unit(&seed) < 2e-5;   /* long runs across thread chunks */
    else if (kind == 4) cur += 1;                        /* every row starts a run */
    else if (kind == 5) (void)0;                         /* one run */
    else if (rng_unit(&seed) < 0.2) cur += 1 + rng_next(&seed) % 3;
    if (dt == CNP_INT32) {
      int32_t v = (int32_t)(int64_t)cur;
      memcpy(k + (size_t)i * isz, &v, 4);
    } else {
      memcpy(k + (size_t)i * isz, &cur, 8);
    }
  }
  int64_t count = -1;
  cr_assert_eq(cnp_segment_boundaries(&keys, &uk, &st, &sp, &count, ws, NULL), CNP_OK, "%s",
               cnp_last_error());
  int64_t j = 0;
  for (int64_t i = 0; i < n; i++) {
    if (i > 0 && memcmp(k + (size_t)i * isz, k + (size_t)(i - 1) * isz, isz) == 0) continue;
    cr_assert_lt(j, count);
    cr_assert_eq(((int64_t *)st.data)[j], i);
    cr_assert(memcmp((char *)uk.data + (size_t)j * isz, k + (size_t)i * isz, isz) == 0);
    if (j > 0) cr_assert_eq(((int64_t *)sp.data)[j - 1], i);
    j++;
  }
  cr_assert_eq(count, j, "%s n=%lld kind=%d: %lld runs, expected %lld", cnp_dtype_name(dt),
               (long long)n, kind, (long long)count, (long long)j);
  if (j > 0) cr_assert_eq(((int64_t *)sp.data)[j - 1], n);
  /* outputs are optional, and give the same runs without the others */
  int64_t count2 = -1;
  cr_assert_eq(cnp_segment_boundaries(&keys, NULL, NULL, &sp, &count2, ws, NULL), CNP_OK);
  cr_assert_eq(count2, count);
  for (int64_t q = 1; q <= count; q++)
    cr_assert_eq(((int64_t *)sp.data)[q - 1], q < count ? ((int64_t *)st.data)[q] : n);
  memset(st.data, 0xff, (size_t)n * 8);
  cr_assert_eq(cnp_segment_boundaries(&keys, NULL, &st, NULL, &count2, ws, NULL), CNP_OK);
  cr_assert_eq(count2, count);
  for (int64_t q = 1; q < count; q++)
    cr_assert_eq(((int64_t *)st.data)[q], ((int64_t *)sp.data)[q - 1]);
  free(keys.data); free(uk.data); free(st.data); free(sp.data);
}

Test(algo_segments, boundaries_property)
{
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 100000, 0, 0), CNP_OK);
  cnp_dtype types[3] = {CNP_INT32, CNP_INT64, CNP_UINT64};
  for (int t = 0; t < 3; t++)
    for (int s = 0; s < ALGO_NSIZES; s++)
      for (int kind = 0; kind < 3; kind++)
        run_bounds(types[t], ALGO_SIZES[s], kind, (uint64_t)(t * 100 + s * 10 + kind), ws);
  /* all equal: one run */
  cnp_array keys = host_vec(CNP_INT64, 1000), st = host_vec(CNP_INT64, 1000);
  int64_t count;
  cr_assert_eq(cnp_segment_boundaries(&keys, NULL, &st, NULL, &count, ws, NULL), CNP_OK);
  cr_expect_eq(count, 1);
  cr_expect_eq(((int64_t *)st.data)[0], 0);
  free(keys.data);
  free(st.data);
  cnp_workspace_destroy(ws);
}

/* Several threads, each writing its runs from its own first row and then moved down: runs
** across thread chunks, chunks with no run start, every row a run (the outputs full), one
** run; 1, 2 and 3 threads. */
Test(algo_segments, boundaries_threads)
{
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 100000, 0, 0), CNP_OK);
  cnp_dtype types[3] = {CNP_INT32, CNP_INT64, CNP_UINT64};
  for (int T = 1; T <= 3; T++) {
    set_threads(T);
    for (int t = 0; t < 3; t++)
      for (int kind = 0; kind < 6; kind++) {
        run_bounds(types[t], 100000, kind, (uint64_t)(T * 1000 + t * 10 + kind), ws);
        run_bounds(types[t], 65537, kind, (uint64_t)(T * 1000 + t * 10 + kind), ws);
      }
  }
  set_threads(1);
  cnp_workspace_destroy(ws);
}

Test(algo_segments, boundaries_errors)
{
  cnp_workspace *ws;
  cr_assert_eq(cnp_workspace_create(&ws, CNP_BACKEND_HOST, 0, 8, 0, 0), CNP_OK);
  cnp_array keys = host_vec(CNP_INT64, 8), uk = host_vec(CNP_INT64, 8);
  cnp_array uk32 = host_vec(CNP_INT32, 8), st7 = host_vec(CNP_INT64, 7);
  cnp_array st = host_vec(CNP_INT64, 8), fk = host_vec(CNP_FLOAT32, 8);
  int64_t count;
  cr_expect_eq(cnp_segment_boundaries(&keys, &uk, &st, NULL, NULL, ws, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_segment_boundaries(&keys, &uk, &st, NULL, &count, NULL, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_segment_boundaries(&fk, NULL, NULL, NULL, &count, ws, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_segment_boundaries(&keys, &uk32, NULL, NULL, &count, ws, NULL),
               CNP_EDTYPE);
  cr_expect_eq(cnp_segment_boundaries(&keys, NULL, &st7, NULL, &count, ws, NULL),
               CNP_ESHAPE);
  expect_msg("starts holds 7 entries, need capacity N = 8");
  cr_expect_eq(cnp_segment_boundaries(&keys, NULL, &st, &st, &count, ws, NULL), CNP_EALIAS);
  cr_expect_eq(cnp_segment_boundaries(&keys, &keys, NULL, NULL, &count, ws, NULL),
               CNP_EALIAS);
  cnp_array fake = st;
  fake.backend = CNP_BACKEND_CUDA;
  cr_expect_eq(cnp_segment_boundaries(&keys, NULL, &fake, NULL, &count, ws, NULL),
               CNP_EDEVICE);
  free(keys.data); free(uk.data); free(uk32.data); free(st7.data); free(st.data);
  free(fk.data);
  cnp_workspace_destroy(ws);
}

/* ---- segment plans --------------------------------------------------------------------- */

/* Reference sums in row order with the documented accumulator, written as the out dtype. */
static double ld_d(const cnp_array *v, int64_t e)
{
  const void *p = v->data;
  switch (v->dtype) {
  case CNP_BOOL: return ((const unsigned char *)p)[e] ? 1.0 : 0.0;
  case CNP_INT32: return ((const int32_t *)p)[e];
  case CNP_INT64: return (double)((const int64_t *)p)[e];
  case CNP_UINT64: return (double)((const uint64_t *)p)[e];
  default: return ((const double *)p)[e];      /* float64 / complex128 scalars */
  }
}

static float ld_f(const cnp_array *v, int64_t e)
{
  if (v->dtype == CNP_FLOAT16) return cnp_half_to_float(((const uint16_t *)v->data)[e]);
  return ((const float *)v->data)[e];           /* float32 / complex64 scalars */
}

static void *reference_sum(const cnp_array *v, const int64_t *keys, int64_t n, int64_t ns)
{
  int64_t kc = 1;
  for (int d = 1; d < v->ndim; d++) kc *= v->shape[d];
  int cplx = v->dtype == CNP_COMPLEX64 || v->dtype == CNP_COMPLEX128;
  if (cplx) kc *= 2;
  int single = v->dtype == CNP_FLOAT32 || v->dtype == CNP_COMPLEX64 || v->dtype == CNP_FLOAT16;
  size_t osz = v->dtype == CNP_FLOAT16 ? 2 : single ? 4 : 8;
  char *out = calloc((size_t)(ns * kc > 0 ? ns * kc : 1), osz);
  for (int64_t s = 0; s < ns; s++)
    for (int64_t c = 0; c < kc; c++) {
      double ad = 0;
      float af = 0;
      for (int64_t i = 0; i < n; i++) {
        if (keys[i] != s) continue;
        if (single) af += ld_f(v, i * kc + c);
        else ad += ld_d(v, i * kc + c);
      }
      size_t at = (size_t)(s * kc + c);
      if (v->dtype == CNP_FLOAT16) ((uint16_t *)out)[at] = cnp_float_to_half(af);
      else if (single) ((float *)out)[at] = af;
      else ((double *)out)[at] = ad;
    }
  return out;
}

static void fill_values(cnp_array *v, uint64_t seed)
{
  int64_t e = numel(v);
  if (v->dtype == CNP_COMPLEX64 || v->dtype == CNP_COMPLEX128) e *= 2;
  for (int64_t i = 0; i < e; i++) {
    double u = rng_unit(&seed) * 4 - 1;
    switch (v->dtype) {
    case CNP_BOOL: ((unsigned char *)v->data)[i] = (unsigned char)(u > 0.5 ? 1 + i % 3 : 0); break;
    case CNP_INT32: ((int32_t *)v->data)[i] = (int32_t)(u * 1e6); break;
    case CNP_INT64: ((int64_t *)v->data)[i] = (int64_t)(u * 1e15); break;
    case CNP_UINT64: ((uint64_t *)v->data)[i] = (uint64_t)((u + 1) * 1e15); break;
    case CNP_FLOAT16: ((uint16_t *)v->data)[i] = cnp_float_to_half((float)u); break;
    case CNP_FLOAT32: case CNP_COMPLEX64: ((float *)v->data)[i] = (float)u; break;
    default: ((double *)v->data)[i] = u; break;
    }
  }
}

typedef struct vcase { cnp_dtype dt; int ndim; int64_t k1, k2; } vcase;

static const vcase VCASES[] = {
    {CNP_FLOAT64, 1, 0, 0}, {CNP_FLOAT64, 2, 3, 0}, {CNP_FLOAT32, 3, 2, 2},
    {CNP_FLOAT16, 1, 0, 0}, {CNP_FLOAT16, 2, 3, 0}, {CNP_COMPLEX64, 1, 0, 0},
    {CNP_COMPLEX128, 2, 2, 0}, {CNP_INT32, 1, 0, 0}, {CNP_INT64, 2, 2, 0},
    {CNP_UINT64, 1, 0, 0}, {CNP_BOOL, 2, 3, 0}, {CNP_FLOAT64, 2, 20, 0},
};
#define N_VCASES ((int)(sizeof VCASES / sizeof VCASES[0]))

/* keys kinds: 0 random with negatives, 1 sorted (identity path), 2 sorted with negatives */
static void run_plan(int64_t n, int64_t ns, int kind, cnp_dtype kdt, uint64_t seed)
{
  cnp_array keys = host_vec(kdt, n);
  int64_t *k64 = malloc((size_t)(n > 0 ? n : 1) * sizeof *k64);
  for (int64_t i = 0; i < n; i++) {
    int64_t v;
    if (kind == 0) v = (int64_t)(rng_next(&seed) % (uint64_t)(ns + 3)) - 3;
    else v = ns > 0 ? i * ns / (n > 0 ? n : 1) : -1;
    if (kind == 2 && i % 7 == 3) v = -1 - (int64_t)(i % 5);
    if (ns == 0) v = -1;
    k64[i] = v;
    if (kdt == CNP_INT32) ((int32_t *)keys.data)[i] = (int32_t)v;
    else ((int64_t *)keys.data)[i] = v;
  }
  cnp_segment_plan *plan;
  cr_assert_eq(cnp_segment_plan_create(&plan, CNP_BACKEND_HOST, 0, n, ns), CNP_OK, "%s",
               cnp_last_error());
  cr_assert_eq(cnp_segment_plan_build(plan, &keys, NULL), CNP_OK, "%s", cnp_last_error());
  int64_t kept, rows, want_kept = 0;
  for (int64_t i = 0; i < n; i++) want_kept += k64[i] >= 0;
  cr_assert_eq(cnp_segment_plan_rows(plan, &kept, &rows), CNP_OK);
  cr_assert_eq(rows, n);
  cr_assert_eq(kept, want_kept);
  for (int c = 0; c < N_VCASES; c++) {
    const vcase *vc = &VCASES[c];
    int64_t vs[3] = {n, vc->k1, vc->k2}, os[3] = {ns, vc->k1, vc->k2};
    cnp_array v = host_array(vc->dt, vc->ndim, vs, 'C');
    cnp_array o = host_array(cnp_segment_sum_dtype(vc->dt), vc->ndim, os, 'C');
    fill_values(&v, seed + (uint64_t)c);
    fill_random(&o, 1);                           /* sum overwrites */
    cr_assert_eq(cnp_segment_plan_sum(plan, &v, &o, NULL), CNP_OK, "%s", cnp_last_error());
    void *ref = reference_sum(&v, k64, n, ns);
    cr_assert(memcmp(o.data, ref, span_bytes(&o)) == 0, "n=%lld ns=%lld kind=%d case %d (%s)",
              (long long)n, (long long)ns, kind, c, cnp_dtype_name(vc->dt));
    /* the one-off call agrees */
    fill_random(&o, 2);
    cr_assert_eq(cnp_segment_sum(&v, &keys, ns, &o, NULL), CNP_OK, "%s", cnp_last_error());
    cr_assert(memcmp(o.data, ref, span_bytes(&o)) == 0);
    free(ref);
    free(v.data);
    free(o.data);
  }
  cr_assert_eq(cnp_segment_plan_destroy(plan), CNP_OK);
  free(k64);
  free(keys.data);
}

Test(algo_plan, property_all_sizes_dtypes)
{
  for (int s = 0; s < ALGO_NSIZES; s++) {
    int64_t n = ALGO_SIZES[s];
    if (n > 1000) continue;                       /* the brute-force reference is O(n * ns) */
    int64_t nss[3] = {1, 5, n / 4 + 2};
    for (int j = 0; j < 3; j++)
      for (int kind = 0; kind < 3; kind++)
        run_plan(n, nss[j], kind, (kind & 1) ? CNP_INT32 : CNP_INT64,
                 (uint64_t)(s * 100 + j * 10 + kind));
  }
  run_plan(40, 0, 0, CNP_INT64, 9);               /* no segments at all */
}

/* The documented order of addition on the host, computed directly: with T threads and the
** row split (unsorted keys, T > 1, n_segments * min(k, g) <= N / 2 where g = min(4,
** (capacity / 2) / n_segments)), the rows are cut into T chunks [N*t/T, N*(t+1)/T), each
** chunk sums its rows in row order from zero, and the chunk partials are added in chunk
** order; otherwise (T = 1 or the condition fails) each segment is summed in row order,
** which is T = 1 here. float16 accumulates in float, everything else as reference_sum. */
static void *reference_parts(const cnp_array *v, const int64_t *keys, int64_t n, int64_t ns,
                             int T)
{
  int64_t kc = 1;
  for (int d = 1; d < v->ndim; d++) kc *= v->shape[d];
  if (v->dtype == CNP_COMPLEX64 || v->dtype == CNP_COMPLEX128) kc *= 2;
  int single = v->dtype == CNP_FLOAT32 || v->dtype == CNP_COMPLEX64 || v->dtype == CNP_FLOAT16;
  size_t m = (size_t)(ns * kc > 0 ? ns * kc : 1);
  double *td = calloc(m, sizeof *td), *pd = calloc(m, sizeof *pd);
  float *tf = calloc(m, sizeof *tf), *pf = calloc(m, sizeof *pf);
  for (int t = 0; t < T; t++) {
    memset(pd, 0, m * sizeof *pd);
    memset(pf, 0, m * sizeof *pf);
    for (int64_t i = n * t / T; i < n * (t + 1) / T; i++) {
      if (keys[i] < 0) continue;
      for (int64_t c = 0; c < kc; c++) {
        if (single) pf[keys[i] * kc + c] += ld_f(v, i * kc + c);
        else pd[keys[i] * kc + c] += ld_d(v, i * kc + c);
      }
    }
    for (size_t e = 0; e < m; e++) {
      if (t == 0) {
        td[e] = pd[e];
        tf[e] = pf[e];
      } else {
        td[e] += pd[e];
        tf[e] += pf[e];
      }
    }
  }
  size_t osz = v->dtype == CNP_FLOAT16 ? 2 : single ? 4 : 8;
  char *out = calloc(m, osz);
  for (size_t e = 0; e < m; e++) {
    if (v->dtype == CNP_FLOAT16) ((uint16_t *)out)[e] = cnp_float_to_half(tf[e]);
    else if (single) ((float *)out)[e] = tf[e];
    else ((double *)out)[e] = td[e];
  }
  free(td); free(pd); free(tf); free(pf);
  return out;
}

/* Threads the documented order uses for a plan of `cap` rows created and used with T
** threads, for N rows, ns segments and k scalars per row (unsorted keys). */
static int parts_used(int T, int64_t cap, int64_t n, int64_t ns, int64_t k)
{
  if (T < 2 || n < 32768 || ns == 0) return 1;
  int64_t g = (cap / 2) / ns;
  g = g > 4 ? 4 : g;
  if (g == 0) return 1;
  int64_t gk = k < g ? k : g;
  return ns * gk <= n / 2 ? T : 1;
}

static const vcase SPLIT_CASES[] = {
    {CNP_FLOAT64, 1, 0, 0}, {CNP_FLOAT64, 2, 3, 0},  {CNP_FLOAT64, 2, 10, 0},
    {CNP_FLOAT32, 3, 3, 3}, {CNP_FLOAT16, 2, 3, 0},  {CNP_FLOAT16, 2, 9, 0},
    {CNP_COMPLEX128, 2, 2, 0}, {CNP_COMPLEX64, 1, 0, 0}, {CNP_INT32, 1, 0, 0},
    {CNP_INT64, 2, 5, 0}, {CNP_BOOL, 2, 3, 0},
};

/* One plan (created with T threads) against the documented order, every dtype above:
** components below, at and above the 4 per pass, float16 in float, complex as pairs. */
static void run_split_d(int T, int64_t n, int64_t ns, cnp_dtype kdt, uint64_t seed,
                        int dropped);
static void run_split(int T, int64_t n, int64_t ns, cnp_dtype kdt, uint64_t seed)
{
  run_split_d(T, n, ns, kdt, seed, 1);
}

/* dropped 0: every key in [0, ns) (the loops without the dropped-row select) */
static void run_split_d(int T, int64_t n, int64_t ns, cnp_dtype kdt, uint64_t seed,
                        int dropped)
{
  set_threads(T);
  cnp_segment_plan *plan;
  cr_assert_eq(cnp_segment_plan_create(&plan, CNP_BACKEND_HOST, 0, n, ns), CNP_OK, "%s",
               cnp_last_error());
  cnp_array keys = host_vec(kdt, n);
  int64_t *k64 = malloc((size_t)n * sizeof *k64);
  for (int64_t i = 0; i < n; i++) {
    k64[i] = (int64_t)(rng_next(&seed) % (uint64_t)(ns + 10)) - 10;   /* some dropped */
    if (!dropped && k64[i] < 0) k64[i] += 10;
    if (kdt == CNP_INT32) ((int32_t *)keys.data)[i] = (int32_t)k64[i];
    else ((int64_t *)keys.data)[i] = k64[i];
  }
  cr_assert_eq(cnp_segment_plan_build(plan, &keys, NULL), CNP_OK, "%s", cnp_last_error());
  for (int c = 0; c < (int)(sizeof SPLIT_CASES / sizeof SPLIT_CASES[0]); c++) {
    const vcase *vc = &SPLIT_CASES[c];
    int64_t vs[3] = {n, vc->k1, vc->k2}, os[3] = {ns, vc->k1, vc->k2};
    cnp_array v = host_array(vc->dt, vc->ndim, vs, 'C');
    cnp_array o = host_array(cnp_segment_sum_dtype(vc->dt), vc->ndim, os, 'C');
    fill_values(&v, seed + (uint64_t)c);
    fill_random(&o, 1);
    int64_t k = numel(&v) / (n > 0 ? n : 1);
    if (vc->dt == CNP_COMPLEX64 || vc->dt == CNP_COMPLEX128) k *= 2;
    int parts = parts_used(T, n, n, ns, k);
    cr_assert_eq(cnp_segment_plan_sum(plan, &v, &o, NULL), CNP_OK, "%s", cnp_last_error());
    void *ref = reference_parts(&v, k64, n, ns, parts);
    cr_assert(memcmp(o.data, ref, span_bytes(&o)) == 0,
              "T=%d n=%lld ns=%lld case %d (%s): not the documented order (%d parts)", T,
              (long long)n, (long long)ns, c, cnp_dtype_name(vc->dt), parts);
    /* and within rounding of the row-order sum (exact for integer-valued data) */
    void *row = reference_parts(&v, k64, n, ns, 1);
    int64_t m = numel(&o) * ((vc->dt == CNP_COMPLEX64 || vc->dt == CNP_COMPLEX128) ? 2 : 1);
    for (int64_t e = 0; e < m; e++) {
      double got, want, tol;
      if (vc->dt == CNP_FLOAT16) {
        got = cnp_half_to_float(((uint16_t *)o.data)[e]);
        want = cnp_half_to_float(((uint16_t *)row)[e]);
        tol = 1e-2 * (1 + fabs(want));
      } else if (vc->dt == CNP_FLOAT32 || vc->dt == CNP_COMPLEX64) {
        got = ((float *)o.data)[e];
        want = ((float *)row)[e];
        tol = 1e-4 * (1 + fabs(want));
      } else {
        got = ((double *)o.data)[e];
        want = ((double *)row)[e];
        int integral = vc->dt == CNP_INT32 || vc->dt == CNP_BOOL;
        tol = integral ? 0 : 1e-12 * (1 + fabs(want));
      }
      cr_assert(fabs(got - want) <= tol, "T=%d case %d (%s) [%lld]: %.17g vs row order %.17g",
                T, c, cnp_dtype_name(vc->dt), (long long)e, got, want);
    }
    free(row);
    free(ref);
    free(v.data);
    free(o.data);
  }
  cr_assert_eq(cnp_segment_plan_destroy(plan), CNP_OK);
  free(k64);
  free(keys.data);
  set_threads(1);
}

/* Unsorted keys, few segments: the rows are split between threads; results follow the
** documented order for 1, 2 and 3 threads, bit for bit, and stay within rounding of one
** thread's (exactly equal for integer-valued data). */
Test(algo_plan, row_split_documented_order)
{
  for (int T = 1; T <= 3; T++) {
    run_split(T, 100000, 1563, CNP_INT64, 77 + (uint64_t)T);
    run_split(T, 40000, 7, CNP_INT32, 5 + (uint64_t)T);
    run_split_d(T, 100000, 1563, CNP_INT32, 31 + (uint64_t)T, 0);   /* none dropped */
    run_split_d(T, 100000, 1563, CNP_INT64, 41 + (uint64_t)T, 0);
  }
}

/* More segments than the row split allows (n_segments * g above N / 2, and n_segments
** larger than N): threads own segments, every segment is summed in row order whatever the
** thread count. Also the boundary on either side of N / 2. */
Test(algo_plan, many_segments_threads)
{
  for (int T = 1; T <= 3; T++) {
    run_split(T, 40000, 100000, CNP_INT32, 11);   /* n_segments > N */
    run_split(T, 40000, 20000, CNP_INT64, 12);    /* ns * 1 == N / 2: split for k == 1 */
    run_split(T, 40000, 20001, CNP_INT64, 13);    /* just above: segments owned */
    run_split(T, 40000, 6666, CNP_INT32, 14);     /* passes of 3 components (g = 3) */
  }
}

/* Plan builds where only some thread chunks are sorted: a single descent (inside a chunk,
** at chunk edges for 2 and 3 threads), one negative key, and a key >= n_segments inside a
** sorted block or after an unsorted one (exact index). Values are small integers, so every
** order of addition gives the exact sums, checked against a direct count. */
Test(algo_plan, build_partly_sorted)
{
  int64_t n = 100000, ns = 1000;
  int64_t spots[] = {1, 2048, 33333, 33334, 50000, 66667, 99999};
  for (int T = 1; T <= 3; T++) {
    set_threads(T);
    cnp_segment_plan *plan;
    cr_assert_eq(cnp_segment_plan_create(&plan, CNP_BACKEND_HOST, 0, n, ns), CNP_OK);
    cnp_array keys = host_vec(CNP_INT64, n), v = host_vec(CNP_FLOAT64, n);
    cnp_array o = host_vec(CNP_FLOAT64, ns);
    int64_t *k = keys.data;
    double *vd = v.data, *ref = malloc((size_t)ns * sizeof *ref);
    for (int64_t i = 0; i < n; i++) vd[i] = (double)(i % 7) - 3;
    for (int kind = 0; kind < 2; kind++)
      for (size_t p = 0; p < sizeof spots / sizeof spots[0]; p++) {
        int64_t at = spots[p];
        for (int64_t i = 0; i < n; i++) k[i] = i / 100;
        if (kind == 0) k[at] = k[at - 1] - 1 >= 0 ? k[at - 1] - 1 : 5;   /* one descent */
        else k[at] = -1;                                                  /* one dropped */
        cr_assert_eq(cnp_segment_plan_build(plan, &keys, NULL), CNP_OK, "%s", cnp_last_error());
        int64_t kept, rows;
        cnp_segment_plan_rows(plan, &kept, &rows);
        cr_assert_eq(kept, kind == 1 ? n - 1 : n);
        cr_assert_eq(cnp_segment_plan_sum(plan, &v, &o, NULL), CNP_OK);
        memset(ref, 0, (size_t)ns * sizeof *ref);
        for (int64_t i = 0; i < n; i++)
          if (k[i] >= 0) ref[k[i]] += vd[i];
        cr_assert(memcmp(o.data, ref, (size_t)ns * sizeof *ref) == 0,
                  "T=%d kind %d at %lld", T, kind, (long long)at);
      }
    /* key >= n_segments: in a sorted block, and after an unsorted stretch */
    for (int64_t i = 0; i < n; i++) k[i] = i / 100;
    k[70000] = ns;
    k[70001] = ns + 5;
    cr_assert_eq(cnp_segment_plan_build(plan, &keys, NULL), CNP_ERANGE);
    expect_msg("keys[70000] = 1000 >= n_segments 1000");
    k[100] = 0;                                  /* a descent before it */
    cr_assert_eq(cnp_segment_plan_build(plan, &keys, NULL), CNP_ERANGE);
    expect_msg("keys[70000] = 1000 >= n_segments 1000");
    cr_assert_eq(cnp_segment_plan_sum(plan, &v, &o, NULL), CNP_ESTATE);
    free(ref); free(keys.data); free(v.data); free(o.data);
    cnp_segment_plan_destroy(plan);
  }
  set_threads(1);
}

Test(algo_plan, errors)
{
  cnp_segment_plan *plan = NULL;
  cr_expect_eq(cnp_segment_plan_create(NULL, CNP_BACKEND_HOST, 0, 8, 4), CNP_EINVAL);
  cr_expect_eq(cnp_segment_plan_create(&plan, CNP_BACKEND_HOST, 0, -8, 4), CNP_EINVAL);
  cr_expect_eq(cnp_segment_plan_create(&plan, CNP_BACKEND_HOST, 0, 8, -4), CNP_EINVAL);
  cr_expect_eq(cnp_segment_plan_create(&plan, CNP_BACKEND_HOST, 2, 8, 4), CNP_EDEVICE);
#ifndef CNP_HAVE_CUDA
  cr_expect_eq(cnp_segment_plan_create(&plan, CNP_BACKEND_CUDA, 0, 8, 4), CNP_EUNSUPPORTED);
#endif
  cr_assert_eq(cnp_segment_plan_create(&plan, CNP_BACKEND_HOST, 0, 8, 4), CNP_OK);
  cnp_array keys = host_vec(CNP_INT64, 8), k9 = host_vec(CNP_INT64, 9);
  cnp_array fk = host_vec(CNP_FLOAT64, 8), uk = host_vec(CNP_UINT64, 8);
  int64_t s83[2] = {8, 3}, s43[2] = {4, 3}, s42[2] = {4, 2}, s53[2] = {5, 3};
  cnp_array v = host_array(CNP_FLOAT64, 2, s83, 'C'), o = host_array(CNP_FLOAT64, 2, s43, 'C');
  cnp_array o32 = host_array(CNP_FLOAT32, 2, s43, 'C'), o42 = host_array(CNP_FLOAT64, 2, s42, 'C');
  cnp_array v5 = host_array(CNP_FLOAT64, 2, s53, 'C');
  cnp_array oF = host_array(CNP_FLOAT64, 2, s43, 'F');
  cnp_array vi = host_array(CNP_INT32, 2, s83, 'C');

  /* sum before build */
  cr_expect_eq(cnp_segment_plan_sum(plan, &v, &o, NULL), CNP_ESTATE);
  expect_msg("has not been built");
  /* build errors */
  cr_expect_eq(cnp_segment_plan_build(NULL, &keys, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_segment_plan_build(plan, NULL, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_segment_plan_build(plan, &fk, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_segment_plan_build(plan, &uk, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_segment_plan_build(plan, &k9, NULL), CNP_EOVERFLOW);
  int64_t *kk = keys.data;
  int64_t kv[8] = {0, 1, -1, 3, 9, 2, 4, 0};
  memcpy(kk, kv, sizeof kv);
  cr_expect_eq(cnp_segment_plan_build(plan, &keys, NULL), CNP_ERANGE);
  expect_msg("cnp_segment_plan_build: keys[4] = 9 >= n_segments 4");
  cr_expect_eq(cnp_segment_plan_sum(plan, &v, &o, NULL), CNP_ESTATE);   /* unbuilt now */
  kk[4] = -7;
  kk[6] = 3;
  cr_assert_eq(cnp_segment_plan_build(plan, &keys, NULL), CNP_OK, "%s", cnp_last_error());

  /* sum errors */
  cr_expect_eq(cnp_segment_plan_sum(plan, &v, &o32, NULL), CNP_EDTYPE);
  expect_msg("out is float32; the sum of float64 values is float64");
  cr_expect_eq(cnp_segment_plan_sum(plan, &vi, &o32, NULL), CNP_EDTYPE);   /* int -> f64 */
  cr_expect_eq(cnp_segment_plan_sum(plan, &v, &o42, NULL), CNP_ESHAPE);
  expect_msg("out must have shape (4, 3)");
  cr_expect_eq(cnp_segment_plan_sum(plan, &v5, &o, NULL), CNP_ESHAPE);
  cr_expect_eq(cnp_segment_plan_sum(plan, &v, &oF, NULL), CNP_ELAYOUT);
  cnp_array vstr = v;                            /* every other row: not contiguous */
  vstr.strides[0] *= 2;
  cr_expect_eq(cnp_segment_plan_sum(plan, &vstr, &o, NULL), CNP_ELAYOUT);
  cnp_array over = v;                            /* out inside values */
  over.shape[0] = 4;
  cr_expect_eq(cnp_segment_plan_sum(plan, &v, &over, NULL), CNP_EALIAS);
  cnp_array fake = o;
  fake.backend = CNP_BACKEND_CUDA;
  cr_expect_eq(cnp_segment_plan_sum(plan, &v, &fake, NULL), CNP_EDEVICE);
  cr_expect_eq(cnp_segment_plan_sum(NULL, &v, &o, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_segment_plan_sum(plan, NULL, &o, NULL), CNP_EINVAL);

  /* it still works, and dropped the negative keys */
  double *vd = v.data;
  for (int i = 0; i < 24; i++) vd[i] = i;
  cr_assert_eq(cnp_segment_plan_sum(plan, &v, &o, NULL), CNP_OK, "%s", cnp_last_error());
  /* keys {0, 1, -1, 3, -7, 2, 3, 0}: seg0 rows 0,7; seg1 row 1; seg2 row 5; seg3 rows 3,6 */
  double want[12] = {0 + 21, 1 + 22, 2 + 23, 3, 4, 5, 15, 16, 17, 9 + 18, 10 + 19, 11 + 20};
  cr_expect_arr_eq(o.data, want, sizeof want);

  /* the one-off call reports the same errors */
  cr_expect_eq(cnp_segment_sum(&v, &keys, 4, &o32, NULL), CNP_EDTYPE);
  cr_expect_eq(cnp_segment_sum(&v, &keys, -1, &o, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_segment_sum(&v, &fk, 4, &o, NULL), CNP_EDTYPE);

  cr_expect_eq(cnp_segment_plan_destroy(plan), CNP_OK);
  cr_expect_eq(cnp_segment_plan_destroy(NULL), CNP_OK);
  free(keys.data); free(k9.data); free(fk.data); free(uk.data); free(v.data); free(o.data);
  free(o32.data); free(o42.data); free(v5.data); free(oF.data); free(vi.data);
}
