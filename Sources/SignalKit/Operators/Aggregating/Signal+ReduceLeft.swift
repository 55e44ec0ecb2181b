// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Aggregating: operators that fold values into accumulated results.
//
// This file: SwiftSignalKit's `reduceLeft`: folding a signal into one value,
// optionally with intermediate emissions or with an asynchronous fold step.

/// Whether a step of `reduceLeft(_:generator:)` emits a value.
///
/// SwiftSignalKit's `Passthrough`.
public enum Passthrough<T> {
    /// Emit nothing.
    case None
    /// Emit the value.
    case Some(T)
}

extension Passthrough: Sendable where T: Sendable {}

extension Passthrough: Equatable where T: Equatable {}

/// Folds the values with `f`, starting from `value`, and emits the result
/// when the upstream completes.
///
/// SwiftSignalKit's `reduceLeft(value:f:)`.
///
/// Marble: `"1-2-3-|"` → (`value: 0, f: +`) `"------(6|)"`; `"--|"` →
/// `"--(0|)"`
///
/// ```swift
/// let sum = numbers |> reduceLeft(value: 0, f: { $0 + $1 })
/// ```
///
/// - Parameters:
///   - value: the seed, emitted as is if the upstream completes without a
///     value.
///   - f: `(accumulator, value) -> accumulator`, called once per value,
///     outside any lock.
/// - Returns: a function from a signal to a signal of one value.
///
/// - Threading: no thread hop; the result is emitted on the thread that
///   completes. The source must deliver serially.
/// - Termination: completion emits the accumulator then completes; an error
///   is forwarded without emitting.
/// - Disposal: returns the upstream handle.
public func reduceLeft<T: Sendable, E>(value: T, f: @escaping @Sendable (T, T) -> T) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            signal._start(
                _ReduceLeftSink(downstream: subscriber, seed: value, combine: { accumulator, next, _ in f(accumulator, next) })
            )
        }._derived("reduceLeft", from: signal, arguments: _debugArgument(value))
    }
}

/// Folds the values with `f`, which may also emit intermediate values, and
/// emits the result when the upstream completes.
///
/// SwiftSignalKit's `reduceLeft(value:f:)` with an emit callback.
///
/// Marble: `"1-2-|"` → (emitting each partial sum) `"1-3-(3|)"`
///
/// - Parameters:
///   - value: the seed.
///   - f: `(accumulator, value, emit) -> accumulator`; `emit` delivers a
///     value downstream synchronously (it must not escape `f`).
/// - Returns: a function from a signal to the folded signal.
///
/// - Threading: no thread hop; `f` and its emissions run on the delivering
///   thread, outside any lock.
/// - Termination: completion emits the accumulator then completes; an error
///   is forwarded without emitting.
/// - Disposal: returns the upstream handle.
public func reduceLeft<T: Sendable, E>(value: T, f: @escaping @Sendable (T, T, (T) -> Void) -> T) -> (Signal<T, E>) -> Signal<
    T, E
> {
    _lift("reduceLeft", arguments: _debugArgument(value)) { subscriber in
        _ReduceLeftSink(downstream: subscriber, seed: value, combine: f)
    }
}

/// A sequential asynchronous fold: each value is folded by a signal that
/// `generator` returns, one at a time.
///
/// Marble: `"1-2-|"` → (each step emits its sum) `"1-3-(3|)"`
///
/// For each upstream value `v`, subscribes `generator(current, v)`. Every
/// `(state, passthrough)` that signal emits sets `current = state` and, for
/// `.Some(x)`, emits `x`. Values that arrive while a generator signal runs
/// are queued and processed in order when it completes, each with the
/// `current` of the moment it is dequeued. When the upstream completes,
/// `current` is emitted and the signal completes, at once if no generator
/// signal is running or queued, otherwise after the last one completes.
///
/// Generator signals that complete synchronously are drained in a loop, not
/// recursively: any number of queued values run in constant stack. (The
/// cost: for such a signal, the previous generator subscription is disposed
/// before the next one is subscribed; for asynchronous ones the next is
/// subscribed first, as in SwiftSignalKit.)
///
/// - Parameters:
///   - value: the seed.
///   - generator: `(current, value) -> Signal<(newCurrent, Passthrough), E>`;
///     called outside any lock.
/// - Returns: a function from a signal to the folded signal.
///
/// - Threading: no thread hop; each generator signal is subscribed on the
///   thread that delivered its value or completed the previous one.
/// - Termination: an error from the upstream or from a generator signal is
///   forwarded at once (queued values are dropped).
/// - Disposal: disposes the current generator subscription, then the
///   upstream; queued values are never started.
public func reduceLeft<T: Sendable, E>(
    _ value: T,
    generator: @escaping @Sendable (T, T) -> Signal<(T, Passthrough<T>), E>
) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let control = _ReduceGeneratorControl()
            let state = _ReduceGeneratorState(downstream: subscriber, seed: value, generator: generator, control: control)
            control.upstream.set(signal._start(_ReduceGeneratorUpstreamSink(state: state)))
            return control
        }._derived("reduceLeft", from: signal, arguments: _debugArgument(value))
    }
}

// MARK: - reduceLeft(value:f:)

struct _ReduceLeftSink<T, E>: _PassThroughSink {
    typealias Input = T
    typealias Output = T
    typealias Failure = E
    let downstream: Subscriber<T, E>
    let combine: (T, T, (T) -> Void) -> T
    let state: _ReduceLeftState<T>

    init(downstream: Subscriber<T, E>, seed: T, combine: @escaping @Sendable (T, T, (T) -> Void) -> T) {
        self.combine = combine
        self.state = _ReduceLeftState(seed)
        self.downstream = downstream
    }

    func putNext(_ value: T, from _: _SubscriptionBase) {
        let downstream = self.downstream
        let accumulated = combine(state.accumulator(), value) { downstream.putNext($0) }
        _ = state.replace(with: accumulated)
    }

    func putCompletion() {
        downstream.putNext(state.accumulator())
        downstream.putCompletion()
    }
}

/// The accumulator of `reduceLeft(value:f:)`, per subscription.
final class _ReduceLeftState<T>: @unchecked Sendable {
    // `@unchecked Sendable`: `value` is guarded by `_LockedState`.
    private let value: _LockedState<T>

    init(_ value: T) {
        self.value = _LockedState(value)
    }

    func accumulator() -> T {
        value.withLock { $0 }
    }

    /// Stores `newValue`; returns the replaced value, released by the caller
    /// outside the lock.
    func replace(with newValue: T) -> T {
        value.withLock { value in
            let replaced = value
            value = newValue
            return replaced
        }
    }
}

// MARK: - reduceLeft(_:generator:)

/// What the returned disposable controls: the current generator
/// subscription (`current`) and the upstream subscription, disposed in that
/// order. It does not reference the fold state, so holding it creates no
/// cycle through the downstream subscriber.
final class _ReduceGeneratorControl: _LoopControl, @unchecked Sendable {
    // `@unchecked Sendable`: as `_LoopControl`; `upstream` is a
    // MetaDisposable (thread-safe).
    let upstream = MetaDisposable()

    override func dispose() {
        super.dispose()
        upstream.dispose()
    }
}

/// The fold: the current value, the queue of values waiting for a generator
/// signal, and the flags of the drain loop.
final class _ReduceGeneratorState<T, E>: @unchecked Sendable {
    // `@unchecked Sendable`: `state` is guarded by `_LockedState`; the `let`s
    // are immutable or thread-safe.
    private struct State {
        var current: T
        /// Values waiting for the running generator signal (released as they
        /// are taken).
        var queued = _FIFO<T>()
        /// A generator signal is running (or its values are being drained).
        var executing = false
        var upstreamCompleted = false
        /// Running: the drain loop is inside `_start` of a generator signal;
        /// due: that signal completed before `_start` returned.
        var gate = _RunAgainGate()

        /// After a generator signal completed: dequeues the next value
        /// (returns true), or goes idle and, if the upstream has completed,
        /// hands out the result (returns false). `disposed`: the control's
        /// flag, read under the lock.
        mutating func advance(disposed: Bool, next: inout T?, result: inout T?) -> Bool {
            if disposed {
                return false
            }
            if let value = queued.popFirst() {
                next = value
                return true
            }
            executing = false
            if upstreamCompleted { result = current }
            return false
        }
    }

    let downstream: Subscriber<T, E>
    let generator: (T, T) -> Signal<(T, Passthrough<T>), E>
    let control: _ReduceGeneratorControl
    private let state: _LockedState<State>

    init(
        downstream: Subscriber<T, E>,
        seed: T,
        generator: @escaping @Sendable (T, T) -> Signal<(T, Passthrough<T>), E>,
        control: _ReduceGeneratorControl
    ) {
        self.downstream = downstream
        self.state = _LockedState(State(current: seed))
        self.generator = generator
        self.control = control
    }

    // MARK: Upstream events

    func upstreamNext(_ value: T) {
        let startNow = state.withLock { state -> Bool in
            if state.executing {
                state.queued.append(value)
                return false
            }
            state.executing = true
            return true
        }
        if startNow { drain(startingWith: value) }
    }

    func upstreamCompletion() {
        let result = state.withLock { state -> T? in
            state.upstreamCompleted = true
            return state.executing ? nil : state.current
        }
        if let result { finish(with: result) }
    }

    // MARK: Generator events

    func generatorNext(_ step: (T, Passthrough<T>)) {
        // The replaced value is released here, outside the lock.
        _ = replaceCurrent(with: step.0)
        if case .Some(let value) = step.1 {
            downstream.putNext(value)
        }
    }

    func generatorCompletion() {
        var next: T?
        var result: T?
        var continues = false
        state.withLock { state in
            if state.gate.isRunning {
                // The drain loop is still inside `_start`: it continues.
                state.gate.markDue()
                return
            }
            continues = state.advance(disposed: control.isDisposed, next: &next, result: &result)
        }
        if continues, let next {
            drain(startingWith: next)
        } else if let result {
            finish(with: result)
        }
    }

    private func replaceCurrent(with value: T) -> T {
        state.withLock { state in
            let replaced = state.current
            state.current = value
            return replaced
        }
    }

    // MARK: The drain loop

    /// Runs generator signals one after another, starting with `value`, for
    /// as long as they complete synchronously. `executing` is true.
    private func drain(startingWith value: T) {
        var value = value
        while true {
            guard !control.isDisposed else { return }
            let accumulator = state.withLock { state in
                state.gate.restart()
                return state.current
            }
            let step = generator(accumulator, value)
            control.current.set(step._start(_ReduceGeneratorSink(state: self)))
            var next: T?
            var result: T?
            var continues = false
            state.withLock { state in
                // Still running: its completion continues the fold.
                guard state.gate.endTurn() else { return }
                continues = state.advance(disposed: control.isDisposed, next: &next, result: &result)
            }
            if continues, let next {
                value = next
                continue
            }
            if let result { finish(with: result) }
            return
        }
    }

    private func finish(with result: T) {
        downstream.putNext(result)
        downstream.putCompletion()
    }
}

struct _ReduceGeneratorUpstreamSink<T, E>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let state: _ReduceGeneratorState<T, E>

    func putNext(_ value: T, from _: _SubscriptionBase) { state.upstreamNext(value) }
    func putError(_ error: E) { state.downstream.putError(error) }
    func putCompletion() { state.upstreamCompletion() }
}

struct _ReduceGeneratorSink<T, E>: _InlineSink {
    typealias Input = (T, Passthrough<T>)
    typealias Failure = E

    let state: _ReduceGeneratorState<T, E>

    func putNext(_ value: (T, Passthrough<T>), from _: _SubscriptionBase) { state.generatorNext(value) }
    func putError(_ error: E) { state.downstream.putError(error) }
    func putCompletion() { state.generatorCompletion() }
}
