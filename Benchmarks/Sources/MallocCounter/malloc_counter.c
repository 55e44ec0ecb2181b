// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// A malloc-counting interposer for the benchmark's allocation pass.
//
// Loaded with LD_PRELOAD, it defines the allocation entry points, counts each
// call with one relaxed atomic increment (all threads), and forwards to
// glibc's own implementations (__libc_*), so no dlsym bootstrap is needed.
// The counter adds a few nanoseconds per call, which is why timings are
// never taken in a process that loads it.
#define _GNU_SOURCE
#include "MallocCounter.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);

static _Atomic size_t allocation_count = 0;

static inline void count_one(void) { atomic_fetch_add_explicit(&allocation_count, 1, memory_order_relaxed); }

size_t signalkit_bench_allocation_count(void) { return atomic_load_explicit(&allocation_count, memory_order_relaxed); }

void *malloc(size_t size) {
    count_one();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_one();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    count_one();
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

void *valloc(size_t size) {
    count_one();
    return __libc_valloc(size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    count_one();
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}
