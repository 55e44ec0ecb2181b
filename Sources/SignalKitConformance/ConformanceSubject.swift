// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// How a user describes what the kit checks: a source with a way to drive it,
// an operator over the kit's input signals, a boundary on an executor
// (possibly through a bounded buffer), or a bridge that delivers into
// callbacks. Each description is a recipe: the kit makes a fresh subject for
// every run (a scenario or a random schedule).

public import SignalKit
public import SignalKitTesting

/// The error the kit's inputs fail with: `id` is the number of the kit's
/// action that sent it.
public struct ConformanceError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The number of the action that sent it.
    public let id: Int

    /// An error with this number.
    public init(id: Int) {
        self.id = id
    }

    /// "error 12".
    public var description: String { "error \(id)" }
}

/// What the kit hands a subject's recipe for one run: its input signals (hot
/// signals the kit sends to), and the run's virtual-time queue.
///
/// Each input records every subscription the subject makes to it, how many
/// times each was disposed, and the values, errors and completions the kit
/// sent it. Values are distinct `Int`s (the number of the action that sent
/// them), so a value names its sender.
public struct ConformanceInputs: Sendable {
    /// The input signals, as many as the subject declared.
    public let signals: [Signal<Int, ConformanceError>]
    /// A serial queue on ``scheduler``'s virtual clock: the queue of a subject
    /// declared `on: .virtualTime`. The kit advances the clock.
    public let queue: Queue
    /// The virtual clock of ``queue``.
    public let scheduler: VirtualTimeScheduler

    /// The first input.
    public var first: Signal<Int, ConformanceError> { signals[0] }

    /// Input `index`.
    public subscript(index: Int) -> Signal<Int, ConformanceError> { signals[index] }

    /// How many inputs there are.
    public var count: Int { signals.count }
}

/// Where a subject delivers: the rule of thread hops (3.4) and how the kit
/// waits for the subject to finish what it was given.
public struct ConformanceExecutor: Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case none
        case virtualTime
        case queue(Queue)
        case custom(isCurrent: @Sendable () -> Bool, settle: @Sendable () -> Void)
    }

    let kind: Kind
    /// The executor's name in reports.
    public let description: String

    /// No queue: every event is delivered on the thread that caused it.
    public static let none = ConformanceExecutor(kind: .none, description: "none")

    /// The run's virtual-time queue (``ConformanceInputs/queue``), for timing
    /// operators and boundaries tested without sleeping. The kit advances the
    /// clock; random schedules on it send from one thread (the virtual
    /// scheduler knows one current queue for the whole process).
    public static let virtualTime = ConformanceExecutor(kind: .virtualTime, description: "virtual time")

    /// A real queue (Dispatch, `Queue(dedicatedThread:)`, `Queue(scheduler:)`):
    /// events are delivered where `queue.isCurrent()` is true; the kit waits
    /// for it with `queue.sync {}`.
    public static func queue(_ queue: Queue, named name: String = "queue") -> ConformanceExecutor {
        ConformanceExecutor(kind: .queue(queue), description: name)
    }

    /// A ``SignalKit/ThreadPool``: events are delivered on its threads; the
    /// kit waits until no event has arrived for a few milliseconds.
    public static func threadPool(_ pool: ThreadPool) -> ConformanceExecutor {
        ConformanceExecutor(
            kind: .custom(isCurrent: { pool.isCurrentThreadInPool() }, settle: { _sleep(0.002) }),
            description: "thread pool")
    }

    /// Any other executor (an event loop, an actor's executor): `isCurrent`
    /// says whether the calling thread is the executor's; `settle` returns
    /// once the work already given to the executor has run (or, if it cannot
    /// know, after a short wait: the kit repeats it until no event arrives).
    public static func custom(
        _ name: String,
        isCurrent: @escaping @Sendable () -> Bool,
        settle: @escaping @Sendable () -> Void
    ) -> ConformanceExecutor {
        ConformanceExecutor(kind: .custom(isCurrent: isCurrent, settle: settle), description: name)
    }

    /// Whether the calling thread is the executor's.
    func isCurrent(_ runQueue: Queue) -> Bool {
        switch kind {
        case .none: false
        case .virtualTime: runQueue.isCurrent()
        case .queue(let queue): queue.isCurrent()
        case .custom(let isCurrent, _): isCurrent()
        }
    }

    var isNone: Bool {
        if case .none = kind { return true }
        return false
    }

    var isVirtualTime: Bool {
        if case .virtualTime = kind { return true }
        return false
    }
}

/// Which of its inputs' terminal events a subject passes on (rule 1.2).
public struct ConformanceTermination: OptionSet, Sendable, Hashable {
    /// The set's bits.
    public let rawValue: Int

    /// The set with these bits.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Completes once every subscription it made to its inputs has completed
    /// (or was disposed by the subject itself).
    public static let completion = ConformanceTermination(rawValue: 1)
    /// Terminates (with an error, or a completion it chooses) once one of
    /// its input subscriptions has failed.
    public static let error = ConformanceTermination(rawValue: 2)
    /// Both: the operator passes on what its inputs end with.
    public static let all: ConformanceTermination = [.completion, .error]
    /// Neither (a loop that resubscribes, a signal that never ends).
    public static let none: ConformanceTermination = []
}

/// A source under test and the way to drive it: the kit calls `send` with
/// distinct values, and `complete` or `fail` when given.
public struct ConformanceSource<Value: Sendable, Failure: Sendable>: Sendable {
    /// The signal the kit subscribes to.
    public let signal: Signal<Value, Failure>
    let send: @Sendable (Int) -> Void
    let complete: (@Sendable () -> Void)?
    let fail: (@Sendable () -> Void)?

    /// - Parameters:
    ///   - signal: the source's signal.
    ///   - send: makes the source deliver the value (`pipe.putNext`).
    ///   - complete: makes it complete, if it can.
    ///   - fail: makes it fail, if it can.
    public init(
        signal: Signal<Value, Failure>,
        send: @escaping @Sendable (Int) -> Void,
        complete: (@Sendable () -> Void)? = nil,
        fail: (@Sendable () -> Void)? = nil
    ) {
        self.signal = signal
        self.send = send
        self.complete = complete
        self.fail = fail
    }
}

/// Where a bridge delivers: the kit's recorder, which checks every call
/// against the rules.
public struct ConformanceSink<Value: Sendable, Failure: Sendable>: Sendable {
    let recorder: _Recorder

    /// Delivers a value.
    public func putNext(_ value: Value) { recorder.record(.next, value) }

    /// Delivers an error.
    public func putError(_ error: Failure) { recorder.record(.error, error) }

    /// Delivers a completion.
    public func putCompletion() { recorder.record(.completed, nil) }

    /// Starts `signal` with this sink's three methods as its callbacks, for a
    /// bridge whose far side is a signal again.
    public func subscribe(to signal: Signal<Value, Failure>) -> any Disposable {
        let recorder = recorder
        return signal.start(
            next: { recorder.record(.next, $0) },
            error: { recorder.record(.error, $0) },
            completed: { recorder.record(.completed, nil) })
    }
}

/// One subject built for one run.
struct _Instance: Sendable {
    let start: @Sendable (_Recorder) -> any Disposable
    let driver: _SourceDriver?
    let probe: SignalBufferProbe?
}

/// A source's send, complete and fail, type-erased.
struct _SourceDriver: Sendable {
    let send: @Sendable (Int) -> Void
    let complete: (@Sendable () -> Void)?
    let fail: (@Sendable () -> Void)?
}

/// How the kit checks a subject's values (rule 1.3).
enum _ValueCheck: Sendable {
    /// No model: the rule is not checked.
    case none
    /// Compares the delivered values with the model of the values the
    /// input's first subscription received (`complete`: the subscription
    /// completed, so the delivered values must be the whole model; else a
    /// prefix of it). Returns what is wrong, or nil.
    case model(@Sendable (_ received: [Int], _ delivered: [any Sendable], _ complete: Bool) -> String?)
    /// The values sent, in order (a subsequence when `mayDrop`).
    case identity(mayDrop: Bool)
}

/// What the kit checks: a source, an operator, a boundary or a bridge, with
/// a name for reports.
///
/// ```swift
/// let doubled = ConformanceSubject.operator("double") { inputs in inputs.first |> map { $0 * 2 } }
///     .model { received in received.map { $0 * 2 } }
/// let hop = ConformanceSubject.boundary("deliverOn", on: .queue(queue), buffer: .droppingOldest(beyond: 8)) {
///     inputs, buffer in inputs.first |> deliverOn(queue, buffer: buffer)
/// }
/// ```
public struct ConformanceSubject: Sendable, CustomStringConvertible {
    /// The name reports and exceptions use.
    public let name: String
    /// What it is, for the rules.
    public let role: ConformanceRole
    /// How many input signals the kit makes for it (0 for a source).
    public let inputCount: Int
    /// Where it delivers.
    public let executor: ConformanceExecutor
    /// Which terminal events of its inputs it passes on.
    public let termination: ConformanceTermination
    /// The buffer's description (`droppingOldest(beyond: 8)`), for a bounded
    /// boundary or bridge.
    public let buffer: String?
    let bufferLimit: Int?
    let valueCheck: _ValueCheck
    let replaysCurrentValue: Bool
    let make: @Sendable (ConformanceInputs) -> _Instance

    /// "name (role)".
    public var description: String { "\(name) (\(role))" }

    var bufferBlocks: Bool { buffer?.hasPrefix("blocking") ?? false }
}

extension ConformanceSubject {
    /// A source: a signal made from outside, and the closures that drive it.
    ///
    /// - Parameters:
    ///   - name: the name in reports.
    ///   - executor: where it delivers (`.none`: on the thread that sends).
    ///   - replaysCurrentValue: whether a new subscriber gets the last value
    ///     sent before it subscribed, inside `start` (a `Promise`): checked by
    ///     rule 3.3.
    ///   - make: makes a fresh source and its driver, once per run.
    public static func source<Value: Sendable, Failure: Sendable>(
        _ name: String,
        on executor: ConformanceExecutor = .none,
        replaysCurrentValue: Bool = false,
        _ make: @escaping @Sendable (ConformanceInputs) -> ConformanceSource<Value, Failure>
    ) -> ConformanceSubject {
        ConformanceSubject(
            name: name, role: .source, inputCount: 0, executor: executor, termination: .all, buffer: nil,
            bufferLimit: nil, valueCheck: .identity(mayDrop: false), replaysCurrentValue: replaysCurrentValue
        ) { inputs in
            let source = make(inputs)
            let signal = source.signal
            return _Instance(
                start: { recorder in recorder.subscribe(to: signal) },
                driver: _SourceDriver(send: source.send, complete: source.complete, fail: source.fail),
                probe: nil)
        }
    }

    /// An operator over `inputs` input signals, checked against the contract
    /// (give an operator over one input a model of its values with
    /// ``model(_:)``: without one, rule 1.3 is not checked).
    ///
    /// - Parameters:
    ///   - name: the name in reports.
    ///   - inputs: how many input signals it takes (values go mostly to the
    ///     first; each input may be subscribed any number of times, as the
    ///     inner signals of `mapToSignal`).
    ///   - executor: the queue it is given, if any (`.virtualTime` for a timing
    ///     operator on ``ConformanceInputs/queue``).
    ///   - termination: which terminal events of its inputs it passes on.
    ///   - build: makes the operator over the run's inputs.
    public static func `operator`<Value: Sendable, Failure: Sendable>(
        _ name: String,
        inputs: Int = 1,
        on executor: ConformanceExecutor = .none,
        forwards termination: ConformanceTermination = .all,
        _ build: @escaping @Sendable (ConformanceInputs) -> Signal<Value, Failure>
    ) -> ConformanceSubject {
        _signalSubject(
            name, role: .operator, inputs: inputs, executor: executor, termination: termination, buffer: nil,
            valueCheck: .none
        ) { inputs, _ in build(inputs) }
    }

    /// A boundary with no buffer (the unbounded form): one input's events
    /// carried to `executor`, every value delivered in order.
    public static func boundary<Failure: Sendable>(
        _ name: String,
        on executor: ConformanceExecutor,
        _ build: @escaping @Sendable (ConformanceInputs) -> Signal<Int, Failure>
    ) -> ConformanceSubject {
        _signalSubject(
            name, role: .boundary, inputs: 1, executor: executor, termination: .all, buffer: nil,
            valueCheck: .identity(mayDrop: false)
        ) { inputs, _ in build(inputs) }
    }

    /// A bounded boundary: `build` gets `buffer` counted by a probe of the
    /// kit (``SignalKit/SignalBuffer/counted(by:)``), which rule 4.1 reads.
    /// The kit also fills the buffer beyond its limit while the executor is
    /// busy (a Dispatch or dedicated-thread queue, or the virtual clock).
    public static func boundary<Failure: Sendable>(
        _ name: String,
        on executor: ConformanceExecutor,
        buffer: SignalBuffer<ConformanceError>,
        _ build: @escaping @Sendable (ConformanceInputs, SignalBuffer<ConformanceError>) -> Signal<Int, Failure>
    ) -> ConformanceSubject {
        _signalSubject(
            name, role: .boundary, inputs: 1, executor: executor, termination: .all, buffer: buffer,
            valueCheck: .identity(mayDrop: !buffer.isUnbounded && !buffer.description.hasPrefix("blocking")), build)
    }

    /// A bridge: starts the input's events across a foreign runtime and
    /// delivers them into `sink`, returning what disposes the whole.
    ///
    /// - Parameters:
    ///   - name: the name in reports.
    ///   - executor: where it delivers into the sink.
    ///   - buffer: its bounded buffer, if it takes one (counted by the kit's
    ///     probe, which rule 4.1 reads); `.unbounded` otherwise.
    ///   - start: starts the bridge for one run.
    public static func bridge<Failure: Sendable>(
        _ name: String,
        on executor: ConformanceExecutor,
        buffer: SignalBuffer<ConformanceError> = .unbounded,
        _ start:
            @escaping @Sendable (ConformanceInputs, SignalBuffer<ConformanceError>, ConformanceSink<Int, Failure>) ->
            any Disposable
    ) -> ConformanceSubject {
        let mayDrop = !buffer.isUnbounded && !buffer.description.hasPrefix("blocking")
        return ConformanceSubject(
            name: name, role: .bridge, inputCount: 1, executor: executor, termination: .all,
            buffer: buffer.isUnbounded ? nil : buffer.description, bufferLimit: buffer.limit,
            valueCheck: .identity(mayDrop: mayDrop), replaysCurrentValue: false
        ) { inputs in
            let probe = SignalBufferProbe()
            let counted = buffer.counted(by: probe)
            return _Instance(
                start: { recorder in start(inputs, counted, ConformanceSink(recorder: recorder)) },
                driver: nil, probe: probe)
        }
    }

    /// This operator, with a model of its values (rule 1.3): `model` maps
    /// the values its input received, in order, to the values it delivers
    /// once the input completes; before that, what it delivered must be a
    /// prefix of the model's values.
    ///
    /// ```swift
    /// let tripled = ConformanceSubject.operator("tripled") { $0.first |> map { $0 * 3 } }
    ///     .model { received in received.map { $0 * 3 } }
    /// ```
    ///
    /// - Precondition: the subject is an operator over one input.
    public func model<Value: Equatable & Sendable>(
        _ model: @escaping @Sendable (_ received: [Int]) -> [Value]
    ) -> ConformanceSubject {
        _signalKitRequire(
            role == .operator && inputCount == 1,
            "ConformanceSubject.model(_:): only an operator over one input has a model; \(name) is a \(role) "
                + "over \(inputCount) inputs")
        let check: @Sendable ([Int], [any Sendable], Bool) -> String? = { received, delivered, complete in
            let expected = model(received)
            let typed = delivered.compactMap { $0 as? Value }
            if typed.count != delivered.count {
                return "delivered \(delivered.map { "\($0)" }), values of another type than the model's (\(Value.self))"
            }
            if complete ? typed == expected : expected.starts(with: typed) { return nil }
            return "received \(received), delivered \(typed), the model gives \(expected)"
                + (complete ? "" : " (before the completion, what was delivered must be a prefix of it)")
        }
        return ConformanceSubject(
            name: name, role: role, inputCount: inputCount, executor: executor, termination: termination,
            buffer: buffer, bufferLimit: bufferLimit, valueCheck: .model(check),
            replaysCurrentValue: replaysCurrentValue, make: make)
    }

    /// A subject whose output is a signal the kit starts.
    private static func _signalSubject<Value: Sendable, Failure: Sendable>(
        _ name: String,
        role: ConformanceRole,
        inputs: Int,
        executor: ConformanceExecutor,
        termination: ConformanceTermination,
        buffer: SignalBuffer<ConformanceError>?,
        valueCheck: _ValueCheck,
        _ build: @escaping @Sendable (ConformanceInputs, SignalBuffer<ConformanceError>) -> Signal<Value, Failure>
    ) -> ConformanceSubject {
        let bounded = buffer.flatMap { $0.isUnbounded ? nil : $0 }
        return ConformanceSubject(
            name: name, role: role, inputCount: max(inputs, 1), executor: executor, termination: termination,
            buffer: bounded?.description, bufferLimit: bounded?.limit, valueCheck: valueCheck,
            replaysCurrentValue: false
        ) { inputs in
            let probe = SignalBufferProbe()
            let signal = build(inputs, (buffer ?? .unbounded).counted(by: probe))
            return _Instance(start: { recorder in recorder.subscribe(to: signal) }, driver: nil, probe: probe)
        }
    }
}
