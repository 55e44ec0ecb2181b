// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The one way a context crosses a hop. Every boundary (the hops, timers,
// thread pools, dedicated threads, event loops, actors, tasks) makes the same
// two calls: `_ContextHook.capture()` where the event crosses (one acquire
// load, nil when no propagation is installed) and `_run(in:)` on the other
// side, which runs the delivery in the captured context and restores the
// previous one after. Built on those two: `_inCurrentContext` here, for work
// handed to an executor; `_inSenderContext` (Engine/SignalQueueState.swift)
// for a signal subscribed later; and, for the boundaries that buffer several
// senders' values, the per-value carrier in Boundaries/ContextCarrier.swift.

/// A context captured at a boundary: the propagation that captured it and its
/// value (nil: the sender had none).
struct _CapturedContext: Sendable {
    let hook: _ContextHook
    let value: (any Sendable)?

    /// Runs `body` in the captured context, restoring the previous one
    /// after. A context captured by a propagation that has since been
    /// replaced is not the installed one's: `body` runs with none, under the
    /// installed propagation (so the delivering thread's context does not
    /// leak into it). With none installed any more, the capturing
    /// propagation restores its own.
    @inline(__always)
    func run(_ body: () -> Void) {
        if let installed = _ContextHook.installed, installed !== hook {
            installed.run(nil, body)
        } else {
            hook.run(value, body)
        }
    }
}

/// `body`, made to run in the calling code's context wherever it runs (or
/// `body` itself when no propagation is installed): for work handed to an
/// executor.
@inline(__always)
func _inCurrentContext(_ body: @escaping @Sendable () -> Void) -> @Sendable () -> Void {
    guard let captured = _ContextHook.capture() else { return body }
    return { captured.run(body) }
}

/// `action`, made to run in the calling code's context (see
/// `_inCurrentContext(_:)`), for work that takes an argument.
@inline(__always)
func _inCurrentContext<Argument>(
    _ action: @escaping @Sendable (Argument) -> Void
) -> @Sendable (Argument) -> Void {
    guard let captured = _ContextHook.capture() else { return action }
    return { argument in captured.run { action(argument) } }
}

/// Runs `body` in `captured` (nil: as it is, no propagation was installed
/// when it was captured).
@inline(__always)
func _run(in captured: _CapturedContext?, _ body: () -> Void) {
    if let captured {
        captured.run(body)
    } else {
        body()
    }
}

/// Runs `body` in `captured` (as `_run(in:_:)`) and returns its result.
@inline(__always)
func _run<Result>(in captured: _CapturedContext?, returning body: () -> Result) -> Result {
    guard let captured else { return body() }
    var result: Result?
    captured.run { result = body() }
    return result!
}
