// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import Synchronization

// Timing: operators and signals driven by a clock. Everything goes through
// `Queue` (`cancellableAfter`, `Timer`), so on a queue made with
// `Queue(scheduler:)` — `VirtualTimeScheduler.makeQueue()` in tests — the
// operators follow the scheduler's clock. Operators whose events come both
// from their input and from a timer feed the downstream through a
// `_SerialDelivery` (never two callbacks at once, in the order the operator
// decided them).
//
// This file: ReactiveCocoa's `interval` and `timer` signals.

// MARK: - interval, timer

/// A signal that sends 0, 1, 2, … on `queue`, one value every `interval`
/// seconds, starting `interval` seconds after it is subscribed; it never
/// completes (RAC's `+interval:onScheduler:withLeeway:`).
///
/// Marble (interval 1): `"-0-1-2-3-…"`
///
/// ReactiveCocoa sends the current date; SignalKit, which does not use
/// Foundation, sends the number of the tick (zero-based).
///
/// - Parameters:
///   - interval: seconds between ticks; must be positive.
///   - queue: where the timer runs and the values are sent.
///   - leeway: how late, in seconds, the system may fire a tick to coalesce
///     timers (Dispatch-backed queues only; ignored by `Queue(scheduler:)`
///     queues). Defaults to 0.
/// - Returns: a cold signal: each subscription has its own timer.
///
/// - Threading: values are sent on `queue`, one at a time.
/// - Termination: never completes, never fails.
/// - Disposal: stops the timer.
public func interval(_ interval: Double, queue: Queue, leeway: Double = 0) -> Signal<Int, NoError> {
    _signalKitRequire(interval > 0, "interval(_:queue:leeway:): the interval must be positive, got \(interval)")
    return Signal { subscriber in
        let ticks = Synchronization.Atomic<Int>(0)
        let tick: @Sendable () -> Void = {
            subscriber.putNext(ticks.wrappingAdd(1, ordering: .relaxed).oldValue)
        }
        if leeway > 0, queue.scheduler == nil {
            return _DispatchRepeatingTimer(interval: interval, leeway: leeway, queue: queue.queue, tick: tick)
        }
        let timer = Timer(timeout: interval, repeat: true, completion: tick, queue: queue)
        timer.start()
        return ActionDisposable { timer.invalidate() }
    }._combined("interval", inputs: [], arguments: "\(interval)")
}

/// A repeating Dispatch timer with a leeway. The handler does not retain
/// the timer: disposing (or releasing) it cancels the source.
///
/// `@unchecked Sendable`: `source` is immutable and a Dispatch source is
/// thread-safe (its `cancel` may be called from any thread); the handler runs
/// on the source's queue.
final class _DispatchRepeatingTimer: Disposable, @unchecked Sendable {
    private let source: any DispatchSourceTimer

    init(interval: Double, leeway: Double, queue: DispatchQueue, tick: @escaping @Sendable () -> Void) {
        source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(
            deadline: .now() + interval,
            repeating: interval,
            leeway: .nanoseconds(Int(leeway * 1_000_000_000))
        )
        // Each tick runs in the context of the code that started the timer.
        source.setEventHandler(handler: _inCurrentContext(tick))
        source.resume()
    }

    deinit {
        source.cancel()
    }

    func dispose() {
        source.cancel()
    }
}

/// A signal that sends `()` on `queue` after `delay` seconds, then
/// completes.
///
/// Added with ReactiveCocoa's timing signals (ReactiveCocoa 2 has no one-shot timer signal; compare `+interval:onScheduler:`).
///
/// Marble (delay 2): `"--(()|)"`
///
/// - Parameters:
///   - delay: seconds from the subscription to the value.
///   - queue: where the timer runs and the events are sent.
/// - Returns: a cold signal: each subscription has its own timer.
///
/// - Threading: the value and the completion are sent on `queue`.
/// - Termination: completes right after its one value.
/// - Disposal: cancels the timer if it has not fired.
public func timer(_ delay: Double, queue: Queue) -> Signal<Void, NoError> {
    Signal { subscriber in
        queue.cancellableAfter(delay) {
            subscriber.putNext(())
            subscriber.putCompletion()
        }
    }._combined("timer", inputs: [], arguments: "\(delay)")
}
