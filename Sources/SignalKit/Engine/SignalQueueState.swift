// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// The engine of `switchToLatest` / `mapToSignal` (switching), `queue` /
// `mapToQueue` (queueing) and `throttled` / `mapToThrottled` (throttling):
// an outer signal of inner signals, at most one inner live at a time.
//
// Specialisation: the per-inner path (an outer value, subscribing the inner,
// its completion) is `@inlinable`, and the sinks reach it through functions
// built where the sinks are created, so a client's `mapToSignal` runs code
// specialised for its types. Unspecialised, every inner would cost about
// nine runtime generic-metadata lookups (the generic `State`, the inner sink
// and subscription types; `scripts/callgrind W6 SignalKit` shows any). The
// cold paths (errors, outer completion, disposal) stay unspecialised.

/// The state of one subscription of a signal-of-signals operator.
///
/// * Switching: each new inner is subscribed at once; the previous one is
///   disposed right after (new subscribed first) and silenced from the moment
///   its successor starts (its events, completion included, are dropped).
///   The values an inner sends while its own subscription is being made are
///   delivered even if another thread started a newer inner meanwhile: an
///   inner is active from the start of its subscription at least until that
///   subscription returns, so no value of a synchronous inner is lost when
///   several threads feed the outer at once (SwiftSignalKit
///   delivers them too).
/// * Queueing: inners run one after another in arrival order.
/// * Throttling: as queueing, but only the latest waiting inner is kept;
///   older waiting ones are released without ever being subscribed.
///
/// When the running inner completes asynchronously, the next one is
/// subscribed inside its completion callback, before it is disposed. An inner
/// that completes synchronously, while being subscribed, is disposed when its
/// subscription returns and the loop in `run` subscribes the next one: the
/// stack does not grow with the number of queued inners.
///
/// The output completes when the outer has completed and no inner is running
/// or waiting (at once if the outer completes while idle). An error from the
/// outer or from the current inner fails the output; nothing is subscribed
/// after an error or after disposal (waiting inners are released at disposal,
/// which every termination of the output triggers).
///
/// The state is the generator's disposable: disposing it disposes the
/// current inner, then the outer. It holds no reference to the downstream
/// subscriber (the sinks do), so it forms no cycle with the downstream
/// subscription.
///
/// `@unchecked Sendable`: `state` is guarded by `mutex`; `currentIndex` is an
/// atomic copy of `State.index` for the value path.
@usableFromInline
final class _SignalQueueState<R, E>: Disposable, @unchecked Sendable {
    @usableFromInline
    enum Mode: Sendable {
        case switching
        case queueing
        case throttling
    }

    @usableFromInline
    enum Next {
        case none
        case complete
        case start(Signal<R, E>, index: Int)
    }

    /// Its fields are declared word-sized first and the flags last, where
    /// they pack into the words' tail: a subscription's engine is one
    /// malloc size class smaller for it (W22's `mapToSignal`).
    @usableFromInline
    struct State {
        /// The number of the latest inner started (1, 2, …).
        @usableFromInline var index = 0
        /// Waiting inners: all of them (queueing), or the latest (throttling).
        @usableFromInline var waiting = _FIFO<Signal<R, E>>()
        /// The inners' and the outer's handles are subscriptions (`_start`
        /// returns them): stored as such, a word each instead of an
        /// existential's two.
        @usableFromInline var slot = _StepSlot<_SubscriptionBase>()
        @usableFromInline var outer: _SubscriptionBase?
        /// An inner is running (subscribed, not completed).
        @usableFromInline var executing = false
        @usableFromInline var outerCompleted = false
        /// An error or disposal happened: nothing more is subscribed.
        @usableFromInline var stopped = false
        /// Running: the latest inner's `_start` has not returned yet; due:
        /// that inner completed before it returned.
        @usableFromInline var gate = _RunAgainGate()

        @inlinable init() {}

        @inlinable var hasWaiting: Bool { !waiting.isEmpty }

        @inlinable
        mutating func begin() -> Int {
            executing = true
            index += 1
            gate.restart()
            return index
        }

        /// The running inner completed: start a waiting one, or go idle.
        @inlinable
        mutating func takeNext() -> Next {
            if !stopped, let next = waiting.popFirst() {
                return .start(next, index: begin())
            }
            executing = false
            return outerCompleted && !hasWaiting ? .complete : .none
        }
    }

    // Stored in this order so that the one-byte fields fill the end of
    // `state` (see `State`): the object is 88 bytes.

    /// The bound on the waiting inners of a bounded `queue` (queueing mode
    /// only); nil: unbounded.
    @usableFromInline let bound: _SignalQueueBound<R, E>?
    /// Guarded by `mutex`: the lock makes accesses exclusive, so Swift's
    /// dynamic exclusivity check is off (it cost more than the lock).
    @exclusivity(unchecked) @usableFromInline var state = State()
    @usableFromInline let mode: Mode
    /// Every critical section below only moves state (no call out, nothing
    /// released inside: replaced values are returned and dropped after
    /// unlocking), which is what `_SpinLock` requires.
    @usableFromInline let mutex = _SpinLock()
    private let currentIndex = Synchronization.Atomic<Int>(0)

    @inlinable
    init(mode: Mode, bound: _SignalQueueBound<R, E>? = nil) {
        self.mode = mode
        self.bound = bound
    }

    deinit {
        bound?.released(self)
    }

    // MARK: Outer events

    /// Sets the outer subscription's handle (once `_start` returned).
    @usableFromInline
    func setOuter(_ handle: _SubscriptionBase) {
        let disposed = mutex.withLock { () -> Bool in
            if state.slot.isDisposed { return true }
            state.outer = handle
            return false
        }
        if disposed { handle.dispose() }
    }

    /// `inner` is consumed (the outer sink's fresh `transform` result): handing
    /// it on to `run` costs no retain and release per inner.
    @inlinable
    func outerNext(_ inner: consuming Signal<R, E>, _ downstream: Subscriber<R, E>) {
        if let bound { return bound.outerNext(self, inner, downstream) }
        // An inner that waits is subscribed later, on the thread that
        // completes the one before it: in its sender's context.
        var inner = inner
        if mode != .switching { inner = _inSenderContext(inner) }
        var start: Int?
        var dropped: Signal<R, E>?
        mutex.lock()
        if !state.stopped {
            switch mode {
            case .switching:
                start = state.begin()
            case .queueing:
                if state.executing {
                    state.waiting.append(inner)
                } else {
                    start = state.begin()
                }
            case .throttling:
                if state.executing {
                    dropped = state.waiting.popFirst()
                    state.waiting.append(inner)
                } else {
                    start = state.begin()
                }
            }
            if let start { publishCurrent(start) }
        }
        mutex.unlock()
        _ = dropped  // released here, outside the lock
        if let start {
            run(inner, index: start, downstream)
        } else {
            _ = consume inner  // not started: released here, outside the lock
        }
    }

    @usableFromInline
    func outerFailed(_ error: E, _ downstream: Subscriber<R, E>) {
        mutex.withLock { state.stopped = true }
        bound?.failed(self)
        downstream.putError(error)
    }

    @usableFromInline
    func outerCompleted(_ downstream: Subscriber<R, E>) {
        let complete = mutex.withLock { () -> Bool in
            state.outerCompleted = true
            return !state.executing && !state.hasWaiting
        }
        if complete { downstream.putCompletion() }
    }

    // MARK: Inner events

    /// Whether inner `index` is the current one (a replaced inner is silent).
    @usableFromInline
    func isCurrent(_ index: Int) -> Bool {
        currentIndex.load(ordering: .acquiring) == index
    }

    /// Publishes the index of the inner that becomes current, under the
    /// mutex (readers of `isCurrent` take no lock).
    @usableFromInline
    func publishCurrent(_ index: Int) {
        currentIndex.store(index, ordering: .releasing)
    }

    @usableFromInline
    func innerFailed(_ index: Int, _ error: E, _ downstream: Subscriber<R, E>) {
        let current = mutex.withLock { () -> Bool in
            guard state.index == index else { return false }
            state.stopped = true
            return true
        }
        guard current else { return }
        bound?.failed(self)
        downstream.putError(error)
    }

    @inlinable
    func innerCompleted(_ index: Int, _ downstream: Subscriber<R, E>) {
        mutex.lock()
        let next = innerCompletedLocked(index)
        mutex.unlock()
        perform(next, downstream)
    }

    @inlinable
    func innerCompletedLocked(_ index: Int) -> Next {
        guard state.executing, state.index == index else { return .none }
        guard !state.gate.isRunning else {
            if state.outerCompleted && !state.hasWaiting {
                // Nothing can follow: complete now, inside the callback.
                state.executing = false
                return .complete
            }
            // The loop in `run` that is subscribing it goes on.
            state.gate.markDue()
            return .none
        }
        let next = state.takeNext()
        if case .start(_, let index) = next { publishCurrent(index) }
        return next
    }

    // MARK: Running inners

    /// Subscribes `first`, then, as long as each inner completes while being
    /// subscribed, the next waiting one.
    @inlinable
    func run(_ first: consuming Signal<R, E>, index firstIndex: Int, _ downstream: Subscriber<R, E>) {
        var signal = first
        var index = firstIndex
        while true {
            let sink = _SignalQueueInnerSink(state: self, downstream: downstream, index: index) { state, index, downstream in
                state.innerCompleted(index, downstream)
            }
            bound?.innerStarting()
            let handle = signal._start(sink)
            bound?.innerSubscribed()
            mutex.lock()
            let (toDispose, next) = installLocked(handle, index: index)
            mutex.unlock()
            toDispose?.dispose()
            switch next {
            case .none:
                return
            case .complete:
                downstream.putCompletion()
                return
            case .start(let nextSignal, let nextIndex):
                signal = nextSignal
                index = nextIndex
            }
        }
    }

    /// Stores the handle of inner `index` once its `_start` returned;
    /// returns what to dispose and what to do next.
    @inlinable
    func installLocked(_ handle: _SubscriptionBase, index: Int) -> (_SubscriptionBase?, Next) {
        let toDispose = state.slot.install(handle, step: index)
        // Replaced meanwhile (switching), or still running.
        guard state.index == index else { return (toDispose, .none) }
        // The next inner, if any, restarts the gate (`begin`).
        guard state.gate.endTurn() else { return (toDispose, .none) }
        let next = state.takeNext()
        if case .start(_, let index) = next { publishCurrent(index) }
        return (toDispose, next)
    }

    @inlinable
    func perform(_ next: Next, _ downstream: Subscriber<R, E>) {
        switch next {
        case .none:
            break
        case .complete:
            downstream.putCompletion()
        case .start(let signal, let index):
            run(signal, index: index, downstream)
        }
    }

    // MARK: Disposal

    /// Disposes the current inner, then the outer; releases the waiting
    /// inners (nothing is subscribed after disposal).
    @usableFromInline
    func dispose() {
        let (current, outer) = mutex.withLock { () -> (_SubscriptionBase?, _SubscriptionBase?) in
            state.stopped = true
            defer { state.outer = nil }
            return (state.slot.dispose(), state.outer)
        }
        current?.dispose()
        outer?.dispose()
        var waiting = _FIFO<Signal<R, E>>()
        mutex.withLock { swap(&waiting, &state.waiting) }
        _ = waiting
        bound?.disposed(self)
    }
}

/// One inner's events, stored in the inner subscription's tail. Its
/// completion goes through `completed`, a function specialised where the
/// sink is created (see the file header).
@usableFromInline
struct _SignalQueueInnerSink<R, E>: _InlineSink {
    @usableFromInline let state: _SignalQueueState<R, E>
    @usableFromInline let downstream: Subscriber<R, E>
    @usableFromInline var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    @usableFromInline let index: Int
    @usableFromInline let completed: (_SignalQueueState<R, E>, Int, Subscriber<R, E>) -> Void

    @inlinable
    init(
        state: _SignalQueueState<R, E>,
        downstream: Subscriber<R, E>,
        index: Int,
        completed: @escaping @Sendable (_SignalQueueState<R, E>, Int, Subscriber<R, E>) -> Void
    ) {
        self.state = state
        self.downstream = downstream
        self.index = index
        self.completed = completed
    }

    /// A value of an inner that is no longer current is still delivered
    /// while the inner's generator runs (its `_start` has not returned).
    @usableFromInline func putNext(_ value: R, from subscription: _SubscriptionBase) {
        if state.isCurrent(index) || subscription.generatorIsRunning { downstream.putNext(value) }
    }

    @usableFromInline func putError(_ error: E) { state.innerFailed(index, error, downstream) }
    @usableFromInline func putCompletion() { completed(state, index, downstream) }
}

/// The outer sink: `transform` makes the inner signal from each outer value
/// (eagerly, at arrival). Values go through `next`, a function specialised
/// where the sink is created (see the file header).
///
/// The outer's error type `EO` is the output's `E`, or `NoError`, which has
/// no values (`mapToSignalPromotingError`): `_signalQueue` and
/// `_signalQueuePromotingError` make only those. So an outer error is
/// forwarded with a cast that is the identity, on this cold path, and the
/// sink stores no conversion (two words less in every outer subscription:
/// W22's `mapToSignal`).
@usableFromInline
struct _SignalQueueOuterSink<T, EO, R, E>: _InlineSink {
    @usableFromInline typealias Input = T
    @usableFromInline typealias Failure = EO
    @usableFromInline let state: _SignalQueueState<R, E>
    @usableFromInline let downstream: Subscriber<R, E>
    @usableFromInline var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    @usableFromInline let transform: (T) -> Signal<R, E>
    @usableFromInline let next: (_SignalQueueOuterSink<T, EO, R, E>, T) -> Void

    @inlinable
    init(
        state: _SignalQueueState<R, E>,
        downstream: Subscriber<R, E>,
        transform: @escaping @Sendable (T) -> Signal<R, E>,
        next: @escaping @Sendable (_SignalQueueOuterSink<T, EO, R, E>, T) -> Void
    ) {
        self.state = state
        self.downstream = downstream
        self.transform = transform
        self.next = next
    }

    @usableFromInline func putNext(_ value: T, from _: _SubscriptionBase) { next(self, value) }
    @usableFromInline func putError(_ error: EO) {
        // Only when EO is E: NoError has no value to call this with.
        state.outerFailed(error as! E, downstream)
    }
    @usableFromInline func putCompletion() { state.outerCompleted(downstream) }
}

/// Subscribes `outer` through a signal-of-signals engine in `mode`; an
/// outer error fails the output.
@inlinable
func _signalQueue<T, R, E>(
    _ outer: Signal<T, E>,
    mode: _SignalQueueState<R, E>.Mode,
    transform: @escaping @Sendable (T) -> Signal<R, E>
) -> Signal<R, E> {
    _signalQueueEngine(outer, mode: mode, transform: transform)
}

/// `_signalQueue` for an outer that cannot fail: the output's error type is
/// the inners'.
@inlinable
func _signalQueuePromotingError<T, R, E>(
    _ outer: Signal<T, NoError>,
    mode: _SignalQueueState<R, E>.Mode,
    transform: @escaping @Sendable (T) -> Signal<R, E>
) -> Signal<R, E> {
    _signalQueueEngine(outer, mode: mode, transform: transform)
}

/// Only through the two functions above, which allow `EO` to be `E` or
/// `NoError` (see `_SignalQueueOuterSink`).
@inlinable
func _signalQueueEngine<T, EO, R, E>(
    _ outer: Signal<T, EO>,
    mode: _SignalQueueState<R, E>.Mode,
    transform: @escaping @Sendable (T) -> Signal<R, E>
) -> Signal<R, E> {
    Signal { subscriber in
        let state = _SignalQueueState<R, E>(mode: mode)
        let sink = _SignalQueueOuterSink<T, EO, R, E>(
            state: state,
            downstream: subscriber,
            transform: transform
        ) { sink, value in
            sink.state.outerNext(sink.transform(value), sink.downstream)
        }
        state.setOuter(outer._start(sink))
        return state
    }
}

/// What bounds the waiting inners of the queueing mode: overridden by the
/// bounded `queue`'s `_QueueBound` (Boundaries/BoundedQueue.swift, which
/// applies a `SignalBuffer`). The engine calls it only when it has one.
///
/// `@unchecked Sendable`: no state of its own; subclasses say theirs.
@usableFromInline
class _SignalQueueBound<R, E>: @unchecked Sendable {
    @usableFromInline init() {}

    /// An outer value, in place of the unbounded queueing path: starts the
    /// inner if none runs, else queues it under the bound.
    @usableFromInline
    func outerNext(_ state: _SignalQueueState<R, E>, _ inner: Signal<R, E>, _ downstream: Subscriber<R, E>) {
        preconditionFailure("_SignalQueueBound.outerNext is overridden")  // invariant
    }

    /// An inner is about to be subscribed on this thread (no lock held).
    @usableFromInline func innerStarting() {}

    /// That inner's `_start` returned (no lock held).
    @usableFromInline func innerSubscribed() {}

    /// The output fails with an outer or inner error (the engine stopped,
    /// before the error is delivered).
    @usableFromInline func failed(_ state: _SignalQueueState<R, E>) {}

    /// The engine was disposed (its waiting inners released).
    @usableFromInline func disposed(_ state: _SignalQueueState<R, E>) {}

    /// The engine is being freed.
    @usableFromInline func released(_ state: _SignalQueueState<R, E>) {}
}

/// `inner`, made to be subscribed in the calling code's context wherever it
/// is subscribed (an inner waiting in a `queue` is subscribed later, on the
/// thread that completes the one before it); `inner` itself when no context
/// propagation is installed. Its events are not wrapped: they run where its
/// own senders send them.
@usableFromInline
func _inSenderContext<R, E>(_ inner: consuming Signal<R, E>) -> Signal<R, E> {
    guard let captured = _ContextHook.capture() else { return inner }
    let signal = inner
    return Signal { subscriber in
        var handle: (any Disposable)?
        captured.run { handle = signal._start(_ForwardSink(downstream: subscriber)) }
        return handle!
    }
}
