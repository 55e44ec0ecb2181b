// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
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

// start(isolation:buffer:): the events waiting for the actor under every
// SignalBuffer policy. Values sent in the same turn of the actor as `start`
// (the `probe`) all wait before any drain job can run, so the policy alone
// decides what is delivered. `blocking` uses a producer on a real queue and
// a first callback that holds the actor. Statistics live in a process-wide
// table keyed by the signal's name: each test names its signal uniquely.

/// The error of the signals here (internal: a test's arguments use it).
enum ActorBufferFailure: Error, Equatable { case boom }

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

/// Runs an actor's jobs on a dispatch queue of its own: a callback that
/// holds the actor (to make a producer wait) then holds that queue's thread,
/// not one of the concurrency pool's few threads, which the tests need.
private final class QueueExecutor: SerialExecutor {
    private let queue = DispatchQueue(label: "ActorDeliveryBufferTests.actor")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }
}

/// Records what its callbacks see (checking that they run on the actor).
private actor BufferRecorder {
    private let executor = QueueExecutor()
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private(set) var log: [String] = []
    private var handle: (any Disposable)?
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// Subscribes through `buffer`; then runs `probe` and, if asked,
    /// disposes, all in this turn of the actor (before any drain job runs).
    /// `onNext` runs in the `next` callback before it records.
    func attach<T: Sendable>(
        _ signal: Signal<T, ActorBufferFailure>,
        buffer: SignalBuffer<ActorBufferFailure>,
        probe: (@Sendable () -> Void)? = nil,
        disposeAfterProbe: Bool = false,
        onNext: (@Sendable (T) -> Void)? = nil
    ) -> any Disposable {
        let handle = signal.start(
            isolation: self,
            buffer: buffer,
            next: { value in
                self.preconditionIsolated()
                onNext?(value)
                self.record("next \(value)")
            },
            error: { error in
                self.preconditionIsolated()
                self.record("error \(error)")
            },
            completed: {
                self.preconditionIsolated()
                self.record("completed")
            }
        )
        self.handle = handle
        record("started")
        probe?()
        if disposeAfterProbe { handle.dispose() }
        return handle
    }

    private func record(_ entry: String) {
        log.append(entry)
        let ready = waiters.filter { $0.count <= log.count }
        waiters.removeAll { $0.count <= log.count }
        ready.forEach { $0.continuation.resume() }
    }

    func detach() {
        handle?.dispose()
        handle = nil
    }

    /// Waits until the log has `count` entries.
    func waitForEntries(_ count: Int) async {
        if log.count >= count { return }
        await withCheckedContinuation { waiters.append((count, $0)) }
    }
}

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

/// A producer on a thread of its own (a queue).
private final class Producer: Sendable {
    let sent = Atomic<Int>(-1)
    private let done = Atomic<Bool>(false)

    var isDone: Bool { done.load(ordering: .acquiring) }

    func run(_ body: @escaping @Sendable () -> Void) {
        Queue(name: "producer").async { [self] in
            body()
            done.store(true, ordering: .releasing)
        }
    }
}

@Suite struct ActorDeliveryBufferTests {
    init() { _ = statisticsKeptForTheTestRun }

    @Test(arguments: [
        (SignalBuffer<ActorBufferFailure>.unbounded, ["next 1", "next 2", "next 3", "next 4", "next 5", "completed"]),
        (.droppingOldest(beyond: 2), ["next 4", "next 5", "completed"]),
        (.droppingNewest(beyond: 2), ["next 1", "next 2", "completed"]),
        (.latest, ["next 5", "completed"]),
        (.failing(beyond: 2, with: .boom), ["error boom"]),
    ])
    func eachPolicyDeliversItsValuesInOrder(_ buffer: SignalBuffer<ActorBufferFailure>, _ expected: [String]) async {
        let name = "ActorDeliveryBufferTests.policy.\(buffer)"
        let recorder = BufferRecorder()
        let log = EventLog()
        let source = TestSource<Int, ActorBufferFailure>("source", log: log)
        _ = await recorder.attach(
            source.signal |> named(name), buffer: buffer,
            probe: {
                for value in 1...5 { source.putNext(value) }
                source.putCompletion()
            })
        await recorder.waitForEntries(1 + expected.count)
        #expect(await recorder.log == ["started"] + expected)
        // The completion (or the overflow) ended the subscription.
        #expect(log.events == ["source.subscribe#1", "source.dispose#1"])
        let stats = Stats.statistics(name)
        switch buffer.description {
        case "unbounded":
            #expect(stats == nil)
        case "latest":
            #expect(stats?.drops == 4)
            #expect(stats?.overflows == 0)
        case "failing(beyond: 2)":
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

    @Test func theErrorIsNeverDropped() async {
        let recorder = BufferRecorder()
        let source = TestSource<Int, ActorBufferFailure>("source", log: EventLog())
        _ = await recorder.attach(
            source.signal |> named("ActorDeliveryBufferTests.error"), buffer: .droppingNewest(beyond: 1),
            probe: {
                for value in 1...3 { source.putNext(value) }
                source.putError(.boom)
            })
        await recorder.waitForEntries(3)
        #expect(await recorder.log == ["started", "next 1", "error boom"])
    }

    @Test func aLiveSubscriptionIsCountedUntilDisposed() async {
        let name = "ActorDeliveryBufferTests.live"
        let recorder = BufferRecorder()
        let source = TestSource<Int, ActorBufferFailure>("source", log: EventLog())
        _ = await recorder.attach(
            source.signal |> named(name), buffer: .droppingOldest(beyond: 2),
            probe: { for value in 1...3 { source.putNext(value) } })
        await recorder.waitForEntries(3)
        #expect(await recorder.log == ["started", "next 2", "next 3"])
        #expect(Stats.statistics(name)?.liveSubscriptions == 1)
        #expect(Stats.statistics(name)?.drops == 1)
        await recorder.detach()
        #expect(Stats.statistics(name)?.liveSubscriptions == 0)
    }

    @Test func disposingWhileFullReleasesTheWaitingValues() async {
        let name = "ActorDeliveryBufferTests.release"
        let recorder = BufferRecorder()
        let released = EventLog()
        let log = EventLog()
        let source = TestSource<Box, ActorBufferFailure>("source", log: log)
        _ = await recorder.attach(
            source.signal |> named(name), buffer: .droppingNewest(beyond: 3),
            probe: {
                for value in 1...4 { source.putNext(Box(value, released)) }
                // 4 was dropped (released at once); 1…3 wait.
                released.append("disposing")
            }, disposeAfterProbe: true)
        // All in the actor's turn: the disposal released the waiting values.
        #expect(released.events == ["released 4", "disposing", "released 1", "released 2", "released 3"])
        #expect(log.events == ["source.subscribe#1", "source.dispose#1"])
        for _ in 0..<100 { await Task.yield() }
        #expect(await recorder.log == ["started"])
        // Waiting values released by a disposal are not drops.
        #expect(Stats.statistics(name)?.drops == 1)
        #expect(Stats.statistics(name)?.liveSubscriptions == 0)
    }

    // MARK: blocking

    /// `source` through `blocking(beyond: 2)` into a recorder whose callback
    /// for 0 holds the actor until `gate` is signalled; a producer sends 0,
    /// waits until 0 is being delivered, then sends 1…4 and completes.
    private func blockedProducer(_ name: String, log: EventLog) async -> (
        recorder: BufferRecorder, producer: Producer, gate: DispatchSemaphore, handle: any Disposable
    ) {
        let recorder = BufferRecorder()
        let source = TestSource<Int, ActorBufferFailure>("source", log: log)
        let gate = DispatchSemaphore(value: 0)
        let delivering = Atomic<Bool>(false)
        let handle = await recorder.attach(
            source.signal |> named(name), buffer: .blocking(beyond: 2),
            onNext: { value in
                if value == 0 {
                    delivering.store(true, ordering: .releasing)
                    gate.wait()
                }
            })
        let producer = Producer()
        producer.run {
            source.putNext(0)
            while !delivering.load(ordering: .acquiring) { sched_yield() }
            for value in 1...4 {
                source.putNext(value)
                producer.sent.store(value, ordering: .releasing)
            }
            source.putCompletion()
        }
        // 1 and 2 wait; 3 blocks the producer.
        await Stats.eventually { Stats.statistics(name)?.blockedSends == 1 }
        return (recorder, producer, gate, handle)
    }

    @Test func blockingHoldsTheProducerUntilTheDrainTakesTheValues() async {
        let name = "ActorDeliveryBufferTests.blocking.drain"
        let log = EventLog()
        let (recorder, producer, gate, _) = await blockedProducer(name, log: log)
        #expect(Stats.statistics(name)?.blockedSends == 1)
        #expect(producer.sent.load(ordering: .acquiring) == 2)
        #expect(Stats.statistics(name)?.depth == 2)
        gate.signal()
        await recorder.waitForEntries(7)
        #expect(await recorder.log == ["started", "next 0", "next 1", "next 2", "next 3", "next 4", "completed"])
        await Stats.eventually { producer.isDone }
        #expect(producer.isDone)
        #expect(Stats.statistics(name)?.drops == 0)
        #expect(Stats.statistics(name)?.liveSubscriptions == 0)
    }

    @Test func blockingReleasesTheProducerWhenDisposed() async {
        let name = "ActorDeliveryBufferTests.blocking.dispose"
        let log = EventLog()
        let (recorder, producer, gate, handle) = await blockedProducer(name, log: log)
        #expect(!producer.isDone)
        // Disposed off the actor, which the callback for 0 holds.
        handle.dispose()
        await Stats.eventually { producer.isDone }
        #expect(producer.isDone)
        gate.signal()
        // The callback that was running finishes; nothing follows it.
        await recorder.waitForEntries(2)
        for _ in 0..<100 { await Task.yield() }
        #expect(await recorder.log == ["started", "next 0"])
        // The blocked value (3) was dropped; 4 and the completion came after
        // the disposal.
        #expect(Stats.statistics(name)?.drops == 1)
        #expect(Stats.statistics(name)?.liveSubscriptions == 0)
        #expect(log.events == ["source.subscribe#1", "source.dispose#1"])
    }

    @Test func blockingDuringStartStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            // The signal sends synchronously while `start` subscribes it on
            // the actor: the third value would wait for the actor itself.
            await DeadlockingHolder().attach(Signal<Int, NoError>.sequence([1, 2, 3]))
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("from the actor (a callback its drain job is running, or start(isolation:buffer:)"))
        #expect(message.contains("would deadlock"))
    }

    @Test func blockingFromTheDrainStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            // The callback for 0 sends three values to its own source.
            let pipe = ValuePipe<Int>()
            let holder = DeadlockingHolder()
            await holder.attach(
                pipe.signal(),
                onValue: { value in
                    if value == 0 { for next in 1...3 { pipe.putNext(next) } }
                })
            pipe.putNext(0)
            await holder.waitForever()
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("from the actor (a callback its drain job is running, or start(isolation:buffer:)"))
        #expect(message.contains("would deadlock"))
    }
}

/// An actor whose `blocking` subscription deadlocks on itself.
private actor DeadlockingHolder {
    private var handle: (any Disposable)?

    func attach(_ signal: Signal<Int, NoError>, onValue: (@Sendable (Int) -> Void)? = nil) {
        handle = signal.start(isolation: self, buffer: .blocking(beyond: 2), next: { onValue?($0) })
    }

    func waitForever() async {
        while true { await Task.yield() }
    }
}
