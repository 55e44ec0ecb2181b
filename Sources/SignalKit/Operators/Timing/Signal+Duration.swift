// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// `Duration` overloads of every time-based operator, signal and scheduling
// call: `delay(.milliseconds(50), queue: queue)`. SwiftSignalKit's `Double`
// seconds stay the primary spelling; each overload converts its durations
// to seconds and calls it, so behaviour (and a `Queue(scheduler:)` virtual
// clock in tests) is exactly the seconds form's.

// MARK: - Operators

/// `delay(_:queue:)` with a `Duration`.
public func delay<T, E>(_ timeout: Duration, queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    delay(timeout.seconds, queue: queue)
}

/// `delay(_:queue:)` with a `Duration`, labelled `for:` as
/// ``throttle(for:queue:latest:)`` and ``debounce(for:queue:)`` are:
/// subscribes upstream on `queue` once `timeout` has passed.
///
/// SwiftSignalKit's `delay`, which delays the *subscription* (and so every
/// event, errors included). Not Combine's `delay(for:scheduler:)`, which
/// delays each event: that is ``delayEvents(for:queue:)``.
///
/// ```swift
/// let later = Signal<Int, NoError>.single(1) |> delay(for: .milliseconds(250), queue: Queue.mainQueue())
/// ```
///
/// - Threading, Termination, Disposal: as `delay(_:queue:)`.
public func delay<T, E>(for timeout: Duration, queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    delay(timeout.seconds, queue: queue)
}

/// `suspendAwareDelay(_:granularity:queue:)` with `Duration`s.
public func suspendAwareDelay<T, E>(
    _ timeout: Duration,
    granularity: Duration = .seconds(4),
    queue: Queue
) -> (Signal<T, E>) -> Signal<T, E> {
    suspendAwareDelay(timeout.seconds, granularity: granularity.seconds, queue: queue)
}

/// `timeout(_:queue:alternate:)` with a `Duration`.
public func timeout<T, E>(
    _ timeout: Duration,
    queue: Queue,
    alternate: Signal<T, E>
) -> (Signal<T, E>) -> Signal<T, E> {
    SignalKit.timeout(timeout.seconds, queue: queue, alternate: alternate)
}

/// `failAfterTimeout(_:queue:error:)` with a `Duration`.
public func failAfterTimeout<T, E: Sendable>(_ timeout: Duration, queue: Queue, error: E) -> (Signal<T, E>) -> Signal<T, E> {
    failAfterTimeout(timeout.seconds, queue: queue, error: error)
}

/// `delayEvents(_:queue:)` with a `Duration`.
public func delayEvents<T: Sendable, E: Sendable>(_ interval: Duration, queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    delayEvents(interval.seconds, queue: queue)
}

/// `delayEvents(_:queue:)` with a `Duration`, labelled `for:` as
/// ``throttle(for:queue:latest:)`` and ``debounce(for:queue:)`` are: every
/// value and the completion arrive on `queue` `interval` after upstream sent
/// them; an error is forwarded at once (ReactiveCocoa's `delay:`).
///
/// The nearest to Combine's `delay(for:scheduler:)`, which delays the
/// failure too. See ``delayEvents(for:queue:buffer:)`` to bound the values
/// waiting for their time.
///
/// ```swift
/// let echoed = Signal<Int, NoError>.single(1) |> delayEvents(for: .milliseconds(250), queue: Queue.mainQueue())
/// ```
///
/// - Threading, Termination, Disposal: as `delayEvents(_:queue:)`.
public func delayEvents<T: Sendable, E: Sendable>(for interval: Duration, queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    delayEvents(interval.seconds, queue: queue)
}

/// ReactiveCocoa's `throttle(_:queue:)` (a debounce) with a `Duration`; see
/// also ``throttle(for:queue:latest:)`` and ``debounce(for:queue:)``.
public func throttle<T: Sendable, E>(_ interval: Duration, queue: Queue) -> (Signal<T, E>) -> Signal<T, E> {
    throttle(interval.seconds, queue: queue)
}

/// `throttle(_:queue:valuesPassingTest:)` with a `Duration`.
public func throttle<T: Sendable, E>(
    _ interval: Duration,
    queue: Queue,
    valuesPassingTest: @escaping @Sendable (T) -> Bool
) -> (Signal<T, E>) -> Signal<T, E> {
    throttle(interval.seconds, queue: queue, valuesPassingTest: valuesPassingTest)
}

/// `bufferWithTime(_:queue:)` with a `Duration`.
public func bufferWithTime<T: Sendable, E>(_ interval: Duration, queue: Queue) -> (Signal<T, E>) -> Signal<[T], E> {
    bufferWithTime(interval.seconds, queue: queue)
}

/// `retry(_:maxDelay:onQueue:)` with `Duration`s.
public func retry<T, E>(
    _ delayIncrement: Duration,
    maxDelay: Duration,
    onQueue queue: Queue
) -> (Signal<T, E>) -> Signal<T, NoError> {
    retry(delayIncrement.seconds, maxDelay: maxDelay.seconds, onQueue: queue)
}

/// `retry(retryOnError:delayIncrement:maxDelay:maxRetries:onQueue:)` with
/// `Duration`s.
public func retry<T, E>(
    retryOnError: @escaping @Sendable (E) -> Bool,
    delayIncrement: Duration,
    maxDelay: Duration,
    maxRetries: Int?,
    onQueue queue: Queue
) -> (Signal<T, E>) -> Signal<T, E> {
    retry(
        retryOnError: retryOnError,
        delayIncrement: delayIncrement.seconds,
        maxDelay: maxDelay.seconds,
        maxRetries: maxRetries,
        onQueue: queue
    )
}

// MARK: - Signals

/// `interval(_:queue:leeway:)` with `Duration`s.
public func interval(_ interval: Duration, queue: Queue, leeway: Duration = .zero) -> Signal<Int, NoError> {
    SignalKit.interval(interval.seconds, queue: queue, leeway: leeway.seconds)
}

/// `timer(_:queue:)` with a `Duration`.
public func timer(_ delay: Duration, queue: Queue) -> Signal<Void, NoError> {
    timer(delay.seconds, queue: queue)
}

// MARK: - Scheduling

extension Queue {
    /// `after(_:_:)` with a `Duration`.
    public func after(_ delay: Duration, _ f: @escaping @Sendable () -> Void) {
        after(delay.seconds, f)
    }
}

extension Timer {
    /// `init(timeout:repeat:completion:queue:)` with a `Duration`.
    public convenience init(timeout: Duration, repeat: Bool, completion: @escaping @Sendable () -> Void, queue: Queue) {
        self.init(timeout: timeout.seconds, repeat: `repeat`, completion: { _ in completion() }, queue: queue)
    }

    /// A timer whose completion receives the timer, with a `Duration`.
    public convenience init(timeout: Duration, repeat: Bool, completion: @escaping @Sendable (Timer) -> Void, queue: Queue) {
        self.init(timeout: timeout.seconds, repeat: `repeat`, completion: completion, queue: queue)
    }
}
