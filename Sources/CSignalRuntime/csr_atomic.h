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
