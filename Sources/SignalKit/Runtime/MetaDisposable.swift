// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

internal import CSignalRuntime

// CSignalRuntime's atomic disposable slot and its public face, `MetaDisposable`;
// and `_dispose`, which disposes what the slot and the subscription hold.
// They live in Runtime together because they refer to one another: the slot
// disposes through `_dispose`, which recognises `MetaDisposable` (and the
// subscription) without a protocol cast.

/// Holds one replaceable disposable ("serial disposable").
///
/// * `set(d)` stores `d` and then disposes the previous disposable, even when
///   it is the same object; `set(nil)` disposes and clears the current one.
/// * After `dispose()`, any disposable passed to `set` is disposed at once.
/// * Every disposable passed to `set` is disposed exactly once, across any
///   interleaving of `set` and `dispose` on any threads.
/// * Releasing a `MetaDisposable` does not dispose its current disposable.
///
/// Built on CSignalRuntime's atomic slot: `set` is one compare-and-swap.
public final class MetaDisposable: Disposable {
    fileprivate let slot = _DisposableSlot()

    public init() {}

    deinit {
        slot.destroy()
    }

    /// `disposable` is taken over (`consuming`): a freshly created disposable
    /// is stored without an extra retain.
    public func set(_ disposable: consuming (any Disposable)?) {
        slot.set(disposable)
    }

    public func dispose() {
        slot.dispose()
    }
}

extension MetaDisposable {
    /// Whether `dispose()` was called.
    var isDisposed: Bool { slot.isDisposed }
}

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

/// Disposes an object that was stored as a `Disposable`, through a direct
/// call for SignalKit's own types and a protocol cast otherwise (the cast
/// is a runtime conformance lookup; the common types are recognised by one
/// comparison of their type each).
@inline(__always)
func _dispose(_ object: AnyObject) {
    let type = ObjectIdentifier(Swift.type(of: object))
    if type == ObjectIdentifier(ActionDisposable.self) {
        unsafeDowncast(object, to: ActionDisposable.self).dispose()
    } else if type == ObjectIdentifier(MetaDisposable.self) {
        unsafeDowncast(object, to: MetaDisposable.self).dispose()
    } else if type == ObjectIdentifier(_EmptyDisposable.self) {
        return
    } else if let subscription = object as? _SubscriptionBase {
        subscription.dispose()
    } else {
        (object as! any Disposable).dispose()
    }
}
