// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// See include/CAllocationCounter.h.
#define _GNU_SOURCE
#include "CAllocationCounter.h"

#include <errno.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CAC_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CAC_SANITIZED 1
#endif

#ifdef CAC_SANITIZED

bool cac_is_available(void) { return false; }
size_t cac_thread_allocation_count(void) { return 0; }

#else

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);

// initial-exec TLS: no allocation and no lazy set-up on first access, so it is
// safe inside malloc itself.
static __thread size_t thread_allocation_count __attribute__((tls_model("initial-exec")));

bool cac_is_available(void) { return true; }
size_t cac_thread_allocation_count(void) { return thread_allocation_count; }

void *malloc(size_t size) {
    thread_allocation_count += 1;
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    thread_allocation_count += 1;
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    thread_allocation_count += 1;
    return __libc_realloc(pointer, size);
}

void *memalign(size_t alignment, size_t size) {
    thread_allocation_count += 1;
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    thread_allocation_count += 1;
    return __libc_memalign(alignment, size);
}

void *valloc(size_t size) {
    thread_allocation_count += 1;
    return __libc_valloc(size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    thread_allocation_count += 1;
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

#endif
