// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

//===----------------------------------------------------------------------===//
// csr_slot: the atomic disposable slot (SignalKit's MetaDisposable and the
// generator-disposable slot of every subscription).
//
// A slot holds nothing, one retained object pointer, or the closed sentinel.
// Closing is terminal: a value offered after `csr_slot_close` is refused and
// stays with the caller, which disposes it at once ("set after dispose
// disposes the new value"). libatomic_ops 7.6 has no AO_exchange, so the
// exchanges are compare-and-swap loops.
//
// Ownership convention for every function: a pointer handed in is a +1
// reference that the slot owns from then on, unless the function reports it
// refused it; a pointer handed back is a +1 reference the caller now owns.
//===----------------------------------------------------------------------===//
#ifndef CSR_SLOT_H
#define CSR_SLOT_H

#include "csr_config.h"

CSR_ASSUME_NONNULL_BEGIN

typedef struct csr_slot csr_slot;

/// Bytes of storage a slot needs, as a compile-time constant (checked by a
/// static assertion in csr_slot.c). Align the storage to 8.
#define CSR_SLOT_SIZE 8

/// Bytes of storage a slot needs (== CSR_SLOT_SIZE).
/// Ordering: none. Ownership: none. Thread safety: any thread.
size_t csr_slot_size(void);

/// Initialises an empty, open slot in caller-provided storage.
/// Ordering: plain store (publish the storage with a happens-before).
/// Ownership: the caller owns the storage. Thread safety: before sharing.
void csr_slot_init(csr_slot *slot);

/// The current value, or NULL when empty or closed. The result is NOT
/// retained: it is valid only while the caller otherwise knows it is alive.
/// Ordering: acquire. Ownership: none transferred. Thread safety: any thread.
void *CSR_NULLABLE csr_slot_peek(const csr_slot *slot);

/// Whether the slot was closed.
/// Ordering: sequentially consistent (a plain load on x86-64, `ldar` on
/// AArch64), so that it may follow a full read-modify-write on another word
/// in a Dekker pairing (SignalKit: "set the source-entry bit, then look at
/// the slot" against "close the slot, then look at the bit").
/// Ownership: none. Thread safety: any thread.
bool csr_slot_is_closed(const csr_slot *slot);

/// Replaces the value with `desired` (which may be NULL) unless the slot is
/// closed. On success returns the previous value (+1, now the caller's, or
/// NULL) and sets `*refused` to false; the slot owns `desired`. If the slot
/// is closed, nothing changes, `*refused` is set to true and the caller keeps
/// `desired`.
/// Ordering: full. Ownership: see above. Thread safety: any thread,
/// concurrently; concurrent exchanges are linearised.
void *CSR_NULLABLE csr_slot_exchange(csr_slot *slot, void *CSR_NULLABLE desired, bool *refused);

/// Stores `desired` only if the slot currently holds `expected` (and is not
/// closed). Returns true on success: the slot then owns `desired` and the
/// caller owns the `expected` reference it replaced.
/// Ordering: full. Ownership: see above. Thread safety: any thread.
CSR_WARN_UNUSED bool csr_slot_compare_exchange(csr_slot *slot, void *CSR_NULLABLE expected,
                                               void *CSR_NULLABLE desired);

/// Closes the slot and returns the value it held (+1, now the caller's), or
/// NULL. `*was_closed` tells whether it was closed already (then NULL is
/// returned). Exactly one caller ever sees `*was_closed == false`.
/// Ordering: full. Ownership: see above. Thread safety: any thread,
/// concurrently.
void *CSR_NULLABLE csr_slot_close(csr_slot *slot, bool *was_closed);

CSR_ASSUME_NONNULL_END

#endif
