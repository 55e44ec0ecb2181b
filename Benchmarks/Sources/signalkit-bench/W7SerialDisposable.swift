// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import OpenCombine
import SignalKit

// W7 serial-disposable swap: `sets` × set a fresh action disposable whose
// action is `box.v &+= 1`; the previous one gets disposed. ns per set.

@inline(never)
func runW7(_ peer: Peer, _ sets: Int) -> RunResult {
    let box = Box()
    let nanoseconds: Double
    switch peer {
    case .signalkit:
        let meta = MetaDisposable()
        nanoseconds = timed(operations: sets) {
            for _ in 0..<sets {
                meta.set(ActionDisposable { box.v &+= 1 })
            }
        }
        meta.dispose()
    case .opencombine:
        var cancellable: AnyCancellable?
        nanoseconds = timed(operations: sets) {
            for _ in 0..<sets {
                cancellable = AnyCancellable { box.v &+= 1 }
            }
        }
        cancellable = nil
        _ = cancellable
    case .asyncStream:
        preconditionFailure("W7 has no AsyncStream peer")
    case .spscRing:
        preconditionFailure("W7 has no SPSC ring peer")
    case .floor:
        var slot: (() -> Void)?
        nanoseconds = timed(operations: sets) {
            for _ in 0..<sets {
                let previous = slot
                slot = { box.v &+= 1 }
                previous?()
            }
        }
        slot?()
    }
    return RunResult(nanosecondsPerOp: nanoseconds, checksumMatches: box.v == sets)
}
