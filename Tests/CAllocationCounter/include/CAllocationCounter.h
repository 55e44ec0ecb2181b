// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#ifndef C_ALLOCATION_COUNTER_H
#define C_ALLOCATION_COUNTER_H

// A malloc interposer for SignalKit's allocation regression tests.
//
// Linked into the test executable, it defines glibc's allocation entry points
// (malloc, calloc, realloc, memalign, aligned_alloc, valloc, posix_memalign),
// counts each call in a per-thread counter and forwards to glibc's own
// implementations (__libc_*). free is not interposed: the memory is glibc's.
//
// Per-thread counting makes a test's count independent of whatever other
// threads (other tests, Dispatch workers) allocate meanwhile.
//
// Compiled out under AddressSanitizer and ThreadSanitizer, whose runtimes
// interpose malloc themselves: there, `cac_is_available()` returns false and
// the tests that need counts are skipped.

#include <stdbool.h>
#include <stddef.h>

/// Whether this build counts allocations. Thread-safe, constant.
bool cac_is_available(void);

/// The number of allocation calls made so far by the calling thread (0 when
/// not available). Reads a thread-local variable: no synchronisation.
size_t cac_thread_allocation_count(void);

#endif
