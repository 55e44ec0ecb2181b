// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

/// The RACCommand example of the ReactiveCocoa article (seed 002), adapted
/// from Objective-C.
///
/// RAC delivers a command's signals on the main thread, always through the
/// main queue; SignalKit delivers them on the thread that caused the change,
/// so the adaptation adds `deliverOn(main)` where RAC does it internally. The
/// work runs on a background queue (in RAC it is subscribed on the main
/// queue, asynchronously); the command is released at the end of the scope,
/// as the ObjC local is, which completes `executionSignals`. The printed
/// lines are the article's, in the article's order. (The article's
/// `error:` handler on the switched signal never runs: `executionSignals`
/// hands out executions whose error became a completion, typed `NoError`
/// here, so there is no such handler.)
@Suite struct CommandExampleTests {
    /// The article's domain error, printed as `NSError` prints.
    struct DomainError: Error, CustomStringConvertible {
        let domain: String
        let code: Int
        var description: String { "Error Domain=\(domain) Code=\(code) \"(null)\"" }
    }

    @Test func executionSignalsSwitchToLatestAndErrors() {
        let scheduler = VirtualTimeScheduler()
        let main = scheduler.makeQueue(name: "main")
        let background = scheduler.makeQueue(name: "background")
        let log = EventLog()
        var handles: [any Disposable] = []
        let weakCommand = WeakBox<Command<String, String, DomainError>>(nil)
        do {
            let comd = Command<String, String, DomainError> { input in
                Signal<String, DomainError> { subscriber in
                    subscriber.putNext("INPUT :\(input)")
                    subscriber.putError(DomainError(domain: "ddd", code: 1))
                    return EmptyDisposable
                } |> runOn(background)
            }
            weakCommand.value = comd

            handles.append(
                (comd.executionSignals |> deliverOn(main) |> switchToLatest).start(
                    next: { x in log.append("Next : \(x)") },
                    completed: { log.append("Completed") }
                ))

            handles.append(
                (comd.executionSignals |> deliverOn(main)).start(next: { x in
                    log.append("Signal \(x) ")
                }))

            handles.append(
                (comd.errors |> deliverOn(main)).start(next: { x in
                    log.append("error 里才有? \(x)")
                }))

            comd.execute("hello world")
        }
        #expect(weakCommand.value == nil, "the command's signals and executions do not keep it alive")
        scheduler.run()

        #expect(
            log.events == [
                // A signal describes itself by its type (Debugging/SignalNaming.swift).
                "Signal Signal<String, NoError> ",
                "Next : INPUT :hello world",
                "Completed",
                "error 里才有? Error Domain=ddd Code=1 \"(null)\"",
            ])
        handles.forEach { $0.dispose() }
    }

    /// The same command with synchronous delivery (no `deliverOn`) and a
    /// synchronous work signal, kept alive: every event in causal order.
    @Test func theSameExampleDeliveredSynchronously() {
        let log = EventLog()
        let comd = Command<String, String, DomainError> { input in
            Signal<String, DomainError> { subscriber in
                subscriber.putNext("INPUT :\(input)")
                subscriber.putError(DomainError(domain: "ddd", code: 1))
                return EmptyDisposable
            }
        }
        let latest = (comd.executionSignals |> switchToLatest).start(
            next: { x in log.append("Next : \(x)") },
            completed: { log.append("Completed") }
        )
        let signals = comd.executionSignals.start(next: { _ in log.append("Signal") })
        let errors = comd.errors.start(next: { x in log.append("error 里才有? \(x)") })
        let executing = comd.executing.start(next: { x in log.append("executing \(x)") })
        log.take()
        let result = log.start(comd.execute("hello world"), prefix: "execute: ")
        #expect(
            log.take() == [
                "executing true", "Signal",
                "Next : INPUT :hello world",
                "error 里才有? Error Domain=ddd Code=1 \"(null)\"", "executing false",
                "execute: next INPUT :hello world",
                "execute: error Command execution failed: Error Domain=ddd Code=1 \"(null)\"",
            ])
        latest.dispose()
        signals.dispose()
        errors.dispose()
        executing.dispose()
        result.dispose()
    }
}
