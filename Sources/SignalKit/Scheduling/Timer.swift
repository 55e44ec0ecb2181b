// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch

/// A one-shot or repeating timer that calls its completion on a queue.
///
/// `start()` arms the timer for `timeout` seconds from now (replacing and
/// cancelling a running one); `invalidate()` stops it (idempotent; a no-op
/// before `start`). A one-shot timer invalidates itself after firing, so it
/// can be started again, also from its own completion. A running timer does
/// not retain itself: releasing the last reference stops it. On a queue made
/// with `Queue(scheduler:)`, the timer follows the scheduler's clock.
///
/// The name clashes with Foundation's `Timer`: write `SignalKit.Timer` where
/// both modules are imported.
public final class Timer: Sendable {
    private let timeout: Double
    private let repeats: Bool
    private let completion: @Sendable (Timer) -> Void
    private let queue: Queue
    /// The running source (the `start()` it belongs to and its handle).
    private let source = _LockedState<(token: _TimerToken, disposable: any Disposable)?>(nil)

    public convenience init(timeout: Double, repeat: Bool, completion: @escaping @Sendable () -> Void, queue: Queue) {
        self.init(timeout: timeout, repeat: `repeat`, completion: { _ in completion() }, queue: queue)
    }

    public init(timeout: Double, repeat: Bool, completion: @escaping @Sendable (Timer) -> Void, queue: Queue) {
        self.timeout = timeout
        self.repeats = `repeat`
        self.completion = completion
        self.queue = queue
    }

    deinit {
        source.withLock { $0.take() }?.disposable.dispose()
    }

    /// Arms the timer; a running one is cancelled first.
    public func start() {
        let token = _TimerToken()
        // Every firing runs in the context of the code that started the
        // timer (see `SignalContextPropagation`).
        let captured = _ContextHook.capture()
        let newSource: any Disposable
        if let scheduler = queue.scheduler {
            newSource = _ScheduledTimer(
                scheduler: scheduler,
                interval: timeout,
                repeats: repeats,
                fire: { [weak self] in _run(in: captured) { self?.fire(token) } }
            )
        } else {
            // Dispatch sources are thread-safe; corelibs does not mark them `Sendable`.
            nonisolated(unsafe) let source = DispatchSource.makeTimerSource(queue: queue.queue)
            if repeats {
                source.schedule(deadline: .now() + timeout, repeating: timeout)
            } else {
                source.schedule(deadline: .now() + timeout)
            }
            source.setEventHandler { [weak self] in _run(in: captured) { self?.fire(token) } }
            source.resume()
            newSource = ActionDisposable { source.cancel() }
        }
        let previous = source.withLock { source in
            defer { source = (token, newSource) }
            return source
        }
        previous?.disposable.dispose()
    }

    /// Stops the timer.
    public func invalidate() {
        let previous = source.withLock { $0.take() }
        previous?.disposable.dispose()
    }

    private func fire(_ token: _TimerToken) {
        completion(self)
        guard !repeats else { return }
        // One-shot: stop this source, unless the completion restarted the timer.
        let previous = source.withLock { source -> (any Disposable)? in
            guard let current = source, current.token === token else { return nil }
            source = nil
            return current.disposable
        }
        previous?.dispose()
    }
}

/// Identifies one `start()` of a timer.
private final class _TimerToken: Sendable {}

/// A (possibly repeating) timer on a `QueueScheduler`.
final class _ScheduledTimer: Disposable, @unchecked Sendable {
    // `@unchecked Sendable`: `pending` and `cancelled` are guarded by
    // `_LockedState`; the rest is immutable.
    private struct State {
        var pending: (any Disposable)?
        var cancelled = false
    }

    private let scheduler: any QueueScheduler
    private let interval: Double
    private let repeats: Bool
    private let fire: () -> Void
    private let state = _LockedState(State())

    init(scheduler: any QueueScheduler, interval: Double, repeats: Bool, fire: @escaping @Sendable () -> Void) {
        self.scheduler = scheduler
        self.interval = interval
        self.repeats = repeats
        self.fire = fire
        arm()
    }

    private func arm() {
        let work = scheduler.schedule(after: interval) { [weak self] in
            guard let self else { return }
            guard !self.state.withLock({ $0.cancelled }) else { return }
            if self.repeats { self.arm() }
            self.fire()
        }
        var replaced: (any Disposable)? = work
        let cancelled = state.withLock { state in
            if !state.cancelled { swap(&state.pending, &replaced) }
            return state.cancelled
        }
        // The previous (fired) work item is released outside the lock.
        replaced = nil
        if cancelled { work.dispose() }
    }

    func dispose() {
        let pending = state.withLock { state in
            state.cancelled = true
            return state.pending.take()
        }
        pending?.dispose()
    }
}
