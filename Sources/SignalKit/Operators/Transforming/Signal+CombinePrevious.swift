// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Transforming: operators that turn each value (or error) into another.
// This file: ReactiveCocoa's `combinePrevious`.

// MARK: - combinePrevious

/// Combines each value with the one before it (`start` for the first) (RAC's
/// `combinePreviousWithStart:reduce:`).
///
/// Marble: `"1-2-4-|"` with `combinePrevious(0, { $1 - $0 })` → `"1-1-2-|"`
///
/// - Parameters:
///   - start: the "previous" of the first value.
///   - reduce: `(previous, current) -> result`, called once per value,
///     outside any lock.
/// - Returns: a function from a signal to the signal of results.
///
/// - Threading: no thread hop; the source must deliver serially.
/// - Termination: forwarded unchanged.
/// - Disposal: returns the upstream handle.
public func combinePrevious<T: Sendable, R, E>(
    _ start: T,
    _ reduce: @escaping @Sendable (T, T) -> R
) -> (Signal<T, E>) -> Signal<R, E> {
    _lift("combinePrevious", arguments: _debugArgument(start)) { subscriber in
        _CombinePreviousSink(downstream: subscriber, start: start, reduce: reduce)
    }
}

struct _CombinePreviousSink<T, R, E>: _PassThroughSink {
    typealias Input = T
    typealias Output = R
    typealias Failure = E
    let downstream: Subscriber<R, E>
    let reduce: (T, T) -> R
    let previous: _GuardedValue<T>

    init(downstream: Subscriber<R, E>, start: T, reduce: @escaping @Sendable (T, T) -> R) {
        self.reduce = reduce
        self.previous = _GuardedValue(start)
        self.downstream = downstream
    }

    func putNext(_ value: T, from _: _SubscriptionBase) {
        let before = previous.exchange(value)
        downstream.putNext(reduce(before, value))
    }
}
