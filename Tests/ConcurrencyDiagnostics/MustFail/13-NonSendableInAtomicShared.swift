// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// rule: Atomic is Sendable only when its value is: sharing an Atomic of a
//   non-Sendable object with a callback would share the object.
// expect: capture of 'latest' with non-Sendable type 'Atomic<Model>' in a '@Sendable' closure

import SignalKit

final class Model {
    var revision = 0
}

func track(_ revisions: Signal<Int, NoError>, latest: Atomic<Model>) -> any Disposable {
    revisions.start(next: { revision in latest.with { $0.revision = revision } })
}
