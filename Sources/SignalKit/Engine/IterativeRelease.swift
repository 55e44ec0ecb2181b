// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Releases objects from a loop, in constant stack, so that a long chain of
/// objects holding each other (`then` chains, composition records, nested
/// subscriptions) does not release recursively and overflow the stack: the
/// first release on a thread drains a per-thread list; objects released
/// while it drains (by the objects it releases) only append to that list.
enum _IterativeRelease {
    private final class Pending {
        var objects: [AnyObject] = []
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        _signalKitRequire(status == 0, "SignalKit: pthread_key_create failed (\(status))")
        return key
    }()

    /// Releases `objects` (emptying it): here, from a loop, or, when a loop
    /// runs further up this thread's stack, from that loop.
    static func release(_ objects: inout [AnyObject]) {
        if let draining = pthread_getspecific(key) {
            Unmanaged<Pending>.fromOpaque(draining).takeUnretainedValue().objects.append(contentsOf: objects)
            objects.removeAll()
            return
        }
        let pending = Pending()
        swap(&pending.objects, &objects)
        pthread_setspecific(key, Unmanaged.passUnretained(pending).toOpaque())
        while let object = pending.objects.popLast() {
            withExtendedLifetime(object) {}  // released here; nested nodes append
        }
        pthread_setspecific(key, nil)
    }
}
