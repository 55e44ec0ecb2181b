// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import CAllocationCounter
import SignalKit
import Testing

// Allocation regression tests: the number of heap allocations of the hot
// paths that signalkit-bench measures (Benchmarks/README.md), counted on the
// calling thread by the malloc interposer in Tests/CAllocationCounter.
//
// Counts are exact: a change that adds an allocation to a hot path fails
// here, and so does one that removes one (then update the expectation and
// the benchmark README together). Each body runs once before it is counted,
// so that one-time work (metadata instantiation, lazy globals) is not counted.
// The release counts are the ones the benchmark reports; unoptimised builds
// allocate a few closure contexts and boxes more, and have their own counts.
//
// The tests run one at a time: the Swift runtime's caches (metadata,
// conformances) are shared by every thread, and a test running beside another
// occasionally paid for one of the other's cache updates (debug builds, one
// allocation in about ten runs). That was not enough (the test framework's
// own threads run beside every test): each count is the fewest of three runs.
//
// Skipped under ASan and TSan, whose runtimes own malloc.

/// Allocations made by `body` on the calling thread, after one uncounted
/// warm-up run: the fewest of three counted runs. A hot path's count is the
/// same in every run; what the runtime occasionally allocates on the side (a
/// metadata or conformance cache another thread is updating at that moment:
/// then's row counted 7 instead of 8 in one release run, serialized and all)
/// is not in every run, so the minimum is the path's own count.
func allocations(_ body: () -> Void) -> Int {
    body()
    var fewest = Int.max
    for _ in 0..<3 {
        let before = cac_thread_allocation_count()
        body()
        fewest = min(fewest, cac_thread_allocation_count() - before)
    }
    return fewest
}

/// Allocations per operation: `body(n)` performs `n` operations; the count
/// of `body(0)` (set-up and tear-down) is subtracted.
func allocationsPerOperation(_ operations: Int = 1000, _ body: (Int) -> Void) -> Double {
    let fixed = allocations { body(0) }
    let total = allocations { body(operations) }
    return Double(total - fixed) / Double(operations)
}

final class Box: @unchecked Sendable {
    var value = 0
}

/// Returns a new object; never inlined, so the allocation cannot be
/// promoted to the stack.
@inline(never)
func makeObject() -> AnyObject {
    Box()
}

#if DEBUG
let isOptimized = false
#else
let isOptimized = true
#endif

@Suite(.serialized, .enabled(if: cac_is_available(), "the allocation counter is compiled out under sanitizers"))
struct AllocationTests {
    @Test func counterCountsThisThreadsAllocations() {
        // The counter itself must work, or every other test passes vacuously.
        let count = allocations {
            let object = makeObject()
            withExtendedLifetime(object) {}
        }
        #expect(count == 1)
    }

    @Test func w1SubscribeDisposeCycle() {
        let box = Box()
        let sink: @Sendable (Int) -> Void = { box.value &+= $0 }
        let perCycle = allocationsPerOperation { cycles in
            for i in 0..<cycles {
                let handle = Signal<Int, NoError> { subscriber in
                    subscriber.putNext(i)
                    subscriber.putCompletion()
                    return EmptyDisposable
                }.start(next: sink)
                handle.dispose()
            }
        }
        // The generator's closure context (it captures `i`) and the
        // subscription, which holds the callbacks in its tail. (Unoptimised
        // builds add four: unspecialised generic code allocates.)
        #expect(perCycle == (isOptimized ? 2 : 6))
    }

    @Test func w2MapFilterMapPerSourceEvent() {
        let box = Box()
        let perEvent = allocationsPerOperation { events in
            let source = Signal<Int, NoError> { subscriber in
                for value in 0..<events { subscriber.putNext(value) }
                subscriber.putCompletion()
                return EmptyDisposable
            }
            let chain = source |> map { $0 &* 2 } |> filter { $0 % 4 == 0 } |> map { $0 &+ 1 }
            chain.start(next: { box.value &+= $0 }).dispose()
        }
        #expect(perEvent == 0)
    }

    @Test func fusedStagesCostOneClosureEachPerSubscription() {
        // `map` and `filter` fuse: each stage after the first adds its stage
        // function's context to a subscription, not a subscription of its own
        // (a Subscriber and its state, which holds the sink: two allocations).
        let box = Box()
        let source = Signal<Int, NoError> { subscriber in
            subscriber.putNext(1)
            return EmptyDisposable
        }
        let one = source |> map { $0 &+ 1 }
        let three = source |> map { $0 &+ 1 } |> filter { $0 > 0 } |> map { $0 &* 2 }
        let oneStage = allocations { one.start(next: { box.value &+= $0 }).dispose() }
        let threeStages = allocations { three.start(next: { box.value &+= $0 }).dispose() }
        #expect(threeStages - oneStage == 2)
    }

    @Test func w3FanOutPerSend() {
        let box = Box()
        let pipe = ValuePipe<Int>()
        let handles = (0..<8).map { _ in pipe.signal().start(next: { box.value &+= $0 }) }
        let perSend = allocationsPerOperation { sends in
            for i in 0..<sends { pipe.putNext(i) }
        }
        handles.forEach { $0.dispose() }
        #expect(perSend == 0)
    }

    @Test func w4ChurnCycleWithStandingSubscribers() {
        let box = Box()
        let pipe = ValuePipe<Int>()
        let handles = (0..<100).map { _ in pipe.signal().start(next: { box.value &+= $0 }) }
        let perCycle = allocationsPerOperation { cycles in
            for _ in 0..<cycles {
                pipe.signal().start(next: { box.value &+= $0 }).dispose()
            }
        }
        handles.forEach { $0.dispose() }
        // The closure context and the subscription (the callbacks live in
        // its tail), plus the bag's array rebuild once every
        // (capacity − live) ≈ 101 insertions: a published array is never
        // resized in place (readers may be iterating it), so growth and
        // compaction allocate a new one.
        let expected = isOptimized ? 2.0 : 3.0
        #expect(perCycle >= expected && perCycle <= expected + 1.0 / 90)
    }

    @Test func w5CombineLatestPerSend() {
        let box = Box()
        let a = ValuePipe<Int>()
        let b = ValuePipe<Int>()
        let handle = combineLatest(a.signal(), b.signal()).start(next: { box.value &+= $0.0 &+ $0.1 })
        let perSend = allocationsPerOperation { sends in
            for i in 0..<sends {
                if i & 1 == 0 { a.putNext(i) } else { b.putNext(i) }
            }
        }
        handle.dispose()
        #expect(perSend == 0)
    }

    @Test func w6SwitchToLatestPerOuterValue() {
        let box = Box()
        let pipe = ValuePipe<Int>()
        let handle =
            (pipe.signal()
            |> mapToSignal { value in
                Signal<Int, NoError> { subscriber in
                    subscriber.putNext(value)
                    subscriber.putCompletion()
                    return EmptyDisposable
                }
            }).start(next: { box.value &+= $0 })
        let perSend = allocationsPerOperation { sends in
            for i in 0..<sends { pipe.putNext(i) }
        }
        handle.dispose()
        // The workload's inner signal (object and generator context), then
        // the inner subscription: its Subscriber and its state, which holds
        // the switch engine's inner sink in its tail.
        #expect(perSend == 4)
    }

    @Test(arguments: operatorRows)
    func allocationsOneOperatorAddsPerSubscription(_ row: OperatorRow) {
        let box = Box()
        let next: @Sendable (Int) -> Void = { box.value &+= $0 }
        let source = Signal<Int, NoError> { subscriber in
            subscriber.putNext(1)
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let applied = row.apply(source)
        // Once each first, unmeasured: what a first use allocates once (a
        // generic type's metadata, instantiated by whichever test case,
        // running in parallel, gets there first) is not per subscription,
        // and counted here it made a row one higher or lower from run to run.
        source.start(next: next).dispose()
        applied.start(next: next).dispose()
        let alone = allocations { source.start(next: next).dispose() }
        let through = allocations { applied.start(next: next).dispose() }
        #expect(through - alone == (isOptimized ? row.release : row.debug), "\(row.name)")
    }

    @Test func w7SerialDisposableSet() {
        let box = Box()
        let meta = MetaDisposable()
        let perSet = allocationsPerOperation { sets in
            for _ in 0..<sets {
                meta.set(ActionDisposable { box.value &+= 1 })
            }
        }
        meta.dispose()
        // The ActionDisposable (its closure captures one object: no context).
        #expect(perSet == (isOptimized ? 1 : 3))
    }
}

/// One operator per family that allocates per subscription: what one
/// subscription through it adds to a subscription of its source. Each
/// operator sink lives in its subscription's tail, so an operator costs its
/// upstream subscription (a `Subscriber` and its state) plus what its own
/// state needs.
struct OperatorRow: Sendable, CustomStringConvertible {
    let name: String
    let release: Int
    let debug: Int
    let apply: @Sendable (Signal<Int, NoError>) -> Signal<Int, NoError>
    var description: String { name }
}

let operatorRows: [OperatorRow] = [
    OperatorRow(name: "Transforming: map", release: 2, debug: 3) { $0 |> map { $0 &+ 1 } },
    OperatorRow(name: "Filtering: skip", release: 2, debug: 2) { $0 |> skip(1) },
    OperatorRow(name: "Filtering: distinctUntilChanged", release: 6, debug: 6) { $0 |> distinctUntilChanged },
    OperatorRow(name: "Taking: take", release: 2, debug: 2) { $0 |> take(1) },
    OperatorRow(name: "Aggregating: reduceLeft", release: 5, debug: 5) { $0 |> reduceLeft(value: 0) { $0 &+ $1 } },
    OperatorRow(name: "Errors: retry", release: 7, debug: 7) { $0 |> retry(1) },
    OperatorRow(name: "SideEffects: beforeNext", release: 2, debug: 2) { $0 |> beforeNext { _ in } },
    OperatorRow(name: "Combining: combineLatest", release: 14, debug: 19) { signal in
        combineLatest(signal, signal) |> map { $0 &+ $1 }
    },
    OperatorRow(name: "Switching: mapToSignal", release: 7, debug: 8) { signal in
        signal |> mapToSignal { Signal<Int, NoError>.single($0) }
    },
    OperatorRow(name: "Flattening: then", release: 8, debug: 8) { $0 |> then(.single(2)) },
]
