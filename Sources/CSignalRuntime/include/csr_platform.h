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

/// The thread slots: one pointer-sized value per thread for each, the way
/// SignalKit keeps thread-local state. Each slot has one owner on the Swift
/// side (named here); a new owner adds a case before `CSR_THREAD_SLOT_COUNT`.
typedef enum csr_thread_slot {
    /// The inspected stage whose subscription or delivery runs on this
    /// thread (`_SignalInspection`).
    CSR_THREAD_SLOT_INSPECTED_STAGE = 0,
    /// The nesting depth of the inspection's `with…` scopes, an integer.
    CSR_THREAD_SLOT_INSPECTION_SCOPE_DEPTH,
    /// The nesting depth of the naming's `with…` scopes, an integer.
    CSR_THREAD_SLOT_NAMING_SCOPE_DEPTH,
    /// The thread pool this thread belongs to (`ThreadPool`).
    CSR_THREAD_SLOT_THREAD_POOL,
    /// The list an iterative release running on this thread drains
    /// (`_IterativeRelease`).
    CSR_THREAD_SLOT_RELEASE_LIST,
    CSR_THREAD_SLOT_COUNT
} csr_thread_slot;

/// The calling thread's value in `slot` (NULL on a thread that never set
/// it). An opaque pointer (or an integer's bit pattern) the Swift side owns
/// and keeps alive while it is set; C neither retains nor reads it.
/// Thread-local storage, so a read or a write is a few instructions
/// (`pthread_getspecific` is a call into libc and a key lookup).
/// Ordering: none (thread-local: only the calling thread reads or writes
/// its slots). Ownership: none (unretained). Thread safety: each thread sees
/// only its own slots. `slot` must be below `CSR_THREAD_SLOT_COUNT`.
void *CSR_NULLABLE csr_thread_slot_get(csr_thread_slot slot);

/// Sets the calling thread's value in `slot` (see `csr_thread_slot_get`).
/// Ordering: none. Ownership: none (unretained: the caller keeps `value`
/// alive while it is set, and clears it before releasing it). Thread
/// safety: the calling thread's slot only.
void csr_thread_slot_set(csr_thread_slot slot, void *CSR_NULLABLE value);

CSR_ASSUME_NONNULL_END

#endif
