// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// Holds one replaceable disposable ("serial disposable").
///
/// * `set(d)` stores `d` and then disposes the previous disposable, even when
///   it is the same object; `set(nil)` disposes and clears the current one.
/// * After `dispose()`, any disposable passed to `set` is disposed at once.
/// * Every disposable passed to `set` is disposed exactly once, across any
///   interleaving of `set` and `dispose` on any threads.
/// * Releasing a `MetaDisposable` does not dispose its current disposable.
///
/// Built on CSignalRuntime's atomic slot: `set` is one compare-and-swap.
public final class MetaDisposable: Disposable {
    fileprivate let slot = _DisposableSlot()

    public init() {}

    deinit {
        slot.destroy()
    }

    /// `disposable` is taken over (`consuming`): a freshly created disposable
    /// is stored without an extra retain.
    public func set(_ disposable: consuming (any Disposable)?) {
        slot.set(disposable)
    }

    public func dispose() {
        slot.dispose()
    }
}

extension MetaDisposable {
    /// Whether `dispose()` was called.
    var isDisposed: Bool { slot.isDisposed }
}
