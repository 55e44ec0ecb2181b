// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

//===----------------------------------------------------------------------===//
// csr_bag: the lock-free subscriber bag.
//
// * Insert returns a key (64-bit, increasing, never reused, never 0) in O(1)
//   amortised; remove by key is O(1) expected; both take a short writer
//   spinlock that readers never take.
// * Reading (delivery) never blocks writers and is never blocked by them: a
//   reader pins the current entry array, walks it in insertion order and
//   skips entries removed meanwhile. Entries inserted after the read began
//   are not seen (snapshot semantics).
// * Memory reclamation: removed items and replaced arrays are not released
//   while a reader that might still see them is inside. The bag tracks its
//   readers in two epoch counters (a sleepable-RCU scheme scoped to one
//   bag): anything retired in epoch e is safe once the epoch has advanced
//   twice, and the epoch only advances past e - 1 when no reader of e - 1 is
//   left. With no reader inside, a removed item is reclaimable at once.
//   Nothing retired waits for an unrelated later reader: the last reader to
//   leave reclaims, or the remover does if they all left meanwhile.
// * A reader that stalls inside (a delivery blocked in a callback, or a
//   thread that stops mid-walk) holds back this bag's reclamation until it
//   leaves: everything removed from the bag meanwhile, and every array
//   replaced meanwhile, stays allocated. That is inherent to the scheme, and
//   limited to the one bag: each subscribe/dispose cycle on a `ValuePipe`
//   during one blocked delivery keeps its subscription, its sink and the
//   retired node until the delivery returns; then every item is reclaimed
//   (retired count 0).
// * Items are retained object pointers (+1 in `csr_bag_insert`). The bag
//   never releases them itself (C does not call into Swift): once safe, they
//   come back through `csr_bag_reclaim` and the caller releases them.
//
// Entry arrays grow by doubling and are compacted when removed entries
// outnumber live ones, so memory and a full walk stay proportional to the
// live count, and insertion order is preserved.
//===----------------------------------------------------------------------===//
#ifndef CSR_BAG_H
#define CSR_BAG_H

#include "csr_config.h"

CSR_ASSUME_NONNULL_BEGIN

typedef struct csr_bag csr_bag;

/// A reader's pin on one entry array. Treat the fields as private.
typedef struct csr_bag_read {
    const void *CSR_NULLABLE array;
    size_t count;
    uintptr_t ticket;
} csr_bag_read;

/// Allocates an empty, open bag.
/// Ordering: none (publish the pointer with a happens-before).
/// Ownership: the caller owns the bag and frees it with `csr_bag_destroy`.
/// Thread safety: any thread. Returns NULL only if memory is exhausted.
csr_bag *CSR_NULLABLE csr_bag_create(void);

/// Frees the bag. It must be empty of items (remove them, then drain
/// `csr_bag_reclaim`), and no reader may be inside.
/// Ordering: none. Ownership: frees every array the bag still holds.
/// Thread safety: the owner only, once.
void csr_bag_destroy(csr_bag *bag);

/// Appends `item` (+1, owned by the bag from now on) and returns its key, or 0
/// if the bag was closed or memory is exhausted (the caller keeps `item`).
/// Ordering: writer spinlock; the entry is published with a release store
/// before the count that makes it visible.
/// Thread safety: any thread, concurrently with everything.
CSR_WARN_UNUSED uint64_t csr_bag_insert(csr_bag *bag, void *item);

/// Removes the entry with `key`; `*found` tells whether it was present.
/// When no reader is inside the bag, nothing can still see the item: it is
/// returned at once (+1, the caller releases it). Otherwise it is retired,
/// NULL is returned, and it comes back through `csr_bag_reclaim` once the
/// readers that might see it have left: the last of them is told to reclaim
/// by `csr_bag_read_end`, or, if they all left while this call was retiring
/// it, this call sets `*reclaim` and the caller must call `csr_bag_reclaim`
/// (`*reclaim` is also set when earlier retirements became reclaimable).
/// Either way no retired item waits for a later, unrelated reader. Unknown or
/// already removed keys return NULL with `*found == false`.
/// Ordering: writer spinlock; the entry is cleared, then a full barrier, then
/// sequentially consistent loads of the reader counters (a reader increments
/// its counter with a full read-modify-write before it reads entries, so one
/// of the two sides sees the other). A retirement is published the same way
/// against leaving readers: backlog store, full barrier, counter loads.
/// Thread safety: any thread, concurrently, also from inside a reader on the
/// same thread.
void *CSR_NULLABLE csr_bag_remove(csr_bag *bag, uint64_t key, bool *found, bool *reclaim);

/// Removes every entry (each is retired as by `csr_bag_remove`). Returns how
/// many were removed.
/// Ordering, thread safety: as `csr_bag_remove`.
size_t csr_bag_remove_all(csr_bag *bag);

/// Closes the bag: later inserts return 0. Existing entries stay. Returns
/// whether this call closed it.
/// Ordering: writer spinlock. Thread safety: any thread.
bool csr_bag_close(csr_bag *bag);

/// Whether the bag was closed.
/// Ordering: acquire. Thread safety: any thread.
bool csr_bag_is_closed(const csr_bag *bag);

/// Live entries right now (racy by nature when writers run concurrently).
/// Ordering: acquire. Thread safety: any thread.
size_t csr_bag_count(const csr_bag *bag);

/// Begins a read: pins the current array. Every `csr_bag_read_begin` must be
/// paired with one `csr_bag_read_end` on the same thread.
/// Ordering: a full fetch-and-add on the epoch's reader counter, then
/// acquire loads of the epoch, the array and its count.
/// Ownership: the array and every item still in it stay alive until
/// `csr_bag_read_end`. Thread safety: any thread, concurrently, reentrantly.
csr_bag_read csr_bag_read_begin(csr_bag *bag);

/// Copies up to `capacity` live items at positions `*position` ..< count of
/// the pinned array into `out` (unretained: valid until `csr_bag_read_end`)
/// and advances `*position`. Returns the number copied; 0 means the walk is
/// done.
/// Ordering: acquire load per entry. Ownership: none transferred.
/// Thread safety: the reading thread.
size_t csr_bag_read_next(const csr_bag_read *read, size_t *position, void *CSR_NULLABLE *CSR_NULLABLE out,
                         size_t capacity);

/// Ends a read. Returns true when retired items may now be reclaimable (call
/// `csr_bag_reclaim`): this was the last reader of its epoch and something is
/// retired or ready.
/// Ordering: a full fetch-and-sub on the reader counter, then a sequentially
/// consistent load of the backlog (the other half of the hand-off described
/// at `csr_bag_remove`).
/// Thread safety: the thread that began the read.
CSR_WARN_UNUSED bool csr_bag_read_end(csr_bag *bag, const csr_bag_read *read);

/// Advances the epochs as far as readers allow and hands back up to
/// `capacity` retired items that no reader can see any more (+1 each: the
/// caller releases them). Returns the number handed back; call again until it
/// returns less than `capacity`. Retired arrays are freed here by C.
/// Ordering: takes the writer spinlock (only if anything is pending), then
/// the same barriers as `csr_bag_remove`.
/// Thread safety: any thread, outside a read on this bag or inside one.
size_t csr_bag_reclaim(csr_bag *bag, void *CSR_NULLABLE *CSR_NULLABLE out, size_t capacity);

/// Retired items and arrays not yet handed back or freed (racy by nature).
/// Ordering: acquire. Thread safety: any thread.
size_t csr_bag_pending(const csr_bag *bag);

CSR_ASSUME_NONNULL_END

#endif
