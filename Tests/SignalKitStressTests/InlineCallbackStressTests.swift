// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// The callbacks of `start(next:error:completed:)` and
// `Subscriber(next:error:completed:)` live in the subscription's own storage
// and are destroyed in place at termination, whoever wins the release claim:
// the terminal call, the handle's `dispose()`, or the last delivery to leave.
// These races check that no callback ever runs after (or while) it is
// destroyed, that each is destroyed exactly once, and that nothing is
// delivered after the terminal callback.

/// What one round observed. Each callback captures its own probe.
private final class CallbackRound: @unchecked Sendable {
    // `@unchecked Sendable`: `handle` and `subscriber` are written by `setup`
    // before the round starts and read by its threads after (raceRounds
    // publishes the round); the rest is atomic.
    var handle: (any Disposable)?
    var subscriber: Subscriber<Int, TestError>?
    /// Destructions of the next, error and completed callbacks' probes.
    let nextReleased = Synchronization.Atomic<Int>(0)
    let errorReleased = Synchronization.Atomic<Int>(0)
    let completedReleased = Synchronization.Atomic<Int>(0)
    /// A callback found its own probe destroyed while it ran.
    let ranWhileReleased = Synchronization.Atomic<Int>(0)
    /// Deliveries of any event after the terminal callback began.
    let afterTerminal = Synchronization.Atomic<Int>(0)
    let terminalCalls = Synchronization.Atomic<Int>(0)

    func released(_ index: Int) -> Int {
        switch index {
        case 0: nextReleased.load(ordering: .acquiring)
        case 1: errorReleased.load(ordering: .acquiring)
        default: completedReleased.load(ordering: .acquiring)
        }
    }

    func markReleased(_ index: Int) {
        switch index {
        case 0: nextReleased.add(1, ordering: .acquiringAndReleasing)
        case 1: errorReleased.add(1, ordering: .acquiringAndReleasing)
        default: completedReleased.add(1, ordering: .acquiringAndReleasing)
        }
    }

    /// What went wrong in a round whose calls have all returned: the
    /// subscription has ended, so each callback must have been destroyed
    /// exactly once. With a serial source, nothing may follow the terminal
    /// callback (a source that breaks the serial contract may overlap them).
    func problems(terminalCalls expected: ClosedRange<Int>, serialSource: Bool) -> [String] {
        var problems: [String] = []
        let released = (0..<3).map(released)
        if released != [1, 1, 1] { problems.append("released \(released)") }
        if ranWhileReleased.load(ordering: .relaxed) != 0 { problems.append("ran while destroyed") }
        if serialSource && afterTerminal.load(ordering: .relaxed) != 0 { problems.append("event after the terminal callback") }
        let terminals = terminalCalls.load(ordering: .relaxed)
        if !expected.contains(terminals) { problems.append("\(terminals) terminal callbacks") }
        return problems
    }
}

/// Counts its own destruction in its round.
private final class CallbackProbe: Sendable {
    let round: CallbackRound
    let index: Int
    init(_ round: CallbackRound, _ index: Int) {
        self.round = round
        self.index = index
    }
    deinit { round.markReleased(index) }

    /// Called at the start and at the end of its callback.
    func check() {
        if round.released(index) != 0 {
            round.ranWhileReleased.add(1, ordering: .relaxed)
        }
    }
}

private struct TestError: Error {}

/// The three callbacks of a round, each holding its own probe.
private func callbacks(
    for round: CallbackRound
) -> (next: @Sendable (Int) -> Void, error: @Sendable (TestError) -> Void, completed: @Sendable () -> Void) {
    let probes = (CallbackProbe(round, 0), CallbackProbe(round, 1), CallbackProbe(round, 2))
    return (
        next: { _ in
            probes.0.check()
            if round.terminalCalls.load(ordering: .acquiring) != 0 { round.afterTerminal.add(1, ordering: .relaxed) }
            probes.0.check()
        },
        error: { _ in
            probes.1.check()
            round.terminalCalls.add(1, ordering: .acquiringAndReleasing)
            probes.1.check()
        },
        completed: {
            probes.2.check()
            round.terminalCalls.add(1, ordering: .acquiringAndReleasing)
            probes.2.check()
        }
    )
}

extension StressSuite {
    @Suite struct InlineCallbackStressTests {
        /// A source delivers values then completes on one thread while
        /// `dispose()` runs on another.
        @Test func disposeRacingDeliveriesNeverRunsADestroyedCallback() {
            let check = LeakCheck()
            var problems: [String] = []
            raceRounds(
                threads: 2,
                rounds: 10_000 * stressScale,
                setup: { _ in
                    let round = CallbackRound()
                    let (next, error, completed) = callbacks(for: round)
                    round.handle = Signal<Int, TestError> { subscriber in
                        round.subscriber = subscriber
                        return EmptyDisposable
                    }.start(next: next, error: error, completed: completed)
                    return round
                },
                body: { (index: Int, round: CallbackRound) in
                    if index == 0 {
                        for value in 0..<8 { round.subscriber?.putNext(value) }
                        if endsWithCompletion(round) { round.subscriber?.putCompletion() }
                    } else {
                        round.handle?.dispose()
                    }
                },
                check: { (round: CallbackRound) in
                    problems += round.problems(terminalCalls: 0...1, serialSource: true)
                    round.subscriber = nil
                }
            )
            #expect(problems.isEmpty, "\(problems.prefix(5)) in \(problems.count) rounds")
            #expect(check.leaks() == nil)
        }

        /// `Subscriber(next:error:completed:)` driven by two threads at once:
        /// values on one, the error on the other (a source that breaks the
        /// serial contract must still not touch destroyed callbacks).
        @Test func terminalCallRacingDeliveriesNeverRunsADestroyedCallback() {
            let check = LeakCheck()
            var problems: [String] = []
            raceRounds(
                threads: 2,
                rounds: 10_000 * stressScale,
                setup: { _ in
                    let round = CallbackRound()
                    let (next, error, completed) = callbacks(for: round)
                    round.subscriber = Subscriber(next: next, error: error, completed: completed)
                    return round
                },
                body: { (index: Int, round: CallbackRound) in
                    if index == 0 {
                        for value in 0..<8 { round.subscriber?.putNext(value) }
                    } else {
                        round.subscriber?.putError(TestError())
                    }
                },
                check: { (round: CallbackRound) in
                    problems += round.problems(terminalCalls: 1...1, serialSource: false)
                    round.subscriber = nil
                }
            )
            #expect(problems.isEmpty, "\(problems.prefix(5)) in \(problems.count) rounds")
            #expect(check.leaks() == nil)
        }
    }
}

/// Whether the round should end with a completion (every other round by the
/// round's identity, so both "disposed while running" and "completed while
/// disposing" interleavings occur).
private func endsWithCompletion(_ round: CallbackRound) -> Bool {
    UInt(bitPattern: ObjectIdentifier(round).hashValue) & 16 != 0
}
