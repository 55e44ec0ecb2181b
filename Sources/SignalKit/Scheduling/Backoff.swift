// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Scheduling: how long to wait between attempts that keep failing. One
// policy for every integration that reconnects (SignalKitNATS's connection,
// SignalKitPostgres's change feed), so a service tunes its reconnects one way.

/// How long to wait between failed attempts: an exponential backoff, bounded
/// in delay, optionally bounded in attempts, with random jitter.
///
/// After `failures` failed attempts in a row, the next one waits
/// `initialDelay × multiplier^(failures − 1)`, at most `maximumDelay`
/// (``delay(afterFailures:)``), scaled by a random factor in `1 ± jitter`
/// (``jitteredDelay(afterFailures:)``) so that many clients a server dropped
/// at once do not all come back at the same instant. After
/// `maximumAttempts` failures in a row the user of the policy gives up.
///
/// ```swift
/// // 100 ms, 200 ms, 400 ms, … up to 10 s, ± 20 %, at most 20 tries.
/// let backoff = SignalBackoff(initialDelay: .milliseconds(100), maximumDelay: .seconds(10), maximumAttempts: 20)
/// ```
///
/// SignalKitNATS's `NATSReconnectPolicy` and SignalKitPostgres's
/// `PostgresReconnectPolicy` are this type.
public struct SignalBackoff: Sendable, Hashable {
    /// The delay after the first failed attempt.
    public var initialDelay: Duration
    /// The factor applied to the delay after each further failure (below 1
    /// counts as 1: the delay never shrinks).
    public var multiplier: Double
    /// The longest delay between two attempts (before jitter).
    public var maximumDelay: Duration
    /// The random spread of each delay, from 0 (none) to 1.
    public var jitter: Double
    /// Failed attempts in a row before the user of the policy gives up; nil
    /// retries forever.
    public var maximumAttempts: Int?

    /// A policy; the defaults wait about 50 ms, 100 ms, 200 ms, … up to 2 s
    /// (± 20 %), forever. `jitter` is clamped to 0…1.
    public init(
        initialDelay: Duration = .milliseconds(50),
        multiplier: Double = 2,
        maximumDelay: Duration = .seconds(2),
        jitter: Double = 0.2,
        maximumAttempts: Int? = nil
    ) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.jitter = min(max(jitter, 0), 1)
        self.maximumAttempts = maximumAttempts
    }

    /// The defaults of ``init(initialDelay:multiplier:maximumDelay:jitter:maximumAttempts:)``.
    public static var `default`: SignalBackoff { SignalBackoff() }

    /// The wait after `failures` failed attempts in a row (≥ 1), without
    /// jitter: `initialDelay × multiplier^(failures − 1)`, at most
    /// `maximumDelay`.
    public func delay(afterFailures failures: Int) -> Duration {
        var delay = initialDelay
        var step = 1
        while step < failures && delay < maximumDelay {
            delay = delay * max(multiplier, 1)
            step += 1
        }
        return min(delay, maximumDelay)
    }

    /// ``delay(afterFailures:)`` scaled by a random factor in `1 ± jitter`,
    /// drawn from `generator`.
    public func jitteredDelay(
        afterFailures failures: Int,
        using generator: inout some RandomNumberGenerator
    ) -> Duration {
        let base = delay(afterFailures: failures)
        guard jitter > 0 else { return base }
        return base * Double.random(in: (1 - jitter)...(1 + jitter), using: &generator)
    }

    /// ``delay(afterFailures:)`` scaled by a random factor in `1 ± jitter`
    /// (the system's random number generator).
    public func jitteredDelay(afterFailures failures: Int) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return jitteredDelay(afterFailures: failures, using: &generator)
    }

    /// Whether `failures` failed attempts in a row reach `maximumAttempts`.
    public func isExhausted(afterFailures failures: Int) -> Bool {
        guard let maximumAttempts else { return false }
        return failures >= maximumAttempts
    }
}
