// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import OpenCombine
import SignalKit

// W3 hot fan-out: a subject with 100 subscribers, then `sends` sends.
// ns per delivery = wall / (100 × sends).

let fanOutSubscribers = 100

@inline(never)
func runW3(_ peer: Peer, _ sends: Int) -> RunResult {
    let box = Box()
    let deliveries = fanOutSubscribers * sends
    let nanoseconds: Double
    switch peer {
    case .signalkit:
        let pipe = ValuePipe<Int>()
        let handles = (0..<fanOutSubscribers).map { _ in pipe.signal().start(next: { box.v &+= $0 }) }
        nanoseconds = timed(operations: deliveries) {
            for i in 0..<sends { pipe.putNext(i) }
        }
        handles.forEach { $0.dispose() }
    case .opencombine:
        let subject = PassthroughSubject<Int, Never>()
        let cancellables = (0..<fanOutSubscribers).map { _ in subject.sink(receiveValue: { box.v &+= $0 }) }
        nanoseconds = timed(operations: deliveries) {
            for i in 0..<sends { subject.send(i) }
        }
        cancellables.forEach { $0.cancel() }
    case .asyncStream:
        preconditionFailure("W3 has no AsyncStream peer")
    case .floor:
        let sinks: [(Int) -> Void] = (0..<fanOutSubscribers).map { _ in { box.v &+= $0 } }
        nanoseconds = timed(operations: deliveries) {
            for i in 0..<sends {
                for sink in sinks { sink(i) }
            }
        }
    }
    let expected = fanOutSubscribers &* (sends &* (sends - 1) / 2)
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: box.v == expected)
}
