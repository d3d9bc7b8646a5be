/*
** cnp.h — the cnp runtime C API (libcnp).
**
** Plain C11; includes no CUDA header, so a user's C file compiles with gcc alone.
** Conventions (libuv/NCCL style):
**   - every call returns a cnp_status (CNP_OK == 0, errors < 0); outputs go through pointers;
**   - cnp_last_error() gives the per-thread detail of the last failure: the operation, the
**     reason and, for backend errors, the CUDA error name and text;
**   - handles are opaque (cnp_stream, cnp_event, ...), created once in setup and destroyed once;
**   - the library never prints, never calls exit()/abort(), and allocates only in create/alloc
**     calls, never in the per-step calls.
**
** Sub-APIs live in sibling headers included at the end: cnp/algo.h (compaction, sort,
** segments), cnp/catalog.h (NVRTC kernel catalog), cnp/grid.h (FFTs, particle deposition and
** gather), cnp/mpi.h (MPI staging and migration).
*/
#ifndef CNP_CNP_H
#define CNP_CNP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CNP_VERSION_MAJOR 0
#define CNP_VERSION_MINOR 1
#define CNP_VERSION_PATCH 0
/* Bumped whenever generated code and the runtime stop being compatible; generated code
** passes the value it was built for to cnp_check_abi() at setup. */
#define CNP_ABI_VERSION 1

/* ---------------------------------------------------------------------------------------
** Status codes. CNP_STATUS_MAP(XX) generates the enum, cnp_status_string() and
** cnp_status_name().
*/
#define CNP_STATUS_MAP(XX)                                                              \
  XX(OK,           0,   "success")                                                      \
  XX(EINVAL,      -1,   "invalid argument")                                             \
  XX(ENOMEM,      -2,   "out of memory")                                                \
  XX(EDTYPE,      -3,   "unsupported or mismatched dtype")                              \
  XX(ESHAPE,      -4,   "mismatched shape or extent")                                   \
  XX(EDEVICE,     -5,   "wrong backend or device")                                      \
  XX(EUNAVAILABLE,-6,   "backend unavailable")                                          \
  XX(EBACKEND,    -7,   "backend (CUDA) error")                                         \
  XX(ESTATE,      -8,   "invalid state (destroyed handle or wrong call order)")         \
  XX(ESTALE,      -9,   "stale handle (its slot was reused)")                           \
  XX(EBUSY,       -10,  "object already in use (overlapping contexts)")                 \
  XX(ERANGE,      -11,  "value out of range")                                           \
  XX(EORDER,      -12,  "input not sorted")                                             \
  XX(EALIAS,      -13,  "arguments alias each other")                                   \
  XX(ELAYOUT,     -14,  "array is not contiguous or has an unsupported layout")         \
  XX(ETRANSFER,   -15,  "host/device transfer inside a no-transfer scope")              \
  XX(ECOMPILE,    -16,  "kernel compilation failed")                                    \
  XX(ELAUNCH,     -17,  "launch configuration exceeds device limits")                   \
  XX(EOVERFLOW,   -18,  "capacity or size overflow")                                    \
  XX(EMPI,        -19,  "MPI error")                                                    \
  XX(EABI,        -20,  "runtime ABI version mismatch")                                 \
  XX(EIO,         -21,  "I/O error")                                                    \
  XX(EUNSUPPORTED,-22,  "not supported by this build")

typedef enum cnp_status {
#define CNP_STATUS_ENUM_(name, code, text) CNP_##name = code,
  CNP_STATUS_MAP(CNP_STATUS_ENUM_)
#undef CNP_STATUS_ENUM_
} cnp_status;

const char *cnp_status_string(cnp_status st);   /* "invalid argument"; never NULL */
const char *cnp_status_name(cnp_status st);     /* "CNP_EINVAL"; never NULL */
/* Detail of the last failing call on this thread ("" if none). Valid until the next
** failing call on the same thread. */
const char *cnp_last_error(void);
void        cnp_clear_error(void);

/* Generated code calls this at setup with the CNP_ABI_VERSION it was compiled against. */
cnp_status cnp_check_abi(int abi_version);
const char *cnp_version_string(void);           /* "0.1.0" */

/* ---------------------------------------------------------------------------------------
** Backends.
*/
typedef enum cnp_backend {
  CNP_BACKEND_HOST = 0,
  CNP_BACKEND_CUDA = 1
} cnp_backend;

/* Select the process-wide current backend (new streams, events and arrays go there).
** strict != 0: CUDA selection fails with CNP_EUNAVAILABLE and the cached reason (no device,
** no driver, built without CUDA), and the previous backend stays selected.
** strict == 0: falls back to host (and records a fallback marker in transfer accounting).
** The environment variable CNP_BACKEND=host|cuda (any letter case), if set and non-empty,
** overrides `want`; any other value is CNP_EINVAL. */
cnp_status  cnp_backend_select(cnp_backend want, int strict);
/* The backend cnp_backend_select(requested, strict) would select, without selecting it:
** no process-wide state changes (the current backend and device stay as they are), so
** two threads may resolve and set up pipelines at once. Same rule: CNP_BACKEND=host|cuda
** (any letter case), when set and non-empty, overrides `requested`.
** Preconditions: out != NULL (else CNP_EINVAL).
** Statuses: CNP_OK with *out = CNP_BACKEND_HOST or CNP_BACKEND_CUDA (CUDA only when it is
**   usable: built with CUDA, a driver and a device); CNP_EINVAL for an unknown `requested`
**   or a malformed CNP_BACKEND; CNP_EUNAVAILABLE when CUDA is wanted (requested, or forced
**   by CNP_BACKEND=cuda) but unusable and strict != 0, with the cached reason in the detail
**   ("cnp_backend_resolve: CUDA backend unavailable: <reason>", and " (forced by
**   CNP_BACKEND=cuda)" before the colon when the variable forced it). *out is left
**   unchanged on failure. With strict == 0 an unusable CUDA resolves to the host and, as
**   in cnp_backend_select, the fallback marker of transfer accounting is recorded (its
**   only effect: the counters are atomic).
** Resources then take the backend explicitly: cnp_array_alloc_on, cnp_stream_create_on,
** cnp_event_create_on, cnp_mirror_create_on, cnp_workspace_create,
** cnp_segment_plan_create, cnp_device_synchronize_on; the device is the caller's (0 on the
** host; on CUDA typically cnp_backend_device() read once). */
cnp_status  cnp_backend_resolve(cnp_backend requested, int strict, cnp_backend *out);
cnp_backend cnp_backend_current(void);
int         cnp_backend_device(void);           /* current device ordinal (0 on host) */
cnp_status  cnp_set_device(int device);         /* CUDA: choose device; host: only 0 */
/* 1 if CUDA can be used (built with CUDA and a device and driver were found). If not and
** reason != NULL, *reason points to a static, cached explanation. */
int         cnp_cuda_available(const char **reason);
const char *cnp_backend_name(cnp_backend b);    /* "host" | "cuda" */
/* JSON text: {"cnp":{"version":..,"abi":..},"backend":..,"cuda":{..},"nvrtc":{..},
** "mpi":{..},"device":{..limits..}}. Never initializes MPI. Writes at most len bytes
** (NUL-terminated); *needed (optional) receives the full length + 1. CNP_EOVERFLOW if the
** buffer was too small. */
cnp_status  cnp_backend_info(char *buf, size_t len, size_t *needed);

/* ---------------------------------------------------------------------------------------
** Arrays: a view (not a handle). Allocated arrays own their storage until cnp_array_free.
*/
typedef enum cnp_dtype {
  CNP_BOOL = 0,
  CNP_INT32,
  CNP_INT64,
  CNP_UINT64,
  CNP_FLOAT16,
  CNP_FLOAT32,
  CNP_FLOAT64,
  CNP_COMPLEX64,
  CNP_COMPLEX128,
  CNP_DTYPE_COUNT_
} cnp_dtype;

size_t      cnp_dtype_size(cnp_dtype t);        /* 0 for an invalid dtype */
const char *cnp_dtype_name(cnp_dtype t);        /* "float64", ...; "?" if invalid */

#define CNP_MAX_DIMS 4

typedef enum cnp_order { CNP_ORDER_C = 0, CNP_ORDER_F = 1 } cnp_order;

typedef struct cnp_array {
  void       *data;                    /* first element (host or device address) */
  cnp_dtype   dtype;
  int         ndim;                    /* 0..CNP_MAX_DIMS */
  int64_t     shape[CNP_MAX_DIMS];
  int64_t     strides[CNP_MAX_DIMS];   /* in bytes; may be any sign-free multiple */
  cnp_backend backend;                 /* where data lives */
  int         device;                  /* CUDA device ordinal; 0 on host */
  uint32_t    flags;                   /* CNP_ARRAY_* below */
  uint64_t    alloc_id;                /* nonzero for storage owned by libcnp */
} cnp_array;

#define CNP_ARRAY_OWNED   0x1u         /* cnp_array_free releases data */
#define CNP_ARRAY_PINNED  0x2u         /* host storage is page-locked */

/* Allocate a zero-filled array of the given shape on the current backend and device. */
cnp_status cnp_array_alloc(cnp_array *out, cnp_dtype t, int ndim, const int64_t *shape,
                           cnp_order order);
/* Same, on an explicit backend (host arrays may be pinned when CUDA is present). */
cnp_status cnp_array_alloc_on(cnp_array *out, cnp_backend b, int device, cnp_dtype t,
                              int ndim, const int64_t *shape, cnp_order order,
                              uint32_t flags);
/* Free owned storage and clear the view (data = NULL, alloc_id = 0). A second free of the
** same view is CNP_ESTATE (use after free is detected through alloc_id). */
cnp_status cnp_array_free(cnp_array *a);
/* Wrap memory owned by the caller (never freed by libcnp). strides == NULL: C order. */
cnp_status cnp_array_wrap(cnp_array *out, void *data, cnp_backend b, int device,
                          cnp_dtype t, int ndim, const int64_t *shape,
                          const int64_t *strides);
/* Checks that a view is well formed (dtype, ndim, non-negative shape, no size overflow,
** live storage). Returns CNP_OK or an error naming `what`. */
cnp_status cnp_array_validate(const cnp_array *a, const char *what);
int64_t    cnp_array_numel(const cnp_array *a);
size_t     cnp_array_nbytes(const cnp_array *a);       /* numel * itemsize */
int        cnp_array_is_c_contiguous(const cnp_array *a);
int        cnp_array_is_f_contiguous(const cnp_array *a);
/* Sub-view [start, stop) along axis (no copy). */
cnp_status cnp_array_slice(cnp_array *out, const cnp_array *a, int axis, int64_t start,
                           int64_t stop);

/* ---------------------------------------------------------------------------------------
** Streams and events. Host backend: synchronous HostStream/HostEvent with the same
** completion interface. A stream is tied to the device current at creation.
*/
typedef struct cnp_stream cnp_stream;
typedef struct cnp_event  cnp_event;

#define CNP_EVENT_DEFAULT 0x0u          /* timing disabled (cheaper) */
#define CNP_EVENT_TIMING  0x1u

cnp_status cnp_stream_create(cnp_stream **out);
/* Wrap a user-provided native stream (cudaStream_t passed as void*); not destroyed by us. */
cnp_status cnp_stream_wrap(cnp_stream **out, void *native);
/* Explicit-backend forms (touch no process-wide state; see cnp_backend_resolve): a stream
** on (b, device), and a wrapped native stream of backend b (CUDA: the stream keeps its own
** device; host: native must be NULL, else CNP_EDEVICE). An unknown b is CNP_EINVAL, CUDA
** without a usable device CNP_EUNAVAILABLE, a negative device or a host device other
** than 0 CNP_EDEVICE. The same holds for cnp_event_create_on, cnp_mirror_create_on and
** cnp_device_synchronize_on. */
cnp_status cnp_stream_create_on(cnp_stream **out, cnp_backend b, int device);
cnp_status cnp_stream_wrap_on(cnp_stream **out, cnp_backend b, void *native);
cnp_status cnp_stream_destroy(cnp_stream *s);
cnp_status cnp_stream_synchronize(cnp_stream *s);
cnp_status cnp_stream_done(cnp_stream *s, int *done);          /* query, never blocks */
/* GPU-side wait: later work on s runs after e's recorded work; the CPU is not blocked. */
cnp_status cnp_stream_wait_event(cnp_stream *s, cnp_event *e);
cnp_backend cnp_stream_backend(const cnp_stream *s);
int         cnp_stream_device(const cnp_stream *s);
void       *cnp_stream_native(cnp_stream *s);                  /* cudaStream_t or NULL */

cnp_status cnp_event_create(cnp_event **out, unsigned flags);
cnp_status cnp_event_create_on(cnp_event **out, unsigned flags, cnp_backend b, int device);
cnp_status cnp_event_destroy(cnp_event *e);
cnp_status cnp_event_record(cnp_event *e, cnp_stream *s);
cnp_status cnp_event_done(cnp_event *e, int *done);
cnp_status cnp_event_synchronize(cnp_event *e);
/* Both events need CNP_EVENT_TIMING and must have completed. */
cnp_status cnp_event_elapsed_ms(cnp_event *start, cnp_event *stop, float *ms);
/* Synchronize every stream of the current device. */
cnp_status cnp_device_synchronize(void);
/* Synchronize every stream of `device` on backend b (host: nothing to wait for). */
cnp_status cnp_device_synchronize_on(cnp_backend b, int device);

/* ---------------------------------------------------------------------------------------
** Copies. Ordered on `s` (NULL: the backend's default stream, synchronous on host).
** Shapes and dtypes must match; layouts may differ (strided copies are supported).
** Every copy is reported to transfer accounting by direction.
*/
cnp_status cnp_array_copy(cnp_array *dst, const cnp_array *src, cnp_stream *s);
cnp_status cnp_array_fill_zero(cnp_array *a, cnp_stream *s);

/* ---------------------------------------------------------------------------------------
** Transfer accounting. Off the counting path the cost is one predictable branch.
*/
typedef struct cnp_transfer_counts {
  uint64_t h2d_bytes, h2d_calls;       /* host -> device */
  uint64_t d2h_bytes, d2h_calls;       /* device -> host */
  uint64_t d2d_bytes, d2d_calls;       /* device-local copies (and host-local on host) */
  uint64_t conversions;                /* markers without bytes: dtype/layout conversions */
  uint64_t fallbacks;                  /* markers: backend fallbacks */
} cnp_transfer_counts;

typedef enum cnp_transfer_kind {
  CNP_XFER_H2D = 0, CNP_XFER_D2H, CNP_XFER_D2D, CNP_XFER_CONVERSION, CNP_XFER_FALLBACK
} cnp_transfer_kind;

typedef struct cnp_transfer_scope {
  cnp_transfer_counts start;           /* counters when the scope began */
  int                 forbid;          /* 1 for an assert-no-transfers scope */
  int                 active;
  uint64_t            seq;             /* host<->device transfer sequence number at begin */
} cnp_transfer_scope;

/* Scopes nest. begin/end of a counting scope: *out receives what happened inside. */
cnp_status cnp_transfers_begin(cnp_transfer_scope *scope);
cnp_status cnp_transfers_end(cnp_transfer_scope *scope, cnp_transfer_counts *out);
/* Assert-no-transfers scope: end returns CNP_ETRANSFER (detail names the first offending
** operation) if any host<->device bytes moved inside it; device-local copies are allowed. */
cnp_status cnp_transfers_forbid_begin(cnp_transfer_scope *scope);
cnp_status cnp_transfers_forbid_end(cnp_transfer_scope *scope, cnp_transfer_counts *out);
/* Snapshot of the process-wide counters (they count only while some scope is active). */
void       cnp_transfers_read(cnp_transfer_counts *out);
/* Report a transfer. Every runtime helper calls this; generated code and users may too.
** `op` names the operation for assert-scope messages (static string). */
void       cnp_transfers_note(cnp_transfer_kind kind, uint64_t bytes, const char *op);

/* ---------------------------------------------------------------------------------------
** Host staging snapshots: N host slots (default 2) for device->host copies of a field.
*/
typedef struct cnp_snapshot cnp_snapshot;
typedef struct cnp_snapshot_handle {
  cnp_snapshot *owner;
  int           slot;
  uint64_t      generation;            /* slot generation at copy time: detects reuse */
} cnp_snapshot_handle;

/* Binds to like->backend/device; allocates `slots` host buffers of like's shape/dtype
** (pinned when CUDA is present). slots <= 0 means 2. */
cnp_status cnp_snapshot_create(cnp_snapshot **out, const cnp_array *like, int slots);
cnp_status cnp_snapshot_destroy(cnp_snapshot *s);
/* Enqueue field -> next slot, ordered after the producer: a stream (the copy is enqueued on
** it) or an event (waited GPU-side on the snapshot's internal stream). Exactly one of
** producer_stream / producer_event may be non-NULL; with neither, the device's default
** stream orders it. A field on another device/backend than the binding is CNP_EDEVICE. */
cnp_status cnp_snapshot_copy(cnp_snapshot *s, const cnp_array *field,
                             cnp_stream *producer_stream, cnp_event *producer_event,
                             cnp_snapshot_handle *out);
/* Wait for the copy and return a host view of the complete data. CNP_ESTALE if the slot
** was reused by a later copy since the handle was made. */
cnp_status cnp_snapshot_result(cnp_snapshot_handle h, cnp_array *host_view);
int        cnp_snapshot_slots(const cnp_snapshot *s);

/* ---------------------------------------------------------------------------------------
** Device mirrors: a device copy of another library's host array.
*/
typedef struct cnp_mirror cnp_mirror;
/* host: the other library's array (wrapped, not owned). Allocates the device copy and
** uploads once. On the host backend the mirror is the host array itself (no copies). */
cnp_status cnp_mirror_create(cnp_mirror **out, const cnp_array *host);
/* As cnp_mirror_create, bound to (b, device) instead of the current backend and device. */
cnp_status cnp_mirror_create_on(cnp_mirror **out, const cnp_array *host, cnp_backend b,
                                int device);
cnp_status cnp_mirror_destroy(cnp_mirror *m);
cnp_status cnp_mirror_device(cnp_mirror *m, cnp_array *device_view);
/* Device -> host after the producer (stream or event, at most one); waits for completion. */
cnp_status cnp_mirror_to_host(cnp_mirror *m, cnp_stream *producer_stream,
                              cnp_event *producer_event);
/* Host -> device after CPU work changed the host array; ordered on s (NULL: default). */
cnp_status cnp_mirror_to_device(cnp_mirror *m, cnp_stream *s);

#ifdef __cplusplus
}
#endif

/* Sub-APIs (present in every build, answering CNP_EUNSUPPORTED where the build lacks the
** feature). Plain includes: __has_include is not C11, and without it these were skipped. */
#include "cnp/algo.h"
#include "cnp/catalog.h"
#include "cnp/grid.h"
#include "cnp/mpi.h"

#endif /* CNP_CNP_H */
