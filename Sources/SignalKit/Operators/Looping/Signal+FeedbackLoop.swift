// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Looping: operators that resubscribe or iterate.
//
// This file: `feedbackLoop`, SwiftSignalKit's repeat-until-nil loop over signals.

/// The argument of `feedbackLoop`'s `once` closure.
///
/// SwiftSignalKit compatibility: `feedbackLoop` always passes `.initial`
/// (see `feedbackLoop(once:reduce:)`); `.loop` is never passed.
public enum SignalFeedbackLoopState<T> {
    case initial
    case loop(T)
}

extension SignalFeedbackLoopState: Sendable where T: Sendable {}

/// Runs the signal `once` returns, and again each time it completes, until
/// `once` returns `nil`; then completes.
///
/// Marble: (`once` returns `"a-b-|"`, then `"c-|"`, then `nil`) → `"----|"`
/// (iteration values are not emitted)
///
/// This is SwiftSignalKit's behaviour, kept as is: `once` is always called
/// with `.initial`, never `.loop`; the iterations' values are ignored (the
/// reduce state starts empty and is only reduced when non-empty, so `reduce`
/// is never called and the result never emits a value of type `R`). The
/// result therefore only completes (when `once` returns `nil`) or fails.
///
/// When an iteration completes asynchronously, the next one is subscribed
/// inside its completion callback, before the finished iteration is
/// disposed (log: `b.subscribe#1`, `a.dispose#1`). Iterations that complete
/// synchronously run in a loop in the outermost frame, in constant stack
/// (SwiftSignalKit recurses); the finished iteration is then disposed first.
///
/// - Parameters:
///   - once: returns the next iteration's signal, or `nil` to stop. Called
///     at subscription and after each completed iteration.
///   - reduce: never called (see above); kept for source compatibility.
/// - Returns: a signal that completes when `once` returns `nil` and fails
///   with the first iteration error.
///
/// - Threading: no thread hop: the first iteration is subscribed inside
///   `start`; later ones on the thread that completed the previous one.
/// - Termination: an iteration error is forwarded and stops the loop.
/// - Disposal: disposes the current iteration and stops the loop. The loop
///   holds no reference cycle: everything is released once the
///   subscription ends.
public func feedbackLoop<R1, R, E>(
    once: @escaping @Sendable (SignalFeedbackLoopState<R1>) -> Signal<R1, E>?,
    reduce: @escaping @Sendable (R1, R1) -> R1
) -> Signal<R, E> {
    Signal { subscriber in
        let control = _LoopControl()
        _FeedbackLoop<R1, R, E>(once: once, downstream: subscriber, control: control).iterate()
        return control
    }._combined("feedbackLoop", inputs: [])
}

/// The loop. Kept alive by the running iteration's sink (and by the frame
/// that runs `iterate`).
final class _FeedbackLoop<R1, R, E>: @unchecked Sendable {
    // `@unchecked Sendable`: the gate is guarded by `_LockedState`; the
    // other `let`s are immutable or thread-safe.
    let once: (SignalFeedbackLoopState<R1>) -> Signal<R1, E>?
    let downstream: Subscriber<R, E>
    let control: _LoopControl
    /// Running: a frame runs the loop in `iterate`; due: an iteration
    /// completed while it did.
    private let gate = _LockedState(_RunAgainGate())
    /// The context current at `start`: every iteration is made and
    /// subscribed in it (subscription-time work, see
    /// `SignalContextPropagation`).
    private let startContext = _ContextHook.capture()

    init(
        once: @escaping @Sendable (SignalFeedbackLoopState<R1>) -> Signal<R1, E>?,
        downstream: Subscriber<R, E>,
        control: _LoopControl
    ) {
        self.once = once
        self.downstream = downstream
        self.control = control
    }

    /// Starts the next iteration: at subscription and when an iteration
    /// completes. If a frame is already running the loop (the iteration
    /// completed synchronously inside `_start`), that frame continues it.
    func iterate() {
        guard gate.withLock({ $0.enter() }) else { return }
        _run(in: startContext, runLoop)
    }

    private func runLoop() {
        while true {
            // Stop when disposed, or when the downstream has ended
            // (loops stop when their downstream stops).
            guard !control.isDisposed, !downstream._hasEnded else {
                gate.withLock { $0.leave() }
                return
            }
            guard let signal = once(.initial) else {
                gate.withLock { $0.leave() }
                downstream.putCompletion()
                return
            }
            control.current.set(signal._start(_FeedbackLoopSink(loop: self)))
            guard gate.withLock({ $0.takeTurn() }) else { return }
        }
    }
}

struct _FeedbackLoopSink<R1, R, E>: _InlineSink {
    typealias Input = R1
    typealias Failure = E

    let loop: _FeedbackLoop<R1, R, E>

    var downstreamSubscription: _SubscriptionBase? { loop.downstream._subscriptionBase }

    // Values are ignored (see `feedbackLoop`).
    func putNext(_ value: R1, from _: _SubscriptionBase) {}
    func putError(_ error: E) { loop.downstream.putError(error) }
    func putCompletion() { loop.iterate() }
}
