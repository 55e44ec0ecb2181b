// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Taking: operators that end a signal early or keep only some of its values by
// position (first, last).
// This file: ReactiveCocoa's `takeUntilReplacement`.

// MARK: - takeUntilReplacement

/// Forwards the signal until `replacement` sends any event, then forwards
/// `replacement` instead (RAC's `takeUntilReplacement:`).
///
/// Marble: `"a-b-c-d-|"` with replacement `"---x-y-|"` → `"a-b-x-y-|"`
///
/// As in ReactiveCocoa, the signal's own completion does not complete the
/// result (the replacement may still come); its error does fail it.
///
/// - Parameters:
///   - replacement: subscribed first; from its first event (value, error or
///     completion) on, the signal is disposed and only its events are
///     forwarded.
/// - Returns: a function from a signal to the replaced signal.
///
/// - Threading: events are delivered on the thread of the input that sent
///   them, one at a time.
/// - Termination: the replacement's error or completion; or the signal's
///   error before the replacement's first event.
/// - Disposal: the signal is disposed at the replacement's first event;
///   termination or disposal disposes the replacement, then the signal.
public func takeUntilReplacement<T, E>(_ replacement: Signal<T, E>) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let state = _ReplacementState<T, E>(downstream: subscriber)
            let replacementHandle = replacement._start(_ReplacementSink(state: state, isReplacement: true))
            state.setSource(signal._start(_ReplacementSink(state: state, isReplacement: false)))
            return ActionDisposable { [weak state] in  // weak: see `_WeakDisposable`
                replacementHandle.dispose()
                state?.disposeSource()
            }
        }._derived("takeUntilReplacement", from: signal, arguments: replacement.description)
    }
}

/// `@unchecked Sendable`: `replaced`, `sourceDisposed` and `source` are
/// guarded by `_LockedState`; `delivery` is thread-safe.
final class _ReplacementState<T, E>: @unchecked Sendable {
    private struct State {
        var replaced = false
        var sourceDisposed = false
        var source: (any Disposable)?
    }

    let delivery: _SerialDelivery<T, E>
    private let state = _LockedState(State())

    init(downstream: Subscriber<T, E>) {
        delivery = _SerialDelivery(downstream: downstream)
    }

    func setSource(_ handle: any Disposable) {
        let disposeNow = state.withLock { state -> Bool in
            if state.sourceDisposed { return true }
            state.source = handle
            return false
        }
        if disposeNow { handle.dispose() }
    }

    func disposeSource() {
        let handle = state.withLock { state -> (any Disposable)? in
            state.sourceDisposed = true
            return state.source.take()
        }
        handle?.dispose()
    }

    /// An event of the signal (`isReplacement == false`) or of the
    /// replacement.
    func send(_ event: _QueuedEvent<T, E>, isReplacement: Bool) {
        let context = _ContextHook.capture()
        let pushed = state.withLock { state -> (first: Bool, mustDrain: Bool)? in
            if !isReplacement {
                var dropped = state.replaced
                // The signal's own completion never ends the result.
                if case .completed = event { dropped = true }
                if dropped { return nil }
            }
            let first = isReplacement && !state.replaced
            if first { state.replaced = true }
            return (first, delivery.push(event, .pusher(context)))
        }
        guard let (first, mustDrain) = pushed else { return }
        if first { disposeSource() }
        if mustDrain { delivery.drain() }
    }
}

struct _ReplacementSink<T, E>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let state: _ReplacementState<T, E>
    let isReplacement: Bool

    func putNext(_ value: T, from _: _SubscriptionBase) { state.send(.next(value), isReplacement: isReplacement) }
    func putError(_ error: E) { state.send(.error(error), isReplacement: isReplacement) }
    func putCompletion() { state.send(.completed, isReplacement: isReplacement) }
}
