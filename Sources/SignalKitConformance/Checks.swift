// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The checks of the rules on what one run recorded. Rule 1.2 (it needs a
// wait) is in Run.swift, rule 3.2 (it compares two runs) in Scenarios.swift,
// rule 6.1 (process-wide counters) where the run is made.

import SignalKit

extension _Run {
    /// Every rule this run broke, but 1.2, 3.2 and 6.1.
    func evaluate() -> [_Finding] {
        var findings: [_Finding] = []
        let events = recorder.recorded.sorted { $0.order < $1.order }
        let log = self.log.current
        func check(_ rule: String, _ body: () -> String?) {
            guard excepted[rule] == nil,
                ConformanceRule.withID(rule)!.requirement(for: subject.role) != .notApplicable,
                let message = body()
            else { return }
            findings.append(_Finding(rule: rule, message: message))
        }
        let firstTerminal = events.first(where: \.isTerminal)
        let firstDisposal = log.disposals.map(\.order).min()
        let cutoff = min(firstTerminal?.order ?? .max, firstDisposal ?? .max)
        let delivered = events.filter { $0.kind == .next && $0.order < cutoff }

        check("1.1") {
            // An event on another thread than the terminal one's whose cause
            // was under way before the terminal event ran raced it: its
            // sender passed the terminated check first and ran its callback
            // after, rule 3.1's (serialising) finding, not this one's. That
            // is an event that started while the terminal one ran, or one
            // made by a kit action that began before it; for an event made
            // by none (on an executor's thread), one in a run whose
            // callbacks overlapped. A late event whose cause began after the
            // terminal one, or on the terminal one's thread, is this rule's.
            let concurrent = !recorder.overlapsSeen.isEmpty
            guard let firstTerminal,
                let late = events.first(where: { event in
                    guard event.order > firstTerminal.order, !event.overlapped else { return false }
                    guard event.thread != firstTerminal.thread else { return true }
                    return event.actionBegan.map { $0 > firstTerminal.order } ?? !concurrent
                })
            else { return nil }
            let cause =
                late.thread == firstTerminal.thread
                ? "on its thread"
                : late.actionBegan.map { "by an action begun at step \($0), after it" } ?? "outside the kit's actions"
            return "'\(late.text)' was delivered after the terminal event '\(firstTerminal.text)', \(cause); "
                + trace(events, log: log)
        }
        if let values = valuesFinding(delivered: delivered, firstTerminal: firstTerminal, log: log) {
            // A mismatch that only values sent from inside callbacks make
            // breaks rule 3.2, not 1.3.
            let withoutReentrant = delivered.filter { !log.reentrantValues.contains($0.intValue ?? .min) }
            let reentrantOnly =
                !log.reentrantValues.isEmpty
                && valuesFinding(
                    delivered: withoutReentrant, firstTerminal: firstTerminal, log: log,
                    ignoring: log.reentrantValues) == nil
            check(reentrantOnly ? "3.2" : "1.3") {
                reentrantOnly ? "a value sent from inside a callback overtook values sent before it: \(values)" : values
            }
        }
        check("2.1") {
            for disposal in log.disposals {
                // A dispose() that returns while another thread's is still
                // disposing returns early (it is idempotent): the disposal
                // is over when every call in progress with it returned.
                var over = disposal.order
                var extended = true
                while extended {
                    extended = false
                    for other in log.disposals where other.began < over && other.order > over {
                        over = other.order
                        extended = true
                    }
                }
                let after = events.filter { $0.order > over }
                // A call that returned early leaves its thread like any
                // other: what it sent meanwhile may still be in flight.
                if over == disposal.order, let same = after.first(where: { $0.thread == disposal.thread }) {
                    return "'\(same.text)' was delivered on the disposing thread after dispose() returned; "
                        + trace(events, log: log)
                }
                let byThread = Dictionary(grouping: after, by: \.thread)
                if let (_, late) = byThread.first(where: { $0.value.count > 1 }) {
                    return "\(late.count) callbacks (\(late.map(\.text).joined(separator: ", "))) started on one thread "
                        + "after dispose() returned on another (at most the delivery in progress may finish)"
                }
            }
            return nil
        }
        check("2.2") {
            for input in inputs {
                for (number, subscription) in input.snapshot.enumerated() where subscription.disposals != 1 {
                    let how =
                        switch subscription.end {
                        case .completed: "after its completion"
                        case .failed: "after its error"
                        case .disposed: "by a disposal"
                        case nil: "while still live"
                        }
                    return "subscription \(number + 1) to input \(input.index) was disposed "
                        + "\(subscription.disposals) times (\(how))"
                }
            }
            return nil
        }
        check("3.1") { recorder.overlapsSeen.first.map { "\($0); " + trace(events, log: log) } }
        check("3.3") { synchronousStartFinding(log: log) }
        check("3.4") {
            for event in events where !hopAllowed(event) {
                let expected =
                    subject.executor.isNone
                    ? "on the thread that caused it (it was given no queue)"
                    : subject.role == .operator
                        ? "on its queue (\(subject.executor)) or on the thread that caused it"
                        : "on its executor (\(subject.executor))"
                return "'\(event.text)' was delivered on another thread; it must be delivered \(expected)"
            }
            return nil
        }
        check("4.1") { dropLawFinding(delivered: delivered, firstTerminal: firstTerminal, log: log) }
        if options.checksContext {
            check("5.1") { eventContextFinding(events: events, log: log) }
            check("5.2") {
                guard let first = inputs.first?.snapshot.first, first.context != "start" else { return nil }
                return "its first subscription to its input ran in "
                    + (first.context.map { "the context \($0)" } ?? "no context") + ", not in start's"
            }
        }
        return findings
    }

    /// The run as "3 next 2 @t1, 4-6 dispose @t2, …": each callback and
    /// each disposal (from its call to its return) in order, by thread.
    func trace(_ events: [_Event], log: _RunLog) -> String {
        var threads: [UInt: Int] = [:]
        func name(_ thread: UInt) -> String {
            if threads[thread] == nil { threads[thread] = threads.count + 1 }
            return "t\(threads[thread]!)"
        }
        var entries = events.map { (order: $0.order, text: "\($0.order) \($0.text) @\(name($0.thread))") }
        entries += log.disposals.map { (order: $0.began, text: "\($0.began)-\($0.order) dispose @\(name($0.thread))") }
        return "the run: " + entries.sorted { $0.order < $1.order }.suffix(24).map(\.text).joined(separator: ", ")
    }

    /// Whether `event` ran where rule 3.4 allows.
    func hopAllowed(_ event: _Event) -> Bool {
        if subject.executor.isNone { return event.driving }
        switch subject.role {
        case .boundary, .bridge: return event.onExecutor
        case .operator, .source: return event.driving || event.onExecutor
        }
    }

    /// Rule 1.3: the delivered values against the model, or against the
    /// values sent.
    private func valuesFinding(
        delivered: [_Event], firstTerminal: _Event?, log: _RunLog, ignoring: Set<Int> = []
    ) -> String? {
        // Completed before any disposal: everything must have been delivered.
        let completed =
            firstTerminal.map { $0.kind == .completed && $0.order < (log.disposals.map(\.order).min() ?? .max) }
            ?? false
        switch subject.valueCheck {
        case .none:
            return nil
        case .model(let compare):
            guard let input = inputs.first, input.snapshot.count == 1, let subscription = input.snapshot.first else {
                return nil
            }
            return compare(subscription.received, delivered.map { $0.value! }, completed)
        case .identity(let mayDrop):
            let values = delivered.map { $0.intValue ?? .min }
            let sent: [Int]
            let whole: Bool
            if instance.driver != nil {
                let limit = min(log.disposals.map(\.order).min() ?? .max, log.sourceEnd?.order ?? .max)
                sent = log.sourceSends.filter { $0.order < limit }.map(\.value)
                whole = log.disposals.isEmpty
                if log.multiThreaded {
                    // Senders on several threads: any order, each value once.
                    let all = Set(log.sourceSends.map(\.value))
                    if values.contains(where: { !all.contains($0) }) || Set(values).count != values.count {
                        return "delivered \(values), sent \(log.sourceSends.map(\.value)): "
                            + "a value delivered twice or never sent"
                    }
                    return nil
                }
            } else {
                guard let input = inputs.first, input.snapshot.count == 1, let subscription = input.snapshot.first else {
                    return nil
                }
                sent = subscription.received.filter { !ignoring.contains($0) }
                whole = completed && subscription.end == .completed
            }
            if mayDrop {
                var remaining = sent[...]
                for value in values {
                    guard let index = remaining.firstIndex(of: value) else {
                        return "delivered \(values), sent \(sent): not the values sent, in order"
                    }
                    remaining = remaining[(index + 1)...]
                }
                return nil
            }
            if whole ? values == sent : sent.starts(with: values) { return nil }
            return "delivered \(values), sent \(sent)"
                + (whole ? "" : " (what was delivered must be the first values sent)")
        }
    }

    /// Rule 3.3: the first subscription to the input was made before start
    /// returned (or on the subject's executor).
    private func synchronousStartFinding(log: _RunLog) -> String? {
        guard subject.role != .source, let startReturned = log.startReturned else { return nil }
        guard let first = inputs.first?.snapshot.first else {
            // A subscription deferred to an executor is prevented by a
            // disposal that comes first.
            if !subject.executor.isNone && !log.disposals.isEmpty { return nil }
            return "its input was never subscribed"
                + (subject.executor.isNone ? " by the time start returned" : ", not even on its executor")
        }
        if first.order < startReturned { return nil }
        if !subject.executor.isNone && first.onExecutor { return nil }
        return "its input was subscribed after start returned, "
            + (subject.executor.isNone ? "and it was given no queue" : "and not on its executor (\(subject.executor))")
    }

    /// Rule 4.1: delivered + dropped == sent, once the terminal event of a
    /// subscription not disposed by the kit was delivered.
    private func dropLawFinding(delivered: [_Event], firstTerminal: _Event?, log: _RunLog) -> String? {
        guard subject.role == .boundary || subject.role == .bridge, let probe = instance.probe,
            let firstTerminal, (log.disposals.map(\.order).min() ?? .max) > firstTerminal.order,
            // An error the kit sent may cancel what waits, as a disposal does.
            firstTerminal.kind == .completed || !isKitError(firstTerminal, log: log),
            let input = inputs.first, input.snapshot.count == 1, let subscription = input.snapshot.first
        else { return nil }
        let dropped = Int(probe.statistics.drops)
        let sent = subscription.received.count
        if delivered.count + dropped == sent { return nil }
        return "\(sent) values were sent, \(delivered.count) delivered and \(dropped) counted as dropped"
    }

    /// Whether `event` is an error the kit sent (its context is then known).
    private func isKitError(_ event: _Event, log: _RunLog) -> Bool {
        guard event.kind == .error, let error = event.value as? ConformanceError else { return false }
        return log.actionContexts.contains("t\(error.id)")
    }

    /// Rule 5.1: each event's context.
    private func eventContextFinding(events: [_Event], log: _RunLog) -> String? {
        let identity: Bool
        if case .identity = subject.valueCheck { identity = true } else { identity = false }
        let startReturned = log.startReturned ?? .max
        func name(_ context: String?) -> String { context.map { "the context \($0)" } ?? "no context" }
        for event in events {
            if isKitError(event, log: log), let error = event.value as? ConformanceError {
                if event.context != "t\(error.id)" {
                    return "'\(event.text)' was delivered in \(name(event.context)), its sender's was t\(error.id)"
                }
                continue
            }
            if identity, event.kind == .next, let value = event.intValue, let send = log.sends[value] {
                // A value stored before start is replayed in start's context.
                let replayed = event.context == "start" && event.order < startReturned && send.order < startReturned
                if event.context != send.context && !replayed {
                    return "'\(event.text)' was delivered in \(name(event.context)), "
                        + "its sender's was \(send.context ?? "none")"
                }
                continue
            }
            // Anything else: a context some sender had (none only if a sender
            // had none, or for an error the subject made itself).
            let allowed =
                event.context.map { log.actionContexts.contains($0) }
                ?? (log.sentWithoutContext || event.kind == .error)
            if !allowed {
                return "'\(event.text)' was delivered in \(name(event.context)), which none of its senders had"
            }
        }
        return nil
    }
}
