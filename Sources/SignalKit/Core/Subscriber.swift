// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// The receiving end of a subscription: what a signal's generator calls.
///
/// Grammar: any number of `putNext`, then at most one `putError` or
/// `putCompletion`. Everything after the first terminal call is ignored, and
/// the terminal call disposes the generator's disposable right after the
/// terminal callback returns.
///
/// Threading: a `Subscriber` does not serialise its callers. A source must
/// call `putNext` / `putError` / `putCompletion` serially (one at a time,
/// with a happens-before between calls); calls may come from any thread.
/// Concurrent calls are memory-safe (callbacks then run concurrently) but
/// their order is unspecified. `keepAlive` may be called from any thread.
///
/// Lifetime: when the source releases its last reference to the subscriber,
/// the subscription ends silently: its callbacks and keep-alive objects are
/// released, nothing is disposed.
///
/// `Sendable` for every `T` and `E`: its state lives in the subscription,
/// guarded by CSignalRuntime's flag and slot, and it stores no value: a value
/// passed to `putNext` is delivered on the calling thread before the call
/// returns. What crosses threads is checked where it crosses: the closures a
/// source hands to a queue, and the operators that store a value and deliver
/// it later (they require `Sendable` values).
public final class Subscriber<T, E>: CustomStringConvertible, Sendable {

    /// The subscription, +1, read without retain/release on every call.
    @usableFromInline let subscription: Unmanaged<_Subscription<T, E>>

    @inlinable
    init(subscription: _Subscription<T, E>) {
        self.subscription = Unmanaged.passRetained(subscription)
    }

    /// Creates a subscriber that calls the given closures. Mostly useful to
    /// drive a generator by hand; `Signal.start` creates subscribers for you.
    @inlinable
    public convenience init(
        next: (@Sendable (T) -> Void)! = nil,
        error: (@Sendable (E) -> Void)! = nil,
        completed: (@Sendable () -> Void)! = nil
    ) {
        self.init(subscription: _Subscription.make(next: next, error: error, completed: completed))
    }

    /// The subscription, for `_InlineSink.downstreamSubscription`.
    var _subscriptionBase: _SubscriptionBase { subscription.takeUnretainedValue() }

    /// Whether this subscription or one downstream of it has ended (see
    /// `_SubscriptionBase.hasEnded`): the loop operators' check between
    /// iterations.
    var _hasEnded: Bool { subscription._withUnsafeGuaranteedRef { $0.hasEnded } }

    deinit {
        // Non-generic type on purpose: no generic metadata lookup in deinit.
        var subscription: _SubscriptionBase = self.subscription.takeRetainedValue()
        // Unique now means nobody holds the handle any more.
        let handleReleased = isKnownUniquelyReferenced(&subscription)
        subscription.subscriberReleased(handleReleased: handleReleased)
    }

    /// Delivers a value, unless the subscription has terminated.
    public func putNext(_ next: T) {
        subscription._withUnsafeGuaranteedRef { $0.putNext(next) }
    }

    /// Terminates with an error: calls the error callback (the other
    /// callbacks are already released when it runs), then disposes the
    /// generator's disposable, then releases the keep-alive objects.
    /// Ignored after termination.
    public func putError(_ error: E) {
        subscription._withUnsafeGuaranteedRef { $0.putError(error) }
    }

    /// Terminates with completion; same order as `putError`.
    public func putCompletion() {
        subscription._withUnsafeGuaranteedRef { $0.putCompletion() }
    }

    /// Keeps `object` alive until the subscription ends (termination, handle
    /// disposal or the subscriber's release). An object registered after
    /// termination is kept until a later terminal call, a handle disposal or
    /// the subscriber's release.
    public func keepAlive(_ object: AnyObject) {
        subscription._withUnsafeGuaranteedRef { $0.keepAlive(object) }
    }

    /// `Subscriber { next: hasValue, error: nil, completed: hasValue, disposable: nil, terminated: false }`
    public var description: String {
        subscription._withUnsafeGuaranteedRef { subscription in
            let (next, error, completed) = subscription.heldCallbacks
            func show(_ held: Bool) -> String { held ? "hasValue" : "nil" }
            return "Subscriber { next: \(show(next)), error: \(show(error)), completed: \(show(completed)), "
                + "disposable: \(show(subscription.holdsDisposable)), terminated: \(subscription.isTerminated) }"
        }
    }
}

extension Subscriber {
    /// Registers the subscriber's entry in a SignalKit source's bag (a pipe's,
    /// a promise's): when the subscription ends (termination or handle
    /// disposal), the entry is removed, exactly once, where SwiftSignalKit
    /// would dispose a removal disposable. Saves that disposable's allocation
    /// on every subscription. `owner` (optional) is kept alive until then (a
    /// promise subscription keeps the promise alive).
    ///
    /// Call from the generator right after inserting the subscriber.
    func registerSourceEntry(bag: _SubscriberBagBase, key: UInt64, owner: AnyObject?) {
        subscription._withUnsafeGuaranteedRef { $0.registerSourceEntry(bag: bag, key: key, owner: owner) }
    }

    /// The disposable of a generator whose work runs in `task`: it ends this
    /// subscription's delivery, then cancels the task.
    ///
    /// Events a generator emits synchronously while being disposed are
    /// delivered (SwiftSignalKit's order: the generator's disposable runs
    /// before the subscriber is terminated). A task is not synchronous: it
    /// runs on another thread and may send right after it notices the
    /// cancellation, before the disposal has terminated the subscriber. Ending
    /// the delivery first (the terminal transition, with no terminal event)
    /// makes "nothing after the disposal" hold for it: whatever the task
    /// sends once it can see the cancellation is ignored.
    ///
    /// Only for a disposable that the subscription runs (the generator's):
    /// the handle's disposal, or a terminal event, runs it, and finishes the
    /// release of the callbacks and keep-alive objects itself.
    package func _disposable<Success, Failure>(cancelling task: Task<Success, Failure>) -> any Disposable {
        ActionDisposable {
            self.subscription._withUnsafeGuaranteedRef { _ = $0.performTerminalTransition() }
            task.cancel()
        }
    }
}
