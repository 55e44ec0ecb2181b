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
// This file: ReactiveCocoa's `timeout:onScheduler:`, here `failAfterTimeout`
// (SwiftSignalKit's `timeout(_:queue:alternate:)` switches to another signal).

// MARK: - failAfterTimeout

/// Fails with `error` unless the signal terminates within `timeout` seconds
/// of being subscribed (RAC's `timeout:onScheduler:`).
///
/// Marble (timeout 3): `"a-b-|"` → `"a-b-|"`; `"a-b-c-d-|"` → `"a-b-#error"`
/// (values do not restart the clock)
///
/// Not SwiftSignalKit's `timeout(_:queue:alternate:)`, which waits only for
/// the first event and then switches to another signal: this one bounds the
/// whole signal and fails.
///
/// - Parameters:
///   - timeout: seconds the signal has to complete or fail.
///   - queue: where the timer runs and the timeout error is sent.
///   - error: the error sent when the time is up.
/// - Returns: a function from a signal to the time-bounded signal.
///
/// - Threading: the signal's events stay on its thread; the timeout error is
///   sent on `queue`. Never two at once.
/// - Termination: the signal's own error or completion, or `error` when the
///   time is up (the signal is then disposed).
/// - Disposal: termination or disposal cancels the timer, then disposes the
///   signal.
public func failAfterTimeout<T, E: Sendable>(_ timeout: Double, queue: Queue, error: E) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let delivery = _SerialDelivery(downstream: subscriber)
            let timer = queue.cancellableAfter(timeout) {
                delivery.putError(error)
            }
            let source = signal._start(_ForwardSink(downstream: delivery))
            return ActionDisposable {
                timer.dispose()
                source.dispose()
            }
        }._derived("failAfterTimeout", from: signal, arguments: "\(timeout)")
    }
}
