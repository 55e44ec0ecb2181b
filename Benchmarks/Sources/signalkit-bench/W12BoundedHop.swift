// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import Glibc
import OpenCombine
import OpenCombineDispatch
import SignalKit
import Synchronization

// W12 bounded hop throughput: this thread sends `count` UInt64s (0, 1, …)
// back to back into a hot source whose subscriber receives them on another
// thread through a buffer of `boundedHopCapacity` values that drops the oldest
// when full; the receiver adds each value up and reads the clock once, when
// the burst's last value arrives. ns per value = (last receipt − first send)
// / count, as in W9's throughput half.
// * SignalKit: `ValuePipe` |> `deliverOn(Queue(name:), buffer:
//   .droppingOldest(beyond: capacity))` (the bounded hop: one Dispatch block
//   per burst, not per value);
// * floor: one `DispatchQueue.async` per value (W9's floor);
// * SPSC-ring: the physical floor: a power-of-two ring of UInt64 with an
//   atomic head and tail on separate cache lines and a consumer thread that
//   spins; the producer waits (spins) when the ring is full, so it never
//   drops. Both yield the CPU every `ringSpinsBeforeYield` empty (full)
//   polls: on a machine busier than its cores, a spinner that never yields
//   keeps the core from the peer it waits for for a whole time slice;
// * OpenCombine: `PassthroughSubject.buffer(size: capacity, prefetch:
//   .byRequest, whenFull: .dropOldest).receive(on: queue)`;
// * AsyncStream: `bufferingPolicy: .bufferingNewest(capacity)`, iterated by a
//   task with `for await`.
// Each run first sends an untimed warm-up burst through the same pipeline
// (4 × capacity values), so that the timed burst — and the allocation pass's
// count — is the boundary's steady state. A dropping boundary may drop when
// the producer outruns the consumer: every run counts the values it dropped
// (SignalKit's own drop counter, `SignalKitDebug.bufferStatistics()`;
// AsyncStream's `yield` result; OpenCombine keeps no count, so its drops are
// sent − received) and the report prints them; a SignalKit run that dropped
// does not meet the target (it measured drops, not the hop). The last value
// is never dropped by a drop-oldest buffer, so the run always ends.

/// W12's buffer limit (and the ring's size).
let boundedHopCapacity = 4_096
/// How many empty (or full) polls the ring's consumer (or producer) spins
/// between two `sched_yield`s.
let ringSpinsBeforeYield = 256

/// W12's consumer side: counts and sums what it receives and stamps the
/// arrival of the burst's last value.
final class BurstReceiver: @unchecked Sendable {
    // `@unchecked Sendable`: the fields are written by the consumer (the
    // receiving queue, task or ring thread) while a burst runs, and read or
    // reset by the producer only after `done` (acquire) says the burst's
    // last value arrived; the next burst's values reach the consumer through
    // the boundary's own synchronisation, after the reset.
    var received = 0
    var sum: UInt64 = 0
    var lastReceipt: UInt64 = 0
    private var last: UInt64 = 0
    private let done = Synchronization.Atomic<Bool>(false)

    @inline(__always)
    func receive(_ value: UInt64) {
        received &+= 1
        sum &+= value
        if value == last {
            lastReceipt = monotonicNanoseconds()
            done.store(true, ordering: .releasing)
        }
    }

    /// Resets the receiver for a burst of `0 ... last`. Called by the
    /// producer while no burst runs.
    func prepare(last: UInt64) {
        received = 0
        sum = 0
        lastReceipt = 0
        self.last = last
        done.store(false, ordering: .releasing)
    }

    /// Spins (yielding the CPU) until the burst's last value has arrived.
    func waitForLast() {
        while !done.load(ordering: .acquiring) { sched_yield() }
    }
}

/// A single-producer / single-consumer ring of UInt64 (W12's physical
/// floor). The producer spins while the ring is full; the consumer thread
/// spins while it is empty (both yielding now and then).
final class SPSCRing: @unchecked Sendable {
    // `@unchecked Sendable`: a slot is written by the producer before the
    // releasing store of `tail` that publishes it, and read by the consumer
    // after the acquiring load of `tail` that covers it; the consumer's
    // releasing store of `head` hands the slot back. `producerTail` and
    // `cachedHead` are the producer's alone.
    let mask: Int
    let slots: UnsafeMutablePointer<UInt64>
    let tail = Synchronization.Atomic<Int>(0)
    private var producerTail = 0
    private var cachedHead = 0
    // Keeps `head` (written by the consumer) off the producer's cache line.
    private let padding0: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)
    let head = Synchronization.Atomic<Int>(0)
    let stopped = Synchronization.Atomic<Bool>(false)
    private let padding1: (Int, Int, Int, Int, Int, Int, Int, Int) = (0, 0, 0, 0, 0, 0, 0, 0)

    init(capacity: Int) {
        precondition(capacity > 0 && capacity & (capacity - 1) == 0, "the ring's capacity must be a power of two")
        mask = capacity - 1
        slots = .allocate(capacity: capacity)
        slots.initialize(repeating: 0, count: capacity)
    }

    deinit {
        slots.deallocate()
    }

    /// The producer's side: waits for room, writes the slot, publishes it.
    @inline(__always)
    func push(_ value: UInt64) {
        let position = producerTail
        if position &- cachedHead > mask {
            var polls = 0
            while true {
                cachedHead = head.load(ordering: .acquiring)
                if position &- cachedHead <= mask { break }
                polls &+= 1
                if polls % ringSpinsBeforeYield == 0 { sched_yield() }
            }
        }
        slots[position & mask] = value
        producerTail = position &+ 1
        tail.store(position &+ 1, ordering: .releasing)
    }

    /// The consumer thread's loop: delivers every published value to
    /// `receiver` until `stopped` is set with nothing left to take.
    func consume(into receiver: BurstReceiver) {
        let mask = self.mask
        let slots = self.slots
        var position = 0
        var polls = 0
        while true {
            let available = tail.load(ordering: .acquiring)
            if available == position {
                if stopped.load(ordering: .acquiring) { return }
                polls &+= 1
                if polls % ringSpinsBeforeYield == 0 { sched_yield() }
                continue
            }
            while position != available {
                receiver.receive(slots[position & mask])
                position &+= 1
            }
            head.store(position, ordering: .releasing)
        }
    }
}

/// One peer's pipeline for W12.
struct BurstPipeline {
    let send: (UInt64) -> Void
    /// Values the boundary has counted as dropped so far, or nil where it
    /// keeps no count (the run then counts sent − received).
    let droppedSoFar: () -> Int?
    /// Disposes and waits until the consumer side has finished.
    let teardown: () -> Void
}

/// The drops SignalKit counted under `name` so far.
func signalKitDrops(named name: String) -> Int {
    Int(SignalKitDebug.bufferStatistics().first { $0.name == name }?.drops ?? 0)
}

@inline(never)
func makeBurstPipeline(_ peer: Peer, receiver: BurstReceiver) -> BurstPipeline {
    switch peer {
    case .signalkit:
        let name = "w12.signalkit"
        let pipe = ValuePipe<UInt64>()
        let queue = Queue(name: name)
        let handle =
            (pipe.signal()
            |> named(name)
            |> deliverOn(queue, buffer: .droppingOldest(beyond: boundedHopCapacity)))
            .start(next: { receiver.receive($0) })
        return BurstPipeline(
            send: { pipe.putNext($0) },
            droppedSoFar: { signalKitDrops(named: name) },
            teardown: {
                handle.dispose()
                queue.queue.sync {}
            }
        )
    case .opencombine:
        let subject = PassthroughSubject<UInt64, Never>()
        let queue = DispatchQueue(label: "w12.opencombine")
        let cancellable =
            subject
            .buffer(size: boundedHopCapacity, prefetch: .byRequest, whenFull: .dropOldest)
            .receive(on: queue.ocombine)
            .sink { receiver.receive($0) }
        return BurstPipeline(
            send: { subject.send($0) },
            droppedSoFar: { nil },
            teardown: {
                cancellable.cancel()
                queue.sync {}
            }
        )
    case .asyncStream:
        let (stream, continuation) = AsyncStream.makeStream(
            of: UInt64.self, bufferingPolicy: .bufferingNewest(boundedHopCapacity))
        let consumer = Task {
            for await value in stream { receiver.receive(value) }
        }
        // Written and read by this (the producing) thread only.
        let drops = Box()
        return BurstPipeline(
            send: { value in
                if case .dropped = continuation.yield(value) { drops.v += 1 }
            },
            droppedSoFar: { drops.v },
            teardown: {
                continuation.finish()
                blockingAwait { await consumer.value }
            }
        )
    case .floor:
        let queue = DispatchQueue(label: "w12.floor")
        return BurstPipeline(
            send: { value in queue.async { receiver.receive(value) } },
            droppedSoFar: { 0 },
            teardown: { queue.sync {} }
        )
    case .spscRing:
        let ring = SPSCRing(capacity: boundedHopCapacity)
        let thread = startThread { ring.consume(into: receiver) }
        return BurstPipeline(
            send: { ring.push($0) },
            droppedSoFar: { 0 },
            teardown: {
                ring.stopped.store(true, ordering: .releasing)
                pthread_join(thread, nil)
            }
        )
    }
}

@inline(never)
func runW12(_ peer: Peer, _ count: Int) -> RunResult {
    let receiver = BurstReceiver()
    let pipeline = makeBurstPipeline(peer, receiver: receiver)

    // Warm-up burst (untimed, not counted): the buffers grow to their
    // steady-state size.
    let warmUp = min(count, 4 * boundedHopCapacity)
    receiver.prepare(last: UInt64(warmUp - 1))
    for value in 0..<UInt64(warmUp) { pipeline.send(value) }
    receiver.waitForLast()

    // The timed burst.
    let droppedBefore = pipeline.droppedSoFar()
    receiver.prepare(last: UInt64(count - 1))
    var firstSend: UInt64 = 0
    _ = timed(operations: count) {
        firstSend = monotonicNanoseconds()
        for value in 0..<UInt64(count) { pipeline.send(value) }
        receiver.waitForLast()
    }
    let droppedAfter = pipeline.droppedSoFar()
    let received = receiver.received
    let sum = receiver.sum
    let nanosecondsPerValue = Double(receiver.lastReceipt &- firstSend) / Double(count)
    pipeline.teardown()

    let dropped: Int
    let consistent: Bool
    if let before = droppedBefore, let after = droppedAfter {
        dropped = after - before
        // Every value was either received or counted as dropped.
        consistent = received + dropped == count
    } else {
        dropped = count - received
        consistent = received <= count
    }
    let expectedSum = UInt64(count) &* UInt64(count - 1) / 2
    let ok = consistent && (dropped > 0 || (received == count && sum == expectedSum))
    return RunResult(
        nanosecondsPerOp: nanosecondsPerValue, checksumMatches: ok, drops: Drops(sent: count, dropped: dropped))
}
