// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The typed half of a subscription: delivery to the user's callbacks or to an
// operator sink (Engine/InlineSink.swift), and the callbacks' storage.
// The untyped half (`_SubscriptionBase` in Runtime/Subscription.swift) owns
// the C flag and slot; this file reaches them only through its guard
// wrappers (`enterReaderGuard`, `exitReaderGuard`,
// `performTerminalTransition`, `isTerminated`), all inlined, so the delivery
// path costs what it did when both halves were one file.

/// The typed part of a subscription: delivery.
///
/// An instance of this class itself holds the user's callbacks in its tail;
/// the subclass `_InlineSinkSubscription` holds an operator sink there
/// instead, and overrides `putNext` and the `inlineSink…` hooks of the
/// terminal calls. Every other member is final.
@usableFromInline
class _Subscription<T, E>: _SubscriptionBase, @unchecked Sendable {
    /// Allocates and initialises a subscription that keeps the user's
    /// callbacks in its tail (released at termination).
    @inlinable
    static func make(
        next: ((T) -> Void)?,
        error: ((E) -> Void)?,
        completed: (() -> Void)?
    ) -> _Subscription<T, E> {
        if case .none = next, case .none = error, case .none = completed {
            return _CallbacklessSubscription<T, E>.makeCallbackless()
        }
        let pointer = ManagedBufferPointer<_SubscriptionHeader, UInt64>(
            bufferClass: self,
            minimumCapacity: _subscriptionTailWords + _callbackWords
        ) { _, _ in
            _SubscriptionHeader()
        }
        let subscription = unsafeDowncast(pointer.buffer, to: self)
        subscription.initializeStorage(releasesSinkOnTermination: true)
        subscription.callbacks.initialize(to: _Callbacks(next: next, error: error, completed: completed))
        return subscription
    }

    deinit {
        // Before `_SubscriptionBase.deinit`: the callbacks' type is known here.
        if releasesSinkOnTermination && claimReleaseUnguarded() { destroyCallbacks() }
    }

    // The user's callbacks, after the flag and the slot in the tail (a
    // `_Callbacks`). Only when `releasesSinkOnTermination`; initialised until
    // the release claim is won; read only inside the flag's reader guard.
    //
    // Delivery runs in unspecialised generic code (`Subscriber.putNext` is
    // not inlinable), where a generic struct costs a runtime metadata lookup
    // (`swift_getGenericMetadata`, a hash-table probe) wherever its metadata
    // is needed: passing its metatype, calling its methods, or destroying
    // it through a value witness. So the code here only projects its fields
    // through a pointer made from a raw address and moves the value out to
    // destroy it; `_Callbacks` is laid out at compile time (three closures),
    // so none of that needs metadata. (Calling `assumingMemoryBound(to:)`, a
    // method or `deinitialize` here brings the lookups back, one per
    // subscription: `scripts/callgrind W1 SignalKit` shows them as
    // `swift_getGenericMetadata`.)

    /// Tail words the callbacks take.
    @inlinable
    static var _callbackWords: Int { (MemoryLayout<_Callbacks<T, E>>.size + 7) / 8 }

    @inline(__always) @usableFromInline
    final var callbacks: UnsafeMutablePointer<_Callbacks<T, E>> {
        UnsafeMutablePointer(OpaquePointer(callbackStorage))
    }

    /// Destroys the callbacks: next, error, completed, in that order.
    ///
    /// Field by field, each through a pointer to `(() -> Void)?`: destroying
    /// `_Callbacks<T, E>` (or a closure type that mentions `T` or `E`) in
    /// this generic code would need runtime metadata (a hash-table lookup
    /// per subscription). Every optional closure has the
    /// same two-word layout (function, context), and destroying one only
    /// releases its context, so the concrete type destroys each exactly as
    /// its own type would. The three are laid out one after another, two
    /// words each (an optional closure is a function pointer and a context,
    /// `nil` being a null function pointer, whatever its type).
    final override func destroyCallbacks() {
        let words = callbackStorage
        _ = UnsafeMutablePointer<(() -> Void)?>(OpaquePointer(words)).move()
        _ = UnsafeMutablePointer<(() -> Void)?>(OpaquePointer(words + 16)).move()
        _ = UnsafeMutablePointer<(() -> Void)?>(OpaquePointer(words + 32)).move()
    }

    // MARK: Hooks for an operator sink (`_InlineSinkSubscription`)

    /// Delivers the error to the operator sink, after the terminal transition.
    func inlineSinkPutError(_ error: E) {}
    /// Delivers completion to the operator sink, after the terminal transition.
    func inlineSinkPutCompletion() {}

    // MARK: Delivery

    /// Delivers to the user's callbacks. Overridden by
    /// `_InlineSinkSubscription`: one virtual call per value, which costs
    /// fewer instructions through a fused `map` than a test here and a hook
    /// (`scripts/callgrind W2 SignalKit` counts them).
    @usableFromInline
    func putNext(_ value: T) {
        guard let ticket = enterReaderGuard() else { return }
        _deliverNext(callbacks.pointee, value)
        exitReaderGuard(ticket)
    }

    // The terminal calls follow SwiftSignalKit's order: the keep-alive
    // objects registered so far are taken together with the terminal
    // transition; then the terminal callback runs; then the generator's
    // disposable is disposed; then the taken keep-alive objects are released.
    // An object registered from inside the terminal callback is therefore not
    // in the taken list: it lives until the handle's disposal, a later
    // terminal call or the subscriber's death, as there.

    @usableFromInline
    final func putError(_ error: E) {
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
                return finishTermination(keepingAlive: keptAlive) { inlineSinkPutError(error) }
            }
            inlineSinkPutError(error)
        }
        closeAndDisposeGeneratorDisposable()
    }

    @usableFromInline
    final func putCompletion() {
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
                return finishTermination(keepingAlive: keptAlive) { inlineSinkPutCompletion() }
            }
            inlineSinkPutCompletion()
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

    /// The terminal transition for user callbacks: wins the transition,
    /// takes the keep-alive objects, copies the one terminal handler out and
    /// destroys the callbacks (when no other delivery is inside), so that the
    /// other callbacks are already released when the terminal one runs.
    /// Returns nil when already terminated.
    @inline(__always)
    private func beginGuardedTermination<Handler>(
        _ take: (borrowing _Callbacks<T, E>) -> Handler
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
        let handler = take(callbacks.pointee)
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
        let held = callbacks.pointee.held
        exitReaderGuard(ticket)
        return held
    }
}

/// A subscription started without callbacks (`start()`, a `Subscriber`
/// with none): its tail has no room for them (104 bytes where one with
/// callbacks takes 152: W22's `never().start()`). Its values are dropped
/// and its terminal events end it as any subscription's do (the terminal
/// transition, the keep-alive objects, then the generator's disposable).
///
/// `@unchecked Sendable`: as `_Subscription`; it adds no state.
@usableFromInline
final class _CallbacklessSubscription<T, E>: _Subscription<T, E>, @unchecked Sendable {
    /// Allocates and initialises one (specialised in the caller, as `make`).
    @inlinable
    static func makeCallbackless() -> _Subscription<T, E> {
        let pointer = ManagedBufferPointer<_SubscriptionHeader, UInt64>(
            bufferClass: self,
            minimumCapacity: _subscriptionTailWords
        ) { _, _ in
            // Nothing in the tail to release: the terminal calls take the
            // path of a pinned sink, whose hooks do nothing here.
            _SubscriptionHeader()
        }
        let subscription = unsafeDowncast(pointer.buffer, to: self)
        subscription.initializeStorage(releasesSinkOnTermination: false)
        return subscription
    }

    /// No callback: a value is dropped.
    @usableFromInline
    override func putNext(_ value: T) {}

    /// None, ever.
    override var heldCallbacks: (Bool, Bool, Bool) { (false, false, false) }
}

// ---------------------------------------------------------------------------
// The user's callbacks
// ---------------------------------------------------------------------------

/// The callbacks of `start(next:error:completed:)` and
/// `Subscriber(next:error:completed:)`, stored in the subscription's tail
/// (see `_Subscription.callbacks`), not in an object of their own.
///
/// A struct of the three, written once by the specialised `make`: stored as
/// loose closures through typed pointers, each would be reabstracted (a
/// thunk context allocated per closure). `~Copyable`, so that a
/// delivery borrows the closure in place instead of copying it out (a copy
/// costs a retain and a release per event).
@usableFromInline
struct _Callbacks<T, E>: ~Copyable {
    // Declaration order is destruction order: next, error, completed.
    @usableFromInline let next: ((T) -> Void)?
    @usableFromInline let error: ((E) -> Void)?
    @usableFromInline let completed: (() -> Void)?

    @inlinable
    init(next: ((T) -> Void)?, error: ((E) -> Void)?, completed: (() -> Void)?) {
        self.next = next
        self.error = error
        self.completed = completed
    }

    /// Which callbacks are set: (next, error, completed).
    var held: (Bool, Bool, Bool) { (next != nil, error != nil, completed != nil) }
}

/// Calls `callbacks.next` with `value`, borrowing the closure where it is
/// stored: calling `pointer.pointee.next?(value)` instead copies the
/// closure out (a retain and a release per event). A free function over
/// `T` and `E`, not a
/// method of `_Callbacks`, so that unspecialised callers need no metadata
/// for `_Callbacks<T, E>`.
@inline(__always)
func _deliverNext<T, E>(_ callbacks: borrowing _Callbacks<T, E>, _ value: T) {
    callbacks.next?(value)
}
