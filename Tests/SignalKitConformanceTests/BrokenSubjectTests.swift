// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitConformance
import Testing

// The kit catches what it claims to: each broken subject is caught by the
// one rule it breaks and by no other, and subjects written correctly on
// the public API break none.

/// The options of these checks: every rule on, shorter waits (a broken
/// subject makes the kit wait for what never comes).
private let brokenCheckOptions = ConformanceOptions(checksLiveObjects: true, checksContext: true, timeout: 0.5)

extension ConformanceSuite {
    @Suite struct KitCatchesBrokenSubjects {
        @Test(arguments: BrokenSubjects.all.map(\.rule))
        func caughtByExactlyItsRule(_ rule: String) {
            let broken = BrokenSubjects.all.first { $0.rule == rule }!
            let report = SignalConformance.check(broken.subject, options: brokenCheckOptions)
            #expect(report.failedRules == [rule], "\(report)")
        }

        @Test func everyRuleHasABrokenSubject() {
            #expect(Set(BrokenSubjects.all.map(\.rule)) == Set(ConformanceRule.all.map(\.id)))
        }

        @Test(arguments: BrokenSubjects.wellBehaved.map(\.name))
        func wellBehavedSubjectBreaksNoRule(_ name: String) {
            let subject = BrokenSubjects.wellBehaved.first { $0.name == name }!
            let report = SignalConformance.check(subject, options: brokenCheckOptions)
            #expect(report.failures.isEmpty, "\(report)")
        }
    }
}
