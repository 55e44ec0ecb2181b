// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Operator sinks, stored in the subscription's own tail.
//
// An operator sink is pinned: it lives exactly as long as the subscriber
// (destroyed by whoever wins the flag's release claim once the subscriber
// died, see Runtime/Subscription.swift). A delivery reaches it through the
// subscriber, which keeps it alive, and nothing else references it. So it
// needs no object of its own: `_InlineSinkSubscription` stores it as a
// struct in the tail words after the C flag and slot and destroys it in
// place. A subscription through an operator is two allocations (the
// subscriber and the subscription) where a sink object made it three.
//
// What another object must reach (an operator's shared state, a buffer an
// iterator reads) is a class of its own that the sink holds.
//
// Cost per value: one virtual call (`_InlineSinkSubscription.putNext`) and
// one protocol-witness call into the sink; mark a hot sink's `putNext`
// `@inline(__always)` so that its body is the witness (a fused `map` chain
// then pays no call beyond those two).

/// An operator sink stored in its subscription's tail (see the file header).
///
/// Its state is in `let`s (mutable state behind a lock, an atomic or in a
/// class of its own): a delivery borrows it in place, from any thread the
/// source delivers on; the source contract (serial calls) is what makes
/// that safe, as in SwiftSignalKit. `putNext`, `putError` and
/// `putCompletion` follow the `Subscriber` grammar and threading; the
/// terminal calls come after the subscription's terminal transition.
@usableFromInline
protocol _InlineSink<Input, Failure>: ~Copyable {
    associatedtype Input
    associatedtype Failure

    /// `subscription` is the one this sink is stored in, for the sinks that
    /// need its state (`generatorIsRunning`).
    func putNext(_ value: Input, from subscription: _SubscriptionBase)
    func putError(_ error: Failure)
    func putCompletion()

    /// The subscription this sink delivers to, when everything it does is
    /// for that one downstream subscription (so that once it has ended, the
    /// sink's upstream work is useless); nil otherwise. Read only by the
    /// loop operators between iterations (`_SubscriptionBase.hasEnded`),
    /// never per event. Sinks return the subscription of a `Subscriber` they
    /// hold in a `let`, which keeps it (and, transitively, its pinned sink)
    /// alive while the caller holds this sink's subscriber.
    var downstreamSubscription: _SubscriptionBase? { get }
}

extension _InlineSink where Self: ~Copyable {
    /// A sink that works for more than one downstream subscription (or
    /// none) does not tell.
    @usableFromInline var downstreamSubscription: _SubscriptionBase? { nil }
}

/// A subscription whose operator sink `S` lives in its tail.
///
/// `@unchecked Sendable`: as `_Subscription`; the sink in the tail is written
/// once before the subscription is published and destroyed only by the
/// winner of the flag's release claim.
@usableFromInline
final class _InlineSinkSubscription<S: _InlineSink & ~Copyable>: _Subscription<S.Input, S.Failure>,
    @unchecked Sendable
{
    /// Allocates a subscription and moves `sink` into its tail.
    @inlinable
    static func make(_ sink: consuming S) -> _InlineSinkSubscription<S> {
        precondition(MemoryLayout<S>.alignment <= 8, "an inline sink must not need more than 8-byte alignment")  // invariant
        let pointer = ManagedBufferPointer<_SubscriptionHeader, UInt64>(
            bufferClass: self,
            minimumCapacity: _subscriptionTailWords + (MemoryLayout<S>.size + 7) / 8
        ) { _, _ in
            _SubscriptionHeader()
        }
        let subscription = unsafeDowncast(pointer.buffer, to: self)
        subscription.initializeStorage(releasesSinkOnTermination: false)
        subscription.inlineSink.initialize(to: sink)
        return subscription
    }

    deinit {
        // Before `_SubscriptionBase.deinit`: the sink's type is known here.
        if claimReleaseUnguarded() { destroyInlineSink() }
    }

    /// The sink: initialised until the release claim is won (after the
    /// subscriber died), read only through the subscriber, which keeps it
    /// initialised while a delivery runs. `S` is this class's generic
    /// argument, so reaching it needs no runtime metadata lookup.
    @inline(__always) @usableFromInline
    var inlineSink: UnsafeMutablePointer<S> {
        callbackStorage.assumingMemoryBound(to: S.self)
    }

    override func destroyInlineSink() {
        // `move()` destroys through one value-witness call; `deinitialize(count:)`
        // goes through the runtime's array destroy, which costs more
        // instructions per subscription (`scripts/callgrind W6 SignalKit`).
        _ = inlineSink.move()
    }

    override func sinkDownstreamSubscription() -> _SubscriptionBase? {
        inlineSink.pointee.downstreamSubscription
    }

    override func putNext(_ value: S.Input) {
        guard !isTerminated else { return }
        inlineSink.pointee.putNext(value, from: self)
    }

    override func inlineSinkPutError(_ error: S.Failure) {
        inlineSink.pointee.putError(error)
    }

    override func inlineSinkPutCompletion() {
        inlineSink.pointee.putCompletion()
    }
}
