// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import Testing

/// A seeded generator (xorshift64), so a jittered delay can be repeated.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

@Suite struct BackoffTests {
    @Test func theDelayGrowsByTheMultiplierUpToTheMaximum() {
        let backoff = SignalBackoff(initialDelay: .milliseconds(10), multiplier: 2, maximumDelay: .milliseconds(50))
        #expect((1...6).map(backoff.delay(afterFailures:)) == [10, 20, 40, 50, 50, 50].map(Duration.milliseconds))
    }

    @Test func aMultiplierBelowOneNeverShrinksTheDelay() {
        let backoff = SignalBackoff(initialDelay: .milliseconds(10), multiplier: 0.5, maximumDelay: .seconds(1))
        #expect((1...3).map(backoff.delay(afterFailures:)) == [10, 10, 10].map(Duration.milliseconds))
    }

    @Test func jitterStaysWithinItsSpreadAndVaries() {
        let backoff = SignalBackoff(
            initialDelay: .milliseconds(10), multiplier: 2, maximumDelay: .milliseconds(50), jitter: 0.5)
        let jittered = (0..<200).map { _ in backoff.jitteredDelay(afterFailures: 5) }
        #expect(jittered.allSatisfy { $0 >= .milliseconds(25) && $0 <= .milliseconds(75) })
        #expect(Set(jittered).count > 1)
        // The same generator state gives the same delay.
        var first = SeededGenerator(state: 0x9E37_79B9_7F4A_7C15)
        var second = first
        let fromFirst = (1...5).map { backoff.jitteredDelay(afterFailures: $0, using: &first) }
        let fromSecond = (1...5).map { backoff.jitteredDelay(afterFailures: $0, using: &second) }
        #expect(fromFirst == fromSecond)
    }

    @Test func noJitterIsTheDelayItselfAndJitterIsClamped() {
        let none = SignalBackoff(initialDelay: .milliseconds(10), jitter: 0)
        #expect(none.jitteredDelay(afterFailures: 2) == .milliseconds(20))
        #expect(SignalBackoff(jitter: -3).jitter == 0)
        #expect(SignalBackoff(jitter: 7).jitter == 1)
    }

    @Test func attemptsAreExhaustedAtTheMaximumOnly() {
        let bounded = SignalBackoff(maximumAttempts: 3)
        #expect([1, 2, 3, 4].map(bounded.isExhausted(afterFailures:)) == [false, false, true, true])
        #expect(!SignalBackoff.default.isExhausted(afterFailures: 1_000_000))
        #expect(SignalBackoff.default == SignalBackoff())
    }
}
