// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// rule: a generator runs on every thread that starts the signal, so it
//   cannot capture a non-Sendable object.
// expect: capture of 'cache' with non-Sendable type 'Cache' in a '@Sendable' closure

import SignalKit

final class Cache {
    var entries: [String: Int] = [:]
}

func lookup(_ key: String, in cache: Cache) -> Signal<Int?, NoError> {
    Signal { subscriber in
        subscriber.putNext(cache.entries[key])
        subscriber.putCompletion()
        return EmptyDisposable
    }
}
