// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The sender's context across a boundary that keeps values in a buffer: the
// bounded hop, the bounded `delayEvents`, the deliveries into an actor. Such
// a boundary delivers several senders' values from one drain (a drain job, a
// timer firing), so the drain cannot run in "its" context: each value must
// carry its own, captured and restored with the two calls every hop makes
// (Context/ContextCapture.swift). When a propagation is installed as a
// subscription starts, the boundary is built for `_InContext<T>` instead of
// `T`: the sink in front of it pairs each value with its sender's context
// (and keeps the terminal event's in the subscription's `_TerminalContext`),
// and the sink behind it delivers each value inside the context it carries.
// With none installed at start the boundary is the plain one: the
// subscription pays one load and a branch, its values nothing.
//
// A subscription started before a propagation is installed carries no
// context (install at bootstrap, before the signals start).

/// A value and the context of the code that sent it (nil: no propagation
/// was installed when it was sent).
struct _InContext<T> {
    let value: T
    let context: _CapturedContext?

    /// `value`, with the calling code's context.
    @inline(__always)
    init(capturing value: T) {
        self.value = value
        context = _ContextHook.capture()
    }

    /// Runs `body` with the value, inside its sender's context.
    @inline(__always)
    func deliver(_ body: (T) -> Void) {
        _run(in: context) { body(value) }
    }
}

extension _InContext: Sendable where T: Sendable {}

/// The context of the code that sent a subscription's terminal event, from
/// the sender (before the event enters the boundary) to the delivery on the
/// other side. Locked: a `failing` overflow ends the delivery while an
/// upstream terminal may still be on its way in.
final class _TerminalContext: Sendable {
    private let stored = _LockedBox<_CapturedContext?>(nil)

    /// Records the calling code's context (the terminal's sender).
    func capture() {
        stored.value = _ContextHook.capture()
    }

    /// Runs `body` in the recorded context (as it is when none was recorded:
    /// an ending the boundary made itself, such as a `failing` overflow).
    func deliver(_ body: () -> Void) {
        _run(in: stored.value, body)
    }
}

/// In front of a boundary: pairs each event with its sender's context.
struct _ContextCapturingSink<T: Sendable, E: Sendable>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let downstream: Subscriber<_InContext<T>, E>
    let terminal: _TerminalContext
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    func putNext(_ value: T, from _: _SubscriptionBase) { downstream.putNext(_InContext(capturing: value)) }

    func putError(_ error: E) {
        terminal.capture()
        downstream.putError(error)
    }

    func putCompletion() {
        terminal.capture()
        downstream.putCompletion()
    }
}

/// Behind a boundary: delivers each event inside the context it carries.
struct _ContextRestoringSink<T: Sendable, E: Sendable>: _InlineSink {
    typealias Input = _InContext<T>
    typealias Failure = E

    let downstream: Subscriber<T, E>
    let terminal: _TerminalContext
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    func putNext(_ carried: _InContext<T>, from _: _SubscriptionBase) { carried.deliver { downstream.putNext($0) } }
    func putError(_ error: E) { terminal.deliver { downstream.putError(error) } }
    func putCompletion() { terminal.deliver { downstream.putCompletion() } }
}

/// Whether a subscription starting now carries its senders' contexts across
/// its bounded boundaries: one acquire load.
@inline(__always)
var _carriesContext: Bool { _ContextHook.installed != nil }

/// Subscribes `subscriber` to `signal` through a boundary built for
/// `_InContext<T>` by `startBoundary` (given the capturing upstream and the
/// restoring subscriber): each value is delivered in its sender's context,
/// and so is the terminal event.
func _startCarryingContext<T: Sendable, E: Sendable>(
    _ signal: Signal<T, E>,
    to subscriber: Subscriber<T, E>,
    through startBoundary: @escaping @Sendable (Signal<_InContext<T>, E>, Subscriber<_InContext<T>, E>) -> any Disposable
) -> any Disposable {
    let terminal = _TerminalContext()
    let captured = Signal<_InContext<T>, E> { carried in
        signal._start(_ContextCapturingSink(downstream: carried, terminal: terminal))
    }
    let crossed = Signal<_InContext<T>, E> { carried in startBoundary(captured, carried) }
    return crossed._start(_ContextRestoringSink(downstream: subscriber, terminal: terminal))
}
