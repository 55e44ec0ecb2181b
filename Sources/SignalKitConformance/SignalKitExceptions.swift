// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The one list of the rules SignalKit deliberately does not keep, each with
// its reason: SignalKit's behaviour kept from SwiftSignalKit and
// ReactiveCocoa, which code written for them relies on. SignalKit's own
// checks (Tests/SignalKitConformanceTests, and SignalKitNIO's in
// Tests/SignalKitNIOTests) pass it as `ConformanceOptions.exceptions`;
// CheckingAnOperatorOrABridge.md prints it under its table.

extension ConformanceException {
    /// Sources that leave serial sends to their callers, as SwiftSignalKit's do.
    private static let unserialisedSources = [
        "ValuePipe", "Promise", "ValuePromise", "EventEmitter.signal()", "Subject", "ReplaySubject(capacity: 1)",
    ]

    /// Unbounded hops onto a queue that is current when a callback sends.
    private static let inlineHops = [
        "deliverOn(virtual time)", "deliverOn(Queue)", "deliverOn(dedicated thread)", "deliverOn(EventLoop)",
    ]

    /// SwiftSignalKit's switching and queueing operators.
    private static let metaOperators = ["mapToSignal", "switchToLatest", "queue", "mapToQueue", "queue(buffer:)"]

    /// The rules SignalKit's own sources, operators and boundaries do not
    /// keep, with the reasons, by the names SignalKit's checks give them
    /// ("deliverOn(Queue)", "combineLatest", "ValuePipe", …).
    public static let signalKit: [ConformanceException] =
        unserialisedSources.map { source in
            ConformanceException(
                source, rule: "3.1",
                reason: "a source calls its subscribers on the thread of each send and does not serialise "
                    + "concurrent sends (SwiftSignalKit's Subscriber contract: its callers must send serially; "
                    + "the kit serialises its sends to it)")
        }
        + inlineHops.map { hop in
            ConformanceException(
                hop, rule: "3.2",
                reason: "SwiftSignalKit's inline rule: a value sent on the queue itself (from a callback) is delivered "
                    + "at once, ahead of values still waiting for the queue; the bounded form keeps the order")
        }
        + metaOperators.map { name in
            ConformanceException(
                name, rule: "3.1",
                reason: "SwiftSignalKit's switching and queueing operators deliver an inner's events on the inner's "
                    + "thread and the outer's error on the outer's, without serialising them: an outer that fails "
                    + "while an inner delivers on another thread may overlap it (merge and flatten serialise)")
        }
        + [
            ConformanceException(
                "Promise", rule: "1.2", reason: "a Promise never completes (SwiftSignalKit): its driver can only set values"),
            ConformanceException(
                "ValuePromise", rule: "1.2",
                reason: "a ValuePromise never completes (SwiftSignalKit): its driver can only set values"),
            ConformanceException(
                "combineLatest", rule: "3.1",
                reason: "SwiftSignalKit's combineLatest emits each tuple on the thread of the input value that made "
                    + "it, outside any lock: inputs sending from several threads at once may overlap downstream "
                    + "(deliver on a queue to serialise)"),
            ConformanceException(
                "replayLazily", rule: "2.2",
                reason: "ReactiveCocoa's -replayLazily never disconnects: its source runs on when every subscriber "
                    + "has left (autoconnect() disconnects at zero subscribers)"),
            ConformanceException(
                "delayEvents", rule: "3.4",
                reason: "ReactiveCocoa's delay: forwards an error at once, on the thread that delivers it; values and "
                    + "the completion arrive on the queue"),
            ConformanceException(
                "delayEvents(buffer: droppingOldest)", rule: "3.4",
                reason: "as delayEvents: an error is forwarded at once, on the thread that delivers it"),
        ]
}
