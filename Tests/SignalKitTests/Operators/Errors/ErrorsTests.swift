// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Errors and Looping: catch, restart, recurse, restartIfError, restartOrMapError,
// retry. Exact event logs (spec §2.1, §4.4, §4.9, §4.12); stack safety is in
// StackSafetyTests.

@Suite struct CatchTests {
    // MARK: - catch

    @Test func catchForwardsValuesAndCompletionWithoutCallingTheHandler() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(
            a.signal
                |> `catch` { (error: String) -> Signal<Int, String> in
                    log.append("catch \(error)")
                    return .never()
                })
        a.putNext(1)
        a.putCompletion()
        #expect(log.take() == ["a.subscribe#1", "next 1", "completed", "a.dispose#1"])
        handle.dispose()
        #expect(log.take() == [])
        #expect(a.disposeCount == 1)
    }

    @Test func catchSubscribesTheAlternativeBeforeDisposingTheFailedSource() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(
            a.signal
                |> `catch` { error in
                    log.append("catch \(error)")
                    return b.signal
                })
        a.putNext(1)
        a.putError("e")
        #expect(log.take() == ["a.subscribe#1", "next 1", "catch e", "b.subscribe#1", "a.dispose#1"])
        b.putNext(2)
        b.putCompletion()
        #expect(log.take() == ["next 2", "completed", "b.dispose#1"])
        handle.dispose()
        #expect(log.take() == [])
        #expect(a.disposeCount == 1 && b.disposeCount == 1)
    }

    @Test func catchOfASynchronousError() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { subscriber in
            subscriber.putNext(1)
            subscriber.putError("e")
        }
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(
            a.signal
                |> `catch` { error in
                    log.append("catch \(error)")
                    return b.signal
                })
        #expect(log.take() == ["a.subscribe#1", "next 1", "catch e", "b.subscribe#1", "a.dispose#1"])
        b.putNext(2)
        handle.dispose()
        #expect(log.take() == ["next 2", "b.dispose#1"])
        #expect(a.disposeCount == 1 && b.disposeCount == 1)
    }

    @Test func theAlternativeSetsTheErrorType() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, Int>("b", log: log)
        let handle = log.start(a.signal |> `catch` { (_: String) -> Signal<Int, Int> in b.signal })
        a.putError("e")
        b.putError(7)
        #expect(log.events == ["a.subscribe#1", "b.subscribe#1", "a.dispose#1", "error 7", "b.dispose#1"])
        handle.dispose()
        #expect(b.disposeCount == 1)
    }

    @Test func anAlternativeFailingSynchronouslyFailsTheOutput() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(
            a.signal
                |> `catch` { (error: String) -> Signal<Int, String> in
                    log.append("catch \(error)")
                    return .fail("again")
                })
        a.putError("e")
        #expect(log.events == ["a.subscribe#1", "catch e", "error again", "a.dispose#1"])
        handle.dispose()
        #expect(a.disposeCount == 1)
    }

    @Test func catchDisposedBeforeTheErrorNeverCallsTheHandler() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(
            a.signal
                |> `catch` { (error: String) -> Signal<Int, String> in
                    log.append("catch \(error)")
                    return .never()
                })
        handle.dispose()
        a.putError("late")
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
    }

    @Test func catchDisposalDisposesTheSourceThenTheAlternative() {
        // The DisposableSet holds [source, alternative]; the failed source is
        // already disposed, so disposal reaches the alternative only, once.
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(a.signal |> `catch` { _ in b.signal })
        a.putError("e")
        log.take()
        handle.dispose()
        handle.dispose()
        #expect(log.take() == ["b.dispose#1"])
        #expect(a.disposeCount == 1 && b.disposeCount == 1)
    }

    @Test func aSecondCatchHandlesTheAlternativesError() {
        let log = EventLog()
        let handle = log.start(
            Signal<Int, String>.fail("first")
                |> `catch` { (error: String) -> Signal<Int, String> in
                    log.append("catch1 \(error)")
                    return .fail("second")
                }
                |> `catch` { (error: String) -> Signal<Int, String> in
                    log.append("catch2 \(error)")
                    return .single(3)
                })
        #expect(log.events == ["catch1 first", "catch2 second", "next 3", "completed"])
        handle.dispose()
    }

    // MARK: - restart, recurse

    @Test func restartResubscribesInsideTheCompletionBeforeDisposingTheOldSubscription() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(a.signal |> restart)
        a.putNext(1)
        a.putCompletion()
        #expect(log.take() == ["a.subscribe#1", "next 1", "a.subscribe#2", "a.dispose#1"])
        a.putNext(2)
        a.putCompletion()
        #expect(log.take() == ["next 2", "a.subscribe#3", "a.dispose#2"])
        a.putError("e")
        #expect(log.take() == ["error e", "a.dispose#3"])
        handle.dispose()
        #expect(log.take() == [])
        #expect(a.subscribeCount == 3 && a.disposeCount == 3)
    }

    @Test func restartWithASynchronousFirstIterationStillSubscribesTheSecondThenDisposesIt() {
        // Spec §4.12: with take(1) downstream the second subscription is made
        // (termination does not travel upstream) and disposed when the
        // generators return. Same log as SwiftSignalKit.
        // The stand-in restarts the signal with `start(next:…)`, which hides
        // its downstream from SignalKit; with SignalKit's own `take(1)` the
        // loop sees the downstream end and makes no second subscription
        // (loops stop when their downstream stops;
        // LoopTerminationTests.takeOneAfterRestartSubscribesOnce).
        let log = EventLog()
        let a = ScriptedSource<Int, String>("a", log: log) { index, subscriber in
            if index == 1 {
                subscriber.putNext(1)
                subscriber.putCompletion()
            }
        }
        _ = log.start(a.signal |> restart |> firstValueOnlyForCatchMetaTests())
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.subscribe#2", "a.dispose#1", "a.dispose#2"])
        #expect(a.everySubscriptionDisposedOnce)
        a.releaseSubscribers()
    }

    @Test func restartLoopsOverSynchronouslyCompletingResubscriptions() {
        // SignalKit: the first resubscription happens inside the first
        // subscription's completion (as in SwiftSignalKit); later ones, which
        // SwiftSignalKit would nest ever deeper, run from a loop: each is
        // disposed when its subscription returns, before the next one.
        // SwiftSignalKit: a.subscribe#1..#4 nested, then a.dispose#4, #3, #2, #1.
        let log = EventLog()
        let a = ScriptedSource<Int, String>("a", log: log) { index, subscriber in
            if index < 4 {
                subscriber.putNext(index)
                subscriber.putCompletion()
            } else {
                subscriber.putError("e")
            }
        }
        let handle = log.start(a.signal |> restart)
        #expect(
            log.take() == [
                "a.subscribe#1", "next 1",
                "a.subscribe#2", "next 2", "a.dispose#2",
                "a.subscribe#3", "next 3", "a.dispose#3",
                "a.subscribe#4", "error e", "a.dispose#4",
                "a.dispose#1",
            ])
        handle.dispose()
        #expect(log.take() == [])
        #expect(a.everySubscriptionDisposedOnce)
        a.releaseSubscribers()
    }

    @Test func restartAfterAnAsynchronousCompletionLoopsInsideThatCompletion() {
        let log = EventLog()
        let a = ScriptedSource<Int, String>("a", log: log) { index, subscriber in
            if index == 2 || index == 3 {
                subscriber.putNext(index)
                subscriber.putCompletion()
            }
        }
        let handle = log.start(a.signal |> restart)
        #expect(log.take() == ["a.subscribe#1"])
        a.subscriber(1).putCompletion()
        // #2 is subscribed before #1 is disposed; #1 is disposed when #2's
        // handle replaces it, after #2 (synchronous) disposed itself.
        #expect(
            log.take() == [
                "a.subscribe#2", "next 2", "a.dispose#2", "a.dispose#1",
                "a.subscribe#3", "next 3", "a.dispose#3",
                "a.subscribe#4",
            ])
        handle.dispose()
        #expect(log.take() == ["a.dispose#4"])
        #expect(a.everySubscriptionDisposedOnce)
        a.releaseSubscribers()
    }

    @Test func aFinishedSubscriptionNeverReplacesALiveLaterOne() {
        // SwiftSignalKit's recursion sets the finished first handle after the
        // live second one and so disposes the second (the outer frame's
        // MetaDisposable.set). SignalKit keeps the second alive.
        let log = EventLog()
        let a = ScriptedSource<Int, String>("a", log: log) { index, subscriber in
            if index == 1 { subscriber.putCompletion() }
        }
        let handle = log.start(a.signal |> restart)
        #expect(log.take() == ["a.subscribe#1", "a.subscribe#2", "a.dispose#1"])
        a.subscriber(2).putNext(2)
        #expect(log.take() == ["next 2"])
        handle.dispose()
        #expect(log.take() == ["a.dispose#2"])
        a.releaseSubscribers()
    }

    @Test func restartDisposalDisposesTheCurrentSubscriptionAndStops() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(a.signal |> restart)
        a.putCompletion()
        handle.dispose()
        a.putNext(9)
        a.putCompletion()
        #expect(log.events == ["a.subscribe#1", "a.subscribe#2", "a.dispose#1", "a.dispose#2"])
        #expect(a.subscribeCount == 2 && a.disposeCount == 2)
    }

    @Test func aCompletionEmittedWhileRestartIsDisposedResubscribesOnceAndDisposesAtOnce() {
        // SwiftSignalKit disposes the current subscription before it stops
        // restarting; SignalKit keeps that order, but starts nothing after the
        // one extra subscription (SwiftSignalKit recurses while each one
        // completes as it is disposed).
        let log = EventLog()
        let count = Shared(0)
        let source = Signal<Int, String> { subscriber in
            count.value += 1
            let index = count.value
            log.append("a.subscribe#\(index)")
            return ActionDisposable {
                log.append("a.dispose#\(index)")
                subscriber.putCompletion()
            }
        }
        let handle = log.start(source |> restart)
        handle.dispose()
        #expect(log.events == ["a.subscribe#1", "a.dispose#1", "a.subscribe#2", "a.dispose#2"])
    }

    @Test func valuesEmittedWhileRestartIsDisposedAreDelivered() {
        let log = EventLog()
        let source = Signal<Int, String> { subscriber in
            ActionDisposable { subscriber.putNext(99) }
        }
        let handle = log.start(source |> restart)
        handle.dispose()
        #expect(log.events == ["next 99"])
    }

    @Test func restartForwardsASynchronousFirstError() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { $0.putError("e") }
        _ = log.start(a.signal |> restart)
        #expect(log.events == ["a.subscribe#1", "error e", "a.dispose#1"])
    }

    @Test func recurseIsRestart() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(a.signal |> recurse(nil))
        a.putNext(1)
        a.putCompletion()
        a.putNext(2)
        a.putError("e")
        #expect(
            log.events == ["a.subscribe#1", "next 1", "a.subscribe#2", "a.dispose#1", "next 2", "error e", "a.dispose#2"])
        handle.dispose()
        #expect(a.disposeCount == 2)
    }

    // MARK: - restartIfError

    @Test func restartIfErrorResubscribesInsideTheErrorAndCompletesOnCompletion() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(a.signal |> restartIfError)
        a.putNext(1)
        a.putError("e")
        #expect(log.take() == ["a.subscribe#1", "next 1", "a.subscribe#2", "a.dispose#1"])
        a.putNext(2)
        a.putCompletion()
        #expect(log.take() == ["next 2", "completed", "a.dispose#2"])
        handle.dispose()
        #expect(a.subscribeCount == 2 && a.disposeCount == 2)
    }

    @Test func restartIfErrorLoopsOverSynchronousErrors() {
        let log = EventLog()
        let a = ScriptedSource<Int, String>("a", log: log) { index, subscriber in
            subscriber.putNext(index)
            if index < 3 { subscriber.putError("e") } else { subscriber.putCompletion() }
        }
        _ = log.start(a.signal |> restartIfError)
        #expect(
            log.events == [
                "a.subscribe#1", "next 1",
                "a.subscribe#2", "next 2", "a.dispose#2",
                "a.subscribe#3", "next 3", "completed", "a.dispose#3",
                "a.dispose#1",
            ])
        #expect(a.everySubscriptionDisposedOnce)
        a.releaseSubscribers()
    }

    @Test func restartIfErrorDisposal() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(a.signal |> restartIfError)
        a.putError("e")
        handle.dispose()
        a.putError("late")
        #expect(log.events == ["a.subscribe#1", "a.subscribe#2", "a.dispose#1", "a.dispose#2"])
    }

    // MARK: - restartOrMapError

    @Test func restartOrMapErrorRestartsOrFailsWithTheMappedError() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(
            a.signal
                |> restartOrMapError { (error: String) -> RestartOrMapErrorCondition<Int> in
                    log.append("condition \(error)")
                    return error == "retry" ? .restart : .error(error.count)
                })
        a.putNext(1)
        a.putError("retry")
        #expect(log.take() == ["a.subscribe#1", "next 1", "condition retry", "a.subscribe#2", "a.dispose#1"])
        a.putError("fatal")
        #expect(log.take() == ["condition fatal", "error 5", "a.dispose#2"])
        handle.dispose()
        #expect(a.subscribeCount == 2 && a.disposeCount == 2)
    }

    @Test func restartOrMapErrorForwardsCompletion() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { subscriber in
            subscriber.putNext(1)
            subscriber.putCompletion()
        }
        _ = log.start(a.signal |> restartOrMapError { (_: String) -> RestartOrMapErrorCondition<String> in .restart })
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.dispose#1"])
    }

    @Test func restartOrMapErrorLoopsOverSynchronousRestarts() {
        let log = EventLog()
        let a = ScriptedSource<Int, String>("a", log: log) { index, subscriber in
            subscriber.putError("e\(index)")
        }
        _ = log.start(
            a.signal
                |> restartOrMapError { (error: String) -> RestartOrMapErrorCondition<String> in
                    error == "e3" ? .error("gave up") : .restart
                })
        #expect(
            log.events == [
                "a.subscribe#1", "a.subscribe#2", "a.dispose#2", "a.subscribe#3", "error gave up", "a.dispose#3",
                "a.dispose#1",
            ])
        #expect(a.everySubscriptionDisposedOnce)
        a.releaseSubscribers()
    }

    // MARK: - retry

    /// A source failing (or completing) at each subscription, logging the
    /// virtual time and whether it runs on `queue`.
    private func timedSource(
        _ log: EventLog,
        _ scheduler: VirtualTimeScheduler,
        _ queue: Queue,
        body: @escaping @Sendable (Int, Subscriber<Int, String>) -> Void
    ) -> ScriptedSource<Int, String> {
        ScriptedSource("a", log: log) { index, subscriber in
            log.append("t=\(scheduler.now) onQueue=\(queue.isCurrent())")
            body(index, subscriber)
        }
    }

    @Test func retryDelaysGrowByTheIncrementUpToTheMaximumAndAreNeverReset() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = timedSource(log, scheduler, queue) { index, subscriber in
            subscriber.putNext(index)  // values do not reset the delay
            if index < 5 { subscriber.putError("e") } else { subscriber.putCompletion() }
        }
        _ = log.start(a.signal |> retry(1.0, maxDelay: 3.0, onQueue: queue))
        #expect(log.take() == ["a.subscribe#1", "t=0.0 onQueue=false", "next 1", "a.dispose#1"])
        scheduler.advance(by: 0.999)
        #expect(log.take() == [])
        scheduler.advance(by: 0.001)
        #expect(log.take() == ["a.subscribe#2", "t=1.0 onQueue=true", "next 2", "a.dispose#2"])
        scheduler.advance(by: 1.999)
        #expect(log.take() == [])
        scheduler.advance(by: 0.001)
        #expect(log.take() == ["a.subscribe#3", "t=3.0 onQueue=true", "next 3", "a.dispose#3"])
        scheduler.advance(by: 3.0)
        #expect(log.take() == ["a.subscribe#4", "t=6.0 onQueue=true", "next 4", "a.dispose#4"])
        scheduler.advance(by: 2.999)
        #expect(log.take() == [])
        scheduler.advance(by: 0.001)
        #expect(log.take() == ["a.subscribe#5", "t=9.0 onQueue=true", "next 5", "completed", "a.dispose#5"])
        scheduler.run()
        #expect(log.take() == [])
        #expect(a.everySubscriptionDisposedOnce)
        a.releaseSubscribers()
    }

    @Test func retryNeverForwardsErrorsAndCompletesWithTheSource() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(a.signal |> retry(0.5, maxDelay: 10, onQueue: queue))
        a.putError("e")
        scheduler.advance(by: 0.5)
        a.putNext(1)
        a.putCompletion()
        #expect(log.take() == ["a.subscribe#1", "a.dispose#1", "a.subscribe#2", "next 1", "completed", "a.dispose#2"])
        scheduler.run()
        handle.dispose()
        #expect(log.take() == [])
        #expect(a.subscribeCount == 2 && a.disposeCount == 2)
    }

    @Test func retryDisposedDuringTheWaitNeverResubscribes() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(a.signal |> retry(1.0, maxDelay: 10, onQueue: queue))
        a.putError("e")
        scheduler.advance(by: 0.5)
        handle.dispose()
        scheduler.run()
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
        #expect(a.subscribeCount == 1)
    }

    @Test func retryDisposalDisposesTheCurrentSubscriptionOnce() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let handle = log.start(a.signal |> retry(1.0, maxDelay: 10, onQueue: queue))
        a.putError("e")
        scheduler.advance(by: 1.0)
        handle.dispose()
        handle.dispose()
        a.putError("late")
        scheduler.run()
        #expect(log.events == ["a.subscribe#1", "a.dispose#1", "a.subscribe#2", "a.dispose#2"])
        #expect(a.disposeCount == 2)
    }

    @Test func retryOnErrorRejectingAnErrorForwardsItAtOnce() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = timedSource(log, scheduler, queue) { index, subscriber in
            subscriber.putError(index == 1 ? "transient" : "fatal")
        }
        _ = log.start(
            a.signal
                |> retry(
                    retryOnError: { (error: String) in
                        log.append("retryOnError \(error)")
                        return error == "transient"
                    }, delayIncrement: 2.0, maxDelay: 10, maxRetries: nil, onQueue: queue))
        scheduler.run()
        #expect(
            log.events == [
                "a.subscribe#1", "t=0.0 onQueue=false", "retryOnError transient", "a.dispose#1",
                "a.subscribe#2", "t=2.0 onQueue=true", "retryOnError fatal", "error fatal", "a.dispose#2",
            ])
        a.releaseSubscribers()
    }

    @Test(arguments: [(Optional(3), 3), (Optional(1), 1), (Optional(0), 1), (nil, 6)])
    func maxRetriesCountsSubscriptionsInAll(maxRetries: Int?, subscriptions: Int) {
        // maxRetries: 3 ⇒ 3 subscriptions, the 3rd error forwarded; 0 or 1 ⇒
        // the first retryable error is forwarded; nil ⇒ no limit (the source
        // completes on its 6th subscription).
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = ScriptedSource<Int, String>("a", log: nil) { index, subscriber in
            if index < 6 { subscriber.putError("e\(index)") } else { subscriber.putCompletion() }
        }
        _ = log.start(
            a.signal
                |> retry(
                    retryOnError: { _ in true }, delayIncrement: 1.0, maxDelay: 1.0, maxRetries: maxRetries,
                    onQueue: queue))
        scheduler.run()
        #expect(a.subscribeCount == subscriptions)
        #expect(log.events == [maxRetries == nil ? "completed" : "error e\(subscriptions)"])
        #expect(a.everySubscriptionDisposedOnce)
        a.releaseSubscribers()
    }

    @Test func retryWithRetryOnErrorGrowsTheDelayTheSameWay() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = timedSource(log, scheduler, queue) { index, subscriber in
            if index < 4 { subscriber.putError("e") } else { subscriber.putNext(index) }
        }
        let handle = log.start(
            a.signal |> retry(retryOnError: { _ in true }, delayIncrement: 0.5, maxDelay: 0.75, maxRetries: nil, onQueue: queue))
        scheduler.run()
        #expect(
            log.events == [
                "a.subscribe#1", "t=0.0 onQueue=false", "a.dispose#1",
                "a.subscribe#2", "t=0.5 onQueue=true", "a.dispose#2",
                "a.subscribe#3", "t=1.25 onQueue=true", "a.dispose#3",
                "a.subscribe#4", "t=2.0 onQueue=true", "next 4",
            ])
        handle.dispose()
        #expect(a.everySubscriptionDisposedOnce)
        a.releaseSubscribers()
    }

    @Test func retryOnADispatchQueueResubscribesOnThatQueue() async {
        let queue = Queue(name: "retry")
        let onQueue = Shared<[Bool]>([])
        let finished = Shared(false)
        let a = ScriptedSource<Int, String>("a", log: nil) { index, subscriber in
            onQueue.value.append(queue.isCurrent())
            if index < 3 { subscriber.putError("e") } else { subscriber.putCompletion() }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let box = UncheckedSendableBox(continuation)
            _ = (a.signal |> retry(0.001, maxDelay: 0.001, onQueue: queue)).start(completed: {
                finished.value = true
                box.value.resume()
            })
        }
        #expect(finished.value)
        #expect(onQueue.value == [false, true, true])
        a.releaseSubscribers()
    }

    // MARK: - Lifetimes

    @Test func disposalReleasesASourceThatKeepsItsSubscribers() {
        // TestSource keeps its subscribers, whose (operator) sinks reference
        // the run; the run lets go of the source once disposed.
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let restarted = WeakBox<TestSource<Int, String>>(nil)
        let retried = WeakBox<TestSource<Int, String>>(nil)
        var handles: [any Disposable] = []
        do {
            let a = TestSource<Int, String>("a", log: EventLog())
            let b = TestSource<Int, String>("b", log: EventLog())
            restarted.value = a
            retried.value = b
            handles.append((a.signal |> restart).start())
            handles.append((b.signal |> retry(1, maxDelay: 1, onQueue: queue)).start())
            a.putCompletion()
            b.putError("e")
            scheduler.run()
        }
        #expect(restarted.value != nil && retried.value != nil, "subscribed: alive")
        handles.forEach { $0.dispose() }
        #expect(restarted.value == nil && retried.value == nil)
    }

    @Test func droppingTheHandleOfARestartOverASilentSourceReleasesEverything() {
        let probe = WeakBox<Probe>(nil)
        do {
            let captured = Probe()
            probe.value = captured
            _ = (Signal<Int, String>.never() |> restart).start(next: { _ in captured.touch() })
            _ = (Signal<Int, String>.never() |> restartIfError).start(next: { _ in captured.touch() })
        }
        #expect(probe.value == nil, "restart's state must not keep its downstream alive")
    }
}
