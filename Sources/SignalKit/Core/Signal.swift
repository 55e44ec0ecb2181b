// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// A cold stream of values of type `T` that may fail with `E`.
///
/// A signal stores only its generator. Each `start` runs the generator once,
/// synchronously, on the calling thread, with a fresh `Subscriber`; whatever
/// the generator emits synchronously is delivered before `start` returns. The
/// generator returns a `Disposable` that cancels the work; it is disposed
/// exactly once: after the terminal event, or when the handle is disposed.
///
/// ```swift
/// let numbers = Signal<Int, NoError> { subscriber in
///     subscriber.putNext(1)
///     subscriber.putNext(2)
///     subscriber.putCompletion()
///     return EmptyDisposable
/// }
/// let handle = (numbers |> map { $0 * 10 }).start(next: { print($0) })   // 10, 20
/// ```
///
/// A signal is `Sendable` whatever `T` and `E` are: it is immutable and holds
/// only a `@Sendable` generator, which may run on any thread that starts it.
public final class Signal<T, E>: Sendable {
    @usableFromInline let generator: @Sendable (Subscriber<T, E>) -> any Disposable

    /// How the signal was built, for the operators that flatten nested
    /// compositions to stay stack-safe (any length in constant stack): a
    /// `then` signal keeps its chain of segments and `deferred` its factory,
    /// so that a chain of a million `then`s is subscribed by one loop instead
    /// of a million nested generators. nil for every other signal. Set and read only by
    /// `Operators/Flattening/Signal+Then.swift`, `Operators/Creating/Signal+Creating.swift`
    /// and the Engine; the generator alone defines behaviour.
    @usableFromInline let composition: _SignalComposition<T, E>?

    /// Creates a cold signal from a generator.
    @inlinable
    public init(_ generator: @escaping @Sendable (Subscriber<T, E>) -> any Disposable) {
        self.generator = generator
        self.composition = nil
    }

    /// Creates a signal that also records how it was built.
    init(composition: _SignalComposition<T, E>, _ generator: @escaping @Sendable (Subscriber<T, E>) -> any Disposable) {
        self.generator = generator
        self.composition = composition
    }

    /// Subscribes: runs the generator now, on this thread.
    ///
    /// - Returns: a handle. `dispose()` on it disposes the generator's
    ///   disposable first (events it emits meanwhile are still delivered),
    ///   then ends the subscription; it is idempotent and thread-safe.
    ///   Dropping the handle without disposing does not cancel anything.
    @inlinable
    public func start(
        next: (@Sendable (T) -> Void)! = nil,
        error: (@Sendable (E) -> Void)! = nil,
        completed: (@Sendable () -> Void)! = nil
    ) -> any Disposable {
        _run(_Subscription.make(next: next, error: error, completed: completed))
    }

    /// Identical to `start`.
    @inlinable
    public func startStandalone(
        next: (@Sendable (T) -> Void)! = nil,
        error: (@Sendable (E) -> Void)! = nil,
        completed: (@Sendable () -> Void)! = nil
    ) -> any Disposable {
        start(next: next, error: error, completed: completed)
    }

    /// Like `start`, but the handle is a `StrictDisposable`: in debug builds,
    /// releasing it without disposing reports `file:line`.
    @inlinable
    public func startStrict(
        next: (@Sendable (T) -> Void)! = nil,
        error: (@Sendable (E) -> Void)! = nil,
        completed: (@Sendable () -> Void)! = nil,
        file: String = #file,
        line: Int = #line
    ) -> any Disposable {
        StrictDisposable(
            start(next: next, error: error, completed: completed),
            file: file,
            line: line
        )
    }

    /// Starts with a SignalKit operator's sink, stored in the subscription's
    /// tail (see `_InlineSink`): pinned, released when the subscriber dies.
    ///
    /// `@inlinable` (with `start`) so that the allocation it makes is
    /// specialised in the caller: unspecialised, it needs a runtime generic
    /// metadata lookup (a hash-table search) per subscription.
    @inlinable
    @inline(__always)
    func _start<S: _InlineSink & ~Copyable>(_ sink: consuming S) -> _Subscription<T, E>
    where S.Input == T, S.Failure == E {
        _run(_InlineSinkSubscription<S>.make(sink))
    }

    /// Runs the generator with a subscriber for `subscription` and stores
    /// the disposable it returns.
    @inlinable
    @inline(__always)
    func _run(_ subscription: _Subscription<T, E>) -> _Subscription<T, E> {
        let subscriber = Subscriber(subscription: subscription)
        withExtendedLifetime(subscriber) {
            subscription.assignDisposable(generator(subscriber))
        }
        return subscription
    }
}

extension Signal {
    /// A signal that sends `value` and completes.
    public static func single(_ value: T) -> Signal<T, E> where T: Sendable {
        Signal { subscriber in
            subscriber.putNext(value)
            subscriber.putCompletion()
            return EmptyDisposable
        }._combined("single", inputs: [], arguments: _debugArgument(value))
    }

    /// A signal that completes at once.
    public static func complete() -> Signal<T, E> {
        Signal { subscriber in
            subscriber.putCompletion()
            return EmptyDisposable
        }._combined("complete", inputs: [])
    }

    /// A signal that fails at once with `error`.
    public static func fail(_ error: E) -> Signal<T, E> where E: Sendable {
        Signal { subscriber in
            subscriber.putError(error)
            return EmptyDisposable
        }._combined("fail", inputs: [], arguments: _debugArgument(error))
    }

    /// A signal that never sends anything.
    public static func never() -> Signal<T, E> {
        Signal { _ in EmptyDisposable }._combined("never", inputs: [])
    }
}
