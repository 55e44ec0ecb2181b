// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch

// Dispatching: SwiftSignalKit's operators that move delivery (`deliverOn`) or
// subscription (`runOn`) to a queue or a thread pool.

/// Delivers every event on `queue`.
///
/// SwiftSignalKit's `deliverOn`.
///
/// Marble: `"a-b-|"` → (on `queue`) `"a-b-|"`
///
/// - Parameters:
///   - queue: where values, the error and the completion are delivered.
/// - Returns: a function from a signal to the same signal delivered on
///   `queue`.
///
/// **Threading:** subscribes upstream now, on the caller's thread. Each
/// next, error and completion is re-posted with `queue.async`: inline when
/// the upstream delivers on `queue` already, otherwise as a FIFO block, so
/// the events of one producer keep their order.
///
/// **Termination:** upstream is disposed as soon as it terminates, on the
/// producing thread, even if the deferred terminal event has not been
/// delivered yet.
///
/// **Disposal:** disposes upstream; events not yet delivered are dropped.
public func deliverOn<T: Sendable, E: Sendable>(_ queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("deliverOn") { subscriber in
        _DeliverOnQueueSink(downstream: subscriber, queue: queue)
    }
}

/// Delivers every event on `queue`, keeping at most `buffer`'s limit of
/// values waiting for it.
///
/// SignalKit's bounded form of SwiftSignalKit's `deliverOn` (see
/// ``SignalBuffer``; `.unbounded` is `deliverOn(queue)` exactly).
///
/// Marble (`.droppingOldest(beyond: 2)`, the queue busy while `b`…`e`
/// arrive): `"a-b-c-d-e-|"` → (on `queue`) `"a-------d-e-|"`
///
/// - Parameters:
///   - queue: where values, the error and the completion are delivered.
///   - buffer: how many values may wait for `queue`, and what happens to one
///     more (drop the oldest, drop the newest, keep the latest, fail, or
///     block the producer).
/// - Returns: a function from a signal to the same signal delivered on
///   `queue`.
///
/// **Threading:** subscribes upstream now, on the caller's thread. A value
/// sent on `queue` while nothing waits is delivered inline (the inline rule);
/// otherwise it waits in the subscription's ring, and the first value of a
/// burst posts one drain block to `queue`, which delivers every value that
/// waits then, in order, and the values that arrive meanwhile. A drain that
/// meets a stream (a first batch of 16 values or more) looks for more every
/// 2 µs and lets `queue` go only after 20 µs without a value; after 4,096
/// values it posts its continuation behind the other work queued on `queue`.
/// So, unlike the unbounded form, which posts one block per event, values
/// sent after another block was posted to `queue` may be delivered before
/// that block runs, and work queued behind a drain waits for it. The values
/// of one subscription keep their order.
///
/// **Cost:** a send into a ring with room takes no mutex (a spin lock only
/// producers take, the value moved into its slot, one atomic add); a send
/// into a full ring takes the ring's mutex to apply the policy; a batch
/// takes the mutex once on the drain's side; a burst posts one Dispatch
/// block; nothing is allocated per value. Back to back this is several
/// times faster than the unbounded form's block per value (the benchmark's
/// W12 against W9, and W14 for a full ring: Benchmarks/README.md).
///
/// **Termination:** the error and the completion are never dropped: they are
/// delivered after the values that wait (for `.failing`, the overflow error
/// follows the value being delivered, the waiting values are dropped).
/// Upstream is disposed as soon as it terminates or overflows.
///
/// **Disposal:** disposes upstream and releases the waiting values at once,
/// and the terminal event waiting behind them (a disposal racing a batch on
/// `queue` ends it there, without its terminal event); a producer blocked by
/// `.blocking` returns (its value is dropped).
///
/// Drops, overflows, blocked sends and the depth are counted under the
/// upstream's name (``SignalKitDebug/bufferStatistics()``), and in the
/// probe of a buffer made with ``SignalBuffer/counted(by:)`` (a
/// subscription's figures without a name).
///
/// ```swift
/// let updates = loadProfile(id) |> deliverOn(uiQueue, buffer: .latest)
/// ```
public func deliverOn<T: Sendable, E: Sendable>(
    _ queue: Queue,
    buffer: SignalBuffer<E>
) -> (Signal<T, E>) -> Signal<T, E> {
    if buffer.isUnbounded { return deliverOn(queue) }
    return { signal in _boundedDeliverOn(signal, executor: { .queue(queue) }, buffer: buffer) }
}

/// Delivers every event on the main queue: `deliverOn(Queue.mainQueue())`.
///
/// SwiftSignalKit's `deliverOnMainQueue`.
///
/// Marble: `"a-b-|"` → (on the main queue) `"a-b-|"`
///
/// - Parameters:
///   - signal: the signal to deliver on the main queue.
/// - Returns: `signal |> deliverOn(Queue.mainQueue())`.
///
/// **Threading:** subscribes now, on the caller's thread. Events produced on
/// the main thread are delivered inline; others are posted to the main
/// queue, in order. On Linux the main queue runs only while something
/// drains it (`dispatchMain()`, a run loop, or Swift's async `main`).
///
/// **Termination:** as `deliverOn(_: Queue)`: upstream is disposed at once.
///
/// **Disposal:** disposes upstream; events not yet delivered are dropped.
public func deliverOnMainQueue<T: Sendable, E: Sendable>(_ signal: Signal<T, E>) -> Signal<T, E> {
    signal |> deliverOn(Queue.mainQueue())
}

/// Delivers every event as a task on `threadPool`, in order, through one
/// `ThreadPoolQueue` per subscription.
///
/// SwiftSignalKit's `deliverOn` for a thread pool.
///
/// Marble: `"a-b-|"` → (on pool threads) `"a-b-|"`
///
/// - Parameters:
///   - threadPool: the pool whose threads deliver the events.
/// - Returns: a function from a signal to the same signal delivered on the
///   pool.
///
/// **Threading:** subscribes now, on the caller's thread. Each event becomes
/// a `ThreadPoolTask` on the subscription's own lane (`nextQueue()`): events
/// run on pool threads one after another, in order; different subscriptions
/// run concurrently.
///
/// **Termination:** as `deliverOn(_: Queue)`: upstream is disposed at once,
/// on the producing thread.
///
/// **Disposal:** disposes upstream; queued events are dropped.
public func deliverOn<T: Sendable, E: Sendable>(_ threadPool: ThreadPool) -> (Signal<T, E>) -> Signal<T, E> {
    _lift("deliverOn") { subscriber in
        _DeliverOnPoolSink(downstream: subscriber, queue: threadPool.nextQueue())
    }
}

/// Delivers every event on `threadPool`, in order, keeping at most
/// `buffer`'s limit of values waiting for it.
///
/// SignalKit's bounded form of SwiftSignalKit's `deliverOn` for a thread
/// pool (`.unbounded` is `deliverOn(threadPool)` exactly).
///
/// Marble (`.droppingNewest(beyond: 2)`, the lane busy while `b`…`e`
/// arrive): `"a-b-c-d-e-|"` → (on pool threads) `"a---b-c---|"`
///
/// - Parameters:
///   - threadPool: the pool whose threads deliver the events.
///   - buffer: how many values may wait, and what happens to one more.
/// - Returns: a function from a signal to the same signal delivered on the
///   pool.
///
/// **Threading:** subscribes now, on the caller's thread. Each subscription
/// has its own lane (`nextQueue()`); the first value of a burst adds one
/// `ThreadPoolTask` to it, which delivers every value waiting then and
/// those that arrive meanwhile, in order (one task per burst, where the
/// unbounded form adds one per event). As on a queue, a drain that meets a
/// stream follows it for up to 20 µs without a value, and after 4,096
/// values adds its continuation as a new task on the lane.
///
/// **Cost:** as `deliverOn(_:buffer:)` for a queue: a send into a ring with
/// room takes no mutex, the drain takes the ring's mutex once per batch.
///
/// **Termination:** as `deliverOn(_:buffer:)` for a queue.
///
/// **Disposal:** as `deliverOn(_:buffer:)` for a queue.
public func deliverOn<T: Sendable, E: Sendable>(
    _ threadPool: ThreadPool,
    buffer: SignalBuffer<E>
) -> (Signal<T, E>) -> Signal<T, E> {
    if buffer.isUnbounded { return deliverOn(threadPool) }
    return { signal in _boundedDeliverOn(signal, executor: { .pool(threadPool.nextQueue()) }, buffer: buffer) }
}

/// Subscribes to the signal on `queue`.
///
/// SwiftSignalKit's `runOn`.
///
/// Marble: `"a-b-|"` → `"a-b-|"` (unchanged; the subscription happens on
/// `queue`)
///
/// - Parameters:
///   - queue: where upstream is subscribed.
/// - Returns: a function from a signal to the same signal, subscribed on
///   `queue`.
///
/// **Threading:** if the caller is on `queue` (`queue.isCurrent()`),
/// subscribes inline; otherwise subscribes from a block posted to `queue`.
/// A `Queue(queue:)` wrapper is never current, so it always posts. Events are
/// not re-dispatched: they arrive on whatever thread upstream uses (for a
/// synchronous upstream, `queue`).
///
/// **Termination:** forwarded unchanged.
///
/// **Disposal:** disposing before the block runs prevents the subscription;
/// afterwards, disposes upstream.
public func runOn<T, E>(_ queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            if queue.isCurrent() {
                return signal._start(_ForwardSink(downstream: subscriber))
            }
            let pending = _PendingSubscription()
            queue.async {
                pending.start { signal._start(_ForwardSink(downstream: subscriber)) }
            }
            return pending
        }._derived("runOn", from: signal)
    }
}

/// Subscribes to the signal from a task on `threadPool`.
///
/// SwiftSignalKit's `runOn` for a thread pool.
///
/// Marble: `"a-b-|"` → `"a-b-|"` (unchanged; the subscription happens on a
/// pool thread)
///
/// - Parameters:
///   - threadPool: the pool on which upstream is subscribed.
/// - Returns: a function from a signal to the same signal, subscribed on a
///   pool thread.
///
/// **Threading:** the subscription (and a synchronous upstream's events)
/// runs in a `ThreadPoolTask` on a pool thread. Events are not
/// re-dispatched.
///
/// **Termination:** forwarded unchanged.
///
/// **Disposal:** disposing before the task runs cancels it (no
/// subscription); afterwards, disposes upstream.
public func runOn<T, E>(_ threadPool: ThreadPool) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let pending = _PendingSubscription()
            let task = ThreadPoolTask { state in
                guard !state.cancelled.with({ $0 }) else { return }
                pending.start { signal._start(_ForwardSink(downstream: subscriber)) }
            }
            // The pending subscription holds the task's cancellation until the
            // subscription replaces it (or disposal runs it): that releases
            // the task, which references the pending subscription.
            pending.start { ActionDisposable { task.cancel() } }
            threadPool.addTask(task)
            return pending
        }._derived("runOn", from: signal)
    }
}

/// A subscription that will be made later (on another queue); disposing it
/// first prevents it, disposing it afterwards disposes it.
final class _PendingSubscription: Disposable, Sendable {
    private let current = MetaDisposable()

    /// Makes the subscription (replacing and disposing what `current` held
    /// before), unless already disposed.
    func start(_ subscribe: () -> any Disposable) {
        guard !current.isDisposed else { return }
        current.set(subscribe())
    }

    func dispose() {
        current.dispose()
    }
}

struct _DeliverOnQueueSink<T: Sendable, E: Sendable>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let downstream: Subscriber<T, E>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let queue: Queue

    func putNext(_ value: T, from _: _SubscriptionBase) {
        let downstream = self.downstream
        if queue.isCurrent() {
            downstream.putNext(value)
        } else if let hook = _ContextHook.installed {
            putNextInContext(value, captured: hook.capture())
        } else if let dispatchQueue = queue._dispatchQueue {
            // A block literal: Dispatch copies it once (the closure and the
            // captures in one allocation), where `queue.async(closure)`
            // allocates the closure, a block wrapper and the copy. The
            // subscriber and the value are captured apart: a tuple of them
            // is a generic tuple type here, whose metadata the runtime looks
            // up in its cache on every event, on both sides of the hop.
            dispatchQueue.async { downstream.putNext(value) }
        } else if let dedicated = queue._dedicatedThread {
            // One allocation: the item holds the subscriber and the value.
            dedicated.push(_DeliverNextItem(downstream: downstream, value: value))
        } else {
            queue.justDispatch { downstream.putNext(value) }
        }
    }

    /// `putNext` off the queue with a context propagation installed: the
    /// value is delivered in its sender's context.
    @inline(never)
    private func putNextInContext(_ value: T, captured: _CapturedContext) {
        let downstream = self.downstream
        if let dispatchQueue = queue._dispatchQueue {
            dispatchQueue.async { _run(in: captured) { downstream.putNext(value) } }
        } else {
            queue._justDispatch { _run(in: captured) { downstream.putNext(value) } }
        }
    }

    func putError(_ error: E) {
        let downstream = self.downstream
        queue.async { downstream.putError(error) }
    }

    func putCompletion() {
        let downstream = self.downstream
        queue.async { downstream.putCompletion() }
    }
}

/// One value `deliverOn` hands a dedicated thread (see `_WorkItem`).
///
/// `@unchecked Sendable`: restated from `_WorkItem`; it stores a `Subscriber`
/// and a `Sendable` value, both immutable.
final class _DeliverNextItem<T: Sendable, E: Sendable>: _WorkItem, @unchecked Sendable {
    let downstream: Subscriber<T, E>
    let value: T

    init(downstream: Subscriber<T, E>, value: T) {
        self.downstream = downstream
        self.value = value
    }

    override func run() { downstream.putNext(value) }
}

struct _DeliverOnPoolSink<T: Sendable, E: Sendable>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let downstream: Subscriber<T, E>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let queue: ThreadPoolQueue

    func putNext(_ value: T, from _: _SubscriptionBase) {
        let downstream = self.downstream
        queue.addTask(ThreadPoolTask { _ in downstream.putNext(value) })
    }

    func putError(_ error: E) {
        let downstream = self.downstream
        queue.addTask(ThreadPoolTask { _ in downstream.putError(error) })
    }

    func putCompletion() {
        let downstream = self.downstream
        queue.addTask(ThreadPoolTask { _ in downstream.putCompletion() })
    }
}
