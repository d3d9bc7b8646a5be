/*
** cnp/catalog.h — the kernel catalog: hand-written CUDA kernels compiled by NVRTC at setup.
**
** Life cycle (all allocation happens in create / add / setup / recompile, none in launch):
**
**   cnp_catalog *cat;
**   cnp_catalog_config cfg = CNP_CATALOG_CONFIG_INIT;
**   cnp_catalog_create(&cat, &cfg);
**   cnp_catalog_add_file(cat, "deposit", "deposit.cu", NULL, 0);   // kernel name, file
**   if (cnp_catalog_setup(cat) != CNP_OK)              // compiles every kernel now
**     fprintf(stderr, "%s\n", cnp_last_error());        // includes the NVRTC log
**   ...
**   void *args[] = { &d_x, &n };                       // like cudaLaunchKernel
**   cnp_catalog_launch(cat, "deposit", grid, block, 0, stream, args);   // per step
**   cnp_catalog_destroy(cat);
**
** Kernel names. The name given at registration is an NVRTC name expression: the name of an
** `extern "C" __global__` function, or a C++ kernel (`"ns::k"`, `"k<float>"`); NVRTC
** resolves it at compile time, so a wrong name is a setup error.
**
** Compilation. With cfg.arch == 0 kernels compile for the current device to a CUBIN
** (sm_XY); with cfg.arch == XY (e.g. 80, 90) they compile to PTX for compute_XY without
** needing a device (tests, ahead-of-time checks). The NVRTC command line is:
**   --gpu-architecture=<sm_XY|compute_XY> -I<include dir> <cfg options> <kernel options>
** The include dir (which holds cnp/scan.cuh and cnp/atomic.cuh) is cfg.include_dir, else
** the environment variable CNP_INCLUDE_DIR, else the source tree's include/ directory (or,
** when that is gone, the install prefix's include/).
** A failed compilation is CNP_ECOMPILE; cnp_last_error() names the kernel and carries
** the NVRTC log (file:line: error: message), also available from cnp_catalog_log().
**
** Caches. In memory: one compiled image per (kernel, architecture), so each device
** architecture compiles once. On disk (optional): a directory given by cfg.cache_dir, else
** the environment variable CNP_KERNEL_CACHE; off when neither is set (or cache_dir is "").
** Files are named by a 64-bit hash of the source, the options, the architecture, the NVRTC
** version and the contents of cnp's device headers. cnp_catalog_recompile() re-reads file
** sources, takes new options, skips the disk lookup and rewrites the entry (use it after a
** header of your own changed: the key cannot see headers outside cnp's).
**
** Launch checks. Every launch checks grid, block, threads per block and static + dynamic
** shared memory against the device limits; cnp_launch_check() is that check as a pure
** function of a limits struct. Dynamic shared memory beyond the default 48 KiB is opted
** into automatically (up to the device's opt-in limit).
**
** Builds without CUDA: every call that needs NVRTC or a device returns CNP_EUNSUPPORTED
** ("built without CUDA"); registration, cache keys and cnp_launch_check work everywhere.
*/
#ifndef CNP_CATALOG_H
#define CNP_CATALOG_H

#include <stddef.h>
#include <stdint.h>

#include "cnp/cnp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cnp_catalog cnp_catalog;

/* Grid or block extent (as CUDA's dim3). */
typedef struct cnp_dim3 {
  uint32_t x, y, z;
} cnp_dim3;

/* The device limits a launch is checked against (cnp_device_limits_query fills them). */
typedef struct cnp_device_limits {
  int      arch;                       /* compute capability as 10*major + minor, e.g. 90 */
  int      max_threads_per_block;      /* 1024 */
  int      max_block_dim[3];           /* 1024, 1024, 64 */
  int64_t  max_grid_dim[3];            /* 2^31-1, 65535, 65535 */
  size_t   max_shared_per_block;       /* without opt-in: 48 KiB; also the static limit */
  size_t   max_shared_per_block_optin; /* static + dynamic with opt-in (227 KiB on sm_90) */
} cnp_device_limits;

/* Check a launch of `kernel` (its name is only used in the message). CNP_OK, or CNP_ELAUNCH
** with a message naming the kernel, the offending value and the limit, e.g.
**   "kernel 'push': block.x * block.y * block.z = 2048 threads exceeds the device limit 1024"
** A zero extent or a NULL limits pointer is CNP_EINVAL. */
cnp_status cnp_launch_check(const cnp_device_limits *lim, const char *kernel, cnp_dim3 grid,
                            cnp_dim3 block, size_t static_smem, size_t dyn_smem);

/* Limits of a CUDA device. CNP_EUNAVAILABLE without a device, CNP_EUNSUPPORTED without
** CUDA in the build. */
cnp_status cnp_device_limits_query(int device, cnp_device_limits *out);

typedef struct cnp_catalog_config {
  uint32_t           size;             /* sizeof(cnp_catalog_config) (versioning) */
  int                arch;             /* 0: current device (CUBIN); XY: PTX for compute_XY */
  const char        *include_dir;      /* NULL: env CNP_INCLUDE_DIR, else the build tree's */
  const char        *cache_dir;        /* NULL: env CNP_KERNEL_CACHE (unset: off); "": off */
  const char *const *options;          /* NVRTC options for every kernel (copied) */
  int                n_options;
} cnp_catalog_config;

#define CNP_CATALOG_CONFIG_INIT { sizeof(cnp_catalog_config), 0, NULL, NULL, NULL, 0 }

/* Counters (monotonic over the catalog's life). */
typedef struct cnp_catalog_stats {
  uint64_t compiles;                   /* NVRTC runs, failed ones included */
  uint64_t memory_hits;                /* compile requests answered by the in-memory cache */
  uint64_t disk_hits;                  /* ... answered by the on-disk cache */
  uint64_t disk_writes;                /* images written to the on-disk cache */
  uint64_t loads;                      /* images loaded onto a device */
  uint64_t launches;
} cnp_catalog_stats;

/* cfg may be NULL (defaults). */
cnp_status cnp_catalog_create(cnp_catalog **out, const cnp_catalog_config *cfg);
cnp_status cnp_catalog_destroy(cnp_catalog *cat);

/* Register a kernel from a source string (copied). source_name labels the log lines
** ("deposit.cu:12: error: ..."; NULL: "<name>.cu"). Options are copied. A second kernel
** with the same name is CNP_EINVAL. Nothing is compiled yet. */
cnp_status cnp_catalog_add_source(cnp_catalog *cat, const char *name, const char *source,
                                  const char *source_name, const char *const *options,
                                  int n_options);
/* Register a kernel from a file (read now, CNP_EIO if unreadable; re-read by recompile). */
cnp_status cnp_catalog_add_file(cnp_catalog *cat, const char *name, const char *path,
                                const char *const *options, int n_options);

/* Compile every registered kernel for cfg.arch (or the current device) and, on a device,
** load it. Stops at the first failure (CNP_ECOMPILE with the log, CNP_EUNAVAILABLE when
** cfg.arch is 0 and no device is usable, CNP_EUNSUPPORTED without CUDA). */
cnp_status cnp_catalog_setup(cnp_catalog *cat);
/* Compile one kernel for an architecture (0: the current device); a cached image is
** reused (memory first, then disk). */
cnp_status cnp_catalog_compile(cnp_catalog *cat, const char *name, int arch);
/* Drop the kernel's compiled images and compile it again for the architectures it had
** (at least cfg.arch / the current device): re-reads a file source and the headers, and
** replaces the kernel's options when options != NULL (n_options may be 0 to clear them).
** name NULL: every kernel (options must then be NULL). */
cnp_status cnp_catalog_recompile(cnp_catalog *cat, const char *name,
                                 const char *const *options, int n_options);

/* Log of the kernel's last compilation ("" if it compiled silently or came from a cache). */
cnp_status cnp_catalog_log(cnp_catalog *cat, const char *name, const char **log);
/* Compiled image for an architecture (0: current device): PTX text (NUL-terminated,
** *is_ptx = 1) or a CUBIN. CNP_ESTATE if it has not been compiled. Valid until recompile or
** destroy. */
cnp_status cnp_catalog_image(cnp_catalog *cat, const char *name, int arch,
                             const char **data, size_t *size, int *is_ptx);
/* The on-disk cache key (16 hex digits + NUL) of a kernel for an architecture
** (0: cfg.arch or the current device). Computed without compiling. */
cnp_status cnp_catalog_cache_key(cnp_catalog *cat, const char *name, int arch,
                                 char key[17]);
cnp_status cnp_catalog_stats_get(const cnp_catalog *cat, cnp_catalog_stats *out);
/* The include directory and disk cache directory in use ("" when off). */
const char *cnp_catalog_include_dir(const cnp_catalog *cat);
const char *cnp_catalog_cache_dir(const cnp_catalog *cat);

/* Launch on s (NULL: the default stream) with cudaLaunchKernel semantics: args[i] points
** to the i-th kernel argument. Checks the launch against the current device's limits
** first (CNP_ELAUNCH). The kernel must have been compiled and loaded for the current
** device's architecture at setup (else CNP_ESTATE). Host streams are CNP_EDEVICE. */
cnp_status cnp_catalog_launch(cnp_catalog *cat, const char *name, cnp_dim3 grid,
                              cnp_dim3 block, size_t dyn_smem, cnp_stream *s, void **args);

#ifdef __cplusplus
}
#endif

#endif /* CNP_CATALOG_H */
