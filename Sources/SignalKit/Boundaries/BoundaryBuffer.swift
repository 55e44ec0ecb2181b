// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

// The producer side every bounded boundary shares: a `_BoundaryState` under a
// mutex, the policy applied to each value (drops counted and released
// outside the lock, the `blocking` wait and its deadlock check, the
// `failing` overflow), the depth the statistics read, and disposal. The
// owners (`_BoundedDelay`, the actor delivery, the task drained buffer, the
// values iteration) add the consumer. The bounded hop (BoundedHop.swift)
// keeps values in a lock-free ring of its own, and the bounded `queue` is
// the signal-of-signals engine's queueing mode (Engine/SignalQueueBound.swift);
// both apply the same policy decision when full (`SignalBuffer.overflow`,
// through `_FIFO.admit` for the queue) and make `blocking` producers wait in
// the same place (Blocking.swift).

/// What `admit` did with a value (non-generic: see BoundaryState.swift).
enum _Admission {
    /// The value waits; the caller starts its consumer if asked.
    case accepted(startConsumer: Bool)
    /// The value was dropped (counted), refused after the end, or a blocked
    /// producer was released by disposal: nothing more to do.
    case handled
    /// A `failing` policy overflowed: the waiting values were dropped and
    /// counted, the buffer is in its `overflowed` phase with the policy's
    /// error (`overflowError`) as its terminal event (taken by
    /// `_BoundaryState.take` for a drain); the caller starts its consumer if
    /// asked and ends the subscription.
    case overflowed(startConsumer: Bool)
}

/// One subscription's bounded buffer and its producer side (see the file
/// header).
///
/// `@unchecked Sendable`: `state` and `consumer` are guarded by `mutex`; the
/// rest is immutable or thread-safe.
package class _BoundaryBuffer<T, E: Sendable>: _BufferDepthSource, @unchecked Sendable {
    let policy: SignalBuffer<E>
    /// Nil for a buffer that counts nothing (an unbounded `values`).
    let counters: _BufferCounts?
    /// Adaptive: producer and drain take it for a few dozen instructions
    /// each, on two cores at once; a plain mutex sleeps in the kernel at
    /// once on a held lock, which costs each side a futex round trip.
    let mutex = _Mutex(adaptive: true)
    /// Where `blocking` producers wait (nil for the other policies).
    private let blocked: _BlockedProducers?
    /// Guarded by `mutex` (so the dynamic exclusivity check, a call per
    /// access, is left out).
    @exclusivity(unchecked) nonisolated(unsafe) var state = _BoundaryState<T, E>()
    /// Who empties the buffer, for the `blocking` deadlock check (guarded by
    /// `mutex`; the owners mark their consumer's thread or task).
    @exclusivity(unchecked) nonisolated(unsafe) var consumer: _ConsumerMark

    init(policy: SignalBuffer<E>, counters: _BufferCounts?, consumerQueue: Queue? = nil) {
        self.policy = policy
        self.counters = counters
        consumer = _ConsumerMark(queue: consumerQueue)
        blocked = policy.overflow == .block ? _BlockedProducers() : nil
        counters?.attach(self)
    }

    deinit {
        counters?.detach(ObjectIdentifier(self))
        mutex.destroy()
    }

    var waitingCount: Int {
        mutex.withLock { state.waiting.count }
    }

    /// The error of a `failing` policy (asked after an overflow only).
    var overflowError: E { policy.overflowError }

    /// The consumer, if it is suspended waiting for a value (an async
    /// iteration's `next()`), taken: the value offered now is always kept,
    /// even by a full buffer, and `admit` resumes it after unlocking. Nil
    /// for every other owner. Called with the mutex held.
    func takeWaitingConsumerLocked() -> CheckedContinuation<Void, Never>? { nil }

    /// Applies the policy to `value`. A `blocking` producer waits here for
    /// room, unless it is the consumer (`consumer.isCaller()`), which
    /// waiting would deadlock: the process stops with a message naming
    /// `consumerName` (and `boundary`, what the user chose the policy for).
    func admit(_ value: T, consumerName: @autoclosure () -> String, boundary: String = "boundary") -> _Admission {
        // The slot a value to release (or to offer again) is moved into: on
        // the stack, so that concurrent producers (a misbehaving source)
        // stay memory-safe.
        withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { slot in
            let displaced = slot.baseAddress!
            var overflow = _FIFO<T>()
            mutex.lock()
            let waiter = takeWaitingConsumerLocked()
            // A waiting consumer is resumed however the value fares (it
            // looks again).
            defer { waiter?.resume() }
            var outcome = state.offer(
                value, policy: policy, consumerWaiting: waiter != nil, displaced: displaced, overflow: &overflow)
            while true {
                switch outcome {
                case .accepted(let startConsumer, let newMaximumDepth):
                    mutex.unlock()
                    if let newMaximumDepth { counters?.recordDepth(newMaximumDepth) }
                    return .accepted(startConsumer: startConsumer)
                case .dropped:
                    mutex.unlock()
                    counters?.recordDrops(1)
                    // Released here, outside the lock: a deinit may send to the signal.
                    displaced.deinitialize(count: 1)
                    return .handled
                case .overflowed(let startConsumer):
                    mutex.unlock()
                    counters?.recordOverflow()
                    counters?.recordDrops(overflow.count + 1)
                    displaced.deinitialize(count: 1)
                    withExtendedLifetime(overflow) {}
                    return .overflowed(startConsumer: startConsumer)
                case .full:
                    // Only a `blocking` policy reports `.full`.
                    blocked!.wait(
                        on: mutex, callerIsConsumer: consumer.isCaller(), consumer: consumerName(), boundary: boundary,
                        counters: counters,
                        beforeStopping: {
                            mutex.unlock()
                            displaced.deinitialize(count: 1)
                        })
                    if state.isDisposed {
                        // Dropped: the disposal counted it (`disposeBuffer`).
                        mutex.unlock()
                        displaced.deinitialize(count: 1)
                        return .handled
                    }
                    outcome = state.offer(displaced.move(), policy: policy, displaced: displaced, overflow: &overflow)
                case .refused:
                    mutex.unlock()
                    displaced.deinitialize(count: 1)
                    return .handled
                }
            }
        }
    }

    /// Wakes the producers waiting for room. Called with the mutex held,
    /// after the consumer took values.
    func wakeBlockedProducersLocked() {
        blocked?.wake()
    }

    /// Ends the buffer for good: releases the waiting values (after
    /// unlocking), wakes blocked producers (their values are dropped, and
    /// counted here, before the subscription leaves its counters), and
    /// leaves the live count. Idempotent.
    ///
    /// - Parameter droppingWaiting: whether the waiting values are drops: an
    ///   upstream error that goes ahead of them ends the subscription, so
    ///   they are counted (delivered + dropped == sent); a disposal releases
    ///   them uncounted (the consumer left).
    /// - Returns: whether this call disposed the buffer (the first one), and
    ///   whether its consumer was active then.
    @discardableResult
    func disposeBuffer(droppingWaiting: Bool = false) -> (first: Bool, consumerWasActive: Bool) {
        let (dropped, blocked, first, active) = mutex.withLock { () -> (_FIFO<T>, Int, Bool, Bool) in
            let first = !state.isDisposed
            let blocked = first ? self.blocked?.count ?? 0 : 0
            let dropped = state.dispose()
            wakeBlockedProducersLocked()
            return (dropped, blocked, first, state.consumerActive)
        }
        let waiting = droppingWaiting ? dropped.count : 0
        // Released here, outside the lock: a deinit may send to the signal.
        withExtendedLifetime(dropped) {}
        counters?.recordDrops(blocked + waiting)
        counters?.detach(ObjectIdentifier(self))
        return (first, active)
    }
}

/// A bounded buffer emptied by drains on an executor (the actor delivery)
/// or by a task (`_TaskDrainedBuffer`): the producer side that starts a drain per
/// burst, the drain's batch and its delivery, and the stop flag a disposal
/// or a `failing` overflow sets. A subclass says how a drain is scheduled
/// (`scheduleDrain`) and runs it, taking batches with `state.take(into:
/// &batch)`.
///
/// `@unchecked Sendable`: as `_BoundaryBuffer`; `batch` is touched only by
/// the one drain that runs at a time (`state.consumerActive`, set and
/// cleared under the mutex, admits one).
package class _DrainedBoundary<T, E: Sendable>: _BoundaryBuffer<T, E>, @unchecked Sendable {
    /// The upstream subscription's handle.
    let upstream = MetaDisposable()
    /// The values the drain is delivering (the drain's own, so the dynamic
    /// exclusivity check is left out).
    @exclusivity(unchecked) nonisolated(unsafe) var batch = _FIFO<T>()
    /// Set by disposal and by a `failing` overflow: the drain stops
    /// delivering values at once (read per value, without the lock).
    let valuesStopped = Synchronization.Atomic<Bool>(false)
    /// A disposal began (`beginDisposal`): a drain that found the values
    /// stopped knows a disposal stopped them (its drops are not counted, and
    /// the terminal event goes with them).
    let disposalBegan = Synchronization.Atomic<Bool>(false)

    /// Batches one drain delivers before it yields its executor (scheduling
    /// its continuation behind the work queued meanwhile).
    static var batchesPerDrain: Int { 16 }

    /// Schedules a drain on the executor. Overridden.
    func scheduleDrain() {
        preconditionFailure("_DrainedBoundary.scheduleDrain() is overridden by every subclass")  // invariant
    }

    /// A value from upstream (serial): the policy decides; the first value of
    /// a burst schedules a drain; a `failing` overflow stops the values (its
    /// error waits in the state as the terminal event) and disposes upstream.
    func offerValue(_ value: T, consumerName: @autoclosure () -> String) {
        switch admit(value, consumerName: consumerName()) {
        case .accepted(let startDrain):
            if startDrain { scheduleDrain() }
        case .handled:
            break
        case .overflowed(let startDrain):
            valuesStopped.store(true, ordering: .releasing)
            if startDrain { scheduleDrain() }
            upstream.dispose()
        }
    }

    /// The terminal event from upstream: it waits behind the values.
    func offerTerminal(_ event: _BoundaryTerminal<E>) {
        let startDrain = mutex.withLock { state.offerTerminal(event) }
        if startDrain == true { scheduleDrain() }
    }

    /// The first step of a disposal, before it takes the lock: the drain
    /// stops delivering values, and will not deliver a terminal event it
    /// takes (values of its batch may have been dropped before it, which it
    /// would follow as if none had).
    func beginDisposal() {
        disposalBegan.store(true, ordering: .releasing)
        valuesStopped.store(true, ordering: .releasing)
    }

    /// Delivers the batch in order with `deliver`; stops (dropping the rest)
    /// once the values are stopped: an overflow's drops are counted, a
    /// disposal's are not.
    func deliverBatch(_ deliver: (T) -> Void) {
        // `removeFirst`, not `popFirst`: no `Optional<T>` per value (see
        // BoundaryState.swift).
        while !batch.isEmpty {
            let value = batch.removeFirst()
            if valuesStopped.load(ordering: .acquiring) {
                if !disposalBegan.load(ordering: .acquiring) { counters?.recordDrops(batch.count + 1) }
                withExtendedLifetime(value) {}
                while !batch.isEmpty { _ = batch.removeFirst() }
                return
            }
            deliver(value)
        }
    }
}
