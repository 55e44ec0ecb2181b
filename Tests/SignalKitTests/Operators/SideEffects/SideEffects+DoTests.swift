// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// SideEffects: doNext, doError, doCompleted, initially, finally
// (Sources/SignalKit/Operators/SideEffects/Signal+Do.swift).

@Suite struct RACSideEffectsTests {
    @Test func sideEffectsRunBeforeTheEventReachesTheSubscriber() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        let observed =
            source.signal
            |> initially { log.append("initially") }
            |> doNext { log.append("doNext \($0)") }
            |> doError { log.append("doError \($0)") }
            |> doCompleted { log.append("doCompleted") }
            |> finally { log.append("finally") }
        _ = log.start(observed)
        source.putNext(1)
        source.putCompletion()
        #expect(
            log.take() == [
                "initially", "s.subscribe#1", "doNext 1", "next 1", "doCompleted", "finally", "completed", "s.dispose#1",
            ])
        _ = log.start(observed)
        source.putError("e")
        #expect(log.take() == ["initially", "s.subscribe#2", "doError e", "finally", "error e", "s.dispose#2"])
    }

    @Test func finallyDoesNotRunOnDisposal() {
        let log = EventLog()
        let source = TestSource<Int, String>("s", log: log)
        let handle = log.start(source.signal |> finally { log.append("finally") })
        handle.dispose()
        #expect(log.events == ["s.subscribe#1", "s.dispose#1"])
    }

    @Test func designGuidelineSideEffectsRunPerSubscription() {
        // Seed 002 "Injecting effects": doCompleted runs before the
        // subscriber's completion, once per subscription.
        let log = EventLog()
        let subscriptions = Shared(0)
        let loggingSignal = Signal<Void, NoError> { subscriber in
            subscriptions.withLock { $0 += 1 }
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let withEffect = loggingSignal |> doCompleted { log.append("about to complete subscription \(subscriptions.value)") }
        #expect(log.events == [], "does not output anything yet")
        _ = withEffect.start(completed: { log.append("subscription \(subscriptions.value)") })
        #expect(log.events == ["about to complete subscription 1", "subscription 1"])
    }
}
