// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Taking: operators that end a signal early or keep only some of its values by
// position (first, last).
// This file: SwiftSignalKit's `take(_:)` and `take(until:)` (an action per value).

/// What `take(until:)` does with one value.
///
/// SwiftSignalKit's `SignalTakeAction`.
public struct SignalTakeAction {
    /// Whether the value is emitted.
    public let passthrough: Bool
    /// Whether the signal completes after the value (emitted or not).
    public let complete: Bool

    public init(passthrough: Bool, complete: Bool) {
        self.passthrough = passthrough
        self.complete = complete
    }
}

extension SignalTakeAction: Sendable {}

/// Passes the first `count` values, then completes.
///
/// SwiftSignalKit's `take`.
///
/// Marble: `"a-b-c-d-|"` → (`take(2)`) `"a-(b|)"`
///
/// The completion follows the `count`-th value immediately, and then the
/// upstream subscription is disposed (log: `next b`, `completed`,
/// `a.dispose#1`). An upstream that emits synchronously inside its generator
/// is disposed as soon as its generator returns.
///
/// Legacy quirk kept: `take(0)` passes nothing and completes **only when the
/// upstream completes** (`single(1) |> take(0)` just completes; `never()
/// |> take(0)` never does).
///
/// - Parameters:
///   - count: how many values to pass.
/// - Returns: a function from a signal to the truncated signal.
///
/// - Threading: no thread hop. The values are counted with an atomic
///   counter: even if a misbehaving source calls concurrently, at most
///   `count` values are delivered, with no duplicates, exactly one
///   completion, and the upstream is disposed once.
/// - Termination: an error or completion before the limit is forwarded.
/// - Disposal: returns the upstream handle.
public func take<T, E>(_ count: Int) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("take", arguments: "\(count)") { subscriber in
        _TakeSink(downstream: subscriber, limit: count)
    }
}

/// Passes values until `until` says to complete.
///
/// Marble: `"1-2-3-4-|"` → (complete at 3, passthrough) `"1-2-(3|)"`
///
/// For each value: emits it if `passthrough`, then completes if `complete`.
///
/// ```swift
/// let untilDone = progress |> take(until: { p in
///     SignalTakeAction(passthrough: true, complete: p >= 1.0)
/// })
/// ```
///
/// - Parameters:
///   - until: called for each value, on the delivering thread.
/// - Returns: a function from a signal to the truncated signal.
///
/// - Threading: no thread hop.
/// - Termination: an upstream error or completion is forwarded. After
///   completing, the upstream is disposed; an upstream that keeps emitting
///   synchronously inside its generator still has `until` called for those
///   values (as in SwiftSignalKit), but nothing more is delivered.
/// - Disposal: returns the upstream handle.
public func take<T, E>(until: @escaping @Sendable (T) -> SignalTakeAction) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("take(until:)") { subscriber in
        _TakeUntilSink(downstream: subscriber, until: until)
    }
}

// MARK: - Sinks

struct _TakeSink<T, E>: _PassThroughSink, ~Copyable {
    typealias Input = T
    typealias Output = T
    typealias Failure = E
    let downstream: Subscriber<T, E>
    let limit: Int
    let counter = Synchronization.Atomic<Int>(0)

    func putNext(_ value: T, from _: _SubscriptionBase) {
        // `take(0)` (or a negative count) passes nothing and never completes
        // on values; skipping the counter also keeps it from ever wrapping.
        guard limit > 0 else { return }
        let count = counter.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue
        guard count > 0, count <= limit else { return }
        downstream.putNext(value)
        if count == limit {
            downstream.putCompletion()
        }
    }
}

struct _TakeUntilSink<T, E>: _PassThroughSink {
    typealias Input = T
    typealias Output = T
    typealias Failure = E
    let downstream: Subscriber<T, E>
    let until: @Sendable (T) -> SignalTakeAction

    func putNext(_ value: T, from _: _SubscriptionBase) {
        let action = until(value)
        if action.passthrough {
            downstream.putNext(value)
        }
        if action.complete {
            downstream.putCompletion()
        }
    }
}
