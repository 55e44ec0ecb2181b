// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#ifndef SIGNALKIT_MALLOC_COUNTER_H
#define SIGNALKIT_MALLOC_COUNTER_H

#include <stdbool.h>
#include <stddef.h>

/// Usable-size classes of 16 bytes in the size histogram; the last one holds
/// every larger block.
#define SIGNALKIT_BENCH_SIZE_CLASSES 257

/// Allocation calls (malloc, calloc, realloc, posix_memalign, aligned_alloc,
/// memalign, valloc) made by all threads since the library was loaded. The
/// benchmark looks this symbol up with dlsym when it runs its allocation pass
/// under LD_PRELOAD; the timed runs never load the library.
size_t signalkit_bench_allocation_count(void);

/// Bytes live on the heap now: the usable size (malloc_usable_size) of every
/// block handed out since the library was loaded, less the blocks freed.
long signalkit_bench_live_bytes(void);

/// Switches the size histogram on (its counts reset to zero) or off.
void signalkit_bench_size_histogram(bool on);

/// Blocks of usable size 16 × index … 16 × index + 15 allocated and not freed
/// while the histogram was on (negative when more were freed).
long signalkit_bench_size_class_count(int index);

#endif
