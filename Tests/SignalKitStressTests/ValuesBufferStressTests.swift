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

// Races of `values(buffer:)`: a task iterates a bounded buffer while a
// producer thread fills it and another thread cancels the task. Every value
// is a `TrackedObject`, so a value the buffer forgets to release (or
// releases twice) shows in the counters; the buffer statistics' live
// subscriptions and depth must be back to zero.

extension StressSuite {
    @Suite(.serialized) struct ValuesBufferStressTests {
        /// One round: the source's subscriber, the iterating task and its end.
        private struct Round: Sendable {
            let subscriber: Subscriber<TrackedObject, Int>
            let task: Task<Void, Never>
            let end: EndFlag
        }

        private static let buffers: [SignalBuffer<Int>] = [
            .droppingOldest(beyond: 4), .droppingNewest(beyond: 4), .latest, .blocking(beyond: 2),
            .failing(beyond: 4, with: -1),
        ]

        private static func name(_ buffer: SignalBuffer<Int>) -> String { "stress.values.\(buffer)" }

        /// Starts a task iterating a source the test drives, through
        /// `buffer`, checking that values arrive in order, never twice; returns
        /// once the task has subscribed.
        private func subscribe(_ buffer: SignalBuffer<Int>, counts: IterationCounts) -> Round {
            // A pthread-mutex box, not Synchronization.Mutex: the subscriber is
            // made on the task's thread and read on the racing threads, and
            // ThreadSanitizer does not see the contended path of
            // Synchronization.Mutex (it then reports the hand-over as a race).
            let source = Shared<Subscriber<TrackedObject, Int>?>(nil)
            let signal =
                Signal<TrackedObject, Int> { subscriber in
                    counts.subscribed.add(1, ordering: .relaxed)
                    source.withLock { $0 = subscriber }
                    return ActionDisposable { counts.disposed.add(1, ordering: .relaxed) }
                } |> named(Self.name(buffer))
            let end = EndFlag()
            let values = signal.values(buffer: buffer)
            let task = Task {
                var last = -1
                do {
                    for try await value in values {
                        let index = Int(value.name)!
                        if index <= last { counts.misordered.add(1, ordering: .relaxed) }
                        last = index
                        // A slow consumer, so that the buffer fills.
                        for _ in 0..<Int.random(in: 0..<50) { _ = counts.misordered.load(ordering: .relaxed) }
                    }
                } catch {
                    counts.failures.add(1, ordering: .relaxed)
                }
                end.ended.store(true, ordering: .releasing)
            }
            var subscriber: Subscriber<TrackedObject, Int>?
            let deadline = ContinuousClock.now.advanced(by: .seconds(30))
            while subscriber == nil {
                // A bound, so that a starved task fails the run instead of hanging it.
                guard ContinuousClock.now < deadline else { fatalError("the iterating task did not subscribe within 30 s") }
                sched_yield()
                subscriber = source.withLock { $0 }
            }
            return Round(subscriber: subscriber!, task: task, end: end)
        }

        /// The rounds run on a thread of their own: each round's setup and
        /// check wait for the iterating task, which needs a Swift concurrency
        /// thread to run on.
        @Test func producerConsumerAndCancellationRace() async {
            let check = LeakCheck()
            let live = TrackedObject.liveCount
            let rounds = 1_000 * stressScale
            let counts = await onDedicatedThread { () -> IterationCounts in
                let counts = IterationCounts()
                raceRounds(
                    threads: 2,
                    rounds: rounds,
                    setup: { round in subscribe(Self.buffers[round % Self.buffers.count], counts: counts) },
                    body: { index, round in
                        if index == 0 {
                            for value in 0..<32 { round.subscriber.putNext(TrackedObject("\(value)")) }
                            round.subscriber.putCompletion()
                        } else {
                            for _ in 0..<Int.random(in: 0..<2_000) { _ = counts.misordered.load(ordering: .relaxed) }
                            round.task.cancel()
                        }
                    },
                    check: { round in
                        // The iteration ends: by its completion or error, or
                        // by the cancellation.
                        let deadline = ContinuousClock.now.advanced(by: .seconds(10))
                        while !round.end.ended.load(ordering: .acquiring) && ContinuousClock.now < deadline { sched_yield() }
                        if !round.end.ended.load(ordering: .acquiring) { counts.stuck.add(1, ordering: .relaxed) }
                    }
                )
                return counts
            }
            #expect(counts.stuck.load(ordering: .relaxed) == 0, "every iteration ended")
            #expect(counts.misordered.load(ordering: .relaxed) == 0)
            #expect(counts.subscribed.load(ordering: .relaxed) == rounds)
            #expect(counts.disposed.load(ordering: .relaxed) == rounds, "each subscription disposed exactly once")
            // Only `failing` throws.
            #expect(counts.failures.load(ordering: .relaxed) <= rounds / Self.buffers.count + 1)
            #expect(check.leaks() == nil)
            #expect(TrackedObject.liveCount == live, "every value released exactly once")
            for buffer in Self.buffers {
                let statistics = SignalKitDebug.bufferStatistics().first { $0.name == Self.name(buffer) }
                #expect(statistics?.liveSubscriptions == 0, "\(buffer)")
                #expect(statistics?.depth == 0, "\(buffer)")
            }
        }
    }
}

/// Set when a round's iteration has ended.
private final class EndFlag: Sendable {
    let ended = Synchronization.Atomic<Bool>(false)
}

/// What the iterations saw, across rounds.
private final class IterationCounts: Sendable {
    let misordered = Synchronization.Atomic<Int>(0)
    let failures = Synchronization.Atomic<Int>(0)
    let stuck = Synchronization.Atomic<Int>(0)
    let subscribed = Synchronization.Atomic<Int>(0)
    let disposed = Synchronization.Atomic<Int>(0)
}
