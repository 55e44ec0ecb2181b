// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct SideEffectsTests {
    // MARK: beforeNext

    @Test func beforeNextRunsBeforeEachValue() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putNext(2)
            s.putCompletion()
        }
        _ = log.start(source.signal |> beforeNext { log.append("before \($0)") })
        #expect(
            log.events == ["a.subscribe#1", "before 1", "next 1", "before 2", "next 2", "completed", "a.dispose#1"])
    }

    @Test func beforeNextIgnoresTheResultAndSkipsTerminalEvents() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(
            source.signal
                |> beforeNext { (value: Int) -> String in
                    log.append("before \(value)")
                    return "ignored"
                })
        source.putNext(1)
        source.putError("e")
        #expect(log.events == ["a.subscribe#1", "before 1", "next 1", "error e", "a.dispose#1"])
        handle.dispose()
        #expect(source.disposeCount == 1)
    }

    @Test func beforeNextDisposalDisposesUpstream() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> beforeNext { log.append("before \($0)") })
        handle.dispose()
        source.putNext(1)
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
    }

    // MARK: afterNext

    @Test func afterNextRunsAfterEachValue() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> afterNext { log.append("after \($0)") })
        source.putNext(1)
        source.putNext(2)
        source.putCompletion()
        #expect(
            log.events == ["a.subscribe#1", "next 1", "after 1", "next 2", "after 2", "completed", "a.dispose#1"])
        handle.dispose()
    }

    @Test func afterNextRunsEvenAfterTakeOneDisposedUpstream() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> afterNext { log.append("after \($0)") } |> take(1))
        source.putNext(1)
        source.putNext(2)
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.dispose#1", "after 1"])
        handle.dispose()
        #expect(source.disposeCount == 1)
    }

    @Test func afterNextSkipsTerminalEvents() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in s.putError("e") }
        _ = log.start(source.signal |> afterNext { log.append("after \($0)") })
        #expect(log.events == ["a.subscribe#1", "error e", "a.dispose#1"])
    }

    // MARK: beforeStarted

    @Test func beforeStartedRunsAtEachSubscriptionBeforeUpstreamIsSubscribed() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in s.putNext(1) }
        let signal = source.signal |> beforeStarted { log.append("started") }
        #expect(log.events == [], "nothing runs before start")
        let first = log.start(signal, prefix: "1:")
        let second = log.start(signal, prefix: "2:")
        first.dispose()
        second.dispose()
        #expect(
            log.events == [
                "started", "a.subscribe#1", "1:next 1", "started", "a.subscribe#2", "2:next 1", "a.dispose#1",
                "a.dispose#2",
            ])
    }

    // MARK: beforeCompleted

    @Test func beforeCompletedRunsBeforeTheCompletion() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        _ = log.start(source.signal |> beforeCompleted { log.append("before completed") })
        source.putNext(1)
        source.putCompletion()
        #expect(log.events == ["a.subscribe#1", "next 1", "before completed", "completed", "a.dispose#1"])
    }

    @Test func beforeCompletedDoesNotRunOnErrorOrDisposal() {
        let log = EventLog()
        let failing = TestSource<Int, String>("a", log: log) { s in s.putError("e") }
        _ = log.start(failing.signal |> beforeCompleted { log.append("before completed") })
        let disposed = TestSource<Int, String>("b", log: log)
        log.start(disposed.signal |> beforeCompleted { log.append("before completed") }).dispose()
        #expect(log.events == ["a.subscribe#1", "error e", "a.dispose#1", "b.subscribe#1", "b.dispose#1"])
    }

    // MARK: afterCompleted

    @Test func afterCompletedOfAnAsynchronousSourceRunsAfterUpstreamWasDisposed() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        _ = log.start(source.signal |> afterCompleted { log.append("after completed") })
        source.putCompletion()
        #expect(log.events == ["a.subscribe#1", "completed", "a.dispose#1", "after completed"])
    }

    @Test func afterCompletedOfASourceCompletingInsideItsGeneratorRunsBeforeItsDisposal() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in s.putCompletion() }
        _ = log.start(source.signal |> afterCompleted { log.append("after completed") })
        #expect(log.events == ["a.subscribe#1", "completed", "after completed", "a.dispose#1"])
    }

    @Test func afterCompletedDoesNotRunOnErrorOrDisposal() {
        let log = EventLog()
        let failing = TestSource<Int, String>("a", log: log)
        _ = log.start(failing.signal |> afterCompleted { log.append("after completed") })
        failing.putError("e")
        let disposed = TestSource<Int, String>("b", log: log)
        log.start(disposed.signal |> afterCompleted { log.append("after completed") }).dispose()
        #expect(log.events == ["a.subscribe#1", "error e", "a.dispose#1", "b.subscribe#1", "b.dispose#1"])
    }

    // MARK: afterDisposed

    @Test func afterDisposedRunsAfterUpstreamOnExplicitDisposal() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> afterDisposed { log.append("disposed") })
        source.putNext(1)
        handle.dispose()
        handle.dispose()
        #expect(log.events == ["a.subscribe#1", "next 1", "a.dispose#1", "disposed"])
    }

    @Test func afterDisposedRunsOnceAfterAsynchronousCompletion() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> afterDisposed { log.append("disposed") })
        source.putCompletion()
        handle.dispose()
        #expect(log.events == ["a.subscribe#1", "completed", "a.dispose#1", "disposed"])
    }

    @Test func afterDisposedRunsAfterAnError() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        _ = log.start(source.signal |> afterDisposed { log.append("disposed") })
        source.putError("e")
        #expect(log.events == ["a.subscribe#1", "error e", "a.dispose#1", "disposed"])
    }

    @Test func afterDisposedRunsAfterSynchronousCompletion() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putCompletion()
        }
        _ = log.start(
            source.signal
                |> afterDisposed { () -> Int in
                    log.append("disposed")
                    return 0
                })
        log.append("start returned")
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.dispose#1", "disposed", "start returned"])
    }

    @Test func afterDisposedDoesNotRunWhileTheSubscriptionIsAlive() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> afterDisposed { log.append("disposed") })
        source.putNext(1)
        #expect(log.take() == ["a.subscribe#1", "next 1"])
        handle.dispose()
        #expect(log.take() == ["a.dispose#1", "disposed"])
    }

    // MARK: withState

    @Test func withStateCallsHooksBeforeForwardingAndDisposedAfterUpstream() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let counter = Shared(0)
        let signal = withState(
            source.signal,
            { () -> String in
                counter.value += 1
                log.append("state \(counter.value)")
                return "s\(counter.value)"
            },
            next: { value, state in log.append("hook next \(value) \(state)") },
            error: { error, state in log.append("hook error \(error) \(state)") },
            completed: { state in log.append("hook completed \(state)") },
            disposed: { state in log.append("hook disposed \(state)") }
        )
        _ = log.start(signal)
        source.putNext(1)
        source.putCompletion()
        #expect(
            log.events == [
                "state 1", "a.subscribe#1",
                "hook next 1 s1", "next 1",
                "hook completed s1", "completed",
                "a.dispose#1", "hook disposed s1",
            ])
    }

    @Test func withStateOnErrorAndExplicitDisposal() {
        let log = EventLog()
        let failing = TestSource<Int, String>("a", log: log)
        let hooks = { (signal: Signal<Int, String>, name: String) in
            withState(
                signal,
                { name },
                error: { error, state in log.append("hook error \(error) \(state)") },
                disposed: { state in log.append("hook disposed \(state)") }
            )
        }
        _ = log.start(hooks(failing.signal, "x"))
        failing.putError("e")
        #expect(log.take() == ["a.subscribe#1", "hook error e x", "error e", "a.dispose#1", "hook disposed x"])

        let disposed = TestSource<Int, String>("b", log: log)
        let handle = log.start(hooks(disposed.signal, "y"))
        handle.dispose()
        handle.dispose()
        disposed.putNext(1)
        #expect(log.take() == ["b.subscribe#1", "b.dispose#1", "hook disposed y"])
    }

    @Test func withStateDefaultHooksForwardEverything() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putCompletion()
        }
        _ = log.start(withState(source.signal, { 0 }))
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.dispose#1"])
    }

    @Test func withStateCreatesOneStatePerSubscription() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in s.putNext(1) }
        let created = Shared(0)
        let signal = withState(
            source.signal,
            { () -> Int in
                created.value += 1
                return created.value
            },
            next: { value, state in log.append("state \(state) saw \(value)") }
        )
        let first = log.start(signal)
        let second = log.start(signal)
        first.dispose()
        second.dispose()
        #expect(
            log.events == [
                "a.subscribe#1", "state 1 saw 1", "next 1", "a.subscribe#2", "state 2 saw 1", "next 1", "a.dispose#1",
                "a.dispose#2",
            ])
    }

    @Test func withStateReleasesTheStateOnceTheSubscriptionEnded() {
        let state = WeakBox<Probe>(nil)
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let signal = withState(
            source.signal,
            { () -> Probe in
                let probe = Probe()
                state.value = probe
                return probe
            })
        let handle = log.start(signal)
        #expect(state.value != nil)
        handle.dispose()
        source.releaseSubscribers()
        #expect(state.value == nil)
    }
}
