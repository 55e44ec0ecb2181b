// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import Glibc
import SignalKit
import SignalKitTesting
import Synchronization

// Runs a program on SignalKit and on the model, step by step, and checks:
// - each subscription's events are the model's, in order;
// - a subscription's events follow the grammar (values, then at most one
//   terminal event, then nothing until the schedule starts it again);
// - once every subscription is disposed and the queue has run, every
//   source subscription SignalKit made was disposed, each exactly once, and
//   none is live, nor is any SignalKit subscription (the live counter is
//   back where it was).

/// What a program broke, with what it saw.
struct Finding: Error, CustomStringConvertible {
    let rule: String
    let details: String

    var description: String { "\(rule)\n\(details)" }
}

/// Runs `program`; returns the first rule it breaks, or nil.
func run(_ program: Program) -> Finding? {
    let liveBefore = SignalKitDebug.liveSubscriptions
    let finding = program.threads == 2 ? runConcurrently(program) : runSteps(program)
    if let finding { return finding }
    let liveAfter = SignalKitDebug.liveSubscriptions
    if liveAfter != liveBefore {
        return Finding(
            rule: "every SignalKit subscription is released once disposed",
            details: "\(program)\nlive subscriptions before: \(liveBefore), after: \(liveAfter)")
    }
    return nil
}

/// The steps, in a scope of their own: everything they made is released
/// when it returns.
private func runSteps(_ program: Program) -> Finding? {
    let scheduler = VirtualTimeScheduler()
    let queue = scheduler.makeQueue(name: "fuzz")
    let sources = (0..<Program.sourceCount).map { FuzzSource(index: $0) }
    let budget = InnerBudget()
    let signal = makeSignal(program.graph, sources: sources, queue: queue, budget: budget)
    let model = Model()
    defer { model.endRun() }
    let logs = (0..<Program.slotCount).map { _ in Log() }
    var modelLogs = [[Event]](repeating: [], count: Program.slotCount)
    var handles = [(any Disposable)?](repeating: nil, count: Program.slotCount)
    var modelHandles = [ModelSubscription?](repeating: nil, count: Program.slotCount)

    // What `compare` has checked of each log: the events before `checked`
    // are the model's and follow the grammar, and `ended` says whether they
    // end a run (a terminal event or a disposal since the last start). Each
    // step checks only what it added: checking whole logs made a program
    // that logs thousands of events quadratic.
    var checked = [Int](repeating: 0, count: Program.slotCount)
    var ended = [Bool](repeating: false, count: Program.slotCount)

    func compare(after step: String) -> Finding? {
        for slot in 0..<Program.slotCount {
            let events = logs[slot].events
            if events.count != modelLogs[slot].count || events[checked[slot]...] != modelLogs[slot][checked[slot]...] {
                return Finding(
                    rule: "SignalKit's events are the model's",
                    details: "\(program)\nafter \(step), c\(slot):\n  SignalKit: \(events)\n  model:     \(modelLogs[slot])")
            }
            for index in checked[slot]..<events.count {
                let event = events[index]
                switch event {
                case .started: ended[slot] = false
                case .disposed: ended[slot] = true
                case .next, .error, .completed:
                    if ended[slot] {
                        return Finding(
                            rule: "a subscription's events follow the grammar",
                            details:
                                "\(program)\nc\(slot): \(event) at \(index) after the terminal event or the disposal: \(events)")
                    }
                    if event.isTerminal { ended[slot] = true }
                }
            }
            checked[slot] = events.count
        }
        return nil
    }

    for action in program.actions {
        // SignalKit's step.
        switch action {
        case .start(let slot):
            guard handles[slot] == nil else { continue }
            let log = logs[slot]
            log.append(.started)
            handles[slot] = signal.start(
                next: { log.append(.next($0)) },
                error: { log.append(.error(source: $0.source)) },
                completed: { log.append(.completed) }
            )
        case .dispose(let slot):
            guard let handle = handles[slot] else { continue }
            handle.dispose()
            logs[slot].append(.disposed)
            handles[slot] = nil
        case .next(let source, let value): sources[source].send(.next(value))
        case .error(let source): sources[source].send(.error(source: source))
        case .complete(let source): sources[source].send(.completed)
        case .runQueue: scheduler.run()
        }
        // The budget ran out: SignalKit's step was cut short, the model
        // does not take it.
        if budget.isSpent { break }
        // The model's.
        switch action {
        case .start(let slot):
            modelLogs[slot].append(.started)
            modelHandles[slot] = model.subscribe(program.graph) { modelLogs[slot].append($0) }
        case .dispose(let slot):
            modelLogs[slot].append(.disposed)
            modelHandles[slot]?.dispose()
            modelHandles[slot] = nil
        case .next(let source, let value): model.send(.next(value), to: source)
        case .error(let source): model.send(.error(source: source), to: source)
        case .complete(let source): model.send(.completed, to: source)
        case .runQueue: model.runQueue()
        }
        if let finding = compare(after: action.description) { return finding }
        // A graph that subscribes a source for each of the source's values
        // (a flatten of itself) grows without bound, in subscriptions or in
        // deliveries waiting on the queue: the schedule stops there (left to
        // grow, it ends in a libFuzzer timeout or out of memory, not a
        // finding).
        if sources.reduce(0, { $0 + $1.subscriptions }) > Program.maximumSubscriptions
            || scheduler.pendingCount > Program.maximumPendingDeliveries
            || logs.reduce(0, { $0 + $1.count }) > Program.maximumDeliveries
        {
            break
        }
    }

    // The end: every subscription disposed, the queue run.
    for slot in 0..<Program.slotCount {
        handles[slot]?.dispose()
        handles[slot] = nil
        modelHandles[slot]?.dispose()
        modelHandles[slot] = nil
    }
    scheduler.run()
    model.runQueue()
    // Spent here or by the end's queue run, the budget parted SignalKit
    // from the model.
    if !budget.isSpent, let finding = compare(after: "the end") { return finding }
    if let finding = sourceFinding(sources, program) { return finding }
    if !model.sourcesAreIdle {
        return Finding(rule: "the model ends every source subscription (a fuzzer bug)", details: "\(program)")
    }
    return nil
}

/// Whether a source subscription is still live, or was disposed other than
/// exactly once.
private func sourceFinding(_ sources: [FuzzSource], _ program: Program) -> Finding? {
    for source in sources {
        if source.live != 0 {
            return Finding(
                rule: "every source subscription is disposed once its subscriptions are",
                details: "\(program)\ns\(source.index): \(source.live) of \(source.subscriptions) still live")
        }
        if source.disposals.count != source.subscriptions || source.disposals.values.contains(where: { $0 != 1 }) {
            return Finding(
                rule: "a generator's disposable is disposed exactly once",
                details: "\(program)\ns\(source.index): disposals per subscription \(source.disposals.sorted { $0.key < $1.key })"
            )
        }
    }
    return nil
}

/// A subscription's events, appended by its callbacks (from any thread).
final class Log: Sendable {
    private let stored = Mutex<[Event]>([])
    var events: [Event] { stored.withLock { $0 } }
    var count: Int { stored.withLock { $0.count } }
    func append(_ event: Event) { stored.withLock { $0.append(event) } }
}

/// The two-thread form: two threads started together; each source is sent
/// to by one of them (source i by thread i mod 2: a subscriber's events come
/// from one thread at a time, its contract), the other actions alternate;
/// `deliverOn` is a Dispatch queue. The interleaving is the scheduler's, so
/// there is no model, and a callback already running when `dispose()` is
/// called may log after the disposal: the checks are at most one terminal
/// event per subscription, every source subscription disposed exactly once,
/// and nothing left live.
private func runConcurrently(_ program: Program) -> Finding? {
    let queue = ScheduleThread.queue
    let sources = (0..<Program.sourceCount).map { FuzzSource(index: $0) }
    let budget = InnerBudget()
    let signal = makeSignal(program.graph, sources: sources, queue: queue, budget: budget)
    // A log per subscription: an event of a disposed subscription already
    // running on the queue may still arrive after the next one started.
    let logs = Mutex<[Log]>([])
    let slots = (0..<Program.slotCount).map { _ in Slot() }
    let delivered = DeliveryCount()

    @Sendable func perform(_ action: Action) {
        switch action {
        case .start(let slot):
            slots[slot].start {
                let log = Log()
                logs.withLock { $0.append(log) }
                return signal.start(
                    next: {
                        log.append(.next($0))
                        delivered.add()
                    },
                    error: { log.append(.error(source: $0.source)) },
                    completed: { log.append(.completed) }
                )
            }
        case .dispose(let slot):
            slots[slot].dispose()
        case .next(let source, let value): sources[source].send(.next(value))
        case .error(let source): sources[source].send(.error(source: source))
        case .complete(let source): sources[source].send(.completed)
        case .runQueue: queue.sync {}
        }
    }

    let arrived = Atomic<Int>(0)
    for (thread, worker) in ScheduleThread.pair.enumerated() {
        let mine = program.actions.enumerated().filter { index, action in
            switch action {
            case .next(let source, _), .error(let source), .complete(let source): source % 2 == thread
            case .start, .dispose, .runQueue: index % 2 == thread
            }
        }.map(\.element)
        worker.begin {
            // Both threads start their actions together.
            arrived.add(1, ordering: .acquiringAndReleasing)
            while arrived.load(ordering: .acquiring) < 2 { sched_yield() }
            for action in mine {
                perform(action)
                if sources.reduce(0, { $0 + $1.subscriptions }) > Program.maximumSubscriptions
                    || delivered.count > Program.maximumConcurrentDeliveries || budget.isSpent
                {
                    break
                }
            }
        }
    }
    for worker in ScheduleThread.pair { worker.waitUntilDone() }

    // The end: every subscription disposed, the queue drained.
    for slot in 0..<Program.slotCount {
        slots[slot].dispose()
    }
    queue.sync {}
    queue.sync {}
    for log in logs.withLock({ $0 }) where log.events.filter(\.isTerminal).count > 1 {
        return Finding(
            rule: "a subscription gets at most one terminal event (two threads)",
            details: "\(program)\none subscription's events: \(log.events)")
    }
    return sourceFinding(sources, program)
}

/// One of the two threads the two-thread form runs its actions on, kept for
/// the process. With the actions sent to Dispatch's global queue and a
/// Dispatch queue made for each input, an empty two-thread schedule took
/// about 145 µs in a plain build (on one thread: 2 µs), as much as a median
/// input's own work; with these threads and one queue, about 32 µs.
final class ScheduleThread: Sendable {
    /// The two threads, started on first use.
    static let pair = [ScheduleThread(), ScheduleThread()]
    /// The queue of `deliverOn` (each run drains it before it returns;
    /// making and releasing a Dispatch queue for each input wakes a thread
    /// of Dispatch's pool).
    static let queue = Queue(name: "fuzz.concurrent")

    private let job = Mutex<(@Sendable () -> Void)?>(nil)
    private let started = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)

    private init() {
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        let created = pthread_create(
            &thread, nil,
            { context in
                // The thread's reference, kept for the process.
                let worker = Unmanaged<ScheduleThread>.fromOpaque(context!).takeUnretainedValue()
                while true {
                    worker.started.wait()
                    worker.runJob()
                    worker.finished.signal()
                }
            }, context)
        precondition(created == 0, "CoreFuzzer: cannot start a schedule thread (\(created))")
        pthread_detach(thread)
    }

    /// Runs `body` on this thread (one at a time: `waitUntilDone` before the
    /// next).
    func begin(_ body: @escaping @Sendable () -> Void) {
        job.withLock { $0 = body }
        started.signal()
    }

    /// Waits for the body `begin` gave.
    func waitUntilDone() { finished.wait() }

    /// Runs the body `begin` gave, and releases it (with what it captured)
    /// before the waiting thread goes on.
    private func runJob() {
        let body = job.withLock { job in
            defer { job = nil }
            return job
        }
        body?()
    }
}

/// The values delivered to a two-thread schedule's subscriptions so far.
final class DeliveryCount: Sendable {
    private let delivered = Atomic<Int>(0)
    var count: Int { delivered.load(ordering: .relaxed) }
    func add() { delivered.add(1, ordering: .relaxed) }
}

/// A subscription slot shared by the two threads: one start or dispose at a
/// time (the other thread's action on the same slot waits).
final class Slot: Sendable {
    private let handle = Mutex<(any Disposable)?>(nil)

    /// Starts a subscription with `make` unless one is live.
    func start(_ make: () -> any Disposable) {
        handle.withLock { handle in
            if handle == nil { handle = make() }
        }
    }

    /// Disposes the live subscription.
    func dispose() {
        handle.withLock { handle in
            guard let live = handle else { return }
            handle = nil
            live.dispose()
        }
    }
}
