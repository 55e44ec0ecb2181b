// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

/// The hot/cold examples of the ReactiveCocoa article (seed 002, "冷热信号详解"),
/// adapted from Objective-C: `[RACScheduler mainThreadScheduler] afterDelay:`
/// becomes `Queue.after` on a virtual clock, `subscribeNext:` becomes
/// `start(next:)`, `NSLog` appends to an `EventLog`. The logs are the
/// article's printed lines, in the article's order.
@Suite struct HotColdExampleTests {
    /// Subscribers 1 and 2 at 0.1 s, "send package 1" at 1 s, subscribers 3
    /// and 4 at 1.1 s, "send package 2" at 2 s, on a subject and on a replay
    /// subject.
    @Test func subjectVersusReplaySubjectTimeline() {
        let scheduler = VirtualTimeScheduler()
        let main = scheduler.makeQueue(name: "main")
        let log = EventLog()
        let subject = Subject<String, NoError>()
        let replaySubject: Subject<String, NoError> = ReplaySubject()
        let handles = SignalKit.Atomic<[any Disposable]>(value: [])

        @Sendable func subscribe(_ number: Int) {
            let fromSubject = subject.signal().start(next: { x in
                log.append("Subscriber \(number) get a next value: \(x) from subject")
            })
            let fromReplay = replaySubject.signal().start(next: { x in
                log.append("Subscriber \(number) get a next value: \(x) from replay subject")
            })
            handles.modify { $0 + [fromSubject, fromReplay] }
        }

        main.after(0.1) {
            subscribe(1)  // Subscriber 1
            subscribe(2)  // Subscriber 2
        }
        main.after(1) {
            subject.putNext("send package 1")
            replaySubject.putNext("send package 1")
        }
        main.after(1.1) {
            subscribe(3)  // Subscriber 3
            subscribe(4)  // Subscriber 4
        }
        main.after(2) {
            subject.putNext("send package 2")
            replaySubject.putNext("send package 2")
        }
        scheduler.run()

        #expect(
            log.events == [
                "Subscriber 1 get a next value: send package 1 from subject",
                "Subscriber 2 get a next value: send package 1 from subject",
                "Subscriber 1 get a next value: send package 1 from replay subject",
                "Subscriber 2 get a next value: send package 1 from replay subject",
                "Subscriber 3 get a next value: send package 1 from replay subject",
                "Subscriber 4 get a next value: send package 1 from replay subject",
                "Subscriber 1 get a next value: send package 2 from subject",
                "Subscriber 2 get a next value: send package 2 from subject",
                "Subscriber 3 get a next value: send package 2 from subject",
                "Subscriber 4 get a next value: send package 2 from subject",
                "Subscriber 1 get a next value: send package 2 from replay subject",
                "Subscriber 2 get a next value: send package 2 from replay subject",
                "Subscriber 3 get a next value: send package 2 from replay subject",
                "Subscriber 4 get a next value: send package 2 from replay subject",
            ])
        handles.with { $0 }.forEach { $0.dispose() }
    }

    /// The cold signal sends A at 1.5 s, B at 3 s and completes at 5 s after
    /// its subscription; the subject subscribes to it at 2 s; subscriber 1
    /// subscribes at once, subscriber 2 at 4 s.
    @Test func turningAColdSignalHotWithASubject() {
        let scheduler = VirtualTimeScheduler()
        let main = scheduler.makeQueue(name: "main")
        let log = EventLog()
        let timeline = EventLog()
        let coldSignal = Signal<String, NoError> { subscriber in
            log.append("Cold signal be subscribed.")
            timeline.append("subscribed at \(scheduler.now)")
            main.after(1.5) { subscriber.putNext("A") }
            main.after(3) { subscriber.putNext("B") }
            main.after(5) { subscriber.putCompletion() }
            return EmptyDisposable
        }

        let subject = Subject<String, NoError>()
        log.append("Subject created.")

        main.after(2) {
            subject.subscribe(to: coldSignal)  // [coldSignal subscribe:subject]
        }

        let subscriber1 = subject.signal().start(next: { x in
            log.append("Subscriber 1 recieve value:\(x).")
            timeline.append("1: \(x) at \(scheduler.now)")
        })

        let subscriber2 = SignalKit.Atomic<(any Disposable)?>(value: nil)
        main.after(4) {
            _ = subscriber2.swap(
                subject.signal().start(next: { x in
                    log.append("Subscriber 2 recieve value:\(x).")
                    timeline.append("2: \(x) at \(scheduler.now)")
                }))
        }
        scheduler.run()

        #expect(
            log.events == [
                "Subject created.",
                "Cold signal be subscribed.",
                "Subscriber 1 recieve value:A.",
                "Subscriber 1 recieve value:B.",
                "Subscriber 2 recieve value:B.",
            ])
        #expect(timeline.events == ["subscribed at 2.0", "1: A at 3.5", "1: B at 5.0", "2: B at 5.0"])
        subscriber1.dispose()
        subscriber2.with { $0 }?.dispose()
    }

    /// The same with RAC's standard interface: `publish` and `connect()`
    /// instead of subscribing the subject by hand. Same output; and
    /// disposing the connection disposes the cold signal's subscription,
    /// which the hand-made version cannot do.
    @Test func turningAColdSignalHotWithPublish() {
        let scheduler = VirtualTimeScheduler()
        let main = scheduler.makeQueue(name: "main")
        let log = EventLog()
        let coldSignal = Signal<String, NoError> { subscriber in
            log.append("Cold signal be subscribed.")
            let a = main.cancellableAfterForTest(1.5) { subscriber.putNext("A") }
            let b = main.cancellableAfterForTest(3) { subscriber.putNext("B") }
            let done = main.cancellableAfterForTest(5) { subscriber.putCompletion() }
            return ActionDisposable {
                log.append("Cold signal disposed.")
                a.dispose()
                b.dispose()
                done.dispose()
            }
        }
        let connection = coldSignal |> publish
        log.append("Connection created.")
        let link = SignalKit.Atomic<(any Disposable)?>(value: nil)
        main.after(2) { _ = link.swap(connection.connect()) }
        let subscriber1 = connection.signal.start(next: { x in log.append("Subscriber 1 recieve value:\(x).") })
        let subscriber2 = SignalKit.Atomic<(any Disposable)?>(value: nil)
        main.after(4) {
            _ = subscriber2.swap(connection.signal.start(next: { x in log.append("Subscriber 2 recieve value:\(x).") }))
        }
        main.after(5.5) { link.with { $0 }?.dispose() }
        scheduler.run()
        #expect(
            log.events == [
                "Connection created.",
                "Cold signal be subscribed.",
                "Subscriber 1 recieve value:A.",
                "Subscriber 1 recieve value:B.",
                "Subscriber 2 recieve value:B.",
                "Cold signal disposed.",
            ])
        subscriber1.dispose()
        subscriber2.with { $0 }?.dispose()
    }
}

extension Queue {
    /// `after` that can be cancelled (`Queue.cancellableAfter` is internal).
    fileprivate func cancellableAfterForTest(_ delay: Double, _ f: @escaping @Sendable () -> Void) -> any Disposable {
        let cancelled = SignalKit.Atomic<Bool>(value: false)
        after(delay) {
            if !cancelled.with({ $0 }) { f() }
        }
        return ActionDisposable { _ = cancelled.swap(true) }
    }
}
