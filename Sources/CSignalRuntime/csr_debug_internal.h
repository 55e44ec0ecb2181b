// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#ifndef CSR_DEBUG_INTERNAL_H
#define CSR_DEBUG_INTERNAL_H

#include "csr_atomic.h"
#include "csr_debug.h"

extern volatile AO_t csr_debug_bags;
extern volatile AO_t csr_debug_arrays;
extern volatile AO_t csr_debug_retired;
extern volatile AO_t csr_debug_retired_array_counter;

extern volatile AO_t csr_debug_hook;
extern volatile AO_t csr_debug_hook_context;

/// Calls the interleaving hook, if one is installed.
static inline void csr_debug_point(int point, void *object) {
    AO_t hook = AO_load_acquire(&csr_debug_hook);
    if (__builtin_expect(hook != 0, 0)) {
        ((csr_debug_interleaving_hook)hook)(point, object, (void *)AO_load(&csr_debug_hook_context));
    }
}

#endif
