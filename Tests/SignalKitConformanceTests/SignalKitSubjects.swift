// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitConformance

// Every public operator family, boundary (both forms), executor and source
// of SignalKit as a conformance subject. Names are what reports, the
// exception list and the table in CheckingAnOperatorOrABridge.md use.

/// The real executors the boundaries hop to (shared: made once per process).
enum Executors {
    static let dispatch = Queue(name: "conformance.dispatch")
    static let dedicated = Queue(dedicatedThread: "conformance.dedicated", waitStrategy: .park)
    static let pool = ThreadPool(threadCount: 2, threadPriority: 0.5)
}

/// The error a `.failing` buffer ends a subscription with.
let overflow = ConformanceError(id: -1)

enum SignalKitSubjects {
    /// Operators over one input, with a model of their values.
    static let modelled: [ConformanceSubject] = [
        .operator("map") { $0.first |> map { $0 &* 3 } }
            .model { $0.map { $0 &* 3 } },
        .operator("filter") { $0.first |> filter { $0 % 2 == 0 } }
            .model { $0.filter { $0 % 2 == 0 } },
        .operator("take(2)") { $0.first |> take(2) }
            .model { Array($0.prefix(2)) },
        .operator("take(0)") { $0.first |> take(0) }
            .model { _ in [Int]() },
        .operator("skip(1)") { $0.first |> skip(1) }
            .model { Array($0.dropFirst()) },
        .operator("distinctUntilChanged") { $0.first |> map { $0 % 3 } |> distinctUntilChanged }
            .model { values in
                values.map { $0 % 3 }.reduce(into: [Int]()) { result, value in
                    if result.last != value { result.append(value) }
                }
            },
        .operator("scan") { $0.first |> scan(0) { $0 &+ $1 } }
            .model { values in
                values.reduce(into: [Int]()) { sums, value in sums.append((sums.last ?? 0) &+ value) }
            },
        .operator("reduceLeft") { $0.first |> reduceLeft(value: 0) { $0 &+ $1 } }
            .model { [$0.reduce(0, &+)] },
        .operator("restartIfError", forwards: .completion) { restartIfError($0.first) }
            .model { $0 },
    ]

    /// Operators checked against the contract only.
    static let operators: [ConformanceSubject] = [
        .operator("combineLatest", inputs: 2) { combineLatest($0[0], $0[1]) |> map { $0 &* 1_000 &+ $1 } },
        .operator("zip", inputs: 2) { zip($0[0], $0[1]) |> map { $0 &* 1_000 &+ $1 } },
        .operator("merge", inputs: 2) { $0[0] |> merge($0[1]) },
        .operator("flatten", inputs: 2) { inputs in
            let inner = inputs[1]
            return flatten(inputs[0] |> map { _ in inner })
        },
        .operator("mapToSignal", inputs: 2) { inputs in
            let inner = inputs[1]
            return inputs[0] |> mapToSignal { _ in inner }
        },
        .operator("switchToLatest", inputs: 2) { inputs in
            let inner = inputs[1]
            return switchToLatest(inputs[0] |> map { _ in inner })
        },
        .operator("then", inputs: 2) { $0[0] |> then($0[1]) },
        .operator("concat", inputs: 2) { concat([$0[0], $0[1]]) },
        .operator("queue", inputs: 2) { inputs in
            let inner = inputs[1]
            return queue(inputs[0] |> map { _ in inner })
        },
        .operator("mapToQueue", inputs: 2) { inputs in
            let inner = inputs[1]
            return inputs[0] |> mapToQueue { _ in inner }
        },
        .operator("queue(buffer:)", inputs: 2) { inputs in
            let inner = inputs[1]
            return inputs[0] |> map { _ in inner } |> queue(buffer: .droppingOldest(beyond: 2))
        },
        .operator("takeUntil", inputs: 2) { $0[0] |> takeUntil($0[1]) },
        .operator("catch", inputs: 2, forwards: .completion) { inputs in
            let replacement = inputs[1]
            return inputs[0] |> `catch` { _ in replacement }
        },
        .operator("retry", forwards: .completion) { $0.first |> retry() },
        .operator("restart", forwards: .error) { restart($0.first) },
        .operator("publish |> autoconnect") { publish($0.first).autoconnect() },
        .operator("multicast(ReplaySubject) |> autoconnect") {
            ($0.first |> multicast(ReplaySubject(capacity: 1))).autoconnect()
        },
        .operator("replayLazily") { replayLazily($0.first) },
    ]

    /// Operators given the run's virtual-time queue.
    static let timing: [ConformanceSubject] = [
        .operator("throttle", on: .virtualTime) { $0.first |> throttle(1, queue: $0.queue) },
        .operator("debounce", on: .virtualTime) { $0.first |> debounce(1, queue: $0.queue) },
        .operator("delay", on: .virtualTime) { $0.first |> delay(0.5, queue: $0.queue) },
        .operator("timeout", inputs: 2, on: .virtualTime) { $0[0] |> timeout(5, queue: $0.queue, alternate: $0[1]) },
        .operator("runOn(virtual time)", on: .virtualTime) { $0.first |> runOn($0.queue) },
        .operator("runOn(Queue)", on: .queue(Executors.dispatch)) { $0.first |> runOn(Executors.dispatch) },
    ]

    /// Boundaries: every hop in its unbounded and bounded forms.
    static let boundaries: [ConformanceSubject] = [
        .boundary("deliverOn(virtual time)", on: .virtualTime) { $0.first |> deliverOn($0.queue) },
        .boundary("deliverOn(virtual time, buffer: latest)", on: .virtualTime, buffer: .latest) {
            $0.first |> deliverOn($0.queue, buffer: $1)
        },
        .boundary("deliverOn(Queue)", on: .queue(Executors.dispatch)) { $0.first |> deliverOn(Executors.dispatch) },
        .boundary(
            "deliverOn(Queue, buffer: droppingOldest)", on: .queue(Executors.dispatch),
            buffer: .droppingOldest(beyond: 4)
        ) { $0.first |> deliverOn(Executors.dispatch, buffer: $1) },
        .boundary(
            "deliverOn(Queue, buffer: droppingNewest)", on: .queue(Executors.dispatch),
            buffer: .droppingNewest(beyond: 4)
        ) { $0.first |> deliverOn(Executors.dispatch, buffer: $1) },
        .boundary("deliverOn(Queue, buffer: latest)", on: .queue(Executors.dispatch), buffer: .latest) {
            $0.first |> deliverOn(Executors.dispatch, buffer: $1)
        },
        .boundary(
            "deliverOn(Queue, buffer: failing)", on: .queue(Executors.dispatch),
            buffer: .failing(beyond: 4, with: overflow)
        ) { $0.first |> deliverOn(Executors.dispatch, buffer: $1) },
        .boundary(
            "deliverOn(Queue, buffer: blocking)", on: .queue(Executors.dispatch), buffer: .blocking(beyond: 4)
        ) { $0.first |> deliverOn(Executors.dispatch, buffer: $1) },
        .boundary("deliverOn(dedicated thread)", on: .queue(Executors.dedicated, named: "dedicated thread")) {
            $0.first |> deliverOn(Executors.dedicated)
        },
        .boundary(
            "deliverOn(dedicated thread, buffer: droppingOldest)",
            on: .queue(Executors.dedicated, named: "dedicated thread"), buffer: .droppingOldest(beyond: 4)
        ) { $0.first |> deliverOn(Executors.dedicated, buffer: $1) },
        .boundary("deliverOn(ThreadPool)", on: .threadPool(Executors.pool)) { $0.first |> deliverOn(Executors.pool) },
        .boundary(
            "deliverOn(ThreadPool, buffer: droppingOldest)", on: .threadPool(Executors.pool),
            buffer: .droppingOldest(beyond: 4)
        ) { $0.first |> deliverOn(Executors.pool, buffer: $1) },
        .boundary("delayEvents", on: .virtualTime) { $0.first |> delayEvents(0.5, queue: $0.queue) },
        .boundary("delayEvents(buffer: droppingOldest)", on: .virtualTime, buffer: .droppingOldest(beyond: 4)) {
            $0.first |> delayEvents(0.5, queue: $0.queue, buffer: $1)
        },
    ]

    /// Hot sources, driven through their own API.
    static let sources: [ConformanceSubject] = [
        .source("ValuePipe") { _ in
            let pipe = ValuePipe<Int>()
            return ConformanceSource(signal: pipe.signal(), send: { pipe.putNext($0) })
        },
        .source("Promise", replaysCurrentValue: true) { _ in
            let promise = Promise<Int>()
            return ConformanceSource(signal: promise.get(), send: { promise.set(.single($0)) })
        },
        .source("ValuePromise", replaysCurrentValue: true) { _ in
            let promise = ValuePromise<Int>(ignoreRepeated: false)
            return ConformanceSource(signal: promise.get(), send: { promise.set($0) })
        },
        .source("EventEmitter.signal()") { _ in
            let emitter = EventEmitter<Int>()
            return ConformanceSource(signal: emitter.signal(), send: { emitter.fire($0) })
        },
        .source("Subject") { _ in
            let subject = Subject<Int, ConformanceError>()
            return ConformanceSource(
                signal: subject.signal(), send: { subject.putNext($0) }, complete: { subject.putCompletion() },
                fail: { subject.putError(ConformanceError(id: 0)) })
        },
        .source("ReplaySubject(capacity: 1)", replaysCurrentValue: true) { _ in
            let subject = ReplaySubject<Int, ConformanceError>(capacity: 1)
            return ConformanceSource(
                signal: subject.signal(), send: { subject.putNext($0) }, complete: { subject.putCompletion() },
                fail: { subject.putError(ConformanceError(id: 0)) })
        },
    ]

    static let all: [ConformanceSubject] = modelled + operators + timing + boundaries + sources

    /// The subject named `name`.
    static func named(_ name: String) -> ConformanceSubject {
        all.first { $0.name == name }!
    }
}
