// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Taking: operators that end a signal early or keep only some of its values by
// position (first, last).
// This file: SwiftSignalKit's `takeLast` (the last value) and `last` (the last
// value as an Optional), and ReactiveCocoa's `takeLast:` (the overload
// `takeLast(_ count: Int)`).

/// Emits only the last value, when the upstream completes.
///
/// SwiftSignalKit's `takeLast`.
///
/// Marble: `"a-b-c-|"` → `"------(c|)"`; `"---|"` → `"---|"`
///
/// - Parameters:
///   - signal: the upstream signal.
/// - Returns: a signal that emits the upstream's last value (if there was
///   one) and then completes.
///
/// - Threading: no thread hop; the last value is emitted on the thread that
///   completes.
/// - Termination: on completion emits the last value (nothing if there was
///   none) then completes; an error is forwarded without emitting.
/// - Disposal: returns the upstream handle.
public func takeLast<T, E>(_ signal: Signal<T, E>) -> Signal<T, E> {
    _lift(signal, "takeLast") { _TakeLastSink(downstream: $0) }
}

/// Emits the last value as an optional when the upstream completes (`nil` if
/// there was none).
///
/// SwiftSignalKit's `last`.
///
/// Marble: `"a-b-|"` → `"----(b|)"`; `"---|"` → `"---(nil|)"`
///
/// - Parameters:
///   - signal: the upstream signal.
/// - Returns: a signal of exactly one optional value (then completion), or
///   of the upstream's error.
///
/// - Threading: no thread hop.
/// - Termination: on completion emits `last` (or `nil`) then completes; an
///   error is forwarded without emitting.
/// - Disposal: returns the upstream handle.
public func last<T, E>(signal: Signal<T, E>) -> Signal<T?, E> {
    _lift(signal, "last") { _LastSink(downstream: $0) }
}

struct _TakeLastSink<T, E>: _PassThroughSink {
    typealias Input = T
    typealias Output = T
    typealias Failure = E
    let downstream: Subscriber<T, E>
    let state = _LastValueState<T>()

    func putNext(_ value: T, from _: _SubscriptionBase) {
        _ = state.replace(with: value)
    }

    func putCompletion() {
        if let last = state.take() {
            last.deliver { downstream.putNext($0) }
        }
        downstream.putCompletion()
    }
}

struct _LastSink<T, E>: _PassThroughSink {
    typealias Input = T
    typealias Output = T?
    typealias Failure = E
    let downstream: Subscriber<T?, E>
    let state = _LastValueState<T>()

    func putNext(_ value: T, from _: _SubscriptionBase) {
        _ = state.replace(with: value)
    }

    func putCompletion() {
        if let last = state.take() {
            last.deliver { downstream.putNext($0) }
        } else {
            downstream.putNext(nil)
        }
        downstream.putCompletion()
    }
}

/// The last value received, per subscription (`takeLast`, `last`).
final class _LastValueState<T>: @unchecked Sendable {
    // `@unchecked Sendable`: `value` is guarded by `_LockedState`.
    private let value = _LockedState<_InContext<T>?>(nil)

    /// Stores `newValue`; returns the value it replaces, to be released by
    /// the caller outside the lock.
    func replace(with newValue: T) -> _InContext<T>? {
        let newValue = _InContext(capturing: newValue)
        return value.withLock { value in
            let replaced = value
            value = newValue
            return replaced
        }
    }

    /// Takes the stored value out (nil if none).
    func take() -> _InContext<T>? {
        value.withLock { $0.take() }
    }
}

// MARK: - takeLast(n)

/// When the upstream completes, sends its last `count` values, then
/// completes (RAC's `takeLast:`).
///
/// Marble: `"a-b-c-|"` with `count = 2` → `"------(bc|)"`
///
/// SwiftSignalKit's `takeLast` (no count: `signal |> takeLast`) keeps the
/// last value only; this overload takes the count.
///
/// - Parameters:
///   - count: how many values to keep; `0` (or less) keeps none (the result
///     then only completes).
/// - Returns: a function from a signal to the signal of its last values.
///
/// - Threading: no thread hop; the values are sent on the completing thread.
/// - Termination: on completion sends the kept values, oldest first, then
///   completes; an error is forwarded without sending them.
/// - Disposal: returns the upstream handle; the kept values are released
///   when sent (or with the subscription).
public func takeLast<T, E>(_ count: Int) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("takeLast", arguments: "\(count)") { subscriber in
        _TakeLastCountSink(downstream: subscriber, count: max(0, count))
    }
}

/// The last `count` values, in a ring.
struct _RingBuffer<Element> {
    private var storage: [Element] = []
    private var start = 0
    let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Appends `element`; returns the element it pushes out, if any.
    mutating func append(_ element: Element) -> Element? {
        guard capacity > 0 else { return element }
        if storage.count < capacity {
            storage.append(element)
            return nil
        }
        var evicted = element
        swap(&storage[start], &evicted)
        start = (start + 1) % capacity
        return evicted
    }

    /// Takes the elements out, oldest first.
    mutating func removeAll() -> [Element] {
        defer {
            storage = []
            start = 0
        }
        return Array(storage[start...] + storage[..<start])
    }
}

struct _TakeLastCountSink<T, E>: _PassThroughSink {
    typealias Input = T
    typealias Output = T
    typealias Failure = E
    let downstream: Subscriber<T, E>
    let ring: _GuardedValue<_RingBuffer<_InContext<T>>>

    init(downstream: Subscriber<T, E>, count: Int) {
        self.ring = _GuardedValue(_RingBuffer(capacity: count))
        self.downstream = downstream
    }

    func putNext(_ value: T, from _: _SubscriptionBase) {
        // The evicted value is released here, outside the lock.
        let value = _InContext(capturing: value)
        _ = ring.withLock { $0.append(value) }
    }

    func putCompletion() {
        for value in ring.withLock({ $0.removeAll() }) {
            value.deliver { downstream.putNext($0) }
        }
        downstream.putCompletion()
    }
}
