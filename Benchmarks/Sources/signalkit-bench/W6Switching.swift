// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import OpenCombine
import SignalKit

// W6 switch-latest: a hot subject mapped to a fresh cold one-value inner
// signal (the W1 signal) per outer value, switching to the latest.
// Timed: `sends` outer sends. ns per outer value.

@inline(never)
func runW6(_ peer: Peer, _ sends: Int) -> RunResult {
    let box = Box()
    let nanoseconds: Double
    switch peer {
    case .signalkit:
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> mapToSignal { value in
            Signal<Int, NoError> { subscriber in
                subscriber.putNext(value)
                subscriber.putCompletion()
                return EmptyDisposable
            }
        }).start(next: { box.v &+= $0 })
        nanoseconds = timed(operations: sends) {
            for i in 0..<sends { pipe.putNext(i) }
        }
        handle.dispose()
    case .opencombine:
        let subject = PassthroughSubject<Int, Never>()
        let cancellable = subject.map { Just($0) }.switchToLatest().sink(receiveValue: { box.v &+= $0 })
        nanoseconds = timed(operations: sends) {
            for i in 0..<sends { subject.send(i) }
        }
        cancellable.cancel()
    case .asyncStream:
        preconditionFailure("W6 has no AsyncStream peer")
    case .floor:
        let sink: @Sendable (Int) -> Void = { box.v &+= $0 }
        nanoseconds = timed(operations: sends) {
            for i in 0..<sends { callOnce({ sink in sink(i) }, sink) }
        }
    }
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: box.v == sends &* (sends - 1) / 2)
}
