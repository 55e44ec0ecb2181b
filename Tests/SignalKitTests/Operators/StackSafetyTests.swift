// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// Stack safety (a deviation from SwiftSignalKit): restart, restartIfError, recurse, retry, then, queue and
// mapToQueue run a million iterations over synchronously completing sources
// in constant stack. Each test here recurses a million times (several frames
// each) under SwiftSignalKit's recursive scheme, far beyond an 8 MB stack.

@Suite struct StackSafetyTests {
    static let iterations = 1_000_000

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

    @Test func restartOverAMillionSynchronousCompletions() {
        let source: Signal<Int, String> = counted { index, subscriber in
            if index <= Self.iterations {
                subscriber.putNext(1)
                subscriber.putCompletion()
            } else {
                subscriber.putError("stop")
            }
        }
        let outcome = Outcome()
        _ = outcome.start(source |> restart)
        #expect(outcome.values == Self.iterations)
        #expect(outcome.terminal == "error stop")
    }

    @Test func restartStoppedByDisposingTheHandleFromTheNextCallback() {
        // The first subscription completes later, from outside; the million
        // synchronous resubscriptions then run inside that completion, and the
        // next callback disposes the handle when the count is reached.
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
        #expect(count.value == Self.iterations)
        #expect(subscriptions.value == Self.iterations + 1)
        handle.value = nil
    }

    @Test func recurseOverAMillionSynchronousCompletions() {
        let source: Signal<Int, String> = counted { index, subscriber in
            if index <= Self.iterations {
                subscriber.putNext(1)
                subscriber.putCompletion()
            } else {
                subscriber.putError("stop")
            }
        }
        let outcome = Outcome()
        _ = outcome.start(source |> recurse(nil))
        #expect(outcome.values == Self.iterations)
        #expect(outcome.terminal == "error stop")
    }

    @Test func restartIfErrorOverAMillionSynchronousErrors() {
        let source: Signal<Int, String> = counted { index, subscriber in
            subscriber.putNext(1)
            if index <= Self.iterations { subscriber.putError("e") } else { subscriber.putCompletion() }
        }
        let outcome = Outcome()
        _ = outcome.start(source |> restartIfError)
        #expect(outcome.values == Self.iterations + 1)
        #expect(outcome.terminal == "completed")
    }

    @Test func restartOrMapErrorOverAMillionSynchronousRestarts() {
        let source: Signal<Int, Int> = counted { index, subscriber in subscriber.putError(index) }
        let outcome = Outcome()
        _ = outcome.start(
            source
                |> restartOrMapError { (index: Int) -> RestartOrMapErrorCondition<String> in
                    index <= Self.iterations ? .restart : .error("after \(index - 1) restarts")
                })
        #expect(outcome.terminal == "error after \(Self.iterations) restarts")
    }

    @Test func retryOverAMillionErrorsOnItsQueue() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let source: Signal<Int, String> = counted { index, subscriber in
            if index <= Self.iterations { subscriber.putError("e") } else { subscriber.putNext(index) }
        }
        let outcome = Outcome()
        let handle = outcome.start(source |> retry(0, maxDelay: 0, onQueue: queue))
        scheduler.run(maxSteps: Self.iterations + 1)
        #expect(outcome.values == 1 && outcome.sum == Self.iterations + 1)
        #expect(scheduler.pendingCount == 0)
        handle.dispose()
    }

    // MARK: - then

    @Test func aLeftFoldedMillionSegmentThenChain() {
        let outcome = Outcome()
        do {
            let chain = (1..<Self.iterations).reduce(Signal<Int, NoError>.single(0)) { chain, value in
                chain |> then(.single(value))
            }
            _ = outcome.start(chain)
        }
        #expect(outcome.values == Self.iterations)
        #expect(outcome.sum == (Self.iterations - 1) * Self.iterations / 2)
        #expect(outcome.terminal == "completed")
    }

    @Test func aRightFoldedMillionSegmentThenChain() {
        let outcome = Outcome()
        do {
            let chain = (0..<Self.iterations).reversed().reduce(Signal<Int, NoError>.complete()) { chain, value in
                .single(value) |> then(chain)
            }
            _ = outcome.start(chain)
        }
        #expect(outcome.values == Self.iterations)
        #expect(outcome.terminal == "completed")
    }

    @Test func aMillionStepRecursiveDeferredThenLoop() {
        @Sendable func loop(_ value: Int) -> Signal<Int, NoError> {
            value == Self.iterations ? .complete() : .single(value) |> then(deferred { loop(value + 1) })
        }
        let outcome = Outcome()
        _ = outcome.start(loop(0))
        #expect(outcome.values == Self.iterations)
        #expect(outcome.terminal == "completed")
    }

    @Test func aMillionSegmentChainFailingHalfway() {
        let outcome = Outcome()
        do {
            let chain = (1..<Self.iterations).reduce(Signal<Int, String>.single(0)) { chain, value in
                chain |> then(value == Self.iterations / 2 ? .fail("half") : .single(value))
            }
            _ = outcome.start(chain)
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

    @Test func aMillionQueuedSynchronousInners() {
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
        #expect(outcome.values == 0 && outcome.terminal == nil)
        head.value?.putCompletion()  // the million queued inners run inside this callback
        head.value = nil
        #expect(outcome.values == Self.iterations)
        #expect(outcome.terminal == "completed")
    }

    @Test func aMillionMapToQueueInners() {
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
        #expect(transforms.value == Self.iterations + 1, "the transform runs eagerly, at arrival")
        #expect(outcome.values == 0)
        head.value?.putCompletion()
        head.value = nil
        #expect(outcome.values == Self.iterations)
        #expect(outcome.terminal == "completed")
    }
}
