// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The buffer of one bounded boundary's subscription, as a state machine kept
// under its owner's lock: what a producer's value does to it (by policy),
// what a terminal event does, and what the consumer takes. The owners (the
// bounded mapToQueue and delayEvents, the actor delivery, the async
// iteration) add the lock, the executor and the consumer. (The bounded
// `deliverOn` keeps a ring of its own: BoundedHop.swift.)

// Not specialised: SignalKit's generic code runs for the user's value type
// without being specialised for it. Such code pays a runtime metadata lookup
// (a hash-table search) where it touches a type whose layout depends on a
// type parameter, and where it calls a method of a generic type or a generic
// function that is not inlined (the callee gets the type's metadata). The
// per-value path therefore uses types of fixed layout (`_FIFO`, the terminal
// event boxed, the policy (`SignalBuffer`, whose `failing` error is boxed),
// non-generic results, the one value to release handed back through a slot
// the caller allocates: `displaced`) and inlines the methods of
// `_BoundaryState` and `_FIFO` (`exchange(with:)`, not `swap`), so
// the per-value path makes no such lookup.

/// A terminal event waiting behind the values.
enum _BoundaryTerminal<E> {
    case completed
    case failed(E)
}

extension _BoundaryTerminal: Sendable where E: Sendable {}

/// A terminal event in a box: a reference, so that the state holding it has
/// a fixed layout whatever `E` is.
final class _BoundaryTerminalBox<E: Sendable>: Sendable {
    let event: _BoundaryTerminal<E>

    init(_ event: _BoundaryTerminal<E>) {
        self.event = event
    }
}

/// What a producer's value did to the buffer. Where a value is to be
/// released (or offered again), it was moved into the caller's `displaced`
/// slot.
enum _BoundaryOffer {
    /// Waiting now; the caller starts a drain if asked, and records the new
    /// maximum depth when the value raised it.
    case accepted(startDrain: Bool, newMaximumDepth: Int?)
    /// The buffer was full: the dropped value (the arriving one or the oldest
    /// waiting one) is in `displaced`, to be released after unlocking and
    /// counted.
    case dropped
    /// A `failing` policy overflowed: the subscription is stopped, the
    /// waiting values were moved into the caller's `overflow` and the
    /// arriving one into `displaced` (all to be released after unlocking and
    /// counted), the policy's error waits as the terminal event; the caller starts a
    /// drain if asked and disposes upstream.
    case overflowed(startDrain: Bool)
    /// A `blocking` policy is full: the value is in `displaced`; the caller
    /// waits and offers it again.
    case full
    /// The buffer takes no more values (terminated, overflowed or
    /// disposed): the value is in `displaced`, to be released, not counted.
    case refused
}

/// One subscription's waiting values and terminal event.
struct _BoundaryState<T, E: Sendable> {
    /// Values not taken by the consumer yet.
    var waiting = _FIFO<T>()
    /// The terminal event, once sent and not yet taken.
    var terminalBox: _BoundaryTerminalBox<E>?
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

    /// The terminal event, once sent and not yet taken.
    var terminal: _BoundaryTerminal<E>? {
        get { terminalBox?.event }
        set { terminalBox = newValue.map { _BoundaryTerminalBox($0) } }
    }

    /// Offers one value under `policy`. A value offered while the consumer
    /// waits (an async iteration's `next()`) may be passed with
    /// `consumerWaiting`: it is always taken, even by a full buffer.
    /// `displaced` is an uninitialized slot: a value to release (or offer
    /// again) is moved there, as the result says; `overflow` (empty) takes
    /// the waiting values a `failing` overflow drops.
    @inline(__always)
    mutating func offer(
        _ value: consuming T,
        policy: SignalBuffer<E>,
        consumerWaiting: Bool = false,
        displaced: UnsafeMutablePointer<T>,
        overflow: inout _FIFO<T>
    ) -> _BoundaryOffer {
        guard !stopped else {
            displaced.initialize(to: value)
            return .refused
        }
        if waiting.count >= policy.capacity && !consumerWaiting {
            switch policy.kind {
            case .unbounded:
                break
            case .dropNewest:
                displaced.initialize(to: value)
                return .dropped
            case .dropOldest, .latest:
                displaced.initialize(to: waiting.removeFirst())
                waiting.append(value)
                return .dropped
            case .fail:
                stopped = true
                terminalBox = policy.failure
                overflow.exchange(with: &waiting)
                displaced.initialize(to: value)
                return .overflowed(startDrain: startDrain())
            case .block:
                displaced.initialize(to: value)
                return .full
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
    @inline(__always)
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
        terminalBox = nil
        var dropped = _FIFO<T>()
        dropped.exchange(with: &waiting)
        return dropped
    }

    /// Whether `take` would find something: a value, the terminal event or
    /// the disposal.
    @inline(__always)
    var hasWork: Bool { disposed || !waiting.isEmpty || terminalBox != nil }

    /// Whether nothing waits and no drain is scheduled or running: a
    /// producer on the consumer's own queue may deliver inline.
    @inline(__always)
    var isIdle: Bool { !draining && waiting.isEmpty && !stopped }
}

/// What a consumer takes next from a `_BoundaryState`.
enum _BoundaryStep<E: Sendable> {
    /// The waiting values were moved into the consumer's batch.
    case values
    /// The terminal event, after every value (boxed: the step's layout is
    /// then fixed, see the file header).
    case terminal(_BoundaryTerminalBox<E>)
    /// Nothing waits: the drain ends (`draining` was cleared).
    case idle
}

extension _BoundaryState {
    /// Moves every waiting value into `batch` (which must be empty; its
    /// storage goes to the producer side, so that the two swap buffers and
    /// steady state allocates nothing), or takes the terminal event, or ends
    /// the drain. Called with the owner's lock held, by the one drain.
    @inline(__always)
    mutating func take(into batch: inout _FIFO<T>) -> _BoundaryStep<E> {
        if disposed {
            draining = false
            return .idle
        }
        if !waiting.isEmpty {
            batch.exchange(with: &waiting)
            return .values
        }
        if let box = terminalBox {
            // `draining` stays set: no drain is ever scheduled again.
            terminalBox = nil
            return .terminal(box)
        }
        draining = false
        return .idle
    }
}
