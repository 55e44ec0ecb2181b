// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit

// Names WritingAnOperator.md's examples use without declaring them.

/// The article's user-written operator (its first example).
func mapToString<T, E>(_ signal: Signal<T, E>) -> Signal<String, E> {
    Signal { subscriber in
        signal.start(
            next: { subscriber.putNext("\($0)") },
            error: { subscriber.putError($0) },
            completed: { subscriber.putCompletion() })
    }
}
