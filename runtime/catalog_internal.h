/*
** catalog_internal.h — private structures of the kernel catalog.
**
** catalog.c holds everything that needs neither NVRTC nor a device (registry, cache keys,
** the on-disk cache, launch checks); the NVRTC/cudart part is catalog_cuda.c and its
** stand-in for builds without CUDA is catalog_nocuda.c. Both implement the cnp__kc_*
** functions below.
*/
#ifndef CNP_CATALOG_INTERNAL_H
#define CNP_CATALOG_INTERNAL_H

#include "internal.h"
#include "cnp/catalog.h"

#define CNP__MAGIC_CATALOG 0x434e504bu  /* "CNPK" */
#define CNP__KC_SLOTS      8            /* compiled images per kernel (architectures) */
#define CNP__KC_DEVICES    16           /* devices whose limits are cached */

/* One compiled image of a kernel: PTX for compute_XY or CUBIN for sm_XY. */
typedef struct cnp__kimage {
  int     arch;                        /* 0: free slot */
  bool    ptx;
  char   *data;                        /* cnp__malloc'd; PTX is NUL-terminated */
  size_t  size;
  char   *lowered;                     /* entry name after NVRTC name lowering */
  char    key[17];                     /* on-disk cache key */
  void   *library;                     /* cudaLibrary_t once loaded, else NULL */
  void   *kernel;                      /* cudaKernel_t */
  size_t  static_smem;                 /* from the loaded kernel's attributes */
  int     max_threads;                 /* kernel's own threads-per-block limit */
  size_t  optin_smem;                  /* dynamic shared memory opted into so far */
} cnp__kimage;

typedef struct cnp__kernel {
  char        *name;                   /* NVRTC name expression */
  char        *source;
  char        *source_name;
  char        *path;                   /* file source, or NULL */
  char       **options;
  int          n_options;
  char        *log;                    /* last compilation log ("" if none) */
  cnp__kimage  img[CNP__KC_SLOTS];
} cnp__kernel;

struct cnp_catalog {
  uint32_t           magic;
  int                arch;             /* cfg.arch */
  char              *include_dir;
  char              *include_opt;      /* "-I<include_dir>" */
  char              *cache_dir;        /* "" when off */
  char             **options;
  int                n_options;
  uint64_t           header_digest;    /* hash of cnp's device headers */
  cnp__kernel       *kernels;
  int                n_kernels, cap_kernels;
  cnp_catalog_stats  stats;
  cnp_device_limits  limits[CNP__KC_DEVICES];
  bool               have_limits[CNP__KC_DEVICES];
};

/* ---- backend (catalog_cuda.c / catalog_nocuda.c) ------------------------------------- */

/* NVRTC version as 1000*major + 10*minor; 0 without NVRTC. */
int cnp__kc_nvrtc_version(void);
/* Compile k's source with the full option list; want PTX or CUBIN. On success *image,
** *lowered (cnp__malloc'd) are set; *log (cnp__malloc'd, maybe "") is set whenever NVRTC
** ran. A compilation error is CNP_ECOMPILE with the log in the detail. */
cnp_status cnp__kc_compile(const char *op, const cnp__kernel *k, const char *const *opts,
                           int n_opts, bool ptx, char **image, size_t *size, char **lowered,
                           char **log);
/* Current device and its architecture, without recording an error; on failure returns
** CNP_EUNAVAILABLE / CNP_EUNSUPPORTED and sets *reason. */
cnp_status cnp__kc_device(int *device, int *arch, const char **reason);
/* Current device ordinal only (cheap, for launches); same failure contract. */
cnp_status cnp__kc_current(int *device, const char **reason);
/* Load an image on the devices (cudaLibraryLoadData) and fill library, kernel,
** static_smem and max_threads. */
cnp_status cnp__kc_load(const char *op, const cnp__kernel *k, cnp__kimage *im);
void       cnp__kc_unload(cnp__kimage *im);
/* Raise the kernel's dynamic shared memory limit to bytes on the device. */
cnp_status cnp__kc_optin(const char *op, const cnp__kernel *k, cnp__kimage *im,
                         size_t bytes, int device);
cnp_status cnp__kc_launch(const char *op, const cnp__kernel *k, cnp__kimage *im,
                          cnp_dim3 grid, cnp_dim3 block, size_t dyn_smem, void *stream,
                          void **args);

#endif /* CNP_CATALOG_INTERNAL_H */
