// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct MappingTests {
    // MARK: map

    @Test func mapTransformsASynchronousSource() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putNext(2)
            s.putCompletion()
        }
        _ = log.start(source.signal |> map { $0 * 10 })
        #expect(log.events == ["a.subscribe#1", "next 10", "next 20", "completed", "a.dispose#1"])
    }

    @Test func mapTransformsAnAsynchronousSourceAndDisposesUpstreamOnce() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> map { "v\($0)" })
        #expect(log.take() == ["a.subscribe#1"])
        source.putNext(1)
        source.putNext(2)
        source.putCompletion()
        source.putNext(3)
        #expect(log.take() == ["next v1", "next v2", "completed", "a.dispose#1"])
        handle.dispose()
        #expect(log.take() == [])
        #expect(source.disposeCount == 1, "legacy disposes twice through an operator; SignalKit once")
    }

    @Test func mapForwardsErrors() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        _ = log.start(source.signal |> map { $0 + 1 })
        source.putNext(1)
        source.putError("boom")
        source.putNext(2)
        #expect(log.events == ["a.subscribe#1", "next 2", "error boom", "a.dispose#1"])
        #expect(source.disposeCount == 1)
    }

    @Test func mapCallsTheTransformOncePerValuePerSubscription() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in s.putNext(5) }
        let calls = Shared(0)
        let signal =
            source.signal
            |> map { (value: Int) -> Int in
                calls.value += 1
                return value
            }
        let first = log.start(signal, prefix: "1:")
        let second = log.start(signal, prefix: "2:")
        #expect(calls.value == 2)
        first.dispose()
        second.dispose()
        #expect(log.events == ["a.subscribe#1", "1:next 5", "a.subscribe#2", "2:next 5", "a.dispose#1", "a.dispose#2"])
    }

    @Test func mapDisposalBeforeTerminationDisposesUpstreamAndStopsDelivery() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> map { $0 })
        source.putNext(1)
        handle.dispose()
        source.putNext(2)
        source.putCompletion()
        handle.dispose()
        #expect(log.events == ["a.subscribe#1", "next 1", "a.dispose#1"])
        #expect(source.disposeCount == 1)
    }

    @Test func mapDeliversEventsTheUpstreamEmitsWhileBeingDisposed() {
        let log = EventLog()
        let held = Shared<Subscriber<Int, String>?>(nil)
        let signal = Signal<Int, String> { subscriber in
            held.value = subscriber
            return ActionDisposable {
                log.append("inner.dispose")
                subscriber.putNext(99)
                subscriber.putCompletion()
            }
        }
        let handle = log.start(signal |> map { $0 + 1 })
        handle.dispose()
        #expect(log.events == ["inner.dispose", "next 100", "completed"])
        held.value = nil
    }

    @Test func mapIsReentrant() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = (source.signal |> map { $0 * 10 }).start(next: { value in
            log.append("next \(value)")
            if value == 10 { source.putNext(2) }
            log.append("end \(value)")
        })
        source.putNext(1)
        #expect(log.events == ["a.subscribe#1", "next 10", "next 20", "end 20", "end 10"])
        handle.dispose()
    }

    @Test func mapReleasesTheTransformWithTheSignalAndTheSubscription() {
        let probe = WeakBox<Probe>(nil)
        let log = EventLog()
        do {
            let source = TestSource<Int, String>("a", log: log)
            let handle: any Disposable
            do {
                let object = Probe()
                probe.value = object
                handle = log.start(
                    source.signal
                        |> map { value -> Int in
                            object.touch()
                            return value
                        })
            }
            source.putNext(1)
            #expect(probe.value != nil, "the subscription keeps the transform")
            source.putCompletion()
            source.releaseSubscribers()
            #expect(probe.value == nil, "released once the source lets the subscription go")
            handle.dispose()
        }
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.dispose#1"])
    }

    @Test func mapComposesWithPipe() {
        let log = EventLog()
        let signal = Signal<Int, NoError>.single(3) |> map { $0 + 1 } |> map { "\($0)!" }
        _ = log.start(signal)
        #expect(log.events == ["next 4!", "completed"])
    }

    // MARK: filter

    @Test func filterPassesMatchingValues() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            for value in 1...6 { s.putNext(value) }
            s.putCompletion()
        }
        _ = log.start(source.signal |> filter { $0 % 2 == 0 })
        #expect(log.events == ["a.subscribe#1", "next 2", "next 4", "next 6", "completed", "a.dispose#1"])
    }

    @Test func filterForwardsErrorsAndDisposal() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        _ = log.start(source.signal |> filter { $0 > 1 })
        source.putNext(1)
        source.putNext(2)
        source.putError("e")
        #expect(log.take() == ["a.subscribe#1", "next 2", "error e", "a.dispose#1"])

        let other = TestSource<Int, String>("b", log: log)
        let handle = log.start(other.signal |> filter { _ in true })
        handle.dispose()
        other.putNext(1)
        #expect(log.take() == ["b.subscribe#1", "b.dispose#1"])
    }

    // MARK: map and filter chains (fused into one subscription)

    @Test func aChainOfMapsAndFiltersBehavesAsNestedOperators() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let chain =
            source.signal
            |> map { (value: Int) -> Int in
                log.append("map1 \(value)")
                return value * 2
            }
            |> filter { (value: Int) -> Bool in
                log.append("filter \(value)")
                return value % 4 == 0
            }
            |> map { (value: Int) -> String in
                log.append("map2 \(value)")
                return "v\(value)"
            }
        let handle = log.start(chain)
        source.putNext(1)
        source.putNext(2)
        source.putError("boom")
        source.putNext(3)
        #expect(
            log.take() == [
                "a.subscribe#1",
                "map1 1", "filter 2",
                "map1 2", "filter 4", "map2 4", "next v4",
                "error boom", "a.dispose#1",
            ])
        handle.dispose()
        #expect(log.take() == [])
        #expect(source.disposeCount == 1)
    }

    @Test func aMapThatDisposesTheSubscriptionStopsTheLaterStages() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = Shared<(any Disposable)?>(nil)
        let chain =
            source.signal
            |> map { (value: Int) -> Int in
                log.append("map1 \(value)")
                if value == 2 { handle.value?.dispose() }
                return value
            }
            |> filter { (value: Int) -> Bool in
                log.append("filter \(value)")
                return true
            }
            |> map { (value: Int) -> Int in
                log.append("map2 \(value)")
                return value
            }
        handle.value = log.start(chain)
        source.putNext(1)
        source.putNext(2)
        source.putNext(3)
        #expect(
            log.take() == [
                "a.subscribe#1",
                "map1 1", "filter 1", "map2 1", "next 1",
                "map1 2", "a.dispose#1",
            ])
        #expect(source.disposeCount == 1)
    }

    @Test func aFilterThatDisposesTheSubscriptionStopsTheLaterStages() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = Shared<(any Disposable)?>(nil)
        let chain =
            source.signal
            |> filter { (value: Int) -> Bool in
                log.append("filter \(value)")
                handle.value?.dispose()
                return true
            }
            |> map { (value: Int) -> Int in
                log.append("map \(value)")
                return value
            }
        handle.value = log.start(chain)
        source.putNext(1)
        source.putNext(2)
        #expect(log.take() == ["a.subscribe#1", "filter 1", "a.dispose#1"])
    }

    @Test func aSharedPrefixOfAChainIsNotChangedByExtendingIt() {
        // Fusion builds new signals; the signal it extends keeps its own
        // stages, and each subscription runs its stages once per value.
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let doubled = source.signal |> map { $0 * 2 }
        let plusOne = doubled |> map { $0 + 1 }
        let minusOne = doubled |> map { $0 - 1 }
        let first = log.start(doubled, prefix: "d:")
        source.putNext(5)
        let second = log.start(plusOne, prefix: "p:")
        source.putNext(6)
        let third = log.start(minusOne, prefix: "m:")
        source.putNext(7)
        first.dispose()
        second.dispose()
        third.dispose()
        #expect(
            log.events == [
                "a.subscribe#1", "d:next 10",
                "a.subscribe#2", "p:next 13",
                "a.subscribe#3", "m:next 13",
                "a.dispose#1", "a.dispose#2", "a.dispose#3",
            ])
    }

    /// `map` written as nested subscriptions, the way it worked before
    /// fusion: the reference the fused chains are compared with.
    static func nestedMap<T, R>(_ f: @escaping @Sendable (T) -> R) -> (Signal<T, String>) -> Signal<R, String> {
        { upstream in
            Signal { subscriber in
                upstream.start(
                    next: { subscriber.putNext(f($0)) },
                    error: { subscriber.putError($0) },
                    completed: { subscriber.putCompletion() }
                )
            }
        }
    }

    /// The log of a scenario: a source, a two-stage chain, callbacks holding
    /// a probe; the source releases its subscriber, then the handle is
    /// disposed.
    static func releaseScenario(
        _ makeChain: (Signal<Int, String>) -> Signal<Int, String>
    ) -> (events: [String], probeReleasedWithSubscriber: Bool) {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        weak var weakProbe: Probe?
        var handle: (any Disposable)?
        do {
            let probe = Probe()
            weakProbe = probe
            handle = makeChain(source.signal).start(next: { value in
                withExtendedLifetime(probe) {}
                log.append("next \(value)")
            })
        }
        source.putNext(1)
        source.releaseSubscribers()
        let released = weakProbe == nil
        handle?.dispose()
        return (log.events, released)
    }

    @Test func aSourceThatReleasesItsSubscriberEndsAFusedChainAsItEndsANestedOne() {
        let fused = Self.releaseScenario { $0 |> map { $0 + 1 } |> map { $0 * 2 } }
        let nested = Self.releaseScenario { $0 |> Self.nestedMap { $0 + 1 } |> Self.nestedMap { $0 * 2 } }
        #expect(fused.events == nested.events)
        #expect(fused.probeReleasedWithSubscriber == nested.probeReleasedWithSubscriber)
        #expect(fused.events.prefix(2) == ["a.subscribe#1", "next 4"])
        #expect(fused.probeReleasedWithSubscriber)
    }

    // MARK: flatMap (optional map)

    @Test func flatMapMapsNonNilValuesAndPassesNil() {
        let log = EventLog()
        let source = TestSource<Int?, String>("a", log: log) { s in
            s.putNext(1)
            s.putNext(nil)
            s.putNext(3)
            s.putCompletion()
        }
        let mapped: Signal<String?, String> = source.signal |> flatMap { "v\($0)" }
        _ = log.start(mapped)
        #expect(
            log.events == [
                "a.subscribe#1", "next Optional(\"v1\")", "next nil", "next Optional(\"v3\")", "completed", "a.dispose#1",
            ])
    }

    @Test func flatMapDoesNotCallTheTransformForNil() {
        let calls = Shared(0)
        let log = EventLog()
        let signal: Signal<Int?, NoError> = Signal { s in
            s.putNext(nil)
            s.putCompletion()
            return EmptyDisposable
        }
        _ = log.start(
            signal
                |> flatMap { (value: Int) -> Int in
                    calls.value += 1
                    return value
                })
        #expect(calls.value == 0)
        #expect(log.events == ["next nil", "completed"])
    }

    // MARK: mapError

    @Test func mapErrorTransformsTheError() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putError("bad")
        }
        _ = log.start(source.signal |> mapError { "mapped(\($0))".count })
        #expect(log.events == ["a.subscribe#1", "next 1", "error 11", "a.dispose#1"])
    }

    @Test func mapErrorForwardsCompletionWithoutCallingTheTransform() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let calls = Shared(0)
        _ = log.start(
            source.signal
                |> mapError { (error: String) -> Int in
                    calls.value += 1
                    return error.count
                })
        source.putNext(1)
        source.putCompletion()
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.dispose#1"])
        #expect(calls.value == 0)
    }

    // MARK: castError

    @Test func castErrorRetypesANoErrorSignal() {
        let log = EventLog()
        let source = TestSource<Int, NoError>("a", log: log)
        let cast: Signal<Int, String> = source.signal |> castError(String.self)
        let handle = log.start(cast)
        source.putNext(1)
        source.putCompletion()
        #expect(log.events == ["a.subscribe#1", "next 1", "completed", "a.dispose#1"])
        handle.dispose()
        #expect(source.disposeCount == 1)
    }

    @Test func castErrorResultCanFailDownstream() {
        let log = EventLog()
        let cast: Signal<Int, String> = Signal<Int, NoError>.single(1) |> castError(String.self)
        let failing = cast |> map { (value: Int) -> Int in value } |> mapError { $0 }
        _ = log.start(failing)
        #expect(log.events == ["next 1", "completed"])
    }

    // MARK: distinctUntilChanged

    @Test func distinctUntilChangedDropsConsecutiveRepeats() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            for value in [1, 1, 2, 2, 2, 1, 3, 3] { s.putNext(value) }
            s.putCompletion()
        }
        _ = log.start(source.signal |> distinctUntilChanged)
        #expect(
            log.events == ["a.subscribe#1", "next 1", "next 2", "next 1", "next 3", "completed", "a.dispose#1"])
    }

    @Test func distinctUntilChangedTreatsNilAsEqualToNil() {
        let log = EventLog()
        let source = TestSource<Int?, String>("a", log: log) { s in
            for value in [nil, nil, 1, nil, nil, 1, 1] as [Int?] { s.putNext(value) }
        }
        let handle = log.start(source.signal |> distinctUntilChanged)
        #expect(
            log.events == ["a.subscribe#1", "next nil", "next Optional(1)", "next nil", "next Optional(1)"])
        handle.dispose()
    }

    @Test func distinctUntilChangedStateIsPerSubscription() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            s.putNext(1)
            s.putNext(1)
        }
        let signal = source.signal |> distinctUntilChanged
        let first = log.start(signal, prefix: "1:")
        let second = log.start(signal, prefix: "2:")
        #expect(log.events == ["a.subscribe#1", "1:next 1", "a.subscribe#2", "2:next 1"])
        first.dispose()
        second.dispose()
    }

    @Test func distinctUntilChangedForwardsErrorsAndAsynchronousEvents() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log)
        let handle = log.start(source.signal |> distinctUntilChanged)
        source.putNext(1)
        source.putNext(1)
        source.putNext(2)
        source.putError("e")
        #expect(log.events == ["a.subscribe#1", "next 1", "next 2", "error e", "a.dispose#1"])
        handle.dispose()
        #expect(source.disposeCount == 1)
    }

    @Test func distinctUntilChangedIsEqualComparesWithTheLastEmittedValue() {
        let log = EventLog()
        let source = TestSource<Int, String>("a", log: log) { s in
            for value in [1, 2, 3, 4, 5] { s.putNext(value) }
            s.putCompletion()
        }
        // "Close enough" is not transitive: against the last RECEIVED value
        // only 1 would pass; against the last EMITTED value 1, 3 and 5 pass.
        let signal =
            source.signal
            |> distinctUntilChanged(isEqual: { (last: Int, new: Int) -> Bool in
                log.append("isEqual(\(last), \(new))")
                return abs(last - new) <= 1
            })
        _ = log.start(signal)
        #expect(
            log.events == [
                "a.subscribe#1", "next 1",
                "isEqual(1, 2)",
                "isEqual(1, 3)", "next 3",
                "isEqual(3, 4)",
                "isEqual(3, 5)", "next 5",
                "completed", "a.dispose#1",
            ])
    }

    @Test func distinctUntilChangedIsEqualWorksForNonEquatableValues() {
        struct Item { let id: Int; let payload: String }
        let log = EventLog()
        let source = TestSource<Item, String>("a", log: log) { s in
            s.putNext(Item(id: 1, payload: "x"))
            s.putNext(Item(id: 1, payload: "y"))
            s.putNext(Item(id: 2, payload: "z"))
            s.putCompletion()
        }
        let signal = source.signal |> distinctUntilChanged(isEqual: { $0.id == $1.id }) |> map { $0.payload }
        _ = log.start(signal)
        #expect(log.events == ["a.subscribe#1", "next x", "next z", "completed", "a.dispose#1"])
    }

    @Test func distinctUntilChangedReleasesReplacedValues() {
        let first = WeakBox<Probe>(nil)
        let log = EventLog()
        let source = TestSource<Probe, String>("a", log: log)
        let handle = (source.signal |> distinctUntilChanged(isEqual: { $0 === $1 })).start()
        do {
            let object = Probe("first")
            first.value = object
            source.putNext(object)
        }
        #expect(first.value != nil, "the last emitted value is kept for the next comparison")
        source.putNext(Probe("second"))
        #expect(first.value == nil, "the replaced value is released")
        handle.dispose()
    }
}
