// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// SignalKitDebug.bufferStatistics(): an entry per name lives while a
// subscription of that name does and for the retention after; and
// SignalBufferProbe: one subscription's figures without a name. The table
// is process-wide and other tests use it at the same time: each test names
// its signals with a prefix of its own, and a test that needs entries to go
// at once sets a zero retention for its prefix only.

/// The error of the signals here.
private enum ProbeFailure: Error, Equatable { case tooSlow }

/// Keeps every name's entry for a day after its last subscription ends, in
/// this test process: the suites that read a name's figures once its
/// subscription ended must not depend on the 60 s default (a test starved
/// of threads under ThreadSanitizer took 122 s). Longer prefixes set by a
/// test (`withoutRetention(for:)`) still win. The suites that read figures
/// touch it in their `init()`.
let statisticsKeptForTheTestRun: Void = SignalKitDebug._setBufferStatisticsRetention(
    .seconds(86_400), forNamesWithPrefix: "")

/// The entries whose name starts with `prefix`.
private func entries(_ prefix: String) -> [SignalBufferStatistics] {
    SignalKitDebug.bufferStatistics().filter { $0.name.hasPrefix(prefix) }
}

private func entry(_ name: String) -> SignalBufferStatistics? {
    SignalKitDebug.bufferStatistics().first { $0.name == name }
}

/// Runs `body` with the names that start with `prefix` kept for no time
/// after their last subscription ends.
private func withoutRetention(for prefix: String, _ body: () throws -> Void) rethrows {
    SignalKitDebug._setBufferStatisticsRetention(.zero, forNamesWithPrefix: prefix)
    defer { SignalKitDebug._setBufferStatisticsRetention(nil, forNamesWithPrefix: prefix) }
    try body()
}

/// A subscription through `deliverOn(queue, buffer:)` on a virtual-time
/// queue that the test never runs: every value sent waits or is dropped.
private struct Held {
    let pipe: ValuePipe<Int>
    let handle: any Disposable

    init(_ name: String?, _ buffer: SignalBuffer<NoError>, scheduler: VirtualTimeScheduler) {
        let pipe = ValuePipe<Int>()
        let signal = name.map { pipe.signal() |> named($0) } ?? pipe.signal()
        self.pipe = pipe
        handle = (signal |> deliverOn(scheduler.makeQueue(), buffer: buffer)).start()
    }

    func send(_ count: Int) {
        for value in 0..<count { pipe.putNext(value) }
    }
}

@Suite struct BufferStatisticsTests {
    init() { _ = statisticsKeptForTheTestRun }

    /// A service that names a signal per client: once a client's
    /// subscription ends, its entry goes (here at once: no retention for
    /// the prefix), so 1,000 clients leave the table as it was.
    @Test func namesPerClientLeaveTheTableAsItWas() {
        let prefix = "BufferStatisticsTests.client-"
        withoutRetention(for: prefix) {
            let scheduler = VirtualTimeScheduler()
            #expect(entries(prefix).isEmpty)
            for client in 0..<1_000 {
                let name = "\(prefix)\(client)"
                let held = Held(name, .droppingNewest(beyond: 1), scheduler: scheduler)
                held.send(3)
                if client % 100 == 0 {
                    let live = entry(name)
                    #expect(live?.drops == 2)
                    #expect(live?.liveSubscriptions == 1)
                }
                held.handle.dispose()
            }
            #expect(entries(prefix).isEmpty, "the table is back to its size before the clients")
        }
    }

    /// With the default retention an ended name keeps its entry, final
    /// figures and all, and a subscription of the name that starts within
    /// the retention goes on counting in it.
    @Test func anEndedNameKeepsItsEntryForTheRetention() {
        let name = "BufferStatisticsTests.retained"
        let scheduler = VirtualTimeScheduler()
        #expect(SignalKitDebug.bufferStatisticsRetention == .seconds(60))
        let first = Held(name, .droppingNewest(beyond: 1), scheduler: scheduler)
        first.send(3)
        first.handle.dispose()
        let ended = entry(name)
        #expect(ended?.drops == 2)
        #expect(ended?.liveSubscriptions == 0)
        #expect(ended?.depth == 0)
        let second = Held(name, .droppingNewest(beyond: 1), scheduler: scheduler)
        second.send(2)
        #expect(entry(name)?.drops == 3)
        #expect(entry(name)?.liveSubscriptions == 1)
        second.handle.dispose()
    }

    /// The counters of a name survive while any subscription of it lives;
    /// when the last one ends the entry goes (no retention), and the next
    /// subscription of the name counts from zero in a new entry.
    @Test func aLiveNameKeepsItsCountersAndAGoneNameStartsAgain() {
        let name = "BufferStatisticsTests.live"
        withoutRetention(for: name) {
            let scheduler = VirtualTimeScheduler()
            let a = Held(name, .droppingNewest(beyond: 1), scheduler: scheduler)
            let b = Held(name, .droppingNewest(beyond: 1), scheduler: scheduler)
            a.send(3)
            a.handle.dispose()
            #expect(entry(name)?.drops == 2, "b keeps the entry, and a's drops in it")
            #expect(entry(name)?.liveSubscriptions == 1)
            b.send(2)
            #expect(entry(name)?.drops == 3)
            #expect(entry(name)?.maximumDepth == 1)
            b.handle.dispose()
            #expect(entry(name) == nil)
            let c = Held(name, .droppingOldest(beyond: 4), scheduler: scheduler)
            c.send(2)
            let fresh = entry(name)
            #expect(fresh?.drops == 0)
            #expect(fresh?.depth == 2)
            #expect(fresh?.policy == "droppingOldest(beyond: 4)", "a new entry shows its own boundary's policy")
            c.handle.dispose()
            #expect(entry(name) == nil)
        }
    }

    /// A producer blocked by `blocking` when the subscription is disposed:
    /// its value is counted as dropped by the disposal, so the drop is in
    /// the entry before the entry can go.
    @Test func aBlockedProducersDropIsCountedBeforeTheEntryGoes() async {
        let name = "BufferStatisticsTests.blocked"
        let probe = SignalBufferProbe()
        SignalKitDebug._setBufferStatisticsRetention(.zero, forNamesWithPrefix: name)
        defer { SignalKitDebug._setBufferStatisticsRetention(nil, forNamesWithPrefix: name) }
        let scheduler = VirtualTimeScheduler()
        let held = Held(name, SignalBuffer.blocking(beyond: 1).counted(by: probe), scheduler: scheduler)
        held.send(1)
        let pipe = held.pipe
        // Finds the buffer full and waits for room, on a thread of its own
        // (not a task's: a blocked task would hold one of the cooperative
        // pool's few threads, which other tests running meanwhile need).
        let returned = Synchronization.Atomic<Bool>(false)
        Queue(name: "BufferStatisticsTests.producer").async {
            pipe.putNext(1)
            returned.store(true, ordering: .releasing)
        }
        while probe.statistics.blockedSends == 0 { await Task.yield() }
        #expect(entry(name)?.blockedSends == 1)
        held.handle.dispose()
        while !returned.load(ordering: .acquiring) { await Task.yield() }
        #expect(probe.statistics.drops == 1)
        #expect(entry(name) == nil)
    }

    @Test func aNegativeRetentionStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            SignalKitDebug.bufferStatisticsRetention = .seconds(-1)
        }
        let message = String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
        #expect(message.contains("SignalKitDebug.bufferStatisticsRetention: a retention cannot be negative"))
    }
}

@Suite struct SignalBufferProbeTests {
    /// Two subscriptions of one unnamed signal share the table's entry (its
    /// type's name), but each probe has its own subscription's figures, and
    /// keeps them after the subscription ends.
    @Test func aProbeHasItsSubscriptionsOwnFiguresWithoutAName() {
        let scheduler = VirtualTimeScheduler()
        let (first, second) = (SignalBufferProbe(), SignalBufferProbe())
        #expect(
            first.statistics
                == SignalBufferStatistics(
                    name: "", policy: "", drops: 0, overflows: 0, blockedSends: 0, depth: 0, maximumDepth: 0,
                    liveSubscriptions: 0))
        let a = Held(nil, SignalBuffer.droppingNewest(beyond: 2).counted(by: first), scheduler: scheduler)
        let b = Held(nil, SignalBuffer.droppingOldest(beyond: 3).counted(by: second), scheduler: scheduler)
        a.send(5)
        b.send(4)
        let one = first.statistics
        #expect(one.policy == "droppingNewest(beyond: 2)")
        #expect(one.drops == 3)
        #expect(one.depth == 2)
        #expect(one.maximumDepth == 2)
        #expect(one.liveSubscriptions == 1)
        let two = second.statistics
        #expect(two.policy == "droppingOldest(beyond: 3)")
        #expect(two.drops == 1)
        #expect(two.depth == 3)
        #expect(two.liveSubscriptions == 1)
        a.handle.dispose()
        b.handle.dispose()
        #expect(first.statistics.drops == 3)
        #expect(first.statistics.liveSubscriptions == 0)
        #expect(first.statistics.depth == 0)
        #expect(second.statistics.drops == 1)
    }

    /// A probe is not in the table: it keeps its figures when its name's
    /// entry goes.
    @Test func aProbeOutlivesItsNamesEntry() {
        let name = "SignalBufferProbeTests.gone"
        withoutRetention(for: name) {
            let probe = SignalBufferProbe()
            let held = Held(name, SignalBuffer.latest.counted(by: probe), scheduler: VirtualTimeScheduler())
            held.send(4)
            held.handle.dispose()
            #expect(entry(name) == nil)
            #expect(probe.statistics.name == name)
            #expect(probe.statistics.policy == "latest")
            #expect(probe.statistics.drops == 3)
        }
    }

    @Test func aProbeCountsEverySubscriptionItIsGiven() {
        let scheduler = VirtualTimeScheduler()
        let probe = SignalBufferProbe()
        let pipe = ValuePipe<Int>()
        let hop = pipe.signal() |> deliverOn(scheduler.makeQueue(), buffer: SignalBuffer.latest.counted(by: probe))
        let handles = [hop.start(), hop.start()]
        for value in 0..<3 { pipe.putNext(value) }
        #expect(probe.statistics.drops == 4)
        #expect(probe.statistics.depth == 2)
        #expect(probe.statistics.liveSubscriptions == 2)
        handles.forEach { $0.dispose() }
        #expect(probe.statistics.liveSubscriptions == 0)
    }

    @Test func anUnboundedBuffersProbeStaysAtZero() {
        let scheduler = VirtualTimeScheduler()
        let probe = SignalBufferProbe()
        let held = Held(nil, SignalBuffer.unbounded.counted(by: probe), scheduler: scheduler)
        held.send(3)
        #expect(probe.statistics.liveSubscriptions == 0)
        #expect(probe.statistics.depth == 0)
        held.handle.dispose()
    }

    /// `delayEvents(_:queue:buffer:)`: the values waiting for their time.
    @Test func aBoundedDelayCountsIntoItsProbe() {
        let scheduler = VirtualTimeScheduler()
        let probe = SignalBufferProbe()
        let pipe = ValuePipe<Int>()
        let handle =
            (pipe.signal() |> delayEvents(2, queue: scheduler.makeQueue(), buffer: .droppingOldest(beyond: 2).counted(by: probe)))
            .start()
        for value in 0..<5 { pipe.putNext(value) }
        #expect(probe.statistics.drops == 3)
        #expect(probe.statistics.depth == 2)
        scheduler.run()
        #expect(probe.statistics.depth == 0)
        handle.dispose()
        #expect(probe.statistics.liveSubscriptions == 0)
    }

    /// `mapToQueue(buffer:_:)`: the inner signals waiting for the running one.
    @Test func aBoundedQueueCountsIntoItsProbe() {
        let probe = SignalBufferProbe()
        let outer = ValuePipe<Int>()
        let handle =
            (outer.signal() |> mapToQueue(buffer: SignalBuffer.latest.counted(by: probe)) { _ in Signal<Int, NoError>.never() })
            .start()
        for value in 0..<4 { outer.putNext(value) }
        // The first runs; of the three that wait for it, `latest` keeps one.
        #expect(probe.statistics.drops == 2)
        #expect(probe.statistics.depth == 1)
        handle.dispose()
        #expect(probe.statistics.liveSubscriptions == 0)
    }

    /// `values(buffer:)`: the values the iterating task has not taken.
    @Test func aValuesIterationCountsIntoItsProbe() async throws {
        let probe = SignalBufferProbe()
        let log = EventLog()
        let source = TestSource<Int, ProbeFailure>("a", log: log) { $0.putNext(0) }
        var iterator = source.signal.values(buffer: .droppingNewest(beyond: 1).counted(by: probe)).makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        for value in 1...3 { source.putNext(value) }
        #expect(probe.statistics.drops == 2)
        #expect(probe.statistics.depth == 1)
        #expect(probe.statistics.liveSubscriptions == 1)
        source.putCompletion()
        #expect(try await iterator.next() == 1)
        #expect(try await iterator.next() == nil)
        #expect(probe.statistics.liveSubscriptions == 0)
        #expect(probe.statistics.drops == 2)
    }

    /// `start(isolation:buffer:…)`: a `failing` overflow ends the
    /// subscription; the probe keeps the overflow and its drops.
    @Test func anActorDeliveryCountsIntoItsProbe() async {
        let probe = SignalBufferProbe()
        let receiver = ProbeReceiver()
        // Sent in the turn of `start`, before any drain can run: 0 waits, 1
        // overflows (0 and 1 dropped), 2 is refused.
        let signal = Signal<Int, ProbeFailure> { subscriber in
            for value in 0..<3 { subscriber.putNext(value) }
            return EmptyDisposable
        }
        await receiver.start(signal, buffer: SignalBuffer.failing(beyond: 1, with: .tooSlow).counted(by: probe))
        await receiver.waitForTheEnd()
        #expect(await receiver.events == ["error tooSlow"])
        let figures = probe.statistics
        #expect(figures.overflows == 1)
        #expect(figures.drops == 2)
        #expect(figures.liveSubscriptions == 0)
    }
}

/// Receives a signal's events on itself.
private actor ProbeReceiver {
    private(set) var events: [String] = []
    private var handle: (any Disposable)?
    private var end: CheckedContinuation<Void, Never>?
    private var ended = false

    func start(_ signal: Signal<Int, ProbeFailure>, buffer: SignalBuffer<ProbeFailure>) {
        handle = signal.start(
            isolation: self,
            buffer: buffer,
            next: { self.events.append("next \($0)") },
            error: { error in
                self.events.append("error \(error)")
                self.finish()
            },
            completed: {
                self.events.append("completed")
                self.finish()
            }
        )
    }

    private func finish() {
        ended = true
        end?.resume()
        end = nil
    }

    func waitForTheEnd() async {
        if ended { return }
        await withCheckedContinuation { end = $0 }
    }
}
