// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if Metrics
public import Metrics
public import SignalKit
import Synchronization

/// Counts a signal's events and times its first event, per subscription,
/// into swift-metrics (opt-in, per named signal).
///
/// Metrics, each with the dimension `("signal", label)` plus `dimensions`:
/// * counters `signalkit_subscriptions_total`, `signalkit_values_total`,
///   `signalkit_errors_total`, `signalkit_completions_total` and
///   `signalkit_disposals_total` (a subscription disposed before it
///   terminated);
/// * a timer `signalkit_time_to_first_event` (nanoseconds from subscribing
///   to the first event of any kind, once per subscription).
///
/// `factory` defaults to the bootstrapped `MetricsSystem.factory`.
///
/// The metric objects are created once, when the operator is applied; each
/// event then costs one counter increment (what that costs depends on the
/// metrics backend).
///
/// - Threading: as the source; counters are updated on the thread that
///   delivers the event, before forwarding it.
/// - Termination, disposal: unchanged.
public func metered<T, E>(
    _ label: String,
    dimensions: [(String, String)] = [],
    factory: any MetricsFactory = MetricsSystem.factory
) -> (Signal<T, E>) -> Signal<T, E> {
    let metrics = _SignalMetrics(label: label, dimensions: dimensions, factory: factory)
    return { signal in
        Signal { subscriber in
            metrics.subscriptions.increment()
            let subscription = _MeteredSubscription(metrics: metrics)
            let handle = signal.start(
                next: { value in
                    subscription.sawEvent()
                    metrics.values.increment()
                    subscriber.putNext(value)
                },
                error: { error in
                    subscription.sawEvent()
                    subscription.terminated()
                    metrics.errors.increment()
                    subscriber.putError(error)
                },
                completed: {
                    subscription.sawEvent()
                    subscription.terminated()
                    metrics.completions.increment()
                    subscriber.putCompletion()
                }
            )
            return ActionDisposable {
                handle.dispose()
                if subscription.disposedBeforeTerminating() { metrics.disposals.increment() }
            }
        }
    }
}

/// The metric objects of one `metered` operator.
final class _SignalMetrics: Sendable {
    let subscriptions: Counter
    let values: Counter
    let errors: Counter
    let completions: Counter
    let disposals: Counter
    let timeToFirstEvent: Metrics.Timer

    init(label: String, dimensions: [(String, String)], factory: any MetricsFactory) {
        let dimensions = [("signal", label)] + dimensions
        subscriptions = Counter(label: "signalkit_subscriptions_total", dimensions: dimensions, factory: factory)
        values = Counter(label: "signalkit_values_total", dimensions: dimensions, factory: factory)
        errors = Counter(label: "signalkit_errors_total", dimensions: dimensions, factory: factory)
        completions = Counter(label: "signalkit_completions_total", dimensions: dimensions, factory: factory)
        disposals = Counter(label: "signalkit_disposals_total", dimensions: dimensions, factory: factory)
        timeToFirstEvent = Metrics.Timer(label: "signalkit_time_to_first_event", dimensions: dimensions, factory: factory)
    }
}

/// One subscription's first-event and termination state.
final class _MeteredSubscription: Sendable {
    private let metrics: _SignalMetrics
    private let start = ContinuousClock.now
    private let sawFirstEvent = Synchronization.Atomic<Bool>(false)
    private let ended = Synchronization.Atomic<Bool>(false)

    init(metrics: _SignalMetrics) {
        self.metrics = metrics
    }

    func sawEvent() {
        guard !sawFirstEvent.load(ordering: .relaxed), !sawFirstEvent.exchange(true, ordering: .relaxed) else { return }
        metrics.timeToFirstEvent.record(duration: ContinuousClock.now - start)
    }

    func terminated() {
        ended.store(true, ordering: .relaxed)
    }

    /// Marks the subscription ended; whether it had not terminated before.
    func disposedBeforeTerminating() -> Bool {
        !ended.exchange(true, ordering: .relaxed)
    }
}

#endif  // Metrics
