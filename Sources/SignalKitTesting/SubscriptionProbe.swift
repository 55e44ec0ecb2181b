// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

public import SignalKit

/// Tells a test when a subscription has started.
///
/// An async test that awaits a signal in a child task cannot know when the
/// child has subscribed; publishing before that loses the value and the test
/// hangs (about one run in ten). Watch the signal, then wait:
///
/// ```swift
/// let probe = SubscriptionProbe()
/// async let value = probe.watch(pipe.signal()).first()
/// await probe.waitForSubscriptions(1)   // the child task has subscribed
/// pipe.putNext(42)
/// #expect(try await value == 42)
/// ```
public final class SubscriptionProbe: Sendable {
    private struct State {
        var count = 0
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = Locked(State())

    public init() {}

    /// `signal`, reporting to this probe each time a subscription to it has
    /// started (after the signal's generator returned, so whatever it set up,
    /// such as a hot source's registration, is in place).
    public func watch<T, E>(_ signal: Signal<T, E>) -> Signal<T, E> {
        Signal { [self] subscriber in
            let handle = signal.start(
                next: { subscriber.putNext($0) },
                error: { subscriber.putError($0) },
                completed: { subscriber.putCompletion() }
            )
            subscribed()
            return handle
        }
    }

    /// How many subscriptions have started so far.
    public var subscriptionCount: Int { state.withLock { $0.count } }

    /// Returns once at least `count` subscriptions have started.
    public func waitForSubscriptions(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                guard state.count < count else { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func subscribed() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count += 1
            let ready = state.waiters.filter { $0.count <= state.count }.map(\.continuation)
            state.waiters.removeAll { $0.count <= state.count }
            return ready
        }
        ready.forEach { $0.resume() }
    }
}
