// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Combining: operators that combine the values of several signals into one value
// (`combineLatest`, `zip`, `sample`). Merging and concatenation are in Flattening.
//
// This file: ReactiveCocoa's `sample`.

// MARK: - sample

/// Each time `sampler` sends a value, sends this signal's latest value (if it
/// has sent one) (RAC's `sample:`).
///
/// Marble: `"-a---b-c---|"` sampled by `"--x-x---x-|"` → `"--a-a---c-|"`
///
/// The latest value is sent again at every tick, also when it did not
/// change; ticks before the first value send nothing.
///
/// - Parameters:
///   - sampler: the signal whose values trigger the samples; subscribed
///     after this signal.
/// - Returns: a function from a signal to the sampled signal.
///
/// - Threading: a sample is delivered on the sampler's thread, one event at
///   a time with the other input's terminal events (see `_SerialDelivery`),
///   in the context of the code that sent the sampled value (see
///   ``SignalContextPropagation``).
/// - Termination: completes when either signal completes; the first error of
///   either is forwarded.
/// - Disposal: termination or disposal disposes this signal's subscription,
///   then the sampler's. The latest value is released then.
public func sample<T: Sendable, U, E>(_ sampler: Signal<U, E>) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let state = _SampleState<T, E>(downstream: subscriber)
            let source = signal._start(_SampleSourceSink(state: state))
            let ticks = sampler._start(_SampleTickSink<U, T, E>(state: state))
            return ActionDisposable { [weak state] in  // weak: see `_WeakDisposable`
                source.dispose()
                ticks.dispose()
                state?.releaseLatest()
            }
        }._derived("sample", from: signal, arguments: sampler.description)
    }
}

/// `@unchecked Sendable`: `latest` is guarded by `_LockedState`.
final class _SampleState<T, E>: @unchecked Sendable {
    let delivery: _SerialDelivery<T, E>
    /// The latest value, with the context of the code that sent it.
    private let latest = _LockedState<_InContext<T>?>(nil)

    init(downstream: Subscriber<T, E>) {
        self.delivery = _SerialDelivery(downstream: downstream)
    }

    func store(_ value: T) {
        var previous: _InContext<T>? = _InContext(capturing: value)
        latest.withLock { swap(&$0, &previous) }
        // The replaced value is released here, outside the lock.
        withExtendedLifetime(previous) {}
    }

    func tick() {
        // Pushed under the lock: samples keep the order of the ticks.
        let mustDrain = latest.withLock { latest in
            latest.map { delivery.pushNext($0.value, .sender($0.context)) } ?? false
        }
        if mustDrain { delivery.drain() }
    }

    func releaseLatest() {
        var released: _InContext<T>?
        latest.withLock { swap(&$0, &released) }
        withExtendedLifetime(released) {}
    }
}

struct _SampleSourceSink<T, E>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let state: _SampleState<T, E>

    func putNext(_ value: T, from _: _SubscriptionBase) { state.store(value) }
    func putError(_ error: E) { state.delivery.putError(error) }
    func putCompletion() { state.delivery.putCompletion() }
}

struct _SampleTickSink<U, T, E>: _InlineSink {
    typealias Input = U
    typealias Failure = E

    let state: _SampleState<T, E>

    func putNext(_ value: U, from _: _SubscriptionBase) { state.tick() }
    func putError(_ error: E) { state.delivery.putError(error) }
    func putCompletion() { state.delivery.putCompletion() }
}
