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

#endif
