// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import SignalKit
import SignalKitTesting
import Testing

// Context propagation across every asynchronous boundary: a value is
// delivered in the context of the code that sent it, subscription-time work
// in the context current at `start`, a delivery whose sender had none runs
// with none (never with what the delivering thread had), and nothing is left
// on the thread afterwards. The context is a task-local, the mechanism
// swift-distributed-tracing's `ServiceContext` uses.

private struct TestError: Error {}

enum TestTrace {
    @TaskLocal static var current: String?
}

/// Propagates `TestTrace.current`.
struct TestTracePropagation: SignalContextPropagation {
    func currentContext() -> String? { TestTrace.current }

    func withContext(_ context: String?, _ body: () -> Void) {
        TestTrace.$current.withValue(context, operation: body)
    }
}

/// Installed once for this test process (every other test then runs with a
/// propagation installed too: the contract is that nothing else changes).
let testTraceInstalled: Void = SignalContext.install(TestTracePropagation())

/// `TestTrace.current` as a log entry.
func traceName() -> String { TestTrace.current ?? "none" }

/// Sends each value under its trace (nil: none), from this thread.
func send(_ pipe: ValuePipe<Int>, _ values: [(Int, String?)]) {
    for (value, trace) in values {
        TestTrace.$current.withValue(trace) { pipe.putNext(value) }
    }
}

/// An actor that logs what its `start(isolation:…)` callbacks see (also
/// used by Boundaries/ContextCarrierTests.swift).
actor TraceRecorder {
    private(set) var log: [String] = []
    private var handle: (any Disposable)?
    private var waiter: (count: Int, continuation: CheckedContinuation<Void, Never>)?

    func attach<E: Sendable>(_ signal: Signal<Int, E>, buffer: SignalBuffer<E> = .unbounded) {
        handle = signal.start(
            isolation: self,
            buffer: buffer,
            next: { value in self.record("\(value) \(traceName())") },
            error: { _ in self.record("error \(traceName())") },
            completed: { self.record("completed \(traceName())") }
        )
    }

    private func record(_ entry: String) {
        log.append(entry)
        if let waiter, log.count >= waiter.count {
            self.waiter = nil
            waiter.continuation.resume()
        }
    }

    func waitForEntries(_ count: Int) async {
        if log.count >= count { return }
        await withCheckedContinuation { waiter = (count, $0) }
    }

    func detach() { handle?.dispose() }
}

@Suite struct ContextPropagationTests {
    init() { _ = testTraceInstalled }

    @Test func aPropagationIsInstalled() {
        #expect(SignalContext.isInstalled)
    }

    @Test(arguments: QueueKind.allCases)
    func deliverOnDeliversEachValueInItsSendersContext(kind: QueueKind) {
        kind.withQueue { queue in
            let log = EventLog()
            let pipe = ValuePipe<Int>()
            let handle = (pipe.signal() |> deliverOn(queue)).start(next: { log.append("\($0) \(traceName())") })
            send(pipe, [(1, "A"), (2, "B"), (3, nil), (4, "A")])
            queue.sync {}
            #expect(log.events == ["1 A", "2 B", "3 none", "4 A"])
            handle.dispose()
        }
    }

    @Test func nothingIsLeftOnTheDispatchThreadAfterADelivery() {
        let queue = Queue(name: "context.leak")
        let log = EventLog()
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> deliverOn(queue)).start(next: { log.append("\($0) \(traceName())") })
        send(pipe, [(1, "A")])
        // A raw Dispatch block (not through `Queue`): it sees what the thread
        // has, and must see nothing.
        let done = DispatchSemaphore(value: 0)
        queue.queue.async {
            log.append("raw \(traceName())")
            done.signal()
        }
        done.wait()
        #expect(log.events == ["1 A", "raw none"])
        handle.dispose()
    }

    @Test func nothingIsLeftOnADedicatedThreadAfterADelivery() {
        let scheduler = DedicatedThreadScheduler(name: "context.leak")
        defer { scheduler.shutdown() }
        let queue = Queue(scheduler: scheduler)
        let log = EventLog()
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> deliverOn(queue)).start(next: { log.append("\($0) \(traceName())") })
        send(pipe, [(1, "A")])
        // Straight to the scheduler (not through `Queue`): no context of its own.
        let done = DispatchSemaphore(value: 0)
        scheduler.schedule {
            log.append("raw \(traceName())")
            done.signal()
        }
        done.wait()
        #expect(log.events == ["1 A", "raw none"])
        handle.dispose()
    }

    /// A virtual-time queue runs its work on the thread that advances the
    /// clock, inside that code's context: a value sent with none must still
    /// see none.
    @Test func aValueSentWithoutContextSeesNoneWhereverItRuns() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> deliverOn(queue)).start(next: { log.append("\($0) \(traceName())") })
        send(pipe, [(1, "A"), (2, nil)])
        TestTrace.$current.withValue("runner") { scheduler.run() }
        #expect(log.events == ["1 A", "2 none"])
        handle.dispose()
    }

    @Test func twoSubscriptionsOnOneQueueNeverSeeEachOthersContext() {
        let queue = Queue(name: "context.shared")
        let log = EventLog()
        let first = ValuePipe<Int>()
        let second = ValuePipe<Int>()
        let handles = [
            (first.signal() |> deliverOn(queue)).start(next: { log.append("first \($0) \(traceName())") }),
            (second.signal() |> deliverOn(queue)).start(next: { log.append("second \($0) \(traceName())") }),
        ]
        for round in 0..<50 {
            send(first, [(round, "X")])
            send(second, [(round, nil)])
            send(second, [(round, "Y")])
            send(first, [(round, nil)])
        }
        queue.sync {}
        let expected = (0..<50).flatMap { round in
            ["first \(round) X", "second \(round) none", "second \(round) Y", "first \(round) none"]
        }
        #expect(log.events == expected)
        handles.forEach { $0.dispose() }
    }

    /// Unbounded (a task per value) and bounded (one drain per burst).
    @Test(arguments: [SignalBuffer<NoError>.unbounded, .droppingOldest(beyond: 16)])
    func deliverOnAThreadPoolDeliversEachValueInItsSendersContext(buffer: SignalBuffer<NoError>) {
        let pool = ThreadPool(threadCount: 2, threadPriority: 0.5)
        let log = EventLog()
        let delivered = DispatchSemaphore(value: 0)
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> deliverOn(pool, buffer: buffer)).start(next: {
            log.append("\($0) \(traceName())")
            delivered.signal()
        })
        send(pipe, [(1, "A"), (2, nil), (3, "B")])
        for _ in 0..<3 { delivered.wait() }
        #expect(log.events == ["1 A", "2 none", "3 B"])
        handle.dispose()
    }

    @Test func errorsAndCompletionsCarryTheirSendersContext() {
        let queue = Queue(name: "context.terminal")
        let log = EventLog()
        let completing = TestSource<Int, NoError>("completing", log: EventLog())
        let failing = TestSource<Int, TestError>("failing", log: EventLog())
        let handles = [
            (completing.signal |> deliverOn(queue)).start(
                next: { log.append("\($0) \(traceName())") },
                completed: { log.append("completed \(traceName())") }
            ),
            (failing.signal |> deliverOn(queue)).start(error: { _ in log.append("error \(traceName())") }),
        ]
        TestTrace.$current.withValue("A") { completing.putNext(1) }
        TestTrace.$current.withValue("C") { completing.putCompletion() }
        TestTrace.$current.withValue("E") { failing.putError(TestError()) }
        queue.sync {}
        #expect(log.events == ["1 A", "completed C", "error E"])
        handles.forEach { $0.dispose() }
    }

    @Test func runOnSubscribesInTheContextOfStart() {
        let queue = Queue(name: "context.runOn")
        let log = EventLog()
        let signal = Signal<Int, NoError> { subscriber in
            log.append("subscribed \(traceName())")
            subscriber.putNext(1)
            return EmptyDisposable
        }
        let handle = TestTrace.$current.withValue("S") {
            (signal |> runOn(queue)).start(next: { log.append("\($0) \(traceName())") })
        }
        queue.sync {}
        #expect(log.events == ["subscribed S", "1 S"])
        handle.dispose()
    }

    @Test func delayedSubscriptionRunsInTheContextOfStart() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let signal = Signal<Int, NoError> { subscriber in
            log.append("subscribed \(traceName())")
            return EmptyDisposable
        }
        let handle = TestTrace.$current.withValue("S") { (signal |> delay(1, queue: queue)).start() }
        TestTrace.$current.withValue("runner") { scheduler.advance(by: 1) }
        #expect(log.events == ["subscribed S"])
        handle.dispose()
    }

    @Test func aTimerFiresInTheContextOfItsStart() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let timer = Timer(
            timeout: 1, repeat: true, completion: { log.append("fired \(traceName())") }, queue: scheduler.makeQueue())
        TestTrace.$current.withValue("S") { timer.start() }
        TestTrace.$current.withValue("runner") { scheduler.advance(by: 2) }
        timer.invalidate()
        #expect(log.events == ["fired S", "fired S"])
    }

    @Test func aDispatchTimerFiresInTheContextOfItsStart() {
        let log = EventLog()
        let fired = DispatchSemaphore(value: 0)
        let timer = Timer(
            timeout: 0.001, repeat: false,
            completion: {
                log.append("fired \(traceName())")
                fired.signal()
            }, queue: Queue(name: "context.timer"))
        TestTrace.$current.withValue("S") { timer.start() }
        fired.wait()
        #expect(log.events == ["fired S"])
    }

    @Test func intervalTicksInTheContextOfStart() {
        let log = EventLog()
        let ticked = DispatchSemaphore(value: 0)
        let queue = Queue(name: "context.interval")
        // With a leeway: a Dispatch timer source of its own.
        let handle = TestTrace.$current.withValue("S") {
            (interval(0.001, queue: queue, leeway: 0.001) |> take(2)).start(next: { tick in
                log.append("tick \(tick) \(traceName())")
                ticked.signal()
            })
        }
        ticked.wait()
        ticked.wait()
        #expect(log.events == ["tick 0 S", "tick 1 S"])
        handle.dispose()
    }

    @Test func queueAfterAndSyncRunInTheCallersContext() {
        let queue = Queue(name: "context.after")
        let log = EventLog()
        let ran = DispatchSemaphore(value: 0)
        TestTrace.$current.withValue("A") {
            queue.after(0.001) {
                log.append("after \(traceName())")
                ran.signal()
            }
        }
        ran.wait()
        TestTrace.$current.withValue("B") { queue.sync { log.append("sync \(traceName())") } }
        TestTrace.$current.withValue("C") { queue.justDispatch { log.append("justDispatch \(traceName())") } }
        queue.sync {}
        #expect(log.events == ["after A", "sync B", "justDispatch C"])
    }

    @Test func delayEventsDeliversEachValueInItsSendersContext() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> delayEvents(1, queue: scheduler.makeQueue())).start(next: {
            log.append("\($0) \(traceName())")
        })
        send(pipe, [(1, "A"), (2, "B"), (3, nil)])
        TestTrace.$current.withValue("runner") { scheduler.advance(by: 1) }
        #expect(log.events == ["1 A", "2 B", "3 none"])
        handle.dispose()
    }

    /// A debounced value goes out when the timer fires, in the context of
    /// the code that sent it, not of the code whose value armed the timer.
    @Test func throttleSendsTheWaitingValueInItsSendersContext() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> throttle(1, queue: scheduler.makeQueue())).start(next: {
            log.append("\($0) \(traceName())")
        })
        send(pipe, [(1, "A"), (2, "B")])
        TestTrace.$current.withValue("runner") { scheduler.advance(by: 1) }
        send(pipe, [(3, "C")])
        TestTrace.$current.withValue("runner") { scheduler.advance(by: 1) }
        #expect(log.events == ["2 B", "3 C"])
        handle.dispose()
    }

    @Test func aRateLimitSendsTheWindowsValueInItsSendersContext() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> throttle(for: .seconds(1), queue: scheduler.makeQueue(), latest: true)).start(
            next: { log.append("\($0) \(traceName())") })
        send(pipe, [(1, "A"), (2, "B"), (3, "C")])
        TestTrace.$current.withValue("runner") { scheduler.advance(by: 1) }
        #expect(log.events == ["1 A", "3 C"])
        handle.dispose()
    }

    @Test func bufferWithTimeSendsTheBatchInItsNewestValuesContext() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> bufferWithTime(1, queue: scheduler.makeQueue())).start(next: {
            log.append("\($0) \(traceName())")
        })
        send(pipe, [(1, "A"), (2, "B")])
        TestTrace.$current.withValue("runner") { scheduler.advance(by: 1) }
        #expect(log.events == ["[1, 2] B"])
        handle.dispose()
    }

    /// The burst's task must not inherit the first value's context (each
    /// value is delivered in its own).
    @Test func startIsolationDeliversEachValueInItsSendersContext() async {
        let recorder = TraceRecorder()
        let pipe = ValuePipe<Int>()
        await recorder.attach(pipe.signal())
        send(pipe, [(1, "A"), (2, "B"), (3, nil)])
        await recorder.waitForEntries(3)
        #expect(await recorder.log == ["1 A", "2 B", "3 none"])
        await recorder.detach()
    }
}
