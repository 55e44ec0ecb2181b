// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

internal import CSignalRuntime
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One unit of work in a `_WorkRing`: the retained object a ring cell
/// points to. Subclasses carry their work's state in the item itself, so
/// that scheduling it costs one allocation (`_ClosureWorkItem` for a closure;
/// `deliverOn`'s item holds the subscriber and the value).
///
/// `@unchecked Sendable`: an item is handed from its producer to the one
/// consumer thread through the ring (a release/acquire pair) and only run
/// there; subclasses keep only `Sendable` state.
class _WorkItem: @unchecked Sendable {
    /// Runs the work. The consumer thread only.
    func run() {}
}

/// A closure as a `_WorkItem`.
///
/// `@unchecked Sendable`: restated from `_WorkItem`; its one stored property
/// is a `@Sendable` closure.
final class _ClosureWorkItem: _WorkItem, @unchecked Sendable {
    let work: @Sendable () -> Void

    init(_ work: @escaping @Sendable () -> Void) {
        self.work = work
    }

    override func run() { work() }
}

/// How the consumer of a `_WorkRing` waits (the C `csr_wait_strategy`).
enum _RingWait: Sendable {
    case park
    case spinThenPark(nanoseconds: UInt64)
    case busySpin
}

/// The counters of a `_WorkRing` (the C `csr_ring_statistics`).
struct _WorkRingCounters: Sendable {
    var capacity: Int
    var ringDepth: Int
    var spillDepth: Int
    var spilledTotal: Int
    var parks: Int
    var wakes: Int
}

/// The work queue of a dedicated thread: CSignalRuntime's bounded
/// multi-producer ring with its counted spill list and futex parking
/// (`csr_ring.h` describes the protocol, `Tests/Models/csr_ring.pml` checks
/// it), holding `_WorkItem`s.
///
/// `@unchecked Sendable`: the C ring is safe for any number of pushing
/// threads by its contract; `pop`, `drain` and `makeCurrent` are for the one
/// consumer thread only, which the owner (`DedicatedThreadScheduler`'s core)
/// guarantees by calling them only from the thread it starts.
final class _WorkRing: @unchecked Sendable {
    private let ring: OpaquePointer

    /// A ring of `capacity` cells (rounded up to a power of two, at least 2).
    init(capacity: Int) {
        guard let ring = csr_ring_create(max(capacity, 2)) else {
            _signalKitMisuse("DedicatedThreadScheduler: no memory for a ring of \(capacity) cells")
        }
        self.ring = ring
    }

    deinit {
        // Work pushed after the consumer left (a push racing shutdown) is
        // released here without running.
        _ = drain()
        let destroyed = csr_ring_destroy(ring)
        assert(destroyed, "the ring was drained above and nobody else holds it")
    }

    /// Appends `item` (the ring takes a +1 reference) and wakes the consumer
    /// if it sleeps. Returns true when the ring was full and the item spilled.
    @inline(__always)
    @discardableResult
    func push(_ item: _WorkItem) -> Bool {
        csr_ring_push(ring, Unmanaged.passRetained(item).toOpaque()) == CSR_PUSH_SPILLED
    }

    /// The next item, waiting by `wait` until one arrives or until the
    /// monotonic clock reaches `deadline` (nanoseconds, 0: none): nil then.
    /// Consumer thread only.
    @inline(__always)
    func pop(waiting wait: _RingWait, until deadline: UInt64) -> _WorkItem? {
        let raw: UnsafeMutableRawPointer?
        switch wait {
        case .park:
            raw = csr_ring_pop_wait(ring, CSR_WAIT_PARK, 0, deadline)
        case .spinThenPark(let nanoseconds):
            raw = csr_ring_pop_wait(ring, CSR_WAIT_SPIN_THEN_PARK, nanoseconds, deadline)
        case .busySpin:
            raw = csr_ring_pop_wait(ring, CSR_WAIT_BUSY_SPIN, 0, deadline)
        }
        return raw.map { Unmanaged<_WorkItem>.fromOpaque($0).takeRetainedValue() }
    }

    /// Takes every item now in the ring without waiting (a claimed cell
    /// whose producer has not published yet is waited for). Consumer thread
    /// only, or `deinit`.
    func drain() -> [_WorkItem] {
        var items: [_WorkItem] = []
        var spins = 0
        while true {
            var busy = false
            if let raw = csr_ring_pop(ring, &busy) {
                items.append(Unmanaged<_WorkItem>.fromOpaque(raw).takeRetainedValue())
            } else if busy {
                spins += 1
                if spins > 64 { sched_yield() }
            } else {
                return items
            }
        }
    }

    /// Names the calling thread (Linux keeps 15 bytes). Consumer thread only.
    func nameCurrentThread(_ name: String) {
        csr_set_current_thread_name(name)
    }

    /// Marks the calling thread as this ring's consumer (`isCurrent`), or,
    /// with `false`, as no ring's. Consumer thread only.
    func makeCurrent(_ current: Bool) {
        csr_ring_set_current(current ? ring : nil)
    }

    /// Whether the calling thread is this ring's consumer.
    @inline(__always)
    var isCurrent: Bool { csr_ring_is_current(ring) }

    var counters: _WorkRingCounters {
        var statistics = csr_ring_statistics()
        csr_ring_get_statistics(ring, &statistics)
        return _WorkRingCounters(
            capacity: Int(statistics.capacity),
            ringDepth: Int(statistics.ring_depth),
            spillDepth: Int(statistics.spill_depth),
            spilledTotal: Int(statistics.spilled_total),
            parks: Int(statistics.parks),
            wakes: Int(statistics.wakes)
        )
    }
}
