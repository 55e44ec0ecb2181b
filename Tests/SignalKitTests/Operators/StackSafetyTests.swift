// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Stack safety (a deviation from SwiftSignalKit): restart, restartIfError, recurse, retry, then, queue and
// mapToQueue run their iterations over synchronously completing sources in
// constant stack. Each test here runs `StackSafety.iterations` (100,000; a
// million in the release pass) on a 1 MiB stack: SwiftSignalKit's recursive
// scheme (several frames per iteration) overflows it within a few thousand.

@Suite struct StackSafetyTests {
    static let iterations = StackSafety.iterations

    /// A source that, at its n-th subscription, runs `body(n, subscriber)`
    /// (synchronous emissions). Lightweight: no log, nothing retained.
    private func counted<T, E>(_ body: @escaping @Sendable (Int, Subscriber<T, E>) -> Void) -> Signal<T, E> {
        let count = Shared(0)
        return Signal { subscriber in
            let index = count.withLock {
                $0 += 1; return $0
            }
            body(index, subscriber)
            return EmptyDisposable
        }
    }

    /// Counts values and remembers the terminal event.
    private final class Outcome: @unchecked Sendable {
        var values = 0
        var sum = 0
        var terminal: String?

        func start<E>(_ signal: Signal<Int, E>) -> any Disposable {
            signal.start(
                next: { value in
                    self.values += 1
                    self.sum &+= value
                },
                error: { self.terminal = "error \($0)" },
                completed: { self.terminal = "completed" }
            )
        }
    }

    // MARK: - Restart family

    /// Sends 1 and completes at each of its first `iterations`
    /// subscriptions, then fails with "stop".
    private func completingThenStopping() -> Signal<Int, String> {
        counted { index, subscriber in
            if index <= Self.iterations {
                subscriber.putNext(1)
                subscriber.putCompletion()
            } else {
                subscriber.putError("stop")
            }
        }
    }

    @Test func restartOverManySynchronousCompletions() {
        let outcome = StackSafety.run {
            let outcome = Outcome()
            _ = outcome.start(completingThenStopping() |> restart)
            return outcome
        }
        #expect(outcome.values == Self.iterations)
        #expect(outcome.terminal == "error stop")
    }

    @Test func restartStoppedByDisposingTheHandleFromTheNextCallback() {
        // The first subscription completes later, from outside; the
        // synchronous resubscriptions then run inside that completion, and the
        // next callback disposes the handle when the count is reached.
        let (count, subscriptions) = StackSafety.run {
            let first = Shared<Subscriber<Int, NoError>?>(nil)
            let subscriptions = Shared(0)
            let source = Signal<Int, NoError> { subscriber in
                subscriptions.value += 1
                if subscriptions.value == 1 {
                    first.value = subscriber
                } else {
                    subscriber.putNext(subscriptions.value)
                    subscriber.putCompletion()
                }
                return EmptyDisposable
            }
            let handle = Shared<(any Disposable)?>(nil)
            let count = Shared(0)
            handle.value = (source |> restart).start(next: { _ in
                count.value += 1
                if count.value == Self.iterations { handle.value?.dispose() }
            })
            first.value?.putCompletion()
            first.value = nil
            handle.value = nil
            return (count.value, subscriptions.value)
        }
        #expect(count == Self.iterations)
        #expect(subscriptions == Self.iterations + 1)
    }

    @Test func recurseOverManySynchronousCompletions() {
        let outcome = StackSafety.run {
            let outcome = Outcome()
            _ = outcome.start(completingThenStopping() |> recurse(nil))
            return outcome
        }
        #expect(outcome.values == Self.iterations)
        #expect(outcome.terminal == "error stop")
    }

    @Test func restartIfErrorOverManySynchronousErrors() {
        let outcome = StackSafety.run {
            let source: Signal<Int, String> = counted { index, subscriber in
                subscriber.putNext(1)
                if index <= Self.iterations { subscriber.putError("e") } else { subscriber.putCompletion() }
            }
            let outcome = Outcome()
            _ = outcome.start(source |> restartIfError)
            return outcome
        }
        #expect(outcome.values == Self.iterations + 1)
        #expect(outcome.terminal == "completed")
    }

    @Test func restartOrMapErrorOverManySynchronousRestarts() {
        let outcome = StackSafety.run {
            let source: Signal<Int, Int> = counted { index, subscriber in subscriber.putError(index) }
            let outcome = Outcome()
            _ = outcome.start(
                source
                    |> restartOrMapError { (index: Int) -> RestartOrMapErrorCondition<String> in
                        index <= Self.iterations ? .restart : .error("after \(index - 1) restarts")
                    })
            return outcome
        }
        #expect(outcome.terminal == "error after \(Self.iterations) restarts")
    }

    @Test func retryOverManyErrorsOnItsQueue() {
        let (outcome, pending) = StackSafety.run {
            let scheduler = VirtualTimeScheduler()
            let queue = scheduler.makeQueue()
            let source: Signal<Int, String> = counted { index, subscriber in
                if index <= Self.iterations { subscriber.putError("e") } else { subscriber.putNext(index) }
            }
            let outcome = Outcome()
            let handle = outcome.start(source |> retry(0, maxDelay: 0, onQueue: queue))
            scheduler.run(maxSteps: Self.iterations + 1)
            let pending = scheduler.pendingCount
            handle.dispose()
            return (outcome, pending)
        }
        #expect(outcome.values == 1 && outcome.sum == Self.iterations + 1)
        #expect(pending == 0)
    }

    // MARK: - then

    @Test func aLeftFoldedLongThenChain() {
        let outcome = StackSafety.run {
            let outcome = Outcome()
            do {
                let chain = (1..<Self.iterations).reduce(Signal<Int, NoError>.single(0)) { chain, value in
                    chain |> then(.single(value))
                }
                _ = outcome.start(chain)
            }
            return outcome
        }
        #expect(outcome.values == Self.iterations)
        #expect(outcome.sum == (Self.iterations - 1) * Self.iterations / 2)
        #expect(outcome.terminal == "completed")
    }

    @Test func aRightFoldedLongThenChain() {
        let outcome = StackSafety.run {
            let outcome = Outcome()
            do {
                let chain = (0..<Self.iterations).reversed().reduce(Signal<Int, NoError>.complete()) { chain, value in
                    .single(value) |> then(chain)
                }
                _ = outcome.start(chain)
            }
            return outcome
        }
        #expect(outcome.values == Self.iterations)
        #expect(outcome.terminal == "completed")
    }

    @Test func aLongRecursiveDeferredThenLoop() {
        let outcome = StackSafety.run {
            @Sendable func loop(_ value: Int) -> Signal<Int, NoError> {
                value == Self.iterations ? .complete() : .single(value) |> then(deferred { loop(value + 1) })
            }
            let outcome = Outcome()
            _ = outcome.start(loop(0))
            return outcome
        }
        #expect(outcome.values == Self.iterations)
        #expect(outcome.terminal == "completed")
    }

    @Test func aLongThenChainFailingHalfway() {
        let outcome = StackSafety.run {
            let outcome = Outcome()
            do {
                let chain = (1..<Self.iterations).reduce(Signal<Int, String>.single(0)) { chain, value in
                    chain |> then(value == Self.iterations / 2 ? .fail("half") : .single(value))
                }
                _ = outcome.start(chain)
            }
            return outcome
        }
        #expect(outcome.values == Self.iterations / 2)
        #expect(outcome.terminal == "error half")
    }

    // MARK: - queue, mapToQueue

    /// A head inner that completes when the test says so (through `head`).
    private func asynchronousHead(_ head: Shared<Subscriber<Int, NoError>?>) -> Signal<Int, NoError> {
        Signal { subscriber in
            head.value = subscriber
            return EmptyDisposable
        }
    }

    @Test func manyQueuedSynchronousInners() {
        let (before, outcome) = StackSafety.run {
            let head = Shared<Subscriber<Int, NoError>?>(nil)
            let headSignal = asynchronousHead(head)
            let inner = Signal<Int, NoError>.single(1)
            let outer = Signal<Signal<Int, NoError>, NoError> { subscriber in
                subscriber.putNext(headSignal)
                for _ in 0..<Self.iterations { subscriber.putNext(inner) }
                subscriber.putCompletion()
                return EmptyDisposable
            }
            let outcome = Outcome()
            _ = outcome.start(outer |> queue)
            let before = (outcome.values, outcome.terminal)
            head.value?.putCompletion()  // the queued inners run inside this callback
            head.value = nil
            return (before, outcome)
        }
        #expect(before.0 == 0 && before.1 == nil)
        #expect(outcome.values == Self.iterations)
        #expect(outcome.terminal == "completed")
    }

    @Test func manyMapToQueueInners() {
        let (transforms, valuesBefore, outcome) = StackSafety.run {
            let head = Shared<Subscriber<Int, NoError>?>(nil)
            let headSignal = asynchronousHead(head)
            let inner = Signal<Int, NoError>.single(1)
            let transforms = Shared(0)
            let outer = Signal<Int, NoError> { subscriber in
                for index in 0...Self.iterations { subscriber.putNext(index) }
                subscriber.putCompletion()
                return EmptyDisposable
            }
            let outcome = Outcome()
            _ = outcome.start(
                outer
                    |> mapToQueue { (index: Int) -> Signal<Int, NoError> in
                        transforms.value += 1
                        return index == 0 ? headSignal : inner
                    })
            let valuesBefore = outcome.values
            head.value?.putCompletion()
            head.value = nil
            return (transforms.value, valuesBefore, outcome)
        }
        #expect(transforms == Self.iterations + 1, "the transform runs eagerly, at arrival")
        #expect(valuesBefore == 0)
        #expect(outcome.values == Self.iterations)
        #expect(outcome.terminal == "completed")
    }
}
