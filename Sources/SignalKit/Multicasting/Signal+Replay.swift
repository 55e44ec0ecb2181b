// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The replay family: hot signals that remember what their source sent
// (RAC's -replay, -replayLast, -replayLazily).

/// Subscribes to the signal now, once, and replays everything it sent to
/// every subscriber (RAC's `-replay`).
///
/// Marble: source `"a-b-|"` → a subscriber starting at any time, even after
/// the completion: `"a-b-|"` (what was missed comes at once, then the rest
/// live).
///
/// - Parameters:
///   - signal: the cold source, subscribed exactly once, right now.
/// - Returns: the hot signal of an unlimited ``ReplaySubject`` connected to
///   the source.
///
/// **Threading:** the source is subscribed synchronously on the caller's
/// thread, inside this call. A subscriber gets the replay synchronously
/// inside `start`, then live events on the source's thread.
///
/// **Termination:** the source's terminal event is remembered and replayed
/// to every later subscriber.
///
/// **Disposal:** disposing a subscriber does not affect the source, which
/// runs until it terminates (or is dropped by its producer); use
/// `multicast(ReplaySubject())` and `connect()` to be able to dispose it.
/// Every value is kept for as long as the result is referenced.
public func replay<T: Sendable, E: Sendable>(_ signal: Signal<T, E>) -> Signal<T, E> {
    let connection = signal |> multicast(ReplaySubject<T, E>())
    connection.connect()
    return connection.signal._derived("replay", from: signal)
}

/// Subscribes to the signal now, once, and replays its latest value (and
/// its terminal event) to every subscriber (RAC's `-replayLast`).
///
/// Marble: source `"a-b-|"` → a subscriber starting after `b`: `"b-|"`.
///
/// - Parameters:
///   - signal: the cold source, subscribed exactly once, right now.
/// - Returns: the hot signal of a ``ReplaySubject`` of capacity 1 connected
///   to the source.
///
/// **Threading:** as `replay`.
///
/// **Termination:** the terminal event is remembered and replayed after the
/// latest value. (Unlike a ``Promise``, which keeps its value but never
/// completes.)
///
/// **Disposal:** as `replay`: the source runs until it terminates.
public func replayLast<T: Sendable, E: Sendable>(_ signal: Signal<T, E>) -> Signal<T, E> {
    let connection = signal |> multicast(ReplaySubject<T, E>(capacity: 1))
    connection.connect()
    return connection.signal._derived("replayLast", from: signal)
}

/// Subscribes to the signal on the first subscription, once, and replays
/// everything it sent to every subscriber (RAC's `-replayLazily`).
///
/// Marble: source `"a-b-|"` → first subscriber: `"a-b-|"` (the source starts
/// now); any later one: what was sent so far at once, then the rest live.
///
/// - Parameters:
///   - signal: the cold source, subscribed exactly once, by the first
///     subscription of the result.
/// - Returns: a signal that connects an unlimited ``ReplaySubject`` to the
///   source on its first subscription.
///
/// **Threading:** the first subscription subscribes the source on its own
/// thread, inside `start`; concurrent first subscriptions connect once.
///
/// **Termination:** the source's terminal event is remembered and replayed.
///
/// **Disposal:** never disconnects: the source keeps running when every
/// subscriber has left (RAC semantics; compare `autoconnect()`, which
/// disposes the connection at zero subscribers, and never reconnects).
public func replayLazily<T: Sendable, E: Sendable>(_ signal: Signal<T, E>) -> Signal<T, E> {
    let connection = signal |> multicast(ReplaySubject<T, E>())
    let subject = connection.signal
    return Signal { subscriber in
        // Connect first: what the source sends synchronously is recorded
        // and replayed to this subscriber (RAC's order).
        connection.connect()
        return subject.generator(subscriber)
    }._derived("replayLazily", from: signal)
}
