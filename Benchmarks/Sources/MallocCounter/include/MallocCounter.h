// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#ifndef SIGNALKIT_MALLOC_COUNTER_H
#define SIGNALKIT_MALLOC_COUNTER_H

#include <stddef.h>

/// Allocation calls (malloc, calloc, realloc, posix_memalign, aligned_alloc,
/// memalign, valloc) made by all threads since the library was loaded. The
/// benchmark looks this symbol up with dlsym when it runs its allocation pass
/// under LD_PRELOAD; the timed runs never load the library.
size_t signalkit_bench_allocation_count(void);

#endif
