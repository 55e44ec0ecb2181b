// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Context propagation, its public face and the installed hook. With no
// propagation installed (the default) a boundary pays one acquire load and a
// branch; with one installed it captures the sender's context where the event
// crosses and runs the delivery on the other side inside it, restoring what
// was current before when the delivery returns (the two calls every boundary
// makes: ContextCapture.swift).
//
// The hook is an immortal object: `install` keeps it for ever in a
// process-wide list (a process installs one or two in its life), so a
// boundary loads an unmanaged reference and uses it without retaining it.

/// A way to carry "the current context" — a trace, a request's baggage — from
/// the code that sends an event to the code that receives it on the other
/// side of an asynchronous boundary (`deliverOn`, `runOn`, timers, delays,
/// thread pools, dedicated threads, event loops, delivery into an actor).
///
/// SignalKit's core depends on no tracing library: it calls this protocol.
/// For swift-distributed-tracing, a propagation reads `ServiceContext.current`
/// and runs the body in `ServiceContext.withValue(_:operation:)`; any other
/// task-local (or thread-local) works the same way:
///
/// ```swift
/// public enum RequestID { @TaskLocal public static var current: String? }
///
/// public struct RequestIDPropagation: SignalContextPropagation {
///     public func currentContext() -> String? { RequestID.current }
///     public func withContext(_ context: String?, _ body: () -> Void) {
///         RequestID.$current.withValue(context, operation: body)
///     }
/// }
/// ```
///
/// and, at bootstrap, `SignalContext.install(RequestIDPropagation())`.
///
/// **The rule.** A value, an error or a completion is delivered in the
/// context of the code that sent it (`putNext` on the far side of the
/// boundary), also when an operator stored it and a timer, a sampler or a
/// terminal event sends it later (a value an operator makes at completion,
/// such as an aggregate, goes out in the completer's); work that happens at
/// subscription time (`runOn`'s subscribe, a timer's start, every
/// resubscription of `retry`, `restart` and the other loops, `then`'s next
/// signal) in the context current at `start`. A delivery whose sender
/// had no context runs with none (`withContext(nil, …)`), never with whatever
/// the delivering thread had: two subscriptions on one queue never see each
/// other's context. A task iterating `values()` keeps its own task's context,
/// as with `AsyncStream`.
public protocol SignalContextPropagation: Sendable {
    /// The context propagated.
    associatedtype Context: Sendable

    /// The calling code's current context, or nil when it has none. Called
    /// on the sending thread each time an event crosses a boundary: keep it
    /// cheap (a task-local read).
    func currentContext() -> Context?

    /// Runs `body` with `context` as the current context (nil: none), and
    /// makes what was current before current again when `body` returns.
    func withContext(_ context: Context?, _ body: () -> Void)
}

/// Installs the process's context propagation (see
/// `SignalContextPropagation`).
public enum SignalContext {
    /// Installs `propagation` for the whole process: every asynchronous
    /// boundary captures its context from then on. Call it once, at
    /// bootstrap, before the signals whose events should carry a context are
    /// started. Installing another replaces it: events already in flight are
    /// delivered with no context (`withContext(nil, …)` of the new
    /// propagation), since their captured value belongs to the previous one;
    /// a bounded boundary or an actor delivery started before carries its
    /// values' contexts for its whole life, each delivered the same way.
    ///
    /// Each installed propagation stays allocated for the life of the process
    /// (a boundary reads it without retaining it).
    public static func install<Propagation: SignalContextPropagation>(_ propagation: Propagation) {
        let hook = _ContextHook(propagation)
        // Kept for the life of the process (see the file header), and
        // reachable: a leak checker sees no leak after `uninstall()`.
        _everyInstalledHook.withLock { $0.append(hook) }
        _contextHook.store(Unmanaged.passUnretained(hook), ordering: .releasing)
    }

    /// Removes the installed propagation: boundaries capture nothing from
    /// then on (events already in flight still carry theirs). For tests, and
    /// for a process that turns tracing off.
    public static func uninstall() {
        _contextHook.store(nil, ordering: .releasing)
    }

    /// Whether a propagation is installed.
    public static var isInstalled: Bool {
        _contextHook.load(ordering: .acquiring) != nil
    }
}

/// The installed propagation, or nil (see the file header).
let _contextHook = Synchronization.Atomic<Unmanaged<_ContextHook>?>(nil)

/// Every propagation ever installed, in order: each stays allocated for the
/// life of the process, since a boundary uses the installed hook without
/// retaining it, also while another is being installed. (A pthread lock, not
/// `Synchronization.Mutex`: see `_LockedBox`.)
let _everyInstalledHook = _LockedState<[_ContextHook]>([])

/// An installed `SignalContextPropagation`, type-erased.
final class _ContextHook: Sendable {
    private let currentContext: @Sendable () -> (any Sendable)?
    private let withContext: @Sendable ((any Sendable)?, () -> Void) -> Void

    init<Propagation: SignalContextPropagation>(_ propagation: Propagation) {
        currentContext = { propagation.currentContext() }
        withContext = { value, body in
            // A value captured by another propagation (installed before this
            // one) is not this one's: it runs with none.
            propagation.withContext(value as? Propagation.Context, body)
        }
    }

    /// The installed hook, or nil: one acquire load.
    @inline(__always)
    static var installed: _ContextHook? {
        _contextHook.load(ordering: .acquiring)?.takeUnretainedValue()
    }

    /// The calling code's context, or nil when no propagation is installed
    /// (then nothing is captured and nothing restored).
    @inline(__always)
    static func capture() -> _CapturedContext? {
        guard let hook = installed else { return nil }
        return hook.capture()
    }

    /// The calling code's context, captured by this propagation.
    func capture() -> _CapturedContext {
        _CapturedContext(hook: self, value: currentContext())
    }

    func run(_ value: (any Sendable)?, _ body: () -> Void) {
        withContext(value, body)
    }
}
