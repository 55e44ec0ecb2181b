// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

/// What a loop operator's subscription returns as its disposable
/// (`feedbackLoop`, and with the upstream as well `reduceLeft(_:generator:)`):
/// the stop flag the loop reads between iterations and the current
/// iteration's subscription, disposed in that order. It does not reference
/// the loop, so holding it creates no cycle through the downstream
/// subscriber.
class _LoopControl: Disposable, @unchecked Sendable {
    // `@unchecked Sendable`: `disposed` is a Synchronization.Atomic and
    // `current` a MetaDisposable.
    let current = MetaDisposable()
    private let disposed = Synchronization.Atomic<Bool>(false)

    final var isDisposed: Bool { disposed.load(ordering: .acquiring) }

    func dispose() {
        disposed.store(true, ordering: .releasing)
        current.dispose()
    }
}
