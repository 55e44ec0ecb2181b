// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// A subscription's own buffer figures, without a name: the probe a bounded
// policy carries (`SignalBuffer.counted(by:)`). Every bounded boundary takes
// a `SignalBuffer`, so every one counts into the probe of the buffer it is
// given, besides its name's entry (BufferStatistics.swift).

/// The figures of the bounded boundaries whose buffer it counts, read
/// without a name: a subscription's own drops, overflows, blocked sends and
/// depth.
///
/// Make a buffer that counts into it with ``SignalBuffer/counted(by:)`` and
/// give that buffer to any bounded boundary: `deliverOn(_:buffer:)` (a
/// queue, a thread pool, an event loop), `delayEvents(_:queue:buffer:)`,
/// `queue(buffer:)`, `mapToQueue(buffer:_:)`, `values(buffer:)`,
/// `start(isolation:buffer:next:error:completed:)`. A probe counts every
/// subscription through those boundaries: for one subscription's figures,
/// give each subscription a probe of its own (build its signal, or its
/// buffer, per subscription). The boundaries count into their name's entry
/// of ``SignalKitDebug/bufferStatistics()`` as well; a probe is never
/// removed and keeps its counters for as long as you hold it, whatever
/// happens to that entry. An ``SignalBuffer/unbounded`` buffer is the
/// unbounded boundary itself, which counts nothing: its probe stays at zero.
///
/// ```swift
/// let probe = SignalBufferProbe()
/// let handle = (quotes |> deliverOn(clientQueue, buffer: .droppingOldest(beyond: 100).counted(by: probe)))
///     .start(next: { print($0) })
/// // later, even after the subscription ended:
/// print(probe.statistics.drops)
/// ```
public final class SignalBufferProbe: Sendable {
    /// Made by the first boundary subscription that counts into the probe,
    /// with that boundary's name and policy.
    private let counters = _LockedState<_BufferCounters?>(nil)

    public init() {}

    /// What the boundaries counted so far: drops, overflows and blocked
    /// sends since the first subscription, the values waiting now and the
    /// live subscriptions. `name` and `policy` are those of the first
    /// boundary that counted into the probe (empty, with every figure 0,
    /// before one did).
    ///
    /// Cost: one lock, and one per live subscription (to read its depth).
    public var statistics: SignalBufferStatistics {
        guard let counters = counters.withLock({ $0 }) else {
            return SignalBufferStatistics(
                name: "", policy: "", drops: 0, overflows: 0, blockedSends: 0, depth: 0, maximumDepth: 0,
                liveSubscriptions: 0)
        }
        return counters.snapshot()
    }

    /// The probe's counters, counting one more subscription that uses them.
    func open(name: String, policy: String) -> _BufferCounters {
        let opened = counters.withLock { counters in
            if let counters { return counters }
            let made = _BufferCounters(name: name, policy: policy, serial: 0)
            counters = made
            return made
        }
        opened.opened()
        return opened
    }
}
