// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Flattening: operators that turn a signal of signals (or several signals) into one,
// keeping the values of every inner signal.
//
// This file: ReactiveCocoa's `then:`, here `ignoreValuesThen` (SwiftSignalKit's
// `then` keeps the first signal's values).

// MARK: - ignoreValuesThen (RAC's then:)

/// Drops this signal's values and, when it completes, subscribes to the
/// signal `next` returns (RAC's `then:`).
///
/// Marble: `"a-b-|"` with `next() = "1-2-|"` → `"----1-2-|"`; `"a-#e"` →
/// `"--#e"`
///
/// Not SwiftSignalKit's `then(_:)`, which keeps the first signal's values
/// (that one is RAC's `concat:`). Useful to run a signal for its side effects
/// and continue with another:
///
/// ```swift
/// let sequenced = letters |> doNext { print($0) } |> ignoreValuesThen { numbers }
/// ```
///
/// - Parameters:
///   - next: called when this signal completes (once per subscription),
///     inside the completion callback; its signal is subscribed at once.
/// - Returns: a function from a signal to the signal of `next()`'s values.
///
/// - Threading: `next` runs, and its signal is subscribed, on the thread
///   that delivers the completion.
/// - Termination: an error of this signal is forwarded (`next` is not
///   called); otherwise `next()`'s signal's events are forwarded.
/// - Disposal: as `then(_:)`; a loop `deferred { s |> ignoreValuesThen { … } }`
///   runs in constant stack.
public func ignoreValuesThen<T, R, E>(_ next: @escaping @Sendable () -> Signal<R, E>) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        let silent = Signal<R, E> { subscriber in
            signal._start(_DropValuesSink<T, R, E>(downstream: subscriber))
        }
        return (silent |> then(deferred(next)))._derived("ignoreValuesThen", from: signal)
    }
}

struct _DropValuesSink<T, R, E>: _PassThroughSink {
    typealias Input = T
    typealias Output = R
    typealias Failure = E
    let downstream: Subscriber<R, E>

    func putNext(_ value: T, from _: _SubscriptionBase) {}
}
