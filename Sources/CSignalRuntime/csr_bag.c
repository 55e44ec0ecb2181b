// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#include "csr_bag.h"
#include "csr_atomic.h"
#include "csr_debug_internal.h"

#include <stdlib.h>
#include <string.h>

// ---------------------------------------------------------------------------
// Layout
//
// The bag publishes one entry array at a time. Entries are appended in key
// order; a removed entry keeps its place with a NULL item (a "tombstone")
// until the next rebuild copies only live entries into a fresh array. Readers
// walk [0, count) of the array they pinned. Writers (insert, remove, close,
// rebuild, epoch advance) serialise on `lock`; readers never take it.
//
// A private open-addressing index maps key -> position in the current array
// so that remove is O(1); only writers touch it, under the lock. A slot holds
// only the position (+1; 0 is empty): the key is the entry's, read from the
// current array, so the index costs 4 bytes a slot (8–16 per live entry at
// its load factor of at most one half) instead of 12.
// ---------------------------------------------------------------------------

typedef struct csr_bag_entry {
    uint64_t key;
    volatile AO_t item;  // void *, 0 once removed
} csr_bag_entry;

typedef struct csr_bag_array {
    size_t capacity;
    volatile AO_t count;  // entries published, tombstones included
    csr_bag_entry entries[];
} csr_bag_array;

typedef struct csr_retired {
    void *ptr;
    bool is_array;
} csr_retired;

typedef struct csr_retire_list {
    csr_retired *items;
    size_t count;
    size_t capacity;
} csr_retire_list;

struct csr_bag {
    // Shared with readers.
    volatile AO_t array;      // csr_bag_array *
    volatile AO_t epoch;      // advanced only under `lock`
    volatile AO_t active[2];  // readers that entered in an epoch of each parity
    volatile AO_t closed;
    volatile AO_t live;       // live entries, for csr_bag_count
    volatile AO_t backlog;    // retired entries + ready items not handed back
    volatile AO_t lock;

    // Writer-only state, under `lock`.
    uint64_t next_key;
    size_t tombstones;
    uint32_t *index_slots;  // position in the current array + 1; 0 = empty
    size_t index_capacity;  // power of two, or 0
    size_t index_count;
    csr_retire_list retired[2];  // by parity of the epoch they were retired in
    csr_retire_list ready;       // items safe to hand back (arrays are freed at once)
};

// ---------------------------------------------------------------------------
// Small helpers (writer side, under the lock unless noted)
// ---------------------------------------------------------------------------

static csr_bag_array *csr_array_alloc(size_t capacity) {
    csr_bag_array *array = malloc(sizeof(csr_bag_array) + capacity * sizeof(csr_bag_entry));
    if (array == NULL) return NULL;
    array->capacity = capacity;
    array->count = 0;
    csr_counter_add(&csr_debug_arrays, 1);
    return array;
}

static void csr_array_free(csr_bag_array *array) {
    free(array);
    csr_counter_add(&csr_debug_arrays, -1);
}

/// Frees an array that was on a retire list.
static void csr_retired_array_free(csr_bag_array *array) {
    csr_array_free(array);
    csr_counter_add(&csr_debug_retired_array_counter, -1);
}

static bool csr_list_push(csr_retire_list *list, void *ptr, bool is_array) {
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? list->capacity * 2 : 8;
        csr_retired *items = realloc(list->items, capacity * sizeof(csr_retired));
        if (items == NULL) return false;
        list->items = items;
        list->capacity = capacity;
    }
    list->items[list->count].ptr = ptr;
    list->items[list->count].is_array = is_array;
    list->count += 1;
    return true;
}

/// Publishes how much is retired or ready. Under the lock. Readers look at
/// it when they leave (`csr_bag_read_end`), so everything that grows a
/// retire list must call this before it lets go of the lock, then re-check
/// the readers (`csr_bag_advance` does both).
static void csr_bag_update_backlog(csr_bag *bag) {
    AO_store_release(&bag->backlog, bag->retired[0].count + bag->retired[1].count + bag->ready.count);
}

static size_t csr_hash(uint64_t key, size_t mask) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (size_t)key & mask;
}

/// The key of the entry an occupied index slot points to, in `array`.
static uint64_t csr_index_key(const csr_bag_array *array, uint32_t slot) { return array->entries[slot - 1].key; }

/// Puts `position` of `key` in an empty slot (`key` is not in the index).
static void csr_index_put(csr_bag *bag, uint64_t key, uint32_t position) {
    size_t mask = bag->index_capacity - 1;
    size_t i = csr_hash(key, mask);
    while (bag->index_slots[i] != 0) i = (i + 1) & mask;
    bag->index_slots[i] = position + 1;
    bag->index_count += 1;
}

/// Makes room for `wanted` entries at a load factor of at most one half.
/// Growing rehashes the slots, whose keys are read in `array` (the array
/// they point into), unless `array` is NULL: the caller then clears the
/// index and fills it again.
static bool csr_index_reserve(csr_bag *bag, size_t wanted, const csr_bag_array *CSR_NULLABLE array) {
    if (wanted * 2 <= bag->index_capacity) return true;
    size_t capacity = bag->index_capacity ? bag->index_capacity : 16;
    while (wanted * 2 > capacity) capacity *= 2;
    uint32_t *slots = calloc(capacity, sizeof(uint32_t));
    if (slots == NULL) return false;
    uint32_t *old = bag->index_slots;
    size_t old_capacity = bag->index_capacity;
    bag->index_slots = slots;
    bag->index_capacity = capacity;
    bag->index_count = 0;
    if (array != NULL) {
        for (size_t i = 0; i < old_capacity; i++) {
            if (old[i] != 0) csr_index_put(bag, csr_index_key(array, old[i]), old[i] - 1);
        }
    }
    free(old);
    return true;
}

/// Returns the slot of `key` in the index, or SIZE_MAX. `array` is the
/// current array.
static size_t csr_index_find(const csr_bag *bag, const csr_bag_array *CSR_NULLABLE array, uint64_t key) {
    if (bag->index_capacity == 0 || array == NULL) return SIZE_MAX;
    size_t mask = bag->index_capacity - 1;
    size_t i = csr_hash(key, mask);
    while (bag->index_slots[i] != 0) {
        if (csr_index_key(array, bag->index_slots[i]) == key) return i;
        i = (i + 1) & mask;
    }
    return SIZE_MAX;
}

/// Linear-probing deletion by backward shift (no tombstones in the index).
/// `array` is the current array.
static void csr_index_delete_slot(csr_bag *bag, const csr_bag_array *array, size_t hole) {
    size_t mask = bag->index_capacity - 1;
    size_t i = hole;
    for (;;) {
        i = (i + 1) & mask;
        uint32_t slot = bag->index_slots[i];
        if (slot == 0) break;
        size_t home = csr_hash(csr_index_key(array, slot), mask);
        // Move the slot into the hole unless its home lies cyclically in (hole, i].
        bool stays = (hole < i) ? (home > hole && home <= i) : (home > hole || home <= i);
        if (stays) continue;
        bag->index_slots[hole] = slot;
        hole = i;
    }
    bag->index_slots[hole] = 0;
    bag->index_count -= 1;
}

/// Whether no reader is inside. Call after a full barrier that follows the
/// writes readers must see (the Dekker pairing described at csr_bag_remove).
static bool csr_bag_quiescent(const csr_bag *bag) {
    return csr_load_seq_cst(&bag->active[0]) == 0 && csr_load_seq_cst(&bag->active[1]) == 0;
}

static bool csr_bag_has_retired(const csr_bag *bag) {
    return bag->retired[0].count != 0 || bag->retired[1].count != 0;
}

static void csr_bag_retire(csr_bag *bag, void *ptr, bool is_array) {
    if (is_array) {
        // Nobody inside: nobody can still hold the old array.
        AO_nop_full();
        if (csr_bag_quiescent(bag)) {
            csr_array_free(ptr);
            return;
        }
    }
    csr_retire_list *list = &bag->retired[AO_load(&bag->epoch) & 1];
    while (!csr_list_push(list, ptr, is_array)) {
        // Out of memory for bookkeeping: wait for readers to leave instead of
        // losing track of the pointer. Rare enough to spin on.
        sched_yield();
    }
    csr_counter_add(is_array ? &csr_debug_retired_array_counter : &csr_debug_retired, 1);
}

/// Advances the epoch at most twice, as far as readers allow, moving what
/// became safe to `ready` (items) or freeing it (arrays). Under the lock.
static void csr_bag_advance_once(csr_bag *bag) {
    for (int round = 0; round < 2; round++) {
        if (bag->retired[0].count == 0 && bag->retired[1].count == 0) break;
        AO_t e = AO_load(&bag->epoch);
        // Readers registered in the parity of e - 1 may still see what was
        // retired in e - 1: wait for them. Sequentially consistent: a reader
        // announces itself (full RMW), then re-reads the epoch; we read its
        // counter, then advance the epoch (full RMW).
        if (csr_load_seq_cst(&bag->active[(e - 1) & 1]) != 0) break;
        (void)AO_fetch_and_add1_full(&bag->epoch);
        // Everything retired in epoch e - 1 (same parity as e + 1) is safe.
        csr_retire_list *list = &bag->retired[(e + 1) & 1];
        for (size_t i = 0; i < list->count; i++) {
            if (list->items[i].is_array) {
                csr_retired_array_free(list->items[i].ptr);
            } else {
                while (!csr_list_push(&bag->ready, list->items[i].ptr, false)) sched_yield();
            }
        }
        list->count = 0;
    }
}

/// Advances as far as readers allow and publishes the backlog, without
/// losing a wake-up. Under the lock.
///
/// The hand-off with `csr_bag_read_end` is a Dekker pairing: a leaving reader
/// decrements its counter (full RMW), then loads the backlog; here we store
/// the backlog, issue a full barrier, then load the counters. So either the
/// reader sees the backlog (and, as the last of its parity, reclaims), or we
/// see that it left, and advance again ourselves. Without the re-check, a
/// reader that leaves between our advance (which it blocked) and our
/// publication of the backlog sees nothing to do, and what we retired waits
/// for some later reader, or for the bag's death.
static void csr_bag_advance(csr_bag *bag) {
    for (;;) {
        csr_bag_advance_once(bag);
        csr_debug_point(CSR_DEBUG_POINT_BAG_ADVANCED, bag);
        csr_bag_update_backlog(bag);
        if (!csr_bag_has_retired(bag)) return;
        AO_nop_full();
        if (!csr_bag_quiescent(bag)) return;  // they will see the backlog
    }
}

/// Copies the live entries of the current array into a fresh array of
/// `capacity`, rebuilds the index, publishes the new array and retires the
/// old one. Returns false if memory is exhausted (nothing changes).
static bool csr_bag_rebuild(csr_bag *bag, size_t capacity) {
    csr_bag_array *old = (csr_bag_array *)AO_load(&bag->array);
    size_t live = AO_load(&bag->live);
    if (capacity < live) capacity = live;
    if (capacity >= UINT32_MAX) return false;  // positions + 1 fit an index slot
    csr_bag_array *array = csr_array_alloc(capacity);
    if (array == NULL) return false;
    // Cleared and filled below: no rehash of the old slots.
    if (!csr_index_reserve(bag, live + 1, NULL)) {
        csr_array_free(array);
        return false;
    }
    memset(bag->index_slots, 0, bag->index_capacity * sizeof(uint32_t));
    bag->index_count = 0;
    size_t n = 0;
    if (old != NULL) {
        size_t count = AO_load(&old->count);
        for (size_t i = 0; i < count; i++) {
            AO_t item = AO_load(&old->entries[i].item);
            if (item == 0) continue;
            array->entries[n].key = old->entries[i].key;
            array->entries[n].item = item;
            csr_index_put(bag, old->entries[i].key, (uint32_t)n);
            n += 1;
        }
    }
    array->count = n;
    bag->tombstones = 0;
    // Release: a reader that loads the new pointer sees its filled entries.
    AO_store_release(&bag->array, (AO_t)array);
    if (old != NULL) csr_bag_retire(bag, old, true);
    return true;
}

// ---------------------------------------------------------------------------
// Public API
// ---------------------------------------------------------------------------

csr_bag *csr_bag_create(void) {
    csr_bag *bag = calloc(1, sizeof(csr_bag));
    if (bag == NULL) return NULL;
    bag->next_key = 1;
    csr_counter_add(&csr_debug_bags, 1);
    return bag;
}

void csr_bag_destroy(csr_bag *bag) {
    csr_bag_array *array = (csr_bag_array *)AO_load(&bag->array);
    if (array != NULL) csr_array_free(array);
    for (int p = 0; p < 2; p++) {
        for (size_t i = 0; i < bag->retired[p].count; i++) {
            if (bag->retired[p].items[i].is_array) {
                csr_retired_array_free(bag->retired[p].items[i].ptr);
            } else {
                // An item the owner did not drain: it leaks (C cannot release
                // a Swift object). The retired-items counter shows it.
            }
        }
        free(bag->retired[p].items);
    }
    free(bag->ready.items);
    free(bag->index_slots);
    free(bag);
    csr_counter_add(&csr_debug_bags, -1);
}

uint64_t csr_bag_insert(csr_bag *bag, void *item) {
    csr_spin_lock(&bag->lock);
    if (AO_load(&bag->closed)) {
        csr_spin_unlock(&bag->lock);
        return 0;
    }
    csr_bag_array *array = (csr_bag_array *)AO_load(&bag->array);
    if (array == NULL || AO_load(&array->count) == array->capacity) {
        size_t live = AO_load(&bag->live);
        if (!csr_bag_rebuild(bag, live < 2 ? 4 : (live + 1) * 2)) {
            csr_spin_unlock(&bag->lock);
            return 0;
        }
        array = (csr_bag_array *)AO_load(&bag->array);
    }
    if (!csr_index_reserve(bag, bag->index_count + 1, array)) {
        csr_spin_unlock(&bag->lock);
        return 0;
    }
    uint64_t key = bag->next_key++;
    size_t position = AO_load(&array->count);
    array->entries[position].key = key;
    AO_store(&array->entries[position].item, (AO_t)item);
    // Release: a reader that sees the new count sees the entry.
    AO_store_release(&array->count, position + 1);
    csr_index_put(bag, key, (uint32_t)position);
    AO_store_release(&bag->live, AO_load(&bag->live) + 1);
    // A rebuild above may have retired the old array (a reader is walking
    // it): publish it, so that the last reader to leave frees it. Items that
    // this makes ready are handed back by that reader's reclaim.
    if (csr_bag_has_retired(bag)) csr_bag_advance(bag);
    csr_spin_unlock(&bag->lock);
    return key;
}

/// Clears the entry at index slot `slot` and returns its item. Under the lock.
static void *csr_bag_clear_at(csr_bag *bag, size_t slot) {
    csr_bag_array *array = (csr_bag_array *)AO_load(&bag->array);
    uint32_t position = bag->index_slots[slot] - 1;
    void *item = (void *)AO_load(&array->entries[position].item);
    AO_store(&array->entries[position].item, 0);
    csr_index_delete_slot(bag, array, slot);
    AO_store_release(&bag->live, AO_load(&bag->live) - 1);
    bag->tombstones += 1;
    return item;
}

void *csr_bag_remove(csr_bag *bag, uint64_t key, bool *found, bool *reclaim) {
    *reclaim = false;
    csr_spin_lock(&bag->lock);
    size_t slot = csr_index_find(bag, (const csr_bag_array *)AO_load(&bag->array), key);
    if (slot == SIZE_MAX) {
        csr_spin_unlock(&bag->lock);
        *found = false;
        return NULL;
    }
    *found = true;
    void *item = csr_bag_clear_at(bag, slot);
    size_t live = AO_load(&bag->live);
    if (bag->tombstones >= 16 && bag->tombstones > live) (void)csr_bag_rebuild(bag, live < 2 ? 4 : live * 2);
    // Full barrier: the cleared entry is visible to every reader that
    // registers after this point, before reader counters are inspected.
    AO_nop_full();
    if (csr_bag_quiescent(bag)) {
        // No reader inside, and any later reader sees the cleared entry.
        // Advance what earlier removes (or the rebuild above) retired.
        if (csr_bag_has_retired(bag)) csr_bag_advance(bag);
        *reclaim = bag->ready.count != 0;
        csr_spin_unlock(&bag->lock);
        return item;
    }
    csr_bag_retire(bag, item, false);
    csr_debug_point(CSR_DEBUG_POINT_BAG_RETIRED, bag);
    csr_bag_advance(bag);
    // The readers may all have left meanwhile (see csr_bag_advance): then
    // the item is ready now, and handing it back is our job.
    *reclaim = bag->ready.count != 0;
    csr_spin_unlock(&bag->lock);
    return NULL;
}

size_t csr_bag_remove_all(csr_bag *bag) {
    csr_spin_lock(&bag->lock);
    size_t removed = 0;
    for (size_t slot = 0; bag->index_count != 0 && slot < bag->index_capacity;) {
        if (bag->index_slots[slot] == 0) {
            slot += 1;
            continue;
        }
        // Backward-shift deletion may move another key into `slot`: look again.
        csr_bag_retire(bag, csr_bag_clear_at(bag, slot), false);
        removed += 1;
    }
    if (removed != 0) (void)csr_bag_rebuild(bag, 4);
    AO_nop_full();
    csr_bag_advance(bag);
    csr_spin_unlock(&bag->lock);
    return removed;
}

bool csr_bag_close(csr_bag *bag) {
    csr_spin_lock(&bag->lock);
    bool was_open = AO_load(&bag->closed) == 0;
    AO_store_release(&bag->closed, 1);
    csr_spin_unlock(&bag->lock);
    return was_open;
}

bool csr_bag_is_closed(const csr_bag *bag) { return AO_load_acquire(&bag->closed) != 0; }

size_t csr_bag_count(const csr_bag *bag) { return AO_load_acquire(&bag->live); }

size_t csr_bag_pending(const csr_bag *bag) { return AO_load_acquire(&bag->backlog); }

csr_bag_read csr_bag_read_begin(csr_bag *bag) {
    AO_t e;
    for (;;) {
        e = AO_load_acquire(&bag->epoch);
        (void)AO_fetch_and_add1_full(&bag->active[e & 1]);
        // Re-check after announcing: a reader counted under a stale parity
        // would not hold back the advance that frees what it reads.
        // Sequentially consistent (store-load order after our RMW, paired
        // with the writers' full barriers before they read `active`); the
        // acquire loads below are ordered after this one.
        if (csr_load_seq_cst(&bag->epoch) == e) break;
        (void)AO_fetch_and_sub1_full(&bag->active[e & 1]);
    }
    csr_bag_read read;
    csr_bag_array *array = (csr_bag_array *)AO_load_acquire(&bag->array);
    read.array = array;
    read.count = array ? AO_load_acquire(&array->count) : 0;
    read.ticket = (uintptr_t)e;
    return read;
}

size_t csr_bag_read_next(const csr_bag_read *read, size_t *position, void **out, size_t capacity) {
    const csr_bag_array *array = read->array;
    size_t n = 0;
    size_t i = *position;
    while (i < read->count && n < capacity) {
        AO_t item = AO_load_acquire(&array->entries[i].item);
        i += 1;
        if (item != 0) out[n++] = (void *)item;
    }
    *position = i;
    return n;
}

bool csr_bag_read_end(csr_bag *bag, const csr_bag_read *read) {
    AO_t before = AO_fetch_and_sub1_full(&bag->active[read->ticket & 1]);
    // Sequentially consistent: the Dekker pairing with a writer's "publish
    // the backlog, full barrier, look at the readers" (csr_bag_advance).
    return before == 1 && csr_load_seq_cst(&bag->backlog) != 0;
}

size_t csr_bag_reclaim(csr_bag *bag, void **out, size_t capacity) {
    if (AO_load_acquire(&bag->backlog) == 0) return 0;
    csr_spin_lock(&bag->lock);
    csr_bag_advance(bag);
    size_t n = 0;
    while (n < capacity && bag->ready.count != 0) {
        bag->ready.count -= 1;
        out[n++] = bag->ready.items[bag->ready.count].ptr;
    }
    csr_bag_update_backlog(bag);
    csr_spin_unlock(&bag->lock);
    if (n != 0) csr_counter_add(&csr_debug_retired, -(long)n);
    return n;
}
