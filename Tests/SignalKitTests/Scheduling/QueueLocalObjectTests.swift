// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

final class QueueConfined {
    var value = 0
    let onDeinit: () -> Void
    init(onDeinit: @escaping () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

@Suite struct QueueLocalObjectTests {
    @Test func theValueLivesAndDiesOnItsQueue() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        do {
            let object = QueueLocalObject(queue: queue) {
                log.append("generate on queue: \(queue.isCurrent())")
                return QueueConfined { log.append("deinit on queue: \(queue.isCurrent())") }
            }
            object.with { $0.value = 5 }
            #expect(log.events == [])
            scheduler.run()
            #expect(object.syncWith { $0.value } == 5)
            let unsafe: Int? = queue.syncResult { object.unsafeGet()?.value }
            #expect(unsafe == 5)
        }
        scheduler.run()
        #expect(log.events == ["generate on queue: true", "deinit on queue: true"])
    }

    @Test func signalWithRunsOnTheQueueAndSkipsWhenDisposedFirst() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        var object: QueueLocalObject<QueueConfined>? = QueueLocalObject(queue: queue) { QueueConfined {} }
        let signal: Signal<Int, NoError> = object!.signalWith { value, subscriber in
            log.append("generator on queue: \(queue.isCurrent())")
            subscriber.putNext(value.value)
            return EmptyDisposable
        }
        let handle = log.start(signal)
        #expect(log.events == [])
        scheduler.run()
        #expect(log.take() == ["generator on queue: true", "next 0"])
        handle.dispose()
        let cancelled = log.start(signal)
        cancelled.dispose()
        scheduler.run()
        #expect(log.take() == [])
        object = nil
        scheduler.run()  // the value is released on its queue
    }
}
