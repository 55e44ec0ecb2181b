// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The typed half of a subscription: delivery to a sink, and the sink classes.
// The untyped half (`_SubscriptionBase` in Runtime/Subscription.swift) owns
// the C flag and slot; this file reaches them only through its guard
// wrappers (`enterReaderGuard`, `exitReaderGuard`,
// `performTerminalTransition`, `isTerminated`), all inlined, so the delivery
// path costs what it did when both halves were one file.

/// The typed part of a subscription: delivery.
@usableFromInline
final class _Subscription<T, E>: _SubscriptionBase, @unchecked Sendable {
    /// Allocates and initialises a subscription around `sink` (retained).
    @inlinable
    static func make(sink: _Sink<T, E>, releasesSinkOnTermination: Bool) -> _Subscription<T, E> {
        let pointer = ManagedBufferPointer<_SubscriptionHeader, UInt64>(
            bufferClass: self,
            minimumCapacity: _subscriptionTailWords
        ) { _, _ in
            _SubscriptionHeader(
                sink: Unmanaged.passRetained(sink as AnyObject),
                releasesSinkOnTermination: releasesSinkOnTermination
            )
        }
        let subscription = unsafeDowncast(pointer.buffer, to: self)
        subscription.initializeStorage()
        return subscription
    }

    @inline(__always)
    private var sink: Unmanaged<_Sink<T, E>> {
        Unmanaged<_Sink<T, E>>.fromOpaque(sinkReference.toOpaque())
    }

    override func sinkDownstreamSubscription() -> _SubscriptionBase? {
        sink._withUnsafeGuaranteedRef { $0.downstreamSubscription }
    }

    // MARK: Delivery

    @usableFromInline
    func putNext(_ value: T) {
        if releasesSinkOnTermination {
            guard let ticket = enterReaderGuard() else { return }
            sink._withUnsafeGuaranteedRef { $0.putNext(value) }
            exitReaderGuard(ticket)
        } else {
            guard !isTerminated else { return }
            sink._withUnsafeGuaranteedRef { $0.putNext(value) }
        }
    }

    // The terminal calls follow SwiftSignalKit's order: the keep-alive
    // objects registered so far are taken together with the terminal
    // transition; then the terminal callback runs; then the generator's
    // disposable is disposed; then the taken keep-alive objects are released.
    // An object registered from inside the terminal callback is therefore not
    // in the taken list: it lives until the handle's disposal, a later
    // terminal call or the subscriber's death, as there.

    @usableFromInline
    func putError(_ error: E) {
        if releasesSinkOnTermination {
            guard let (handler, keptAlive) = beginGuardedTermination({ $0.error }) else { return }
            if let keptAlive { return finishTermination(keepingAlive: keptAlive) { handler?(error) } }
            handler?(error)
        } else {
            guard performTerminalTransition() else {
                _ = takeKeepAlive()
                return
            }
            if let keptAlive = takeKeepAlive() {
                return finishTermination(keepingAlive: keptAlive) { sink._withUnsafeGuaranteedRef { $0.putError(error) } }
            }
            sink._withUnsafeGuaranteedRef { $0.putError(error) }
        }
        closeAndDisposeGeneratorDisposable()
    }

    @usableFromInline
    func putCompletion() {
        if releasesSinkOnTermination {
            guard let (handler, keptAlive) = beginGuardedTermination({ $0.completed }) else { return }
            if let keptAlive { return finishTermination(keepingAlive: keptAlive) { handler?() } }
            handler?()
        } else {
            guard performTerminalTransition() else {
                _ = takeKeepAlive()
                return
            }
            if let keptAlive = takeKeepAlive() {
                return finishTermination(keepingAlive: keptAlive) { sink._withUnsafeGuaranteedRef { $0.putCompletion() } }
            }
            sink._withUnsafeGuaranteedRef { $0.putCompletion() }
        }
        closeAndDisposeGeneratorDisposable()
    }

    /// The rest of a terminal call when keep-alive objects were taken with
    /// the transition (out of line: the common path carries nothing across
    /// the user's callback): the callback, the disposal, then the objects.
    @inline(never)
    private func finishTermination(keepingAlive keptAlive: _KeepAliveList, _ callback: () -> Void) {
        callback()
        closeAndDisposeGeneratorDisposable()
        withExtendedLifetime(keptAlive) {}
    }

    /// The terminal transition for a closure sink: wins the transition,
    /// takes the keep-alive objects, copies the one terminal handler out and
    /// releases the sink (when no other delivery is inside), so that the
    /// other callbacks are already released when the terminal one runs.
    /// Returns nil when already terminated.
    @inline(__always)
    private func beginGuardedTermination<Handler>(
        _ take: (_ClosureSink<T, E>) -> Handler
    ) -> (Handler, _KeepAliveList?)? {
        guard let ticket = enterReaderGuard() else {
            _ = takeKeepAlive()
            return nil
        }
        guard performTerminalTransition() else {
            exitReaderGuard(ticket)
            _ = takeKeepAlive()
            return nil
        }
        let keptAlive = takeKeepAlive()
        let handler = sink._withUnsafeGuaranteedRef { take(unsafeDowncast($0, to: _ClosureSink<T, E>.self)) }
        exitReaderGuard(ticket)
        return (handler, keptAlive)
    }

    // MARK: Introspection (for `Subscriber.description`)

    /// Which callbacks are still held: (next, error, completed).
    ///
    /// Reads the sink like a delivery does: user callbacks are released at
    /// termination, possibly by another thread at this very moment, so they
    /// are read inside the flag's reader guard. SignalKit's own operator
    /// sinks are pinned (they live as long as the subscriber, which the
    /// caller holds): they always report their callbacks as held.
    var heldCallbacks: (Bool, Bool, Bool) {
        guard releasesSinkOnTermination else {
            return isTerminated ? (false, false, false) : (true, true, true)
        }
        guard let ticket = enterReaderGuard() else { return (false, false, false) }
        let held = sink._withUnsafeGuaranteedRef { sink in
            let closures = unsafeDowncast(sink, to: _ClosureSink<T, E>.self)
            return (closures.next != nil, closures.error != nil, closures.completed != nil)
        }
        exitReaderGuard(ticket)
        return held
    }
}

// ---------------------------------------------------------------------------
// Sinks
// ---------------------------------------------------------------------------

/// Receives a subscription's events. Subclasses hold their state in `let`s:
/// a delivery reaches them through an unretained reference.
///
/// `@unchecked Sendable`: a sink is called from whatever thread the source
/// delivers on; the source contract (serial calls) is what makes that safe,
/// as in SwiftSignalKit.
@usableFromInline
class _Sink<T, E>: @unchecked Sendable {
    @inlinable init() {}
    @usableFromInline func putNext(_ value: T) {}
    @usableFromInline func putError(_ error: E) {}
    @usableFromInline func putCompletion() {}

    /// The subscription this sink delivers to, when everything it does is
    /// for that one downstream subscription (so that once it has ended, the
    /// sink's upstream work is useless); nil otherwise. Read only by the
    /// loop operators between iterations (`_SubscriptionBase.hasEnded`),
    /// never per event. Sinks return the subscription of a `Subscriber` they
    /// hold in a `let`, which keeps it (and, transitively, its pinned sink)
    /// alive while the caller holds this sink's subscriber.
    var downstreamSubscription: _SubscriptionBase? { nil }
}

/// The sink of `start(next:error:completed:)`: the user's callbacks.
@usableFromInline
final class _ClosureSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    // Declaration order is release order: next, error, completed.
    @usableFromInline let next: ((T) -> Void)?
    @usableFromInline let error: ((E) -> Void)?
    @usableFromInline let completed: (() -> Void)?

    @inlinable
    init(next: ((T) -> Void)?, error: ((E) -> Void)?, completed: (() -> Void)?) {
        self.next = next
        self.error = error
        self.completed = completed
    }

    @usableFromInline override func putNext(_ value: T) { next?(value) }
    @usableFromInline override func putError(_ error: E) { self.error?(error) }
    @usableFromInline override func putCompletion() { completed?() }
}
