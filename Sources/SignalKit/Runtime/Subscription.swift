// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

internal import CSignalRuntime
public import Synchronization

// ---------------------------------------------------------------------------
// The subscription object
//
// A subscription is two objects:
//
// * `Subscriber` — what the generator receives. Its lifetime is the source's
//   hold on the subscription: when the source drops it, its deinit ends the
//   subscription (callbacks released, as in SwiftSignalKit).
// * `_Subscription` (`_SubscriptionBase` here, the typed delivery half in
//   Engine/Subscription+Delivery.swift) — the state, and also the handle `start`
//   returns. It is allocated through `ManagedBufferPointer(bufferClass:)`, so
//   that the C terminated flag and the C disposable slot live in its tail
//   storage (C primitives must never sit in a Swift stored property) while
//   the class itself stays an ordinary `Sendable` class (a `ManagedBuffer`
//   subclass cannot be `Sendable`). It never references the `Subscriber`, so
//   holding the handle does not keep the callbacks alive.
// * what receives the events, one of two kinds:
//   - the user's callbacks (`start(next:error:completed:)`,
//     `Subscriber(next:error:completed:)`): three optional closures stored in
//     the subscription's own tail, after the flag and the slot (no object of
//     their own). They are released at termination: the flag's release claim
//     says who destroys them (the terminal call, the handle's `dispose()`,
//     the last delivery to leave the reader guard, or the subscription's
//     `deinit`), exactly once and never while a delivery is inside the guard.
//     The terminal callback is copied out inside the guard before the others
//     go. So the release order is unchanged from when they lived in an
//     object: terminal callback, generator's disposable (once), keep-alive
//     objects; the handle outlives the callbacks.
//   - the sink of a SignalKit operator: a struct stored in the same place
//     (`_InlineSink`, in the subclass `_InlineSinkSubscription`: no object
//     of its own either). It is "pinned": destroyed when the subscriber
//     dies, which costs the per-event path nothing (a delivery comes through
//     the subscriber, which keeps it alive), by whoever wins the same
//     release claim (the subscriber's release work, a handle `dispose()`
//     that finishes it, or the subscription's `deinit`).
//
// The generator's disposable is held in the header, its ownership tracked by
// the C slot: the slot holds a token while the header owns a disposable,
// and whoever closes the slot and finds the token disposes it — exactly once
// (SignalKit disposes a generator's disposable exactly once on every path).
// ---------------------------------------------------------------------------

/// Header of a `_Subscription`; the tail holds the C flag then the C slot.
///
/// Plain data on purpose (only `Unmanaged` references): building, copying
/// and destroying it costs no value-witness calls. `_SubscriptionBase.deinit`
/// releases what it still holds.
@usableFromInline
struct _SubscriptionHeader {
    /// The generator's disposable (+1); owned by whoever owns the slot's token.
    @usableFromInline var disposable: Unmanaged<AnyObject>?
    /// Objects kept alive by `Subscriber.keepAlive` (+1), under the flag's
    /// spinlock; allocated on first use.
    @usableFromInline var keepAlive: Unmanaged<_KeepAliveList>?
    /// A SignalKit source's bag entry for this subscriber (see
    /// `registerSourceEntry`), under the flag's spinlock: the bag (+1), the
    /// key, and an object kept alive (+1) until the entry is removed.
    @usableFromInline var sourceBag: Unmanaged<_SubscriberBagBase>?
    @usableFromInline var sourceKey: UInt64
    @usableFromInline var sourceOwner: Unmanaged<AnyObject>?

    @inlinable
    init() {
        self.disposable = nil
        self.keepAlive = nil
        self.sourceBag = nil
        self.sourceKey = 0
        self.sourceOwner = nil
    }
}

/// The objects `Subscriber.keepAlive` keeps.
@usableFromInline
final class _KeepAliveList {
    var objects: [AnyObject] = []
    init() {}
}

/// Bits of the C flag that the subscription uses for itself.
/// The handle's `dispose()` began (set once, by the first call).
private let _handleDisposedBit = UInt(CSR_FLAG_USER0)
private let _keepAliveBit = UInt(CSR_FLAG_USER1)
private let _countedBit = UInt(CSR_FLAG_USER2)
private let _sourceEntryBit = UInt(CSR_FLAG_USER3)
/// The `Subscriber` died (the source released it) while the handle's
/// `dispose()` was disposing the generator's disposable; that `dispose()`
/// does the subscriber's release work once the disposable has returned.
private let _subscriberGoneBit = UInt(CSR_FLAG_USER4)
/// The subscription holds user callbacks in its tail, released at
/// termination (else a pinned operator sink, released when the subscriber
/// dies, or nothing). Set when the flag is initialised, never changed: a
/// bit rather than a header field saves a word in every subscription.
private let _releasesSinkBit = UInt(CSR_FLAG_USER5)

/// Words of tail storage: the flag, then the slot (then, for a subscription
/// with user callbacks, the callbacks: see `_Subscription.callbacks`; for
/// one with an inline sink, the sink: see `_InlineSinkSubscription`).
private let _flagWords = Int(CSR_FLAG_SIZE) / 8
@usableFromInline let _subscriptionTailWords = (Int(CSR_FLAG_SIZE) + Int(CSR_SLOT_SIZE)) / 8

/// The token the slot holds while the header owns the generator's disposable
/// (any aligned non-null address that is never a real object).
@inline(__always)
private var _slotToken: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 0x10)! }

/// The token for `EmptyDisposable`: nothing to store, retain or dispose.
@inline(__always)
private var _emptyToken: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 0x20)! }

/// The non-generic part of a subscription: flag, slot, keep-alive objects,
/// disposal. Also the handle returned by `Signal.start`.
///
/// `@unchecked Sendable`: the mutable header fields are guarded by the C flag
/// (its spinlock for `keepAlive`, its release claim for the tail's callbacks
/// or operator sink) and by the C slot's token (for `disposable`).
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

    /// A pointer to one field of the header. Fields are always accessed
    /// through their own pointers (never through the whole header struct), so
    /// that a write of one field (under its own protocol) and a read of
    /// another on a different thread are separate accesses, as they are in
    /// memory. The offset folds to a constant in optimised builds.
    @inline(__always)
    final func headerField<Field>(_ field: KeyPath<_SubscriptionHeader, Field>) -> UnsafeMutablePointer<Field> {
        withUnsafeMutablePointerToHeader { header in
            UnsafeMutableRawPointer(header)
                .advanced(by: MemoryLayout<_SubscriptionHeader>.offset(of: field)!)
                .assumingMemoryBound(to: Field.self)
        }
    }

    @inline(__always)
    final var flag: OpaquePointer {
        withUnsafeMutablePointerToElements { OpaquePointer($0) }
    }

    @inline(__always)
    final var slot: OpaquePointer {
        withUnsafeMutablePointerToElements { OpaquePointer($0 + _flagWords) }
    }

    /// Whether the tail holds user callbacks (see `_releasesSinkBit`). A
    /// relaxed load: the bit is written before the subscription is
    /// published and never again.
    @inline(__always)
    final var releasesSinkOnTermination: Bool {
        terminationProbe.state.pointee.load(ordering: .relaxed) & _releasesSinkBit != 0
    }

    /// Where a subscription with user callbacks or an inline sink keeps
    /// them: the tail words after the flag and the slot (see
    /// `_Subscription.callbacks`, `_InlineSinkSubscription.inlineSink`).
    @inline(__always) @usableFromInline
    final var callbackStorage: UnsafeMutableRawPointer {
        withUnsafeMutablePointerToElements { UnsafeMutableRawPointer($0 + _subscriptionTailWords) }
    }

    /// Initialises the tail. Called once, right after allocation.
    /// `releasesSinkOnTermination`: the tail will hold user callbacks.
    @usableFromInline
    final func initializeStorage(releasesSinkOnTermination: Bool) {
        withUnsafeMutablePointerToElements { words in
            words.initialize(repeating: 0, count: _subscriptionTailWords)
            csr_flag_init_with_bits(OpaquePointer(words), releasesSinkOnTermination ? _releasesSinkBit : 0)
            csr_slot_init(OpaquePointer(words + _flagWords))
        }
        if _LiveObjects.subscriptionCreated() { _ = csr_flag_set_bits(flag, _countedBit) }
    }

    deinit {
        // The tail's callbacks or operator sink were released by now: the
        // subclass's deinit, which ran first and knows their type, claimed
        // them if nobody had.
        if csr_flag_load(flag) & _countedBit != 0 { _LiveObjects.subscriptionDestroyed() }
        // Release (never dispose) what the header still holds, in
        // SwiftSignalKit's order: the generator's disposable, then the
        // keep-alive objects. The tail is plain words.
        headerField(\.disposable).pointee?.release()
        headerField(\.keepAlive).pointee?.release()
        // Set only while the entry bit is set (nobody claimed it).
        headerField(\.sourceBag).pointee?.release()
        headerField(\.sourceOwner).pointee?.release()
    }

    // MARK: State

    @inline(__always) final var isTerminated: Bool { terminationProbe.isTerminated }

    /// Whether this subscription, or one downstream of it, has ended
    /// (terminated, disposed, or released by its source): the chain of
    /// SignalKit operator sinks is followed through
    /// `_InlineSink.downstreamSubscription` up to the user's callbacks, or up to a
    /// sink that does not tell. One acquire load per link.
    ///
    /// The loop operators (`restart`, `retry`, `then`, `feedbackLoop`, …)
    /// ask it between iterations (loops stop when their downstream stops),
    /// never on the per-event path. The caller must hold the `Subscriber` of
    /// this subscription: that keeps every sink on the chain alive (an
    /// operator sink is pinned until its subscriber dies, and holds its
    /// downstream subscriber).
    final var hasEnded: Bool {
        var current = self
        while true {
            if current.isTerminated { return true }
            // A user-callback sink ends the chain (and may be released
            // concurrently once terminated).
            if current.releasesSinkOnTermination { return false }
            guard let next = current.sinkDownstreamSubscription() else { return false }
            current = next
        }
    }

    /// The pinned sink's `downstreamSubscription` (see `hasEnded`).
    func sinkDownstreamSubscription() -> _SubscriptionBase? { nil }

    /// A handle on the terminated state that does not retain the
    /// subscription; see `_TerminationProbe`.
    final var terminationProbe: _TerminationProbe { _TerminationProbe(flag: flag) }

    /// Whether the subscriber holds the generator's disposable, as
    /// SwiftSignalKit's `Subscriber.description` reports it: from the moment
    /// the generator returned it until the terminal event or the handle's
    /// disposal marks the subscriber terminated. So `nil` inside the generator
    /// and inside the terminal callbacks, `hasValue` inside the generator's
    /// disposable while the handle disposes it (SwiftSignalKit marks the
    /// subscriber terminated only once that disposable returned).
    final var holdsDisposable: Bool {
        let state = csr_flag_load(flag)
        if state & UInt(CSR_FLAG_TERMINATED) != 0 { return false }
        if csr_slot_peek(slot) != nil { return true }
        // Not terminated, so a `dispose()` that began is still disposing it.
        return state & _handleDisposedBit != 0
    }

    /// Whether the generator is still running: it has not returned its
    /// disposable yet, and the subscription was not disposed meanwhile.
    /// Read by the signal-of-signals engine for the values of an inner that
    /// is no longer current (they are delivered while its `_start` has not
    /// returned). Two acquire loads on the slot.
    final var generatorIsRunning: Bool {
        csr_slot_peek(slot) == nil && !csr_slot_is_closed(slot)
    }

    /// Whether the subscription still holds a source entry (tests).
    final var holdsSourceEntry: Bool { hasSourceEntry }

    // MARK: The generator's disposable

    /// Stores the generator's disposable; if the subscription already ended
    /// (the slot is closed), disposes it at once.
    @usableFromInline
    final func assignDisposable(_ disposable: any Disposable) {
        if disposable === EmptyDisposable {
            // Nothing to keep or dispose: publish the empty token.
            var refused = false
            _ = csr_slot_exchange(slot, _emptyToken, &refused)
            return
        }
        // We own the header field until the token is published.
        let retained = Unmanaged.passRetained(disposable as AnyObject)
        headerField(\.disposable).pointee = retained
        var refused = false
        _ = csr_slot_exchange(slot, _slotToken, &refused)
        if refused {
            disposeGeneratorDisposable()
        }
    }

    /// Moves the generator's disposable out of the header (+1 to the
    /// caller). Only the owner of the slot's token may call it.
    @inline(__always)
    private final func takeGeneratorDisposable() -> Unmanaged<AnyObject>? {
        headerField(\.disposable).pointee.take()
    }

    /// Takes the generator's disposable out of the header, disposes and
    /// releases it. Only the owner of the slot's token may call it.
    @inline(__always)
    private final func disposeGeneratorDisposable() {
        if let taken = takeGeneratorDisposable() {
            _dispose(taken.takeRetainedValue())
        }
    }

    /// Closes the slot, disposes the generator's disposable if this call took
    /// it, and removes the source entry. Exactly one call ever does this.
    final func closeAndDisposeGeneratorDisposable() {
        var wasClosed = false
        let previous = csr_slot_close(slot, &wasClosed)
        guard !wasClosed else { return }
        if previous == _slotToken {
            disposeGeneratorDisposable()
        }
        removeSourceEntry()
    }

    // MARK: Source entries

    /// Whether a source entry may be registered (the entry itself is read
    /// under the spinlock). A flag bit, so that the check is one load.
    @inline(__always)
    private final var hasSourceEntry: Bool {
        csr_flag_load(flag) & _sourceEntryBit != 0
    }

    /// See `Subscriber.registerSourceEntry`.
    ///
    /// The entry's fields are published by setting the entry bit (a full
    /// barrier) and claimed by clearing it (`takeSourceEntry`): whoever clears
    /// the bit owns the fields, so they are read and released exactly once
    /// without a lock. Races with the end of the subscription on another
    /// thread are settled Dekker-style: we set the bit, then look at the slot;
    /// the ending side closes the slot (a full barrier), then looks at the
    /// bit. At least one of us sees the other and takes the entry.
    final func registerSourceEntry(bag: _SubscriberBagBase, key: UInt64, owner: AnyObject?) {
        headerField(\.sourceBag).pointee = Unmanaged.passRetained(bag)
        headerField(\.sourceKey).pointee = key
        headerField(\.sourceOwner).pointee = owner.map { Unmanaged.passRetained($0) }
        _ = csr_flag_set_bits(flag, _sourceEntryBit)
        if csr_slot_is_closed(slot) {
            // The subscription already ended: remove at once.
            removeSourceEntry()
        }
    }

    /// Claims the source entry by clearing its bit; nil if someone else did
    /// (or there is none). The caller owns the returned references.
    private final func takeSourceEntry() -> (bag: _SubscriberBagBase, key: UInt64, owner: AnyObject?)? {
        guard csr_flag_clear_bits(flag, _sourceEntryBit) & _sourceEntryBit != 0 else { return nil }
        guard let bag = headerField(\.sourceBag).pointee.take() else { return nil }
        return (
            bag.takeRetainedValue(), headerField(\.sourceKey).pointee,
            headerField(\.sourceOwner).pointee.take()?.takeRetainedValue()
        )
    }

    /// Removes the source entry from its bag; the bag and the owner are
    /// released afterwards.
    private final func removeSourceEntry() {
        guard hasSourceEntry, let entry = takeSourceEntry() else { return }
        entry.bag.remove(entry.key)
    }

    // MARK: Keep-alive objects

    final func keepAlive(_ object: AnyObject) {
        let list = _KeepAliveList()
        let flag = self.flag
        csr_flag_lock(flag)
        let field = headerField(\.keepAlive)
        if field.pointee == nil { field.pointee = Unmanaged.passRetained(list) }
        field.pointee!.takeUnretainedValue().objects.append(object)
        _ = csr_flag_set_bits(flag, _keepAliveBit)
        csr_flag_unlock(flag)
    }

    /// Takes the keep-alive objects (they are released when the result dies,
    /// outside the spinlock).
    final func takeKeepAlive() -> _KeepAliveList? {
        let flag = self.flag
        // Cheap check first: nothing was ever kept, or it was taken.
        guard csr_flag_load(flag) & _keepAliveBit != 0 else { return nil }
        csr_flag_lock(flag)
        let taken = headerField(\.keepAlive).pointee.take()
        _ = csr_flag_clear_bits(flag, _keepAliveBit)
        csr_flag_unlock(flag)
        return taken?.takeRetainedValue()
    }

    // MARK: Sink release

    // MARK: The reader guard, for the typed half (Engine/Subscription+Delivery.swift)

    /// Enters the flag's reader guard around a use of the sink: the ticket
    /// for `exitReaderGuard`, or nil when the subscription has terminated
    /// (then the sink was released here if this caller owed the release).
    @inline(__always)
    final func enterReaderGuard() -> Int32? {
        let ticket = csr_flag_enter(flag)
        if ticket == CSR_ENTER_FAST || ticket == CSR_ENTER_SLOW { return ticket }
        if ticket == CSR_ENTER_TERMINATED_RELEASE { releaseSink() }
        return nil
    }

    /// Leaves the reader guard; releases the sink if the subscription
    /// terminated meanwhile and this was the last reader.
    @inline(__always)
    final func exitReaderGuard(_ ticket: Int32) {
        if csr_flag_exit(flag, ticket) { releaseSink() }
    }

    /// The terminal transition (`csr_flag_terminate`): true for the one
    /// caller that performed it.
    @inline(__always)
    final func performTerminalTransition() -> Bool {
        csr_flag_terminate(flag)
    }

    /// Destroys the user callbacks or the operator sink in the tail. Call
    /// only after winning a release claim.
    @inline(never)
    final func releaseSink() {
        if releasesSinkOnTermination {
            destroyCallbacks()
        } else {
            destroyInlineSink()
        }
    }

    /// Destroys the user callbacks in the tail (`_Subscription` knows their
    /// type). Call only from `releaseSink`.
    func destroyCallbacks() {}

    /// Destroys the inline sink in the tail (`_InlineSinkSubscription` knows
    /// its type). Call only from `releaseSink`.
    func destroyInlineSink() {}

    /// Claims the release of the sink or callbacks when no reader can exist
    /// (deinit): true for the caller that must release them.
    @inline(__always)
    final func claimReleaseUnguarded() -> Bool {
        csr_flag_claim_release_unguarded(flag)
    }

    // MARK: Disposable (the handle)

    /// Disposes the subscription: first the generator's disposable (anything
    /// it emits while being disposed is still delivered), then the subscriber
    /// is terminated without a terminal event, its callbacks are released,
    /// then its keep-alive objects. Thread-safe. Only the first call does
    /// anything: a second `dispose()` is a no-op in every respect, as in
    /// SwiftSignalKit (a keep-alive object registered after the first one
    /// lives until a later terminal call or the subscriber's death).
    ///
    /// If the source releases the subscriber from inside the generator's
    /// disposable, the subscriber's own release work (`subscriberReleased`)
    /// is left to this call, which does it after that disposable returned:
    /// the user's dispose action always finishes before the callbacks and
    /// keep-alive objects are released, in SwiftSignalKit's order.
    @usableFromInline
    final func dispose() {
        let flag = self.flag
        // The inner first (events it emits meanwhile are still delivered), so
        // only mark the handle disposed here; terminate afterwards.
        guard csr_flag_set_bits(flag, _handleDisposedBit) & _handleDisposedBit == 0 else { return }
        closeAndDisposeGeneratorDisposable()
        // The terminal transition, returning the state it found: that state
        // (plus TERMINATED) serves every check below without another load.
        let state = csr_flag_terminate_setting(flag, 0) | UInt(CSR_FLAG_TERMINATED)
        // Hand-off with `subscriberReleased`, settled by the order of the
        // read-modify-writes on the state word: a subscriber that died before
        // our transition terminated and set its bit in one RMW, so `state`
        // shows it and its release work is ours, now that the generator's
        // disposable has returned; one that died after it does its own work.
        if state & _subscriberGoneBit != 0 {
            // The subscriber is gone, so no delivery can be in flight: the
            // callbacks go unconditionally (pinned sinks too, as at the
            // subscriber's death), then the keep-alive objects, then the
            // reference to the (already removed) source entry.
            if csr_flag_claim_release_unguarded(flag) { releaseSink() }
            if state & _keepAliveBit != 0 { _ = takeKeepAlive() }
            if hasSourceEntry { _ = takeSourceEntry() }
            return
        }
        // Whoever terminated, the callbacks go now unless a delivery is inside
        // (it releases them when it leaves) or they went already.
        if releasesSinkOnTermination && state & UInt(CSR_FLAG_RELEASED) == 0 && csr_flag_claim_release(flag) {
            releaseSink()
        }
        if state & _keepAliveBit != 0 { _ = takeKeepAlive() }
    }

    /// The subscriber died (the source dropped it): end the subscription
    /// without disposing anything. Called from `Subscriber.deinit`.
    /// `handleReleased` tells whether the handle is gone too, in which case
    /// the generator's disposable is released first (SwiftSignalKit's release
    /// order: disposable, keep-alive objects, callbacks). While the handle's
    /// `dispose()` is running, it does this work instead, once the generator's
    /// disposable has returned (see `dispose()`).
    @usableFromInline @inline(never)
    final func subscriberReleased(handleReleased: Bool) {
        let flag = self.flag
        // A handle `dispose()` between its start and its terminal transition
        // is (or may be) running the generator's disposable, possibly the very
        // code that released us: terminate, and leave the rest of the work to
        // it with the bit set in the same RMW (its load after its own
        // transition attempt sees both). If it reached the transition first,
        // the result shows TERMINATED and we do the work. One RMW, as the
        // plain termination below would cost; the common paths (no dispose
        // running, or the subscription already ended) add one load.
        let state = csr_flag_load(flag)
        if state & _handleDisposedBit != 0 && state & UInt(CSR_FLAG_TERMINATED) == 0 {
            let previous = csr_flag_terminate_setting(flag, _subscriberGoneBit)
            if previous & UInt(CSR_FLAG_TERMINATED) == 0 { return }
        }
        finishSubscriberRelease(handleReleased: handleReleased)
    }

    /// The release work of a dead subscriber. Idempotent: every step takes
    /// what it releases (the flag's claim, the slot, the entry bit, the
    /// keep-alive list).
    @inline(__always)
    private final func finishSubscriberRelease(handleReleased: Bool) {
        let flag = self.flag
        _ = csr_flag_terminate(flag)
        if handleReleased {
            var wasClosed = false
            if csr_slot_close(slot, &wasClosed) == _slotToken {
                takeGeneratorDisposable()?.release()  // released, not disposed
            }
        }
        // The source released the subscriber, so its entry is gone: drop the
        // reference without removing anything.
        if hasSourceEntry { _ = takeSourceEntry() }
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

/// Reads a subscription's terminated flag through a plain pointer: no
/// retain or release of the subscription per read (a fused operator stage
/// checks it once per value). Valid only while the subscription is alive;
/// the holder must guarantee that (fused stages: the chain ends in a
/// final stage function capturing the subscriber, which holds the
/// subscription).
@usableFromInline
struct _TerminationProbe: @unchecked Sendable {
    // `@unchecked Sendable`: a pointer to the flag's state word, only read,
    // with an atomic load.
    /// The flag's state word: its first word (a layout fact csr_flag.h
    /// documents and csr_flag.c asserts), viewed as an atomic so that the
    /// load below is written in Swift.
    @usableFromInline let state: UnsafeMutablePointer<Synchronization.Atomic<UInt>>

    init(flag: OpaquePointer) {
        self.state = UnsafeMutableRawPointer(flag).assumingMemoryBound(to: Synchronization.Atomic<UInt>.self)
        assert(Self.terminatedBit == UInt(CSR_FLAG_TERMINATED), "CSR_FLAG_TERMINATED moved")
    }

    /// CSR_FLAG_TERMINATED, spelled here because `@inlinable` code cannot
    /// name the C module (checked against it in `init`).
    @inlinable static var terminatedBit: UInt { 0x1 }

    /// Acquire load of the flag's TERMINATED bit, as `csr_flag_is_terminated`
    /// does. `@inlinable`: the fused stage functions are specialised in the
    /// client module, and calling out of it (into this getter, then into C)
    /// per stage and value would add two calls to W2's per-value path
    /// (`scripts/callgrind W2 SignalKit` counts its instructions).
    @inlinable
    var isTerminated: Bool { state.pointee.load(ordering: .acquiring) & Self.terminatedBit != 0 }
}
