internal import CSignalRuntime

// ---------------------------------------------------------------------------
// The subscription object
//
// `Signal.start` allocates three objects per subscription:
//
// * `Subscriber` — what the generator receives. Its lifetime is the source's
//   hold on the subscription: when the source drops it, its deinit ends the
//   subscription (callbacks released, as in SwiftSignalKit).
// * `_Subscription` (this file) — the state, and also the handle `start`
//   returns. It is allocated through `ManagedBufferPointer(bufferClass:)`, so
//   that the C terminated flag and the C disposable slot live in its tail
//   storage (C primitives must never sit in a Swift stored property) while
//   the class itself stays an ordinary `Sendable` class (a `ManagedBuffer`
//   subclass cannot be `Sendable`). It never references the `Subscriber`, so
//   holding the handle does not keep the callbacks alive.
// * the sink — the callbacks, in `let`s of a class, referenced through an
//   `Unmanaged` so that a delivery calls them with no reference counting.
//   Sinks created from user closures are released at termination (the reader
//   guard of the C flag makes that safe against concurrent deliveries); the
//   sinks of SignalKit's own operators are "pinned": they are released when
//   the subscriber dies, which costs the per-event path nothing.
//
// The generator's disposable is held in the header, its ownership tracked by
// the C slot: the slot holds a token while the header owns a disposable,
// and whoever closes the slot and finds the token disposes it — exactly once
// (SignalKit disposes a generator's disposable exactly once on every path).
// ---------------------------------------------------------------------------

/// Header of a `_Subscription`; the tail holds the C flag then the C slot.
@usableFromInline
struct _SubscriptionHeader {
    /// The sink, +1. Released once, by whoever wins the flag's release claim.
    @usableFromInline let sink: Unmanaged<AnyObject>
    /// Whether the sink is released at termination (user callbacks) or
    /// pinned until the subscriber dies (SignalKit's own operator sinks).
    @usableFromInline let releasesSinkOnTermination: Bool
    /// Objects kept alive by `Subscriber.keepAlive`, under the flag's spinlock.
    @usableFromInline var keepAlive: [AnyObject]
    /// The generator's disposable; owned by whoever owns the slot's token.
    @usableFromInline var disposable: (any Disposable)?

    @inlinable
    init(sink: Unmanaged<AnyObject>, releasesSinkOnTermination: Bool) {
        self.sink = sink
        self.releasesSinkOnTermination = releasesSinkOnTermination
        self.keepAlive = []
        self.disposable = nil
    }
}

/// Bits of the C flag that the subscription uses for itself.
private let _handleDisposedBit = UInt(CSR_FLAG_USER0)
private let _keepAliveBit = UInt(CSR_FLAG_USER1)
private let _countedBit = UInt(CSR_FLAG_USER2)

/// Words of tail storage: the flag, then the slot.
private let _flagWords = Int(CSR_FLAG_SIZE) / 8
@usableFromInline let _subscriptionTailWords = (Int(CSR_FLAG_SIZE) + Int(CSR_SLOT_SIZE)) / 8

/// The token the slot holds while the header owns the generator's disposable
/// (any aligned non-null address that is never a real object).
@inline(__always)
private var _slotToken: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 0x10)! }

/// The non-generic part of a subscription: flag, slot, keep-alive objects,
/// disposal. Also the handle returned by `Signal.start`.
///
/// `@unchecked Sendable`: the mutable header fields are guarded by the C flag
/// (its spinlock for `keepAlive`, its release claim for `sink`) and by the C
/// slot's token (for `disposable`).
///
/// Instances have no stored properties: the header and the tail are
/// allocated by `ManagedBufferPointer(bufferClass:)` (see `_Subscription.make`)
/// and destroyed in `deinit`.
@usableFromInline
class _SubscriptionBase: Disposable, CustomStringConvertible, @unchecked Sendable {
    // MARK: Storage access

    @inline(__always)
    final var storage: ManagedBufferPointer<_SubscriptionHeader, UInt64> {
        ManagedBufferPointer(unsafeBufferObject: self)
    }

    @inline(__always)
    final func withUnsafeMutablePointerToHeader<R>(_ body: (UnsafeMutablePointer<_SubscriptionHeader>) -> R) -> R {
        storage.withUnsafeMutablePointerToHeader(body)
    }

    @inline(__always)
    final func withUnsafeMutablePointerToElements<R>(_ body: (UnsafeMutablePointer<UInt64>) -> R) -> R {
        storage.withUnsafeMutablePointerToElements(body)
    }

    @inline(__always)
    final var flag: OpaquePointer {
        withUnsafeMutablePointerToElements { OpaquePointer($0) }
    }

    @inline(__always)
    final var slot: OpaquePointer {
        withUnsafeMutablePointerToElements { OpaquePointer($0 + _flagWords) }
    }

    @inline(__always)
    final var releasesSinkOnTermination: Bool {
        withUnsafeMutablePointerToHeader { $0.pointee.releasesSinkOnTermination }
    }

    @inline(__always)
    final var sinkReference: Unmanaged<AnyObject> {
        withUnsafeMutablePointerToHeader { $0.pointee.sink }
    }

    /// Initialises the tail. Called once, right after allocation.
    @usableFromInline
    final func initializeStorage() {
        withUnsafeMutablePointerToElements { words in
            words.initialize(repeating: 0, count: _subscriptionTailWords)
            csr_flag_init(OpaquePointer(words))
            csr_slot_init(OpaquePointer(words + _flagWords))
        }
        if _LiveObjects.subscriptionCreated() { _ = csr_flag_set_bits(flag, _countedBit) }
    }

    deinit {
        // No reader can exist any more: claim the sink if nobody did.
        if csr_flag_claim_release_unguarded(flag) { sinkReference.release() }
        if csr_flag_load(flag) & _countedBit != 0 { _LiveObjects.subscriptionDestroyed() }
        // The header holds the generator's disposable and the keep-alive
        // objects (released here, not disposed); the tail is plain words.
        _ = withUnsafeMutablePointerToHeader { $0.deinitialize(count: 1) }
    }

    // MARK: State

    final var isTerminated: Bool { csr_flag_is_terminated(flag) }

    /// Whether the generator's disposable is held (assigned, not yet taken).
    final var holdsDisposable: Bool { csr_slot_peek(slot) != nil }

    // MARK: The generator's disposable

    /// Stores the generator's disposable; if the subscription already ended
    /// (the slot is closed), disposes it at once.
    @usableFromInline
    final func assignDisposable(_ disposable: any Disposable) {
        // We own the header field until the token is published.
        withUnsafeMutablePointerToHeader { $0.pointee.disposable = disposable }
        var refused = false
        _ = csr_slot_exchange(slot, _slotToken, &refused)
        if refused {
            let taken = withUnsafeMutablePointerToHeader { header -> (any Disposable)? in
                defer { header.pointee.disposable = nil }
                return header.pointee.disposable
            }
            taken?.dispose()
        }
    }

    /// Closes the slot and disposes the generator's disposable if this call
    /// took it. Exactly one call ever disposes it.
    final func closeAndDisposeGeneratorDisposable() {
        var wasClosed = false
        guard csr_slot_close(slot, &wasClosed) != nil else { return }
        let taken = withUnsafeMutablePointerToHeader { header -> (any Disposable)? in
            defer { header.pointee.disposable = nil }
            return header.pointee.disposable
        }
        taken?.dispose()
    }

    // MARK: Keep-alive objects

    final func keepAlive(_ object: AnyObject) {
        let flag = self.flag
        csr_flag_lock(flag)
        withUnsafeMutablePointerToHeader { $0.pointee.keepAlive.append(object) }
        _ = csr_flag_set_bits(flag, _keepAliveBit)
        csr_flag_unlock(flag)
    }

    /// Takes the keep-alive objects (they are released when the result dies,
    /// outside the spinlock).
    final func takeKeepAlive() -> [AnyObject] {
        let flag = self.flag
        // Cheap check first: nothing was ever kept, or it was taken.
        guard csr_flag_load(flag) & _keepAliveBit != 0 else { return [] }
        csr_flag_lock(flag)
        let taken = withUnsafeMutablePointerToHeader { header -> [AnyObject] in
            defer { header.pointee.keepAlive = [] }
            return header.pointee.keepAlive
        }
        _ = csr_flag_clear_bits(flag, _keepAliveBit)
        csr_flag_unlock(flag)
        return taken
    }

    // MARK: Sink release

    /// Releases the sink. Call only after winning a release claim.
    @inline(never)
    final func releaseSink() {
        sinkReference.release()
    }

    // MARK: Disposable (the handle)

    /// Disposes the subscription: first the generator's disposable (anything
    /// it emits while being disposed is still delivered), then the subscriber
    /// is terminated without a terminal event and its callbacks are released.
    /// Idempotent and thread-safe.
    @usableFromInline
    final func dispose() {
        let flag = self.flag
        _ = csr_flag_set_bits(flag, _handleDisposedBit)
        closeAndDisposeGeneratorDisposable()
        if csr_flag_terminate(flag) && releasesSinkOnTermination && csr_flag_claim_release(flag) {
            releaseSink()
        }
        _ = takeKeepAlive()
    }

    /// The subscriber died (the source dropped it): end the subscription
    /// without disposing anything. Called from `Subscriber.deinit`.
    /// `handleReleased` tells whether the handle is gone too, in which case
    /// the generator's disposable is released first (SwiftSignalKit's release
    /// order: disposable, keep-alive objects, callbacks).
    @usableFromInline
    final func subscriberReleased(handleReleased: Bool) {
        let flag = self.flag
        _ = csr_flag_terminate(flag)
        if handleReleased {
            var wasClosed = false
            if csr_slot_close(slot, &wasClosed) != nil {
                let taken = withUnsafeMutablePointerToHeader { header -> (any Disposable)? in
                    defer { header.pointee.disposable = nil }
                    return header.pointee.disposable
                }
                _ = taken  // released here, not disposed
            }
        }
        _ = takeKeepAlive()
        // The subscriber is gone, so no delivery is in flight.
        if csr_flag_claim_release_unguarded(flag) { releaseSink() }
    }

    @usableFromInline
    var description: String {
        let disposed = csr_flag_load(flag) & _handleDisposedBit != 0
        return "SubscriberDisposable { disposable: \(disposed ? "nil" : "hasValue") }"
    }
}

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

    // MARK: Delivery

    @usableFromInline
    func putNext(_ value: T) {
        let flag = self.flag
        if releasesSinkOnTermination {
            let ticket = csr_flag_enter(flag)
            guard ticket == CSR_ENTER_FAST || ticket == CSR_ENTER_SLOW else {
                if ticket == CSR_ENTER_TERMINATED_RELEASE { releaseSink() }
                return
            }
            sink._withUnsafeGuaranteedRef { $0.putNext(value) }
            if csr_flag_exit(flag, ticket) { releaseSink() }
        } else {
            guard !csr_flag_is_terminated(flag) else { return }
            sink._withUnsafeGuaranteedRef { $0.putNext(value) }
        }
    }

    @usableFromInline
    func putError(_ error: E) {
        let flag = self.flag
        if releasesSinkOnTermination {
            guard let handler = beginGuardedTermination({ $0.error }) else { return }
            handler?(error)
        } else {
            guard csr_flag_terminate(flag) else {
                _ = takeKeepAlive()
                return
            }
            sink._withUnsafeGuaranteedRef { $0.putError(error) }
        }
        finishTermination()
    }

    @usableFromInline
    func putCompletion() {
        let flag = self.flag
        if releasesSinkOnTermination {
            guard let handler = beginGuardedTermination({ $0.completed }) else { return }
            handler?()
        } else {
            guard csr_flag_terminate(flag) else {
                _ = takeKeepAlive()
                return
            }
            sink._withUnsafeGuaranteedRef { $0.putCompletion() }
        }
        finishTermination()
    }

    /// The terminal transition for a closure sink: wins the transition,
    /// copies the one terminal handler out and releases the sink (when no
    /// other delivery is inside), so that the other callbacks are already
    /// released when the terminal one runs. Returns nil when already
    /// terminated.
    @inline(__always)
    private func beginGuardedTermination<Handler>(_ take: (_ClosureSink<T, E>) -> Handler) -> Handler? {
        let flag = self.flag
        let ticket = csr_flag_enter(flag)
        guard ticket == CSR_ENTER_FAST || ticket == CSR_ENTER_SLOW else {
            if ticket == CSR_ENTER_TERMINATED_RELEASE { releaseSink() }
            _ = takeKeepAlive()
            return nil
        }
        guard csr_flag_terminate(flag) else {
            if csr_flag_exit(flag, ticket) { releaseSink() }
            _ = takeKeepAlive()
            return nil
        }
        let handler = sink._withUnsafeGuaranteedRef { take(unsafeDowncast($0, to: _ClosureSink<T, E>.self)) }
        if csr_flag_exit(flag, ticket) { releaseSink() }
        return handler
    }

    /// After the terminal callback: dispose the generator's disposable, then
    /// release the keep-alive objects (SwiftSignalKit's order).
    @inline(__always)
    private func finishTermination() {
        closeAndDisposeGeneratorDisposable()
        _ = takeKeepAlive()
    }

    // MARK: Introspection (for `Subscriber.description`)

    /// Which callbacks are still held: (next, error, completed).
    var heldCallbacks: (Bool, Bool, Bool) {
        if isTerminated { return (false, false, false) }
        return sink._withUnsafeGuaranteedRef { sink in
            if let closures = sink as? _ClosureSink<T, E> {
                return (closures.next != nil, closures.error != nil, closures.completed != nil)
            }
            return (true, true, true)
        }
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
