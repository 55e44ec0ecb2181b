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
/// concurrency setting, the command's release) are made under `mutex` and
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
/// The core outlives the ``Command`` while executions run (they report their
/// end to it); the command's signals refer to the core, never to the
/// command.
///
/// `@unchecked Sendable`: every `var` is guarded by `mutex`; the bags are
/// CSignalRuntime's lock-free bags, walked only by the drainer.
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

    private let mutex = _Mutex()

    // The state.
    private var enabledInput = true
    private var allowsConcurrent: Bool
    private var running = 0
    private var released = false
    /// The last `executing` / `enabled` values queued (for de-duplication).
    private var queuedExecuting = false
    private var queuedEnabled = true
    private var executingAndErrorsFinishQueued = false

    // The delivery.
    private var pending: [Event] = []
    private var draining = false
    private var drainer: pthread_t?
    /// The last `executing` / `enabled` values delivered (replayed to new
    /// subscribers).
    private var deliveredExecuting = false
    private var deliveredEnabled = true
    private var executionSignalsAndEnabledFinished = false
    private var executingAndErrorsFinished = false

    private let executionSubscribers = _SubscriberBag<Subscriber<Signal<Output, NoError>, NoError>>()
    private let errorSubscribers = _SubscriberBag<Subscriber<E, NoError>>()
    private let executingSubscribers = _SubscriberBag<Subscriber<Bool, NoError>>()
    private let enabledSubscribers = _SubscriberBag<Subscriber<Bool, NoError>>()

    init(allowsConcurrentExecution: Bool) {
        allowsConcurrent = allowsConcurrentExecution
    }

    deinit {
        // Each subscription's entry refers to its bag: empty the bags, or the
        // subscriptions would keep each other alive through them.
        for bag in [executionSubscribers, errorSubscribers, executingSubscribers, enabledSubscribers] as [_SubscriberBagBase] {
            bag.close()
            bag.removeAll()
        }
        mutex.destroy()
    }

    // MARK: State

    private var isEnabledLocked: Bool {
        enabledInput && (allowsConcurrent || running == 0)
    }

    var isEnabled: Bool {
        mutex.withLock { isEnabledLocked }
    }

    var isExecuting: Bool {
        mutex.withLock { running > 0 }
    }

    var allowsConcurrentExecution: Bool {
        get { mutex.withLock { allowsConcurrent } }
        set {
            mutex.lock()
            allowsConcurrent = newValue
            queueStateChangesLocked()
            unlockAndDrain()
        }
    }

    func setEnabledInput(_ value: Bool) {
        mutex.lock()
        enabledInput = value
        queueStateChangesLocked()
        unlockAndDrain()
    }

    /// Queues `executing` and `enabled` if they changed since last queued.
    private func queueStateChangesLocked() {
        let executing = running > 0
        if executing != queuedExecuting && !executingAndErrorsFinishQueued {
            queuedExecuting = executing
            pending.append(.executing(executing))
        }
        let enabled = isEnabledLocked
        if enabled != queuedEnabled && !released {
            queuedEnabled = enabled
            pending.append(.enabled(enabled))
        }
    }

    /// Starts an execution if the command is enabled; otherwise returns why
    /// not. The state events are queued; they are delivered with the
    /// execution (`publish`).
    func claim() -> CommandDisabledReason? {
        mutex.lock()
        defer { mutex.unlock() }
        if !enabledInput { return .enabledSignalIsFalse }
        if !allowsConcurrent && running > 0 { return .alreadyExecuting }
        running += 1
        queueStateChangesLocked()
        return nil
    }

    /// Sends a claimed execution on `executionSignals`.
    func publish(_ execution: Signal<Output, NoError>) {
        mutex.lock()
        if !released { pending.append(.execution(execution)) }
        unlockAndDrain()
    }

    /// An execution terminated (`error` is nil for a completion).
    func executionEnded(error: E?) {
        mutex.lock()
        running -= 1
        if let error { pending.append(.error(error)) }
        queueStateChangesLocked()
        queueFinishIfIdleLocked()
        unlockAndDrain()
    }

    /// The command was released.
    func release() {
        mutex.lock()
        released = true
        pending.append(.finishExecutionSignalsAndEnabled)
        queueFinishIfIdleLocked()
        unlockAndDrain()
    }

    private func queueFinishIfIdleLocked() {
        guard released, running == 0, !executingAndErrorsFinishQueued else { return }
        executingAndErrorsFinishQueued = true
        pending.append(.finishExecutingAndErrors)
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
        finished: (_CommandCore) -> Bool
    ) -> any Disposable {
        mutex.lock()
        // The bag is closed when the signal finishes, under the lock.
        let key = finished(self) ? nil : bag.insert(subscriber)
        mutex.unlock()
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
        mutex.lock()
        if draining, let drainer, pthread_equal(drainer, pthread_self()) == 0 {
            // Another thread is delivering: it hands the subscriber its
            // value, in order with the events it delivers.
            pending.append(.subscribeState(kind, subscriber))
            mutex.unlock()
            return EmptyDisposable
        }
        // Nobody delivers (act as the drainer meanwhile), or this thread is
        // the drainer (a subscription from inside a callback).
        let becomesDrainer = !draining
        if becomesDrainer {
            draining = true
            drainer = pthread_self()
        }
        addStateSubscriberLocked(kind, subscriber)
        if becomesDrainer {
            mutex.lock()
            drainLocked()
        }
        return EmptyDisposable
    }

    /// Adds a state subscriber and gives it the last delivered value. Called
    /// by the drainer with `mutex` held; releases it.
    private func addStateSubscriberLocked(_ kind: StateKind, _ subscriber: Subscriber<Bool, NoError>) {
        let bag: _SubscriberBag<Subscriber<Bool, NoError>>
        let current: Bool
        let finished: Bool
        switch kind {
        case .executing:
            (bag, current, finished) = (executingSubscribers, deliveredExecuting, executingAndErrorsFinished)
        case .enabled:
            (bag, current, finished) = (enabledSubscribers, deliveredEnabled, executionSignalsAndEnabledFinished)
        }
        let key = finished ? nil : bag.insert(subscriber)
        mutex.unlock()
        if let key {
            subscriber.registerSourceEntry(bag: bag, key: key, owner: nil)
        }
        subscriber.putNext(current)
        if finished {
            subscriber.putCompletion()
        }
    }

    // MARK: Delivery

    /// Call with `mutex` held; releases it. Delivers the pending events
    /// unless another delivery is in progress (which will deliver them).
    private func unlockAndDrain() {
        if draining {
            mutex.unlock()
            return
        }
        draining = true
        drainer = pthread_self()
        drainLocked()
    }

    /// The drain loop. The caller is the drainer and holds `mutex`; releases
    /// it.
    private func drainLocked() {
        while !pending.isEmpty {
            deliverFirstLocked()
            mutex.lock()
        }
        draining = false
        drainer = nil
        mutex.unlock()
    }

    /// Delivers the first pending event. Called with `mutex` held; releases
    /// it before calling out. The event (and what it holds) is released when
    /// this returns, outside the lock.
    private func deliverFirstLocked() {
        let event = pending.removeFirst()
        switch event {
        case .executing(let value):
            deliveredExecuting = value
            var read = executingSubscribers.beginRead()
            mutex.unlock()
            executingSubscribers.finishRead(&read) { $0.putNext(value) }
        case .enabled(let value):
            deliveredEnabled = value
            var read = enabledSubscribers.beginRead()
            mutex.unlock()
            enabledSubscribers.finishRead(&read) { $0.putNext(value) }
        case .execution(let execution):
            var read = executionSubscribers.beginRead()
            mutex.unlock()
            executionSubscribers.finishRead(&read) { $0.putNext(execution) }
        case .error(let error):
            var read = errorSubscribers.beginRead()
            mutex.unlock()
            errorSubscribers.finishRead(&read) { $0.putNext(error) }
        case .subscribeState(let kind, let subscriber):
            addStateSubscriberLocked(kind, subscriber)
        case .finishExecutionSignalsAndEnabled:
            executionSignalsAndEnabledFinished = true
            executionSubscribers.close()
            enabledSubscribers.close()
            var executions = executionSubscribers.beginRead()
            var enabled = enabledSubscribers.beginRead()
            mutex.unlock()
            executionSubscribers.finishRead(&executions) { $0.putCompletion() }
            enabledSubscribers.finishRead(&enabled) { $0.putCompletion() }
        case .finishExecutingAndErrors:
            executingAndErrorsFinished = true
            executingSubscribers.close()
            errorSubscribers.close()
            var executing = executingSubscribers.beginRead()
            var errors = errorSubscribers.beginRead()
            mutex.unlock()
            executingSubscribers.finishRead(&executing) { $0.putCompletion() }
            errorSubscribers.finishRead(&errors) { $0.putCompletion() }
        }
    }
}

/// The command's own subscription to an execution: reports its end.
final class _CommandExecutionSink<Output, E>: _Sink<Output, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable; the core is thread-safe.
    let core: _CommandCore<Output, E>

    init(core: _CommandCore<Output, E>) {
        self.core = core
    }

    override func putNext(_ value: Output) {}
    override func putError(_ error: E) { core.executionEnded(error: error) }
    override func putCompletion() { core.executionEnded(error: nil) }
}

/// Turns an error into a completion (RAC's `catchTo:[RACSignal empty]`): how
/// `executionSignals` hands out executions.
final class _CompleteOnErrorSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable; called serially by the source.
    let downstream: Subscriber<T, NoError>
    override var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    init(downstream: Subscriber<T, NoError>) {
        self.downstream = downstream
    }

    override func putNext(_ value: T) { downstream.putNext(value) }
    override func putError(_ error: E) { downstream.putCompletion() }
    override func putCompletion() { downstream.putCompletion() }
}
