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

// Races of the ReactiveCocoa operators that share state across threads:
// merge, zip, flatten(maxConcurrent:), takeUntil, throttle, sample and
// bufferWithTime. Inputs deliver from different threads (and timers from a
// real Dispatch queue); every test checks that the downstream's callbacks
// never overlap (RAC design guideline C6, which `_SerialDelivery` provides),
// that exactly the expected values arrive, in order where order is defined,
// that each terminal event arrives once and each input is disposed once, and
// that nothing leaks. Run under ThreadSanitizer and AddressSanitizer by
// scripts/test.
//
// Nested in `StressSuite` (serialized, recursively): LeakCheck's counters
// are process-wide.

/// A hot input: the racing threads share its (single) subscriber.
final class StressInput<T, E>: @unchecked Sendable {
    // `@unchecked Sendable`: `held` is a SignalKit.Atomic (a pthread mutex).
    let disposals = Counter()
    private let held = SignalKit.Atomic<Subscriber<T, E>?>(value: nil)

    var signal: Signal<T, E> {
        Signal { [held, disposals] subscriber in
            _ = held.swap(subscriber)
            return disposals
        }
    }

    var subscriber: Subscriber<T, E> { held.with { $0 }! }
    var disposeCount: Int { disposals.count.load(ordering: .relaxed) }

    func release() { _ = held.swap(nil) }
}

/// Records what a subscription receives and whether two callbacks ever ran
/// at the same time.
final class StressRecorder<T>: @unchecked Sendable {
    // `@unchecked Sendable`: SignalKit.Atomic and Synchronization.Atomic
    // fields only.
    let values = SignalKit.Atomic<[T]>(value: [])
    let completions = Synchronization.Atomic<Int>(0)
    let errors = Synchronization.Atomic<Int>(0)
    let afterTermination = Synchronization.Atomic<Int>(0)
    private let inFlight = Synchronization.Atomic<Int>(0)
    private let overlaps = Synchronization.Atomic<Int>(0)
    var handle: (any Disposable)?

    var overlapped: Bool { overlaps.load(ordering: .relaxed) > 0 }
    var terminated: Bool { completions.load(ordering: .acquiring) + errors.load(ordering: .acquiring) > 0 }

    private func enter() {
        if inFlight.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue != 1 {
            overlaps.add(1, ordering: .relaxed)
        }
    }

    private func leave() {
        inFlight.wrappingSubtract(1, ordering: .acquiringAndReleasing)
    }

    func start<E>(_ signal: Signal<T, E>) {
        handle = signal.start(
            next: { [self] value in
                enter()
                if terminated { afterTermination.add(1, ordering: .relaxed) }
                values.modify { $0 + [value] }
                // Stay in the callback a little, so that an overlapping
                // delivery from another thread would be caught.
                stressSpin(64)
                leave()
            },
            error: { [self] _ in
                enter()
                errors.add(1, ordering: .releasing)
                leave()
            },
            completed: { [self] in
                enter()
                completions.add(1, ordering: .releasing)
                leave()
            }
        )
    }

    /// Waits (a bounded spin) for the terminal event, which may be delivered
    /// by another thread (a timer, or the thread that was delivering).
    func awaitTermination(timeout: Double = 5) -> Bool {
        var waited = 0.0
        while !terminated && waited < timeout {
            usleep(100)
            waited += 0.0001
        }
        return terminated
    }
}

extension StressSuite {
    @Suite(.serialized) struct RACOperatorsStressTests {
        // MARK: merge

        @Test func mergeOfInputsOnDifferentThreadsDeliversEverythingSerially() {
            let check = LeakCheck()
            do {
                let threads = 4
                let perThread = 16
                raceRounds(
                    threads: threads,
                    rounds: 1_500 * stressScale,
                    setup: { _ -> (inputs: [StressInput<Int, NoError>], recorder: StressRecorder<Int>) in
                        let inputs = (0..<threads).map { _ in StressInput<Int, NoError>() }
                        let recorder = StressRecorder<Int>()
                        recorder.start(merge(inputs.map(\.signal)))
                        return (inputs, recorder)
                    },
                    body: { index, state in
                        let subscriber = state.inputs[index].subscriber
                        for offset in 0..<perThread {
                            subscriber.putNext(index * 1000 + offset)
                        }
                        subscriber.putCompletion()
                    },
                    check: { state in
                        let recorder = state.recorder
                        #expect(recorder.awaitTermination())
                        let values = recorder.values.with { $0 }
                        #expect(values.count == threads * perThread)
                        for index in 0..<threads {
                            let fromInput = values.filter { $0 / 1000 == index }
                            #expect(fromInput == (0..<perThread).map { index * 1000 + $0 }, "each input's order is kept")
                        }
                        #expect(recorder.completions.load(ordering: .acquiring) == 1)
                        #expect(!recorder.overlapped, "callbacks overlapped")
                        #expect(state.inputs.allSatisfy { $0.disposeCount == 1 })
                        recorder.handle?.dispose()
                        #expect(state.inputs.allSatisfy { $0.disposeCount == 1 })
                        state.inputs.forEach { $0.release() }
                    }
                )
            }
            #expect(check.leaks() == nil)
        }

        /// One input fails while the others send: one error, nothing after
        /// it, every input disposed once.
        @Test func mergeErrorRacesValues() {
            let check = LeakCheck()
            do {
                raceRounds(
                    threads: 3,
                    rounds: 2_000 * stressScale,
                    setup: { _ -> (inputs: [StressInput<Int, Int>], recorder: StressRecorder<Int>) in
                        let inputs = (0..<3).map { _ in StressInput<Int, Int>() }
                        let recorder = StressRecorder<Int>()
                        recorder.start(merge(inputs.map(\.signal)))
                        return (inputs, recorder)
                    },
                    body: { index, state in
                        let subscriber = state.inputs[index].subscriber
                        if index == 0 {
                            subscriber.putError(1)
                        } else {
                            for value in 0..<16 { subscriber.putNext(value) }
                        }
                    },
                    check: { state in
                        let recorder = state.recorder
                        #expect(recorder.awaitTermination())
                        #expect(recorder.errors.load(ordering: .acquiring) == 1)
                        #expect(recorder.afterTermination.load(ordering: .relaxed) == 0)
                        #expect(!recorder.overlapped)
                        #expect(state.inputs.allSatisfy { $0.disposeCount == 1 })
                        recorder.handle?.dispose()
                        state.inputs.forEach { $0.release() }
                    }
                )
            }
            #expect(check.leaks() == nil)
        }

        // MARK: zip

        @Test func zipOfInputsOnDifferentThreadsPairsInOrder() {
            let check = LeakCheck()
            do {
                let count = 32
                raceRounds(
                    threads: 2,
                    rounds: 1_500 * stressScale,
                    setup: { _ -> (inputs: [StressInput<Int, NoError>], recorder: StressRecorder<Int>) in
                        let inputs = [StressInput<Int, NoError>(), StressInput<Int, NoError>()]
                        let recorder = StressRecorder<Int>()
                        recorder.start(zip(inputs[0].signal, inputs[1].signal) |> map { $0 * 1000 + $1 })
                        return (inputs, recorder)
                    },
                    body: { index, state in
                        let subscriber = state.inputs[index].subscriber
                        for value in 0..<count { subscriber.putNext(value) }
                        subscriber.putCompletion()
                    },
                    check: { state in
                        let recorder = state.recorder
                        #expect(recorder.awaitTermination())
                        #expect(recorder.values.with { $0 } == (0..<count).map { $0 * 1000 + $0 })
                        #expect(recorder.completions.load(ordering: .acquiring) == 1)
                        #expect(!recorder.overlapped)
                        #expect(state.inputs.allSatisfy { $0.disposeCount == 1 })
                        recorder.handle?.dispose()
                        state.inputs.forEach { $0.release() }
                    }
                )
            }
            #expect(check.leaks() == nil)
        }

        // MARK: flatten(maxConcurrent:)

        /// Thread 0 sends inner signals; threads 1 and 2 complete the
        /// subscribed inners as they appear. At most `limit` inners are ever
        /// admitted at once; every inner is subscribed once and disposed once.
        @Test func flattenWithMaxConcurrentAdmitsAtMostTheLimit() {
            let check = LeakCheck()
            do {
                let inners = 24
                let limit = 2
                final class Round: @unchecked Sendable {
                    // `@unchecked Sendable`: Atomic fields and immutable
                    // values only.
                    let outer = StressInput<Signal<Int, NoError>, NoError>()
                    let recorder = StressRecorder<Int>()
                    let ready = SignalKit.Atomic<[Subscriber<Int, NoError>]>(value: [])
                    let subscribed = Synchronization.Atomic<Int>(0)
                    let finished = Synchronization.Atomic<Int>(0)
                    let overAdmitted = Synchronization.Atomic<Int>(0)
                    let innerDisposals = Counter()
                    var signals: [Signal<Int, NoError>] = []
                }
                raceRounds(
                    threads: 3,
                    rounds: 400 * stressScale,
                    setup: { _ -> Round in
                        let round = Round()
                        round.signals = (0..<inners).map { number in
                            Signal { [round] subscriber in
                                let live =
                                    round.subscribed.add(1, ordering: .acquiringAndReleasing).newValue
                                    - round.finished.load(ordering: .acquiring)
                                if live > limit { round.overAdmitted.add(1, ordering: .relaxed) }
                                round.ready.modify { $0 + [subscriber] }
                                _ = number
                                return round.innerDisposals
                            }
                        }
                        round.recorder.start(round.outer.signal |> flatten(maxConcurrent: limit))
                        return round
                    },
                    body: { index, round in
                        if index == 0 {
                            let outer = round.outer.subscriber
                            for signal in round.signals { outer.putNext(signal) }
                            outer.putCompletion()
                            return
                        }
                        var spins = 0
                        while round.finished.load(ordering: .acquiring) < inners && spins < 10_000_000 {
                            var taken: Subscriber<Int, NoError>?
                            _ = round.ready.modify { ready in
                                guard !ready.isEmpty else { return ready }
                                var rest = ready
                                taken = rest.removeFirst()
                                return rest
                            }
                            guard let subscriber = taken else {
                                spins += 1
                                sched_yield()
                                continue
                            }
                            subscriber.putNext(1)
                            round.finished.add(1, ordering: .acquiringAndReleasing)
                            subscriber.putCompletion()
                        }
                    },
                    check: { round in
                        #expect(round.recorder.awaitTermination())
                        #expect(round.recorder.values.with { $0.count } == inners)
                        #expect(round.recorder.completions.load(ordering: .acquiring) == 1)
                        #expect(round.subscribed.load(ordering: .relaxed) == inners)
                        #expect(round.overAdmitted.load(ordering: .relaxed) == 0)
                        #expect(round.innerDisposals.count.load(ordering: .relaxed) == inners)
                        #expect(round.outer.disposeCount == 1)
                        #expect(!round.recorder.overlapped)
                        round.recorder.handle?.dispose()
                        round.outer.release()
                        round.signals = []
                    }
                )
            }
            #expect(check.leaks() == nil)
        }

        // MARK: takeUntil

        /// The source sends while the trigger fires: the values delivered are
        /// a prefix of those sent, then one completion; both inputs are
        /// disposed once.
        @Test func takeUntilTriggerRacesTheSource() {
            let check = LeakCheck()
            do {
                raceRounds(
                    threads: 2,
                    rounds: 3_000 * stressScale,
                    setup: {
                        _ -> (
                            source: StressInput<Int, NoError>, trigger: StressInput<Void, NoError>, recorder: StressRecorder<Int>
                        ) in
                        let source = StressInput<Int, NoError>()
                        let trigger = StressInput<Void, NoError>()
                        let recorder = StressRecorder<Int>()
                        recorder.start(source.signal |> takeUntil(trigger.signal))
                        return (source, trigger, recorder)
                    },
                    body: { index, state in
                        if index == 0 {
                            let subscriber = state.source.subscriber
                            for value in 0..<32 { subscriber.putNext(value) }
                        } else {
                            stressSpin(Int.random(in: 0..<300))
                            state.trigger.subscriber.putNext(())
                        }
                    },
                    check: { state in
                        let recorder = state.recorder
                        #expect(recorder.awaitTermination())
                        let values = recorder.values.with { $0 }
                        #expect(values == Array(0..<values.count), "a prefix, in order")
                        #expect(recorder.completions.load(ordering: .acquiring) == 1)
                        #expect(recorder.afterTermination.load(ordering: .relaxed) == 0)
                        #expect(!recorder.overlapped)
                        #expect(state.source.disposeCount == 1 && state.trigger.disposeCount == 1)
                        recorder.handle?.dispose()
                        state.source.release()
                        state.trigger.release()
                    }
                )
            }
            #expect(check.leaks() == nil)
        }

        // MARK: sample

        @Test func sampleTicksRaceTheSource() {
            let check = LeakCheck()
            do {
                raceRounds(
                    threads: 2,
                    rounds: 2_000 * stressScale,
                    setup: {
                        _ -> (
                            source: StressInput<Int, NoError>, sampler: StressInput<Void, NoError>, recorder: StressRecorder<Int>
                        ) in
                        let source = StressInput<Int, NoError>()
                        let sampler = StressInput<Void, NoError>()
                        let recorder = StressRecorder<Int>()
                        recorder.start(source.signal |> sample(sampler.signal))
                        return (source, sampler, recorder)
                    },
                    body: { index, state in
                        if index == 0 {
                            let subscriber = state.source.subscriber
                            for value in 0..<32 { subscriber.putNext(value) }
                        } else {
                            let subscriber = state.sampler.subscriber
                            for _ in 0..<32 { subscriber.putNext(()) }
                        }
                    },
                    check: { state in
                        let recorder = state.recorder
                        state.source.subscriber.putCompletion()
                        #expect(recorder.awaitTermination())
                        let values = recorder.values.with { $0 }
                        #expect(values.count <= 32)
                        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "samples never go back")
                        #expect(values.allSatisfy { (0..<32).contains($0) })
                        #expect(recorder.completions.load(ordering: .acquiring) == 1)
                        #expect(!recorder.overlapped)
                        #expect(state.source.disposeCount == 1 && state.sampler.disposeCount == 1)
                        recorder.handle?.dispose()
                        state.source.release()
                        state.sampler.release()
                    }
                )
            }
            #expect(check.leaks() == nil)
        }

        // MARK: throttle and bufferWithTime on a real queue

        /// Values arrive while the throttle's timers fire on a Dispatch queue:
        /// what is delivered is increasing and ends with the last value (sent
        /// by a timer or flushed by the completion), then one completion.
        @Test func throttleTimersRaceTheSource() {
            let check = LeakCheck()
            do {
                let queue = Queue(name: "stress.throttle")
                raceRounds(
                    threads: 1,
                    rounds: 600 * stressScale,
                    setup: { _ -> (source: StressInput<Int, NoError>, recorder: StressRecorder<Int>) in
                        let source = StressInput<Int, NoError>()
                        let recorder = StressRecorder<Int>()
                        recorder.start(source.signal |> throttle(0.000_02, queue: queue))
                        return (source, recorder)
                    },
                    body: { _, state in
                        let subscriber = state.source.subscriber
                        for value in 0..<48 {
                            subscriber.putNext(value)
                            if value % 8 == 0 { stressSpin(Int.random(in: 0..<2_000)) }
                        }
                        subscriber.putCompletion()
                    },
                    check: { state in
                        let recorder = state.recorder
                        #expect(recorder.awaitTermination())
                        let values = recorder.values.with { $0 }
                        #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "increasing")
                        #expect(values.last == 47, "the last value is sent, by a timer or the completion")
                        #expect(recorder.completions.load(ordering: .acquiring) == 1)
                        #expect(recorder.afterTermination.load(ordering: .relaxed) == 0)
                        #expect(!recorder.overlapped)
                        #expect(state.source.disposeCount == 1)
                        recorder.handle?.dispose()
                        state.source.release()
                    }
                )
                queue.sync {}
            }
            #expect(check.leaks() == nil)
        }

        /// Values arrive while batches are sent by timers on a Dispatch queue:
        /// the batches, concatenated, are exactly the values sent, in order;
        /// no batch is empty; one completion.
        @Test func bufferWithTimeTimersRaceTheSource() {
            let check = LeakCheck()
            do {
                let queue = Queue(name: "stress.buffer")
                raceRounds(
                    threads: 1,
                    rounds: 600 * stressScale,
                    setup: { _ -> (source: StressInput<Int, NoError>, recorder: StressRecorder<[Int]>) in
                        let source = StressInput<Int, NoError>()
                        let recorder = StressRecorder<[Int]>()
                        recorder.start(source.signal |> bufferWithTime(0.000_02, queue: queue))
                        return (source, recorder)
                    },
                    body: { _, state in
                        let subscriber = state.source.subscriber
                        for value in 0..<64 {
                            subscriber.putNext(value)
                            if value % 8 == 0 { stressSpin(Int.random(in: 0..<2_000)) }
                        }
                        subscriber.putCompletion()
                    },
                    check: { state in
                        let recorder = state.recorder
                        #expect(recorder.awaitTermination())
                        let batches = recorder.values.with { $0 }
                        #expect(batches.flatMap { $0 } == Array(0..<64))
                        #expect(batches.allSatisfy { !$0.isEmpty })
                        #expect(recorder.completions.load(ordering: .acquiring) == 1)
                        #expect(recorder.afterTermination.load(ordering: .relaxed) == 0)
                        #expect(!recorder.overlapped)
                        recorder.handle?.dispose()
                        state.source.release()
                    }
                )
                queue.sync {}
            }
            #expect(check.leaks() == nil)
        }
    }
}

/// Busy-waits a little, so that the racing threads interleave differently
/// from round to round.
private func stressSpin(_ iterations: Int) {
    let counter = Synchronization.Atomic<Int>(0)
    for _ in 0..<iterations { counter.add(1, ordering: .relaxed) }
}
