// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The two drivers: the deterministic scenarios (each aimed at some rules,
// every rule checked after each), and the random schedules. `_Checker`
// runs them for one subject and gathers the failures.

import Dispatch
import SignalKit
import SignalKitTesting

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The deterministic scenarios.
enum _Scenario: String, CaseIterable {
    case valuesThenCompletion = "values, then completion"
    case valuesThenError = "values, then an error"
    case disposedMidStream = "disposed mid-stream, twice"
    case disposedInCallback = "disposed inside a callback"
    case synchronousStart = "synchronous start"
    case reentrantSends = "re-entrant sends"
    case concurrentSenders = "concurrent senders"
    case disposeRacingCompletion = "dispose racing a completion"
    case disposeRacingError = "dispose racing an error"
    case disposeRacingValue = "dispose racing a value"
    case burst = "a burst beyond the buffer"
}

/// Runs one subject's scenarios and schedules and gathers what broke.
final class _Checker {
    let subject: ConformanceSubject
    let options: ConformanceOptions
    let excepted: [String: String]
    private(set) var failures: [String: ConformanceFailure] = [:]
    private(set) var runs = 0
    /// Whether the subject's inputs (or the source) can complete and fail.
    let canComplete: Bool
    let canFail: Bool

    init(subject: ConformanceSubject, options: ConformanceOptions) {
        self.subject = subject
        self.options = options
        excepted = options.exceptions(for: subject.name)
        let probe = _Run(subject: subject, options: options, excepted: excepted)
        canComplete = probe.canComplete
        canFail = probe.canFail
        probe.release()
    }

    /// The longest wait for `rule`: shorter once it has failed.
    func timeout(_ rule: String) -> Double {
        failures[rule] == nil ? options.timeout : options.timeout / 50
    }

    /// A fresh run.
    func makeRun() -> _Run {
        _Run(subject: subject, options: options, excepted: excepted)
    }

    /// Runs `body` (which makes its runs and lets go of them) as one run of
    /// the report, with the live-object check around it.
    func perform(_ scenario: String, seed: UInt64? = nil, _ body: () -> [_Finding]) {
        runs += 1
        let leakCheck = options.checksLiveObjects && excepted["6.1"] == nil ? LeakCheck() : nil
        var findings = body()
        if let leakCheck, let leaks = leakCheck.leaks(timeout: timeout("6.1")) {
            findings.append(_Finding(rule: "6.1", message: leaks))
        }
        for finding in findings where excepted[finding.rule] == nil {
            if failures[finding.rule] != nil {
                failures[finding.rule]!.occurrences += 1
            } else {
                failures[finding.rule] = ConformanceFailure(
                    rule: ConformanceRule.withID(finding.rule)!, subject: subject.name, scenario: scenario, seed: seed,
                    message: finding.message, occurrences: 1)
            }
        }
    }

    // MARK: Scenarios

    /// Runs every scenario that applies to the subject.
    func runScenarios() {
        for scenario in _Scenario.allCases where applies(scenario) {
            switch scenario {
            case .reentrantSends:
                perform(scenario.rawValue) { reentrantSends() }
            case .disposeRacingCompletion, .disposeRacingError, .disposeRacingValue:
                perform(scenario.rawValue) {
                    (0..<max(options.raceRounds, 1)).flatMap { _ in race(scenario) }
                }
            default:
                perform(scenario.rawValue) { run(scenario) }
            }
        }
    }

    private func applies(_ scenario: _Scenario) -> Bool {
        switch scenario {
        case .valuesThenError, .disposeRacingError: return canFail
        case .disposeRacingCompletion: return canComplete
        case .concurrentSenders: return !subject.executor.isVirtualTime
        case .burst:
            guard subject.bufferLimit != nil else { return false }
            return !(subject.executor.isVirtualTime && subject.bufferBlocks)
        default: return true
        }
    }

    /// The inputs a round of sends goes to: the others first (so that an
    /// operator combining them has their values), the first last.
    private func roundTargets() -> [Int] {
        subject.inputCount == 0 ? [0] : Array((0..<subject.inputCount).reversed())
    }

    /// Ends a run that was not disposed: completes the inputs, checks rule
    /// 1.2, disposes, waits for upstream disposals, checks the rest.
    private func finish(_ run: _Run, singleThreaded: Bool = true) -> [_Finding] {
        var findings: [_Finding] = []
        run.completeInputs()
        if let finding = run.checkTermination(singleThreaded: singleThreaded, timeout: timeout("1.2")) {
            findings.append(finding)
        }
        run.disposeAndWaitForUpstream(timeout: timeout("2.2"))
        findings += run.evaluate()
        run.release()
        return findings
    }

    private func run(_ scenario: _Scenario) -> [_Finding] {
        let run = makeRun()
        switch scenario {
        case .valuesThenCompletion:
            run.start()
            for round in 0..<3 {
                for input in roundTargets() { run.send(input, inContext: !(round == 1 && input == 0)) }
                run.settle()
            }
            run.completeInputs()
            var findings: [_Finding] = []
            if let finding = run.checkTermination(singleThreaded: true, timeout: timeout("1.2")) {
                findings.append(finding)
            }
            run.dispose()
            run.disposeAndWaitForUpstream(timeout: timeout("2.2"))
            findings += run.evaluate()
            run.release()
            return findings
        case .valuesThenError:
            run.start()
            for _ in 0..<2 {
                for input in roundTargets() { run.send(input) }
                run.settle()
            }
            run.end(0, failing: true)
            run.settle()
            return finish(run)
        case .disposedMidStream:
            run.start()
            for input in roundTargets() { run.send(input) }
            run.settle()
            run.dispose()
            run.dispose()
            for input in roundTargets() { run.send(input) }
            run.settle()
            return finish(run)
        case .disposedInCallback:
            run.recorder.onNextCallback { [run] in run.dispose() }
            run.start()
            for _ in 0..<3 {
                for input in roundTargets() { run.send(input) }
                run.settle()
            }
            return finish(run)
        case .synchronousStart:
            var findings: [_Finding] = []
            if subject.role == .source {
                guard subject.replaysCurrentValue else {
                    run.start()
                    return finish(run)
                }
                let value = run.send(0)
                run.start()
                let startReturned = run.log.current.startReturned ?? .max
                let replayed = run.recorder.recorded.contains { $0.intValue == value && $0.order < startReturned }
                if !replayed && run.excepted["3.3"] == nil {
                    findings.append(
                        _Finding(rule: "3.3", message: "its current value \(value) was not delivered before start returned"))
                }
            } else {
                let values = [run.clock.next(), run.clock.next()]
                run.inputs[0].sendOnFirstSubscription(values) { [run] value, context in
                    run.log.withLock { log in
                        log.sends[value] = (context, value)
                        if let context { log.actionContexts.insert(context) } else { log.sentWithoutContext = true }
                    }
                }
                run.start()
            }
            for input in roundTargets() { run.send(input) }
            run.settle()
            return findings + finish(run)
        case .concurrentSenders:
            run.start()
            run.recorder.spin(for: 0.000_02)
            run.recorder.awaitCompany(forCallbacks: 4, upTo: 0.005)
            let threads = max(2, min(max(subject.inputCount, 1), 4))
            let inputs = max(subject.inputCount, 1)
            run.log.withLock { $0.multiThreaded = true }
            SignalKitTesting.race(threads: threads) { thread in
                for _ in 0..<20 { run.send(thread % inputs) }
            }
            run.recorder.spin(for: 0)
            run.settle()
            return finish(run, singleThreaded: subject.inputCount <= 1)
        case .burst:
            run.start()
            let gate = DispatchSemaphore(value: 0)
            var gated = false
            if case .queue(let queue) = subject.executor.kind {
                queue.justDispatch { gate.wait() }
                gated = true
            }
            if gated {
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.02) { gate.signal() }
            }
            for _ in 0..<(3 * (subject.bufferLimit ?? 8) + 5) { run.send(0) }
            run.end(0, failing: false)
            run.settle()
            return finish(run)
        default:
            run.release()
            return []
        }
    }

    /// Rule 3.2: the same sends, made from inside the first value's callback
    /// and made right after it returned, deliver the same events. A value
    /// sent before the callback ran (and maybe still waiting for a queue)
    /// must stay ahead of them.
    private func reentrantSends() -> [_Finding] {
        func once(deferred: Bool) -> (events: [String], hopped: Bool, findings: [_Finding]) {
            let run = makeRun()
            run.start()
            if subject.inputCount > 1 {
                for input in (1..<subject.inputCount).reversed() { run.send(input, value: 1_000_010 + input) }
            }
            run.recorder.onNextCallback(valuesOnly: true) { [run] in
                let sends: @Sendable () -> Void = {
                    run.send(0, value: 1_000_002, reentrant: true)
                    run.send(0, value: 1_000_003, reentrant: true)
                }
                if deferred {
                    run.deferUntilReturn(sends)
                } else {
                    sends()
                }
            }
            run.send(0, value: 1_000_001)
            run.send(0, value: 1_000_004)
            run.settle()
            run.completeInputs()
            var findings: [_Finding] = []
            if let finding = run.checkTermination(singleThreaded: true, timeout: timeout("1.2")) {
                findings.append(finding)
            }
            let recorded = run.recorder.recorded.sorted { $0.order < $1.order }
            run.disposeAndWaitForUpstream(timeout: timeout("2.2"))
            findings += run.evaluate()
            run.release()
            return (recorded.map(\.text), recorded.contains { !run.hopAllowed($0) }, findings)
        }
        let reentrant = once(deferred: false)
        let sequential = once(deferred: true)
        var findings = reentrant.findings + sequential.findings
        // On a real executor the two runs race the executor (the callback
        // may run before or after the fourth value is sent), and a buffer
        // that drops may keep other values of the same sends: there the
        // order of the values delivered against the order they were sent
        // (`evaluate`) is the check.
        var deterministic = subject.executor.isNone || subject.executor.isVirtualTime
        if case .identity(mayDrop: true) = subject.valueCheck { deterministic = false }
        // A subject that hops where it should not is not deterministic
        // either (rule 3.4 reports it).
        if reentrant.hopped || sequential.hopped { deterministic = false }
        if deterministic && reentrant.events != sequential.events && excepted["3.2"] == nil {
            findings.append(
                _Finding(
                    rule: "3.2",
                    message: "sent from inside the callback: \(reentrant.events); "
                        + "sent right after it returned: \(sequential.events)"))
        }
        return findings
    }

    /// One round of a disposal racing a terminal event or a value.
    private func race(_ scenario: _Scenario) -> [_Finding] {
        let run = makeRun()
        run.start()
        for input in roundTargets() { run.send(input) }
        run.settle()
        let inputs = subject.inputCount
        run.log.withLock { $0.multiThreaded = true }
        SignalKitTesting.race(threads: 2) { thread in
            guard thread == 0 else {
                run.dispose()
                return
            }
            switch scenario {
            case .disposeRacingCompletion:
                for input in 0..<max(inputs, 1) { run.end(input, failing: false) }
            case .disposeRacingError:
                run.end(0, failing: true)
            default:
                run.send(0)
            }
        }
        run.settle()
        run.disposeAndWaitForUpstream(timeout: timeout("2.2"))
        let findings = run.evaluate()
        run.release()
        return findings
    }

    // MARK: Random schedules

    /// Runs the random schedule of `seed`.
    func runSchedule(seed: UInt64) {
        perform("random schedule", seed: seed) { schedule(seed: seed) }
    }

    private func schedule(seed: UInt64) -> [_Finding] {
        let run = makeRun()
        let schedule = ConformanceSchedule(
            seed: seed, inputs: max(subject.inputCount, 1), maxThreads: options.maxThreads,
            maxActions: options.maxActions, virtualTime: subject.executor.isVirtualTime, canComplete: run.canComplete,
            canFail: run.canFail, sendsFromCallbacks: !subject.bufferBlocks)
        @Sendable func perform(_ action: ConformanceSchedule.Action) {
            switch action {
            case .send(let input, let inContext): run.send(input, inContext: inContext)
            case .complete(let input): run.end(input, failing: false)
            case .fail(let input): run.end(input, failing: true)
            case .dispose: run.dispose()
            case .disposeInNextCallback: run.recorder.onNextCallback { [run] in run.dispose() }
            case .sendInNextCallback(let input):
                run.recorder.onNextCallback(valuesOnly: true) { [run] in run.send(input, reentrant: true) }
            case .advance(let seconds): run.advance(by: seconds)
            case .yield: sched_yield()
            }
        }
        run.start()
        let threads = schedule.threads
        if threads.count == 1 {
            threads[0].forEach(perform)
        } else {
            run.log.withLock { $0.multiThreaded = true }
            if !subject.executor.isVirtualTime { run.recorder.spin(for: 0.000_005) }
            SignalKitTesting.race(threads: threads.count) { thread in threads[thread].forEach(perform) }
            run.recorder.spin(for: 0)
        }
        run.settle()
        var findings: [_Finding] = []
        if schedule.endsByCompleting {
            run.completeInputs()
            if let finding = run.checkTermination(singleThreaded: threads.count == 1, timeout: timeout("1.2")) {
                findings.append(finding)
            }
        }
        run.disposeAndWaitForUpstream(timeout: timeout("2.2"))
        findings += run.evaluate()
        run.release()
        return findings
    }
}
