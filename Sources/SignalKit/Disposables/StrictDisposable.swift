// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// A disposable that must be disposed before it is released.
///
/// Every `dispose()` is forwarded to the wrapped disposable (it is not
/// idempotent itself). In debug builds, releasing a `StrictDisposable` that
/// was never disposed reports the `file:line` where it was created through
/// `StrictDisposable.leakHandler` (by default an `assertionFailure`).
public final class StrictDisposable: Disposable {
    private let disposable: any Disposable
    private let file: String
    private let line: Int
    private let wasDisposed = _OnceFlag()

    public init(_ disposable: any Disposable, file: String, line: Int) {
        self.disposable = disposable
        self.file = file
        self.line = line
    }

    public func dispose() {
        wasDisposed.set()
        disposable.dispose()
    }

    deinit {
        #if DEBUG
        if !wasDisposed.isSet {
            StrictDisposable.reportLeak("Leaked disposable \(disposable) from \(file):\(line)")
        }
        #endif
    }

    /// Called (debug builds only) with a message naming the creation site of
    /// a `StrictDisposable` released without being disposed. `nil` (the
    /// default) means `assertionFailure(message)`.
    public static var leakHandler: (@Sendable (String) -> Void)? {
        get { _strictLeakHandler.value }
        set { _strictLeakHandler.value = newValue }
    }

    static func reportLeak(_ message: String) {
        if let handler = leakHandler {
            handler(message)
        } else {
            assertionFailure(message)
        }
    }
}

private let _strictLeakHandler = _LockedBox<(@Sendable (String) -> Void)?>(nil)
