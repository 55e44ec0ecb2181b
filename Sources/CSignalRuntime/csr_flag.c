// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#include "csr_flag.h"
#include "csr_atomic.h"
#include "csr_barrier.h"

#include <pthread.h>

struct csr_flag {
    /// CSR_FLAG_* bits.
    volatile AO_t state;
    /// Slow-path readers inside the guard.
    volatile AO_t readers;
    /// The thread (`pthread_self()`, never 0) of the fast-path reader inside
    /// the guard, 0 when none is.
    volatile AO_t busy;
    /// The spinlock: 0 free, 1 held.
    volatile AO_t lock;
};

_Static_assert(sizeof(struct csr_flag) == CSR_FLAG_SIZE, "CSR_FLAG_SIZE is stale");
// The inline fast paths of csr_flag.h read these words through csr_flag_words_.
_Static_assert(offsetof(struct csr_flag, state) == offsetof(struct csr_flag_words_, state) &&
                   offsetof(struct csr_flag, readers) == offsetof(struct csr_flag_words_, readers) &&
                   offsetof(struct csr_flag, busy) == offsetof(struct csr_flag_words_, busy) &&
                   sizeof(AO_t) == sizeof(size_t),
               "csr_flag_words_ (csr_flag.h) does not match struct csr_flag");
// SignalKit reads TERMINATED from the first word (see csr_flag_is_terminated).
_Static_assert(offsetof(struct csr_flag, state) == 0 && sizeof(AO_t) == sizeof(uintptr_t),
               "the state must be the flag's first word");

size_t csr_flag_size(void) { return sizeof(struct csr_flag); }

void csr_flag_init(csr_flag *flag) { csr_flag_init_with_bits(flag, 0); }

void csr_flag_init_with_bits(csr_flag *flag, uintptr_t bits) {
    if (AO_load(&csr_heavy_barrier_state) == 0) csr_heavy_barrier_prepare();
    flag->state = (AO_t)bits;
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

/// The claim itself: no reader inside and RELEASED not yet set.
///
/// Slow-path readers leave with a full RMW and then a sequentially
/// consistent load of the state; so does every caller here (a terminate, a
/// slow exit) before these sequentially consistent loads: that Dekker pairing
/// is sound, one side sees the other. A fast-path reader leaves with a
/// release store and then a load, which the hardware may reorder (x86 store
/// buffering): it can miss TERMINATED while we still see it inside. Rather
/// than pay a fence on every delivery, the rare terminator that finds a fast
/// reader inside pays for it: unless that reader is its own thread (whose
/// exit comes later in program order and sees TERMINATED), it runs a
/// process-wide barrier (`csr_heavy_barrier`) and looks again. After the
/// barrier the reader either has left, its store visible (we claim; if its
/// load saw TERMINATED too, the RELEASED bit decides between us), or has not
/// stored yet, and then its later load sees TERMINATED (it claims). Where the
/// barrier is unavailable, fast readers fence when they leave instead, and
/// the plain Dekker argument holds.
static bool csr_flag_try_claim(csr_flag *flag) {
    if (csr_load_seq_cst(&flag->readers) != 0) return false;
    AO_t busy = csr_load_seq_cst(&flag->busy);
    if (busy != 0) {
        if (busy == csr_thread_self_() || !csr_heavy_barrier()) return false;
        if (csr_load_seq_cst(&flag->readers) != 0 || csr_load_seq_cst(&flag->busy) != 0) return false;
    }
    return (csr_fetch_or_full(&flag->state, CSR_FLAG_RELEASED) & CSR_FLAG_RELEASED) == 0;
}

int csr_flag_enter_slow_(csr_flag *flag) {
    (void)AO_fetch_and_add1_full(&flag->readers);
    // Dekker with csr_flag_terminate, as on the fast path (csr_flag.h).
    if ((csr_load_seq_cst(&flag->state) & CSR_FLAG_TERMINATED) == 0) return CSR_ENTER_SLOW;
    return csr_flag_exit_slow_(flag, CSR_ENTER_SLOW) ? CSR_ENTER_TERMINATED_RELEASE : CSR_ENTER_TERMINATED;
}

bool csr_flag_exit_slow_(csr_flag *flag, int ticket) {
    if (ticket == CSR_ENTER_FAST) {
        AO_store_release(&flag->busy, 0);
        // Without the terminator's heavy barrier, close the store-load window
        // here (see csr_flag_try_claim). A predictable branch otherwise.
        if (!csr_heavy_barrier_is_available()) AO_nop_full();
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
