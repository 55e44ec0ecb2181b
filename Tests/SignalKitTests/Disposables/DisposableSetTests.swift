// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct DisposableSetTests {
    @Test func disposesAllInInsertionOrderOnce() {
        let log = EventLog()
        let set = DisposableSet()
        set.add(log.disposable("a"))
        set.add(log.disposable("b"))
        set.add(log.disposable("c"))
        set.dispose()
        set.dispose()
        #expect(log.events == ["a.dispose", "b.dispose", "c.dispose"])
    }

    @Test func addAfterDisposeDisposesAtOnce() {
        let log = EventLog()
        let set = DisposableSet()
        set.dispose()
        set.add(log.disposable("late"))
        #expect(log.events == ["late.dispose"])
    }

    @Test func removeTakesTheFirstIdenticalOccurrenceWithoutDisposing() {
        let counter = CountingDisposable()
        let other = CountingDisposable()
        let set = DisposableSet()
        set.add(counter)
        set.add(counter)
        set.remove(counter)
        set.remove(CountingDisposable())
        set.dispose()
        #expect(counter.disposeCount == 1, "the duplicate left stays and is disposed")
        set.remove(other)
        #expect(other.disposeCount == 0)
    }

    @Test func removeLastRemovesWithoutDisposingAndIsSafeWhenEmpty() {
        let log = EventLog()
        let set = DisposableSet()
        set.removeLast()
        set.add(log.disposable("a"))
        set.add(log.disposable("b"))
        set.removeLast()
        set.dispose()
        #expect(log.events == ["a.dispose"])
    }

    @Test func releasingDoesNotDispose() {
        let counter = CountingDisposable()
        do {
            let set = DisposableSet()
            set.add(counter)
        }
        #expect(counter.disposeCount == 0)
    }

    @Test func aReleasedDisposableMayUseTheSetFromItsDeinit() {
        let set = DisposableSet()
        let reentered = Shared(false)
        do {
            let probe = Probe("p") { _ in
                set.add(EmptyDisposable)
                reentered.value = true
            }
            // The set holds the only reference: removing releases it.
            set.add(ActionDisposable { probe.touch() })
        }
        set.removeLast()
        #expect(reentered.value, "no deadlock: the value is released outside the lock")
    }
}

@Suite struct DisposableDictTests {
    @Test func replacingAKeyDisposesThePreviousValue() {
        let log = EventLog()
        let dict = DisposableDict<String>()
        dict.set(log.disposable("a1"), forKey: "a")
        dict.set(log.disposable("b1"), forKey: "b")
        dict.set(log.disposable("a2"), forKey: "a")
        #expect(log.take() == ["a1.dispose"])
        dict.dispose()
        #expect(Set(log.take()) == ["a2.dispose", "b1.dispose"])
        dict.dispose()
        #expect(log.take() == [])
    }

    @Test func setNilDisposesAndRemovesTheEntry() {
        let counter = CountingDisposable()
        let dict = DisposableDict<Int>()
        dict.set(counter, forKey: 1)
        dict.set(nil, forKey: 1)
        dict.set(nil, forKey: 1)
        dict.dispose()
        #expect(counter.disposeCount == 1, "SwiftSignalKit disposes it twice more; SignalKit removes it")
    }

    @Test func settingTheSameDisposableAgainDisposesIt() {
        let counter = CountingDisposable()
        let dict = DisposableDict<Int>()
        dict.set(counter, forKey: 1)
        dict.set(counter, forKey: 1)
        #expect(counter.disposeCount == 1)
    }

    @Test func setAfterDisposeDisposesAtOnce() {
        let counter = CountingDisposable()
        let dict = DisposableDict<Int>()
        dict.dispose()
        dict.set(counter, forKey: 1)
        #expect(counter.disposeCount == 1)
    }

    @Test func releasingDoesNotDispose() {
        let counter = CountingDisposable()
        do {
            let dict = DisposableDict<Int>()
            dict.set(counter, forKey: 1)
        }
        #expect(counter.disposeCount == 0)
    }

    @Test func aReleasedValueMayUseTheDictFromItsDeinit() {
        let dict = DisposableDict<Int>()
        let reentered = Shared(false)
        do {
            let probe = Probe("p") { _ in
                dict.set(EmptyDisposable, forKey: 2)
                reentered.value = true
            }
            dict.set(ActionDisposable { probe.touch() }, forKey: 1)
        }
        dict.set(nil, forKey: 1)
        #expect(reentered.value)
    }
}
