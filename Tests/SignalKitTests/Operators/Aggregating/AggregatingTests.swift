// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct ReduceTests {
    // MARK: reduceLeft(value:f:)

    @Test func reduceLeftFoldsAndEmitsOnCompletion() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            for value in 1...3 { s.putNext(value) }
            s.putCompletion()
        }
        _ = log.start(source.signal |> reduceLeft(value: 0, f: { $0 + $1 }))
        #expect(log.events == ["a.subscribe#1", "next 6", "completed", "a.dispose#1"])
    }

    @Test func reduceLeftOfAnAsynchronousSource() {
        let log = EventLog()
        let source = TestSource<String, String>("a", log: log)
        let handle = log.start(source.signal |> reduceLeft(value: "", f: { $0 + $1 }))
        source.putNext("x")
        source.putNext("y")
        #expect(log.take() == ["a.subscribe#1"])
        source.putCompletion()
        #expect(log.take() == ["next xy", "completed", "a.dispose#1"])
        handle.dispose()
        #expect(source.disposeCount == 1)
    }

    @Test func reduceLeftEmitsTheSeedOnEmptyCompletion() {
        let log = EventLog()
        _ = log.start(Signal<Int, String>.complete() |> reduceLeft(value: 42, f: { $0 + $1 }))
        #expect(log.events == ["next 42", "completed"])
    }

    @Test func reduceLeftForwardsOnlyTheError() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putError("e")
        }
        _ = log.start(source.signal |> reduceLeft(value: 0, f: { $0 + $1 }))
        #expect(log.events == ["a.subscribe#1", "error e", "a.dispose#1"])
    }

    @Test func reduceLeftAccumulatorIsPerSubscription() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            s.putNext(5)
            s.putCompletion()
        }
        let signal = source.signal |> reduceLeft(value: 1, f: { $0 * $1 })
        _ = log.start(signal, prefix: "1:")
        _ = log.start(signal, prefix: "2:")
        #expect(
            log.events == [
                "a.subscribe#1", "1:next 5", "1:completed", "a.dispose#1",
                "a.subscribe#2", "2:next 5", "2:completed", "a.dispose#2",
            ])
    }

    @Test func reduceLeftCallsTheFunctionWithAccumulatorThenValue() {
        let log = EventLog()
        let signal = Signal<Int, NoError> { s in
            s.putNext(1)
            s.putNext(2)
            s.putCompletion()
            return EmptyDisposable
        }
        _ = log.start(
            signal
                |> reduceLeft(
                    value: 10,
                    f: { accumulator, value in
                        log.append("f(\(accumulator), \(value))")
                        return accumulator - value
                    }))
        #expect(log.events == ["f(10, 1)", "f(9, 2)", "next 7", "completed"])
    }

    @Test func reduceLeftDisposalBeforeCompletionEmitsNothing() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> reduceLeft(value: 0, f: { $0 + $1 }))
        source.putNext(1)
        handle.dispose()
        source.putCompletion()
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
    }

    // MARK: reduceLeft(value:f:) with intermediate emissions

    @Test func reduceLeftWithEmitDeliversIntermediateValuesSynchronously() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(
            source.signal
                |> reduceLeft(
                    value: 0,
                    f: { (accumulator: Int, value: Int, emit: (Int) -> Void) -> Int in
                        let sum = accumulator + value
                        log.append("before emit \(sum)")
                        if value % 2 == 0 { emit(sum) }
                        log.append("after emit \(sum)")
                        return sum
                    }))
        source.putNext(1)
        source.putNext(2)
        source.putNext(4)
        source.putCompletion()
        #expect(
            log.events == [
                "a.subscribe#1",
                "before emit 1", "after emit 1",
                "before emit 3", "next 3", "after emit 3",
                "before emit 7", "next 7", "after emit 7",
                "next 7", "completed", "a.dispose#1",
            ])
        handle.dispose()
    }

    @Test func reduceLeftWithEmitEmitsTheSeedOnEmptyCompletionAndForwardsErrors() {
        let log = EventLog()
        let sum: @Sendable (Int, Int, (Int) -> Void) -> Int = { accumulator, value, emit in
            emit(value)
            return accumulator + value
        }
        _ = log.start(Signal<Int, String>.complete() |> reduceLeft(value: 3, f: sum))
        #expect(log.take() == ["next 3", "completed"])
        let failing = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putError("e")
        }
        _ = log.start(failing.signal |> reduceLeft(value: 3, f: sum))
        #expect(log.take() == ["a.subscribe#1", "next 1", "error e", "a.dispose#1"])
    }

    // MARK: reduceLeft(_:generator:)

    @Test func generatorFoldWithSynchronousSteps() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            for value in 1...3 { s.putNext(value) }
            s.putCompletion()
        }
        let steps = StepSignals(log: log)
        _ = log.start(source.signal |> reduceLeft(0, generator: steps.synchronous { $0 + $1 }))
        #expect(
            log.events == [
                "a.subscribe#1",
                "g(0,1).subscribe", "next 1", "g(0,1).dispose",
                "g(1,2).subscribe", "next 3", "g(1,2).dispose",
                "g(3,3).subscribe", "next 6", "g(3,3).dispose",
                "next 6", "completed", "a.dispose#1",
            ])
    }

    @Test func generatorFoldQueuesValuesWhileAStepRunsAndWaitsForThemBeforeCompleting() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let steps = StepSignals(log: log)
        let handle = log.start(source.signal |> reduceLeft(0, generator: steps.asynchronous))
        source.putNext(1)
        source.putNext(2)
        source.putNext(3)
        source.putCompletion()
        #expect(log.take() == ["a.subscribe#1", "g(0,1).subscribe", "a.dispose#1"])

        // The first step sets the state without emitting.
        steps.finish(with: (10, .None))
        // The next queued value runs with the state current when it is dequeued.
        #expect(log.take() == ["g(10,2).subscribe", "g(0,1).dispose"])
        steps.finish(with: (12, .Some(12)))
        #expect(log.take() == ["next 12", "g(12,3).subscribe", "g(10,2).dispose"])
        steps.finish(with: (15, .Some(15)))
        #expect(log.take() == ["next 15", "next 15", "completed", "g(12,3).dispose"])
        handle.dispose()
        #expect(log.take() == [])
        #expect(source.disposeCount == 1)
    }

    @Test func generatorFoldCompletesAtOnceWhenIdle() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let steps = StepSignals(log: log)
        _ = log.start(source.signal |> reduceLeft(0, generator: steps.asynchronous))
        source.putNext(1)
        steps.finish(with: (1, .None))
        #expect(log.take() == ["a.subscribe#1", "g(0,1).subscribe", "g(0,1).dispose"])
        source.putCompletion()
        #expect(log.take() == ["next 1", "completed", "a.dispose#1"])
    }

    @Test func generatorFoldEmitsTheSeedOnEmptyCompletion() {
        let log = EventLog()
        let steps = StepSignals(log: log)
        _ = log.start(Signal<Int, String>.complete() |> reduceLeft(7, generator: steps.asynchronous))
        #expect(log.events == ["next 7", "completed"])
    }

    @Test func generatorFoldDisposesTheCurrentStepThenUpstreamAndNeverStartsQueuedValues() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let steps = StepSignals(log: log)
        let handle = log.start(source.signal |> reduceLeft(0, generator: steps.asynchronous))
        source.putNext(1)
        source.putNext(2)
        handle.dispose()
        #expect(log.take() == ["a.subscribe#1", "g(0,1).subscribe", "g(0,1).dispose", "a.dispose#1"])
        steps.finish(with: (1, .Some(1)))
        source.putNext(3)
        #expect(log.take() == [])
        #expect(steps.subscriberCount == 1)
    }

    @Test func generatorFoldForwardsAStepErrorAndDropsQueuedValues() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let steps = StepSignals(log: log)
        let handle = log.start(source.signal |> reduceLeft(0, generator: steps.asynchronous))
        source.putNext(1)
        source.putNext(2)
        steps.fail("step failed")
        #expect(
            log.take() == ["a.subscribe#1", "g(0,1).subscribe", "error step failed", "g(0,1).dispose", "a.dispose#1"])
        source.putCompletion()
        #expect(log.take() == [])
        #expect(steps.subscriberCount == 1)
        handle.dispose()
    }

    @Test func generatorFoldForwardsAnUpstreamErrorWhileAStepRuns() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let steps = StepSignals(log: log)
        _ = log.start(source.signal |> reduceLeft(0, generator: steps.asynchronous))
        source.putNext(1)
        source.putError("upstream failed")
        #expect(
            log.events == ["a.subscribe#1", "g(0,1).subscribe", "error upstream failed", "g(0,1).dispose", "a.dispose#1"])
    }

    @Test func generatorFoldQueuesAValueSentReentrantlyFromAPassthrough() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let steps = StepSignals(log: log)
        let handle = (source.signal |> reduceLeft(0, generator: steps.synchronous { $0 + $1 })).start(
            next: { value in
                log.append("next \(value)")
                if value == 1 { source.putNext(10) }
                log.append("end \(value)")
            },
            completed: { log.append("completed") }
        )
        source.putNext(1)
        source.putCompletion()
        #expect(
            log.events == [
                "a.subscribe#1",
                "g(0,1).subscribe", "next 1", "end 1", "g(0,1).dispose",
                "g(1,10).subscribe", "next 11", "end 11", "g(1,10).dispose",
                "next 11", "end 11", "completed", "a.dispose#1",
            ])
        handle.dispose()
    }

    @Test func generatorFoldDrainsManySynchronousStepsInConstantStack() {
        // Values queued behind an asynchronous first step, then drained
        // through synchronously completing steps. A recursive drain would
        // nest one subscription per value (see `StackSafety`).
        let count = StackSafety.iterations
        let (completedBeforeFirstStep, result, completed) = StackSafety.run {
            let log = EventLog()
            let source = TestSource<Int, String>("a", log: log)
            let first = Shared<Subscriber<(Int, Passthrough<Int>), String>?>(nil)
            let result = Shared<[Int]>([])
            let completed = Shared(false)
            let handle =
                (source.signal
                |> reduceLeft(
                    0,
                    generator: { (accumulator: Int, value: Int) in
                        if value == 0 {
                            return Signal { subscriber in
                                first.value = subscriber
                                return EmptyDisposable
                            }
                        }
                        return .single((accumulator + value, .None))
                    })).start(next: { result.value.append($0) }, completed: { completed.value = true })
            for value in 0...count { source.putNext(value) }
            source.putCompletion()
            let completedBeforeFirstStep = completed.value
            first.value?.putNext((0, .None))
            first.value?.putCompletion()
            first.value = nil
            handle.dispose()
            return (completedBeforeFirstStep, result.value, completed.value)
        }
        #expect(completedBeforeFirstStep == false)
        #expect(result == [count * (count + 1) / 2])
        #expect(completed)
    }

    @Test func passthroughEquality() {
        #expect(Passthrough<Int>.Some(1) == .Some(1))
        #expect(Passthrough<Int>.None != .Some(1))
    }
}

/// Generator steps for `reduceLeft(_:generator:)` that log
/// `"g(acc,value).subscribe"` / `"g(acc,value).dispose"`.
final class StepSignals: @unchecked Sendable {
    // `@unchecked Sendable`: used from the test's thread only.
    let log: EventLog
    private(set) var subscribers: [Subscriber<(Int, Passthrough<Int>), String>] = []

    init(log: EventLog) {
        self.log = log
    }

    var subscriberCount: Int { subscribers.count }

    /// Steps that emit `(f(acc, value), .Some(f(acc, value)))` and complete
    /// inside their generator.
    func synchronous(_ f: @escaping @Sendable (Int, Int) -> Int)
        -> @Sendable (Int, Int) -> Signal<(Int, Passthrough<Int>), String>
    {
        let log = self.log
        return { accumulator, value in
            Signal { subscriber in
                let name = "g(\(accumulator),\(value))"
                log.append("\(name).subscribe")
                let next = f(accumulator, value)
                subscriber.putNext((next, .Some(next)))
                subscriber.putCompletion()
                return ActionDisposable { log.append("\(name).dispose") }
            }
        }
    }

    /// Steps that wait for `finish` / `fail`.
    /// (Captures `self` weakly: `self` holds the step subscribers, which
    /// lead back to the fold and its generator.)
    var asynchronous: @Sendable (Int, Int) -> Signal<(Int, Passthrough<Int>), String> {
        let log = self.log
        return { [weak self] accumulator, value in
            Signal { [weak self] subscriber in
                let name = "g(\(accumulator),\(value))"
                log.append("\(name).subscribe")
                self?.subscribers.append(subscriber)
                return ActionDisposable { log.append("\(name).dispose") }
            }
        }
    }

    /// Emits `step` from the latest step signal, then completes it.
    func finish(with step: (Int, Passthrough<Int>)) {
        subscribers.last?.putNext(step)
        subscribers.last?.putCompletion()
    }

    func fail(_ error: String) {
        subscribers.last?.putError(error)
    }
}
