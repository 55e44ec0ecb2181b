// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct CommandTests {
    /// A command whose work is a `TestSource` named after the input.
    final class Fixture: @unchecked Sendable {
        // `@unchecked Sendable`: used on the test's thread only.
        let log = EventLog()
        var sources: [String: TestSource<Int, String>] = [:]
        var handles: [any Disposable] = []

        func makeCommand(
            enabled: Signal<Bool, NoError>? = nil,
            allowsConcurrentExecution: Bool = false
        ) -> Command<String, Int, String> {
            Command(enabled: enabled, allowsConcurrentExecution: allowsConcurrentExecution) { [self] input in
                let source = TestSource<Int, String>(input, log: log)
                sources[input] = source
                return source.signal
            }
        }

        /// Logs every signal of the command, with prefixes.
        func observe(_ command: Command<String, Int, String>) {
            handles.append(log.start(command.executing, prefix: "executing: "))
            handles.append(log.start(command.enabled, prefix: "enabled: "))
            handles.append(log.start(command.errors, prefix: "errors: "))
            handles.append(
                command.executionSignals.start(
                    next: { [self] execution in
                        log.append("execution")
                        handles.append(log.start(execution, prefix: "inner: "))
                    },
                    completed: { [self] in log.append("executionSignals: completed") }
                ))
        }

        func disposeAll() {
            handles.forEach { $0.dispose() }
            handles = []
        }
    }

    // MARK: The state machine

    @Test func initialStateIsIdleAndEnabled() {
        let fixture = Fixture()
        let command = fixture.makeCommand()
        fixture.observe(command)
        #expect(fixture.log.events == ["executing: next false", "enabled: next true"])
        #expect(!command.isExecuting && command.isEnabled && !command.allowsConcurrentExecution)
        fixture.disposeAll()
    }

    @Test func anExecutionFromStartToCompletion() {
        let fixture = Fixture()
        let log = fixture.log
        let command = fixture.makeCommand()
        fixture.observe(command)
        log.take()
        let result = log.start(command.execute("a"), prefix: "result: ")
        #expect(command.isExecuting && !command.isEnabled)
        fixture.sources["a"]!.putNext(1)
        fixture.sources["a"]!.putCompletion()
        #expect(
            log.events == [
                "executing: next true", "enabled: next false", "execution", "a.subscribe#1",
                "inner: next 1", "result: next 1",
                "executing: next false", "enabled: next true",
                "inner: completed", "result: completed", "a.dispose#1",
            ])
        #expect(!command.isExecuting && command.isEnabled)
        result.dispose()
        fixture.disposeAll()
    }

    @Test func aFailingExecutionReportsItsErrorOnErrorsAndCompletesItsExecutionSignal() {
        let fixture = Fixture()
        let log = fixture.log
        let command = fixture.makeCommand()
        fixture.observe(command)
        log.take()
        let result = log.start(command.execute("a"), prefix: "result: ")
        fixture.sources["a"]!.putError("boom")
        #expect(
            log.events == [
                "executing: next true", "enabled: next false", "execution", "a.subscribe#1",
                "errors: next boom", "executing: next false", "enabled: next true",
                "inner: completed",
                "result: error Command execution failed: boom",
                "a.dispose#1",
            ])
        result.dispose()
        fixture.disposeAll()
    }

    @Test func theWorkIsSubscribedOncePerExecuteWhetherOrNotTheResultIsSubscribed() {
        let fixture = Fixture()
        let command = fixture.makeCommand(allowsConcurrentExecution: true)
        command.execute("a")
        let result = command.execute("b")
        let first = result.start()
        let second = result.start()
        #expect(fixture.sources["a"]!.subscribeCount == 1)
        #expect(fixture.sources["b"]!.subscribeCount == 1)
        first.dispose()
        second.dispose()
        fixture.sources["a"]!.putCompletion()
        fixture.sources["b"]!.putCompletion()
    }

    @Test func theResultIsHotAndReplayed() {
        let fixture = Fixture()
        let log = fixture.log
        let command = fixture.makeCommand()
        let result = command.execute("a")
        fixture.sources["a"]!.putNext(1)
        fixture.sources["a"]!.putNext(2)
        fixture.sources["a"]!.putCompletion()
        log.take()
        _ = log.start(result)
        _ = log.start(result)
        #expect(log.events == ["next 1", "next 2", "completed", "next 1", "next 2", "completed"])
    }

    @Test func disposingTheResultDoesNotCancelTheExecution() {
        let fixture = Fixture()
        let log = fixture.log
        let command = fixture.makeCommand()
        fixture.observe(command)
        let result = log.start(command.execute("a"), prefix: "result: ")
        result.dispose()
        log.take()
        fixture.sources["a"]!.putNext(1)
        fixture.sources["a"]!.putCompletion()
        #expect(
            log.events == [
                "inner: next 1", "executing: next false", "enabled: next true", "inner: completed", "a.dispose#1",
            ])
        fixture.disposeAll()
    }

    // MARK: Not enabled

    @Test func executingWhileExecutingFailsWithAlreadyExecutingAndStartsNothing() {
        let fixture = Fixture()
        let log = fixture.log
        let command = fixture.makeCommand()
        fixture.observe(command)
        command.execute("a")
        log.take()
        let refused = log.start(command.execute("b"), prefix: "b: ")
        #expect(log.take() == ["b: error " + CommandError<String>.notEnabled(.alreadyExecuting).description])
        #expect(fixture.sources["b"] == nil, "the execute closure was not called")
        let caught = Shared<CommandError<String>?>(nil)
        _ = command.execute("c").start(error: { caught.value = $0 })
        #expect(caught.value == .notEnabled(.alreadyExecuting))
        fixture.sources["a"]!.putCompletion()
        log.take()
        _ = log.start(command.execute("d"), prefix: "d: ")
        #expect(fixture.sources["d"]?.subscribeCount == 1, "enabled again after the first execution ended")
        fixture.sources["d"]!.putCompletion()
        refused.dispose()
        fixture.disposeAll()
    }

    @Test func theNotEnabledErrorNamesTheReason() {
        #expect(
            CommandError<String>.notEnabled(.alreadyExecuting).description
                == "Command is not enabled: an execution is still running and allowsConcurrentExecution is false "
                + "(set allowsConcurrentExecution to true to allow overlapping executions); "
                + "execute(_:) did not start the work")
        #expect(
            CommandError<String>.notEnabled(.enabledSignalIsFalse).description
                == "Command is not enabled: its enabled signal last sent false; execute(_:) did not start the work")
        #expect(CommandError<String>.executionFailed("e").description == "Command execution failed: e")
    }

    @Test func theEnabledSignalGatesTheCommand() {
        let fixture = Fixture()
        let log = fixture.log
        let gate = ValuePromise(true)
        let command = fixture.makeCommand(enabled: gate.get())
        fixture.observe(command)
        gate.set(false)
        gate.set(false)
        #expect(!command.isEnabled)
        let refused = log.start(command.execute("a"), prefix: "a: ")
        gate.set(true)
        let accepted = log.start(command.execute("b"), prefix: "b: ")
        gate.set(false)
        fixture.sources["b"]!.putCompletion()
        gate.set(true)
        #expect(
            log.events == [
                "executing: next false", "enabled: next true", "enabled: next false",
                "a: error " + CommandError<String>.notEnabled(.enabledSignalIsFalse).description,
                "enabled: next true",
                "executing: next true", "enabled: next false", "execution", "b.subscribe#1",
                "executing: next false", "inner: completed", "b: completed", "b.dispose#1",
                "enabled: next true",
            ])
        #expect(fixture.sources["a"] == nil)
        refused.dispose()
        accepted.dispose()
        fixture.disposeAll()
    }

    @Test func theEnabledSignalIsTrueUntilItSendsAndKeepsItsLastValueWhenItCompletes() {
        let fixture = Fixture()
        let log = fixture.log
        let gate = Subject<Bool, NoError>()
        let command = fixture.makeCommand(enabled: gate.signal())
        _ = log.start(command.enabled)
        #expect(command.isEnabled)
        gate.putNext(false)
        gate.putCompletion()
        #expect(!command.isEnabled)
        #expect(log.events == ["next true", "next false"])
        _ = command.execute("a")
        #expect(fixture.sources["a"] == nil)
    }

    @Test func theEnabledSignalIsDisposedWhenTheCommandIsReleased() {
        let log = EventLog()
        let gate = TestSource<Bool, NoError>("gate", log: log)
        do {
            let command = Command<Int, Int, NoError>(enabled: gate.signal) { Signal.single($0) }
            command.execute(1)
        }
        #expect(log.events == ["gate.subscribe#1", "gate.dispose#1"])
    }

    // MARK: Concurrency

    @Test func concurrentExecutionKeepsTheCommandEnabledAndExecutingUntilTheLastEnds() {
        let fixture = Fixture()
        let log = fixture.log
        let command = fixture.makeCommand(allowsConcurrentExecution: true)
        fixture.observe(command)
        log.take()
        command.execute("a")
        command.execute("b")
        fixture.sources["a"]!.putNext(1)
        fixture.sources["b"]!.putError("e")
        fixture.sources["a"]!.putCompletion()
        #expect(
            log.events == [
                "executing: next true", "execution", "a.subscribe#1",
                "execution", "b.subscribe#1",
                "inner: next 1",
                "errors: next e", "inner: completed", "b.dispose#1",
                "executing: next false", "inner: completed", "a.dispose#1",
            ])
        fixture.disposeAll()
    }

    @Test func changingAllowsConcurrentExecutionUpdatesEnabled() {
        let fixture = Fixture()
        let log = fixture.log
        let command = fixture.makeCommand()
        _ = log.start(command.enabled)
        command.execute("a")
        command.allowsConcurrentExecution = true
        #expect(command.allowsConcurrentExecution)
        command.execute("b")
        command.allowsConcurrentExecution = false
        fixture.sources["a"]!.putCompletion()
        fixture.sources["b"]!.putCompletion()
        #expect(
            log.events == [
                "next true", "next false", "a.subscribe#1", "next true", "b.subscribe#1", "next false",
                "a.dispose#1", "next true", "b.dispose#1",
            ])
    }

    // MARK: Hot and replayed signals

    @Test func executionSignalsIsHotAndErrorsIsHot() {
        let fixture = Fixture()
        let log = fixture.log
        let command = fixture.makeCommand(allowsConcurrentExecution: true)
        command.execute("a")
        fixture.sources["a"]!.putError("early")
        let executions = command.executionSignals.start(next: { _ in log.append("execution") })
        let errors = log.start(command.errors, prefix: "errors: ")
        command.execute("b")
        fixture.sources["b"]!.putError("late")
        #expect(
            log.events == [
                "a.subscribe#1", "a.dispose#1", "execution", "b.subscribe#1", "errors: next late", "b.dispose#1",
            ])
        executions.dispose()
        errors.dispose()
    }

    @Test func executingAndEnabledReplayTheCurrentStateAndAreDeduplicated() {
        let fixture = Fixture()
        let log = fixture.log
        let command = fixture.makeCommand(allowsConcurrentExecution: true)
        command.execute("a")
        _ = log.start(command.executing, prefix: "executing: ")
        _ = log.start(command.enabled, prefix: "enabled: ")
        command.execute("b")
        fixture.sources["a"]!.putCompletion()
        fixture.sources["b"]!.putCompletion()
        command.execute("c")
        #expect(
            log.events == [
                "a.subscribe#1", "executing: next true", "enabled: next true",
                "b.subscribe#1", "a.dispose#1", "executing: next false", "b.dispose#1",
                "executing: next true", "c.subscribe#1",
            ])
        fixture.sources["c"]!.putCompletion()
    }

    /// The command's state is updated before the execution's other
    /// subscribers see its end: a completion callback may execute again.
    @Test func aCompletionCallbackSeesTheCommandIdleAndMayExecuteAgain() {
        let log = EventLog()
        let runs = SignalKit.Atomic<Int>(value: 0)
        let command = Command<Int, Int, NoError> { input in
            runs.modify { $0 + 1 }
            return Signal.single(input)
        }
        let chain = Shared<[any Disposable]>([])
        @Sendable func run(_ input: Int) {
            let handle = command.execute(input).start(
                next: { log.append("next \($0)") },
                error: { log.append("error \($0)") },
                completed: {
                    log.append("completed \(input), executing: \(command.isExecuting)")
                    if input < 3 { run(input + 1) }
                }
            )
            chain.withLock { $0.append(handle) }
        }
        run(1)
        #expect(
            log.events == [
                "next 1", "completed 1, executing: false",
                "next 2", "completed 2, executing: false",
                "next 3", "completed 3, executing: false",
            ])
        #expect(runs.with { $0 } == 3)
        chain.value.forEach { $0.dispose() }
    }

    @Test func changesMadeInsideACallbackAreDeliveredAfterThatDelivery() {
        let log = EventLog()
        let command = Command<Int, Int, NoError>(allowsConcurrentExecution: true) { Signal.single($0) }
        let first = command.executing.start(next: { executing in
            log.append("first: \(executing)")
            if executing { command.allowsConcurrentExecution = false }
        })
        let second = log.start(command.executing, prefix: "second: ")
        let enabled = log.start(command.enabled, prefix: "enabled: ")
        log.take()
        command.execute(1)
        #expect(
            log.events == [
                // The setter runs inside "first: true"; its change (enabled
                // false) reaches subscribers after that delivery, in order.
                "first: true", "second: next true", "enabled: next false",
                "first: false", "second: next false", "enabled: next true",
            ])
        first.dispose()
        second.dispose()
        enabled.dispose()
    }

    @Test func aStateSubscriptionFromInsideACallbackGetsTheCurrentValueAtOnce() {
        let log = EventLog()
        let command = Command<Int, Int, NoError> { _ in Signal.never() }
        let nested = Shared<(any Disposable)?>(nil)
        let outer = command.executing.start(next: { executing in
            log.append("outer \(executing)")
            if executing {
                nested.value = log.start(command.executing, prefix: "nested: ")
                log.append("nested start returned")
            }
        })
        command.execute(1)
        #expect(log.events == ["outer false", "outer true", "nested: next true", "nested start returned"])
        outer.dispose()
        nested.value?.dispose()
    }

    // MARK: Release

    @Test func releasingTheCommandCompletesItsSignalsOnceExecutionsEnd() {
        let fixture = Fixture()
        let log = fixture.log
        let weakCommand = WeakBox<Command<String, Int, String>>(nil)
        let result: Signal<Int, CommandError<String>>
        let executing: Signal<Bool, NoError>
        let enabled: Signal<Bool, NoError>
        let errors: Signal<String, NoError>
        let executionSignals: Signal<Signal<Int, NoError>, NoError>
        do {
            let command = fixture.makeCommand()
            weakCommand.value = command
            fixture.handles.append(log.start(command.executing, prefix: "executing: "))
            fixture.handles.append(log.start(command.enabled, prefix: "enabled: "))
            fixture.handles.append(log.start(command.errors, prefix: "errors: "))
            fixture.handles.append(log.start(command.executionSignals |> map { _ in "execution" }, prefix: "executions: "))
            result = command.execute("a")
            (executing, enabled, errors, executionSignals) =
                (command.executing, command.enabled, command.errors, command.executionSignals)
        }
        #expect(weakCommand.value == nil)
        #expect(
            log.take() == [
                "executing: next false", "enabled: next true",
                "executing: next true", "enabled: next false", "executions: next execution", "a.subscribe#1",
                "executions: completed", "enabled: completed",
            ])
        fixture.sources["a"]!.putNext(1)
        fixture.sources["a"]!.putError("e")
        #expect(
            log.take() == [
                "errors: next e", "executing: next false", "executing: completed", "errors: completed",
                "a.dispose#1",
            ])
        _ = log.start(result, prefix: "result: ")
        _ = log.start(executing, prefix: "late executing: ")
        _ = log.start(enabled, prefix: "late enabled: ")
        _ = log.start(errors, prefix: "late errors: ")
        _ = log.start(executionSignals |> map { _ in "execution" }, prefix: "late executions: ")
        #expect(
            log.take() == [
                "result: next 1", "result: error Command execution failed: e",
                "late executing: next false", "late executing: completed",
                "late enabled: next false", "late enabled: completed",
                "late errors: completed",
                "late executions: completed",
            ])
        fixture.disposeAll()
    }

    @Test func anIdleCommandCompletesEverythingWhenReleased() {
        let log = EventLog()
        var handles: [any Disposable] = []
        do {
            let command = Command<Int, Int, NoError> { Signal.single($0) }
            handles.append(log.start(command.executing, prefix: "executing: "))
            handles.append(log.start(command.errors, prefix: "errors: "))
            command.execute(1)
        }
        #expect(
            log.events == [
                "executing: next false", "executing: next true", "executing: next false",
                "executing: completed", "errors: completed",
            ])
        handles.forEach { $0.dispose() }
    }

    @Test func voidInputExecute() {
        let command = Command<Void, String, NoError> { Signal.single("done") }
        let log = EventLog()
        _ = log.start(command.execute())
        #expect(log.events == ["next done", "completed"])
    }
}
