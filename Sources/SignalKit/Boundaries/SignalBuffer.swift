// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Boundaries: what an asynchronous boundary (a hop to a queue, a thread pool,
// an actor or an async iteration) does with values its consumer has not
// taken yet. `SignalBuffer` is the one policy type every boundary takes.

/// How many values an asynchronous boundary keeps for a consumer that is
/// slower than its producer, and what it does with one more.
///
/// SignalKit pushes: a signal sends its values whether the consumer keeps up
/// or not. Where the values cross to another queue, thread pool, actor or
/// task, they wait in a buffer until the consumer takes them. By default
/// (``unbounded``) that buffer has no limit, exactly as in SwiftSignalKit:
/// a producer that stays faster than its consumer grows it until the process
/// runs out of memory. A bounded policy keeps at most `limit` values waiting
/// and decides what happens to the next one:
///
/// | policy | when `limit` values wait | Akka Streams | Reactor | `AsyncStream` |
/// |---|---|---|---|---|
/// | ``droppingOldest(beyond:)`` | the oldest waiting value is dropped | `dropHead` | `DROP_OLDEST` | `.bufferingNewest(n)` |
/// | ``droppingNewest(beyond:)`` | the arriving value is dropped | `dropNew` | `DROP_LATEST` | `.bufferingOldest(n)` |
/// | ``latest`` | the waiting value is replaced | `conflate` | `onBackpressureLatest` | `.bufferingNewest(1)` |
/// | ``failing(beyond:with:)`` | the subscription ends with your error | `fail` | `ERROR` | — |
/// | ``blocking(beyond:)`` | the producing thread waits for room | `backpressure` | (demand) | — |
///
/// Rules every boundary keeps, whatever the policy:
/// * the error and the completion are never dropped and never wait for room;
/// * a value is delivered at most once, and the values of one subscription
///   arrive in the order they were sent;
/// * every dropped value is counted under the signal's name
///   (``SignalKitDebug/bufferStatistics()``), and in the buffer's probe if
///   it has one (``counted(by:)``);
/// * disposing the subscription releases the waiting values at once (a
///   batch the consumer is already delivering is released by the consumer,
///   after the callback that is running returns), and with them the
///   terminal event waiting behind them: a subscriber that gets a terminal
///   event missed no value before it but those counted as drops.
///
/// A bounded boundary hands its values over in batches: the consumer takes
/// every waiting value at once, so up to `limit` values wait while up to
/// `limit` more (the batch taken before) are being delivered.
///
/// The BackPressure article tells how to choose a policy.
///
/// `Failure` is the error type of the signal at the boundary: only
/// ``failing(beyond:with:)`` uses it. A signal that cannot fail
/// (`Signal<T, NoError>`) has no error value to give it: give the signal an
/// error type first with `castError`, then choose `failing` with an error of
/// that type:
///
/// ```swift
/// let updates = quotes |> castError(FeedError.self) |> deliverOn(clientQueue, buffer: .failing(beyond: 100, with: .tooSlow))
/// ```
///
/// ```swift
/// let updates = quotes |> deliverOn(clientQueue, buffer: .droppingOldest(beyond: 1_000))
/// ```
public struct SignalBuffer<Failure: Sendable>: Sendable, CustomStringConvertible {
    /// What a boundary does with one more value when `capacity` values wait.
    /// Every boundary switches over this one enum on its per-value path, so
    /// it carries no payload: `SignalBuffer` keeps a fixed layout whatever
    /// `Failure` is (see BoundaryState.swift's header).
    enum Kind: Sendable {
        /// Keeps every value (never full).
        case unbounded
        /// Drops the oldest waiting value to make room.
        case dropOldest
        /// Drops the arriving value.
        case dropNewest
        /// Replaces the one waiting value: `dropOldest` with a capacity of 1.
        case latest
        /// Ends the subscription with `failure`.
        case fail
        /// The producer waits for room.
        case block
    }

    let kind: Kind
    /// The most values that may wait; `Int.max` for ``unbounded``, and 0 only
    /// for `values(bufferingPolicy:)` with a limit of 0 (see
    /// `init(_: SignalBufferingPolicy)`).
    let capacity: Int
    /// The error of ``failing(beyond:with:)`` as the terminal event it
    /// becomes (boxed once, when the policy is made: a reference keeps the
    /// layout fixed); nil for the other policies.
    let failure: _BoundaryTerminalBox<Failure>?
    /// Where the boundaries also count (``counted(by:)``).
    let probe: SignalBufferProbe?

    private init(
        _ kind: Kind, capacity: Int, failure: _BoundaryTerminalBox<Failure>? = nil, probe: SignalBufferProbe? = nil
    ) {
        self.kind = kind
        self.capacity = capacity
        self.failure = failure
        self.probe = probe
    }

    private static func checked(_ limit: Int, _ name: String) -> Int {
        _signalKitRequire(
            limit >= 1,
            "SignalBuffer.\(name): the limit must be at least 1 (it is \(limit)); "
                + "use .unbounded for no limit, or .latest to keep only the newest value"
        )
        return limit
    }

    /// Keeps every value (the default of every boundary, as in SwiftSignalKit).
    public static var unbounded: SignalBuffer { SignalBuffer(.unbounded, capacity: .max) }

    /// Keeps at most `limit` waiting values; when full, drops the oldest
    /// waiting value to make room for the new one. The consumer sees the
    /// newest values, with gaps.
    /// - Precondition: `limit >= 1`.
    public static func droppingOldest(beyond limit: Int) -> SignalBuffer {
        SignalBuffer(.dropOldest, capacity: checked(limit, "droppingOldest(beyond:)"))
    }

    /// Keeps at most `limit` waiting values; when full, drops the value that
    /// arrives. The consumer sees the oldest values, with gaps.
    /// - Precondition: `limit >= 1`.
    public static func droppingNewest(beyond limit: Int) -> SignalBuffer {
        SignalBuffer(.dropNewest, capacity: checked(limit, "droppingNewest(beyond:)"))
    }

    /// Keeps only the newest waiting value: a value arriving while one waits
    /// replaces it (counted as a drop). For state where only the current
    /// value matters.
    public static var latest: SignalBuffer { SignalBuffer(.latest, capacity: 1) }

    /// Keeps at most `limit` waiting values; one more ends the subscription:
    /// the waiting values are dropped (and counted), upstream is disposed,
    /// and `error` is delivered next, on the consumer's side, after the value
    /// being delivered (if any).
    ///
    /// `error` is of the signal's error type. For a signal that cannot fail
    /// (`NoError`, which has no value), retype it with `castError` first:
    /// `signal |> castError(FeedError.self) |> deliverOn(queue, buffer: .failing(beyond: 100, with: .tooSlow))`.
    /// - Precondition: `limit >= 1`.
    public static func failing(beyond limit: Int, with error: Failure) -> SignalBuffer {
        SignalBuffer(
            .fail, capacity: checked(limit, "failing(beyond:with:)"), failure: _BoundaryTerminalBox(.failed(error)))
    }

    /// Keeps at most `limit` waiting values; when full, the producing thread
    /// waits until the consumer takes them (or the subscription is disposed:
    /// the value is then dropped). Nothing is dropped while the subscription
    /// lives.
    ///
    /// The producer must not be the consumer: a value sent into a full
    /// buffer from the queue (or pool lane, or drain) that empties it would
    /// wait forever, so it stops the process with a message naming the
    /// deadlock instead. Use it where the producer has a thread of its own
    /// (a socket reader, a file, a generator loop) and waiting is how it
    /// should slow down.
    /// - Precondition: `limit >= 1`.
    public static func blocking(beyond limit: Int) -> SignalBuffer {
        SignalBuffer(.block, capacity: checked(limit, "blocking(beyond:)"))
    }

    /// This policy, with every boundary that uses it also counting into
    /// `probe`: its drops, overflows, blocked sends, depth and live
    /// subscriptions, readable as ``SignalBufferProbe/statistics`` without a
    /// name (see ``SignalBufferProbe``). The name's entry in
    /// ``SignalKitDebug/bufferStatistics()`` counts them as well.
    /// ``unbounded`` counts nothing, so its probe stays at zero.
    ///
    /// ```swift
    /// let probe = SignalBufferProbe()
    /// let updates = quotes |> deliverOn(clientQueue, buffer: .droppingOldest(beyond: 100).counted(by: probe))
    /// ```
    public func counted(by probe: SignalBufferProbe) -> SignalBuffer {
        SignalBuffer(kind, capacity: capacity, failure: failure, probe: probe)
    }

    /// Whether this is ``unbounded``.
    public var isUnbounded: Bool {
        if case .unbounded = kind { return true }
        return false
    }

    /// The error of ``failing(beyond:with:)``: asked only after that policy
    /// overflowed.
    var overflowError: Failure {
        guard case .failed(let error)? = failure?.event else { preconditionFailure("only .failing overflows") }  // invariant
        return error
    }

    /// The most values that may wait, or nil for ``unbounded``.
    public var limit: Int? { isUnbounded ? nil : capacity }

    /// What a boundary under this policy does with one more value when
    /// ``limit`` values wait: for code that applies a `SignalBuffer` in a
    /// buffer of its own (a network client's publishes waiting for a
    /// connection, say), so it keeps the policy the user chose.
    public var overflow: SignalBufferOverflow {
        switch kind {
        case .unbounded: .never
        case .dropOldest, .latest: .dropOldest
        case .dropNewest: .dropNewest
        case .fail: .fail
        case .block: .block
        }
    }

    /// The error of ``failing(beyond:with:)``; nil for every other policy.
    public var errorOnOverflow: Failure? {
        guard case .failed(let error)? = failure?.event else { return nil }
        return error
    }

    /// `unbounded`, `latest`, `droppingOldest(beyond: 100)`,
    /// `droppingNewest(beyond: 100)`, `failing(beyond: 100)` or
    /// `blocking(beyond: 100)`.
    public var description: String {
        switch kind {
        case .unbounded: "unbounded"
        case .latest: "latest"
        case .dropOldest: "droppingOldest(beyond: \(capacity))"
        case .dropNewest: "droppingNewest(beyond: \(capacity))"
        case .fail: "failing(beyond: \(capacity))"
        case .block: "blocking(beyond: \(capacity))"
        }
    }
}

extension SignalBuffer where Failure == NoError {
    /// Not for a signal that cannot fail: `NoError` has no value to fail
    /// with. Retype the signal with `castError` first, then choose
    /// ``failing(beyond:with:)`` with an error of that type:
    /// `ticks |> castError(FeedError.self) |> deliverOn(queue, buffer: .failing(beyond: 100, with: .tooSlow))`.
    @available(
        *, unavailable,
        message:
            "a signal that cannot fail (NoError) has no error for .failing: retype it first with castError, e.g. signal |> castError(FeedError.self) |> deliverOn(queue, buffer: .failing(beyond: 100, with: .tooSlow))"
    )
    public static func failing<Other: Error>(beyond limit: Int, with error: Other) -> SignalBuffer {
        fatalError("unavailable")
    }
}

/// What a bounded boundary does with one more value when its
/// ``SignalBuffer/limit`` values wait (``SignalBuffer/overflow``).
public enum SignalBufferOverflow: Sendable, Hashable {
    /// ``SignalBuffer/unbounded``: the buffer is never full.
    case never
    /// ``SignalBuffer/droppingOldest(beyond:)`` and ``SignalBuffer/latest``:
    /// the oldest waiting value is dropped to make room.
    case dropOldest
    /// ``SignalBuffer/droppingNewest(beyond:)``: the arriving value is dropped.
    case dropNewest
    /// ``SignalBuffer/failing(beyond:with:)``: the subscription ends with
    /// ``SignalBuffer/errorOnOverflow``.
    case fail
    /// ``SignalBuffer/blocking(beyond:)``: the producer waits for room.
    case block
}

/// How many values an iteration of `Signal.values(bufferingPolicy:)` keeps
/// while its consumer is busy, in `AsyncStream`'s words: the same buffers as
/// ``SignalBuffer``'s (`values(buffer:)`), which every other boundary takes.
/// Each case maps onto a ``SignalBuffer`` (in one place:
/// `SignalBuffer.init(_:)`); `values(buffer:)` is the spelling every other
/// boundary shares.
public enum SignalBufferingPolicy: Sendable, Hashable {
    /// Keeps every value: ``SignalBuffer/unbounded``.
    case unbounded
    /// Keeps at most `n` values; a value arriving when full is dropped:
    /// ``SignalBuffer/droppingNewest(beyond:)`` for `n >= 1`.
    case bufferingOldest(Int)
    /// Keeps at most `n` values; when full, the oldest kept value is dropped
    /// to make room: ``SignalBuffer/droppingOldest(beyond:)`` for `n >= 1`.
    case bufferingNewest(Int)
}

extension SignalBuffer {
    /// `policy` as a `SignalBuffer`: the one place `AsyncStream`'s spelling
    /// becomes SignalKit's. A limit of 0 (or less), which the public
    /// constructors refuse, is kept as a capacity of 0: only a value that
    /// arrives while the consumer waits in `next()` is kept, and while it
    /// waits the policy's rule applies as with a limit of 1 (only
    /// `values` builds it; its description reads `droppingOldest(beyond: 0)`
    /// or `droppingNewest(beyond: 0)`).
    init(_ policy: SignalBufferingPolicy) {
        switch policy {
        case .unbounded: self = .unbounded
        case .bufferingOldest(let limit): self.init(.dropNewest, capacity: max(limit, 0))
        case .bufferingNewest(let limit): self.init(.dropOldest, capacity: max(limit, 0))
        }
    }
}
