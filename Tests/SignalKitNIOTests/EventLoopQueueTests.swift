// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NIO
import Dispatch
import NIOCore
import NIOEmbedded
import NIOPosix
import SignalKit
import SignalKitNIO
import SignalKitTesting
import Testing

private enum Boom: Error, Equatable { case boom }

@Suite struct EventLoopQueueTests {
    @Test func timersRunOnTheEmbeddedLoopsVirtualClock() {
        let loop = EmbeddedEventLoop()
        let queue = Queue(eventLoop: loop)
        let log = EventLog()
        _ = log.start(Signal<Int, NoError>.single(1) |> delay(.seconds(2), queue: queue))
        loop.advanceTime(by: .milliseconds(1999))
        #expect(log.events == [])
        loop.advanceTime(by: .milliseconds(1))
        #expect(log.events == ["next 1", "completed"])
    }

    /// The same virtual time on NIO's thread-safe testing loop, whose tasks
    /// run on its own executor when the test advances its clock.
    @Test func timersRunOnTheAsyncTestingLoopsVirtualClock() async {
        let loop = NIOAsyncTestingEventLoop()
        let queue = Queue(eventLoop: loop)
        let log = EventLog()
        let source = TestSource<Int, NoError>("source", log: log)
        let handle = log.start(source.signal |> timeout(.seconds(1), queue: queue, alternate: .single(-1)))
        await loop.advanceTime(by: .milliseconds(999))
        #expect(log.events == ["source.subscribe#1"])
        await loop.advanceTime(by: .milliseconds(1))
        #expect(log.events == ["source.subscribe#1", "next -1", "completed", "source.dispose#1"])
        handle.dispose()
        await loop.shutdownGracefully()
    }

    /// `deliverOn` the testing loop: the events arrive on the loop, in
    /// order, by the time it has run what was submitted. (Work submitted with
    /// `execute` may run on the loop's own executor before `run()`.)
    @Test func deliverOnTheAsyncTestingLoopDeliversInOrder() async {
        let loop = NIOAsyncTestingEventLoop()
        let log = EventLog()
        _ = log.start(Signal<Int, NoError>.single(1) |> deliverOn(loop))
        await loop.run()
        #expect(log.events == ["next 1", "completed"])
        await loop.shutdownGracefully()
    }

    @Test func aTimeoutOnTheLoopSwitchesToTheAlternate() {
        let loop = EmbeddedEventLoop()
        let queue = Queue(eventLoop: loop)
        let log = EventLog()
        let source = TestSource<Int, NoError>("source", log: log)
        _ = log.start(source.signal |> timeout(.seconds(1), queue: queue, alternate: .single(-1)))
        loop.advanceTime(by: .seconds(1))
        // SignalKit's timeout: the alternate runs, then the source is disposed.
        #expect(log.events == ["source.subscribe#1", "next -1", "completed", "source.dispose#1"])
    }

    @Test func disposingCancelsTheScheduledTask() {
        let loop = EmbeddedEventLoop()
        let queue = Queue(eventLoop: loop)
        let log = EventLog()
        let handle = log.start(Signal<Int, NoError>.single(1) |> delay(1.0, queue: queue))
        handle.dispose()
        loop.advanceTime(by: .seconds(5))
        #expect(log.events == [])
    }

    /// An `EmbeddedEventLoop` always says it is on the loop, so a bounded
    /// `deliverOn` onto it delivers each value inline, before `putNext`
    /// returns: nothing waits, so nothing is dropped whatever the policy.
    @Test func aBoundedDeliverOnOntoAnEmbeddedLoopIsInline() {
        let loop = EmbeddedEventLoop()
        let log = EventLog()
        let probe = SignalBufferProbe()
        let pipe = ValuePipe<Int>()
        let handle = log.start(
            pipe.signal() |> deliverOn(loop, buffer: SignalBuffer.droppingNewest(beyond: 1).counted(by: probe)))
        for value in 1...5 {
            pipe.putNext(value)
            #expect(log.events.last == "next \(value)", "delivered before putNext returned")
        }
        #expect(loop.inEventLoop, "as EmbeddedEventLoop always answers")
        #expect(probe.statistics.drops == 0)
        #expect(probe.statistics.maximumDepth == 1, "each value waited alone for its inline delivery")
        handle.dispose()
    }

    @Test func theQueueClockIsTheLoopsClock() {
        let loop = EmbeddedEventLoop()
        let queue = Queue(eventLoop: loop)
        let before = queue.scheduler!.currentTime
        loop.advanceTime(by: .milliseconds(1500))
        #expect(queue.scheduler!.currentTime - before == 1.5)
    }

    @Test func deliverOnALoopDeliversEveryEventThereInOrder() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let received = Shared<[Int]>([])
        let offLoop = Shared(0)
        let done = loop.makePromise(of: Void.self)
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> take(1000) |> deliverOn(loop)).start(
            next: { value in
                if !loop.inEventLoop { offLoop.withLock { $0 += 1 } }
                received.withLock { $0.append(value) }
            },
            completed: { done.succeed() }
        )
        for value in 0..<1000 { pipe.putNext(value) }
        try done.futureResult.wait()
        handle.dispose()
        #expect(received.value == Array(0..<1000))
        #expect(offLoop.value == 0)
    }

    /// A bounded hop onto a loop busy with other work: the values wait, the
    /// policy decides which survive, and they arrive on the loop.
    @Test func deliverOnALoopWithABufferKeepsTheNewestValues() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        // Semaphores, not a promise: a future's waiters are woken by the
        // loop, which this task keeps busy.
        let busy = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        loop.execute {
            busy.signal()
            release.wait()
        }
        busy.wait()
        let received = Shared<[Int]>([])
        let offLoop = Shared(0)
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> deliverOn(loop, buffer: .droppingOldest(beyond: 2))).start(next: { value in
            if !loop.inEventLoop { offLoop.withLock { $0 += 1 } }
            received.withLock { $0.append(value) }
        })
        for value in 1...5 { pipe.putNext(value) }
        release.signal()
        try loop.submit {}.wait()
        handle.dispose()
        #expect(received.value == [4, 5])
        #expect(offLoop.value == 0)
    }

    @Test func runOnALoopRunsTheGeneratorThere() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let promise = loop.makePromise(of: Bool.self)
        let signal = Signal<Bool, NoError> { subscriber in
            subscriber.putNext(loop.inEventLoop)
            subscriber.putCompletion()
            return EmptyDisposable
        }
        _ = (signal |> runOn(loop)).start(next: { promise.succeed($0) })
        #expect(try promise.futureResult.wait() == true)
    }

    @Test func syncFromAnotherThreadWaitsAndFromTheLoopRunsInline() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let loop = group.next()
        let queue = Queue(eventLoop: loop)
        let log = EventLog()
        queue.sync { log.append("sync on loop: \(loop.inEventLoop)") }
        try loop.submit {
            queue.sync { log.append("nested inline: \(loop.inEventLoop)") }
            log.append("after nested")
        }.wait()
        #expect(log.events == ["sync on loop: true", "nested inline: true", "after nested"])
    }
}

@Suite struct EventLoopFutureBridgeTests {
    @Test func aSucceededFutureSendsItsValueThenCompletes() throws {
        let loop = EmbeddedEventLoop()
        let log = EventLog()
        _ = log.start(loop.makeSucceededFuture(7).signal)
        loop.run()
        #expect(log.events == ["next 7", "completed"])
    }

    @Test func aFailedFutureFailsTheSignal() {
        let loop = EmbeddedEventLoop()
        let log = EventLog()
        let future: EventLoopFuture<Int> = loop.makeFailedFuture(Boom.boom)
        _ = log.start(future.signal |> mapError { "\($0)" })
        loop.run()
        #expect(log.events == ["error boom"])
    }

    @Test func firstValueSucceedsWithTheFirstValueAndDisposes() throws {
        let loop = EmbeddedEventLoop()
        let log = EventLog()
        let source = TestSource<Int, Boom>("source", log: log)
        let future = source.signal.firstValue(on: loop)
        source.putNext(1)
        source.putNext(2)
        #expect(try future.wait() == 1)
        #expect(log.events == ["source.subscribe#1", "source.dispose#1"])
    }

    @Test func firstValueTellsAnErrorFromACompletionWithoutValueAndASilentEnd() {
        let loop = EmbeddedEventLoop()
        func failure(_ signal: Signal<Int, Boom>) -> String {
            do {
                _ = try signal.firstValue(on: loop).wait()
                return "succeeded"
            } catch let error as SignalAwaitError<Boom> {
                if case .error(.boom) = error { return "error boom" }
                return "\(error)"
            } catch {
                return "other \(error)"
            }
        }
        #expect(failure(.fail(.boom)) == "error boom")
        #expect(failure(.complete()) == "completedWithoutValue")
        #expect(failure(.never()) == "endedWithoutEvent")
    }
}

#endif  // NIO
