// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The state of a ``Command`` and the delivery of its four signals.
///
/// State changes (executions starting and ending, the enabled input, the
/// concurrency setting, the command's release) are made under the lock and
/// turned into events in `pending`, in the order they happen. Events are
/// delivered outside the lock by one thread at a time, the *drainer*: the
/// thread that made a change when nobody was delivering. A change made while
/// another thread delivers is delivered by that thread, after the event it
/// is delivering; a change made from inside a delivery (a callback that
/// executes the command again) is delivered after that delivery finishes,
/// by the same thread. So every subscriber sees the command's events one at
/// a time and in order, and `executing` / `enabled` end on the real state.
///
/// A state subscription (`executing`, `enabled`) gets the last delivered
/// value at once: inside `start` when nobody else is delivering (the
/// subscribing thread then acts as the drainer for that moment) or when the
/// subscribing thread is the drainer; otherwise the drainer hands it the
/// value, in order with the other events.
///
/// Each step takes the lock once: it changes the state and, for the drainer,
/// takes the next event off `pending` as a `Delivery` (the bag reads begun
/// under the lock), which is performed, and released, after unlocking.
///
/// The core outlives the ``Command`` while executions run (they report their
/// end to it); the command's signals refer to the core, never to the
/// command.
///
/// `@unchecked Sendable`: every `var` is in `state`, guarded by
/// `_LockedState`; the bags are CSignalRuntime's lock-free bags, walked only
/// by the drainer.
final class _CommandCore<Output, E>: @unchecked Sendable {
    enum StateKind {
        case executing
        case enabled
    }

    private enum Event {
        case executing(Bool)
        case enabled(Bool)
        case execution(Signal<Output, NoError>)
        case error(E)
        case subscribeState(StateKind, Subscriber<Bool, NoError>)
        /// The command was released: `executionSignals` and `enabled` end.
        case finishExecutionSignalsAndEnabled
        /// Released and no execution left: `executing` and `errors` end.
        case finishExecutingAndErrors
    }

    /// An event taken off `pending` by the drainer, with the bag reads begun
    /// under the lock; delivered after unlocking.
    private enum Delivery {
        case executing(Bool, _BagRead)
        case enabled(Bool, _BagRead)
        case execution(Signal<Output, NoError>, _BagRead)
        case error(E, _BagRead)
        /// A state subscriber added to `bag` (`key` nil: the signal has
        /// finished): it gets `current`, then, if `finished`, the completion.
        case stateSubscriber(
            Subscriber<Bool, NoError>, bag: _SubscriberBag<Subscriber<Bool, NoError>>, key: UInt64?,
            current: Bool, finished: Bool)
        case finishExecutionSignalsAndEnabled(executions: _BagRead, enabled: _BagRead)
        case finishExecutingAndErrors(executing: _BagRead, errors: _BagRead)
    }

    private struct State {
        // The state.
        var enabledInput = true
        var allowsConcurrent: Bool
        var running = 0
        var released = false
        /// The last `executing` / `enabled` values queued (for
        /// de-duplication).
        var queuedExecuting = false
        var queuedEnabled = true
        var executingAndErrorsFinishQueued = false

        // The delivery.
        var pending: [Event] = []
        var draining = false
        var drainer: pthread_t?
        /// The last `executing` / `enabled` values delivered (replayed to
        /// new subscribers).
        var deliveredExecuting = false
        var deliveredEnabled = true
        var executionSignalsAndEnabledFinished = false
        var executingAndErrorsFinished = false

        var isEnabled: Bool {
            enabledInput && (allowsConcurrent || running == 0)
        }

        /// Queues `executing` and `enabled` if they changed since last
        /// queued.
        mutating func queueStateChanges() {
            let executing = running > 0
            if executing != queuedExecuting && !executingAndErrorsFinishQueued {
                queuedExecuting = executing
                pending.append(.executing(executing))
            }
            let enabled = isEnabled
            if enabled != queuedEnabled && !released {
                queuedEnabled = enabled
                pending.append(.enabled(enabled))
            }
        }

        mutating func queueFinishIfIdle() {
            guard released, running == 0, !executingAndErrorsFinishQueued else { return }
            executingAndErrorsFinishQueued = true
            pending.append(.finishExecutingAndErrors)
        }
    }

    private let state: _LockedState<State>

    private let executionSubscribers = _SubscriberBag<Subscriber<Signal<Output, NoError>, NoError>>()
    private let errorSubscribers = _SubscriberBag<Subscriber<E, NoError>>()
    private let executingSubscribers = _SubscriberBag<Subscriber<Bool, NoError>>()
    private let enabledSubscribers = _SubscriberBag<Subscriber<Bool, NoError>>()

    init(allowsConcurrentExecution: Bool) {
        state = _LockedState(State(allowsConcurrent: allowsConcurrentExecution))
    }

    deinit {
        // Each subscription's entry refers to its bag: empty the bags, or the
        // subscriptions would keep each other alive through them.
        for bag in [executionSubscribers, errorSubscribers, executingSubscribers, enabledSubscribers] as [_SubscriberBagBase] {
            bag.close()
            bag.removeAll()
        }
    }

    // MARK: State

    var isEnabled: Bool {
        state.withLock { $0.isEnabled }
    }

    var isExecuting: Bool {
        state.withLock { $0.running > 0 }
    }

    var allowsConcurrentExecution: Bool {
        get { state.withLock { $0.allowsConcurrent } }
        set {
            changeAndDrain { state in
                state.allowsConcurrent = newValue
                state.queueStateChanges()
            }
        }
    }

    func setEnabledInput(_ value: Bool) {
        changeAndDrain { state in
            state.enabledInput = value
            state.queueStateChanges()
        }
    }

    /// Starts an execution if the command is enabled; otherwise returns why
    /// not. The state events are queued; they are delivered with the
    /// execution (`publish`).
    func claim() -> CommandDisabledReason? {
        state.withLock { state in
            if !state.enabledInput { return .enabledSignalIsFalse }
            if !state.allowsConcurrent && state.running > 0 { return .alreadyExecuting }
            state.running += 1
            state.queueStateChanges()
            return nil
        }
    }

    /// Sends a claimed execution on `executionSignals`.
    func publish(_ execution: Signal<Output, NoError>) {
        changeAndDrain { state in
            if !state.released { state.pending.append(.execution(execution)) }
        }
    }

    /// An execution terminated (`error` is nil for a completion).
    func executionEnded(error: E?) {
        changeAndDrain { state in
            state.running -= 1
            if let error { state.pending.append(.error(error)) }
            state.queueStateChanges()
            state.queueFinishIfIdle()
        }
    }

    /// The command was released.
    func release() {
        changeAndDrain { state in
            state.released = true
            state.pending.append(.finishExecutionSignalsAndEnabled)
            state.queueFinishIfIdle()
        }
    }

    // MARK: Subscriptions

    func subscribeExecutions(_ subscriber: Subscriber<Signal<Output, NoError>, NoError>) -> any Disposable {
        subscribeHot(subscriber, bag: executionSubscribers) { $0.executionSignalsAndEnabledFinished }
    }

    func subscribeErrors(_ subscriber: Subscriber<E, NoError>) -> any Disposable {
        subscribeHot(subscriber, bag: errorSubscribers) { $0.executingAndErrorsFinished }
    }

    /// A hot subscription: later events only; completes at once when that
    /// signal has finished.
    private func subscribeHot<T>(
        _ subscriber: Subscriber<T, NoError>,
        bag: _SubscriberBag<Subscriber<T, NoError>>,
        finished: (State) -> Bool
    ) -> any Disposable {
        // The bag is closed when the signal finishes, under the lock.
        let key = state.withLock { finished($0) ? nil : bag.insert(subscriber) }
        if let key {
            subscriber.registerSourceEntry(bag: bag, key: key, owner: nil)
        } else {
            subscriber.putCompletion()
        }
        return EmptyDisposable
    }

    /// A state subscription: the current (last delivered) value, then the
    /// changes; after the end, the last value and the completion.
    func subscribeState(_ kind: StateKind, _ subscriber: Subscriber<Bool, NoError>) -> any Disposable {
        let added = state.withLock { state -> (delivery: Delivery, becomesDrainer: Bool)? in
            if state.draining, let drainer = state.drainer, pthread_equal(drainer, pthread_self()) == 0 {
                // Another thread is delivering: it hands the subscriber its
                // value, in order with the events it delivers.
                state.pending.append(.subscribeState(kind, subscriber))
                return nil
            }
            // Nobody delivers (act as the drainer meanwhile), or this thread
            // is the drainer (a subscription from inside a callback).
            let becomesDrainer = !state.draining
            if becomesDrainer {
                state.draining = true
                state.drainer = pthread_self()
            }
            return (addStateSubscriber(kind, subscriber, &state), becomesDrainer)
        }
        guard let (delivery, becomesDrainer) = added else { return EmptyDisposable }
        perform(delivery)
        if becomesDrainer {
            drain()
        }
        return EmptyDisposable
    }

    /// Adds a state subscriber (under the lock, by the drainer); the
    /// returned delivery gives it the last delivered value.
    private func addStateSubscriber(
        _ kind: StateKind, _ subscriber: Subscriber<Bool, NoError>, _ state: inout State
    ) -> Delivery {
        let bag: _SubscriberBag<Subscriber<Bool, NoError>>
        let current: Bool
        let finished: Bool
        switch kind {
        case .executing:
            (bag, current, finished) = (executingSubscribers, state.deliveredExecuting, state.executingAndErrorsFinished)
        case .enabled:
            (bag, current, finished) = (enabledSubscribers, state.deliveredEnabled, state.executionSignalsAndEnabledFinished)
        }
        let key = finished ? nil : bag.insert(subscriber)
        return .stateSubscriber(subscriber, bag: bag, key: key, current: current, finished: finished)
    }

    // MARK: Delivery

    /// Applies `change` under the lock; then delivers the pending events,
    /// unless another delivery is in progress (which will deliver them).
    private func changeAndDrain(_ change: (inout State) -> Void) {
        let first = state.withLock { state -> Delivery? in
            change(&state)
            if state.draining { return nil }
            state.draining = true
            state.drainer = pthread_self()
            return takeFirst(&state)
        }
        guard let first else { return }
        perform(first)
        drain()
    }

    /// The drain loop. The caller is the drainer; the lock is not held.
    private func drain() {
        while let delivery = state.withLock({ takeFirst(&$0) }) {
            perform(delivery)
        }
    }

    /// Under the lock, by the drainer: takes the first pending event as a
    /// delivery, or, when none is left, ends the drain (returns nil).
    private func takeFirst(_ state: inout State) -> Delivery? {
        guard !state.pending.isEmpty else {
            state.draining = false
            state.drainer = nil
            return nil
        }
        switch state.pending.removeFirst() {
        case .executing(let value):
            state.deliveredExecuting = value
            return .executing(value, executingSubscribers.beginRead())
        case .enabled(let value):
            state.deliveredEnabled = value
            return .enabled(value, enabledSubscribers.beginRead())
        case .execution(let execution):
            return .execution(execution, executionSubscribers.beginRead())
        case .error(let error):
            return .error(error, errorSubscribers.beginRead())
        case .subscribeState(let kind, let subscriber):
            return addStateSubscriber(kind, subscriber, &state)
        case .finishExecutionSignalsAndEnabled:
            state.executionSignalsAndEnabledFinished = true
            executionSubscribers.close()
            enabledSubscribers.close()
            return .finishExecutionSignalsAndEnabled(
                executions: executionSubscribers.beginRead(), enabled: enabledSubscribers.beginRead())
        case .finishExecutingAndErrors:
            state.executingAndErrorsFinished = true
            executingSubscribers.close()
            errorSubscribers.close()
            return .finishExecutingAndErrors(
                executing: executingSubscribers.beginRead(), errors: errorSubscribers.beginRead())
        }
    }

    /// Delivers a taken event, without the lock. The delivery (and what it
    /// holds) is released when this returns.
    private func perform(_ delivery: consuming Delivery) {
        switch consume delivery {
        case .executing(let value, var read):
            executingSubscribers.finishRead(&read) { $0.putNext(value) }
        case .enabled(let value, var read):
            enabledSubscribers.finishRead(&read) { $0.putNext(value) }
        case .execution(let execution, var read):
            executionSubscribers.finishRead(&read) { $0.putNext(execution) }
        case .error(let error, var read):
            errorSubscribers.finishRead(&read) { $0.putNext(error) }
        case .stateSubscriber(let subscriber, let bag, let key, let current, let finished):
            if let key {
                subscriber.registerSourceEntry(bag: bag, key: key, owner: nil)
            }
            subscriber.putNext(current)
            if finished {
                subscriber.putCompletion()
            }
        case .finishExecutionSignalsAndEnabled(var executions, var enabled):
            executionSubscribers.finishRead(&executions) { $0.putCompletion() }
            enabledSubscribers.finishRead(&enabled) { $0.putCompletion() }
        case .finishExecutingAndErrors(var executing, var errors):
            executingSubscribers.finishRead(&executing) { $0.putCompletion() }
            errorSubscribers.finishRead(&errors) { $0.putCompletion() }
        }
    }
}

/// The command's own subscription to an execution: reports its end.
struct _CommandExecutionSink<Output, E>: _InlineSink {
    typealias Input = Output
    typealias Failure = E

    let core: _CommandCore<Output, E>

    func putNext(_ value: Output, from _: _SubscriptionBase) {}
    func putError(_ error: E) { core.executionEnded(error: error) }
    func putCompletion() { core.executionEnded(error: nil) }
}

/// Turns an error into a completion (RAC's `catchTo:[RACSignal empty]`): how
/// `executionSignals` hands out executions.
struct _CompleteOnErrorSink<T, E>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let downstream: Subscriber<T, NoError>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    func putNext(_ value: T, from _: _SubscriptionBase) { downstream.putNext(value) }
    func putError(_ error: E) { downstream.putCompletion() }
    func putCompletion() { downstream.putCompletion() }
}
