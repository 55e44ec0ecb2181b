// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

extension ValuePromise {
    /// Seed 001's idiom: the stored value, read through a subscription.
    var rawValue: T {
        let value = Shared<T?>(nil)
        let handle = get().start { value.value = $0 }
        handle.dispose()
        return value.value!
    }
}

@Suite struct ValuePromiseTests {
    @Test func seedExampleValuePromise1() {
        let output = EventLog()
        let promise1 = ValuePromise("testA", ignoreRepeated: true)
        let promise1Value = Shared("nil")
        output.append("promise1Value: \(promise1Value.value)")
        let promise1Dispose1 = promise1.get().start { value in
            output.append("promise1Dispose1-next:\(value)")
            promise1Value.value = value
        }
        output.append("promise1Value: \(promise1Value.value)")
        promise1.set(promise1Value.value + "---" + "testB")
        let promise1Dispose2 = promise1.get().start { value in output.append("promise1Dispose2-next: \(value)") }
        output.append("promise1Value: \(promise1Value.value)")
        promise1Dispose1.dispose()
        promise1Dispose2.dispose()
        #expect(
            output.events == [
                "promise1Value: nil",
                "promise1Dispose1-next:testA",
                "promise1Value: testA",
                "promise1Dispose1-next:testA---testB",
                "promise1Dispose2-next: testA---testB",
                "promise1Value: testA---testB",
            ])
    }

    @Test func seedExampleValuePromise2() {
        let output = EventLog()
        let promise2 = ValuePromise("testX", ignoreRepeated: true)
        let promise2Value = Shared("nil")
        output.append("promise2Value: \(promise2Value.value)")
        let promise2Dispose1 = promise2.get().start { value in
            output.append("promise2Dispose1-next:\(value)")
            promise2Value.value = value
        }
        promise2Dispose1.dispose()
        output.append("promise2Value: \(promise2Value.value)")
        promise2.set(promise2Value.value + "---" + "testY")
        let promise2Dispose2 = promise2.get().start { value in output.append("promise2Dispose2-next: \(value)") }
        output.append("promise2Value: \(promise2Value.value)")
        promise2Dispose2.dispose()
        #expect(
            output.events == [
                "promise2Value: nil",
                "promise2Dispose1-next:testX",
                "promise2Value: testX",
                "promise2Dispose2-next: testX---testY",
                "promise2Value: testX",
            ])
    }

    @Test func seedExampleValuePromise3() {
        let output = EventLog()
        let promise3 = ValuePromise("aaa", ignoreRepeated: true)
        let promise3Value = promise3.rawValue
        output.append("promise3Value: \(promise3Value)")
        promise3.set(promise3Value + "---" + "bbb")
        let promise3Dispose2 = promise3.get().start { value in output.append("promise3Dispose2-next: \(value)") }
        output.append("promise3Value: \(promise3Value)")
        promise3Dispose2.dispose()
        #expect(output.events == ["promise3Value: aaa", "promise3Dispose2-next: aaa---bbb", "promise3Value: aaa"])
    }

    @Test func ignoreRepeatedDropsEqualValuesButNeverTheFirstSet() {
        let log = EventLog()
        let promise = ValuePromise<Int>(ignoreRepeated: true)
        let handle = log.start(promise.get())
        promise.set(1)
        promise.set(1)
        promise.set(2)
        promise.set(2)
        #expect(log.events == ["next 1", "next 2"])
        log.start(promise.get(), prefix: "late:").dispose()
        #expect(log.events.last == "late:next 2", "the stored value is always replayed")
        handle.dispose()
    }

    @Test func withoutIgnoreRepeatedEverySetIsDelivered() {
        let log = EventLog()
        let promise = ValuePromise(0)
        let handle = log.start(promise.get())
        promise.set(0)
        promise.set(0)
        #expect(log.events == ["next 0", "next 0", "next 0"])
        handle.dispose()
    }

    @Test func aNestedSetCompletesForEverySubscriberBeforeTheOuterContinues() {
        let log = EventLog()
        let promise = ValuePromise(0)
        let a = promise.get().start(next: { value in
            log.append("a \(value)")
            if value == 1 { promise.set(2) }
        })
        let b = promise.get().start(next: { value in log.append("b \(value)") })
        log.take()
        promise.set(1)
        #expect(log.events == ["a 1", "a 2", "b 2", "b 1"])
        log.start(promise.get(), prefix: "late:").dispose()
        #expect(log.events.last == "late:next 2", "the stored value is the nested one")
        a.dispose()
        b.dispose()
    }

    @Test func neverCompletes() {
        let log = EventLog()
        let handle = log.start(ValuePromise(1).get())
        #expect(log.events == ["next 1"])
        handle.dispose()
    }
}
