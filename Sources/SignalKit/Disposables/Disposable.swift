// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

/// Something that cancels work or releases resources when disposed.
///
/// `dispose()` must be idempotent and safe to call from any thread.
public protocol Disposable: AnyObject, Sendable {
    func dispose()
}

final class _EmptyDisposable: Disposable {
    func dispose() {}
}

/// The shared disposable that does nothing.
public let EmptyDisposable: any Disposable = _EmptyDisposable()

extension Disposable {
    /// Wraps the disposable in a `StrictDisposable`: in debug builds,
    /// releasing it without disposing reports `file:line`.
    public func strict(file: String = #file, line: Int = #line) -> any Disposable {
        StrictDisposable(self, file: file, line: line)
    }
}

/// Runs an action the first time it is disposed.
///
/// Thread-safe: under concurrent `dispose()` calls the action runs exactly
/// once. Releasing an undisposed `ActionDisposable` does not run the action.
public final class ActionDisposable: Disposable, Sendable {
    private let disposed = Synchronization.Atomic<Bool>(false)
    // Unsafe: read and cleared only by the single caller that wins `disposed`.
    private nonisolated(unsafe) var action: (@Sendable () -> Void)?

    public init(action: @escaping @Sendable () -> Void) {
        self.action = action
    }

    public func dispose() {
        guard !disposed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // Moved out, not copied: no retain/release pair on the context.
        action.take()?()
    }
}
