#ifndef CSR_DEBUG_INTERNAL_H
#define CSR_DEBUG_INTERNAL_H

#include "csr_atomic.h"

extern volatile AO_t csr_debug_bags;
extern volatile AO_t csr_debug_arrays;
extern volatile AO_t csr_debug_retired;

#endif
