//===----------------------------------------------------------------------===//
// csr_debug: live-object counters, compiled in always. Each costs one relaxed
// fetch-and-add per create/destroy; leak tests compare them before and after.
//===----------------------------------------------------------------------===//
#ifndef CSR_DEBUG_H
#define CSR_DEBUG_H

#include "csr_config.h"

/// Bags created and not yet destroyed.
/// Ordering: relaxed. Thread safety: any thread.
size_t csr_debug_live_bags(void);

/// Entry arrays allocated and not yet freed (live and retired).
/// Ordering: relaxed. Thread safety: any thread.
size_t csr_debug_live_arrays(void);

/// Items retired by bags and not yet handed back through `csr_bag_reclaim`.
/// Ordering: relaxed. Thread safety: any thread.
size_t csr_debug_retired_items(void);

#endif
