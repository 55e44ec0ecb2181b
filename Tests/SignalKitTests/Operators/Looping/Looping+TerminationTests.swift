// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Loops stop when their downstream stops (issue #9, item 3): every loop operator (restart, recurse,
// restartIfError, restartOrMapError, retry in every form, RAC's repeat =
// restart, then-chains, feedbackLoop) checks between iterations whether its
// downstream has ended (terminated or disposed, up to the user's
// subscription) and stops. Without that, `single(1) |> restart |> take(3)`
// never returns from `start` (SwiftSignalKit's behaviour): take's completion
// only disposes the loop once the generators return.
//
// Every source here ends the loop itself after `runawayLimit` subscriptions
// (recording an issue), so that a regression fails instead of hanging.

@Suite struct LoopTerminationTests {
    static let runawayLimit = 10_000

    /// How a runaway source ends the loop that keeps resubscribing it.
    enum RunawayEnd {
        /// Fails (stops `restart`, `recurse`, `then`).
        case error
        /// Completes (stops the error-restarting loops).
        case completion
    }

    /// A synchronous source: its n-th subscription logs `"<name>.subscribe#n"`
    /// (when a log is given), runs `body(n, subscriber)`, and returns a
    /// disposable logging `"<name>.dispose#n"`. Past `limit` subscriptions it
    /// records an issue and ends with `runawayEnd`, without logging.
    final class LoopSource<T>: @unchecked Sendable {
        // `@unchecked Sendable`: `count` is only touched by the test's thread.
        let name: String
        let log: EventLog?
        let limit: Int
        let runawayEnd: RunawayEnd
        let body: (Int, Subscriber<T, String>) -> Void
        private(set) var count = 0

        init(
            _ name: String,
            log: EventLog?,
            limit: Int = LoopTerminationTests.runawayLimit,
            runawayEnd: RunawayEnd,
            body: @escaping (Int, Subscriber<T, String>) -> Void
        ) {
            self.name = name
            self.log = log
            self.limit = limit
            self.runawayEnd = runawayEnd
            self.body = body
        }

        var signal: Signal<T, String> {
            Signal { [self] subscriber in
                count += 1
                let index = count
                guard index <= limit else {
                    Issue.record("\(name): the loop did not stop (\(index) subscriptions)")
                    switch runawayEnd {
                    case .error: subscriber.putError("runaway")
                    case .completion: subscriber.putCompletion()
                    }
                    return EmptyDisposable
                }
                log?.append("\(name).subscribe#\(index)")
                body(index, subscriber)
                let (log, name) = (log, name)
                return ActionDisposable { log?.append("\(name).dispose#\(index)") }
            }
        }
    }

    /// `single(1)`, logged.
    private func completing(_ log: EventLog?, limit: Int = runawayLimit) -> LoopSource<Int> {
        LoopSource("a", log: log, limit: limit, runawayEnd: .error) { _, subscriber in
            subscriber.putNext(1)
            subscriber.putCompletion()
        }
    }

    /// Sends 1 and fails, logged.
    private func failing(_ log: EventLog?) -> LoopSource<Int> {
        LoopSource("a", log: log, runawayEnd: .completion) { _, subscriber in
            subscriber.putNext(1)
            subscriber.putError("e")
        }
    }

    /// The log of a loop over a synchronous one-value source, stopped by
    /// `take(3)`: the first resubscription happens inside subscription #1's
    /// callback, later ones from the loop (each disposed before the next),
    /// and the loop stops right after take completes.
    private static let takeThreeLog = [
        "a.subscribe#1", "next 1",
        "a.subscribe#2", "next 1", "a.dispose#2",
        "a.subscribe#3", "next 1", "completed", "a.dispose#3",
        "a.dispose#1",
    ]

    // MARK: - take(n)

    @Test func retryWithoutLimitFollowedByTake() {
        let log = EventLog()
        let source = failing(log)
        _ = log.start(source.signal |> retry() |> take(3))
        #expect(log.events == Self.takeThreeLog)
        #expect(source.count == 3)
    }

    @Test func retryWithALargeLimitFollowedByTake() {
        let log = EventLog()
        let source = failing(log)
        _ = log.start(source.signal |> retry(1_000_000) |> take(3))
        #expect(log.events == Self.takeThreeLog)
        #expect(source.count == 3)
    }

    @Test func restartFollowedByTake() {
        let log = EventLog()
        let source = completing(log)
        _ = log.start(source.signal |> restart |> take(3))
        #expect(log.events == Self.takeThreeLog)
        #expect(source.count == 3)
    }

    @Test func recurseFollowedByTake() {
        let log = EventLog()
        let source = completing(log)
        _ = log.start(source.signal |> recurse(nil) |> take(3))
        #expect(log.events == Self.takeThreeLog)
        #expect(source.count == 3)
    }

    @Test func restartIfErrorFollowedByTake() {
        let log = EventLog()
        let source = failing(log)
        _ = log.start(source.signal |> restartIfError |> take(3))
        #expect(log.events == Self.takeThreeLog)
        #expect(source.count == 3)
    }

    @Test func restartOrMapErrorFollowedByTake() {
        let log = EventLog()
        let source = failing(log)
        let restarting: (Signal<Int, String>) -> Signal<Int, String> = restartOrMapError { _ in .restart }
        _ = log.start(source.signal |> restarting |> take(3))
        #expect(log.events == Self.takeThreeLog)
        #expect(source.count == 3)
    }

    @Test func takeOneAfterRestartSubscribesOnce() {
        // SwiftSignalKit (spec §4.12) makes a second subscription and
        // disposes it when the generators return; SignalKit stops first.
        let log = EventLog()
        let source = completing(log)
        _ = log.start(source.signal |> restart |> take(1))
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.dispose#1"])
        #expect(source.count == 1)
    }

    @Test func takeOneAfterThenDoesNotSubscribeTheNextSignal() {
        // SwiftSignalKit (spec §4.8) subscribes `b` and disposes it when the
        // generators return; SignalKit sees that the downstream ended.
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { subscriber in
            subscriber.putNext(1)
            subscriber.putCompletion()
        }
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(a.signal |> then(b.signal) |> take(1))
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.dispose#1"])
        #expect(b.subscribeCount == 0)
    }

    @Test func racRepeatOnSingleFollowedByALongTakeCompletes() {
        // Seed rule C24: RAC's `repeat` (SignalKit's `restart`) on
        // `single(1)` followed by `take(1_000_000)` completes (a million in
        // the release pass, `StackSafety.iterations` elsewhere).
        let iterations = StackSafety.iterations
        let (values, completed, subscriptions) = StackSafety.run {
            let source = completing(nil, limit: iterations + Self.runawayLimit)
            let values = Shared(0)
            let completed = Shared(false)
            _ = (source.signal |> restart |> take(iterations)).start(
                next: { _ in values.value += 1 },
                completed: { completed.value = true }
            )
            return (values.value, completed.value, source.count)
        }
        #expect(values == iterations)
        #expect(completed)
        #expect(subscriptions == iterations)
    }

    @Test func thenLoopFollowedByTake() {
        // An endless then-chain: `loop = a |> then(deferred { loop })`.
        let log = EventLog()
        let source = completing(log)
        let signal = source.signal
        @Sendable func loop() -> Signal<Int, String> {
            signal |> then(deferred { loop() })
        }
        _ = log.start(loop() |> take(3))
        #expect(log.events == Self.takeThreeLog)
        #expect(source.count == 3)
    }

    @Test func retryWithBackoffFollowedByTakeStopsWaiting() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let source = failing(log)
        _ = log.start(source.signal |> retry(1, maxDelay: 1, onQueue: scheduler.makeQueue()) |> take(3))
        scheduler.run(maxSteps: 100)
        #expect(
            log.events == [
                "a.subscribe#1", "next 1", "a.dispose#1",
                "a.subscribe#2", "next 1", "a.dispose#2",
                "a.subscribe#3", "next 1", "completed", "a.dispose#3",
            ])
        #expect(source.count == 3)
        #expect(scheduler.pendingCount == 0)
    }

    @Test func retryOnErrorWithBackoffFollowedByTakeStopsWaiting() {
        let scheduler = VirtualTimeScheduler()
        let source = failing(nil)
        let values = Shared(0)
        let retrying: (Signal<Int, String>) -> Signal<Int, String> = retry(
            retryOnError: { _ in true }, delayIncrement: 1, maxDelay: 1, maxRetries: nil,
            onQueue: scheduler.makeQueue())
        _ = (source.signal |> retrying |> take(3)).start(next: { _ in values.value += 1 })
        scheduler.run(maxSteps: 100)
        #expect(values.value == 3)
        #expect(source.count == 3)
        #expect(scheduler.pendingCount == 0)
    }

    // MARK: - Through other operators

    @Test func restartThroughMapFilterAndSideEffectsFollowedByTake() {
        let log = EventLog()
        let source = completing(log)
        _ = log.start(
            source.signal |> restart |> map { $0 * 10 } |> filter { $0 > 0 } |> beforeNext { _ in } |> take(3))
        #expect(log.events == Self.takeThreeLog.map { $0 == "next 1" ? "next 10" : $0 })
        #expect(source.count == 3)
    }

    @Test func restartInsideMapToSignalFollowedByTake() {
        let log = EventLog()
        let source = completing(log)
        let outer = Signal<Int, String>.single(0)
        _ = log.start(outer |> mapToSignal { _ in source.signal |> restart } |> take(3))
        #expect(log.events == Self.takeThreeLog)
        #expect(source.count == 3)
    }

    @Test func nestedRestartsEachStopAtTheirOwnTake() {
        // The inner loop stops at the inner take(2); the outer restarts it
        // until the outer take(5) ends everything: 2 + 2 + 1 subscriptions.
        let source = completing(nil)
        let values = Shared(0)
        let completed = Shared(false)
        _ = (source.signal |> restart |> take(2) |> restart |> take(5)).start(
            next: { _ in values.value += 1 },
            completed: { completed.value = true }
        )
        #expect(values.value == 5)
        #expect(completed.value)
        #expect(source.count == 5)
    }

    // MARK: - takeUntil

    @Test func restartFollowedByTakeUntilFiredFromTheNextCallback() {
        let log = EventLog()
        let source = completing(log)
        let trigger = ValuePipe<Void>()
        let count = Shared(0)
        _ = (source.signal |> restart |> takeUntil(trigger.signal())).start(
            next: { value in
                log.append("next \(value)")
                count.value += 1
                if count.value == 3 { trigger.putNext(()) }
            },
            completed: { log.append("completed") }
        )
        #expect(log.events == Self.takeThreeLog)
        #expect(source.count == 3)
    }

    @Test func retryFollowedByTakeUntilFiredBySubscriptionThree() {
        let trigger = ValuePipe<Void>()
        let source = LoopSource<Int>("a", log: nil, runawayEnd: .completion) { index, subscriber in
            if index == 3 { trigger.putNext(()) }
            subscriber.putError("e")
        }
        let completed = Shared(false)
        _ = (source.signal |> retry() |> takeUntil(trigger.signal())).start(completed: { completed.value = true })
        #expect(completed.value)
        #expect(source.count == 3)
    }

    @Test func feedbackLoopFollowedByTakeUntil() {
        // feedbackLoop emits no values, so only a trigger or a disposal can
        // end it early.
        let trigger = ValuePipe<Void>()
        let source = LoopSource<Int>("a", log: nil, runawayEnd: .error) { index, subscriber in
            if index == 3 { trigger.putNext(()) }
            subscriber.putCompletion()
        }
        let signal = source.signal
        let loop: Signal<Never, String> = feedbackLoop(once: { _ in signal }, reduce: { a, _ in a })
        let completed = Shared(false)
        _ = (loop |> takeUntil(trigger.signal())).start(completed: { completed.value = true })
        #expect(completed.value)
        #expect(source.count == 3)
    }

    @Test func thenLoopFollowedByTakeUntil() {
        let trigger = ValuePipe<Void>()
        let source = LoopSource<Int>("a", log: nil, runawayEnd: .error) { index, subscriber in
            if index == 3 { trigger.putNext(()) }
            subscriber.putCompletion()
        }
        let signal = source.signal
        @Sendable func loop() -> Signal<Int, String> {
            signal |> then(deferred { loop() })
        }
        let completed = Shared(false)
        _ = (loop() |> takeUntil(trigger.signal())).start(completed: { completed.value = true })
        #expect(completed.value)
        #expect(source.count == 3)
    }

    // MARK: - A handle disposed from inside a callback

    /// `gate |> then(loop)`: `start` returns while `gate` is pending, so the
    /// handle is known; completing `gate` runs `loop` synchronously, inside
    /// `then`'s generator-less advance, where the loop is not yet reachable
    /// through the handle's disposables. The next callback disposes the
    /// handle at the third value.
    private func disposedFromTheThirdValue(
        _ loop: Signal<Int, String>,
        log: EventLog
    ) {
        let gate = ValuePipe<Void>()
        let gated = gate.signal() |> castError(String.self) |> take(1) |> filter { _ in false } |> map { _ in 0 }
        let handle = Shared<(any Disposable)?>(nil)
        let count = Shared(0)
        handle.value = (gated |> then(loop)).start(next: { value in
            log.append("next \(value)")
            count.value += 1
            if count.value == 3 { handle.value?.dispose() }
        })
        gate.putNext(())
        handle.value = nil
    }

    @Test func restartStoppedByDisposingTheHandleFromTheNextCallback() {
        let log = EventLog()
        let source = completing(log)
        disposedFromTheThirdValue(source.signal |> restart, log: log)
        #expect(
            log.events == [
                "a.subscribe#1", "next 1",
                "a.subscribe#2", "next 1", "a.dispose#2",
                "a.subscribe#3", "next 1", "a.dispose#3",
                "a.dispose#1",
            ])
        #expect(source.count == 3)
    }

    @Test func retryStoppedByDisposingTheHandleFromTheNextCallback() {
        let log = EventLog()
        let source = failing(log)
        disposedFromTheThirdValue(source.signal |> retry(), log: log)
        #expect(source.count == 3)
        #expect(log.events.filter { $0 == "next 1" }.count == 3)
    }

    @Test func restartIfErrorStoppedByDisposingTheHandleFromTheNextCallback() {
        let log = EventLog()
        let source = failing(log)
        disposedFromTheThirdValue(source.signal |> restartIfError |> castError(String.self), log: log)
        #expect(source.count == 3)
    }

    @Test func thenLoopStoppedByDisposingTheHandleFromTheNextCallback() {
        let log = EventLog()
        let source = completing(log)
        let signal = source.signal
        @Sendable func loop() -> Signal<Int, String> {
            signal |> then(deferred { loop() })
        }
        disposedFromTheThirdValue(loop(), log: log)
        #expect(source.count == 3)
    }
}
