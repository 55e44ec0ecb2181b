// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// The inspection registry on real threads, run under ThreadSanitizer and
// AddressSanitizer by scripts/test: threads build inspected graphs (named
// at the same places, so they share stages), subscribe, send, dispose and
// drop them, while another thread takes snapshots. At the end the stages
// count every value exactly once, and once the graphs are gone the registry
// has let go of their stages.

/// Builds a two-stage inspected graph over `pipe` (named at fixed places:
/// every thread's graph shares the two stages).
private func inspectedGraph(_ pipe: ValuePipe<Int>, queue: Queue?) -> Signal<Int, NoError> {
    SignalKitDebug.withInspection {
        let source = pipe.signal() |> named("stress.inspect.source")
        let hopped = queue.map { source |> deliverOn($0) } ?? source
        return hopped |> map { $0 + 1 } |> named("stress.inspect.result")
    }
}

extension StressSuite {
    @Suite(.serialized) struct InspectionStressTests {
        @Test func graphsBuiltSubscribedAndDroppedOnSeveralThreadsWhileSnapshotsAreTaken() {
            let check = LeakCheck()
            let rounds = 300 * stressScale
            let valuesPerRound = 20
            let delivered = Atomic<Int>(0)
            let snapshotsTaken = Atomic<Int>(0)
            let stop = Atomic<Bool>(false)
            let prefix = "stress.inspect."
            race(threads: 3) { index in
                if index == 2 {
                    // Snapshots race everything else.
                    while !stop.load(ordering: .acquiring) {
                        let snapshot = SignalKitDebug.inspectionSnapshot()
                        for stage in snapshot.stages where stage.name.hasPrefix(prefix) {
                            _ = stage.liveSubscriptions
                        }
                        snapshotsTaken.add(1, ordering: .relaxed)
                    }
                    return
                }
                let queue = index == 0 ? Queue(name: "stress.inspect") : nil
                for _ in 0..<rounds {
                    let pipe = ValuePipe<Int>()
                    let handle = inspectedGraph(pipe, queue: queue).start(next: { _ in
                        delivered.add(1, ordering: .relaxed)
                    })
                    for value in 0..<valuesPerRound { pipe.putNext(value) }
                    queue?.sync {}
                    handle.dispose()
                }
                if index == 0 { stop.store(true, ordering: .releasing) }
            }
            stop.store(true, ordering: .releasing)
            // Thread 1 may finish after thread 0 stopped the snapshots; both
            // have delivered everything once `race` returns.
            #expect(delivered.load(ordering: .relaxed) == 2 * rounds * valuesPerRound)
            #expect(snapshotsTaken.load(ordering: .relaxed) > 0)
            // Every graph is gone: so are the stages.
            let left = SignalKitDebug.inspectionSnapshot().stages.filter { $0.name.hasPrefix(prefix) }
            #expect(left.isEmpty, "stages left: \(left.map(\.id))")
            #expect(check.leaks() == nil)
        }

        /// While graphs live, the shared stages count every value once.
        @Test func sharedStagesCountEveryValueOnce() {
            let rounds = 200 * stressScale
            let pipe = ValuePipe<Int>()
            let graphs = (0..<4).map { _ in inspectedGraph(pipe, queue: nil) }
            let handles = graphs.map { $0.start() }
            race(threads: 2) { _ in
                for value in 0..<rounds { pipe.putNext(value) }
            }
            let stages = SignalKitDebug.inspectionSnapshot().stages
            let source = stages.first { $0.name == "stress.inspect.source" }
            let result = stages.first { $0.name == "stress.inspect.result" }
            // Four subscriptions, each seeing both threads' values.
            #expect(source?.values == UInt64(4 * 2 * rounds))
            #expect(result?.values == UInt64(4 * 2 * rounds))
            #expect(source?.liveSubscriptions == 4)
            for handle in handles { handle.dispose() }
            withExtendedLifetime(graphs) {}
        }
    }
}
