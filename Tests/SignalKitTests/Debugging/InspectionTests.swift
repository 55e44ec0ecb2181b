// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Foundation
import SignalKit
import SignalKitTesting
import Testing

// Debugging: the inspection registry (Sources/SignalKit/Debugging/SignalInspection.swift).
//
// Inspection is switched on with `SignalKitDebug.withInspection`, for the
// calling thread only, so tests running in parallel are not affected. The
// registry is process-wide: each test reads only the stages of its own
// names (prefix "inspect.<test>.").

/// The stages of the snapshot whose names start with `prefix`, by name.
private func stages(_ prefix: String) -> [String: SignalGraphSnapshot.Stage] {
    var result: [String: SignalGraphSnapshot.Stage] = [:]
    for stage in SignalKitDebug.inspectionSnapshot().stages where stage.name.hasPrefix(prefix) {
        result[stage.name] = stage
    }
    return result
}

/// The edges between stages whose names start with `prefix`, as `from → to` names.
private func edges(_ prefix: String) -> [String] {
    let snapshot = SignalKitDebug.inspectionSnapshot()
    let names = Dictionary(uniqueKeysWithValues: snapshot.stages.map { ($0.id, $0.name) })
    return snapshot.edges.compactMap { edge in
        guard let from = names[edge.from], let to = names[edge.to], from.hasPrefix(prefix), to.hasPrefix(prefix) else {
            return nil
        }
        return "\(from) → \(to)"
    }.sorted()
}

/// The counters of a stage, without its identity and clock.
private func counts(_ stage: SignalGraphSnapshot.Stage?) -> [String: Int] {
    guard let stage else { return [:] }
    return [
        "signals": stage.signals, "live": stage.liveSubscriptions, "subscriptions": Int(stage.subscriptions),
        "values": Int(stage.values), "errors": Int(stage.errors), "completions": Int(stage.completions),
        "disposals": Int(stage.disposals),
    ]
}

@Suite struct InspectionTests {
    /// A three-stage graph with a hop: exact numbers and edges while it
    /// runs, after its subscription is disposed, and gone once dropped (a
    /// stage is listed while one of its signals or subscriptions lives).
    @Test func threeStagesWithAHop() {
        let prefix = "inspect.three."
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let received = EventLog()
        do {
            let pipe = ValuePipe<Int>()
            let evens: Signal<Int, NoError> = SignalKitDebug.withInspection {
                let source = pipe.signal() |> named(prefix + "source")
                let doubled = source |> map { $0 * 2 } |> deliverOn(queue) |> named(prefix + "doubled")
                return doubled |> filter { $0 % 4 == 0 } |> named(prefix + "evens")
            }
            #expect(evens.description == prefix + "evens")
            let handle = evens.start(next: { received.append("next \($0)") })
            pipe.putNext(1)
            pipe.putNext(2)
            pipe.putNext(3)
            // Before the hop runs: only the source has sent.
            #expect(counts(stages(prefix)[prefix + "source"])["values"] == 3)
            #expect(counts(stages(prefix)[prefix + "doubled"])["values"] == 0)
            scheduler.run()
            #expect(received.events == ["next 4"])

            let running = stages(prefix)
            #expect(running.count == 3)
            let one = ["signals": 1, "live": 1, "subscriptions": 1, "errors": 0, "completions": 0, "disposals": 0]
            #expect(counts(running[prefix + "source"]) == one.merging(["values": 3]) { $1 })
            #expect(counts(running[prefix + "doubled"]) == one.merging(["values": 3]) { $1 })
            #expect(counts(running[prefix + "evens"]) == one.merging(["values": 1]) { $1 })
            #expect(running[prefix + "evens"]?.lastEventAt != nil)
            #expect(running[prefix + "source"]?.location.hasPrefix("SignalKitTests/InspectionTests.swift:") == true)
            #expect(running[prefix + "source"]?.id == prefix + "source@" + (running[prefix + "source"]?.location ?? ""))
            #expect(
                edges(prefix) == [
                    "\(prefix)doubled → \(prefix)evens",
                    "\(prefix)source → \(prefix)doubled",
                ])

            handle.dispose()
            let disposed = stages(prefix)
            #expect(counts(disposed[prefix + "evens"]) == one.merging(["values": 1, "live": 0, "disposals": 1]) { $1 })
            #expect(counts(disposed[prefix + "source"]) == one.merging(["values": 3, "live": 0, "disposals": 1]) { $1 })
        }
        // The signals and the subscription are gone: so are their stages
        // and edges. (The live-object counters are checked by the stress
        // test, which runs alone: these tests run in parallel.)
        #expect(stages(prefix).isEmpty)
        #expect(edges(prefix).isEmpty)
    }

    /// Every signal named at one place is one stage: two clients' graphs
    /// add up, and the stage stays while either lives.
    @Test func signalsNamedAtOnePlaceShareAStage() {
        let prefix = "inspect.shared."
        let pipe = ValuePipe<Int>()
        func client() -> Signal<Int, NoError> {
            SignalKitDebug.withInspection { pipe.signal() |> named(prefix + "client") }
        }
        var first: Signal<Int, NoError>? = client()
        var second: Signal<Int, NoError>? = client()
        let a = first!.start()
        let b = second!.start()
        pipe.putNext(1)
        #expect(
            counts(stages(prefix)[prefix + "client"])
                == ["signals": 2, "live": 2, "subscriptions": 2, "values": 2, "errors": 0, "completions": 0, "disposals": 0])
        first = nil
        second = nil
        // The subscriptions keep the stage.
        #expect(stages(prefix)[prefix + "client"]?.signals == 2)
        a.dispose()
        #expect(stages(prefix)[prefix + "client"]?.liveSubscriptions == 1)
        b.dispose()
        #expect(stages(prefix).isEmpty)
    }

    /// Errors and completions are counted; a terminated subscription is
    /// disposed (not live).
    @Test func terminalEventsAndDisposal() {
        let prefix = "inspect.terminal."
        enum Failure: Error { case failed }
        let failing = SignalKitDebug.withInspection {
            Signal<Int, Failure>.fail(.failed) |> named(prefix + "failing")
        }
        let completing = SignalKitDebug.withInspection {
            Signal<Int, NoError>.single(7) |> named(prefix + "completing")
        }
        let log = EventLog()
        _ = failing.start(error: { _ in log.append("error") })
        _ = completing.start(next: { log.append("next \($0)") }, completed: { log.append("completed") })
        #expect(log.events == ["error", "next 7", "completed"])
        let terminated = stages(prefix)
        #expect(
            counts(terminated[prefix + "failing"])
                == ["signals": 1, "live": 0, "subscriptions": 1, "values": 0, "errors": 1, "completions": 0, "disposals": 1])
        #expect(
            counts(terminated[prefix + "completing"])
                == ["signals": 1, "live": 0, "subscriptions": 1, "values": 1, "errors": 0, "completions": 1, "disposals": 1])
        withExtendedLifetime((failing, completing)) {}
    }

    /// Edges through operators built before the subscription (how the
    /// signal was built) and through operands subscribed by combining
    /// operators; an inner signal a flattening operator subscribes when a
    /// value arrives feeds the stage downstream of the operator, not the
    /// stage that sent the value.
    @Test func edgesFromCompositionAndSubscription() {
        let prefix = "inspect.edges."
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let pipe = ValuePipe<Int>()
        let requests = ValuePipe<Int>()
        let (combined, flattened) = SignalKitDebug.withInspection {
            let left = pipe.signal() |> named(prefix + "left")
            let right = Signal<Int, NoError>.single(10) |> runOn(queue) |> named(prefix + "right")
            let combined = combineLatest(left, right) |> map { $0 + $1 } |> named(prefix + "combined")
            let inner = Signal<Int, NoError>.single(1) |> named(prefix + "inner")
            let flattened = requests.signal() |> named(prefix + "outer") |> mapToSignal { _ in inner }
            return (combined, flattened |> named(prefix + "flattened"))
        }
        let first = combined.start()
        let second = flattened.start()
        scheduler.run()
        #expect(!edges(prefix).contains("\(prefix)inner → \(prefix)flattened"))
        // The inner signal is subscribed when a request arrives, after the
        // subscription, on the thread sending it.
        requests.putNext(1)
        #expect(
            edges(prefix) == [
                "\(prefix)inner → \(prefix)flattened",
                "\(prefix)left → \(prefix)combined",
                "\(prefix)outer → \(prefix)flattened",
                "\(prefix)right → \(prefix)combined",
            ])
        first.dispose()
        second.dispose()
    }

    /// A bounded boundary buffering a stage's name shows on the stage.
    @Test func aBoundedHopsStatisticsShowOnItsStage() {
        let prefix = "inspect.buffer."
        let scheduler = VirtualTimeScheduler()
        let queue = scheduler.makeQueue()
        let pipe = ValuePipe<Int>()
        let hopped = SignalKitDebug.withInspection {
            pipe.signal() |> named(prefix + "ticks") |> deliverOn(queue, buffer: .droppingOldest(beyond: 2))
        }
        let handle = hopped.start()
        for value in 0..<5 { pipe.putNext(value) }
        let stage = stages(prefix)[prefix + "ticks"]
        #expect(stage?.values == 5)
        #expect(stage?.buffer?.name == prefix + "ticks")
        #expect(stage?.buffer?.depth == 2)
        #expect(stage?.buffer?.drops == 3)
        #expect(SignalKitDebug.inspectionSnapshot().buffers.contains { $0.name == prefix + "ticks" })
        scheduler.run()
        handle.dispose()
    }

    /// With inspection off, `named` adds no stage and the registry sees nothing.
    @Test func namedWithInspectionOffAddsNoStage() {
        let prefix = "inspect.off."
        let signal = Signal<Int, NoError>.single(1) |> named(prefix + "plain")
        let handle = signal.start()
        #expect(stages(prefix).isEmpty)
        #expect(signal.description == prefix + "plain")
        handle.dispose()
    }

    /// The snapshot's JSON form round-trips.
    @Test func snapshotIsCodable() throws {
        let snapshot = SignalGraphSnapshot(
            takenAt: 12.5,
            stages: [
                .init(
                    id: "a@M/F.swift:1", name: "a", location: "M/F.swift:1", signals: 1, liveSubscriptions: 2,
                    subscriptions: 3, values: 4, errors: 5, completions: 6, disposals: 7, lastEventAt: nil,
                    buffer: SignalBufferStatistics(
                        name: "a", policy: "latest", drops: 1, overflows: 0, blockedSends: 0, depth: 1, maximumDepth: 1,
                        liveSubscriptions: 1))
            ],
            edges: [.init(from: "b@M/F.swift:2", to: "a@M/F.swift:1")],
            buffers: [])
        let json = try JSONEncoder().encode(snapshot)
        #expect(try JSONDecoder().decode(SignalGraphSnapshot.self, from: json) == snapshot)
        let text = String(decoding: json, as: UTF8.self)
        for key in ["takenAt", "stages", "edges", "buffers", "liveSubscriptions", "maximumDepth", "from"] {
            #expect(text.contains("\"\(key)\""), "\(key)")
        }
    }
}
