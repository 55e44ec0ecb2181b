// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// A serial execution context that a `Queue` can run on instead of a
/// `DispatchQueue`.
///
/// SignalKit's `Queue` wraps Dispatch by default. A `QueueScheduler` lets a
/// queue run on something else with the same semantics: a virtual clock in
/// tests (`SignalKitTesting.VirtualTimeScheduler`), an event loop, a custom
/// executor. Every timing operator (`delay`, `timeout`, `retry`, `Timer`, …)
/// goes through the queue, so it follows the scheduler's clock.
///
/// Requirements:
/// * work is run serially, in FIFO order for `schedule`, and in deadline
///   order (FIFO among equal deadlines) for `schedule(after:)`;
/// * `isCurrent()` is true exactly while this scheduler is running work
///   (SignalKit uses it for its "run inline when already on the queue" rule);
/// * the closures are not `@Sendable`: a scheduler that runs them on another
///   thread takes them over (the caller does not use them again).
public protocol QueueScheduler: AnyObject, Sendable {
    /// Whether the caller is running inside work of this scheduler.
    func isCurrent() -> Bool

    /// Runs `work` later, in FIFO order. Never runs it inline.
    func schedule(_ work: @escaping @Sendable () -> Void)

    /// Runs `work` after `delay` seconds. Disposing the result before then
    /// cancels it.
    func schedule(after delay: Double, _ work: @escaping @Sendable () -> Void) -> any Disposable

    /// Runs `work` on this scheduler and waits for it (`Queue.sync` when the
    /// caller is not already on the scheduler).
    func performSync(_ work: () -> Void)

    /// The scheduler's clock, in seconds (monotonic; any origin).
    var currentTime: Double { get }
}
