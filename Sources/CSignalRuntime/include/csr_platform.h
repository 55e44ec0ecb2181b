// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

//===----------------------------------------------------------------------===//
// csr_platform: small platform queries SignalKit needs and Swift cannot
// express portably.
//===----------------------------------------------------------------------===//
#ifndef CSR_PLATFORM_H
#define CSR_PLATFORM_H

#include "csr_config.h"

CSR_ASSUME_NONNULL_BEGIN

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

/// The calling thread's current inspected stage (SignalKit's inspection:
/// the stage whose subscription, or whose delivery, runs on this thread),
/// or NULL. An opaque pointer the Swift side owns and keeps alive while it
/// is current; C neither retains nor reads it. Thread-local storage, so a
/// read or a write is a few instructions (`pthread_getspecific` is a call
/// into libc and a key lookup).
/// Ordering: none (thread-local). Ownership: none. Thread safety: each
/// thread sees only its own slot.
void *CSR_NULLABLE csr_inspection_current(void);

/// Sets the calling thread's current inspected stage (see
/// `csr_inspection_current`). Ordering: none. Ownership: none (unretained).
/// Thread safety: the calling thread's slot only.
void csr_inspection_set_current(void *CSR_NULLABLE stage);

CSR_ASSUME_NONNULL_END

#endif
