// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SignalKit
import SignalKitConformance
import SignalKitTesting
import Testing

// The kit's own API: the rules, the schedules and their seeds, replays,
// declared exceptions, what a check covers, and the generated table in
// CheckingAnOperatorOrABridge.md.

extension ConformanceSuite {
    @Suite struct KitTests {
        @Test func rulesAreNumberedOnceAndInOrder() {
            let ids = ConformanceRule.all.map(\.id)
            #expect(Set(ids).count == ids.count)
            #expect(ids == ids.sorted())
            #expect(ConformanceRule.all.allSatisfy { !$0.title.isEmpty && $0.statement.hasSuffix(".") })
            #expect(ConformanceRule.withID("2.2") == .upstreamDisposedOnce)
            #expect(ConformanceRule.withID("9.9") == nil)
            #expect(ConformanceRule.dropLaw.requirement(for: .operator) == .notApplicable)
            #expect(ConformanceRule.dropLaw.requirement(for: .boundary) == .required)
        }

        @Test func aScheduleIsAFunctionOfItsSeed() {
            var random = ConformanceRandom(seed: 0)
            #expect(random.next() == 0xE220_A839_7B1D_CDAF)  // SplitMix64's first output for seed 0
            let schedule = ConformanceSchedule(seed: 42, inputs: 2, maxThreads: 3, maxActions: 24, virtualTime: false)
            #expect(schedule == ConformanceSchedule(seed: 42, inputs: 2, maxThreads: 3, maxActions: 24, virtualTime: false))
            #expect(schedule != ConformanceSchedule(seed: 43, inputs: 2, maxThreads: 3, maxActions: 24, virtualTime: false))
            #expect(schedule.description.hasPrefix("seed 0x000000000000002a: thread 0: "))
            let virtual = ConformanceSchedule(seed: 42, inputs: 1, maxThreads: 3, maxActions: 24, virtualTime: true)
            for actions in virtual.threads.dropFirst() {
                #expect(actions.allSatisfy { $0 == .dispose || $0 == .yield })
            }
        }

        @Test func aRandomFailureNamesItsSeedAndReplaysIt() {
            let broken = BrokenSubjects.all.first { $0.rule == "1.3" }!.subject
            // A schedule on one thread that sends a value: it replays exactly.
            var random = ConformanceRandom(seed: 7)
            var seed = random.next()
            while !isSingleThreadedWithASend(
                ConformanceSchedule(seed: seed, inputs: 1, maxThreads: 3, maxActions: 24, virtualTime: false))
            {
                seed = random.next()
            }
            let first = SignalConformance.replay(broken, seed: seed)
            let again = SignalConformance.replay(broken, seed: seed)
            #expect(first.failedRules == ["1.3"])
            #expect(first.failures.first?.seed == seed)
            #expect(first.failures.first?.scenario == "random schedule")
            #expect(first.failures.map(\.message) == again.failures.map(\.message))
            #expect(
                first.description.contains("replay: SignalConformance.replay(subject, seed: \(ConformanceSchedule.hex(seed)))"))
        }

        private func isSingleThreadedWithASend(_ schedule: ConformanceSchedule) -> Bool {
            schedule.threads.count == 1
                && schedule.threads[0].contains { if case .send = $0 { true } else { false } }
        }

        @Test func aDeclaredExceptionIsNotChecked() {
            let broken = BrokenSubjects.all.first { $0.rule == "1.3" }!.subject
            let unexcused = SignalConformance.check(broken, options: ConformanceOptions(schedules: 4))
            #expect(unexcused.failedRules == ["1.3"], "\(unexcused)")
            #expect(unexcused.outcome(of: "1.3") == .failed(unexcused.failures[0].occurrences))
            let exception = ConformanceException(broken.name, rule: "1.3", reason: "it is meant to add two")
            let excused = SignalConformance.check(broken, options: ConformanceOptions(schedules: 4, exceptions: [exception]))
            #expect(excused.passed, "\(excused)")
            #expect(excused.outcome(of: "1.3") == .declaredException("it is meant to add two"))
        }

        @Test func coverageFollowsRolesAndOptions() {
            let map = SignalKitSubjects.named("map")
            let defaults = SignalConformance.coverage(of: map)
            #expect(defaults.first { $0.rule.id == "4.1" }?.outcome == .notApplicable)
            #expect(defaults.first { $0.rule.id == "1.3" }?.outcome == .passed)
            if case .notChecked = defaults.first(where: { $0.rule.id == "6.1" })?.outcome {
            } else {
                Issue.record("6.1 is checked only with checksLiveObjects")
            }
            let merge = SignalConformance.coverage(of: SignalKitSubjects.named("merge"), options: selfCheckOptions)
            #expect(merge.first { $0.rule.id == "6.1" }?.outcome == .passed)
            if case .notChecked = merge.first(where: { $0.rule.id == "1.3" })?.outcome {
            } else {
                Issue.record("1.3 needs a model")
            }
        }

        /// The rules and the table in CheckingAnOperatorOrABridge.md are
        /// generated from `ConformanceRule.all` and this target's subjects and
        /// exceptions. Regenerate them with
        /// `SIGNALKIT_CONFORMANCE_WRITE_TABLE=1 swift test --filter tableInTheArticleIsCurrent`.
        @Test func tableInTheArticleIsCurrent() throws {
            let path =
                String("\(#filePath)".dropLast("Tests/SignalKitConformanceTests/KitTests.swift".count))
                + "Sources/SignalKit/SignalKit.docc/Articles/CheckingAnOperatorOrABridge.md"
            var article = try #require(readFile(path))
            let original = article
            for (region, text) in [
                ("conformance-rules", rulesMarkdown()),
                ("conformance-table", SignalConformance.table(SignalKitSubjects.all, options: selfCheckOptions)),
            ] {
                let begin = "<!-- \(region): generated by tableInTheArticleIsCurrent -->\n\n"
                let end = "\n\n<!-- \(region): end -->"
                let start = try #require(article.firstRange(of: begin))
                let stop = try #require(article[start.upperBound...].firstRange(of: end))
                article = String(article[..<start.upperBound]) + text + String(article[stop.lowerBound...])
            }
            if article != original, getenv("SIGNALKIT_CONFORMANCE_WRITE_TABLE") != nil {
                writeFile(path, article)
                return
            }
            #expect(
                article == original,
                "out of date: run SIGNALKIT_CONFORMANCE_WRITE_TABLE=1 swift test --filter tableInTheArticleIsCurrent")
        }

        /// The rules as the article lists them: each with its statement,
        /// then how each role must keep it.
        private func rulesMarkdown() -> String {
            var lines = ConformanceRule.all.map { "- **\($0.id) \($0.title).** \($0.statement)" }
            lines.append("")
            lines.append("| Rule | " + ConformanceRole.allCases.map { "\($0)" }.joined(separator: " | ") + " |")
            lines.append("|---|" + String(repeating: "---|", count: ConformanceRole.allCases.count))
            for rule in ConformanceRule.all {
                let cells = ConformanceRole.allCases.map { "\(rule.requirement(for: $0))" }
                lines.append("| \(rule.id) \(rule.title) | " + cells.joined(separator: " | ") + " |")
            }
            return lines.joined(separator: "\n")
        }
    }
}

/// The text of the file at `path`, or nil.
private func readFile(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count <= 0 { break }
        bytes += buffer[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Replaces the file at `path` with `text`.
private func writeFile(_ path: String, _ text: String) {
    guard let file = fopen(path, "w") else { return }
    defer { fclose(file) }
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBufferPointer { fwrite($0.baseAddress, 1, $0.count, file) }
}
