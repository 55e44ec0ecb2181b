// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Timing: operators and signals driven by a clock.
//
// This file: SwiftSignalKit's `debug_measureTimeToFirstEvent`, a timing probe.

// MARK: - debug_measureTimeToFirstEvent

/// Passes everything through and prints how long the first value took.
///
/// On the first value delivered by any subscription of the returned signal,
/// prints `measureTimeToFirstEvent(<label>: <milliseconds> ms` (SwiftSignalKit's
/// exact text, with no closing parenthesis), the time measured on a monotonic
/// clock from that subscription's start.
///
/// Marble: `"a-b-|"` → `"a-b-|"`
///
/// - Parameters:
///   - label: printed with the time.
/// - Returns: a function from the source to the same signal, measured.
/// - Threading: prints on the thread of the first value.
/// - Termination: forwarded unchanged.
/// - Disposal: disposes the source.
public func debug_measureTimeToFirstEvent<T, E>(label: String) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        let probe = _FirstEventProbe(label: label)
        return Signal { subscriber in
            signal._start(_MeasureFirstEventSink(downstream: subscriber, probe: probe, startTime: _monotonicSeconds()))
        }._derived("debug_measureTimeToFirstEvent", from: signal, arguments: label)
    }
}

/// The flag shared by every subscription of one measured signal.
final class _FirstEventProbe: Sendable {
    let label: String
    private let waiting = Synchronization.Atomic<Bool>(true)

    init(label: String) {
        self.label = label
    }

    /// Prints the time since `startTime` the first time it is called.
    func valueArrived(startTime: Double) {
        guard waiting.load(ordering: .relaxed), waiting.exchange(false, ordering: .acquiringAndReleasing) else { return }
        let milliseconds = (_monotonicSeconds() - startTime) * 1000.0
        print("measureTimeToFirstEvent(\(label): \(milliseconds) ms")
    }
}

struct _MeasureFirstEventSink<T, E>: _PassThroughSink {
    typealias Input = T
    typealias Output = T
    typealias Failure = E
    let downstream: Subscriber<T, E>
    let probe: _FirstEventProbe
    let startTime: Double

    func putNext(_ value: T, from _: _SubscriptionBase) {
        probe.valueArrived(startTime: startTime)
        downstream.putNext(value)
    }
}
