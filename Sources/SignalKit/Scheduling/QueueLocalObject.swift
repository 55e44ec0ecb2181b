// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// An object that lives on, and is only used on, one queue.
///
/// The value is created on `queue` (asynchronously, or inline when the
/// initialiser runs on `queue`) and released there when the
/// `QueueLocalObject` dies.
///
/// `Sendable` whatever `T` is: the object never leaves its queue (it is
/// created there, passed only to closures that run there, and `unsafeGet()`
/// asserts the queue), which is what lets a non-`Sendable` object be shared.
public final class QueueLocalObject<T: AnyObject>: Sendable {
    public let queue: Queue
    // Unsafe: only touched on `queue` (and in deinit, which happens after the
    // generating block, which retains self).
    private nonisolated(unsafe) var valueRef: Unmanaged<T>?

    public init(queue: Queue, generate: @escaping @Sendable () -> T) {
        self.queue = queue
        self.queue.async {
            self.valueRef = Unmanaged.passRetained(generate())
        }
    }

    deinit {
        if let valueRef {
            // Transfer: the block is the only user of the reference.
            nonisolated(unsafe) let valueRef = valueRef
            queue.async { valueRef.release() }
        }
    }

    /// The value. Must be called on `queue`.
    public func unsafeGet() -> T? {
        assert(queue.isCurrent(), "QueueLocalObject.unsafeGet() called off its queue; use with/syncWith")
        return valueRef?.takeUnretainedValue()
    }

    /// Calls `f` with the value on `queue` (inline when already there).
    public func with(_ f: @escaping @Sendable (T) -> Void) {
        queue.async {
            if let value = self.valueRef?.takeUnretainedValue() {
                f(value)
            }
        }
    }

    /// Calls `f` with the value on `queue`, waiting for the result.
    public func syncWith<R: Sendable>(_ f: @escaping @Sendable (T) -> R) -> R {
        var result: R?
        queue.sync {
            if let value = self.valueRef?.takeUnretainedValue() {
                result = f(value)
            }
        }
        guard let result else {
            _signalKitMisuse("QueueLocalObject.syncWith: the value was not created (generate() did not run)")
        }
        return result
    }

    /// A signal whose generator runs `f` with the value on `queue` (inline
    /// when started there; disposing before the queue runs it skips `f`). The
    /// signal holds the object weakly: if it is gone, the signal does nothing.
    public func signalWith<R, E>(_ f: @escaping @Sendable (T, Subscriber<R, E>) -> any Disposable) -> Signal<R, E> {
        Signal<R, E> { [weak self] subscriber in
            if let self, let value = self.valueRef?.takeUnretainedValue() {
                return f(value, subscriber)
            }
            return EmptyDisposable
        } |> runOn(queue)
    }
}
