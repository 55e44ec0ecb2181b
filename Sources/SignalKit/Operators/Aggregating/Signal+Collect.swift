// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Aggregating: operators that fold values into accumulated results.
//
// This file: ReactiveCocoa's `collect`.

// MARK: - collect

/// Sends all the values as one array when the upstream completes (RAC's
/// `collect`).
///
/// Marble: `"a-b-c-|"` → `"------([a,b,c]|)"`; `"--|"` → `"--([]|)"`
///
/// - Parameters:
///   - signal: the upstream signal.
/// - Returns: a signal of one array. Use it as `signal |> collect`.
///
/// - Threading: no thread hop; the array is sent on the completing thread.
/// - Termination: completion sends the array then completes; an error is
///   forwarded and the values are dropped.
/// - Disposal: returns the upstream handle.
public func collect<T, E>(_ signal: Signal<T, E>) -> Signal<[T], E> {
    _lift(signal, "collect") { _CollectSink(downstream: $0) }
}

struct _CollectSink<T, E>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let downstream: Subscriber<[T], E>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let values = _GuardedValue<[T]>([])

    func putNext(_ value: T, from _: _SubscriptionBase) {
        values.withLock { $0.append(value) }
    }

    func putError(_ error: E) {
        // The values are released here, outside the lock.
        _ = values.exchange([])
        downstream.putError(error)
    }

    func putCompletion() {
        downstream.putNext(values.exchange([]))
        downstream.putCompletion()
    }
}
