// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

//===----------------------------------------------------------------------===//
//
// CSignalRuntime: the concurrency core of SignalKit.
//
// Read this first. Every function in this module follows four rules.
//
// 1. Types are opaque. Swift sees `csr_flag *`, `csr_slot *` and `csr_bag *`
//    as `OpaquePointer` and never touches a field. Flags and slots live in
//    storage the caller provides (`csr_*_size()` bytes, 8-byte aligned), which
//    SignalKit takes from the tail of a `ManagedBuffer`; bags are allocated and
//    freed by C (`csr_bag_create` / `csr_bag_destroy`).
//    Never pass the address of a Swift stored property to this module.
//
// 2. C never calls into the Swift runtime. `void *` items are retained
//    `Unmanaged` references: Swift retains before handing one in (+1) and
//    balances it when C hands it back (from `csr_slot_*`, `csr_bag_reclaim`).
//
// 3. Every function states its memory ordering (`Ordering:`), who owns what
//    (`Ownership:`) and who may call it concurrently (`Thread safety:`).
//    "full" means a sequentially consistent read-modify-write (a `lock`-
//    prefixed instruction on x86-64); "acquire"/"release" have their C11
//    meaning.
//
// 4. Atomics come from libatomic_ops (Debian `libatomic-ops-dev`, MIT-style
//    header part only) through `csr_atomic.h`, which refuses to build unless
//    the compiler `__atomic` builtin path is taken, so ThreadSanitizer sees
//    every operation. The GPL parts (the library's stack and malloc) are
//    never used.
//
//===----------------------------------------------------------------------===//
#ifndef CSIGNALRUNTIME_H
#define CSIGNALRUNTIME_H

#define CSR_RUNTIME_VERSION 2

#include "csr_flag.h"
#include "csr_slot.h"
#include "csr_bag.h"
#include "csr_ring.h"
#include "csr_debug.h"
#include "csr_platform.h"

#endif
