/*
** transfer.c — transfer accounting: process-wide atomic counters that count only while a
** scope is active, so that off the counting path cnp_transfers_note() costs one predictable
** branch on the number of active scopes.
**
** Assert-no-transfers scopes name the first offending operation: every host<->device
** transfer takes a sequence number and stores its op name in a small ring, and the scope
** remembers the sequence number at its beginning.
*/
#include "internal.h"

#include <stdatomic.h>
#include <string.h>

#define RING 256                        /* op names remembered for assert-scope messages */

static atomic_int active_scopes;
static atomic_uint_fast64_t c_h2d_bytes, c_h2d_calls, c_d2h_bytes, c_d2h_calls;
static atomic_uint_fast64_t c_d2d_bytes, c_d2d_calls, c_conversions, c_fallbacks;
static atomic_uint_fast64_t hd_seq;     /* host<->device transfers counted so far */
static _Atomic(const char *) ring_op[RING];
static _Atomic(int) ring_kind[RING];

void cnp_transfers_note(cnp_transfer_kind kind, uint64_t bytes, const char *op)
{
  if (__builtin_expect(atomic_load_explicit(&active_scopes, memory_order_relaxed) == 0, 1))
    return;
  switch (kind) {
  case CNP_XFER_H2D:
  case CNP_XFER_D2H: {
    if (kind == CNP_XFER_H2D) {
      atomic_fetch_add_explicit(&c_h2d_bytes, bytes, memory_order_relaxed);
      atomic_fetch_add_explicit(&c_h2d_calls, 1, memory_order_relaxed);
    } else {
      atomic_fetch_add_explicit(&c_d2h_bytes, bytes, memory_order_relaxed);
      atomic_fetch_add_explicit(&c_d2h_calls, 1, memory_order_relaxed);
    }
    uint64_t n = atomic_fetch_add(&hd_seq, 1);       /* this transfer is number n + 1 */
    atomic_store(&ring_op[n % RING], op ? op : "(unnamed)");
    atomic_store(&ring_kind[n % RING], (int)kind);
    break;
  }
  case CNP_XFER_D2D:
    atomic_fetch_add_explicit(&c_d2d_bytes, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&c_d2d_calls, 1, memory_order_relaxed);
    break;
  case CNP_XFER_CONVERSION:
    atomic_fetch_add_explicit(&c_conversions, 1, memory_order_relaxed);
    break;
  case CNP_XFER_FALLBACK:
    atomic_fetch_add_explicit(&c_fallbacks, 1, memory_order_relaxed);
    break;
  }
}

void cnp_transfers_read(cnp_transfer_counts *out)
{
  if (!out) return;
  out->h2d_bytes = atomic_load(&c_h2d_bytes);
  out->h2d_calls = atomic_load(&c_h2d_calls);
  out->d2h_bytes = atomic_load(&c_d2h_bytes);
  out->d2h_calls = atomic_load(&c_d2h_calls);
  out->d2d_bytes = atomic_load(&c_d2d_bytes);
  out->d2d_calls = atomic_load(&c_d2d_calls);
  out->conversions = atomic_load(&c_conversions);
  out->fallbacks = atomic_load(&c_fallbacks);
}

static cnp_status scope_begin(cnp_transfer_scope *scope, int forbid, const char *op)
{
  CNP__CHECK_NOTNULL(op, scope);
  memset(scope, 0, sizeof *scope);
  /* Count first, then read: a transfer racing with begin is either inside or outside. */
  atomic_fetch_add(&active_scopes, 1);
  cnp_transfers_read(&scope->start);
  scope->seq = atomic_load(&hd_seq);
  scope->forbid = forbid;
  scope->active = 1;
  return CNP_OK;
}

static void diff(cnp_transfer_counts *d, const cnp_transfer_counts *now,
                 const cnp_transfer_counts *then)
{
  d->h2d_bytes = now->h2d_bytes - then->h2d_bytes;
  d->h2d_calls = now->h2d_calls - then->h2d_calls;
  d->d2h_bytes = now->d2h_bytes - then->d2h_bytes;
  d->d2h_calls = now->d2h_calls - then->d2h_calls;
  d->d2d_bytes = now->d2d_bytes - then->d2d_bytes;
  d->d2d_calls = now->d2d_calls - then->d2d_calls;
  d->conversions = now->conversions - then->conversions;
  d->fallbacks = now->fallbacks - then->fallbacks;
}

static cnp_status scope_end(cnp_transfer_scope *scope, cnp_transfer_counts *out, int forbid,
                            const char *op)
{
  CNP__CHECK_NOTNULL(op, scope);
  if (scope->active != 1)
    return cnp__fail(CNP_ESTATE, op, "scope is not active (ended twice or never begun)");
  if (scope->forbid != forbid)
    return cnp__fail(CNP_EINVAL, op, "scope was begun with %s",
                     scope->forbid ? "cnp_transfers_forbid_begin" : "cnp_transfers_begin");
  cnp_transfer_counts now, d;
  cnp_transfers_read(&now);
  uint64_t seq = atomic_load(&hd_seq);
  scope->active = 0;
  atomic_fetch_sub(&active_scopes, 1);
  diff(&d, &now, &scope->start);
  if (out) *out = d;
  if (forbid && seq > scope->seq) {
    uint64_t first = scope->seq;       /* ring index of the first transfer inside */
    const char *name = "(an operation no longer remembered)";
    int kind = CNP_XFER_H2D;
    if (seq - first <= RING) {
      name = atomic_load(&ring_op[first % RING]);
      kind = atomic_load(&ring_kind[first % RING]);
    }
    return cnp__fail(CNP_ETRANSFER, op,
                     "%llu host/device transfer%s (%llu B host->device, %llu B device->host) "
                     "inside a no-transfer scope; first: %s (%s)",
                     (unsigned long long)(seq - scope->seq), seq - scope->seq == 1 ? "" : "s",
                     (unsigned long long)d.h2d_bytes, (unsigned long long)d.d2h_bytes, name,
                     kind == CNP_XFER_H2D ? "host->device" : "device->host");
  }
  return CNP_OK;
}

cnp_status cnp_transfers_begin(cnp_transfer_scope *scope)
{
  return scope_begin(scope, 0, "cnp_transfers_begin");
}

cnp_status cnp_transfers_end(cnp_transfer_scope *scope, cnp_transfer_counts *out)
{
  return scope_end(scope, out, 0, "cnp_transfers_end");
}

cnp_status cnp_transfers_forbid_begin(cnp_transfer_scope *scope)
{
  return scope_begin(scope, 1, "cnp_transfers_forbid_begin");
}

cnp_status cnp_transfers_forbid_end(cnp_transfer_scope *scope, cnp_transfer_counts *out)
{
  return scope_end(scope, out, 1, "cnp_transfers_forbid_end");
}
