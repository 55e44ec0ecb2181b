// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct LoopTests {
    /// A `once` closure that returns `source.signal` `iterations` times, then
    /// nil, logging each call and its argument. It holds the source weakly:
    /// the source holds its subscribers, which lead back to the loop.
    private func counted(
        _ source: TestSource<Int, String>,
        iterations: Int,
        log: EventLog
    ) -> @Sendable (SignalFeedbackLoopState<Int>) -> Signal<Int, String>? {
        let calls = Shared(0)
        return { [weak source] state in
            let call = calls.withLock {
                $0 += 1; return $0
            }
            switch state {
            case .initial: log.append("once(.initial)")
            case .loop(let value): log.append("once(.loop(\(value)))")
            }
            return call <= iterations ? source?.signal : nil
        }
    }

    @Test func asynchronousIterationsRunUntilOnceReturnsNil() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let reduced = Shared(0)
        let loop: Signal<Never, String> = feedbackLoop(
            once: counted(source, iterations: 2, log: log),
            reduce: { a, b in
                reduced.value += 1
                return a + b
            }
        )
        let handle = log.start(loop)
        #expect(log.take() == ["once(.initial)", "a.subscribe#1"])
        source.putNext(10)
        source.putNext(20)
        #expect(log.take() == [], "iteration values are not emitted")
        source.putCompletion()
        // The next iteration is subscribed inside the completion callback,
        // before the finished one is disposed.
        #expect(log.take() == ["once(.initial)", "a.subscribe#2", "a.dispose#1"])
        source.putNext(30)
        source.putCompletion()
        #expect(log.take() == ["once(.initial)", "completed", "a.dispose#2"])
        #expect(reduced.value == 0, "legacy: reduce is never called")
        handle.dispose()
        #expect(log.take() == [])
        #expect(source.disposeCount == 2)
    }

    @Test func onceReturningNilAtOnceCompletes() {
        let log = EventLog()
        let loop: Signal<Int, String> = feedbackLoop(
            once: { (_: SignalFeedbackLoopState<Int>) -> Signal<Int, String>? in
                log.append("once")
                return nil
            },
            reduce: { $0 + $1 }
        )
        _ = log.start(loop)
        #expect(log.events == ["once", "completed"])
    }

    @Test func synchronousIterationsRunInALoopWithoutNesting() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putCompletion()
        }
        let loop: Signal<Int, String> = feedbackLoop(once: counted(source, iterations: 3, log: log), reduce: { $0 + $1 })
        _ = log.start(loop)
        log.append("start returned")
        // Trampolined: each finished iteration is disposed (when its generator
        // returns) before the next is subscribed.
        #expect(
            log.events == [
                "once(.initial)", "a.subscribe#1", "a.dispose#1",
                "once(.initial)", "a.subscribe#2", "a.dispose#2",
                "once(.initial)", "a.subscribe#3", "a.dispose#3",
                "once(.initial)", "completed", "start returned",
            ])
    }

    @Test func anIterationErrorIsForwardedAndStopsTheLoop() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let loop: Signal<Int, String> = feedbackLoop(once: counted(source, iterations: 5, log: log), reduce: { $0 + $1 })
        _ = log.start(loop)
        source.putCompletion()
        source.putError("e")
        #expect(
            log.events == [
                "once(.initial)", "a.subscribe#1",
                "once(.initial)", "a.subscribe#2", "a.dispose#1",
                "error e", "a.dispose#2",
            ])
    }

    @Test func aSynchronousIterationErrorStopsTheLoop() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in s.putError("e") }
        let loop: Signal<Int, String> = feedbackLoop(once: counted(source, iterations: 5, log: log), reduce: { $0 + $1 })
        _ = log.start(loop)
        #expect(log.events == ["once(.initial)", "a.subscribe#1", "error e", "a.dispose#1"])
    }

    @Test func disposalDisposesTheCurrentIterationAndStops() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let loop: Signal<Int, String> = feedbackLoop(once: counted(source, iterations: 5, log: log), reduce: { $0 + $1 })
        let handle = log.start(loop)
        source.putCompletion()
        handle.dispose()
        handle.dispose()
        source.putCompletion()
        #expect(
            log.events == [
                "once(.initial)", "a.subscribe#1",
                "once(.initial)", "a.subscribe#2", "a.dispose#1",
                "a.dispose#2",
            ])
    }

    @Test func disposalFromInsideTheCompletionCallbackStopsTheLoop() {
        let log = EventLog()
        let handle = Shared<(any Disposable)?>(nil)
        let source = TestSource<Int, String>("a", log: log)
        let calls = Shared(0)
        let loop: Signal<Int, String> = feedbackLoop(
            once: { [weak source] (_: SignalFeedbackLoopState<Int>) -> Signal<Int, String>? in
                calls.value += 1
                if calls.value == 2 { handle.value?.dispose() }
                return source?.signal
            },
            reduce: { $0 + $1 }
        )
        handle.value = log.start(loop)
        source.putCompletion()
        // `once` disposed the loop while it ran: the signal it returned is
        // subscribed and disposed at once, and nothing more runs.
        #expect(log.events == ["a.subscribe#1", "a.dispose#1", "a.subscribe#2", "a.dispose#2"])
        #expect(calls.value == 2)
        source.putCompletion()
        #expect(calls.value == 2)
        handle.value = nil
    }

    @Test func manySynchronousIterationsRunInConstantStack() {
        // Iterations completing inside their generators: a recursive loop
        // would nest one subscription per iteration (see `StackSafety`).
        let iterations = StackSafety.iterations
        let (calls, completed) = StackSafety.run {
            let calls = Shared(0)
            let completed = Shared(false)
            let loop: Signal<Int, NoError> = feedbackLoop(
                once: { (_: SignalFeedbackLoopState<Int>) -> Signal<Int, NoError>? in
                    calls.value += 1
                    return calls.value <= iterations ? .single(calls.value) : nil
                },
                reduce: { $0 + $1 }
            )
            let handle = loop.start(completed: { completed.value = true })
            handle.dispose()
            return (calls.value, completed.value)
        }
        #expect(completed)
        #expect(calls == iterations + 1)
    }

    @Test func theLoopReleasesEverythingAfterCompletion() {
        let onceProbe = WeakBox<Probe>(nil)
        let log = EventLog()
        do {
            let source = TestSource<Int, String>("a", log: log)
            do {
                let object = Probe()
                onceProbe.value = object
                let calls = Shared(0)
                let loop: Signal<Int, String> = feedbackLoop(
                    once: { [weak source] (_: SignalFeedbackLoopState<Int>) -> Signal<Int, String>? in
                        object.touch()
                        calls.value += 1
                        return calls.value <= 2 ? source?.signal : nil
                    },
                    reduce: { $0 + $1 }
                )
                _ = log.start(loop)
            }
            source.putCompletion()
            source.putCompletion()
            #expect(log.take() == ["a.subscribe#1", "a.subscribe#2", "a.dispose#1", "completed", "a.dispose#2"])
        }
        #expect(onceProbe.value == nil, "no retain cycle keeps the loop alive")
    }

    @Test func theLoopReleasesEverythingAfterDisposal() {
        let onceProbe = WeakBox<Probe>(nil)
        let log = EventLog()
        do {
            let source = TestSource<Int, String>("a", log: log)
            do {
                let object = Probe()
                onceProbe.value = object
                let loop: Signal<Int, String> = feedbackLoop(
                    once: { [weak source] (_: SignalFeedbackLoopState<Int>) -> Signal<Int, String>? in
                        object.touch()
                        return source?.signal
                    },
                    reduce: { $0 + $1 }
                )
                let handle = log.start(loop)
                source.putCompletion()
                handle.dispose()
            }
            #expect(log.take() == ["a.subscribe#1", "a.subscribe#2", "a.dispose#1", "a.dispose#2"])
        }
        #expect(onceProbe.value == nil, "no retain cycle keeps the loop alive")
    }

    @Test func stateCasesCarryTheirValue() {
        let state = SignalFeedbackLoopState<Int>.loop(3)
        if case .loop(let value) = state {
            #expect(value == 3)
        } else {
            Issue.record("expected .loop")
        }
    }
}
