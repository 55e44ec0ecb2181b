// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// A malloc-counting interposer for the benchmark's allocation pass.
//
// Loaded with LD_PRELOAD, it defines the allocation entry points, counts each
// call with one relaxed atomic increment (all threads), and forwards to
// glibc's own implementations (__libc_*), so no dlsym bootstrap is needed.
// It also keeps the bytes live on the heap (what malloc handed out,
// malloc_usable_size of each block, less what was freed) for W22, and, while
// the size histogram is switched on, the net count of live blocks by usable
// size (16-byte classes). The counter adds a few nanoseconds per call, which
// is why timings are never taken in a process that loads it.
#define _GNU_SOURCE
#include "MallocCounter.h"

#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void __libc_free(void *pointer);

static _Atomic size_t allocation_count = 0;
static _Atomic long live_bytes = 0;
static _Atomic bool histogram_on = false;
static _Atomic long histogram[SIGNALKIT_BENCH_SIZE_CLASSES];

static inline void count_one(void) { atomic_fetch_add_explicit(&allocation_count, 1, memory_order_relaxed); }

static inline void track(void *pointer, long sign) {
    if (pointer == NULL) return;
    size_t usable = malloc_usable_size(pointer);
    atomic_fetch_add_explicit(&live_bytes, sign * (long)usable, memory_order_relaxed);
    if (atomic_load_explicit(&histogram_on, memory_order_relaxed)) {
        size_t index = usable / 16;
        if (index >= SIGNALKIT_BENCH_SIZE_CLASSES) index = SIGNALKIT_BENCH_SIZE_CLASSES - 1;
        atomic_fetch_add_explicit(&histogram[index], sign, memory_order_relaxed);
    }
}

static inline void *allocated(void *pointer) {
    track(pointer, 1);
    return pointer;
}

size_t signalkit_bench_allocation_count(void) { return atomic_load_explicit(&allocation_count, memory_order_relaxed); }

long signalkit_bench_live_bytes(void) { return atomic_load_explicit(&live_bytes, memory_order_relaxed); }

void signalkit_bench_size_histogram(bool on) {
    if (on) {
        for (int index = 0; index < SIGNALKIT_BENCH_SIZE_CLASSES; index++) {
            atomic_store_explicit(&histogram[index], 0, memory_order_relaxed);
        }
    }
    atomic_store_explicit(&histogram_on, on, memory_order_relaxed);
}

long signalkit_bench_size_class_count(int index) {
    return atomic_load_explicit(&histogram[index], memory_order_relaxed);
}

void *malloc(size_t size) {
    count_one();
    return allocated(__libc_malloc(size));
}

void *calloc(size_t count, size_t size) {
    count_one();
    return allocated(__libc_calloc(count, size));
}

void *realloc(void *pointer, size_t size) {
    count_one();
    // Untracked while glibc may still hand back the same block.
    track(pointer, -1);
    void *result = __libc_realloc(pointer, size);
    if (result == NULL && size != 0) {
        track(pointer, 1);  // failed: the old block is still live
        return NULL;
    }
    return allocated(result);
}

void free(void *pointer) {
    track(pointer, -1);
    __libc_free(pointer);
}

void *memalign(size_t alignment, size_t size) {
    count_one();
    return allocated(__libc_memalign(alignment, size));
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_one();
    return allocated(__libc_memalign(alignment, size));
}

void *valloc(size_t size) {
    count_one();
    return allocated(__libc_valloc(size));
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    count_one();
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = allocated(pointer);
    return 0;
}
