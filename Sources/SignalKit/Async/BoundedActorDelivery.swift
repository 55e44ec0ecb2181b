// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// The bounded actor delivery: `start(isolation:buffer:…)` with a bounded
// policy. One subscription's values wait in a `_BoundaryBuffer` (the producer
// side every bounded boundary shares); the first value of a burst enqueues
// one drain job on the actor, which takes every waiting value at once
// (swapping its emptied batch for the producer's buffer) and delivers them,
// then the next batch, until nothing waits, then the terminal event. The
// unbounded default is `_ActorDelivery` (Signal+Isolation.swift); this file
// is only for the bounded policies.

/// One subscription through a bounded `start(isolation:buffer:…)`.
///
/// Memory and callbacks as `_ActorDelivery`: the actor is held weakly (a
/// pending drain job holds it until it has run); the callbacks are released
/// after the terminal event (on the actor) or by `dispose()` (on the actor if
/// a drain job is pending, else on the disposing thread, when no drain can
/// run any more); an event arriving once the actor is gone disposes the
/// subscription.
///
/// `@unchecked Sendable`: `state` and `consumer` are guarded by `mutex`;
/// `batch` is touched only by the one drain job that runs at a time
/// (`state.consumerActive`, set and cleared under the mutex, admits one); the
/// callbacks only by that job, or by `dispose()` when none is pending and
/// none can start (decided under the mutex); the rest is immutable or
/// atomic.
final class _BoundedActorDelivery<T: Sendable, E: Sendable>: _DrainedBoundary<T, E>, Disposable, @unchecked Sendable {
    private weak let actor: (any Actor)?

    // The callbacks were formed in `actor`'s isolation (see the class comment
    // for who calls and releases them).
    private nonisolated(unsafe) var next: ((T) -> Void)?
    private nonisolated(unsafe) var error: ((E) -> Void)?
    private nonisolated(unsafe) var completed: (() -> Void)?

    init(
        actor: any Actor,
        policy: SignalBuffer<E>,
        counters: _BufferCounts,
        next: ((T) -> Void)?,
        error: ((E) -> Void)?,
        completed: (() -> Void)?
    ) {
        self.actor = actor
        self.next = next
        self.error = error
        self.completed = completed
        super.init(policy: policy, counters: counters)
    }

    private var isBlocking: Bool {
        if case .block = policy.kind { return true }
        return false
    }

    /// Runs `subscribe` (on the actor, in `start`) and keeps its handle; a
    /// `blocking` producer sending synchronously meanwhile is on the actor.
    func subscribing(_ subscribe: () -> any Disposable) {
        guard isBlocking else {
            upstream.set(subscribe())
            return
        }
        // The consumer's thread while it subscribes (on the actor): a
        // blocking producer sending synchronously would wait for itself.
        mutex.withLock { consumer.markThread() }
        let handle = subscribe()
        mutex.withLock { consumer.clearThread() }
        upstream.set(handle)
    }

    // MARK: Producer side (the signal's thread, serial)

    func putNext(_ value: T) {
        offerValue(value, consumerName: Self.consumerName)
    }

    private static var consumerName: String {
        "actor (a callback its drain job is running, or start(isolation:buffer:) subscribing on it)"
    }

    // MARK: Consumer side (a drain job on the actor, one at a time)

    /// Enqueues a drain job on the actor; if the actor is gone, disposes the
    /// subscription instead.
    override func scheduleDrain() {
        // The weak reference is read once per burst, not per value.
        guard let actor else {
            // Nobody is left to deliver to: no drain job will run, so
            // `dispose()` releases the callbacks itself.
            mutex.withLock { state.consumerActive = false }
            dispose()
            return
        }
        // Detached: a task made here would inherit the sending code's
        // task-locals (its context) for every value of the burst.
        Task.detached { await self.drain(on: actor) }
    }

    private func drain(on actor: isolated any Actor) {
        let tracksThread = isBlocking
        if tracksThread { mutex.withLock { consumer.markThread() } }
        for _ in 0..<Self.batchesPerDrain {
            mutex.lock()
            let step = state.take(into: &batch)
            var delivering = false
            if case .values = step {
                wakeBlockedProducersLocked()
                delivering = true
            }
            if tracksThread && !delivering { consumer.clearThread() }
            // Disposed while this job was pending or running: the job
            // releases the callbacks (`dispose()` left them to it).
            let disposed = state.isDisposed
            mutex.unlock()
            switch step {
            case .idle:
                if disposed { releaseCallbacks() }
                return
            case .terminal(let box):
                counters?.detach(ObjectIdentifier(self))
                // A disposal under way may have dropped values of the last
                // batch: the terminal event goes with them (see
                // `beginDisposal`); the callbacks are this job's to release.
                if disposalBegan.load(ordering: .acquiring) {
                    releaseCallbacks()
                } else {
                    deliver(box.event)
                }
                return
            case .values:
                deliverBatch { next?($0) }
            }
        }
        // More may wait: end this job and go on in a new one, behind the
        // actor's other work (the drain stays scheduled).
        if tracksThread { mutex.withLock { consumer.clearThread() } }
        Task.detached { await self.drain(on: actor) }
    }

    /// Delivers the terminal event, the callbacks released first.
    private func deliver(_ event: _BoundaryTerminal<E>) {
        switch event {
        case .completed:
            let callback = completed
            releaseCallbacks()
            callback?()
        case .failed(let failure):
            let callback = error
            releaseCallbacks()
            callback?(failure)
        }
    }

    /// Drops the callbacks.
    private func releaseCallbacks() {
        next = nil
        error = nil
        completed = nil
    }

    // MARK: Disposal

    func dispose() {
        beginDisposal()
        // Who releases the callbacks is decided in the disposal's critical
        // section: with no drain job pending none can start any more (the
        // buffer is disposed), so nothing else touches them; the first
        // disposal releases them.
        let disposal = disposeBuffer()
        if disposal.first && !disposal.consumerWasActive { releaseCallbacks() }
        upstream.dispose()
    }
}

/// The sink of a bounded `start(isolation:buffer:…)`: hands every event to
/// the delivery.
struct _BoundedActorSink<T: Sendable, E: Sendable>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let delivery: _BoundedActorDelivery<T, E>

    func putNext(_ value: T, from _: _SubscriptionBase) { delivery.putNext(value) }
    func putError(_ error: E) { delivery.offerTerminal(.failed(error)) }
    func putCompletion() { delivery.offerTerminal(.completed) }
}
