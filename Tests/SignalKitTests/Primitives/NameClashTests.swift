// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// SignalKit's `Atomic` and `Timer` share their names with
// `Synchronization.Atomic` and `Foundation.Timer`. This file imports all
// three modules, as a server file often does, and must keep compiling with
// the module-qualified spellings the doc comments recommend.
import Foundation
import SignalKit
import SignalKitTesting
import Synchronization
import Testing

@Suite struct NameClashTests {
    @Test func atomicIsSpelledWithItsModuleNextToSynchronization() {
        let boxed = SignalKit.Atomic<[Int]>(value: [])
        _ = boxed.modify { $0 + [1] }
        let counter = Synchronization.Atomic<Int>(0)
        counter.add(2, ordering: .relaxed)
        #expect(boxed.with { $0 } == [1])
        #expect(counter.load(ordering: .relaxed) == 2)
    }

    @Test func timerIsSpelledWithItsModuleNextToFoundation() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let fired = Synchronization.Atomic<Int>(0)
        let timer = SignalKit.Timer(
            timeout: 1.0, repeat: false,
            completion: { _ in
                fired.add(1, ordering: .relaxed)
            }, queue: queue)
        timer.start()
        scheduler.advance(by: 1.0)
        #expect(fired.load(ordering: .relaxed) == 1)
        // Foundation's type stays reachable under its own name (a compile-time
        // check: this line only has to type-check next to SignalKit.Timer).
        _ = Foundation.Timer.self
    }
}
