// The libatomic_ops header, for SwiftPM's system-library check. Only
// CSignalRuntime's private csr_atomic.h uses the library.
#include <atomic_ops.h>
