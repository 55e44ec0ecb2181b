// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Dispatch
import SignalKit
import Testing

/// Runs `body` on another thread and records an issue if it has not returned
/// after `seconds`: a deadlock fails the test instead of hanging the suite.
/// A thread that does hang is abandoned (with whatever it holds).
func withoutDeadlock(
    seconds: Double = 5,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () -> Void
) {
    let done = DispatchSemaphore(value: 0)
    DispatchQueue(label: "withoutDeadlock").async {
        body()
        done.signal()
    }
    if done.wait(timeout: .now() + seconds) == .timedOut {
        Issue.record("Deadlock: the body did not return within \(seconds) s", sourceLocation: sourceLocation)
    }
}

/// An object that runs `action` from its `deinit` (to re-enter the container
/// that releases it). Equatable by identity.
final class DeinitAction: Equatable, @unchecked Sendable {
    private let action: () -> Void

    init(_ action: @escaping () -> Void = {}) {
        self.action = action
    }

    deinit { action() }

    static func == (lhs: DeinitAction, rhs: DeinitAction) -> Bool { lhs === rhs }
}

/// A disposable that runs `action` from its `deinit`.
final class DeinitActionDisposable: Disposable, @unchecked Sendable {
    private let action: () -> Void

    init(_ action: @escaping () -> Void = {}) {
        self.action = action
    }

    func dispose() {}

    deinit { action() }
}

/// `withoutDeadlock` for async bodies: runs `body` in a detached task and
/// polls (without blocking a thread of the cooperative pool) until it
/// returns; records an issue if it has not after `seconds`.
func withoutDeadlock(
    seconds: Double = 5,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: @escaping @Sendable () async -> Void
) async {
    let done = Atomic(value: false)
    Task.detached {
        await body()
        done.swap(true)
    }
    var waited = 0.0
    while !done.with({ $0 }) {
        if waited >= seconds {
            Issue.record("Deadlock: the body did not return within \(seconds) s", sourceLocation: sourceLocation)
            return
        }
        try? await Task.sleep(nanoseconds: 10_000_000)
        waited += 0.01
    }
}
