// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Glibc
import Synchronization

// Shared pieces of the AsyncStream / swift-async-algorithms peer (the
// `.asyncStream` column of W2, W3, W5, W6, W9 and W10). `blockingAwait`, which
// runs a task and waits for it on this (non-pool) thread, is in
// W10ActorDelivery.swift.

/// A counter that a consumer task bumps and the sending thread watches.
final class DeliveryCounter: Sendable {
    private let count = Atomic<Int>(0)

    @inline(__always)
    func increment() { count.add(1, ordering: .releasing) }

    var value: Int { count.load(ordering: .acquiring) }

    /// Spins (yielding the CPU, never sleeping) until `value >= target`.
    @inline(__always)
    func wait(until target: Int) {
        while count.load(ordering: .acquiring) < target { sched_yield() }
    }
}
