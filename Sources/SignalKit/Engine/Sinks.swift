// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Sinks shared by many operators.

/// What a `_ForwardSink` hands its events to: a downstream `Subscriber`, a
/// `_SerialDelivery`, a subject, an operator's state.
protocol _EventReceiver<Value, Failure>: AnyObject {
    associatedtype Value
    associatedtype Failure
    func putNext(_ value: Value)
    func putError(_ error: Failure)
    func putCompletion()
    /// The `downstreamSubscription` of a sink forwarding to this receiver:
    /// the one downstream subscription everything the receiver does is for,
    /// or nil (see `_Sink.downstreamSubscription`).
    var _forwardedSubscription: _SubscriptionBase? { get }
}

extension Subscriber: _EventReceiver {
    typealias Value = T
    typealias Failure = E
    var _forwardedSubscription: _SubscriptionBase? { _subscriptionBase }
}

/// Forwards every event unchanged to a receiver (usually a downstream
/// subscriber), which it holds for its own lifetime.
final class _ForwardSink<Receiver: _EventReceiver>: _Sink<Receiver.Value, Receiver.Failure>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable; the receiver is thread-safe.
    let downstream: Receiver
    override var downstreamSubscription: _SubscriptionBase? { downstream._forwardedSubscription }

    init(downstream: Receiver) {
        self.downstream = downstream
    }

    override func putNext(_ value: Receiver.Value) { downstream.putNext(value) }
    override func putError(_ error: Receiver.Failure) { downstream.putError(error) }
    override func putCompletion() { downstream.putCompletion() }
}

/// The base of an operator sink that passes error and completion straight
/// through to its one downstream subscriber, and whose work is all for that
/// subscriber's subscription. Subclasses override `putNext` (and, to do more
/// than forward it, `putCompletion`).
class _PassThroughTerminalSink<T, U, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: `downstream` is immutable; subclasses name
    // their own guards.
    let downstream: Subscriber<U, E>
    override final var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    init(downstream: Subscriber<U, E>) {
        self.downstream = downstream
    }

    override final func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() { downstream.putCompletion() }
}

/// One mutable value of a sink's subscription, behind a pthread mutex. The
/// operators that use it read and write it outside their user closures and
/// downstream calls, and release replaced values after unlocking.
///
/// `@unchecked Sendable`: the value is guarded by `_LockedState`.
final class _GuardedValue<Value>: @unchecked Sendable {
    private let state: _LockedState<Value>

    init(_ value: Value) {
        state = _LockedState(value)
    }

    /// A copy of the value.
    func load() -> Value {
        state.withLock { $0 }
    }

    /// Stores `newValue`; returns the replaced value (the caller releases it,
    /// outside the lock).
    @discardableResult
    func exchange(_ newValue: Value) -> Value {
        var replaced = newValue
        state.withLock { swap(&$0, &replaced) }
        return replaced
    }

    /// Runs `body` on the value under the lock. `body` must not call out.
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        state.withLock(body)
    }
}
