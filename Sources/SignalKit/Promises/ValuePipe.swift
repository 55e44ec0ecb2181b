// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// A hot stream of values pushed with `putNext`.
///
/// Subscribers receive the values sent while they are subscribed, in
/// subscription order; there is no replay and the pipe never completes or
/// fails. Neither `signal()` nor a subscription keeps the pipe alive: when
/// the pipe is released, its subscriptions end silently, and starting its
/// signal afterwards does nothing.
///
/// Threading: `putNext` delivers synchronously on the caller's thread.
/// Concurrent `putNext` calls deliver concurrently (each subscriber may then
/// see values concurrently, as in SwiftSignalKit): call it serially when
/// subscribers need ordered delivery. Subscribing and disposing are safe from
/// any thread at any time, including during a delivery; a delivery never
/// waits for them.
///
/// `Sendable` whatever `T` is: it stores no value; `putNext` delivers on the
/// calling thread before it returns.
public final class ValuePipe<T>: Sendable {
    private let subscribers: _SubscriberBag<Subscriber<T, NoError>>
    private let sharedSignal: Signal<T, NoError>

    public init() {
        let subscribers = _SubscriberBag<Subscriber<T, NoError>>()
        self.subscribers = subscribers
        // The signal holds the bag, not the pipe; the pipe empties and closes
        // the bag when it dies, which ends every subscription.
        sharedSignal = Signal { subscriber in
            guard let key = subscribers.insert(subscriber) else { return EmptyDisposable }
            subscriber.registerSourceEntry(bag: subscribers, key: key, owner: nil)
            return EmptyDisposable
        }
    }

    deinit {
        subscribers.close()
        subscribers.removeAll()
    }

    /// The pipe's signal (the same object every time).
    public func signal() -> Signal<T, NoError> {
        sharedSignal
    }

    /// Delivers `next` to every current subscriber.
    public func putNext(_ next: T) {
        subscribers.forEach { $0.putNext(next) }
    }
}
