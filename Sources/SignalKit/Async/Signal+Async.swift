// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Bridges from signals to Swift concurrency.
//
// * `get()`: SwiftSignalKit's accessor, kept as it is: the first value of a
//   `NoError` signal. It never returns if the signal completes without a
//   value or the task is cancelled (it has nothing to return then).
// * `first()`: the accessor to use: the first value, or a thrown
//   `SignalAwaitError` on error, on completion without a value and on task
//   cancellation. It always returns or throws.
// * `values`: an `AsyncSequence` of the values; `values(buffer:)` bounds
//   the values waiting for the consumer with a `SignalBuffer` policy (the
//   buffer itself is in ValuesBuffer.swift).
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
            preconditionFailure("SignalKit: a signal of NoError failed")  // invariant
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
    /// values the consumer has not taken yet (without limit; see
    /// `values(buffer:)` to bound them). The iteration ends (`nil`) when the
    /// signal completes or the task is cancelled, and throws
    /// `SignalAwaitError.error` when the signal fails. Ending, failing,
    /// cancelling or dropping the iterator disposes the subscription.
    ///
    /// **Cancellation:** once the task is cancelled, `next()` returns nil,
    /// also while values wait in the buffer (they are released), and the
    /// subscription is disposed. An iteration whose task is cancelled before
    /// its first `next()` subscribes nothing.
    @_disfavoredOverload  // for `E == NoError`, the non-throwing `values` wins
    public var values: SignalValues<T, E> {
        SignalValues(signal: self, policy: .unbounded, name: "")
    }

    /// The signal's values as an `AsyncSequence` whose buffer of values not
    /// yet taken follows `buffer`.
    ///
    /// The rules of ``SignalBuffer`` hold, with the consuming task as the
    /// consumer: it takes one value per `next()`, so every value not yet
    /// returned counts towards the limit.
    ///
    /// * A value that arrives while the consumer waits in `next()` is always
    ///   taken, whatever the policy (it is never dropped, and never waits for
    ///   room).
    /// * ``SignalBuffer/droppingOldest(beyond:)``,
    ///   ``SignalBuffer/droppingNewest(beyond:)``, ``SignalBuffer/latest``:
    ///   the consumer sees the values the policy keeps, in order.
    /// * ``SignalBuffer/failing(beyond:with:)``: one value more than the limit
    ///   ends the iteration: the values already returned stay returned, the
    ///   waiting ones are dropped (and counted), the subscription is disposed,
    ///   and the next `next()` throws `SignalAwaitError.error(error)`.
    /// * ``SignalBuffer/blocking(beyond:)``: a producer that finds the buffer
    ///   full waits (its thread blocks on a condition variable) until the
    ///   consumer takes a value, or until the iteration ends (cancelled, or the
    ///   iterator dropped: the value is then dropped and counted). The
    ///   producer must have a thread of its own: a value sent into the full
    ///   buffer from the iterating task itself (a signal that sends
    ///   synchronously when the first `next()` subscribes it, or the loop's
    ///   body sending to the signal's source) stops the process with a
    ///   message naming the deadlock. Not detected: a producer that runs in
    ///   another task or on a queue the consumer awaits (the consumer then
    ///   waits for its own producer), and a producer that blocks one of the
    ///   concurrency pool's few threads (prefer a thread of its own, or
    ///   `deliverOn` a queue first).
    /// * The error and the completion are never dropped: they arrive after
    ///   the waiting values.
    ///
    /// Drops, overflows and blocked sends are counted under the signal's
    /// name (its `description` now: name it with `named(_:)`) in
    /// ``SignalKitDebug/bufferStatistics()``, with the values waiting in
    /// every live iteration as the depth, and in the probe of a buffer made
    /// with ``SignalBuffer/counted(by:)``; an ``SignalBuffer/unbounded``
    /// buffer counts nothing.
    ///
    /// **Threading:** values are taken on the signal's thread (which blocks
    /// only under `blocking`); `next()` returns them on the consuming task.
    ///
    /// **Termination and cancellation:** as `values`: the iteration ends
    /// (`nil`) after the values when the signal completes, throws
    /// `SignalAwaitError.error` when it fails (or a `failing` buffer
    /// overflows), and returns nil once the task is cancelled.
    ///
    /// **Disposal:** ending, failing, cancelling or dropping the iterator
    /// disposes the subscription and releases the waiting values at once.
    ///
    /// ```swift
    /// func follow(_ quotes: Signal<Double, FetchError>) async throws(SignalAwaitError<FetchError>) {
    ///     for try await price in quotes.values(buffer: .droppingOldest(beyond: 100)) {
    ///         print(price)
    ///     }
    /// }
    /// ```
    @_disfavoredOverload  // for `E == NoError`, the non-throwing form wins
    public func values(buffer: SignalBuffer<E>) -> SignalValues<T, E> {
        SignalValues(signal: self, policy: buffer, name: description)
    }

    /// The signal's values as an `AsyncSequence` whose buffer of values not
    /// yet taken follows `bufferingPolicy`: the spelling of `AsyncStream`'s
    /// buffering policy for `values(buffer:)`.
    ///
    /// * ``SignalBufferingPolicy/unbounded`` is `values(buffer: .unbounded)`;
    /// * ``SignalBufferingPolicy/bufferingNewest(_:)`` with `n >= 1` is
    ///   `values(buffer: .droppingOldest(beyond: n))`: at most `n` values
    ///   wait, the oldest making room for a new one;
    /// * ``SignalBufferingPolicy/bufferingOldest(_:)`` with `n >= 1` is
    ///   `values(buffer: .droppingNewest(beyond: n))`: at most `n` values
    ///   wait, a value arriving when full is dropped.
    ///
    /// `n` may be 0 (or less): then only a value that arrives while the
    /// consumer waits in `next()` is kept, and until the consumer takes it a
    /// newer value replaces it (`bufferingNewest`) or is dropped
    /// (`bufferingOldest`). A value that arrives while the consumer waits is
    /// always taken. Drops are counted as `values(buffer:)`'s are, under the
    /// policy's ``SignalBuffer`` spelling (`droppingOldest(beyond: 0)` for
    /// `bufferingNewest(0)`).
    ///
    /// This is `values(buffer:)` with the policy mapped onto a
    /// ``SignalBuffer`` (one mapping, in SignalBuffer.swift); it stays for
    /// code written against `AsyncStream`. Every other boundary takes a
    /// ``SignalBuffer``: prefer `values(buffer:)` in new code.
    @_disfavoredOverload
    public func values(bufferingPolicy: SignalBufferingPolicy) -> SignalValues<T, E> {
        SignalValues(signal: self, policy: SignalBuffer(bufferingPolicy), name: description)
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
    /// completes or the task is cancelled (also while values wait: they are
    /// released); ending, cancelling or dropping the iterator disposes the
    /// subscription. Values the consumer has not taken yet are buffered
    /// without limit (see `values(buffer:)`).
    ///
    /// ```swift
    /// for await tick in ticks.values { print(tick) }
    /// ```
    public var values: SignalNonFailingValues<T> {
        SignalNonFailingValues(values: SignalValues(signal: self, policy: .unbounded, name: ""))
    }

    /// `values` with its buffer of values not yet taken following `buffer`,
    /// as the throwing form's `values(buffer:)` (a `NoError` signal cannot
    /// choose ``SignalBuffer/failing(beyond:with:)``: there is no error to
    /// give it).
    ///
    /// ```swift
    /// for await tick in ticks.values(buffer: .latest) { print(tick) }
    /// ```
    public func values(buffer: SignalBuffer<NoError>) -> SignalNonFailingValues<T> {
        SignalNonFailingValues(values: SignalValues(signal: self, policy: buffer, name: description))
    }

    /// `values` with the given `AsyncStream`-style buffering policy (see
    /// ``SignalBufferingPolicy`` and the throwing form's
    /// `values(bufferingPolicy:)`).
    public func values(bufferingPolicy: SignalBufferingPolicy) -> SignalNonFailingValues<T> {
        SignalNonFailingValues(values: SignalValues(signal: self, policy: SignalBuffer(bufferingPolicy), name: description))
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

/// The values of a signal as an `AsyncSequence` (see `Signal.values`).
public struct SignalValues<T: Sendable, E: Sendable>: AsyncSequence, Sendable {
    public typealias Element = T
    public typealias Failure = SignalAwaitError<E>

    let signal: Signal<T, E>
    let policy: SignalBuffer<E>
    /// The statistics' name of a bounded buffer (the signal's description
    /// when the sequence was made; empty for an unbounded one).
    let name: String

    /// `name` is read only for a bounded buffer.
    init(signal: Signal<T, E>, policy: SignalBuffer<E>, name: @autoclosure () -> String) {
        self.signal = signal
        self.policy = policy
        self.name = policy.isUnbounded ? "" : name()
    }

    public func makeAsyncIterator() -> Iterator {
        Iterator(signal: signal, policy: policy, name: name)
    }

    public struct Iterator: AsyncIteratorProtocol {
        public typealias Element = T
        public typealias Failure = SignalAwaitError<E>

        private let signal: Signal<T, E>
        private let policy: SignalBuffer<E>
        private let name: String
        private var iteration: _ValuesIteration<T, E>?

        init(signal: Signal<T, E>, policy: SignalBuffer<E>, name: String) {
            self.signal = signal
            self.policy = policy
            self.name = name
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws(SignalAwaitError<E>) -> T? {
            let iteration: _ValuesIteration<T, E>
            if let existing = self.iteration {
                iteration = existing
            } else {
                iteration = _ValuesIteration(signal: signal, policy: policy, name: name)
                self.iteration = iteration
            }
            return try await iteration.buffer.next()
        }

        public mutating func next() async throws(SignalAwaitError<E>) -> T? {
            try await next(isolation: nil)
        }
    }
}
