#include "csr_debug.h"
#include "csr_debug_internal.h"

volatile AO_t csr_debug_bags = 0;
volatile AO_t csr_debug_arrays = 0;
volatile AO_t csr_debug_retired = 0;

size_t csr_debug_live_bags(void) { return AO_load(&csr_debug_bags); }
size_t csr_debug_live_arrays(void) { return AO_load(&csr_debug_arrays); }
size_t csr_debug_retired_items(void) { return AO_load(&csr_debug_retired); }
