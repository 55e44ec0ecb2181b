// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// rule: Disposable is Sendable (dispose() may be called from any thread), so
//   a conforming class cannot have unguarded mutable state.
// expect: stored property 'closed' of 'Sendable'-conforming class 'FileHandleDisposable' is mutable

import SignalKit

final class FileHandleDisposable: Disposable {
    var closed = false

    func dispose() { closed = true }
}
