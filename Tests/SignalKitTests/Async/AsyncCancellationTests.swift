// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// Cancelling a task that iterates a signal ends the iteration, also when
// values never stop waiting in its buffer (a feed that keeps up with the
// consumer): `next()` returns nil once the task is cancelled, and the
// subscription is disposed.

/// A feed on its own thread that keeps the consumer's buffer non-empty: it
/// sends whenever fewer than `lead` values are on their way, until stopped;
/// the consumer calls `received()` per value, which returns once the next
/// value waits, so that `next()` always finds one.
private final class Feed: Sendable {
    private let sent = Atomic<Int>(0)
    private let taken = Atomic<Int>(0)
    private let stop = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)
    private let lead: Int

    init(lead: Int) {
        self.lead = lead
    }

    var receivedCount: Int { taken.load(ordering: .acquiring) }

    func start(_ send: @escaping @Sendable (Int) -> Void) {
        Queue(name: "feed").async { [self] in
            var count = 0
            while !stop.load(ordering: .acquiring) {
                if count - taken.load(ordering: .acquiring) < lead {
                    send(count)
                    count += 1
                    sent.store(count, ordering: .releasing)
                } else {
                    sched_yield()
                }
            }
            stopped.store(true, ordering: .releasing)
        }
    }

    /// Counts a value the consumer took; returns once another one waits
    /// (or the feed is stopping).
    func received() {
        let count = taken.add(1, ordering: .acquiringAndReleasing).newValue
        while sent.load(ordering: .acquiring) <= count && !stop.load(ordering: .acquiring) { sched_yield() }
    }

    /// Stops the feed and waits until it has stopped sending.
    func finish() async {
        stop.store(true, ordering: .releasing)
        while !stopped.load(ordering: .acquiring) { await Task.yield() }
    }
}

/// The ways to iterate a signal's values.
enum IterationKind: CaseIterable, Sendable, CustomTestStringConvertible {
    case nonThrowing
    case throwing
    case bufferingPolicy
    case dropping
    case blocking

    var testDescription: String { "\(self)" }

    /// Iterates `signal` to its end, calling `onValue` per value.
    func iterate(_ signal: Signal<Int, NoError>, onValue: () async -> Void) async {
        switch self {
        case .nonThrowing:
            for await _ in signal.values { await onValue() }
        case .throwing:
            let values: SignalValues<Int, NoError> = signal.values
            do {
                for try await _ in values { await onValue() }
            } catch {
                Issue.record("unexpected \(error)")
            }
        case .bufferingPolicy:
            for await _ in signal.values(bufferingPolicy: .bufferingNewest(16)) { await onValue() }
        case .dropping:
            for await _ in signal.values(buffer: .droppingOldest(beyond: 16)) { await onValue() }
        case .blocking:
            for await _ in signal.values(buffer: .blocking(beyond: 16)) { await onValue() }
        }
    }
}

// Serialized: a consumer that finds a value at every `next()` keeps its
// thread; one at a time leaves threads to the tests themselves.
@Suite(.serialized) struct AsyncCancellationTests {
    @Test(arguments: IterationKind.allCases)
    func aCancelledIterationEndsWhileValuesKeepWaiting(_ kind: IterationKind) async {
        let log = EventLog()
        let source = TestSource<Int, NoError>("a", log: log)
        let feed = Feed(lead: 8)
        let ended = Atomic<Bool>(false)
        let task = Task {
            await kind.iterate(source.signal) {
                feed.received()
                // Lets the test's own task run on a 2-thread pool.
                await Task.yield()
            }
            ended.store(true, ordering: .releasing)
        }
        while source.subscribeCount == 0 { await Task.yield() }
        feed.start { source.putNext($0) }
        while feed.receivedCount < 100 { await Task.yield() }
        task.cancel()
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while !ended.load(ordering: .acquiring) && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
        let endedInTime = ended.load(ordering: .acquiring)
        #expect(endedInTime, "the cancelled iteration went on while values kept arriving")
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
        // A failed run ends here: with the feed stopped, the buffer empties.
        await feed.finish()
        await task.value
    }

    @Test func disposingASignalOfAnEndlessSequenceEndsItsTask() async {
        let log = EventLog()
        let received = Atomic<Int>(0)
        let handle = Signal<Int, NoError>(Endless(log: log)).start(next: { _ in received.add(1, ordering: .relaxed) })
        while received.load(ordering: .relaxed) < 100 { await Task.yield() }
        handle.dispose()
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while log.events.isEmpty && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(1)) }
        // The task stopped iterating and released its iterator.
        #expect(log.events == ["iterator released"])
        let afterEnd = received.load(ordering: .relaxed)
        for _ in 0..<100 { await Task.yield() }
        #expect(received.load(ordering: .relaxed) == afterEnd)
    }

    @Test func disposingAnActorDeliveryWhoseFeedKeepsUpEndsTheDrain() async {
        let log = EventLog()
        let source = TestSource<Int, NoError>("a", log: log)
        let released = EventLog()
        let counter = DeliveryCounter()
        let feed = Feed(lead: 8)
        let handle = await counter.attach(source.signal, feed: feed, holding: ReleaseProbe(released))
        feed.start { source.putNext($0) }
        // Polled off the actor: a task spinning on the actor would keep the
        // drain job (of lower priority) from running.
        while counter.delivered.load(ordering: .acquiring) < 100 { await Task.yield() }
        handle.dispose()
        #expect(log.events == ["a.subscribe#1", "a.dispose#1"])
        // The drain job stops at once and releases the callbacks, although
        // the feed goes on sending.
        let deadline = ContinuousClock.now.advanced(by: .seconds(5))
        while released.events.isEmpty && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
        #expect(released.events == ["released"])
        await feed.finish()
    }
}

/// 1, 2, 3, … without end, never suspending; logs when its iterator is
/// released.
private struct Endless: AsyncSequence, Sendable {
    typealias Element = Int
    typealias Failure = Never
    let log: EventLog

    struct AsyncIterator: AsyncIteratorProtocol {
        let probe: ReleaseProbe
        var current = 0
        mutating func next() async -> Int? {
            current += 1
            return current
        }
    }

    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(probe: ReleaseProbe(log, entry: "iterator released"))
    }
}

/// Logs `entry` when it is released.
private final class ReleaseProbe: Sendable {
    let log: EventLog
    let entry: String

    init(_ log: EventLog, entry: String = "released") {
        self.log = log
        self.entry = entry
    }

    deinit { log.append(entry) }
}

/// Counts the values `start(isolation:)` delivers to it (readable off the
/// actor).
private actor DeliveryCounter {
    let delivered = Atomic<Int>(0)

    /// Subscribes, telling `feed` of every value delivered.
    func attach(_ signal: Signal<Int, NoError>, feed: Feed, holding probe: ReleaseProbe) -> any Disposable {
        signal.start(
            isolation: self,
            next: { [probe] _ in
                _ = probe
                self.delivered.add(1, ordering: .releasing)
                feed.received()
            })
    }

}
