// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// What a check returns: failures as values (no test framework is needed),
// the outcome of every rule, and the seed to replay a random failure with.

/// A rule a subject broke, in one scenario or one random schedule (the
/// first such run; `occurrences` counts them all).
public struct ConformanceFailure: Sendable, Hashable, CustomStringConvertible {
    /// The rule broken.
    public let rule: ConformanceRule
    /// The subject's name.
    public let subject: String
    /// The scenario ("values, then completion") or "random schedule".
    public let scenario: String
    /// The random schedule's seed (replay it with
    /// ``SignalConformance/replay(_:seed:options:repetitions:)``); nil for
    /// a scenario.
    public let seed: UInt64?
    /// What happened.
    public let message: String
    /// How many runs broke the rule.
    public internal(set) var occurrences: Int

    /// "[1.2 Termination reaches downstream] map, values, then completion: …", with the replay call for a seed.
    public var description: String {
        var text = "[\(rule)] \(subject), \(scenario): \(message)"
        if occurrences > 1 { text += " (\(occurrences) runs)" }
        if let seed {
            text += "\n    replay: SignalConformance.replay(subject, seed: \(ConformanceSchedule.hex(seed)))"
        }
        return text
    }
}

/// How one rule fared for one subject.
public enum ConformanceOutcome: Sendable, Hashable, CustomStringConvertible {
    /// Checked, and never broken.
    case passed
    /// Broken in this many runs.
    case failed(Int)
    /// Declared not kept, with the reason (see ``ConformanceException``).
    case declaredException(String)
    /// The rule says nothing about the subject's role.
    case notApplicable
    /// Applicable, but not checked, and why (no model, context checks off, …).
    case notChecked(String)

    /// "passed", "failed (3 runs)", "declared exception: …", …
    public var description: String {
        switch self {
        case .passed: "passed"
        case .failed(let count): "failed (\(count) runs)"
        case .declaredException(let reason): "declared exception: \(reason)"
        case .notApplicable: "not applicable"
        case .notChecked(let reason): "not checked: \(reason)"
        }
    }
}

/// The result of checking one subject.
public struct ConformanceReport: Sendable, CustomStringConvertible {
    /// The subject's name.
    public let subject: String
    /// Its role.
    public let role: ConformanceRole
    /// Every rule's outcome, in ``ConformanceRule/all`` order.
    public let outcomes: [(rule: ConformanceRule, outcome: ConformanceOutcome)]
    /// The rules broken: one failure per rule (its first run).
    public let failures: [ConformanceFailure]
    /// Runs made: scenarios, race rounds and random schedules.
    public let runs: Int
    /// The seed the random schedules' seeds were drawn from.
    public let seed: UInt64

    /// The identifiers of the rules broken.
    public var failedRules: Set<String> { Set(failures.map(\.rule.id)) }

    /// Whether no rule was broken.
    public var passed: Bool { failures.isEmpty }

    /// The outcome of rule `id`.
    public func outcome(of id: String) -> ConformanceOutcome? {
        outcomes.first { $0.rule.id == id }?.outcome
    }

    /// A summary line, then one line per failure.
    public var description: String {
        let checked = outcomes.filter {
            if case .passed = $0.outcome { true } else if case .failed = $0.outcome { true } else { false }
        }
        var text =
            "\(subject) (\(role)): \(failures.isEmpty ? "conforms" : "\(failures.count) \(failures.count == 1 ? "rule" : "rules") broken"); "
            + "\(checked.count) rules checked in \(runs) runs (seed \(ConformanceSchedule.hex(seed)))"
        for failure in failures {
            text += "\n  " + failure.description
        }
        return text
    }
}
