// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// An action that turns an input into work and publishes the work's state:
/// ReactiveCocoa's `RACCommand`.
///
/// `execute(_:)` builds the work signal for the input, makes it hot (it is
/// subscribed once, through a ``ReplaySubject``), announces it on
/// ``executionSignals`` and returns it. While executions run, ``executing``
/// is true; ``enabled`` says whether `execute(_:)` would start work now;
/// errors of the executions arrive as values on ``errors``.
///
/// ```swift
/// let login = Command<Credentials, Session, LoginError> { credentials in
///     api.logIn(credentials)                      // a cold Signal<Session, LoginError>
/// }
/// let spinner = login.executing.start(next: { busy in showSpinner(busy) })
/// let failures = login.errors.start(next: { error in report(error) })
/// login.execute(credentials).start(next: { session in open(session) })
/// ```
///
/// **State machine.** `executing` = at least one execution running (starts
/// false). `enabled` = the `enabled` input's latest value (true until it
/// sends one) AND (`allowsConcurrentExecution` OR not executing). An
/// execution runs from `execute(_:)` until its work signal sends an error or
/// a completion (a work signal that never terminates keeps the command
/// executing). Calling `execute(_:)` while not enabled starts nothing and
/// returns a signal failing with ``CommandError/notEnabled(_:)``, naming the
/// reason.
///
/// **Order of events** for one execution: `executing` true, `enabled` false
/// (if they change), the execution on `executionSignals`, then the work's
/// events; when the work terminates, its error on `errors`, `executing`
/// false, `enabled` true (if they change) — before the other subscribers of
/// the execution see the terminal event, so a completion callback sees the
/// command idle and may execute it again.
///
/// **Threading.** RAC delivers these signals on the main thread; SignalKit
/// delivers them synchronously on the thread that caused the change (the
/// caller of `execute(_:)`, the thread the work terminates on, the `enabled`
/// input's thread, the setter's caller), outside any lock. Add `deliverOn`
/// to move them to a queue. The command is thread-safe: `execute(_:)` may be
/// called from any thread; when executions are not concurrent, exactly one of
/// several racing calls starts work. Deliveries are serialized: one thread
/// at a time delivers the command's events, in the order the changes
/// happened. A change made while another thread is delivering is delivered
/// by that thread, right after (the call that made it may return first); a
/// change made from inside a callback is delivered after that callback's
/// delivery completes.
///
/// **Lifetime.** The signals do not keep the command alive. When the command
/// is released, `executionSignals` and `enabled` complete; `executing` and
/// `errors` complete once the running executions have ended (after their
/// last updates). Executions keep running. Subscribing after that: the state
/// signals send their last value and complete; `executionSignals` and
/// `errors` complete at once.
///
/// `Sendable`: immutable apart from the state in its core, which is guarded
/// by a mutex. `Output` and `E` are `Sendable` because an execution's values
/// and errors are replayed to subscribers on other threads.
public final class Command<Input, Output: Sendable, E: Sendable>: Sendable {
    private let core: _CommandCore<Output, E>
    private let work: @Sendable (Input) -> Signal<Output, E>
    private let enabledInput: (any Disposable)?

    /// The executions, as they start (RAC's `executionSignals`): each value
    /// is the hot signal of one execution — its replay subject, so a late
    /// subscriber gets everything the work sent — with the error turned into
    /// a completion (the error goes to ``errors``).
    ///
    /// Hot: a subscriber receives only the executions started after it
    /// subscribed. Completes when the command is released.
    public let executionSignals: Signal<Signal<Output, NoError>, NoError>

    /// Whether an execution is running (RAC's `executing`).
    ///
    /// Sends the current value on subscription (false at first), then every
    /// change; never the same value twice in a row. Completes (after sending
    /// false) when the command is released and no execution is left.
    public let executing: Signal<Bool, NoError>

    /// Whether `execute(_:)` would start work now (RAC's `enabled`): the
    /// `enabled` input's latest value (true until it sends one) AND
    /// (`allowsConcurrentExecution` OR not executing).
    ///
    /// Sends the current value on subscription, then every change; never the
    /// same value twice in a row. Completes when the command is released.
    public let enabled: Signal<Bool, NoError>

    /// The errors of the executions, as values (RAC's `errors`).
    ///
    /// Hot: a subscriber receives the errors of executions that fail after it
    /// subscribed. Completes when the command is released and no execution is
    /// left.
    public let errors: Signal<E, NoError>

    /// Creates a command.
    ///
    /// - Parameters:
    ///   - enabled: gates the command (RAC's `initWithEnabled:signalBlock:`):
    ///     while its latest value is false, `execute(_:)` fails with
    ///     `.notEnabled(.enabledSignalIsFalse)`. True until it sends a value;
    ///     its completion keeps the latest value. Subscribed now, disposed when
    ///     the command is released. `nil`: always enabled (except while
    ///     executing, unless `allowsConcurrentExecution`).
    ///   - allowsConcurrentExecution: whether executions may overlap (RAC's
    ///     default: false).
    ///   - execute: builds the work signal for an input. Called by
    ///     `execute(_:)`, on its caller's thread, once per accepted execution.
    public init(
        enabled: Signal<Bool, NoError>? = nil,
        allowsConcurrentExecution: Bool = false,
        execute: @escaping @Sendable (Input) -> Signal<Output, E>
    ) {
        let core = _CommandCore<Output, E>(allowsConcurrentExecution: allowsConcurrentExecution)
        self.core = core
        work = execute
        executionSignals = Signal { [core] subscriber in core.subscribeExecutions(subscriber) }
        executing = Signal { [core] subscriber in core.subscribeState(.executing, subscriber) }
        self.enabled = Signal { [core] subscriber in core.subscribeState(.enabled, subscriber) }
        errors = Signal { [core] subscriber in core.subscribeErrors(subscriber) }
        enabledInput = enabled?.start(next: { [core] value in core.setEnabledInput(value) })
    }

    deinit {
        enabledInput?.dispose()
        core.release()
    }

    /// Whether executions may overlap (RAC's `allowsConcurrentExecution`).
    /// Changing it updates ``enabled``. Thread-safe.
    public var allowsConcurrentExecution: Bool {
        get { core.allowsConcurrentExecution }
        set { core.allowsConcurrentExecution = newValue }
    }

    /// Whether an execution is running now (a snapshot of ``executing``'s
    /// state; the signal may not have delivered it yet).
    public var isExecuting: Bool { core.isExecuting }

    /// Whether `execute(_:)` would start work now (a snapshot of
    /// ``enabled``'s state).
    public var isEnabled: Bool { core.isEnabled }

    /// Starts an execution with `input`, if the command is enabled (RAC's
    /// `-execute:`).
    ///
    /// Marble: work `"a-b-|"` → result `"a-b-|"`, hot and replayed (a late
    /// subscriber gets `"(ab|)"`); while not enabled → `"#"` (error
    /// `.notEnabled(reason)`).
    ///
    /// Calls the `execute` closure given at creation, multicasts the work
    /// through a new ``ReplaySubject``, sends the execution on
    /// ``executionSignals``, then connects (subscribes the work exactly
    /// once).
    ///
    /// - Parameters:
    ///   - input: passed to the `execute` closure.
    /// - Returns: the execution's hot, replaying signal, its error wrapped in
    ///   ``CommandError/executionFailed(_:)``; or, when the command is not
    ///   enabled, a signal that fails at once with
    ///   ``CommandError/notEnabled(_:)`` (nothing was started). You need not
    ///   subscribe: the work runs anyway.
    ///
    /// **Threading:** the closure runs and the work is subscribed on the
    /// caller's thread, inside this call; what the work sends synchronously
    /// happens before it returns.
    ///
    /// **Termination:** the execution ends with the work's terminal event.
    ///
    /// **Disposal:** an execution cannot be cancelled from outside (as in
    /// RAC): disposing a subscription to the result stops only that
    /// subscriber. Build cancellation into the work (e.g. `take(until:)`).
    @discardableResult
    public func execute(_ input: Input) -> Signal<Output, CommandError<E>> {
        if let reason = core.claim() {
            return .fail(.notEnabled(reason))
        }
        let work = self.work(input)
        let subject = ReplaySubject<Output, E>()
        // The command's own subscription comes first: it updates `errors`,
        // `executing` and `enabled` before any other subscriber of the
        // execution sees its terminal event.
        _ = subject.signal()._start(_CommandExecutionSink(core: core))
        let execution = subject.signal()
        core.publish(Signal { subscriber in execution._start(_CompleteOnErrorSink(downstream: subscriber)) })
        subject.subscribe(to: work)
        return execution |> mapError { CommandError.executionFailed($0) }
    }
}

extension Command where Input == Void {
    /// Starts an execution of a command without input: `execute(())`. See
    /// ``execute(_:)``.
    ///
    /// - Returns: the execution's hot, replaying signal, or a signal failing
    ///   with ``CommandError/notEnabled(_:)``.
    @discardableResult
    public func execute() -> Signal<Output, CommandError<E>> {
        execute(())
    }
}
