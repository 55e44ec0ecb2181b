// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Hot signals from a block run once on a queue (RAC's
// +startEagerlyWithScheduler:block: and +startLazilyWithScheduler:block:),
// built on `replay` / `replayLazily`.

extension Signal where T: Sendable, E: Sendable {
    /// Runs `block` once, now, on `queue`, and replays everything it sends
    /// to every subscriber (RAC's `+startEagerlyWithScheduler:block:`).
    ///
    /// Marble: block sends `"a-b-|"` → a subscriber starting at any time:
    /// `"a-b-|"` (missed events at once, the rest live).
    ///
    /// ```swift
    /// let config = Signal<Config, LoadError>.startEagerly(on: ioQueue) { subscriber in
    ///     loadConfig { result in
    ///         switch result {
    ///         case .success(let config): subscriber.putNext(config); subscriber.putCompletion()
    ///         case .failure(let error): subscriber.putError(error)
    ///         }
    ///     }
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - queue: where `block` runs (inline if the caller is already on
    ///     `queue`, as `runOn`).
    ///   - block: the work; it sends events to the subscriber it receives,
    ///     at any time, from any thread (serially).
    /// - Returns: a hot, replaying signal (`replay` of the work).
    ///
    /// **Threading:** `block` is posted to `queue` by this call. Subscribers
    /// get the replay inside `start`, then live events on the thread the
    /// block sends them from.
    ///
    /// **Termination:** the block's terminal event is remembered and
    /// replayed.
    ///
    /// **Disposal:** the work is never disposed; disposing a subscription
    /// only stops that subscriber.
    public static func startEagerly(on queue: Queue, _ block: @escaping @Sendable (Subscriber<T, E>) -> Void) -> Signal<T, E> {
        replay(_blockWork(on: queue, block))
    }

    /// Runs `block` once, on `queue`, when the result is first subscribed,
    /// and replays everything it sends to every subscriber (RAC's
    /// `+startLazilyWithScheduler:block:`).
    ///
    /// Marble: block sends `"a-b-|"` → first subscriber: `"a-b-|"` (the block
    /// is posted now); any later one: what was sent so far at once, then the
    /// rest live.
    ///
    /// - Parameters:
    ///   - queue: where `block` runs (inline if the first subscriber is
    ///     already on `queue`, as `runOn`).
    ///   - block: the work; it sends events to the subscriber it receives.
    /// - Returns: a lazily connected, replaying signal (`replayLazily` of the
    ///   work).
    ///
    /// **Threading:** the first `start` posts `block` to `queue`. Subscribers
    /// get the replay inside `start`, then live events on the block's thread.
    ///
    /// **Termination:** the block's terminal event is remembered and
    /// replayed.
    ///
    /// **Disposal:** the work is never disposed, even when every subscriber
    /// has left.
    public static func startLazily(on queue: Queue, _ block: @escaping @Sendable (Subscriber<T, E>) -> Void) -> Signal<T, E> {
        replayLazily(_blockWork(on: queue, block))
    }

    private static func _blockWork(on queue: Queue, _ block: @escaping @Sendable (Subscriber<T, E>) -> Void) -> Signal<T, E> {
        Signal { subscriber in
            block(subscriber)
            return EmptyDisposable
        } |> SignalKit.runOn(queue)
    }
}
