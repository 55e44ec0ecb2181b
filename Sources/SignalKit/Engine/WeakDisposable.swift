// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// The disposable a generator returns when its operator's shared state
/// references the downstream subscriber (through a `_SerialDelivery`):
/// disposes the state if it is still alive, and holds it weakly.
///
/// Holding the state strongly would close a reference cycle — downstream
/// subscription → its generator's disposable → state → downstream subscriber
/// → downstream subscription — that only termination or disposal breaks, so
/// a subscription whose sources let go of their subscribers (which ends it
/// silently, releasing the callbacks) would leak instead. The state lives as
/// long as the sinks of its inputs do (each input's subscription pins its
/// sink until that input's subscriber is released); once none does, nothing
/// can deliver any more and the state, the downstream subscriber and its
/// callbacks go.
final class _WeakDisposable: Disposable {
    private weak let target: (any Disposable)?

    init(_ target: any Disposable) {
        self.target = target
    }

    func dispose() {
        target?.dispose()
    }
}
