// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//===----------------------------------------------------------------------===//
// csr_barrier.h (private): a process-wide memory barrier for the rare side
// of an asymmetric fence (the calling thread's identity, `csr_thread_self_`,
// is in csr_flag.h, for its inline fast paths).
//===----------------------------------------------------------------------===//
#ifndef CSR_BARRIER_H
#define CSR_BARRIER_H

#include <stdbool.h>
#include <pthread.h>

#include "csr_atomic.h"

/// Makes every other thread of the process execute a full memory barrier
/// before this returns (Linux `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`,
/// registered for the process on first use; a system call whose cost grows
/// with the CPUs running the process). A thread's
/// accesses are then split in two: those before its barrier are visible to
/// the caller, those after it see everything the caller did before the call.
/// Returns `false` where that is unavailable (not Linux, a kernel before 4.14,
/// or a seccomp filter refusing it); callers must then stay correct without
/// it. Ordering: as described, plus a full fence on the calling thread.
/// Ownership: none. Thread safety: any thread, concurrently.
bool csr_heavy_barrier(void);

/// 0 until `csr_heavy_barrier_prepare` ran, then 1 when `csr_heavy_barrier`
/// works here and 2 when it does not. Never changes after that.
extern volatile AO_t csr_heavy_barrier_state;

/// Decides (once per process) whether `csr_heavy_barrier` works, registering
/// for it. `csr_flag_init` calls it, so every flag's readers know the answer
/// before they can enter. Ordering: release store of the state.
/// Ownership: none. Thread safety: any thread, concurrently.
void csr_heavy_barrier_prepare(void);

/// Whether the terminator side has the heavy barrier; when not, readers pay
/// a full fence when they leave instead. Ordering: none needed (the state was
/// published before any flag existed). Thread safety: any thread.
static inline bool csr_heavy_barrier_is_available(void) { return AO_load(&csr_heavy_barrier_state) == 1; }

#endif
