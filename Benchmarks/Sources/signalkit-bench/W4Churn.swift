// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import OpenCombine
import SignalKit

// W4 churn: `standing` subscribers stay; timed: `cycles` × (subscribe one
// more with a next handler, dispose it). Afterwards one value is sent to
// check that exactly `standing` subscribers remain. ns per pair.

@inline(never)
func runW4(_ peer: Peer, _ cycles: Int, standing: Int = 1000) -> RunResult {
    let box = Box()
    let nanoseconds: Double
    switch peer {
    case .signalkit:
        let pipe = ValuePipe<Int>()
        let handles = (0..<standing).map { _ in pipe.signal().start(next: { box.v &+= $0 }) }
        nanoseconds = timed(operations: cycles) {
            for _ in 0..<cycles {
                let handle = pipe.signal().start(next: { box.v &+= $0 })
                handle.dispose()
            }
        }
        pipe.putNext(1)
        handles.forEach { $0.dispose() }
    case .opencombine:
        let subject = PassthroughSubject<Int, Never>()
        let cancellables = (0..<standing).map { _ in subject.sink(receiveValue: { box.v &+= $0 }) }
        nanoseconds = timed(operations: cycles) {
            for _ in 0..<cycles {
                let cancellable = subject.sink(receiveValue: { box.v &+= $0 })
                cancellable.cancel()
            }
        }
        subject.send(1)
        cancellables.forEach { $0.cancel() }
    case .asyncStream:
        preconditionFailure("W4 has no AsyncStream peer")
    case .spscRing:
        preconditionFailure("W4 has no SPSC ring peer")
    case .floor:
        var sinks = [Int: (Int) -> Void](minimumCapacity: standing + 1)
        var token = 0
        for _ in 0..<standing {
            sinks[token] = { box.v &+= $0 }
            token += 1
        }
        nanoseconds = timed(operations: cycles) {
            for _ in 0..<cycles {
                sinks[token] = { box.v &+= $0 }
                sinks.removeValue(forKey: token)
                token += 1
            }
        }
        for sink in sinks.values { sink(1) }
    }
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: box.v == standing)
}
