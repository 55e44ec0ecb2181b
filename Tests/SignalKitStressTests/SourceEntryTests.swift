// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// Pipes and promises register their subscribers' bag entries on the
// subscription itself instead of allocating a removal disposable. These tests
// check that an entry is removed exactly when the subscription ends (so the
// subscription objects are freed), including when the end races the
// registration on another thread.

/// Completes after the first value (a test-local `take(1)`).
private func takeOne<T>(_ signal: Signal<T, NoError>) -> Signal<T, NoError> {
    Signal { subscriber in
        signal.start(next: { value in
            subscriber.putNext(value)
            subscriber.putCompletion()
        })
    }
}

extension StressSuite {
    @Suite struct SourceEntryTests {
        @Test func disposingAPipeSubscriptionFreesItsObjects() {
            let check = LeakCheck()
            do {
                let pipe = ValuePipe<Int>()
                for _ in 0..<100 {
                    let handle = pipe.signal().start(next: { _ in })
                    handle.dispose()
                }
                let kept = pipe.signal().start(next: { _ in })
                #expect(check.leaks(timeout: 0) != nil, "the live subscription is counted")
                kept.dispose()
            }
            #expect(check.leaks() == nil)
        }

        @Test func terminationRemovesTheEntry() {
            let check = LeakCheck()
            do {
                let pipe = ValuePipe<Int>()
                let log = EventLog()
                for _ in 0..<10 { _ = log.start(takeOne(pipe.signal())) }
                pipe.putNext(7)
                pipe.putNext(8)
                #expect(log.events == Array(repeating: ["next 7", "completed"], count: 10).flatMap { $0 })
            }
            #expect(check.leaks() == nil)
        }

        @Test func aPromiseSubscriptionTerminatedDuringItsReplayRemovesItsEntry() {
            let check = LeakCheck()
            do {
                let promise = ValuePromise(1)
                let log = EventLog()
                _ = log.start(takeOne(promise.get()))
                promise.set(2)
                #expect(log.events == ["next 1", "completed"])
            }
            #expect(check.leaks() == nil)
        }

        @Test func thePipesDeathEndsItsSubscriptions() {
            let check = LeakCheck()
            var handles: [any Disposable] = []
            do {
                let pipe = ValuePipe<Int>()
                for _ in 0..<10 { handles.append(pipe.signal().start(next: { _ in })) }
            }
            handles.forEach { $0.dispose() }
            handles.removeAll()
            #expect(check.leaks() == nil)
        }

        /// The subscription ends on another thread (a value delivered there
        /// completes it) while the subscribing thread is still registering.
        @Test func terminationRacingRegistrationStillRemovesTheEntry() {
            let check = LeakCheck()
            do {
                let pipe = ValuePipe<Int>()
                let completions = Atomic<Int>(0)
                let rounds = 20_000 * stressScale
                raceRounds(
                    threads: 2,
                    rounds: rounds,
                    setup: { _ in () },
                    body: { index, _ in
                        if index == 0 {
                            let handle = takeOne(pipe.signal()).start(completed: { completions.add(1, ordering: .relaxed) })
                            _ = handle
                        } else {
                            for value in 0..<4 { pipe.putNext(value) }
                        }
                    }
                )
                // Subscriptions that saw no value yet end now.
                pipe.putNext(-1)
                #expect(completions.load(ordering: .relaxed) == rounds)
            }
            #expect(check.leaks() == nil)
        }
    }
}
