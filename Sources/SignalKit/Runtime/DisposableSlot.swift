// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

internal import CSignalRuntime

/// An atomic slot holding at most one disposable, closable for good: the
/// engine of `MetaDisposable`.
///
/// The C slot lives in storage allocated here (a public class cannot
/// tail-allocate it) and is freed by `destroy()`, which the owner calls from
/// its `deinit`. Values are stored as +1 object references; disposal goes
/// through `_dispose`, which recognises SignalKit's own disposables without a
/// protocol cast.
struct _DisposableSlot: @unchecked Sendable {
    // `@unchecked Sendable`: the storage is only touched through csr_slot_*.
    private let storage: UnsafeMutableRawPointer

    init() {
        storage = UnsafeMutableRawPointer.allocate(byteCount: Int(CSR_SLOT_SIZE), alignment: 8)
        csr_slot_init(OpaquePointer(storage))
    }

    private var slot: OpaquePointer { OpaquePointer(storage) }

    /// Replaces the current disposable with `disposable` and disposes the
    /// previous one (even if it is the same object). If the slot was closed,
    /// disposes `disposable` instead.
    @inline(__always)
    func set(_ disposable: consuming (any Disposable)?) {
        // The caller hands over its reference: storing it needs no retain.
        let desired = disposable.take().map { Unmanaged.passRetained($0 as AnyObject).toOpaque() }
        var refused = false
        let previous = csr_slot_exchange(slot, desired, &refused)
        if refused {
            if let desired {
                let object = Unmanaged<AnyObject>.fromOpaque(desired).takeRetainedValue()
                _dispose(object)
            }
        } else if let previous {
            let object = Unmanaged<AnyObject>.fromOpaque(previous).takeRetainedValue()
            _dispose(object)
        }
    }

    /// Closes the slot and disposes what it held. Idempotent.
    func dispose() {
        var wasClosed = false
        if let previous = csr_slot_close(slot, &wasClosed) {
            _dispose(Unmanaged<AnyObject>.fromOpaque(previous).takeRetainedValue())
        }
    }

    var isDisposed: Bool { csr_slot_is_closed(slot) }

    /// Releases the held disposable without disposing it and frees the
    /// storage. Call once, when no other thread can use the slot.
    func destroy() {
        var wasClosed = false
        if let previous = csr_slot_close(slot, &wasClosed) {
            Unmanaged<AnyObject>.fromOpaque(previous).release()
        }
        storage.deallocate()
    }
}
