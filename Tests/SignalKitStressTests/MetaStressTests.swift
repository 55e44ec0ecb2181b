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

/// A mutable box for values handed over on one thread.
final class UncheckedBoxVar<Value>: @unchecked Sendable {
    // `@unchecked Sendable`: used by one thread at a time.
    var value: Value
    init(_ value: Value) { self.value = value }
}

// Races of the Meta and Catch engines: outer values from one thread, inner
// completions from another, disposal from a third. Run under TSan and ASan
// (scale 1) and in release with SIGNALKIT_STRESS_SCALE. Every round checks
// that each subscription's disposable was disposed exactly once; every test
// ends with the live-object counters back where they started.

extension StressSuite {
    @Suite(.serialized) struct MetaStressTests {
        /// Inner subscriptions made by a round: their subscribers (until a
        /// thread completes them) and one counting disposable each.
        final class Inners: @unchecked Sendable {
            // `@unchecked Sendable`: the state is guarded by `lock` (a pthread
            // mutex, which ThreadSanitizer sees; `Synchronization.Mutex` is
            // compiled into the uninstrumented toolchain).
            private let lock = Lock()
            private var waiting: [(Int, Subscriber<Int, NoError>)] = []
            private var disposables: [Counter] = []

            /// An inner signal with the given index.
            func signal(_ index: Int) -> Signal<Int, NoError> {
                Signal { [self] subscriber in
                    let disposable = Counter()
                    lock.locked {
                        waiting.append((index, subscriber))
                        disposables.append(disposable)
                    }
                    return disposable
                }
            }

            /// Takes the oldest inner subscriber not completed yet.
            func takeWaiting() -> (Int, Subscriber<Int, NoError>)? {
                var taken: (Int, Subscriber<Int, NoError>)?
                lock.locked { if !waiting.isEmpty { taken = waiting.removeFirst() } }
                return taken
            }

            var subscriptions: Int {
                var count = 0
                lock.locked { count = disposables.count }
                return count
            }

            var everyDisposableDisposedOnce: Bool {
                var result = false
                lock.locked { result = disposables.allSatisfy { $0.count.load(ordering: .relaxed) == 1 } }
                return result
            }

            func releaseSubscribers() {
                var released: [(Int, Subscriber<Int, NoError>)] = []
                lock.locked { swap(&released, &waiting) }
                _ = released
            }
        }

        /// What the downstream received.
        final class Tally: @unchecked Sendable {
            // `@unchecked Sendable`: `received` is guarded by `lock`.
            private let lock = Lock()
            private var received: [Int] = []
            let terminals = Atomic<Int>(0)

            func append(_ value: Int) { lock.locked { received.append(value) } }

            var values: [Int] {
                var result: [Int] = []
                lock.locked { result = received }
                return result
            }
        }

        /// A round: an outer signal driven by hand, its inners, the handle.
        final class Round: @unchecked Sendable {
            // `@unchecked Sendable`: `outer` and `handle` are set during setup,
            // before the round's threads start, and cleared by `end()` after they
            // finished; the rest is `Sendable`.
            let inners = Inners()
            let tally = Tally()
            var outer: Subscriber<Signal<Int, NoError>, NoError>?
            var handle: (any Disposable)?
            var values: [Int] { tally.values }
            var terminals: Int { tally.terminals.load(ordering: .relaxed) }

            init(_ makeOutput: (Signal<Signal<Int, NoError>, NoError>) -> Signal<Int, NoError>) {
                let captured = UncheckedBoxVar<Subscriber<Signal<Int, NoError>, NoError>?>(nil)
                let outerSignal = Signal<Signal<Int, NoError>, NoError> { subscriber in
                    captured.value = subscriber  // the generator runs on this thread, now
                    return EmptyDisposable
                }
                let tally = self.tally
                handle = makeOutput(outerSignal).start(
                    next: { value in tally.append(value) },
                    completed: { tally.terminals.add(1, ordering: .relaxed) }
                )
                outer = captured.value
            }

            /// Sends inners 0..<count through the outer, then completes it.
            func emitInners(_ count: Int) {
                for inner in 0..<count { outer?.putNext(inners.signal(inner)) }
                outer?.putCompletion()
            }

            /// Disposes the handle after a random number of yields.
            func disposeAfterAWhile() {
                for _ in 0..<Int.random(in: 0..<48) { sched_yield() }
                handle?.dispose()
            }

            /// Completes inners as they are subscribed until `count` were
            /// completed or `attempts` polls found nothing.
            func completeInners(count: Int, attempts: Int) {
                var completed = 0
                var idle = 0
                while completed < count && idle < attempts {
                    if let (index, subscriber) = inners.takeWaiting() {
                        subscriber.putNext(index)
                        subscriber.putCompletion()
                        completed += 1
                        idle = 0
                    } else {
                        idle += 1
                        sched_yield()
                    }
                }
            }

            func end() {
                handle?.dispose()
                inners.releaseSubscribers()
                outer = nil
            }
        }

        // MARK: - switchToLatest

        @Test func switchToLatestOuterValuesRaceInnerCompletionsAndDisposal() {
            let check = LeakCheck()
            let innersPerRound = 16
            raceRounds(
                threads: 3,
                rounds: 1_500 * stressScale,
                setup: { _ in Round(switchToLatest) },
                body: { index, round in
                    switch index {
                    case 0:
                        round.emitInners(innersPerRound)
                    case 1:
                        round.completeInners(count: innersPerRound, attempts: 64)
                    default:
                        round.disposeAfterAWhile()
                    }
                },
                check: { round in
                    round.end()
                    #expect(round.inners.everyDisposableDisposedOnce)
                    #expect(round.terminals <= 1)
                }
            )
            #expect(check.leaks() == nil)
        }

        @Test func switchToLatestWithoutDisposalCompletesOnceAfterTheLastInner() {
            let check = LeakCheck()
            let innersPerRound = 16
            raceRounds(
                threads: 2,
                rounds: 1_500 * stressScale,
                setup: { _ in Round(switchToLatest) },
                body: { index, round in
                    if index == 0 {
                        round.emitInners(innersPerRound)
                    } else {
                        round.completeInners(count: innersPerRound, attempts: 256)
                    }
                },
                check: { round in
                    // The last inner is never replaced: once it is completed (here
                    // if the completing thread was not done yet), the output is.
                    round.completeInners(count: innersPerRound, attempts: 1)
                    #expect(round.terminals == 1)
                    let values = round.values
                    #expect(values.last == innersPerRound - 1)
                    round.end()
                    #expect(round.inners.everyDisposableDisposedOnce)
                }
            )
            #expect(check.leaks() == nil)
        }

        // MARK: - queue, throttled

        @Test func queueRunsEveryInnerOnceInOrderWhileInnersCompleteOnAnotherThread() {
            let check = LeakCheck()
            let innersPerRound = 16
            raceRounds(
                threads: 2,
                rounds: 1_500 * stressScale,
                setup: { _ in Round(queue) },
                body: { index, round in
                    if index == 0 {
                        round.emitInners(innersPerRound)
                    } else {
                        round.completeInners(count: innersPerRound, attempts: .max)
                    }
                },
                check: { round in
                    #expect(round.values == Array(0..<innersPerRound))
                    #expect(round.terminals == 1)
                    #expect(round.inners.subscriptions == innersPerRound)
                    round.end()
                    #expect(round.inners.everyDisposableDisposedOnce)
                }
            )
            #expect(check.leaks() == nil)
        }

        @Test func throttledRunsTheLatestInnerAndDropsOnlyWaitingOnes() {
            let check = LeakCheck()
            let innersPerRound = 16
            raceRounds(
                threads: 2,
                rounds: 1_500 * stressScale,
                setup: { _ in Round(throttled) },
                body: { index, round in
                    if index == 0 {
                        round.emitInners(innersPerRound)
                    } else {
                        round.completeInners(count: innersPerRound, attempts: 256)
                    }
                },
                check: { round in
                    round.completeInners(count: innersPerRound, attempts: 1)
                    let values = round.values
                    #expect(values.first == 0, "the first inner starts at once")
                    #expect(values.last == innersPerRound - 1, "the latest inner is never dropped")
                    #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 })
                    #expect(round.terminals == 1)
                    round.end()
                    #expect(round.inners.everyDisposableDisposedOnce)
                }
            )
            #expect(check.leaks() == nil)
        }

        @Test(arguments: ["queue", "throttled"])
        func queueingRacesDisposal(mode: String) {
            let check = LeakCheck()
            let innersPerRound = 16
            let operation: (Signal<Signal<Int, NoError>, NoError>) -> Signal<Int, NoError> = { outer in
                mode == "queue" ? (outer |> queue) : (outer |> throttled)
            }
            raceRounds(
                threads: 3,
                rounds: 1_500 * stressScale,
                setup: { _ in Round(operation) },
                body: { index, round in
                    switch index {
                    case 0:
                        round.emitInners(innersPerRound)
                    case 1:
                        round.completeInners(count: innersPerRound, attempts: 64)
                    default:
                        round.disposeAfterAWhile()
                    }
                },
                check: { round in
                    round.end()
                    let values = round.values
                    #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "inners run one at a time, in order")
                    #expect(round.inners.everyDisposableDisposedOnce)
                    #expect(round.terminals <= 1)
                }
            )
            #expect(check.leaks() == nil)
        }

        // MARK: - restart

        @Test func restartCompletionsOnAnotherThreadRaceDisposal() {
            let check = LeakCheck()
            raceRounds(
                threads: 2,
                rounds: 3_000 * stressScale,
                setup: { _ -> UncheckedBox<(Inners, any Disposable)> in
                    let inners = Inners()
                    let handle = (inners.signal(0) |> restart).start()
                    return UncheckedBox((inners, handle))
                },
                body: { index, state in
                    let (inners, handle) = state.value
                    if index == 0 {
                        for _ in 0..<8 {
                            guard let (_, subscriber) = inners.takeWaiting() else { break }
                            subscriber.putCompletion()
                        }
                    } else {
                        for _ in 0..<Int.random(in: 0..<16) { sched_yield() }
                        handle.dispose()
                    }
                },
                check: { state in
                    let (inners, _) = state.value
                    inners.releaseSubscribers()
                    #expect(inners.everyDisposableDisposedOnce)
                }
            )
            #expect(check.leaks() == nil)
        }
    }
}
