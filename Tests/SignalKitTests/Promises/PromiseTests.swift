// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

/// SwiftSignalKit idiom from seed 001: read the current value by
/// subscribing and disposing at once.
extension Promise {
    var rawValue: T? {
        get {
            let value = Shared<T?>(nil)
            let handle = get().start { value.value = $0 }
            handle.dispose()
            return value.value
        }
        set {
            if let value = newValue {
                set(
                    Signal { subscriber in
                        subscriber.putNext(value)
                        return EmptyDisposable
                    })
            }
        }
    }
}

@Suite struct PromiseTests {
    /// Seed 001 `testPromise1`, with the 2-second asynchronous value on a
    /// virtual clock instead of a global queue.
    @Test func seedExamplePromise1() {
        let output = EventLog()
        let scheduler = VirtualTimeScheduler()
        let later = scheduler.makeQueue()
        let promise1 = Promise<String>()
        let promise1Value = Shared<String?>(nil)
        let dispose0 = promise1.get().start(next: { list in
            output.append("dispose0 get1--\(list)")
            promise1Value.value = list
        })
        dispose0.dispose()
        let promise1Value2 = promise1.rawValue
        output.append("promise1Value--\(promise1Value.value ?? "nil") promise1Value2:\(promise1Value2 ?? "nil")")
        let dispose1 = promise1.get().start(next: { list in output.append("dispose1 get1--\(list)") })
        promise1.set(
            Signal<String, NoError> { subscriber in
                output.append("设置值--aaa")
                subscriber.putNext("aaaa")
                later.after(2) {
                    output.append("设置值--bbb")
                    subscriber.putNext("bbb")
                }
                return MetaDisposable()
            })
        let dispose2 = promise1.get().start(next: { list in output.append("dispose2 get2--\(list)") })
        output.append("promise1Value3:\(promise1.rawValue ?? "nil")")
        scheduler.advance(by: 2)
        #expect(
            output.events == [
                "promise1Value--nil promise1Value2:nil",
                "设置值--aaa",
                "dispose1 get1--aaaa",
                "dispose2 get2--aaaa",
                "promise1Value3:aaaa",
                "设置值--bbb",
                "dispose1 get1--bbb",
                "dispose2 get2--bbb",
            ])
        dispose1.dispose()
        dispose2.dispose()
    }

    @Test func replaysTheCurrentValueSynchronouslyAndNeverCompletes() {
        let log = EventLog()
        let promise = Promise<Int>(1)
        let source = TestSource<Int, NoError>("s", log: log)
        let handle = log.start(promise.get())
        promise.set(source.signal)
        source.putNext(2)
        source.putCompletion()
        let late = log.start(promise.get(), prefix: "late:")
        #expect(log.events == ["next 1", "s.subscribe#1", "next 2", "s.dispose#1", "late:next 2"])
        handle.dispose()
        late.dispose()
    }

    @Test func setSubscribesTheNewSourceBeforeDisposingTheOldAndClearsTheValue() {
        let log = EventLog()
        let promise = Promise<Int>()
        let first = TestSource<Int, NoError>("first", log: log) { $0.putNext(1) }
        let second = TestSource<Int, NoError>("second", log: log)
        promise.set(first.signal)
        promise.set(second.signal)
        log.start(promise.get()).dispose()
        #expect(log.events == ["first.subscribe#1", "second.subscribe#1", "first.dispose#1"])
    }

    @Test func initializeOnFirstAccessStartsAtTheFirstSubscription() {
        let log = EventLog()
        let source = TestSource<Int, NoError>("init", log: log) { $0.putNext(5) }
        let promise = Promise<Int>(initializeOnFirstAccess: source.signal)
        #expect(log.events == [])
        let first = log.start(promise.get(), prefix: "1:")
        let second = log.start(promise.get(), prefix: "2:")
        #expect(log.events == ["init.subscribe#1", "1:next 5", "2:next 5"])
        first.dispose()
        second.dispose()
    }

    @Test func deliversInSubscriptionOrderAndSkipsDisposedSubscribers() {
        let log = EventLog()
        let promise = Promise<Int>()
        let pipe = ValuePipe<Int>()
        promise.set(pipe.signal())
        let a = log.start(promise.get(), prefix: "a:")
        let b = Shared<(any Disposable)?>(nil)
        let x = promise.get().start(next: { value in
            log.append("x:next \(value)")
            b.value?.dispose()
        })
        b.value = log.start(promise.get(), prefix: "b:")
        pipe.putNext(1)
        pipe.putNext(2)
        #expect(log.events == ["a:next 1", "x:next 1", "a:next 2", "x:next 2"])
        a.dispose()
        x.dispose()
    }

    @Test func aSubscriberAddedDuringDeliveryGetsTheValueOnce() {
        let log = EventLog()
        let promise = Promise<Int>()
        let pipe = ValuePipe<Int>()
        promise.set(pipe.signal())
        let handles = Shared<[any Disposable]>([])
        handles.value.append(
            promise.get().start(next: { value in
                log.append("first \(value)")
                if handles.value.count == 1 {
                    handles.value.append(log.start(promise.get(), prefix: "added:"))
                }
            }))
        pipe.putNext(1)
        #expect(log.events == ["first 1", "added:next 1"])
        handles.value.forEach { $0.dispose() }
    }

    @Test func theSourceDoesNotKeepThePromiseAliveAndDeinitDisposesIt() {
        let log = EventLog()
        let source = TestSource<Int, NoError>("s", log: log)
        let weakPromise = WeakBox<Promise<Int>>(nil)
        do {
            let promise = Promise<Int>()
            promise.onDeinit = { log.append("onDeinit") }
            weakPromise.value = promise
            promise.set(source.signal)
        }
        #expect(weakPromise.value == nil)
        #expect(log.events == ["s.subscribe#1", "onDeinit", "s.dispose#1"])
    }

    @Test func aSubscriptionKeepsThePromiseAlive() {
        let weakPromise = WeakBox<Promise<Int>>(nil)
        let handle: any Disposable
        do {
            let promise = Promise<Int>(1)
            weakPromise.value = promise
            handle = promise.get().start()
        }
        #expect(weakPromise.value != nil)
        handle.dispose()
        #expect(weakPromise.value == nil)
    }
}
