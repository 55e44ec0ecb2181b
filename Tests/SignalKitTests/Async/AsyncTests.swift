// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

@Suite struct AsyncTests {
    @Test func getReturnsTheFirstValueAndDisposesTheSubscription() async {
        let log = EventLog()
        let source = TestSource<Int, NoError>("a", log: log) { subscriber in
            subscriber.putNext(1)
            subscriber.putNext(2)
        }
        let value = await source.signal.get()
        #expect(value == 1)
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
    }

    @Test func getWaitsForAnAsynchronousValue() async {
        let log = EventLog()
        let source = TestSource<Int, NoError>("a", log: log)
        let producer = Queue(name: "producer")
        async let value = source.signal.get()
        while source.subscribeCount == 0 { await Task.yield() }
        producer.sync { source.putNext(42) }
        #expect(await value == 42)
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
    }

    @Test func firstReturnsTheFirstValue() async throws {
        let value = try await Signal<Int, String>.single(7).first()
        #expect(value == 7)
    }

    @Test func firstThrowsOnErrorCompletionAndSilentEnd() async {
        await #expect(throws: SignalAwaitError<String>.self) { try await Signal<Int, String>.fail("e").first() }
        do {
            _ = try await Signal<Int, String>.fail("boom").first()
            Issue.record("expected a throw")
        } catch {
            guard case .error("boom") = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        do {
            _ = try await Signal<Int, String>.complete().first()
            Issue.record("expected a throw")
        } catch {
            guard case .completedWithoutValue = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        do {
            _ = try await Signal<Int, String>.never().first()
            Issue.record("expected a throw")
        } catch {
            guard case .endedWithoutEvent = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
    }

    @Test func cancellingFirstDisposesTheSubscriptionAndThrows() async {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let task = Task { try await source.signal.first() }
        while source.subscribeCount == 0 { await Task.yield() }
        task.cancel()
        let result = await task.result
        guard case .failure(let error) = result, case .cancelled? = error as? SignalAwaitError<String> else {
            Issue.record("unexpected \(result)")
            return
        }
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
    }

    @Test func firstOnAnAlreadyCancelledTaskDoesNotSubscribe() async {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await source.signal.first()
        }
        let result = await task.result
        guard case .failure(let error) = result, case .cancelled? = error as? SignalAwaitError<String> else {
            Issue.record("unexpected \(result)")
            return
        }
        #expect(log.events == [])
    }

    @Test func valuesIteratesUntilCompletion() async throws {
        let signal = Signal<Int, String> { subscriber in
            for value in 1...3 { subscriber.putNext(value) }
            subscriber.putCompletion()
            return EmptyDisposable
        }
        var collected: [Int] = []
        for try await value in signal.values { collected.append(value) }
        #expect(collected == [1, 2, 3])
    }

    @Test func valuesThrowsTheSignalsError() async {
        let signal = Signal<Int, String> { subscriber in
            subscriber.putNext(1)
            subscriber.putError("bad")
            return EmptyDisposable
        }
        var collected: [Int] = []
        do {
            for try await value in signal.values { collected.append(value) }
            Issue.record("expected a throw")
        } catch {
            guard case .error("bad") = error else {
                Issue.record("unexpected \(error)")
                return
            }
        }
        #expect(collected == [1])
    }

    @Test func valuesDeliversAsynchronousValuesAndStopsOnCancellationDisposingTheSubscription() async {
        let log = EventLog()
        let source = TestSource<Int, NoError>("a", log: log)
        let received = Atomic<Int>(0)
        let task = Task {
            // A NoError signal's values do not throw.
            for await _ in source.signal.values { received.add(1, ordering: .relaxed) }
            return "finished"
        }
        while source.subscribeCount == 0 { await Task.yield() }
        source.putNext(1)
        source.putNext(2)
        while received.load(ordering: .relaxed) < 2 { await Task.yield() }
        task.cancel()
        #expect(await task.value == "finished")
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
    }

    @Test func breakingOutOfTheLoopDisposesTheSubscription() async throws {
        let log = EventLog()
        let source = TestSource<Int, NoError>("a", log: log) { subscriber in
            for value in 1...5 { subscriber.putNext(value) }
        }
        do {
            for await value in source.signal.values where value == 2 { break }
        }
        // The iterator (and its subscription) is released after the loop.
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
    }
}
