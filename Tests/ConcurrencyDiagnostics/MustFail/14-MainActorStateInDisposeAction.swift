// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// rule: a disposable's action runs on the thread that disposes it, so it
//   cannot touch main-actor state.
// expect: main actor-isolated property 'isLoading' can not be mutated from a Sendable closure

import SignalKit

@MainActor final class Spinner {
    var isLoading = true

    func cancellation() -> any Disposable {
        ActionDisposable { self.isLoading = false }
    }
}
