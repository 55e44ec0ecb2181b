// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Meta: signals of signals (`switchToLatest`, `queue`, `throttled` and their
// `mapTo…` forms), sequencing (`then`), `deferred`, `ignoreValues` and a
// timing probe. The signal-of-signals engine is in Engine/SignalQueueState.swift,
// the flattening of `then` chains in Engine/SignalComposition.swift.

// MARK: - switchToLatest, mapToSignal

/// Forwards the events of the latest inner signal, disposing the previous one.
///
/// Marble: outer `"A---B---|"` with `A = "a-a-a…"`, `B = "b-b-|"` →
/// `"a-a-b-b-|"`
///
/// - Parameters:
///   - signal: a signal of signals (the outer).
/// - Returns: a signal of the inners' values. Use it as
///   `outer |> switchToLatest`.
/// - Threading: each inner is subscribed on the thread that delivers it.
/// - Termination: completes when the outer has completed and the current
///   inner has completed, in either order (at once if the outer completes with
///   no inner running). An error of the outer or of the current inner fails
///   the output.
/// - Disposal: a new inner is subscribed before the previous one is
///   disposed (`b.subscribe#1, a.dispose#1`); the previous one is silenced from
///   the moment its successor starts. Disposing disposes the current inner,
///   then the outer.
@inlinable
public func switchToLatest<T, E>(_ signal: Signal<Signal<T, E>, E>) -> Signal<T, E> {
    _signalQueue(signal, mode: .switching, transform: { $0 }, promoteError: { $0 })._derived("switchToLatest", from: signal)
}

/// Maps each value to a signal and forwards the latest one's events
/// (`map(f) |> switchToLatest`).
///
/// Marble: `"1---2---|"` with `f(1) = "a-a…"`, `f(2) = "b-|"` → `"a-a-b-|"`
///
/// - Parameters:
///   - f: called with each value, synchronously, when it arrives.
/// - Returns: a function from the outer signal to the switched signal.
/// - Threading: as `switchToLatest`.
/// - Termination: as `switchToLatest`.
/// - Disposal: as `switchToLatest`.
@inlinable
public func mapToSignal<T, R, E>(_ f: @escaping (T) -> Signal<R, E>) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        _signalQueue(signal, mode: .switching, transform: f, promoteError: { $0 })._derived("mapToSignal", from: signal)
    }
}

/// `mapToSignal` for an outer signal that cannot fail: the inners' error
/// type becomes the output's.
///
/// Marble: `"1---2---|"` with `f(2) = "#e"` → `"…#e"`
///
/// - Parameters:
///   - f: called with each value, synchronously, when it arrives.
/// - Returns: a function from the `NoError` outer signal to the switched
///   signal.
/// - Threading: as `switchToLatest`.
/// - Termination: as `switchToLatest`.
/// - Disposal: as `switchToLatest`.
@inlinable
public func mapToSignalPromotingError<T, R, E>(
    _ f: @escaping (T) -> Signal<R, E>
) -> (Signal<T, NoError>) -> Signal<R, E> {
    { signal in
        _signalQueue(signal, mode: .switching, transform: f, promoteError: nil)._derived("mapToSignalPromotingError", from: signal)
    }
}

// MARK: - queue, mapToQueue

/// Runs the inner signals one after another, in arrival order.
///
/// Marble: outer `"AB-|"` with `A = "a--a-|"`, `B = "b-|"` → `"a--a-b-|"`
///
/// - Parameters:
///   - signal: a signal of signals (the outer).
/// - Returns: a signal of the inners' values. Use it as `outer |> queue`.
/// - Threading: an inner is subscribed on the thread that delivers it when
///   none is running, else on the thread that delivers the previous inner's
///   completion.
/// - Termination: completes when the outer has completed and every inner
///   has run. Any error fails the output; waiting inners are then never
///   subscribed.
/// - Disposal: the next inner is subscribed inside the previous one's
///   completion callback, before the previous one is disposed. Inners that
///   complete synchronously are drained by a loop (each disposed when its
///   subscription returns, then the next subscribed): a million queued inners
///   run in constant stack. Disposing disposes the current inner, then the
///   outer; waiting inners are never subscribed.
@inlinable
public func queue<T, E>(_ signal: Signal<Signal<T, E>, E>) -> Signal<T, E> {
    _signalQueue(signal, mode: .queueing, transform: { $0 }, promoteError: { $0 })._derived("queue", from: signal)
}

/// Maps each value to a signal and runs those one after another
/// (`map(f) |> queue`).
///
/// Marble: `"12-|"` with `f(1) = "a--|"`, `f(2) = "b-|"` → `"a--b-|"`
///
/// - Parameters:
///   - f: called with each value when it ARRIVES (eagerly), not when its
///     signal starts.
/// - Returns: a function from the outer signal to the queued signal.
/// - Threading: as `queue`.
/// - Termination: as `queue`.
/// - Disposal: as `queue`.
@inlinable
public func mapToQueue<T, R, E>(_ f: @escaping (T) -> Signal<R, E>) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        _signalQueue(signal, mode: .queueing, transform: f, promoteError: { $0 })._derived("mapToQueue", from: signal)
    }
}

// MARK: - throttled, mapToThrottled

/// Runs inner signals one at a time, keeping only the latest one that waits.
///
/// Marble: outer `"ABC-|"` with `A = "a--|"` running → `B` is dropped
/// unsubscribed, `C` runs after `A`: `"a--c…"`
///
/// - Parameters:
///   - signal: a signal of signals (the outer).
/// - Returns: a signal of the inners' values. Use it as
///   `outer |> throttled`.
/// - Threading: as `queue`.
/// - Termination: completes when the outer has completed, no inner is
///   running and none waits. Any error fails the output.
/// - Disposal: a waiting inner replaced by a newer one is released without
///   being subscribed. Otherwise as `queue`.
@inlinable
public func throttled<T, E>(_ signal: Signal<Signal<T, E>, E>) -> Signal<T, E> {
    _signalQueue(signal, mode: .throttling, transform: { $0 }, promoteError: { $0 })._derived("throttled", from: signal)
}

/// Maps each value to a signal and runs them as `throttled` does
/// (`map(f) |> throttled`).
///
/// Marble: `"123-|"` with `f(1) = "a--|"` running → `f(2)` dropped, then
/// `f(3)`: `"a--c…"`
///
/// - Parameters:
///   - f: called with EVERY value when it arrives, including values whose
///     signal is then dropped.
/// - Returns: a function from the outer signal to the throttled signal.
/// - Threading: as `throttled`.
/// - Termination: as `throttled`.
/// - Disposal: as `throttled`.
@inlinable
public func mapToThrottled<T, R, E>(_ f: @escaping (T) -> Signal<R, E>) -> (Signal<T, E>) -> Signal<R, E> {
    { signal in
        _signalQueue(signal, mode: .throttling, transform: f, promoteError: { $0 })._derived("mapToThrottled", from: signal)
    }
}

// MARK: - ignoreValues

/// Drops every value; forwards the error or the completion.
///
/// Marble: `"a-b-|"` → `"----|"`
///
/// - Parameters:
///   - signal: the source.
/// - Returns: a signal without values. Use it as `signal |> ignoreValues`.
/// - Threading: events stay on the source's thread.
/// - Termination: forwarded unchanged.
/// - Disposal: disposes the source.
public func ignoreValues<T, E>(_ signal: Signal<T, E>) -> Signal<Never, E> {
    Signal { subscriber in
        signal._start(_IgnoreValuesSink(downstream: subscriber))
    }._derived("ignoreValues", from: signal)
}

final class _IgnoreValuesSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    let downstream: Subscriber<Never, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    init(downstream: Subscriber<Never, E>) {
        self.downstream = downstream
    }

    override func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() { downstream.putCompletion() }
}

// MARK: - then

/// Forwards the signal, then, when it completes, `nextSignal`.
///
/// Marble: `"a-b-|"` then `"c-|"` → `"a-b-c-|"`; `"a-#e"` then `"c-|"` →
/// `"a-#e"`
///
/// - Parameters:
///   - nextSignal: subscribed when the source completes, inside its
///     completion callback; never subscribed if the source fails.
/// - Returns: a function from the source to the concatenated signal.
/// - Threading: `nextSignal` is subscribed on the thread that delivers the
///   source's completion.
/// - Termination: completes when `nextSignal` completes; fails when either
///   fails. When the downstream has already ended (terminated or disposed,
///   e.g. by `take(1)` during a synchronous first part), `nextSignal` is not
///   subscribed (<doc:Deviations>; SwiftSignalKit subscribes it, then disposes
///   it when the generators return). This check sees through SignalKit's
///   operators, not through a hand-written generator that restarts the
///   signal with `start`.
/// - Disposal: disposes the running part. After an asynchronous
///   completion, `nextSignal` is subscribed before the source is disposed
///   (`b.subscribe#1, a.dispose#1`).
/// - Stack safety: a chain `s0 |> then(s1) |> … |> then(sN)` (folded either
///   way, with nested `then` signals and `deferred` segments spliced in) is
///   subscribed by one loop, so a million synchronous segments run in constant
///   stack. A segment completing while the first one is being subscribed is
///   followed at once, inside its callback, as in SwiftSignalKit; later
///   synchronously completing segments are each disposed when their
///   subscription returns, before the next one is subscribed (SwiftSignalKit
///   recurses instead).
public func then<T, E>(_ nextSignal: Signal<T, E>) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        let chain = _ThenChain.appending(nextSignal, to: signal)
        return Signal(composition: chain) { subscriber in
            let run = _ThenRun(chain: chain)
            run.start { run.subscribeNext(subscriber) }
            return run
        }._derived("then", from: signal, arguments: nextSignal.description)
    }
}

/// One subscription of a `then` chain: the segments not subscribed yet.
///
/// Holds no reference to the downstream subscriber (the sinks do).
final class _ThenRun<T, E>: _StepTrampoline, @unchecked Sendable {
    // `@unchecked Sendable`: `remaining` is guarded by the base class's
    // `mutex`.

    /// Segments not subscribed yet, the next one last. `then` signals and
    /// `deferred` signals are expanded when they reach the top.
    private var remaining: [Signal<T, E>] = []

    init(chain: _ThenChain<T, E>) {
        super.init()
        chain.pushSegments(onto: &remaining)
    }

    /// Whether every segment was subscribed.
    var isExhausted: Bool {
        mutex.withLock { remaining.isEmpty }
    }

    override func didDispose() {
        var released: [Signal<T, E>] = []
        mutex.withLock { swap(&released, &remaining) }
        _ = released
    }

    /// Subscribes the next segment. Call only when not exhausted.
    func subscribeNext(_ downstream: Subscriber<T, E>) -> any Disposable {
        nextSegment()._start(_ThenSink(run: self, downstream: downstream))
    }

    /// Pops the next segment, splicing `then` chains and calling `deferred`
    /// factories (at the moment subscribing them would), so that neither
    /// nests a subscription.
    private func nextSegment() -> Signal<T, E> {
        // Empty only after disposal; then `never()` is subscribed and, the
        // run being disposed, disposed at once.
        guard var signal = mutex.withLock({ remaining.popLast() }) else { return .never() }
        while let composition = signal.composition?._structural {
            if let chain = composition as? _ThenChain<T, E> {
                signal = mutex.withLock {
                    chain.pushSegments(onto: &remaining)
                    return remaining.removeLast()
                }
            } else if let deferred = composition as? _DeferredComposition<T, E> {
                signal = deferred.factory()
            } else {
                break
            }
        }
        return signal
    }
}

final class _ThenSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    let run: _ThenRun<T, E>
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    init(run: _ThenRun<T, E>, downstream: Subscriber<T, E>) {
        self.run = run
        self.downstream = downstream
    }

    override func putNext(_ value: T) { downstream.putNext(value) }

    override func putError(_ error: E) {
        run.stop()
        downstream.putError(error)
    }

    override func putCompletion() {
        if run.isExhausted {
            downstream.putCompletion()
            return
        }
        let (run, downstream) = (self.run, self.downstream)
        run.advance(downstream: downstream._subscriptionBase) { run.subscribeNext(downstream) }
    }
}

// MARK: - deferred

/// A signal that calls `generator` at each subscription and forwards the
/// signal it returns.
///
/// Marble: `generator() = "a-|"` → `"a-|"` (a fresh signal per subscription)
///
/// - Parameters:
///   - generator: called synchronously inside each subscription.
/// - Returns: the deferred signal.
/// - Threading: `generator` runs on the subscribing thread.
/// - Termination: forwarded unchanged.
/// - Disposal: disposes the generated signal's subscription. As a segment
///   of `then`, a deferred signal is expanded in place, so recursive
///   `deferred { … |> then(deferred { … }) }` loops run in constant stack.
public func deferred<T, E>(_ generator: @escaping () -> Signal<T, E>) -> Signal<T, E> {
    Signal(composition: _DeferredComposition(factory: generator)) { subscriber in
        generator()._start(_ForwardSink(downstream: subscriber))
    }._combined("deferred", inputs: [])
}

// MARK: - debug_measureTimeToFirstEvent

/// Passes everything through and prints how long the first value took.
///
/// On the first value delivered by any subscription of the returned signal,
/// prints `measureTimeToFirstEvent(<label>: <milliseconds> ms` (SwiftSignalKit's
/// exact text, with no closing parenthesis), the time measured on a monotonic
/// clock from that subscription's start.
///
/// Marble: `"a-b-|"` → `"a-b-|"`
///
/// - Parameters:
///   - label: printed with the time.
/// - Returns: a function from the source to the same signal, measured.
/// - Threading: prints on the thread of the first value.
/// - Termination: forwarded unchanged.
/// - Disposal: disposes the source.
public func debug_measureTimeToFirstEvent<T, E>(label: String) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        let probe = _FirstEventProbe(label: label)
        return Signal { subscriber in
            signal._start(_MeasureFirstEventSink(downstream: subscriber, probe: probe, startTime: _monotonicSeconds()))
        }._derived("debug_measureTimeToFirstEvent", from: signal, arguments: label)
    }
}

/// The flag shared by every subscription of one measured signal.
final class _FirstEventProbe: Sendable {
    let label: String
    private let waiting = Synchronization.Atomic<Bool>(true)

    init(label: String) {
        self.label = label
    }

    /// Prints the time since `startTime` the first time it is called.
    func valueArrived(startTime: Double) {
        guard waiting.load(ordering: .relaxed), waiting.exchange(false, ordering: .acquiringAndReleasing) else { return }
        let milliseconds = (_monotonicSeconds() - startTime) * 1000.0
        print("measureTimeToFirstEvent(\(label): \(milliseconds) ms")
    }
}

final class _MeasureFirstEventSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    let downstream: Subscriber<T, E>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let probe: _FirstEventProbe
    let startTime: Double

    init(downstream: Subscriber<T, E>, probe: _FirstEventProbe, startTime: Double) {
        self.downstream = downstream
        self.probe = probe
        self.startTime = startTime
    }

    override func putNext(_ value: T) {
        probe.valueArrived(startTime: startTime)
        downstream.putNext(value)
    }

    override func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() { downstream.putCompletion() }
}
