// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#ifndef CSR_CONFIG_H
#define CSR_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// `__has_feature` is Clang's (GCC has it only from 14): test that it exists
// before using it, in a separate #if, or older GCC cannot read the header.
#if defined(__has_feature)
#if __has_feature(nullability)
#define CSR_HAS_NULLABILITY 1
#endif
#endif

#if defined(CSR_HAS_NULLABILITY)
#define CSR_ASSUME_NONNULL_BEGIN _Pragma("clang assume_nonnull begin")
#define CSR_ASSUME_NONNULL_END _Pragma("clang assume_nonnull end")
#define CSR_NULLABLE _Nullable
#else
#define CSR_ASSUME_NONNULL_BEGIN
#define CSR_ASSUME_NONNULL_END
#define CSR_NULLABLE
#endif

#define CSR_WARN_UNUSED __attribute__((warn_unused_result))

#endif
