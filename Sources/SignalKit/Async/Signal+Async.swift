// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Bridges from signals to Swift concurrency.
//
// * `get()`: SwiftSignalKit's accessor, kept as it is: the first value of a
//   `NoError` signal. It never returns if the signal completes without a
//   value or the task is cancelled (it has nothing to return then).
// * `first()`: the accessor to use: the first value, or a thrown
//   `SignalAwaitError` on error, on completion without a value and on task
//   cancellation. It always returns or throws.
// * `values`: an `AsyncSequence` of the values.
//
// In every case the subscription is disposed once it is no longer needed:
// after the first value, on termination, or when the task is cancelled.

/// Why awaiting a signal did not produce a value.
///
/// `E` is `Sendable` because an `Error` is: the error is thrown from the
/// signal's thread into the awaiting task.
public enum SignalAwaitError<E: Sendable>: Error {
    /// The signal failed.
    case error(E)
    /// The signal completed without sending a value.
    case completedWithoutValue
    /// The awaiting task was cancelled; the subscription was disposed.
    case cancelled
    /// The subscription ended without any event: its source released the
    /// subscriber without completing.
    case endedWithoutEvent
}

extension Signal where T: Sendable, E == NoError {
    /// The first value (SwiftSignalKit's `get()`); prefer ``first()``.
    ///
    /// SwiftSignalKit's signature cannot report anything but a value, and
    /// its `get()` waits forever when there is none. SignalKit's never
    /// hangs: when the task is cancelled before the first value (or already
    /// was when `get()` is called: nothing is subscribed then), the
    /// subscription is disposed and `get()` stops the process with a message
    /// naming the cause; so it does when the signal completes without a
    /// value, or its source drops the subscription without an event. Use
    /// ``first()`` wherever that can happen: it throws
    /// ``SignalAwaitError/cancelled``, ``SignalAwaitError/completedWithoutValue``
    /// or ``SignalAwaitError/endedWithoutEvent`` instead.
    public func get() async -> T {
        switch await _awaitFirst() {
        case .value(let value):
            return value
        case .error:
            preconditionFailure("SignalKit: a signal of NoError failed")
        case .completed:
            fatalError(
                "Signal.get(): the signal completed without a value, and get() cannot return without one; use first(), which throws SignalAwaitError.completedWithoutValue"
            )
        case .cancelled:
            fatalError(
                "Signal.get(): the task was cancelled before the signal sent a value (the subscription was disposed), and get() cannot return without one; use first(), which throws SignalAwaitError.cancelled"
            )
        case .ended:
            fatalError(
                "Signal.get(): the signal's source dropped the subscription without sending anything, and get() cannot return without a value; use first(), which throws SignalAwaitError.endedWithoutEvent"
            )
        }
    }
}

extension Signal where T: Sendable, E: Sendable {
    /// The first value.
    ///
    /// - Throws: `SignalAwaitError.error` if the signal fails first,
    ///   `.completedWithoutValue` if it completes first, `.cancelled` if the
    ///   task is cancelled first (the subscription is then disposed), and
    ///   `.endedWithoutEvent` if the source drops the subscription silently.
    public func first() async throws(SignalAwaitError<E>) -> T {
        switch await _awaitFirst() {
        case .value(let value): return value
        case .error(let error): throw .error(error)
        case .completed: throw .completedWithoutValue
        case .cancelled: throw .cancelled
        case .ended: throw .endedWithoutEvent
        }
    }

    /// The signal's values as an `AsyncSequence`.
    ///
    /// Each iteration subscribes when it first asks for a value and buffers
    /// values the consumer has not taken yet (without limit). The iteration
    /// ends (`nil`) when the signal completes or the task is cancelled, and
    /// throws `SignalAwaitError.error` when the signal fails. Ending,
    /// failing, cancelling or dropping the iterator disposes the subscription.
    @_disfavoredOverload  // for `E == NoError`, the non-throwing `values` wins
    public var values: SignalValues<T, E> {
        SignalValues(signal: self, policy: .unbounded)
    }

    /// The signal's values as an `AsyncSequence` whose buffer of values not
    /// yet taken follows `bufferingPolicy` (as `AsyncStream`'s): unbounded,
    /// or at most `n` values, dropping the newest arrival (`bufferingOldest`)
    /// or the oldest buffered value (`bufferingNewest`) when full. A value
    /// that arrives while the consumer waits in `next()` is always taken.
    @_disfavoredOverload
    public func values(bufferingPolicy: SignalBufferingPolicy) -> SignalValues<T, E> {
        SignalValues(signal: self, policy: bufferingPolicy)
    }

    /// Subscribes and waits for the first event (or cancellation).
    ///
    /// Only the subscription holds the sink, so that the sink's release
    /// tells the silent end of a subscription (see `_AwaitFirstSink.deinit`).
    func _awaitFirst() async -> _AwaitOutcome<T, E> {
        let handle = MetaDisposable()
        let waiter = _AwaitWaiter<T, E>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<_AwaitOutcome<T, E>, Never>) in
                if waiter.install(continuation) {
                    handle.set(self._start(_AwaitFirstSink<T, E>(handle: handle, waiter: waiter)))
                }
            }
        } onCancel: {
            waiter.complete(.cancelled)
            handle.dispose()
        }
    }
}

enum _AwaitOutcome<T: Sendable, E: Sendable>: Sendable {
    case value(T)
    case error(E)
    case completed
    case cancelled
    case ended
}

/// Meets the continuation and the outcome, whichever comes first.
final class _AwaitWaiter<T: Sendable, E: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable`: both fields are guarded by `_LockedState`.
    private struct State {
        var continuation: CheckedContinuation<_AwaitOutcome<T, E>, Never>?
        var outcome: _AwaitOutcome<T, E>?
    }

    private let state = _LockedState(State())

    init() {}

    /// Stores the continuation; returns false (and resumes it) if the
    /// outcome is already known (cancelled before subscribing).
    func install(_ continuation: CheckedContinuation<_AwaitOutcome<T, E>, Never>) -> Bool {
        let known = state.withLock { state -> _AwaitOutcome<T, E>? in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
        }
        guard let known else { return true }
        continuation.resume(returning: known)
        return false
    }

    /// Records the outcome; the first one wins.
    func complete(_ outcome: _AwaitOutcome<T, E>) {
        let continuation = state.withLock { state -> CheckedContinuation<_AwaitOutcome<T, E>, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = outcome
            return state.continuation.take()
        }
        continuation?.resume(returning: outcome)
    }
}

/// Reports the first event exactly once, then disposes the subscription.
/// Stored in the subscription's tail: its `deinit` runs when the
/// subscription destroys it (the subscriber died).
struct _AwaitFirstSink<T: Sendable, E: Sendable>: _InlineSink, ~Copyable {
    // The waiter is told once, guarded by `reported`.
    private let handle: MetaDisposable
    private let waiter: _AwaitWaiter<T, E>
    private let reported = _OnceFlag()

    init(handle: MetaDisposable, waiter: _AwaitWaiter<T, E>) {
        self.handle = handle
        self.waiter = waiter
    }

    func finish(_ outcome: _AwaitOutcome<T, E>) {
        guard reported.set() else { return }
        waiter.complete(outcome)
        handle.dispose()
    }

    func putNext(_ value: T, from _: _SubscriptionBase) { finish(.value(value)) }
    func putError(_ error: E) { finish(.error(error)) }
    func putCompletion() { finish(.completed) }

    deinit {
        // The source released its subscriber without any event.
        finish(.ended)
    }
}

extension Signal where T: Sendable, E == NoError {
    /// The signal's values as a non-throwing `AsyncSequence`: a signal that
    /// cannot fail needs no `try`. The iteration ends (`nil`) when the signal
    /// completes or the task is cancelled; ending, cancelling or dropping
    /// the iterator disposes the subscription. Values the consumer has not
    /// taken yet are buffered without limit.
    ///
    /// ```swift
    /// for await tick in ticks.values { print(tick) }
    /// ```
    public var values: SignalNonFailingValues<T> {
        SignalNonFailingValues(values: SignalValues(signal: self, policy: .unbounded))
    }

    /// `values` with the given buffering policy (see
    /// ``SignalBufferingPolicy``).
    public func values(bufferingPolicy: SignalBufferingPolicy) -> SignalNonFailingValues<T> {
        SignalNonFailingValues(values: SignalValues(signal: self, policy: bufferingPolicy))
    }
}

/// The values of a signal that cannot fail (`E == NoError`), as a
/// non-throwing `AsyncSequence` (see `Signal.values`).
public struct SignalNonFailingValues<T: Sendable>: AsyncSequence, Sendable {
    public typealias Element = T
    public typealias Failure = Never

    let values: SignalValues<T, NoError>

    public func makeAsyncIterator() -> Iterator {
        Iterator(base: values.makeAsyncIterator())
    }

    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = T
        public typealias Failure = Never

        private var base: SignalValues<T, NoError>.Iterator

        init(base: SignalValues<T, NoError>.Iterator) {
            self.base = base
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async -> T? {
            do {
                return try await base.next(isolation: actor)
            } catch {
                // Only `.error` is thrown, and a NoError signal cannot fail.
                return nil
            }
        }

        public mutating func next() async -> T? {
            await next(isolation: nil)
        }
    }
}

/// How many values an iteration of `Signal.values(bufferingPolicy:)` keeps
/// while its consumer is busy (as `AsyncStream`'s buffering policy).
public enum SignalBufferingPolicy: Sendable, Hashable {
    /// Keeps every value.
    case unbounded
    /// Keeps at most `n` values; a value arriving when full is dropped.
    case bufferingOldest(Int)
    /// Keeps at most `n` values; when full, the oldest kept value is dropped
    /// to make room.
    case bufferingNewest(Int)
}

/// The values of a signal as an `AsyncSequence` (see `Signal.values`).
public struct SignalValues<T: Sendable, E: Sendable>: AsyncSequence, Sendable {
    public typealias Element = T
    public typealias Failure = SignalAwaitError<E>

    let signal: Signal<T, E>
    let policy: SignalBufferingPolicy

    public func makeAsyncIterator() -> Iterator {
        Iterator(signal: signal, policy: policy)
    }

    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = T
        public typealias Failure = SignalAwaitError<E>

        private let signal: Signal<T, E>
        private let policy: SignalBufferingPolicy
        private var buffer: _AsyncValueBuffer<T, E>?

        init(signal: Signal<T, E>, policy: SignalBufferingPolicy) {
            self.signal = signal
            self.policy = policy
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(SignalAwaitError<E>) -> T? {
            let buffer: _AsyncValueBuffer<T, E>
            if let existing = self.buffer {
                buffer = existing
            } else {
                buffer = _AsyncValueBuffer(signal: signal, policy: policy)
                self.buffer = buffer
            }
            return try await buffer.next()
        }

        public mutating func next() async throws(SignalAwaitError<E>) -> T? {
            try await next(isolation: nil)
        }
    }
}

/// The subscription behind one `SignalValues` iteration.
final class _AsyncValueBuffer<T: Sendable, E: Sendable>: @unchecked Sendable {
    // `@unchecked Sendable`: the mutable fields are in `state`, guarded by
    // `_LockedState`; the rest is immutable or thread-safe.
    fileprivate enum Terminal {
        case completed
        case failed(E)
        case cancelled
    }

    private struct State {
        /// Values not yet returned by `next()` from `pendingStart` on; the
        /// slots before it are nil (their values were moved out).
        var pending: [T?] = []
        var pendingStart = 0
        var terminal: Terminal?
        var terminalDelivered = false
        var waiter: CheckedContinuation<Void, Never>?
        var started = false

        var hasPending: Bool { pendingStart < pending.count }

        /// Takes the waiting consumer, to resume after unlocking.
        mutating func wake() -> CheckedContinuation<Void, Never>? {
            waiter.take()
        }

        /// Moves the oldest pending value out (none is left behind in the
        /// array: emptying it releases nothing).
        mutating func popFirst() -> T? {
            let value = pending[pendingStart].take()
            pendingStart += 1
            if pendingStart == pending.count {
                pending.removeAll(keepingCapacity: true)
                pendingStart = 0
            }
            return value
        }
    }

    /// What `next()` does after unlocking.
    private enum Step {
        case start
        case value(T)
        case terminal(Terminal, first: Bool)
        case wait
    }

    private let state = _LockedState(State())
    private let handle = MetaDisposable()
    private let signal: Signal<T, E>
    private let policy: SignalBufferingPolicy

    init(signal: Signal<T, E>, policy: SignalBufferingPolicy) {
        self.signal = signal
        self.policy = policy
    }

    deinit {
        handle.dispose()
    }

    func next() async throws(SignalAwaitError<E>) -> T? {
        while true {
            let step = state.withLock { state -> Step in
                if !state.started {
                    state.started = true
                    return .start
                }
                if state.hasPending {
                    // Moved out: the buffer keeps no reference to a value it
                    // returned.
                    return .value(state.popFirst()!)
                }
                if let terminal = state.terminal {
                    defer { state.terminalDelivered = true }
                    return .terminal(terminal, first: !state.terminalDelivered)
                }
                return .wait
            }
            switch step {
            case .start:
                // A pinned sink: the buffer lives as long as the iterator.
                handle.set(signal._start(_WeakSink(self)))
                continue
            case .value(let value):
                return value
            case .terminal(.failed(let error), first: true):
                throw .error(error)
            case .terminal:
                return nil
            case .wait:
                break
            }
            if Task.isCancelled {
                finish(.cancelled)
                continue
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = state.withLock { state -> Bool in
                        if state.hasPending || state.terminal != nil { return true }
                        state.waiter = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                self.finish(.cancelled)
            }
        }
    }

    fileprivate func receive(_ value: T) {
        var dropped: T?
        let policy = self.policy
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.terminal == nil else { return nil }
            let buffered = state.pending.count - state.pendingStart
            switch policy {
            case .unbounded:
                state.pending.append(value)
            case .bufferingOldest(let limit):
                // A waiting consumer always gets the value.
                if buffered < max(limit, state.waiter == nil ? 0 : 1) {
                    state.pending.append(value)
                } else {
                    dropped = value
                }
            case .bufferingNewest(let limit):
                state.pending.append(value)
                if buffered + 1 > max(limit, state.waiter == nil ? 0 : 1) {
                    dropped = state.popFirst()
                }
            }
            return state.wake()
        }
        // Released here, outside the lock: a deinit may send to the signal.
        withExtendedLifetime(dropped) {}
        waiter?.resume()
    }

    fileprivate func finish(_ outcome: Terminal) {
        var dropped: [T?] = []
        let (first, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Void, Never>?) in
            guard state.terminal == nil else { return (false, nil) }
            state.terminal = outcome
            if case .cancelled = outcome {
                swap(&dropped, &state.pending)
                state.pendingStart = 0
            }
            return (true, state.wake())
        }
        guard first else { return }
        dropped = []  // released outside the lock: a deinit may send to the signal
        waiter?.resume()
        handle.dispose()
    }
}

/// Forwards to the buffer without keeping it alive.
private struct _WeakSink<T: Sendable, E: Sendable>: _InlineSink {
    /// Read only (atomically, as every weak reference).
    weak var buffer: _AsyncValueBuffer<T, E>?

    init(_ buffer: _AsyncValueBuffer<T, E>) {
        self.buffer = buffer
    }

    func putNext(_ value: T, from _: _SubscriptionBase) { buffer?.receive(value) }
    func putError(_ error: E) { buffer?.finish(.failed(error)) }
    func putCompletion() { buffer?.finish(.completed) }
}
