// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NIO
public import NIOCore
public import SignalKit
import Synchronization

extension EventLoopFuture where Value: Sendable {
    /// The future's result as a signal: its value, then completion; or its
    /// error.
    ///
    /// A future is hot (its work already runs); each subscription observes
    /// the same result. Events are delivered on the future's event loop (as
    /// `whenComplete` callbacks are). Disposing a subscription drops its
    /// result when it comes; it does not cancel the future's work.
    public var signal: Signal<Value, any Error> {
        Signal { subscriber in
            self.whenComplete { result in
                switch result {
                case .success(let value):
                    subscriber.putNext(value)
                    subscriber.putCompletion()
                case .failure(let error):
                    subscriber.putError(error)
                }
            }
            return EmptyDisposable
        }
    }
}

extension Signal where T: Sendable, E: Sendable {
    /// The signal's first value as a future on `eventLoop`.
    ///
    /// Subscribes now; the first value succeeds the future and disposes the
    /// subscription. The future fails with ``SignalAwaitError``: `.error(e)`
    /// when the signal fails first, `.completedWithoutValue` when it
    /// completes first, `.endedWithoutEvent` when its source drops the
    /// subscription without an event. A signal that keeps its subscription
    /// and never sends anything leaves the future pending.
    public func firstValue(on eventLoop: any EventLoop) -> EventLoopFuture<T> {
        let promise = eventLoop.makePromise(of: T.self)
        let handle = MetaDisposable()
        let outcome = _FirstValueOutcome<T, E>(promise: promise, handle: handle)
        handle.set(
            self.start(
                next: { outcome.finish(.success($0)) },
                error: { outcome.finish(.failure(.error($0))) },
                completed: { outcome.finish(.failure(.completedWithoutValue)) }
            )
        )
        return promise.futureResult
    }
}

/// Fulfils the promise once. Only the subscription's callbacks hold it: when
/// they are released without an event (the source dropped the
/// subscription), its deinit fails the promise.
final class _FirstValueOutcome<T: Sendable, E: Sendable>: Sendable {
    private let promise: EventLoopPromise<T>
    private let handle: MetaDisposable
    private let done = Synchronization.Atomic<Bool>(false)

    init(promise: EventLoopPromise<T>, handle: MetaDisposable) {
        self.promise = promise
        self.handle = handle
    }

    func finish(_ result: Result<T, SignalAwaitError<E>>) {
        guard !done.exchange(true, ordering: .acquiringAndReleasing) else { return }
        switch result {
        case .success(let value): promise.succeed(value)
        case .failure(let error): promise.fail(error)
        }
        handle.dispose()
    }

    deinit {
        if !done.load(ordering: .acquiring) {
            promise.fail(SignalAwaitError<E>.endedWithoutEvent)
        }
    }
}

#endif  // NIO
