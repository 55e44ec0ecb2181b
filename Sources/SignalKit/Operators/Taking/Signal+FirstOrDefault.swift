// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Taking: operators that end a signal early or keep only some of its values by
// position (first, last).
// This file: ReactiveCocoa's `firstOrDefault:` and a last value with a default:
// `firstOrDefault(_:)` / `lastOrDefault(_:)`.

// MARK: - firstOrDefault, lastOrDefault

/// Sends the first value and completes; if the upstream completes without a
/// value, sends `defaultValue` and completes (RAC's `firstOrDefault:`, as a
/// signal instead of a blocking call).
///
/// Marble: `"--a-b-|"` → `"--(a|)"`; `"---|"` → `"---(d|)"`
///
/// For the blocking-free accessor returning the value itself, see
/// `Signal.first()` (async).
///
/// - Parameters:
///   - defaultValue: sent when the upstream completes without a value.
/// - Returns: a function from a signal to a signal of exactly one value.
///
/// - Threading: no thread hop.
/// - Termination: completes after the first value (the downstream's
///   completion then disposes the upstream) or after the default; an error
///   before the first value is forwarded.
/// - Disposal: returns the upstream handle.
public func firstOrDefault<T: Sendable, E>(_ defaultValue: T) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("firstOrDefault", arguments: _debugArgument(defaultValue)) { subscriber in
        _FirstOrDefaultSink(downstream: subscriber, defaultValue: defaultValue)
    }
}

struct _FirstOrDefaultSink<T, E>: _PassThroughSink, ~Copyable {
    typealias Input = T
    typealias Output = T
    typealias Failure = E
    let downstream: Subscriber<T, E>
    let defaultValue: T
    let done = Synchronization.Atomic<Bool>(false)

    func putNext(_ value: T, from _: _SubscriptionBase) {
        guard !done.exchange(true, ordering: .acquiringAndReleasing) else { return }
        downstream.putNext(value)
        downstream.putCompletion()
    }

    func putCompletion() {
        if !done.exchange(true, ordering: .acquiringAndReleasing) {
            downstream.putNext(defaultValue)
        }
        downstream.putCompletion()
    }
}

/// When the upstream completes, sends its last value, or `defaultValue` if
/// it sent none, then completes.
///
/// Marble: `"a-b-|"` → `"----(b|)"`; `"---|"` → `"---(d|)"`
///
/// SwiftSignalKit's `last(signal:)` sends an Optional (`nil` when there was
/// no value); this one sends a `T`.
///
/// - Parameters:
///   - defaultValue: sent when the upstream completes without a value.
/// - Returns: a function from a signal to a signal of exactly one value.
///
/// - Threading: no thread hop; the value is sent on the completing thread.
/// - Termination: completion sends the value then completes; an error is
///   forwarded without sending.
/// - Disposal: returns the upstream handle.
public func lastOrDefault<T: Sendable, E>(_ defaultValue: T) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("lastOrDefault", arguments: _debugArgument(defaultValue)) { subscriber in
        _LastOrDefaultSink(downstream: subscriber, defaultValue: defaultValue)
    }
}

struct _LastOrDefaultSink<T, E>: _PassThroughSink {
    typealias Input = T
    typealias Output = T
    typealias Failure = E
    let downstream: Subscriber<T, E>
    let defaultValue: T
    let last = _GuardedValue<_InContext<T>?>(nil)

    func putNext(_ value: T, from _: _SubscriptionBase) {
        // The replaced value is released here, outside the lock.
        _ = last.exchange(_InContext(capturing: value))
    }

    func putCompletion() {
        if let last = last.exchange(nil) {
            last.deliver { downstream.putNext($0) }
        } else {
            downstream.putNext(defaultValue)
        }
        downstream.putCompletion()
    }
}
