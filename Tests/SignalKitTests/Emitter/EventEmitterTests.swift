// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import SignalKit
import SignalKitTesting
import Testing

// EventEmitter: firing, owners, arities, queues, snapshot and re-entrancy,
// removal and hooks, maxObservers, debugDescription, the Signal bridge.
// Token behaviour (cancelsAfterNextFire, replay, fire(for:), lifetimes) is in
// EventObserverTests.swift. Queued delivery runs on VirtualTimeScheduler
// queues: their work runs inside `run()`, on the test's thread.

/// Uber Signals' README example: a network request emitting data or an error.
struct NetworkError: Error, Equatable, CustomStringConvertible {
    let code: Int
    var description: String { "error \(code)" }
}

final class NetworkRequest {
    let onNetworkResult = EventEmitter<[UInt8]?, NetworkError?>()

    func receivedNetworkResult(_ data: [UInt8]?, _ error: NetworkError?) {
        onNetworkResult.fire(data, error)
    }
}

final class ResultListener: Sendable {
    let name: String
    let log: EventLog

    init(_ name: String, log: EventLog) {
        self.name = name
        self.log = log
    }

    func handle(_ data: [UInt8]?, _ error: NetworkError?) {
        log.append("\(name): data \(data.map { "\($0)" } ?? "nil"), \(error.map { "\($0)" } ?? "nil")")
    }
}

@Suite struct EventEmitterFiringTests {
    @Test func theNetworkResultExampleDeliversDataAndErrorToTheOwner() {
        let log = EventLog()
        let request = NetworkRequest()
        let listener = ResultListener("view", log: log)
        request.onNetworkResult.addObserver(listener) { listener, data, error in
            listener.handle(data, error)
        }
        request.receivedNetworkResult([1, 2], nil)
        request.receivedNetworkResult(nil, NetworkError(code: 404))
        #expect(log.events == ["view: data [1, 2], nil", "view: data nil, error 404"])
    }

    @Test func anObserverWhoseOwnerWasDeallocatedIsNeverCalledAndIsPurgedWithTheHook() {
        let log = EventLog()
        let request = NetworkRequest()
        let emitter = request.onNetworkResult
        emitter.observerRemoved = { log.append("removed, owner \($0.owner == nil ? "deallocated" : "alive")") }
        let kept = ResultListener("kept", log: log)
        emitter.addObserver(kept) { listener, data, error in listener.handle(data, error) }
        let gone = WeakBox<ResultListener>(nil)
        let token: EventObserver
        do {
            let listener = ResultListener("gone", log: log)
            gone.value = listener
            token = emitter.addObserver(listener) { listener, data, error in listener.handle(data, error) }
        }
        #expect(gone.value == nil, "the emitter holds owners weakly")
        #expect(emitter.observerCount == 2, "a dead owner is counted until the next purge")
        #expect(!token.isCancelled)

        request.receivedNetworkResult([7], nil)
        #expect(log.take() == ["kept: data [7], nil", "removed, owner deallocated"])
        #expect(emitter.observerCount == 1)
        #expect(token.isCancelled)

        request.receivedNetworkResult(nil, NetworkError(code: 500))
        #expect(log.take() == ["kept: data nil, error 500"], "purged once; never called")
    }

    @Test func addObserverAndRemoveObserverPurgeDeadOwnersToo() {
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        emitter.observerRemoved = { _ in log.append("removed") }
        do {
            let owner = Probe()
            emitter.addObserver(owner) { _, _ in }
        }
        let live = Probe("live")
        emitter.addObserver(live) { _, _ in }
        #expect(log.take() == ["removed"], "addObserver purged the dead registration")
        #expect(emitter.observerCount == 1)

        do {
            let owner = Probe()
            emitter.addObserver(owner) { _, _ in }
        }
        emitter.removeObserver(Probe("unrelated"))
        #expect(log.take() == ["removed"], "removeObserver purged the dead registration")
        #expect(emitter.observerCount == 1)
        emitter.removeAllObservers()
    }

    @Test func observersAreCalledInRegistrationOrderWithTheirOwner() {
        let log = EventLog()
        let emitter = EventEmitter<String>()
        let first = Probe("first")
        let second = Probe("second")
        emitter.addObserver(first) { owner, value in log.append("\(owner.name) \(value)") }
        emitter.addObserver(second) { owner, value in log.append("\(owner.name) \(value)") }
        emitter.addObserver(first) { owner, value in log.append("\(owner.name) again \(value)") }
        emitter.fire("a")
        #expect(log.events == ["first a", "second a", "first again a"])
        emitter.removeAllObservers()
    }

    @Test func theOwnerIsHeldStronglyForTheWholeSynchronousCallback() {
        let log = EventLog()
        // An empty parameter pack needs `< >`: the formatter would make it the operator `<>`.
        // swift-format-ignore
        let emitter = EventEmitter< >()
        let holder = Shared<Probe?>(Probe("owner"))
        let weakOwner = WeakBox(holder.value)
        emitter.addObserver(holder.value!) { owner in
            holder.value = nil  // the last outside reference goes away mid-callback
            log.append("\(owner.name) alive=\(weakOwner.value != nil)")
        }
        emitter.fire()
        #expect(log.events == ["owner alive=true"])
        #expect(weakOwner.value == nil, "the emitter does not retain the owner after the delivery")
        emitter.fire()
        #expect(log.events == ["owner alive=true"])
    }

    @Test func theEmitterDoesNotRetainOwnersAfterDelivery() {
        let emitter = EventEmitter<Int>()
        let weakOwner = WeakBox<Probe>(nil)
        do {
            let owner = Probe()
            weakOwner.value = owner
            emitter.addObserver(owner) { owner, _ in owner.touch() }
            emitter.fire(1)
            _ = emitter.signal()
        }
        #expect(weakOwner.value == nil)
    }
}

@Suite struct EventEmitterArityTests {
    @Test func zeroArguments() {
        let log = EventLog()
        // An empty parameter pack needs `< >`: the formatter would make it the operator `<>`.
        // swift-format-ignore
        let emitter = EventEmitter< >()
        let owner = Probe("owner")
        let token = emitter.addObserver(owner) { owner in log.append("fired \(owner.name)") }
        emitter.fire()
        emitter.fire(for: token)
        #expect(log.events == ["fired owner", "fired owner"])
        #expect(!token.firePreviousData(), "an emitter without arguments keeps no data")
        token.cancel()
    }

    @Test func oneArgument() {
        let log = EventLog()
        let emitter = EventEmitter<String>()
        let owner = Probe()
        emitter.addObserver(owner) { _, text in log.append(text) }
        emitter.fire("hello")
        #expect(log.events == ["hello"])
        emitter.removeObserver(owner)
    }

    @Test func oneOptionalArgumentTakesNil() {
        let log = EventLog()
        let emitter = EventEmitter<Int?>()
        let owner = Probe()
        emitter.addObserver(owner) { _, value in log.append(value.map { "\($0)" } ?? "nil") }
        emitter.fire(nil)
        emitter.fire(3)
        #expect(log.events == ["nil", "3"])
        emitter.removeObserver(owner)
    }

    @Test func twoArgumentsWithOptionals() {
        let log = EventLog()
        let emitter = EventEmitter<Int, String?>()
        let owner = Probe()
        emitter.addObserver(owner) { _, number, text in log.append("\(number) \(text ?? "nil")") }
        emitter.fire(1, "one")
        emitter.fire(2, nil)
        #expect(log.events == ["1 one", "2 nil"])
        emitter.removeObserver(owner)
    }

    @Test func sixMixedArgumentsIncludingOptionalsTuplesAndObjects() {
        let log = EventLog()
        let emitter = EventEmitter<Int, String?, Double, [String: Int], (Int, Int)?, Probe?>()
        let owner = Probe("owner")
        let payload = Probe("payload")
        emitter.addObserver(owner) { owner, int, text, double, dictionary, pair, object in
            log.append(
                "\(owner.name) \(int) \(text ?? "nil") \(double) \(dictionary) "
                    + "\(pair.map { "(\($0.0), \($0.1))" } ?? "nil") \(object?.name ?? "nil")"
            )
        }
        emitter.fire(1, nil, 2.5, ["k": 3], (4, 5), payload)
        emitter.fire(6, "text", 0, [:], nil, nil)
        #expect(log.events == ["owner 1 nil 2.5 [\"k\": 3] (4, 5) payload", "owner 6 text 0.0 [:] nil nil"])
        emitter.removeObserver(owner)
    }

    @Test func aTupleIsOneArgument() {
        let log = EventLog()
        let emitter = EventEmitter<(Int, String)>()
        let owner = Probe()
        let token = emitter.addObserver(owner) { _, pair in log.append("\(pair.0) \(pair.1)") }
        emitter.fire((1, "a"))
        #expect(token.firePreviousData(), "one argument: data is kept")
        #expect(log.events == ["1 a", "1 a"])
        token.cancel()
    }
}

@Suite struct EventEmitterQueueTests {
    @Test func aQueuedObserverRunsOnItsQueueASynchronousOneInsideFire() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        let owner = Probe()
        emitter.addObserver(owner) { _, value in log.append("sync \(value) onQueue=\(queue.isCurrent())") }
        emitter.addObserver(owner, queue: queue) { _, value in log.append("queued \(value) onQueue=\(queue.isCurrent())") }
        emitter.fire(1)
        log.append("fire returned")
        scheduler.run()
        #expect(log.take() == ["sync 1 onQueue=false", "fire returned", "queued 1 onQueue=true"])

        queue.sync { emitter.fire(2) }
        #expect(log.take() == ["sync 2 onQueue=true", "queued 2 onQueue=true"], "current queue: synchronous")
        #expect(scheduler.pendingCount == 0)
        emitter.removeObserver(owner)
    }

    @Test func theQueueCanBeChangedAfterAdding() {
        let scheduler = VirtualTimeScheduler()
        let first = scheduler.makeQueue(name: "first")
        let second = scheduler.makeQueue(name: "second")
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        let owner = Probe()
        let token = emitter.addObserver(owner, queue: first) { _, value in
            log.append("\(value) first=\(first.isCurrent()) second=\(second.isCurrent())")
        }
        #expect(token.queue === first)
        emitter.fire(1)
        token.queue = second
        emitter.fire(2)
        token.queue = nil
        emitter.fire(3)
        #expect(log.take() == ["3 first=false second=false"])
        scheduler.run()
        #expect(log.take() == ["1 first=true second=false", "2 first=false second=true"])
        token.queue = first
        token.queue = second
        token.queue = first
        #expect(token.queue === first)
        token.cancel()
    }

    @Test func deliveriesThroughOneQueueStayInFireOrderAndAFireOnTheQueueRunsInline() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        let owner = Probe()
        emitter.addObserver(owner, queue: queue) { _, value in log.append("\(value)") }
        emitter.fire(1)
        emitter.fire(2)
        emitter.fire(3)
        scheduler.run()
        #expect(log.take() == ["1", "2", "3"])

        emitter.fire(4)
        queue.sync { emitter.fire(5) }  // on the queue: delivered inline, before 4
        scheduler.run()
        #expect(log.take() == ["5", "4"], "the documented inline rule (as Queue.async)")
        emitter.removeObserver(owner)
    }

    @Test func theOwnerIsHeldAcrossTheQueueHopAndReleasedAfterwards() {
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        let weakOwner = WeakBox<Probe>(nil)
        do {
            let owner = Probe("owner")
            weakOwner.value = owner
            emitter.addObserver(owner, queue: queue) { owner, value in
                log.append("\(owner.name) \(value) onQueue=\(queue.isCurrent())")
            }
            emitter.fire(1)
        }
        #expect(weakOwner.value != nil, "the dispatched delivery holds the owner")
        #expect(log.events == [])
        scheduler.run()
        #expect(log.events == ["owner 1 onQueue=true"])
        #expect(weakOwner.value == nil, "released once the delivery ran")
        emitter.fire(2)
        #expect(emitter.observerCount == 0, "purged")
        #expect(scheduler.pendingCount == 0)
    }

    @Test func aRealDispatchQueueDeliversOnItsThread() {
        let queue = Queue(name: "emitter-test")
        let emitter = EventEmitter<Int>()
        let owner = Probe()
        let seen = SignalKit.Atomic<[String]>(value: [])
        emitter.addObserver(owner, queue: queue) { _, value in
            seen.modify { $0 + ["\(value) onQueue=\(queue.isCurrent())"] }
        }
        emitter.fire(1)
        emitter.fire(2)
        queue.sync {}
        #expect(seen.with { $0 } == ["1 onQueue=true", "2 onQueue=true"])
        emitter.removeObserver(owner)
    }
}

@Suite struct EventEmitterReentrancyTests {
    @Test func anObserverAddedDuringAFireDoesNotReceiveIt() {
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        let owner = Probe()
        let added = Shared(false)
        emitter.addObserver(owner) { [unowned emitter] owner, value in
            log.append("first \(value)")
            if !added.value {
                added.value = true
                emitter.addObserver(owner) { _, value in log.append("added \(value)") }
            }
        }
        emitter.fire(1)
        emitter.fire(2)
        #expect(log.events == ["first 1", "first 2", "added 2"], "two fires, three callbacks (as Uber's test)")
        emitter.removeAllObservers()
    }

    @Test func anObserverCancelledByAnEarlierCallbackMissesThatFire() {
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        let owner = Probe()
        let victim = Shared<EventObserver?>(nil)
        emitter.addObserver(owner) { _, value in
            log.append("first \(value)")
            victim.value?.cancel()
        }
        victim.value = emitter.addObserver(owner) { _, value in log.append("victim \(value)") }
        emitter.fire(1)
        #expect(log.events == ["first 1"], "SignalKit re-checks at delivery (Uber would still deliver)")
        victim.value = nil
        emitter.removeAllObservers()
    }

    @Test func firingRemovingAndCancellingFromInsideCallbacksIsSafe() {
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        let a = Probe("a")
        let b = Probe("b")
        let self_ = Shared<EventObserver?>(nil)
        emitter.addObserver(a) { [unowned emitter] owner, value in
            log.append("a \(value)")
            if value == 1 { emitter.fire(10) }  // nested fire
            if value == 2 { emitter.removeObserver(b) }
        }
        self_.value = emitter.addObserver(b) { _, value in
            log.append("b \(value)")
            if value == 3 { self_.value?.cancel() }
        }
        emitter.fire(1)
        #expect(log.take() == ["a 1", "a 10", "b 10", "b 1"])
        emitter.fire(2)
        #expect(log.take() == ["a 2"], "b removed by a's callback before its turn")
        emitter.addObserver(b) { _, value in
            log.append("b2 \(value)")
        }
        emitter.fire(3)
        emitter.fire(4)
        #expect(log.take() == ["a 3", "b2 3", "a 4", "b2 4"])
        self_.value = nil
        emitter.removeAllObservers()
    }

    @Test func removeAllObserversFromInsideACallbackStopsTheRestOfTheFire() {
        let log = EventLog()
        // An empty parameter pack needs `< >`: the formatter would make it the operator `<>`.
        // swift-format-ignore
        let emitter = EventEmitter< >()
        let owner = Probe()
        emitter.addObserver(owner) { [unowned emitter] _ in
            log.append("first")
            emitter.removeAllObservers()
        }
        emitter.addObserver(owner) { _ in log.append("second") }
        emitter.fire()
        emitter.fire()
        #expect(log.events == ["first"])
        #expect(emitter.observerCount == 0)
    }
}

@Suite struct EventEmitterRemovalTests {
    @Test func removeObserverRemovesEveryRegistrationOfThatOwnerWithAHookEach() {
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        emitter.observerRemoved = { log.append("removed \(($0.owner as? Probe)?.name ?? "?")") }
        let a = Probe("a")
        let b = Probe("b")
        let first = emitter.addObserver(a) { _, value in log.append("a1 \(value)") }
        emitter.addObserver(b) { _, value in log.append("b \(value)") }
        let second = emitter.addObserver(a) { _, value in log.append("a2 \(value)") }
        emitter.removeObserver(a)
        #expect(log.take() == ["removed a", "removed a"])
        #expect(first.isCancelled && second.isCancelled)
        #expect(emitter.observerCount == 1)
        emitter.fire(1)
        #expect(log.take() == ["b 1"])
        emitter.removeObserver(a)
        #expect(log.take() == [], "nothing left to remove")
        emitter.removeObserver(b)
    }

    @Test func removeAllObserversCallsNoHooksAndLeavesTheSignalAlone() {
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        emitter.observerRemoved = { _ in log.append("removed") }
        let owner = Probe()
        let token = emitter.addObserver(owner) { _, value in log.append("observer \(value)") }
        emitter.addObserver(owner) { _, value in log.append("observer2 \(value)") }
        let handle = log.start(emitter.signal(), prefix: "signal ")
        emitter.removeAllObservers()
        #expect(emitter.observerCount == 0)
        #expect(token.isCancelled)
        emitter.fire(1)
        token.cancel()
        #expect(log.events == ["signal next 1"], "no hook, not even for a later cancel")
        handle.dispose()
    }

    @Test func cancelRemovesCallsTheHookOnceAndIsIdempotent() {
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        emitter.observerRemoved = { _ in log.append("removed") }
        let owner = Probe()
        let token = emitter.addObserver(owner) { _, value in log.append("next \(value)") }
        emitter.fire(1)
        token.cancel()
        token.cancel()
        token.dispose()
        emitter.fire(2)
        #expect(log.events == ["next 1", "removed"])
        #expect(emitter.observerCount == 0)
    }

    @Test func tokensComposeWithDisposableSet() {
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        let owner = Probe()
        let set = DisposableSet()
        set.add(emitter.addObserver(owner) { _, value in log.append("a \(value)") })
        set.add(emitter.addObserver(owner) { _, value in log.append("b \(value)") })
        emitter.fire(1)
        set.dispose()
        emitter.fire(2)
        #expect(log.events == ["a 1", "b 1"])
        #expect(emitter.observerCount == 0)
    }

    @Test func observerAddedReceivesEachNewToken() {
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        let tokens = Shared<[ObjectIdentifier]>([])
        emitter.observerAdded = { observer in
            tokens.value.append(ObjectIdentifier(observer))
            log.append("added")
        }
        let owner = Probe()
        let token = emitter.addObserver(owner) { _, _ in }
        #expect(log.events == ["added"])
        #expect(tokens.value == [ObjectIdentifier(token)])
        #expect(emitter.observerAdded != nil)
        emitter.observerAdded = nil
        emitter.addObserver(owner) { _, _ in }
        #expect(log.events == ["added"])
        emitter.removeAllObservers()
    }
}

@Suite struct EventEmitterLimitTests {
    @Test func exceedingMaxObserversIsReportedButNothingIsRefused() {
        let log = EventLog()
        let emitter = EventEmitter<Int>()
        #expect(emitter.maxObservers == 100)
        emitter.maxObserversHandler = { log.append($0) }
        emitter.maxObservers = 2
        let owner = Probe()
        for _ in 0..<3 { emitter.addObserver(owner) { _, _ in } }
        #expect(emitter.observerCount == 3)
        #expect(
            log.take() == [
                "EventEmitter.addObserver: 3 observers exceed maxObservers (2) on EventEmitter<Int>; observers are "
                    + "leaking (remove them, or tie them to owners that go away), or raise maxObservers"
            ]
        )
        emitter.maxObservers = 1
        #expect(
            log.take() == [
                "EventEmitter.maxObservers: lowered to 1 below the current 3 observers on EventEmitter<Int>; "
                    + "remove observers first, or keep the limit above the count"
            ]
        )
        emitter.maxObservers = 3
        #expect(log.take() == [])
        emitter.removeAllObservers()
    }

    @Test func theDefaultLimitAllowsOneHundredObservers() {
        let log = EventLog()
        // An empty parameter pack needs `< >`: the formatter would make it the operator `<>`.
        // swift-format-ignore
        let emitter = EventEmitter< >()
        emitter.maxObserversHandler = { log.append($0) }
        let owner = Probe()
        for _ in 0..<100 { emitter.addObserver(owner) { _ in } }
        #expect(log.events.isEmpty)
        emitter.addObserver(owner) { _ in }
        #expect(log.events.count == 1)
        emitter.removeAllObservers()
    }

    #if DEBUG
    @Test func withoutAHandlerExceedingTheLimitIsADebugAssertion() async {
        await #expect(processExitsWith: .failure) {
            let emitter = EventEmitter<Int>()
            emitter.maxObservers = 1
            let owner = Probe()
            emitter.addObserver(owner) { _, _ in }
            emitter.addObserver(owner) { _, _ in }
        }
    }
    #endif
}

@Suite struct EventEmitterDescriptionTests {
    @Test func debugDescriptionNamesTheTypesAndListsObservers() {
        let emitter = EventEmitter<Int, String?>()
        #expect(emitter.debugDescription.hasPrefix("EventEmitter<Int, Optional<String>>(0x"))
        #expect(emitter.debugDescription.hasSuffix("observers: 0, signal subscribers: 0)"))
        let owner = Probe()
        let token = emitter.addObserver(owner) { _, _, _ in }
        token.cancelsAfterNextFire = true
        let handle = emitter.signal().start()
        let lines = emitter.debugDescription.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.hasSuffix("observers: 1, signal subscribers: 1)") == true)
        #expect(lines.last == "  EventObserver(owner: Probe, cancelsAfterNextFire)")
        // An empty parameter pack needs `< >`: the formatter would make it the operator `<>`.
        // swift-format-ignore
        #expect(EventEmitter< >().debugDescription.hasPrefix("EventEmitter<>(0x"))
        token.cancel()
        #expect(token.debugDescription == "EventObserver(owner: Probe, cancelsAfterNextFire, cancelled)")
        handle.dispose()
    }
}

@Suite struct EventEmitterSignalTests {
    @Test func theSignalDeliversEachFireAsATupleAndComposesWithOperators() {
        let log = EventLog()
        let emitter = EventEmitter<Int, String?>()
        let handle = log.start(emitter.signal() |> map { number, text in "\(number)\(text ?? "-")" })
        let owner = Probe()
        let token = emitter.addObserver(owner) { _, number, _ in log.append("observer \(number)") }
        emitter.fire(1, "a")
        emitter.fire(2, nil)
        emitter.fire(for: token, 3, "targeted")
        #expect(log.events == ["observer 1", "next 1a", "observer 2", "next 2-", "observer 3"])
        #expect(emitter.observerCount == 1, "subscribers are not observers")
        #expect(emitter.signal() === emitter.signal())
        handle.dispose()
        emitter.fire(4, nil)
        #expect(log.events.last == "observer 4")
        token.cancel()
    }

    @Test func oneArgumentIsDeliveredAsItselfAndNoneAsVoid() {
        let log = EventLog()
        let numbers = EventEmitter<Int>()
        // An empty parameter pack needs `< >`: the formatter would make it the operator `<>`.
        // swift-format-ignore
        let ticks = EventEmitter< >()
        let a = log.start(numbers.signal() |> filter { $0 % 2 == 0 } |> map { $0 * 10 })
        let b = ticks.signal().start(next: { log.append("tick") })
        for number in 1...4 { numbers.fire(number) }
        ticks.fire()
        #expect(log.events == ["next 20", "next 40", "tick"])
        a.dispose()
        b.dispose()
    }

    @Test func theSignalDoesNotKeepTheEmitterAliveAndItsSubscriptionsEndWithIt() {
        let log = EventLog()
        let weakEmitter = WeakBox<EventEmitter<Int>>(nil)
        let weakProbe = WeakBox<Probe>(nil)
        let signal: Signal<Int, NoError>
        let handle: any Disposable
        do {
            let emitter = EventEmitter<Int>()
            weakEmitter.value = emitter
            signal = emitter.signal()
            let probe = Probe()
            weakProbe.value = probe
            handle = signal.start(next: { _ in probe.touch() }, completed: { log.append("completed") })
            emitter.fire(1)
        }
        #expect(weakEmitter.value == nil)
        #expect(weakProbe.value == nil, "the subscription ended silently, its callbacks released")
        _ = log.start(signal)
        #expect(log.events == [], "never completes; starting after the emitter died does nothing")
        handle.dispose()
    }
}
