// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The engine of the operators that subscribe one signal after another when
// the previous one finishes: `restart`, `recurse`, `restartIfError`,
// `restartOrMapError` (Catch) and `then` (Meta). SwiftSignalKit subscribes the
// next step from inside the finishing step's callback, which recurses without
// bound when steps finish synchronously; SignalKit runs such steps from a
// loop, in constant stack (a million synchronous steps must not grow it).

/// The disposable of the latest step of a sequential operator, stored with
/// its step number. Lives inside its owner's lock; everything it returns is
/// disposed by the owner after unlocking.
///
/// Steps can be installed out of order: a step that finishes synchronously
/// while being subscribed makes its successor start (and be installed)
/// before its own `_start` returned. The late handle is then that of a
/// finished step, and must not replace the live one (SwiftSignalKit's
/// `MetaDisposable` does replace it, disposing the live subscription).
///
/// `Handle` is what the owner disposes: `any Disposable`, or a narrower class
/// that takes one word instead of two (the switch engine stores
/// subscriptions, `_SubscriptionBase`).
@usableFromInline
struct _StepSlot<Handle> {
    @usableFromInline var current: Handle?
    @usableFromInline var currentStep = -1
    @usableFromInline var isDisposed = false

    @inlinable init() {}

    /// Stores `handle` as the disposable of step `step` and returns what to
    /// dispose: the previous disposable, or `handle` itself when the slot is
    /// disposed or a later step is stored already.
    @inlinable
    mutating func install(_ handle: Handle, step: Int) -> Handle? {
        if isDisposed || step < currentStep { return handle }
        defer {
            current = handle
            currentStep = step
        }
        return current
    }

    /// Marks the slot disposed and returns the disposable to dispose.
    @inlinable
    mutating func dispose() -> Handle? {
        isDisposed = true
        defer { current = nil }
        return current
    }
}

/// Subscribes a sequence of steps, one after another, in constant stack.
///
/// The owner subscribes the first step with `start`, and calls `advance` from
/// a step's terminal callback when the next step is due. `advance` either
/// subscribes the next step right there, or leaves it to a loop further up
/// the stack:
///
/// * When no loop is running — the callback comes from the first step's
///   subscription or is asynchronous — `advance` becomes the loop and
///   subscribes the next step inside the finishing step's callback, as
///   SwiftSignalKit does: the new step is subscribed BEFORE the finished one
///   is disposed.
/// * When the callback is nested in a subscription that the loop is making (a
///   step finished synchronously while the loop subscribed it), `advance` only
///   records that a step is due. The finished step's `_start` returns (its
///   subscription disposes it), then the loop subscribes the next one. So for
///   synchronously finishing steps beyond the first, each step is disposed
///   before its successor is subscribed, and the stack holds at most one loop.
///
/// Before subscribing each next step, `advance` checks whether the downstream
/// has ended (terminated or disposed, transitively up to the user's
/// subscription: `_SubscriptionBase.hasEnded`); if so the sequence stops
/// there (loops stop when their downstream stops). Without that check, `single(1) |> restart |>
/// take(3)` would resubscribe forever inside `start`: `take`'s completion
/// only disposes `restart` once the generators return, which a synchronous
/// loop never lets them do. SwiftSignalKit has no such check.
///
/// Disposal mirrors SwiftSignalKit's order: the current step is disposed
/// first, and only then is the sequence stopped, so a step that finishes
/// while being disposed still starts its successor, which is disposed at
/// once. Nothing is started after that one (SwiftSignalKit would go on, and
/// recurse without end, if each successor also finished while disposed).
///
/// `@unchecked Sendable`: `state` is guarded by `mutex`; steps may finish on
/// any thread.
class _StepTrampoline: Disposable, @unchecked Sendable {
    private struct State {
        var slot = _StepSlot<any Disposable>()
        var nextStep = 0
        /// Running: a loop is subscribing a step; due: a step finished while
        /// the loop was subscribing it.
        var gate = _RunAgainGate()
        /// An error ended the sequence, or disposal did.
        var stopped = false
        /// A step was started after disposal began (see the type's
        /// documentation).
        var startedAfterDisposal = false

        mutating func takeStep() -> Int {
            defer { nextStep += 1 }
            return nextStep
        }
    }

    /// Guards `state`, and subclasses' own mutable state. Never held while
    /// subscribing, disposing or calling out.
    let mutex = _Mutex()
    private var state = State()
    /// The context current at `start` (the owner is made by the signal's
    /// generator): every later step is subscribed in it, since a
    /// resubscription is subscription-time work, not part of the event that
    /// caused it (see `SignalContextPropagation`).
    private let startContext = _ContextHook.capture()

    init() {}

    deinit {
        mutex.destroy()
    }

    /// Subscribes the first step (outside the loop).
    final func start(_ subscribe: () -> any Disposable) {
        let step = mutex.withLock { state.takeStep() }
        let handle = subscribe()
        let toDispose = mutex.withLock { state.slot.install(handle, step: step) }
        toDispose?.dispose()
    }

    /// The current step finished and the next one is due: subscribes it now,
    /// or lets the running loop do it (see the type's documentation), unless
    /// `downstream` has ended. `subscribe` subscribes the next step and
    /// returns its handle; `downstream` is the subscription the steps
    /// deliver to (the caller holds its subscriber).
    final func advance(downstream: _SubscriptionBase, _ subscribe: () -> any Disposable) {
        let first = mutex.withLock { () -> Int? in
            if state.stopped { return nil }
            if state.gate.isRunning {
                state.gate.markDue()
                return nil
            }
            if state.slot.isDisposed {
                if state.startedAfterDisposal { return nil }
                state.startedAfterDisposal = true
            }
            _ = state.gate.enter()
            return state.takeStep()
        }
        guard var step = first else { return }
        while true {
            if downstream.hasEnded {
                // Nothing subscribed from here on can be delivered.
                mutex.withLock {
                    state.stopped = true
                    state.gate.leave()
                }
                return
            }
            let handle = _run(in: startContext, returning: subscribe)
            let (toDispose, next) = mutex.withLock { () -> ((any Disposable)?, Int?) in
                let toDispose = state.slot.install(handle, step: step)
                if state.gate.takeTurn(unless: state.stopped || state.slot.isDisposed) {
                    return (toDispose, state.takeStep())
                }
                return (toDispose, nil)
            }
            toDispose?.dispose()
            guard let next else { return }
            step = next
        }
    }

    /// Ends the sequence: no further step is subscribed.
    final func stop() {
        mutex.withLock { state.stopped = true }
    }

    /// Disposes the current step, then stops the sequence and lets the
    /// subclass release what it no longer needs.
    final func dispose() {
        let current = mutex.withLock { state.slot.dispose() }
        current?.dispose()
        stop()
        didDispose()
    }

    /// Called once disposal is over, without the lock: release the signals
    /// still held. A source that keeps its subscribers after they ended
    /// (SignalKit's operator sinks live as long as their subscriber) would
    /// otherwise keep itself alive through sink → run → signal → source.
    func didDispose() {}
}
