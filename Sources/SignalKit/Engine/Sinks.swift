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
    /// or nil (see `_InlineSink.downstreamSubscription`).
    var _forwardedSubscription: _SubscriptionBase? { get }
}

extension Subscriber: _EventReceiver {
    typealias Value = T
    typealias Failure = E
    var _forwardedSubscription: _SubscriptionBase? { _subscriptionBase }
}

/// Forwards every event unchanged to a receiver (usually a downstream
/// subscriber), which it holds for its own lifetime.
struct _ForwardSink<Receiver: _EventReceiver>: _InlineSink {
    let downstream: Receiver
    var downstreamSubscription: _SubscriptionBase? { downstream._forwardedSubscription }

    @inline(__always) func putNext(_ value: Receiver.Value, from _: _SubscriptionBase) { downstream.putNext(value) }
    func putError(_ error: Receiver.Failure) { downstream.putError(error) }
    func putCompletion() { downstream.putCompletion() }
}

/// An inline operator sink that passes error and completion straight
/// through to its one downstream subscriber, and whose work is all for that
/// subscriber's subscription. Conforming sinks implement `putNext` (and, to
/// do more than forward it, `putCompletion`).
protocol _PassThroughSink<Input, Output, Failure>: _InlineSink, ~Copyable {
    associatedtype Output
    var downstream: Subscriber<Output, Failure> { get }
}

extension _PassThroughSink where Self: ~Copyable {
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    func putError(_ error: Failure) { downstream.putError(error) }
    func putCompletion() { downstream.putCompletion() }
}

/// The run of a loop operator (`then`, `restart` and its family, `retry`):
/// it subscribes its source again and again, each time through a
/// `_LoopSink`, and decides what a source's error or completion does:
/// forward it to the downstream, or subscribe the next source.
protocol _LoopRun<Value, SourceFailure, Failure>: AnyObject {
    associatedtype Value
    associatedtype SourceFailure
    associatedtype Failure
    func sourceFailed(_ error: SourceFailure, downstream: Subscriber<Value, Failure>)
    func sourceCompleted(downstream: Subscriber<Value, Failure>)
}

/// The sink of each subscription a loop run makes: values go straight to
/// the downstream; error and completion go to the run.
struct _LoopSink<Run: _LoopRun>: _InlineSink {
    typealias Input = Run.Value
    typealias Failure = Run.SourceFailure

    let run: Run
    let downstream: Subscriber<Run.Value, Run.Failure>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    func putNext(_ value: Run.Value, from _: _SubscriptionBase) { downstream.putNext(value) }
    func putError(_ error: Run.SourceFailure) { run.sourceFailed(error, downstream: downstream) }
    func putCompletion() { run.sourceCompleted(downstream: downstream) }
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
