// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The producer side every bounded boundary shares: a `_BoundaryState` under a
// mutex, the policy applied to each value (drops counted and released
// outside the lock, the `blocking` wait and its deadlock check, the
// `failing` overflow), the depth the statistics read, and disposal. The
// owners (`_BoundedHop`, `_BoundedQueue`) add the consumer.

/// A pthread condition variable in C-allocated storage, waited on with a
/// `_Mutex` (its address must be stable, which a stored property's is not).
struct _Condition: @unchecked Sendable {
    // `@unchecked Sendable`: a pthread condition is thread-safe.
    private let pointer: UnsafeMutablePointer<pthread_cond_t>

    init() {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: pthread_cond_t())
        let status = pthread_cond_init(pointer, nil)
        precondition(status == 0, "SignalKit: pthread_cond_init failed (\(status))")
    }

    /// Frees the condition. The owner calls it exactly once, from its `deinit`.
    func destroy() {
        pthread_cond_destroy(pointer)
        pointer.deinitialize(count: 1)
        pointer.deallocate()
    }

    /// Waits (the mutex held by the caller is released while waiting).
    func wait(_ mutex: _Mutex) { pthread_cond_wait(pointer, mutex.pointer) }

    func broadcast() { pthread_cond_broadcast(pointer) }
}

/// What `admit` did with a value.
enum _Admission<E> {
    /// The value waits; the caller starts its consumer if asked.
    case accepted(startConsumer: Bool)
    /// The value was dropped (counted), refused after the end, or a blocked
    /// producer was released by disposal: nothing more to do.
    case handled
    /// A `failing` policy overflowed: the waiting values were dropped and
    /// counted, the buffer is stopped with the error as its terminal event
    /// (taken by `_BoundaryState.take` for a drain); the caller starts its
    /// consumer if asked and ends the subscription.
    case overflowed(E, startConsumer: Bool)
}

/// One subscription's bounded buffer and its producer side (see the file
/// header).
///
/// `@unchecked Sendable`: `state` is guarded by `mutex`; the rest is
/// immutable or thread-safe.
class _BoundaryBuffer<T, E: Sendable>: _BufferDepthSource, @unchecked Sendable {
    let policy: SignalBuffer<E>
    let counters: _BufferCounters
    let mutex = _Mutex()
    private let condition = _Condition()
    /// Guarded by `mutex`.
    nonisolated(unsafe) var state = _BoundaryState<T, E>()

    init(policy: SignalBuffer<E>, counters: _BufferCounters) {
        self.policy = policy
        self.counters = counters
        counters.register(self)
    }

    deinit {
        counters.unregister(ObjectIdentifier(self))
        condition.destroy()
        mutex.destroy()
    }

    var waitingCount: Int {
        mutex.withLock { state.waiting.count }
    }

    /// Applies the policy to `value`. A `blocking` producer waits here for
    /// room; `isConsumer` (called with the mutex held, only when the buffer
    /// is full) tells whether the calling thread is the one that must empty
    /// it, in which case waiting would deadlock: the process stops with a
    /// message naming `consumerName`.
    func admit(_ value: T, consumerName: String, isConsumer: () -> Bool) -> _Admission<E> {
        var pending = value
        mutex.lock()
        while true {
            switch state.offer(pending, policy: policy) {
            case .accepted(let startConsumer):
                let depth = state.waiting.count
                let newMaximum = depth == state.maximumDepth && depth > 1
                mutex.unlock()
                if newMaximum { counters.recordDepth(depth) }
                return .accepted(startConsumer: startConsumer)
            case .dropped(let dropped):
                mutex.unlock()
                counters.recordDrops(1)
                // Released here, outside the lock: a deinit may send to the signal.
                withExtendedLifetime(dropped) {}
                return .handled
            case .overflowed(let dropped, let arriving, let startConsumer):
                mutex.unlock()
                counters.recordOverflow()
                counters.recordDrops(dropped.count + 1)
                withExtendedLifetime((dropped, arriving)) {}
                guard case .fail(let error) = policy.kind else { preconditionFailure("only .failing overflows") }
                return .overflowed(error, startConsumer: startConsumer)
            case .full(let value):
                if isConsumer() {
                    mutex.unlock()
                    preconditionFailure(
                        "SignalBuffer.blocking: a value was sent into a full buffer from the \(consumerName) that "
                            + "empties it; waiting for room would deadlock (the consumer cannot run while its producer "
                            + "waits). Send from another thread, or choose a dropping or failing policy for this boundary"
                    )
                }
                state.blockedProducers += 1
                counters.recordBlockedSend()
                condition.wait(mutex)
                state.blockedProducers -= 1
                if state.disposed {
                    mutex.unlock()
                    counters.recordDrops(1)
                    withExtendedLifetime(value) {}
                    return .handled
                }
                pending = value
            case .refused(let value):
                mutex.unlock()
                withExtendedLifetime(value) {}
                return .handled
            }
        }
    }

    /// Wakes the producers waiting for room. Called with the mutex held,
    /// after the consumer took values.
    func wakeBlockedProducersLocked() {
        if state.blockedProducers > 0 { condition.broadcast() }
    }

    /// Stops the buffer for good: releases the waiting values (after
    /// unlocking), wakes blocked producers (their values are dropped), and
    /// leaves the live count.
    func disposeBuffer() {
        let dropped = mutex.withLock { () -> _FIFO<T> in
            let dropped = state.dispose()
            wakeBlockedProducersLocked()
            return dropped
        }
        withExtendedLifetime(dropped) {}
        counters.unregister(ObjectIdentifier(self))
    }
}
