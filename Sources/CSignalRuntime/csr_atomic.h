// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

//===----------------------------------------------------------------------===//
// csr_atomic.h (private): the only file that includes <atomic_ops.h>.
//
// libatomic_ops routes every operation to the compiler's __atomic builtins on
// GCC >= 4.8 and Clang >= 3.4 unless its "disable GCC atomics" macro is
// defined; it then falls back to inline assembly that ThreadSanitizer cannot
// see (20 false reports in the feasibility run). The guard below fails the
// build in that case. Never define that macro; never use the library's GPL
// parts (its lock-free stack and malloc).
//===----------------------------------------------------------------------===//
#ifndef CSR_ATOMIC_H
#define CSR_ATOMIC_H

#include <atomic_ops.h>
#include <sched.h>

#if defined(CSR_REQUIRE_GCC_ATOMICS) && !defined(AO_GCC_ATOMIC_TEST_AND_SET)
#error "libatomic_ops is not using the __atomic builtins: ThreadSanitizer would not see these atomics"
#endif

#if !defined(AO_HAVE_compare_and_swap_full) || !defined(AO_HAVE_fetch_and_add1_full) || \
    !defined(AO_HAVE_load_acquire) || !defined(AO_HAVE_store_release)
#error "libatomic_ops lacks an operation CSignalRuntime needs"
#endif

/// A sequentially consistent load: the first load after a full read-modify-
/// write that announces something (a reader entering, a reader leaving, a
/// terminal transition), where the algorithm needs store-to-load order: "I
/// announced, then I look; you announced, then you look; one of us sees the
/// other" (Dekker). C11 only gives that when the load is `seq_cst` too: an
/// acquire load after a full RMW may be satisfied before the RMW's store is
/// visible to other cores. On AArch64 with RCpc (e.g. `-mcpu=neoverse-n1`)
/// the acquire load compiles to `ldapr`, which is allowed to do exactly that;
/// the seq_cst load compiles to `ldar`, which is not. On x86-64 both are a
/// plain `mov` (the RMW's `lock` prefix already drains the store buffer).
///
/// libatomic_ops has no such load: its `AO_load_full` is a full fence plus a
/// load (an `mfence` on x86-64, paid on every delivery), so this one uses the
/// compiler builtin that libatomic_ops itself uses on this path (see the
/// guard above), which ThreadSanitizer understands.
static inline AO_t csr_load_seq_cst(const volatile AO_t *addr) { return __atomic_load_n(addr, __ATOMIC_SEQ_CST); }

/// Spins this many times (with a CPU pause) before yielding the CPU.
#define CSR_SPIN_LIMIT 64

static inline void csr_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/// Bounded spin, then yield: call once per failed attempt with a counter the
/// caller keeps.
static inline void csr_backoff(unsigned *spins) {
    if (*spins < CSR_SPIN_LIMIT) {
        *spins += 1;
        csr_cpu_relax();
    } else {
        sched_yield();
    }
}

/// Atomic fetch-or (libatomic_ops has AO_or but it returns nothing).
/// When every bit is already set, no write happens: the result comes from an
/// acquire load (nothing changed, so there is nothing to order after).
/// Ordering: full when it writes, acquire otherwise.
static inline AO_t csr_fetch_or_full(volatile AO_t *addr, AO_t bits) {
    AO_t old = AO_load_acquire(addr);
    while ((old & bits) != bits) {
        if (AO_compare_and_swap_full(addr, old, old | bits)) return old;
        old = AO_load_acquire(addr);
    }
    return old;
}

/// Atomic fetch-and-not; no write when none of the bits is set.
/// Ordering: full when it writes, acquire otherwise.
static inline AO_t csr_fetch_andnot_full(volatile AO_t *addr, AO_t bits) {
    AO_t old = AO_load_acquire(addr);
    while ((old & bits) != 0) {
        if (AO_compare_and_swap_full(addr, old, old & ~bits)) return old;
        old = AO_load_acquire(addr);
    }
    return old;
}

/// A plain test-and-test-and-set spinlock on an AO_t (0 = free).
static inline void csr_spin_lock(volatile AO_t *lock) {
    unsigned spins = 0;
    for (;;) {
        if (AO_compare_and_swap_acquire(lock, 0, 1)) return;
        while (AO_load(lock) != 0) csr_backoff(&spins);
    }
}

static inline bool csr_spin_try_lock(volatile AO_t *lock) {
    return AO_load(lock) == 0 && AO_compare_and_swap_acquire(lock, 0, 1);
}

static inline void csr_spin_unlock(volatile AO_t *lock) { AO_store_release(lock, 0); }

/// Relaxed counters for csr_debug.
static inline void csr_counter_add(volatile AO_t *counter, long delta) {
    (void)AO_fetch_and_add(counter, (AO_t)delta);
}

#endif
