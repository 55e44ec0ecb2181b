// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// No deadlock on re-entrant deinit (see ReentrantDeinitTests), under
// contention: threads replace values whose deinit re-enters the container
// that releases them (subscribe, set, putNext).
// A deadlock hangs the run; the live-object counters must return to zero.

/// Runs `action` from its deinit; counted by `LeakCheck` through `tracked`.
private final class Reentrant: Equatable, @unchecked Sendable {
    let tracked = TrackedObject("reentrant")
    let action: () -> Void
    init(_ action: @escaping () -> Void) { self.action = action }
    deinit { action() }
    static func == (lhs: Reentrant, rhs: Reentrant) -> Bool { lhs === rhs }
}

extension StressSuite {
    @Suite struct ReentrantDeinitStressTests {
        @Test func promisesAndAtomicsReplacedConcurrentlyByReentrantValues() {
            let check = LeakCheck()
            do {
                let promise = Promise<Reentrant>()
                let valuePromise = ValuePromise<Reentrant>()
                let repeated = ValuePromise<Reentrant>(ignoreRepeated: true)
                let atomic = Atomic<Reentrant?>(value: nil)
                let subject = ReplaySubject<Reentrant, NoError>(capacity: 2)
                let pipe = ValuePipe<Reentrant>()
                promise.set(pipe.signal())
                let threads = 4
                let operations = 5_000 * stressScale / threads
                race(threads: threads) { [weak promise, weak valuePromise, weak repeated, weak atomic, weak subject] index in
                    for round in 0..<operations {
                        let value = Reentrant {
                            promise?.get().start(next: { _ in }).dispose()
                            valuePromise?.get().start(next: { _ in }).dispose()
                            repeated?.get().start(next: { _ in }).dispose()
                            _ = atomic?.with { $0 }
                            subject?.signal().start(next: { _ in }).dispose()
                        }
                        switch (index + round) % 5 {
                        case 0: pipe.putNext(value)
                        case 1: valuePromise?.set(value)
                        case 2: repeated?.set(value)
                        case 3: atomic?.modify { _ in value }
                        default: subject?.putNext(value)
                        }
                    }
                }
                // A subscriber added meanwhile sees the current values.
                let seen = Shared(0)
                let handles = [
                    promise.get().start(next: { _ in seen.withLock { $0 += 1 } }),
                    valuePromise.get().start(next: { _ in seen.withLock { $0 += 1 } }),
                    repeated.get().start(next: { _ in seen.withLock { $0 += 1 } }),
                ]
                handles.forEach { $0.dispose() }
                #expect(seen.value == 3)
                withExtendedLifetime((promise, valuePromise, repeated, atomic, subject)) {}
            }
            #expect(check.leaks() == nil)
        }
    }
}
