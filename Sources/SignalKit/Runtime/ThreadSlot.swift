// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

internal import CSignalRuntime

// Thread-local state, one way: a pointer-sized slot per thread in the C
// core's thread-local storage (`csr_thread_slot_get`/`set`), one slot per
// owner. SignalKit keeps no pthread keys of its own. (In Runtime, the one
// room that imports the C core; Swift has no thread-local storage.)

/// One of the calling thread's slots (see `csr_thread_slot`): holds an
/// unretained pointer or an integer, read and written only by the thread it
/// belongs to.
struct _ThreadSlot: Sendable {
    private let index: UInt32

    private init(_ slot: csr_thread_slot) {
        index = slot.rawValue
    }

    /// The inspected stage running on this thread (`_SignalInspection`).
    static var inspectedStage: _ThreadSlot { _ThreadSlot(CSR_THREAD_SLOT_INSPECTED_STAGE) }
    /// The depth of the inspection's `with…` scopes on this thread.
    static var inspectionScopeDepth: _ThreadSlot { _ThreadSlot(CSR_THREAD_SLOT_INSPECTION_SCOPE_DEPTH) }
    /// The depth of the naming's `with…` scopes on this thread.
    static var namingScopeDepth: _ThreadSlot { _ThreadSlot(CSR_THREAD_SLOT_NAMING_SCOPE_DEPTH) }
    /// The thread pool this thread belongs to (`ThreadPool`).
    static var threadPool: _ThreadSlot { _ThreadSlot(CSR_THREAD_SLOT_THREAD_POOL) }
    /// The list an `_IterativeRelease` on this thread drains.
    static var releaseList: _ThreadSlot { _ThreadSlot(CSR_THREAD_SLOT_RELEASE_LIST) }

    /// The calling thread's value (nil until it sets one). Unretained: the
    /// owner keeps the object alive while it is set.
    var pointer: UnsafeMutableRawPointer? {
        @inline(__always) get { csr_thread_slot_get(csr_thread_slot(rawValue: index)) }
        @inline(__always) nonmutating set { csr_thread_slot_set(csr_thread_slot(rawValue: index), newValue) }
    }

    /// The calling thread's value as an integer (0 until it sets one).
    var integer: Int {
        @inline(__always) get { Int(bitPattern: pointer) }
        @inline(__always) nonmutating set { pointer = UnsafeMutableRawPointer(bitPattern: newValue) }
    }
}
