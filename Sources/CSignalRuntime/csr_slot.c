// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#include "csr_slot.h"
#include "csr_atomic.h"

/// The closed sentinel. Object pointers are at least 8-byte aligned, so 1 is
/// never a valid item.
#define CSR_SLOT_CLOSED ((AO_t)1)

struct csr_slot {
    volatile AO_t value;
};

_Static_assert(sizeof(struct csr_slot) == CSR_SLOT_SIZE, "CSR_SLOT_SIZE is stale");

size_t csr_slot_size(void) { return sizeof(struct csr_slot); }

void csr_slot_init(csr_slot *slot) { slot->value = 0; }

void *csr_slot_peek(const csr_slot *slot) {
    AO_t v = AO_load_acquire(&slot->value);
    return v == CSR_SLOT_CLOSED ? NULL : (void *)v;
}

bool csr_slot_is_closed(const csr_slot *slot) { return csr_load_seq_cst(&slot->value) == CSR_SLOT_CLOSED; }

void *csr_slot_exchange(csr_slot *slot, void *desired, bool *refused) {
    AO_t old = AO_load(&slot->value);
    for (;;) {
        if (old == CSR_SLOT_CLOSED) {
            *refused = true;
            return NULL;
        }
        AO_t seen = AO_fetch_compare_and_swap_full(&slot->value, old, (AO_t)desired);
        if (seen == old) break;
        old = seen;
    }
    *refused = false;
    return (void *)old;
}

bool csr_slot_compare_exchange(csr_slot *slot, void *expected, void *desired) {
    if ((AO_t)expected == CSR_SLOT_CLOSED) return false;
    return AO_compare_and_swap_full(&slot->value, (AO_t)expected, (AO_t)desired);
}

void *csr_slot_close(csr_slot *slot, bool *was_closed) {
    AO_t old = AO_load(&slot->value);
    for (;;) {
        if (old == CSR_SLOT_CLOSED) {
            *was_closed = true;
            return NULL;
        }
        AO_t seen = AO_fetch_compare_and_swap_full(&slot->value, old, CSR_SLOT_CLOSED);
        if (seen == old) break;
        old = seen;
    }
    *was_closed = false;
    return (void *)old;
}
