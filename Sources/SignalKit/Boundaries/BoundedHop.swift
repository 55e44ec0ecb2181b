// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import Synchronization

// The bounded hop: `deliverOn(queue, buffer:)` and `deliverOn(pool, buffer:)`
// with a bounded policy. The unbounded default keeps SwiftSignalKit's one
// block per event (`_DeliverOnQueueSink`); this file is only for the bounded
// policies. With a context propagation installed, the hop is built for values
// paired with their senders' contexts (Boundaries/ContextCarrier.swift).
//
// One subscription's values wait in a ring of its own (`slots`, a power of
// two, grown by doubling up to the policy's limit): positions `head..<tail`,
// counted from the subscription's start, slot `position & mask`.
//
// The producer's path takes no mutex. Producers are serialised by a spin lock
// only they take (`producing`: one is the norm; several concurrent ones, a
// misbehaving source, stay safe and wait for each other). While the ring has
// room by the policy, a send is: the spin lock, a check against its own copy
// of `head` (re-read only when the ring looks full), the value moved into its
// slot, `tail` stored (release), one add on `pending`, the spin lock released.
// Nothing the consumer writes per value is read there, so in a stream the
// cache lines cross between the cores once per batch, not per value.
//
// `pending` says who drains: it counts the values sent and not yet delivered,
// plus one for a queued terminal event, plus one while a drain follows a
// stream (its "token"). Whoever raises it from 0 schedules the one drain; only
// that drain lowers it, after delivering, and a drain that brings it to 0
// ends. So one drain runs at a time, none is missed (both sides change one
// word with read-modify-writes, which are totally ordered), and a burst costs
// one block on the executor, not one per value.
//
// Everything else takes the mutex, besides or instead of the spin lock: the
// consumer taking a batch (it moves the values out of the ring and advances
// `head`), and the producer's rare paths: a full ring (grown, or the policy
// applied: drop the newest, drop the oldest, fail, block), the terminal event
// and disposal. The producer's own writes (`tail`, the slot at `tail`) never
// touch a slot the consumer is moving out: a slot is written only while the
// ring has room, i.e. after the consumer advanced `head` past it.
//
// A drain that meets a stream (a batch of `streamBatch` values or more)
// follows it: it keeps its token in `pending`, looks for more every 2 µs and
// gives the token back (ending, if nothing came) only after 20 µs without a
// value, or yields its executor after `valuesPerDrain` values. Work queued
// behind the drain on the same queue waits for it: up to 20 µs longer than the
// stream itself (the order difference the back-pressure article describes).

/// Where a hop's drain runs.
enum _HopExecutor: Sendable {
    case queue(Queue)
    case pool(ThreadPoolQueue)
}

/// One subscription through a bounded `deliverOn` (see the file header).
///
/// `@unchecked Sendable`: the ring's storage (`slots`, `mask`) changes only
/// with both `producing` and `mutex` held, and is read with either; the
/// slots are written by the producer holding `producing` (at `tail`, while
/// there is room) and moved out under `mutex` (before `head`); `cachedHead`
/// and `maximumDepth` are the producers' (under `producing`); the fields
/// marked "guarded by `mutex`" are; `batch`, `batchCapacity` and `resumesStreaming` are the
/// one drain's; the rest is atomic or immutable.
final class _BoundedHop<T: Sendable, E: Sendable>: _BufferDepthSource, Disposable, @unchecked Sendable {
    private let downstream: Subscriber<T, E>
    private let executor: _HopExecutor
    /// The upstream subscription's handle.
    let upstream = MetaDisposable()
    /// The policy (of fixed layout: see BoundaryState.swift).
    private let policy: SignalBuffer<E>
    private let counters: _BufferCounts

    /// Serialises producers (and the rare paths that need no producer in
    /// between: the terminal event, disposal). Never held while user code runs.
    private let producing = _SpinLock()
    /// Adaptive: the consumer takes it once per batch, a producer only when
    /// the ring is full, for a terminal event or a disposal.
    private let mutex = _Mutex(adaptive: true)
    /// Where `blocking` producers wait (nil for the other policies; its
    /// count is guarded by `mutex`).
    private let blocked: _BlockedProducers?

    @exclusivity(unchecked) private nonisolated(unsafe) var slots: UnsafeMutablePointer<T>
    /// The ring's size less one (the size is a power of two).
    @exclusivity(unchecked) private nonisolated(unsafe) var mask: Int
    /// The next position a value goes to; advanced under `producing`.
    private let tail = Synchronization.Atomic<Int>(0)
    /// The producers' copy of `head`, at most `head`: the ring has at least
    /// as much room as it says.
    @exclusivity(unchecked) private nonisolated(unsafe) var cachedHead = 0
    /// The most values that waited at once (the producers' count).
    @exclusivity(unchecked) private nonisolated(unsafe) var maximumDepth = 0
    /// No more values are taken: a terminal event was queued, the policy
    /// overflowed, or the subscription was disposed (set under `producing`).
    private let stopped = Synchronization.Atomic<Bool>(false)

    // `pending` on a cache line of its own: the drain reads it per look and
    // lowers it per batch, the producer raises it per value; the producer's
    // other per-value fields (above) and the consumer's (below) stay off it.
    private let padBeforePending: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// Who drains (see the file header).
    private let pending = Synchronization.Atomic<Int>(0)
    private let padAfterPending: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    /// The oldest waiting value's position; advanced under `mutex`.
    private let head = Synchronization.Atomic<Int>(0)
    /// The drain stops delivering values at once: disposal or a `failing`
    /// overflow (read per value, without a lock).
    private let valuesStopped = Synchronization.Atomic<Bool>(false)
    /// A disposal began: set before `valuesStopped`, so a drain that found
    /// the values stopped knows whether a disposal stopped them (its drops
    /// are not counted, and the terminal event goes with them).
    private let disposalBegan = Synchronization.Atomic<Bool>(false)
    /// The terminal event, once queued and not yet taken (guarded by `mutex`).
    @exclusivity(unchecked) private nonisolated(unsafe) var terminalBox: _BoundaryTerminalBox<E>?
    /// Guarded by `mutex`.
    @exclusivity(unchecked) private nonisolated(unsafe) var disposed = false
    /// Values counted in `pending` that a disposal or an overflow took out of
    /// the ring: the drain subtracts them (guarded by `mutex`).
    @exclusivity(unchecked) private nonisolated(unsafe) var discounted = 0
    /// Who empties the ring (guarded by `mutex`): the hop's queue, and the
    /// thread running the drain while it delivers. A blocking producer there
    /// would wait for itself.
    @exclusivity(unchecked) private nonisolated(unsafe) var consumer: _ConsumerMark

    /// The values the drain is delivering, from the start, moved out of the
    /// ring in at most two block moves (the drain's own; grown to the ring's
    /// size when a batch needs it).
    @exclusivity(unchecked) private nonisolated(unsafe) var batch: UnsafeMutablePointer<T>
    @exclusivity(unchecked) private nonisolated(unsafe) var batchCapacity: Int
    /// Whether the drain that yielded its executor was following a stream
    /// (its continuation keeps the token and goes on following it).
    @exclusivity(unchecked) private nonisolated(unsafe) var resumesStreaming = false
    /// The block that runs a drain on the queue's `DispatchQueue`
    /// (`makeDrainBlock`), made once and posted for every burst: a block
    /// literal per burst was one allocation. The one scheduling a drain
    /// reads and writes it (see `pending`: one drain is scheduled at a time,
    /// and the raise from 0 that schedules it follows the lowering to 0 that
    /// ended the last one).
    @exclusivity(unchecked) private nonisolated(unsafe) var drainBlock: (@Sendable @convention(block) () -> Void)?

    /// The ring's first size: small, so that a quiet subscription with a
    /// large limit costs little; it doubles as values wait, up to the limit.
    static var initialSlots: Int { 16 }

    init(downstream: Subscriber<T, E>, executor: _HopExecutor, policy: SignalBuffer<E>, counters: _BufferCounts) {
        self.downstream = downstream
        self.executor = executor
        self.counters = counters
        self.policy = policy
        blocked = policy.overflow == .block ? _BlockedProducers() : nil
        if case .queue(let queue) = executor {
            consumer = _ConsumerMark(queue: queue)
        } else {
            consumer = _ConsumerMark()
        }
        var size = 1
        while size < min(policy.capacity, Self.initialSlots) { size &<<= 1 }
        slots = _allocateFIFOSlots(of: T.self, capacity: size)
        mask = size &- 1
        batch = _allocateFIFOSlots(of: T.self, capacity: size)
        batchCapacity = size
        counters.attach(self)
    }

    deinit {
        counters.detach(ObjectIdentifier(self))
        var position = head.load(ordering: .relaxed)
        let end = tail.load(ordering: .relaxed)
        while position != end {
            (slots + (position & mask)).deinitialize(count: 1)
            position &+= 1
        }
        slots.deallocate()
        batch.deallocate()
        mutex.destroy()
    }

    var waitingCount: Int {
        mutex.withLock { tail.load(ordering: .acquiring) &- head.load(ordering: .relaxed) }
    }

    // MARK: Producer side

    func putNext(_ value: T) {
        producing.lock()
        if stopped.load(ordering: .relaxed) {
            producing.unlock()
            return  // refused: the value is released here, uncounted
        }
        let position = tail.load(ordering: .relaxed)
        if position &- cachedHead >= policy.capacity || position &- cachedHead > mask {
            cachedHead = head.load(ordering: .acquiring)
            if position &- cachedHead >= policy.capacity || position &- cachedHead > mask {
                // Full by the policy, or the ring must grow: `offerSlowly`
                // releases `producing`.
                offerSlowly(value, at: position)
                return
            }
        }
        (slots + (position & mask)).initialize(to: value)
        tail.store(position &+ 1, ordering: .releasing)
        let before = pending.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
        if position &+ 1 &- cachedHead > maximumDepth { raiseMaximumDepth(position &+ 1) }
        producing.unlock()
        if before == 0 { startDrain() }
    }

    /// A depth above the maximum, by the producers' copy of `head`: measured
    /// exactly, and recorded if it is one (under `producing`).
    private func raiseMaximumDepth(_ end: Int) {
        cachedHead = head.load(ordering: .acquiring)
        let depth = end &- cachedHead
        if depth > maximumDepth {
            maximumDepth = depth
            counters.recordDepth(depth)
        }
    }

    /// A value that found the ring full by the policy or by its size, at
    /// `position` (== `tail`). Called with `producing` held; releases it.
    private func offerSlowly(_ value: T, at position: Int) {
        mutex.lock()
        // `head` moves only under the mutex: exact now.
        let oldest = head.load(ordering: .relaxed)
        cachedHead = oldest
        if position &- oldest < policy.capacity {
            if position &- oldest > mask { grow(oldest: oldest, end: position) }
            (slots + (position & mask)).initialize(to: value)
            tail.store(position &+ 1, ordering: .releasing)
            let before = pending.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
            mutex.unlock()
            if position &+ 1 &- oldest > maximumDepth { raiseMaximumDepth(position &+ 1) }
            producing.unlock()
            if before == 0 { startDrain() }
            return
        }
        switch policy.overflow {
        case .never:
            // An unbounded policy never reaches the bounded hop (`deliverOn` keeps the unbounded one for it).
            preconditionFailure("SignalKit: the bounded hop was given an unbounded policy")  // invariant
        case .dropNewest:
            mutex.unlock()
            producing.unlock()
            counters.recordDrops(1)
            withExtendedLifetime(value) {}
        case .dropOldest:
            // The oldest waiting value leaves; the new one takes the last
            // place. `pending` counts both: it does not change.
            let dropped = (slots + (oldest & mask)).move()
            head.store(oldest &+ 1, ordering: .releasing)
            cachedHead = oldest &+ 1
            (slots + (position & mask)).initialize(to: value)
            tail.store(position &+ 1, ordering: .releasing)
            mutex.unlock()
            producing.unlock()
            counters.recordDrops(1)
            // Released here, outside the locks: a deinit may send to the signal.
            withExtendedLifetime(dropped) {}
        case .fail:
            // The subscription ends with the policy's error, which waits as
            // the terminal event; the waiting values and this one are dropped.
            stopped.store(true, ordering: .relaxed)
            valuesStopped.store(true, ordering: .releasing)
            terminalBox = policy.failure
            let overflow = takeWaitingLocked(oldest: oldest, end: position)
            let before = pending.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
            mutex.unlock()
            producing.unlock()
            counters.recordOverflow()
            counters.recordDrops(overflow.count &+ 1)
            withExtendedLifetime(overflow) {}
            withExtendedLifetime(value) {}
            if before == 0 { startDrain() }
            upstream.dispose()
        case .block:
            blocked!.wait(
                on: mutex, callerIsConsumer: consumer.isCaller(), consumer: executorName, boundary: "boundary",
                counters: counters,
                beforeStopping: {
                    mutex.unlock()
                    producing.unlock()
                    withExtendedLifetime(value) {}
                },
                // Other producers may go on while this one waits: they find
                // the ring full too, and wait beside it.
                beforeWaiting: { producing.unlock() })
            let dropped = disposed
            mutex.unlock()
            if dropped {
                // Dropped: the disposal counted it (`dispose`).
                withExtendedLifetime(value) {}
            } else {
                putNext(value)
            }
        }
    }

    /// Doubles the ring (not beyond what the policy's limit needs), the
    /// waiting values `oldest..<end` moved to their slots in the new one.
    /// Called with `producing` and `mutex` held.
    private func grow(oldest: Int, end: Int) {
        let size = (mask &+ 1) &* 2
        let larger = _allocateFIFOSlots(of: T.self, capacity: size)
        var position = oldest
        while position != end {
            (larger + (position & (size &- 1))).moveInitialize(from: slots + (position & mask), count: 1)
            position &+= 1
        }
        slots.deallocate()
        slots = larger
        mask = size &- 1
    }

    /// Moves the waiting values `oldest..<end` out of the ring (to be released
    /// after unlocking) and counts them for the drain to subtract. Called with
    /// `producing` and `mutex` held.
    private func takeWaitingLocked(oldest: Int, end: Int) -> _FIFO<T> {
        var taken = _FIFO<T>()
        var position = oldest
        while position != end {
            taken.append((slots + (position & mask)).move())
            position &+= 1
        }
        head.store(end, ordering: .releasing)
        cachedHead = end
        discounted &+= end &- oldest
        return taken
    }

    func putTerminal(_ event: _BoundaryTerminal<E>) {
        producing.lock()
        mutex.lock()
        guard !stopped.load(ordering: .relaxed) else {
            // The subscription ended before it: the event is dropped.
            mutex.unlock()
            producing.unlock()
            return
        }
        stopped.store(true, ordering: .relaxed)
        // It waits behind the values; `pending` keeps its 1, so no drain is
        // ever scheduled after the one that delivers it (at once, on the
        // hop's own queue with nothing waiting, as a value is).
        terminalBox = _BoundaryTerminalBox(event)
        let before = pending.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
        mutex.unlock()
        producing.unlock()
        if before == 0 { startDrain() }
    }

    private var executorName: String {
        switch executor {
        case .queue: "queue"
        case .pool: "thread pool lane"
        }
    }

    // MARK: Consumer side (the executor, one drain at a time)

    /// Starts the drain of a burst (the caller raised `pending` from 0). On
    /// the hop's own queue it runs now, so a value sent there with nothing
    /// waiting is delivered inline (as the unbounded hop does).
    private func startDrain() {
        if case .queue(let queue) = executor, queue.isCurrent() {
            drain(followsStreams: false)
        } else {
            scheduleDrain()
        }
    }

    private func scheduleDrain() {
        switch executor {
        case .queue(let queue):
            if let dispatchQueue = queue._dispatchQueue {
                // The hop's one drain block, posted again for every burst:
                // posting it allocates nothing. It holds the hop unretained;
                // the retain taken here keeps the hop for the drain it runs,
                // which releases it.
                _ = Unmanaged.passUnretained(self).retain()
                dispatchQueue.async(execute: drainBlock ?? makeDrainBlock())
            } else {
                // No context: a drain delivers several senders' values.
                queue._justDispatch { self.drain(followsStreams: true) }
            }
        case .pool(let lane):
            lane.addTask(ThreadPoolTask(capturingContext: false) { _ in self.drain(followsStreams: true) })
        }
    }

    /// Makes the drain block `scheduleDrain` posts (at the first burst, so
    /// that a subscription that never sends allocates none). It runs a drain
    /// and releases the retain its poster took.
    private func makeDrainBlock() -> @Sendable @convention(block) () -> Void {
        let block: @Sendable @convention(block) () -> Void = { [unowned(unsafe) self] in
            drain(followsStreams: true)
            Unmanaged.passUnretained(self).release()
        }
        drainBlock = block
        return block
    }

    /// A batch this large means a stream: the producer outran the drain's
    /// start (a Dispatch worker's wake-up, 5–10 µs) by this many values.
    /// Smaller bursts (a few values sent together, the common case at
    /// moderate rates) end their drain as soon as they are delivered.
    static var streamBatch: Int { 16 }
    /// How long a drain that met a stream goes on looking for the
    /// stream's next values once it finds none, before it lets the executor
    /// go. Each idle end of a drain costs the next value a wake-up of a
    /// parked Dispatch worker (5–10 µs of two threads' time); the window is
    /// spent once per stream, at its end.
    static var streamWindowNanoseconds: UInt64 { 20_000 }
    /// While it follows a stream, the drain waits this long before each
    /// look (the state's cache lines then move between the two cores once
    /// per interval, not once per value, and the values of an interval come
    /// in one batch).
    static var streamIntervalNanoseconds: UInt64 { 2_000 }

    /// Values one drain delivers before it yields its executor (scheduling
    /// its continuation behind the work queued meanwhile).
    static var valuesPerDrain: Int { 4_096 }

    /// What the drain found under the mutex.
    private enum Step {
        /// `count` values moved into the batch.
        case values(count: Int)
        case terminal(_BoundaryTerminalBox<E>)
        /// Nothing to deliver.
        case nothing
        /// Disposed: the drain ends and keeps its share of `pending` (no
        /// drain is ever scheduled again).
        case disposed
    }

    /// Delivers until `pending` falls to 0 (or `valuesPerDrain` values, then
    /// goes on in a new block). `followsStreams`: false for the inline drain
    /// on the producer's own thread, which never waits for more.
    private func drain(followsStreams: Bool) {
        var delivered = 0
        // While the drain holds the token (follows a stream), an empty ring
        // does not end it: it looks again every `streamIntervalNanoseconds`,
        // until `streamWindowNanoseconds` pass without a value.
        // A continuation inherits its predecessor's token (a new drain has none).
        var token = resumesStreaming ? 1 : 0
        resumesStreaming = false
        var idleSince: UInt64 = 0
        while delivered < Self.valuesPerDrain {
            if token == 1 {
                _pauseFor(nanoseconds: Self.streamIntervalNanoseconds)
                // Only the token: nothing sent, nothing queued (a disposal
                // sets `valuesStopped`).
                if pending.load(ordering: .acquiring) == 1 && !valuesStopped.load(ordering: .acquiring) {
                    let now = _monotonicNanoseconds()
                    if idleSince == 0 {
                        idleSince = now
                        continue
                    } else if now &- idleSince < Self.streamWindowNanoseconds {
                        continue
                    }
                    // The window passed: give the token back.
                    token = 0
                    if pending.wrappingSubtract(1, ordering: .acquiringAndReleasing).newValue == 0 { return }
                    idleSince = 0
                    continue
                }
            }
            idleSince = 0
            mutex.lock()
            let (step, owed) = takeLocked(token: token)
            mutex.unlock()
            switch step {
            case .disposed:
                return
            case .terminal(let box):
                // `pending` keeps the terminal's 1: no drain is ever
                // scheduled again. A disposal under way may have dropped
                // values of this drain's last batch: the terminal event
                // would follow a gap (and tell the subscriber it saw every
                // value), so it is dropped with them.
                if !disposalBegan.load(ordering: .acquiring) { deliver(box.event) }
                return
            case .nothing:
                // A drain runs only while `pending` counts something: with no
                // token, nothing to take and no terminal event, it counts
                // values others took out of the ring, now owed.
                precondition(token == 1 || owed > 0, "SignalKit: a bounded hop's drain found nothing it owns")  // invariant
                if owed > 0, pending.wrappingSubtract(owed, ordering: .acquiringAndReleasing).newValue == 0 { return }
            case .values(let count):
                delivered &+= count
                var owed = owed
                if token == 0 && followsStreams && count >= Self.streamBatch {
                    // A stream: keep one of the batch's count as the token.
                    token = 1
                    owed &-= 1
                }
                deliverBatch(count: count)
                if pending.wrappingSubtract(owed, ordering: .acquiringAndReleasing).newValue == 0 { return }
            }
        }
        resumesStreaming = token == 1
        // More is waiting (or the stream goes on): yield the executor to the
        // work queued meanwhile and go on in a new block, which inherits
        // this drain's share of `pending`.
        mutex.withLock { consumer.clearThread() }
        scheduleDrain()
    }

    /// Takes what the drain delivers next, and what it owes `pending` for it
    /// (the values taken plus those others took out of the ring). Called
    /// with the mutex held, by the one drain.
    private func takeLocked(token: Int) -> (Step, owed: Int) {
        if disposed {
            consumer.clearThread()
            return (.disposed, 0)
        }
        let counted = pending.load(ordering: .acquiring)
        let available = counted &- token &- (terminalBox == nil ? 0 : 1) &- discounted
        var owed = discounted
        discounted = 0
        if available > 0 {
            // Every counted value is in the ring: its producer stored it and
            // `tail` before its add on `pending`.
            let oldest = head.load(ordering: .relaxed)
            if available > batchCapacity {
                batch.deallocate()
                batchCapacity = mask &+ 1
                batch = _allocateFIFOSlots(of: T.self, capacity: batchCapacity)
            }
            // Two block moves at most: up to the ring's end, then from its start.
            let start = oldest & mask
            let first = min(available, mask &+ 1 &- start)
            batch.moveInitialize(from: slots + start, count: first)
            if first < available { (batch + first).moveInitialize(from: slots, count: available &- first) }
            head.store(oldest &+ available, ordering: .releasing)
            owed &+= available
            consumer.markThread()
            blocked?.wake()
            return (.values(count: available), owed)
        }
        consumer.clearThread()
        if let box = terminalBox {
            terminalBox = nil
            return (.terminal(box), owed)
        }
        return (.nothing, owed)
    }

    /// Delivers the batch's `count` values in order; stops (dropping the
    /// rest) once the values are stopped: an overflow's drops are counted, a
    /// disposal's are not.
    private func deliverBatch(count: Int) {
        var index = 0
        while index < count {
            let value = (batch + index).move()
            index &+= 1
            if valuesStopped.load(ordering: .acquiring) {
                if !disposalBegan.load(ordering: .acquiring) { counters.recordDrops(count &- index &+ 1) }
                withExtendedLifetime(value) {}
                (batch + index).deinitialize(count: count &- index)
                return
            }
            downstream.putNext(value)
        }
    }

    private func deliver(_ event: _BoundaryTerminal<E>) {
        switch event {
        case .completed: downstream.putCompletion()
        case .failed(let error): downstream.putError(error)
        }
    }

    // MARK: Disposal

    func dispose() {
        disposalBegan.store(true, ordering: .releasing)
        valuesStopped.store(true, ordering: .releasing)
        producing.lock()
        mutex.lock()
        let dropped: _FIFO<T>
        // The blocked producers' values are dropped: counted here, before
        // the subscription leaves its counters.
        var blockedCount = 0
        if disposed {
            dropped = _FIFO()
        } else {
            stopped.store(true, ordering: .relaxed)
            disposed = true
            terminalBox = nil
            dropped = takeWaitingLocked(oldest: head.load(ordering: .relaxed), end: tail.load(ordering: .relaxed))
            blockedCount = self.blocked?.count ?? 0
            self.blocked?.wake()
        }
        mutex.unlock()
        producing.unlock()
        // Released here, outside the locks: a deinit may send to the signal.
        withExtendedLifetime(dropped) {}
        counters.recordDrops(blockedCount)
        counters.detach(ObjectIdentifier(self))
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
/// the hop carries each value's sender context (Boundaries/ContextCarrier.swift).
func _boundedDeliverOn<T: Sendable, E: Sendable>(
    _ signal: Signal<T, E>,
    executor: @escaping @Sendable () -> _HopExecutor,
    buffer: SignalBuffer<E>
) -> Signal<T, E> {
    let account = _BufferAccount(name: signal.description, buffer: buffer)
    return Signal { subscriber in
        if _carriesContext {
            return _startCarryingContext(signal, to: subscriber) { upstream, downstream in
                _startBoundedHop(upstream, downstream, executor: executor(), buffer: buffer, account: account)
            }
        }
        return _startBoundedHop(signal, subscriber, executor: executor(), buffer: buffer, account: account)
    }._derived("deliverOn", from: signal, arguments: "buffer: \(buffer)")
}

/// Subscribes `subscriber` to `signal` through a new hop.
private func _startBoundedHop<T: Sendable, E: Sendable>(
    _ signal: Signal<T, E>,
    _ subscriber: Subscriber<T, E>,
    executor: _HopExecutor,
    buffer: SignalBuffer<E>,
    account: _BufferAccount
) -> any Disposable {
    let hop = _BoundedHop(downstream: subscriber, executor: executor, policy: buffer, counters: account.open())
    hop.upstream.set(signal._start(_BoundedHopSink(hop: hop, downstream: subscriber)))
    return hop
}
