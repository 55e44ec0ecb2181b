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
