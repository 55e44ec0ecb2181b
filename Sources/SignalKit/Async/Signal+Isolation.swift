// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

extension Signal where T: Sendable, E: Sendable {
    /// Subscribes with callbacks isolated to `isolation`: an actor, or the
    /// main actor (`MainActor.shared`).
    ///
    /// The callbacks are not `@Sendable`: they belong to the caller's actor,
    /// may use its state, and always run on it, so the compiler accepts what
    /// is right and rejects the rest:
    ///
    /// ```swift
    /// @MainActor final class Dashboard {
    ///     var lastPrice = 0.0
    ///     var handle: (any Disposable)?
    ///
    ///     func attach(_ prices: Signal<Double, NoError>) {
    ///         handle = prices.start(isolation: MainActor.shared, next: { price in
    ///             self.lastPrice = price   // on the main actor
    ///         })
    ///     }
    /// }
    /// ```
    ///
    /// - Threading: the signal is started on the calling thread (which is on
    ///   the actor). Every event is delivered asynchronously on the actor, in
    ///   the order the signal sent it, also an event sent synchronously
    ///   during `start` (it arrives after `start` returns). Events that
    ///   arrive while a delivery is running are delivered by the same
    ///   enqueued job: one actor hop per burst, not per value.
    /// - Termination: after the error or completion callback nothing more is
    ///   delivered and the callbacks are released (on the actor).
    /// - Disposal: `dispose()` (from any thread) disposes the subscription at
    ///   once and drops the events not yet delivered; a callback already
    ///   running finishes. The callbacks are released on the actor if a
    ///   delivery is pending, otherwise by `dispose()`.
    /// - Memory: the subscription holds the actor weakly (keeping the handle
    ///   in the actor, as above, makes no cycle once the signal terminates or
    ///   the handle is disposed; the callbacks, which capture the actor, are
    ///   released then). An event that arrives after the actor is gone
    ///   disposes the subscription.
    ///
    /// Cost: per value, a lock and a FIFO append on the signal's thread and
    /// the callback on the actor; per burst, one task. The benchmark's
    /// actor-delivery row measures it against the same delivery through an
    /// `AsyncStream`.
    public func start(
        isolation: isolated any Actor,
        next: ((T) -> Void)? = nil,
        error: ((E) -> Void)? = nil,
        completed: (() -> Void)? = nil
    ) -> any Disposable {
        if _carriesContext {
            // Each event is delivered in its sender's context (see
            // Boundaries/ContextCarrier.swift).
            let terminal = _TerminalContext()
            let delivery = _ActorDelivery<_InContext<T>, E>(
                actor: isolation,
                next: next.map { next in { carried in carried.deliver(next) } },
                error: error.map { error in { failure in terminal.deliver { error(failure) } } },
                completed: completed.map { completed in { terminal.deliver(completed) } }
            )
            delivery.upstream.set(
                self.start(
                    next: { delivery.enqueue(.next(_InContext(capturing: $0))) },
                    error: {
                        terminal.capture()
                        delivery.enqueue(.error($0))
                    },
                    completed: {
                        terminal.capture()
                        delivery.enqueue(.completed)
                    }
                )
            )
            return delivery
        }
        let delivery = _ActorDelivery<T, E>(actor: isolation, next: next, error: error, completed: completed)
        delivery.upstream.set(
            self.start(
                next: { delivery.enqueue(.next($0)) },
                error: { delivery.enqueue(.error($0)) },
                completed: { delivery.enqueue(.completed) }
            )
        )
        return delivery
    }

    /// Subscribes with callbacks isolated to `isolation`, as
    /// ``start(isolation:next:error:completed:)``, with the values waiting
    /// for the actor kept by `buffer`.
    ///
    /// The rules of ``SignalBuffer`` hold, with the actor as the consumer. A
    /// drain job takes every waiting value at once and delivers them on the
    /// actor, so up to `limit` values wait while the batch taken before is
    /// being delivered; after 16 batches the job ends and a new one is
    /// enqueued, so that other work on the actor runs between them.
    ///
    /// * ``SignalBuffer/droppingOldest(beyond:)``,
    ///   ``SignalBuffer/droppingNewest(beyond:)``, ``SignalBuffer/latest``:
    ///   the callbacks see the values the policy keeps, in order.
    /// * ``SignalBuffer/failing(beyond:with:)``: one value more than the limit
    ///   ends the subscription: upstream is disposed, the waiting values (and
    ///   the rest of a batch being delivered) are dropped and counted, and the
    ///   `error` callback receives `error` on the actor, after the value being
    ///   delivered.
    /// * ``SignalBuffer/blocking(beyond:)``: a producer that finds the buffer
    ///   full waits (its thread blocks on a condition variable) until the
    ///   drain takes the waiting values, or until the subscription is
    ///   disposed (the value is then dropped and counted). The producer must
    ///   not be the actor: a value sent into the full buffer by the drain
    ///   itself (a callback sending to the signal's source) or during this
    ///   `start` (a signal that sends synchronously when subscribed) stops
    ///   the process with a message naming the deadlock. Not detected, and a
    ///   deadlock all the same: a producer running in another job of the same
    ///   actor (an actor method, another subscription's callback, or code on
    ///   the main thread for the main actor), which holds the actor so that
    ///   the drain never runs. A producer that blocks one of the concurrency
    ///   pool's few threads slows every task: give the producer a thread of
    ///   its own.
    /// * The error and the completion are never dropped: they are delivered
    ///   after the waiting values.
    ///
    /// Drops, overflows and blocked sends are counted under the signal's
    /// name (its `description` now: name it with `named(_:)`) in
    /// ``SignalKitDebug/bufferStatistics()``, and in the probe of a buffer
    /// made with ``SignalBuffer/counted(by:)``. ``SignalBuffer/unbounded`` is
    /// ``start(isolation:next:error:completed:)`` itself (one actor job per
    /// burst, nothing counted).
    ///
    /// - Threading, Termination, Memory: as
    ///   ``start(isolation:next:error:completed:)``.
    /// - Disposal: as ``start(isolation:next:error:completed:)``; the
    ///   waiting values are released at once and a blocked producer returns.
    ///
    /// ```swift
    /// @MainActor final class Ticker {
    ///     var last = 0
    ///     var handle: (any Disposable)?
    ///
    ///     func attach(_ ticks: Signal<Int, NoError>) {
    ///         handle = ticks.start(isolation: MainActor.shared, buffer: .latest, next: { tick in
    ///             self.last = tick   // only the newest tick waits for the main actor
    ///         })
    ///     }
    /// }
    /// ```
    public func start(
        isolation: isolated any Actor,
        buffer: SignalBuffer<E>,
        next: ((T) -> Void)? = nil,
        error: ((E) -> Void)? = nil,
        completed: (() -> Void)? = nil
    ) -> any Disposable {
        if buffer.isUnbounded {
            return start(isolation: isolation, next: next, error: error, completed: completed)
        }
        let counters = _BufferAccount(name: description, buffer: buffer).open()
        if _carriesContext {
            // Each event is delivered in its sender's context (see
            // Boundaries/ContextCarrier.swift).
            let terminal = _TerminalContext()
            let delivery = _BoundedActorDelivery<_InContext<T>, E>(
                actor: isolation,
                policy: buffer,
                counters: counters,
                next: next.map { next in { carried in carried.deliver(next) } },
                error: error.map { error in { failure in terminal.deliver { error(failure) } } },
                completed: completed.map { completed in { terminal.deliver(completed) } }
            )
            let captured = Signal<_InContext<T>, E> { carried in
                self._start(_ContextCapturingSink(downstream: carried, terminal: terminal))
            }
            delivery.subscribing { captured._start(_BoundedActorSink(delivery: delivery)) }
            return delivery
        }
        let delivery = _BoundedActorDelivery<T, E>(
            actor: isolation, policy: buffer, counters: counters, next: next, error: error, completed: completed)
        delivery.subscribing { self._start(_BoundedActorSink(delivery: delivery)) }
        return delivery
    }
}

/// The state of one `start(isolation:…)` subscription: the events on their
/// way to the actor and the actor-isolated callbacks.
///
/// Memory: the actor is held weakly (an actor typically keeps the handle, so
/// a strong reference would be a cycle); a pending drain job holds it until
/// it has run. The callbacks are released after the terminal event (on the
/// actor) or by `dispose()` (on the actor if a drain job is pending, else on
/// the disposing thread, when no drain can run any more). An event arriving
/// once the actor is gone disposes the subscription.
final class _ActorDelivery<T: Sendable, E: Sendable>: Disposable, Sendable {
    private struct State {
        var events = _FIFO<_QueuedEvent<T, E>>()
        /// Whether a drain job is enqueued or running (at most one is).
        var draining = false
        /// The terminal event was queued, or the subscription disposed:
        /// nothing more is queued.
        var stopped = false
        /// `dispose()` was called.
        var disposed = false
    }

    /// What a drain job does next.
    private enum Step {
        case deliver(_FIFO<_QueuedEvent<T, E>>)
        case finish(releasingCallbacks: Bool)
    }

    private weak let actor: (any Actor)?
    let upstream = MetaDisposable()
    private let state = _LockedState(State())
    /// `state.disposed`, readable without the lock (checked per event).
    private let disposed = Synchronization.Atomic<Bool>(false)
    // Unsafe: the callbacks were formed in `actor`'s isolation; they are
    // called and released only by the drain job, which runs isolated to
    // `actor`, except that `dispose()` releases them when no drain job is
    // pending and none can start (decided under the lock, see `dispose`).
    private nonisolated(unsafe) var next: ((T) -> Void)?
    private nonisolated(unsafe) var error: ((E) -> Void)?
    private nonisolated(unsafe) var completed: (() -> Void)?

    init(actor: any Actor, next: ((T) -> Void)?, error: ((E) -> Void)?, completed: (() -> Void)?) {
        self.actor = actor
        self.next = next
        self.error = error
        self.completed = completed
    }

    /// Queues `event` (on the signal's thread) and enqueues a drain job on
    /// the actor unless one is pending; if the actor is gone by then, disposes
    /// the subscription instead.
    func enqueue(_ event: _QueuedEvent<T, E>) {
        let startsDrain = state.withLock { (state: inout State) -> Bool in
            guard !state.stopped else { return false }
            if case .next = event {} else { state.stopped = true }
            state.events.append(event)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        guard startsDrain else { return }
        // The weak reference is read once per burst, not per value.
        guard let actor else {
            // Nobody is left to deliver to: no drain job will run, so
            // `dispose()` releases the callbacks itself.
            state.withLock { $0.draining = false }
            dispose()
            return
        }
        // Detached: a task made here would inherit the sender's task-locals
        // (its context) for every event of the burst; each event runs in its
        // own instead (carried with it when a propagation is installed).
        Task.detached { await self.drain(on: actor) }
    }

    func dispose() {
        disposed.store(true, ordering: .releasing)
        let (dropped, releaseHere) = state.withLock {
            (state: inout State) -> (_FIFO<_QueuedEvent<T, E>>, Bool) in
            state.stopped = true
            state.disposed = true
            defer { state.events = _FIFO() }
            // With no drain pending, none can start any more (`stopped`):
            // nothing else touches the callbacks.
            return (state.events, !state.draining)
        }
        _ = dropped
        if releaseHere { releaseCallbacks() }
        upstream.dispose()
    }

    /// Delivers the queued events on the actor, a batch per lock, until the
    /// queue is empty.
    private func drain(on actor: isolated any Actor) {
        while true {
            switch nextStep() {
            case .finish(let releasing):
                if releasing { releaseCallbacks() }
                return
            case .deliver(var batch):
                while let event = batch.popFirst() {
                    // A dispose from another thread drops the rest of the batch.
                    if disposed.load(ordering: .acquiring) { break }
                    deliver(event)
                }
            }
        }
    }

    /// Delivers one event (on the actor, by the drain job).
    private func deliver(_ event: _QueuedEvent<T, E>) {
        switch event {
        case .next(let value):
            next?(value)
        case .error(let failure):
            let callback = error
            releaseCallbacks()
            callback?(failure)
        case .completed:
            let callback = completed
            releaseCallbacks()
            callback?()
        }
    }

    /// The queued events; or, when there are none, the end of this drain job
    /// (and whether it must release the callbacks: the subscription was
    /// disposed while it was pending).
    private func nextStep() -> Step {
        state.withLock { (state: inout State) -> Step in
            guard state.events.isEmpty else {
                defer { state.events = _FIFO() }
                return .deliver(state.events)
            }
            state.draining = false
            return .finish(releasingCallbacks: state.disposed)
        }
    }

    /// Drops the callbacks.
    private func releaseCallbacks() {
        next = nil
        error = nil
        completed = nil
    }
}
