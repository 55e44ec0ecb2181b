// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

//===----------------------------------------------------------------------===//
// csr_debug: live-object counters, compiled in always. Each costs one relaxed
// fetch-and-add per create/destroy; leak tests compare them before and after.
// And interleaving points: a test can stop a thread at a named point of a
// slow path (never a per-event path) to force a race deterministically.
//===----------------------------------------------------------------------===//
#ifndef CSR_DEBUG_H
#define CSR_DEBUG_H

#include "csr_config.h"

CSR_ASSUME_NONNULL_BEGIN

/// Bags created and not yet destroyed.
/// Ordering: relaxed. Thread safety: any thread.
size_t csr_debug_live_bags(void);

/// Entry arrays allocated and not yet freed (live and retired).
/// Ordering: relaxed. Thread safety: any thread.
size_t csr_debug_live_arrays(void);

/// Items retired by bags and not yet handed back through `csr_bag_reclaim`.
/// Ordering: relaxed. Thread safety: any thread.
size_t csr_debug_retired_items(void);

/// Entry arrays replaced while a reader was walking them, not yet freed
/// (included in `csr_debug_live_arrays`).
/// Ordering: relaxed. Thread safety: any thread.
size_t csr_debug_retired_arrays(void);

/// Interleaving points (`csr_debug_set_interleaving_hook`).
/// `csr_bag_remove` retired an item (a reader was inside) and has not yet
/// advanced the epochs or published the retirement.
#define CSR_DEBUG_POINT_BAG_RETIRED 1
/// `csr_bag_remove` / `csr_bag_reclaim` advanced the epochs as far as the
/// readers allowed and have not yet published the backlog.
#define CSR_DEBUG_POINT_BAG_ADVANCED 2

/// Called at an interleaving point with the point, the object concerned (the
/// bag) and the context given to `csr_debug_set_interleaving_hook`. It runs
/// with the object's writer lock held: it may wait for another thread, which
/// must not need that lock meanwhile.
typedef void (*csr_debug_interleaving_hook)(int point, void *object, void *CSR_NULLABLE context);

/// Installs (or, with NULL, removes) the interleaving hook. For tests of the
/// runtime only: not thread-safe against slow paths running at the same time
/// on other threads, and it costs a relaxed load at each point while unset.
/// Ordering: release. Thread safety: one test at a time.
void csr_debug_set_interleaving_hook(csr_debug_interleaving_hook CSR_NULLABLE hook, void *CSR_NULLABLE context);

CSR_ASSUME_NONNULL_END

#endif
