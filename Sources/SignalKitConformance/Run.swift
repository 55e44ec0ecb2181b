// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// One run of a subject: a fresh subject over fresh inputs, the kit's
// actions on it (start, sends, terminal events, disposals, the virtual
// clock), and the checks of every rule on what was recorded. A scenario or
// a random schedule is a sequence of these actions.

import Dispatch
import SignalKit
import SignalKitTesting

/// A rule a run broke, with what happened.
struct _Finding: Sendable {
    let rule: String
    let message: String
}

/// The facts the kit's own actions leave for the checks.
struct _RunLog {
    /// The order at which `start` returned.
    var startReturned: Int?
    /// Each `dispose()` on the subscription: the order when it was called
    /// and when it returned, and its thread.
    var disposals: [(began: Int, order: Int, thread: UInt)] = []
    /// Every value sent (to an input or a source) with the context it was
    /// sent in, and the order of the send.
    var sends: [Int: (context: String?, order: Int)] = [:]
    /// The values sent to a source, in order.
    var sourceSends: [(order: Int, value: Int)] = []
    /// The contexts of the kit's terminal events and other actions that may
    /// cause an event.
    var actionContexts: Set<String> = ["start", "dispose"]
    /// Whether a value was sent in no context.
    var sentWithoutContext = false
    /// The order of the source's completion or failure.
    var sourceEnd: (order: Int, failed: Bool)?
    /// The values sent from inside a callback.
    var reentrantValues: Set<Int> = []
    /// Sends put off until the action whose callback asked for them returns.
    var deferredSends = 0
    /// Whether the kit acted from several threads at once (the order of
    /// its actions is then not the order they took effect in).
    var multiThreaded = false
}

/// One run.
///
/// `@unchecked Sendable`: the stored properties are immutable references,
/// and the mutable ones (`log`, `handle`) are `_Guarded`.
final class _Run: @unchecked Sendable {
    let subject: ConformanceSubject
    let options: ConformanceOptions
    /// The rules declared not kept (by identifier, with the reason).
    let excepted: [String: String]
    let clock: _Clock
    let scheduler: VirtualTimeScheduler
    let queue: Queue
    let recorder: _Recorder
    let inputs: [_Input]
    let instance: _Instance
    let log = _Guarded(_RunLog())
    /// The subscription's handle (nil before start and after release), and
    /// whether a disposal was asked for before start returned it.
    private let handle = _Guarded<(disposable: (any Disposable)?, disposeRequested: Bool)>((nil, false))
    /// Serialises a source's sends when its rule 3.1 is declared an exception.
    private let sourceSerial: _Lock?

    init(subject: ConformanceSubject, options: ConformanceOptions, excepted: [String: String]) {
        self.subject = subject
        self.options = options
        self.excepted = excepted
        let clock = _Clock()
        let scheduler = VirtualTimeScheduler()
        self.clock = clock
        self.scheduler = scheduler
        let queue = scheduler.makeQueue(name: "conformance")
        self.queue = queue
        let executor = subject.executor
        let isOnExecutor: @Sendable () -> Bool = { executor.isCurrent(queue) }
        recorder = _Recorder(clock: clock, isOnExecutor: isOnExecutor)
        let inputs = (0..<subject.inputCount).map { _Input(index: $0, clock: clock, isOnExecutor: isOnExecutor) }
        self.inputs = inputs
        instance = subject.make(
            ConformanceInputs(signals: inputs.map(\.signal), queue: queue, scheduler: scheduler))
        sourceSerial = subject.role == .source && excepted["3.1"] != nil ? _Lock(recursive: true) : nil
    }

    // MARK: Actions

    /// Runs `body` as a kit action, in `context`; then, for an action not
    /// made from inside a callback, the sends a callback put off until it
    /// returned (see `deferUntilReturn`).
    private func act(_ context: String?, _ body: () -> Void) {
        let nested = _Driving.isDriving
        _Driving.withAction(clock: clock) {
            _Trace.$current.withValue(context, operation: body)
        }
        if !nested && log.withLock({ $0.deferredSends > 0 }) {
            advance(by: 0)
        }
    }

    /// Runs `sends` once the callback that calls this has returned: when
    /// the kit action that caused the callback returns, or after the current
    /// item of the virtual clock (at the same virtual time).
    func deferUntilReturn(_ sends: @escaping @Sendable () -> Void) {
        log.withLock { $0.deferredSends += 1 }
        queue.justDispatch { [self] in
            log.withLock { $0.deferredSends -= 1 }
            sends()
        }
    }

    /// Starts the subscription.
    func start() {
        act("start") {
            let disposable = instance.start(recorder)
            let disposeNow = handle.withLock { handle -> Bool in
                handle.disposable = disposable
                return handle.disposeRequested
            }
            if disposeNow {
                let began = clock.next()
                disposable.dispose()
                recordDisposal(began: began)
            }
        }
        let order = clock.next()
        log.withLock { $0.startReturned = order }
    }

    /// Sends a value to `input` (to the source, for a source), in a context
    /// named after it or in none; returns the value.
    @discardableResult
    func send(_ input: Int, value: Int? = nil, inContext: Bool = true, reentrant: Bool = false) -> Int {
        let order = clock.next()
        let value = value ?? order
        let context = inContext ? "s\(value)" : nil
        log.withLock { log in
            log.sends[value] = (context, order)
            if reentrant { log.reentrantValues.insert(value) }
            if inContext { log.actionContexts.insert("s\(value)") } else { log.sentWithoutContext = true }
        }
        act(context) {
            if let driver = instance.driver {
                log.withLock { $0.sourceSends.append((order, value)) }
                if let sourceSerial {
                    sourceSerial.withLock { driver.send(value) }
                } else {
                    driver.send(value)
                }
            } else {
                inputs[input].send(value)
            }
        }
        return value
    }

    /// Whether the source (or an input) can be completed and failed.
    var canComplete: Bool { instance.driver.map { $0.complete != nil } ?? true }
    var canFail: Bool { instance.driver.map { $0.fail != nil } ?? true }

    /// Completes (or fails) `input`'s live subscriptions, or the source.
    func end(_ input: Int, failing: Bool) {
        let order = clock.next()
        let context = "t\(order)"
        log.withLock { _ = $0.actionContexts.insert(context) }
        act(context) {
            if let driver = instance.driver {
                guard let end = failing ? driver.fail : driver.complete else { return }
                let alreadyEnded = log.withLock { log -> Bool in
                    defer { if log.sourceEnd == nil { log.sourceEnd = (order, failing) } }
                    return log.sourceEnd != nil
                }
                guard !alreadyEnded else { return }
                if let sourceSerial {
                    sourceSerial.withLock { end() }
                } else {
                    end()
                }
            } else {
                inputs[input].end(with: failing ? ConformanceError(id: order) : nil)
            }
        }
    }

    /// Disposes the subscription (from any thread, also inside a callback).
    func dispose() {
        act("dispose") {
            let disposable = handle.withLock { handle -> (any Disposable)? in
                if handle.disposable == nil { handle.disposeRequested = true }
                return handle.disposable
            }
            guard let disposable else { return }
            let began = clock.next()
            disposable.dispose()
            recordDisposal(began: began)
        }
    }

    private func recordDisposal(began: Int) {
        let order = clock.next()
        let thread = _currentThread()
        log.withLock { $0.disposals.append((began, order, thread)) }
    }

    /// Advances the virtual clock, in the clock's own context (which no
    /// delivery may see).
    func advance(by seconds: Double) {
        act(_clockContext) { scheduler.advance(by: seconds) }
    }

    /// Lets the subject finish what it was given: the virtual clock runs
    /// (what is due now; `settleTime` further for a virtual-time subject), a
    /// real executor runs what it was given until no event arrives.
    func settle(timeout: Double? = nil) {
        switch subject.executor.kind {
        case .none:
            advance(by: 0)
        case .virtualTime:
            advance(by: 0)
            advance(by: options.settleTime)
        case .queue(let queue):
            untilQuiet(timeout: timeout) { queue.sync {} }
        case .custom(_, let settle):
            untilQuiet(timeout: timeout, settle)
        }
    }

    /// Repeats `step` (and runs the virtual clock, where deferred sends
    /// wait) until two steps in a row add no event.
    private func untilQuiet(timeout: Double?, _ step: () -> Void) {
        let end = _now() + (timeout ?? options.timeout)
        var last = -1
        var quiet = 0
        repeat {
            advance(by: 0)
            step()
            let count = recorder.count + scheduler.pendingCount
            if count == last {
                quiet += 1
            } else {
                quiet = 0
                last = count
            }
        } while quiet < 2 && _now() < end
    }

    /// Completes every input's live subscriptions (or the source), and again
    /// while the subject resubscribes, up to four rounds; settles after each.
    func completeInputs() {
        if instance.driver != nil {
            end(0, failing: false)
            settle()
            return
        }
        for _ in 0..<4 {
            let live = inputs.filter(\.hasLiveSubscription)
            if live.isEmpty { break }
            for input in live { end(input.index, failing: false) }
            settle()
        }
    }

    /// Whether rule 1.2 expects a terminal event now (and why), or nil.
    func terminationExpected(singleThreaded: Bool) -> String? {
        let disposed = log.withLock { !$0.disposals.isEmpty } || handle.withLock { $0.disposeRequested }
        if disposed { return nil }
        if instance.driver != nil {
            guard let end = log.withLock({ $0.sourceEnd }) else { return nil }
            if end.failed {
                return subject.termination.contains(.error) ? "the source was failed" : nil
            }
            return subject.termination.contains(.completion) ? "the source was completed" : nil
        }
        if inputs.count > 1 && !singleThreaded { return nil }
        let subscriptions = inputs.flatMap(\.snapshot)
        if subscriptions.contains(where: { $0.end == .failed }) {
            return subject.termination.contains(.error) ? "a subscription to its inputs failed" : nil
        }
        guard subject.termination.contains(.completion), !subscriptions.isEmpty,
            subscriptions.allSatisfy({ $0.end != nil }), subscriptions.contains(where: { $0.end == .completed })
        else { return nil }
        return "every subscription to its inputs completed or was disposed by the subject (\(subscriptions.count) in all)"
    }

    /// Waits (up to `timeout`) for the terminal event rule 1.2 expects, and
    /// returns the finding if it does not come. The expectation is asked
    /// again while waiting: a disposal the schedule left for a callback
    /// (`disposeInNextCallback`) may come with an event a real executor
    /// delivers late, and a disposed subscription owes no terminal event.
    func checkTermination(singleThreaded: Bool, timeout: Double) -> _Finding? {
        guard excepted["1.2"] == nil, subject.role != .source || canComplete || canFail,
            var reason = terminationExpected(singleThreaded: singleThreaded)
        else { return nil }
        if _eventually(
            timeout: timeout,
            {
                settle(timeout: 0.05)
                if recorder.terminated { return true }
                guard let stillExpected = terminationExpected(singleThreaded: singleThreaded) else { return true }
                reason = stillExpected
                return false
            })
        {
            return nil
        }
        return _Finding(rule: "1.2", message: "\(reason), but no error or completion was delivered")
    }

    /// Disposes, lets the subject settle, and waits (up to `timeout`) for
    /// every subscription to the inputs to be disposed (rule 2.2).
    func disposeAndWaitForUpstream(timeout: Double) {
        dispose()
        settle()
        guard excepted["2.2"] == nil, subject.role != .source else { return }
        _ = _eventually(timeout: timeout) {
            inputs.allSatisfy { $0.snapshot.allSatisfy { $0.disposals > 0 } }
        }
    }

    /// Lets go of the handle and of the inputs' subscribers.
    func release() {
        handle.withLock { $0.disposable = nil }
        recorder.clearHooks()
        for input in inputs { input.releaseSubscribers() }
    }
}
