// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Synchronization

// The bounded hop: `deliverOn(queue, buffer:)` and `deliverOn(pool, buffer:)`
// with a bounded policy. One subscription's values wait in a
// `_BoundaryState` under a mutex; the first value of a burst schedules one
// drain on the executor, which takes every waiting value at once (swapping
// its emptied batch for the producer's buffer: no allocation per value once
// both have grown) and delivers them, then the next batch, until nothing
// waits. A drain that meets a stream (a first batch of `streamBatch` values or
// more) follows it: it looks for more every 2 µs and lets the executor go
// only after 20 µs without a value (or after `valuesPerDrain` values), so a
// steady stream costs no wake-up and no allocation per burst. Work queued
// behind the drain on the same queue waits for it: up to 20 µs longer than
// the stream itself. The unbounded default keeps SwiftSignalKit's one block
// per event (`_DeliverOnQueueSink`); this file is only for the bounded
// policies. With a context propagation installed, the hop is built for
// values paired with their senders' contexts (ContextCarrier.swift).

/// Where a hop's drain runs.
enum _HopExecutor: Sendable {
    case queue(Queue)
    case pool(ThreadPoolQueue)
}

/// One subscription through a bounded `deliverOn`.
///
/// `@unchecked Sendable`: `drainThread` is guarded by `mutex`; the rest as
/// `_DrainedBoundary`.
final class _BoundedHop<T: Sendable, E: Sendable>: _DrainedBoundary<T, E>, Disposable, @unchecked Sendable {
    private let downstream: Subscriber<T, E>
    private let executor: _HopExecutor

    /// The thread running the drain, while one runs (guarded by `mutex`): a
    /// blocking producer on it would wait for itself.
    private nonisolated(unsafe) var drainThread: pthread_t?
    /// `state.draining`, as the producer last set it or the drain cleared it:
    /// a hint that spares the inline rule's `isCurrent()` per value (a
    /// producer on the queue reads it exactly, being serial with the drain).
    private let draining = Synchronization.Atomic<Bool>(false)

    init(downstream: Subscriber<T, E>, executor: _HopExecutor, policy: SignalBuffer<E>, counters: _BufferCounters) {
        self.downstream = downstream
        self.executor = executor
        super.init(policy: policy, counters: counters)
    }

    // MARK: Producer side (the upstream's thread, serial)

    func putNext(_ value: T) {
        // `draining` is read first: while a burst waits or drains (the steady
        // state under load) the value is queued without asking the queue
        // whether it is current.
        if case .queue(let queue) = executor, !draining.load(ordering: .acquiring), queue.isCurrent() {
            // The inline rule: on the queue already, with nothing waiting,
            // the value is delivered now (as the unbounded hop does).
            mutex.lock()
            if state.isIdle {
                mutex.unlock()
                downstream.putNext(value)
                return
            }
            mutex.unlock()
        }
        // A closure, not the method itself: a method reference retains the
        // hop per value.
        offerValue(value, consumerName: executorName, isConsumer: { producerIsConsumer() })
    }

    func putTerminal(_ event: _BoundaryTerminal<E>) {
        if case .queue(let queue) = executor, queue.isCurrent() {
            mutex.lock()
            if state.isIdle {
                // Inline, as a value (and nothing can follow it).
                state.stopped = true
                state.draining = true
                mutex.unlock()
                deliver(event)
                return
            }
            mutex.unlock()
        }
        offerTerminal(event)
    }

    /// Whether the calling thread is the one that must empty the buffer: the
    /// queue (or a drain) that delivers it. Called with the mutex held.
    private func producerIsConsumer() -> Bool {
        if let drainThread, pthread_equal(drainThread, pthread_self()) != 0 { return true }
        if case .queue(let queue) = executor, queue.isCurrent() { return true }
        return false
    }

    private var executorName: String {
        switch executor {
        case .queue: "queue"
        case .pool: "thread pool lane"
        }
    }

    // MARK: Consumer side (the executor, one drain at a time)

    override func scheduleDrain() {
        draining.store(true, ordering: .releasing)
        switch executor {
        case .queue(let queue):
            if let dispatchQueue = queue._dispatchQueue {
                // A block literal: one allocation per burst.
                dispatchQueue.async { self.drain() }
            } else {
                // No context: a drain delivers several senders' values.
                queue._justDispatch { self.drain() }
            }
        case .pool(let lane):
            lane.addTask(ThreadPoolTask(capturingContext: false) { _ in self.drain() })
        }
    }

    /// A batch this large means a stream: the producer outran the drain's
    /// start (a Dispatch worker's wake-up, 5–10 µs) by this many values.
    /// Smaller bursts (a few values sent together, the common case at
    /// moderate rates) end their drain as soon as they are delivered.
    static var streamBatch: Int { 16 }
    /// How long a drain that met a stream goes on looking for the
    /// stream's next values once it finds none, before it lets the executor
    /// go. Each idle end of a drain costs the next value a wake-up of a
    /// parked Dispatch worker (5–10 µs of two threads' time: W12's largest
    /// cost before); the window is spent once per stream, at its end.
    static var streamWindowNanoseconds: UInt64 { 20_000 }
    /// While it follows a stream, the drain waits this long before each
    /// look (the lock and the state's cache lines then move between the two
    /// cores once per interval, not once per value, and the values of an
    /// interval come in one batch).
    static var streamIntervalNanoseconds: UInt64 { 2_000 }

    /// Values one drain delivers before it yields its executor (scheduling
    /// its continuation behind the work queued meanwhile).
    static var valuesPerDrain: Int { 4_096 }

    /// Whether the drain that yielded its executor was following a stream
    /// (its continuation goes on following it). Touched only by the one
    /// drain.
    private nonisolated(unsafe) var resumesStreaming = false

    private func drain() {
        var delivered = 0
        // While `streaming`, an empty buffer does not end the drain: it looks
        // again every `streamIntervalNanoseconds`, until
        // `streamWindowNanoseconds` pass without a value.
        var streaming = resumesStreaming
        var idleSince: UInt64 = 0
        while delivered < Self.valuesPerDrain {
            if streaming {
                _pauseFor(nanoseconds: Self.streamIntervalNanoseconds)
            }
            mutex.lock()
            if streaming && !state.hasWork {
                mutex.unlock()
                let now = _monotonicNanoseconds()
                if idleSince == 0 {
                    idleSince = now
                } else if now &- idleSince >= Self.streamWindowNanoseconds {
                    streaming = false
                }
                continue
            }
            idleSince = 0
            let step = state.take(into: &batch)
            switch step {
            case .values:
                drainThread = pthread_self()
                wakeBlockedProducersLocked()
            case .idle:
                drainThread = nil
                draining.store(false, ordering: .releasing)
            case .terminal:
                drainThread = nil
            }
            mutex.unlock()
            switch step {
            case .idle:
                return
            case .terminal(let box):
                deliver(box.event)
                return
            case .values:
                delivered += batch.count
                if batch.count >= Self.streamBatch { streaming = true }
                deliverBatch(downstream.putNext)
            }
        }
        resumesStreaming = streaming
        // More is waiting: yield the queue to the work queued meanwhile and
        // go on in a new block (the drain stays scheduled).
        mutex.withLock { drainThread = nil }
        scheduleDrain()
    }

    private func deliver(_ event: _BoundaryTerminal<E>) {
        switch event {
        case .completed: downstream.putCompletion()
        case .failed(let error): downstream.putError(error)
        }
    }

    // MARK: Disposal

    func dispose() {
        valuesStopped.store(true, ordering: .releasing)
        disposeBuffer()
        upstream.dispose()
    }
}

/// The sink of a bounded `deliverOn`: hands every event to the hop.
struct _BoundedHopSink<T: Sendable, E: Sendable>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let hop: _BoundedHop<T, E>
    let downstream: Subscriber<T, E>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    func putNext(_ value: T, from _: _SubscriptionBase) { hop.putNext(value) }
    func putError(_ error: E) { hop.putTerminal(.failed(error)) }
    func putCompletion() { hop.putTerminal(.completed) }
}

/// The shell of a bounded `deliverOn`: one hop per subscription, named and
/// counted under the upstream's name. With a context propagation installed
/// the hop carries each value's sender context (ContextCarrier.swift).
func _boundedDeliverOn<T: Sendable, E: Sendable>(
    _ signal: Signal<T, E>,
    executor: @escaping @Sendable () -> _HopExecutor,
    buffer: SignalBuffer<E>
) -> Signal<T, E> {
    let counters = _BufferRegistry.shared.counters(name: signal.description, policy: buffer.description)
    return Signal { subscriber in
        if _carriesContext {
            return _startCarryingContext(signal, to: subscriber) { upstream, downstream in
                _startBoundedHop(upstream, downstream, executor: executor(), buffer: buffer, counters: counters)
            }
        }
        return _startBoundedHop(signal, subscriber, executor: executor(), buffer: buffer, counters: counters)
    }._derived("deliverOn", from: signal, arguments: "buffer: \(buffer)")
}

/// Subscribes `subscriber` to `signal` through a new hop.
private func _startBoundedHop<T: Sendable, E: Sendable>(
    _ signal: Signal<T, E>,
    _ subscriber: Subscriber<T, E>,
    executor: _HopExecutor,
    buffer: SignalBuffer<E>,
    counters: _BufferCounters
) -> any Disposable {
    let hop = _BoundedHop(downstream: subscriber, executor: executor, policy: buffer, counters: counters)
    hop.upstream.set(signal._start(_BoundedHopSink(hop: hop, downstream: subscriber)))
    return hop
}
