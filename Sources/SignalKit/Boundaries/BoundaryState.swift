// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The buffer of one bounded boundary's subscription, as a state machine kept
// under its owner's lock: what a producer's value does to it (by policy),
// what a terminal event does, and what the consumer takes. The owners (the
// queue and pool hop, the actor delivery, the async iteration) add the lock,
// the executor and the consumer.

/// A terminal event waiting behind the values.
enum _BoundaryTerminal<E> {
    case completed
    case failed(E)
}

/// What a producer's value did to the buffer.
enum _BoundaryOffer<T> {
    /// Waiting now; the caller starts a drain if asked, and records the new
    /// maximum depth when the value raised it.
    case accepted(startDrain: Bool, newMaximumDepth: Int?)
    /// The buffer was full: `dropped` (the arriving value or the oldest
    /// waiting one) is to be released after unlocking and counted.
    case dropped(T)
    /// A `failing` policy overflowed: the subscription is stopped, `dropped`
    /// holds the values to release after unlocking (all counted, with the
    /// arriving one), the error waits as the terminal event; the caller
    /// starts a drain if asked and disposes upstream.
    case overflowed(dropped: _FIFO<T>, arriving: T, startDrain: Bool)
    /// A `blocking` policy is full: the caller waits and offers again.
    case full(T)
    /// The buffer takes no more values (terminated, overflowed or
    /// disposed): the value is released, not counted.
    case refused(T)
}

/// One subscription's waiting values and terminal event.
struct _BoundaryState<T, E: Sendable> {
    /// Values not taken by the consumer yet.
    var waiting = _FIFO<T>()
    /// The terminal event, once sent and not yet taken.
    var terminal: _BoundaryTerminal<E>?
    /// Takes no more values: a terminal event was queued, the policy
    /// overflowed, or the subscription was disposed.
    var stopped = false
    var disposed = false
    /// A drain is scheduled or running (at most one is).
    var draining = false
    /// Producers waiting for room (`blocking`).
    var blockedProducers = 0
    /// The most values that waited at once in this buffer.
    var maximumDepth = 0

    /// Offers one value under `policy`. A value offered while the consumer
    /// waits (an async iteration's `next()`) may be passed with
    /// `consumerWaiting`: it is always taken, even by a full buffer.
    mutating func offer(_ value: consuming T, policy: SignalBuffer<E>, consumerWaiting: Bool = false) -> _BoundaryOffer<T> {
        guard !stopped else { return .refused(value) }
        if waiting.count >= policy.capacity && !consumerWaiting {
            switch policy.kind {
            case .unbounded:
                break
            case .dropNewest:
                return .dropped(value)
            case .dropOldest, .latest:
                let oldest = waiting.popFirst()!
                waiting.append(value)
                return .dropped(oldest)
            case .fail(let error):
                stopped = true
                terminal = .failed(error)
                var dropped = _FIFO<T>()
                swap(&dropped, &waiting)
                return .overflowed(dropped: dropped, arriving: value, startDrain: startDrain())
            case .block:
                return .full(value)
            }
        }
        waiting.append(value)
        var newMaximumDepth: Int?
        if waiting.count > maximumDepth {
            maximumDepth = waiting.count
            newMaximumDepth = maximumDepth
        }
        return .accepted(startDrain: startDrain(), newMaximumDepth: newMaximumDepth)
    }

    /// Queues the terminal event (never dropped, never waits); returns
    /// whether the caller starts a drain, or nil if the buffer was stopped
    /// already (the event is dropped: the subscription ended before it).
    mutating func offerTerminal(_ event: _BoundaryTerminal<E>) -> Bool? {
        guard !stopped else { return nil }
        stopped = true
        terminal = event
        return startDrain()
    }

    /// Marks a drain as needed; true if none was scheduled or running.
    private mutating func startDrain() -> Bool {
        guard !draining else { return false }
        draining = true
        return true
    }

    /// Disposal: stops the buffer and hands back its waiting values (to be
    /// released after unlocking).
    mutating func dispose() -> _FIFO<T> {
        stopped = true
        disposed = true
        terminal = nil
        var dropped = _FIFO<T>()
        swap(&dropped, &waiting)
        return dropped
    }

    /// Whether nothing waits and no drain is scheduled or running: a
    /// producer on the consumer's own queue may deliver inline.
    var isIdle: Bool { !draining && waiting.isEmpty && !stopped }
}

/// What a consumer takes next from a `_BoundaryState`.
enum _BoundaryStep<E: Sendable> {
    /// The waiting values were moved into the consumer's batch.
    case values
    /// The terminal event, after every value.
    case terminal(_BoundaryTerminal<E>)
    /// Nothing waits: the drain ends (`draining` was cleared).
    case idle
}

extension _BoundaryState {
    /// Moves every waiting value into `batch` (which must be empty; its
    /// storage goes to the producer side, so that the two swap buffers and
    /// steady state allocates nothing), or takes the terminal event, or ends
    /// the drain. Called with the owner's lock held, by the one drain.
    mutating func take(into batch: inout _FIFO<T>) -> _BoundaryStep<E> {
        if disposed {
            draining = false
            return .idle
        }
        if !waiting.isEmpty {
            swap(&batch, &waiting)
            return .values
        }
        if let event = terminal {
            // `draining` stays set: no drain is ever scheduled again.
            terminal = nil
            return .terminal(event)
        }
        draining = false
        return .idle
    }
}
