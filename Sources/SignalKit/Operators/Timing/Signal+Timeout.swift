// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Timing: operators and signals driven by a clock. Everything goes through
// `Queue` and `Timer`, so on a queue made with `Queue(scheduler:)` (for example
// `VirtualTimeScheduler.makeQueue()`) the operators follow the scheduler's clock.
//
// This file: SwiftSignalKit's `timeout(_:queue:alternate:)` (switches to another
// signal when nothing arrives in time; ReactiveCocoa's `timeout:onScheduler:`
// is `failAfterTimeout`).

/// Switches to `alternate` if the signal sends nothing within `timeout`
/// seconds.
///
/// Marble (timeout 3): `"a-b-|"` → `"a-b-|"`; `"-----a-|"` with alternate
/// `"x-|"` → `"---x-|"`.
///
/// - Parameters:
///   - timeout: seconds to wait for the signal's first event.
///   - queue: where the timer runs and where `alternate` is subscribed.
///   - alternate: the signal that replaces this one when the timer fires.
/// - Returns: a signal that forwards the source's events, or, if the source
///   sends no event (value, error or completion) before the timer fires, the
///   events of `alternate`.
///
/// The source is subscribed first, then a one-shot `Timer` on `queue` is
/// started. Any source event invalidates the timer and is forwarded. When the
/// timer fires, `alternate` is subscribed on `queue` into the same
/// `MetaDisposable` as the source, which then disposes the source (so the
/// alternate is subscribed before the source is disposed). As in
/// SwiftSignalKit, a value the source sends synchronously while being
/// subscribed invalidates the timer before it is started, so the timer still
/// fires later (unless another event comes first); a synchronous error or
/// completion ends the whole subscription before the timer matters.
///
/// **Threading:** the source is subscribed on the subscribing thread; the
/// alternate on `queue`. Events are not re-dispatched.
///
/// **Termination:** the source's (or the alternate's) error and completion
/// are forwarded.
///
/// **Disposal:** the returned disposable is a `DisposableSet` of the timer's
/// invalidation and the `MetaDisposable` holding the current subscription,
/// disposed in that order.
public func timeout<T, E>(
    _ timeout: Double,
    queue: Queue,
    alternate: Signal<T, E>
) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let current = MetaDisposable()
            let target = _TimeoutTarget(subscriber)
            let timer = Timer(
                timeout: timeout,
                repeat: false,
                completion: {
                    guard let subscriber = target.takeForFiring() else { return }
                    current.set(alternate._start(_ForwardSink(downstream: subscriber)))
                },
                queue: queue
            )
            current.set(signal._start(_TimeoutSink(downstream: subscriber, timer: timer, target: target)))
            target.markArmed()
            timer.start()
            let disposables = DisposableSet()
            disposables.add(ActionDisposable { timer.invalidate() })
            disposables.add(current)
            return disposables
        }._derived("timeout", from: signal, arguments: "\(timeout)")
    }
}

/// The source's sink in `timeout`: every event stops the timer, then is
/// forwarded.
struct _TimeoutSink<T, E>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let downstream: Subscriber<T, E>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }
    let timer: Timer
    let target: _TimeoutTarget<T, E>

    @inline(__always)
    private func stopTimer() {
        timer.invalidate()
        target.sourceSentEvent()
    }

    func putNext(_ value: T, from _: _SubscriptionBase) {
        stopTimer()
        downstream.putNext(value)
    }

    func putError(_ error: E) {
        stopTimer()
        downstream.putError(error)
    }

    func putCompletion() {
        stopTimer()
        downstream.putCompletion()
    }
}

/// The downstream subscriber as the `timeout` timer's completion sees it.
///
/// The timer is held by the generator's disposable, so a completion that
/// captured the subscriber itself would keep the downstream subscription
/// alive through a reference cycle (subscription → its disposable → timer →
/// completion → subscriber) after the timer fired or was invalidated, even
/// once the source let go of its subscriber. Instead the subscriber is taken
/// out when the timer fires, and dropped when the source sends an event
/// after the timer was armed (the timer is then invalidated for good). An
/// event the source sends while being subscribed, before the timer is armed,
/// keeps it: the timer still fires then (SwiftSignalKit's behaviour).
///
/// `@unchecked Sendable`: `subscriber` and `armed` are guarded by
/// `_LockedState`.
final class _TimeoutTarget<T, E>: @unchecked Sendable {
    private struct State {
        var subscriber: Subscriber<T, E>?
        var armed = false
    }

    private let state: _LockedState<State>

    init(_ subscriber: Subscriber<T, E>) {
        state = _LockedState(State(subscriber: subscriber))
    }

    /// Called right before the timer is started.
    func markArmed() {
        state.withLock { $0.armed = true }
    }

    /// The subscriber, for the firing timer (nil if an event dropped it).
    func takeForFiring() -> Subscriber<T, E>? {
        state.withLock { $0.subscriber.take() }
    }

    func sourceSentEvent() {
        var dropped: Subscriber<T, E>?
        state.withLock { state in
            if state.armed { swap(&dropped, &state.subscriber) }
        }
        // Released here, outside the lock.
        dropped = nil
    }
}
