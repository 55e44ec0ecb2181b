// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The buffer of one bounded boundary's subscription, as a state machine kept
// under its owner's lock: what a producer's value does to it (by policy),
// what a terminal event does, and what the consumer takes. The owners (the
// bounded delayEvents, the actor delivery, the async iteration) add the
// lock, the executor and the consumer. What a full buffer does with one more
// value is decided once, by `_FIFO.admit` (below), which the bounded
// `queue` (the queue engine's bounded mode) calls too. (The bounded
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

/// Where one subscription's buffer is in its life. Only `open` takes
/// values; the terminal event lives in the phase that waits to deliver it,
/// so a buffer cannot be both disposed and still hold one, nor stopped
/// without saying why.
enum _BoundaryPhase<E: Sendable> {
    /// Takes values.
    case open
    /// Upstream's terminal event waits behind the values.
    case terminating(_BoundaryTerminalBox<E>)
    /// A `failing` policy overflowed: the waiting values were dropped and its
    /// error waits as the terminal event.
    case overflowed(_BoundaryTerminalBox<E>)
    /// The consumer took the terminal event: nothing more happens.
    case finished
    /// Disposed: the waiting values were released, nothing is delivered.
    case disposed
}

/// One subscription's waiting values and the phase of its life (see
/// `_BoundaryPhase`).
struct _BoundaryState<T, E: Sendable> {
    /// Values not taken by the consumer yet.
    var waiting = _FIFO<T>()
    var phase = _BoundaryPhase<E>.open
    /// The consumer is scheduled or running: a drain job, the running inner
    /// of a bounded `queue`, the armed timer of a bounded `delayEvents`. At
    /// most one is; whoever sets it starts the consumer, which clears it when
    /// it finds nothing left (a consumer that took the terminal event leaves
    /// it set: none is started again).
    var consumerActive = false
    /// The most values that waited at once in this buffer.
    var maximumDepth = 0

    /// Whether the buffer takes values (no terminal event queued, no
    /// overflow, not disposed).
    @inline(__always)
    var isOpen: Bool {
        if case .open = phase { return true }
        return false
    }

    @inline(__always)
    var isDisposed: Bool {
        if case .disposed = phase { return true }
        return false
    }

    /// The terminal event waiting behind the values, if any.
    @inline(__always)
    var pendingTerminal: _BoundaryTerminalBox<E>? {
        switch phase {
        case .terminating(let box), .overflowed(let box): box
        case .open, .finished, .disposed: nil
        }
    }

    /// Offers one value under `policy`. A value offered while the consumer
    /// waits (an async iteration's `next()`) may be passed with
    /// `consumerWaiting`: it is always taken, even by a full buffer (one of
    /// capacity 0 included, which keeps nothing otherwise).
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
        guard isOpen else {
            displaced.initialize(to: value)
            return .refused
        }
        switch waiting.admit(
            value, policy: policy, keepingAnyway: consumerWaiting, displaced: displaced, overflow: &overflow)
        {
        case .accepted(let depth):
            var newMaximumDepth: Int?
            if depth > maximumDepth {
                maximumDepth = depth
                newMaximumDepth = depth
            }
            return .accepted(startDrain: activateConsumer(), newMaximumDepth: newMaximumDepth)
        case .dropped:
            return .dropped
        case .overflowed:
            phase = .overflowed(policy.failure!)
            return .overflowed(startDrain: activateConsumer())
        case .full:
            return .full
        }
    }

    /// Queues the terminal event (never dropped, never waits); returns
    /// whether the caller starts the consumer, or nil if the buffer was not
    /// open (the event is dropped: the subscription ended before it).
    mutating func offerTerminal(_ event: _BoundaryTerminal<E>) -> Bool? {
        guard isOpen else { return nil }
        phase = .terminating(_BoundaryTerminalBox(event))
        return activateConsumer()
    }

    /// Marks the consumer as needed; true if it was not active (the caller
    /// starts it).
    @inline(__always)
    mutating func activateConsumer() -> Bool {
        guard !consumerActive else { return false }
        consumerActive = true
        return true
    }

    /// Disposal: ends the buffer and hands back its waiting values (to be
    /// released after unlocking).
    mutating func dispose() -> _FIFO<T> {
        phase = .disposed
        var dropped = _FIFO<T>()
        dropped.exchange(with: &waiting)
        return dropped
    }
}

/// What `_FIFO.admit` did with a value.
enum _FIFOAdmission {
    /// Appended: `depth` values wait now.
    case accepted(depth: Int)
    /// The buffer was full: the dropped value (the arriving one or the oldest
    /// waiting one) is in `displaced`.
    case dropped
    /// A `failing` policy overflowed: the waiting values were moved into
    /// `overflow` and the arriving one into `displaced`.
    case overflowed
    /// A `blocking` policy is full: the value is in `displaced`, to be
    /// offered again once there is room.
    case full
}

extension _FIFO {
    /// Applies `policy` to `value` arriving at these waiting values: the one
    /// place that decides what a bounded buffer of waiting values does with
    /// one more (`_BoundaryState.offer` for the boundaries, the queue
    /// engine's bounded mode for `queue(buffer:)`; the bounded hop's ring,
    /// not a FIFO, switches over the same `SignalBuffer.overflow`). `keepingAnyway` appends it whatever
    /// the count (a consumer is waiting for it). The caller holds its lock
    /// and releases what lands in `displaced` and `overflow` after
    /// unlocking (a `deinit` may send to the signal).
    @inline(__always)
    mutating func admit<E>(
        _ value: consuming Element,
        policy: SignalBuffer<E>,
        keepingAnyway: Bool = false,
        displaced: UnsafeMutablePointer<Element>,
        overflow: inout _FIFO<Element>
    ) -> _FIFOAdmission {
        if count >= policy.capacity && !keepingAnyway {
            switch policy.overflow {
            case .never:
                break
            case .dropNewest:
                displaced.initialize(to: value)
                return .dropped
            case .dropOldest:
                // A capacity of 0 (`values(bufferingPolicy:)`) has no oldest
                // to drop: the arriving value goes.
                if isEmpty {
                    displaced.initialize(to: value)
                } else {
                    displaced.initialize(to: removeFirst())
                    append(value)
                }
                return .dropped
            case .fail:
                overflow.exchange(with: &self)
                displaced.initialize(to: value)
                return .overflowed
            case .block:
                displaced.initialize(to: value)
                return .full
            }
        }
        append(value)
        return .accepted(depth: count)
    }
}

/// What a consumer takes next from a `_BoundaryState`.
enum _BoundaryStep<E: Sendable> {
    /// The waiting values were moved into the consumer's batch.
    case values
    /// The terminal event, after every value (boxed: the step's layout is
    /// then fixed, see the file header).
    case terminal(_BoundaryTerminalBox<E>)
    /// Nothing waits: the drain ends (`consumerActive` was cleared).
    case idle
}

extension _BoundaryState {
    /// Moves every waiting value into `batch` (which must be empty; its
    /// storage goes to the producer side, so that the two swap buffers and
    /// steady state allocates nothing), or takes the terminal event, or ends
    /// the drain. Called with the owner's lock held, by the one drain.
    @inline(__always)
    mutating func take(into batch: inout _FIFO<T>) -> _BoundaryStep<E> {
        if case .disposed = phase {
            consumerActive = false
            return .idle
        }
        if !waiting.isEmpty {
            batch.exchange(with: &waiting)
            return .values
        }
        if let box = pendingTerminal {
            // `consumerActive` stays set: no consumer is ever started again.
            phase = .finished
            return .terminal(box)
        }
        consumerActive = false
        return .idle
    }

    /// Takes the terminal event once every value was taken (a consumer that
    /// takes values one by one): the buffer is finished.
    @inline(__always)
    mutating func takeTerminal() -> _BoundaryTerminal<E>? {
        guard waiting.isEmpty, let box = pendingTerminal else { return nil }
        phase = .finished
        return box.event
    }
}
