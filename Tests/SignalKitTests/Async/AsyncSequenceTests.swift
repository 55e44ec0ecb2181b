// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

/// Waits (asynchronously, bounded) until `condition` holds.
private func eventually(_ condition: () -> Bool) async {
    let deadline = ContinuousClock.now.advanced(by: .seconds(10))
    while !condition() && ContinuousClock.now < deadline { await Task.yield() }
}

private enum Boom: Error, Equatable { case boom }

/// Suspends in `next()` until cancelled, then throws `CancellationError`
/// (as `Task.sleep` does): a sequence whose cancellation is an error.
private struct ThrowsWhenCancelled: AsyncSequence, Sendable {
    typealias Element = Int
    typealias Failure = any Error
    let started: EventLog
    struct AsyncIterator: AsyncIteratorProtocol {
        let started: EventLog
        mutating func next() async throws -> Int? {
            started.append("iterating")
            try await Task.sleep(for: .seconds(60))
            return nil
        }
    }
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(started: started) }
}

/// Sends 1, then throws `Boom.boom` (typed).
private struct OneThenBoom: AsyncSequence, Sendable {
    typealias Element = Int
    typealias Failure = Boom
    struct AsyncIterator: AsyncIteratorProtocol {
        var sent = false
        mutating func next() async throws(Boom) -> Int? {
            if sent { throw .boom }
            sent = true
            return 1
        }
        mutating func next(isolation actor: isolated (any Actor)?) async throws(Boom) -> Int? {
            try await next()
        }
    }
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
}

/// 1…limit, multi-pass: every iterator starts again.
private struct UpTo: AsyncSequence, Sendable {
    typealias Element = Int
    typealias Failure = Never
    let limit: Int
    struct AsyncIterator: AsyncIteratorProtocol {
        let limit: Int
        var current = 0
        mutating func next() async -> Int? {
            guard current < limit else { return nil }
            current += 1
            return current
        }
    }
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(limit: limit) }
}

@Suite struct AsyncSequenceTests {
    @Test func sendsTheElementsThenCompletes() async {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        for value in 1...3 { continuation.yield(value) }
        continuation.finish()
        let log = EventLog()
        let handle = log.start(Signal<Int, NoError>(stream))
        await eventually { log.events.count == 4 }
        #expect(log.events == ["next 1", "next 2", "next 3", "completed"])
        handle.dispose()
    }

    @Test func aTypedFailureBecomesTheSignalsError() async {
        let log = EventLog()
        let handle = log.start(Signal<Int, Boom>(OneThenBoom()))
        await eventually { log.events.count == 2 }
        #expect(log.events == ["next 1", "error boom"])
        handle.dispose()
    }

    @Test func anUntypedFailureBecomesAnAnyErrorSignal() async {
        let (stream, continuation) = AsyncThrowingStream<Int, any Error>.makeStream()
        continuation.yield(1)
        continuation.finish(throwing: Boom.boom)
        let log = EventLog()
        let handle = log.start(Signal<Int, any Error>(stream))
        await eventually { log.events.count == 2 }
        #expect(log.events == ["next 1", "error boom"])
        handle.dispose()
    }

    @Test func disposingCancelsTheTaskAndNothingFollows() async {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let terminated = EventLog()
        continuation.onTermination = { reason in terminated.append("\(reason)") }
        let log = EventLog()
        let handle = log.start(Signal<Int, NoError>(stream))
        continuation.yield(1)
        await eventually { log.events == ["next 1"] }
        handle.dispose()
        await eventually { !terminated.events.isEmpty }
        #expect(terminated.events == ["cancelled"])
        continuation.yield(2)
        continuation.finish()
        await Task.yield()
        #expect(log.events == ["next 1"])
    }

    @Test func cancellationIsNotAnError() async {
        let started = EventLog()
        let log = EventLog()
        let handle = log.start(Signal<Int, any Error>(ThrowsWhenCancelled(started: started)))
        await eventually { !started.events.isEmpty }
        handle.dispose()
        // Give the cancelled task time to throw and end.
        for _ in 0..<1_000 { await Task.yield() }
        #expect(log.events == [])
    }

    @Test func eachSubscriptionMakesItsOwnIterator() async {
        let signal = Signal<Int, NoError>(UpTo(limit: 2))
        let first = EventLog()
        let second = EventLog()
        let handles = [first.start(signal), second.start(signal)]
        await eventually { first.events.count == 3 && second.events.count == 3 }
        #expect(first.events == ["next 1", "next 2", "completed"])
        #expect(second.events == ["next 1", "next 2", "completed"])
        handles.forEach { $0.dispose() }
    }
}
