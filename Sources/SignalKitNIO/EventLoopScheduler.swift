// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NIO
public import NIOCore
public import SignalKit

/// A SwiftNIO `EventLoop` as the execution context of a SignalKit ``Queue``
/// (`Queue(eventLoop:)`): `async` is `execute`, `isCurrent()` is
/// `inEventLoop`, timers are `scheduleTask`, the clock is the loop's `now`
/// (virtual on an `EmbeddedEventLoop` or `NIOAsyncTestingEventLoop`).
///
/// Nothing here blocks an event loop. `Queue.sync` (``performSync(_:)``) runs
/// the work inline when called on the loop; called from another thread, it
/// hands the work to the loop and waits for it, which NIO forbids on any
/// event loop thread: call it only from threads that are not event loops
/// (NIO stops the program with "BUG DETECTED: wait() must not be called when
/// on an EventLoop" otherwise).
public final class EventLoopScheduler: QueueScheduler {
    /// The loop the work runs on.
    public let eventLoop: any EventLoop

    public init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    public func isCurrent() -> Bool {
        eventLoop.inEventLoop
    }

    public func schedule(_ work: @escaping @Sendable () -> Void) {
        eventLoop.execute(work)
    }

    public func schedule(after delay: Double, _ work: @escaping @Sendable () -> Void) -> any Disposable {
        let scheduled = eventLoop.scheduleTask(in: .nanoseconds(Int64((max(delay, 0) * 1_000_000_000).rounded()))) {
            work()
        }
        return ActionDisposable { scheduled.cancel() }
    }

    public func performSync(_ work: () -> Void) {
        if eventLoop.inEventLoop {
            work()
            return
        }
        withoutActuallyEscaping(work) { work in
            // The loop's task closure may outlive `wait()` (NIO releases it
            // on the loop): it captures a box, emptied before `work` stops
            // being valid.
            let box = _SyncWork(work)
            do {
                try eventLoop.submit { box.run() }.wait()
            } catch {
                _signalKitMisuse("Queue.sync on \(eventLoop): the event loop did not run the work (\(error))")
            }
            box.clear()
        }
    }

    public var currentTime: Double {
        Double(eventLoop.now.uptimeNanoseconds) / 1_000_000_000
    }
}

extension Queue {
    /// A queue whose work runs on `eventLoop` (see ``EventLoopScheduler``):
    /// `deliverOn(Queue(eventLoop: channel.eventLoop))` delivers a signal's
    /// events on a channel's loop, `delay`, `timeout` and `Timer` schedule on
    /// it, and `isCurrent()` is `inEventLoop`, so an event already on the
    /// loop is delivered inline.
    ///
    /// In tests: an `EmbeddedEventLoop` answers `inEventLoop` with true on
    /// every call, so this queue is always current there, and `deliverOn`
    /// (bounded or not) and `runOn` onto it run inline, on the sending
    /// thread, before the send returns; only timers wait for
    /// `advanceTime`. A bounded `deliverOn` onto it therefore never lets
    /// values wait, and drops nothing. To test what a buffer keeps and
    /// drops, use a loop that runs its work later: `NIOAsyncTestingEventLoop`
    /// (work runs when the test calls `run()`), a real loop kept busy, or
    /// SignalKitTesting's `VirtualTimeScheduler`.
    public convenience init(eventLoop: any EventLoop) {
        self.init(scheduler: EventLoopScheduler(eventLoop: eventLoop))
    }
}

/// Delivers every event on `eventLoop` (inline when already on it): the
/// `deliverOn(_:)` of `Queue(eventLoop:)`.
public func deliverOn<T: Sendable, E: Sendable>(_ eventLoop: any EventLoop) -> (Signal<T, E>) -> Signal<T, E> {
    deliverOn(Queue(eventLoop: eventLoop))
}

/// Delivers every event on `eventLoop`, keeping at most `buffer`'s limit of
/// values waiting for it: the `deliverOn(_:buffer:)` of `Queue(eventLoop:)`
/// (one task on the loop per burst of values, inline when already on the
/// loop with nothing waiting; see ``SignalKit/SignalBuffer``).
///
/// `.blocking` stops the process with a message when a value is sent into a
/// full buffer from the loop itself (the loop could never empty it).
///
/// On an `EmbeddedEventLoop` it is always inline: that loop reports being
/// on the loop from any thread (`inEventLoop` is always true), so each value
/// is delivered on the sending thread before the send returns, none waits,
/// and no policy ever drops one (a value sent from inside a delivery waits
/// for it to return, as on any loop). Test a policy's drops on
/// `NIOAsyncTestingEventLoop`, on a real loop kept busy, or with
/// SignalKitTesting's `VirtualTimeScheduler`.
public func deliverOn<T: Sendable, E: Sendable>(
    _ eventLoop: any EventLoop,
    buffer: SignalBuffer<E>
) -> (Signal<T, E>) -> Signal<T, E> {
    deliverOn(Queue(eventLoop: eventLoop), buffer: buffer)
}

/// Subscribes on `eventLoop` (inline when already on it): the `runOn(_:)`
/// of `Queue(eventLoop:)`.
public func runOn<T, E>(_ eventLoop: any EventLoop) -> (Signal<T, E>) -> Signal<T, E> {
    runOn(Queue(eventLoop: eventLoop))
}

/// The work of one `performSync` call, handed to the loop.
final class _SyncWork: Sendable {
    // Unsafe: set before the task is submitted, called on the loop while the
    // submitting thread waits, cleared by that thread after the wait.
    private nonisolated(unsafe) var work: (() -> Void)?

    init(_ work: @escaping () -> Void) {
        self.work = work
    }

    func run() {
        work?()
    }

    func clear() {
        work = nil
    }
}

#endif  // NIO
