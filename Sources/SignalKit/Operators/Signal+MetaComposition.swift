// How a `then` or `deferred` signal was built (`Signal.composition`), so that
// `then` can subscribe a chain of any length, nested `then`s and recursive
// `deferred { … |> then(…) }` loops included, from one loop in constant stack
// (DECISIONS §3.1) instead of one nested generator per segment.

/// How a signal was built, when that lets `then` flatten the nesting:
/// `_ThenChain` for a `then` signal, `_DeferredComposition` for `deferred`.
///
/// `@unchecked Sendable`: immutable after init (`_ThenChain.previous` is
/// cleared only by its own `deinit`).
@usableFromInline
class _SignalComposition<T, E>: @unchecked Sendable {
    init() {}
}

/// A `then` signal: the last node of a persistent singly linked list of
/// segments, newest first. `a |> then(b) |> then(c)` is `c → b → a`; applying
/// `then(d)` to it adds one node that shares the rest, so a chain of n
/// segments is built in O(n) time and memory whichever way it is folded.
final class _ThenChain<T, E>: _SignalComposition<T, E>, @unchecked Sendable {
    /// The segments before this one; nil for the first one. A `var` only so
    /// that `deinit` can unlink the list iteratively.
    private var previous: _ThenChain<T, E>?
    let segment: Signal<T, E>

    init(previous: _ThenChain<T, E>?, segment: Signal<T, E>) {
        self.previous = previous
        self.segment = segment
    }

    /// `signal |> then(next)`: extends `signal`'s chain when it is a `then`
    /// signal, else starts a chain `[signal, next]`.
    static func appending(_ next: Signal<T, E>, to signal: Signal<T, E>) -> _ThenChain<T, E> {
        let head = (signal.composition as? _ThenChain<T, E>) ?? _ThenChain(previous: nil, segment: signal)
        return _ThenChain(previous: head, segment: next)
    }

    /// Pushes the segments onto `stack` so that the first segment ends on top
    /// (the last element).
    func pushSegments(onto stack: inout [Signal<T, E>]) {
        var node: _ThenChain<T, E>? = self
        while let current = node {
            stack.append(current.segment)
            node = current.previous
        }
    }

    deinit {
        // Releasing a million-node list recursively would overflow the stack:
        // unlink the nodes nobody else holds one by one.
        var next = previous
        previous = nil
        while var node = next {
            next = nil
            guard isKnownUniquelyReferenced(&node) else { break }
            next = node.previous
            node.previous = nil
        }
    }
}

/// A `deferred` signal: the factory it calls at each subscription.
final class _DeferredComposition<T, E>: _SignalComposition<T, E>, @unchecked Sendable {
    let factory: () -> Signal<T, E>

    init(factory: @escaping () -> Signal<T, E>) {
        self.factory = factory
    }
}
