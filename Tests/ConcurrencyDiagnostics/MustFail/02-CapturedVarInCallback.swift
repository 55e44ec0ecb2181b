// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// rule: a start callback may run on another thread, so it cannot mutate a
//   captured local variable (use an Atomic, a Mutex or an actor).
// expect: mutation of captured var 'count' in concurrently-executing code

import SignalKit

func countValues(_ signal: Signal<Int, NoError>) -> any Disposable {
    var count = 0
    return signal.start(next: { _ in count += 1 })
}
