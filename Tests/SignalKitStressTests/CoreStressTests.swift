// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

// Stress tests: run under ThreadSanitizer and AddressSanitizer by
// scripts/test (scale 1), and in release with SIGNALKIT_STRESS_SCALE set so
// that each test performs at least a million operations. Every test ends
// with the live-object counters back where they started.

extension StressSuite {
    @Suite struct CoreStressTests {
        /// Threads subscribe and dispose while others send: no crash, no race,
        /// every subscription ends, nothing leaks.
        @Test(arguments: [2, 4, 8])
        func valuePipeSubscribeDisposeRacesPutNext(threads: Int) {
            let check = LeakCheck()
            do {
                let pipe = ValuePipe<Int>()
                let delivered = Atomic<Int>(0)
                let operations = 150_000 * stressScale / threads
                race(threads: threads) { index in
                    if index % 2 == 0 {
                        for value in 0..<operations { pipe.putNext(value) }
                    } else {
                        for _ in 0..<(operations / 4) {
                            let handle = pipe.signal().start(next: { _ in delivered.add(1, ordering: .relaxed) })
                            handle.dispose()
                        }
                    }
                }
            }
            #expect(check.leaks() == nil)
        }

        @Test func valuePromiseSetRacesSubscribeAndDispose() {
            let check = LeakCheck()
            do {
                let promise = ValuePromise(0)
                let operations = 100_000 * stressScale
                let lastSeen = SignalKit.Atomic<[Int: Int]>(value: [:])
                race(threads: 4) { index in
                    if index == 0 {
                        for value in 1...operations { promise.set(value) }
                    } else {
                        for _ in 0..<(operations / 8) {
                            let handle = promise.get().start(next: { value in
                                lastSeen.modify {
                                    var seen = $0; seen[index] = value; return seen
                                }
                            })
                            handle.dispose()
                        }
                    }
                }
                let final = promise.get().startStandalone(next: { value in
                    lastSeen.modify {
                        var seen = $0; seen[-1] = value; return seen
                    }
                })
                final.dispose()
                #expect(lastSeen.with { $0[-1] } == operations)
            }
            #expect(check.leaks() == nil)
        }

        @Test func promiseSetRacesSubscribersAndSourceReplacement() {
            let check = LeakCheck()
            do {
                let promise = Promise<Int>()
                let pipe = ValuePipe<Int>()
                let operations = 60_000 * stressScale
                race(threads: 4) { index in
                    switch index {
                    case 0:
                        for value in 0..<operations { pipe.putNext(value) }
                    case 1:
                        for _ in 0..<(operations / 50) { promise.set(pipe.signal()) }
                    default:
                        for _ in 0..<(operations / 8) {
                            let handle = promise.get().start(next: { _ in })
                            handle.dispose()
                        }
                    }
                }
            }
            #expect(check.leaks() == nil)
        }

        /// A delivery racing a foreign-thread dispose: the callbacks are released
        /// exactly once and never while a delivery runs them (AddressSanitizer
        /// would report a use-after-free on the captured object).
        @Test func putNextRacesHandleDispose() {
            let check = LeakCheck()
            let delivered = Atomic<Int>(0)
            raceRounds(
                threads: 2,
                rounds: 20_000 * stressScale,
                setup: { _ -> UncheckedBox<(Subscriber<Int, NoError>, any Disposable)> in
                    let source = _LockedState<Subscriber<Int, NoError>?>(nil)
                    let payload = TrackedObject("callback capture")
                    let handle = Signal<Int, NoError> { subscriber in
                        source.withLock { $0 = subscriber }
                        return EmptyDisposable
                    }.start(next: { value in
                        _ = payload.name
                        delivered.add(value, ordering: .relaxed)
                    })
                    return UncheckedBox((source.withLock { $0 }!, handle))
                },
                body: { index, state in
                    if index == 0 {
                        for value in 0..<8 { state.value.0.putNext(value) }
                    } else {
                        state.value.1.dispose()
                    }
                }
            )
            #expect(check.leaks() == nil)
        }

        @Test func metaDisposableSetRacesDisposeEveryDisposableOnce() {
            raceRounds(
                threads: 3,
                rounds: 5_000 * stressScale,
                setup: { _ in UncheckedBox((MetaDisposable(), (0..<32).map { _ in Counter() })) },
                body: { index, state in
                    let (meta, counters) = state.value
                    if index == 2 {
                        meta.dispose()
                    } else {
                        for offset in stride(from: index, to: 32, by: 2) { meta.set(counters[offset]) }
                    }
                },
                check: { state in
                    #expect(state.value.1.allSatisfy { $0.count.load(ordering: .relaxed) == 1 })
                }
            )
        }

        @Test func concurrentTerminalCallsOnOneSubscriber() {
            let check = LeakCheck()
            let rounds = 20_000 * stressScale
            let terminals = Atomic<Int>(0)
            let disposals = Atomic<Int>(0)
            raceRounds(
                threads: 3,
                rounds: rounds,
                setup: { _ -> UncheckedBox<Subscriber<Int, String>> in
                    let source = _LockedState<Subscriber<Int, String>?>(nil)
                    _ = Signal<Int, String> { subscriber in
                        source.withLock { $0 = subscriber }
                        return ActionDisposable { disposals.add(1, ordering: .relaxed) }
                    }.start(
                        error: { _ in terminals.add(1, ordering: .relaxed) },
                        completed: { terminals.add(1, ordering: .relaxed) }
                    )
                    return UncheckedBox(source.withLock { $0 }!)
                },
                body: { index, subscriber in
                    switch index {
                    case 0: subscriber.value.putCompletion()
                    case 1: subscriber.value.putError("e")
                    default: subscriber.value.putNext(1)
                    }
                }
            )
            #expect(terminals.load(ordering: .relaxed) == rounds)
            #expect(disposals.load(ordering: .relaxed) == rounds)
            #expect(check.leaks() == nil)
        }

        @Test func concurrentHandleDisposesDisposeTheInnerOnce() {
            let rounds = 20_000 * stressScale
            let disposals = Atomic<Int>(0)
            raceRounds(
                threads: 4,
                rounds: rounds,
                setup: { _ in
                    UncheckedBox(
                        Signal<Int, NoError> { _ in ActionDisposableLogging { disposals.add(1, ordering: .relaxed) } }
                            .start())
                },
                body: { _, handle in handle.value.dispose() }
            )
            #expect(disposals.load(ordering: .relaxed) == rounds)
        }
    }
}

final class Counter: Disposable {
    let count = Atomic<Int>(0)
    func dispose() { count.add(1, ordering: .relaxed) }
}

struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
