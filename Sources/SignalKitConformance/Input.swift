// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The kit's input signals: hot sources that record every subscription a
// subject makes to them (where, when and in which context it was made, the
// values it received, how it ended, how many times its disposable was
// disposed) and that let go of their subscribers when disposed, when they
// end one, or when the run is over.

import SignalKit

/// One subscription a subject made to an input.
///
/// `@unchecked Sendable`: the mutable properties are touched only inside
/// the owning input's `state` lock.
final class _InputSubscription: @unchecked Sendable {
    enum End {
        case completed
        case failed
        /// Disposed before the kit ended it.
        case disposed
    }

    let input: Int
    /// The order of the subscription among the kit's actions and callbacks.
    let order: Int
    let context: String?
    let onExecutor: Bool
    var subscriber: Subscriber<Int, ConformanceError>?
    var end: End?
    var disposals = 0
    /// The values sent to it while it was live, in order.
    var received: [Int] = []

    init(input: Int, order: Int, context: String?, onExecutor: Bool) {
        self.input = input
        self.order = order
        self.context = context
        self.onExecutor = onExecutor
    }

    /// What the checks read, copied under the input's lock.
    struct Record {
        let order: Int
        let context: String?
        let onExecutor: Bool
        let end: End?
        let disposals: Int
        let received: [Int]
    }

    var record: Record {
        Record(order: order, context: context, onExecutor: onExecutor, end: end, disposals: disposals, received: received)
    }
}

/// A hot input signal of the kit.
///
/// `@unchecked Sendable`: `subscriptions` and every subscription's mutable
/// state are touched only inside `state`; `sendLock` (recursive) makes the
/// kit's sends to one input serial, as a source must call its subscribers,
/// while letting a callback send to the same input again.
final class _Input: @unchecked Sendable {
    let index: Int
    private let clock: _Clock
    private let isOnExecutor: @Sendable () -> Bool
    private let sendLock = _Lock(recursive: true)
    private let state = _Lock()
    private var subscriptions: [_InputSubscription] = []
    private var onFirstSubscription: (@Sendable (Subscriber<Int, ConformanceError>, _InputSubscription) -> Void)?

    init(index: Int, clock: _Clock, isOnExecutor: @escaping @Sendable () -> Bool) {
        self.index = index
        self.clock = clock
        self.isOnExecutor = isOnExecutor
    }

    /// The input's signal: every start is one recorded subscription.
    var signal: Signal<Int, ConformanceError> {
        Signal { [self] subscriber in
            let subscription = _InputSubscription(
                input: index, order: clock.next(), context: _Trace.current, onExecutor: isOnExecutor())
            let first = state.withLock { () -> (@Sendable (Subscriber<Int, ConformanceError>, _InputSubscription) -> Void)? in
                subscription.subscriber = subscriber
                subscriptions.append(subscription)
                guard subscriptions.count == 1 else { return nil }
                return onFirstSubscription
            }
            first?(subscriber, subscription)
            return ActionDisposable { [self] in disposed(subscription) }
        }
    }

    /// Sends `values` to the first subscription, inside its generator (the
    /// synchronous-start scenario), and tells `sent` each value and the
    /// context it was sent in (the subscription's).
    func sendOnFirstSubscription(_ values: [Int], sent: @escaping @Sendable (Int, String?) -> Void) {
        state.withLock {
            onFirstSubscription = { [self] subscriber, subscription in
                for value in values {
                    sent(value, _Trace.current)
                    state.withLock { subscription.received.append(value) }
                    subscriber.putNext(value)
                }
            }
        }
    }

    /// Sends `value` to every live subscription.
    func send(_ value: Int) {
        sendLock.withLock {
            for subscription in liveSubscriptions() {
                let subscriber = state.withLock { () -> Subscriber<Int, ConformanceError>? in
                    guard subscription.end == nil, let subscriber = subscription.subscriber else { return nil }
                    subscription.received.append(value)
                    return subscriber
                }
                subscriber?.putNext(value)
            }
        }
    }

    /// Completes (or fails, with `error`) every live subscription.
    func end(with error: ConformanceError?) {
        sendLock.withLock {
            for subscription in liveSubscriptions() {
                let subscriber = state.withLock { () -> Subscriber<Int, ConformanceError>? in
                    guard subscription.end == nil else { return nil }
                    subscription.end = error == nil ? .completed : .failed
                    defer { subscription.subscriber = nil }
                    return subscription.subscriber
                }
                guard let subscriber else { continue }
                if let error {
                    subscriber.putError(error)
                } else {
                    subscriber.putCompletion()
                }
            }
        }
    }

    private func liveSubscriptions() -> [_InputSubscription] {
        state.withLock { subscriptions.filter { $0.end == nil } }
    }

    private func disposed(_ subscription: _InputSubscription) {
        let released = state.withLock { () -> Subscriber<Int, ConformanceError>? in
            subscription.disposals += 1
            if subscription.end == nil { subscription.end = .disposed }
            defer { subscription.subscriber = nil }
            return subscription.subscriber
        }
        // Released outside the lock: the subscription it ends may run code.
        _ = released
    }

    /// Lets go of every subscriber (as a source that ends), so that nothing
    /// the subject left subscribed stays live, and of the scenario's action.
    func releaseSubscribers() {
        let released = state.withLock { () -> ([Subscriber<Int, ConformanceError>], Any?) in
            defer {
                subscriptions.forEach { $0.subscriber = nil }
                onFirstSubscription = nil
            }
            return (subscriptions.compactMap(\.subscriber), onFirstSubscription)
        }
        _ = released
    }

    /// Whether a subscription is live (neither ended by the kit nor disposed).
    var hasLiveSubscription: Bool { state.withLock { subscriptions.contains { $0.end == nil } } }

    /// The subscriptions made so far, in order, for the checks.
    var snapshot: [_InputSubscription.Record] { state.withLock { subscriptions.map(\.record) } }
}
