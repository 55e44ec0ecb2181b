// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Sinks shared by many operators.

/// Forwards every event to a downstream subscriber unchanged.
final class _ForwardSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    init(downstream: Subscriber<T, E>) {
        self.downstream = downstream
    }

    override func putNext(_ value: T) { downstream.putNext(value) }
    override func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() { downstream.putCompletion() }
}

/// One mutable value of a sink's subscription, behind a pthread mutex. The
/// operators that use it read and write it outside their user closures and
/// downstream calls, and release replaced values after unlocking.
///
/// `@unchecked Sendable`: `value` is only accessed with `mutex` held.
final class _GuardedValue<Value>: @unchecked Sendable {
    private let mutex = _Mutex()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    deinit {
        mutex.destroy()
    }

    /// A copy of the value.
    func load() -> Value {
        mutex.withLock { value }
    }

    /// Stores `newValue`; returns the replaced value (the caller releases it,
    /// outside the lock).
    @discardableResult
    func exchange(_ newValue: Value) -> Value {
        var replaced = newValue
        mutex.withLock { swap(&value, &replaced) }
        return replaced
    }

    /// Runs `body` on the value under the lock. `body` must not call out.
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        mutex.withLock { body(&value) }
    }
}
