// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import Testing

@Suite struct BagTests {
    @Test func keysStartAtZeroAreNeverReusedAndOrderIsInsertionOrder() {
        let bag = Bag<String>()
        #expect(bag.isEmpty)
        #expect(bag.add("a") == 0)
        #expect(bag.add("b") == 1)
        #expect(bag.add("c") == 2)
        bag.remove(1)
        #expect(bag.copyItems() == ["a", "c"])
        #expect(bag.copyItemsWithIndices().map(\.0) == [0, 2])
        #expect(bag.get(2) == "c")
        #expect(bag.get(1) == nil)
        #expect(bag.first?.0 == 0)
        bag.removeAll()
        #expect(bag.isEmpty)
        #expect(bag.add("d") == 3, "keys continue after removeAll")
        bag.remove(99)
        #expect(bag.copyItems() == ["d"])
    }

    @Test func sparseBag() {
        let bag = SparseBag<Int>()
        #expect(bag.add(10) == 0)
        #expect(bag.add(20) == 1)
        bag.remove(0)
        #expect(bag.get(1) == 20)
        #expect(Array(bag) == [20])
        bag.removeAll()
        #expect(bag.isEmpty)
        #expect(bag.add(30) == 2)
    }

    @Test func counterBag() {
        let bag = CounterBag()
        #expect(bag.isEmpty)
        let a = bag.add()
        let b = bag.add()
        #expect(a == 1)
        #expect(b == 2)
        bag.remove(a)
        #expect(!bag.isEmpty)
        bag.remove(b)
        #expect(bag.isEmpty)
    }

    @Test func weakReference() {
        var object: Probe? = Probe()
        let weak = Weak(object!)
        #expect(weak.value != nil)
        object = nil
        #expect(weak.value == nil)
    }

    @Test func pipeOperatorAndIdentity() {
        let double: (Int) -> Int = { $0 * 2 }
        let increment: (Int) -> Int = { $0 + 1 }
        #expect((1 |> double |> increment) == 3)
        #expect(identity(a: 4) == 4)
    }
}
