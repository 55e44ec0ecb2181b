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

// The disposal of a signal whose generator runs in a task (`Signal.task`)
// against that task: the task spins until it sees the cancellation, then
// sends a value (and, in the throwing form, throws). What it sends after it
// can see the cancellation must never be delivered, however close the
// send follows the cancellation (the disposal ends the delivery before it
// cancels the task).

private enum Boom: Error { case boom }

extension StressSuite {
    @Suite(.serialized) struct TaskSignalStressTests {
        /// One round's source: the task's progress, for the disposing thread.
        private final class Progress: Sendable {
            let running = Synchronization.Atomic<Bool>(false)
            let finished = Synchronization.Atomic<Bool>(false)
        }

        /// What the rounds saw, across rounds.
        private final class Counts: Sendable {
            let late = Synchronization.Atomic<Int>(0)
            let stuck = Synchronization.Atomic<Int>(0)
        }

        private enum Form: CaseIterable, Sendable {
            case nonThrowing, throwing
        }

        /// Starts one round's signal in `form`, logged by `log`.
        private static func start(_ form: Form, _ progress: Progress, log: EventLog) -> any Disposable {
            switch form {
            case .nonThrowing:
                return log.start(
                    Signal<Int, NoError>.task { subscriber in
                        subscriber.putNext(1)
                        progress.running.store(true, ordering: .releasing)
                        while !Task.isCancelled {}
                        subscriber.putNext(2)
                        progress.finished.store(true, ordering: .releasing)
                    })
            case .throwing:
                return log.start(
                    Signal<Int, Boom>.task { (subscriber) throws(Boom) in
                        subscriber.putNext(1)
                        progress.running.store(true, ordering: .releasing)
                        defer { progress.finished.store(true, ordering: .releasing) }
                        while !Task.isCancelled {}
                        subscriber.putNext(2)
                        throw .boom
                    })
            }
        }

        /// Waits (spinning, bounded) for `flag`; false if it did not come.
        private static func wait(for flag: borrowing Synchronization.Atomic<Bool>) -> Bool {
            let deadline = ContinuousClock.now.advanced(by: .seconds(10))
            while !flag.load(ordering: .acquiring) {
                guard ContinuousClock.now < deadline else { return false }
                sched_yield()
            }
            return true
        }

        /// The rounds run on a thread of their own: they wait for tasks,
        /// which need a Swift concurrency thread to run on.
        @Test(arguments: Form.allCases)
        private func nothingTheTaskSendsAfterTheCancellationIsDelivered(_ form: Form) async {
            let check = LeakCheck()
            let rounds = 300 * stressScale
            let counts = await onDedicatedThread { () -> Counts in
                let counts = Counts()
                for _ in 0..<rounds {
                    let progress = Progress()
                    let log = EventLog()
                    let handle = Self.start(form, progress, log: log)
                    guard Self.wait(for: progress.running) else {
                        counts.stuck.add(1, ordering: .relaxed)
                        handle.dispose()
                        continue
                    }
                    handle.dispose()
                    if !Self.wait(for: progress.finished) { counts.stuck.add(1, ordering: .relaxed) }
                    if log.events != ["next 1"] { counts.late.add(1, ordering: .relaxed) }
                }
                return counts
            }
            #expect(counts.stuck.load(ordering: .relaxed) == 0, "every task ran and ended")
            #expect(counts.late.load(ordering: .relaxed) == 0, "rounds with an event sent after the cancellation")
            #expect(check.leaks() == nil)
        }
    }
}
