// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitConformance
import SignalKitTesting

// Subjects that each break exactly one rule, written the way a plausible
// bug would be: the kit must catch each by that rule and no other
// (BrokenSubjectTests.swift).

/// A broken subject and the one rule it breaks.
struct BrokenSubject: Sendable, CustomStringConvertible {
    let rule: String
    let subject: ConformanceSubject

    var description: String { "\(rule): \(subject.name)" }
}

/// What the leaking operator keeps for ever.
private let leakedPipe = ValuePipe<Int>()

enum BrokenSubjects {
    static let all: [BrokenSubject] = [
        // 1.1: a value after the completion, from a bridge that calls its
        // callbacks itself (it minds its disposal, not its own terminal).
        BrokenSubject(
            rule: "1.1",
            subject: .bridge("sends after the completion", on: .none) {
                (inputs, _, sink: ConformanceSink<Int, ConformanceError>) in
                let disposed = Shared(false)
                let upstream = inputs.first.start(
                    next: { sink.putNext($0) }, error: { sink.putError($0) },
                    completed: {
                        sink.putCompletion()
                        if !disposed.value { sink.putNext(-1) }
                    })
                return ActionDisposable {
                    disposed.value = true
                    upstream.dispose()
                }
            }),
        // 1.2: swallows the completion.
        BrokenSubject(
            rule: "1.2",
            subject: .operator("drops the completion") { inputs in
                Signal { subscriber in
                    inputs.first.start(next: { subscriber.putNext($0) }, error: { subscriber.putError($0) })
                }
            }),
        // 1.3: not what its model says.
        BrokenSubject(
            rule: "1.3",
            subject: .operator("adds two, modelled as adding one") { inputs in inputs.first |> map { $0 + 2 } }
                .model { received in received.map { $0 + 1 } }),
        // 2.1: what waits for the queue is delivered even after the disposal.
        BrokenSubject(
            rule: "2.1",
            subject: .bridge("delivers after dispose", on: .virtualTime) {
                (inputs, _, sink: ConformanceSink<Int, ConformanceError>) in
                let queue = inputs.queue
                return inputs.first.start(
                    next: { value in queue.justDispatch { sink.putNext(value) } },
                    error: { error in queue.justDispatch { sink.putError(error) } },
                    completed: { queue.justDispatch { sink.putCompletion() } })
            }),
        // 2.2: never disposes its upstream subscription.
        BrokenSubject(
            rule: "2.2",
            subject: .operator("never disposes its upstream") { inputs in
                Signal { subscriber in
                    _ = inputs.first.start(
                        next: { subscriber.putNext($0) }, error: { subscriber.putError($0) },
                        completed: { subscriber.putCompletion() })
                    return EmptyDisposable
                }
            }),
        // 3.1: a merge that forwards each input on its own thread.
        BrokenSubject(
            rule: "3.1",
            subject: .operator("merges without serialising", inputs: 2) { inputs in
                Signal<Int, ConformanceError> { subscriber in
                    let remaining = Shared(2)
                    let completed: @Sendable () -> Void = {
                        if remaining.withLock({ count -> Bool in
                            count -= 1
                            return count == 0
                        }) {
                            subscriber.putCompletion()
                        }
                    }
                    let set = DisposableSet()
                    for input in inputs.signals {
                        set.add(
                            input.start(
                                next: { subscriber.putNext($0) }, error: { subscriber.putError($0) },
                                completed: completed))
                    }
                    return set
                }
            }),
        // 3.2: values sent from inside a delivery are delivered last in,
        // first out.
        BrokenSubject(
            rule: "3.2",
            subject: .operator("delivers re-entrant sends in reverse") { inputs in
                Signal { subscriber in
                    let state = Shared((delivering: false, waiting: [Int]()))
                    return inputs.first.start(
                        next: { value in
                            let deliverNow = state.withLock { state -> Bool in
                                if state.delivering {
                                    state.waiting.append(value)
                                    return false
                                }
                                state.delivering = true
                                return true
                            }
                            guard deliverNow else { return }
                            subscriber.putNext(value)
                            while let next = state.withLock({ state -> Int? in
                                if let next = state.waiting.popLast() { return next }
                                state.delivering = false
                                return nil
                            }) {
                                subscriber.putNext(next)
                            }
                        },
                        error: { subscriber.putError($0) }, completed: { subscriber.putCompletion() })
                }
            }),
        // 3.3: a share that connects only once a second subscriber comes.
        BrokenSubject(
            rule: "3.3",
            subject: .operator("connects at the second subscriber") { inputs in
                let subscribers = Shared(0)
                return Signal { subscriber in
                    guard
                        subscribers.withLock({ count -> Bool in
                            count += 1
                            return count >= 2
                        })
                    else { return EmptyDisposable }
                    return inputs.first.start(
                        next: { subscriber.putNext($0) }, error: { subscriber.putError($0) },
                        completed: { subscriber.putCompletion() })
                }
            }),
        // 3.4: hops to a queue of its own, though it is given none.
        BrokenSubject(
            rule: "3.4",
            subject: .operator("hops to a hidden queue") { inputs in
                inputs.first |> deliverOn(Queue(name: "broken.hidden"))
            }),
        // 4.1: drops every third value it delivers, uncounted.
        BrokenSubject(
            rule: "4.1",
            subject: .boundary("drops values uncounted", on: .virtualTime, buffer: .droppingOldest(beyond: 4)) {
                inputs, buffer in
                Signal { subscriber in
                    let count = Shared(0)
                    let hop = inputs.first |> deliverOn(inputs.queue, buffer: buffer)
                    return hop.start(
                        next: { value in
                            if count.withLock({ count -> Bool in
                                count += 1
                                return count % 3 != 0
                            }) {
                                subscriber.putNext(value)
                            }
                        },
                        error: { subscriber.putError($0) }, completed: { subscriber.putCompletion() })
                }
            }),
        // 5.1: one drain for a burst, run in its first sender's context.
        BrokenSubject(
            rule: "5.1",
            subject: .boundary("delivers a burst in its first sender's context", on: .virtualTime) { inputs in
                let queue = inputs.queue
                return Signal<Int, ConformanceError> { subscriber in
                    let waiting = Shared([SignalEvent<Int, ConformanceError>]())
                    @Sendable func drain() {
                        for event in waiting.withLock({ events in
                            defer { events.removeAll() }
                            return events
                        }) {
                            switch event {
                            case .Next(let value): subscriber.putNext(value)
                            case .Error(let error): subscriber.putError(error)
                            case .Completion: subscriber.putCompletion()
                            }
                        }
                    }
                    @Sendable func enqueue(_ event: SignalEvent<Int, ConformanceError>) {
                        if waiting.withLock({ events -> Bool in
                            events.append(event)
                            return events.count == 1
                        }) {
                            queue.justDispatch(drain)
                        }
                    }
                    return inputs.first.start(
                        next: { enqueue(.Next($0)) }, error: { enqueue(.Error($0)) }, completed: { enqueue(.Completion) })
                }
            }),
        // 5.2: subscribes through the raw scheduler, outside start's context.
        BrokenSubject(
            rule: "5.2",
            subject: .operator("subscribes outside start's context", on: .virtualTime) { inputs in
                Signal { subscriber in
                    let subscription = MetaDisposable()
                    inputs.queue.scheduler!.schedule {
                        subscription.set(
                            inputs.first.start(
                                next: { subscriber.putNext($0) }, error: { subscriber.putError($0) },
                                completed: { subscriber.putCompletion() }))
                    }
                    return subscription
                }
            }),
        // 6.1: leaves a subscription of its own behind.
        BrokenSubject(
            rule: "6.1",
            subject: .operator("leaks a subscription") { inputs in
                Signal { subscriber in
                    _ = leakedPipe.signal().start()
                    return inputs.first.start(
                        next: { subscriber.putNext($0) }, error: { subscriber.putError($0) },
                        completed: { subscriber.putCompletion() })
                }
            }),
    ]

    /// Operators, boundaries and bridges written correctly on the public
    /// API: they break no rule.
    static let wellBehaved: [ConformanceSubject] = [
        .operator("mapToString (WritingAnOperator)") { inputs in
            let signal = inputs.first
            return Signal<String, ConformanceError> { subscriber in
                signal.start(
                    next: { subscriber.putNext("\($0)") }, error: { subscriber.putError($0) },
                    completed: { subscriber.putCompletion() })
            }
        },
        .operator("a merge that serialises", inputs: 2) { inputs in
            (inputs[0] |> merge(inputs[1])) |> map { $0 }
        },
        .bridge("a bridge through deliverOn", on: .virtualTime, buffer: .droppingNewest(beyond: 3)) {
            inputs, buffer, sink in
            sink.subscribe(to: inputs.first |> deliverOn(inputs.queue, buffer: buffer))
        },
    ]
}
