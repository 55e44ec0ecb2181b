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

// The drop law of every bounded boundary and policy: for a subscription that
// ends by its terminal event (a completion, an error, or `.failing`'s
// overflow), delivered + dropped == sent, where sent counts the values that
// reached the boundary and dropped is the subscription's own count (a
// `SignalBufferProbe`). `.failing` counts the value that overflowed, the
// values waiting then and the rest of the batch being delivered. The terminal
// event is delivered exactly once, never dropped.
//
// The driver is seeded: each schedule interleaves bursts of sends, consumer
// turns (virtual time: the consumer runs only when the test lets it), sends
// from inside the consumer's callback, and a terminal event. A failing
// schedule names its seed.

struct DropLawError: Error, Equatable {}

/// What one schedule saw.
final class DropLawTally: Sendable {
    let sent = Synchronization.Atomic<Int>(0)
    let delivered = Synchronization.Atomic<Int>(0)
    let terminals = Synchronization.Atomic<Int>(0)
    /// Set by the consumer's callback: values to send from inside it.
    let reentrant = Synchronization.Atomic<Int>(0)
}

@Suite struct DropLawTests {
    /// The policies a virtual-time consumer can test (`blocking` would wait
    /// for a consumer that only runs when the test thread lets it; it is
    /// tested on a real queue below).
    static let policies: [SignalBuffer<DropLawError>] = [
        .droppingOldest(beyond: 3), .droppingNewest(beyond: 3), .latest, .failing(beyond: 3, with: DropLawError()),
    ]

    /// A boundary under test, given the scheduler, the buffer and the tally
    /// (a boundary whose values are inner signals counts an inner as
    /// delivered when it is subscribed).
    typealias Boundary =
        @Sendable (VirtualTimeScheduler, SignalBuffer<DropLawError>, DropLawTally) -> (
            Signal<Int, DropLawError>
        ) -> Signal<Int, DropLawError>

    /// Every bounded boundary that a virtual-time queue drives, and whether
    /// it counts its deliveries itself.
    static let boundaries: [(String, Boundary, countsDeliveries: Bool)] = [
        ("deliverOn(_:buffer:)", { scheduler, buffer, _ in deliverOn(scheduler.makeQueue(), buffer: buffer) }, false),
        (
            "delayEvents(_:queue:buffer:)",
            { scheduler, buffer, _ in delayEvents(1, queue: scheduler.makeQueue(), buffer: buffer) }, false
        ),
        (
            "mapToQueue(buffer:_:)",
            { scheduler, buffer, tally in
                let queue = scheduler.makeQueue()
                // The outer values are the ones the buffer holds: an inner is
                // delivered when it is subscribed. Each runs for one virtual
                // second, so the next ones wait.
                return mapToQueue(buffer: buffer) { value in
                    Signal<Int, DropLawError> { subscriber in
                        tally.delivered.add(1, ordering: .relaxed)
                        return (Signal<Int, DropLawError>.single(value) |> delay(1, queue: queue)).start(
                            next: { subscriber.putNext($0) }, completed: { subscriber.putCompletion() })
                    }
                }
            }, true
        ),
    ]

    @Test(arguments: boundaries, policies)
    func deliveredPlusDroppedIsSent(boundary: (String, Boundary, countsDeliveries: Bool), buffer: SignalBuffer<DropLawError>) {
        for seed in UInt64(1)...60 {
            run(seed: seed, boundary: boundary, buffer: buffer)
        }
    }

    private func run(seed: UInt64, boundary: (String, Boundary, countsDeliveries: Bool), buffer: SignalBuffer<DropLawError>) {
        var random = SplitMix64(seed: seed)  // Model/OperatorModelTests.swift
        let scheduler = VirtualTimeScheduler()
        let probe = SignalBufferProbe()
        let tally = DropLawTally()
        let pipe = TestSource<Int, DropLawError>("source", log: EventLog())
        let counted = pipe.signal |> beforeNext { _ in tally.sent.add(1, ordering: .relaxed) }
        let next = Synchronization.Atomic<Int>(0)
        let countsDeliveries = boundary.countsDeliveries
        let handle = (counted |> boundary.1(scheduler, buffer.counted(by: probe), tally)).start(
            next: { _ in
                if !countsDeliveries { tally.delivered.add(1, ordering: .relaxed) }
                // Sends from inside the consumer's callback, mid-batch.
                let count = tally.reentrant.exchange(0, ordering: .relaxed)
                for _ in 0..<count { pipe.putNext(next.add(1, ordering: .relaxed).newValue) }
            },
            error: { _ in tally.terminals.add(1, ordering: .relaxed) },
            completed: { tally.terminals.add(1, ordering: .relaxed) }
        )
        for _ in 0..<Int.random(in: 1...8, using: &random) {
            for _ in 0..<Int.random(in: 0...7, using: &random) { pipe.putNext(next.add(1, ordering: .relaxed).newValue) }
            if Bool.random(using: &random) { tally.reentrant.store(Int.random(in: 1...5, using: &random), ordering: .relaxed) }
            switch Int.random(in: 0...2, using: &random) {
            case 0: break
            case 1: scheduler.advance(by: Double.random(in: 0...2, using: &random))
            default: scheduler.run()
            }
        }
        if Bool.random(using: &random) { pipe.putCompletion() } else { pipe.putError(DropLawError()) }
        scheduler.run()
        let (sent, delivered, drops) = (
            tally.sent.load(ordering: .relaxed), tally.delivered.load(ordering: .relaxed), Int(probe.statistics.drops)
        )
        #expect(
            delivered + drops == sent,
            "\(boundary.0), \(buffer), seed \(seed): \(delivered) delivered + \(drops) dropped != \(sent) sent")
        #expect(tally.terminals.load(ordering: .relaxed) == 1, "\(boundary.0), \(buffer), seed \(seed): one terminal event")
        handle.dispose()
    }

    /// The case: three values wait, a fourth overflows `.failing`:
    /// four are dropped (the three waiting and the one that overflowed),
    /// none delivered, and the error follows.
    @Test func aFailingOverflowDropsTheWaitingValuesAndTheOneThatOverflowed() {
        let scheduler = VirtualTimeScheduler()
        let probe = SignalBufferProbe()
        let log = EventLog()
        let pipe = TestSource<Int, DropLawError>("source", log: EventLog())
        let handle = log.start(
            pipe.signal |> deliverOn(scheduler.makeQueue(), buffer: .failing(beyond: 3, with: DropLawError()).counted(by: probe)))
        for value in 1...4 { pipe.putNext(value) }
        scheduler.run()
        #expect(log.take() == ["error DropLawError()"])
        #expect(probe.statistics.drops == 4)
        #expect(probe.statistics.overflows == 1)
        handle.dispose()
    }

    /// `.blocking` drops nothing on the terminal paths: the producer waits
    /// for room, every value it sent is delivered.
    @Test func blockingDeliversEverythingItWasSent() {
        let queue = Queue(name: "droplaw.blocking")
        let probe = SignalBufferProbe()
        let pipe = TestSource<Int, DropLawError>("source", log: EventLog())
        let delivered = Synchronization.Atomic<Int>(0)
        let done = DispatchSemaphore(value: 0)
        let handle = (pipe.signal |> deliverOn(queue, buffer: .blocking(beyond: 4).counted(by: probe))).start(
            next: { _ in
                delivered.add(1, ordering: .relaxed)
                // A slow consumer: the producer fills the buffer and waits.
                if delivered.load(ordering: .relaxed).isMultiple(of: 50) { usleep(100) }
            },
            completed: { done.signal() }
        )
        for value in 1...2_000 { pipe.putNext(value) }
        pipe.putCompletion()
        done.wait()
        #expect(delivered.load(ordering: .relaxed) == 2_000)
        #expect(probe.statistics.drops == 0)
        #expect(probe.statistics.blockedSends > 0)
        handle.dispose()
    }

    /// The async boundaries: a task iterating `values(buffer:)` and a
    /// delivery into an actor, each behind a burst it cannot keep up with.
    @Test(arguments: policies)
    func valuesKeepsTheLaw(buffer: SignalBuffer<DropLawError>) async {
        let probe = SignalBufferProbe()
        let pipe = TestSource<Int, DropLawError>("source", log: EventLog())
        let sent = Synchronization.Atomic<Int>(0)
        let values = (pipe.signal |> beforeNext { _ in sent.add(1, ordering: .relaxed) }).values(
            buffer: buffer.counted(by: probe))
        let consumer = Task { () -> (delivered: Int, terminated: Bool) in
            var delivered = 0
            do {
                for try await _ in values { delivered += 1 }
            } catch {}
            return (delivered, true)
        }
        // The iteration subscribes at its first `next()`.
        while pipe.subscribeCount == 0 { await Task.yield() }
        for value in 1...20 { pipe.putNext(value) }
        pipe.putCompletion()
        let (delivered, terminated) = await consumer.value
        #expect(terminated)
        #expect(delivered + Int(probe.statistics.drops) == sent.load(ordering: .relaxed), "\(buffer)")
    }

    @Test(arguments: policies)
    func anActorDeliveryKeepsTheLaw(buffer: SignalBuffer<DropLawError>) async {
        let recipient = DropLawRecipient()
        let probe = SignalBufferProbe()
        let pipe = TestSource<Int, DropLawError>("source", log: EventLog())
        let sent = Synchronization.Atomic<Int>(0)
        await recipient.attach(
            pipe.signal |> beforeNext { _ in sent.add(1, ordering: .relaxed) }, buffer: buffer.counted(by: probe))
        // The actor is busy while the burst arrives.
        await recipient.block {
            for value in 1...20 { pipe.putNext(value) }
            pipe.putCompletion()
        }
        await recipient.waitForTerminal()
        let delivered = await recipient.delivered
        #expect(delivered + Int(probe.statistics.drops) == sent.load(ordering: .relaxed), "\(buffer)")
        await recipient.detach()
    }
}

/// The recipient of `anActorDeliveryKeepsTheLaw`.
actor DropLawRecipient {
    var delivered = 0
    private var ended = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var handle: (any Disposable)?

    func attach(_ signal: Signal<Int, DropLawError>, buffer: SignalBuffer<DropLawError>) {
        handle = signal.start(
            isolation: self, buffer: buffer,
            next: { _ in self.delivered += 1 },
            error: { _ in self.end() },
            completed: { self.end() }
        )
    }

    /// Runs `body` (which sends) while the actor is held.
    func block(_ body: @Sendable () -> Void) {
        body()
    }

    private func end() {
        ended = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }

    func waitForTerminal() async {
        if ended { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func detach() {
        handle?.dispose()
        handle = nil
    }
}
