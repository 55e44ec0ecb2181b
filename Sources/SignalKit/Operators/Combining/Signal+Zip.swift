// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Combining: operators that combine the values of several signals into one value
// (`combineLatest`, `zip`, `sample`). Merging and concatenation are in Flattening.
//
// This file: ReactiveCocoa's `zip` (arities 2…26 in
// GENERATED-Signal+Zip+Arities.swift, the array form and `zipWith` here).
//
// Like `combineLatest`, zip keeps one typed slot per input (a FIFO of that
// input's unpaired values) under the state's lock, and a `combine` closure
// built by each form pops one value from every slot. Unlike
// `combineLatest`, the downstream is fed through a `_SerialDelivery`, pushed
// under the lock: tuples arrive in the order they were formed, one at a
// time, even when the inputs deliver on different threads.

/// Pairs the n-th values of the signals in an array: emits an array of each
/// input's n-th value once every input has sent its n-th value.
///
/// Marble: `["1-2-3-|", "-a---b-|"]` → `"-[1,a]---[2,b]-|"`; `[]` → `"|"`
///
/// - Parameters:
///   - signals: the inputs, subscribed in array order. An empty array gives
///     a signal that completes at once (as in ReactiveCocoa).
/// - Returns: a signal of arrays: element `i` is a value of `signals[i]`.
///
/// **Threading:** inputs are subscribed in array order on the subscribing
/// thread. An array is delivered by the thread of the input value that
/// completed it, one at a time and in the order arrays were formed (one
/// formed while the downstream is busy is delivered right after, by the
/// thread that is delivering).
///
/// **Termination:** completes as soon as an input has completed and has no
/// unpaired value left (no further array can be formed). The first error of
/// any input is forwarded.
///
/// **Disposal:** termination or disposal disposes the inputs' subscriptions in
/// array order.
public func zip<T: Sendable, E>(_ signals: [Signal<T, E>]) -> Signal<[T], E> {
    guard !signals.isEmpty else {
        return Signal<[T], E>.complete()._combined("zip", inputs: [])
    }
    return Signal { subscriber in
        let slots = signals.map { _ in _ZipSlot<T>() }
        let state = _ZipState<[T], E>(downstream: subscriber, slots: slots) {
            slots.map { $0.values.popFirst()! }
        }
        return _ZipDisposable(
            signals.indices.map { index in
                state.subscribe(signals[index], into: slots[index])
            })
    }._combined("zip", inputs: signals)
}

/// Pairs the n-th values of this signal and `other` (RAC's `zipWith:`;
/// `zip(signal, other)`).
///
/// Marble: `"1-2-3-|"` zipWith `"-a---b-|"` → `"-(1,a)---(2,b)-|"`
///
/// - Parameters:
///   - other: the second input, subscribed after this one.
/// - Returns: a function from a signal to the signal of pairs.
///
/// **Threading:** as `zip(_:_:)`.
///
/// **Termination:** as `zip(_:_:)`.
///
/// **Disposal:** as `zip(_:_:)`.
public func zipWith<T: Sendable, U: Sendable, E>(_ other: Signal<U, E>) -> (Signal<T, E>) -> Signal<(T, U), E> {
    { signal in
        zip(signal, other)._derived("zipWith", from: signal, arguments: other.description)
    }
}

// MARK: - The zip engine

/// The unpaired values of one input. `values` and `completed` are guarded by
/// the lock (`_LockedState`) of the `_ZipState` the slot belongs to.
class _ZipSlotBase: @unchecked Sendable {
    /// The input completed.
    var completed = false

    var isEmpty: Bool { true }

    /// Releases the values; called once the output has terminated.
    func clear() {}
}

final class _ZipSlot<T>: _ZipSlotBase, @unchecked Sendable {
    var values = _FIFO<T>()

    override var isEmpty: Bool { values.isEmpty }

    override func clear() {
        values = _FIFO()
    }
}

/// The per-subscription state of `zip`. A form creates the slots, the state
/// (with a `combine` closure popping one value from every slot), then
/// subscribes the inputs in argument order with `subscribe(_:into:)`.
///
/// `@unchecked Sendable`: `filled` and `terminated` are guarded by
/// `_LockedState`, and so are the slots' contents (read and written only
/// inside its `withLock`, or after termination); the rest is immutable.
final class _ZipState<R, E>: @unchecked Sendable {
    private struct State {
        /// How many slots hold at least one value.
        var filled = 0
        var terminated = false
    }

    let delivery: _SerialDelivery<R, E>
    let slots: [_ZipSlotBase]
    /// Pops one value from every slot and builds the output; called under the
    /// lock, when every slot has a value.
    let combine: () -> R
    private let state = _LockedState(State())

    init(downstream: Subscriber<R, E>, slots: [_ZipSlotBase], combine: @escaping @Sendable () -> R) {
        self.delivery = _SerialDelivery(downstream: downstream)
        self.slots = slots
        self.combine = combine
    }

    /// Subscribes one input, storing its values into `slot`; returns its
    /// handle.
    func subscribe<T>(_ signal: Signal<T, E>, into slot: _ZipSlot<T>) -> _SubscriptionBase {
        signal._start(_ZipSink(state: self, slot: slot))
    }

    func putNext<T>(_ value: T, into slot: _ZipSlot<T>) {
        let context = _ContextHook.capture()
        let outcome = state.withLock { state -> (ended: Bool, mustDrain: Bool)? in
            guard !state.terminated else { return nil }
            if slot.values.isEmpty { state.filled += 1 }
            slot.values.append(value)
            var mustDrain = false
            if state.filled == slots.count {
                mustDrain = delivery.pushNext(combine(), .pusher(context))
                state.filled = 0
                var exhausted = false
                for slot in slots where !slot.isEmpty {
                    state.filled += 1
                }
                for slot in slots where slot.completed && slot.isEmpty {
                    exhausted = true
                }
                if exhausted {
                    state.terminated = true
                    mustDrain = delivery.push(.completed, .pusher(context)) || mustDrain
                }
            }
            return (state.terminated, mustDrain)
        }
        guard let (ended, mustDrain) = outcome else { return }
        // Only the call that terminated gets here with `ended` (earlier
        // calls returned above): it alone releases the values.
        if ended { releaseValues() }
        if mustDrain { delivery.drain() }
    }

    func inputCompleted(_ slot: _ZipSlotBase) {
        let context = _ContextHook.capture()
        let (ended, mustDrain) = state.withLock { state -> (Bool, Bool) in
            guard !state.terminated else { return (false, false) }
            slot.completed = true
            guard slot.isEmpty else { return (false, false) }
            state.terminated = true
            return (true, delivery.push(.completed, .pusher(context)))
        }
        if ended { releaseValues() }
        if mustDrain { delivery.drain() }
    }

    func putError(_ error: E) {
        let context = _ContextHook.capture()
        let (first, mustDrain) = state.withLock { state -> (Bool, Bool) in
            let first = !state.terminated
            state.terminated = true
            return (first, first && delivery.push(.error(error), .pusher(context)))
        }
        if first { releaseValues() }
        if mustDrain { delivery.drain() }
    }

    /// After termination (published under the lock) nothing reads or
    /// writes the slots any more: their values are released without the
    /// lock, so that no value's `deinit` runs under it.
    private func releaseValues() {
        for slot in slots {
            slot.clear()
        }
    }
}

struct _ZipSink<T, R, E>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let state: _ZipState<R, E>
    let slot: _ZipSlot<T>

    func putNext(_ value: T, from _: _SubscriptionBase) { state.putNext(value, into: slot) }
    func putError(_ error: E) { state.putError(error) }
    func putCompletion() { state.inputCompleted(slot) }
}

/// The inputs' handles, disposed in subscription order.
///
/// `Sendable`: immutable; disposing a subscription is thread-safe.
final class _ZipDisposable: Disposable {
    let handles: [_SubscriptionBase]

    init(_ handles: [_SubscriptionBase]) {
        self.handles = handles
    }

    func dispose() {
        for handle in handles {
            handle.dispose()
        }
    }
}
