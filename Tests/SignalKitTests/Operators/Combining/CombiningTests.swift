// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct CombineTests {
    // MARK: Priming, one output per value, completion

    @Test func nothingUntilEveryInputHasAValueThenOneTuplePerInputValue() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<String, String>("b", log: log)
        let handle = log.start(combineLatest(a.signal, b.signal))
        #expect(log.take() == ["a.subscribe#1", "b.subscribe#1"])
        a.putNext(1)
        a.putNext(2)
        #expect(log.take() == [], "b has no value yet")
        b.putNext("x")
        a.putNext(3)
        a.putNext(3)
        b.putNext("y")
        #expect(log.take() == [#"next (2, "x")"#, #"next (3, "x")"#, #"next (3, "x")"#, #"next (3, "y")"#])
        handle.dispose()
        #expect(log.take() == ["a.dispose#1", "b.dispose#1"])
    }

    @Test func aCompletedInputKeepsItsLastValueAndTheOutputCompletesWhenAllHaveCompleted() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(combineLatest(a.signal, b.signal))
        a.putNext(1)
        a.putCompletion()
        b.putNext(10)
        b.putNext(20)
        #expect(log.take() == ["a.subscribe#1", "b.subscribe#1", "a.dispose#1", "next (1, 10)", "next (1, 20)"])
        b.putCompletion()
        #expect(log.take() == ["completed", "b.dispose#1"])
        handle.dispose()
        #expect(log.take() == [])
        #expect(a.disposeCount == 1 && b.disposeCount == 1, "each generator's disposable is disposed exactly once")
    }

    @Test func completesWithoutValuesWhenAnInputCompletesWithoutEverSendingOne() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(combineLatest(a.signal, b.signal))
        a.putCompletion()
        b.putNext(1)
        b.putNext(2)
        b.putCompletion()
        #expect(log.events == ["a.subscribe#1", "b.subscribe#1", "a.dispose#1", "completed", "b.dispose#1"])
    }

    @Test func anOptionalNilCountsAsAValue() {
        let log = EventLog()
        let a = TestSource<Int?, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(combineLatest(a.signal, b.signal))
        a.putNext(nil)
        b.putNext(1)
        a.putNext(2)
        a.putNext(nil)
        #expect(log.take() == ["a.subscribe#1", "b.subscribe#1", "next (nil, 1)", "next (Optional(2), 1)", "next (nil, 1)"])
        handle.dispose()
    }

    // MARK: Errors

    @Test func theFirstErrorWinsAndDisposesTheInputsInArgumentOrder() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let c = TestSource<Int, String>("c", log: log)
        let handle = log.start(combineLatest(a.signal, b.signal, c.signal))
        a.putNext(1)
        b.putError("first")
        a.putError("second")
        c.putNext(3)
        c.putError("third")
        #expect(
            log.take() == [
                "a.subscribe#1", "b.subscribe#1", "c.subscribe#1", "error first", "a.dispose#1", "b.dispose#1",
                "c.dispose#1",
            ])
        handle.dispose()
        #expect(log.take() == [])
        #expect([a.disposeCount, b.disposeCount, c.disposeCount] == [1, 1, 1])
    }

    @Test func anErrorBeforePrimingIsForwarded() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        _ = log.start(combineLatest(a.signal, b.signal))
        b.putError("e")
        #expect(log.events == ["a.subscribe#1", "b.subscribe#1", "error e", "a.dispose#1", "b.dispose#1"])
    }

    @Test func aSynchronousFailureStillSubscribesTheRemainingInputsAndDisposesThemWhenStartFinishes() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log, keepsSubscribers: false) { $0.putError("boom") }
        let b = TestSource<Int, String>("b", log: log, keepsSubscribers: false) {
            $0.putNext(1); $0.putError("late")
        }
        let c = TestSource<Int, String>("c", log: log, keepsSubscribers: false) { $0.putNext(2) }
        _ = log.start(combineLatest(a.signal, b.signal, c.signal))
        log.append("start returned")
        #expect(
            log.events == [
                "a.subscribe#1", "error boom", "a.dispose#1",
                "b.subscribe#1", "b.dispose#1",
                "c.subscribe#1",
                "c.dispose#1",
                "start returned",
            ])
        #expect([a.disposeCount, b.disposeCount, c.disposeCount] == [1, 1, 1])
    }

    // MARK: Synchronous inputs

    @Test func synchronousInputsAreCombinedDuringStart() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log, keepsSubscribers: false) {
            $0.putNext(1); $0.putNext(2); $0.putCompletion()
        }
        let b = TestSource<Int, String>("b", log: log, keepsSubscribers: false) {
            $0.putNext(10); $0.putCompletion()
        }
        _ = log.start(combineLatest(a.signal, b.signal))
        log.append("start returned")
        #expect(
            log.events == [
                "a.subscribe#1", "a.dispose#1",
                "b.subscribe#1", "next (2, 10)", "completed", "b.dispose#1",
                "start returned",
            ])
    }

    @Test func synchronousValuesThenAnAsynchronousInput() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { $0.putNext(1) }
        let b = TestSource<Int, String>("b", log: log)
        let handle = log.start(combineLatest(a.signal, b.signal))
        b.putNext(5)
        a.putNext(2)
        #expect(log.take() == ["a.subscribe#1", "b.subscribe#1", "next (1, 5)", "next (2, 5)"])
        handle.dispose()
        #expect(log.take() == ["a.dispose#1", "b.dispose#1"])
    }

    // MARK: Reentrancy

    @Test func aValueSentFromTheDownstreamCallbackIsCombinedAtOnce() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = combineLatest(a.signal, b.signal).start(next: { pair in
            log.append("next \(pair)")
            if pair.0 == 1 { a.putNext(2) }
            log.append("end \(pair)")
        })
        a.putNext(1)
        b.putNext(7)
        #expect(
            log.take() == [
                "a.subscribe#1", "b.subscribe#1", "next (1, 7)", "next (2, 7)", "end (2, 7)", "end (1, 7)",
            ])
        handle.dispose()  // the callback captures a source that holds its subscriber
        #expect(log.take() == ["a.dispose#1", "b.dispose#1"])
    }

    @Test func disposingFromTheDownstreamCallbackStopsEverything() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = Shared<(any Disposable)?>(nil)
        handle.value = combineLatest(a.signal, b.signal).start(next: { pair in
            log.append("next \(pair)")
            handle.value?.dispose()
            log.append("disposed")
        })
        a.putNext(1)
        b.putNext(2)
        a.putNext(3)
        b.putCompletion()
        #expect(log.events == ["a.subscribe#1", "b.subscribe#1", "next (1, 2)", "a.dispose#1", "b.dispose#1", "disposed"])
        #expect(a.disposeCount == 1 && b.disposeCount == 1)
        handle.value = nil
    }

    @Test func completingAnInputFromTheDownstreamCallback() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = combineLatest(a.signal, b.signal).start(
            next: { pair in
                log.append("next \(pair)")
                a.putCompletion()
                b.putCompletion()
            },
            completed: { log.append("completed") }
        )
        a.putNext(1)
        b.putNext(2)
        #expect(
            log.events == [
                "a.subscribe#1", "b.subscribe#1", "next (1, 2)", "a.dispose#1", "completed", "b.dispose#1",
            ])
        handle.dispose()
        #expect(a.disposeCount == 1 && b.disposeCount == 1)
    }

    // MARK: Initial values

    @Test func theInitialValuesFormEmitsBeforeSubscribingAnyInput() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<String, String>("b", log: log)
        let handle = log.start(combineLatest(a.signal, 0, b.signal, "z"))
        #expect(log.take() == [#"next (0, "z")"#, "a.subscribe#1", "b.subscribe#1"])
        a.putNext(1)
        b.putNext("y")
        a.putCompletion()
        b.putCompletion()
        #expect(log.take() == [#"next (1, "z")"#, #"next (1, "y")"#, "a.dispose#1", "completed", "b.dispose#1"])
        handle.dispose()
        #expect(log.take() == [])
    }

    @Test func theInitialValuesFormEmitsSynchronouslyEvenWithAQueue() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { $0.putNext(1) }
        let b = TestSource<Int, String>("b", log: log) { $0.putNext(2) }
        let handle = log.start(combineLatest(queue: queue, a.signal, -1, b.signal, -2))
        log.append("start returned")
        #expect(log.take() == ["next (-1, -2)", "a.subscribe#1", "b.subscribe#1", "start returned"])
        scheduler.run()
        #expect(log.take() == ["next (1, -2)", "next (1, 2)"])
        handle.dispose()
        #expect(log.take() == ["a.dispose#1", "b.dispose#1"])
    }

    @Test func theInitialValuesFormCompletesWithTheInitialValuesWhenInputsSendNothing() {
        let log = EventLog()
        _ = log.start(combineLatest(Signal<Int, String>.complete(), 1, Signal<Int, String>.complete(), 2))
        #expect(log.events == ["next (1, 2)", "completed"])
    }

    // MARK: Array form

    @Test func theArrayFormCombinesInArrayOrder() {
        let log = EventLog()
        let sources = ["a", "b", "c"].map { TestSource<Int, String>($0, log: log) }
        let handle = log.start(combineLatest(sources.map(\.signal)))
        sources[2].putNext(3)
        sources[0].putNext(1)
        sources[1].putNext(2)
        sources[0].putNext(10)
        #expect(
            log.take() == [
                "a.subscribe#1", "b.subscribe#1", "c.subscribe#1", "next [1, 2, 3]", "next [10, 2, 3]",
            ])
        for source in sources { source.putCompletion() }
        #expect(log.take() == ["a.dispose#1", "b.dispose#1", "completed", "c.dispose#1"])
        handle.dispose()
        #expect(sources.map(\.disposeCount) == [1, 1, 1])
    }

    @Test func theArrayFormWithOneInput() {
        let log = EventLog()
        _ = log.start(combineLatest([Signal<Int, String>.single(4)]))
        #expect(log.events == ["next [4]", "completed"])
    }

    @Test func theArrayFormOfOptionals() {
        let log = EventLog()
        _ = log.start(combineLatest([Signal<Int?, String>.single(nil), .single(1)]))
        #expect(log.events == ["next [nil, Optional(1)]", "completed"])
    }

    @Test func theArrayFormForwardsTheFirstError() {
        let log = EventLog()
        let sources = ["a", "b"].map { TestSource<Int, String>($0, log: log) }
        _ = log.start(combineLatest(sources.map(\.signal)))
        sources[1].putError("e")
        sources[0].putError("f")
        #expect(log.events == ["a.subscribe#1", "b.subscribe#1", "error e", "a.dispose#1", "b.dispose#1"])
    }

    @Test func anEmptyArrayEmitsAnEmptyArrayAndCompletesSynchronouslyIgnoringTheQueue() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        _ = log.start(combineLatest([Signal<Int, String>]()))
        _ = log.start(combineLatest(queue: scheduler.makeQueue(), [Signal<Int, String>]()), prefix: "queue:")
        #expect(log.events == ["next []", "completed", "queue:next []", "queue:completed"])
        #expect(scheduler.pendingCount == 0)
    }

    // MARK: queue

    @Test func withAQueueInputsAreCombinedAndDeliveredOnIt() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let handle = combineLatest(queue: queue, a.signal, b.signal).start(
            next: { log.append("next \($0) onQueue=\(queue.isCurrent())") },
            completed: { log.append("completed onQueue=\(queue.isCurrent())") }
        )
        a.putNext(1)
        b.putNext(2)
        a.putCompletion()
        b.putCompletion()
        #expect(log.take() == ["a.subscribe#1", "b.subscribe#1", "a.dispose#1", "b.dispose#1"])
        scheduler.run()
        #expect(log.take() == ["next (1, 2) onQueue=true", "completed onQueue=true"])
        handle.dispose()
        #expect(a.disposeCount == 1 && b.disposeCount == 1)
    }

    @Test func withAQueueTheArrayFormToo() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let handle = combineLatest(queue: queue, [Signal<Int, String>.single(1), .single(2)]).start(
            next: { log.append("next \($0) onQueue=\(queue.isCurrent())") },
            completed: { log.append("completed") }
        )
        #expect(log.take() == [])
        scheduler.run()
        #expect(log.take() == ["next [1, 2] onQueue=true", "completed"])
        handle.dispose()
    }

    @Test func withAQueueDisposalDropsEventsNotYetDelivered() {
        let scheduler = VirtualTimeScheduler()
        let log = EventLog()
        let handle = log.start(combineLatest(queue: scheduler.makeQueue(), Signal<Int, String>.single(1), .single(2)))
        handle.dispose()
        scheduler.run()
        #expect(log.events == [])
    }

    // MARK: Arities

    @Test func everyArityCombinesItsInputsInArgumentOrder() {
        let s = (1...26).map { Signal<Int, String>.single($0) }
        func values<R>(_ signal: Signal<R, String>) -> String {
            let log = EventLog()
            _ = log.start(signal)
            return log.events.joined(separator: "; ")
        }
        func expected(_ n: Int) -> String {
            "next (" + (1...n).map(String.init).joined(separator: ", ") + "); completed"
        }
        #expect(values(combineLatest(s[0], s[1])) == expected(2))
        #expect(values(combineLatest(s[0], s[1], s[2])) == expected(3))
        #expect(values(combineLatest(s[0], s[1], s[2], s[3])) == expected(4))
        #expect(values(combineLatest(s[0], s[1], s[2], s[3], s[4])) == expected(5))
        #expect(values(combineLatest(s[0], s[1], s[2], s[3], s[4], s[5])) == expected(6))
        #expect(values(combineLatest(s[0], s[1], s[2], s[3], s[4], s[5], s[6])) == expected(7))
        #expect(values(combineLatest(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7])) == expected(8))
        #expect(values(combineLatest(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8])) == expected(9))
        #expect(values(combineLatest(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9])) == expected(10))
        #expect(values(combineLatest(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10])) == expected(11))
        #expect(values(combineLatest(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11])) == expected(12))
        #expect(
            values(combineLatest(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12])) == expected(13)
        )
        #expect(
            values(combineLatest(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13]))
                == expected(14))
        #expect(
            values(combineLatest(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14]))
                == expected(15))
        #expect(
            values(
                combineLatest(
                    s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15]))
                == expected(16))
        #expect(
            values(
                combineLatest(
                    s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], s[16]))
                == expected(17))
        #expect(
            values(
                combineLatest(
                    s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], s[16],
                    s[17])) == expected(18))
        #expect(
            values(
                combineLatest(
                    s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], s[16],
                    s[17], s[18])) == expected(19))
        #expect(
            values(
                combineLatest(
                    s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], s[16],
                    s[17], s[18], s[19])) == expected(20))
        #expect(
            values(
                combineLatest(
                    s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], s[16],
                    s[17], s[18], s[19], s[20])) == expected(21))
        #expect(
            values(
                combineLatest(
                    s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], s[16],
                    s[17], s[18], s[19], s[20], s[21])) == expected(22))
        #expect(
            values(
                combineLatest(
                    s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], s[16],
                    s[17], s[18], s[19], s[20], s[21], s[22])) == expected(23))
        #expect(
            values(
                combineLatest(
                    s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], s[16],
                    s[17], s[18], s[19], s[20], s[21], s[22], s[23])) == expected(24))
        #expect(
            values(
                combineLatest(
                    s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], s[16],
                    s[17], s[18], s[19], s[20], s[21], s[22], s[23], s[24])) == expected(25))
        #expect(
            values(
                combineLatest(
                    s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], s[16],
                    s[17], s[18], s[19], s[20], s[21], s[22], s[23], s[24], s[25])) == expected(26))
    }

    /// The 26-ary form, with input `last` the last one to send a value, to
    /// complete, or (in the second half) to fail.
    @Test(arguments: 0..<26)
    func the26AryFormWaitsForEveryInput(last: Int) {
        let log = EventLog()
        let names = (0..<26).map { "s\($0)" }
        let t = names.map { TestSource<Int, String>($0, log: log) }
        let signal = combineLatest(
            t[0].signal, t[1].signal, t[2].signal, t[3].signal, t[4].signal, t[5].signal, t[6].signal, t[7].signal,
            t[8].signal, t[9].signal, t[10].signal, t[11].signal, t[12].signal, t[13].signal, t[14].signal, t[15].signal,
            t[16].signal, t[17].signal, t[18].signal, t[19].signal, t[20].signal, t[21].signal, t[22].signal, t[23].signal,
            t[24].signal, t[25].signal)
        let handle = signal.start(
            next: { values in
                // Only the last two elements and the sum, to keep the log readable.
                let all = Mirror(reflecting: values).children.map { $0.value as! Int }
                log.append("next count=\(all.count) sum=\(all.reduce(0, +)) s\(last)=\(all[last])")
            },
            error: { log.append("error \($0)") },
            completed: { log.append("completed") }
        )
        #expect(log.take() == names.map { "\($0).subscribe#1" })
        for index in 0..<26 where index != last { t[index].putNext(index) }
        #expect(log.take() == [], "input \(last) has no value yet")
        t[last].putNext(100)
        #expect(log.take() == ["next count=26 sum=\(325 - last + 100) s\(last)=100"])
        if last < 13 {
            for index in 0..<26 where index != last { t[index].putCompletion() }
            #expect(log.take() == names.indices.filter { $0 != last }.map { "s\($0).dispose#1" })
            t[last].putNext(101)
            t[last].putCompletion()
            #expect(log.take() == ["next count=26 sum=\(325 - last + 101) s\(last)=101", "completed", "s\(last).dispose#1"])
        } else {
            t[last].putError("e\(last)")
            #expect(log.take() == ["error e\(last)"] + names.map { "\($0).dispose#1" })
        }
        handle.dispose()
        #expect(log.take() == [])
        #expect(t.allSatisfy { $0.disposeCount == 1 })
    }

    // MARK: Lifetimes

    @Test func theLatestValuesAreReleasedWhenTheOutputTerminates() {
        let log = EventLog()
        let a = TestSource<Probe, String>("a", log: log)
        let b = TestSource<Probe, String>("b", log: log)
        let handle = log.start(combineLatest(a.signal, b.signal) |> mapForTest { _ in "pair" })
        let probes = WeakBox<Probe>(nil)
        do {
            let probe = Probe("a1")
            probes.value = probe
            a.putNext(probe)
        }
        b.putNext(Probe("b1"))
        #expect(probes.value != nil, "held as the latest value of a")
        b.putError("e")
        #expect(probes.value == nil, "released at termination, although the sources still hold their subscribers")
        #expect(log.events == ["a.subscribe#1", "b.subscribe#1", "next pair", "error e", "a.dispose#1", "b.dispose#1"])
        handle.dispose()
    }

    @Test func aReplacedValueIsReleased() {
        let log = EventLog()
        let a = TestSource<Probe, String>("a", log: log)
        let handle = log.start(combineLatest(a.signal, Signal<Int, String>.never()) |> mapForTest { _ in "pair" })
        let first = WeakBox<Probe>(nil)
        do {
            let probe = Probe()
            first.value = probe
            a.putNext(probe)
        }
        #expect(first.value != nil)
        a.putNext(Probe())
        #expect(first.value == nil)
        handle.dispose()
    }

    @Test func theSubscriptionEndsSilentlyWhenEveryInputDropsItsSubscriber() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log)
        let b = TestSource<Int, String>("b", log: log)
        let callback = WeakBox<Probe>(nil)
        let handle: any Disposable
        do {
            let probe = Probe()
            callback.value = probe
            handle = combineLatest(a.signal, b.signal).start(next: { _ in probe.touch() })
        }
        a.releaseSubscribers()
        #expect(callback.value != nil, "b still feeds the combination")
        b.releaseSubscribers()
        #expect(callback.value == nil, "the downstream callbacks are released")
        handle.dispose()
        #expect(log.events == ["a.subscribe#1", "b.subscribe#1", "a.dispose#1", "b.dispose#1"])
    }

    @Test func eachStartIsAnIndependentSubscription() {
        let log = EventLog()
        let a = TestSource<Int, String>("a", log: log) { $0.putNext(1) }
        let b = TestSource<Int, String>("b", log: log)
        let signal = combineLatest(a.signal, b.signal)
        let first = log.start(signal, prefix: "1:")
        let second = log.start(signal, prefix: "2:")
        b.subscribers[0].putNext(10)
        b.subscribers[1].putNext(20)
        #expect(
            log.take() == [
                "a.subscribe#1", "b.subscribe#1", "a.subscribe#2", "b.subscribe#2", "1:next (1, 10)", "2:next (1, 20)",
            ])
        first.dispose()
        second.dispose()
        #expect(log.take() == ["a.dispose#1", "b.dispose#1", "a.dispose#2", "b.dispose#2"])
    }
}
