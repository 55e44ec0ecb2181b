// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// `_FIFO`, the queue behind every SignalKit buffer (the bounded boundaries,
// `queue`, `flatten`, `zip`, serial delivery): a ring that wraps and grows,
// with value semantics, releasing each element exactly once.

/// Counts its live instances in `live` (a per-test counter: parallel tests
/// do not disturb it).
private final class Counted: Sendable {
    let value: Int
    private let live: Shared<Int>

    init(_ value: Int, live: Shared<Int>) {
        self.value = value
        self.live = live
        live.withLock { $0 += 1 }
    }

    deinit {
        live.withLock { $0 -= 1 }
    }
}

@Suite struct FIFOTests {
    @Test func anEmptyQueueHasNothingToTake() {
        var fifo = _FIFO<Int>()
        #expect(fifo.isEmpty && fifo.count == 0 && fifo.first == nil)
        #expect(fifo.popFirst() == nil)
    }

    @Test func elementsComeOutInOrderAcrossWrapAroundAndGrowth() {
        var fifo = _FIFO<Int>()
        var expected: [Int] = []
        var taken: [Int] = []
        var next = 0
        // Appends outpace takes: the ring wraps around (head moves) and then
        // grows while wrapped, several times.
        for round in 0..<200 {
            for _ in 0..<(round % 7 + 2) {
                fifo.append(next)
                expected.append(next)
                next += 1
            }
            for _ in 0..<(round % 5 + 1) where !fifo.isEmpty {
                #expect(fifo.first == taken.count)
                taken.append(round % 2 == 0 ? fifo.removeFirst() : fifo.popFirst()!)
            }
            #expect(fifo.count == expected.count - taken.count)
        }
        while let value = fifo.popFirst() { taken.append(value) }
        #expect(taken == expected)
        #expect(fifo.isEmpty)
    }

    @Test func aCopyIsIndependent() {
        var original = _FIFO<Int>()
        for value in 0..<10 { original.append(value) }
        _ = original.popFirst()
        var copy = original
        copy.append(10)
        _ = copy.removeFirst()
        original.append(99)
        var fromOriginal: [Int] = []
        while let value = original.popFirst() { fromOriginal.append(value) }
        var fromCopy: [Int] = []
        while let value = copy.popFirst() { fromCopy.append(value) }
        #expect(fromOriginal == Array(1..<10) + [99])
        #expect(fromCopy == Array(2...10))
    }

    @Test func everyElementIsReleasedExactlyOnce() {
        let live = Shared(0)
        do {
            var fifo = _FIFO<Counted>()
            for value in 0..<100 { fifo.append(Counted(value, live: live)) }
            // Taken elements belong to the caller: released when it drops them.
            for expected in 0..<30 { #expect(fifo.removeFirst().value == expected) }
            #expect(live.value == 70)
            var copy = fifo
            copy.append(Counted(100, live: live))
            #expect(live.value == 71, "the copy shares nothing it does not copy")
            _ = copy.popFirst()
            #expect(live.value == 71, "the original still holds element 30")
        }
        // Dropping the queues releases what they still hold.
        #expect(live.value == 0)
    }
}
