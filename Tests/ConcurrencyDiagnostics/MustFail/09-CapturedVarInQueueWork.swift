// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// rule: Queue.async runs its work on the queue's thread, so the work cannot
//   mutate a captured local variable.
// expect: mutation of captured var 'done' in concurrently-executing code

import SignalKit

func finish(on queue: Queue) {
    var done = false
    queue.async { done = true }
    _ = done
}
