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

/// What a stage function receives with each value besides the value: the
/// downstream subscription's probe (checked before every hand-off) and the
/// downstream subscriber, unretained, which the last stage delivers to.
/// Passed in registers, so that no stage captures them: a middle stage's
/// closure captures its function and the next stage's (a 56-byte block),
/// the last stage's only its function (no block when that function
/// captures nothing), and no closure wraps the downstream subscriber
/// (W22's five `map`s in Benchmarks/README.md).
///
/// Valid during the call: the source subscription's sink holds the
/// subscriber, which holds the downstream subscription.
@usableFromInline
struct _StageContext {
    @usableFromInline let terminal: _TerminationProbe
    @usableFromInline let downstream: UnsafeRawPointer

    @inlinable @inline(__always)
    init(terminal: _TerminationProbe, downstream: UnsafeRawPointer) {
        self.terminal = terminal
        self.downstream = downstream
    }

    /// Delivers `value` to the downstream subscriber, whose type the last
    /// stage knows.
    @inlinable @inline(__always)
    func deliver<R, E>(_ value: R, as _: E.Type) {
        Unmanaged<Subscriber<R, E>>.fromOpaque(downstream)._withUnsafeGuaranteedRef { $0.putNext(value) }
    }
}

/// A stage's function for one subscription: takes a value with the
/// subscription's context.
@usableFromInline
typealias _StageFunction<T> = @Sendable (T, _StageContext) -> Void

/// A stage: builds this stage's function per subscription, as a middle
/// stage that hands its values to the next stage's function, or as the last
/// stage, which delivers to the downstream subscriber. Two builders rather
/// than an optional `next`: an optional function converted in generic code
/// is re-abstracted through a thunk, a block per stage and subscription.
@usableFromInline
struct _SignalStage<T, R>: Sendable {
    @usableFromInline let feeding: @Sendable (_ next: @escaping _StageFunction<R>) -> _StageFunction<T>
    @usableFromInline let delivering: @Sendable () -> _StageFunction<T>

    // Not `@inlinable`: the closures `map` and `filter` pass are then
    // emitted at this type's generic abstraction, as they are stored and
    // called. Specialised, the initialiser would store re-abstraction thunks
    // around them, built per subscription.
    @usableFromInline
    init(
        feeding: @escaping @Sendable (_ next: @escaping _StageFunction<R>) -> _StageFunction<T>,
        delivering: @escaping @Sendable () -> _StageFunction<T>
    ) {
        self.feeding = feeding
        self.delivering = delivering
    }

    /// This stage, then `stage`.
    func then<U>(_ stage: _SignalStage<R, U>) -> _SignalStage<T, U> {
        let feeding = self.feeding
        return _SignalStage<T, U>(
            feeding: { next in feeding(stage.feeding(next)) },
            delivering: { feeding(stage.delivering()) }
        )
    }
}

/// A `map` or `filter` signal: its original source and how to build the
/// stage functions from it. The generic method hides the source's element
/// type.
@usableFromInline
class _FusedStagesBase<T, E>: _SignalComposition<T, E>, @unchecked Sendable {
    /// A signal that runs these stages, then `stage`.
    @usableFromInline
    func appending<R>(_ stage: _SignalStage<T, R>) -> Signal<R, E> {
        fatalError("_FusedStagesBase.appending is abstract")
    }
}

/// `@unchecked Sendable`: immutable.
final class _FusedStages<S, T, E>: _FusedStagesBase<T, E>, @unchecked Sendable {
    let source: Signal<S, E>
    let build: _SignalStage<S, T>

    init(source: Signal<S, E>, build: _SignalStage<S, T>) {
        self.source = source
        self.build = build
    }

    override func appending<R>(_ stage: _SignalStage<T, R>) -> Signal<R, E> {
        _fusedSignal(source: source, build: build.then(stage))
    }
}

/// `stage` applied to `signal`: fused with `signal`'s stages when it is a
/// `map` or `filter` signal.
@usableFromInline
func _fusing<T, R, E>(_ signal: Signal<T, E>, _ stage: _SignalStage<T, R>) -> Signal<R, E> {
    // `_structural`: a debug name (Debugging/SignalNaming.swift) wraps the
    // stages without hiding them.
    if let stages = signal.composition?._structural as? _FusedStagesBase<T, E> {
        return stages.appending(stage)
    }
    return _fusedSignal(source: signal, build: stage)
}

func _fusedSignal<S, T, E>(source: Signal<S, E>, build: _SignalStage<S, T>) -> Signal<T, E> {
    Signal(composition: _FusedStages(source: source, build: build)) { subscriber in
        source._start(_FusedSink(first: build.delivering(), downstream: subscriber))
    }
}

/// Feeds the source's values to the first stage's function; errors and
/// completion go straight to the downstream subscriber. Stored in the
/// source subscription's tail.
struct _FusedSink<S, T, E>: _InlineSink {
    let first: (S, _StageContext) -> Void
    let downstream: Subscriber<T, E>
    var downstreamSubscription: _SubscriptionBase? { downstream._subscriptionBase }

    init(first: @escaping _StageFunction<S>, downstream: Subscriber<T, E>) {
        self.first = first
        self.downstream = downstream
    }

    @inline(__always) func putNext(_ value: S, from _: _SubscriptionBase) {
        let terminal = downstream.subscription._withUnsafeGuaranteedRef { $0.terminationProbe }
        let subscriber = UnsafeRawPointer(Unmanaged.passUnretained(downstream).toOpaque())
        first(value, _StageContext(terminal: terminal, downstream: subscriber))
    }
    func putError(_ error: E) { downstream.putError(error) }
    func putCompletion() { downstream.putCompletion() }
}
