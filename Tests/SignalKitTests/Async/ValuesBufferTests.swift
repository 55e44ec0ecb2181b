// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// values(buffer:): the iteration's buffer under every SignalBuffer policy.
// The first `next()` subscribes `a`, which sends 0 synchronously (returned
// by that `next()`); then the test sends while the consumer is not in
// `next()`, so the policy alone decides what waits, and drains. `blocking`
// uses a producer on a real queue. Statistics live in a process-wide table
// keyed by the signal's name: each test names its signal uniquely.

private enum Stats {
    static func statistics(_ name: String) -> SignalBufferStatistics? {
        SignalKitDebug.bufferStatistics().first { $0.name == name }
    }

    /// Waits (asynchronously, bounded) until `condition` holds.
    static func eventually(_ condition: () -> Bool) async {
        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
        while !condition() && ContinuousClock.now < deadline { await Task.yield() }
    }
}

/// Iterates to the end: `next v` per value, then `end` or the error.
private func drain<T, E>(_ iterator: inout SignalValues<T, E>.Iterator) async -> [String] {
    var events: [String] = []
    do {
        while let value = try await iterator.next() { events.append("next \(value)") }
        events.append("end")
    } catch {
        if case .error(let failure) = error {
            events.append("error \(failure)")
        } else {
            events.append("\(error)")
        }
    }
    return events
}

/// A value that logs its release.
private final class Box: Sendable, CustomStringConvertible {
    let value: Int
    let log: EventLog

    init(_ value: Int, _ log: EventLog) {
        self.value = value
        self.log = log
    }

    deinit { log.append("released \(value)") }

    var description: String { "\(value)" }
}

@Suite struct ValuesBufferTests {
    init() { _ = statisticsKeptForTheTestRun }

    /// `a`, named `name`, iterated through `buffer`: the first `next()` has
    /// returned 0.
    private func iterating(
        _ name: String,
        _ buffer: SignalBuffer<String>,
        log: EventLog
    ) async throws -> (TestSource<Int, String>, SignalValues<Int, String>.Iterator) {
        let a = TestSource<Int, String>("a", log: log) { $0.putNext(0) }
        var iterator = (a.signal |> named(name)).values(buffer: buffer).makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        return (a, iterator)
    }

    @Test(arguments: [
        (SignalBuffer<String>.unbounded, ["next 1", "next 2", "next 3", "next 4", "next 5", "end"]),
        (.droppingOldest(beyond: 2), ["next 4", "next 5", "end"]),
        (.droppingNewest(beyond: 2), ["next 1", "next 2", "end"]),
        (.latest, ["next 5", "end"]),
        (.failing(beyond: 2, with: "full"), ["error full"]),
    ])
    func eachPolicyKeepsItsValuesInOrder(_ buffer: SignalBuffer<String>, _ expected: [String]) async throws {
        let name = "ValuesBufferTests.policy.\(buffer)"
        let log = EventLog()
        let (a, started) = try await iterating(name, buffer, log: log)
        var iterator = started
        for value in 1...5 { a.putNext(value) }
        a.putCompletion()
        #expect(await drain(&iterator) == expected)
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
        let stats = Stats.statistics(name)
        switch buffer.description {
        case "unbounded":
            #expect(stats == nil)
        case "latest":
            #expect(stats?.drops == 4)
            #expect(stats?.overflows == 0)
        case "failing(beyond: 2)":
            // 1 and 2 waiting, and 3 arriving; 4, 5 and the completion come
            // after the end.
            #expect(stats?.drops == 3)
            #expect(stats?.overflows == 1)
            #expect(stats?.maximumDepth == 2)
        default:
            #expect(stats?.drops == 3)
            #expect(stats?.overflows == 0)
            #expect(stats?.maximumDepth == 2)
        }
        if let stats {
            #expect(stats.policy == buffer.description)
            #expect(stats.depth == 0)
            #expect(stats.liveSubscriptions == 0)
        }
    }

    @Test func theDepthCountsTheValuesWaiting() async throws {
        let name = "ValuesBufferTests.depth"
        let log = EventLog()
        let (a, started) = try await iterating(name, .droppingNewest(beyond: 3), log: log)
        var iterator = started
        a.putNext(1)
        a.putNext(2)
        #expect(Stats.statistics(name)?.depth == 2)
        #expect(Stats.statistics(name)?.liveSubscriptions == 1)
        #expect(try await iterator.next() == 1)
        #expect(Stats.statistics(name)?.depth == 1)
        a.putCompletion()
        #expect(await drain(&iterator) == ["next 2", "end"])
        #expect(Stats.statistics(name)?.liveSubscriptions == 0)
    }

    @Test func theErrorAndTheCompletionAreNeverDropped() async throws {
        let log = EventLog()
        let (a, started) = try await iterating("ValuesBufferTests.error", .droppingNewest(beyond: 1), log: log)
        var iterator = started
        for value in 1...3 { a.putNext(value) }
        a.putError("e")
        #expect(await drain(&iterator) == ["next 1", "error e"])
        // After the error, the iteration is over.
        #expect(try await iterator.next() == nil)

        let (b, startedSecond) = try await iterating("ValuesBufferTests.completion", .latest, log: EventLog())
        var second = startedSecond
        for value in 1...3 { b.putNext(value) }
        b.putCompletion()
        #expect(await drain(&second) == ["next 3", "end"])
    }

    @Test func aSignalThatCannotFailIteratesWithoutTry() async {
        let name = "ValuesBufferTests.noError"
        let a = TestSource<Int, NoError>("a", log: EventLog()) { $0.putNext(0) }
        var iterator = (a.signal |> named(name)).values(buffer: .latest).makeAsyncIterator()
        #expect(await iterator.next() == 0)
        for value in 1...3 { a.putNext(value) }
        a.putCompletion()
        #expect(await iterator.next() == 3)
        #expect(await iterator.next() == nil)
        #expect(Stats.statistics(name)?.drops == 2)
        #expect(Stats.statistics(name)?.policy == "latest")
    }

    @Test func theBufferingPolicySpellingCountsItsDropsAsTheSameBuffer() async {
        let name = "ValuesBufferTests.bufferingNewest"
        let a = TestSource<Int, NoError>("a", log: EventLog()) { subscriber in
            for value in 1...5 { subscriber.putNext(value) }
            subscriber.putCompletion()
        }
        var received: [Int] = []
        for await value in (a.signal |> named(name)).values(bufferingPolicy: .bufferingNewest(2)) {
            received.append(value)
        }
        #expect(received == [4, 5])
        #expect(Stats.statistics(name)?.drops == 3)
        #expect(Stats.statistics(name)?.policy == "droppingOldest(beyond: 2)")
    }

    @Test(arguments: [
        (SignalBufferingPolicy.bufferingNewest(0), "droppingOldest(beyond: 0)"),
        (.bufferingOldest(0), "droppingNewest(beyond: 0)"),
    ])
    func aLimitOfZeroKeepsNothingForAConsumerThatIsNotWaiting(_ policy: SignalBufferingPolicy, _ description: String)
        async
    {
        // Everything is sent while the first `next()` subscribes, before the
        // consumer waits: nothing is kept.
        let name = "ValuesBufferTests.zero.\(description)"
        let a = TestSource<Int, NoError>("a", log: EventLog()) { subscriber in
            for value in 1...3 { subscriber.putNext(value) }
            subscriber.putCompletion()
        }
        var received: [Int] = []
        for await value in (a.signal |> named(name)).values(bufferingPolicy: policy) { received.append(value) }
        #expect(received == [])
        #expect(Stats.statistics(name)?.drops == 3)
        #expect(Stats.statistics(name)?.policy == description)
    }

    // MARK: Disposal

    @Test func droppingTheIteratorReleasesTheWaitingValues() async throws {
        let released = EventLog()
        let log = EventLog()
        let a = TestSource<Box, String>("a", log: log) { $0.putNext(Box(0, released)) }
        do {
            var iterator = (a.signal |> named("ValuesBufferTests.release")).values(buffer: .droppingNewest(beyond: 3))
                .makeAsyncIterator()
            #expect(try await iterator.next()?.value == 0)
            for value in 1...4 { a.putNext(Box(value, released)) }
            // 4 was dropped: released at once.
            #expect(released.take() == ["released 0", "released 4"])
            #expect(log.events == ["a.subscribe#1"])
        }
        #expect(released.take() == ["released 1", "released 2", "released 3"])
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
        // Waiting values released by a disposal are not drops.
        #expect(Stats.statistics("ValuesBufferTests.release")?.drops == 1)
    }

    @Test func cancellingTheTaskReleasesTheWaitingValues() async {
        let released = EventLog()
        let log = EventLog()
        let a = TestSource<Box, NoError>("a", log: log) { $0.putNext(Box(0, released)) }
        let (gate, open) = AsyncStream<Void>.makeStream()
        let tookFirst = Atomic<Bool>(false)
        let task = Task { () -> [String] in
            var iterator = a.signal.values(buffer: .droppingOldest(beyond: 3)).makeAsyncIterator()
            var events = ["\(await iterator.next().map { "\($0)" } ?? "nil")"]
            tookFirst.store(true, ordering: .releasing)
            var gateIterator = gate.makeAsyncIterator()
            _ = await gateIterator.next()
            events.append(await iterator.next().map { "\($0)" } ?? "nil")
            return events
        }
        await Stats.eventually { tookFirst.load(ordering: .acquiring) }
        for value in 1...3 { a.putNext(Box(value, released)) }
        #expect(released.take() == ["released 0"])
        task.cancel()
        open.yield()
        // Cancelled: `next()` returns nil although three values wait.
        #expect(await task.value == ["0", "nil"])
        #expect(released.take() == ["released 1", "released 2", "released 3"])
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
    }

    // MARK: blocking

    @Test func blockingHoldsTheProducerUntilTheConsumerTakesAValue() async throws {
        let name = "ValuesBufferTests.blocking.consumer"
        let log = EventLog()
        let (a, started) = try await iterating(name, .blocking(beyond: 2), log: log)
        var iterator = started
        let producer = Producer()
        producer.run {
            for value in 1...4 {
                a.putNext(value)
                producer.sent.store(value, ordering: .releasing)
            }
            a.putCompletion()
        }
        // 1 and 2 wait; 3 blocks the producer.
        await Stats.eventually { Stats.statistics(name)?.blockedSends == 1 }
        #expect(Stats.statistics(name)?.blockedSends == 1)
        #expect(producer.sent.load(ordering: .acquiring) == 2)
        #expect(Stats.statistics(name)?.depth == 2)
        // Taking a value makes room: 3 goes in.
        #expect(try await iterator.next() == 1)
        await Stats.eventually { producer.sent.load(ordering: .acquiring) >= 3 }
        #expect(producer.sent.load(ordering: .acquiring) >= 3)
        #expect(await drain(&iterator) == ["next 2", "next 3", "next 4", "end"])
        await Stats.eventually { producer.isDone }
        #expect(producer.isDone)
        #expect(Stats.statistics(name)?.drops == 0)
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
    }

    @Test func blockingReleasesTheProducerWhenTheTaskIsCancelled() async {
        let name = "ValuesBufferTests.blocking.cancel"
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { $0.putNext(0) }
        let (gate, open) = AsyncStream<Void>.makeStream()
        let tookFirst = Atomic<Bool>(false)
        let task = Task { () -> [String] in
            var iterator = (a.signal |> named(name)).values(buffer: .blocking(beyond: 2)).makeAsyncIterator()
            var events = ["\((try? await iterator.next()).flatMap { $0 }.map { "\($0)" } ?? "nil")"]
            tookFirst.store(true, ordering: .releasing)
            var gateIterator = gate.makeAsyncIterator()
            _ = await gateIterator.next()
            events.append("\((try? await iterator.next()).flatMap { $0 }.map { "\($0)" } ?? "nil")")
            return events
        }
        await Stats.eventually { tookFirst.load(ordering: .acquiring) }
        let producer = Producer()
        producer.run {
            for value in 1...3 { a.putNext(value) }
        }
        await Stats.eventually { Stats.statistics(name)?.blockedSends == 1 }
        #expect(!producer.isDone)
        task.cancel()
        open.yield()
        #expect(await task.value == ["0", "nil"])
        await Stats.eventually { producer.isDone }
        #expect(producer.isDone)
        // The blocked value was dropped when the iteration ended.
        #expect(Stats.statistics(name)?.drops == 1)
        #expect(Stats.statistics(name)?.liveSubscriptions == 0)
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
    }

    @Test func blockingReleasesTheProducerWhenTheIteratorIsDropped() async throws {
        let name = "ValuesBufferTests.blocking.drop"
        let log = EventLog()
        let producer = Producer()
        do {
            let (a, iterator) = try await iterating(name, .blocking(beyond: 2), log: log)
            producer.run {
                for value in 1...3 { a.putNext(value) }
            }
            await Stats.eventually { Stats.statistics(name)?.blockedSends == 1 }
            #expect(!producer.isDone)
            withExtendedLifetime(iterator) {}
        }
        await Stats.eventually { producer.isDone }
        #expect(producer.isDone)
        #expect(Stats.statistics(name)?.drops == 1)
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
    }

    @Test func blockingFromTheIteratingTaskStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            // The signal sends synchronously while the first `next()`
            // subscribes it: the third value would wait for its own consumer.
            for await _ in Signal<Int, NoError>.sequence([1, 2, 3]).values(buffer: .blocking(beyond: 2)) {}
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("from the task that iterates it"))
        #expect(message.contains("would deadlock"))
    }
}

/// A producer on a thread of its own (a queue).
private final class Producer: Sendable {
    let sent = Atomic<Int>(0)
    private let done = Atomic<Bool>(false)

    var isDone: Bool { done.load(ordering: .acquiring) }

    func run(_ body: @escaping @Sendable () -> Void) {
        Queue(name: "producer").async { [self] in
            body()
            done.store(true, ordering: .releasing)
        }
    }
}
