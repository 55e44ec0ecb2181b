// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The event contract as numbered rules, stated once: here, and in the DocC
// article "Checking an operator or a bridge", which lists the same
// identifiers, titles and statements. An identifier never changes meaning;
// a new rule gets a new identifier.

/// What a subject is, for the rules: each rule is required, optional or not
/// applicable per role.
public enum ConformanceRole: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Makes events from outside: a pipe, a promise, an emitter's signal.
    /// The kit drives it through the send, complete and fail closures it is
    /// given.
    case source
    /// A signal made from one or more input signals, delivering on the
    /// threads its inputs deliver on (or on a queue it is given).
    case `operator`
    /// Carries the events of one input across to an executor (a queue, a
    /// thread pool, a dedicated thread), possibly through a bounded
    /// ``SignalKit/SignalBuffer``.
    case boundary
    /// Carries the events of one input to or through a foreign runtime (an
    /// event loop, an actor, another process) and back into callbacks.
    case bridge

    /// "source", "operator", "boundary" or "bridge".
    public var description: String { rawValue }
}

/// How a rule applies to a role.
public enum ConformanceRequirement: String, Sendable, Hashable, CustomStringConvertible {
    /// Every subject of the role is checked.
    case required
    /// Checked when the subject gives what the check needs (a model of its
    /// values, a way to complete a source, a buffer); otherwise reported as
    /// not checked.
    case optional
    /// The rule says nothing about the role.
    case notApplicable

    /// "required", "optional" or "not applicable".
    public var description: String {
        switch self {
        case .required: "required"
        case .optional: "optional"
        case .notApplicable: "not applicable"
        }
    }
}

/// One rule of SignalKit's event contract, with a stable identifier.
///
/// ``ConformanceRule/all`` lists them; a ``ConformanceFailure`` names the
/// rule it breaks; a ``ConformanceException`` declares a rule a subject
/// deliberately does not keep.
public struct ConformanceRule: Sendable, Hashable, Identifiable, CustomStringConvertible {
    /// The stable identifier: "1.1", "2.2", …
    public let id: String
    /// A short title.
    public let title: String
    /// The rule, in one or two sentences.
    public let statement: String
    /// Per role: required, optional or not applicable.
    public let requirements: [ConformanceRole: ConformanceRequirement]

    /// How the rule applies to `role`.
    public func requirement(for role: ConformanceRole) -> ConformanceRequirement {
        requirements[role] ?? .notApplicable
    }

    /// "1.1 Event grammar".
    public var description: String { "\(id) \(title)" }

    /// The rule with this identifier, or nil.
    public static func withID(_ id: String) -> ConformanceRule? {
        all.first { $0.id == id }
    }

    private init(
        _ id: String,
        _ title: String,
        _ statement: String,
        source: ConformanceRequirement,
        operator: ConformanceRequirement,
        boundary: ConformanceRequirement,
        bridge: ConformanceRequirement
    ) {
        self.id = id
        self.title = title
        self.statement = statement
        self.requirements = [.source: source, .operator: `operator`, .boundary: boundary, .bridge: bridge]
    }

    // MARK: 1. The event grammar

    /// 1.1: values, then at most one terminal event, then nothing.
    public static let grammar = ConformanceRule(
        "1.1", "Event grammar",
        "A subscription receives values, then at most one error or completion, and nothing after it: "
            + "value* (error | completed)?.",
        source: .required, operator: .required, boundary: .required, bridge: .required)

    /// 1.2: an error or a completion is never lost.
    public static let termination = ConformanceRule(
        "1.2", "Termination reaches downstream",
        "When the subject's inputs end the way it declares it forwards (every subscription to its inputs "
            + "completed, or one failed), its subscriber receives a terminal event: an error or a completion is "
            + "never lost, also when a bounded buffer is full.",
        source: .optional, operator: .required, boundary: .required, bridge: .required)

    /// 1.3: the values are the model's (or, across a boundary, the values sent).
    public static let values = ConformanceRule(
        "1.3", "Values as modelled",
        "The values delivered before the terminal event are those the subject's model gives for the values "
            + "its input received, in order; a boundary or a bridge delivers the values it was sent, in order "
            + "(a subsequence when its buffer may drop), and a source the values it was given.",
        source: .optional, operator: .optional, boundary: .required, bridge: .required)

    // MARK: 2. Disposal

    /// 2.1: nothing is delivered after `dispose()` returns.
    public static let nothingAfterDispose = ConformanceRule(
        "2.1", "Nothing after dispose() returns",
        "Once dispose() has returned (and every dispose() of the subscription in progress on another thread "
            + "with it), no callback of the subscription starts on the disposing thread, and on any other thread "
            + "at most the one delivery already in progress there finishes.",
        source: .required, operator: .required, boundary: .required, bridge: .required)

    /// 2.2: every upstream subscription is disposed exactly once.
    public static let upstreamDisposedOnce = ConformanceRule(
        "2.2", "Upstream disposed exactly once",
        "Every subscription the subject makes to its inputs is disposed exactly once on every path: after a "
            + "completion, after an error, by dispose(), by dispose() racing either, by dispose() called twice or "
            + "from inside a callback.",
        source: .notApplicable, operator: .required, boundary: .required, bridge: .required)

    // MARK: 3. Threads

    /// 3.1: the callbacks of one subscription never run at the same time.
    public static let serialCallbacks = ConformanceRule(
        "3.1", "Callbacks never overlap",
        "No two callbacks of one subscription run at the same time, also when its inputs are sent to from "
            + "several threads at once (a callback may be re-entered on its own thread by a send it makes).",
        source: .required, operator: .required, boundary: .required, bridge: .required)

    /// 3.2: what a callback sends is delivered in order.
    public static let reentrantOrder = ConformanceRule(
        "3.2", "Re-entrant sends in order",
        "What a callback sends into an input while it runs is delivered in the order it was sent, exactly as "
            + "if it had been sent right after the callback returned.",
        source: .required, operator: .required, boundary: .required, bridge: .required)

    /// 3.3: `start` subscribes on the calling thread, before it returns.
    public static let synchronousStart = ConformanceRule(
        "3.3", "start subscribes synchronously",
        "start runs the generator on the calling thread: the subject subscribes its input before start returns "
            + "(a subject given a queue may subscribe on that queue instead), and a source that replays its "
            + "current value delivers it before start returns.",
        source: .optional, operator: .required, boundary: .required, bridge: .required)

    /// 3.4: no thread hop unless a queue is given.
    public static let noHiddenHop = ConformanceRule(
        "3.4", "No thread hop without a queue",
        "A subject given no queue delivers every event on the thread that caused it; a boundary or a bridge "
            + "delivers on its executor; an operator given a queue delivers on that queue or on the thread that "
            + "caused the event.",
        source: .required, operator: .required, boundary: .required, bridge: .required)

    // MARK: 4. Bounded boundaries

    /// 4.1: every value is delivered or counted as dropped.
    public static let dropLaw = ConformanceRule(
        "4.1", "Delivered + dropped == sent",
        "Once a boundary's terminal event is delivered, the values it delivered plus the values its buffer "
            + "counted as dropped equal the values sent to it.",
        source: .notApplicable, operator: .notApplicable, boundary: .required, bridge: .optional)

    // MARK: 5. Context

    /// 5.1: an event runs in its sender's context.
    public static let eventContext = ConformanceRule(
        "5.1", "Events in their sender's context",
        "With a context propagation installed, each value a boundary, a bridge or a source delivers runs in "
            + "the context its sender had, and every event runs in a context one of the senders (or start) had, "
            + "or in none when the sender had none: never in one the delivering thread happened to have.",
        source: .required, operator: .required, boundary: .required, bridge: .required)

    /// 5.2: subscription-time work runs in the context of `start`.
    public static let subscriptionContext = ConformanceRule(
        "5.2", "Subscription-time work in start's context",
        "The subject's first subscription to its input runs in the context current at start, also when the "
            + "subject defers it to a queue.",
        source: .notApplicable, operator: .required, boundary: .required, bridge: .required)

    // MARK: 6. Memory

    /// 6.1: nothing stays live once the subscription is over.
    public static let nothingLive = ConformanceRule(
        "6.1", "Nothing stays live",
        "Once the subscription is disposed and the inputs let go of their subscribers, SignalKit's live-object "
            + "counters (subscriptions, subscriber bags, tracked objects) are back where they were.",
        source: .required, operator: .required, boundary: .required, bridge: .required)

    /// Every rule, in identifier order.
    public static let all: [ConformanceRule] = [
        grammar, termination, values,
        nothingAfterDispose, upstreamDisposedOnce,
        serialCallbacks, reentrantOrder, synchronousStart, noHiddenHop,
        dropLaw,
        eventContext, subscriptionContext,
        nothingLive,
    ]
}
