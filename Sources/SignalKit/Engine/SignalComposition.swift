// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// How a `then` or `deferred` signal was built (`Signal.composition`), so that
// `then` can subscribe a chain of any length, nested `then`s and recursive
// `deferred { … |> then(…) }` loops included, from one loop in constant stack
// (a million segments must not grow it) instead of one nested generator per
// segment.

/// How a signal was built, when that lets `then` flatten the nesting:
/// `_ThenChain` for a `then` signal, `_DeferredComposition` for `deferred`.
///
/// `@unchecked Sendable`: immutable after init (`_ThenChain` clears its
/// fields only in its own `deinit`, when nothing else can read them).
@usableFromInline
class _SignalComposition<T, E>: @unchecked Sendable {
    init() {}

    /// The record the stack-safe operators look at: this one, or, for a
    /// debug name (`_DebugComposition`), the record it wraps.
    var _structural: _SignalComposition<T, E>? { self }

    /// The signal's debug name record, if it has one (a `_SignalDebugInfo`,
    /// set by `_DebugComposition` in Debugging/SignalNaming.swift; typed
    /// `AnyObject` here because the engine sits below Debugging).
    var _debugRecord: AnyObject? { nil }
}

/// A `then` signal: the last node of a persistent singly linked list of
/// segments, newest first. `a |> then(b) |> then(c)` is `c → b → a`; applying
/// `then(d)` to it adds one node that shares the rest, so a chain of n
/// segments is built in O(n) time and memory whichever way it is folded.
final class _ThenChain<T, E>: _SignalComposition<T, E>, @unchecked Sendable {
    // `previous` and `segment` are `var`s only so that `deinit` can hand
    // them to `_IterativeRelease`; they never change before.

    /// The segments before this one; nil for the first one.
    private var previous: _ThenChain<T, E>?
    private var segment: Signal<T, E>?

    init(previous: _ThenChain<T, E>?, segment: Signal<T, E>) {
        self.previous = previous
        self.segment = segment
    }

    /// `signal |> then(next)`: extends `signal`'s chain when it is a `then`
    /// signal, else starts a chain `[signal, next]`.
    static func appending(_ next: Signal<T, E>, to signal: Signal<T, E>) -> _ThenChain<T, E> {
        let head = (signal.composition?._structural as? _ThenChain<T, E>) ?? _ThenChain(previous: nil, segment: signal)
        return _ThenChain(previous: head, segment: next)
    }

    /// Pushes the segments onto `stack` so that the first segment ends on top
    /// (the last element).
    func pushSegments(onto stack: inout [Signal<T, E>]) {
        var node: _ThenChain<T, E>? = self
        while let current = node {
            if let segment = current.segment { stack.append(segment) }
            node = current.previous
        }
    }

    deinit {
        // A long list (left fold), or segments that are `then` signals
        // themselves (right fold), would be released recursively and
        // overflow the stack: release them from a loop instead.
        var held: [AnyObject] = []
        if let previous { held.append(previous) }
        if let segment { held.append(segment) }
        previous = nil
        segment = nil
        _IterativeRelease.release(&held)
    }
}

/// A `deferred` signal: the factory it calls at each subscription.
final class _DeferredComposition<T, E>: _SignalComposition<T, E>, @unchecked Sendable {
    let factory: () -> Signal<T, E>

    init(factory: @escaping @Sendable () -> Signal<T, E>) {
        self.factory = factory
    }
}
