/*
** test_catalog.c — kernel catalog: launch checks (pure), registration, cache keys, and
** NVRTC compilation to PTX (CUDA builds; no GPU needed) or CNP_EUNSUPPORTED (builds
** without CUDA). Loading and launching need a device: tests/cuda covers them.
*/
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cnp/cnp.h"
#include "cnp/catalog.h"

/* An sm_90-like device (H100/H200). */
static cnp_device_limits h100(void)
{
  cnp_device_limits l = {90, 1024, {1024, 1024, 64}, {2147483647, 65535, 65535},
                         49152, 232448};
  return l;
}

static cnp_dim3 d3(uint32_t x, uint32_t y, uint32_t z)
{
  cnp_dim3 d = {x, y, z};
  return d;
}

static void expect_msg(const char *part)
{
  cr_expect(strstr(cnp_last_error(), part) != NULL, "'%s' not in '%s'", part,
            cnp_last_error());
}

/* ---- cnp_launch_check ----------------------------------------------------------------- */

Test(catalog, launch_check_accepts_limits)
{
  cnp_device_limits l = h100();
  cr_expect_eq(cnp_launch_check(&l, "k", d3(2147483647u, 65535, 65535), d3(1024, 1, 1), 0, 0),
               CNP_OK);
  cr_expect_eq(cnp_launch_check(&l, "k", d3(1, 1, 1), d3(16, 16, 4), 49152, 0), CNP_OK);
  cr_expect_eq(cnp_launch_check(&l, "k", d3(1, 1, 1), d3(32, 1, 1), 1024, 232448 - 1024),
               CNP_OK);
}

Test(catalog, launch_check_grid)
{
  cnp_device_limits l = h100();
  cr_expect_eq(cnp_launch_check(&l, "push", d3(4, 70000, 1), d3(128, 1, 1), 0, 0),
               CNP_ELAUNCH);
  expect_msg("kernel 'push': grid.y = 70000 exceeds the device limit 65535");
  cr_expect_eq(cnp_launch_check(&l, "push", d3(4, 1, 65536), d3(128, 1, 1), 0, 0),
               CNP_ELAUNCH);
  expect_msg("grid.z = 65536 exceeds the device limit 65535");
  l.max_grid_dim[0] = 1000;
  cr_expect_eq(cnp_launch_check(&l, "push", d3(1001, 1, 1), d3(1, 1, 1), 0, 0), CNP_ELAUNCH);
  expect_msg("grid.x = 1001 exceeds the device limit 1000");
}

Test(catalog, launch_check_block_dims_and_threads)
{
  cnp_device_limits l = h100();
  cr_expect_eq(cnp_launch_check(&l, "dep", d3(1, 1, 1), d3(1, 1, 65), 0, 0), CNP_ELAUNCH);
  expect_msg("kernel 'dep': block.z = 65 exceeds the device limit 64");
  cr_expect_eq(cnp_launch_check(&l, "dep", d3(1, 1, 1), d3(2048, 1, 1), 0, 0), CNP_ELAUNCH);
  expect_msg("block.x = 2048 exceeds the device limit 1024");
  cr_expect_eq(cnp_launch_check(&l, "dep", d3(1, 1, 1), d3(32, 32, 2), 0, 0), CNP_ELAUNCH);
  expect_msg("kernel 'dep': block.x * block.y * block.z = 2048 threads exceeds the device "
             "limit 1024");
}

Test(catalog, launch_check_shared_memory)
{
  cnp_device_limits l = h100();
  cr_expect_eq(cnp_launch_check(&l, "sm", d3(1, 1, 1), d3(64, 1, 1), 49153, 0), CNP_ELAUNCH);
  expect_msg("kernel 'sm': static shared memory 49153 bytes exceeds the device limit 49152 "
             "bytes");
  cr_expect_eq(cnp_launch_check(&l, "sm", d3(1, 1, 1), d3(64, 1, 1), 1024, 232448 - 1023),
               CNP_ELAUNCH);
  expect_msg("kernel 'sm': static + dynamic shared memory 1024 + 231425 bytes exceeds the "
             "device limit 232448 bytes");
  /* Without an opt-in limit, the per-block limit caps static + dynamic. */
  l.max_shared_per_block_optin = 0;
  cr_expect_eq(cnp_launch_check(&l, "sm", d3(1, 1, 1), d3(64, 1, 1), 0, 49153), CNP_ELAUNCH);
  expect_msg("device limit 49152 bytes");
}

Test(catalog, launch_check_bad_arguments)
{
  cnp_device_limits l = h100();
  cr_expect_eq(cnp_launch_check(NULL, "k", d3(1, 1, 1), d3(1, 1, 1), 0, 0), CNP_EINVAL);
  cr_expect_eq(cnp_launch_check(&l, "k", d3(0, 1, 1), d3(1, 1, 1), 0, 0), CNP_EINVAL);
  expect_msg("kernel 'k': grid.x = 0 (must be >= 1)");
  cr_expect_eq(cnp_launch_check(&l, "k", d3(1, 1, 1), d3(1, 0, 1), 0, 0), CNP_EINVAL);
  expect_msg("block.y = 0");
}

/* ---- registration and keys (every build) ---------------------------------------------- */

static const char *k_simple =
    "extern \"C\" __global__ void simple(int *out) { out[threadIdx.x] = VALUE; }\n";

static cnp_catalog *make(int arch, const char *cache_dir)
{
  cnp_catalog_config cfg = CNP_CATALOG_CONFIG_INIT;
  cnp_catalog *cat = NULL;
  cfg.arch = arch;
  cfg.cache_dir = cache_dir ? cache_dir : "";
  cr_assert_eq(cnp_catalog_create(&cat, &cfg), CNP_OK, "%s", cnp_last_error());
  return cat;
}

Test(catalog, registration_errors)
{
  cnp_catalog *cat = make(90, NULL);
  const char *opt[] = {"-DVALUE=1"};
  cr_expect_eq(cnp_catalog_add_source(cat, "simple", k_simple, NULL, opt, 1), CNP_OK);
  cr_expect_eq(cnp_catalog_add_source(cat, "simple", k_simple, NULL, opt, 1), CNP_EINVAL);
  expect_msg("kernel 'simple' is already in the catalog");
  cr_expect_eq(cnp_catalog_add_source(cat, "other", NULL, NULL, NULL, 0), CNP_EINVAL);
  cr_expect_eq(cnp_catalog_add_source(cat, "other", k_simple, NULL, NULL, -1), CNP_EINVAL);
  cr_expect_eq(cnp_catalog_add_file(cat, "f", "/nonexistent/k.cu", NULL, 0), CNP_EIO);
  expect_msg("cannot open '/nonexistent/k.cu'");
  const char *log = NULL;
  cr_expect_eq(cnp_catalog_log(cat, "nope", &log), CNP_EINVAL);
  expect_msg("no kernel 'nope' in the catalog");
  cr_expect_eq(cnp_catalog_log(cat, "simple", &log), CNP_OK);
  cr_expect_str_eq(log, "");
  cr_expect_eq(cnp_catalog_image(cat, "simple", 90, NULL, NULL, NULL), CNP_ESTATE);
  expect_msg("kernel 'simple' has not been compiled for compute_90");
  cr_expect_eq(cnp_catalog_destroy(cat), CNP_OK);
}

Test(catalog, config_checks)
{
  cnp_catalog_config cfg = CNP_CATALOG_CONFIG_INIT;
  cnp_catalog *cat = NULL;
  cfg.size = 4;
  cr_expect_eq(cnp_catalog_create(&cat, &cfg), CNP_EINVAL);
  cr_expect_null(cat);
  cfg = (cnp_catalog_config)CNP_CATALOG_CONFIG_INIT;
  cfg.arch = -3;
  cr_expect_eq(cnp_catalog_create(&cat, &cfg), CNP_EINVAL);
  cr_expect_eq(cnp_catalog_create(NULL, NULL), CNP_EINVAL);
  cr_expect_eq(cnp_catalog_destroy(NULL), CNP_OK);
}

Test(catalog, directories_from_config_and_environment)
{
  cnp_catalog *cat = NULL;
  unsetenv("CNP_KERNEL_CACHE");
  unsetenv("CNP_INCLUDE_DIR");
  cr_assert_eq(cnp_catalog_create(&cat, NULL), CNP_OK);
  cr_expect_str_eq(cnp_catalog_cache_dir(cat), "");           /* off by default */
  cr_expect(strstr(cnp_catalog_include_dir(cat), "include") != NULL);  /* build tree */
  cnp_catalog_destroy(cat);
  setenv("CNP_KERNEL_CACHE", "/tmp/cnp-kc-env", 1);
  setenv("CNP_INCLUDE_DIR", "/opt/cnp/include", 1);
  cr_assert_eq(cnp_catalog_create(&cat, NULL), CNP_OK);
  cr_expect_str_eq(cnp_catalog_cache_dir(cat), "/tmp/cnp-kc-env");
  cr_expect_str_eq(cnp_catalog_include_dir(cat), "/opt/cnp/include");
  cnp_catalog_destroy(cat);
  cnp_catalog_config cfg = CNP_CATALOG_CONFIG_INIT;
  cfg.cache_dir = "";
  cfg.include_dir = "/x/include";
  cr_assert_eq(cnp_catalog_create(&cat, &cfg), CNP_OK);
  cr_expect_str_eq(cnp_catalog_cache_dir(cat), "");
  cr_expect_str_eq(cnp_catalog_include_dir(cat), "/x/include");
  cnp_catalog_destroy(cat);
}

Test(catalog, cache_keys_differ_by_arch_and_options)
{
  cnp_catalog *cat = make(80, NULL);
  const char *o1[] = {"-DVALUE=1"}, *o2[] = {"-DVALUE=2"};
  char k80[17], k90[17], k80b[17], kother[17];
  cr_assert_eq(cnp_catalog_add_source(cat, "simple", k_simple, NULL, o1, 1), CNP_OK);
  cr_assert_eq(cnp_catalog_add_source(cat, "other", k_simple, NULL, o2, 1), CNP_OK);
  cr_assert_eq(cnp_catalog_cache_key(cat, "simple", 80, k80), CNP_OK);
  cr_assert_eq(cnp_catalog_cache_key(cat, "simple", 90, k90), CNP_OK);
  cr_assert_eq(cnp_catalog_cache_key(cat, "simple", 0, k80b), CNP_OK);  /* cfg.arch */
  cr_assert_eq(cnp_catalog_cache_key(cat, "other", 80, kother), CNP_OK);
  cr_expect_eq(strlen(k80), 16);
  cr_expect_eq(strspn(k80, "0123456789abcdef"), 16);
  cr_expect_str_neq(k80, k90);
  cr_expect_str_eq(k80, k80b);
  cr_expect_str_neq(k80, kother);
  cnp_catalog_destroy(cat);
}

static void write_text(const char *path, const char *text)
{
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

Test(catalog, cache_key_covers_cnp_headers_and_include_dir)
{
  char dir[64], sub[96], path[128];
  snprintf(dir, sizeof dir, "/tmp/cnp-test-inc-XXXXXX");
  cr_assert_not_null(mkdtemp(dir));
  snprintf(sub, sizeof sub, "%s/cnp", dir);
  cr_assert_eq(mkdir(sub, 0700), 0);
  snprintf(path, sizeof path, "%s/scan.cuh", sub);
  write_text(path, "/* version 1 */\n");
  cnp_catalog_config cfg = CNP_CATALOG_CONFIG_INIT;
  const char *opt[] = {"-DVALUE=1"};
  char k1[17], k2[17], k3[17];
  cnp_catalog *cat = NULL;
  cfg.arch = 90;
  cfg.cache_dir = "";
  cfg.include_dir = dir;
  cr_assert_eq(cnp_catalog_create(&cat, &cfg), CNP_OK);
  cr_assert_eq(cnp_catalog_add_source(cat, "simple", k_simple, NULL, opt, 1), CNP_OK);
  cr_assert_eq(cnp_catalog_cache_key(cat, "simple", 90, k1), CNP_OK);
  cnp_catalog_destroy(cat);
  write_text(path, "/* version 2 */\n");
  cr_assert_eq(cnp_catalog_create(&cat, &cfg), CNP_OK);
  cr_assert_eq(cnp_catalog_add_source(cat, "simple", k_simple, NULL, opt, 1), CNP_OK);
  cr_assert_eq(cnp_catalog_cache_key(cat, "simple", 90, k2), CNP_OK);
  cnp_catalog_destroy(cat);
  cr_expect_str_neq(k1, k2);                 /* a changed cnp header is a new key */
  cfg.include_dir = "/nonexistent/include";
  cr_assert_eq(cnp_catalog_create(&cat, &cfg), CNP_OK);
  cr_assert_eq(cnp_catalog_add_source(cat, "simple", k_simple, NULL, opt, 1), CNP_OK);
  cr_assert_eq(cnp_catalog_cache_key(cat, "simple", 90, k3), CNP_OK);
  cnp_catalog_destroy(cat);
  cr_expect_str_neq(k2, k3);                 /* so is another include dir */
  remove(path);
  rmdir(sub);
  rmdir(dir);
}

#ifndef CNP_HAVE_CUDA

/* ---- builds without CUDA ---------------------------------------------------------------- */

Test(catalog, nocuda_answers_unsupported)
{
  cnp_catalog *cat = make(90, NULL);
  const char *opt[] = {"-DVALUE=1"};
  cnp_device_limits l;
  cr_assert_eq(cnp_catalog_add_source(cat, "simple", k_simple, NULL, opt, 1), CNP_OK);
  cr_expect_eq(cnp_catalog_setup(cat), CNP_EUNSUPPORTED);
  expect_msg("built without CUDA");
  cr_expect_eq(cnp_catalog_compile(cat, "simple", 80), CNP_EUNSUPPORTED);
  cr_expect_eq(cnp_catalog_recompile(cat, "simple", NULL, 0), CNP_EUNSUPPORTED);
  cr_expect_eq(cnp_catalog_compile(cat, "simple", 0), CNP_EUNSUPPORTED);
  expect_msg("built without CUDA");
  cr_expect_eq(cnp_catalog_launch(cat, "simple", d3(1, 1, 1), d3(32, 1, 1), 0, NULL, NULL),
               CNP_EUNSUPPORTED);
  expect_msg("built without CUDA");
  cr_expect_eq(cnp_device_limits_query(0, &l), CNP_EUNSUPPORTED);
  expect_msg("built without CUDA");
  cnp_catalog_stats st;
  cr_assert_eq(cnp_catalog_stats_get(cat, &st), CNP_OK);
  cr_expect_eq(st.launches, 0);
  cnp_catalog_destroy(cat);
}

#else

/* ---- NVRTC (CUDA builds; no GPU needed) ------------------------------------------------- */

/* A kernel that uses both device headers: per-block compaction counts plus a histogram. */
static const char *k_headers =
    "#include <cnp/scan.cuh>\n"
    "#include <cnp/atomic.cuh>\n"
    "extern \"C\" __global__ void count_alive(const int *alive, int *offset,\n"
    "                                         long long *total, double *w, int n)\n"
    "{\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  int flag = i < n ? alive[i] != 0 : 0;\n"
    "  int block_total;\n"
    "  int pos = cnp_block_exclusive_sum(flag, &block_total);\n"
    "  unsigned lanes = cnp_warp_sum_mask(0x55555555u, 1u);\n"
    "  int alive_in_block = cnp_block_sum(flag != 0);          /* bool overload */\n"
    "  double s = cnp_warp_inclusive_sum((double)flag);\n"
    "  if (i < n) offset[i] = pos + ((int)lanes + alive_in_block) * 0;\n"
    "  if (cnp_block_thread() == 0) cnp_atomic_add(total, (long long)block_total);\n"
    "  if (i < n) cnp_atomic_add_2d(w, 4, 1, i % 4, s);\n"
    "}\n";

static int contains(const char *hay, size_t n, const char *needle)
{
  size_t m = strlen(needle);
  for (size_t i = 0; i + m <= n; i++)
    if (memcmp(hay + i, needle, m) == 0) return 1;
  return 0;
}

Test(catalog, nvrtc_compiles_headers_to_ptx_for_sm80_and_sm90)
{
  cnp_catalog *cat = make(80, NULL);
  const char *ptx = NULL;
  size_t n = 0;
  int is_ptx = 0;
  cr_assert_eq(cnp_catalog_add_source(cat, "count_alive", k_headers, NULL, NULL, 0), CNP_OK);
  cr_assert_eq(cnp_catalog_setup(cat), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_catalog_image(cat, "count_alive", 80, &ptx, &n, &is_ptx), CNP_OK);
  cr_expect_eq(is_ptx, 1);
  cr_expect_eq(strlen(ptx), n);
  cr_expect(contains(ptx, n, ".target sm_80"));
  cr_expect(contains(ptx, n, ".entry count_alive"));
  cr_expect(contains(ptx, n, "shfl.sync"));
  cr_expect(contains(ptx, n, "atom.global.add"));
  cr_assert_eq(cnp_catalog_compile(cat, "count_alive", 90), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_catalog_image(cat, "count_alive", 90, &ptx, &n, &is_ptx), CNP_OK);
  cr_expect(contains(ptx, n, ".target sm_90"));
  cnp_catalog_stats st;
  cnp_catalog_stats_get(cat, &st);
  cr_expect_eq(st.compiles, 2);
  /* Asking again is a memory hit, not a compilation. */
  cr_assert_eq(cnp_catalog_compile(cat, "count_alive", 90), CNP_OK);
  cnp_catalog_stats_get(cat, &st);
  cr_expect_eq(st.compiles, 2);
  cr_expect_eq(st.memory_hits, 1);
  cnp_catalog_destroy(cat);
}

Test(catalog, nvrtc_headers_compile_as_cxx11_and_device_default)
{
  const char *opts[] = {"--std=c++11", "--device-as-default-execution-space"};
  cnp_catalog_config cfg = CNP_CATALOG_CONFIG_INIT;
  cnp_catalog *cat = NULL;
  cfg.arch = 90;
  cfg.cache_dir = "";
  cfg.options = opts;
  cfg.n_options = 2;
  cr_assert_eq(cnp_catalog_create(&cat, &cfg), CNP_OK);
  cr_assert_eq(cnp_catalog_add_source(cat, "count_alive", k_headers, NULL, NULL, 0), CNP_OK);
  cr_expect_eq(cnp_catalog_setup(cat), CNP_OK, "%s", cnp_last_error());
  cnp_catalog_destroy(cat);
}

Test(catalog, nvrtc_syntax_error_reports_log_at_setup)
{
  cnp_catalog *cat = make(90, NULL);
  const char *bad = "extern \"C\" __global__ void bad(int *o)\n{\n  o[0] = 1\n}\n";
  const char *log = NULL;
  cr_assert_eq(cnp_catalog_add_source(cat, "bad", bad, "bad.cu", NULL, 0), CNP_OK);
  cr_expect_eq(cnp_catalog_setup(cat), CNP_ECOMPILE);
  expect_msg("cnp_catalog_setup: kernel 'bad' (bad.cu, --gpu-architecture=compute_90): "
             "NVRTC compilation failed:");
  expect_msg("bad.cu(4): error: expected a \";\"");
  cr_assert_eq(cnp_catalog_log(cat, "bad", &log), CNP_OK);
  cr_expect(strstr(log, "bad.cu(4): error: expected a \";\"") != NULL, "log: %s", log);
  cr_expect_eq(cnp_catalog_image(cat, "bad", 90, NULL, NULL, NULL), CNP_ESTATE);
  cnp_catalog_destroy(cat);
}

Test(catalog, nvrtc_unknown_kernel_name_fails_at_setup)
{
  cnp_catalog *cat = make(90, NULL);
  const char *opt[] = {"-DVALUE=1"};
  cr_assert_eq(cnp_catalog_add_source(cat, "missing", k_simple, NULL, opt, 1), CNP_OK);
  cr_expect_eq(cnp_catalog_setup(cat), CNP_ECOMPILE);
  expect_msg("kernel 'missing'");
  cnp_catalog_destroy(cat);
}

Test(catalog, recompile_picks_up_new_options)
{
  cnp_catalog *cat = make(90, NULL);
  const char *o1[] = {"-DVALUE=12345"}, *o2[] = {"-DVALUE=67890"};
  const char *ptx = NULL;
  size_t n = 0;
  char key1[17], key2[17];
  cr_assert_eq(cnp_catalog_add_source(cat, "simple", k_simple, NULL, o1, 1), CNP_OK);
  cr_assert_eq(cnp_catalog_setup(cat), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_catalog_image(cat, "simple", 90, &ptx, &n, NULL), CNP_OK);
  cr_expect(contains(ptx, n, "12345"));
  cr_assert_eq(cnp_catalog_cache_key(cat, "simple", 90, key1), CNP_OK);
  cr_assert_eq(cnp_catalog_recompile(cat, "simple", o2, 1), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_catalog_image(cat, "simple", 90, &ptx, &n, NULL), CNP_OK);
  cr_expect(contains(ptx, n, "67890"));
  cr_expect(!contains(ptx, n, "12345"));
  cr_assert_eq(cnp_catalog_cache_key(cat, "simple", 90, key2), CNP_OK);
  cr_expect_str_neq(key1, key2);
  cnp_catalog_stats st;
  cnp_catalog_stats_get(cat, &st);
  cr_expect_eq(st.compiles, 2);
  /* recompile of everything with options is refused; without, it compiles again */
  cr_expect_eq(cnp_catalog_recompile(cat, NULL, o1, 1), CNP_EINVAL);
  cr_expect_eq(cnp_catalog_recompile(cat, NULL, NULL, 0), CNP_OK);
  cnp_catalog_stats_get(cat, &st);
  cr_expect_eq(st.compiles, 3);
  cnp_catalog_destroy(cat);
}

static void temp_dir(char *buf, size_t n)
{
  snprintf(buf, n, "/tmp/cnp-test-kc-XXXXXX");
  cr_assert_not_null(mkdtemp(buf));
}

static void remove_dir(const char *dir)
{
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_expect_eq(system(cmd), 0);
}

Test(catalog, recompile_rereads_file_source)
{
  char dir[64], path[128];
  temp_dir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/k.cu", dir);
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("extern \"C\" __global__ void fk(int *o) { o[0] = 11111; }\n", f);
  fclose(f);
  cnp_catalog *cat = make(80, NULL);
  const char *ptx = NULL;
  size_t n = 0;
  cr_assert_eq(cnp_catalog_add_file(cat, "fk", path, NULL, 0), CNP_OK);
  cr_assert_eq(cnp_catalog_setup(cat), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_catalog_image(cat, "fk", 80, &ptx, &n, NULL), CNP_OK);
  cr_expect(contains(ptx, n, "11111"));
  f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("extern \"C\" __global__ void fk(int *o) { o[0] = 22222; }\n", f);
  fclose(f);
  cr_assert_eq(cnp_catalog_recompile(cat, "fk", NULL, 0), CNP_OK, "%s", cnp_last_error());
  cr_assert_eq(cnp_catalog_image(cat, "fk", 80, &ptx, &n, NULL), CNP_OK);
  cr_expect(contains(ptx, n, "22222"));
  cnp_catalog_destroy(cat);
  remove_dir(dir);
}

Test(catalog, disk_cache_hit_avoids_recompilation)
{
  char dir[64];
  temp_dir(dir, sizeof dir);
  const char *opt[] = {"-DVALUE=4242"};
  const char *ptx1 = NULL, *ptx2 = NULL;
  size_t n1 = 0, n2 = 0;
  cnp_catalog_stats st;

  cnp_catalog *a = make(90, dir);
  cr_assert_eq(cnp_catalog_add_source(a, "simple", k_simple, NULL, opt, 1), CNP_OK);
  cr_assert_eq(cnp_catalog_setup(a), CNP_OK, "%s", cnp_last_error());
  cnp_catalog_stats_get(a, &st);
  cr_expect_eq(st.compiles, 1);
  cr_expect_eq(st.disk_hits, 0);
  cr_expect_eq(st.disk_writes, 1);
  cr_assert_eq(cnp_catalog_image(a, "simple", 90, &ptx1, &n1, NULL), CNP_OK);

  cnp_catalog *b = make(90, dir);            /* a second process would see the same */
  cr_assert_eq(cnp_catalog_add_source(b, "simple", k_simple, NULL, opt, 1), CNP_OK);
  cr_assert_eq(cnp_catalog_setup(b), CNP_OK, "%s", cnp_last_error());
  cnp_catalog_stats_get(b, &st);
  cr_expect_eq(st.compiles, 0);
  cr_expect_eq(st.disk_hits, 1);
  cr_assert_eq(cnp_catalog_image(b, "simple", 90, &ptx2, &n2, NULL), CNP_OK);
  cr_expect_eq(n1, n2);
  cr_expect_eq(memcmp(ptx1, ptx2, n1), 0);

  /* Another architecture is another key: a miss. Recompile skips the disk lookup. */
  cr_assert_eq(cnp_catalog_compile(b, "simple", 80), CNP_OK);
  cr_assert_eq(cnp_catalog_recompile(b, "simple", NULL, 0), CNP_OK);
  cnp_catalog_stats_get(b, &st);
  cr_expect_eq(st.compiles, 3);
  cr_expect_eq(st.disk_hits, 1);
  cnp_catalog_destroy(a);
  cnp_catalog_destroy(b);
  remove_dir(dir);
}

Test(catalog, no_device_paths)
{
  if (cnp_cuda_available(NULL)) cr_skip_test("a CUDA device is present (tests/cuda covers it)");
  cnp_catalog *cat = make(0, NULL);          /* compile for the current device */
  const char *opt[] = {"-DVALUE=1"};
  cnp_device_limits l;
  cr_assert_eq(cnp_catalog_add_source(cat, "simple", k_simple, NULL, opt, 1), CNP_OK);
  cr_expect_eq(cnp_catalog_setup(cat), CNP_EUNAVAILABLE);
  expect_msg("no architecture given and no usable CUDA device");
  cr_expect_eq(cnp_device_limits_query(0, &l), CNP_EUNAVAILABLE);
  cnp_catalog_destroy(cat);
  /* PTX for an explicit arch compiles, but launching needs a device. */
  cat = make(90, NULL);
  cr_assert_eq(cnp_catalog_add_source(cat, "simple", k_simple, NULL, opt, 1), CNP_OK);
  cr_assert_eq(cnp_catalog_setup(cat), CNP_OK, "%s", cnp_last_error());
  cr_expect_eq(cnp_catalog_launch(cat, "simple", d3(1, 1, 1), d3(32, 1, 1), 0, NULL, NULL),
               CNP_EUNAVAILABLE);
  expect_msg("cnp_catalog_launch: kernel 'simple'");
  cnp_catalog_destroy(cat);
}

#endif
