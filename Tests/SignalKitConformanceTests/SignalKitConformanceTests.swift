// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitConformance
import SignalKitTesting
import Testing

// SignalKit checked by its own conformance kit: every subject of
// SignalKitSubjects against every rule, with the process-wide checks on
// (live objects and context: this target runs in a process of its own, and
// its suites one at a time), except where ConformanceException.signalKit
// declares a rule not kept, with the reason.

/// The options SignalKit checks itself with.
let selfCheckOptions = ConformanceOptions(
    checksLiveObjects: true, checksContext: true, exceptions: ConformanceException.signalKit)

/// Every suite of this target, one test at a time: the live-object counters
/// and the installed context propagation are process-wide.
@Suite(.serialized) struct ConformanceSuite {}

extension ConformanceSuite {
    @Suite struct SignalKitConforms {
        @Test(arguments: SignalKitSubjects.all.map(\.name))
        func subject(_ name: String) {
            let report = SignalConformance.check(SignalKitSubjects.named(name), options: selfCheckOptions)
            #expect(report.failures.isEmpty, "\(report)")
        }
    }
}
