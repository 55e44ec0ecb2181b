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
