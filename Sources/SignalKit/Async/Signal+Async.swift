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
            fatalError("Signal.get(): the signal completed without a value, and get() cannot return without one; use first(), which throws SignalAwaitError.completedWithoutValue")
        case .cancelled:
            fatalError("Signal.get(): the task was cancelled before the signal sent a value (the subscription was disposed), and get() cannot return without one; use first(), which throws SignalAwaitError.cancelled")
        case .ended:
            fatalError("Signal.get(): the signal's source dropped the subscription without sending anything, and get() cannot return without a value; use first(), which throws SignalAwaitError.endedWithoutEvent")
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
    // `@unchecked Sendable`: both fields are guarded by `mutex`.
    private let mutex = _Mutex()
    private var continuation: CheckedContinuation<_AwaitOutcome<T, E>, Never>?
    private var outcome: _AwaitOutcome<T, E>?

    init() {}

    deinit {
        mutex.destroy()
    }

    /// Stores the continuation; returns false (and resumes it) if the
    /// outcome is already known (cancelled before subscribing).
    func install(_ continuation: CheckedContinuation<_AwaitOutcome<T, E>, Never>) -> Bool {
        mutex.lock()
        if let outcome {
            mutex.unlock()
            continuation.resume(returning: outcome)
            return false
        }
        self.continuation = continuation
        mutex.unlock()
        return true
    }

    /// Records the outcome; the first one wins.
    func complete(_ outcome: _AwaitOutcome<T, E>) {
        mutex.lock()
        guard self.outcome == nil else {
            mutex.unlock()
            return
        }
        self.outcome = outcome
        let continuation = self.continuation
        self.continuation = nil
        mutex.unlock()
        continuation?.resume(returning: outcome)
    }
}

/// Reports the first event exactly once, then disposes the subscription.
final class _AwaitFirstSink<T: Sendable, E: Sendable>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: the waiter is told once, guarded by `reported`.
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

    override func putNext(_ value: T) { finish(.value(value)) }
    override func putError(_ error: E) { finish(.error(error)) }
    override func putCompletion() { finish(.completed) }

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
final class _AsyncValueBuffer<T: Sendable, E: Sendable>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: every mutable field is guarded by `mutex`.
    fileprivate enum Terminal {
        case completed
        case failed(E)
        case cancelled
    }

    private let mutex = _Mutex()
    /// Values not yet returned by `next()` from `pendingStart` on; the slots
    /// before it are nil (their values were moved out).
    private var pending: [T?] = []
    private var pendingStart = 0
    private var terminal: Terminal?
    private var terminalDelivered = false
    private var waiter: CheckedContinuation<Void, Never>?
    private let handle = MetaDisposable()
    private var started = false
    private let signal: Signal<T, E>
    private let policy: SignalBufferingPolicy

    init(signal: Signal<T, E>, policy: SignalBufferingPolicy) {
        self.signal = signal
        self.policy = policy
    }

    deinit {
        handle.dispose()
        mutex.destroy()
    }

    func next() async throws(SignalAwaitError<E>) -> T? {
        while true {
            mutex.lock()
            if !started {
                started = true
                mutex.unlock()
                // A pinned sink: the buffer lives as long as the iterator.
                handle.set(signal._start(_WeakSink(self)))
                continue
            }
            if pendingStart < pending.count {
                // Moved out: the buffer keeps no reference to a value it
                // returned (emptying it below releases nothing under the lock).
                let value = pending[pendingStart].take()!
                pendingStart += 1
                if pendingStart == pending.count {
                    pending.removeAll(keepingCapacity: true)
                    pendingStart = 0
                }
                mutex.unlock()
                return value
            }
            if let terminal {
                let first = !terminalDelivered
                terminalDelivered = true
                mutex.unlock()
                switch terminal {
                case .failed(let error) where first:
                    throw .error(error)
                default:
                    return nil
                }
            }
            mutex.unlock()
            if Task.isCancelled {
                finish(.cancelled)
                continue
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    mutex.lock()
                    if pendingStart < pending.count || terminal != nil {
                        mutex.unlock()
                        continuation.resume()
                    } else {
                        waiter = continuation
                        mutex.unlock()
                    }
                }
            } onCancel: {
                self.finish(.cancelled)
            }
        }
    }

    private func wake() -> CheckedContinuation<Void, Never>? {
        let waiter = self.waiter
        self.waiter = nil
        return waiter
    }

    fileprivate func receive(_ value: T) {
        var dropped: T?
        mutex.lock()
        guard terminal == nil else {
            mutex.unlock()
            return
        }
        let buffered = pending.count - pendingStart
        switch policy {
        case .unbounded:
            pending.append(value)
        case .bufferingOldest(let limit):
            // A waiting consumer always gets the value.
            if buffered < max(limit, waiter == nil ? 0 : 1) {
                pending.append(value)
            } else {
                dropped = value
            }
        case .bufferingNewest(let limit):
            pending.append(value)
            if buffered + 1 > max(limit, waiter == nil ? 0 : 1) {
                dropped = pending[pendingStart].take()
                pendingStart += 1
                if pendingStart == pending.count {
                    pending.removeAll(keepingCapacity: true)
                    pendingStart = 0
                }
            }
        }
        let waiter = wake()
        mutex.unlock()
        // Released here, outside the lock: a deinit may send to the signal.
        withExtendedLifetime(dropped) {}
        waiter?.resume()
    }

    fileprivate func finish(_ outcome: Terminal) {
        mutex.lock()
        guard terminal == nil else {
            mutex.unlock()
            return
        }
        terminal = outcome
        var dropped: [T?] = []
        if case .cancelled = outcome {
            swap(&dropped, &pending)
            pendingStart = 0
        }
        let waiter = wake()
        mutex.unlock()
        dropped = []  // released outside the lock: a deinit may send to the signal
        waiter?.resume()
        handle.dispose()
    }
}

/// Forwards to the buffer without keeping it alive.
private final class _WeakSink<T: Sendable, E: Sendable>: _Sink<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: the weak reference is read atomically.
    weak var buffer: _AsyncValueBuffer<T, E>?

    init(_ buffer: _AsyncValueBuffer<T, E>) {
        self.buffer = buffer
    }

    override func putNext(_ value: T) { buffer?.receive(value) }
    override func putError(_ error: E) { buffer?.finish(.failed(error)) }
    override func putCompletion() { buffer?.finish(.completed) }
}
