// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

//===----------------------------------------------------------------------===//
// csr_flag: the spinlock-protected terminated flag of one subscription.
//
// A flag carries three things:
//
// * the terminal transition: one test-and-set of the TERMINATED bit
//   (`csr_flag_terminate`). Exactly one caller ever wins it;
// * a small spinlock (`csr_flag_lock`) for the few fields that move at
//   termination (SignalKit keeps its keep-alive list behind it). It spins a
//   bounded number of times, then yields the CPU: on a 2-core machine the
//   holder is often preempted, and spinning on would only burn its time slice;
// * a reader guard over one "guarded resource" (in SignalKit: the user's
//   callbacks, three closures stored in the subscription object's own tail
//   storage next to this flag, destroyed in place by the claim winner). A
//   delivery enters the guard before it touches the resource and leaves it
//   afterwards; the resource may be released only by the one caller that
//   `csr_flag_exit`/`csr_flag_claim_release` answers `true` to, and never
//   while a reader is inside. (So the resource need not be an object of its
//   own: nothing else references it, and the claim says who destroys it.) Entering costs one full
//   compare-and-swap on a line the delivering thread usually owns; leaving is
//   a release store. That is what keeps the per-event path free of locks and
//   reference counting while termination on another thread stays safe.
//
// Lifetime of a release claim: after TERMINATED is set, the release is
// claimed by whichever comes last of the terminator and the readers that
// were inside, never twice and never while a reader is inside. A fast-path
// reader leaves with a plain release store followed by a load, which the
// hardware may reorder, so at the very moment another thread terminates both
// could miss each other. The terminator closes that window when it finds a
// fast reader of another thread inside: it runs a process-wide barrier
// (Linux `membarrier`, a system call, only on this contended path) and looks
// again, so the callbacks of a disposed subscription are released by the
// dispose or by the delivery that was inside, without waiting for another
// event. Where `membarrier` is unavailable (not Linux, a seccomp filter),
// decided once per process when the first flag is initialised, fast readers
// pay a full fence when they leave instead. The owner's final
// `csr_flag_claim_release_unguarded` (when no reader can exist any more:
// SignalKit's deinitialisation) remains the backstop for resources whose
// release nobody claimed, e.g. a subscription that never terminated.
//
// Store-load order. The guard is a Dekker pairing: a reader announces itself
// (a full RMW on `busy` or `readers`), then loads the state; a terminator
// sets TERMINATED (a full RMW on the state), then loads the reader words.
// Both loads are sequentially consistent, not acquire: C11 promises that at
// least one side sees the other only when all four operations are seq_cst.
// On x86-64 that costs nothing (the loads are plain `mov`s after `lock`ed
// RMWs); on AArch64 it turns `ldapr` (RCpc, which may be satisfied before
// the RMW's store is visible to other cores, so both sides could miss each
// other) into `ldar`. `scripts/soundness` cross-compiles this module for
// `aarch64-linux-gnu -mcpu=neoverse-n1` and checks that `ldar` is emitted.
//===----------------------------------------------------------------------===//
#ifndef CSR_FLAG_H
#define CSR_FLAG_H

#include "csr_config.h"

#include <pthread.h>

CSR_ASSUME_NONNULL_BEGIN

typedef struct csr_flag csr_flag;

/// State bits returned by `csr_flag_load` and `csr_flag_set_bits`.
/// The terminal transition happened.
#define CSR_FLAG_TERMINATED 0x1u
/// The guarded resource's release was claimed (it is gone or going).
#define CSR_FLAG_RELEASED 0x2u
/// Free for the owner's own markers (SignalKit: handle disposed, keep-alive
/// list not empty, counted, source entry held, subscriber gone, callbacks
/// released at termination).
#define CSR_FLAG_USER0 0x100u
#define CSR_FLAG_USER1 0x200u
#define CSR_FLAG_USER2 0x400u
#define CSR_FLAG_USER3 0x800u
#define CSR_FLAG_USER4 0x1000u
#define CSR_FLAG_USER5 0x2000u

/// Results of `csr_flag_enter`.
/// Terminated: do not touch the resource; nothing is owed.
#define CSR_ENTER_TERMINATED 0
/// Entered on the fast path; pass the ticket to `csr_flag_exit`.
#define CSR_ENTER_FAST 1
/// Entered on the slow path (another reader was inside: a reentrant or a
/// concurrent delivery); pass the ticket to `csr_flag_exit`.
#define CSR_ENTER_SLOW 2
/// Terminated while entering, and this caller now owns the release: do not
/// touch the resource's callbacks, release the resource.
#define CSR_ENTER_TERMINATED_RELEASE 3

/// Bytes of storage a flag needs: a compile-time constant so that Swift can
/// lay out tail storage without a call (checked against the real struct by a
/// static assertion in csr_flag.c). Align the storage to 8.
#define CSR_FLAG_SIZE 32

/// Bytes of storage a flag needs (== CSR_FLAG_SIZE).
/// Ordering: none. Ownership: none. Thread safety: any thread.
size_t csr_flag_size(void);

/// Initialises a flag in caller-provided storage: not terminated, unlocked,
/// no readers.
/// Ordering: plain stores; publish the storage to other threads with the
/// usual happens-before (SignalKit does so by publishing the owning object).
/// Ownership: the caller owns the storage; a flag owns no memory and needs no
/// teardown. Thread safety: only before the flag is shared.
void csr_flag_init(csr_flag *flag);

/// Initialises a flag as `csr_flag_init` does, with the CSR_FLAG_USER*
/// `bits` already set (only those bits: a marker fixed for the flag's life
/// then costs no read-modify-write).
/// Ordering, ownership and thread safety: as `csr_flag_init`.
void csr_flag_init_with_bits(csr_flag *flag, uintptr_t bits);

/// All state bits.
/// Ordering: sequentially consistent (a plain load on x86-64, `ldar` on
/// AArch64), so that it may follow a full read-modify-write on another word
/// in a Dekker pairing (SignalKit: the source-entry bit against the slot).
/// Ownership: none. Thread safety: any thread.
uintptr_t csr_flag_load(const csr_flag *flag);

/// Whether the terminal transition happened.
/// Ordering: acquire (pairs with the full barrier of `csr_flag_terminate`).
/// Ownership: none. Thread safety: any thread.
/// Layout: the state is the flag's first word (asserted in csr_flag.c).
/// SignalKit reads TERMINATED there itself, with an acquire load written in
/// Swift, so that the per-value checks of fused operator stages inline
/// instead of calling this function.
bool csr_flag_is_terminated(const csr_flag *flag);

/// The terminal transition: test-and-set of TERMINATED. Returns `true` to the
/// one caller that performed it.
/// Ordering: full when it performs the transition; a caller that finds the
/// flag already terminated only does an acquire load.
/// Ownership: none. Thread safety: any thread, concurrently.
CSR_WARN_UNUSED bool csr_flag_terminate(csr_flag *flag);

/// The terminal transition together with CSR_FLAG_USER* `bits`, in one
/// read-modify-write: returns the previous state, so the caller performed the
/// transition iff TERMINATED is clear in the result. Any later load or RMW of
/// the state that sees TERMINATED from this call also sees `bits` (SignalKit
/// uses that to hand work to a thread that is about to terminate).
/// Ordering: full when it writes; an acquire load when all were set.
/// Ownership: none. Thread safety: any thread, concurrently.
uintptr_t csr_flag_terminate_setting(csr_flag *flag, uintptr_t bits);

/// Atomically ORs `bits` into the state and returns the previous bits.
/// Use it for CSR_FLAG_USER* markers; setting TERMINATED or RELEASED this way
/// bypasses the guard's bookkeeping.
/// Ordering: full when it writes; an acquire load when the bits were set.
/// Ownership: none. Thread safety: any thread, concurrently.
uintptr_t csr_flag_set_bits(csr_flag *flag, uintptr_t bits);

/// Atomically clears `bits` and returns the previous bits.
/// Ordering: full when it writes; an acquire load when none was set.
/// Ownership: none. Thread safety: any thread, concurrently.
uintptr_t csr_flag_clear_bits(csr_flag *flag, uintptr_t bits);

/// Acquires the flag's spinlock: a bounded spin (with a CPU pause), then
/// `sched_yield()` between attempts. Not recursive.
/// Ordering: acquire. Ownership: none. Thread safety: any thread; the holder
/// must not call code that may take the same lock (no user code under it).
void csr_flag_lock(csr_flag *flag);

/// Releases the spinlock.
/// Ordering: release. Ownership: none. Thread safety: the holder only.
void csr_flag_unlock(csr_flag *flag);

/// Enters the reader guard. Returns one of the CSR_ENTER_* values.
/// Ordering: full (one compare-and-swap, or one fetch-and-add on the slow
/// path), then a sequentially consistent load of the state (see "Store-load
/// order" above).
/// Ownership: while entered, the guarded resource stays alive.
/// Thread safety: any thread, concurrently, reentrantly.
/// Inline (the fast path; see "Inline fast paths" below).
static inline CSR_WARN_UNUSED int csr_flag_enter(csr_flag *flag);

/// Leaves the reader guard with the ticket `csr_flag_enter` returned (FAST or
/// SLOW). Returns `true` when the caller must now release the guarded
/// resource (the flag terminated while it was inside and it was the last
/// reader).
/// Ordering: release (fast path) or full (slow path), then a sequentially
/// consistent load of the state.
/// Ownership: a `true` result transfers the release to the caller, once.
/// Thread safety: the thread that entered.
/// Inline (the fast path; see "Inline fast paths" below).
static inline CSR_WARN_UNUSED bool csr_flag_exit(csr_flag *flag, int ticket);

/// After the terminal transition, by a caller that is not inside the guard:
/// returns `true` if no reader is inside and the release was not yet claimed
/// (the caller must release the resource), `false` if a reader will do it or
/// it was done.
/// Ordering: sequentially consistent loads of the reader words, then full
/// when it claims. Ownership: a `true` result transfers the release, once.
/// Thread safety: any thread, concurrently.
CSR_WARN_UNUSED bool csr_flag_claim_release(csr_flag *flag);

/// Claims the release regardless of readers. Only for the owner's teardown,
/// when no reader can exist any more. Returns `true` if the caller must
/// release the resource.
/// Ordering: full when it claims; an acquire load when already claimed.
/// Ownership: as `csr_flag_claim_release`.
/// Thread safety: any thread.
CSR_WARN_UNUSED bool csr_flag_claim_release_unguarded(csr_flag *flag);

//===----------------------------------------------------------------------===//
// Inline fast paths.
//
// `csr_flag_enter` and `csr_flag_exit` run around every delivery, so their
// common paths are compiled into the caller (Swift inlines them too): a call
// into this module costs more than the guard's few instructions and makes the
// caller spill its registers (on W2, a map/filter/map chain with two
// guarded deliveries per value, `scripts/callgrind W2 SignalKit` counts the
// difference).
//
// The flag stays opaque (callers own CSR_FLAG_SIZE bytes and never look
// inside): the inline code alone reads the three words below, whose offsets
// csr_flag.c asserts against the real struct. It uses the compiler's
// __atomic builtins, the same operations libatomic_ops compiles to here (its
// GCC-atomics mode, which csr_atomic.h requires), so ThreadSanitizer sees
// them; everything else stays out of line in csr_flag.c. Not API: the names
// ending in an underscore.
//===----------------------------------------------------------------------===//

/// The calling thread as a nonzero word, unique among live threads: what a
/// fast-path reader records in `busy`. The thread pointer (`%fs:0` on x86-64,
/// `tpidr_el0` on AArch64; one instruction), or `pthread_self()` where the
/// compiler lacks the builtin. Ordering: none. Thread safety: any thread.
static inline size_t csr_thread_self_(void) {
#if defined(__has_builtin)
#if __has_builtin(__builtin_thread_pointer) && (defined(__x86_64__) || defined(__aarch64__))
    return (size_t)__builtin_thread_pointer();
#endif
#endif
    return (size_t)pthread_self();
}

/// The flag's first three words (asserted in csr_flag.c).
struct csr_flag_words_ {
    /// CSR_FLAG_* bits.
    volatile size_t state;
    /// Slow-path readers inside the guard.
    volatile size_t readers;
    /// The fast-path reader inside the guard (`csr_thread_self_()`), or 0.
    volatile size_t busy;
};

/// 1 when terminators have the process-wide barrier (then a fast reader
/// leaves without a fence; see `csr_flag_try_claim` in csr_flag.c), 2 when
/// not; set before the first flag exists, never changed afterwards.
extern volatile size_t csr_heavy_barrier_state;

/// The slow rest of `csr_flag_enter`: another reader is inside (a reentrant
/// or concurrent delivery), so announce this one in `readers`.
CSR_WARN_UNUSED int csr_flag_enter_slow_(csr_flag *flag);

/// The rest of `csr_flag_exit` for a SLOW ticket, and for a FAST one where
/// there is no heavy barrier.
CSR_WARN_UNUSED bool csr_flag_exit_slow_(csr_flag *flag, int ticket);

static inline CSR_WARN_UNUSED int csr_flag_enter(csr_flag *flag) {
    struct csr_flag_words_ *words = (struct csr_flag_words_ *)(void *)flag;
    // Cheap early exit for the common terminated case.
    if (__atomic_load_n(&words->state, __ATOMIC_ACQUIRE) & CSR_FLAG_TERMINATED) return CSR_ENTER_TERMINATED;
    size_t expected = 0;
    if (!__atomic_compare_exchange_n(&words->busy, &expected, csr_thread_self_(), false, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST)) {
        return csr_flag_enter_slow_(flag);
    }
    // Dekker with csr_flag_terminate: our announcement (a full RMW) precedes
    // this load, and the terminator's full RMW precedes its loads of busy and
    // readers, so at least one of us sees the other (sequentially consistent
    // on both sides: see "Store-load order").
    if ((__atomic_load_n(&words->state, __ATOMIC_SEQ_CST) & CSR_FLAG_TERMINATED) == 0) return CSR_ENTER_FAST;
    // Terminated meanwhile: back out. The terminator may have seen us inside
    // and left the release to us.
    return csr_flag_exit_slow_(flag, CSR_ENTER_FAST) ? CSR_ENTER_TERMINATED_RELEASE : CSR_ENTER_TERMINATED;
}

static inline CSR_WARN_UNUSED bool csr_flag_exit(csr_flag *flag, int ticket) {
    if (ticket != CSR_ENTER_FAST || __atomic_load_n(&csr_heavy_barrier_state, __ATOMIC_RELAXED) != 1) {
        return csr_flag_exit_slow_(flag, ticket);
    }
    struct csr_flag_words_ *words = (struct csr_flag_words_ *)(void *)flag;
    __atomic_store_n(&words->busy, 0, __ATOMIC_RELEASE);
    // Sequentially consistent, as in csr_flag_exit_slow_; a terminator that
    // this load misses (store buffering) runs the heavy barrier and sees us.
    if ((__atomic_load_n(&words->state, __ATOMIC_SEQ_CST) & CSR_FLAG_TERMINATED) == 0) return false;
    return csr_flag_claim_release(flag);
}

CSR_ASSUME_NONNULL_END

#endif
