// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#include "csr_debug.h"
#include "csr_debug_internal.h"

volatile AO_t csr_debug_bags = 0;
volatile AO_t csr_debug_arrays = 0;
volatile AO_t csr_debug_retired = 0;
volatile AO_t csr_debug_retired_array_counter = 0;

size_t csr_debug_live_bags(void) { return AO_load(&csr_debug_bags); }
size_t csr_debug_live_arrays(void) { return AO_load(&csr_debug_arrays); }
size_t csr_debug_retired_items(void) { return AO_load(&csr_debug_retired); }
size_t csr_debug_retired_arrays(void) { return AO_load(&csr_debug_retired_array_counter); }

volatile AO_t csr_debug_hook = 0;
volatile AO_t csr_debug_hook_context = 0;

void csr_debug_set_interleaving_hook(csr_debug_interleaving_hook hook, void *context) {
    AO_store(&csr_debug_hook_context, (AO_t)context);
    AO_store_release(&csr_debug_hook, (AO_t)hook);
}
