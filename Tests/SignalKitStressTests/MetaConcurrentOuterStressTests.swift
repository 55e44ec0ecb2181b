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

// Issue #9, item 4: several threads call the same outer subscriber's
// `putNext` at once, each with synchronous inners (`.single`). An inner's
// values sent while it is being subscribed are delivered even if another
// thread started a newer inner meanwhile: the active inner is decided with
// its subscription, as in SwiftSignalKit (which delivers every inner's
// value here). Before the fix SignalKit lost 1–30 of 200 values in about
// half the rounds of `switchToLatest` / `mapToSignal`.
//
// (Calling one subscriber from several threads at once breaks the source
// contract — `Subscriber` does not serialise — so the downstream callbacks
// may run concurrently; the tally takes a lock.)

extension StressSuite {
    @Suite(.serialized) struct MetaConcurrentOuterStressTests {
        static let threads = 4
        static let valuesPerThread = 50
        static let total = threads * valuesPerThread

        /// What the downstream received.
        final class Tally: @unchecked Sendable {
            // `@unchecked Sendable`: `received` is guarded by `lock`.
            private let lock = Lock()
            private var received: [Int] = []
            let completions = Atomic<Int>(0)
            let subscriptions = Atomic<Int>(0)

            func append(_ value: Int) { lock.locked { received.append(value) } }

            var values: [Int] {
                var result: [Int] = []
                lock.locked { result = received }
                return result
            }
        }

        /// One round: the outer subscriber (driven by the threads) and the
        /// handle. `Outer` is what the outer signal carries.
        final class Round<Outer>: @unchecked Sendable {
            // `@unchecked Sendable`: `outer` and `handle` are set during setup,
            // before the threads start, and cleared by `end()` after they
            // finished; `tally` is `Sendable`.
            let tally = Tally()
            var outer: Subscriber<Outer, NoError>?
            var handle: (any Disposable)?

            init(_ makeOutput: (Signal<Outer, NoError>, Tally) -> Signal<Int, NoError>) {
                let captured = UncheckedBoxVar<Subscriber<Outer, NoError>?>(nil)
                let outerSignal = Signal<Outer, NoError> { subscriber in
                    captured.value = subscriber
                    return EmptyDisposable
                }
                let tally = self.tally
                handle = makeOutput(outerSignal, tally).start(
                    next: { value in tally.append(value) },
                    completed: { tally.completions.add(1, ordering: .relaxed) }
                )
                outer = captured.value
            }

            func end() {
                outer?.putCompletion()
                handle?.dispose()
                outer = nil
            }
        }

        /// `.single(value)`, counting its subscriptions.
        static func single(_ value: Int, _ tally: Tally) -> Signal<Int, NoError> {
            Signal { subscriber in
                tally.subscriptions.add(1, ordering: .relaxed)
                subscriber.putNext(value)
                subscriber.putCompletion()
                return EmptyDisposable
            }
        }

        /// Runs the race: thread t sends t·50 … t·50+49 through `send`.
        func race<Outer>(
            rounds: Int,
            _ makeOutput: @escaping (Signal<Outer, NoError>, Tally) -> Signal<Int, NoError>,
            send: @escaping @Sendable (Subscriber<Outer, NoError>, Int, Tally) -> Void,
            check: @escaping (Tally) -> Void
        ) {
            let leaks = LeakCheck()
            raceRounds(
                threads: Self.threads,
                rounds: rounds,
                setup: { _ in Round<Outer>(makeOutput) },
                body: { thread, round in
                    guard let outer = round.outer else { return }
                    for offset in 0..<Self.valuesPerThread {
                        send(outer, thread * Self.valuesPerThread + offset, round.tally)
                    }
                },
                check: { round in
                    round.end()
                    check(round.tally)
                }
            )
            #expect(leaks.leaks() == nil)
        }

        /// Every value of every inner arrived, once, and the output completed.
        static func expectEveryValue(_ tally: Tally) {
            let values = tally.values
            #expect(values.count == total, "lost \(total - values.count) of \(total) values")
            #expect(Set(values) == Set(0..<total))
            #expect(tally.completions.load(ordering: .relaxed) == 1)
        }

        static var rounds: Int { 300 * stressScale }

        @Test func switchToLatestDeliversEverySynchronousInner() {
            race(
                rounds: Self.rounds,
                { outer, _ in outer |> switchToLatest },
                send: { outer, value, tally in outer.putNext(Self.single(value, tally)) },
                check: Self.expectEveryValue
            )
        }

        @Test func mapToSignalDeliversEverySynchronousInner() {
            race(
                rounds: Self.rounds,
                { outer, tally in outer |> mapToSignal { Self.single($0, tally) } },
                send: { outer, value, _ in outer.putNext(value) },
                check: Self.expectEveryValue
            )
        }

        @Test func queueDeliversEverySynchronousInner() {
            race(
                rounds: Self.rounds,
                { outer, _ in outer |> queue },
                send: { outer, value, tally in outer.putNext(Self.single(value, tally)) },
                check: Self.expectEveryValue
            )
        }

        @Test func mapToQueueDeliversEverySynchronousInner() {
            race(
                rounds: Self.rounds,
                { outer, tally in outer |> mapToQueue { Self.single($0, tally) } },
                send: { outer, value, _ in outer.putNext(value) },
                check: Self.expectEveryValue
            )
        }

        /// `throttled` drops waiting inners by design: every inner that was
        /// subscribed delivers its value.
        static func expectEverySubscribedInner(_ tally: Tally) {
            let values = tally.values
            #expect(values.count == tally.subscriptions.load(ordering: .relaxed))
            #expect(Set(values).count == values.count)
            #expect(tally.completions.load(ordering: .relaxed) == 1)
        }

        @Test func throttledDeliversEverySubscribedSynchronousInner() {
            race(
                rounds: Self.rounds,
                { outer, _ in outer |> throttled },
                send: { outer, value, tally in outer.putNext(Self.single(value, tally)) },
                check: Self.expectEverySubscribedInner
            )
        }

        @Test func mapToThrottledDeliversEverySubscribedSynchronousInner() {
            race(
                rounds: Self.rounds,
                { outer, tally in outer |> mapToThrottled { Self.single($0, tally) } },
                send: { outer, value, _ in outer.putNext(value) },
                check: Self.expectEverySubscribedInner
            )
        }
    }
}
