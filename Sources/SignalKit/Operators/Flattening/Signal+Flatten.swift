// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Flattening: operators that turn a signal of signals (or several signals) into one,
// keeping the values of every inner signal: merging (`merge`, `flatten`,
// `flattenMap`), concatenation (`concat`, `queue`, `then`, `ignoreValuesThen`)
// and `throttled`. Switching operators are in Switching.
//
// This file: ReactiveCocoa's `merge` (a pair, an array, a signal of signals)
// and `flatten` / `flattenMap` (merge the inner signals of a signal of signals,
// optionally at most n at a time), and the merge engine `concat` shares.
//
// SwiftSignalKit names to keep apart: its `mapToSignal` SWITCHES (RAC's
// `flattenMap` MERGES), and its `then` keeps the first signal's values (it is
// RAC's `concat:`; RAC's `then:` drops them, here `ignoreValuesThen`).
//
// Every merging operator feeds the downstream through a `_SerialDelivery`:
// inputs delivering on different threads never make the downstream's
// callbacks overlap.

// MARK: - merge

/// Forwards the events of all the signals as they arrive; completes when all
/// have completed.
///
/// ReactiveCocoa's `+merge:`.
///
/// Marble: `["a---b-|", "--1---2-|"]` → `"a-1-b-2-|"`; `[]` → `"|"`
///
/// ```swift
/// let merged = merge([letters, numbers])   // A 1 B C 2 (seed 002)
/// ```
///
/// - Parameters:
///   - signals: the inputs, subscribed in array order when the result is
///     subscribed.
/// - Returns: a signal of every input's values.
///
/// - Threading: values are delivered on the thread of the input that sent
///   them, one at a time: a value sent while the downstream is busy with
///   another input's event is delivered right after it, by the thread that
///   was delivering (never concurrently, never out of order).
/// - Termination: completes once every input has completed (at once for an
///   empty array). The first error of any input is forwarded at once; no
///   further input is subscribed then.
/// - Disposal: termination or disposal disposes the live inputs in array
///   order.
public func merge<T, E>(_ signals: [Signal<T, E>]) -> Signal<T, E> {
    Signal { subscriber in
        let state = _FlattenState<T, E>(downstream: subscriber, limit: 0)
        for signal in signals {
            state.putInner(signal)
        }
        state.outerCompleted()
        return _WeakDisposable(state)
    }._combined("merge", inputs: signals)
}

/// Forwards the events of this signal and `other` as they arrive
/// (`merge([signal, other])`).
///
/// ReactiveCocoa's `merge:`.
///
/// Marble: `"a---b-|"` merge `"--1---2-|"` → `"a-1-b-2-|"`
///
/// - Parameters:
///   - other: the second input, subscribed after this one.
/// - Returns: a function from a signal to the merged signal.
///
/// - Threading: as `merge(_:)` (array).
/// - Termination: as `merge(_:)` (array).
/// - Disposal: as `merge(_:)` (array).
public func merge<T, E>(_ other: Signal<T, E>) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        merge([signal, other])._derived("merge", from: signal, arguments: other.description)
    }
}

/// Merges the inner signals of a signal of signals (`flatten`).
///
/// ReactiveCocoa's `merge` over a signal of signals (its `flatten`).
///
/// Marble: outer `"A--B--|"` with `A = "a---a-|"`, `B = "b---b-|"` →
/// `"a--ba--b-|"`
///
/// - Parameters:
///   - signal: a signal of signals.
/// - Returns: `flatten(signal)`. Use it as `outer |> merge`.
///
/// - Threading: as `flatten(_:)`.
/// - Termination: as `flatten(_:)`.
/// - Disposal: as `flatten(_:)`.
public func merge<T, E>(_ signal: Signal<Signal<T, E>, E>) -> Signal<T, E> {
    _flatten(signal, limit: 0, transform: { $0 })._derived("merge", from: signal)
}

// MARK: - flatten, flattenMap

/// Subscribes to every inner signal as it arrives and forwards all their
/// events (RAC's `flatten`, Rx's `merge`).
///
/// Marble: outer `"A--B--|"` with `A = "a---a-|"`, `B = "b---b-|"` →
/// `"a--ba--b-|"`
///
/// ```swift
/// let flattened = signalOfSignals |> flatten   // A 1 B C 2 (seed 002)
/// ```
///
/// - Parameters:
///   - signal: a signal of signals (the outer).
/// - Returns: a signal of every inner signal's values.
///
/// - Threading: an inner is subscribed on the thread that delivers it (or,
///   if another thread is subscribing inners at that moment, by that
///   thread). Values are delivered one at a time, as for `merge(_:)`.
/// - Termination: completes when the outer and every inner have completed.
///   The first error, of the outer or of any inner, is forwarded at once;
///   nothing is subscribed afterwards.
/// - Disposal: termination or disposal disposes the live inners in the
///   order they were subscribed, then the outer.
public func flatten<T, E>(_ signal: Signal<Signal<T, E>, E>) -> Signal<T, E> {
    _flatten(signal, limit: 0, transform: { $0 })._derived("flatten", from: signal)
}

/// Merges the inner signals, with at most `maxConcurrent` subscribed at a
/// time; the others wait, in arrival order (RAC's `flatten:`).
///
/// Marble (`maxConcurrent: 1`): outer `"AB|"` with `A = "a--a|"`,
/// `B = "b|"` → `"a--ab|"` (B waits for A)
///
/// - Parameters:
///   - maxConcurrent: the most inners subscribed at once; `0` means no limit
///     (as in ReactiveCocoa). Must not be negative.
/// - Returns: a function from a signal of signals to the merged signal.
///
/// - Threading: an inner is subscribed on the thread that makes room for it
///   (delivering it, or completing an earlier inner), or, if another thread
///   is subscribing inners at that moment, by that thread. Values are
///   delivered one at a time, as for `merge(_:)`.
/// - Termination: completes when the outer has completed and every inner,
///   running or waiting, has completed. The first error is forwarded at
///   once; waiting inners are then never subscribed.
/// - Disposal: as `flatten(_:)`; waiting inners are released unsubscribed.
/// - Stack safety: an inner that completes while being subscribed lets the
///   next waiting one start from a loop, not from inside its completion:
///   a million synchronous inners run in constant stack.
public func flatten<T, E>(maxConcurrent: Int) -> (Signal<Signal<T, E>, E>) -> Signal<T, E> {
    _signalKitRequire(
        maxConcurrent >= 0,
        "flatten(maxConcurrent:): maxConcurrent must be 0 (no limit) or positive, got \(maxConcurrent)"
    )
    return { signal in
        _flatten(signal, limit: maxConcurrent, transform: { $0 })
            ._derived("flatten", from: signal, arguments: "\(maxConcurrent)")
    }
}

/// Maps each value to a signal and merges those signals (RAC's `flattenMap:`).
///
/// Marble: `"1--2--|"` with `f(n) = "n-n-|"` → `"1-12-2-|"`
///
/// Not SwiftSignalKit's `mapToSignal`, which keeps only the latest inner
/// signal: `flattenMap` keeps every inner signal running.
///
/// - Parameters:
///   - f: called with each value, synchronously, when it arrives.
/// - Returns: a function from a signal to the merged signal of the mapped
///   signals.
///
/// - Threading: as `flatten(_:)`.
/// - Termination: as `flatten(_:)`.
/// - Disposal: as `flatten(_:)`.
public func flattenMap<T, R, E>(_ f: @escaping @Sendable (T) -> Signal<R, E>) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        _flatten(signal, limit: 0, transform: f)._derived("flattenMap", from: signal)
    }
}

/// Maps each value to a signal and merges them, at most `maxConcurrent` at a
/// time (`map(f) |> flatten(maxConcurrent:)`).
///
/// ReactiveCocoa's `flattenMap:` with the limit of its `flatten:`.
///
/// Marble (`maxConcurrent: 1`): `"12|"` with `f(n) = "n--|"` → `"1--2--|"`
///
/// - Parameters:
///   - maxConcurrent: the most inners subscribed at once; `0`: no limit.
///   - f: called with each value when it arrives (eagerly, also for values
///     whose signal has to wait).
/// - Returns: a function from a signal to the merged signal.
///
/// - Threading: as `flatten(maxConcurrent:)`.
/// - Termination: as `flatten(maxConcurrent:)`.
/// - Disposal: as `flatten(maxConcurrent:)`.
public func flattenMap<T, R, E>(
    maxConcurrent: Int,
    _ f: @escaping @Sendable (T) -> Signal<R, E>
) -> (Signal<T, E>) -> Signal<R, E> {
    _signalKitRequire(
        maxConcurrent >= 0,
        "flattenMap(maxConcurrent:_:): maxConcurrent must be 0 (no limit) or positive, got \(maxConcurrent)"
    )
    return { signal in
        _flatten(signal, limit: maxConcurrent, transform: f)
            ._derived("flattenMap", from: signal, arguments: "\(maxConcurrent)")
    }
}

func _flatten<S, T, E>(_ outer: Signal<S, E>, limit: Int, transform: @escaping @Sendable (S) -> Signal<T, E>) -> Signal<T, E> {
    Signal { subscriber in
        let state = _FlattenState<T, E>(downstream: subscriber, limit: limit)
        state.setOuter(outer._start(_FlattenOuterSink(state: state, transform: transform)))
        return _WeakDisposable(state)
    }
}

// MARK: - The merge engine

/// The state of one subscription of `merge`, `flatten` and `flattenMap`: the
/// outer subscription, the live inners, the waiting ones.
///
/// Inners are subscribed by a loop (`runStartLoop`): whoever admits an inner
/// while no loop runs becomes the loop; an inner admitted while a loop runs
/// (on another thread, or further up this thread's stack because an inner
/// completed synchronously while being subscribed) is subscribed by that
/// loop. Hence constant stack for synchronous inners, and no lock held while
/// subscribing.
///
/// The generator returns it wrapped in a `_WeakDisposable`: it references the
/// downstream subscriber through `delivery` (which the sinks share), and it
/// lives as long as the sinks of the outer and of the live inners do.
///
/// `@unchecked Sendable`: every `var` is guarded by `mutex`.
final class _FlattenState<T, E>: Disposable, @unchecked Sendable {
    let delivery: _SerialDelivery<T, E>
    /// The most inners subscribed at once; 0: no limit.
    let limit: Int
    private let mutex = _Mutex()
    /// Inners admitted (running, or about to be subscribed by the loop).
    private var active = 0
    /// Inners waiting for room (only with a limit).
    private var waiting = _FIFO<Signal<T, E>>()
    /// Admitted inners the loop has not subscribed yet, with their numbers.
    private var admitted = _FIFO<(Signal<T, E>, Int)>()
    /// Running: a loop is subscribing inners. (A request made while it runs
    /// is the admitted queue itself, which the loop drains.)
    private var gate = _RunAgainGate()
    /// Live inners' handles, by inner number (the subscription order).
    private var handles: [Int: _SubscriptionBase] = [:]
    /// Inners that ended before their `_start` returned.
    private var endedEarly: Set<Int> = []
    private var nextNumber = 0
    private var outerHasCompleted = false
    private var outer: (any Disposable)?
    /// An error happened or the state was disposed: nothing more is admitted.
    private var stopped = false
    private var disposed = false

    init(downstream: Subscriber<T, E>, limit: Int) {
        self.delivery = _SerialDelivery(downstream: downstream)
        self.limit = limit
    }

    deinit {
        mutex.destroy()
    }

    /// Stores the outer subscription's handle (disposed at once if the state
    /// was disposed meanwhile).
    func setOuter(_ handle: any Disposable) {
        let disposeNow = mutex.withLock { () -> Bool in
            if disposed { return true }
            outer = handle
            return false
        }
        if disposeNow { handle.dispose() }
    }

    /// A new inner signal: admits it (or makes it wait), and subscribes the
    /// admitted ones unless a loop already runs.
    func putInner(_ signal: Signal<T, E>) {
        let runLoop = mutex.withLock { () -> Bool in
            guard !stopped else { return false }
            if limit == 0 || active < limit {
                admit(signal)
            } else {
                waiting.append(signal)
            }
            return claimLoop()
        }
        if runLoop { runStartLoop() }
    }

    /// Under the mutex.
    private func admit(_ signal: Signal<T, E>) {
        active += 1
        nextNumber += 1
        admitted.append((signal, nextNumber))
    }

    /// Under the mutex: whether the caller must run the loop.
    private func claimLoop() -> Bool {
        guard !admitted.isEmpty else { return false }
        return gate.enter()
    }

    private func runStartLoop() {
        while true {
            let next = mutex.withLock { () -> (Signal<T, E>, Int)? in
                if !stopped, let next = admitted.popFirst() { return next }
                gate.leave()
                return nil
            }
            guard let (signal, number) = next else { return }
            let handle = signal._start(_FlattenInnerSink(state: self, number: number))
            let disposeNow = mutex.withLock { () -> Bool in
                if endedEarly.remove(number) != nil { return false }
                if disposed { return true }
                handles[number] = handle
                return false
            }
            if disposeNow { handle.dispose() }
        }
    }

    func outerCompleted() {
        let complete = mutex.withLock { () -> Bool in
            outerHasCompleted = true
            return !stopped && active == 0
        }
        if complete { delivery.putCompletion() }
    }

    func innerCompleted(number: Int) {
        var released: _SubscriptionBase?
        let (complete, runLoop) = mutex.withLock { () -> (Bool, Bool) in
            released = handles.removeValue(forKey: number)
            if released == nil { endedEarly.insert(number) }
            active -= 1
            if !stopped, let next = waiting.popFirst() {
                admit(next)
            }
            return (!stopped && outerHasCompleted && active == 0, claimLoop())
        }
        // The finished inner's handle is released here, outside the lock.
        released = nil
        if complete { delivery.putCompletion() }
        if runLoop { runStartLoop() }
    }

    func fail(_ error: E) {
        mutex.withLock { stopped = true }
        delivery.putError(error)
    }

    /// Disposes the live inners in subscription order, then the outer;
    /// releases the waiting signals.
    func dispose() {
        var waitingSignals = _FIFO<Signal<T, E>>()
        var admittedSignals = _FIFO<(Signal<T, E>, Int)>()
        let (inners, outer) = mutex.withLock { () -> ([_SubscriptionBase], (any Disposable)?) in
            guard !disposed else { return ([], nil) }
            disposed = true
            stopped = true
            swap(&waiting, &waitingSignals)
            swap(&admitted, &admittedSignals)
            let inners = handles.sorted { $0.key < $1.key }.map(\.value)
            handles = [:]
            defer { self.outer = nil }
            return (inners, self.outer)
        }
        for inner in inners {
            inner.dispose()
        }
        outer?.dispose()
        _ = (waitingSignals, admittedSignals)
    }
}

struct _FlattenOuterSink<S, T, E>: _InlineSink {
    typealias Input = S
    typealias Failure = E

    let state: _FlattenState<T, E>
    let transform: (S) -> Signal<T, E>

    init(state: _FlattenState<T, E>, transform: @escaping @Sendable (S) -> Signal<T, E>) {
        self.state = state
        self.transform = transform
    }

    func putNext(_ value: S, from _: _SubscriptionBase) { state.putInner(transform(value)) }
    func putError(_ error: E) { state.fail(error) }
    func putCompletion() { state.outerCompleted() }
}

struct _FlattenInnerSink<T, E>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let state: _FlattenState<T, E>
    let delivery: _SerialDelivery<T, E>
    let number: Int

    init(state: _FlattenState<T, E>, number: Int) {
        self.state = state
        self.delivery = state.delivery
        self.number = number
    }

    func putNext(_ value: T, from _: _SubscriptionBase) { delivery.putNext(value) }
    func putError(_ error: E) { state.fail(error) }
    func putCompletion() { state.innerCompleted(number: number) }
}
