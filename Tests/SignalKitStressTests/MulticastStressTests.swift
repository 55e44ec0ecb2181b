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

// Hot types on real threads, run under ThreadSanitizer and AddressSanitizer
// by scripts/test: subjects with subscriptions racing sends, connections
// with connect/autoconnect racing subscribers, commands executed from
// several threads. Every test ends with the live-object counters back where
// they started.

/// What one subscription received, in order. Written by whichever thread
/// delivers (serially, with a happens-before between deliveries), read by
/// the coordinator after the round.
final class MulticastRecorder<T>: @unchecked Sendable {
    // `@unchecked Sendable`: accessed serially (see above); the in-callback
    // flag is an atomic that catches concurrent deliveries.
    var values: [T] = []
    var terminated = 0
    let inCallback = Atomic<Bool>(false)
    let overlaps = Atomic<Int>(0)

    func enter() {
        if inCallback.exchange(true, ordering: .acquiringAndReleasing) {
            overlaps.add(1, ordering: .relaxed)
        }
    }

    func exit() {
        inCallback.store(false, ordering: .releasing)
    }

    func start<E>(_ signal: Signal<T, E>) -> any Disposable {
        signal.start(
            next: { [self] value in
                enter()
                values.append(value)
                exit()
            },
            error: { [self] _ in
                enter()
                terminated += 1
                exit()
            },
            completed: { [self] in
                enter()
                terminated += 1
                exit()
            })
    }
}

/// A cold source that counts subscriptions and disposals, and hands its
/// subscribers to the test.
final class MulticastCountingSource: @unchecked Sendable {
    // `@unchecked Sendable`: the counters are atomics; `held` is a
    // SignalKit.Atomic (pthread mutex).
    let subscriptions = Atomic<Int>(0)
    let disposals = Counter()
    let held = SignalKit.Atomic<[Subscriber<Int, NoError>]>(value: [])

    var signal: Signal<Int, NoError> {
        Signal { [self] subscriber in
            subscriptions.add(1, ordering: .relaxed)
            held.modify { $0 + [subscriber] }
            return disposals
        }
    }

    func send(_ value: Int) {
        for subscriber in held.with({ $0 }) { subscriber.putNext(value) }
    }

    func release() {
        held.swap([])
    }
}

extension StressSuite {
    @Suite struct MulticastStressTests {
        // MARK: Subjects

        /// Threads subscribe and dispose while one thread sends: every
        /// subscriber sees increasing values, never two callbacks at once.
        @Test(arguments: [2, 4])
        func subjectSubscribeDisposeRacesSends(threads: Int) {
            let check = LeakCheck()
            do {
                let subject = Subject<Int, NoError>()
                let values = 100_000 * stressScale
                let badOrder = Atomic<Int>(0)
                let overlaps = Atomic<Int>(0)
                race(threads: threads) { index in
                    if index == 0 {
                        for value in 0..<values { subject.putNext(value) }
                        subject.putCompletion()
                        return
                    }
                    for round in 0..<(values / 50) {
                        // Checked inside the callbacks: after `dispose()`
                        // returns, a delivery already under way may still run.
                        let last = Atomic<Int>(-1)
                        let inCallback = Atomic<Bool>(false)
                        let handle = subject.signal().start(next: { value in
                            if inCallback.exchange(true, ordering: .acquiringAndReleasing) {
                                overlaps.add(1, ordering: .relaxed)
                            }
                            if last.exchange(value, ordering: .relaxed) >= value {
                                badOrder.add(1, ordering: .relaxed)
                            }
                            inCallback.store(false, ordering: .releasing)
                        })
                        if round % 3 == 0 { sched_yield() }
                        handle.dispose()
                    }
                }
                #expect(badOrder.load(ordering: .relaxed) == 0)
                #expect(overlaps.load(ordering: .relaxed) == 0)
            }
            #expect(check.leaks() == nil)
        }

        /// Subscriptions to a replay subject race its sends: each one sees
        /// every value exactly once, in order, then the completion.
        @Test(arguments: [Int.max, 8])
        func replaySubjectSubscriptionsRacingSendsMissAndDuplicateNothing(capacity: Int) {
            let check = LeakCheck()
            let threads = 4
            let values = 300
            let subscriptionsPerThread = 20
            raceRounds(
                threads: threads,
                rounds: 150 * stressScale,
                setup: { _ in
                    UncheckedBox(
                        (
                            subject: ReplaySubject<Int, NoError>(capacity: capacity),
                            recorders: SignalKit.Atomic<[MulticastRecorder<Int>]>(value: []),
                            handles: SignalKit.Atomic<[any Disposable]>(value: [])
                        ))
                },
                body: { index, box in
                    let (subject, recorders, handles) = box.value
                    if index == 0 {
                        for value in 0..<values { subject.putNext(value) }
                        subject.putCompletion()
                        return
                    }
                    if index == 3 {
                        // Subscriptions disposed at once, often mid-replay.
                        for _ in 0..<subscriptionsPerThread {
                            subject.signal().start(next: { _ in }).dispose()
                        }
                        return
                    }
                    for _ in 0..<subscriptionsPerThread {
                        let recorder = MulticastRecorder<Int>()
                        recorders.modify { $0 + [recorder] }
                        let handle = recorder.start(subject.signal())
                        handles.modify { $0 + [handle] }
                    }
                },
                check: { box in
                    let (_, recorders, handles) = box.value
                    for recorder in recorders.with({ $0 }) {
                        #expect(recorder.terminated == 1)
                        #expect(recorder.overlaps.load(ordering: .relaxed) == 0)
                        let seen = recorder.values
                        if capacity == .max {
                            #expect(seen == Array(0..<values))
                        } else {
                            #expect(seen.last == values - 1)
                            #expect(seen == Array((values - seen.count)..<values), "contiguous, in order")
                            #expect(seen.count >= capacity)
                        }
                    }
                    handles.with { $0 }.forEach { $0.dispose() }
                }
            )
            #expect(check.leaks() == nil)
        }

        // MARK: Connections

        /// Threads connect and subscribe at once: one source subscription,
        /// one connection disposable, disposed once.
        @Test func connectRacesSubscribers() {
            let check = LeakCheck()
            raceRounds(
                threads: 4,
                rounds: 3_000 * stressScale,
                setup: { _ in
                    let source = MulticastCountingSource()
                    let connection = source.signal |> publish
                    return UncheckedBox(
                        (
                            source: source, connection: connection,
                            links: SignalKit.Atomic<[any Disposable]>(value: []),
                            recorders: SignalKit.Atomic<[(MulticastRecorder<Int>, any Disposable)]>(value: [])
                        ))
                },
                body: { index, box in
                    let (_, connection, links, recorders) = box.value
                    let recorder = MulticastRecorder<Int>()
                    let handle = recorder.start(connection.signal)
                    recorders.modify { $0 + [(recorder, handle)] }
                    if index % 2 == 0 {
                        let link = connection.connect()
                        links.modify { $0 + [link] }
                    }
                },
                check: { box in
                    let (source, connection, links, recorders) = box.value
                    #expect(source.subscriptions.load(ordering: .relaxed) == 1)
                    let all = links.with { $0 } + [connection.connect()]
                    #expect(all.allSatisfy { $0 === all[0] })
                    source.send(1)
                    for (recorder, _) in recorders.with({ $0 }) {
                        #expect(recorder.values == [1])
                    }
                    all.forEach { $0.dispose() }
                    #expect(source.disposals.count.load(ordering: .relaxed) == 1)
                    recorders.with { $0 }.forEach { $0.1.dispose() }
                    source.release()
                }
            )
            #expect(check.leaks() == nil)
        }

        /// Threads subscribe to an autoconnected signal and dispose: the source
        /// is subscribed at most once and, once everyone left, disposed
        /// exactly once; it is never subscribed again.
        @Test func autoconnectRacesSubscribeAndDispose() {
            let check = LeakCheck()
            raceRounds(
                threads: 4,
                rounds: 3_000 * stressScale,
                setup: { _ in
                    let source = MulticastCountingSource()
                    return UncheckedBox((source: source, shared: (source.signal |> publish).autoconnect()))
                },
                body: { index, box in
                    let (source, shared) = box.value
                    for step in 0..<3 {
                        let handle = shared.start(next: { _ in })
                        if (index + step) % 2 == 0 { source.send(index) }
                        handle.dispose()
                    }
                },
                check: { box in
                    let (source, shared) = box.value
                    #expect(source.subscriptions.load(ordering: .relaxed) == 1)
                    #expect(source.disposals.count.load(ordering: .relaxed) == 1)
                    shared.start(next: { _ in }).dispose()
                    #expect(source.subscriptions.load(ordering: .relaxed) == 1, "never reconnects")
                    source.release()
                }
            )
            #expect(check.leaks() == nil)
        }

        /// `replayLazily` subscribed from several threads at once connects
        /// once; everyone gets everything.
        @Test func replayLazilyFirstSubscriptionsRace() {
            let check = LeakCheck()
            raceRounds(
                threads: 4,
                rounds: 3_000 * stressScale,
                setup: { _ in
                    let subscriptions = SignalKit.Atomic<Int>(value: 0)
                    let source = Signal<Int, NoError> { subscriber in
                        subscriptions.modify { $0 + 1 }
                        for value in 0..<5 { subscriber.putNext(value) }
                        subscriber.putCompletion()
                        return EmptyDisposable
                    }
                    return UncheckedBox(
                        (
                            subscriptions: subscriptions, shared: source |> replayLazily,
                            recorders: SignalKit.Atomic<[(MulticastRecorder<Int>, any Disposable)]>(value: [])
                        ))
                },
                body: { _, box in
                    // A subscriber that arrives while the first one is still
                    // connecting gets the replay so far, then the rest live.
                    let recorder = MulticastRecorder<Int>()
                    let handle = recorder.start(box.value.shared)
                    box.value.recorders.modify { $0 + [(recorder, handle)] }
                },
                check: { box in
                    #expect(box.value.subscriptions.with { $0 } == 1)
                    for (recorder, handle) in box.value.recorders.with({ $0 }) {
                        #expect(recorder.values == [0, 1, 2, 3, 4])
                        #expect(recorder.terminated == 1)
                        #expect(recorder.overlaps.load(ordering: .relaxed) == 0)
                        handle.dispose()
                    }
                }
            )
            #expect(check.leaks() == nil)
        }

        // MARK: Commands

        /// Threads execute a non-concurrent command at once (with works that
        /// end on the executing thread or on another one): never two works
        /// at a time; every call is accepted or refused with
        /// `.alreadyExecuting`; state signals are delivered one at a time and
        /// end on the real state.
        @Test func concurrentExecutesOfANonConcurrentCommand() {
            let check = LeakCheck()
            raceRounds(
                threads: 4,
                rounds: 2_000 * stressScale,
                setup: { _ in CommandRound(allowsConcurrentExecution: false) },
                body: { index, round in round.executeFromThread(index) },
                check: { round in
                    round.finishAndCheck()
                    #expect(round.works.maxInFlight.load(ordering: .relaxed) == 1)
                }
            )
            #expect(check.leaks() == nil)
        }

        @Test func concurrentExecutesOfAConcurrentCommand() {
            let check = LeakCheck()
            raceRounds(
                threads: 4,
                rounds: 2_000 * stressScale,
                setup: { _ in CommandRound(allowsConcurrentExecution: true) },
                body: { index, round in round.executeFromThread(index) },
                check: { round in
                    round.finishAndCheck()
                    #expect(round.refused.load(ordering: .relaxed) == 0)
                }
            )
            #expect(check.leaks() == nil)
        }

        /// Executes race an `enabled` input toggled from another thread, which
        /// also subscribes to `executing` and `enabled` meanwhile: every
        /// refusal names one of the two reasons; every state subscriber gets
        /// a current value, never the same value twice in a row, and ends on
        /// the real state.
        @Test func executesRaceTheEnabledInputAndStateSubscriptions() {
            let check = LeakCheck()
            raceRounds(
                threads: 4,
                rounds: 1_500 * stressScale,
                setup: { _ in CommandRound(allowsConcurrentExecution: false, gate: ValuePromise(true)) },
                body: { index, round in
                    if index == 3 {
                        round.toggleGateAndSubscribe()
                    } else {
                        round.executeFromThread(index)
                    }
                },
                check: { round in round.finishAndCheck(executingThreads: 3) }
            )
            #expect(check.leaks() == nil)
        }

        /// One round: a command, recorders on its four signals, and the works
        /// it started (some left running, to be ended by another thread).
        final class CommandRound: @unchecked Sendable {
            // `@unchecked Sendable`: counters are atomics, collections are
            // SignalKit.Atomic (pthread mutex), recorders are checked after
            // the round.
            /// What the works share (not the round: the command's closure
            /// must not refer to the round that owns the command).
            final class Works: Sendable {
                let inFlight = Atomic<Int>(0)
                let maxInFlight = Atomic<Int>(0)
                let pending = SignalKit.Atomic<[Subscriber<Int, Int>]>(value: [])
            }

            let command: Command<Int, Int, Int>
            let works = Works()
            let accepted = Atomic<Int>(0)
            let refused = Atomic<Int>(0)
            let failing = Atomic<Int>(0)
            let wrongReasons = Atomic<Int>(0)
            let executing = MulticastRecorder<Bool>()
            let enabled = MulticastRecorder<Bool>()
            let errors = MulticastRecorder<Int>()
            let executions = MulticastRecorder<Signal<Int, NoError>>()
            var handles: [any Disposable] = []
            let gate: ValuePromise<Bool>?
            let lateStates = SignalKit.Atomic<[(recorder: MulticastRecorder<Bool>, isExecuting: Bool, handle: any Disposable)]>(
                value: [])

            init(allowsConcurrentExecution: Bool, gate: ValuePromise<Bool>? = nil) {
                let works = self.works
                self.gate = gate
                command = Command(enabled: gate?.get(), allowsConcurrentExecution: allowsConcurrentExecution) { input in
                    Signal<Int, Int> { subscriber in
                        let now = works.inFlight.add(1, ordering: .acquiringAndReleasing).newValue
                        var seen = works.maxInFlight.load(ordering: .relaxed)
                        while now > seen {
                            let (exchanged, original) = works.maxInFlight.compareExchange(
                                expected: seen, desired: now, ordering: .relaxed)
                            if exchanged { break }
                            seen = original
                        }
                        subscriber.putNext(input)
                        switch input % 3 {
                        case 0:
                            works.inFlight.subtract(1, ordering: .acquiringAndReleasing)
                            subscriber.putCompletion()
                        case 1:
                            works.inFlight.subtract(1, ordering: .acquiringAndReleasing)
                            subscriber.putError(input)
                        default:
                            // Ended later, by another thread.
                            works.pending.modify { $0 + [subscriber] }
                        }
                        return EmptyDisposable
                    }
                }
                handles = [
                    executing.start(command.executing), enabled.start(command.enabled),
                    errors.start(command.errors), executions.start(command.executionSignals),
                ]
            }

            func executeFromThread(_ index: Int) {
                for step in 0..<4 {
                    let input = index * 4 + step
                    if index == 0 && step % 2 == 1 { endPendingWorks() }
                    let refusedHere = Shared(false)
                    _ = command.execute(input).start(error: { [self] error in
                        if case .notEnabled(let reason) = error {
                            refusedHere.value = true
                            if reason != .alreadyExecuting && gate == nil { wrongReasons.add(1, ordering: .relaxed) }
                        }
                    })
                    if refusedHere.value {
                        refused.add(1, ordering: .relaxed)
                    } else {
                        accepted.add(1, ordering: .relaxed)
                        if input % 3 == 1 { failing.add(1, ordering: .relaxed) }
                    }
                }
            }

            func toggleGateAndSubscribe() {
                for step in 0..<6 {
                    gate?.set(step % 2 == 1)
                    let isExecuting = step % 3 != 0
                    let recorder = MulticastRecorder<Bool>()
                    let handle = recorder.start(isExecuting ? command.executing : command.enabled)
                    lateStates.modify { $0 + [(recorder, isExecuting, handle)] }
                }
            }

            func endPendingWorks() {
                for subscriber in works.pending.swap([]) {
                    works.inFlight.subtract(1, ordering: .acquiringAndReleasing)
                    subscriber.putCompletion()
                }
            }

            func finishAndCheck(executingThreads: Int = 4) {
                gate?.set(true)
                endPendingWorks()
                #expect(accepted.load(ordering: .relaxed) + refused.load(ordering: .relaxed) == executingThreads * 4)
                #expect(wrongReasons.load(ordering: .relaxed) == 0, "refusals name .alreadyExecuting")
                #expect(!command.isExecuting && command.isEnabled)
                #expect(executing.values.last == false, "executing ends on the real state")
                #expect(enabled.values.last == true)
                #expect(zip(executing.values, executing.values.dropFirst()).allSatisfy { $0 != $1 }, "de-duplicated")
                #expect(zip(enabled.values, enabled.values.dropFirst()).allSatisfy { $0 != $1 })
                #expect(executions.values.count == accepted.load(ordering: .relaxed))
                #expect(errors.values.count == failing.load(ordering: .relaxed))
                // One delivery at a time, on every signal.
                #expect(executing.overlaps.load(ordering: .relaxed) == 0)
                #expect(enabled.overlaps.load(ordering: .relaxed) == 0)
                #expect(errors.overlaps.load(ordering: .relaxed) == 0)
                #expect(executions.overlaps.load(ordering: .relaxed) == 0)
                for (recorder, isExecuting, handle) in lateStates.with({ $0 }) {
                    #expect(recorder.values.last == !isExecuting, "executing ends false, enabled true")
                    #expect(zip(recorder.values, recorder.values.dropFirst()).allSatisfy { $0 != $1 })
                    #expect(recorder.overlaps.load(ordering: .relaxed) == 0)
                    handle.dispose()
                }
                handles.forEach { $0.dispose() }
            }
        }
    }
}
