// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The bounded `queue`: `queue(buffer:)` and `mapToQueue(buffer:_:)` are the
// signal-of-signals engine's queueing mode (Engine/SignalQueueState.swift)
// with a `SignalBuffer` on its waiting inners, this file's `_QueueBound`
// (the engine's `_SignalQueueBound`). The engine keeps its own run loop,
// run-again gate, lock and waiting FIFO; an outer value goes through
// `boundedOuterNext`, which starts the inner if none runs, else applies the
// policy with the one admit decision the boundaries share (`_FIFO.admit`,
// BoundaryState.swift), counts what it drops, and makes a `blocking`
// producer wait (`_BlockedProducers` and `_ConsumerMark`, Blocking.swift).
//
// Blocking without holding the engine's spin lock: a producer under
// `blocking` holds the bound's `admission` mutex from its look at the
// waiting inners until it waits on it (the wait releases it); the engine,
// after taking a waiting inner and unlocking, takes `admission` to wake the
// waiting producers (`innerStarting`). So a wake-up is never lost between a
// producer's look and its wait, and the spin lock is never held while a
// thread sleeps. The other policies take no mutex.

/// The bound of one bounded `queue` subscription (see the file header).
///
/// `@unchecked Sendable`: `consumer` and `producersCounted` are guarded by
/// `admission` (which exists under `blocking`, the only policy that reads
/// them); `maximumDepth` by the engine's spin lock; the rest is immutable or
/// thread-safe.
final class _QueueBound<R, E: Sendable>: _SignalQueueBound<R, E>, @unchecked Sendable {
    let policy: SignalBuffer<E>
    let counters: _BufferCounts
    /// Where `blocking` producers wait, and the mutex they wait with (nil for
    /// the other policies).
    let blocked: _BlockedProducers?
    let admission: _Mutex?
    /// The consumer: the thread inside the running inner's `_start`, while
    /// it is there (`blocking` only): a producer there would wait for itself.
    nonisolated(unsafe) var consumer = _ConsumerMark()
    /// The most inners that waited at once (guarded by the engine's lock).
    nonisolated(unsafe) var maximumDepth = 0
    /// `stopProducers` counted the producers waiting then (guarded by
    /// `admission`): one of them that finds the engine stopped does not count
    /// its inner again.
    nonisolated(unsafe) var producersCounted = false

    init(policy: SignalBuffer<E>, counters: _BufferCounts) {
        self.policy = policy
        self.counters = counters
        if policy.overflow == .block {
            blocked = _BlockedProducers()
            admission = _Mutex()
        } else {
            blocked = nil
            admission = nil
        }
    }

    deinit {
        admission?.destroy()
    }

    override func outerNext(_ state: _SignalQueueState<R, E>, _ inner: Signal<R, E>, _ downstream: Subscriber<R, E>) {
        state.boundedOuterNext(inner, downstream, self)
    }

    /// An inner is about to be subscribed on this thread (after the engine
    /// took it, lock released): under `blocking`, marks the thread as the
    /// consumer and wakes the producers waiting for room.
    override func innerStarting() {
        guard let admission else { return }
        admission.lock()
        consumer.markThread()
        blocked!.wake()
        admission.unlock()
    }

    /// The inner's `_start` returned: the thread is no longer the consumer.
    override func innerSubscribed() {
        guard let admission else { return }
        admission.withLock { consumer.clearThread() }
    }

    /// The subscription stopped (an error, an overflow, disposal): the
    /// producers waiting for room are counted as drops here, before the
    /// subscription can leave its statistics, and woken to release their
    /// inners. Called once the engine is stopped (again by a disposal after
    /// an error: it counts nothing more).
    func stopProducers() {
        guard let admission else { return }
        admission.lock()
        // Only the first stop counts: no producer starts waiting after it.
        let waiting = producersCounted ? 0 : blocked!.count
        producersCounted = true
        blocked!.wake()
        admission.unlock()
        counters.recordDrops(waiting)
    }

    /// The output fails (an outer or inner error; the engine is stopped):
    /// the inners waiting are counted as drops (subscribed + dropped ==
    /// sent), and the producers waiting for room drop theirs.
    override func failed(_ state: _SignalQueueState<R, E>) {
        let waiting = state.mutex.withLock { () -> _FIFO<Signal<R, E>> in
            var waiting = _FIFO<Signal<R, E>>()
            waiting.exchange(with: &state.state.waiting)
            return waiting
        }
        counters.recordDrops(waiting.count)
        // Released here, outside the lock.
        withExtendedLifetime(waiting) {}
        stopProducers()
    }

    /// Disposed (the engine is stopped, its waiting inners released
    /// uncounted): the producers waiting for room drop their inners
    /// (counted); then the subscription leaves its statistics' live count.
    override func disposed(_ state: _SignalQueueState<R, E>) {
        stopProducers()
        counters.detach(ObjectIdentifier(state))
    }

    /// The engine is freed: it leaves the live count at the latest now.
    override func released(_ state: _SignalQueueState<R, E>) {
        counters.detach(ObjectIdentifier(state))
    }
}

extension _SignalQueueState: _BufferDepthSource {
    /// The inners waiting now (for the buffer statistics).
    var waitingCount: Int {
        mutex.withLock { state.waiting.count }
    }
}

/// What an outer value did to a bounded queue (`_SignalQueueState.boundedStep`).
enum _BoundedQueueStep<R, E> {
    /// No inner was running: this one starts, as number `index`.
    case start(index: Int)
    /// The engine is stopped (an error, an overflow, disposal).
    case stopped
    /// It waits; `newDepth` when it raised the most that waited at once.
    case accepted(newDepth: Int?)
    /// The buffer was full: `dropped` (the arriving inner or the oldest
    /// waiting one) goes.
    case dropped(Signal<R, E>)
    /// A `failing` policy overflowed: the arriving inner and `overflow`
    /// (the waiting ones) go, and the engine is stopped.
    case overflowed(Signal<R, E>, overflow: _FIFO<Signal<R, E>>)
    /// A `blocking` policy is full: the inner, to offer again.
    case full(Signal<R, E>)
}

extension _SignalQueueState where E: Sendable {
    /// The queueing mode bounded by `bound`: an outer value. Starts `inner`
    /// if none runs; else applies the policy (counted drops, a `failing`
    /// overflow that fails the output, a `blocking` wait for room).
    func boundedOuterNext(_ inner: consuming Signal<R, E>, _ downstream: Subscriber<R, E>, _ bound: _QueueBound<R, E>) {
        var inner = _inSenderContext(inner)
        bound.admission?.lock()
        // A producer that waited and then finds the engine stopped drops its
        // inner (counted: it was sent, by `stopProducers` if it was waiting
        // then); one that arrives after the end is refused.
        var waited = false
        while true {
            switch boundedStep(inner, bound) {
            case .start(let index):
                bound.admission?.unlock()
                return run(inner, index: index, downstream)
            case .stopped:
                // Counted before `admission` is let go, so before
                // `stopProducers` returns.
                if waited && !bound.producersCounted { bound.counters.recordDrops(1) }
                bound.admission?.unlock()
                return
            case .accepted(let newDepth):
                bound.admission?.unlock()
                if let newDepth { bound.counters.recordDepth(newDepth) }
                return
            case .dropped(let dropped):
                bound.admission?.unlock()
                bound.counters.recordDrops(1)
                // Released here, outside the lock: a deinit may send to the signal.
                withExtendedLifetime(dropped) {}
                return
            case .overflowed(let arriving, let overflow):
                bound.admission?.unlock()
                bound.counters.recordOverflow()
                bound.counters.recordDrops(overflow.count + 1)
                withExtendedLifetime((arriving, overflow)) {}
                return downstream.putError(bound.policy.overflowError)
            case .full(let again):
                // `blocking`: wait for room with `admission` held (see the
                // file header), unless this thread is the consumer.
                inner = again
                let admission = bound.admission!
                bound.blocked!.wait(
                    on: admission, callerIsConsumer: bound.consumer.isCaller(), consumer: "inner signal's subscription",
                    boundary: "boundary", counters: bound.counters,
                    beforeStopping: { admission.unlock() })
                waited = true
            }
        }
    }

    /// The locked part of `boundedOuterNext`: what `inner` does to the
    /// engine under its spin lock (nothing is released inside it).
    private func boundedStep(_ inner: Signal<R, E>, _ bound: _QueueBound<R, E>) -> _BoundedQueueStep<R, E> {
        withUnsafeTemporaryAllocation(of: Signal<R, E>.self, capacity: 1) { slot in
            let displaced = slot.baseAddress!
            var overflow = _FIFO<Signal<R, E>>()
            mutex.lock()
            defer { mutex.unlock() }
            if state.stopped { return .stopped }
            if !state.executing {
                let index = state.begin()
                publishCurrent(index)
                return .start(index: index)
            }
            switch state.waiting.admit(inner, policy: bound.policy, displaced: displaced, overflow: &overflow) {
            case .accepted(let depth):
                guard depth > bound.maximumDepth else { return .accepted(newDepth: nil) }
                bound.maximumDepth = depth
                return .accepted(newDepth: depth)
            case .dropped:
                return .dropped(displaced.move())
            case .overflowed:
                state.stopped = true
                return .overflowed(displaced.move(), overflow: overflow)
            case .full:
                return .full(displaced.move())
            }
        }
    }
}

/// The shell of a bounded `queue` / `mapToQueue`: the engine's queueing
/// mode under `buffer`, counted under the outer's name.
func _boundedQueue<T, R, E: Sendable>(
    _ outer: Signal<T, E>,
    buffer: SignalBuffer<E>,
    transform: @escaping @Sendable (T) -> Signal<R, E>
) -> Signal<R, E> {
    let account = _BufferAccount(name: outer.description, buffer: buffer)
    return Signal { subscriber in
        let bound = _QueueBound<R, E>(policy: buffer, counters: account.open())
        let state = _SignalQueueState<R, E>(mode: .queueing, bound: bound)
        bound.counters.attach(state)
        let sink = _SignalQueueOuterSink(
            state: state,
            downstream: subscriber,
            transform: transform
        ) { (sink: _SignalQueueOuterSink<T, E, R, E>, value) in
            sink.state.outerNext(sink.transform(value), sink.downstream)
        }
        state.setOuter(outer._start(sink))
        return state
    }
}
