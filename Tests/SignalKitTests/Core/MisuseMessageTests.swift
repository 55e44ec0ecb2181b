// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import Testing

// A misuse stops the process with a message that names it, in every build
// configuration: `precondition` prints no message in optimised builds, so
// these checks run in scripts/test's release stage too. One check per kind
// of misuse check (argument checks of operators and types, the emitter's
// token check, the async bridge's `get()`); the bounded boundaries' own
// checks are tested with their operators.
@Suite struct MisuseMessageTests {
    @Test func aNegativeRetryCountStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let operation: (Signal<Int, NoError>) -> Signal<Int, NoError> = retry(-1)
            _ = operation
        }
        #expect(stderr(of: result).contains("retry(_:): count must be 0 (no limit) or positive, got -1"))
    }

    @Test func aNegativeConcurrencyLimitStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let operation: (Signal<Signal<Int, NoError>, NoError>) -> Signal<Int, NoError> = flatten(maxConcurrent: -2)
            _ = operation
        }
        #expect(
            stderr(of: result).contains("flatten(maxConcurrent:): maxConcurrent must be 0 (no limit) or positive, got -2")
        )
    }

    @Test func aThreadPoolWithoutThreadsStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ThreadPool(threadCount: 0, threadPriority: 0.5)
        }
        #expect(stderr(of: result).contains("ThreadPool(threadCount:threadPriority:) needs at least one thread"))
    }

    @Test func aNegativeReplayCapacityStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ReplaySubject<Int, NoError>(capacity: -1)
        }
        #expect(stderr(of: result).contains("ReplaySubject(capacity:): capacity must be 0 or more"))
    }

    @Test func firingForAnotherEmittersTokenStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            final class Owner: Sendable {}
            let one = EventEmitter<Int>()
            let other = EventEmitter<Int>()
            let owner = Owner()
            let token = other.addObserver(owner) { _, _ in }
            one.fire(for: token, 1)
        }
        #expect(stderr(of: result).contains("was not added to this emitter"))
    }

    @Test func getOnASignalThatCompletesEmptyStopsWithAMessage() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = await Signal<Int, NoError>.complete().get()
        }
        #expect(stderr(of: result).contains("Signal.get(): the signal completed without a value"))
    }

    private func stderr(of result: ExitTest.Result?) -> String {
        String(decoding: result?.standardErrorContent ?? [], as: UTF8.self)
    }
}
