// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The protocol (ring, spill list, park and wake) is described in
// include/csr_ring.h and modelled in Tests/Models/csr_ring.pml: change the
// three together.

#define _GNU_SOURCE
#include "csr_ring.h"

#include "csr_atomic.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if !defined(AO_HAVE_int_compare_and_swap_full) || !defined(AO_HAVE_int_store) || !defined(AO_HAVE_fetch_and_sub1_full)
#error "libatomic_ops lacks an operation csr_ring needs"
#endif

#define CSR_CACHE_LINE 64

typedef struct csr_ring_cell {
    volatile AO_t sequence;
    void *item;
} csr_ring_cell;

typedef struct csr_spill_node {
    struct csr_spill_node *next;
    void *item;
} csr_spill_node;

struct csr_ring {
    // Written by producers (claims). Its own cache line.
    volatile AO_t tail;
    char pad0[CSR_CACHE_LINE - sizeof(AO_t)];
    // Written by the consumer only.
    volatile AO_t head;
    char pad1[CSR_CACHE_LINE - sizeof(AO_t)];
    // The futex word: 1 while the consumer announces that it sleeps.
    volatile unsigned int parked;
    volatile AO_t spill_count;
    volatile AO_t spilled_total;
    volatile AO_t parks;
    volatile AO_t wakes;
    pthread_mutex_t spill_lock;
    csr_spill_node *spill_first;
    csr_spill_node *spill_last;
    AO_t mask;
    char pad2[CSR_CACHE_LINE];
    csr_ring_cell cells[];
};

// ---------------------------------------------------------------------------
// The futex (a mutex and condition variable where there is none).

/// A sequentially consistent load of the 32-bit park word (see
/// csr_load_seq_cst in csr_atomic.h for why an acquire load is not enough).
static inline unsigned int csr_int_load_seq_cst(const volatile unsigned int *addr) {
    return __atomic_load_n(addr, __ATOMIC_SEQ_CST);
}

#if defined(__linux__)
/// Sleeps while `*word == expected`, until woken or until the absolute
/// CLOCK_MONOTONIC `deadline` (0: none). The kernel compares and sleeps
/// atomically against `csr_futex_wake`.
static void csr_futex_wait(volatile unsigned int *word, unsigned int expected, uint64_t deadline) {
    struct timespec relative;
    struct timespec *timeout = NULL;
    if (deadline != 0) {
        uint64_t now = csr_monotonic_nanoseconds();
        if (now >= deadline) return;
        uint64_t left = deadline - now;
        relative.tv_sec = (time_t)(left / 1000000000u);
        relative.tv_nsec = (long)(left % 1000000000u);
        timeout = &relative;
    }
    // EAGAIN (the word changed), EINTR and ETIMEDOUT all mean "look again".
    (void)syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, timeout, NULL, 0);
}

static void csr_futex_wake(volatile unsigned int *word) {
    (void)syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
#else
// One process-wide pair is enough: a wake only makes the sleeper look again.
static pthread_mutex_t csr_futex_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t csr_futex_condition = PTHREAD_COND_INITIALIZER;

static void csr_futex_wait(volatile unsigned int *word, unsigned int expected, uint64_t deadline) {
    pthread_mutex_lock(&csr_futex_lock);
    if (csr_int_load_seq_cst(word) == expected) {
        if (deadline == 0) {
            pthread_cond_wait(&csr_futex_condition, &csr_futex_lock);
        } else {
            // The condition variable's clock is CLOCK_REALTIME: convert.
            uint64_t now = csr_monotonic_nanoseconds();
            uint64_t left = deadline > now ? deadline - now : 0;
            struct timespec absolute;
            clock_gettime(CLOCK_REALTIME, &absolute);
            uint64_t at = (uint64_t)absolute.tv_sec * 1000000000u + (uint64_t)absolute.tv_nsec + left;
            absolute.tv_sec = (time_t)(at / 1000000000u);
            absolute.tv_nsec = (long)(at % 1000000000u);
            pthread_cond_timedwait(&csr_futex_condition, &csr_futex_lock, &absolute);
        }
    }
    pthread_mutex_unlock(&csr_futex_lock);
}

static void csr_futex_wake(volatile unsigned int *word) {
    (void)word;
    pthread_mutex_lock(&csr_futex_lock);
    pthread_cond_broadcast(&csr_futex_condition);
    pthread_mutex_unlock(&csr_futex_lock);
}
#endif

uint64_t csr_monotonic_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

// ---------------------------------------------------------------------------
// Life cycle.

csr_ring *csr_ring_create(size_t capacity) {
    size_t cells = 2;
    while (cells < capacity) {
        if (cells > (SIZE_MAX >> 2) / sizeof(csr_ring_cell)) return NULL;
        cells <<= 1;
    }
    size_t bytes = sizeof(csr_ring) + cells * sizeof(csr_ring_cell);
    bytes = (bytes + CSR_CACHE_LINE - 1) & ~(size_t)(CSR_CACHE_LINE - 1);
    csr_ring *ring = aligned_alloc(CSR_CACHE_LINE, bytes);
    if (ring == NULL) return NULL;
    memset(ring, 0, bytes);
    if (pthread_mutex_init(&ring->spill_lock, NULL) != 0) {
        free(ring);
        return NULL;
    }
    ring->mask = (AO_t)(cells - 1);
    for (size_t index = 0; index < cells; index++) ring->cells[index].sequence = (AO_t)index;
    return ring;
}

bool csr_ring_destroy(csr_ring *ring) {
    if (AO_load_acquire(&ring->tail) != AO_load_acquire(&ring->head) || AO_load_acquire(&ring->spill_count) != 0) {
        return false;
    }
    pthread_mutex_destroy(&ring->spill_lock);
    free(ring);
    return true;
}

// ---------------------------------------------------------------------------
// Producers.

/// Claims a cell and publishes `item` in it; false when the ring is full.
static inline bool csr_ring_try_claim(csr_ring *ring, void *item) {
    AO_t position = AO_load(&ring->tail);
    for (;;) {
        csr_ring_cell *cell = &ring->cells[position & ring->mask];
        AO_t sequence = AO_load_acquire(&cell->sequence);
        intptr_t difference = (intptr_t)sequence - (intptr_t)position;
        if (difference == 0) {
            // The claim: the producer's announcement in the park protocol.
            if (AO_compare_and_swap_full(&ring->tail, position, position + 1)) {
                cell->item = item;
                AO_store_release(&cell->sequence, position + 1);
                return true;
            }
            position = AO_load(&ring->tail);
        } else if (difference < 0) {
            // The cell still holds the item of the previous lap: full.
            return false;
        } else {
            // Another producer claimed this position first.
            position = AO_load(&ring->tail);
        }
    }
}

static void csr_ring_spill(csr_ring *ring, void *item) {
    csr_spill_node *node = malloc(sizeof(csr_spill_node));
    if (node == NULL) abort(); // out of memory: nowhere to put the work
    node->next = NULL;
    node->item = item;
    pthread_mutex_lock(&ring->spill_lock);
    if (ring->spill_last != NULL) {
        ring->spill_last->next = node;
    } else {
        ring->spill_first = node;
    }
    ring->spill_last = node;
    // The spill's announcement in the park protocol (a full RMW).
    AO_fetch_and_add1_full(&ring->spill_count);
    pthread_mutex_unlock(&ring->spill_lock);
    AO_fetch_and_add1(&ring->spilled_total);
}

csr_push_result csr_ring_push(csr_ring *ring, void *item) {
    csr_push_result result = CSR_PUSH_RING;
    // While anything is spilled, spill too: one producer's items keep their order.
    if (AO_load_acquire(&ring->spill_count) != 0 || !csr_ring_try_claim(ring, item)) {
        csr_ring_spill(ring, item);
        result = CSR_PUSH_SPILLED;
    }
    // After the announcement (a full RMW): is the consumer asleep?
    if (csr_int_load_seq_cst(&ring->parked) == 1 && AO_int_compare_and_swap_full(&ring->parked, 1, 0)) {
        AO_fetch_and_add1(&ring->wakes);
        csr_futex_wake(&ring->parked);
    }
    return result;
}

// ---------------------------------------------------------------------------
// The consumer.

/// Takes the item of the cell at `position` (== head) if it is published.
static inline void *CSR_NULLABLE csr_ring_take_cell(csr_ring *ring, AO_t position) {
    csr_ring_cell *cell = &ring->cells[position & ring->mask];
    if (AO_load_acquire(&cell->sequence) != position + 1) return NULL;
    void *item = cell->item;
    cell->item = NULL;
    AO_store_release(&cell->sequence, position + ring->mask + 1);
    AO_store_release(&ring->head, position + 1);
    return item;
}

/// Takes the oldest spilled item if the ring is still empty (`tail ==
/// position`), looked at under the spill list's mutex: a producer may have
/// claimed a cell and then spilled its next item since the caller last
/// looked, and that cell's item must come first (the model's
/// UNCHECKED_SPILL_TAKE mutant). Sets `*busy` when the ring is not empty.
static void *CSR_NULLABLE csr_ring_take_spilled(csr_ring *ring, AO_t position, bool *busy) {
    csr_spill_node *node = NULL;
    void *item = NULL;
    pthread_mutex_lock(&ring->spill_lock);
    if (csr_load_seq_cst(&ring->tail) != position) {
        *busy = true;
    } else if ((node = ring->spill_first) != NULL) {
        ring->spill_first = node->next;
        if (ring->spill_first == NULL) ring->spill_last = NULL;
        item = node->item;
        AO_fetch_and_sub1_full(&ring->spill_count);
    }
    pthread_mutex_unlock(&ring->spill_lock);
    free(node);
    return item;
}

void *csr_ring_pop(csr_ring *ring, bool *busy) {
    *busy = false;
    AO_t position = AO_load(&ring->head);
    void *item = csr_ring_take_cell(ring, position);
    if (item != NULL) return item;
    if (csr_load_seq_cst(&ring->tail) != position) {
        // Claimed, not yet published.
        *busy = true;
        return NULL;
    }
    if (AO_load_acquire(&ring->spill_count) == 0) return NULL;
    return csr_ring_take_spilled(ring, position, busy);
}

void *csr_ring_pop_wait(csr_ring *ring, csr_wait_strategy strategy, uint64_t spin_nanoseconds,
                        uint64_t deadline_nanoseconds) {
    uint64_t spin_started = 0;
    unsigned busy_spins = 0;
    unsigned idle_spins = 0;
    for (;;) {
        // While idle this loop reads two cache lines: the next cell (which
        // the next push writes) and the spill count (written only when
        // something spills). Not `tail`: every push writes it, and a
        // consumer polling it would pull its line away from the producers
        // on every poll.
        AO_t position = AO_load(&ring->head);
        void *item = csr_ring_take_cell(ring, position);
        if (item != NULL) return item;
        if (AO_load_acquire(&ring->spill_count) != 0) {
            // Something spilled: the full look (tail, then the spill list,
            // looked at again under its mutex).
            bool busy;
            item = csr_ring_pop(ring, &busy);
            if (item != NULL) return item;
            // A producer is between its claim and its publication.
            if (busy) csr_backoff(&busy_spins);
            continue;
        }
        // Read the clock once every 64 idle spins (about a microsecond).
        if ((idle_spins++ & 63) == 0 || strategy == CSR_WAIT_PARK) {
            uint64_t now = csr_monotonic_nanoseconds();
            if (deadline_nanoseconds != 0 && now >= deadline_nanoseconds) return NULL;
            if (spin_started == 0) spin_started = now;
            if (strategy == CSR_WAIT_SPIN_THEN_PARK && now - spin_started >= spin_nanoseconds) {
                strategy = CSR_WAIT_PARK;
            }
        }
        if (strategy != CSR_WAIT_PARK) {
            csr_cpu_relax();
            continue;
        }
        // Announce, then look (the consumer's half of the Dekker pairing).
        if (!AO_int_compare_and_swap_full(&ring->parked, 0, 1)) continue; // not reached: only we set 1
        if (csr_load_seq_cst(&ring->tail) != position) {
            // Claimed, not yet published: wait for the publication awake.
            AO_int_store(&ring->parked, 0);
            csr_backoff(&busy_spins);
            continue;
        }
        if (csr_load_seq_cst(&ring->spill_count) != 0) {
            AO_int_store(&ring->parked, 0);
            continue;
        }
        AO_fetch_and_add1(&ring->parks);
        csr_futex_wait(&ring->parked, 1, deadline_nanoseconds);
        // Woken (a producer set 0), timed out or interrupted (still 1).
        AO_int_store(&ring->parked, 0);
    }
}

static _Thread_local const csr_ring *csr_current_ring = NULL;

void csr_ring_set_current(csr_ring *ring) { csr_current_ring = ring; }

bool csr_ring_is_current(const csr_ring *ring) { return csr_current_ring == ring; }

void csr_ring_get_statistics(const csr_ring *ring, csr_ring_statistics *out) {
    AO_t head = AO_load_acquire(&ring->head);
    AO_t tail = AO_load_acquire(&ring->tail);
    out->capacity = (uint64_t)ring->mask + 1;
    out->ring_depth = tail >= head ? (uint64_t)(tail - head) : 0;
    out->spill_depth = (uint64_t)AO_load_acquire(&ring->spill_count);
    out->spilled_total = (uint64_t)AO_load(&ring->spilled_total);
    out->parks = (uint64_t)AO_load(&ring->parks);
    out->wakes = (uint64_t)AO_load(&ring->wakes);
}
