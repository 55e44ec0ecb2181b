// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The kit's entry points: check a subject (every scenario, then the random
// schedules), replay one schedule by its seed, list what a check covers, and
// print that as a table.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// SignalKit's conformance kit: checks a source, an operator, a boundary or
/// a bridge against the rules of the event contract (``ConformanceRule``).
///
/// Failures are values: assert that a report has none, with any test
/// framework.
///
/// ```swift
/// let doubled = ConformanceSubject.operator("double") { inputs in inputs.first |> map { $0 * 2 } }
///     .model { received in received.map { $0 * 2 } }
/// let report = SignalConformance.check(doubled)
/// #expect(report.failures.isEmpty, "\(report)")
/// ```
public enum SignalConformance {
    /// Checks `subject`: every deterministic scenario that applies to it,
    /// then `options.schedules` random schedules.
    ///
    /// - Returns: the report: every rule's outcome, and one failure per rule
    ///   broken (with the seed of a random schedule, for
    ///   ``replay(_:seed:options:repetitions:)``).
    public static func check(_ subject: ConformanceSubject, options: ConformanceOptions = ConformanceOptions())
        -> ConformanceReport
    {
        if options.checksContext { _ensureKitPropagation() }
        let seed = baseSeed(options)
        let checker = _Checker(subject: subject, options: options)
        checker.runScenarios()
        var random = ConformanceRandom(seed: seed)
        for _ in 0..<max(options.schedules, 0) {
            checker.runSchedule(seed: random.next())
        }
        return report(checker, seed: seed)
    }

    /// Runs the random schedule of `seed` again (the seed a failure reports),
    /// `repetitions` times: with one thread a schedule replays exactly; with
    /// several, the actions are the same and the interleaving is the
    /// machine's, so repeat it to reproduce a race.
    ///
    /// Use the options of the check that failed: the schedule depends on
    /// `maxThreads` and `maxActions`.
    public static func replay(
        _ subject: ConformanceSubject,
        seed: UInt64,
        options: ConformanceOptions = ConformanceOptions(),
        repetitions: Int = 1
    ) -> ConformanceReport {
        if options.checksContext { _ensureKitPropagation() }
        let checker = _Checker(subject: subject, options: options)
        for _ in 0..<max(repetitions, 1) {
            checker.runSchedule(seed: seed)
        }
        return report(checker, seed: seed)
    }

    /// What a check of `subject` with `options` covers, without running it:
    /// every rule as not applicable, a declared exception, not checked (and
    /// why), or `.passed` for a rule the check will check.
    public static func coverage(of subject: ConformanceSubject, options: ConformanceOptions = ConformanceOptions())
        -> [(rule: ConformanceRule, outcome: ConformanceOutcome)]
    {
        let checker = _Checker(subject: subject, options: options)
        return planned(checker)
    }

    /// A Markdown table of what checks of `subjects` cover (one row per
    /// subject, one column per rule: ✓ checked, E declared exception, –
    /// not applicable, · not checked), followed by the list of declared
    /// exceptions with their reasons.
    public static func table(_ subjects: [ConformanceSubject], options: ConformanceOptions = ConformanceOptions())
        -> String
    {
        let rules = ConformanceRule.all
        var lines = [
            "| Subject | Role | " + rules.map(\.id).joined(separator: " | ") + " |",
            "|---|---|" + String(repeating: ":-:|", count: rules.count),
        ]
        var notChecked: [String: Set<String>] = [:]
        for subject in subjects {
            let cells = coverage(of: subject, options: options).map { entry -> String in
                switch entry.outcome {
                case .passed, .failed: return "✓"
                case .declaredException: return "E"
                case .notApplicable: return "–"
                case .notChecked(let reason):
                    notChecked[reason, default: []].insert(entry.rule.id)
                    return "·"
                }
            }
            let name = subject.name.replacing("|", with: "\\|")
            lines.append("| `\(name)` | \(subject.role) | " + cells.joined(separator: " | ") + " |")
        }
        lines.append("")
        lines.append(
            "✓ checked (the run fails if the rule is broken), E declared exception (below), – not applicable, · not checked:")
        for (reason, ids) in notChecked.sorted(by: { ($0.value.min()!, $0.key) < ($1.value.min()!, $1.key) }) {
            lines.append("- \(ids.sorted().joined(separator: ", ")): \(reason)")
        }
        // The declared exceptions, one line per rule and reason.
        let names = Set(subjects.map(\.name))
        var groups: [(rule: String, reason: String, subjects: [String])] = []
        for exception in options.exceptions where names.contains(exception.subject) {
            if let index = groups.firstIndex(where: { $0.rule == exception.rule && $0.reason == exception.reason }) {
                groups[index].subjects.append(exception.subject)
            } else {
                groups.append((exception.rule, exception.reason, [exception.subject]))
            }
        }
        if !groups.isEmpty {
            lines.append("")
            lines.append("Declared exceptions:")
            for group in groups.sorted(by: { ($0.rule, $0.subjects[0]) < ($1.rule, $1.subjects[0]) }) {
                let rule = ConformanceRule.withID(group.rule)!
                let subjects = group.subjects.map { "`\($0)`" }.joined(separator: ", ")
                lines.append("- \(rule.id) \(rule.title), \(subjects): \(group.reason)")
            }
        }
        return lines.joined(separator: "\n")
    }

    // MARK: Internals

    private static func report(_ checker: _Checker, seed: UInt64) -> ConformanceReport {
        let outcomes = planned(checker).map { entry -> (rule: ConformanceRule, outcome: ConformanceOutcome) in
            if let failure = checker.failures[entry.rule.id] {
                return (entry.rule, .failed(failure.occurrences))
            }
            return entry
        }
        let failures = ConformanceRule.all.compactMap { checker.failures[$0.id] }
        return ConformanceReport(
            subject: checker.subject.name, role: checker.subject.role, outcomes: outcomes, failures: failures,
            runs: checker.runs, seed: seed)
    }

    private static func planned(_ checker: _Checker) -> [(rule: ConformanceRule, outcome: ConformanceOutcome)] {
        let subject = checker.subject
        let options = checker.options
        return ConformanceRule.all.map { rule in
            if rule.requirement(for: subject.role) == .notApplicable { return (rule, .notApplicable) }
            if let reason = checker.excepted[rule.id] { return (rule, .declaredException(reason)) }
            let reason: String? =
                switch rule.id {
                case "1.2" where subject.role == .source && !checker.canComplete && !checker.canFail:
                    "the source's driver can neither complete nor fail it"
                case "1.2" where subject.termination.isEmpty:
                    "the subject passes on no terminal event of its inputs"
                case "1.3":
                    if case .none = subject.valueCheck { "no model of the operator's values" } else { nil }
                case "3.3" where subject.role == .source && !subject.replaysCurrentValue:
                    "the source replays no current value"
                case "4.1" where subject.bufferLimit == nil && subject.role == .bridge:
                    "the bridge takes no buffer"
                case "5.1", "5.2":
                    options.checksContext ? nil : "context checks are off (ConformanceOptions.checksContext)"
                case "6.1":
                    options.checksLiveObjects ? nil : "live-object checks are off (ConformanceOptions.checksLiveObjects)"
                default: nil
                }
            return (rule, reason.map { .notChecked($0) } ?? .passed)
        }
    }

    /// The seed of a check: the options', the environment's, or a new one.
    private static func baseSeed(_ options: ConformanceOptions) -> UInt64 {
        if let seed = options.seed { return seed }
        if let raw = getenv("SIGNALKIT_CONFORMANCE_SEED") {
            let text = String(cString: raw)
            let parsed = text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
            if let parsed { return parsed }
        }
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        var random = ConformanceRandom(seed: UInt64(bitPattern: Int64(time.tv_nsec)) ^ UInt64(time.tv_sec) << 32)
        return random.next()
    }
}
