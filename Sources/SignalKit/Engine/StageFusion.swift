// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// `map` and `filter` applied to a `map` or `filter` signal fuse with it: the
// result subscribes the original source once, and each value runs through
// the stages' functions, which call each other directly, instead of through
// one subscription per operator (a Subscriber and its state, then a
// terminated-flag check and a virtual call per value).
// `source |> map |> filter |> map` costs one subscription, not three (W2 in
// Benchmarks/README.md).
//
// The stage functions are built per subscription by closures written in the
// `@inlinable` `map` and `filter`, so they are specialised in the client
// module for its types (generic code compiled in SignalKit would copy every
// value through value-witness calls).
//
// What stays the same, and why:
// * Values, errors and completions reach the same callbacks in the same
//   order. Errors and completions pass every stage unchanged, so they go
//   straight to the downstream subscriber.
// * Before a stage hands a value to the next stage's function, it checks
//   that the downstream subscription has not terminated, as the nested
//   subscription in between would: a `map` function that disposes the
//   subscription stops the values there, and no later function runs.
// * Disposal: the downstream handle disposes the source subscription, as the
//   chain of nested handles did (only the source's disposable is
//   observable). A source that releases its subscriber ends the whole chain
//   silently, as before.
// * Subscription side effects: `map` and `filter` have none of their own.

/// A stage: given the next stage's function and the downstream
/// subscription's probe, builds this stage's function.
@usableFromInline
typealias _SignalStage<T, R> =
    @Sendable (
        _ next: @escaping @Sendable (R) -> Void,
        _ terminal: _TerminationProbe
    ) -> @Sendable (T) -> Void

/// A `map` or `filter` signal: its original source and how to build the
/// stage functions from it. The generic method hides the source's element
/// type.
@usableFromInline
class _FusedStagesBase<T, E>: _SignalComposition<T, E>, @unchecked Sendable {
    /// A signal that runs these stages, then `stage`.
    @usableFromInline
    func appending<R>(_ stage: @escaping _SignalStage<T, R>) -> Signal<R, E> {
        fatalError("_FusedStagesBase.appending is abstract")
    }
}

/// `@unchecked Sendable`: immutable.
final class _FusedStages<S, T, E>: _FusedStagesBase<T, E>, @unchecked Sendable {
    let source: Signal<S, E>
    let build: _SignalStage<S, T>

    init(source: Signal<S, E>, build: @escaping _SignalStage<S, T>) {
        self.source = source
        self.build = build
    }

    override func appending<R>(_ stage: @escaping _SignalStage<T, R>) -> Signal<R, E> {
        let build = self.build
        return _fusedSignal(source: source) { next, terminal in build(stage(next, terminal), terminal) }
    }
}

/// `stage` applied to `signal`: fused with `signal`'s stages when it is a
/// `map` or `filter` signal.
@usableFromInline
func _fusing<T, R, E>(_ signal: Signal<T, E>, _ stage: @escaping _SignalStage<T, R>) -> Signal<R, E> {
    // `_structural`: a debug name (Debugging/SignalNaming.swift) wraps the
    // stages without hiding them.
    if let stages = signal.composition?._structural as? _FusedStagesBase<T, E> {
        return stages.appending(stage)
    }
    return _fusedSignal(source: signal, build: stage)
}

func _fusedSignal<S, T, E>(source: Signal<S, E>, build: @escaping _SignalStage<S, T>) -> Signal<T, E> {
    Signal(composition: _FusedStages(source: source, build: build)) { subscriber in
        let terminal = subscriber.subscription.takeUnretainedValue().terminationProbe
        let first = build({ subscriber.putNext($0) }, terminal)
        return source._start(_FusedSink(first: first, downstream: subscriber))
    }
}

/// Feeds the source's values to the first stage's function; errors and
/// completion go straight to the downstream subscriber. Stored in the
/// source subscription's tail.
struct _FusedSink<S, T, E>: _InlineSink {
    let first: (S) -> Void
    let downstream: Subscriber<T, E>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    init(first: @escaping @Sendable (S) -> Void, downstream: Subscriber<T, E>) {
        self.first = first
        self.downstream = downstream
    }

    @inline(__always) func putNext(_ value: S, from _: _SubscriptionBase) { first(value) }
    func putError(_ error: E) { downstream.putError(error) }
    func putCompletion() { downstream.putCompletion() }
}
