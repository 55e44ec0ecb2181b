// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
#ifndef SIGNALKIT_FUZZER_SHIM_H
#define SIGNALKIT_FUZZER_SHIM_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (compiler-rt, linked by `-sanitize=fuzzer`): parses
/// libFuzzer's command line and calls `callback` with each input, for ever or
/// until a limit in the command line. A fuzzer whose `main` is its own (as a
/// Swift executable's is) calls it instead of libFuzzer's `main`.
///
/// Defined only in a `-sanitize=fuzzer` build (see `csr_fuzzer_available`).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size))
    __attribute__((weak));

/// Whether libFuzzer's driver is linked (a `-sanitize=fuzzer` build).
static inline int csr_fuzzer_available(void) { return LLVMFuzzerRunDriver != NULL; }

#endif
