// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#include "csr_flag.h"
#include "csr_atomic.h"

struct csr_flag {
    /// CSR_FLAG_* bits.
    volatile AO_t state;
    /// Slow-path readers inside the guard.
    volatile AO_t readers;
    /// 1 while a fast-path reader is inside the guard.
    volatile AO_t busy;
    /// The spinlock: 0 free, 1 held.
    volatile AO_t lock;
};

_Static_assert(sizeof(struct csr_flag) == CSR_FLAG_SIZE, "CSR_FLAG_SIZE is stale");

size_t csr_flag_size(void) { return sizeof(struct csr_flag); }

void csr_flag_init(csr_flag *flag) {
    flag->state = 0;
    flag->readers = 0;
    flag->busy = 0;
    flag->lock = 0;
}

uintptr_t csr_flag_load(const csr_flag *flag) { return (uintptr_t)csr_load_seq_cst(&flag->state); }

bool csr_flag_is_terminated(const csr_flag *flag) {
    return (AO_load_acquire(&flag->state) & CSR_FLAG_TERMINATED) != 0;
}

bool csr_flag_terminate(csr_flag *flag) {
    return (csr_fetch_or_full(&flag->state, CSR_FLAG_TERMINATED) & CSR_FLAG_TERMINATED) == 0;
}

uintptr_t csr_flag_terminate_setting(csr_flag *flag, uintptr_t bits) {
    return (uintptr_t)csr_fetch_or_full(&flag->state, (AO_t)(bits | CSR_FLAG_TERMINATED));
}

uintptr_t csr_flag_set_bits(csr_flag *flag, uintptr_t bits) {
    return (uintptr_t)csr_fetch_or_full(&flag->state, (AO_t)bits);
}

uintptr_t csr_flag_clear_bits(csr_flag *flag, uintptr_t bits) {
    return (uintptr_t)csr_fetch_andnot_full(&flag->state, (AO_t)bits);
}

void csr_flag_lock(csr_flag *flag) { csr_spin_lock(&flag->lock); }

void csr_flag_unlock(csr_flag *flag) { csr_spin_unlock(&flag->lock); }

/// The claim itself: no reader inside and RELEASED not yet set. The loads of
/// `readers` and `busy` follow a full read-modify-write in every caller but
/// the fast exit (a terminate, a slow exit) and are sequentially consistent,
/// so that they cannot be satisfied before that RMW's store is visible (see
/// `csr_load_seq_cst`). After a fast exit (a release store) they may be: see
/// the header's note on the missed-claim race, which can only delay a
/// release, never advance it.
static bool csr_flag_try_claim(csr_flag *flag) {
    if (csr_load_seq_cst(&flag->readers) != 0 || csr_load_seq_cst(&flag->busy) != 0) return false;
    return (csr_fetch_or_full(&flag->state, CSR_FLAG_RELEASED) & CSR_FLAG_RELEASED) == 0;
}

int csr_flag_enter(csr_flag *flag) {
    // Cheap early exit for the common terminated case.
    if (AO_load_acquire(&flag->state) & CSR_FLAG_TERMINATED) return CSR_ENTER_TERMINATED;
    int ticket;
    if (AO_compare_and_swap_full(&flag->busy, 0, 1)) {
        ticket = CSR_ENTER_FAST;
    } else {
        (void)AO_fetch_and_add1_full(&flag->readers);
        ticket = CSR_ENTER_SLOW;
    }
    // Dekker with csr_flag_terminate: our announcement (a full RMW) precedes
    // this load, and the terminator's full RMW precedes its loads of busy and
    // readers, so at least one of us sees the other. Both loads must be
    // sequentially consistent for that (an acquire load may be satisfied
    // before the RMW's store is visible: `ldapr` on AArch64).
    if ((csr_load_seq_cst(&flag->state) & CSR_FLAG_TERMINATED) == 0) return ticket;
    // Terminated meanwhile: back out. The terminator may have seen us inside
    // and left the release to us.
    return csr_flag_exit(flag, ticket) ? CSR_ENTER_TERMINATED_RELEASE : CSR_ENTER_TERMINATED;
}

bool csr_flag_exit(csr_flag *flag, int ticket) {
    if (ticket == CSR_ENTER_FAST) {
        AO_store_release(&flag->busy, 0);
    } else {
        (void)AO_fetch_and_sub1_full(&flag->readers);
    }
    // Sequentially consistent: pairs with the terminator's RMW on the slow
    // path (after the fast path's release store it cannot, see the header).
    if ((csr_load_seq_cst(&flag->state) & CSR_FLAG_TERMINATED) == 0) return false;
    return csr_flag_try_claim(flag);
}

bool csr_flag_claim_release(csr_flag *flag) {
    if ((AO_load_acquire(&flag->state) & CSR_FLAG_TERMINATED) == 0) return false;
    return csr_flag_try_claim(flag);
}

bool csr_flag_claim_release_unguarded(csr_flag *flag) {
    return (csr_fetch_or_full(&flag->state, CSR_FLAG_RELEASED) & CSR_FLAG_RELEASED) == 0;
}
