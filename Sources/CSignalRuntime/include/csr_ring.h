// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

//===----------------------------------------------------------------------===//
// csr_ring: the work queue of a dedicated-thread executor (SignalKit's
// `Queue(dedicatedThread:)`): a bounded multi-producer, single-consumer ring
// with a counted spill list beyond its capacity, and a consumer that parks on
// a futex when there is nothing to do.
//
// The ring. A power-of-two array of cells, each with a sequence number (the
// bounded queue of per-cell sequence numbers). A producer claims position
// `tail` with a full compare-and-swap when the cell's sequence equals the
// position, writes the item, then publishes it with a release store of
// `position + 1`. The consumer takes the cell at `head` when its sequence is
// `head + 1` and frees it for the next lap with `head + capacity`. A claimed
// cell whose item is not yet published makes the consumer wait (spin, then
// yield): the producer is between two instructions.
//
// When full. A push never fails and never blocks: when every cell is taken it
// appends the item to the spill list (a mutex and one malloc'd node per item)
// and counts it (`spill_count`, shown as `spill_depth` in the statistics, and
// `spilled_total`). While the spill list is not
// empty, every push goes there too, so that one producer's items stay in the
// order it pushed them; the consumer takes spilled items only when the ring is
// empty, and looks at `tail` for that after it saw the spill count (and again
// under the spill list's mutex): a producer may claim a cell and then spill
// its next item between an earlier look and the take. The spill list is unbounded but counted: growth beyond the capacity
// is visible in the statistics, never silent. (Blocking the producer instead
// would deadlock when the producer is the consumer's own thread.)
//
// Park and wake (Dekker over two words, every access sequentially
// consistent). The consumer announces `parked = 1` with a full compare-and-
// swap, then looks at `tail` and `spill_count`; if anything was claimed or
// spilled it takes `parked` back and goes on, else it waits on the futex
// while `parked == 1`. A producer announces its item with a full read-modify-
// write (the claim of `tail`, or the increment of `spill_count`), then loads
// `parked`; if it is 1, the producer that turns it to 0 (compare-and-swap)
// wakes the consumer. One of the two always sees the other: either the
// consumer's look finds the item, or the producer's load finds `parked == 1`
// (and the futex wait, which sleeps only while the word is still 1, cannot
// miss the wake). `Tests/Models/csr_ring.pml` is this protocol for `spin`,
// checked exhaustively by `scripts/check-models` in `scripts/test`.
//
// Ownership: items are retained `Unmanaged` pointers (+1). A push hands the
// reference to the ring; a pop hands it back to the caller. C never releases
// an item: destroy the ring only when it is empty.
//===----------------------------------------------------------------------===//
#ifndef CSR_RING_H
#define CSR_RING_H

#include "csr_config.h"

CSR_ASSUME_NONNULL_BEGIN

typedef struct csr_ring csr_ring;

/// How a consumer waits when the ring is empty.
typedef enum csr_wait_strategy {
    /// Park on the futex at once. Costs a system call on each side of a
    /// wake-up; burns no CPU while idle.
    CSR_WAIT_PARK = 0,
    /// Spin (with a CPU pause) for `spin_nanoseconds`, then park.
    CSR_WAIT_SPIN_THEN_PARK = 1,
    /// Never park: spin (with a CPU pause) until work arrives. Burns a core.
    CSR_WAIT_BUSY_SPIN = 2,
} csr_wait_strategy;

/// What a push did with its item.
typedef enum csr_push_result {
    /// The item went into a cell of the ring.
    CSR_PUSH_RING = 0,
    /// The ring was full (or the spill list not empty): the item went to the
    /// spill list.
    CSR_PUSH_SPILLED = 1,
} csr_push_result;

/// Counters of a ring, read with relaxed (or acquire) loads: each is exact
/// on its own, the set is not a snapshot.
typedef struct csr_ring_statistics {
    /// Cells of the ring.
    uint64_t capacity;
    /// Items in the ring now (claimed, published or not, minus taken).
    uint64_t ring_depth;
    /// Items in the spill list now.
    uint64_t spill_depth;
    /// Items that ever went to the spill list.
    uint64_t spilled_total;
    /// Times the consumer went to sleep on the futex.
    uint64_t parks;
    /// Times a producer woke the consumer (a futex wake system call).
    uint64_t wakes;
} csr_ring_statistics;

/// Creates an empty ring with `capacity` cells, rounded up to a power of two
/// (at least 2). Returns NULL when memory is short.
/// Ordering: none (publish the ring to other threads with a happens-before).
/// Ownership: the caller owns the ring; free it with `csr_ring_destroy`.
/// Thread safety: any thread.
csr_ring *CSR_NULLABLE csr_ring_create(size_t capacity);

/// Frees an empty ring. Returns false (and frees nothing) when an item is
/// still in it: pop every item first (the caller owns what they point to).
/// Ordering: none. Ownership: the ring's memory is freed.
/// Thread safety: only when no other thread can use the ring.
CSR_WARN_UNUSED bool csr_ring_destroy(csr_ring *ring);

/// Appends `item` (never NULL), in a cell or, when the ring is full, in the
/// spill list, and wakes the consumer if it is parked.
/// Ordering: full (the claim or the spill count), then a sequentially
/// consistent load of the park word; the item is published with release, so
/// whatever the producer wrote before the push happens before the consumer's
/// pop that returns it. Ownership: the ring owns `item` (+1) from now on.
/// Thread safety: any number of threads, concurrently, including the
/// consumer's own.
csr_push_result csr_ring_push(csr_ring *ring, void *item);

/// Takes the oldest item without waiting: the next cell's item, or, when the
/// ring is empty, the oldest spilled item. Returns NULL when there is none;
/// then `*busy` tells whether a producer has claimed a cell it has not
/// published yet (the caller should retry shortly rather than sleep).
/// Ordering: acquire (pairs with the push's release). Ownership: the caller
/// owns the returned item (+1). Thread safety: the one consumer thread only.
void *CSR_NULLABLE csr_ring_pop(csr_ring *ring, bool *busy);

/// Takes the oldest item, waiting by `strategy` until one arrives or until
/// CLOCK_MONOTONIC reaches `deadline_nanoseconds` (0: no deadline). Returns
/// NULL only at the deadline. `spin_nanoseconds` is the spin phase of
/// `CSR_WAIT_SPIN_THEN_PARK` (ignored otherwise).
/// Ordering: as `csr_ring_pop`; the park announcement is a full compare-and-
/// swap followed by sequentially consistent loads of `tail` and the spill
/// count (see the file comment). Ownership: as `csr_ring_pop`.
/// Thread safety: the one consumer thread only.
void *CSR_NULLABLE csr_ring_pop_wait(csr_ring *ring, csr_wait_strategy strategy, uint64_t spin_nanoseconds,
                                     uint64_t deadline_nanoseconds);

/// The ring's counters (see `csr_ring_statistics`).
/// Ordering: relaxed/acquire loads. Ownership: none. Thread safety: any thread.
void csr_ring_get_statistics(const csr_ring *ring, csr_ring_statistics *out);

/// Makes `ring` the calling thread's current ring (NULL: none), as the
/// consumer thread does when it starts, for `csr_ring_is_current`.
/// Ordering: none (a thread-local variable). Ownership: none (the caller
/// keeps the ring alive while it is current). Thread safety: the calling
/// thread only.
void csr_ring_set_current(csr_ring *CSR_NULLABLE ring);

/// Whether `ring` is the calling thread's current ring (the thread is the
/// ring's consumer). Ordering: none. Ownership: none. Thread safety: any thread.
bool csr_ring_is_current(const csr_ring *ring);

/// CLOCK_MONOTONIC in nanoseconds (the clock of `deadline_nanoseconds`).
/// Ordering: none. Ownership: none. Thread safety: any thread.
uint64_t csr_monotonic_nanoseconds(void);

CSR_ASSUME_NONNULL_END

#endif
