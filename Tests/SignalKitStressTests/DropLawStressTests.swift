// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// The drop law under threads: a producer thread sends into a bounded
// boundary whose consumer runs on another thread, slower than it now and
// then; the subscription ends by its terminal event. For every policy and
// every boundary: delivered + dropped == sent (the subscription's own count,
// a `SignalBufferProbe`), exactly one terminal event, and the live-object
// counters back to zero. Run under ThreadSanitizer and AddressSanitizer by
// scripts/test.

struct DropLawStressError: Error {}

extension StressSuite {
    @Suite(.serialized) struct DropLawStressTests {
        static let policies: [SignalBuffer<DropLawStressError>] = [
            .droppingOldest(beyond: 16), .droppingNewest(beyond: 16), .latest,
            .failing(beyond: 16, with: DropLawStressError()), .blocking(beyond: 16),
        ]

        typealias Boundary =
            @Sendable (SignalBuffer<DropLawStressError>) -> (Signal<Int, DropLawStressError>) -> Signal<
                Int, DropLawStressError
            >

        static let pool = ThreadPool(threadCount: 2, threadPriority: 0.5)

        static let boundaries: [(String, Boundary)] = [
            ("deliverOn(queue)", { buffer in deliverOn(Queue(name: "droplaw.stress"), buffer: buffer) }),
            ("deliverOn(pool)", { buffer in deliverOn(DropLawStressTests.pool, buffer: buffer) }),
            ("delayEvents", { buffer in delayEvents(0.000_01, queue: Queue(name: "droplaw.delay"), buffer: buffer) }),
        ]

        @Test(arguments: boundaries, policies)
        func deliveredPlusDroppedIsSentUnderThreads(boundary: (String, Boundary), buffer: SignalBuffer<DropLawStressError>) {
            let check = LeakCheck()
            let count = 20_000 * stressScale
            for ending in ["completion", "error"] {
                let probe = SignalBufferProbe()
                let sent = Synchronization.Atomic<Int>(0)
                let delivered = Synchronization.Atomic<Int>(0)
                let terminals = Synchronization.Atomic<Int>(0)
                let ended = DispatchSemaphore(value: 0)
                // The producer sends to the subscriber itself, then ends it.
                let subscriber = SignalKit.Atomic<Subscriber<Int, DropLawStressError>?>(value: nil)
                let signal =
                    Signal<Int, DropLawStressError> { new in
                        _ = subscriber.swap(new)
                        return EmptyDisposable
                    } |> beforeNext { _ in sent.add(1, ordering: .relaxed) }
                let handle = (signal |> boundary.1(buffer.counted(by: probe))).start(
                    next: { value in
                        delivered.add(1, ordering: .relaxed)
                        // Slower than the producer now and then.
                        if value % 64 == 0 { for _ in 0..<2_000 { _ = sent.load(ordering: .relaxed) } }
                    },
                    error: { _ in
                        terminals.add(1, ordering: .relaxed)
                        ended.signal()
                    },
                    completed: {
                        terminals.add(1, ordering: .relaxed)
                        ended.signal()
                    }
                )
                let produced = DispatchSemaphore(value: 0)
                DispatchQueue.global().async {
                    let target = subscriber.with { $0 }!
                    for value in 0..<count { target.putNext(value) }
                    if ending == "error" { target.putError(DropLawStressError()) } else { target.putCompletion() }
                    produced.signal()
                }
                ended.wait()
                produced.wait()
                let (s, d, dropped) = (
                    sent.load(ordering: .relaxed), delivered.load(ordering: .relaxed), Int(probe.statistics.drops)
                )
                #expect(d + dropped == s, "\(boundary.0), \(buffer), \(ending): \(d) delivered + \(dropped) dropped != \(s) sent")
                #expect(terminals.load(ordering: .relaxed) == 1, "\(boundary.0), \(buffer), \(ending)")
                handle.dispose()
            }
            #expect(check.leaks() == nil)
        }
    }
}
