// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// How much the kit runs, what it may touch beyond the subject (the two
// process-wide checks), and the rules a subject is declared not to keep.

import SignalKit
public import SignalKitTesting

/// A rule a subject deliberately does not keep, with the reason: the kit
/// does not check it for that subject and reports it as a declared
/// exception.
///
/// Declaring rule 3.1 for a source also makes the kit serialise its sends
/// (the source leaves that to its callers).
public struct ConformanceException: Sendable, Hashable, CustomStringConvertible {
    /// The subject's name.
    public let subject: String
    /// The rule's identifier.
    public let rule: String
    /// Why the subject does not keep it.
    public let reason: String

    /// - Precondition: `rule` is the identifier of a rule in
    ///   ``ConformanceRule/all``.
    public init(_ subject: String, rule: String, reason: String) {
        _signalKitRequire(
            ConformanceRule.withID(rule) != nil,
            "ConformanceException(\(subject), rule: \(rule)): there is no rule \(rule); the rules are "
                + ConformanceRule.all.map(\.id).joined(separator: ", "))
        self.subject = subject
        self.rule = rule
        self.reason = reason
    }

    /// "subject: rule: reason".
    public var description: String { "\(subject): \(rule): \(reason)" }
}

/// What a check runs.
public struct ConformanceOptions: Sendable {
    /// Random schedules per subject (default `24 × stressScale`, with
    /// `SIGNALKIT_STRESS_SCALE` from SignalKitTesting).
    public var schedules: Int
    /// The seed the schedules' seeds are drawn from; nil: the environment
    /// variable `SIGNALKIT_CONFORMANCE_SEED` if set, else a new one each
    /// check (the report names it).
    public var seed: UInt64?
    /// The most threads a random schedule runs on (default 3).
    public var maxThreads: Int
    /// The most actions of a random schedule (default 24).
    public var maxActions: Int
    /// Rounds of each race scenario (a disposal racing a completion, an
    /// error, a value; default `6 × stressScale`).
    public var raceRounds: Int
    /// Checks rule 6.1 with SignalKitTesting's `LeakCheck`. Its counters are
    /// process-wide: turn this on only where nothing else runs at the same
    /// time (a suite marked `.serialized` whose tests do not run beside
    /// others, or a test process of its own).
    public var checksLiveObjects: Bool
    /// Checks rules 5.1 and 5.2. The kit installs its own
    /// `SignalContextPropagation` for this, for the whole process (replacing
    /// the one installed, once, and for the rest of the process): turn it on
    /// only in a test process where no other propagation is needed, or in a
    /// serialized suite that installs its own again after.
    public var checksContext: Bool
    /// The rules subjects deliberately do not keep (see
    /// ``ConformanceException``); the kit picks those of the subject it
    /// checks, by name.
    public var exceptions: [ConformanceException]
    /// The longest wait, in seconds, for something that should happen (a
    /// terminal event after the inputs ended, an upstream disposal, objects
    /// released on a queue). After a rule failed once, the kit waits for it
    /// at most a fiftieth of this.
    public var timeout: Double
    /// Virtual seconds the kit advances the clock by when it lets a
    /// virtual-time subject settle (default 60: longer than any interval the
    /// subject uses).
    public var settleTime: Double

    /// The defaults, with any of them changed.
    public init(
        schedules: Int = 24 * stressScale,
        seed: UInt64? = nil,
        maxThreads: Int = 3,
        maxActions: Int = 24,
        raceRounds: Int = 6 * stressScale,
        checksLiveObjects: Bool = false,
        checksContext: Bool = false,
        exceptions: [ConformanceException] = [],
        timeout: Double = 2,
        settleTime: Double = 60
    ) {
        self.schedules = schedules
        self.seed = seed
        self.maxThreads = max(1, maxThreads)
        self.maxActions = max(1, maxActions)
        self.raceRounds = raceRounds
        self.checksLiveObjects = checksLiveObjects
        self.checksContext = checksContext
        self.exceptions = exceptions
        self.timeout = timeout
        self.settleTime = settleTime
    }

    /// The exceptions declared for `subject`, by rule.
    func exceptions(for subject: String) -> [String: String] {
        var found: [String: String] = [:]
        for exception in exceptions where exception.subject == subject {
            found[exception.rule] = exception.reason
        }
        return found
    }
}
