// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Flattening: operators that turn a signal of signals (or several signals) into one,
// keeping the values of every inner signal.
//
// This file: SwiftSignalKit's `then` (sequencing; the flattening of `then`
// chains is in Engine/SignalComposition.swift).

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
        nextSegment()._start(_LoopSink(run: self, downstream: downstream))
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

extension _ThenRun: _LoopRun {
    /// An error ends the chain.
    func sourceFailed(_ error: E, downstream: Subscriber<T, E>) {
        stop()
        downstream.putError(error)
    }

    /// A completion subscribes the next segment, or completes after the last.
    func sourceCompleted(downstream: Subscriber<T, E>) {
        if isExhausted {
            downstream.putCompletion()
            return
        }
        advance(downstream: downstream._subscriptionBase) { subscribeNext(downstream) }
    }
}
