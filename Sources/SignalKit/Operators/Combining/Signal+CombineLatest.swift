// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Combining: operators that combine the values of several signals into one value
// (`combineLatest`, `zip`, `sample`). Merging and concatenation are in Flattening.
//
// This file: SwiftSignalKit's `combineLatest`.
//
// One engine serves all 27 public forms (arities 2…26 in
// GENERATED-Signal+CombineLatest+Arities.swift, the 2-ary initial-values form and the
// array form below). Storage is typed: each input's latest value lives in a
// `_CombineLatestSlot<T>` of its own type, guarded by the per-subscription
// state's mutex; the state counts the inputs that have a value and calls a
// `combine` closure (built by each form over its slots) to read a snapshot.
// No `Any`, no casts on the per-value path.
//
// Why slots rather than one `(T1?, …, Tn?)` tuple: writing element k of a
// generic tuple needs the metadata of the whole tuple, so per-input code
// would grow with the arity (O(n²) code per overload: megabytes of object
// code and seconds of release build time over the 26 arities). With slots,
// an overload's code is linear in its arity.
//
// A slot whose value is `nil` (the outer Optional) has no value yet; an input
// of Optional type that sends `nil` stores `.some(nil)`, which counts.

/// Emits the latest values of two signals as a tuple, starting from initial
/// values.
///
/// SwiftSignalKit's `combineLatest` with initial values.
///
/// Marble: `"--x---|"`, `"----y-|"` with initial values `1`, `a` →
/// `"(1,a)--(x,a)--(x,y)-|"` (the first tuple is emitted before any input is
/// subscribed).
///
/// - Parameters:
///   - queue: if not nil, each input is wrapped in `deliverOn(queue)`, so the
///     inputs' events are combined and delivered on `queue`. The initial
///     tuple is still emitted synchronously, on the subscribing thread.
///   - s1: the first input.
///   - v1: the value `s1` is assumed to have sent before it sends anything.
///   - s2: the second input.
///   - v2: the value `s2` is assumed to have sent before it sends anything.
/// - Returns: a signal of `(T1, T2)` tuples: `(v1, v2)` first, then one
///   tuple per input value (no de-duplication).
///
/// **Threading:** the initial tuple is emitted synchronously, before the
/// inputs are subscribed (in argument order, on the subscribing thread). A
/// tuple is emitted on the thread of the input value that produced it,
/// outside any lock: with inputs sending concurrently from several threads,
/// downstream may see tuples out of order (each one is consistent, and
/// there is exactly one per input value).
///
/// **Termination:** completes once every input has completed (a completed
/// input keeps contributing its last value). The first error of any input
/// is forwarded; later ones are ignored.
///
/// **Disposal:** termination or disposal disposes the inputs' subscriptions
/// in argument order.
@inlinable
public func combineLatest<T1: Sendable, T2: Sendable, E: Sendable>(
    queue: Queue? = nil,
    _ s1: Signal<T1, E>,
    _ v1: T1,
    _ s2: Signal<T2, E>,
    _ v2: T2
) -> Signal<(T1, T2), E> {
    Signal { subscriber in
        let slot1 = _CombineLatestSlot<T1>(v1)
        let slot2 = _CombineLatestSlot<T2>(v2)
        let state = _CombineLatestState(downstream: subscriber, slots: [slot1, slot2], primed: true) {
            (slot1.value!, slot2.value!)
        }
        state.emitInitialValues()
        return _CombineLatestDisposable([
            state.subscribe(s1, into: slot1, queue: queue),
            state.subscribe(s2, into: slot2, queue: queue),
        ])
    }._combined("combineLatest", inputs: [s1, s2], arguments: "initial: (\(_debugArgument(v1)), \(_debugArgument(v2)))")
}

/// Emits the latest values of an array of signals as an array.
///
/// SwiftSignalKit's `combineLatest` over an array.
///
/// Marble: `["1---2-|", "--a---|"]` → `"--[1,a]-[2,a]-|"`; `[]` → `"([])|"`.
///
/// - Parameters:
///   - queue: if not nil, each input is wrapped in `deliverOn(queue)`, so the
///     inputs' events are combined and delivered on `queue`.
///   - signals: the inputs. An empty array gives a signal that emits `[]`
///     and completes synchronously (`queue` is then not used).
/// - Returns: a signal of arrays (element `i` is the latest value of
///   `signals[i]`): nothing until every input has sent a value, then one
///   array per input value (no de-duplication).
///
/// **Threading:** inputs are subscribed in array order on the subscribing
/// thread. An array is emitted on the thread of the input value that
/// produced it, outside any lock: with inputs sending concurrently from
/// several threads, downstream may see arrays out of order (each one is
/// consistent, and there is exactly one per input value after priming).
///
/// **Termination:** completes once every input has completed (also when some
/// input completed without a value: then no array was ever emitted). The first
/// error of any input is forwarded; later ones are ignored. If an input fails
/// synchronously while being subscribed, the remaining inputs are still
/// subscribed (their events are dropped) and disposed as soon as the
/// subscription is set up.
///
/// **Disposal:** termination or disposal disposes the inputs' subscriptions
/// in array order.
@inlinable
public func combineLatest<T: Sendable, E: Sendable>(queue: Queue? = nil, _ signals: [Signal<T, E>]) -> Signal<[T], E> {
    if signals.isEmpty {
        return .single([])
    }
    return Signal { subscriber in
        let slots = signals.map { _ in _CombineLatestSlot<T>() }
        let state = _CombineLatestState(downstream: subscriber, slots: slots, primed: false) {
            slots.map { $0.value! }
        }
        return _CombineLatestDisposable(
            signals.indices.map { index in
                state.subscribe(signals[index], into: slots[index], queue: queue)
            })
    }._combined("combineLatest", inputs: signals)
}

// MARK: - The engine
//
// Specialisation: the public forms, the state's per-value path and the
// sinks' forwarding functions are `@inlinable`, so a client that combines
// `Signal<Int, E>`s runs code specialised for `Int` and `(Int, Int)`. A sink
// is reached through the class vtable, whose entries are the unspecialised
// generic methods; so `_CombineLatestSink.putNext` only forwards the value to
// a function built (specialised) at the subscription site. Unspecialised,
// each value would pay for four generic metadata lookups (`Optional<T>`,
// `Optional<R>`, the tuple type) and generic value-witness calls, several
// times W5's cost per send (Benchmarks/README.md has W5's figure).

/// The latest value of one input. `value` is guarded by the mutex of the
/// `_CombineLatestState` the slot belongs to.
@usableFromInline
class _CombineLatestSlotBase: @unchecked Sendable {
    @inlinable init() {}

    /// Releases the value; called once the output has terminated, when
    /// nothing reads or writes the slot any more.
    @usableFromInline func clear() {}
}

@usableFromInline
final class _CombineLatestSlot<T>: _CombineLatestSlotBase, @unchecked Sendable {
    /// nil: no value yet.
    @exclusivity(unchecked) @usableFromInline var value: T?

    @inlinable
    init(_ value: T? = nil) {
        self.value = value
    }

    @usableFromInline override func clear() {
        value = nil
    }
}

/// The per-subscription state of `combineLatest`. A form creates the slots,
/// the state (with a `combine` closure reading the slots), then subscribes
/// the inputs in argument order with `subscribe(_:into:queue:)` — every
/// input, even when an earlier one failed synchronously (its events are then
/// dropped, and its handle is disposed when the generator returns).
///
/// `@unchecked Sendable`: the slots' values, `valueCount`, `completedCount`
/// and `terminated` are guarded by `mutex`; the rest is immutable.
/// Downstream is called after unlocking. The mutex is what makes accesses
/// exclusive, so these variables are `@exclusivity(unchecked)`: Swift's
/// dynamic check (`swift_beginAccess`, a thread-local access set) cost more
/// than the mutex itself on this path.
@usableFromInline
final class _CombineLatestState<R, E: Sendable>: @unchecked Sendable {
    @usableFromInline let downstream: Subscriber<R, E>
    @usableFromInline let slots: [_CombineLatestSlotBase]
    /// Builds the output from the slots; called under the mutex, once every
    /// slot has a value.
    @usableFromInline let combine: () -> R
    @usableFromInline let mutex = _Mutex()
    /// How many slots have a value.
    @exclusivity(unchecked) @usableFromInline var valueCount: Int
    /// How many inputs have completed.
    @exclusivity(unchecked) @usableFromInline var completedCount = 0
    /// Whether the output terminated (first error or last completion): every
    /// later event is dropped.
    @exclusivity(unchecked) @usableFromInline var terminated = false

    /// - Parameter primed: whether every slot starts with a value.
    @inlinable
    init(downstream: Subscriber<R, E>, slots: [_CombineLatestSlotBase], primed: Bool, combine: @escaping @Sendable () -> R) {
        self.downstream = downstream
        self.slots = slots
        self.valueCount = primed ? slots.count : 0
        self.combine = combine
    }

    deinit {
        mutex.destroy()
    }

    /// Emits the combination of the initial values. Call before subscribing
    /// any input.
    @inlinable
    func emitInitialValues() {
        downstream.putNext(combine())
    }

    /// Subscribes one input (through `deliverOn(queue)` if a queue is given),
    /// storing its values into `slot`; returns its handle.
    ///
    /// Never inlined: the overloads call it once per input, and inlining it
    /// (with `_start`) at every call site would multiply their code size.
    @inlinable @inline(never)
    func subscribe<T: Sendable>(_ signal: Signal<T, E>, into slot: _CombineLatestSlot<T>, queue: Queue?) -> _SubscriptionBase {
        let source = queue.map { signal |> deliverOn($0) } ?? signal
        // A non-capturing closure: no context allocation, and specialised
        // here for T, R and E.
        let sink = _CombineLatestSink(state: self, slot: slot) { state, slot, value in
            state.putNext(value, into: slot)
        }
        return source._start(sink)
    }

    @inlinable
    func putNext<T>(_ value: T, into slot: _CombineLatestSlot<T>) {
        var element: T? = value
        var output: R?
        mutex.lock()
        if !terminated {
            swap(&slot.value, &element)
            // `element` now holds the previous value: none means this is the
            // input's first value.
            if element == nil { valueCount += 1 }
            if valueCount == slots.count { output = combine() }
        }
        mutex.unlock()
        // The previous value is released here, outside the lock.
        withExtendedLifetime(element) {}
        if let output { downstream.putNext(output) }
    }

    @usableFromInline
    func putError(_ error: E) {
        mutex.lock()
        let first = !terminated
        terminated = true
        mutex.unlock()
        guard first else { return }
        downstream.putError(error)
        releaseValues()
    }

    @usableFromInline
    func inputCompleted() {
        mutex.lock()
        var last = false
        if !terminated {
            completedCount += 1
            if completedCount == slots.count {
                terminated = true
                last = true
            }
        }
        mutex.unlock()
        guard last else { return }
        downstream.putCompletion()
        releaseValues()
    }

    /// After termination (published under the mutex), nothing reads or
    /// writes the slots any more: their values are released without the lock.
    private func releaseValues() {
        for slot in slots {
            slot.clear()
        }
    }
}

/// Feeds one input's events into the shared state. Values go through
/// `forward`, a function specialised where the sink was created (see the
/// MARK above). Stored in the input subscription's tail.
@usableFromInline
struct _CombineLatestSink<T, R, E: Sendable>: _InlineSink {
    @usableFromInline typealias Input = T
    @usableFromInline typealias Failure = E
    @usableFromInline let state: _CombineLatestState<R, E>
    @usableFromInline let slot: _CombineLatestSlot<T>
    @usableFromInline let forward: @Sendable (_CombineLatestState<R, E>, _CombineLatestSlot<T>, T) -> Void

    @inlinable
    init(
        state: _CombineLatestState<R, E>,
        slot: _CombineLatestSlot<T>,
        forward: @escaping @Sendable (_CombineLatestState<R, E>, _CombineLatestSlot<T>, T) -> Void
    ) {
        self.state = state
        self.slot = slot
        self.forward = forward
    }

    @inline(__always) @usableFromInline
    func putNext(_ value: T, from _: _SubscriptionBase) { forward(state, slot, value) }
    @usableFromInline func putError(_ error: E) { state.putError(error) }
    @usableFromInline func putCompletion() { state.inputCompleted() }
}

/// The inputs' handles, disposed in subscription order.
///
/// `Sendable`: immutable; disposing a subscription is thread-safe.
@usableFromInline
final class _CombineLatestDisposable: Disposable {
    @usableFromInline let handles: [_SubscriptionBase]

    @inlinable
    init(_ handles: [_SubscriptionBase]) {
        self.handles = handles
    }

    @usableFromInline
    func dispose() {
        for handle in handles {
            handle.dispose()
        }
    }
}
