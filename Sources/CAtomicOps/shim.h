// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The libatomic_ops header, for SwiftPM's system-library check. Only
// CSignalRuntime's private csr_atomic.h uses the library.
#include <atomic_ops.h>
