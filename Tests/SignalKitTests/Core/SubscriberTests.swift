// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct SubscriberTests {
    @Test func nothingIsDeliveredAfterTheFirstTerminalEvent() {
        let log = EventLog()
        let subscriber: Subscriber<Int, String> = log.subscriber()
        subscriber.putNext(1)
        subscriber.putError("e1")
        subscriber.putNext(2)
        subscriber.putError("e2")
        subscriber.putCompletion()
        #expect(log.events == ["next 1", "error e1"])
    }

    @Test func theOtherCallbacksAreReleasedBeforeTheErrorCallbackRuns() {
        let nextProbe = WeakBox<Probe>(nil)
        let completedProbe = WeakBox<Probe>(nil)
        let seen = Shared<[Bool]>([])
        let subscriber: Subscriber<Int, String>
        do {
            let a = Probe("next")
            let b = Probe("completed")
            nextProbe.value = a
            completedProbe.value = b
            subscriber = Subscriber(
                next: { _ in a.touch() },
                error: { _ in seen.value = [nextProbe.value == nil, completedProbe.value == nil] },
                completed: { b.touch() }
            )
        }
        subscriber.putError("e")
        #expect(seen.value == [true, true])
    }

    @Test func callbacksAreReleasedOnTerminationWhileTheSourceKeepsTheSubscriber() {
        let probe = WeakBox<Probe>(nil)
        let source = Shared<Subscriber<Int, NoError>?>(nil)
        do {
            let object = Probe()
            probe.value = object
            _ = Signal<Int, NoError> { subscriber in
                source.value = subscriber
                return EmptyDisposable
            }.start(next: { _ in object.touch() })
        }
        #expect(probe.value != nil)
        source.value?.putCompletion()
        #expect(probe.value == nil)
        #expect(source.value != nil)
    }

    @Test func callbacksAreReleasedOnHandleDisposeWhileTheSourceKeepsTheSubscriber() {
        let probe = WeakBox<Probe>(nil)
        let source = Shared<Subscriber<Int, NoError>?>(nil)
        let handle: any Disposable
        do {
            let object = Probe()
            probe.value = object
            handle = Signal<Int, NoError> { subscriber in
                source.value = subscriber
                return EmptyDisposable
            }.start(next: { _ in object.touch() })
        }
        #expect(probe.value != nil)
        handle.dispose()
        #expect(probe.value == nil)
        #expect(source.value != nil)
    }

    @Test func callbacksAreReleasedWhenTheSourceDropsTheSubscriberEvenIfTheHandleLives() {
        let probe = WeakBox<Probe>(nil)
        let inner = WeakBox<Probe>(nil)
        let handle: any Disposable
        do {
            let object = Probe()
            probe.value = object
            let disposable = Probe("inner")
            inner.value = disposable
            handle = Signal<Int, NoError> { _ in
                ActionDisposable { disposable.touch() }
            }.start(next: { _ in object.touch() })
        }
        #expect(probe.value == nil, "nobody kept the subscriber")
        #expect(inner.value != nil, "the handle alone keeps the inner disposable alive")
        handle.dispose()
        #expect(inner.value == nil, "disposing the handle releases it")
    }

    @Test func afterAsynchronousCompletionTheInnerIsReleasedEvenWhileTheHandleLives() {
        let inner = WeakBox<Probe>(nil)
        let source = Shared<Subscriber<Int, NoError>?>(nil)
        let handle: any Disposable
        do {
            let object = Probe("inner")
            inner.value = object
            handle = Signal<Int, NoError> { subscriber in
                source.value = subscriber
                return ActionDisposable { object.touch() }
            }.start()
        }
        #expect(inner.value != nil)
        source.value?.putCompletion()
        #expect(inner.value == nil)
        _ = handle
    }

    @Test func keepAliveObjectsAreReleasedAfterTheInnerDisposableOnTermination() {
        let log = EventLog()
        let source = Shared<Subscriber<Int, NoError>?>(nil)
        _ = Signal<Int, NoError> { subscriber in
            subscriber.keepAlive(Probe("kept") { log.append("\($0) released") })
            source.value = subscriber
            return ActionDisposable { log.append("inner disposed") }
        }.start(completed: { log.append("completed") })
        source.value?.putCompletion()
        #expect(log.events == ["completed", "inner disposed", "kept released"])
    }

    @Test func aLateKeepAliveIsHeldUntilALaterTerminalCallOrHandleDispose() {
        let log = EventLog()
        let source = Shared<Subscriber<Int, NoError>?>(nil)
        let handle = Signal<Int, NoError> { subscriber in
            source.value = subscriber
            return EmptyDisposable
        }.start()
        source.value?.putCompletion()
        source.value?.keepAlive(Probe("late1") { log.append("\($0) released") })
        #expect(log.events == [])
        source.value?.putCompletion()
        #expect(log.take() == ["late1 released"])
        source.value?.keepAlive(Probe("late2") { log.append("\($0) released") })
        handle.dispose()
        #expect(log.take() == ["late2 released"])
        source.value?.keepAlive(Probe("late3") { log.append("\($0) released") })
        source.value = nil
        #expect(log.take() == ["late3 released"], "the subscriber's release releases it too")
    }

    @Test func releaseOrderWhenTheSubscriberDiesWithoutAHandle() {
        let log = EventLog()
        let source = Shared<Subscriber<Int, String>?>(nil)
        do {
            let next = Probe("next") { log.append("\($0) released") }
            let error = Probe("error") { log.append("\($0) released") }
            let completed = Probe("completed") { log.append("\($0) released") }
            _ = Signal<Int, String> { subscriber in
                subscriber.keepAlive(Probe("keepAlive") { log.append("\($0) released") })
                source.value = subscriber
                let inner = Probe("inner disposable") { log.append("\($0) released") }
                return ActionDisposable { inner.touch() }
            }.start(next: { _ in next.touch() }, error: { _ in error.touch() }, completed: { completed.touch() })
        }
        #expect(log.events == [])
        source.value = nil
        #expect(
            log.events == [
                "inner disposable released", "keepAlive released", "next released", "error released",
                "completed released",
            ])
    }

    @Test func description() {
        let seen = Shared<[String]>([])
        let source = Shared<Subscriber<Int, String>?>(nil)
        _ = Signal<Int, String> { subscriber in
            seen.value.append("\(subscriber)")
            source.value = subscriber
            return EmptyDisposable
        }.start(next: { _ in })
        seen.value.append("\(source.value!)")
        source.value?.putCompletion()
        seen.value.append("\(source.value!)")
        #expect(
            seen.value == [
                "Subscriber { next: hasValue, error: nil, completed: nil, disposable: nil, terminated: false }",
                "Subscriber { next: hasValue, error: nil, completed: nil, disposable: hasValue, terminated: false }",
                "Subscriber { next: nil, error: nil, completed: nil, disposable: nil, terminated: true }",
            ])
    }

    /// `start()` with no callbacks keeps no room for them; its subscription
    /// still ends as any does: the terminal event disposes the generator's
    /// disposable and releases what it keeps alive, once, and the values
    /// before it go nowhere.
    @Test(arguments: ["completed", "error", "dispose"])
    func aSubscriptionWithoutCallbacksEndsAsAnyDoes(ending: String) {
        let log = EventLog()
        let source = Shared<Subscriber<Int, String>?>(nil)
        let handle = Signal<Int, String> { subscriber in
            subscriber.keepAlive(Probe("kept") { log.append("\($0) released") })
            source.value = subscriber
            return ActionDisposable { log.append("inner disposed") }
        }.start()
        let subscriber = source.value!
        #expect(
            "\(subscriber)"
                == "Subscriber { next: nil, error: nil, completed: nil, disposable: hasValue, terminated: false }")
        subscriber.putNext(1)
        switch ending {
        case "completed": subscriber.putCompletion()
        case "error": subscriber.putError("e")
        default: handle.dispose()
        }
        subscriber.putCompletion()
        #expect(log.events == ["inner disposed", "kept released"])
        #expect("\(subscriber)" == "Subscriber { next: nil, error: nil, completed: nil, disposable: nil, terminated: true }")
        handle.dispose()
        #expect(log.events == ["inner disposed", "kept released"])
    }

    @Test(arguments: ["completed", "error"])
    func aKeepAliveRegisteredInsideTheTerminalCallbackIsHeldUntilTheHandleIsDisposed(terminal: String) {
        let log = EventLog()
        let source = Shared<Subscriber<Int, String>?>(nil)
        let keep: @Sendable () -> Void = {
            source.value?.keepAlive(Probe("kept in \(terminal)") { log.append("\($0) released") })
        }
        let handle = Signal<Int, String> { subscriber in
            subscriber.keepAlive(Probe("kept before") { log.append("\($0) released") })
            source.value = subscriber
            return ActionDisposable { log.append("inner disposed") }
        }.start(
            error: { _ in
                keep()
                log.append("error")
            },
            completed: {
                keep()
                log.append("completed")
            })
        if terminal == "completed" { source.value?.putCompletion() } else { source.value?.putError("e") }
        #expect(log.take() == [terminal, "inner disposed", "kept before released"])
        handle.dispose()
        #expect(log.take() == ["kept in \(terminal) released"])
    }

    @Test func aSecondDisposeIsANoOpInEveryRespect() {
        let log = EventLog()
        let source = Shared<Subscriber<Int, NoError>?>(nil)
        let handle = Signal<Int, NoError> { subscriber in
            source.value = subscriber
            return ActionDisposable { log.append("inner disposed") }
        }.start()
        handle.dispose()
        #expect(log.take() == ["inner disposed"])
        source.value?.keepAlive(Probe("kept after the first dispose") { log.append("\($0) released") })
        handle.dispose()
        #expect(log.take() == [], "the second dispose releases nothing")
        source.value = nil
        #expect(log.take() == ["kept after the first dispose released"], "the subscriber's death does")
    }

    @Test func whenTheSourceDropsTheSubscriberInsideTheDisposalTheReleasesWaitForTheDisposalToReturn() {
        let log = EventLog()
        let source = Shared<Subscriber<Int, NoError>?>(nil)
        let handle: any Disposable
        do {
            let callbacks = Probe("callbacks") { log.append("\($0) released") }
            handle = Signal<Int, NoError> { subscriber in
                subscriber.keepAlive(Probe("keepAlive") { log.append("\($0) released") })
                source.value = subscriber
                return ActionDisposable {
                    log.append("dispose begins")
                    source.value = nil
                    log.append("dispose ends")
                }
            }.start(next: { _ in callbacks.touch() })
        }
        handle.dispose()
        #expect(log.events == ["dispose begins", "dispose ends", "callbacks released", "keepAlive released"])
    }

    @Test func descriptionInsideTheTerminalCallbacksAndInsideTheDisposal() {
        let seen = Shared<[String]>([])
        let source = Shared<Subscriber<Int, String>?>(nil)
        let describe: @Sendable () -> Void = {
            let description = "\(source.value!)"
            seen.withLock { $0.append(description) }
        }
        _ = Signal<Int, String> { subscriber in
            source.value = subscriber
            return EmptyDisposable
        }.start(next: { _ in }, error: { _ in describe() }, completed: { describe() })
        source.value?.putCompletion()
        let handle = Signal<Int, String> { subscriber in
            source.value = subscriber
            return ActionDisposable { describe() }
        }.start(next: { _ in }, error: { _ in describe() })
        handle.dispose()
        #expect(
            seen.value == [
                "Subscriber { next: nil, error: nil, completed: nil, disposable: nil, terminated: true }",
                "Subscriber { next: hasValue, error: hasValue, completed: nil, disposable: hasValue, terminated: false }",
            ])
    }

    @Test func aStandaloneSubscriberCallsItsClosures() {
        let log = EventLog()
        let subscriber = Subscriber<Int, NoError>(next: { log.append("next \($0)") }, completed: { log.append("done") })
        subscriber.putNext(1)
        subscriber.putCompletion()
        subscriber.putNext(2)
        #expect(log.events == ["next 1", "done"])
    }

    @Test func concurrentTerminalCallsDeliverExactlyOneTerminalEvent() {
        for _ in 0..<300 {
            let terminals = Shared<Int>(0)
            let lock = Lock()
            let inner = CountingDisposable()
            let source = Shared<Subscriber<Int, String>?>(nil)
            _ = Signal<Int, String> { subscriber in
                source.value = subscriber
                return inner
            }.start(
                error: { _ in lock.locked { terminals.value += 1 } },
                completed: { lock.locked { terminals.value += 1 } }
            )
            let subscriber = UncheckedSendableBox(source.value!)
            race(threads: 4) { index in
                if index % 2 == 0 { subscriber.value.putCompletion() } else { subscriber.value.putError("e") }
            }
            #expect(terminals.value == 1)
            #expect(inner.disposeCount == 1)
        }
    }
}
