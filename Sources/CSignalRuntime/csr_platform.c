// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#define _GNU_SOURCE
#include "csr_platform.h"

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>

bool csr_is_main_thread(void) {
    static _Thread_local int cached = -1;
    if (cached < 0) cached = (pid_t)syscall(SYS_gettid) == getpid();
    return cached != 0;
}
#elif defined(__APPLE__)
#include <pthread.h>

bool csr_is_main_thread(void) { return pthread_main_np() != 0; }
#else
#error "csr_is_main_thread: unsupported platform"
#endif

// ---------------------------------------------------------------------------
// csr_set_current_thread_name

#include <pthread.h>
#include <string.h>

void csr_set_current_thread_name(const char *name) {
#if defined(__linux__)
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = '\0';
    (void)pthread_setname_np(pthread_self(), truncated);
#elif defined(__APPLE__)
    (void)pthread_setname_np(name);
#else
    (void)name;
#endif
}

// ---------------------------------------------------------------------------
// csr_heavy_barrier (declared in csr_barrier.h)

#include "csr_barrier.h"

#if defined(__linux__) && __has_include(<linux/membarrier.h>)
#include <linux/membarrier.h>

volatile AO_t csr_heavy_barrier_state = 0;

void csr_heavy_barrier_prepare(void) {
    if (AO_load_acquire(&csr_heavy_barrier_state) != 0) return;
    // Racing first callers may both register, which the kernel accepts; they
    // reach the same answer.
    long supported = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    bool usable = supported >= 0 && (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0
        && syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    AO_store_release(&csr_heavy_barrier_state, usable ? 1 : 2);
}

bool csr_heavy_barrier(void) {
    csr_heavy_barrier_prepare();
    if (AO_load_acquire(&csr_heavy_barrier_state) != 1) return false;
    AO_nop_full();
    return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}
#else
volatile AO_t csr_heavy_barrier_state = 2;

void csr_heavy_barrier_prepare(void) {}

bool csr_heavy_barrier(void) { return false; }
#endif

// ---------------------------------------------------------------------------
// csr_cpu_pause

void csr_cpu_pause(unsigned count) {
    for (unsigned i = 0; i < count; i++) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#elif defined(__aarch64__)
        __asm__ __volatile__("yield");
#endif
    }
}

// ---------------------------------------------------------------------------
// csr_thread_slot

static _Thread_local void *csr_thread_slots[CSR_THREAD_SLOT_COUNT];

void *csr_thread_slot_get(csr_thread_slot slot) { return csr_thread_slots[slot]; }

void csr_thread_slot_set(csr_thread_slot slot, void *value) { csr_thread_slots[slot] = value; }
