/*
** catalog.c — kernel catalog, the parts that need neither NVRTC nor a device:
** registration, option lists, cache keys, the in-memory and on-disk caches, launch checks.
** NVRTC and cudart calls go through the cnp__kc_* functions (catalog_cuda.c, or
** catalog_nocuda.c in builds without CUDA).
*/
#define _POSIX_C_SOURCE 200809L
#include "catalog_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CNP_INCLUDE_DIR
#define CNP_INCLUDE_DIR ""
#endif
#ifndef CNP_INSTALL_INCLUDE_DIR
#define CNP_INSTALL_INCLUDE_DIR CNP_INCLUDE_DIR
#endif

/* ---- launch checks (pure) ------------------------------------------------------------- */

/* Check one extent against its limit. */
static cnp_status check_extent(const char *kernel, const char *what, uint32_t v, int64_t lim)
{
  if (v == 0)
    return cnp__fail(CNP_EINVAL, "cnp_launch_check", "kernel '%s': %s = 0 (must be >= 1)",
                     kernel, what);
  if ((int64_t)v > lim)
    return cnp__fail(CNP_ELAUNCH, "cnp_launch_check",
                     "kernel '%s': %s = %" PRIu32 " exceeds the device limit %" PRId64,
                     kernel, what, v, lim);
  return CNP_OK;
}

cnp_status cnp_launch_check(const cnp_device_limits *lim, const char *kernel, cnp_dim3 grid,
                            cnp_dim3 block, size_t static_smem, size_t dyn_smem)
{
  static const char *gnames[3] = {"grid.x", "grid.y", "grid.z"};
  static const char *bnames[3] = {"block.x", "block.y", "block.z"};
  uint32_t g[3] = {grid.x, grid.y, grid.z}, b[3] = {block.x, block.y, block.z};
  CNP__CHECK_NOTNULL("cnp_launch_check", lim);
  if (!kernel) kernel = "?";
  for (int d = 0; d < 3; d++) {
    cnp_status st = check_extent(kernel, gnames[d], g[d], lim->max_grid_dim[d]);
    if (st == CNP_OK) st = check_extent(kernel, bnames[d], b[d], lim->max_block_dim[d]);
    if (st != CNP_OK) return st;
  }
  uint64_t threads = (uint64_t)b[0] * b[1] * b[2];
  if (threads > (uint64_t)lim->max_threads_per_block)
    return cnp__fail(CNP_ELAUNCH, "cnp_launch_check",
                     "kernel '%s': block.x * block.y * block.z = %" PRIu64
                     " threads exceeds the device limit %d",
                     kernel, threads, lim->max_threads_per_block);
  if (static_smem > lim->max_shared_per_block)
    return cnp__fail(CNP_ELAUNCH, "cnp_launch_check",
                     "kernel '%s': static shared memory %zu bytes exceeds the device limit "
                     "%zu bytes", kernel, static_smem, lim->max_shared_per_block);
  size_t cap = lim->max_shared_per_block_optin > lim->max_shared_per_block
                   ? lim->max_shared_per_block_optin : lim->max_shared_per_block;
  if (dyn_smem > cap || static_smem + dyn_smem > cap)
    return cnp__fail(CNP_ELAUNCH, "cnp_launch_check",
                     "kernel '%s': static + dynamic shared memory %zu + %zu bytes exceeds "
                     "the device limit %zu bytes", kernel, static_smem, dyn_smem, cap);
  return CNP_OK;
}

/* ---- small helpers -------------------------------------------------------------------- */

static char *dupstr(const char *s)
{
  size_t n = strlen(s) + 1;
  char *p = cnp__malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

static void free_options(char **o, int n)
{
  for (int i = 0; i < n; i++) cnp__free(o[i]);
  cnp__free(o);
}

static cnp_status dup_options(const char *op, char ***out, const char *const *opts, int n)
{
  *out = NULL;
  if (n < 0 || (n > 0 && !opts))
    return cnp__fail(CNP_EINVAL, op, "options: n_options = %d with options %s", n,
                     opts ? "set" : "NULL");
  if (n == 0) return CNP_OK;
  char **o = cnp__calloc((size_t)n, sizeof *o);
  if (!o) return cnp__fail(CNP_ENOMEM, op, "option list");
  for (int i = 0; i < n; i++) {
    if (!opts[i]) {
      free_options(o, i);
      return cnp__fail(CNP_EINVAL, op, "options[%d] is NULL", i);
    }
    if (!(o[i] = dupstr(opts[i]))) {
      free_options(o, i);
      return cnp__fail(CNP_ENOMEM, op, "option list");
    }
  }
  *out = o;
  return CNP_OK;
}

/* FNV-1a, 64 bit. */
#define FNV_INIT 0xcbf29ce484222325ull
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ull;
  return h;
}
static uint64_t fnv_str(uint64_t h, const char *s) { return fnv(h, s, strlen(s) + 1); }

/* Read a whole file (NUL-terminated copy). */
static cnp_status read_file(const char *op, const char *path, char **out, size_t *size)
{
  FILE *f = fopen(path, "rb");
  if (!f) return cnp__fail(CNP_EIO, op, "cannot open '%s'", path);
  char *buf = NULL;
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return cnp__fail(CNP_EIO, op, "cannot read '%s'", path);
  }
  buf = cnp__malloc((size_t)n + 1);
  if (!buf) {
    fclose(f);
    return cnp__fail(CNP_ENOMEM, op, "reading '%s'", path);
  }
  size_t got = fread(buf, 1, (size_t)n, f);
  fclose(f);
  if (got != (size_t)n) {
    cnp__free(buf);
    return cnp__fail(CNP_EIO, op, "short read of '%s'", path);
  }
  buf[n] = '\0';
  *out = buf;
  if (size) *size = (size_t)n;
  return CNP_OK;
}

/* Hash of cnp's own device headers, so a changed header invalidates disk entries. */
static uint64_t header_digest(const char *include_dir)
{
  static const char *const names[] = {"cnp/scan.cuh", "cnp/atomic.cuh"};
  uint64_t h = FNV_INIT;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char path[4096];
    char *text = NULL;
    size_t n = 0;
    snprintf(path, sizeof path, "%s/%s", include_dir, names[i]);
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    fclose(f);
    if (read_file("cnp_catalog", path, &text, &n) == CNP_OK) {
      h = fnv(h, text, n);
      cnp__free(text);
    }
  }
  return h;
}

/* The built-in include dir: the source tree's while it has cnp/scan.cuh, else the install
** tree's. */
static const char *default_include_dir(void)
{
  char path[4096];
  snprintf(path, sizeof path, "%s/cnp/scan.cuh", CNP_INCLUDE_DIR);
  if (access(path, R_OK) == 0) return CNP_INCLUDE_DIR;
  snprintf(path, sizeof path, "%s/cnp/scan.cuh", CNP_INSTALL_INCLUDE_DIR);
  if (access(path, R_OK) == 0) return CNP_INSTALL_INCLUDE_DIR;
  return CNP_INCLUDE_DIR;
}

static cnp_status check_catalog(const cnp_catalog *cat, const char *op)
{
  if (!cat) return cnp__fail(CNP_EINVAL, op, "catalog is NULL");
  if (cat->magic != CNP__MAGIC_CATALOG)
    return cnp__fail(CNP_ESTATE, op, "catalog was destroyed");
  return CNP_OK;
}

static cnp__kernel *find_kernel(cnp_catalog *cat, const char *name)
{
  for (int i = 0; i < cat->n_kernels; i++)
    if (strcmp(cat->kernels[i].name, name) == 0) return &cat->kernels[i];
  return NULL;
}

static cnp_status lookup(cnp_catalog *cat, const char *op, const char *name, cnp__kernel **k)
{
  cnp_status st = check_catalog(cat, op);
  if (st != CNP_OK) return st;
  CNP__CHECK_NOTNULL(op, name);
  if (!(*k = find_kernel(cat, name)))
    return cnp__fail(CNP_EINVAL, op, "no kernel '%s' in the catalog", name);
  return CNP_OK;
}

static void free_image(cnp__kimage *im)
{
  cnp__kc_unload(im);
  cnp__free(im->data);
  cnp__free(im->lowered);
  memset(im, 0, sizeof *im);
}

static void free_kernel(cnp__kernel *k)
{
  for (int s = 0; s < CNP__KC_SLOTS; s++) free_image(&k->img[s]);
  cnp__free(k->name);
  cnp__free(k->source);
  cnp__free(k->source_name);
  cnp__free(k->path);
  cnp__free(k->log);
  free_options(k->options, k->n_options);
  memset(k, 0, sizeof *k);
}

/* ---- create / destroy ----------------------------------------------------------------- */

cnp_status cnp_catalog_create(cnp_catalog **out, const cnp_catalog_config *cfg)
{
  static const char *op = "cnp_catalog_create";
  cnp_catalog_config def = CNP_CATALOG_CONFIG_INIT;
  CNP__CHECK_NOTNULL(op, out);
  *out = NULL;
  if (!cfg) cfg = &def;
  if (cfg->size != sizeof(cnp_catalog_config))
    return cnp__fail(CNP_EINVAL, op, "cfg->size = %u, expected %zu (use CNP_CATALOG_CONFIG_INIT)",
                     (unsigned)cfg->size, sizeof(cnp_catalog_config));
  if (cfg->arch < 0 || cfg->arch > 999)
    return cnp__fail(CNP_EINVAL, op, "cfg->arch = %d (0 or 10*major+minor, e.g. 90)",
                     cfg->arch);
  const char *inc = cfg->include_dir;
  if (!inc) inc = getenv("CNP_INCLUDE_DIR");
  if (!inc) inc = default_include_dir();
  const char *cache = cfg->cache_dir;
  if (!cache) cache = getenv("CNP_KERNEL_CACHE");
  if (!cache) cache = "";

  cnp_catalog *cat = cnp__calloc(1, sizeof *cat);
  if (!cat) return cnp__fail(CNP_ENOMEM, op, "catalog");
  cat->magic = CNP__MAGIC_CATALOG;
  cat->arch = cfg->arch;
  cat->include_dir = dupstr(inc);
  cat->cache_dir = dupstr(cache);
  cat->include_opt = cnp__malloc(strlen(inc) + 3);
  if (!cat->include_dir || !cat->cache_dir || !cat->include_opt) {
    cnp_catalog_destroy(cat);
    return cnp__fail(CNP_ENOMEM, op, "catalog paths");
  }
  snprintf(cat->include_opt, strlen(inc) + 3, "-I%s", inc);
  cnp_status st = dup_options(op, &cat->options, cfg->options, cfg->n_options);
  if (st != CNP_OK) {
    cnp_catalog_destroy(cat);
    return st;
  }
  cat->n_options = cfg->n_options;
  cat->header_digest = header_digest(inc);
  *out = cat;
  return CNP_OK;
}

cnp_status cnp_catalog_destroy(cnp_catalog *cat)
{
  if (!cat) return CNP_OK;
  cnp_status st = check_catalog(cat, "cnp_catalog_destroy");
  if (st != CNP_OK) return st;
  for (int i = 0; i < cat->n_kernels; i++) free_kernel(&cat->kernels[i]);
  cnp__free(cat->kernels);
  free_options(cat->options, cat->n_options);
  cnp__free(cat->include_dir);
  cnp__free(cat->include_opt);
  cnp__free(cat->cache_dir);
  cat->magic = CNP__MAGIC_DEAD;
  cnp__free(cat);
  return CNP_OK;
}

/* ---- registration --------------------------------------------------------------------- */

static cnp_status add_kernel(cnp_catalog *cat, const char *op, const char *name,
                             char *source, const char *source_name, const char *path,
                             const char *const *options, int n_options)
{
  cnp_status st;
  if (!name[0]) {
    cnp__free(source);
    return cnp__fail(CNP_EINVAL, op, "empty kernel name");
  }
  if (find_kernel(cat, name)) {
    cnp__free(source);
    return cnp__fail(CNP_EINVAL, op, "kernel '%s' is already in the catalog", name);
  }
  if (cat->n_kernels == cat->cap_kernels) {
    int cap = cat->cap_kernels ? 2 * cat->cap_kernels : 8;
    cnp__kernel *nk = cnp__calloc((size_t)cap, sizeof *nk);
    if (!nk) {
      cnp__free(source);
      return cnp__fail(CNP_ENOMEM, op, "kernel table");
    }
    if (cat->n_kernels) memcpy(nk, cat->kernels, (size_t)cat->n_kernels * sizeof *nk);
    cnp__free(cat->kernels);
    cat->kernels = nk;
    cat->cap_kernels = cap;
  }
  cnp__kernel k;
  memset(&k, 0, sizeof k);
  k.source = source;
  k.name = dupstr(name);
  k.log = dupstr("");
  if (source_name) {
    k.source_name = dupstr(source_name);
  } else if ((k.source_name = cnp__malloc(strlen(name) + 4)) != NULL) {
    snprintf(k.source_name, strlen(name) + 4, "%s.cu", name);
  }
  k.path = path ? dupstr(path) : NULL;
  if (!k.name || !k.log || !k.source_name || (path && !k.path)) {
    free_kernel(&k);
    return cnp__fail(CNP_ENOMEM, op, "kernel '%s'", name);
  }
  if ((st = dup_options(op, &k.options, options, n_options)) != CNP_OK) {
    free_kernel(&k);
    return st;
  }
  k.n_options = n_options;
  cat->kernels[cat->n_kernels++] = k;
  return CNP_OK;
}

cnp_status cnp_catalog_add_source(cnp_catalog *cat, const char *name, const char *source,
                                  const char *source_name, const char *const *options,
                                  int n_options)
{
  static const char *op = "cnp_catalog_add_source";
  cnp_status st = check_catalog(cat, op);
  if (st != CNP_OK) return st;
  CNP__CHECK_NOTNULL(op, name);
  CNP__CHECK_NOTNULL(op, source);
  char *copy = dupstr(source);
  if (!copy) return cnp__fail(CNP_ENOMEM, op, "kernel '%s' source", name);
  return add_kernel(cat, op, name, copy, source_name, NULL, options, n_options);
}

cnp_status cnp_catalog_add_file(cnp_catalog *cat, const char *name, const char *path,
                                const char *const *options, int n_options)
{
  static const char *op = "cnp_catalog_add_file";
  cnp_status st = check_catalog(cat, op);
  if (st != CNP_OK) return st;
  CNP__CHECK_NOTNULL(op, name);
  CNP__CHECK_NOTNULL(op, path);
  char *text = NULL;
  if ((st = read_file(op, path, &text, NULL)) != CNP_OK) return st;
  return add_kernel(cat, op, name, text, path, path, options, n_options);
}

/* ---- keys and the on-disk cache ------------------------------------------------------- */

static void compute_key(const cnp_catalog *cat, const cnp__kernel *k, int arch, bool ptx,
                        char key[17])
{
  uint64_t h = FNV_INIT;
  int ver = cnp__kc_nvrtc_version();
  h = fnv_str(h, "cnp-kernel-cache-1");
  h = fnv_str(h, k->name);
  h = fnv_str(h, k->source);
  for (int i = 0; i < cat->n_options; i++) h = fnv_str(h, cat->options[i]);
  h = fnv_str(h, "|");
  for (int i = 0; i < k->n_options; i++) h = fnv_str(h, k->options[i]);
  h = fnv(h, &arch, sizeof arch);
  h = fnv_str(h, ptx ? "ptx" : "cubin");
  h = fnv(h, &ver, sizeof ver);
  h = fnv_str(h, cat->include_dir);
  h = fnv(h, &cat->header_digest, sizeof cat->header_digest);
  snprintf(key, 17, "%016" PRIx64, h);
}

/* File layout: "cnpkc 1\n" <lowered name> "\n" <size> "\n" <image bytes>. */
static bool disk_path(const cnp_catalog *cat, const char *key, bool ptx, char *path, size_t n)
{
  int len = snprintf(path, n, "%s/%s.%s", cat->cache_dir, key, ptx ? "ptx" : "cubin");
  return len > 0 && (size_t)len < n;
}

static bool disk_read(const cnp_catalog *cat, cnp__kimage *im)
{
  char path[4096], line[4096];
  if (!cat->cache_dir[0] || !disk_path(cat, im->key, im->ptx, path, sizeof path)) return false;
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  bool ok = false;
  unsigned long long size = 0;
  char *lowered = NULL, *data = NULL;
  if (!fgets(line, sizeof line, f) || strcmp(line, "cnpkc 1\n") != 0) goto done;
  if (!fgets(line, sizeof line, f) || !strchr(line, '\n')) goto done;
  line[strcspn(line, "\n")] = '\0';
  if (!(lowered = dupstr(line))) goto done;
  if (!fgets(line, sizeof line, f) || sscanf(line, "%llu", &size) != 1 || size == 0 ||
      size > ((unsigned long long)1 << 32))
    goto done;
  if (!(data = cnp__malloc((size_t)size + 1))) goto done;
  if (fread(data, 1, (size_t)size, f) != (size_t)size) goto done;
  data[size] = '\0';
  im->data = data;
  im->size = (size_t)size;
  im->lowered = lowered;
  data = lowered = NULL;
  ok = true;
done:
  fclose(f);
  cnp__free(lowered);
  cnp__free(data);
  return ok;
}

/* Write atomically (temporary file + rename); failures only cost a later recompilation. */
static bool disk_write(const cnp_catalog *cat, const cnp__kimage *im)
{
  char path[4096], tmp[4200];
  if (!cat->cache_dir[0] || !disk_path(cat, im->key, im->ptx, path, sizeof path)) return false;
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) return false;
  bool ok = fprintf(f, "cnpkc 1\n%s\n%zu\n", im->lowered, im->size) > 0 &&
            fwrite(im->data, 1, im->size, f) == im->size;
  ok = (fclose(f) == 0) && ok;
  if (ok) ok = rename(tmp, path) == 0;
  if (!ok) remove(tmp);
  return ok;
}

/* ---- compilation ---------------------------------------------------------------------- */

/* Resolve arch 0 to the current device (CUBIN) and an explicit arch to PTX. */
static cnp_status resolve_arch(const char *op, int arch, int *out_arch, bool *ptx, int *device)
{
  int dev = 0, a = 0;
  const char *reason = NULL;
  if (arch < 0 || arch > 999) return cnp__fail(CNP_EINVAL, op, "arch = %d", arch);
  if (arch > 0) {
    *out_arch = arch;
    *ptx = true;
    if (device) *device = -1;
    return CNP_OK;
  }
  cnp_status st = cnp__kc_device(&dev, &a, &reason);
  if (st != CNP_OK)
    return cnp__fail(st, op, "no architecture given and no usable CUDA device: %s", reason);
  *out_arch = a;
  *ptx = false;
  if (device) *device = dev;
  return CNP_OK;
}

static cnp__kimage *find_image(cnp__kernel *k, int arch, bool ptx)
{
  for (int s = 0; s < CNP__KC_SLOTS; s++)
    if (k->img[s].arch == arch && k->img[s].ptx == ptx) return &k->img[s];
  return NULL;
}

static cnp__kimage *free_slot(cnp__kernel *k)
{
  for (int s = 0; s < CNP__KC_SLOTS; s++)
    if (k->img[s].arch == 0) return &k->img[s];
  return NULL;
}

static void set_log(cnp__kernel *k, char *log)
{
  if (!log) return;
  cnp__free(k->log);
  k->log = log;
}

/* Compile (or fetch from a cache) k for one architecture into a slot. */
static cnp_status compile_one(cnp_catalog *cat, const char *op, cnp__kernel *k, int arch,
                              bool ptx, bool use_disk, cnp__kimage **out)
{
  cnp__kimage *im = find_image(k, arch, ptx);
  if (im) {
    cat->stats.memory_hits++;
    if (out) *out = im;
    return CNP_OK;
  }
  if (!(im = free_slot(k)))
    return cnp__fail(CNP_EOVERFLOW, op, "kernel '%s': more than %d architectures", k->name,
                     CNP__KC_SLOTS);
  cnp__kimage tmp;
  memset(&tmp, 0, sizeof tmp);
  tmp.arch = arch;
  tmp.ptx = ptx;
  compute_key(cat, k, arch, ptx, tmp.key);
  if (use_disk && disk_read(cat, &tmp)) {
    cat->stats.disk_hits++;
    set_log(k, dupstr(""));
  } else {
    char archopt[48];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s_%d", ptx ? "compute" : "sm", arch);
    int n = 2 + cat->n_options + k->n_options;
    const char **argv = cnp__malloc((size_t)n * sizeof *argv);
    if (!argv) return cnp__fail(CNP_ENOMEM, op, "option list");
    int a = 0;
    argv[a++] = archopt;
    argv[a++] = cat->include_opt;
    for (int i = 0; i < cat->n_options; i++) argv[a++] = cat->options[i];
    for (int i = 0; i < k->n_options; i++) argv[a++] = k->options[i];
    char *log = NULL;
    cat->stats.compiles++;
    cnp_status st = cnp__kc_compile(op, k, argv, n, ptx, &tmp.data, &tmp.size, &tmp.lowered,
                                    &log);
    cnp__free(argv);
    set_log(k, log);
    if (st != CNP_OK) return st;
    if (disk_write(cat, &tmp)) cat->stats.disk_writes++;
  }
  *im = tmp;
  if (out) *out = im;
  return CNP_OK;
}

/* Load an image onto the device (once). */
static cnp_status load_one(cnp_catalog *cat, const char *op, cnp__kernel *k, cnp__kimage *im)
{
  if (im->library) return CNP_OK;
  cnp_status st = cnp__kc_load(op, k, im);
  if (st == CNP_OK) cat->stats.loads++;
  return st;
}

/* Compile for the catalog's target and load when a device can run the result. */
static cnp_status setup_one(cnp_catalog *cat, const char *op, cnp__kernel *k, bool use_disk)
{
  int arch = 0, dev = -1, dev_arch = 0;
  bool ptx = false;
  const char *reason = NULL;
  cnp__kimage *im = NULL;
  cnp_status st = resolve_arch(op, cat->arch, &arch, &ptx, NULL);
  if (st != CNP_OK) return st;
  if ((st = compile_one(cat, op, k, arch, ptx, use_disk, &im)) != CNP_OK) return st;
  /* PTX for an explicit arch also runs on a device of that or a newer architecture. */
  if (cnp__kc_device(&dev, &dev_arch, &reason) == CNP_OK && arch <= dev_arch)
    return load_one(cat, op, k, im);
  return CNP_OK;
}

cnp_status cnp_catalog_setup(cnp_catalog *cat)
{
  static const char *op = "cnp_catalog_setup";
  cnp_status st = check_catalog(cat, op);
  for (int i = 0; st == CNP_OK && i < cat->n_kernels; i++)
    st = setup_one(cat, op, &cat->kernels[i], true);
  return st;
}

cnp_status cnp_catalog_compile(cnp_catalog *cat, const char *name, int arch)
{
  static const char *op = "cnp_catalog_compile";
  cnp__kernel *k = NULL;
  int a = 0;
  bool ptx = false;
  cnp_status st = lookup(cat, op, name, &k);
  if (st == CNP_OK) st = resolve_arch(op, arch, &a, &ptx, NULL);
  if (st == CNP_OK) st = compile_one(cat, op, k, a, ptx, true, NULL);
  return st;
}

static cnp_status recompile_one(cnp_catalog *cat, const char *op, cnp__kernel *k,
                                const char *const *options, int n_options)
{
  struct { int arch; bool ptx, loaded; } had[CNP__KC_SLOTS];
  int n_had = 0;
  cnp_status st;
  if (options) {
    char **o = NULL;
    if ((st = dup_options(op, &o, options, n_options)) != CNP_OK) return st;
    free_options(k->options, k->n_options);
    k->options = o;
    k->n_options = n_options;
  }
  if (k->path) {
    char *text = NULL;
    if ((st = read_file(op, k->path, &text, NULL)) != CNP_OK) return st;
    cnp__free(k->source);
    k->source = text;
  }
  for (int s = 0; s < CNP__KC_SLOTS; s++) {
    cnp__kimage *im = &k->img[s];
    if (im->arch == 0) continue;
    had[n_had].arch = im->arch;
    had[n_had].ptx = im->ptx;
    had[n_had].loaded = im->library != NULL;
    n_had++;
    free_image(im);
  }
  if (n_had == 0) return setup_one(cat, op, k, false);
  for (int i = 0; i < n_had; i++) {
    cnp__kimage *im = NULL;
    if ((st = compile_one(cat, op, k, had[i].arch, had[i].ptx, false, &im)) != CNP_OK)
      return st;
    if (had[i].loaded && (st = load_one(cat, op, k, im)) != CNP_OK) return st;
  }
  return CNP_OK;
}

cnp_status cnp_catalog_recompile(cnp_catalog *cat, const char *name,
                                 const char *const *options, int n_options)
{
  static const char *op = "cnp_catalog_recompile";
  cnp_status st = check_catalog(cat, op);
  if (st != CNP_OK) return st;
  cat->header_digest = header_digest(cat->include_dir);
  if (name) {
    cnp__kernel *k = NULL;
    if ((st = lookup(cat, op, name, &k)) != CNP_OK) return st;
    return recompile_one(cat, op, k, options, n_options);
  }
  if (options)
    return cnp__fail(CNP_EINVAL, op, "options must be NULL when recompiling every kernel");
  for (int i = 0; st == CNP_OK && i < cat->n_kernels; i++)
    st = recompile_one(cat, op, &cat->kernels[i], NULL, 0);
  return st;
}

/* ---- queries -------------------------------------------------------------------------- */

cnp_status cnp_catalog_log(cnp_catalog *cat, const char *name, const char **log)
{
  cnp__kernel *k = NULL;
  cnp_status st = lookup(cat, "cnp_catalog_log", name, &k);
  if (st != CNP_OK) return st;
  CNP__CHECK_NOTNULL("cnp_catalog_log", log);
  *log = k->log;
  return CNP_OK;
}

cnp_status cnp_catalog_image(cnp_catalog *cat, const char *name, int arch, const char **data,
                             size_t *size, int *is_ptx)
{
  static const char *op = "cnp_catalog_image";
  cnp__kernel *k = NULL;
  int a = 0;
  bool ptx = false;
  cnp_status st = lookup(cat, op, name, &k);
  if (st == CNP_OK) st = resolve_arch(op, arch, &a, &ptx, NULL);
  if (st != CNP_OK) return st;
  cnp__kimage *im = find_image(k, a, ptx);
  if (!im)
    return cnp__fail(CNP_ESTATE, op, "kernel '%s' has not been compiled for %s_%d", name,
                     ptx ? "compute" : "sm", a);
  if (data) *data = im->data;
  if (size) *size = im->size;
  if (is_ptx) *is_ptx = im->ptx;
  return CNP_OK;
}

cnp_status cnp_catalog_cache_key(cnp_catalog *cat, const char *name, int arch, char key[17])
{
  static const char *op = "cnp_catalog_cache_key";
  cnp__kernel *k = NULL;
  int a = 0;
  bool ptx = false;
  cnp_status st = lookup(cat, op, name, &k);
  if (st != CNP_OK) return st;
  CNP__CHECK_NOTNULL(op, key);
  if ((st = resolve_arch(op, arch ? arch : cat->arch, &a, &ptx, NULL)) != CNP_OK) return st;
  compute_key(cat, k, a, ptx, key);
  return CNP_OK;
}

cnp_status cnp_catalog_stats_get(const cnp_catalog *cat, cnp_catalog_stats *out)
{
  cnp_status st = check_catalog(cat, "cnp_catalog_stats_get");
  if (st != CNP_OK) return st;
  CNP__CHECK_NOTNULL("cnp_catalog_stats_get", out);
  *out = cat->stats;
  return CNP_OK;
}

const char *cnp_catalog_include_dir(const cnp_catalog *cat)
{
  return cat && cat->magic == CNP__MAGIC_CATALOG ? cat->include_dir : "";
}

const char *cnp_catalog_cache_dir(const cnp_catalog *cat)
{
  return cat && cat->magic == CNP__MAGIC_CATALOG ? cat->cache_dir : "";
}

/* ---- launch --------------------------------------------------------------------------- */

/* The loaded image to run on a device of architecture dev_arch: exact match first, else
** PTX of an older architecture (JIT-compatible). */
static cnp__kimage *runnable_image(cnp__kernel *k, int dev_arch)
{
  cnp__kimage *best = NULL;
  for (int s = 0; s < CNP__KC_SLOTS; s++) {
    cnp__kimage *im = &k->img[s];
    if (!im->library) continue;
    if (im->arch == dev_arch) return im;
    if (im->ptx && im->arch < dev_arch && (!best || im->arch > best->arch)) best = im;
  }
  return best;
}

cnp_status cnp_catalog_launch(cnp_catalog *cat, const char *name, cnp_dim3 grid,
                              cnp_dim3 block, size_t dyn_smem, cnp_stream *s, void **args)
{
  static const char *op = "cnp_catalog_launch";
  cnp__kernel *k = NULL;
  int dev = 0;
  const char *reason = NULL;
  cnp_status st = lookup(cat, op, name, &k);
  if (st != CNP_OK) return st;
  if (s) {
    if ((st = cnp__check_stream(s, op)) != CNP_OK) return st;
    if (s->backend != CNP_BACKEND_CUDA)
      return cnp__fail(CNP_EDEVICE, op, "kernel '%s': stream is on the host backend", name);
  }
  if ((st = cnp__kc_current(&dev, &reason)) != CNP_OK)
    return cnp__fail(st, op, "kernel '%s': %s", name, reason);
  if (s && s->device != dev)
    return cnp__fail(CNP_EDEVICE, op, "kernel '%s': stream is on device %d but device %d is "
                     "current", name, s->device, dev);
  if (dev < 0 || dev >= CNP__KC_DEVICES)
    return cnp__fail(CNP_EDEVICE, op, "device %d beyond the catalog's %d", dev,
                     CNP__KC_DEVICES);
  if (!cat->have_limits[dev]) {
    if ((st = cnp_device_limits_query(dev, &cat->limits[dev])) != CNP_OK) return st;
    cat->have_limits[dev] = true;
  }
  int arch = cat->limits[dev].arch;
  cnp__kimage *im = runnable_image(k, arch);
  if (!im)
    return cnp__fail(CNP_ESTATE, op,
                     "kernel '%s' is not loaded for sm_%d (compile it at setup with "
                     "cnp_catalog_setup)", name, arch);
  cnp_device_limits lim = cat->limits[dev];
  if ((st = cnp_launch_check(&lim, name, grid, block, im->static_smem, dyn_smem)) != CNP_OK)
    return st;
  uint64_t threads = (uint64_t)block.x * block.y * block.z;
  if (im->max_threads > 0 && threads > (uint64_t)im->max_threads)
    return cnp__fail(CNP_ELAUNCH, op,
                     "kernel '%s': %" PRIu64 " threads per block exceeds the kernel's limit "
                     "%d (register use)", name, threads, im->max_threads);
  if (im->static_smem + dyn_smem > lim.max_shared_per_block && dyn_smem > im->optin_smem) {
    if ((st = cnp__kc_optin(op, k, im, dyn_smem, dev)) != CNP_OK) return st;
    im->optin_smem = dyn_smem;
  }
  st = cnp__kc_launch(op, k, im, grid, block, dyn_smem, cnp__native(s), args);
  if (st == CNP_OK) cat->stats.launches++;
  return st;
}
