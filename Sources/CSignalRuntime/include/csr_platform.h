// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

//===----------------------------------------------------------------------===//
// csr_platform: small platform queries SignalKit needs and Swift cannot
// express portably.
//===----------------------------------------------------------------------===//
#ifndef CSR_PLATFORM_H
#define CSR_PLATFORM_H

#include "csr_config.h"

/// Whether the calling thread is the process's main thread. On Linux the
/// answer (thread id == process id) costs a system call once per thread and
/// is cached in thread-local storage afterwards.
/// Ordering: none (thread-local). Ownership: none. Thread safety: any thread.
bool csr_is_main_thread(void);

/// Names the calling thread (as `ps`, `top -H` and debuggers show it); Linux
/// keeps the first 15 bytes. Does nothing where the platform cannot.
/// Ordering: none. Ownership: `name` is copied. Thread safety: the calling
/// thread names only itself.
void csr_set_current_thread_name(const char *name);

/// Executes the CPU's spin-wait hint (`pause` on x86-64, `yield` on arm64)
/// `count` times: a spinning thread's way to wait a little without leaving
/// the CPU and without flooding the memory system with loads. One `pause`
/// takes from a few to about 140 cycles depending on the processor.
/// Ordering: none. Ownership: none. Thread safety: any thread.
void csr_cpu_pause(unsigned count);

#endif
