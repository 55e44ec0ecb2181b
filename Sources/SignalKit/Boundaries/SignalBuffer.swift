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
///   after the callback that is running returns).
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
    enum Kind: Sendable {
        case unbounded
        case dropOldest
        case dropNewest
        case latest
        case fail(Failure)
        case block
    }

    let kind: Kind
    /// The most values that may wait; `Int.max` for ``unbounded``.
    let capacity: Int
    /// Where the boundaries also count (``counted(by:)``).
    let probe: SignalBufferProbe?

    private init(_ kind: Kind, capacity: Int, probe: SignalBufferProbe? = nil) {
        self.kind = kind
        self.capacity = capacity
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
        SignalBuffer(.fail(error), capacity: checked(limit, "failing(beyond:with:)"))
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
        SignalBuffer(kind, capacity: capacity, probe: probe)
    }

    /// Whether this is ``unbounded``.
    public var isUnbounded: Bool {
        if case .unbounded = kind { return true }
        return false
    }

    /// The error of ``failing(beyond:with:)``: asked only after that policy
    /// overflowed.
    var overflowError: Failure {
        guard case .fail(let error) = kind else { preconditionFailure("only .failing overflows") }  // invariant
        return error
    }

    /// The most values that may wait, or nil for ``unbounded``.
    public var limit: Int? { isUnbounded ? nil : capacity }

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
