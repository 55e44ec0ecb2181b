// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Operator sinks stored in the subscription's own tail.
//
// An operator sink is pinned: it lives exactly as long as the subscriber
// (released by whoever wins the flag's release claim once the subscriber
// died, see Runtime/Subscription.swift). So it needs no object of its own
// when nothing else references it: `_InlineSinkSubscription` stores it as a
// struct in the tail words after the C flag and slot, where a sink object's
// reference would otherwise be, and destroys it in place at exactly the
// moment that object would have been released. One allocation less per
// subscription; the release order is unchanged.
//
// A sink that another object must reach (a receiver that a state object
// calls, a sink read again after its `_start` returned) stays a `_Sink`
// object.

/// An operator sink stored in its subscription's tail (see the file header).
///
/// Its state is in `let`s (mutable state behind a lock or an atomic, as in a
/// `_Sink`): a delivery borrows it in place. `putNext`, `putError` and
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

    /// As `_Sink.downstreamSubscription`.
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
        precondition(MemoryLayout<S>.alignment <= 8, "an inline sink must not need more than 8-byte alignment")
        let pointer = ManagedBufferPointer<_SubscriptionHeader, UInt64>(
            bufferClass: self,
            minimumCapacity: _subscriptionTailWords + (MemoryLayout<S>.size + 7) / 8
        ) { _, _ in
            _SubscriptionHeader(sink: nil, releasesSinkOnTermination: false)
        }
        let subscription = unsafeDowncast(pointer.buffer, to: self)
        subscription.initializeStorage()
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
        inlineSink.deinitialize(count: 1)
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
