// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import Synchronization

// The program's graph built with SignalKit's operators, over sources that
// count their subscriptions and every disposal of each.

/// A source's error.
struct FuzzError: Error, Equatable {
    let source: Int
}

/// A manual source: each subscription registers its subscriber; an event
/// sent reaches the subscriptions registered when it was sent that are
/// still registered then (delivered outside the lock). Counts how often
/// each subscription's disposable was disposed (SignalKit disposes it
/// exactly once on every path).
final class FuzzSource: Sendable {
    private struct State {
        /// The live subscribers by id, and every id in subscription order
        /// (disposed ones are dropped from it in bulk once they are half of
        /// it: a search per disposal and per delivery made a program with a
        /// thousand subscriptions take 24 s in the fuzzing build).
        var registrations: [Int: Subscriber<Int, FuzzError>] = [:]
        var order: [Int] = []
        var nextID = 0
        var disposals: [Int: Int] = [:]
    }

    let index: Int
    private let state = Mutex(State())

    init(index: Int) { self.index = index }

    /// Subscriptions made so far.
    var subscriptions: Int { state.withLock { $0.nextID } }

    /// Subscriptions whose disposable was not disposed yet.
    var live: Int { state.withLock { $0.registrations.count } }

    /// Disposals per subscription id.
    var disposals: [Int: Int] { state.withLock { $0.disposals } }

    var signal: Signal<Int, FuzzError> {
        Signal { [self] subscriber in
            let id = state.withLock { state in
                defer { state.nextID += 1 }
                state.registrations[state.nextID] = subscriber
                state.order.append(state.nextID)
                return state.nextID
            }
            return ActionDisposable { [self] in
                let removed = state.withLock { state in
                    state.disposals[id, default: 0] += 1
                    let removed = state.registrations.removeValue(forKey: id)
                    if state.order.count > 2 * state.registrations.count {
                        let registrations = state.registrations
                        state.order.removeAll { registrations[$0] == nil }
                    }
                    return removed
                }
                _ = removed  // released outside the lock
            }
        }
    }

    func send(_ event: Event) {
        let snapshot = state.withLock { $0.order }
        for id in snapshot {
            guard let subscriber = state.withLock({ $0.registrations[id] }) else { continue }
            switch event {
            case .next(let value): subscriber.putNext(value)
            case .error: subscriber.putError(FuzzError(source: index))
            case .completed: subscriber.putCompletion()
            case .started, .disposed: break
            }
        }
    }
}

/// The inner signals one run's flattening nodes (`flatten`, `switchToLatest`,
/// `queue`) may start. The caps of `run` are checked between actions and
/// count what reaches the sources and the subscriptions; nested flattens of
/// shared nodes multiply the subscriptions between them instead (each value
/// of one adds an inner subscription to the next), and a single send could
/// make millions of them: a 252-byte input of a 50 s run took over 1 GB.
/// Each inner is counted when its node asks for it; once the budget is
/// spent, a node gets a signal that never sends, and the run's schedule
/// stops after the action (`isSpent`): SignalKit and the model have parted
/// by then, so only the invariants that hold regardless are checked.
final class InnerBudget: Sendable {
    private let started = Atomic<Int>(0)

    /// Whether a node asked for an inner beyond `Program.maximumInners`.
    var isSpent: Bool { started.load(ordering: .relaxed) > Program.maximumInners }

    /// `inner`, or, beyond the budget, a signal that never sends.
    func admit(_ inner: Signal<Int, FuzzError>) -> Signal<Int, FuzzError> {
        started.add(1, ordering: .relaxed).newValue > Program.maximumInners ? .never() : inner
    }
}

/// `node` with SignalKit's operators; its flattening nodes start inners
/// within `budget`.
func makeSignal(_ node: Node, sources: [FuzzSource], queue: Queue, budget: InnerBudget) -> Signal<Int, FuzzError> {
    func make(_ node: Node) -> Signal<Int, FuzzError> {
        switch node {
        case .source(let index):
            return sources[index].signal
        case .map(let upstream, let k):
            return make(upstream) |> map { $0 &+ k }
        case .filter(let upstream, let m):
            return make(upstream) |> filter { $0 % m != 0 }
        case .take(let upstream, let count):
            return make(upstream) |> take(count)
        case .combineLatest(let a, let b):
            return combineLatest(make(a), make(b)) |> map { $0 &* 31 &+ $1 }
        case .merge(let a, let b):
            return make(a) |> merge(make(b))
        case .switchToLatest(let outer, let inners):
            let built = inners.map(make)
            return make(outer) |> mapToSignal { budget.admit(built[innerIndex(for: $0, count: built.count)]) }
        case .restartIfError(let upstream):
            return restartIfError(make(upstream)) |> mapError { (_: NoError) -> FuzzError in }
        case .deliverOn(let upstream):
            return make(upstream) |> deliverOn(queue)
        case .flatten(let outer, let inners):
            let built = inners.map(make)
            return merge(make(outer) |> map { budget.admit(built[innerIndex(for: $0, count: built.count)]) })
        case .queue(let outer, let inners):
            let built = inners.map(make)
            return make(outer) |> mapToQueue { budget.admit(built[innerIndex(for: $0, count: built.count)]) }
        case .then(let a, let b):
            return make(a) |> then(make(b))
        case .catchError(let a, let b):
            let alternative = make(b)
            return make(a) |> `catch` { _ in alternative }
        case .restart(let upstream):
            return restart(make(upstream))
        case .share(let upstream, _, let kind):
            let subject: Subject<Int, FuzzError> =
                switch kind {
                case .publish: Subject()
                case .replay(let capacity): ReplaySubject(capacity: capacity)
                }
            return (make(upstream) |> multicast(subject)).autoconnect()
        }
    }
    return make(node)
}
