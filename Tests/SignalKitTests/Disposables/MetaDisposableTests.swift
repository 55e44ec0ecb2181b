// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct MetaDisposableTests {
    @Test func setDisposesThePreviousAfterStoringTheNew() {
        let log = EventLog()
        let meta = MetaDisposable()
        meta.set(log.disposable("a"))
        meta.set(log.disposable("b"))
        #expect(log.take() == ["a.dispose"])
        meta.dispose()
        #expect(log.take() == ["b.dispose"])
        meta.dispose()
        #expect(log.take() == [])
    }

    @Test func setAfterDisposeDisposesTheNewValueAtOnce() {
        let log = EventLog()
        let meta = MetaDisposable()
        meta.dispose()
        meta.set(log.disposable("late"))
        #expect(log.events == ["late.dispose"])
    }

    @Test func settingTheSameDisposableTwiceDisposesItOnceAndKeepsIt() {
        let counter = CountingDisposable()
        let meta = MetaDisposable()
        meta.set(counter)
        meta.set(counter)
        #expect(counter.disposeCount == 1)
        meta.dispose()
        #expect(counter.disposeCount == 2, "it was still the current value")
    }

    @Test func setNilDisposesAndClears() {
        let counter = CountingDisposable()
        let meta = MetaDisposable()
        meta.set(counter)
        meta.set(nil)
        meta.dispose()
        #expect(counter.disposeCount == 1)
    }

    @Test func releasingDoesNotDisposeTheCurrentValue() {
        let counter = CountingDisposable()
        do {
            let meta = MetaDisposable()
            meta.set(counter)
        }
        #expect(counter.disposeCount == 0)
    }

    @Test func reentrantSetFromThePreviousDisposablesDispose() {
        let log = EventLog()
        let meta = MetaDisposable()
        meta.set(
            ActionDisposable {
                log.append("a.dispose")
                meta.set(log.disposable("c"))
            })
        meta.set(log.disposable("b"))
        #expect(log.take() == ["a.dispose", "b.dispose"])
        meta.dispose()
        #expect(log.take() == ["c.dispose"])
    }

    @Test func everyDisposableIsDisposedExactlyOnceAcrossRacingSetsAndDispose() {
        for _ in 0..<100 {
            let meta = MetaDisposable()
            let counters = (0..<64).map { _ in CountingDisposable() }
            let box = UncheckedSendableBox(counters)
            race(threads: 5) { index in
                if index == 4 {
                    meta.dispose()
                } else {
                    for offset in stride(from: index, to: 64, by: 4) { meta.set(box.value[offset]) }
                }
            }
            meta.dispose()
            #expect(counters.allSatisfy { $0.disposeCount == 1 })
        }
    }
}
