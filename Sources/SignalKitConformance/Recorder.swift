// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The subscriber the kit starts a subject with: it records every callback
// with the facts the rules need (its order among the kit's actions, its
// thread, whether that thread was inside a kit action or on the subject's
// executor, its context, whether it overlapped another callback), and runs
// the one-shot actions a scenario arms for the next callback (a disposal, a
// re-entrant send).

import SignalKit
import Synchronization

/// Numbers the kit's actions and the callbacks it records, in one order.
final class _Clock: Sendable {
    private let counter = Synchronization.Atomic<Int>(0)

    /// The next number (from 1).
    func next() -> Int { counter.add(1, ordering: .sequentiallyConsistent).newValue }
}

/// One recorded callback.
struct _Event: @unchecked Sendable {
    // `@unchecked Sendable`: `value` holds only values that arrived through
    // `Sendable` callbacks (`Value: Sendable`, `Failure: Sendable`).
    enum Kind: Sendable {
        case next
        case error
        case completed
    }

    /// Its place among the kit's actions and the other callbacks.
    let order: Int
    let kind: Kind
    /// The value or the error.
    let value: (any Sendable)?
    /// The thread it ran on.
    let thread: UInt
    /// `_Trace.current` when it ran.
    let context: String?
    /// When the kit action its thread was inside began (nil: it was inside
    /// none).
    let actionBegan: Int?
    /// Whether its thread was inside a kit action.
    var driving: Bool { actionBegan != nil }
    /// Whether its thread was the subject's executor.
    let onExecutor: Bool
    /// Whether it started while another callback ran on another thread.
    let overlapped: Bool

    var isTerminal: Bool { kind != .next }

    /// The value as the kit's `Int`, if it is one.
    var intValue: Int? { value as? Int }

    /// "next 12", "error error 7", "completed".
    var text: String {
        switch kind {
        case .next: "next \(value.map { "\($0)" } ?? "?")"
        case .error: "error \(value.map { "\($0)" } ?? "?")"
        case .completed: "completed"
        }
    }
}

/// Records a subscription's callbacks.
///
/// `@unchecked Sendable`: every mutable property is touched only inside
/// `lock`.
final class _Recorder: @unchecked Sendable {
    private enum Entry {
        case owner
        case nested
        case overlapping
    }

    private let lock = _Lock()
    private var events: [_Event] = []
    private var ownerThread: UInt = 0
    private var depth = 0
    private var overlaps: [String] = []
    private var hooks: [(valuesOnly: Bool, action: @Sendable () -> Void)] = []
    private var spinSeconds = 0.0
    private var company = (callbacks: 0, seconds: 0.0)
    let clock: _Clock
    private let isOnExecutor: @Sendable () -> Bool

    init(clock: _Clock, isOnExecutor: @escaping @Sendable () -> Bool) {
        self.clock = clock
        self.isOnExecutor = isOnExecutor
    }

    /// Makes every callback busy-wait `seconds` (so that callbacks that may
    /// overlap do).
    func spin(for seconds: Double) {
        lock.withLock { spinSeconds = seconds }
    }

    /// Makes each of the next `callbacks` callbacks wait (up to `seconds`)
    /// until a callback starts on another thread: a subject that does not
    /// serialise its callbacks then overlaps for certain, one that does
    /// keeps the other thread out and the wait ends by its timeout.
    func awaitCompany(forCallbacks callbacks: Int, upTo seconds: Double) {
        lock.withLock { company = (callbacks, seconds) }
    }

    /// Runs `action` inside the next callback (the next value's, when
    /// `valuesOnly`), on its thread, after the callback was recorded.
    func onNextCallback(valuesOnly: Bool = false, _ action: @escaping @Sendable () -> Void) {
        lock.withLock { hooks.append((valuesOnly, action)) }
    }

    /// Drops the actions not run yet (they may hold the run).
    func clearHooks() {
        let dropped = lock.withLock { () -> [(valuesOnly: Bool, action: @Sendable () -> Void)] in
            defer { hooks.removeAll() }
            return hooks
        }
        _ = dropped
    }

    /// Records one callback.
    func record(_ kind: _Event.Kind, _ value: (any Sendable)?) {
        let thread = _currentThread()
        let context = _Trace.current
        let actionBegan = _Driving.began
        let onExecutor = isOnExecutor()
        let (entry, hook, spin, wait) = lock.withLock { () -> (Entry, (@Sendable () -> Void)?, Double, (Int, Double)?) in
            let entry: Entry
            if ownerThread == 0 {
                ownerThread = thread
                depth = 1
                entry = .owner
            } else if ownerThread == thread {
                depth += 1
                entry = .nested
            } else {
                entry = .overlapping
            }
            let event = _Event(
                order: clock.next(), kind: kind, value: value, thread: thread, context: context, actionBegan: actionBegan,
                onExecutor: onExecutor, overlapped: entry == .overlapping)
            if entry == .overlapping {
                overlaps.append("\(event.text) started while another callback was running on another thread")
            }
            events.append(event)
            var hook: (@Sendable () -> Void)?
            if let index = hooks.firstIndex(where: { !$0.valuesOnly || kind == .next }) {
                hook = hooks.remove(at: index).action
            }
            var wait: (Int, Double)?
            if company.callbacks > 0 {
                company.callbacks -= 1
                wait = (events.count, company.seconds)
            }
            return (entry, hook, spinSeconds, wait)
        }
        _spin(spin)
        if let (index, seconds) = wait {
            _ = _eventually(timeout: seconds) {
                lock.withLock { events[index...].contains { $0.thread != thread } }
            }
        }
        if let hook {
            _Driving.withAction(clock: clock, hook)
        }
        lock.withLock {
            guard entry != .overlapping else { return }
            depth -= 1
            if depth == 0 { ownerThread = 0 }
        }
    }

    /// Starts `signal` with callbacks that record.
    func subscribe<Value: Sendable, Failure: Sendable>(to signal: Signal<Value, Failure>) -> any Disposable {
        signal.start(
            next: { [self] in record(.next, $0) },
            error: { [self] in record(.error, $0) },
            completed: { [self] in record(.completed, nil) })
    }

    /// The callbacks so far, in order.
    var recorded: [_Event] { lock.withLock { events } }

    /// How many callbacks ran so far.
    var count: Int { lock.withLock { events.count } }

    /// Whether a terminal callback ran.
    var terminated: Bool { lock.withLock { events.contains { $0.isTerminal } } }

    /// The overlaps seen (rule 3.1).
    var overlapsSeen: [String] { lock.withLock { overlaps } }
}
