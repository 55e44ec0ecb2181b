// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

private enum Boom: Error, Equatable { case boom }

/// An actor that records what its `start(isolation:)` callbacks see, checking
/// at run time that each one runs on the actor.
private actor Recorder {
    private(set) var log: [String] = []
    private var handle: (any Disposable)?
    private var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// Subscribes; then runs `probe` and, if asked, disposes, all in this
    /// turn of the actor (so before any delivery job can run).
    func attach<E: Sendable>(
        _ signal: Signal<Int, E>,
        probe: (@Sendable () -> Void)? = nil,
        disposeAfterProbe: Bool = false
    ) {
        handle = signal.start(
            isolation: self,
            next: { value in
                self.preconditionIsolated()
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
        record("started")
        probe?()
        if disposeAfterProbe { handle?.dispose() }
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

@Suite struct ActorDeliveryTests {
    @Test func eventsArriveOnTheActorInOrderAfterStartReturns() async {
        let recorder = Recorder()
        let signal = Signal<Int, Boom>.sequence([1, 2, 3])
        await recorder.attach(signal)
        await recorder.waitForEntries(5)
        // Sent synchronously during start, delivered after it returned.
        #expect(await recorder.log == ["started", "next 1", "next 2", "next 3", "completed"])
    }

    @Test func anErrorEndsTheDelivery() async {
        let recorder = Recorder()
        let source = TestSource<Int, Boom>("source", log: EventLog())
        await recorder.attach(source.signal)
        source.putNext(1)
        source.putError(.boom)
        source.putNext(2)
        await recorder.waitForEntries(3)
        #expect(await recorder.log == ["started", "next 1", "error boom"])
    }

    @Test func valuesFromAnotherThreadKeepTheirOrder() async {
        let recorder = Recorder()
        let pipe = ValuePipe<Int>()
        await recorder.attach(pipe.signal())
        let queue = Queue(name: "producer")
        queue.async {
            for value in 0..<1000 { pipe.putNext(value) }
        }
        await recorder.waitForEntries(1001)
        #expect(await recorder.log == ["started"] + (0..<1000).map { "next \($0)" })
        // The pipe never completes: disposing releases the callbacks (which
        // capture the recorder).
        await recorder.detach()
    }

    @Test func disposingDropsTheUndeliveredEventsAndDisposesUpstream() async {
        let recorder = Recorder()
        let log = EventLog()
        let source = TestSource<Int, Boom>("source", log: log)
        // The value is queued while the actor is busy with `attach`, and the
        // dispose in the same turn must drop it.
        await recorder.attach(source.signal, probe: { source.putNext(1) }, disposeAfterProbe: true)
        source.putNext(2)
        #expect(log.events == ["source.subscribe#1", "source.dispose#1"])
        // Give a wrongly delivered event every chance to arrive.
        for _ in 0..<100 { await Task.yield() }
        #expect(await recorder.log == ["started"])
    }

    @Test func callbacksAreReleasedAfterTheTerminalEvent() async {
        let recorder = Recorder()
        let released = EventLog()
        let source = TestSource<Int, Boom>("source", log: EventLog())
        await recorder.attachHolding(LifetimeProbe(released), to: source.signal)
        #expect(released.events.isEmpty)
        source.putCompletion()
        await recorder.waitForEntries(2)
        for _ in 0..<100 where released.events.isEmpty { await Task.yield() }
        #expect(released.events == ["released"])
    }
}

@Suite struct ActorDeliveryMemoryTests {
    @Test func anActorKeepingItsHandleIsReleasedOnceTheSignalTerminated() async {
        weak var weakRecorder: Recorder?
        do {
            let recorder = Recorder()
            weakRecorder = recorder
            await recorder.attach(Signal<Int, Boom>.sequence([1]))
            await recorder.waitForEntries(3)
        }
        // A finishing drain job may hold the actor for a moment.
        for _ in 0..<1000 where weakRecorder != nil { await Task.yield() }
        #expect(weakRecorder == nil)
    }

    @Test func anEventAfterTheActorIsGoneDisposesTheSubscription() async {
        let log = EventLog()
        let source = TestSource<Int, Boom>("source", log: log)
        weak var weakHolder: SilentHolder?
        do {
            let holder = SilentHolder()
            weakHolder = holder
            await holder.attach(source.signal)
        }
        for _ in 0..<1000 where weakHolder != nil { await Task.yield() }
        #expect(weakHolder == nil)
        source.putNext(1)
        #expect(log.events == ["source.subscribe#1", "source.dispose#1"])
    }
}

/// An actor whose callback does not capture it: dropping the actor leaves
/// the subscription without anyone to deliver to.
private actor SilentHolder {
    private var handle: (any Disposable)?

    func attach(_ signal: Signal<Int, Boom>) {
        handle = signal.start(isolation: self, next: { _ in })
    }
}

/// Logs "released" when it is deinitialised.
private final class LifetimeProbe: Sendable {
    let log: EventLog
    init(_ log: EventLog) { self.log = log }
    deinit { log.append("released") }
}

extension Recorder {
    /// Subscribes with a completion callback that captures `object`.
    fileprivate func attachHolding(_ object: LifetimeProbe, to signal: Signal<Int, Boom>) {
        handle = signal.start(
            isolation: self,
            completed: { [object] in
                _ = object
                self.record("completed")
            })
        record("started")
    }
}
